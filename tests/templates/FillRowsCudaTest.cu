// templates/traversal/FillRows.h on the GPU: fillRows sets every row of a
// device buffer to the shared row (rows of widths that do not divide the
// grid's stride, more elements than one pass of the grid) and writes
// nothing past them.
#include "templates/traversal/FillRows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace {

bool haveDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Rows an element a thread (widths 1, 3, 67, 12; 64 at an unaligned
// start) and a 16-byte word a thread (4, 64, 1024: fillRowWords), with more
// words than one pass of the grid.
TEST(FillRows, CudaSetsEveryRowToTheSharedRow) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  struct Shape {
    int64_t rows, width, offset; ///< offset: dst starts this many floats in
  };
  for (const auto &[rows, width, offset] : std::vector<Shape>{{1, 1, 0},
                                                              {7, 3, 0},
                                                              {5000, 67, 0},
                                                              {3000, 12, 0},
                                                              {3, 4, 0},
                                                              {70001, 64, 0},
                                                              {7000, 64, 1},
                                                              {300, 1024, 0}}) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(width) + "+" +
                 std::to_string(offset));
    std::vector<float> row(width);
    for (int64_t c = 0; c < width; ++c)
      row[c] = 0.5f * static_cast<float>(c) - 3.0f;
    // A guard element after the rows, and `offset` elements before them.
    const size_t total = static_cast<size_t>(offset + rows * width) + 1;
    float *base = nullptr, *dRow = nullptr;
    ASSERT_EQ(cudaMalloc(&base, total * sizeof(float)), cudaSuccess);
    float *const dst = base + offset;
    ASSERT_EQ(cudaMalloc(&dRow, width * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(base, 0xff, total * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dRow, row.data(), width * sizeof(float),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    hector::trav::fillRows<float>(nullptr, dst, rows, dRow, width);
    std::vector<float> got(total);
    ASSERT_EQ(cudaMemcpy(got.data(), base, total * sizeof(float),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (int64_t i = 0; i < rows * width; ++i)
      ASSERT_EQ(got[offset + i], row[i % width]) << i;
    for (int64_t i = 0; i < offset; ++i)
      EXPECT_TRUE(std::isnan(got[i])); // all bits set: untouched
    EXPECT_TRUE(std::isnan(got[total - 1]));
    cudaFree(base);
    cudaFree(dRow);
  }
}

} // namespace
