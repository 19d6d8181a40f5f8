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

const torch::Tensor &Graph::inDegree() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!derived_.inDegree.defined())
    derived_.inDegree = torch::bincount(dst_, {}, numNodes_);
  return derived_.inDegree;
}

const torch::Tensor &Graph::outDegree() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!derived_.outDegree.defined())
    derived_.outDegree = torch::bincount(src_, {}, numNodes_);
  return derived_.outDegree;
}

const torch::Tensor &Graph::relInDegree() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!derived_.relInDegree.defined()) {
    // Key each edge by (dst, etype); the count of its key is its degree.
    // unique() keeps this O(E log E) instead of a dense N x R table.
    auto key = dst_ * std::max<int64_t>(numEtypes_, 1) + etype_;
    auto [uniq, inverse, counts] =
        torch::_unique2(key, /*sorted=*/true, /*return_inverse=*/true,
                        /*return_counts=*/true);
    (void)uniq;
    derived_.relInDegree = counts.index_select(0, inverse.reshape({-1}));
  }
  return derived_.relInDegree;
}

void Graph::computePairs() const {
  // Caller holds the mutex.
  if (derived_.edgePair.defined())
    return;
  int64_t r = std::max<int64_t>(numEtypes_, 1);
  auto key = src_ * r + etype_;
  auto [uniq, inverse, counts] =
      torch::_unique2(key, /*sorted=*/true, /*return_inverse=*/true,
                      /*return_counts=*/false);
  (void)counts;
  derived_.edgePair = inverse.reshape({-1});
  derived_.pairSrc = torch::div(uniq, r, "floor");
  derived_.pairEtype = torch::remainder(uniq, r);
}

const torch::Tensor &Graph::edgePair() const {
  std::lock_guard<std::mutex> lock(mutex_);
  computePairs();
  return derived_.edgePair;
}

const torch::Tensor &Graph::pairSrc() const {
  std::lock_guard<std::mutex> lock(mutex_);
  computePairs();
  return derived_.pairSrc;
}

const torch::Tensor &Graph::pairEtype() const {
  std::lock_guard<std::mutex> lock(mutex_);
  computePairs();
  return derived_.pairEtype;
}

} // namespace hector::runtime
