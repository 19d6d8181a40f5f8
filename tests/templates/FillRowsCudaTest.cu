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

TEST(FillRows, CudaSetsEveryRowToTheSharedRow) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  for (const auto &[rows, width] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 3}, {5000, 67}}) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(width));
    std::vector<float> row(width);
    for (int64_t c = 0; c < width; ++c)
      row[c] = 0.5f * static_cast<float>(c) - 3.0f;
    const size_t total = static_cast<size_t>(rows * width) + 1; // a guard
    float *dst = nullptr, *dRow = nullptr;
    ASSERT_EQ(cudaMalloc(&dst, total * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dRow, width * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(dst, 0xff, total * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dRow, row.data(), width * sizeof(float),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    hector::trav::fillRows<float>(nullptr, dst, rows, dRow, width);
    std::vector<float> got(total);
    ASSERT_EQ(cudaMemcpy(got.data(), dst, total * sizeof(float),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (int64_t i = 0; i < rows * width; ++i)
      ASSERT_EQ(got[i], row[i % width]) << i;
    EXPECT_TRUE(std::isnan(got[total - 1])); // all bits set: untouched
    cudaFree(dst);
    cudaFree(dRow);
  }
}

} // namespace
