// BufferArena: the generated ops' temporaries carved out of one
// allocation: where each buffer starts, what tensor() views, and that the
// views keep the memory alive.
#include "runtime/BufferArena.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include <cstdint>

namespace hector::rt {
namespace {

int64_t byteOffset(const BufferArena &a, size_t i) {
  return reinterpret_cast<const char *>(a.data<float>(i)) -
         static_cast<const char *>(a.storage().data_ptr());
}

TEST(BufferArena, BuffersStartOnAlignedBoundariesInOrder) {
  // 10 floats round up to 64 (256 bytes), 64 stay 64, 65 round up to 128.
  const BufferArena a({10, 64, 65, 3}, at::TensorOptions().dtype(at::kFloat));
  EXPECT_EQ(byteOffset(a, 0), 0);
  EXPECT_EQ(byteOffset(a, 1), 256);
  EXPECT_EQ(byteOffset(a, 2), 512);
  EXPECT_EQ(byteOffset(a, 3), 1024);
  EXPECT_EQ(a.storage().numel(), 64 + 64 + 128 + 64);
  EXPECT_EQ(a.storage().scalar_type(), at::kFloat);
}

TEST(BufferArena, DoubleBuffersAlignTo32Elements) {
  const BufferArena a({1, 33}, at::TensorOptions().dtype(at::kDouble));
  EXPECT_EQ(a.data<double>(1) - a.data<double>(0), 32);
  EXPECT_EQ(a.storage().numel(), 32 + 64);
}

TEST(BufferArena, EmptyBuffersShareAStartAndTakeNoRoom) {
  const BufferArena a({0, 5, 0}, at::TensorOptions().dtype(at::kFloat));
  EXPECT_EQ(a.data<float>(0), a.data<float>(1));
  EXPECT_EQ(a.storage().numel(), 64);
  EXPECT_EQ(a.tensor(0, {0, 64}).numel(), 0);
  const BufferArena none({}, at::TensorOptions().dtype(at::kFloat));
  EXPECT_EQ(none.storage().numel(), 0);
}

TEST(BufferArena, TensorIsAContiguousViewOfItsBuffer) {
  const BufferArena a({6, 12}, at::TensorOptions().dtype(at::kFloat));
  at::Tensor t = a.tensor(1, {3, 4});
  EXPECT_EQ(t.sizes(), at::IntArrayRef({3, 4}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.data_ptr<float>(), a.data<float>(1));
  for (int i = 0; i < 12; ++i)
    a.data<float>(1)[i] = static_cast<float>(i);
  EXPECT_EQ(t[2][1].item<float>(), 9.0f);
  // Writing through the view reaches the buffer, not its neighbour.
  t.fill_(-1.0f);
  a.data<float>(0)[5] = 7.0f;
  EXPECT_EQ(a.data<float>(1)[0], -1.0f);
  EXPECT_EQ(t.sum().item<float>(), -12.0f);
}

TEST(BufferArena, TensorOutlivesTheArena) {
  at::Tensor t;
  {
    const BufferArena a({4, 8}, at::TensorOptions().dtype(at::kFloat));
    t = a.tensor(1, {2, 4});
    t.copy_(at::arange(8, at::kFloat).view({2, 4}));
  }
  EXPECT_EQ(t.sum().item<float>(), 28.0f);
}

TEST(BufferArena, TensorOfTheWrongSizeIsRefused) {
  const BufferArena a({6}, at::TensorOptions().dtype(at::kFloat));
  EXPECT_THROW(a.tensor(0, {2, 4}), c10::Error);
  EXPECT_THROW(a.tensor(1, {6}), std::out_of_range);
}

TEST(BufferArena, NegativeSizeIsRefused) {
  EXPECT_THROW(BufferArena({4, -1}, at::TensorOptions().dtype(at::kFloat)),
               c10::Error);
}

} // namespace
} // namespace hector::rt
