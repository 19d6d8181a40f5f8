// Broadcast forwarding: an edge copy of its node's row is read from the
// node instead. Small modules for what forwards and what must not, and,
// for every bundled model's backward program, which broadcasts go and
// that the outputs stay the same through the rest of the loop passes.
#include "LoopPassTestUtil.h"

#include "passes/Autodiff.h"
#include "passes/BroadcastForwarding.h"
#include "passes/CompactMaterialization.h"
#include "passes/LoopCanonicalization.h"
#include "passes/LoopFusion.h"
#include "passes/Pipeline.h"
#include "passes/ShapeInference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

using namespace hector;
using passtest::countOf;

namespace {

using Result = passtest::PassResult;

/// Header of the small cases: a node value x, an edge value y, the output h.
const char *kHeader = R"(module @m {
  hyper d : int = 3
  input x : node[d]
  input y : edge[d]
  output h : edge[d]
)";

Result forwarded(const ir::Module &m, const std::set<std::string> &keep = {}) {
  return passtest::applyPass(
      [&](ir::Module &module) { return passes::forwardBroadcasts(module, keep); },
      m);
}

/// Parses kHeader + body, forwards, and checks the outputs did not change.
Result forwardedText(const std::string &body,
                     const std::set<std::string> &keep = {}) {
  ir::Module m =
      passtest::parseVerified(std::string(kHeader) + body + "}\n", "t.ir");
  Result r = forwarded(m, keep);
  EXPECT_LE(passtest::outputDifference(m, r.module, {}), 1e-12) << r.text;
  return r;
}

/// A bundled model's backward program as the pipeline hands it to the
/// loop passes: shapes inferred and compacted, forward and backward.
ir::Module backwardOf(const std::string &model) {
  ir::Module forward = passtest::loadBundledModel(model);
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(passes::inferShapes(forward, diags)) << model;
  passes::compactMaterialization(forward);
  std::optional<passes::BackwardProgram> bp =
      passes::buildBackward(forward, diags);
  EXPECT_TRUE(bp.has_value()) << model;
  if (!bp)
    return ir::Module{};
  EXPECT_TRUE(passes::inferShapes(bp->module, diags)) << model;
  passes::compactMaterialization(bp->module);
  return std::move(bp->module);
}

} // namespace

// The dst-node broadcast: reads in a later edge loop become x[e.dst], the
// copy, its value and the loops it leaves empty go.
TEST(BroadcastForwarding, ReadsAnIncomingBroadcastFromItsDestination) {
  Result r = forwardedText(R"(  temp t : edge[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      t[e] = copy(x[n])
    }
  }
  foreach e in edges {
    h[e] = mul(t[e], y[e])
  }
)");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.module.findValue("t"), nullptr);
  EXPECT_EQ(countOf(r.text, "foreach"), 1) << r.text;
  EXPECT_NE(r.text.find("h[e] = mul(x[e.dst], y[e])"), std::string::npos)
      << r.text;
}

// The mirror image: an outgoing loop's copy is the source's row.
TEST(BroadcastForwarding, ReadsAnOutgoingBroadcastFromItsSource) {
  Result r = forwardedText(R"(  temp t : edge[d]
  foreach n in src_nodes {
    foreach e in n.outgoing {
      t[e] = copy(x[n])
    }
  }
  foreach f in edges {
    h[f] = add(y[f], t[f])
  }
)");
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.text.find("h[f] = add(y[f], x[f.src])"), std::string::npos)
      << r.text;
}

// A read in the same neighbour loop is the node's own row, x[n]; the node
// loop keeps its other statements.
TEST(BroadcastForwarding, ReadsInsideTheSameNestUseTheNodeVariable) {
  Result r = forwardedText(R"(  temp s : node[d]
  temp t : edge[d]
  foreach n in dst_nodes {
    s[n] = neg(x[n])
    foreach e in n.incoming {
      t[e] = copy(s[n])
      h[e] = mul(t[e], y[e])
    }
  }
)");
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.text.find("h[e] = mul(s[n], y[e])"), std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("s[n] = neg(x[n])"), std::string::npos) << r.text;
}

// Left alone: an output, a value the caller keeps, and a copy of another
// row than the node's own.
TEST(BroadcastForwarding, LeavesOutputsKeptValuesAndOtherCopies) {
  Result output = forwardedText(R"(  foreach n in dst_nodes {
    foreach e in n.incoming {
      h[e] = copy(x[n])
    }
  }
)");
  EXPECT_FALSE(output.changed);
  const std::string broadcast = R"(  temp t : edge[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      t[e] = copy(x[n])
    }
  }
  foreach e in edges {
    h[e] = mul(t[e], y[e])
  }
)";
  EXPECT_FALSE(forwardedText(broadcast, {"t"}).changed);
  EXPECT_TRUE(forwardedText(broadcast, {"y"}).changed);
  Result typeRow = forwardedText(R"(  input w : ntype[d]
  temp t : edge[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      t[e] = copy(w[n.ntype])
    }
  }
  foreach e in edges {
    h[e] = mul(t[e], y[e])
  }
)");
  EXPECT_FALSE(typeRow.changed) << typeRow.text;
}

// The backward programs: every broadcast autodiff makes of a sum over
// incoming edges goes (RGAT's and HGT's message gradients, the softmax
// sum's gradient), and the outputs stay the same through forwarding,
// canonicalization and fusion.
TEST(BroadcastForwarding, RemovesTheBroadcastsOfEveryBundledBackward) {
  const std::map<std::string, std::vector<std::string>> gone = {
      {"rgcn", {"grad_msg"}},
      {"rgat", {"grad2_alpha_exp"}},
      {"hgt", {"grad2_att_exp"}},
      {"rgat_pyg", {"grad_msg", "grad2_alpha_exp"}},
      {"hgt_pyg", {"grad_msg", "grad2_alpha_exp"}},
  };
  for (const passtest::ModelCase &c : passtest::bundledModelCases()) {
    const ir::Module original = backwardOf(c.model);
    ir::Module m = original.clone();
    const bool changed = passes::forwardBroadcasts(m);
    auto expected = gone.find(c.model);
    EXPECT_EQ(changed, expected != gone.end()) << c.label();
    if (expected != gone.end()) {
      for (const std::string &value : expected->second)
        EXPECT_EQ(m.findValue(value), nullptr) << c.label() << " " << value;
    }
    EXPECT_EQ(passtest::verifierErrors(m), "") << c.label();
    EXPECT_LE(passtest::outputDifference(original, m, c.hypers), 1e-12)
        << c.label();
    passes::canonicalizeLoops(m);
    passes::fuseLoops(m);
    EXPECT_EQ(passtest::verifierErrors(m), "") << c.label();
    EXPECT_LE(passtest::outputDifference(original, m, c.hypers), 1e-12)
        << c.label() << " canonicalized and fused";
    // A second run finds nothing left.
    EXPECT_FALSE(passes::forwardBroadcasts(m)) << c.label();
  }
}

// Through the pipeline: a forward broadcast that its backward reads is
// saved, so the forward keeps storing it; the backward, which only reads
// it, is unaffected.
TEST(BroadcastForwarding, ThePipelineKeepsTheForwardValuesTheBackwardReads) {
  ir::Module m = passtest::parseVerified(R"(module @saved {
  hyper d : int = 3
  input x : node[d]
  param w : etype[d]
  temp t : edge[d]
  output h : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      t[e] = copy(x[n])
    }
  }
  foreach e in edges {
    h[e.dst] += mul(t[e], w[e.etype])
  }
}
)",
                                         "saved.ir");
  ir::DiagnosticEngine diags;
  std::ostringstream dump;
  std::optional<passes::CompiledLayer> layer =
      passes::compileLayer(m, passes::PipelineOptions{}, diags, dump);
  ASSERT_TRUE(layer.has_value());
  EXPECT_NE(std::find(layer->saved.begin(), layer->saved.end(), "t"),
            layer->saved.end());
  EXPECT_NE(layer->forward.findValue("t"), nullptr);
  // Alone, the forward's broadcast would go.
  ir::Module alone = m.clone();
  EXPECT_TRUE(passes::forwardBroadcasts(alone));
}
