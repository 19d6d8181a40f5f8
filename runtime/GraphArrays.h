// The graph as the generated kernels (CUDA and C++) read it: a plain struct
// of raw pointers and sizes, and the order of the tensors that back it.
//
// No torch here: CUDA kernels compiled without torch include this header.
// The arrays are produced by runtime::Graph::kernelArrays() (in GraphArray
// order) and turned into a GraphArrays, after validation, by
// runtime::graphArraysFromTensors() (runtime/KernelGraph.h). "Edge e"
// below is edge e of the numbering the arrays were built in (Graph.h
// EdgeOrder: as given, or sorted by destination); one call's arrays all
// use one numbering.
//
// Sizes: N nodes, E edges, P unique (src, etype) pairs, R edge types, T node
// types. All pointers point to memory on one device; the struct itself is
// passed by value to kernels.
#pragma once

#include <cstdint>
#include <type_traits>

namespace hector::rt {

/// A node with more edges than this in one direction is heavy: the GPU
/// traversal kernels give it a block of threads instead of a warp
/// (templates/traversal/Traversal.h).
inline constexpr int64_t kHeavyRowEdges = 128;

/// The most edges of one (destination, relation) segment a summed-rows
/// GEMM row sums (GraphArrays::sum_chunk_ptr): longer segments are cut
/// into chunks that add into the same output row, so that a hub's segment
/// does not keep one block of the GEMM busy. 64: with the summed kernel's
/// cp.async ring, bench_summed_rows ran 48 to 96 about alike and 1% to 3%
/// faster than 32 on am, mag and wikikg2, weighted rows too (H100,
/// docs/perf-notes.md section 88; 16 to 32 were best with the older
/// staging of section 55).
inline constexpr int64_t kSumChunkEdges = 64;

/// The graph as the generated kernels see it: raw pointers (all on one
/// device) plus sizes.
struct GraphArrays {
  int64_t num_nodes = 0, num_edges = 0, num_pairs = 0, num_etypes = 0,
          num_ntypes = 0;
  /// C: the chunks of the (destination, relation) segments (sum_chunk_*).
  int64_t num_sum_chunks = 0;
  const int64_t *src = nullptr, *dst = nullptr, *etype = nullptr; // [E] COO
  const int64_t *ntype = nullptr;                                 // [N]
  const float *in_degree = nullptr, *out_degree = nullptr;        // [N] float32
  const float *rel_in_degree = nullptr;                           // [E] float32
  /// [C] float32: rel_in_degree at each summed-rows chunk's first edge
  /// (sum_chunk_eid), the divisor of its segment's mean read with one load
  /// a chunk instead of two dependent ones (docs/perf-notes.md section 89).
  const float *sum_chunk_rel_in_degree = nullptr;
  /// [E] edge ids stably sorted by etype.
  const int64_t *etype_sorted_eid = nullptr;
  /// [R+1] segment pointers into etype_sorted_eid.
  const int64_t *etype_ptr = nullptr;
  /// [N+1] CSR by dst: the edges into node v are
  /// dst_eid[dst_ptr[v] .. dst_ptr[v+1]).
  const int64_t *dst_ptr = nullptr;
  /// [E] edge ids grouped by dst, ascending eid within a node.
  const int64_t *dst_eid = nullptr;
  /// dst_eid[k] == k: the edges are numbered in destination order
  /// (Graph::kernelArrays(EdgeOrder::ByDst), whose dst_eid and type_iota
  /// start one arange). An incoming edge loop then takes its edge id from
  /// its CSR position instead of loading it: one dependent load less in
  /// each edge's chain of loads (k -> edge id -> a value at the edge).
  bool dst_eid_is_identity = false;
  /// ntype_sorted_nodes[k] == k: the nodes are numbered by type, as a
  /// heterograph flattened one type after another is (Graph::kernelArrays
  /// then makes ntype_sorted_nodes the start of type_iota's arange). A
  /// GEMM over the nodes by type then reads and writes rows in place
  /// (no rowIds), which the dense-rows kernel takes.
  bool ntype_sorted_nodes_is_identity = false;
  /// Named padding, zero: GraphArrays has no unnamed padding bytes, so that
  /// its bytes are its value (a launch graph's key holds them,
  /// templates/LaunchGraphCache.h).
  bool padding_after_identity_flags[6] = {};
  /// [N+1] CSC by src: the edges out of node v are
  /// src_eid[src_ptr[v] .. src_ptr[v+1]).
  const int64_t *src_ptr = nullptr;
  /// [E] edge ids grouped by src, ascending eid within a node.
  const int64_t *src_eid = nullptr;
  /// [P] unique (src, etype) pairs, numbered in ascending (etype, src) order.
  const int64_t *pair_src = nullptr, *pair_etype = nullptr;
  /// [R+1] pairs of etype r are [pair_ptr[r], pair_ptr[r+1]).
  const int64_t *pair_ptr = nullptr;
  /// [P] the pair ids in ascending (src, etype) order, and each one's src
  /// and etype in that order: a GEMM over the pairs whose kernel needs no
  /// slice's rows together (the 8-lane dot kernel of the attention scores)
  /// visits them so, reading each source's row from DRAM once instead of
  /// once per relation, and every index it needs in sequence
  /// (templates/gemm/SegmentGemm.h gatherOrderRowIds).
  const int64_t *pair_src_order = nullptr, *pair_src_order_src = nullptr,
                *pair_src_order_etype = nullptr;
  /// [E] pair index of edge e.
  const int64_t *edge_pair = nullptr;
  /// [N] node ids stably sorted by ntype.
  const int64_t *ntype_sorted_nodes = nullptr;
  /// [T+1] segment pointers into ntype_sorted_nodes.
  const int64_t *ntype_ptr = nullptr;
  /// [E] ntype[src[e]] and ntype[dst[e]].
  const int64_t *edge_src_ntype = nullptr, *edge_dst_ntype = nullptr;
  /// [P] ntype[pair_src[p]].
  const int64_t *pair_src_ntype = nullptr;
  /// [max(R,T)+1]: 0, 1, 2, ... (the segment pointers of one-row segments).
  const int64_t *type_iota = nullptr;
  /// The nodes with more than heavy_row_edges incoming (dst) or outgoing
  /// (src) edges, largest degree first (ties by ascending id: the split
  /// heavy launch cuts a prefix of them into pieces, HubSplit.h);
  /// num_heavy_dst / num_heavy_src of them.
  const int64_t *heavy_dst_rows = nullptr, *heavy_src_rows = nullptr;
  int64_t num_heavy_dst = 0, num_heavy_src = 0;
  /// [num_heavy_dst + 1] and [num_heavy_src + 1]: where each heavy row's
  /// edges start when the heavy rows' edges are laid end to end
  /// (heavy_dst_edge_ptr[k + 1] - heavy_dst_edge_ptr[k] is the degree of
  /// heavy_dst_rows[k]): the split heavy launch shares out the heavy rows'
  /// edges with them (templates/traversal/HubSplit.h hubWork).
  const int64_t *heavy_dst_edge_ptr = nullptr, *heavy_src_edge_ptr = nullptr;
  /// [E] each CSR position's edge attributes, in dst_eid order (dst_csr_*:
  /// src[dst_eid[k]], ...) and in src_eid order (src_csr_*: dst[src_eid[k]],
  /// ...). An edge loop over a node's incoming or outgoing edges reads its
  /// edges' other end, relation and pair at its CSR position k, one load
  /// instead of two dependent ones (k -> edge id -> attribute): a hub's
  /// edge loop is a chain of such loads (docs/perf-notes.md section 10).
  /// In the dst numbering dst_eid is the identity and dst_csr_* point at
  /// the per-edge arrays themselves (Graph::kernelArrays shares them).
  const int64_t *dst_csr_src = nullptr, *dst_csr_etype = nullptr,
                *dst_csr_pair = nullptr;
  const int64_t *src_csr_dst = nullptr, *src_csr_etype = nullptr,
                *src_csr_pair = nullptr;
  /// The (destination, relation) segments cut into chunks of at most
  /// kSumChunkEdges edges, in ascending (etype, dst) order (the rows of a
  /// summed-rows GEMM, templates/gemm/SegmentGemm.h sumPtr): chunk c's
  /// edges' sources are sum_chunk_src[sum_chunk_ptr[c] ..
  /// sum_chunk_ptr[c+1]) ([C+1] and [E]); its destination sum_chunk_dst[c],
  /// its first edge sum_chunk_eid[c] ([C]: where a per-edge value that is
  /// the same on the whole segment, as rel_in_degree, is read); the chunks
  /// of etype r are [sum_chunk_etype_ptr[r], sum_chunk_etype_ptr[r+1])
  /// ([R+1]). Entry j of the chunks (sum_chunk_src's j) is edge
  /// sum_chunk_edge[j] ([E]: where a weighted sum reads the weight of its
  /// entry, as RGAT's alpha[e]), and edge e is entry sum_edge_entry[e]
  /// ([E], the inverse: where a kernel stores a per-edge value in the
  /// entries' order, intra::RowScheme::EntryRows); its chunk is
  /// sum_edge_chunk[e] ([E]: where it reads a value computed once a chunk,
  /// intra::RowScheme::ChunkRows).
  const int64_t *sum_chunk_ptr = nullptr, *sum_chunk_src = nullptr,
                *sum_chunk_dst = nullptr, *sum_chunk_eid = nullptr,
                *sum_chunk_etype_ptr = nullptr, *sum_chunk_edge = nullptr,
                *sum_edge_entry = nullptr, *sum_edge_chunk = nullptr;
  /// [C] the chunk ids in ascending (dst, etype) order, and each one's dst
  /// and etype in that order: a GEMM once a chunk that gathers the
  /// destination's row visits them so where its kernel allows (as
  /// pair_src_order).
  const int64_t *sum_chunk_dst_order = nullptr,
                *sum_chunk_dst_order_dst = nullptr,
                *sum_chunk_dst_order_etype = nullptr;
  int64_t heavy_row_edges = kHeavyRowEdges;
};

static_assert(std::has_unique_object_representations_v<GraphArrays>,
              "GraphArrays must have no unnamed padding: a launch graph's key "
              "is its bytes");

/// The order of the tensors of Graph::kernelArrays() (and of the Tensor[]
/// the generated torch ops take). Count is the number of arrays.
enum class GraphArray : int {
  Src,
  Dst,
  Etype,
  Ntype,
  InDegree,
  OutDegree,
  RelInDegree,
  EtypeSortedEid,
  EtypePtr,
  DstPtr,
  DstEid,
  SrcPtr,
  SrcEid,
  PairSrc,
  PairEtype,
  PairPtr,
  EdgePair,
  NtypeSortedNodes,
  NtypePtr,
  EdgeSrcNtype,
  EdgeDstNtype,
  PairSrcNtype,
  TypeIota,
  HeavyDstRows,
  HeavySrcRows,
  DstCsrSrc,
  DstCsrEtype,
  DstCsrPair,
  SrcCsrDst,
  SrcCsrEtype,
  SrcCsrPair,
  HeavyDstEdgePtr,
  HeavySrcEdgePtr,
  SumChunkPtr,
  SumChunkSrc,
  SumChunkDst,
  SumChunkEid,
  SumChunkEtypePtr,
  SumChunkEdge,
  SumEdgeEntry,
  SumEdgeChunk,
  SumChunkRelInDegree,
  PairSrcOrder,
  PairSrcOrderSrc,
  PairSrcOrderEtype,
  SumChunkDstOrder,
  SumChunkDstOrderDst,
  SumChunkDstOrderEtype,
  Count
};

/// The number of arrays, GraphArray::Count as an int.
inline constexpr int kNumGraphArrays = static_cast<int>(GraphArray::Count);

/// The name of array `a`: the GraphArrays field it fills ("src", "dst_ptr",
/// ...); "?" for Count or an out-of-range value.
constexpr const char *graphArrayName(GraphArray a) {
  switch (a) {
  case GraphArray::Src:
    return "src";
  case GraphArray::Dst:
    return "dst";
  case GraphArray::Etype:
    return "etype";
  case GraphArray::Ntype:
    return "ntype";
  case GraphArray::InDegree:
    return "in_degree";
  case GraphArray::OutDegree:
    return "out_degree";
  case GraphArray::RelInDegree:
    return "rel_in_degree";
  case GraphArray::EtypeSortedEid:
    return "etype_sorted_eid";
  case GraphArray::EtypePtr:
    return "etype_ptr";
  case GraphArray::DstPtr:
    return "dst_ptr";
  case GraphArray::DstEid:
    return "dst_eid";
  case GraphArray::SrcPtr:
    return "src_ptr";
  case GraphArray::SrcEid:
    return "src_eid";
  case GraphArray::PairSrc:
    return "pair_src";
  case GraphArray::PairEtype:
    return "pair_etype";
  case GraphArray::PairPtr:
    return "pair_ptr";
  case GraphArray::EdgePair:
    return "edge_pair";
  case GraphArray::NtypeSortedNodes:
    return "ntype_sorted_nodes";
  case GraphArray::NtypePtr:
    return "ntype_ptr";
  case GraphArray::EdgeSrcNtype:
    return "edge_src_ntype";
  case GraphArray::EdgeDstNtype:
    return "edge_dst_ntype";
  case GraphArray::PairSrcNtype:
    return "pair_src_ntype";
  case GraphArray::TypeIota:
    return "type_iota";
  case GraphArray::HeavyDstRows:
    return "heavy_dst_rows";
  case GraphArray::HeavySrcRows:
    return "heavy_src_rows";
  case GraphArray::DstCsrSrc:
    return "dst_csr_src";
  case GraphArray::DstCsrEtype:
    return "dst_csr_etype";
  case GraphArray::DstCsrPair:
    return "dst_csr_pair";
  case GraphArray::SrcCsrDst:
    return "src_csr_dst";
  case GraphArray::SrcCsrEtype:
    return "src_csr_etype";
  case GraphArray::SrcCsrPair:
    return "src_csr_pair";
  case GraphArray::HeavyDstEdgePtr:
    return "heavy_dst_edge_ptr";
  case GraphArray::HeavySrcEdgePtr:
    return "heavy_src_edge_ptr";
  case GraphArray::SumChunkPtr:
    return "sum_chunk_ptr";
  case GraphArray::SumChunkSrc:
    return "sum_chunk_src";
  case GraphArray::SumChunkDst:
    return "sum_chunk_dst";
  case GraphArray::SumChunkEid:
    return "sum_chunk_eid";
  case GraphArray::SumChunkEtypePtr:
    return "sum_chunk_etype_ptr";
  case GraphArray::SumChunkEdge:
    return "sum_chunk_edge";
  case GraphArray::SumEdgeEntry:
    return "sum_edge_entry";
  case GraphArray::SumEdgeChunk:
    return "sum_edge_chunk";
  case GraphArray::SumChunkRelInDegree:
    return "sum_chunk_rel_in_degree";
  case GraphArray::PairSrcOrder:
    return "pair_src_order";
  case GraphArray::PairSrcOrderSrc:
    return "pair_src_order_src";
  case GraphArray::PairSrcOrderEtype:
    return "pair_src_order_etype";
  case GraphArray::SumChunkDstOrder:
    return "sum_chunk_dst_order";
  case GraphArray::SumChunkDstOrderDst:
    return "sum_chunk_dst_order_dst";
  case GraphArray::SumChunkDstOrderEtype:
    return "sum_chunk_dst_order_etype";
  case GraphArray::Count:
    break;
  }
  return "?";
}

/// The graph values of the IR (in_degree, out_degree, rel_in_degree) in
/// the scalar type of a generated kernel: the float32 arrays of
/// GraphArrays for float kernels, float64 copies for double kernels. Also
/// rel_in_degree once a summed-rows chunk (GraphArrays::
/// sum_chunk_rel_in_degree), the divisor a summed RGCN GEMM reads.
template <typename T> struct GraphValues {
  const T *in_degree = nullptr;               ///< [N]
  const T *out_degree = nullptr;              ///< [N]
  const T *rel_in_degree = nullptr;           ///< [E]
  const T *sum_chunk_rel_in_degree = nullptr; ///< [C]
};

} // namespace hector::rt
