// Loop fusion: which loops merge (and which must not), the fused shape of
// the attention models, and, for every bundled model and every on/off
// combination of compaction and canonicalization+fusion, that each pass
// leaves a verified module computing the same outputs.
#include "LoopPassTestUtil.h"

#include "passes/CompactMaterialization.h"
#include "passes/LoopCanonicalization.h"
#include "passes/LoopFusion.h"
#include "passes/ShapeInference.h"

#include <gtest/gtest.h>

using namespace hector;
using passtest::countOf;

namespace {

using Result = passtest::PassResult;

Result fused(const ir::Module &m) {
  return passtest::applyPass(passes::fuseLoops, m);
}

Result fusedText(const std::string &text) {
  ir::Module m = passtest::parseVerified(text, "t.ir");
  Result r = fused(m);
  EXPECT_LE(passtest::outputDifference(m, r.module, {}), 1e-12);
  return r;
}

/// The loop structure of printed IR: its `foreach` lines, indented.
std::string loopOutline(const std::string &text) {
  std::string out;
  size_t at = 0;
  while ((at = text.find("foreach", at)) != std::string::npos) {
    size_t lineStart = text.rfind('\n', at) + 1;
    size_t lineEnd = text.find(" {", at);
    out += text.substr(lineStart, lineEnd - lineStart) + "\n";
    at = lineEnd;
  }
  return out;
}

} // namespace

// Edge-local loops fuse; the second loop's variable becomes the first's.
TEST(LoopFusion, FusesAdjacentEdgeLoopsRenamingTheVariable) {
  Result r = fusedText(R"(module @m {
  hyper d : int = 3
  input x : node[d]
  temp y : edge[d]
  output z : edge[d]
  foreach e in edges {
    y[e] = relu(x[e.src])
  }
  foreach f in edges {
    z[f] = mul(y[f], x[f.dst])
  }
}
)");
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.text.find("  foreach e in edges {\n"
                        "    y[e] = relu(x[e.src])\n"
                        "    z[e] = mul(y[e], x[e.dst])\n"
                        "  }\n"),
            std::string::npos)
      << r.text;
}

// The second nest's edge variable is the first nest's node variable: it is
// renamed so that it does not shadow the fused loop's variable.
TEST(LoopFusion, RenamesANestedVariableThatWouldShadow) {
  Result r = fusedText(R"(module @m {
  input x : edge[]
  temp a : node[]
  output b : node[]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      a[n] += exp(x[e])
    }
  }
  foreach m in dst_nodes {
    foreach n in m.incoming {
      b[m] += div(x[n], a[n.dst])
    }
  }
}
)");
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.text.find("    foreach n0 in n.incoming {\n"
                        "      b[n] += div(x[n0], a[n0.dst])\n"),
            std::string::npos)
      << r.text;
}

// pairs, etypes and ntypes loops fuse with their own kind only.
TEST(LoopFusion, FusesTypeAndPairLoopsWithTheirOwnKind) {
  Result r = fusedText(R"(module @m {
  hyper d : int = 3
  input x : node[d]
  param W : etype[d, d]
  param a : etype[d]
  param V : ntype[d]
  temp wa : etype[d]
  temp wb : etype[d]
  temp v1 : ntype[d]
  temp v2 : ntype[d]
  temp s : pair[d]
  output t : pair[d]
  foreach r in etypes {
    wa[r] = linear(a[r], W[r])
  }
  foreach q in etypes {
    wb[q] = relu(wa[q])
  }
  foreach k in ntypes {
    v1[k] = exp(V[k])
  }
  foreach k in ntypes {
    v2[k] = mul(v1[k], V[k])
  }
  foreach p in pairs {
    s[p] = linear(x[p.src], W[p.etype])
  }
  foreach p in pairs {
    t[p] = add(s[p], wb[p.etype])
  }
}
)");
  EXPECT_EQ(loopOutline(r.text), "  foreach r in etypes\n"
                                 "  foreach k in ntypes\n"
                                 "  foreach p in pairs\n")
      << r.text;
}

// A value reduced into e.dst over all edges is complete only after the
// whole loop: the loop reading it cannot fuse with the reducing one.
TEST(LoopFusion, DoesNotFuseAReadOfAnUnfinishedReduction) {
  Result r = fusedText(R"(module @m {
  hyper d : int = 3
  input x : node[d]
  temp s : node[d]
  output y : edge[d]
  foreach e in edges {
    s[e.dst] += copy(x[e.src])
  }
  foreach e in edges {
    y[e] = div(x[e.src], s[e.dst])
  }
}
)");
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(countOf(r.text, "foreach e in edges"), 2);
}

// A node value written per dst node and read at another row (e.src) in the
// next node loop's incoming edges needs every row first.
TEST(LoopFusion, DoesNotFuseAReadOfAnotherRow) {
  Result r = fusedText(R"(module @m {
  hyper d : int = 3
  input x : node[d]
  temp k : node[d]
  output h : node[d]
  foreach n in dst_nodes {
    k[n] = relu(x[n])
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      h[n] += copy(k[e.src])
    }
  }
}
)");
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(countOf(r.text, "foreach n in dst_nodes"), 2);
}

// Inside one node loop: the incoming loop that reads the max fuses with
// the one after it, but not with the one that computes the max.
TEST(LoopFusion, FusesIncomingLoopsOnlyAfterTheirReductionsClose) {
  Result r = fusedText(R"(module @m {
  input x : edge[]
  temp mx : node[]
  temp ex : edge[]
  temp sm : node[]
  output a : edge[]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      mx[n] max= copy(x[e])
    }
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      ex[e] = sub(x[e], mx[e.dst])
    }
    foreach e in n.incoming {
      sm[n] += exp(ex[e])
    }
  }
  foreach m in dst_nodes {
    foreach f in m.incoming {
      a[f] = div(ex[f], sm[m])
    }
  }
}
)");
  // The last incoming loop cannot join (it reads sm), so it keeps its
  // variable; the outer loop's variable is renamed throughout.
  EXPECT_EQ(loopOutline(r.text), "  foreach n in dst_nodes\n"
                                 "    foreach e in n.incoming\n"
                                 "    foreach e in n.incoming\n"
                                 "    foreach f in n.incoming\n")
      << r.text;
  EXPECT_NE(r.text.find("      ex[e] = sub(x[e], mx[e.dst])\n"
                        "      sm[n] += exp(ex[e])\n"),
            std::string::npos)
      << r.text;
}

// A pairs loop between two node nests moves up to the earlier pairs loop
// when nothing between writes what it reads; the nests then fuse.
TEST(LoopFusion, MovesALoopUpPastLoopsItDoesNotDependOn) {
  Result r = fusedText(R"(module @m {
  hyper d : int = 3
  input x : node[d]
  param W : etype[d, d]
  temp s : pair[d]
  temp t : pair[d]
  temp h0 : node[d]
  output h : node[d]
  foreach p in pairs {
    s[p] = linear(x[p.src], W[p.etype])
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      h0[n] += copy(s[e.pair])
    }
  }
  foreach p in pairs {
    t[p] = relu(s[p])
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      h[n] += mul(t[e.pair], h0[e.dst])
    }
  }
}
)");
  EXPECT_EQ(loopOutline(r.text), "  foreach p in pairs\n"
                                 "  foreach n in dst_nodes\n"
                                 "    foreach e in n.incoming\n"
                                 "    foreach e in n.incoming\n")
      << r.text;
}

// ... but not past a loop that writes what it reads.
TEST(LoopFusion, DoesNotMoveALoopAboveAWriteItReads) {
  Result r = fusedText(R"(module @m {
  hyper d : int = 3
  input x : node[d]
  temp k : node[d]
  temp y : edge[d]
  output z : edge[d]
  foreach e in edges {
    y[e] = relu(x[e.src])
  }
  foreach n in nodes {
    k[n] = exp(x[n])
  }
  foreach e in edges {
    z[e] = mul(y[e], k[e.src])
  }
}
)");
  EXPECT_FALSE(r.changed);
}

// RGAT and HGT, compacted, canonicalized and fused: one pairs loop, then a
// single dst_nodes loop with the three phases of the edge softmax as its
// incoming loops (max; exp and sum; normalise and aggregate).
TEST(LoopFusion, AttentionModelsBecomeOnePairsLoopAndOneNodeLoop) {
  for (const char *name : {"rgat", "hgt", "rgat_pyg"}) {
    ir::Module m = passtest::loadBundledModel(name);
    passes::compactMaterialization(m);
    passes::canonicalizeLoops(m);
    Result r = fused(m);
    EXPECT_TRUE(r.changed) << name;
    EXPECT_EQ(loopOutline(r.text), "  foreach p in pairs\n"
                                   "  foreach n in dst_nodes\n"
                                   "    foreach e in n.incoming\n"
                                   "    foreach e in n.incoming\n"
                                   "    foreach e in n.incoming\n")
        << name << "\n"
        << r.text;
  }
  ir::Module m = passtest::loadBundledModel("rgat");
  passes::compactMaterialization(m);
  passes::canonicalizeLoops(m);
  std::string text = fused(m).text;
  EXPECT_NE(text.find("      alpha_score[e] = leaky_relu(alpha_2[e], slope)\n"
                      "      alpha_max[n] max= detach(alpha_score[e])\n"
                      "    }\n"
                      "    foreach e in n.incoming {\n"
                      "      alpha_shifted[e] = sub(alpha_score[e], "
                      "alpha_max[e.dst])\n"),
            std::string::npos)
      << text;
}

// RGCN: the per-edge normalisation joins the aggregation loop.
TEST(LoopFusion, RgcnBecomesOneNodeLoop) {
  for (bool compact : {false, true}) {
    ir::Module m = passtest::loadBundledModel("rgcn");
    if (compact)
      passes::compactMaterialization(m);
    passes::canonicalizeLoops(m);
    Result r = fused(m);
    EXPECT_EQ(loopOutline(r.text),
              std::string(compact ? "  foreach p in pairs\n" : "") +
                  "  foreach n in dst_nodes\n"
                  "    foreach e in n.incoming\n")
        << r.text;
  }
}

// The pipeline's order: shape inference, compaction (switchable), then
// canonicalization and fusion (switchable together). For every bundled
// model, default and small hypers, and all four combinations, every pass
// leaves a verified module whose outputs match the original's.
TEST(LoopFusion, EveryPassCombinationPreservesEveryBundledModel) {
  for (const passtest::ModelCase &c : passtest::bundledModelCases()) {
    const ir::Module original = passtest::loadBundledModel(c.model);
    for (bool compact : {false, true}) {
      for (bool fuse : {false, true}) {
        std::string label = c.label() + (compact ? " +compact" : "") +
                            (fuse ? " +canonicalize+fuse" : "");
        ir::Module m = original.clone();
        auto check = [&](const char *pass) {
          EXPECT_EQ(passtest::verifierErrors(m), "") << label << " " << pass;
          EXPECT_LE(passtest::outputDifference(original, m, c.hypers), 1e-12)
              << label << " after " << pass;
        };
        ir::DiagnosticEngine diags;
        EXPECT_TRUE(passes::inferShapes(m, diags)) << label;
        check("shape inference");
        if (compact) {
          passes::compactMaterialization(m);
          check("compact materialization");
        }
        if (fuse) {
          passes::canonicalizeLoops(m);
          check("loop canonicalization");
          passes::fuseLoops(m);
          check("loop fusion");
          // Fusion reaches its fixed point in one call.
          EXPECT_FALSE(passes::fuseLoops(m)) << label;
        }
      }
    }
  }
}
