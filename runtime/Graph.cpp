#include "runtime/Graph.h"

#include "runtime/Errors.h"
#include "runtime/TensorText.h"

#include <ATen/ATen.h>

#include <string>
#include <tuple>

namespace hector::runtime {
namespace {

/// Checks that `t` is a 1-d integer tensor of `length` elements on `device`
/// and returns it as contiguous int64.
torch::Tensor checkIndexTensor(const torch::Tensor &t, const char *name,
                               int64_t length, const char *lengthWhat,
                               const torch::Device &device) {
  if (!t.defined())
    throw ArgumentTypeError(std::string(name) + ": expected a tensor");
  if (!at::isIntegralType(t.scalar_type(), /*includeBool=*/false))
    throw ArgumentTypeError(std::string(name) +
                            ": expected an integer tensor, got dtype " +
                            dtypeName(t.scalar_type()));
  if (t.dim() != 1 || t.size(0) != length)
    throw ArgumentValueError(std::string(name) + ": expected shape [" +
                             std::to_string(length) + "] (" + lengthWhat +
                             "), got " + sizesText(t.sizes()));
  if (t.device() != device)
    throw ArgumentValueError(std::string(name) + ": on " + t.device().str() +
                             " but src is on " + device.str());
  return t.to(torch::kLong).contiguous();
}

/// Checks 0 <= t < bound for every element.
void checkRange(const torch::Tensor &t, const char *name, int64_t bound,
                const char *boundName) {
  if (t.numel() == 0)
    return;
  int64_t lo = t.min().item<int64_t>();
  int64_t hi = t.max().item<int64_t>();
  if (lo < 0 || hi >= bound)
    throw ArgumentValueError(std::string(name) + ": ids must be in [0, " +
                             std::to_string(bound) + ") (" + boundName +
                             "), found " + std::to_string(lo < 0 ? lo : hi));
}

/// [numSegments+1] segment pointers of the ascending keys `sortedKeys` (all
/// in [0, numSegments)): segment k is [ptr[k], ptr[k+1]).
torch::Tensor segmentPointers(const torch::Tensor &sortedKeys,
                              int64_t numSegments) {
  auto bounds = torch::arange(numSegments + 1, sortedKeys.options());
  return torch::searchsorted(sortedKeys, bounds).contiguous();
}

/// Whether the 1-d `keys` never decrease (one reduction and a read back).
bool nonDecreasing(const torch::Tensor &keys) {
  const int64_t n = keys.size(0);
  return n < 2 ||
         (keys.slice(0, 1) >= keys.slice(0, 0, n - 1)).all().item<bool>();
}

/// The permutation that stably sorts `keys` (ascending): equal keys keep
/// ascending ids. Returns {sorted keys, permutation}.
std::tuple<torch::Tensor, torch::Tensor> stableSort(const torch::Tensor &keys) {
  auto [sorted, perm] =
      torch::sort(keys, /*stable=*/true, /*dim=*/0, /*descending=*/false);
  return {sorted.contiguous(), perm.contiguous()};
}

/// The heavy rows of the CSR pointers `ptr` and where their edges start
/// when laid end to end (GraphArrays::heavy_dst_rows, heavy_dst_edge_ptr).
struct HeavyRowArrays {
  torch::Tensor rows, edgePtr;
};

/// The nodes whose segment in `ptr` has more than rt::kHeavyRowEdges
/// entries, largest first, ties by ascending id; and 0, then the running
/// sum of their degrees in that order.
HeavyRowArrays heavyRows(const torch::Tensor &ptr) {
  const int64_t n = ptr.size(0) - 1;
  auto degree = ptr.slice(0, 1, n + 1) - ptr.slice(0, 0, n);
  auto rows = torch::nonzero(degree > rt::kHeavyRowEdges).flatten();
  auto [sorted, order] = torch::sort(degree.index_select(0, rows),
                                     /*stable=*/true, /*dim=*/0,
                                     /*descending=*/true);
  return {rows.index_select(0, order).contiguous(),
          torch::cat({torch::zeros({1}, ptr.options()), sorted.cumsum(0)})
              .contiguous()};
}

/// Stores kernel array `a` (contiguous) in `arrays`, in GraphArray order.
void setArray(std::vector<torch::Tensor> &arrays, rt::GraphArray a,
              const torch::Tensor &t) {
  arrays[static_cast<int>(a)] = t.contiguous();
}

} // namespace

Graph::Graph(torch::Tensor src, torch::Tensor dst, torch::Tensor etype,
             torch::Tensor ntype, int64_t numNodes, int64_t numEtypes,
             int64_t numNtypes)
    : numNodes_(numNodes), numEtypes_(numEtypes), numNtypes_(numNtypes) {
  if (numNodes < 0 || numEtypes < 0 || numNtypes < 0)
    throw ArgumentValueError(
        "num_nodes, num_etypes and num_ntypes must be non-negative");
  if (!src.defined() || src.dim() != 1)
    throw ArgumentValueError("src: expected a 1-d tensor of edge sources");
  torch::Device device = src.device();
  int64_t numEdges = src.size(0);
  src_ = checkIndexTensor(src, "src", numEdges, "number of edges", device);
  dst_ = checkIndexTensor(dst, "dst", numEdges, "number of edges", device);
  etype_ =
      checkIndexTensor(etype, "etype", numEdges, "number of edges", device);
  ntype_ =
      checkIndexTensor(ntype, "ntype", numNodes, "number of nodes", device);
  checkRange(src_, "src", numNodes, "num_nodes");
  checkRange(dst_, "dst", numNodes, "num_nodes");
  checkRange(etype_, "etype", numEtypes, "num_etypes");
  checkRange(ntype_, "ntype", numNtypes, "num_ntypes");
}

void Graph::ensureDegrees() const {
  if (derived_.inDegree.defined())
    return;
  // outDegree first: a defined inDegree marks the pair as computed.
  derived_.outDegree = torch::bincount(src_, {}, numNodes_);
  derived_.inDegree = torch::bincount(dst_, {}, numNodes_);
}

torch::Tensor Graph::dstEtypeKeys() const {
  return dst_ * std::max<int64_t>(numEtypes_, 1) + etype_;
}

void Graph::ensureRelInDegree() const {
  if (derived_.relInDegree.defined())
    return;
  // Key each edge by (dst, etype); the count of its key is its degree.
  // unique() keeps this O(E log E) instead of a dense N x R table.
  auto key = dstEtypeKeys();
  auto [uniq, inverse, counts] =
      torch::_unique2(key, /*sorted=*/true, /*return_inverse=*/true,
                      /*return_counts=*/true);
  (void)uniq;
  derived_.relInDegree = counts.index_select(0, inverse.reshape({-1}));
}

void Graph::ensurePairs() const {
  if (derived_.edgePair.defined())
    return;
  // Keying by etype first numbers the pairs in ascending (etype, src) order,
  // so the pairs of one relation form one segment.
  int64_t n = std::max<int64_t>(numNodes_, 1);
  auto key = etype_ * n + src_;
  auto [uniq, inverse, counts] =
      torch::_unique2(key, /*sorted=*/true, /*return_inverse=*/true,
                      /*return_counts=*/false);
  (void)counts;
  auto pairEtype = torch::div(uniq, n, "floor").contiguous();
  auto pairSrc = torch::remainder(uniq, n).contiguous();
  derived_.pairEtype = std::move(pairEtype);
  derived_.pairSrc = std::move(pairSrc);
  // Assigned last: a defined edgePair marks the group as computed.
  derived_.edgePair = inverse.reshape({-1}).contiguous();
}

const torch::Tensor &Graph::inDegree() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ensureDegrees();
  return derived_.inDegree;
}

const torch::Tensor &Graph::outDegree() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ensureDegrees();
  return derived_.outDegree;
}

const torch::Tensor &Graph::relInDegree() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ensureRelInDegree();
  return derived_.relInDegree;
}

const torch::Tensor &Graph::edgePair() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ensurePairs();
  return derived_.edgePair;
}

const torch::Tensor &Graph::pairSrc() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ensurePairs();
  return derived_.pairSrc;
}

const torch::Tensor &Graph::pairEtype() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ensurePairs();
  return derived_.pairEtype;
}

void Graph::setSumChunks(std::vector<torch::Tensor> &arrays,
                         const torch::Tensor &src, const torch::Tensor &dst,
                         const torch::Tensor &etype,
                         const torch::Tensor &relInDegree) const {
  using rt::GraphArray;
  auto set = [&](GraphArray a, const torch::Tensor &t) {
    setArray(arrays, a, t);
  };
  // Edges in ascending (etype, dst) order, ascending ids within a segment.
  const int64_t n = std::max<int64_t>(numNodes_, 1), e = src.size(0);
  auto [key, byRelDst] = stableSort(etype * n + dst);
  // An edge's place in its segment; a chunk starts at every multiple of
  // kSumChunkEdges of it.
  torch::Tensor first = torch::ones({e}, key.options().dtype(torch::kBool));
  if (e > 1)
    first.slice(0, 1).copy_(key.slice(0, 1) != key.slice(0, 0, e - 1));
  const torch::Tensor position = torch::arange(e, key.options());
  const torch::Tensor segmentStart = std::get<0>(torch::cummax(
      torch::where(first, position, torch::zeros_like(position)), 0));
  const torch::Tensor starts =
      torch::nonzero((position - segmentStart).remainder(rt::kSumChunkEdges) ==
                     0)
          .reshape({-1});
  const torch::Tensor chunkEid = byRelDst.index_select(0, starts);
  set(GraphArray::SumChunkPtr,
      torch::cat({starts, torch::full({1}, e, starts.options())}));
  set(GraphArray::SumChunkSrc, src.index_select(0, byRelDst));
  set(GraphArray::SumChunkEdge, byRelDst);
  const torch::Tensor edgeEntry =
      torch::empty_like(byRelDst).scatter_(0, byRelDst, position);
  set(GraphArray::SumEdgeEntry, edgeEntry);
  // An entry's chunk: the number of chunks started at or before it, less 1.
  torch::Tensor startsHere = torch::zeros_like(position);
  startsHere.index_fill_(0, starts, 1);
  set(GraphArray::SumEdgeChunk,
      (startsHere.cumsum(0) - 1).index_select(0, edgeEntry));
  const torch::Tensor chunkDst = dst.index_select(0, chunkEid);
  set(GraphArray::SumChunkDst, chunkDst);
  // Chunks are numbered in (etype, dst) order, so a stable sort by
  // destination keeps each destination's chunks in etype order.
  const auto [dstOrderDst, dstOrder] = stableSort(chunkDst);
  set(GraphArray::SumChunkDstOrder, dstOrder);
  set(GraphArray::SumChunkDstOrderDst, dstOrderDst);
  set(GraphArray::SumChunkDstOrderEtype,
      etype.index_select(0, chunkEid.index_select(0, dstOrder)));
  set(GraphArray::SumChunkEid, chunkEid);
  // The divisor of each chunk's segment, where a summed GEMM reads it.
  set(GraphArray::SumChunkRelInDegree, relInDegree.index_select(0, chunkEid));
  // Chunks are in etype order: their etypes ascend.
  set(GraphArray::SumChunkEtypePtr,
      segmentPointers(etype.index_select(0, chunkEid), numEtypes_));
}

void Graph::ensureKernelArrays(EdgeOrder order) const {
  std::vector<torch::Tensor> &cached =
      derived_.kernelArrays[static_cast<int>(order)];
  if (!cached.empty())
    return;
  ensureDegrees();
  ensureRelInDegree();
  ensurePairs();
  // The per-edge arrays in the kernels' numbering: kernel edge i is given
  // edge perm[i] (ByDst), or edge i itself (Given).
  torch::Tensor src = src_, dst = dst_, etype = etype_;
  torch::Tensor relInDegree = derived_.relInDegree,
                edgePair = derived_.edgePair;
  if (order == EdgeOrder::ByDst) {
    const torch::Tensor perm = std::get<1>(stableSort(dstEtypeKeys()));
    src = src_.index_select(0, perm);
    dst = dst_.index_select(0, perm);
    etype = etype_.index_select(0, perm);
    relInDegree = relInDegree.index_select(0, perm);
    edgePair = edgePair.index_select(0, perm);
  }
  using rt::GraphArray;
  std::vector<torch::Tensor> arrays(rt::kNumGraphArrays);
  auto set = [&](GraphArray a, const torch::Tensor &t) {
    setArray(arrays, a, t);
  };
  set(GraphArray::Src, src);
  set(GraphArray::Dst, dst);
  set(GraphArray::Etype, etype);
  set(GraphArray::Ntype, ntype_);
  set(GraphArray::InDegree, derived_.inDegree.to(torch::kFloat));
  set(GraphArray::OutDegree, derived_.outDegree.to(torch::kFloat));
  const torch::Tensor relInDegreeFloat = relInDegree.to(torch::kFloat);
  set(GraphArray::RelInDegree, relInDegreeFloat);

  auto [sortedEtype, etypeSortedEid] = stableSort(etype);
  set(GraphArray::EtypeSortedEid, etypeSortedEid);
  set(GraphArray::EtypePtr, segmentPointers(sortedEtype, numEtypes_));

  // type_iota is 0, 1, 2, ...; so is dst_eid in the dst numbering, whose
  // edges are sorted by destination already, and so is ntype_sorted_nodes
  // when the nodes are numbered by type. There they are the start of one
  // arange, which tells the kernels so (GraphArrays::dst_eid_is_identity
  // and ntype_sorted_nodes_is_identity, runtime/KernelGraph.cpp), and no
  // sort is needed.
  const int64_t e = src.size(0),
                typeIotaLength = std::max(numEtypes_, numNtypes_) + 1;
  // Nodes numbered by type: a heterograph flattened one type after another.
  const bool nodesByType = nonDecreasing(ntype_);
  int64_t iotaLength = typeIotaLength;
  if (order == EdgeOrder::ByDst)
    iotaLength = std::max(iotaLength, e);
  if (nodesByType)
    iotaLength = std::max(iotaLength, numNodes_);
  torch::Tensor iota = torch::arange(iotaLength, src_.options());
  torch::Tensor sortedDst, dstEid;
  if (order == EdgeOrder::ByDst) {
    TORCH_INTERNAL_ASSERT(
        nonDecreasing(dst),
        "the dst numbering's edges are not sorted by destination");
    sortedDst = dst;
    dstEid = iota.narrow(0, 0, e);
  } else {
    // A stable sort by node keeps ascending edge ids within each node.
    std::tie(sortedDst, dstEid) = stableSort(dst);
  }
  torch::Tensor dstPtr = segmentPointers(sortedDst, numNodes_);
  set(GraphArray::DstPtr, dstPtr);
  set(GraphArray::DstEid, dstEid);
  set(GraphArray::TypeIota, iota.narrow(0, 0, typeIotaLength));
  const HeavyRowArrays heavyDst = heavyRows(dstPtr);
  set(GraphArray::HeavyDstRows, heavyDst.rows);
  set(GraphArray::HeavyDstEdgePtr, heavyDst.edgePtr);
  auto [sortedSrc, srcEid] = stableSort(src);
  torch::Tensor srcPtr = segmentPointers(sortedSrc, numNodes_);
  set(GraphArray::SrcPtr, srcPtr);
  set(GraphArray::SrcEid, srcEid);
  const HeavyRowArrays heavySrc = heavyRows(srcPtr);
  set(GraphArray::HeavySrcRows, heavySrc.rows);
  set(GraphArray::HeavySrcEdgePtr, heavySrc.edgePtr);

  set(GraphArray::PairSrc, derived_.pairSrc);
  set(GraphArray::PairEtype, derived_.pairEtype);
  // pairEtype is ascending: pairs are numbered in (etype, src) order.
  set(GraphArray::PairPtr, segmentPointers(derived_.pairEtype, numEtypes_));
  // A stable sort by source keeps each source's pairs in etype order.
  const auto [srcOrderSrc, srcOrder] = stableSort(derived_.pairSrc);
  set(GraphArray::PairSrcOrder, srcOrder);
  set(GraphArray::PairSrcOrderSrc, srcOrderSrc);
  set(GraphArray::PairSrcOrderEtype,
      derived_.pairEtype.index_select(0, srcOrder));
  set(GraphArray::EdgePair, edgePair);

  if (nodesByType) {
    set(GraphArray::NtypeSortedNodes, iota.narrow(0, 0, numNodes_));
    set(GraphArray::NtypePtr, segmentPointers(ntype_, numNtypes_));
  } else {
    auto [sortedNtype, ntypeSortedNodes] = stableSort(ntype_);
    set(GraphArray::NtypeSortedNodes, ntypeSortedNodes);
    set(GraphArray::NtypePtr, segmentPointers(sortedNtype, numNtypes_));
  }
  set(GraphArray::EdgeSrcNtype, ntype_.index_select(0, src));
  set(GraphArray::EdgeDstNtype, ntype_.index_select(0, dst));
  set(GraphArray::PairSrcNtype, ntype_.index_select(0, derived_.pairSrc));
  // Edge attributes at each CSR position (GraphArrays::dst_csr_src, ...).
  // In the dst numbering the incoming CSR order is the edge order, so they
  // are the per-edge arrays themselves: views, not copies (3 E int64s
  // less, 0.5 GB on mag).
  auto atDstCsrPositions = [&](const torch::Tensor &perEdge) {
    return order == EdgeOrder::ByDst ? perEdge
                                     : perEdge.index_select(0, dstEid);
  };
  set(GraphArray::DstCsrSrc, atDstCsrPositions(src));
  set(GraphArray::DstCsrEtype, atDstCsrPositions(etype));
  set(GraphArray::DstCsrPair, atDstCsrPositions(edgePair));
  set(GraphArray::SrcCsrDst, dst.index_select(0, srcEid));
  set(GraphArray::SrcCsrEtype, etype.index_select(0, srcEid));
  set(GraphArray::SrcCsrPair, edgePair.index_select(0, srcEid));
  setSumChunks(arrays, src, dst, etype, relInDegreeFloat);
  cached = std::move(arrays);
}

const std::vector<torch::Tensor> &Graph::kernelArrays(EdgeOrder order) const {
  std::lock_guard<std::mutex> lock(mutex_);
  ensureKernelArrays(order);
  return derived_.kernelArrays[static_cast<int>(order)];
}

} // namespace hector::runtime
