#include "runtime/BufferArena.h"

#include <c10/util/Exception.h>

namespace hector::rt {

BufferArena::BufferArena(std::initializer_list<int64_t> numels,
                         const at::TensorOptions &options)
    : numels_(numels) {
  const int64_t itemBytes =
      static_cast<int64_t>(options.dtype().itemsize());
  const int64_t align = std::max<int64_t>(1, kArenaAlignBytes / itemBytes);
  int64_t end = 0;
  offsets_.reserve(numels_.size());
  for (int64_t n : numels_) {
    TORCH_CHECK(n >= 0, "BufferArena: negative buffer size ", n);
    offsets_.push_back(end);
    end += (n + align - 1) / align * align;
  }
  storage_ = at::empty({end}, options);
  base_ = storage_.data_ptr();
}

at::Tensor BufferArena::tensor(size_t i, at::IntArrayRef shape) const {
  std::vector<int64_t> strides(shape.size());
  int64_t numel = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = numel;
    numel *= shape[d];
  }
  TORCH_INTERNAL_ASSERT(numel == numels_.at(i), "BufferArena: buffer ", i,
                        " holds ", numels_.at(i), " elements, not ", numel);
  return storage_.as_strided(shape, strides,
                             storage_.storage_offset() + offsets_.at(i));
}

} // namespace hector::rt
