// What the GEMM template's benchmark programs share: a CUDA error check
// that exits, and the median time of a launch sequence.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

/// Prints the failing call and exits when `x` is not cudaSuccess.
#define CHECK_CUDA(x)                                                          \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,          \
                   cudaGetErrorString(e_));                                    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

/// Median time in ms of `fn` over 20 runs after 5 warm-up runs (CUDA
/// events on the default stream).
inline float timeMs(const std::function<void()> &fn) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  for (int i = 0; i < 5; ++i)
    fn();
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    CHECK_CUDA(cudaEventRecord(start));
    fn();
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  return ms[ms.size() / 2];
}
