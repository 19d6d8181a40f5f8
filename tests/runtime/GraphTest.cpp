// Graph: argument validation and the derived arrays, on small multigraphs
// whose arrays are counted by hand; the kernel arrays and their validation
// by graphArraysFromTensors (runtime/KernelGraph.h).
#include "runtime/Graph.h"
#include "runtime/Errors.h"
#include "runtime/GraphArrays.h"
#include "runtime/KernelGraph.h"

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
  // Pairs in (etype, src) order: (r0,0) (r0,2) (r1,1) (r1,2).
  EXPECT_EQ(g.numPairs(), 4);
  EXPECT_EQ(values(g.pairSrc()), (std::vector<int64_t>{0, 2, 1, 2}));
  EXPECT_EQ(values(g.pairEtype()), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(values(g.edgePair()), (std::vector<int64_t>{0, 1, 1, 2, 3}));
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

using rt::GraphArray;

/// Array `a` of `arrays`.
const torch::Tensor &array(const std::vector<torch::Tensor> &arrays,
                           GraphArray a) {
  return arrays[static_cast<size_t>(a)];
}

// 6 nodes of types {1, 0, 1, 0, 0, 1} (node 4 isolated), 3 relations
// (relation 1 has no edge):
//   e0: 3->0 r2   e1: 0->1 r0   e2: 2->1 r2   e3: 0->1 r0 (multi-edge of e1)
//   e4: 5->5 r0 (self-loop)     e5: 1->3 r2   e6: 0->3 r2
Graph makeKernelGraph() {
  return Graph(longs({3, 0, 2, 0, 5, 1, 0}), longs({0, 1, 1, 1, 5, 3, 3}),
               longs({2, 0, 2, 0, 0, 2, 2}), longs({1, 0, 1, 0, 0, 1}), 6, 3,
               2);
}

TEST(Graph, KernelArrays) {
  Graph g = makeKernelGraph();
  const std::vector<torch::Tensor> &arrays = g.kernelArrays();
  ASSERT_EQ(arrays.size(), static_cast<size_t>(rt::kNumGraphArrays));
  // Each array: its exact contents; in_degree, out_degree and
  // rel_in_degree are float32, every other one int64.
  std::vector<std::pair<GraphArray, std::vector<int64_t>>> expected = {
      {GraphArray::Src, {3, 0, 2, 0, 5, 1, 0}},
      {GraphArray::Dst, {0, 1, 1, 1, 5, 3, 3}},
      {GraphArray::Etype, {2, 0, 2, 0, 0, 2, 2}},
      {GraphArray::Ntype, {1, 0, 1, 0, 0, 1}},
      {GraphArray::InDegree, {1, 3, 0, 2, 0, 1}},
      {GraphArray::OutDegree, {3, 1, 1, 1, 0, 1}},
      // e1 and e3 enter node 1 with r0, e5 and e6 node 3 with r2.
      {GraphArray::RelInDegree, {1, 2, 1, 2, 1, 2, 2}},
      // r0: e1 e3 e4; r1: none; r2: e0 e2 e5 e6.
      {GraphArray::EtypeSortedEid, {1, 3, 4, 0, 2, 5, 6}},
      {GraphArray::EtypePtr, {0, 3, 3, 7}},
      // Into 0: e0; 1: e1 e2 e3; 3: e5 e6; 5: e4.
      {GraphArray::DstPtr, {0, 1, 4, 4, 6, 6, 7}},
      {GraphArray::DstEid, {0, 1, 2, 3, 5, 6, 4}},
      // Out of 0: e1 e3 e6; 1: e5; 2: e2; 3: e0; 5: e4.
      {GraphArray::SrcPtr, {0, 3, 4, 5, 6, 6, 7}},
      {GraphArray::SrcEid, {1, 3, 6, 5, 2, 0, 4}},
      // Pairs in (etype, src) order: (r0,0) (r0,5) (r2,0) (r2,1) (r2,2)
      // (r2,3).
      {GraphArray::PairSrc, {0, 5, 0, 1, 2, 3}},
      {GraphArray::PairEtype, {0, 0, 2, 2, 2, 2}},
      {GraphArray::PairPtr, {0, 2, 2, 6}},
      {GraphArray::EdgePair, {5, 0, 4, 0, 1, 3, 2}},
      {GraphArray::NtypeSortedNodes, {1, 3, 4, 0, 2, 5}},
      {GraphArray::NtypePtr, {0, 3, 6}},
      {GraphArray::EdgeSrcNtype, {0, 1, 1, 1, 1, 0, 1}},
      {GraphArray::EdgeDstNtype, {1, 0, 0, 0, 1, 0, 0}},
      {GraphArray::PairSrcNtype, {1, 1, 1, 0, 1, 0}},
      {GraphArray::TypeIota, {0, 1, 2, 3}},
      // No node has more than kHeavyRowEdges edges either way.
      {GraphArray::HeavyDstRows, {}},
      {GraphArray::HeavySrcRows, {}},
      // Src, Etype and EdgePair of e0 e1 e2 e3 e5 e6 e4 (DstEid), and
      // Dst, Etype and EdgePair of e1 e3 e6 e5 e2 e0 e4 (SrcEid).
      {GraphArray::DstCsrSrc, {3, 0, 2, 0, 1, 0, 5}},
      {GraphArray::DstCsrEtype, {2, 0, 2, 0, 2, 2, 0}},
      {GraphArray::DstCsrPair, {5, 0, 4, 0, 3, 2, 1}},
      {GraphArray::SrcCsrDst, {1, 1, 3, 3, 1, 0, 5}},
      {GraphArray::SrcCsrEtype, {0, 0, 2, 2, 2, 2, 0}},
      {GraphArray::SrcCsrPair, {0, 0, 2, 3, 4, 5, 1}},
      // No heavy rows: only the leading 0.
      {GraphArray::HeavyDstEdgePtr, {0}},
      {GraphArray::HeavySrcEdgePtr, {0}},
      // (etype, dst) segments: (r0,1) e1 e3, (r0,5) e4, (r2,0) e0,
      // (r2,1) e2, (r2,3) e5 e6; each one chunk.
      {GraphArray::SumChunkPtr, {0, 2, 3, 4, 5, 7}},
      {GraphArray::SumChunkSrc, {0, 0, 5, 3, 2, 1, 0}},
      {GraphArray::SumChunkDst, {1, 5, 0, 1, 3}},
      {GraphArray::SumChunkEid, {1, 4, 0, 2, 5}},
      {GraphArray::SumChunkEtypePtr, {0, 2, 2, 5}},
      // The entries' edges: e1 e3 | e4 | e0 | e2 | e5 e6.
      {GraphArray::SumChunkEdge, {1, 3, 4, 0, 2, 5, 6}},
      // Its inverse: e0 is entry 3, e1 entry 0, ...
      {GraphArray::SumEdgeEntry, {3, 0, 4, 1, 2, 5, 6}},
      // And chunk: e1 e3 in chunk 0, e4 in 1, e0 in 2, e2 in 3, e5 e6 in 4.
      {GraphArray::SumEdgeChunk, {2, 0, 3, 0, 1, 4, 4}},
      // rel_in_degree at the chunks' first edges e1 e4 e0 e2 e5.
      {GraphArray::SumChunkRelInDegree, {2, 1, 1, 1, 2}},
      // The pairs by (src, etype): src 0's p0 (r0) and p2 (r2), then 1's
      // p3, 2's p4, 3's p5, 5's p1; their sources and etypes so.
      {GraphArray::PairSrcOrder, {0, 2, 3, 4, 5, 1}},
      {GraphArray::PairSrcOrderSrc, {0, 0, 1, 2, 3, 5}},
      {GraphArray::PairSrcOrderEtype, {0, 2, 2, 2, 2, 0}},
      // The chunks by (dst, etype): into 0 c2, into 1 c0 (r0) and c3 (r2),
      // into 3 c4, into 5 c1; their destinations and etypes so.
      {GraphArray::SumChunkDstOrder, {2, 0, 3, 4, 1}},
      {GraphArray::SumChunkDstOrderDst, {0, 1, 1, 3, 5}},
      {GraphArray::SumChunkDstOrderEtype, {2, 0, 2, 2, 0}},
  };
  ASSERT_EQ(expected.size(), arrays.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    auto [a, want] = expected[i];
    ASSERT_EQ(static_cast<size_t>(a), i);
    const torch::Tensor &t = array(arrays, a);
    SCOPED_TRACE(rt::graphArrayName(a));
    bool isFloat = a == GraphArray::InDegree || a == GraphArray::OutDegree ||
                   a == GraphArray::RelInDegree ||
                   a == GraphArray::SumChunkRelInDegree;
    EXPECT_EQ(t.scalar_type(), isFloat ? torch::kFloat : torch::kLong);
    EXPECT_EQ(t.dim(), 1);
    EXPECT_TRUE(t.is_contiguous());
    EXPECT_EQ(values(t), want);
  }
  // Cached: a second call returns the same tensors.
  EXPECT_EQ(&g.kernelArrays(), &arrays);
  EXPECT_TRUE(array(g.kernelArrays(), GraphArray::DstEid)
                  .is_same(array(arrays, GraphArray::DstEid)));
  // The pair arrays are the graph's own.
  EXPECT_EQ(values(g.edgePair()), values(array(arrays, GraphArray::EdgePair)));
}

TEST(Graph, KernelArraysByDestination) {
  Graph g = makeKernelGraph();
  const std::vector<torch::Tensor> &arrays =
      g.kernelArrays(runtime::EdgeOrder::ByDst);
  ASSERT_EQ(arrays.size(), static_cast<size_t>(rt::kNumGraphArrays));
  // Sorted by (dst, etype), ties as given: kernel edges k0..k6 are the
  // given e0 e1 e3 e2 e5 e6 e4.
  std::vector<std::pair<GraphArray, std::vector<int64_t>>> expected = {
      {GraphArray::Src, {3, 0, 0, 2, 1, 0, 5}},
      {GraphArray::Dst, {0, 1, 1, 1, 3, 3, 5}},
      {GraphArray::Etype, {2, 0, 0, 2, 2, 2, 0}},
      {GraphArray::RelInDegree, {1, 2, 2, 1, 2, 2, 1}},
      {GraphArray::EdgePair, {5, 0, 0, 4, 3, 2, 1}},
      // r0: k1 k2 k6; r2: k0 k3 k4 k5.
      {GraphArray::EtypeSortedEid, {1, 2, 6, 0, 3, 4, 5}},
      {GraphArray::EtypePtr, {0, 3, 3, 7}},
      // A node's incoming edges are consecutive.
      {GraphArray::DstPtr, {0, 1, 4, 4, 6, 6, 7}},
      {GraphArray::DstEid, {0, 1, 2, 3, 4, 5, 6}},
      {GraphArray::DstCsrSrc, {3, 0, 0, 2, 1, 0, 5}},
      {GraphArray::DstCsrPair, {5, 0, 0, 4, 3, 2, 1}},
      // Out of 0: k1 k2 k5; 1: k4; 2: k3; 3: k0; 5: k6.
      {GraphArray::SrcPtr, {0, 3, 4, 5, 6, 6, 7}},
      {GraphArray::SrcEid, {1, 2, 5, 4, 3, 0, 6}},
      {GraphArray::SrcCsrDst, {1, 1, 3, 3, 1, 0, 5}},
      {GraphArray::EdgeSrcNtype, {0, 1, 1, 1, 0, 1, 1}},
      {GraphArray::EdgeDstNtype, {1, 0, 0, 0, 0, 0, 1}},
  };
  for (auto [a, want] : expected) {
    SCOPED_TRACE(rt::graphArrayName(a));
    EXPECT_EQ(values(array(arrays, a)), want);
  }
  // Node, type and pair arrays do not depend on the edge numbering.
  const std::vector<torch::Tensor> &given = g.kernelArrays();
  for (GraphArray a : {GraphArray::InDegree, GraphArray::PairSrc,
                       GraphArray::PairPtr, GraphArray::NtypeSortedNodes}) {
    SCOPED_TRACE(rt::graphArrayName(a));
    EXPECT_EQ(values(array(arrays, a)), values(array(given, a)));
  }
  // Cached per order; the given numbering is still the graph's own.
  EXPECT_EQ(&g.kernelArrays(runtime::EdgeOrder::ByDst), &arrays);
  EXPECT_NE(&given, &arrays);
  EXPECT_EQ(values(array(given, GraphArray::Src)), values(g.src()));
}

// In the dst numbering dst_eid is 0, 1, 2, ...: it shares type_iota's
// arange, and the kernels' arrays say so; in the given numbering, or once
// copied apart, they do not.
TEST(Graph, DstNumberingMarksItsDstEidAsTheIdentity) {
  Graph g = makeKernelGraph();
  const std::vector<torch::Tensor> &byDst =
      g.kernelArrays(runtime::EdgeOrder::ByDst);
  EXPECT_EQ(values(array(byDst, GraphArray::TypeIota)),
            (std::vector<int64_t>{0, 1, 2, 3})); // max(R, T) + 1 entries
  EXPECT_TRUE(graphArraysFromTensors(byDst, "graph").dst_eid_is_identity);
  EXPECT_FALSE(
      graphArraysFromTensors(g.kernelArrays(), "graph").dst_eid_is_identity);
  std::vector<torch::Tensor> copied = byDst;
  copied[static_cast<int>(GraphArray::DstEid)] =
      array(byDst, GraphArray::DstEid).clone();
  EXPECT_FALSE(graphArraysFromTensors(copied, "graph").dst_eid_is_identity);
  // A dst_eid that is not the identity, aliasing a longer type_iota, is
  // not taken for one either (its data starts elsewhere).
  std::vector<torch::Tensor> shifted = byDst;
  const torch::Tensor iota = torch::arange(16, torch::kLong);
  shifted[static_cast<int>(GraphArray::TypeIota)] = iota.narrow(0, 0, 4);
  shifted[static_cast<int>(GraphArray::DstEid)] = iota.narrow(0, 1, 7);
  EXPECT_FALSE(graphArraysFromTensors(shifted, "graph").dst_eid_is_identity);
}

// Nodes numbered by type (a heterograph flattened one type after another)
// are their own type order: ntype_sorted_nodes is then the start of
// type_iota's arange in either edge numbering, and the kernels' arrays say
// so. Nodes of interleaved types keep a sorted copy of their own.
TEST(Graph, NodesNumberedByTypeMarkTheirTypeOrderAsTheIdentity) {
  // 6 nodes of types 0 0 1 1 1 2; e0: 0->2 r0, e1: 5->0 r1, e2: 3->4 r0.
  Graph byType(longs({0, 5, 3}), longs({2, 0, 4}), longs({0, 1, 0}),
               longs({0, 0, 1, 1, 1, 2}), 6, 2, 3);
  for (runtime::EdgeOrder order :
       {runtime::EdgeOrder::Given, runtime::EdgeOrder::ByDst}) {
    SCOPED_TRACE(order == runtime::EdgeOrder::ByDst ? "by dst" : "given");
    const std::vector<torch::Tensor> &arrays = byType.kernelArrays(order);
    EXPECT_EQ(values(array(arrays, GraphArray::NtypeSortedNodes)),
              (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(values(array(arrays, GraphArray::NtypePtr)),
              (std::vector<int64_t>{0, 2, 5, 6}));
    EXPECT_EQ(values(array(arrays, GraphArray::TypeIota)),
              (std::vector<int64_t>{0, 1, 2, 3})); // max(R, T) + 1 entries
    EXPECT_TRUE(
        graphArraysFromTensors(arrays, "graph").ntype_sorted_nodes_is_identity);
  }
  Graph interleaved = makeKernelGraph(); // types 1 0 1 0 0 1
  const std::vector<torch::Tensor> &arrays = interleaved.kernelArrays();
  EXPECT_EQ(values(array(arrays, GraphArray::NtypeSortedNodes)),
            (std::vector<int64_t>{1, 3, 4, 0, 2, 5}));
  EXPECT_FALSE(
      graphArraysFromTensors(arrays, "graph").ntype_sorted_nodes_is_identity);
}

// In the dst numbering the incoming CSR order is the edge order: the
// dst_csr_* arrays are the per-edge arrays themselves, not copies. In the
// given numbering they are gathers of their own.
TEST(Graph, DstNumberingsCsrArraysAreThePerEdgeArrays) {
  Graph g = makeKernelGraph();
  const std::vector<torch::Tensor> &byDst =
      g.kernelArrays(runtime::EdgeOrder::ByDst);
  const std::vector<torch::Tensor> &given = g.kernelArrays();
  for (auto [csr, perEdge] :
       {std::pair{GraphArray::DstCsrSrc, GraphArray::Src},
        std::pair{GraphArray::DstCsrEtype, GraphArray::Etype},
        std::pair{GraphArray::DstCsrPair, GraphArray::EdgePair}}) {
    SCOPED_TRACE(rt::graphArrayName(csr));
    EXPECT_EQ(array(byDst, csr).data_ptr(), array(byDst, perEdge).data_ptr());
    EXPECT_NE(array(given, csr).data_ptr(), array(given, perEdge).data_ptr());
    // Either way, position c holds the attribute of edge dst_eid[c].
    for (const std::vector<torch::Tensor> *arrays : {&byDst, &given})
      EXPECT_EQ(
          values(array(*arrays, csr)),
          values(array(*arrays, perEdge)
                     .index_select(0, array(*arrays, GraphArray::DstEid))));
  }
}

TEST(Graph, KernelArraysOfEmptyGraph) {
  Graph g(longs({}), longs({}), longs({}), longs({}), 0, 0, 0);
  const std::vector<torch::Tensor> &arrays = g.kernelArrays();
  ASSERT_EQ(arrays.size(), static_cast<size_t>(rt::kNumGraphArrays));
  for (GraphArray a :
       {GraphArray::EtypePtr, GraphArray::DstPtr, GraphArray::SrcPtr,
        GraphArray::PairPtr, GraphArray::NtypePtr, GraphArray::TypeIota})
    EXPECT_EQ(values(array(arrays, a)), (std::vector<int64_t>{0}))
        << rt::graphArrayName(a);
  rt::GraphArrays ga = graphArraysFromTensors(arrays, "graph");
  EXPECT_EQ(ga.num_edges, 0);
  EXPECT_EQ(ga.num_etypes, 0);
}

TEST(GraphArrayNames, AreTheFieldNames) {
  EXPECT_STREQ(rt::graphArrayName(GraphArray::Src), "src");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::RelInDegree), "rel_in_degree");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::DstPtr), "dst_ptr");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::NtypeSortedNodes),
               "ntype_sorted_nodes");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::TypeIota), "type_iota");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::HeavyDstRows), "heavy_dst_rows");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::HeavySrcRows), "heavy_src_rows");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::HeavyDstEdgePtr),
               "heavy_dst_edge_ptr");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::HeavySrcEdgePtr),
               "heavy_src_edge_ptr");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::SumChunkPtr), "sum_chunk_ptr");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::SumChunkSrc), "sum_chunk_src");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::SumChunkDst), "sum_chunk_dst");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::SumChunkEid), "sum_chunk_eid");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::SumChunkEtypePtr),
               "sum_chunk_etype_ptr");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::SumChunkEdge), "sum_chunk_edge");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::SumEdgeEntry), "sum_edge_entry");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::SumEdgeChunk), "sum_edge_chunk");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::SumChunkRelInDegree),
               "sum_chunk_rel_in_degree");
  EXPECT_STREQ(rt::graphArrayName(GraphArray::Count), "?");
  // constexpr: usable where the generated code needs a compile-time name.
  static_assert(rt::graphArrayName(GraphArray::PairPtr)[0] == 'p');
}

TEST(GraphArraysFromTensors, PointsAtTheKernelArrays) {
  Graph g = makeKernelGraph();
  const std::vector<torch::Tensor> &arrays = g.kernelArrays();
  rt::GraphArrays ga = graphArraysFromTensors(arrays, "graph");
  EXPECT_EQ(ga.num_nodes, 6);
  EXPECT_EQ(ga.num_edges, 7);
  EXPECT_EQ(ga.num_pairs, 6);
  EXPECT_EQ(ga.num_etypes, 3);
  EXPECT_EQ(ga.num_ntypes, 2);
  EXPECT_EQ(ga.num_sum_chunks, 5);
  auto ptr = [&](GraphArray a) { return array(arrays, a).data_ptr(); };
  EXPECT_EQ(ga.src, ptr(GraphArray::Src));
  EXPECT_EQ(ga.dst, ptr(GraphArray::Dst));
  EXPECT_EQ(ga.etype, ptr(GraphArray::Etype));
  EXPECT_EQ(ga.ntype, ptr(GraphArray::Ntype));
  EXPECT_EQ(ga.in_degree, ptr(GraphArray::InDegree));
  EXPECT_EQ(ga.out_degree, ptr(GraphArray::OutDegree));
  EXPECT_EQ(ga.rel_in_degree, ptr(GraphArray::RelInDegree));
  EXPECT_EQ(ga.etype_sorted_eid, ptr(GraphArray::EtypeSortedEid));
  EXPECT_EQ(ga.etype_ptr, ptr(GraphArray::EtypePtr));
  EXPECT_EQ(ga.dst_ptr, ptr(GraphArray::DstPtr));
  EXPECT_EQ(ga.dst_eid, ptr(GraphArray::DstEid));
  EXPECT_EQ(ga.src_ptr, ptr(GraphArray::SrcPtr));
  EXPECT_EQ(ga.src_eid, ptr(GraphArray::SrcEid));
  EXPECT_EQ(ga.pair_src, ptr(GraphArray::PairSrc));
  EXPECT_EQ(ga.pair_etype, ptr(GraphArray::PairEtype));
  EXPECT_EQ(ga.pair_ptr, ptr(GraphArray::PairPtr));
  EXPECT_EQ(ga.edge_pair, ptr(GraphArray::EdgePair));
  EXPECT_EQ(ga.ntype_sorted_nodes, ptr(GraphArray::NtypeSortedNodes));
  EXPECT_EQ(ga.ntype_ptr, ptr(GraphArray::NtypePtr));
  EXPECT_EQ(ga.edge_src_ntype, ptr(GraphArray::EdgeSrcNtype));
  EXPECT_EQ(ga.edge_dst_ntype, ptr(GraphArray::EdgeDstNtype));
  EXPECT_EQ(ga.pair_src_ntype, ptr(GraphArray::PairSrcNtype));
  EXPECT_EQ(ga.type_iota, ptr(GraphArray::TypeIota));
  EXPECT_EQ(ga.heavy_dst_rows, ptr(GraphArray::HeavyDstRows));
  EXPECT_EQ(ga.heavy_src_rows, ptr(GraphArray::HeavySrcRows));
  EXPECT_EQ(ga.heavy_dst_edge_ptr, ptr(GraphArray::HeavyDstEdgePtr));
  EXPECT_EQ(ga.heavy_src_edge_ptr, ptr(GraphArray::HeavySrcEdgePtr));
  EXPECT_EQ(ga.sum_chunk_ptr, ptr(GraphArray::SumChunkPtr));
  EXPECT_EQ(ga.sum_chunk_src, ptr(GraphArray::SumChunkSrc));
  EXPECT_EQ(ga.sum_chunk_dst, ptr(GraphArray::SumChunkDst));
  EXPECT_EQ(ga.sum_chunk_eid, ptr(GraphArray::SumChunkEid));
  EXPECT_EQ(ga.sum_chunk_etype_ptr, ptr(GraphArray::SumChunkEtypePtr));
  EXPECT_EQ(ga.sum_chunk_edge, ptr(GraphArray::SumChunkEdge));
  EXPECT_EQ(ga.sum_edge_entry, ptr(GraphArray::SumEdgeEntry));
  EXPECT_EQ(ga.sum_edge_chunk, ptr(GraphArray::SumEdgeChunk));
  EXPECT_EQ(ga.sum_chunk_rel_in_degree, ptr(GraphArray::SumChunkRelInDegree));
  EXPECT_EQ(ga.num_heavy_dst, 0); // no node has more than 128 edges
  EXPECT_EQ(ga.num_heavy_src, 0);
  EXPECT_EQ(ga.heavy_row_edges, rt::kHeavyRowEdges);
  // Read through the struct as a kernel would.
  EXPECT_EQ(ga.dst_eid[ga.dst_ptr[1] + 1], 2); // second edge into node 1
  EXPECT_EQ(ga.pair_src[ga.pair_ptr[2]], 0);   // first pair of r2
  EXPECT_EQ(ga.in_degree[1], 3.0f);
}

/// Runs `make`, which must throw `Error` with a message containing
/// `needle`.
template <typename Error, typename Fn>
void expectError(Fn make, const std::string &needle) {
  try {
    make();
    ADD_FAILURE() << "no error; expected one containing: " << needle;
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << e.what();
  }
}

TEST(GraphArraysFromTensors, RejectsBadArrays) {
  Graph g = makeKernelGraph();
  const std::vector<torch::Tensor> &good = g.kernelArrays();
  auto with = [&](GraphArray a, torch::Tensor t) {
    std::vector<torch::Tensor> arrays = good;
    arrays[static_cast<size_t>(a)] = std::move(t);
    return arrays;
  };
  auto check = [](std::vector<torch::Tensor> arrays) {
    return [arrays] { graphArraysFromTensors(arrays, "graph"); };
  };

  std::vector<torch::Tensor> tooFew(good.begin(), good.end() - 1);
  expectError<ArgumentValueError>(
      check(tooFew), "graph: expected " + std::to_string(rt::kNumGraphArrays) +
                         " graph arrays (Graph.kernel_arrays()), got " +
                         std::to_string(rt::kNumGraphArrays - 1));
  expectError<ArgumentTypeError>(
      check(with(GraphArray::InDegree,
                 array(good, GraphArray::InDegree).to(torch::kLong))),
      "graph: array 'in_degree': expected dtype torch.float32, got "
      "torch.int64");
  expectError<ArgumentTypeError>(
      check(with(GraphArray::DstEid,
                 array(good, GraphArray::DstEid).to(torch::kInt))),
      "graph: array 'dst_eid': expected dtype torch.int64, got torch.int32");
  expectError<ArgumentTypeError>(check(with(GraphArray::Etype, {})),
                                 "graph: array 'etype': expected a tensor");
  expectError<ArgumentValueError>(
      check(with(GraphArray::DstPtr, longs({0, 1, 4, 4, 6}))),
      "graph: array 'dst_ptr' has 5 entries, expected 7 (num_nodes + 1)");
  expectError<ArgumentValueError>(
      check(with(GraphArray::HeavyDstRows, longs({0, 1, 2, 3, 4, 5, 0}))),
      "graph: array 'heavy_dst_rows' has 7 entries, expected at most "
      "num_nodes (6)");
  // One fewer pair pointer than relations: pair_ptr disagrees with
  // etype_ptr, which sets R.
  expectError<ArgumentValueError>(
      check(with(GraphArray::PairPtr, longs({0, 2, 6}))),
      "graph: array 'pair_ptr' has 3 entries, expected 4 (num_etypes + 1)");
  expectError<ArgumentValueError>(
      check(with(GraphArray::EtypePtr, longs({}))),
      "graph: array 'etype_ptr' has 0 entries, expected at least 1");
  expectError<ArgumentValueError>(
      check(with(GraphArray::SrcEid,
                 array(good, GraphArray::SrcEid).reshape({7, 1}))),
      "graph: array 'src_eid': expected a 1-d tensor, got shape [7, 1]");
  expectError<ArgumentValueError>(
      check(with(GraphArray::Src,
                 longs({3, 9, 0, 9, 2, 9, 0, 9, 5, 9, 1, 9, 0, 9})
                     .slice(0, 0, 14, 2))),
      "graph: array 'src': expected a contiguous tensor");
}

} // namespace
} // namespace hector::runtime
