// Graph: argument validation and the derived arrays, on a small multigraph
// whose arrays are counted by hand.
#include "runtime/Graph.h"
#include "runtime/Errors.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

namespace hector::runtime {
namespace {

torch::Tensor longs(std::vector<int64_t> v) {
  return torch::tensor(v, torch::kLong);
}

std::vector<int64_t> values(const torch::Tensor &t) {
  auto c = t.to(torch::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(),
                              c.data_ptr<int64_t>() + c.numel());
}

// 4 nodes (node 3 isolated), 3 relations (relation 2 has no edge):
//   e0: 0->1 r0   e1: 2->1 r0   e2: 2->1 r0 (multi-edge)
//   e3: 1->2 r1   e4: 2->2 r1 (self-loop)
Graph makeGraph() {
  return Graph(longs({0, 2, 2, 1, 2}), longs({1, 1, 1, 2, 2}),
               longs({0, 0, 0, 1, 1}), longs({0, 1, 0, 1}), 4, 3, 2);
}

TEST(Graph, Sizes) {
  Graph g = makeGraph();
  EXPECT_EQ(g.numNodes(), 4);
  EXPECT_EQ(g.numEdges(), 5);
  EXPECT_EQ(g.numEtypes(), 3);
  EXPECT_EQ(g.numNtypes(), 2);
  EXPECT_EQ(g.src().scalar_type(), torch::kLong);
}

TEST(Graph, Degrees) {
  Graph g = makeGraph();
  EXPECT_EQ(values(g.inDegree()), (std::vector<int64_t>{0, 3, 2, 0}));
  EXPECT_EQ(values(g.outDegree()), (std::vector<int64_t>{1, 1, 3, 0}));
  // e0, e1, e2 enter node 1 with r0; e3, e4 enter node 2 with r1.
  EXPECT_EQ(values(g.relInDegree()), (std::vector<int64_t>{3, 3, 3, 2, 2}));
}

TEST(Graph, UniquePairs) {
  Graph g = makeGraph();
  // Pairs in (src, etype) order: (0,r0) (1,r1) (2,r0) (2,r1).
  EXPECT_EQ(g.numPairs(), 4);
  EXPECT_EQ(values(g.pairSrc()), (std::vector<int64_t>{0, 1, 2, 2}));
  EXPECT_EQ(values(g.pairEtype()), (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(values(g.edgePair()), (std::vector<int64_t>{0, 2, 2, 1, 3}));
}

TEST(Graph, EmptyGraph) {
  Graph g(longs({}), longs({}), longs({}), longs({}), 0, 0, 0);
  EXPECT_EQ(g.numEdges(), 0);
  EXPECT_EQ(g.numPairs(), 0);
  EXPECT_EQ(g.inDegree().numel(), 0);
  EXPECT_EQ(g.relInDegree().numel(), 0);
}

TEST(Graph, IntegerDtypesAreConverted) {
  auto i32 = [](std::vector<int64_t> v) { return longs(v).to(torch::kInt); };
  Graph g(i32({0}), i32({1}), i32({0}), i32({0, 0}), 2, 1, 1);
  EXPECT_EQ(g.dst().scalar_type(), torch::kLong);
  EXPECT_EQ(values(g.inDegree()), (std::vector<int64_t>{0, 1}));
}

TEST(Graph, RejectsBadArguments) {
  auto bad = [](auto make, const char *needle, bool typeError) {
    try {
      make();
      ADD_FAILURE() << "no error for " << needle;
    } catch (const ArgumentTypeError &e) {
      EXPECT_TRUE(typeError) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << e.what();
    } catch (const ArgumentValueError &e) {
      EXPECT_FALSE(typeError) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << e.what();
    }
  };
  bad(
      [] {
        Graph(longs({0}), longs({5}), longs({0}), longs({0, 0}), 2, 1, 1);
      },
      "dst", false);
  bad(
      [] {
        Graph(longs({-1}), longs({0}), longs({0}), longs({0, 0}), 2, 1, 1);
      },
      "src", false);
  bad(
      [] {
        Graph(longs({0}), longs({1}), longs({1}), longs({0, 0}), 2, 1, 1);
      },
      "etype", false);
  bad(
      [] {
        Graph(longs({0}), longs({1}), longs({0}), longs({0, 2}), 2, 1, 2);
      },
      "ntype", false);
  bad(
      [] {
        Graph(longs({0}), longs({1}), longs({0, 0}), longs({0, 0}), 2, 1, 1);
      },
      "etype", false);
  bad([] { Graph(longs({0}), longs({1}), longs({0}), longs({0}), 2, 1, 1); },
      "ntype", false);
  bad(
      [] {
        Graph(longs({0}), longs({1}).to(torch::kFloat), longs({0}),
              longs({0, 0}), 2, 1, 1);
      },
      "dst", true);
}

} // namespace
} // namespace hector::runtime
