// Compact materialization: which edge values of each bundled model move to
// the pair space, how they are read afterwards, that outputs do not change,
// and the values the pass must leave alone.
#include "LoopPassTestUtil.h"

#include "passes/CompactMaterialization.h"
#include "passes/CostModel.h"
#include "passes/GraphStats.h"

#include <gtest/gtest.h>

#include <cstdio>

using namespace hector;
using passtest::countOf;

namespace {

/// Runs the pass on a copy of `m`; the copy must verify afterwards.
ir::Module compacted(const ir::Module &m, int *count = nullptr,
                     bool *changed = nullptr) {
  ir::Module out = m.clone();
  passes::CompactStats stats;
  bool c = passes::compactMaterialization(out, &stats);
  EXPECT_EQ(passtest::verifierErrors(out), "");
  if (count)
    *count = stats.compactedValues;
  if (changed)
    *changed = c;
  return out;
}

/// The pass leaves `text` exactly as it is.
void expectUnchanged(const std::string &text) {
  ir::Module m = passtest::parseVerified(text, "t.ir");
  int count = -1;
  bool changed = true;
  ir::Module out = compacted(m, &count, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(count, 0);
  EXPECT_EQ(ir::printModule(out), ir::printModule(m));
}

} // namespace

// Which values compact in each bundled model: the per-(src, etype)
// messages and attention terms, never anything reading e.dst.
TEST(CompactMaterialization, CompactsTheSourceSideValuesOfEachBundledModel) {
  const std::map<std::string, std::vector<std::string>> expected = {
      {"rgcn", {"msg_0"}},
      {"rgat", {"z_0", "z", "alpha_0"}},
      {"hgt", {"k_0", "k", "m_0", "m", "att_0", "msg"}},
      {"rgcn_pyg", {"h_1"}},
      {"rgat_pyg", {"outj", "alpha_1", "msg_0"}},
      {"hgt_pyg", {"alpha_0", "msg_0"}},
  };
  for (const auto &[model, values] : expected) {
    ir::Module m = passtest::loadBundledModel(model);
    int count = 0;
    ir::Module out = compacted(m, &count);
    EXPECT_EQ(count, static_cast<int>(values.size())) << model;
    std::vector<std::string> pairValues;
    for (const ir::ValueDecl &v : out.values)
      if (v.space == ir::Space::Pair)
        pairValues.push_back(v.name);
    EXPECT_EQ(pairValues, values) << model;
    // Every value keeps its kind and per-row shape.
    for (const ir::ValueDecl &v : m.values) {
      const ir::ValueDecl *after = out.findValue(v.name);
      ASSERT_NE(after, nullptr) << model << " " << v.name;
      EXPECT_EQ(after->shape, v.shape) << model << " " << v.name;
      EXPECT_EQ(after->kind, v.kind) << model << " " << v.name;
    }
  }
}

// RGAT: z and the source attention term compute per pair in one pairs
// loop before the first edge loop, and are read through e.pair; the
// destination side (zd) stays per edge.
TEST(CompactMaterialization, RgatComputesZAndTheSourceTermPerPair) {
  ir::Module out = compacted(passtest::loadBundledModel("rgat"));
  std::string text = ir::printModule(out);
  EXPECT_NE(text.find("temp z : pair[heads, out_dim/heads]"),
            std::string::npos);
  EXPECT_NE(text.find("temp alpha_0 : pair[heads]"), std::string::npos);
  EXPECT_NE(text.find("temp zd : edge[heads, out_dim/heads]"),
            std::string::npos);
  EXPECT_NE(text.find("  foreach p in pairs {\n"
                      "    z_0[p] = linear(x[p.src], W[p.etype])\n"
                      "    z[p] = reshape(z_0[p]) shape [heads, out_dim/heads]\n"
                      "    alpha_0[p] = dot(z[p], a_src[p.etype])\n"
                      "  }\n"
                      "  foreach e in edges {\n"
                      "    zd_0[e] = linear(x[e.dst], W[e.etype])\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("alpha_2[e] = add(alpha_0[e.pair], alpha_1[e])"),
            std::string::npos);
  EXPECT_NE(text.find("h_0[n] += mul(alpha[e], z[e.pair])"),
            std::string::npos);
  EXPECT_EQ(countOf(text, "foreach p in pairs"), 1);
}

// HGT: the source-type projections, their per-relation products and the
// message; e.src.ntype becomes p.src.ntype. The message's pairs loop sits
// right before the edge loop that held it.
TEST(CompactMaterialization, HgtComputesKeyAndMessageProjectionsPerPair) {
  ir::Module out = compacted(passtest::loadBundledModel("hgt"));
  std::string text = ir::printModule(out);
  EXPECT_NE(text.find("k_0[p] = linear(x[p.src], K[p.src.ntype])"),
            std::string::npos);
  EXPECT_NE(text.find("att_0[p] = linear(k[p], W_att[p.etype])"),
            std::string::npos);
  EXPECT_NE(text.find("att_1[e] = dot(att_0[e.pair], q[e])"),
            std::string::npos);
  EXPECT_NE(text.find("  foreach p in pairs {\n"
                      "    msg[p] = linear(m[p], W_msg[p.etype])\n"
                      "  }\n"
                      "  foreach e in edges {\n"
                      "    att[e] = div(att_exp[e], att_sum[e.dst])\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("t_0[n] += mul(att[e], msg[e.pair])"),
            std::string::npos);
  EXPECT_NE(text.find("temp q : edge[heads, in_dim/heads]"),
            std::string::npos);
}

// A statement inside `n.incoming` compacts too (PyG's RGCN computes its
// message in the aggregation loop); the edge graph value stays per edge.
TEST(CompactMaterialization, CompactsOutOfAnIncomingLoop) {
  ir::Module out = compacted(passtest::loadBundledModel("rgcn_pyg"));
  std::string text = ir::printModule(out);
  EXPECT_NE(text.find("  foreach p in pairs {\n"
                      "    h_1[p] = linear(x[p.src], weight_[p.etype])\n"
                      "  }\n"
                      "  foreach n in dst_nodes {\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("h_0[n] += div(h_1[e.pair], rel_in_degree[e])"),
            std::string::npos);
}

// Same outputs before and after, for every bundled model, with default and
// small hyper-parameters, on graphs where pairs are fewer than edges.
TEST(CompactMaterialization, PreservesTheOutputsOfEveryBundledModel) {
  for (const passtest::ModelCase &c : passtest::bundledModelCases()) {
    ir::Module m = passtest::loadBundledModel(c.model);
    ir::Module out = compacted(m);
    EXPECT_LE(passtest::outputDifference(m, out, c.hypers), 1e-12)
        << c.label();
  }
}

// On the am-shaped graph (0.57 pairs per edge) every model's FLOP count
// drops: each compacts at least one GEMM. The table is printed for the
// issue's report.
TEST(CompactMaterialization, ReducesFlopsOnTheAmShapedGraph) {
  passes::GraphStats am = passes::GraphStats::amShape();
  for (const char *name : {"rgcn", "rgat", "hgt", "rgcn_pyg", "rgat_pyg",
                           "hgt_pyg"}) {
    ir::Module m = passtest::loadBundledModel(name);
    ir::Module out = compacted(m);
    double before = passes::countFlops(m, am).total;
    double after = passes::countFlops(out, am).total;
    EXPECT_LT(after, before) << name;
    std::printf("compact flops %-9s %.4g -> %.4g (%.1f%%)\n", name, before,
                after, 100.0 * (after - before) / before);
  }
}

// Running the pass again finds nothing more to do.
TEST(CompactMaterialization, IsIdempotent) {
  for (const char *name : {"rgcn", "rgat", "hgt", "rgat_pyg"}) {
    ir::Module once = compacted(passtest::loadBundledModel(name));
    bool changed = true;
    ir::Module twice = compacted(once, nullptr, &changed);
    EXPECT_FALSE(changed) << name;
    EXPECT_EQ(ir::printModule(twice), ir::printModule(once)) << name;
  }
}

// Inside `n.outgoing`, n is the edge's source: `x[n]` compacts as p.src. A
// pairs loop already in place receives the statement under its own
// variable name.
TEST(CompactMaterialization, ReadsTheOutgoingParentAsTheSourceAndJoinsAPairsLoop) {
  ir::Module m = passtest::parseVerified(R"(module @m {
  hyper d : int = 3
  input x : node[d]
  param W : etype[d, d]
  param a : etype[d]
  temp s : pair[]
  temp y : edge[d]
  output h : node[d]
  foreach q in pairs {
    s[q] = dot(x[q.src], a[q.etype])
  }
  foreach n in src_nodes {
    foreach e in n.outgoing {
      y[e] = linear(x[n], W[e.etype])
      h[n] += mul(s[e.pair], y[e])
    }
  }
}
)",
                                         "t.ir");
  int count = 0;
  ir::Module out = compacted(m, &count);
  EXPECT_EQ(count, 1);
  std::string text = ir::printModule(out);
  EXPECT_NE(text.find("  foreach q in pairs {\n"
                      "    s[q] = dot(x[q.src], a[q.etype])\n"
                      "    y[q] = linear(x[q.src], W[q.etype])\n"
                      "  }\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("h[n] += mul(s[e.pair], y[e.pair])"), std::string::npos);
  EXPECT_LE(passtest::outputDifference(m, out, {}), 1e-12);
}

// --- Where the pass must not apply -------------------------------------------

TEST(CompactMaterialization, LeavesAValueReadingTheDestination) {
  expectUnchanged(R"(module @m {
  hyper d : int = 3
  input x : node[d]
  param W : etype[d, d]
  temp y : edge[d]
  output h : node[d]
  foreach e in edges {
    y[e] = linear(x[e.dst], W[e.etype])
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      h[n] += copy(y[e])
    }
  }
}
)");
}

TEST(CompactMaterialization, LeavesAnEdgeOutput) {
  expectUnchanged(R"(module @m {
  hyper d : int = 3
  input x : node[d]
  param W : etype[d, d]
  output y : edge[d]
  foreach e in edges {
    y[e] = linear(x[e.src], W[e.etype])
  }
}
)");
}

TEST(CompactMaterialization, LeavesAValueReadingAnEdgeRow) {
  expectUnchanged(R"(module @m {
  hyper d : int = 3
  input x : node[d]
  input c : edge[]
  graph rel_in_degree : edge[]
  temp y : edge[d]
  temp z : edge[d]
  output h : node[d]
  foreach e in edges {
    y[e] = mul(x[e.src], c[e])
    z[e] = div(y[e], rel_in_degree[e])
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      h[n] += copy(z[e])
    }
  }
}
)");
}

// `x[n]` inside `n.incoming` is the destination's row.
TEST(CompactMaterialization, LeavesAValueReadingTheIncomingParent) {
  expectUnchanged(R"(module @m {
  hyper d : int = 3
  input x : node[d]
  param W : etype[d, d]
  temp y : edge[d]
  output h : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      y[e] = linear(x[n], W[e.etype])
      h[n] += copy(y[e])
    }
  }
}
)");
}

// The source row is written in the same top-level loop (`k[n]` then
// `k[e.src]` inside `n.outgoing`): moving the statement before that loop
// would read k before it exists.
TEST(CompactMaterialization, LeavesAValueWhoseSourceRowIsWrittenInTheSameLoop) {
  expectUnchanged(R"(module @m {
  hyper d : int = 3
  input x : node[d]
  param W : etype[d, d]
  temp k : node[d]
  temp y : edge[d]
  output h : node[d]
  foreach n in src_nodes {
    k[n] = relu(x[n])
    foreach e in n.outgoing {
      y[e] = linear(k[e.src], W[e.etype])
      h[n] += copy(y[e])
    }
  }
}
)");
}
