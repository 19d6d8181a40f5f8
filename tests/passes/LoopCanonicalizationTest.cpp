// Loop canonicalization: edge loops that reduce into e.dst (e.src) rows
// become dst_nodes/incoming (src_nodes/outgoing) nests, edge-local loops
// join neighbouring nests, and everything else stays an edge loop.
#include "LoopPassTestUtil.h"

#include "passes/CompactMaterialization.h"
#include "passes/LoopCanonicalization.h"

#include <gtest/gtest.h>

using namespace hector;
using passtest::countOf;

namespace {

/// Header shared by the small cases: x, a weight and a few values.
const char *kHeader = R"(module @m {
  hyper d : int = 3
  input x : node[d]
  param W : etype[d, d]
  temp y : edge[d]
)";

using Result = passtest::PassResult;

Result canonicalized(const ir::Module &m) {
  return passtest::applyPass(passes::canonicalizeLoops, m);
}

Result canonicalizedText(const std::string &body) {
  ir::Module m =
      passtest::parseVerified(std::string(kHeader) + body + "}\n", "t.ir");
  Result r = canonicalized(m);
  EXPECT_LE(passtest::outputDifference(m, r.module, {}), 1e-12);
  return r;
}

} // namespace

// Rule 1: `h[e.dst] += ...` over all edges is the incoming reduction of
// every dst node; the edge-local statement moves along.
TEST(LoopCanonicalization, TurnsADstReductionIntoAnIncomingNest) {
  Result r = canonicalizedText(R"(  output h : node[d]
  foreach e in edges {
    y[e] = linear(x[e.src], W[e.etype])
    h[e.dst] += mul(y[e], x[e.dst])
  }
)");
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.text.find("  foreach n in dst_nodes {\n"
                        "    foreach e in n.incoming {\n"
                        "      y[e] = linear(x[e.src], W[e.etype])\n"
                        "      h[n] += mul(y[e], x[e.dst])\n"
                        "    }\n"
                        "  }\n"),
            std::string::npos)
      << r.text;
}

// Rule 2, the mirror image: reductions into e.src rows.
TEST(LoopCanonicalization, TurnsASrcReductionIntoAnOutgoingNest) {
  Result r = canonicalizedText(R"(  output h : node[d]
  foreach e in edges {
    y[e] = linear(x[e.dst], W[e.etype])
    h[e.src] max= copy(y[e])
  }
)");
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.text.find("  foreach n in src_nodes {\n"
                        "    foreach e in n.outgoing {\n"
                        "      y[e] = linear(x[e.dst], W[e.etype])\n"
                        "      h[n] max= copy(y[e])\n"),
            std::string::npos)
      << r.text;
}

// The node variable must not clash with the edge loop's own variable.
TEST(LoopCanonicalization, PicksANodeVariableDistinctFromTheEdgeVariable) {
  Result r = canonicalizedText(R"(  output h : node[d]
  foreach n in edges {
    y[n] = linear(x[n.src], W[n.etype])
    h[n.dst] += copy(y[n])
  }
)");
  EXPECT_NE(r.text.find("  foreach n0 in dst_nodes {\n"
                        "    foreach n in n0.incoming {\n"
                        "      y[n] = linear(x[n.src], W[n.etype])\n"
                        "      h[n0] += copy(y[n])\n"),
            std::string::npos)
      << r.text;
}

// Rule 3: edge-local loops next to an incoming nest join it, one after
// the other (the first is next to the nest only once the second has
// joined).
TEST(LoopCanonicalization, EdgeLocalLoopsNextToANestJoinIt) {
  Result r = canonicalizedText(R"(  temp y2 : edge[d]
  output h : node[d]
  foreach e in edges {
    y[e] = linear(x[e.src], W[e.etype])
  }
  foreach e in edges {
    y2[e] = relu(y[e])
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      h[n] += copy(y2[e])
    }
  }
)");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(countOf(r.text, "in edges"), 0) << r.text;
  EXPECT_EQ(countOf(r.text, "in dst_nodes"), 3) << r.text;
}

// --- Where the pass must not apply -------------------------------------------

// Edge-local loops with no nest beside them stay edge loops.
TEST(LoopCanonicalization, LeavesALoneEdgeLocalLoop) {
  Result r = canonicalizedText(R"(  output h : edge[d]
  foreach e in edges {
    y[e] = linear(x[e.src], W[e.etype])
    h[e] = relu(y[e])
  }
)");
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(countOf(r.text, "foreach e in edges"), 1);
}

// A loop reducing into both ends, or into a global value, or into a type
// row, has no node nest that holds all of its statements.
TEST(LoopCanonicalization, LeavesLoopsWithOtherReductions) {
  struct Case {
    const char *decl, *reductions;
  };
  for (const Case &c : {
           Case{"temp g : node[d]", "g[e.src] += copy(y[e])\n"
                                    "    h[e.dst] += copy(y[e])"},
           Case{"output s : global[d]", "s += copy(y[e])"},
           Case{"output t : ntype[d]", "t[e.dst.ntype] += copy(y[e])"},
       }) {
    Result r = canonicalizedText(std::string("  ") + c.decl + R"(
  output h : node[d]
  foreach e in edges {
    y[e] = linear(x[e.src], W[e.etype])
    )" + c.reductions + R"(
  }
)" + (std::string(c.decl).find("node") == std::string::npos
           ? "  foreach n in dst_nodes {\n"
             "    foreach e in n.incoming {\n"
             "      h[n] += relu(y[e])\n"
             "    }\n"
             "  }\n"
           : ""));
    EXPECT_FALSE(r.changed) << c.reductions;
    EXPECT_EQ(countOf(r.text, "foreach e in edges"), 1) << c.reductions;
  }
}

// Every bundled model, compacted or not: the result verifies, computes the
// same outputs, and keeps no edge loop that sits next to a nest.
TEST(LoopCanonicalization, PreservesTheOutputsOfEveryBundledModel) {
  for (bool compact : {false, true}) {
    for (const passtest::ModelCase &c : passtest::bundledModelCases()) {
      ir::Module m = passtest::loadBundledModel(c.model);
      if (compact)
        passes::compactMaterialization(m);
      Result r = canonicalized(m);
      // PyG's RGCN already aggregates in an incoming nest.
      EXPECT_EQ(r.changed, c.model != "rgcn_pyg") << c.label();
      EXPECT_EQ(countOf(r.text, "in edges"), 0) << c.label() << r.text;
      EXPECT_LE(passtest::outputDifference(m, r.module, c.hypers), 1e-12)
          << c.label() << (compact ? " compacted" : "");
    }
  }
}
