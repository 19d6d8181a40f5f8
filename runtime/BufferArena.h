// BufferArena: the temporaries of one generated op call in one allocation
// (codegen/TorchBindingEmitter). Each at::empty costs a few microseconds
// of host time, and a small graph's training step made 25 of them, a
// tenth of its host time (docs/perf-notes.md section 25).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace hector::rt {

/// Buffer starts in an arena are multiples of this many bytes: what a
/// separate cudaMalloc or caching-allocator block gives at least, so that
/// the kernels' 16-byte vector accesses and row alignment are as before.
constexpr int64_t kArenaAlignBytes = 256;

/// Buffers of `numels` elements each, in order, carved out of one tensor
/// of `options`. The buffers live as long as the arena or any tensor()
/// taken from it.
class BufferArena {
public:
  BufferArena(std::initializer_list<int64_t> numels,
              const at::TensorOptions &options);

  /// Buffer `i`'s first element.
  template <typename T> T *data(size_t i) const {
    return static_cast<T *>(base_) + offsets_.at(i);
  }

  /// Buffer `i` as a contiguous tensor of `shape` (a view of the arena,
  /// which it keeps alive); `shape` must hold the buffer's element count.
  at::Tensor tensor(size_t i, at::IntArrayRef shape) const;

  /// The one allocation.
  const at::Tensor &storage() const { return storage_; }

private:
  std::vector<int64_t> offsets_, numels_; // in elements
  at::Tensor storage_;
  void *base_ = nullptr;
};

} // namespace hector::rt
