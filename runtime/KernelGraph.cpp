#include "runtime/KernelGraph.h"

#include "runtime/Errors.h"
#include "runtime/TensorText.h"
#include "templates/traversal/HostSwitches.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <string>

namespace hector::runtime {
namespace {

using rt::GraphArray;

bool isFloatArray(GraphArray a) {
  return a == GraphArray::InDegree || a == GraphArray::OutDegree ||
         a == GraphArray::RelInDegree || a == GraphArray::SumChunkRelInDegree;
}

/// "<argName>: array '<name>'", the start of every message about one array.
std::string arrayText(const std::string &argName, GraphArray a) {
  return argName + ": array '" + rt::graphArrayName(a) + "'";
}

/// Whether `ids` is 0, 1, 2, ... as far as the tensors tell without
/// reading them: it starts where type_iota (an arange by definition)
/// starts, in the same storage, which holds both (Graph::kernelArrays makes
/// dst_eid so in the dst numbering, and ntype_sorted_nodes when the nodes
/// are numbered by type).
bool startsTheArange(const at::Tensor &ids, const at::Tensor &typeIota) {
  return ids.numel() > 0 && ids.data_ptr() == typeIota.data_ptr() &&
         ids.storage().is_alias_of(typeIota.storage());
}

/// Whether dst_eid is the identity (startsTheArange).
/// HECTOR_DST_EID_IDENTITY=0 loads the ids anyway (A/B runs on one build;
/// read once per process).
bool dstEidIsIdentity(const at::Tensor &dstEid, const at::Tensor &typeIota) {
  static const bool enabled =
      !hector::trav::envIs("HECTOR_DST_EID_IDENTITY", "0");
  return enabled && startsTheArange(dstEid, typeIota);
}

/// The expected length of an array, with the size it follows.
struct Length {
  int64_t value;
  const char *what;
};

} // namespace

rt::GraphArrays graphArraysFromTensors(const std::vector<at::Tensor> &arrays,
                                       const std::string &argName) {
  if (arrays.size() != static_cast<size_t>(rt::kNumGraphArrays))
    throw ArgumentValueError(argName + ": expected " +
                             std::to_string(rt::kNumGraphArrays) +
                             " graph arrays (Graph.kernel_arrays()), got " +
                             std::to_string(arrays.size()));
  auto arr = [&](GraphArray a) -> const at::Tensor & {
    return arrays[static_cast<size_t>(a)];
  };

  // Per-array checks first, so that the sizes below read valid 1-d tensors.
  for (int i = 0; i < rt::kNumGraphArrays; ++i) {
    auto a = static_cast<GraphArray>(i);
    const at::Tensor &t = arrays[i];
    if (!t.defined())
      throw ArgumentTypeError(arrayText(argName, a) +
                              ": expected a tensor, got an undefined one");
    at::ScalarType want = isFloatArray(a) ? at::kFloat : at::kLong;
    if (t.scalar_type() != want)
      throw ArgumentTypeError(arrayText(argName, a) + ": expected dtype " +
                              dtypeName(want) + ", got " +
                              dtypeName(t.scalar_type()));
    if (t.dim() != 1)
      throw ArgumentValueError(arrayText(argName, a) +
                               ": expected a 1-d tensor, got shape " +
                               sizesText(t.sizes()));
    if (!t.is_contiguous())
      throw ArgumentValueError(arrayText(argName, a) +
                               ": expected a contiguous tensor");
    if (t.device() != arrays[0].device())
      throw ArgumentValueError(arrayText(argName, a) + ": on " +
                               t.device().str() + " but '" +
                               rt::graphArrayName(GraphArray::Src) +
                               "' is on " + arrays[0].device().str());
  }

  for (GraphArray a : {GraphArray::EtypePtr, GraphArray::NtypePtr})
    if (arr(a).size(0) < 1)
      throw ArgumentValueError(arrayText(argName, a) +
                               " has 0 entries, expected at least 1");
  const int64_t n = arr(GraphArray::Ntype).size(0);
  const int64_t e = arr(GraphArray::Src).size(0);
  const int64_t p = arr(GraphArray::PairSrc).size(0);
  const int64_t r = arr(GraphArray::EtypePtr).size(0) - 1;
  const int64_t t = arr(GraphArray::NtypePtr).size(0) - 1;
  const int64_t c = arr(GraphArray::SumChunkDst).size(0);

  auto expected = [&](GraphArray a) -> Length {
    switch (a) {
    case GraphArray::Src:
    case GraphArray::Dst:
    case GraphArray::Etype:
    case GraphArray::RelInDegree:
    case GraphArray::EtypeSortedEid:
    case GraphArray::DstEid:
    case GraphArray::SrcEid:
    case GraphArray::EdgePair:
    case GraphArray::EdgeSrcNtype:
    case GraphArray::EdgeDstNtype:
    case GraphArray::DstCsrSrc:
    case GraphArray::DstCsrEtype:
    case GraphArray::DstCsrPair:
    case GraphArray::SrcCsrDst:
    case GraphArray::SrcCsrEtype:
    case GraphArray::SrcCsrPair:
    case GraphArray::SumChunkSrc:
    case GraphArray::SumChunkEdge:
    case GraphArray::SumEdgeEntry:
    case GraphArray::SumEdgeChunk:
      return {e, "num_edges"};
    case GraphArray::Ntype:
    case GraphArray::InDegree:
    case GraphArray::OutDegree:
    case GraphArray::NtypeSortedNodes:
      return {n, "num_nodes"};
    case GraphArray::DstPtr:
    case GraphArray::SrcPtr:
      return {n + 1, "num_nodes + 1"};
    case GraphArray::PairSrc:
    case GraphArray::PairEtype:
    case GraphArray::PairSrcNtype:
    case GraphArray::PairSrcOrder:
    case GraphArray::PairSrcOrderSrc:
    case GraphArray::PairSrcOrderEtype:
      return {p, "num_pairs"};
    case GraphArray::EtypePtr:
    case GraphArray::PairPtr:
    case GraphArray::SumChunkEtypePtr:
      return {r + 1, "num_etypes + 1"};
    case GraphArray::SumChunkDst:
    case GraphArray::SumChunkEid:
    case GraphArray::SumChunkRelInDegree:
    case GraphArray::SumChunkDstOrder:
    case GraphArray::SumChunkDstOrderDst:
    case GraphArray::SumChunkDstOrderEtype:
      return {c, "num_sum_chunks (len(sum_chunk_dst))"};
    case GraphArray::SumChunkPtr:
      return {c + 1, "num_sum_chunks + 1"};
    case GraphArray::NtypePtr:
      return {t + 1, "num_ntypes + 1"};
    case GraphArray::TypeIota:
      return {std::max(r, t) + 1, "max(num_etypes, num_ntypes) + 1"};
    case GraphArray::HeavyDstRows:
    case GraphArray::HeavySrcRows:
      return {-1, "at most num_nodes"};
    case GraphArray::HeavyDstEdgePtr:
      return {arr(GraphArray::HeavyDstRows).size(0) + 1,
              "len(heavy_dst_rows) + 1"};
    case GraphArray::HeavySrcEdgePtr:
      return {arr(GraphArray::HeavySrcRows).size(0) + 1,
              "len(heavy_src_rows) + 1"};
    case GraphArray::Count:
      break;
    }
    throw std::logic_error("graphArraysFromTensors: no length for array " +
                           std::to_string(static_cast<int>(a)));
  };
  for (int i = 0; i < rt::kNumGraphArrays; ++i) {
    auto a = static_cast<GraphArray>(i);
    Length want = expected(a);
    const int64_t got = arrays[i].size(0);
    if (want.value < 0 && got > n) // a node list: at most every node
      throw ArgumentValueError(arrayText(argName, a) + " has " +
                               std::to_string(got) + " entries, expected " +
                               want.what + " (" + std::to_string(n) + ")");
    if (want.value >= 0 && got != want.value)
      throw ArgumentValueError(
          arrayText(argName, a) + " has " + std::to_string(got) +
          " entries, expected " + std::to_string(want.value) + " (" +
          want.what + ")");
  }

  auto ints = [&](GraphArray a) -> const int64_t * {
    return arr(a).data_ptr<int64_t>();
  };
  auto floats = [&](GraphArray a) -> const float * {
    return arr(a).data_ptr<float>();
  };
  rt::GraphArrays g;
  g.num_nodes = n;
  g.num_edges = e;
  g.num_pairs = p;
  g.num_etypes = r;
  g.num_ntypes = t;
  g.num_sum_chunks = c;
  g.src = ints(GraphArray::Src);
  g.dst = ints(GraphArray::Dst);
  g.etype = ints(GraphArray::Etype);
  g.ntype = ints(GraphArray::Ntype);
  g.in_degree = floats(GraphArray::InDegree);
  g.out_degree = floats(GraphArray::OutDegree);
  g.rel_in_degree = floats(GraphArray::RelInDegree);
  g.sum_chunk_rel_in_degree = floats(GraphArray::SumChunkRelInDegree);
  g.etype_sorted_eid = ints(GraphArray::EtypeSortedEid);
  g.etype_ptr = ints(GraphArray::EtypePtr);
  g.dst_ptr = ints(GraphArray::DstPtr);
  g.dst_eid = ints(GraphArray::DstEid);
  g.dst_eid_is_identity =
      dstEidIsIdentity(arr(GraphArray::DstEid), arr(GraphArray::TypeIota));
  g.src_ptr = ints(GraphArray::SrcPtr);
  g.src_eid = ints(GraphArray::SrcEid);
  g.pair_src = ints(GraphArray::PairSrc);
  g.pair_etype = ints(GraphArray::PairEtype);
  g.pair_ptr = ints(GraphArray::PairPtr);
  g.pair_src_order = ints(GraphArray::PairSrcOrder);
  g.pair_src_order_src = ints(GraphArray::PairSrcOrderSrc);
  g.pair_src_order_etype = ints(GraphArray::PairSrcOrderEtype);
  g.edge_pair = ints(GraphArray::EdgePair);
  g.ntype_sorted_nodes = ints(GraphArray::NtypeSortedNodes);
  g.ntype_sorted_nodes_is_identity = startsTheArange(
      arr(GraphArray::NtypeSortedNodes), arr(GraphArray::TypeIota));
  g.ntype_ptr = ints(GraphArray::NtypePtr);
  g.edge_src_ntype = ints(GraphArray::EdgeSrcNtype);
  g.edge_dst_ntype = ints(GraphArray::EdgeDstNtype);
  g.pair_src_ntype = ints(GraphArray::PairSrcNtype);
  g.type_iota = ints(GraphArray::TypeIota);
  g.heavy_dst_rows = ints(GraphArray::HeavyDstRows);
  g.heavy_src_rows = ints(GraphArray::HeavySrcRows);
  g.heavy_dst_edge_ptr = ints(GraphArray::HeavyDstEdgePtr);
  g.heavy_src_edge_ptr = ints(GraphArray::HeavySrcEdgePtr);
  g.dst_csr_src = ints(GraphArray::DstCsrSrc);
  g.dst_csr_etype = ints(GraphArray::DstCsrEtype);
  g.dst_csr_pair = ints(GraphArray::DstCsrPair);
  g.src_csr_dst = ints(GraphArray::SrcCsrDst);
  g.src_csr_etype = ints(GraphArray::SrcCsrEtype);
  g.src_csr_pair = ints(GraphArray::SrcCsrPair);
  g.sum_chunk_ptr = ints(GraphArray::SumChunkPtr);
  g.sum_chunk_src = ints(GraphArray::SumChunkSrc);
  g.sum_chunk_dst = ints(GraphArray::SumChunkDst);
  g.sum_chunk_eid = ints(GraphArray::SumChunkEid);
  g.sum_chunk_etype_ptr = ints(GraphArray::SumChunkEtypePtr);
  g.sum_chunk_edge = ints(GraphArray::SumChunkEdge);
  g.sum_edge_entry = ints(GraphArray::SumEdgeEntry);
  g.sum_edge_chunk = ints(GraphArray::SumEdgeChunk);
  g.sum_chunk_dst_order = ints(GraphArray::SumChunkDstOrder);
  g.sum_chunk_dst_order_dst = ints(GraphArray::SumChunkDstOrderDst);
  g.sum_chunk_dst_order_etype = ints(GraphArray::SumChunkDstOrderEtype);
  g.num_heavy_dst = arr(GraphArray::HeavyDstRows).size(0);
  g.num_heavy_src = arr(GraphArray::HeavySrcRows).size(0);
  return g;
}

} // namespace hector::runtime
