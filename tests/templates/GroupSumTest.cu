// templates/traversal/Traversal.h groupSum on the GPU: the sum over a
// group's lanes reaches every lane of the group and no other, for groups
// of 2 to 32 lanes, while the warp's other groups are elsewhere (a group
// that skips its row, or sums twice as often): the generated kernels call
// it for one group's row while the warp's other groups walk other rows.
#include "templates/traversal/Traversal.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace {

bool haveDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

/// Thread t holds t + 1. Group j of every warp sums (j % 3) times: not at
/// all, once, or twice (the second time over the first sums).
template <int G> __global__ void groupSums(float *out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int group = (threadIdx.x % hector::trav::kWarpSize) / G;
  float v = static_cast<float>(t + 1);
  for (int k = 0; k < group % 3; ++k)
    v = hector::trav::groupSum<G>(v);
  out[t] = v;
}

template <int G> void expectGroupSums() {
  constexpr int kThreads = 128, kBlocks = 2, n = kThreads * kBlocks;
  float *d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, n * sizeof(float)), cudaSuccess);
  groupSums<G><<<kBlocks, kThreads>>>(d);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<float> got(n);
  ASSERT_EQ(cudaMemcpy(got.data(), d, n * sizeof(float),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(d);
  for (int t = 0; t < n; ++t) {
    const int first = t / G * G;
    const int group = (t % hector::trav::kWarpSize) / G;
    float sum = 0;
    for (int u = first; u < first + G; ++u)
      sum += static_cast<float>(u + 1);
    const float want = group % 3 == 0   ? static_cast<float>(t + 1)
                       : group % 3 == 1 ? sum
                                        : sum * G;
    ASSERT_EQ(got[t], want) << "group size " << G << ", thread " << t;
  }
}

TEST(GroupSum, SumsEachGroupAloneWhileOtherGroupsDiverge) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  expectGroupSums<2>();
  expectGroupSums<4>();
  expectGroupSums<8>();
  expectGroupSums<16>();
  expectGroupSums<32>();
}

} // namespace
