// Linear operator reordering: which rewrites it makes on the bundled models
// (checked on the printed IR), that it leaves the module alone where a
// pattern does not match or the graph's sizes say it does not pay, that the
// interpreter computes the same outputs before and after, and the FLOP
// counts before and after on the am-shaped graph.
#include "passes/LinearReordering.h"
#include "PassTestUtil.h"
#include "ir/InterIRPrinter.h"
#include "ir/InterIRVerifier.h"
#include "passes/CostModel.h"

#include <gtest/gtest.h>

#include <cstdio>

using namespace hector;

namespace {

const char *kModels[] = {"rgcn",     "rgcn_pyg", "rgat",
                         "rgat_pyg", "hgt",      "hgt_pyg"};

bool verifies(const ir::Module &m) {
  ir::DiagnosticEngine diags;
  bool ok = ir::verifyModule(m, diags);
  if (!ok)
    diags.print(std::cerr);
  return ok;
}

bool contains(const std::string &text, const std::string &piece) {
  return text.find(piece) != std::string::npos;
}

/// The am-shaped graph, with `heads` bound when the module has that hyper.
passes::GraphStats amStats(const ir::Module &m, int64_t heads) {
  passes::GraphStats s = passes::GraphStats::amShape();
  if (m.findHyper("heads"))
    s.hypers["heads"] = heads;
  return s;
}

std::map<std::string, double> headsHyper(const ir::Module &m, int64_t heads) {
  if (!m.findHyper("heads"))
    return {};
  return {{"heads", static_cast<double>(heads)}};
}

/// Max relative error between the outputs of `before` and `after` on a
/// random graph with random fp64 arguments.
double outputError(const ir::Module &before, const ir::Module &after,
                   const std::map<std::string, double> &hypers, uint64_t seed) {
  auto g = passtest::randomGraph(40, 200, 5, 3, seed);
  auto args = passtest::randomArguments(before, *g, seed + 1, false, hypers);
  runtime::InterpretOptions opts;
  opts.hypers = hypers;
  auto a = runtime::interpret(before, *g, args.inputs, args.params, opts);
  auto b = runtime::interpret(after, *g, args.inputs, args.params, opts);
  return passtest::maxRelativeError(b, a);
}

} // namespace

// RGAT, 1 head: a_dst's score no longer needs x[e.dst] W[r] per edge; the
// product W[r] a_dst[r] is built once per relation and zd_0/zd disappear.
// a_src's dot stays (its z feeds the message, so folding it would add a
// K*H linear per edge to save only a 2*N dot: no gain at K = N = 64).
TEST(LinearReordering, RgatFoldsDstAttentionIntoWeightProduct) {
  ir::Module m = passtest::loadBundledModel("rgat");
  ir::Module before = m.clone();
  passes::GraphStats stats = amStats(m, 1);
  passes::ReorderStats rs;
  ASSERT_TRUE(passes::reorderLinearOps(m, stats, &rs));
  ASSERT_TRUE(verifies(m));
  EXPECT_EQ(rs.rewrites, 1);
  std::string text = ir::printModule(m);
  EXPECT_TRUE(contains(text, "foreach r in etypes {\n"
                             "    alpha_1_wr[r] = reshape(W[r]) shape "
                             "[in_dim, heads, out_dim/heads]\n"
                             "    alpha_1_wt[r] = transpose(alpha_1_wr[r]) "
                             "perm [1, 0, 2]\n"
                             "    alpha_1_w[r] = linear_t(a_dst[r], "
                             "alpha_1_wt[r])\n  }"))
      << text;
  EXPECT_TRUE(
      contains(text, "  temp alpha_1_wr : etype[in_dim, heads, out_dim/heads]\n"
                     "  temp alpha_1_wt : etype[heads, in_dim, out_dim/heads]\n"
                     "  temp alpha_1_w : etype[heads, in_dim]\n"
                     "  temp z_0 : edge[out_dim]\n"))
      << text;
  EXPECT_TRUE(
      contains(text, "alpha_1[e] = linear_t(x[e.dst], alpha_1_w[e.etype])"))
      << text;
  EXPECT_TRUE(contains(text, "alpha_0[e] = dot(z[e], a_src[e.etype])")) << text;
  EXPECT_FALSE(contains(text, "zd")) << text;
  // Saved: zd_0's 2*K*N per edge and the dot's 2*N, less the new 2*K*H
  // per edge and the product's 2*H*D*K per relation (K = N = 64, H = 1).
  double e = stats.numEdges, r = stats.numEtypes;
  EXPECT_EQ(rs.flopsBefore - rs.flopsAfter,
            (2 * 64 * 64 + 2 * 64 - 2 * 64) * e - 2 * 64 * 64 * r);
  EXPECT_EQ(rs.flopsBefore, passes::countFlops(before, stats).total);
  EXPECT_EQ(rs.flopsAfter, passes::countFlops(m, stats).total);
  EXPECT_LE(outputError(before, m, {}, 3), 1e-10);
}

// With 2 heads the product is [heads, in_dim] and the score stays
// per-head; still exactly one rewrite (a_src's would cost 2*K*H = 256 per
// edge for a 2*H*D = 128 dot).
TEST(LinearReordering, RgatTwoHeads) {
  ir::Module m = passtest::loadBundledModel("rgat");
  ir::Module before = m.clone();
  passes::ReorderStats rs;
  ASSERT_TRUE(passes::reorderLinearOps(m, amStats(m, 2), &rs));
  ASSERT_TRUE(verifies(m));
  EXPECT_EQ(rs.rewrites, 1);
  EXPECT_LT(rs.flopsAfter, rs.flopsBefore);
  EXPECT_TRUE(contains(ir::printModule(m),
                       "alpha_1[e] = linear_t(x[e.dst], alpha_1_w[e.etype])"));
  EXPECT_LE(outputError(before, m, headsHyper(m, 2), 5), 1e-10);
}

// RGAT-PyG: q's score becomes x[e.dst] (W[r] q) and outi disappears. k's
// (on outj, which the message needs) pays only with 2 heads: 2*K*H per edge
// against 2*H*O*H.
TEST(LinearReordering, RgatPygFoldsGlobalAttentionWeights) {
  ir::Module m = passtest::loadBundledModel("rgat_pyg");
  ir::Module before = m.clone();
  passes::ReorderStats rs;
  ASSERT_TRUE(passes::reorderLinearOps(m, amStats(m, 1), &rs));
  ASSERT_TRUE(verifies(m));
  EXPECT_EQ(rs.rewrites, 1);
  std::string text = ir::printModule(m);
  EXPECT_TRUE(contains(text, "alpha_0_w[r] = linear(weight_[r], q)")) << text;
  EXPECT_TRUE(contains(text, "temp alpha_0_w : etype[in_dim, heads]")) << text;
  EXPECT_TRUE(
      contains(text, "alpha_0[e] = linear(x[e.dst], alpha_0_w[e.etype])"))
      << text;
  EXPECT_TRUE(contains(text, "alpha_1[e] = linear(outj[e], k)")) << text;
  EXPECT_FALSE(contains(text, "outi")) << text;
  EXPECT_LE(outputError(before, m, {}, 7), 1e-10);

  ir::Module m2 = before.clone();
  ASSERT_TRUE(passes::reorderLinearOps(m2, amStats(m2, 2), &rs));
  ASSERT_TRUE(verifies(m2));
  EXPECT_EQ(rs.rewrites, 2);
  text = ir::printModule(m2);
  EXPECT_TRUE(
      contains(text, "alpha_1[e] = linear(x[e.src], alpha_1_w[e.etype])"))
      << text;
  EXPECT_TRUE(contains(text, "outj[e] = linear(x[e.src], weight_[e.etype])"))
      << text;
  EXPECT_LE(outputError(before, m2, headsHyper(m2, 2), 9), 1e-10);
}

// A tiny edge count against a huge relation count: the per-relation
// products would cost more than the per-edge work they save.
TEST(LinearReordering, DoesNothingWhenProductsOutweighSavings) {
  for (const char *name : {"rgat", "rgat_pyg"}) {
    ir::Module m = passtest::loadBundledModel(name);
    std::string text = ir::printModule(m);
    passes::GraphStats stats;
    stats.numNodes = 10;
    stats.numEdges = 10;
    stats.numPairs = 10;
    stats.numEtypes = 1000000;
    stats.numNtypes = 1;
    passes::ReorderStats rs;
    EXPECT_FALSE(passes::reorderLinearOps(m, stats, &rs)) << name;
    EXPECT_EQ(rs.rewrites, 0) << name;
    EXPECT_EQ(rs.flopsBefore, rs.flopsAfter) << name;
    EXPECT_EQ(ir::printModule(m), text) << name;
  }
}

// RGCN has no linear operator feeding another; HGT's attention is
// linear(k, W_att[r]) . q with square per-head W_att: moving W_att to q
// costs the same, so nothing changes.
TEST(LinearReordering, LeavesModelsAloneWhereNothingPays) {
  for (const char *name : {"rgcn", "rgcn_pyg", "hgt", "hgt_pyg"}) {
    for (int64_t heads : {1, 2}) {
      ir::Module m = passtest::loadBundledModel(name);
      std::string text = ir::printModule(m);
      EXPECT_FALSE(passes::reorderLinearOps(m, amStats(m, heads))) << name;
      EXPECT_EQ(ir::printModule(m), text) << name;
    }
  }
}

// Patterns that must not match: the weight is sliced by node type (no
// per-relation product exists), the dot's other operand is computed per
// edge (not a weight), and both weights are global (nothing per relation
// to precompute).
TEST(LinearReordering, DoesNotApplyOutsideItsPatterns) {
  const char *modules[] = {R"(
module @ntype_weight {
  input x : node[8]
  param W : ntype[8, 8]
  param a : etype[8]
  temp y : edge[8]
  output s : edge[]
  foreach e in edges {
    y[e] = linear(x[e.src], W[e.src.ntype])
    s[e] = dot(y[e], a[e.etype])
  }
}
)",
                           R"(
module @edge_operand {
  input x : node[8]
  param W : etype[8, 8]
  temp y : edge[8]
  temp b : edge[8]
  output s : edge[]
  foreach e in edges {
    y[e] = linear(x[e.src], W[e.etype])
    b[e] = relu(y[e])
    s[e] = dot(y[e], b[e])
  }
}
)",
                           R"(
module @global_weights {
  input x : node[8]
  param W : global[8, 8]
  param a : global[8]
  temp y : edge[8]
  output s : edge[]
  foreach e in edges {
    y[e] = linear(x[e.src], W)
    s[e] = dot(y[e], a)
  }
}
)"};
  for (const char *text : modules) {
    ir::Module m = passtest::parseVerified(text, "nomatch.ir");
    std::string printed = ir::printModule(m);
    EXPECT_FALSE(passes::reorderLinearOps(m, passes::GraphStats::amShape()))
        << printed;
    EXPECT_EQ(ir::printModule(m), printed);
  }
}

// Without a reshape: dot(linear(x, W[r]), a[r]) -> dot(x, linear_t(a, W)).
TEST(LinearReordering, DotWithoutHeads) {
  ir::Module m = passtest::parseVerified(R"(
module @plain {
  hyper k : int = 4
  hyper n : int = 16
  input x : node[k]
  param W : etype[k, n]
  param a : etype[n]
  temp y : edge[n]
  output s : edge[]
  foreach e in edges {
    y[e] = linear(x[e.src], W[e.etype])
    s[e] = dot(y[e], a[e.etype])
  }
}
)",
                                         "plain.ir");
  ir::Module before = m.clone();
  passes::ReorderStats rs;
  ASSERT_TRUE(passes::reorderLinearOps(m, passes::GraphStats::amShape(), &rs));
  ASSERT_TRUE(verifies(m));
  std::string text = ir::printModule(m);
  EXPECT_TRUE(contains(text, "s_w[r] = linear_t(a[r], W[r])")) << text;
  EXPECT_TRUE(contains(text, "s[e] = dot(x[e.src], s_w[e.etype])")) << text;
  EXPECT_FALSE(contains(text, "y[e]")) << text;
  EXPECT_LE(outputError(before, m, {}, 11), 1e-10);
}

// HGT-style attention with a non-square per-head W_att [H, Dk, Dq],
// Dk < Dq: moving W_att onto q shrinks the dot from 2*H*Dq to 2*H*Dk.
TEST(LinearReordering, MovesAttentionWeightToTheCheaperSide) {
  ir::Module m = passtest::parseVerified(R"(
module @att {
  hyper heads : int = 2
  input k : node[heads, 3]
  input q : node[heads, 8]
  param W_att : etype[heads, 3, 8]
  temp u : edge[heads, 8]
  output s : edge[heads]
  foreach e in edges {
    u[e] = linear(k[e.src], W_att[e.etype])
    s[e] = dot(u[e], q[e.dst])
  }
}
)",
                                         "att.ir");
  ir::Module before = m.clone();
  passes::ReorderStats rs;
  ASSERT_TRUE(passes::reorderLinearOps(m, passes::GraphStats::amShape(), &rs));
  ASSERT_TRUE(verifies(m));
  std::string text = ir::printModule(m);
  EXPECT_TRUE(contains(text, "u_moved[e] = linear_t(q[e.dst], W_att[e.etype])\n"
                             "    s[e] = dot(k[e.src], u_moved[e])"))
      << text;
  EXPECT_TRUE(contains(text, "temp u_moved : edge[heads, 3]")) << text;
  EXPECT_FALSE(contains(text, "u[e]")) << text;
  double e = passes::GraphStats::amShape().numEdges;
  EXPECT_EQ(rs.flopsBefore - rs.flopsAfter, (2 * 2 * 8 - 2 * 2 * 3) * e);
  EXPECT_LE(outputError(before, m, {}, 13), 1e-10);

  // The mirror image (Dk > Dq) does not pay and is left alone.
  ir::Module wide = passtest::parseVerified(R"(
module @att {
  input k : node[1, 8]
  input q : node[1, 3]
  param W_att : etype[1, 8, 3]
  temp u : edge[1, 3]
  output s : edge[1]
  foreach e in edges {
    u[e] = linear(k[e.src], W_att[e.etype])
    s[e] = dot(u[e], q[e.dst])
  }
}
)",
                                            "wide.ir");
  EXPECT_FALSE(passes::reorderLinearOps(wide, passes::GraphStats::amShape()));
}

// A compacted attention (the inference program's form): the product of
// k's pair row, a[p] = linear(k[p.src], W_att[p.etype]), read at the
// edge's pair. With destination products counted once a (destination,
// relation) segment, fewer segments than pairs make moving W_att onto q
// pay even for a square W_att; counted once an edge (the training
// forward's count), it does not.
TEST(LinearReordering, MovesACompactedAttentionWhenSegmentsAreFewerThanPairs) {
  const char *text = R"(
module @att {
  hyper heads : int = 2
  input k : node[heads, 4]
  input q : node[heads, 4]
  param W_att : etype[heads, 4, 4]
  temp a : pair[heads, 4]
  output s : edge[heads]
  foreach p in pairs {
    a[p] = linear(k[p.src], W_att[p.etype])
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      s[e] = dot(a[e.pair], q[e.dst])
    }
  }
}
)";
  passes::GraphStats stats = passes::GraphStats::amShape();
  ir::Module perEdge = passtest::parseVerified(text, "att.ir");
  EXPECT_FALSE(passes::reorderLinearOps(perEdge, stats));
  stats.dstProductsPerSegment = true;
  ir::Module m = passtest::parseVerified(text, "att.ir");
  ir::Module before = m.clone();
  ASSERT_TRUE(passes::reorderLinearOps(m, stats));
  ASSERT_TRUE(verifies(m));
  const std::string out = ir::printModule(m);
  EXPECT_TRUE(contains(out, "a_moved[e] = linear_t(q[e.dst], W_att[e.etype])\n"
                            "      s[e] = dot(k[e.src], a_moved[e])"))
      << out;
  EXPECT_TRUE(contains(out, "temp a_moved : edge[heads, 4]")) << out;
  EXPECT_FALSE(contains(out, "foreach p in pairs")) << out;
  EXPECT_LE(outputError(before, m, {}, 14), 1e-10);
}

// A second run finds nothing left to do.
TEST(LinearReordering, IsIdempotent) {
  for (const char *name : {"rgat", "rgat_pyg"}) {
    ir::Module m = passtest::loadBundledModel(name);
    passes::GraphStats stats = amStats(m, 2);
    ASSERT_TRUE(passes::reorderLinearOps(m, stats)) << name;
    std::string text = ir::printModule(m);
    EXPECT_FALSE(passes::reorderLinearOps(m, stats)) << name;
    EXPECT_EQ(ir::printModule(m), text) << name;
  }
}

// Every bundled model, default hypers and 2 heads: the module verifies and
// the interpreter's outputs agree (fp64) before and after; the FLOP counts
// on the am-shaped graph are printed and drop wherever a rewrite was made.
TEST(LinearReordering, PreservesSemanticsAndReportsFlopsOnAllModels) {
  for (const char *name : kModels) {
    for (int64_t heads : {1, 2}) {
      ir::Module m = passtest::loadBundledModel(name);
      if (heads == 2 && !m.findHyper("heads"))
        continue;
      ir::Module before = m.clone();
      passes::ReorderStats rs;
      bool changed = passes::reorderLinearOps(m, amStats(m, heads), &rs);
      ASSERT_TRUE(verifies(m)) << name;
      std::printf("[ reorder ] %-9s heads=%lld rewrites=%d flops before=%.6g "
                  "after=%.6g (%.1f%%)\n",
                  name, static_cast<long long>(heads), rs.rewrites,
                  rs.flopsBefore, rs.flopsAfter,
                  100.0 * (rs.flopsBefore - rs.flopsAfter) / rs.flopsBefore);
      EXPECT_EQ(changed, rs.rewrites > 0) << name;
      if (changed)
        EXPECT_LT(rs.flopsAfter, rs.flopsBefore) << name;
      else
        EXPECT_EQ(rs.flopsAfter, rs.flopsBefore) << name;
      bool expectChange =
          std::string(name) == "rgat" || std::string(name) == "rgat_pyg";
      EXPECT_EQ(changed, expectChange) << name << " heads=" << heads;
      for (uint64_t seed : {21, 22})
        EXPECT_LE(outputError(before, m, headsHyper(m, heads), seed), 1e-10)
            << name << " heads=" << heads << " seed=" << seed;
    }
  }
}
