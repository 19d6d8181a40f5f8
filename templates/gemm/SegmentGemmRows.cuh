// SegmentGemmRows.cuh: what every CUDA kernel of the GEMM template needs to
// find a logical row's id and weight slice (SegmentGemm.h, "Rows"), and the
// host-side checks their launchers share. Internal to templates/gemm: the
// kernels of SegmentGemm.cu (CUDA cores) and SegmentGemmMma.cu (tensor
// cores) include it; nothing outside does.
#pragma once

#include "templates/gemm/SegmentGemm.h"

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

namespace hector::templates::gemm_rows {

/// Returns the error of `expr` from the enclosing function when it fails.
#define HECTOR_CUDA_TRY(expr)                                                  \
  do {                                                                         \
    cudaError_t err_ = (expr);                                                 \
    if (err_ != cudaSuccess)                                                   \
      return err_;                                                             \
  } while (0)

/// A slice number no row has (rows past M, rows of no pass yet).
constexpr unsigned long long kNoSlice = ULLONG_MAX;

/// Row id of logical row r < M (SegmentGemm.h).
template <typename T>
__device__ __forceinline__ int64_t rowIdOf(const SegmentGemmArgsT<T> &a,
                                           int64_t r) {
  return a.rowIds ? a.rowIds[r] : r;
}

/// Slice of logical row r with row id `id`: rowType is indexed by the id,
/// segments are over r.
template <typename T>
__device__ inline int64_t sliceOfRow(const SegmentGemmArgsT<T> &a, int64_t r,
                                     int64_t id) {
  if (a.rowType)
    return a.rowType[id];
  if (a.segmentPtr) {
    // Last s with ptr[s] <= r (empty segments share a start; take the last).
    int64_t lo = 0, hi = a.numSlices; // invariant: ptr[lo] <= r < ptr[hi]
    while (hi - lo > 1) {
      const int64_t mid = (lo + hi) / 2;
      if (a.segmentPtr[mid] <= r)
        lo = mid;
      else
        hi = mid;
    }
    return lo;
  }
  return 0;
}

/// Whether a host-held device pointer is on a 16-byte boundary (the
/// vectorised kernels move rows as 16-byte words).
inline bool hostAligned16(const void *p) {
  return (reinterpret_cast<uintptr_t>(p) & 15) == 0;
}

} // namespace hector::templates::gemm_rows
