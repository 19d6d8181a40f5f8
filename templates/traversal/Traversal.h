// Traversal.h: the traversal template's building blocks (hector.txt section
// 3.3, Algorithm 2), shared by the generated CUDA (kernels.cu) and C++
// (kernels_cpu.cpp) code. No torch and no CUDA runtime API here.
//
// The emitter (codegen/TraversalEmitter) prints each traversal instance as
// a loop nest over rows (edges, pairs, nodes, types). A row is handled by a
// thread group: a warp on the GPU, one thread on the CPU. Within a group,
// every statement is an element loop over its target row,
// HECTOR_FOR_ELEMENTS(i, n), in which element i always goes to the same
// lane (i mod 32 on the GPU), so per-element accumulators (segmented and
// partial-atomic reductions) need no synchronisation; values other lanes
// read (registers, kept in per-group scratch memory) are published by
// HECTOR_GROUP_SYNC() after each statement.
#pragma once

#include <cmath>
#include <cstdint>
#include <math.h>

#if defined(_OPENMP) && !defined(__CUDACC__)
#include <omp.h>
#endif

#if defined(__CUDACC__)
#define HECTOR_HD __host__ __device__ __forceinline__
/// Lanes per thread group on the GPU.
#define HECTOR_GROUP_SIZE 32
#define HECTOR_FOR_ELEMENTS(i, n)                                              \
  for (int64_t i = hector_lane; i < (n); i += HECTOR_GROUP_SIZE)
#define HECTOR_GROUP_SYNC() __syncwarp()
#else
#define HECTOR_HD inline
#define HECTOR_GROUP_SIZE 1
#define HECTOR_FOR_ELEMENTS(i, n) for (int64_t i = 0; i < (n); ++i)
#define HECTOR_GROUP_SYNC() ((void)0)
#endif

namespace hector::trav {

/// `*target += value` where several groups may add to the same element.
HECTOR_HD void atomicAddFloat(float *target, float value) {
#if defined(__CUDA_ARCH__)
  atomicAdd(target, value);
#elif defined(_OPENMP)
#pragma omp atomic
  *target += value;
#else
  *target += value;
#endif
}

// Elementwise functions of the IR's ops (docs/ir.md), in float.
HECTOR_HD float relu(float x) { return x > 0.f ? x : 0.f; }
HECTOR_HD float leakyRelu(float x, float slope) {
  return x > 0.f ? x : x * slope;
}
HECTOR_HD float sigmoid(float x) { return 1.f / (1.f + expf(-x)); }
/// Exact (erf) GELU, as torch.nn.functional.gelu's default.
HECTOR_HD float gelu(float x) {
  return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
}
HECTOR_HD float reluGrad(float x) { return x > 0.f ? 1.f : 0.f; }
HECTOR_HD float leakyReluGrad(float x, float slope) {
  return x > 0.f ? 1.f : slope;
}
/// d/dx x*Phi(x) = Phi(x) + x*phi(x).
HECTOR_HD float geluGrad(float x) {
  const float cdf = 0.5f * (1.f + erff(x * 0.70710678118654752f));
  const float pdf = expf(-0.5f * x * x) * 0.39894228040143268f;
  return cdf + x * pdf;
}
HECTOR_HD float eq(float a, float b) { return a == b ? 1.f : 0.f; }

/// The rows [begin, end) a thread group handles when `rows` rows are split
/// into contiguous chunks over `groups` groups (contiguous, so that
/// partial-atomic accumulators see runs of equal target rows).
struct RowRange {
  int64_t begin, end;
};
HECTOR_HD RowRange chunkOf(int64_t rows, int64_t group, int64_t groups) {
  const int64_t chunk = (rows + groups - 1) / groups;
  int64_t begin = group * chunk;
  if (begin > rows)
    begin = rows;
  int64_t end = begin + chunk;
  if (end > rows)
    end = rows;
  return {begin, end};
}

#if !defined(__CUDACC__)
/// The CPU kernels' thread group index and count (OpenMP threads).
inline int64_t cpuThreadNum() {
#if defined(_OPENMP)
  return omp_get_thread_num();
#else
  return 0;
#endif
}
inline int64_t cpuNumThreads() {
#if defined(_OPENMP)
  return omp_get_num_threads();
#else
  return 1;
#endif
}
#endif

} // namespace hector::trav
