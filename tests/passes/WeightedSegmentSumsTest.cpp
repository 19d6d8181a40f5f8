// Weighted segment-sum uncompaction: an attention-weighted sum of a pair
// message gets its own per-edge message (the weighted summed GEMM's form),
// the message's other readers are reordered, and the pair rows go. Small
// modules for what rewrites and what must stay, the interpreter's outputs
// before and after, and the bundled RGAT models' forward as the pipeline
// hands it to the loop passes with nothing kept.
#include "LoopPassTestUtil.h"

#include "passes/CompactMaterialization.h"
#include "passes/GraphStats.h"
#include "passes/LinearReordering.h"
#include "passes/LoopCanonicalization.h"
#include "passes/LoopFusion.h"
#include "passes/ShapeInference.h"
#include "passes/WeightedSegmentSums.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace hector;
using passtest::countOf;

namespace {

using Result = passtest::PassResult;

/// Header of the small cases: features x, per-edge weights a (one per
/// head) and s (a scalar), an etype weight W [d, heads * d], a shared
/// attention vector k and the output h (a case that sums into another
/// output declares it and writes h too).
const char *kHeader = R"(module @m {
  hyper d : int = 3
  hyper heads : int = 2
  input x : node[d]
  input a : edge[heads]
  input s : edge[]
  param W : etype[d, heads*d]
  param k : global[heads*d, heads]
  output h : node[heads, d]
)";

/// Parses kHeader + body, rewrites, and checks the outputs did not change.
Result rewritten(const std::string &body,
                 const std::set<std::string> &keep = {}) {
  ir::Module m =
      passtest::parseVerified(std::string(kHeader) + body + "}\n", "t.ir");
  Result r = passtest::applyPass(
      [&](ir::Module &module) {
        return passes::uncompactWeightedSums(
            module, passes::GraphStats::amShape(), keep);
      },
      m);
  EXPECT_LE(passtest::outputDifference(m, r.module, {}), 1e-12) << r.text;
  return r;
}

/// The pair message o = x W, its heads m = reshape(o) and the attention
/// term t = o k in a pairs loop (RGAT-PyG's compacted forward), then
/// `incoming` in a dst-node loop's incoming loop; `decls` declares the
/// other values those lines use.
std::string attentionBody(const std::vector<std::string> &incoming,
                          const std::string &decls = "") {
  std::string body = "  temp o : pair[heads*d]\n  temp m : pair[heads, d]\n"
                     "  output t : pair[heads]\n" +
                     decls +
                     "  foreach p in pairs {\n"
                     "    o[p] = linear(x[p.src], W[p.etype])\n"
                     "    t[p] = linear(o[p], k)\n"
                     "    m[p] = reshape(o[p]) shape [heads, d]\n  }\n"
                     "  foreach n in dst_nodes {\n"
                     "    foreach e in n.incoming {\n";
  for (const std::string &line : incoming)
    body += "      " + line + "\n";
  return body + "    }\n  }\n";
}

/// A bundled model's forward as the pipeline hands it to this pass: shapes
/// inferred, reordered, compacted, loops canonicalized and fused.
ir::Module bundledForwardAtThisPass(const std::string &model) {
  ir::Module m = passtest::loadBundledModel(model);
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(passes::inferShapes(m, diags)) << model;
  passes::reorderLinearOps(m, passes::GraphStats::amShape());
  passes::compactMaterialization(m);
  passes::canonicalizeLoops(m);
  passes::fuseLoops(m);
  return m;
}

const std::string kWeightedSum = "h[n] += mul(a[e], m[e.pair])";

// RGAT-PyG's form: the sum reads its own per-edge message and heads, right
// before it; the attention term reads x through a per-relation product
// (reordered) and the pair message goes.
TEST(WeightedSegmentSums, GivesTheSumItsOwnMessageAndReordersTheOthers) {
  Result r = rewritten(attentionBody({kWeightedSum}));
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.text.find("      o_edge[e] = linear(x[e.src], W[e.etype])\n"
                        "      m_edge[e] = reshape(o_edge[e]) shape [heads, "
                        "d]\n"
                        "      h[n] += mul(a[e], m_edge[e])"),
            std::string::npos)
      << r.text;
  EXPECT_EQ(r.module.findValue("o"), nullptr) << r.text;
  EXPECT_EQ(r.module.findValue("m"), nullptr) << r.text;
  EXPECT_NE(r.text.find("t[p] = linear(x[p.src], t_w[p.etype])"),
            std::string::npos)
      << r.text;
}

// The weight may come second, and a weighted copy folds into its sum.
TEST(WeightedSegmentSums, FoldsAWeightedCopyIntoItsSum) {
  Result r = rewritten(
      attentionBody({"v[e] = mul(m[e.pair], a[e])", "h[n] += copy(v[e])"},
                    "  temp v : edge[heads, d]\n"));
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.module.findValue("v"), nullptr);
  EXPECT_NE(r.text.find("h[n] += mul(m_edge[e], a[e])"), std::string::npos)
      << r.text;
}

// A scalar weight scales the message row itself (no reshape).
TEST(WeightedSegmentSums, TakesAScalarWeightOnTheMessageRow) {
  Result r =
      rewritten(attentionBody({"g[n] += mul(s[e], o[e.pair])", kWeightedSum},
                              "  output g : node[heads*d]\n"));
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.text.find("      o_edge[e] = linear(x[e.src], W[e.etype])\n"
                        "      g[n] += mul(s[e], o_edge[e])"),
            std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("h[n] += mul(a[e], m_edge[e])"), std::string::npos)
      << r.text;
}

// Left alone: a message the backward keeps (or its reshape), a weight
// that is not an edge value read at the edge, and a sum into another row
// than the node's own.
TEST(WeightedSegmentSums, LeavesKeptMismatchedAndOtherSums) {
  EXPECT_FALSE(rewritten(attentionBody({kWeightedSum}), {"m"}).changed);
  EXPECT_FALSE(rewritten(attentionBody({kWeightedSum}), {"o"}).changed);
  EXPECT_FALSE(rewritten(attentionBody({"h[n] += mul(u[n], m[e.pair])"},
                                       "  input u : node[heads]\n"))
                   .changed);
  EXPECT_FALSE(
      rewritten(attentionBody({"h[e.src] += mul(a[e], m[e.pair])"})).changed);
}

// A reordering that would delete a kept value is not taken: z, kept for
// a backward, is read by nothing in the forward but would go with its
// reader's reordering. The sum is still rewritten; the attention term
// keeps reading the pair message.
TEST(WeightedSegmentSums, KeepsTheProducersOfKeptValues) {
  std::string body =
      attentionBody({kWeightedSum}, "  temp z : pair[heads*d]\n"
                                    "  output y : pair[heads]\n");
  body.insert(body.find("    m[p] = reshape"),
              "    z[p] = linear(x[p.src], W[p.etype])\n"
              "    y[p] = linear(z[p], k)\n");
  Result r = rewritten(body, {"z"});
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.module.findValue("z"), nullptr) << r.text;
  EXPECT_NE(r.text.find("t[p] = linear(o[p], k)"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("h[n] += mul(a[e], m_edge[e])"), std::string::npos)
      << r.text;
}

// HGT's form: per-head weight matrices on a per-head message, weighed
// per head. The sum takes its own per-edge message, with no reshape; a
// scalar weight (one for all heads) on such a message stays.
TEST(WeightedSegmentSums, TakesPerHeadWeightMatricesWithPerHeadWeights) {
  auto body = [](const std::string &weight, const std::string &sum) {
    return "  input v : node[heads, d]\n  param V : etype[" + weight +
           "]\n  temp m2 : pair[heads, d]\n"
           "  foreach p in pairs {\n"
           "    m2[p] = linear(v[p.src], V[p.etype])\n  }\n"
           "  foreach n in dst_nodes {\n    foreach e in n.incoming {\n"
           "      " +
           sum + "\n    }\n  }\n";
  };
  Result r = rewritten(body("heads, d, d", "h[n] += mul(a[e], m2[e.pair])"));
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.text.find("      m2_edge[e] = linear(v[e.src], V[e.etype])\n"
                        "      h[n] += mul(a[e], m2_edge[e])"),
            std::string::npos)
      << r.text;
  EXPECT_EQ(r.module.findValue("m2"), nullptr) << r.text;
  // A scalar weight on per-head matrices: the template would read one
  // weight a head.
  EXPECT_FALSE(
      rewritten(body("heads, d, d", "h[n] += mul(s[e], m2[e.pair])")).changed);
}

// The bundled HGT-PyG forward as the pipeline hands it to this pass with
// nothing kept: the message sum reads a per-edge v_rel message, the pair
// message goes, and the attention's k_rel moves to the destination side
// (q[e.dst] k_rel^T, once a (destination, relation) chunk: the reordering
// runs with destination products counted per segment); same outputs. With
// a value kept (a training forward), products are counted per edge and
// the attention keeps its pair rows.
TEST(WeightedSegmentSums, RewritesTheBundledHgtPygForward) {
  ir::Module m = bundledForwardAtThisPass("hgt_pyg");
  for (bool inference : {true, false}) {
    SCOPED_TRACE(inference);
    const std::set<std::string> keep =
        inference ? std::set<std::string>{} : std::set<std::string>{"alpha"};
    Result r = passtest::applyPass(
        [&](ir::Module &module) {
          return passes::uncompactWeightedSums(
              module, passes::GraphStats::amShape(), keep);
        },
        m);
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(countOf(r.text, "linear(v[p.src], v_rel"), 0) << r.text;
    EXPECT_EQ(countOf(r.text, "_edge[e] = linear(v[e.src], v_rel[e.etype])"), 1)
        << r.text;
    EXPECT_EQ(countOf(r.text, "linear(k[p.src], k_rel[p.etype])"),
              inference ? 0 : 1)
        << r.text;
    EXPECT_EQ(countOf(r.text, "= linear_t(q[e.dst], k_rel[e.etype])"),
              inference ? 1 : 0)
        << r.text;
    EXPECT_LE(passtest::outputDifference(m, r.module, {}), 1e-12) << r.text;
  }
}

// The bundled RGAT models' forward as the pipeline hands it to this pass
// with nothing kept (the inference program: shapes inferred, reordered,
// compacted, loops canonicalized and fused): the weighted sum reads a
// per-edge message, no pair row is a message any more, same outputs.
TEST(WeightedSegmentSums, RewritesTheBundledRgatForwards) {
  for (const char *model : {"rgat", "rgat_pyg"}) {
    SCOPED_TRACE(model);
    ir::Module m = bundledForwardAtThisPass(model);
    Result r = passtest::applyPass(
        [](ir::Module &module) {
          return passes::uncompactWeightedSums(module,
                                               passes::GraphStats::amShape());
        },
        m);
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(countOf(r.text, "linear(x[p.src], W"), 0) << r.text;
    EXPECT_EQ(countOf(r.text, "linear(x[p.src], weight_"), 0) << r.text;
    EXPECT_EQ(countOf(r.text, "_edge[e] = linear(x[e.src]"), 1) << r.text;
    EXPECT_LE(passtest::outputDifference(m, r.module, {}), 1e-12) << r.text;
  }
}

} // namespace
