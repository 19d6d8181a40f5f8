// The runtime's graph container: a typed multigraph in COO form (PyG
// layout: edge e goes from src[e] to dst[e] and has relation etype[e]; node
// v has node type ntype[v]) plus the derived arrays that the interpreter and
// the generated kernels need, each computed once, lazily, with torch ops on
// the graph's device (no per-relation host loops) and cached.
#pragma once

#include "runtime/GraphArrays.h"

#include <torch/types.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace hector::runtime {

/// How the kernel arrays number the edges (Graph::kernelArrays).
enum class EdgeOrder {
  /// Edge i is the i-th edge as given.
  Given,
  /// Edges sorted by destination, then relation, ties in the given order.
  /// A layer whose values are all node, type or global rows sees the same
  /// results either way, and its kernels read and write their per-edge
  /// rows in the order the destination-CSR loops visit them
  /// (docs/perf-notes.md section 38). A layer with per-edge inputs or
  /// outputs uses Given, whose edge ids are the caller's.
  ByDst,
};

class Graph {
public:
  /// `src`, `dst`, `etype` are [E] and `ntype` is [N] integer tensors on one
  /// device; they are converted to contiguous int64. Throws
  /// ArgumentTypeError / ArgumentValueError (runtime/Errors.h) naming the
  /// argument when a shape, dtype, device or id range is wrong: every src
  /// and dst id in [0, numNodes), etype in [0, numEtypes), ntype in
  /// [0, numNtypes).
  Graph(torch::Tensor src, torch::Tensor dst, torch::Tensor etype,
        torch::Tensor ntype, int64_t numNodes, int64_t numEtypes,
        int64_t numNtypes);

  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  int64_t numNodes() const { return numNodes_; }
  int64_t numEdges() const { return src_.size(0); }
  int64_t numEtypes() const { return numEtypes_; }
  int64_t numNtypes() const { return numNtypes_; }
  torch::Device device() const { return src_.device(); }

  const torch::Tensor &src() const { return src_; }     ///< [E] int64
  const torch::Tensor &dst() const { return dst_; }     ///< [E] int64
  const torch::Tensor &etype() const { return etype_; } ///< [E] int64
  const torch::Tensor &ntype() const { return ntype_; } ///< [N] int64

  // Derived arrays (int64, on device(); computed on first use).
  /// [N] number of incoming edges of each node.
  const torch::Tensor &inDegree() const;
  /// [N] number of outgoing edges of each node.
  const torch::Tensor &outDegree() const;
  /// [E] number of incoming edges of dst[e] whose type is etype[e].
  const torch::Tensor &relInDegree() const;
  /// [E] index of edge e's unique (src, etype) pair. Pairs are numbered in
  /// ascending (etype, src) order, so the pairs of one edge type are
  /// contiguous (kernelArrays()' pair_ptr delimits them).
  const torch::Tensor &edgePair() const;
  /// [P] source node of each unique (src, etype) pair.
  const torch::Tensor &pairSrc() const;
  /// [P] edge type of each unique (src, etype) pair.
  const torch::Tensor &pairEtype() const;
  /// P, the number of unique (src, etype) pairs.
  int64_t numPairs() const { return pairSrc().size(0); }

  /// Every array the generated kernels read, in rt::GraphArray order (see
  /// runtime/GraphArrays.h for each one's meaning and length), on device():
  /// contiguous int64, except in_degree, out_degree and rel_in_degree, which
  /// are float32, with the edges numbered as `order` says. Computed on
  /// first use and cached per order. In the Given order the tensors share
  /// storage with src(), dst(), etype(), ntype() and the pair arrays; in
  /// ByDst the node, type and pair arrays are the same and every per-edge
  /// array is the Given one permuted (pairs keep their numbers).
  const std::vector<torch::Tensor> &
  kernelArrays(EdgeOrder order = EdgeOrder::Given) const;

private:
  struct Derived {
    torch::Tensor inDegree, outDegree, relInDegree;
    torch::Tensor edgePair, pairSrc, pairEtype;
    /// Indexed by EdgeOrder.
    std::vector<torch::Tensor> kernelArrays[2];
  };
  // The ensure* helpers compute one group of derived arrays unless it is
  // cached; the caller holds mutex_.
  void ensureDegrees() const;
  void ensureRelInDegree() const;
  void ensurePairs() const;
  void ensureKernelArrays(EdgeOrder order) const;
  /// The sum_chunk_* arrays (GraphArrays.h) of the edges src, dst, etype
  /// and their float32 relInDegree in the kernels' numbering, into
  /// `arrays`.
  void setSumChunks(std::vector<torch::Tensor> &arrays,
                    const torch::Tensor &src, const torch::Tensor &dst,
                    const torch::Tensor &etype,
                    const torch::Tensor &relInDegree) const;
  /// [E] dst * R + etype: each edge's (destination, relation) as one key,
  /// ascending in that order.
  torch::Tensor dstEtypeKeys() const;

  torch::Tensor src_, dst_, etype_, ntype_;
  int64_t numNodes_ = 0, numEtypes_ = 0, numNtypes_ = 0;
  // Derived arrays are computed on first use; the mutex makes concurrent
  // first uses from several Python threads safe.
  mutable std::mutex mutex_;
  mutable Derived derived_;
};

} // namespace hector::runtime
