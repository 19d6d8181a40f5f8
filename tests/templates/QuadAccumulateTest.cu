// templates/traversal/Traversal.h quadAccumulates and accumulateQuad on
// the GPU: which rows take 16-byte vector atomics, and that many threads
// adding quads into the same rows at once lose no add. The generated
// backward kernels' atomic statements are also checked end to end by
// tests/python/test_generated.py (gradients against the interpreter).
#include "templates/traversal/Traversal.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace {

bool haveDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

int computeCapability() {
  int device = 0, major = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  return major;
}

/// out[k] = quadAccumulates for the k-th case: (float row at offset 0,
/// size 64), (float, offset 1 float: not 16-byte aligned), (float, size
/// 6), (float, ordered), (double, size 64).
__global__ void whichQuads(float *f, double *d, int *out) {
  if (threadIdx.x != 0)
    return;
  out[0] = hector::trav::quadAccumulates(f, 64, false);
  out[1] = hector::trav::quadAccumulates(f + 1, 64, false);
  out[2] = hector::trav::quadAccumulates(f, 6, false);
  out[3] = hector::trav::quadAccumulates(f, 64, true);
  out[4] = hector::trav::quadAccumulates(d, 64, false);
}

/// Every thread adds (t % 7 + 1) * (c + 1) to element 4q + c of row
/// t % rows, for each of its row's quads q.
__global__ void addQuads(float *rows, int numRows, int width) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  float *row = rows + (t % numRows) * width;
  for (int q = 0; q < width / 4; ++q) {
    const float base = static_cast<float>(t % 7 + 1);
    const float v[4] = {base, 2 * base, 3 * base, 4 * base};
    hector::trav::accumulateQuad(row + 4 * q, v);
  }
}

TEST(QuadAccumulate, AlignedFloatRowsOfWholeQuadsOnly) {
  // On the host (and the CPU kernels) never.
  float host[8] = {};
  EXPECT_FALSE(hector::trav::quadAccumulates(host, 8, false));
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  float *f = nullptr;
  double *d = nullptr;
  int *out = nullptr;
  ASSERT_EQ(cudaMalloc(&f, 128 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d, 128 * sizeof(double)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, 5 * sizeof(int)), cudaSuccess);
  whichQuads<<<1, 32>>>(f, d, out);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<int> got(5);
  ASSERT_EQ(cudaMemcpy(got.data(), out, 5 * sizeof(int),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(f);
  cudaFree(d);
  cudaFree(out);
  // Vector atomics need sm_90; the kernels were built for this device.
  const int sm90 = computeCapability() >= 9 ? 1 : 0;
  EXPECT_EQ(got, (std::vector<int>{sm90, 0, 0, 0, 0}));
}

TEST(QuadAccumulate, ConcurrentQuadsLoseNoAdd) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  constexpr int kRows = 5, kWidth = 64, kThreads = 256, kBlocks = 40;
  float *rows = nullptr;
  ASSERT_EQ(cudaMalloc(&rows, kRows * kWidth * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(rows, 0, kRows * kWidth * sizeof(float)), cudaSuccess);
  addQuads<<<kBlocks, kThreads>>>(rows, kRows, kWidth);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<float> got(kRows * kWidth);
  ASSERT_EQ(cudaMemcpy(got.data(), rows, got.size() * sizeof(float),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(rows);
  std::vector<double> base(kRows, 0.0);
  for (int t = 0; t < kThreads * kBlocks; ++t)
    base[t % kRows] += t % 7 + 1;
  // Sums of small integers stay exact in float.
  for (int r = 0; r < kRows; ++r)
    for (int e = 0; e < kWidth; ++e)
      ASSERT_EQ(got[r * kWidth + e], static_cast<float>(base[r] * (e % 4 + 1)))
          << "row " << r << ", element " << e;
}

} // namespace
