// SegmentGemmRows.cuh: what every CUDA kernel of the GEMM template needs to
// find a logical row's id and weight slice (SegmentGemm.h, "Rows"), and the
// host-side checks their launchers share; and for outer mode, which rows a
// block sums and the grids that split them. Internal to templates/gemm: the
// kernels of SegmentGemm.cu (CUDA cores) and SegmentGemmMma.cu (tensor
// cores) include it; nothing outside does.
#pragma once

#include "templates/CudaHost.h"
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

/// Input k of head h of row id `id` in linear mode: X[src][h*K + k] (k
/// with xSharedByHeads) through the call's input op, or with summed rows
/// (sumPtr) the sum of that entry over the row's X rows (each times its weight
/// of head h, sumWeights at sumWeightRow), in order (src unused). For the
/// general kernels; the tensor-core kernel stages summed rows a 16-byte word at
/// a time.
template <typename T>
__device__ inline T inputAt(const SegmentGemmArgsT<T> &a, int64_t id,
                            int64_t src, int64_t h, int64_t k) {
  if (!a.sumPtr)
    return applyInputOp(a.inputOp, a.X[inputOffset(a, src, h) + k]);
  T v = T(0);
  for (int64_t j = a.sumPtr[id]; j < a.sumPtr[id + 1]; ++j) {
    const T x = a.X[inputOffset(a, a.sumRows[j], h) + k];
    v += a.sumWeights ? a.sumWeights[sumWeightRow(a, j) * a.H + h] * x : x;
  }
  return v;
}

/// Writes v to *p, or adds it (accumulate), or adds it atomically (atomic).
template <typename T>
__device__ inline void storeOut(T *p, T v, const SegmentGemmArgsT<T> &a) {
  if (a.atomic)
    atomicAdd(p, v);
  else if (a.accumulate)
    *p += v;
  else
    *p = v;
}

using templates::cuda_host::aligned16;

// Outer mode: which rows a block sums (the kernels' chunkRows and grids).

/// The slice of row r0, a chunk's first row: found in segmentPtr, or 0
/// (one slice).
template <typename T>
__device__ inline int64_t firstSliceOfChunk(const SegmentGemmArgsT<T> &a,
                                            int64_t r0) {
  return a.segmentPtr ? sliceOfRow(a, r0, r0) : 0;
}

/// The end of slice s's rows within a chunk ending at r1.
template <typename T>
__device__ inline int64_t sliceEndInChunk(const SegmentGemmArgsT<T> &a,
                                          int64_t s, int64_t r1) {
  if (!a.segmentPtr)
    return r1;
  const int64_t e = a.segmentPtr[s + 1];
  return e < r1 ? e : r1;
}

/// The rows an outer-mode block sums, given its kernel's per-slice
/// callbacks: clear() zeroes the accumulators, sumRows(s, h, first, end,
/// step) adds rows first, first + step, ... < end of slice s, store(s, h)
/// writes (or adds) them to dW[s][h]. rowBlock / rowBlocks: the block's
/// index and the grid's extent along rows. chunkRows > 0: blockIdx.y is
/// the head, and the block sums chunk rowBlock of chunkRows rows, once per
/// slice it covers. Else blockIdx.y is (slice, head), and the block sums
/// every rowBlocks-th tile of TR rows of that slice.
template <int TR, typename T, typename Clear, typename SumRows, typename Store>
__device__ inline void
sumOuterRows(const SegmentGemmArgsT<T> &a, int64_t chunkRows, int64_t rowBlock,
             int64_t rowBlocks, Clear clear, SumRows sumRows, Store store) {
  if (chunkRows > 0) {
    const int64_t h = blockIdx.y;
    const int64_t r0 = rowBlock * chunkRows;
    const int64_t r1 = r0 + chunkRows < a.M ? r0 + chunkRows : a.M;
    int64_t s = firstSliceOfChunk(a, r0);
    for (int64_t pos = r0; pos < r1 && s < a.numSlices; ++s) {
      const int64_t end = sliceEndInChunk(a, s, r1);
      if (end > pos) {
        clear();
        sumRows(s, h, pos, end, int64_t(TR));
        store(s, h);
        pos = end;
      }
    }
    return;
  }
  const int64_t s = blockIdx.y / a.H, h = blockIdx.y % a.H;
  int64_t begin = 0, end = a.M;
  if (a.segmentPtr) {
    begin = a.segmentPtr[s];
    end = a.segmentPtr[s + 1];
  } else if (!a.rowType && s > 0) {
    end = 0; // one shared slice: slices > 0 get no rows
  }
  clear();
  sumRows(s, h, begin + rowBlock * TR, end, rowBlocks * TR);
  store(s, h);
}

/// Outer mode, deterministic: one block owns each output element (the
/// launchers then keep one chunk per slice), which it adds to without an
/// atomic; its rows are summed in a fixed order within the block.
template <typename T>
SegmentGemmArgsT<T> singleWriter(const SegmentGemmArgsT<T> &a) {
  SegmentGemmArgsT<T> b = a;
  if (a.deterministic)
    b.atomic = false;
  return b;
}

/// Whether an outer GEMM splits all its rows into equal chunks (the
/// kernels' chunkRows > 0): when atomics may combine partial sums and the
/// rows are grouped by slice (segmentPtr, or one slice). rowType slices
/// interleave, so each of their blocks keeps one slice.
template <typename T> bool chunksAllRows(const SegmentGemmArgsT<T> &a) {
  return a.atomic && !a.deterministic && !a.rowType && a.M > 0;
}

/// Rows per chunk: about M / blocks, a multiple of TR, at least minRows
/// (each chunk's flush adds K x N atomics per slice it covers).
inline int64_t chunkRowsFor(int64_t M, int64_t blocks, int64_t TR,
                            int64_t minRows) {
  if (blocks < 1)
    blocks = 1;
  int64_t rows = (M + blocks - 1) / blocks;
  if (rows < minRows)
    rows = minRows;
  return (rows + TR - 1) / TR * TR;
}

/// The grid of a row-tile outer kernel (outerVecKernel, outerNarrowKernel,
/// outerDotKernel, outerMmaKernel, which adds z for its windows: blocks of
/// TR-row tiles, x = chunks, y = heads or slices x heads), given
/// its resident blocks. With chunksAllRows, `waves` waves of row chunks
/// shared by the heads (chunkRows > 0, the kernel's argument); else a
/// column of blocks per (slice, head), and for atomic rowType sums enough
/// of them to fill the GPU once (at most the slice's average row tiles),
/// with chunkRows 0 (the kernel then takes singleWriter's arguments).
struct RowTileGrid {
  dim3 grid;
  int64_t chunkRows = 0;
};

inline cudaError_t rowTileGrid(const SegmentGemmArgs &a, int64_t resident,
                               int64_t waves, int64_t TR, RowTileGrid *out) {
  if (chunksAllRows(a)) {
    if (a.H > 65535)
      return cudaErrorInvalidConfiguration;
    out->chunkRows = chunkRowsFor(a.M, waves * resident / a.H, TR, 4 * TR);
    out->grid = dim3{unsigned((a.M + out->chunkRows - 1) / out->chunkRows),
                     unsigned(a.H)};
    return cudaSuccess;
  }
  const int64_t sliceHeads = a.numSlices * a.H;
  if (sliceHeads > 65535)
    return cudaErrorInvalidConfiguration;
  int64_t chunks = 1;
  if (a.atomic && !a.deterministic) {
    const int64_t rowsPerSlice = (a.M + a.numSlices - 1) / a.numSlices;
    const int64_t tiles = (rowsPerSlice + TR - 1) / TR;
    chunks = (resident + sliceHeads - 1) / sliceHeads;
    if (chunks > tiles)
      chunks = tiles;
    if (chunks < 1)
      chunks = 1;
  }
  out->chunkRows = 0;
  out->grid = dim3{unsigned(chunks), unsigned(sliceHeads)};
  return cudaSuccess;
}

} // namespace hector::templates::gemm_rows
