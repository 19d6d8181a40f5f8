// Segment-sum uncompaction: a pair message that only its destination's sum
// reads goes back to the edge loop (and a scaled copy folds into its sum).
// Small modules for what moves and what must stay, the interpreter's
// outputs before and after, and the bundled RGCN models' forward as the
// pipeline hands it to the loop passes.
#include "LoopPassTestUtil.h"

#include "passes/CompactMaterialization.h"
#include "passes/LoopCanonicalization.h"
#include "passes/LoopFusion.h"
#include "passes/SegmentSumUncompaction.h"
#include "passes/ShapeInference.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace hector;
using passtest::countOf;

namespace {

using Result = passtest::PassResult;

/// Header of the small cases: features x, an edge input w, an etype
/// weight W, the graph's rel_in_degree and the output h.
const char *kHeader = R"(module @m {
  hyper d : int = 3
  input x : node[d]
  input w : edge[]
  param W : etype[d, d]
  graph rel_in_degree : edge[]
  output h : node[d]
)";

/// Parses kHeader + body, uncompacts, and checks the outputs did not
/// change.
Result uncompacted(const std::string &body,
                   const std::set<std::string> &keep = {}) {
  ir::Module m =
      passtest::parseVerified(std::string(kHeader) + body + "}\n", "t.ir");
  Result r = passtest::applyPass(
      [&](ir::Module &module) {
        return passes::uncompactSegmentSums(module, keep);
      },
      m);
  EXPECT_LE(passtest::outputDifference(m, r.module, {}), 1e-12) << r.text;
  return r;
}

/// A body for kHeader: the pair message `m[p] = linear(x[p.src],
/// W[p.etype])` after `pairStatements` in a pairs loop, then `incoming`
/// (statements, one a line) in a dst-node loop's incoming loop; `decls`
/// declares the other values they use.
std::string messageBody(const std::vector<std::string> &incoming,
                        const std::string &decls = "",
                        const std::string &pairStatements = "") {
  std::string body =
      "  temp m : pair[d]\n" + decls + "  foreach p in pairs {\n" +
      pairStatements +
      "    m[p] = linear(x[p.src], W[p.etype])\n  }\n"
      "  foreach n in dst_nodes {\n    foreach e in n.incoming {\n";
  for (const std::string &line : incoming)
    body += "      " + line + "\n";
  return body + "    }\n  }\n";
}

const std::string kMeanSum = "h[n] += div(m[e.pair], rel_in_degree[e])";

// RGCN-PyG's mean: the message moves into the incoming loop right before
// the sum, becomes an edge value, and the pairs loop goes.
TEST(SegmentSumUncompaction, MovesAPairMessageToItsSum) {
  Result r = uncompacted(messageBody({kMeanSum}));
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.module.findValue("m")->space, ir::Space::Edge);
  EXPECT_EQ(countOf(r.text, "foreach p in pairs"), 0) << r.text;
  EXPECT_NE(r.text.find("      m[e] = linear(x[e.src], W[e.etype])\n"
                        "      h[n] += div(m[e], rel_in_degree[e])"),
            std::string::npos)
      << r.text;
}

// rgcn.hgnn's form: the scaled message is an edge value that a copy sums;
// the copy takes the scaling, the edge value goes, then the message moves.
TEST(SegmentSumUncompaction, FoldsAScaledCopyIntoItsSum) {
  Result r = uncompacted(messageBody(
      {"v[e] = mul(m[e.pair], rel_in_degree[e])", "h[n] += copy(v[e])"},
      "  temp v : edge[d]\n"));
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.module.findValue("v"), nullptr);
  EXPECT_NE(r.text.find("      m[e] = linear(x[e.src], W[e.etype])\n"
                        "      h[n] += mul(m[e], rel_in_degree[e])"),
            std::string::npos)
      << r.text;
}

// A plain sum of the messages (no scalar) moves too; the pairs loop keeps
// its other statements.
TEST(SegmentSumUncompaction, MovesAnUnscaledSumAndKeepsOtherPairStatements) {
  Result r = uncompacted(
      messageBody({"h[n] += copy(m[e.pair])", "o[e] = copy(q[e.pair])"},
                  "  temp q : pair[d]\n  output o : edge[d]\n",
                  "    q[p] = neg(x[p.src])\n"));
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(countOf(r.text, "foreach p in pairs"), 1) << r.text;
  EXPECT_NE(r.text.find("q[p] = neg(x[p.src])"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("h[n] += copy(m[e])"), std::string::npos) << r.text;
}

// Left alone: a message the backward keeps, one that something else reads,
// one scaled by a per-edge input (it may differ within a segment), and a
// sum into another row than the node's own.
TEST(SegmentSumUncompaction, LeavesKeptSharedOtherwiseScaledAndOtherSums) {
  EXPECT_FALSE(uncompacted(messageBody({kMeanSum}), {"m"}).changed);
  EXPECT_FALSE(uncompacted(messageBody({kMeanSum, "o[e] = copy(m[e.pair])"},
                                       "  output o : edge[d]\n"))
                   .changed);
  EXPECT_FALSE(
      uncompacted(messageBody({"h[n] += div(m[e.pair], w[e])"})).changed);
  EXPECT_FALSE(
      uncompacted(messageBody({"h[e.src] += div(m[e.pair], rel_in_degree[e])"}))
          .changed);
}

// A scaled copy whose edge value something else reads stays two
// statements (and its message stays per pair).
TEST(SegmentSumUncompaction, KeepsAScaledCopyThatOthersRead) {
  Result r =
      uncompacted(messageBody({"v[e] = div(m[e.pair], rel_in_degree[e])",
                               "h[n] += copy(v[e])", "o[e] = neg(v[e])"},
                              "  temp v : edge[d]\n  output o : edge[d]\n"));
  EXPECT_FALSE(r.changed);
}

// The bundled RGCN models' forward as the pipeline hands it to this pass
// (shapes inferred, compacted, loops canonicalized and fused): both end
// with the message GEMM's form, per edge, and the same outputs.
TEST(SegmentSumUncompaction, UncompactsTheBundledRgcnForwards) {
  for (const char *model : {"rgcn", "rgcn_pyg"}) {
    SCOPED_TRACE(model);
    ir::Module m = passtest::loadBundledModel(model);
    ir::DiagnosticEngine diags;
    ASSERT_TRUE(passes::inferShapes(m, diags));
    passes::compactMaterialization(m);
    passes::canonicalizeLoops(m);
    passes::fuseLoops(m);
    Result r = passtest::applyPass(
        [](ir::Module &module) { return passes::uncompactSegmentSums(module); },
        m);
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(countOf(r.text, "pair"), 0) << r.text;
    EXPECT_EQ(countOf(r.text, "+= div("), 1) << r.text;
    EXPECT_LE(passtest::outputDifference(m, r.module, {}), 1e-12) << r.text;
  }
}

} // namespace
