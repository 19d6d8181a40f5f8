// The FLOP cost model: exact counts, computed by hand, for small modules
// that use each costing rule, and for the bundled RGCN.
#include "passes/CostModel.h"
#include "PassTestUtil.h"

#include <gtest/gtest.h>

using namespace hector;

namespace {

double flopsOf(const passes::FlopReport &report, const std::string &value) {
  for (const auto &[name, flops] : report.perValue)
    if (name == value)
      return flops;
  ADD_FAILURE() << "no statement writes " << value;
  return -1;
}

passes::GraphStats smallStats() {
  passes::GraphStats s;
  s.numNodes = 5;
  s.numEdges = 10;
  s.numPairs = 7;
  s.numEtypes = 3;
  s.numNtypes = 2;
  return s;
}

const char *kEdgeModule = R"(
module @m {
  hyper k : int = 4
  hyper n : int = 3
  input x : node[k]
  param W : etype[k, n]
  param a : etype[n]
  temp y : edge[n]
  temp s : edge[]
  temp t : edge[]
  temp agg : node[]
  output o : node[]
  foreach e in edges {
    y[e] = linear(x[e.src], W[e.etype])
    s[e] = dot(y[e], a[e.etype])
    t[e] = exp(s[e])
  }
  foreach v in dst_nodes {
    foreach e in v.incoming {
      agg[v] += copy(t[e])
    }
    o[v] = mul(agg[v], 2)
  }
}
)";

} // namespace

// Linear 2*K*N, dot 2*N, exp 1 per edge; the += reduction 1 per edge with
// copy free; mul 1 per node.
TEST(CostModel, CountsEachRuleTimesItsTripCount) {
  ir::Module m = passtest::parseVerified(kEdgeModule, "edge.ir");
  passes::FlopReport r = passes::countFlops(m, smallStats());
  EXPECT_EQ(flopsOf(r, "y"), 2 * 4 * 3 * 10);
  EXPECT_EQ(flopsOf(r, "s"), 2 * 3 * 10);
  EXPECT_EQ(flopsOf(r, "t"), 10);
  EXPECT_EQ(flopsOf(r, "agg"), 10);
  EXPECT_EQ(flopsOf(r, "o"), 5);
  EXPECT_EQ(r.total, 240 + 60 + 10 + 10 + 5);
  ASSERT_EQ(r.perValue.size(), 5u);
  EXPECT_EQ(r.perValue.front().first, "y"); // program order
}

// The stats' hypers replace the defaults: k = 8 doubles the linear.
TEST(CostModel, StatsHypersReplaceDefaults) {
  ir::Module m = passtest::parseVerified(kEdgeModule, "edge.ir");
  passes::GraphStats stats = smallStats();
  stats.hypers["k"] = 8;
  passes::FlopReport r = passes::countFlops(m, stats);
  EXPECT_EQ(flopsOf(r, "y"), 2 * 8 * 3 * 10);
  EXPECT_EQ(r.total, 480 + 60 + 10 + 10 + 5);
}

// Per-head linear 2*H*K*N, linear_t alike, outer = numel of the result,
// reshape and transpose free; trip counts of etypes, ntypes and pairs.
TEST(CostModel, PerHeadLinearOuterAndTypeLoops) {
  ir::Module m = passtest::parseVerified(R"(
module @m {
  hyper heads : int = 2
  hyper d : int = 3
  param Wh : etype[heads, d, d]
  param b : etype[heads, d]
  param M : ntype[5, heads*d]
  param c : ntype[heads*d]
  input z : node[heads*d]
  temp p : etype[heads, d]
  temp o2 : etype[heads, d, d]
  temp o3 : etype[heads, d, d]
  output pf : etype[heads*d]
  temp q : ntype[5]
  output qq : ntype[5]
  temp zz : pair[heads*d]
  output zs : pair[heads*d]
  foreach r in etypes {
    p[r] = linear(b[r], Wh[r])
    o2[r] = outer(p[r], b[r])
    o3[r] = transpose(o2[r]) perm [0, 2, 1]
    pf[r] = reshape(p[r]) shape [heads*d]
  }
  foreach t in ntypes {
    q[t] = linear_t(c[t], M[t])
    qq[t] = relu(q[t])
  }
  foreach u in pairs {
    zz[u] = sigmoid(z[u.src])
    zs[u] = add(zz[u], zz[u])
  }
}
)",
                                         "heads.ir");
  passes::FlopReport r = passes::countFlops(m, smallStats());
  EXPECT_EQ(flopsOf(r, "p"), 2 * 2 * 3 * 3 * 3); // 2*H*K*N, 3 etypes
  EXPECT_EQ(flopsOf(r, "o2"), 2 * 3 * 3 * 3);    // H*K*N per etype
  EXPECT_EQ(flopsOf(r, "o3"), 0);
  EXPECT_EQ(flopsOf(r, "pf"), 0);
  EXPECT_EQ(flopsOf(r, "q"), 2 * 6 * 5 * 2); // 2*K*N, 2 ntypes
  EXPECT_EQ(flopsOf(r, "qq"), 5 * 2);
  EXPECT_EQ(flopsOf(r, "zz"), 6 * 7); // 7 pairs
  EXPECT_EQ(flopsOf(r, "zs"), 6 * 7);
  EXPECT_EQ(r.total, 108 + 54 + 120 + 10 + 42 + 42);
}

// RGCN on a graph of 100 nodes, 1000 edges, in_dim 16, out_dim 8:
//   msg_0 = linear(x[e.src], W[e.etype])  2*16*8 * 1000 = 256000
//   msg   = div(msg_0, rel_in_degree)          8 * 1000 =   8000
//   h_0  += copy(msg)                          8 * 1000 =   8000
//   h_1   = linear(x, W_self)               2*16*8 * 100 =  25600
//   h_2   = add, h = add                   8 * 100 each  =   1600
TEST(CostModel, RgcnOnGivenStats) {
  ir::Module m = passtest::loadBundledModel("rgcn");
  passes::GraphStats stats;
  stats.numNodes = 100;
  stats.numEdges = 1000;
  stats.numPairs = 600;
  stats.numEtypes = 4;
  stats.numNtypes = 2;
  stats.hypers = {{"in_dim", 16}, {"out_dim", 8}};
  passes::FlopReport r = passes::countFlops(m, stats);
  EXPECT_EQ(flopsOf(r, "msg_0"), 256000);
  EXPECT_EQ(flopsOf(r, "msg"), 8000);
  EXPECT_EQ(flopsOf(r, "h_0"), 8000);
  EXPECT_EQ(flopsOf(r, "h_1"), 25600);
  EXPECT_EQ(flopsOf(r, "h_2"), 800);
  EXPECT_EQ(flopsOf(r, "h"), 800);
  EXPECT_EQ(r.total, 299200);
}

// A dim that does not divide evenly is a precondition violation, reported
// by name rather than silently miscounted.
TEST(CostModel, NonIntegralShapeThrows) {
  ir::Module m = passtest::loadBundledModel("rgat");
  passes::GraphStats stats = smallStats();
  stats.hypers["heads"] = 3; // 64 / 3
  EXPECT_THROW(passes::countFlops(m, stats), std::invalid_argument);
}

// GraphStats::dstProductsPerSegment: an edge loop's product of the
// destination row by the relation's weight counts (destination, relation)
// segments; one of the source row still counts edges, and without the
// flag (or without a segment count) so does the destination's.
TEST(CostModel, CountsDestinationProductsOncePerSegmentWhenAsked) {
  const char *text = R"(
module @m {
  hyper k : int = 4
  hyper n : int = 3
  input x : node[k]
  param W : etype[k, n]
  output d : edge[n]
  output s : edge[n]
  foreach e in edges {
    d[e] = linear(x[e.dst], W[e.etype])
    s[e] = linear(x[e.src], W[e.etype])
  }
}
)";
  ir::Module m = passtest::parseVerified(text, "m.ir");
  passes::GraphStats stats = smallStats();
  stats.numDstSegments = 4;
  passes::FlopReport plain = passes::countFlops(m, stats);
  EXPECT_EQ(flopsOf(plain, "d"), 2 * 4 * 3 * 10);
  stats.dstProductsPerSegment = true;
  passes::FlopReport segments = passes::countFlops(m, stats);
  EXPECT_EQ(flopsOf(segments, "d"), 2 * 4 * 3 * 4);
  EXPECT_EQ(flopsOf(segments, "s"), 2 * 4 * 3 * 10);
  stats.numDstSegments = 0;
  EXPECT_EQ(flopsOf(passes::countFlops(m, stats), "d"), 2 * 4 * 3 * 10);
}
