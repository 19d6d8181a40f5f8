// templates/traversal/Traversal.h groupSum on the GPU: the sum over a
// group's lanes reaches every lane of the group and no other, for groups
// of 2 to 32 lanes, while the warp's other groups are elsewhere (a group
// that skips its row, or sums twice as often): the generated kernels call
// it for one group's row while the warp's other groups walk other rows.
#include "templates/traversal/Traversal.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
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

/// foldSum and foldMax over runs of `lanes` lanes inside groups of G
/// lanes, the same way: group j of a warp folds (j % 3) times while the
/// warp's other groups are elsewhere (the worker folds of a node-row
/// kernel whose warp holds two rows, docs/perf-notes.md section 42).
template <int G> __global__ void groupFolds(float *sums, float *maxes,
                                           int lanes) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int group = (threadIdx.x % hector::trav::kWarpSize) / G;
  float s = static_cast<float>(t + 1), m = static_cast<float>(t % 7);
  for (int k = 0; k < group % 3; ++k) {
    s = hector::trav::foldSum<G>(s, lanes);
    m = hector::trav::foldMax<G>(m, lanes);
  }
  sums[t] = s;
  maxes[t] = m;
}

template <int G> void expectGroupFolds(int lanes) {
  constexpr int kThreads = 128, kBlocks = 2, n = kThreads * kBlocks;
  float *d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 2 * n * sizeof(float)), cudaSuccess);
  groupFolds<G><<<kBlocks, kThreads>>>(d, d + n, lanes);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<float> got(2 * n);
  ASSERT_EQ(cudaMemcpy(got.data(), d, 2 * n * sizeof(float),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(d);
  for (int t = 0; t < n; ++t) {
    const int first = t / lanes * lanes;
    const int folds = ((t % hector::trav::kWarpSize) / G) % 3;
    float sum = 0, max = 0;
    for (int u = first; u < first + lanes; ++u) {
      sum += static_cast<float>(u + 1);
      max = std::max(max, static_cast<float>(u % 7));
    }
    const float wantSum = folds == 0   ? static_cast<float>(t + 1)
                          : folds == 1 ? sum
                                       : sum * lanes;
    const float wantMax = folds == 0 ? static_cast<float>(t % 7) : max;
    ASSERT_EQ(got[t], wantSum) << "G " << G << ", lanes " << lanes
                               << ", thread " << t;
    ASSERT_EQ(got[n + t], wantMax) << "G " << G << ", lanes " << lanes
                                   << ", thread " << t;
  }
}

TEST(GroupSum, FoldsStayInTheirGroupWhileOtherGroupsDiverge) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  expectGroupFolds<16>(16);
  expectGroupFolds<16>(8);
  expectGroupFolds<16>(1);
  expectGroupFolds<8>(4);
  expectGroupFolds<32>(32);
}

/// takeRow: each group of G lanes takes its own rows off one queue, every
/// lane of the group gets the group's row, and the groups take as many
/// rows between them as they ask for (each group asks group % 3 + 1
/// times, the warp's groups apart).
template <int G> __global__ void groupRows(unsigned long long *next,
                                           long long *rows) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int group = (threadIdx.x % hector::trav::kWarpSize) / G;
  const hector::trav::RowQueue q{next};
  long long last = -1;
  for (int k = 0; k <= group % 3; ++k)
    last = hector::trav::takeRow<G>(q);
  rows[t] = last;
}

template <int G> void expectGroupRows() {
  constexpr int kThreads = 128, kBlocks = 2, n = kThreads * kBlocks;
  unsigned long long *next = nullptr;
  long long *rows = nullptr;
  ASSERT_EQ(cudaMalloc(&next, sizeof(*next)), cudaSuccess);
  ASSERT_EQ(cudaMemset(next, 0, sizeof(*next)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&rows, n * sizeof(long long)), cudaSuccess);
  groupRows<G><<<kBlocks, kThreads>>>(next, rows);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<long long> got(n);
  unsigned long long taken = 0;
  ASSERT_EQ(cudaMemcpy(got.data(), rows, n * sizeof(long long),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&taken, next, sizeof(taken), cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(next);
  cudaFree(rows);
  unsigned long long asked = 0;
  std::vector<bool> seen(n, false);
  for (int t = 0; t < n; t += G) {
    asked += ((t % hector::trav::kWarpSize) / G) % 3 + 1;
    for (int u = t; u < t + G; ++u)
      ASSERT_EQ(got[u], got[t]) << "G " << G << ", thread " << u;
    ASSERT_GE(got[t], 0);
    ASSERT_LT(got[t], n);
    ASSERT_FALSE(seen[got[t]]) << "row " << got[t] << " taken twice";
    seen[got[t]] = true;
  }
  EXPECT_EQ(taken, asked) << "G " << G;
}

TEST(GroupSum, EachGroupTakesItsOwnRowsOffTheQueue) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  expectGroupRows<16>();
  expectGroupRows<32>();
}

} // namespace
