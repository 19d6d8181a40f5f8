// The CUDA implementation of the segment-MM GEMM template.
//
// Linear mode: a block owns one (tile of TM rows, tile of TN columns, head)
// of the output and keeps an RM x RN register tile per thread (coarsening).
// The weight slice is looked up per row, not per tile: the block first
// records each of its rows' slice in shared memory, then runs one tiled
// K loop per distinct slice among its rows, in increasing slice order, with
// the rows of the other slices loaded as zeros. The accumulators carry over
// between passes, so the epilogue and the store run once. With segmentPtr
// (rows sorted by slice) only the <= S-1 tiles that straddle a segment
// boundary do more than one pass; with rowType a tile does one pass per
// distinct type among its rows (sorted rows are fast, unsorted ones are
// correct). This needs no host sync, no scratch buffer, and no per-segment
// launch. Gather, scatter, transpose and the epilogue are applied on the
// fly; atomicAdd is used only when args.atomic.
//
// Row ids (args.rowIds): a row tile, a segment and the per-block row range
// are over logical rows r; each row's id is looked up once where the row is
// staged (and again in the linear epilogue for scatter / scaleGather) and
// indexes gather, scatter, scaleGather, gatherB and rowType. Without rowIds
// the lookup is a uniform branch and no load.
//
// Outer mode: a block owns one (tile of K, tile of N) of dW[s][h] and sums
// the outer products of rows in steps of TR rows. Without atomic (or in
// deterministic mode) each tile of a slice is summed by one block. With
// atomic and rows grouped by slice (segmentPtr, or one slice), the blocks
// split all M rows into equal chunks whatever the slices' sizes, and a
// block adds its partial sum to dW[s] with atomics each time its chunk
// crosses a segment boundary: relation sizes follow a power law, and a
// split per slice left one block summing most of the rows of the largest.
// With rowType every block scans all M rows and keeps those of its slice.
//
// Tensor cores first: float linear calls with K and N multiples of 8, K <=
// 64 and N <= 256 (aligned X, W and Y) on sm_80 or newer take
// SegmentGemmMma.cu's kernel, whose products are as exact as fp32 ones
// unless args.tf32 allows TF32 (SegmentGemmMma.h).
//
// Fast paths (K and N multiples of 4, both <= 64, X and Y / B 16-byte
// aligned, with or without row ids; linear calls with X and W in their
// per-head layouts, perHeadLayouts): linearVecKernel and outerVecKernel
// below move rows as float4, keep the whole weight slice in shared memory
// (linear) or the whole dW slice in registers (outer), and run one resident
// wave of blocks that loop over row tiles. Products and outer sums with
// one side under 4 and the other at most 128 (attention scores and their
// gradients) take linearNarrowKernel and outerNarrowKernel: a warp takes
// whole rows, four at a time. Everything else takes the general kernels.
//
// Scalar types: the general kernels are templates over T (float or double)
// and accumulate in T; the double calls (SegmentGemmArgsT<double>) always
// take them, with atomicAdd(double *) when atomic. The fast paths are float
// only.
#include "templates/DeviceQueries.h"
#include "templates/gemm/DenseRowsMma.h"
#include "templates/gemm/SegmentGemmCuda.h"
#include "templates/gemm/SegmentGemmMma.h"
#include "templates/gemm/SegmentGemmRows.cuh"
#include "templates/traversal/HostSwitches.h"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <type_traits>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600
#error "the GEMM template needs sm_60 or newer (atomicAdd on double)"
#endif

namespace hector::templates {
namespace {

using gemm_rows::aligned16;
using gemm_rows::chunkRowsFor;
using gemm_rows::chunksAllRows;
using gemm_rows::inputAt;
using gemm_rows::kNoSlice;
using gemm_rows::rowIdOf;
using gemm_rows::RowTileGrid;
using gemm_rows::rowTileGrid;
using gemm_rows::singleWriter;
using gemm_rows::sliceOfRow;
using gemm_rows::storeOut;
using gemm_rows::sumOuterRows;

/// acc[i][j] += a[ty + i*TY] * b[tx + j*TX]: one rank-1 update of a
/// thread's RA x RB register tile from one row of each shared-memory tile
/// (strided so that a warp's threads read consecutive shared words).
template <int RA, int RB, int TY, int TX, typename T>
__device__ __forceinline__ void rank1Update(T (&acc)[RA][RB], const T *a,
                                            const T *b, int ty, int tx) {
  T av[RA], bv[RB];
#pragma unroll
  for (int i = 0; i < RA; ++i)
    av[i] = a[ty + i * TY];
#pragma unroll
  for (int j = 0; j < RB; ++j)
    bv[j] = b[tx + j * TX];
#pragma unroll
  for (int i = 0; i < RA; ++i)
#pragma unroll
    for (int j = 0; j < RB; ++j)
      acc[i][j] += av[i] * bv[j];
}

template <typename T, int TM, int TN, int TK, int RM, int RN>
__global__ void __launch_bounds__((TM / RM) * (TN / RN))
    linearKernel(const SegmentGemmArgsT<T> a) {
  constexpr int TX = TN / RN, TY = TM / RM, NT = TX * TY;
  __shared__ T As[TK][TM + 1];
  __shared__ T Ws[TK][TN + 1];
  __shared__ int64_t srcRow[TM];               // -1: row out of range
  __shared__ int64_t idRow[TM];                // summed rows: the row id
  __shared__ unsigned long long sliceRow[TM];
  __shared__ unsigned long long nextSlice;

  const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
  const int64_t row0 = int64_t(blockIdx.x) * TM;
  const int64_t col0 = int64_t(blockIdx.y) * TN;
  const int64_t h = blockIdx.z;
  const int64_t K = a.K, N = a.N, H = a.H;

  for (int i = tid; i < TM; i += NT) {
    const int64_t r = row0 + i;
    if (r < a.M) {
      const int64_t id = rowIdOf(a, r);
      srcRow[i] = a.gather ? a.gather[id] : id;
      idRow[i] = id;
      sliceRow[i] = static_cast<unsigned long long>(sliceOfRow(a, r, id));
    } else {
      srcRow[i] = -1;
      sliceRow[i] = kNoSlice;
    }
  }

  T acc[RM][RN];
#pragma unroll
  for (int i = 0; i < RM; ++i)
#pragma unroll
    for (int j = 0; j < RN; ++j)
      acc[i][j] = T(0);

  unsigned long long lowest = 0; // slices below this are done
  for (;;) {
    if (tid == 0)
      nextSlice = kNoSlice;
    __syncthreads();
    for (int i = tid; i < TM; i += NT)
      if (srcRow[i] >= 0 && sliceRow[i] >= lowest)
        atomicMin(&nextSlice, sliceRow[i]);
    __syncthreads();
    const unsigned long long s = nextSlice;
    // Everyone has read nextSlice before thread 0 resets it.
    __syncthreads();
    if (s == kNoSlice)
      break;
    lowest = s + 1;
    const T *w = weightOf(a, int64_t(s), h);
    const int64_t ldw = weightRowStride(a);

    for (int64_t k0 = 0; k0 < K; k0 += TK) {
      // X tile: consecutive threads read consecutive k of one row.
      for (int e = tid; e < TM * TK; e += NT) {
        const int m = e / TK, kk = e % TK;
        const int64_t k = k0 + kk;
        T v = T(0);
        if (k < K && srcRow[m] >= 0 && sliceRow[m] == s)
          v = inputAt(a, idRow[m], srcRow[m], h, k);
        As[kk][m] = v;
      }
      // W tile: read along the contiguous dimension of either layout.
      if (!a.transposeW) {
        for (int e = tid; e < TK * TN; e += NT) {
          const int kk = e / TN, n = e % TN;
          const int64_t k = k0 + kk, col = col0 + n;
          Ws[kk][n] = (k < K && col < N) ? w[k * ldw + col] : T(0);
        }
      } else {
        for (int e = tid; e < TK * TN; e += NT) {
          const int n = e / TK, kk = e % TK;
          const int64_t k = k0 + kk, col = col0 + n;
          Ws[kk][n] = (k < K && col < N) ? w[col * K + k] : T(0);
        }
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < TK; ++kk)
        rank1Update<RM, RN, TY, TX>(acc, As[kk], Ws[kk], ty, tx);
      __syncthreads();
    }
  }

  // Epilogue and store, from registers.
#pragma unroll
  for (int i = 0; i < RM; ++i) {
    const int m = ty + i * TY;
    const int64_t r = row0 + m;
    if (r >= a.M)
      continue;
    const int64_t id = rowIdOf(a, r);
    T scale = T(1);
    if (a.epilogue != EpilogueOp::None) {
      const int64_t sr = a.scaleGather ? a.scaleGather[id] : id;
      scale = a.scale[a.scalePerHead ? sr * H + h : sr];
    }
    const int64_t dst = a.scatter ? a.scatter[id] : id;
#pragma unroll
    for (int j = 0; j < RN; ++j) {
      const int64_t col = col0 + tx + j * TX;
      if (col >= N)
        continue;
      T v = acc[i][j] + biasAt(a, int64_t(sliceRow[m]), h, col);
      if (a.epilogue == EpilogueOp::Mul)
        v *= scale;
      else if (a.epilogue == EpilogueOp::Div)
        v /= scale;
      if (a.mixRows) {
        const T g = mixGateAt(a, int64_t(sliceRow[m]));
        v = g * v + (T(1) - g) * a.mixRows[(dst * H + h) * N + col];
      }
      storeOut(outputAt(a, dst, h, col), v, a);
    }
  }
}

/// Row id's value at output column (h, n) of slice s: its input (input(k),
/// k in order) times the slice's weight column, plus the bias, through the
/// epilogue. Both ordered kernels compute a value this way, so that they
/// agree bit for bit.
template <typename T, typename Input>
__device__ T orderedRowValue(const SegmentGemmArgsT<T> &a, int64_t id,
                             int64_t s, int64_t h, int64_t n, Input input) {
  const int64_t K = a.K, H = a.H, ldw = weightRowStride(a);
  const T *w = weightOf(a, s, h);
  T v = T(0);
  for (int64_t k = 0; k < K; ++k)
    v += input(k) * (a.transposeW ? w[n * K + k] : w[k * ldw + n]);
  v += biasAt(a, s, h, n);
  if (a.epilogue != EpilogueOp::None) {
    const int64_t sr = a.scaleGather ? a.scaleGather[id] : id;
    const T scale = a.scale[a.scalePerHead ? sr * H + h : sr];
    v = a.epilogue == EpilogueOp::Mul ? v * scale : v / scale;
  }
  return v;
}

/// Linear mode with `atomic` and `deterministic`, in place (calls with
/// rowIds, or without their workspace: launchLinearOrdered): one thread per
/// output column (h, n) adds every row's value into its scatter row in
/// logical row order, so colliding rows are summed in the same order on
/// every run and no atomics are needed (no two threads share a column).
template <typename T>
__global__ void __launch_bounds__(128)
    linearOrderedKernel(const SegmentGemmArgsT<T> a) {
  const int64_t N = a.N, H = a.H;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < H * N;
       c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t h = c / N, n = c % N;
    for (int64_t r = 0; r < a.M; ++r) {
      const int64_t id = rowIdOf(a, r);
      const int64_t src = a.gather ? a.gather[id] : id;
      const int64_t dst = a.scatter ? a.scatter[id] : id;
      a.Y[dst * H * N + h * N + n] +=
          orderedRowValue(a, id, sliceOfRow(a, r, id), h, n,
                          [&](int64_t k) { return inputAt(a, id, src, h, k); });
    }
  }
}

/// Rows a block of linearOrderedRunsKernel computes at once: one a warp.
constexpr int kOrderedRunsWarps = 8;

/// The same sums for rows sorted by output row within each segment
/// (scatterSortedInSegments), one launch per segment s, in segment order.
/// A block takes whole runs of rows with one output row (its share of the
/// segment's rows, both ends moved forward to run starts), so no other
/// block touches its output rows. It goes through its rows a batch at a
/// time: each warp stages one row's input (the sum of its entries, or its
/// gathered row) in shared memory and computes the row's values as
/// linearOrderedKernel does; then the block adds the batch's values into
/// the output in row order. Each output element thus gets its rows'
/// values in (segment, row) order: the ordered kernel's bits, without 64
/// threads walking every row (am's summed RGCN messages, 1.8M rows: about
/// a second a call), and without a hub's run of chunks computed one row
/// at a time.
template <typename T>
__global__ void __launch_bounds__(32 * kOrderedRunsWarps)
    linearOrderedRunsKernel(const SegmentGemmArgsT<T> a, int64_t s) {
  extern __shared__ unsigned char orderedRunsSmem[];
  const int64_t first = a.segmentPtr[s], end = a.segmentPtr[s + 1];
  const int64_t K = a.K, N = a.N, H = a.H, rows = end - first;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Per warp: its row's H * K inputs, then its row's H * N values.
  T *const xs = reinterpret_cast<T *>(orderedRunsSmem) + warp * H * (K + N);
  T *const values = xs + H * K;
  // The first run start at or after r.
  auto runStart = [&](int64_t r) {
    while (r > first && r < end && a.scatter[r] == a.scatter[r - 1])
      ++r;
    return r;
  };
  const int64_t r0 = runStart(first + rows * blockIdx.x / gridDim.x);
  const int64_t r1 = runStart(first + rows * (blockIdx.x + 1) / gridDim.x);
  for (int64_t batch = r0; batch < r1; batch += kOrderedRunsWarps) {
    const int64_t q = batch + warp;
    if (q < r1) {
      const int64_t src = a.gather ? a.gather[q] : q;
      for (int64_t i = lane; i < H * K; i += 32)
        xs[i] = inputAt(a, q, src, i / K, i % K);
      __syncwarp();
      for (int64_t c = lane; c < H * N; c += 32) {
        const int64_t h = c / N;
        values[c] = orderedRowValue(a, q, s, h, c % N,
                                    [&](int64_t k) { return xs[h * K + k]; });
      }
    }
    __syncthreads();
    const int batchRows = int(min(int64_t(kOrderedRunsWarps), r1 - batch));
    const T *const batchValues = reinterpret_cast<T *>(orderedRunsSmem) + H * K;
    for (int64_t c = threadIdx.x; c < H * N; c += blockDim.x)
      for (int w = 0; w < batchRows; ++w)
        a.Y[a.scatter[batch + w] * H * N + c] +=
            batchValues[w * H * (K + N) + c];
    __syncthreads(); // the warps stage the next batch
  }
}

/// Columns of an output row a warp of addRowsInOrderKernel holds at once.
constexpr int kOrderedAddCols = 128;

/// The second phase of launchLinearOrderedWithWorkspace: output row d gets
/// Y[d] + values[row[p]] + values[row[p + 1]] + ..., over the positions p
/// of a run of equal dst[p] (dst sorted, row in logical row order within a
/// run), added in that order. A warp takes an equal share of the
/// positions and finishes every run that starts in it; a lane holds
/// columns lane, lane + 32, ... of kOrderedAddCols at a time.
template <typename T>
__global__ void __launch_bounds__(256)
    addRowsInOrderKernel(T *Y, const T *values, const int64_t *dst,
                         const int64_t *row, int64_t M, int64_t width) {
  constexpr int kLaneCols = kOrderedAddCols / 32;
  const int lane = threadIdx.x % 32;
  const int64_t warp = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int64_t warps = int64_t(gridDim.x) * blockDim.x / 32;
  int64_t p = M * warp / warps;
  const int64_t shareEnd = M * (warp + 1) / warps;
  while (p > 0 && p < shareEnd && dst[p] == dst[p - 1])
    ++p; // the warp before finishes this run
  while (p < shareEnd) {
    const int64_t d = dst[p];
    int64_t q = p;
    for (int64_t c0 = 0; c0 < width; c0 += kOrderedAddCols) {
      T acc[kLaneCols];
#pragma unroll
      for (int i = 0; i < kLaneCols; ++i) {
        const int64_t c = c0 + lane + 32 * i;
        acc[i] = c < width ? Y[d * width + c] : T(0);
      }
      for (q = p; q < M && dst[q] == d; ++q) {
        const T *v = values + row[q] * width;
#pragma unroll
        for (int i = 0; i < kLaneCols; ++i) {
          const int64_t c = c0 + lane + 32 * i;
          if (c < width)
            acc[i] += v[c];
        }
      }
#pragma unroll
      for (int i = 0; i < kLaneCols; ++i) {
        const int64_t c = c0 + lane + 32 * i;
        if (c < width)
          Y[d * width + c] = acc[i];
      }
    }
    p = q;
  }
}

__global__ void iotaKernel(int64_t *out, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = i;
}

/// Whether the deterministic path may allocate its workspace
/// (setDeterministicWorkspaceForTesting).
std::atomic<bool> deterministicWorkspaceAllowed{true};

template <typename T>
cudaError_t launch(const SegmentGemmArgsT<T> &a, cudaStream_t stream);

/// Linear with `atomic` and `deterministic`, rows in id order (no rowIds):
/// every row's value (its product, bias and epilogue) is computed by the
/// ordinary kernels into a workspace, without scatter, so on the tensor
/// cores where the shape allows; the rows' output rows are sorted with
/// their row numbers (a stable radix sort); then each output row adds its
/// rows' values in logical row order (addRowsInOrderKernel). That is the
/// order linearOrderedKernel adds in, at the speed of the ordinary
/// kernels, a sort and one pass over the values: the in-place kernels
/// above took am's summed RGCN messages 22 ms (runs) to a second (one
/// thread a column walking all rows; every other atomic GEMM, such as the
/// backward's, took that one). The workspace (the values, the sort's arrays and its scratch)
/// comes from cudaMallocAsync on the call's stream and goes back on it.
/// Returns cudaErrorMemoryAllocation, with no work enqueued, when it
/// cannot be had; the caller then adds in place.
template <typename T>
cudaError_t launchLinearOrderedWithWorkspace(const SegmentGemmArgsT<T> &a,
                                             cudaStream_t stream) {
  const int64_t M = a.M, width = a.H * a.N;
  auto aligned = [](size_t bytes) { return (bytes + 255) / 256 * 256; };
  const size_t valueBytes = aligned(size_t(M) * size_t(width) * sizeof(T));
  const size_t indexBytes = aligned(size_t(M) * sizeof(int64_t));
  size_t sortBytes = 0;
  HECTOR_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
      nullptr, sortBytes, a.scatter, static_cast<int64_t *>(nullptr),
      static_cast<const int64_t *>(nullptr), static_cast<int64_t *>(nullptr),
      int(M), 0, int(sizeof(int64_t) * 8), stream));
  void *base = nullptr;
  if (cudaMallocAsync(&base, valueBytes + 3 * indexBytes + aligned(sortBytes),
                      stream) != cudaSuccess) {
    (void)cudaGetLastError(); // the caller falls back; clear the error
    return cudaErrorMemoryAllocation;
  }
  char *at = static_cast<char *>(base);
  T *values = reinterpret_cast<T *>(at);
  int64_t *dstSorted = reinterpret_cast<int64_t *>(at + valueBytes);
  int64_t *rows = reinterpret_cast<int64_t *>(at + valueBytes + indexBytes);
  int64_t *rowsSorted =
      reinterpret_cast<int64_t *>(at + valueBytes + 2 * indexBytes);
  void *sortScratch = at + valueBytes + 3 * indexBytes;

  SegmentGemmArgsT<T> each = a; // every row's value into its own row
  each.Y = values;
  each.scatter = nullptr;
  each.accumulate = each.atomic = each.deterministic = false;
  each.scatterSortedInSegments = false;
  cudaError_t err = launch(each, stream);
  const unsigned blocks =
      unsigned(std::clamp<int64_t>((M + 255) / 256, 1, 4096));
  if (err == cudaSuccess) {
    iotaKernel<<<blocks, 256, 0, stream>>>(rows, M);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess)
    err = cub::DeviceRadixSort::SortPairs(sortScratch, sortBytes, a.scatter,
                                          dstSorted, rows, rowsSorted, int(M),
                                          0, int(sizeof(int64_t) * 8), stream);
  if (err == cudaSuccess) {
    addRowsInOrderKernel<T><<<blocks, 256, 0, stream>>>(a.Y, values, dstSorted,
                                                        rowsSorted, M, width);
    err = cudaGetLastError();
  }
  const cudaError_t freed = cudaFreeAsync(base, stream);
  return err != cudaSuccess ? err : freed;
}

template <typename T>
cudaError_t launchLinearOrdered(const SegmentGemmArgsT<T> &a,
                                cudaStream_t stream) {
  if (!a.rowIds && a.scatter && a.M <= INT_MAX &&
      deterministicWorkspaceAllowed.load(std::memory_order_relaxed)) {
    const cudaError_t err = launchLinearOrderedWithWorkspace(a, stream);
    if (err != cudaErrorMemoryAllocation)
      return err;
  }
  const size_t runsSmem =
      size_t(kOrderedRunsWarps * a.H * (a.K + a.N)) * sizeof(T);
  if (a.scatterSortedInSegments && a.segmentPtr && a.scatter && !a.rowIds &&
      runsSmem <= 48 * 1024) {
    // About 64 rows a block; blocks past a small segment's rows find an
    // empty share and return.
    const int64_t blocks = std::clamp<int64_t>((a.M + 63) / 64, 1, 2048);
    for (int64_t s = 0; s < a.numSlices; ++s) {
      linearOrderedRunsKernel<T><<<unsigned(blocks), 32 * kOrderedRunsWarps,
                                   runsSmem, stream>>>(a, s);
      HECTOR_CUDA_TRY(cudaGetLastError());
    }
    return cudaSuccess;
  }
  const int64_t columns = a.H * a.N;
  const int64_t blocks = (columns + 127) / 128;
  if (blocks > INT_MAX)
    return cudaErrorInvalidConfiguration;
  linearOrderedKernel<T><<<unsigned(blocks), 128, 0, stream>>>(a);
  return cudaGetLastError();
}

// Outer mode: output tile TKO x TN of dW[s][h]; TR rows per step.
// chunkRows == 0: blockIdx.y is (slice, head) and blockIdx.z splits the
// slice's rows (atomic) or is 0. chunkRows > 0 (atomic, rows grouped by
// slice): blockIdx.y is the head and blockIdx.z the chunk of chunkRows
// rows, flushed to each slice it covers.
template <typename T, int TKO, int TN, int TR, int RK, int RN>
__global__ void __launch_bounds__((TKO / RK) * (TN / RN))
    outerKernel(const SegmentGemmArgsT<T> a, int64_t kTiles,
                int64_t chunkRows) {
  constexpr int TX = TN / RN, TY = TKO / RK, NT = TX * TY;
  __shared__ T As[TR][TKO + 1];
  __shared__ T Bs[TR][TN + 1];
  __shared__ int64_t rowA[TR], rowB[TR]; // -1: not a row of this slice

  const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
  const int64_t K = a.K, N = a.N, H = a.H;
  const int64_t k0 = (int64_t(blockIdx.x) % kTiles) * TKO;
  const int64_t n0 = (int64_t(blockIdx.x) / kTiles) * TN;

  T acc[RK][RN];
  // Adds the rows first, first + step, ... < end of slice s to acc.
  auto sumRows = [&](int64_t s, int64_t h, int64_t first, int64_t end,
                     int64_t step) {
    for (int64_t base = first; base < end; base += step) {
      for (int i = tid; i < TR; i += NT) {
        const int64_t r = base + i;
        const int64_t id = r < end ? rowIdOf(a, r) : -1;
        const bool mine = id >= 0 && (!a.rowType || a.rowType[id] == s);
        rowA[i] = mine ? (a.gather ? a.gather[id] : id) : -1;
        rowB[i] = mine ? (a.gatherB ? a.gatherB[id] : id) : -1;
      }
      __syncthreads();
      for (int e = tid; e < TR * TKO; e += NT) {
        const int i = e / TKO, kk = e % TKO;
        const int64_t k = k0 + kk;
        As[i][kk] =
            (rowA[i] >= 0 && k < K) ? a.X[rowA[i] * H * K + h * K + k] : T(0);
      }
      for (int e = tid; e < TR * TN; e += NT) {
        const int i = e / TN, n = e % TN;
        const int64_t col = n0 + n;
        Bs[i][n] = (rowB[i] >= 0 && col < N)
                       ? a.B[rowB[i] * H * N + h * N + col]
                       : T(0);
      }
      __syncthreads();
#pragma unroll
      for (int i = 0; i < TR; ++i)
        rank1Update<RK, RN, TY, TX>(acc, As[i], Bs[i], ty, tx);
      __syncthreads();
    }
  };
  auto clear = [&] {
#pragma unroll
    for (int i = 0; i < RK; ++i)
#pragma unroll
      for (int j = 0; j < RN; ++j)
        acc[i][j] = T(0);
  };
  auto store = [&](int64_t s, int64_t h) {
    T *dw = a.dW + (s * H + h) * K * N;
#pragma unroll
    for (int p = 0; p < RK; ++p) {
      const int64_t k = k0 + ty + p * TY;
      if (k >= K)
        continue;
#pragma unroll
      for (int q = 0; q < RN; ++q) {
        const int64_t n = n0 + tx + q * TX;
        if (n >= N)
          continue;
        storeOut(a.transposeW ? dw + n * K + k : dw + k * N + n, acc[p][q],
                 a);
      }
    }
  };

  sumOuterRows<TR>(a, chunkRows, blockIdx.z, gridDim.z, clear, sumRows,
                   store);
}

// ---------------------------------------------------------------------------
// Vectorized fast paths, float only (K, N multiples of 4 and at most 64;
// X, Y / B 16-byte aligned). Every row of X, Y and B then starts 16-byte
// aligned (rows are H*K or H*N floats, head offsets h*K or h*N), gathered
// rows included, so all row traffic moves as float4. Other shapes and double
// use the kernels above.

constexpr int kVecThreads = 256;

// Linear: a block loops over tiles of TM = (256 / TX) * RM rows (grid
// stride) for one head. Thread (tx, ty) owns columns [4tx, 4tx+4) of rows
// ty + i * TY. The [K, TN] weight slice is staged in shared memory once and
// kept while consecutive tiles use the same slice; the X tile is staged with
// float4 loads (rows of other slices as zeros, as in linearKernel).
template <int TX, int RM>
__global__ void __launch_bounds__(kVecThreads, 2)
    linearVecKernel(const SegmentGemmArgs a, int64_t rowTiles) {
  constexpr int TY = kVecThreads / TX, TM = TY * RM, TN = 4 * TX;
  extern __shared__ float4 vecSmem[];
  __shared__ unsigned long long nextSlice;
  const int K = int(a.K), N = int(a.N), K4 = K / 4;
  float4 *Xs = vecSmem;             // [TM][K4]
  float4 *Ws = Xs + TM * K4;        // [K][TX]
  int64_t *srcRow = reinterpret_cast<int64_t *>(Ws + K * TX); // [TM]
  unsigned long long *sliceRow =
      reinterpret_cast<unsigned long long *>(srcRow + TM);    // [TM]

  const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
  const int64_t h = blockIdx.y, H = a.H;
  unsigned long long loaded = kNoSlice; // slice whose weight is in Ws

  for (int64_t tile = blockIdx.x; tile < rowTiles; tile += gridDim.x) {
    const int64_t row0 = tile * TM;
    for (int i = tid; i < TM; i += kVecThreads) {
      const int64_t r = row0 + i;
      if (r < a.M) {
        const int64_t id = rowIdOf(a, r);
        srcRow[i] = a.gather ? a.gather[id] : id;
        sliceRow[i] = static_cast<unsigned long long>(sliceOfRow(a, r, id));
      } else {
        srcRow[i] = -1;
        sliceRow[i] = kNoSlice;
      }
    }
    float acc[RM][4];
#pragma unroll
    for (int i = 0; i < RM; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j)
        acc[i][j] = 0.f;

    unsigned long long lowest = 0;
    for (;;) {
      if (tid == 0)
        nextSlice = kNoSlice;
      __syncthreads();
      for (int i = tid; i < TM; i += kVecThreads)
        if (srcRow[i] >= 0 && sliceRow[i] >= lowest)
          atomicMin(&nextSlice, sliceRow[i]);
      __syncthreads();
      const unsigned long long s = nextSlice;
      __syncthreads();
      if (s == kNoSlice)
        break;
      lowest = s + 1;
      if (s != loaded) { // block-uniform
        const float *w = a.W + (int64_t(s) * H + h) * K * N;
        float *wsf = reinterpret_cast<float *>(Ws);
        if (!a.transposeW) {
          for (int e = tid; e < K * TN; e += kVecThreads) {
            const int kk = e / TN, n = e % TN;
            wsf[e] = n < N ? __ldg(w + kk * N + n) : 0.f;
          }
        } else {
          for (int e = tid; e < K * TN; e += kVecThreads) {
            const int n = e / K, kk = e % K;
            wsf[kk * TN + n] = n < N ? __ldg(w + n * K + kk) : 0.f;
          }
        }
        loaded = s;
      }
      for (int e = tid; e < TM * K4; e += kVecThreads) {
        const int m = e / K4, q = e % K4;
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (srcRow[m] >= 0 && sliceRow[m] == s)
          v = __ldg(reinterpret_cast<const float4 *>(a.X + srcRow[m] * H * K +
                                                     h * K) +
                    q);
        Xs[e] = v;
      }
      __syncthreads();
#pragma unroll 2
      for (int q = 0; q < K4; ++q) {
        const float4 w0 = Ws[(4 * q + 0) * TX + tx];
        const float4 w1 = Ws[(4 * q + 1) * TX + tx];
        const float4 w2 = Ws[(4 * q + 2) * TX + tx];
        const float4 w3 = Ws[(4 * q + 3) * TX + tx];
#pragma unroll
        for (int i = 0; i < RM; ++i) {
          const float4 x = Xs[(ty + i * TY) * K4 + q];
          acc[i][0] += x.x * w0.x; acc[i][1] += x.x * w0.y;
          acc[i][2] += x.x * w0.z; acc[i][3] += x.x * w0.w;
          acc[i][0] += x.y * w1.x; acc[i][1] += x.y * w1.y;
          acc[i][2] += x.y * w1.z; acc[i][3] += x.y * w1.w;
          acc[i][0] += x.z * w2.x; acc[i][1] += x.z * w2.y;
          acc[i][2] += x.z * w2.z; acc[i][3] += x.z * w2.w;
          acc[i][0] += x.w * w3.x; acc[i][1] += x.w * w3.y;
          acc[i][2] += x.w * w3.z; acc[i][3] += x.w * w3.w;
        }
      }
      __syncthreads();
    }

    const int col = 4 * tx;
    if (col < N) { // N % 4 == 0: the whole quad is in range
#pragma unroll
      for (int i = 0; i < RM; ++i) {
        const int64_t r = row0 + ty + i * TY;
        if (r >= a.M)
          continue;
        const int64_t id = rowIdOf(a, r);
        float4 v = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        if (a.epilogue != EpilogueOp::None) {
          const int64_t sr = a.scaleGather ? a.scaleGather[id] : id;
          const float sc = a.scale[a.scalePerHead ? sr * H + h : sr];
          if (a.epilogue == EpilogueOp::Mul) {
            v.x *= sc; v.y *= sc; v.z *= sc; v.w *= sc;
          } else {
            v.x /= sc; v.y /= sc; v.z /= sc; v.w /= sc;
          }
        }
        const int64_t dst = a.scatter ? a.scatter[id] : id;
        float *y = a.Y + dst * H * N + h * N + col;
        if (a.atomic) {
          atomicAdd(y + 0, v.x);
          atomicAdd(y + 1, v.y);
          atomicAdd(y + 2, v.z);
          atomicAdd(y + 3, v.w);
        } else if (a.accumulate) {
          float4 o = *reinterpret_cast<float4 *>(y);
          o.x += v.x; o.y += v.y; o.z += v.z; o.w += v.w;
          *reinterpret_cast<float4 *>(y) = o;
        } else {
          *reinterpret_cast<float4 *>(y) = v;
        }
      }
    }
  }
}

// Outer: a block sums the rows base, base + gridDim.x * TR, ... of one
// (slice, head) into the whole (<= 64 x 64) dW tile, or (chunkRows > 0,
// as in outerKernel) the chunk blockIdx.x of chunkRows rows for head
// blockIdx.y, flushed to each slice it covers. The 256 threads form 4
// groups of 64; group g takes rows g, g+4, ... of each staged tile of TR
// rows, and each thread keeps an 8 x 8 register tile: k in {4tk..4tk+3,
// 32+4tk..32+4tk+3}, n likewise with tn. At each flush the 4 groups are
// added in shared memory in a fixed order, and the block writes (or,
// atomic, adds) each element once.
template <int TR>
__global__ void __launch_bounds__(kVecThreads, 2)
    outerVecKernel(const SegmentGemmArgs a, int64_t chunkRows) {
  __shared__ float4 As[TR][16]; // 64 floats a row, zero beyond K
  __shared__ float4 Bs[TR][16];
  __shared__ int64_t rowA[TR], rowB[TR];
  static_assert(TR * 16 >= 64 * 16, "As doubles as the 64x64 reduction");

  const int tid = threadIdx.x, g = tid / 64, t = tid % 64;
  const int tk = t / 8, tn = t % 8;
  const int64_t K = a.K, N = a.N, H = a.H;
  const int K4 = int(K / 4), N4 = int(N / 4);

  float acc[8][8];
  auto clear = [&] {
#pragma unroll
    for (int p = 0; p < 8; ++p)
#pragma unroll
      for (int q = 0; q < 8; ++q)
        acc[p][q] = 0.f;
  };
  // Adds the rows first, first + step, ... < end of slice s to acc.
  auto sumRows = [&](int64_t s, int64_t h, int64_t first, int64_t end,
                     int64_t step) {
    for (int64_t base = first; base < end; base += step) {
      for (int i = tid; i < TR; i += kVecThreads) {
        const int64_t r = base + i;
        const int64_t id = r < end ? rowIdOf(a, r) : -1;
        const bool mine = id >= 0 && (!a.rowType || a.rowType[id] == s);
        rowA[i] = mine ? (a.gather ? a.gather[id] : id) : -1;
        rowB[i] = mine ? (a.gatherB ? a.gatherB[id] : id) : -1;
      }
      __syncthreads();
      for (int e = tid; e < TR * 16; e += kVecThreads) {
        const int i = e / 16, q = e % 16;
        float4 va = make_float4(0.f, 0.f, 0.f, 0.f), vb = va;
        if (rowA[i] >= 0 && q < K4)
          va = __ldg(reinterpret_cast<const float4 *>(a.X + rowA[i] * H * K +
                                                      h * K) +
                     q);
        if (rowB[i] >= 0 && q < N4)
          vb = __ldg(reinterpret_cast<const float4 *>(a.B + rowB[i] * H * N +
                                                      h * N) +
                     q);
        As[i][q] = va;
        Bs[i][q] = vb;
      }
      __syncthreads();
#pragma unroll 4
      for (int i = g; i < TR; i += 4) {
        const float4 a0 = As[i][tk], a1 = As[i][8 + tk];
        const float4 b0 = Bs[i][tn], b1 = Bs[i][8 + tn];
        const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
        const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int p = 0; p < 8; ++p)
#pragma unroll
          for (int q = 0; q < 8; ++q)
            acc[p][q] += av[p] * bv[q];
      }
      __syncthreads();
    }
  };
  // Reduces the 4 groups into red[k][n] (64 x 64, in As), group 0 first,
  // and writes (or adds) the result to dW[s][h].
  auto store = [&](int64_t s, int64_t h) {
    float4 *red = &As[0][0]; // [64][16]
    for (int gg = 0; gg < 4; ++gg) {
      if (g == gg) {
#pragma unroll
        for (int p = 0; p < 8; ++p) {
          const int k = p < 4 ? 4 * tk + p : 32 + 4 * tk + (p - 4);
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            float4 v = make_float4(acc[p][4 * half], acc[p][4 * half + 1],
                                   acc[p][4 * half + 2], acc[p][4 * half + 3]);
            float4 &o = red[k * 16 + 8 * half + tn];
            if (gg > 0) {
              v.x += o.x; v.y += o.y; v.z += o.z; v.w += o.w;
            }
            o = v;
          }
        }
      }
      __syncthreads();
    }
    const float *redf = reinterpret_cast<const float *>(red);
    float *dw = a.dW + (s * H + h) * K * N;
    for (int64_t e = tid; e < K * N; e += kVecThreads) {
      int64_t k, n;
      if (a.transposeW) {
        n = e / K;
        k = e % K;
      } else {
        k = e / N;
        n = e % N;
      }
      storeOut(dw + e, redf[k * 64 + n], a);
    }
    __syncthreads(); // red (As) is staged into next
  };

  sumOuterRows<TR>(a, chunkRows, blockIdx.x, gridDim.x, clear, sumRows,
                   store);
}

// Narrow linear fast paths, float only: products with N < 4 and
// K <= 128 (a projection to one scalar per head: attention scores) or
// K < 4 and N <= 128 (their backward, a scalar times a row), where a
// general kernel's 32 x 32 tile would compute 1 useful column or 1 useful
// k of 32. kDot: lanes split k, and a warp-wide sum gives each of the N
// outputs; else lanes split n, and each lane sums the K products of its
// columns. A row alone is a short load, a five-step shuffle sum (kDot)
// and a store, so a warp that took one row at a time waited out a full
// memory latency per row (perf-notes section 11). A warp now takes a
// group of kNarrowRowsInFlight consecutive rows at a time: lane u looks up
// row u's id, then its slice and gathered rows (one load per list for the
// whole group), then for each head the warp issues every row's loads of X
// before it sums and stores any of them. Each warp takes a contiguous run
// of rows, so that with segmentPtr it finds its first row's slice by
// binary search and the rest by stepping forward.
constexpr int kNarrowMax = 3;          // the narrow side: N (kDot) or K
constexpr int kNarrowMaxPerLane = 4;   // the wide side: <= 128
constexpr int kNarrowWarps = 8;
constexpr int kNarrowRowsInFlight = 4; // per warp, <= 32
/// The widest wide side the narrow kernels take.
constexpr int64_t kNarrowWide = 32 * kNarrowMaxPerLane;

/// v after a linear epilogue with this row's scale.
__device__ __forceinline__ float withEpilogue(float v, EpilogueOp op,
                                              float scale) {
  if (op == EpilogueOp::Mul)
    return v * scale;
  if (op == EpilogueOp::Div)
    return v / scale;
  return v;
}

/// One row of a group, held by the lane of its position in the group: its
/// gathered input row, its scattered output row, its scale row and its
/// weight slice. The rows are kept one per lane rather than all on every
/// lane, where they would take four 64-bit registers per row and lane; the
/// warp reads row u's fields with rowField when it needs them.
struct NarrowRow {
  bool live = false; // a row of the warp's run (lanes past the group: no)
  int64_t src = 0, dst = 0, scaleRow = 0, slice = 0;
};

/// Lane u's value of a NarrowRow field (or of any per-row value).
template <typename V> __device__ __forceinline__ V rowField(V v, int u) {
  return __shfl_sync(0xffffffffu, v, u);
}

/// The slice of row r, stepped forward from `seg` (a slice at or before
/// r's, with segmentPtr): empty segments share a start, so the step goes
/// past them to the last slice that starts at or before r.
__device__ __forceinline__ int64_t stepSlice(const SegmentGemmArgs &a,
                                             int64_t seg, int64_t r) {
  while (seg + 1 < a.numSlices && r >= a.segmentPtr[seg + 1])
    ++seg;
  return seg;
}

/// The slices of a warp's contiguous run of rows, group by group: rowType
/// per row; with segmentPtr the first row's by binary search, then each
/// lane steps forward from the slice of the previous group's last row.
struct RunSlices {
  int64_t seg = -1; // segmentPtr: the slice of the previous group's last row

  /// The slice of this lane's row r (the group's rows are first ..
  /// first + U - 1, live or not).
  template <int U>
  __device__ int64_t next(const SegmentGemmArgs &a, int64_t first,
                          const NarrowRow &row, int64_t r, int64_t id) {
    if (a.rowType)
      return row.live ? a.rowType[id] : 0;
    if (!a.segmentPtr)
      return 0;
    if (seg < 0)
      seg = sliceOfRow(a, first, first);
    const int64_t s = row.live ? stepSlice(a, seg, r) : seg;
    seg = rowField(s, U - 1); // dead only in the run's last group
    return s;
  }
};

/// This lane's row of the group first .. first + U - 1 (lanes >= U, and
/// rows at or past end, are not live). Each step's loads depend on the
/// one before (id, then slice and gathered rows), and each is one load
/// for the whole group.
template <int U>
__device__ __forceinline__ NarrowRow narrowRow(const SegmentGemmArgs &a,
                                               int64_t first, int64_t end,
                                               int lane, RunSlices &slices) {
  NarrowRow row;
  const int64_t r = first + lane;
  row.live = lane < U && r < end;
  const int64_t id = row.live ? rowIdOf(a, r) : 0;
  row.slice = slices.next<U>(a, first, row, r, id);
  if (!row.live)
    return row;
  row.src = a.gather ? a.gather[id] : id;
  row.dst = a.scatter ? a.scatter[id] : id;
  if (a.epilogue != EpilogueOp::None)
    row.scaleRow = a.scaleGather ? a.scaleGather[id] : id;
  return row;
}

/// The epilogue scale of scale row `scaleRow` at head h (1 without an
/// epilogue).
__device__ __forceinline__ float epilogueScale(const SegmentGemmArgs &a,
                                               int64_t scaleRow, int64_t h) {
  if (a.epilogue == EpilogueOp::None)
    return 1.f;
  return a.scale[a.scalePerHead ? scaleRow * a.H + h : scaleRow];
}

/// The epilogue scale of `row` at head h. A row that is not live reads
/// scale row 0.
__device__ __forceinline__ float narrowScale(const SegmentGemmArgs &a,
                                             const NarrowRow &row,
                                             int64_t h) {
  return epilogueScale(a, row.scaleRow, h);
}

/// A lane's share of one (slice, head) of W, kept in registers while
/// consecutive rows use it: loading it per row as well would hold a
/// group's W values besides its X values, and rows sorted by slice
/// (segmentPtr, or rowIds sorted by rowType) reload it only at a segment
/// boundary or for the next head. v[j][i] is W's entry at wide index
/// lane + 32 j (k for kDot, n otherwise) and narrow index i, 0 past K or N.
template <bool kDot, int WL> struct NarrowWeights {
  const float *held = nullptr; // the (slice, head) in v
  float v[WL][kNarrowMax];

  /// Holds the (slice, head) at w (the same on every lane).
  __device__ __forceinline__ void use(const SegmentGemmArgs &a,
                                      const float *w, int lane) {
    if (w == held)
      return;
    held = w;
    // Entry (k, n) is at k * kStride + n * nStride; a slice has at most
    // 384 entries, so the offsets are ints. Entries past K or N load
    // entry 0 and are zeroed after (see narrowDot).
    const int K = int(a.K), N = int(a.N);
    const int kStride = a.transposeW ? 1 : N, nStride = a.transposeW ? K : 1;
    const int wide = kDot ? K : N, narrow = kDot ? N : K;
    const int wideStride = kDot ? kStride : nStride;
    const int narrowStride = kDot ? nStride : kStride;
#pragma unroll
    for (int j = 0; j < WL; ++j)
#pragma unroll
      for (int i = 0; i < kNarrowMax; ++i) {
        const int at = lane + 32 * j;
        const bool in = at < wide && i < narrow;
        const float e = __ldg(w + (in ? at * wideStride + i * narrowStride
                                      : 0));
        v[j][i] = in ? e : 0.f;
      }
  }
};

/// Row u's (slice, head h) of W.
__device__ __forceinline__ const float *
narrowSlice(const SegmentGemmArgs &a, const NarrowRow &mine, int u,
            int64_t h) {
  return a.W + (rowField(mine.slice, u) * a.H + h) * a.K * a.N;
}

/// kDot at head h, for the group whose lane u holds row u in `mine`, rows
/// 0 .. live - 1 live: lane l takes k = l, l + 32, ... of every row. All
/// the group's loads of X issue before the first product waits on one.
/// They are not predicated: ptxas turns a load predicated on "this k, this
/// row exists" into a copy that waits for it, which would let only two or
/// three loads fly at a time. So every load reads a valid address (k past
/// K reads k = K - 1, a row past the run's end reads row 0) and the values
/// that are not the row's are zeroed where they are used. The rows' sums
/// are independent, so their shuffles overlap. The stores go in row order,
/// as rows one at a time would (storeOut may read Y back).
template <int U, int WL>
__device__ __forceinline__ void narrowDot(const SegmentGemmArgs &a,
                                          const NarrowRow &mine, int64_t h,
                                          int lane, int live,
                                          NarrowWeights<true, WL> &wt) {
  constexpr int NM = kNarrowMax;
  const int64_t K = a.K, N = a.N, H = a.H;
  float xv[U][WL];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const float *x = a.X + rowField(mine.src, u) * H * K + h * K;
#pragma unroll
    for (int j = 0; j < WL; ++j) {
      const int64_t k = lane + 32 * j;
      xv[u][j] = __ldg(x + (k < K ? k : K - 1));
    }
  }
  // Read after the loads of X are issued: ptxas may copy the scale into
  // place, and the copy waits for it.
  const float myScale = narrowScale(a, mine, h);
  float acc[U][NM];
#pragma unroll
  for (int u = 0; u < U; ++u) {
#pragma unroll
    for (int n = 0; n < NM; ++n)
      acc[u][n] = 0.f;
    if (u >= live)
      continue;
    wt.use(a, narrowSlice(a, mine, u, h), lane);
#pragma unroll
    for (int j = 0; j < WL; ++j) {
      const float xk = lane + 32 * j < K ? xv[u][j] : 0.f;
#pragma unroll
      for (int n = 0; n < NM; ++n)
        acc[u][n] += xk * wt.v[j][n];
    }
  }
#pragma unroll
  for (int n = 0; n < NM; ++n)
    if (n < N)
#pragma unroll
      for (int off = 16; off > 0; off /= 2)
#pragma unroll
        for (int u = 0; u < U; ++u)
          acc[u][n] += __shfl_xor_sync(0xffffffffu, acc[u][n], off);
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (u >= live)
      break;
    float *y = a.Y + rowField(mine.dst, u) * H * N + h * N;
    const float scale = rowField(myScale, u);
#pragma unroll
    for (int n = 0; n < NM; ++n)
      if (n < N && lane == n)
        storeOut(y + n, withEpilogue(acc[u][n], a.epilogue, scale), a);
  }
}

/// Not kDot, at head h: lane l takes columns n = l, l + 32, ... of every
/// row. As narrowDot: all the group's loads of X first (unpredicated),
/// then each row's sums and stores, in row order.
template <int U, int WL>
__device__ __forceinline__ void narrowColumns(const SegmentGemmArgs &a,
                                              const NarrowRow &mine,
                                              int64_t h, int lane, int live,
                                              NarrowWeights<false, WL> &wt) {
  constexpr int NM = kNarrowMax;
  const int64_t K = a.K, N = a.N, H = a.H;
  float xv[U][NM];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const float *x = a.X + rowField(mine.src, u) * H * K + h * K;
#pragma unroll
    for (int k = 0; k < NM; ++k)
      xv[u][k] = __ldg(x + (k < K ? k : K - 1));
  }
  // Read after the loads of X are issued: ptxas may copy the scale into
  // place, and the copy waits for it.
  const float myScale = narrowScale(a, mine, h);
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (u >= live)
      break;
    wt.use(a, narrowSlice(a, mine, u, h), lane);
    float *y = a.Y + rowField(mine.dst, u) * H * N + h * N;
    const float scale = rowField(myScale, u);
#pragma unroll
    for (int j = 0; j < WL; ++j) {
      const int64_t n = lane + 32 * j;
      if (n >= N)
        break;
      float v = 0.f;
#pragma unroll
      for (int k = 0; k < NM; ++k)
        v += (k < K ? xv[u][k] : 0.f) * wt.v[j][k];
      storeOut(y + n, withEpilogue(v, a.epilogue, scale), a);
    }
  }
}

/// Blocks per SM that linearNarrowKernel with WL values per lane and row
/// is built for. The rows in flight per SM are its warps times
/// kNarrowRowsInFlight: three blocks (at most 80 registers) up to WL = 2,
/// which fit without spilling; two (at most 128) with WL = 4, whose rows
/// bring twice the bytes each and would spill at 80.
constexpr int narrowMinBlocks(int WL) { return WL <= 2 ? 3 : 2; }

/// Warp w takes rows [w * rowsPerWarp, (w + 1) * rowsPerWarp) of M,
/// kNarrowRowsInFlight at a time (rowsPerWarp is a multiple of it, so only
/// the run's last group can have rows past its end). WL: the wide side
/// (K for kDot, N otherwise) is at most 32 * WL. K and N are at least 1.
template <bool kDot, int WL>
__global__ void __launch_bounds__(kNarrowWarps * 32, narrowMinBlocks(WL))
    linearNarrowKernel(const SegmentGemmArgs a, int64_t rowsPerWarp) {
  constexpr int U = kNarrowRowsInFlight;
  static_assert(U <= 32, "a group's rows are held one per lane");
  const int lane = threadIdx.x % 32;
  const int64_t warp =
      int64_t(blockIdx.x) * kNarrowWarps + threadIdx.x / 32;
  const int64_t r0 = warp * rowsPerWarp;
  const int64_t r1 = r0 + rowsPerWarp < a.M ? r0 + rowsPerWarp : a.M;
  RunSlices slices;
  NarrowWeights<kDot, WL> wt;
  for (int64_t r = r0; r < r1; r += U) {
    const NarrowRow mine = narrowRow<U>(a, r, r1, lane, slices);
    const int live = r1 - r < U ? int(r1 - r) : U; // rows 0 .. live - 1
    for (int64_t h = 0; h < a.H; ++h) {
      if constexpr (kDot)
        narrowDot<U>(a, mine, h, lane, live, wt);
      else
        narrowColumns<U>(a, mine, h, lane, live, wt);
    }
  }
}

// One scalar per (row, head) from K <= 64 inputs, K a multiple of 4, X and
// W 16-byte aligned: the attention scores' x . w (RGAT's alpha_0 over every
// edge, alpha_1 over every pair). linearNarrowKernel gives each row the
// whole warp, two 4-byte loads per lane and a five-step shuffle sum, and
// moves each row's ids between lanes with shuffles: Nsight Compute found it
// bound by issued instructions (about 170 per row, 60% of the SMs' issue
// slots, 2% of DRAM bandwidth on fb15k's 620 K edges). Here a row takes 8
// lanes, each one or two 16-byte loads of X and of W and a three-step sum,
// and each group of 8 lanes reads its own rows' ids: a warp works on 4 rows
// at once, with kDotRowsInFlight of them per group in flight.
constexpr int kDotLanes = 8;                   // lanes per row
constexpr int kDotGroups = 32 / kDotLanes;     // rows per warp step
constexpr int kDotRowsInFlight = 2;            // per group
constexpr int64_t kDotRowsPerStep = kDotGroups * kDotRowsInFlight;

/// The dot product of this lane's (up to) 8 entries of x and w.
__device__ __forceinline__ float dot4x2(const float4 (&x)[2],
                                       const float4 (&w)[2]) {
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 2; ++j)
    s += x[j].x * w[j].x + x[j].y * w[j].y + x[j].z * w[j].z + x[j].w * w[j].w;
  return s;
}

/// Sums each of U dots over its group's kDotLanes lanes, all U in each
/// shuffle round so that the rounds' latencies overlap; every lane of the
/// group ends with the sums. linearDotKernel and linearDot64Kernel share it
/// so that they add in the same order and give the same bits.
template <int U>
__device__ __forceinline__ void sumOverDotLanes(float (&sum)[U]) {
#pragma unroll
  for (int off = kDotLanes / 2; off > 0; off /= 2)
#pragma unroll
    for (int u = 0; u < U; ++u)
      sum[u] += __shfl_xor_sync(0xffffffffu, sum[u], off);
}

/// The rows of one lane group in one step of an 8-lane kernel
/// (linearDotKernel, linearScaleKernel): row base + group + kDotGroups * u
/// for u < kDotRowsInFlight, with its id, slice, gathered, scattered and
/// scale rows. A row past the run's end r1 is not live and reads row 0.
/// Each group reads its own rows' fields (no shuffles); `seg` is the slice
/// of the group's last row (segmentPtr), stepped forward, as the group's
/// rows only increase.
struct DotRows {
  bool live[kDotRowsInFlight];
  int64_t slice[kDotRowsInFlight], src[kDotRowsInFlight],
      dst[kDotRowsInFlight], scaleRow[kDotRowsInFlight];

  __device__ __forceinline__ DotRows(const SegmentGemmArgs &a, int64_t base,
                                     int group, int64_t r1, int64_t &seg) {
    constexpr int U = kDotRowsInFlight;
    int64_t id[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t r = base + group + kDotGroups * u;
      live[u] = r < r1;
      id[u] = live[u] ? rowIdOf(a, r) : 0;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t r = base + group + kDotGroups * u;
      if (a.rowType) {
        slice[u] = live[u] ? a.rowType[id[u]] : 0;
      } else {
        if (a.segmentPtr && live[u])
          seg = stepSlice(a, seg, r);
        slice[u] = seg;
      }
      src[u] = live[u] && a.gather ? a.gather[id[u]] : id[u];
      dst[u] = live[u] && a.scatter ? a.scatter[id[u]] : id[u];
      scaleRow[u] = a.scaleGather && live[u] ? a.scaleGather[id[u]] : id[u];
    }
  }

  /// Row u's epilogue scale at head h (1 without an epilogue).
  __device__ __forceinline__ float scale(const SegmentGemmArgs &a, int u,
                                         int64_t h) const {
    return epilogueScale(a, scaleRow[u], h);
  }
};

/// The run of logical rows of the calling warp in an 8-lane kernel:
/// [w * rowsPerWarp, (w + 1) * rowsPerWarp) of M, w the warp's index.
struct WarpRun {
  int64_t r0, r1;
};
__device__ __forceinline__ WarpRun warpRun(const SegmentGemmArgs &a,
                                           int64_t rowsPerWarp) {
  const int64_t warp =
      int64_t(blockIdx.x) * kNarrowWarps + threadIdx.x / 32;
  const int64_t r0 = warp * rowsPerWarp;
  return {r0, r0 + rowsPerWarp < a.M ? r0 + rowsPerWarp : a.M};
}

/// This lane's place in an 8-lane kernel: its lane group and the warp's
/// run of rows; the entries of the wide side (K, or N) it takes, 16-byte
/// words at w0 and w1 = w0 + 32 while they are below `wide`; and `seg`,
/// the slice of its group's first row (the start of the group's segment
/// stepping; 0 without segmentPtr).
struct EightLanes {
  int group, w0, w1;
  bool has0, has1;
  WarpRun run;
  int64_t seg = 0;

  __device__ __forceinline__ EightLanes(const SegmentGemmArgs &a,
                                        int64_t rowsPerWarp, int64_t wide)
      : group(int(threadIdx.x % 32) / kDotLanes),
        w0(4 * (int(threadIdx.x % 32) % kDotLanes)), w1(w0 + 32),
        has0(w0 < wide), has1(w1 < wide), run(warpRun(a, rowsPerWarp)) {
    if (a.segmentPtr && run.r0 < run.r1)
      seg = sliceOfRow(a, run.r0 + group < run.r1 ? run.r0 + group : run.r0,
                       0);
  }
};

/// Warp w takes logical rows [w * rowsPerWarp, (w + 1) * rowsPerWarp) (a
/// multiple of kDotRowsPerStep), kDotRowsPerStep at a time (DotRows).
/// Every lane runs every step (the shuffles need the whole warp); rows past
/// the run read row 0 and store nothing. Loads are not predicated (see
/// narrowDot): a lane past K reads k = 0 and zeroes it.
__global__ void __launch_bounds__(kNarrowWarps * 32)
    linearDotKernel(const SegmentGemmArgs a, int64_t rowsPerWarp) {
  constexpr int U = kDotRowsInFlight;
  EightLanes me(a, rowsPerWarp, a.K);
  if (me.run.r0 >= me.run.r1)
    return;
  const int64_t K = a.K, H = a.H;
  const int k0 = me.w0, k1 = me.w1; // this lane's entries: k0.., k1..
  const bool has0 = me.has0, has1 = me.has1;
  const int gl = int(threadIdx.x % kDotLanes);
  for (int64_t base = me.run.r0; base < me.run.r1; base += kDotRowsPerStep) {
    const DotRows rows(a, base, me.group, me.run.r1, me.seg);
    const bool *live = rows.live;
    const int64_t *slice = rows.slice, *src = rows.src, *dst = rows.dst;
    for (int64_t h = 0; h < H; ++h) {
      float4 xv[U][2], wv[U][2];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const float *x = a.X + (src[u] * H + h) * K;
        const float *w = a.W + (slice[u] * H + h) * K;
        xv[u][0] = __ldg(reinterpret_cast<const float4 *>(x + (has0 ? k0 : 0)));
        xv[u][1] = __ldg(reinterpret_cast<const float4 *>(x + (has1 ? k1 : 0)));
        wv[u][0] = __ldg(reinterpret_cast<const float4 *>(w + (has0 ? k0 : 0)));
        wv[u][1] = __ldg(reinterpret_cast<const float4 *>(w + (has1 ? k1 : 0)));
      }
      float sum[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (!has0)
          xv[u][0] = make_float4(0.f, 0.f, 0.f, 0.f);
        if (!has1)
          xv[u][1] = make_float4(0.f, 0.f, 0.f, 0.f);
        sum[u] = dot4x2(xv[u], wv[u]);
      }
      sumOverDotLanes(sum);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (!live[u] || gl != 0)
          continue;
        storeOut(a.Y + dst[u] * H + h,
                 withEpilogue(sum[u], a.epilogue, rows.scale(a, u, h)), a);
      }
    }
  }
}

/// linearDotKernel's most common call with everything it need not check
/// taken out (linearDot64Fits): K = 64, so that each lane's two words are
/// both in the row; one head; no rowIds (row id = r), no epilogue scale and
/// a plain store. Section 97 of docs/perf-notes.md found the general kernel
/// bound by issue and by its loads' latency (15 cycles an instruction, 68%
/// of them waiting on L1TEX, about 40 instructions a row): this one has
/// fewer instructions a row and fewer live registers. U rows a lane group
/// are in flight; kRowType: slices by rowType (else by segmentPtr, or 0).
/// Rows and sums as linearDotKernel's, so that both give the same bits.
template <bool kRowType, int U>
__global__ void __launch_bounds__(kNarrowWarps * 32)
    linearDot64Kernel(const SegmentGemmArgs a, int64_t rowsPerWarp) {
  EightLanes me(a, rowsPerWarp, 64);
  if (me.run.r0 >= me.run.r1)
    return;
  const int k0 = me.w0, k1 = me.w1;
  const bool storer = threadIdx.x % kDotLanes == 0;
  for (int64_t base = me.run.r0; base < me.run.r1;
       base += int64_t(kDotGroups) * U) {
    const float *x[U], *w[U];
    float *y[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t r = base + me.group + kDotGroups * u;
      const bool live = r < me.run.r1;
      // A row past the run reads row r0's inputs and stores nothing.
      const int64_t row = live ? r : me.run.r0;
      int64_t slice = 0;
      if constexpr (kRowType) {
        slice = a.rowType[row];
      } else if (a.segmentPtr) {
        if (live)
          me.seg = stepSlice(a, me.seg, r);
        slice = me.seg;
      }
      x[u] = a.X + (a.gather ? a.gather[row] : row) * 64;
      w[u] = a.W + slice * 64;
      y[u] = live ? a.Y + (a.scatter ? a.scatter[row] : row) : nullptr;
    }
    float4 xv[U][2], wv[U][2];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      xv[u][0] = __ldg(reinterpret_cast<const float4 *>(x[u] + k0));
      xv[u][1] = __ldg(reinterpret_cast<const float4 *>(x[u] + k1));
      wv[u][0] = __ldg(reinterpret_cast<const float4 *>(w[u] + k0));
      wv[u][1] = __ldg(reinterpret_cast<const float4 *>(w[u] + k1));
    }
    float sum[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      sum[u] = dot4x2(xv[u], wv[u]);
    sumOverDotLanes(sum);
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (storer && y[u])
        *y[u] = sum[u];
  }
}

/// Rows in flight per lane group in linearDot64Kernel. Four (64 registers)
/// measured 2% slower than two (48) on an H200 (perf-notes section 99).
constexpr int kDot64RowsInFlight = 2;
constexpr int64_t kDot64RowsPerStep = kDotGroups * kDot64RowsInFlight;

/// storeOut of a 16-byte word of 4 outputs.
__device__ __forceinline__ void storeOut4(float *p, float4 v,
                                          const SegmentGemmArgs &a) {
  if (a.atomic) {
    atomicAdd(p, v.x);
    atomicAdd(p + 1, v.y);
    atomicAdd(p + 2, v.z);
    atomicAdd(p + 3, v.w);
    return;
  }
  float4 *q = reinterpret_cast<float4 *>(p);
  if (a.accumulate) {
    const float4 old = *q;
    v.x += old.x;
    v.y += old.y;
    v.z += old.z;
    v.w += old.w;
  }
  *q = v;
}

// The other one-scalar shape: K == 1, N <= 64, N % 4 == 0, Y and W
// 16-byte aligned (the gradients of those projections: RGAT's grad_outj =
// grad_alpha_1 times k over every pair). linearNarrowKernel's columns mode
// gives each row the whole warp, a lane per output column; here 8 lanes
// take a row, each scaling one or two 16-byte words of the weight by the
// row's input scalar and storing them (DotRows' rows, as linearDotKernel).
__global__ void __launch_bounds__(kNarrowWarps * 32, 4)
    linearScaleKernel(const SegmentGemmArgs a, int64_t rowsPerWarp) {
  constexpr int U = kDotRowsInFlight;
  EightLanes me(a, rowsPerWarp, a.N);
  if (me.run.r0 >= me.run.r1)
    return;
  const int64_t N = a.N, H = a.H;
  const int n0 = me.w0, n1 = me.w1; // this lane's outputs: n0.., n1..
  const bool has0 = me.has0, has1 = me.has1;
  for (int64_t base = me.run.r0; base < me.run.r1; base += kDotRowsPerStep) {
    const DotRows rows(a, base, me.group, me.run.r1, me.seg);
    for (int64_t h = 0; h < H; ++h) {
      float xv[U];
      float4 wv[U][2];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        // K == 1: entry (0, n) of a slice is at n in either layout.
        const float *w = a.W + (rows.slice[u] * H + h) * N;
        xv[u] = __ldg(a.X + rows.src[u] * H + h);
        wv[u][0] = __ldg(reinterpret_cast<const float4 *>(w + (has0 ? n0 : 0)));
        wv[u][1] = __ldg(reinterpret_cast<const float4 *>(w + (has1 ? n1 : 0)));
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (!rows.live[u])
          continue;
        const float scale = rows.scale(a, u, h);
        float *y = a.Y + (rows.dst[u] * H + h) * N;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          if (!(j == 0 ? has0 : has1))
            continue;
          const float4 w = wv[u][j];
          const float4 v = make_float4(
              withEpilogue(xv[u] * w.x, a.epilogue, scale),
              withEpilogue(xv[u] * w.y, a.epilogue, scale),
              withEpilogue(xv[u] * w.z, a.epilogue, scale),
              withEpilogue(xv[u] * w.w, a.epilogue, scale));
          storeOut4(y + (j == 0 ? n0 : n1), v, a);
        }
      }
    }
  }
}

// Narrow outer fast path, float only (N < 4, K <= 128, any alignment):
// the gradient of a projection to one scalar per head, such as an
// attention vector's (K = 64, N = 1), where the general kernel's 32 x 32
// tiles would waste 31 of every 32 columns and load each row once per K
// tile. Warp w of the block's 8 takes rows base + w, base + w + 8, ... of
// each tile of TR rows; lane l keeps the dW entries of k = l, l + 32, ...
// for every n in registers, so a row's X slice is one coalesced load and
// its B values one broadcast each. At each flush the 8 warps are added in
// shared memory in a fixed order. The rows a block sums follow
// sumOuterRows, as in the other outer kernels.
template <int TR>
__global__ void __launch_bounds__(kNarrowWarps * 32)
    outerNarrowKernel(const SegmentGemmArgs a, int64_t chunkRows) {
  constexpr int KL = kNarrowMaxPerLane, NM = kNarrowMax;
  __shared__ float red[kNarrowWarps][KL * 32 * NM];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t K = a.K, N = a.N, H = a.H;

  float acc[KL][NM];
  auto clear = [&] {
#pragma unroll
    for (int j = 0; j < KL; ++j)
#pragma unroll
      for (int n = 0; n < NM; ++n)
        acc[j][n] = 0.f;
  };
  // Each warp has U rows in flight: their ids, then their gathered row
  // numbers, then their values are loaded together, since each is a
  // dependent load of the one before.
  constexpr int U = kNarrowRowsInFlight;
  static_assert(TR % (kNarrowWarps * U) == 0, "a tile is whole row groups");
  auto sumRows = [&](int64_t s, int64_t h, int64_t first, int64_t end,
                     int64_t step) {
    for (int64_t base = first; base < end; base += step) {
      for (int i0 = warp; i0 < TR; i0 += kNarrowWarps * U) {
        int64_t xr[U], br[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int64_t r = base + i0 + u * kNarrowWarps;
          int64_t id = r < end ? rowIdOf(a, r) : -1;
          if (id >= 0 && a.rowType && a.rowType[id] != s)
            id = -1;
          xr[u] = id >= 0 && a.gather ? a.gather[id] : id;
          br[u] = id >= 0 && a.gatherB ? a.gatherB[id] : id;
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
          if (xr[u] < 0)
            continue;
          const float *x = a.X + xr[u] * H * K + h * K;
          const float *b = a.B + br[u] * H * N + h * N;
          float bv[NM];
#pragma unroll
          for (int n = 0; n < NM; ++n)
            bv[n] = n < N ? __ldg(b + n) : 0.f;
#pragma unroll
          for (int j = 0; j < KL; ++j) {
            const int64_t k = lane + 32 * j;
            const float xv = k < K ? __ldg(x + k) : 0.f;
#pragma unroll
            for (int n = 0; n < NM; ++n)
              acc[j][n] += xv * bv[n];
          }
        }
      }
    }
  };
  auto store = [&](int64_t s, int64_t h) {
#pragma unroll
    for (int j = 0; j < KL; ++j)
#pragma unroll
      for (int n = 0; n < NM; ++n)
        red[warp][(j * 32 + lane) * NM + n] = acc[j][n];
    __syncthreads();
    float *dw = a.dW + (s * H + h) * K * N;
    for (int64_t e = threadIdx.x; e < K * N; e += kNarrowWarps * 32) {
      const int64_t k = e / N, n = e % N;
      float v = 0.f;
      for (int w = 0; w < kNarrowWarps; ++w)
        v += red[w][k * NM + n];
      storeOut(a.transposeW ? dw + n * K + k : dw + k * N + n, v, a);
    }
    __syncthreads(); // red is written again at the next flush
  };
  sumOuterRows<TR>(a, chunkRows, blockIdx.x, gridDim.x, clear, sumRows,
                   store);
}

// Outer mode with one scalar per row and head on the right (N == 1), K <=
// 64 with K % 4 == 0, X 16-byte aligned: the gradient of an attention
// projection (RGAT's alpha_0_w summed over every edge, k over every
// pair). outerNarrowKernel gives each row the whole warp, two 4-byte loads
// per lane, and every lane reads every row's ids; Nsight Compute found it
// bound by issued instructions as linearNarrowKernel was (60% of the SMs'
// issue slots, 3% of DRAM bandwidth on fb15k). Here a row takes 8 lanes
// (as linearDotKernel), each adding one or two 16-byte words of X times the
// row's B scalar into its share of dW[s][h]; a block's 32 lane groups take
// the rows of a TR-row tile in a fixed order, TR / 32 each in flight. At a
// flush the groups of a warp are added with shuffles, then the 8 warps in
// shared memory in a fixed order (so the deterministic mode's sums do not
// depend on timing). The rows a block sums follow sumOuterRows.
template <int TR>
__global__ void __launch_bounds__(kNarrowWarps * 32)
    outerDotKernel(const SegmentGemmArgs a, int64_t chunkRows) {
  constexpr int kGroups = kNarrowWarps * kDotGroups; // lane groups a block
  constexpr int U = TR / kGroups;
  static_assert(TR % kGroups == 0, "a tile is whole rows per lane group");
  __shared__ float red[kNarrowWarps][64];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int group = lane / kDotLanes, gl = lane % kDotLanes;
  const int slot = warp * kDotGroups + group; // the group's first tile row
  const int64_t K = a.K, H = a.H;
  const int k0 = 4 * gl, k1 = k0 + 32; // this lane's entries: k0.., k1..
  const bool has0 = k0 < K, has1 = k1 < K;
  float4 acc[2];
  auto clear = [&] {
    acc[0] = make_float4(0.f, 0.f, 0.f, 0.f);
    acc[1] = acc[0];
  };
  auto sumRows = [&](int64_t s, int64_t h, int64_t first, int64_t end,
                     int64_t step) {
    for (int64_t base = first; base < end; base += step) {
      int64_t xr[U];
      float bv[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t r = base + slot + kGroups * u;
        int64_t id = r < end ? rowIdOf(a, r) : -1;
        if (id >= 0 && a.rowType && a.rowType[id] != s)
          id = -1;
        xr[u] = id >= 0 && a.gather ? a.gather[id] : id;
        const int64_t br = id >= 0 && a.gatherB ? a.gatherB[id] : id;
        bv[u] = id >= 0 ? __ldg(a.B + br * H + h) : 0.f;
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        // A row not summed here reads row 0 and adds it times 0.
        const float *x = a.X + ((xr[u] < 0 ? 0 : xr[u]) * H + h) * K;
        const float4 x0 =
            __ldg(reinterpret_cast<const float4 *>(x + (has0 ? k0 : 0)));
        const float4 x1 =
            __ldg(reinterpret_cast<const float4 *>(x + (has1 ? k1 : 0)));
        acc[0].x += x0.x * bv[u];
        acc[0].y += x0.y * bv[u];
        acc[0].z += x0.z * bv[u];
        acc[0].w += x0.w * bv[u];
        acc[1].x += x1.x * bv[u];
        acc[1].y += x1.y * bv[u];
        acc[1].z += x1.z * bv[u];
        acc[1].w += x1.w * bv[u];
      }
    }
  };
  auto store = [&](int64_t s, int64_t h) {
    // Lanes gl, gl + 8, gl + 16 and gl + 24 hold the same entries.
#pragma unroll
    for (int off = kDotLanes; off < 32; off *= 2)
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        acc[j].x += __shfl_xor_sync(0xffffffffu, acc[j].x, off);
        acc[j].y += __shfl_xor_sync(0xffffffffu, acc[j].y, off);
        acc[j].z += __shfl_xor_sync(0xffffffffu, acc[j].z, off);
        acc[j].w += __shfl_xor_sync(0xffffffffu, acc[j].w, off);
      }
    if (group == 0) {
      if (has0)
        *reinterpret_cast<float4 *>(&red[warp][k0]) = acc[0];
      if (has1)
        *reinterpret_cast<float4 *>(&red[warp][k1]) = acc[1];
    }
    __syncthreads();
    // N == 1: entry (k, 0) of a slice is at k in either layout.
    float *dw = a.dW + (s * H + h) * K;
    for (int64_t k = threadIdx.x; k < K; k += kNarrowWarps * 32) {
      float v = 0.f;
      for (int w = 0; w < kNarrowWarps; ++w)
        v += red[w][k];
      storeOut(dw + k, v, a);
    }
    __syncthreads(); // red is written again at the next flush
  };
  sumOuterRows<TR>(a, chunkRows, blockIdx.x, gridDim.x, clear, sumRows,
                   store);
}

template <int TX, int RM>
cudaError_t launchLinearVec(const SegmentGemmArgs &a, cudaStream_t stream) {
  constexpr int TM = (kVecThreads / TX) * RM;
  const int64_t rowTiles = (a.M + TM - 1) / TM;
  if (a.H > 65535)
    return cudaErrorInvalidConfiguration;
  const size_t smem = size_t(TM) * a.K * 4 + size_t(a.K) * 4 * TX * 4 +
                      size_t(TM) * 16;
  auto kernel = linearVecKernel<TX, RM>;
  const void *symbol = reinterpret_cast<const void *>(kernel);
  HECTOR_CUDA_TRY(allowDynamicShared(symbol, smem));
  int sms = 0, perSm = 0;
  HECTOR_CUDA_TRY(deviceAttribute(cudaDevAttrMultiProcessorCount, &sms));
  HECTOR_CUDA_TRY(blocksPerMultiprocessor(symbol, kVecThreads, smem, &perSm));
  if (perSm < 1)
    perSm = 1;
  int64_t blocks = int64_t(sms) * perSm;
  // Enough blocks per head that all heads together fill the GPU once.
  blocks = (blocks + a.H - 1) / a.H;
  if (blocks > rowTiles)
    blocks = rowTiles;
  if (blocks < 1)
    blocks = 1;
  const dim3 grid{unsigned(blocks), unsigned(a.H)};
  kernel<<<grid, kVecThreads, smem, stream>>>(a, rowTiles);
  return cudaGetLastError();
}

template <typename T, int TM, int TN, int TK, int RM, int RN>
cudaError_t launchLinear(const SegmentGemmArgsT<T> &a, cudaStream_t stream) {
  const int64_t rowTiles = (a.M + TM - 1) / TM;
  const int64_t colTiles = (a.N + TN - 1) / TN;
  if (rowTiles > INT_MAX || colTiles > 65535 || a.H > 65535)
    return cudaErrorInvalidConfiguration;
  const dim3 grid(unsigned(rowTiles), unsigned(colTiles), unsigned(a.H));
  linearKernel<T, TM, TN, TK, RM, RN>
      <<<grid, (TM / RM) * (TN / RN), 0, stream>>>(a);
  return cudaGetLastError();
}

/// Blocks of `kernel` (with `threads` threads) resident on the device at once.
template <typename Kernel>
cudaError_t residentBlocks(Kernel kernel, int threads, int64_t *blocks) {
  int sms = 0, perSm = 0;
  HECTOR_CUDA_TRY(deviceAttribute(cudaDevAttrMultiProcessorCount, &sms));
  HECTOR_CUDA_TRY(blocksPerMultiprocessor(reinterpret_cast<const void *>(kernel),
                                          threads, 0, &perSm));
  *blocks = int64_t(sms) * (perSm < 1 ? 1 : perSm);
  return cudaSuccess;
}

/// The float outer fast path (outerVecKernel); the caller checks the shape.
/// One wave of row chunks (rowTileGrid).
cudaError_t launchOuterVec(const SegmentGemmArgs &a, cudaStream_t stream) {
  constexpr int TR = 64;
  int64_t resident = 0;
  HECTOR_CUDA_TRY(residentBlocks(outerVecKernel<TR>, kVecThreads, &resident));
  RowTileGrid g;
  HECTOR_CUDA_TRY(rowTileGrid(a, resident, 1, TR, &g));
  if (g.chunkRows > 0)
    outerVecKernel<TR><<<g.grid, kVecThreads, 0, stream>>>(a, g.chunkRows);
  else
    outerVecKernel<TR><<<g.grid, kVecThreads, 0, stream>>>(singleWriter(a), 0);
  return cudaGetLastError();
}

/// A kernel whose warps each take a contiguous run of rows (the narrow
/// and 8-lane linear kernels): about four waves of warps, each run a whole
/// number of `unit` rows (the rows a warp has in flight at once: a warp
/// that stops mid-unit leaves part of its loads unused, and below a unit
/// per warp the rows are better spread over fewer warps, each with a full
/// unit in flight).
template <typename Kernel>
cudaError_t launchWarpRuns(Kernel kernel, const SegmentGemmArgs &a,
                           int64_t unit, cudaStream_t stream) {
  constexpr int threads = kNarrowWarps * 32;
  int64_t resident = 0;
  HECTOR_CUDA_TRY(residentBlocks(kernel, threads, &resident));
  const int64_t warps = 4 * resident * kNarrowWarps;
  const int64_t unitsPerWarp = ((a.M + unit - 1) / unit + warps - 1) / warps;
  const int64_t rowsPerWarp = (unitsPerWarp < 1 ? 1 : unitsPerWarp) * unit;
  const int64_t warpsNeeded = (a.M + rowsPerWarp - 1) / rowsPerWarp;
  const int64_t blocks = (warpsNeeded + kNarrowWarps - 1) / kNarrowWarps;
  if (blocks > INT_MAX)
    return cudaErrorInvalidConfiguration;
  kernel<<<unsigned(blocks), threads, 0, stream>>>(a, rowsPerWarp);
  return cudaGetLastError();
}

/// linearNarrowKernel<kDot, WL>, in units of kNarrowRowsInFlight rows.
template <bool kDot, int WL>
cudaError_t launchLinearNarrowAs(const SegmentGemmArgs &a,
                                 cudaStream_t stream) {
  return launchWarpRuns(linearNarrowKernel<kDot, WL>, a, kNarrowRowsInFlight,
                        stream);
}

/// The narrow linear fast paths (linearNarrowKernel); the caller checks
/// the shape. The wide side picks the fewest values per lane that hold it.
template <bool kDot>
cudaError_t launchLinearNarrow(const SegmentGemmArgs &a,
                               cudaStream_t stream) {
  const int64_t wide = kDot ? a.K : a.N;
  if (wide <= 32)
    return launchLinearNarrowAs<kDot, 1>(a, stream);
  if (wide <= 64)
    return launchLinearNarrowAs<kDot, 2>(a, stream);
  return launchLinearNarrowAs<kDot, kNarrowMaxPerLane>(a, stream);
}

/// A row-tile outer kernel of kNarrowWarps warps a block (outerNarrowKernel,
/// outerDotKernel), TR rows a tile: two waves of row chunks (rowTileGrid).
template <int TR, typename Kernel>
cudaError_t launchNarrowRowTiles(Kernel kernel, const SegmentGemmArgs &a,
                                 cudaStream_t stream) {
  constexpr int threads = kNarrowWarps * 32;
  int64_t resident = 0;
  HECTOR_CUDA_TRY(residentBlocks(kernel, threads, &resident));
  RowTileGrid g;
  HECTOR_CUDA_TRY(rowTileGrid(a, resident, 2, TR, &g));
  if (g.chunkRows > 0)
    kernel<<<g.grid, threads, 0, stream>>>(a, g.chunkRows);
  else
    kernel<<<g.grid, threads, 0, stream>>>(singleWriter(a), 0);
  return cudaGetLastError();
}

/// The narrow outer fast path (outerNarrowKernel, 64-row tiles); the caller
/// checks the shape.
cudaError_t launchOuterNarrow(const SegmentGemmArgs &a, cudaStream_t stream) {
  return launchNarrowRowTiles<64>(outerNarrowKernel<64>, a, stream);
}

/// outerDotKernel: 128-row tiles (4 rows per lane group).
cudaError_t launchOuterDot(const SegmentGemmArgs &a, cudaStream_t stream) {
  return launchNarrowRowTiles<128>(outerDotKernel<128>, a, stream);
}

template <typename T>
cudaError_t launchOuter(const SegmentGemmArgsT<T> &a, cudaStream_t stream) {
  constexpr int TKO = 32, TN = 32, TR = 16, RK = 2, RN = 2;
  constexpr int threads = (TKO / RK) * (TN / RN);
  const auto kernel = outerKernel<T, TKO, TN, TR, RK, RN>;
  const int64_t kTiles = (a.K + TKO - 1) / TKO;
  const int64_t nTiles = (a.N + TN - 1) / TN;
  if (kTiles * nTiles > INT_MAX)
    return cudaErrorInvalidConfiguration;
  if (chunksAllRows(a)) {
    // About two waves of blocks over the (K tile, N tile, head) grid.
    int64_t resident = 0;
    HECTOR_CUDA_TRY(residentBlocks(kernel, threads, &resident));
    const int64_t chunkRows = chunkRowsFor(
        a.M, 2 * resident / (kTiles * nTiles * a.H), TR, 16 * TR);
    const int64_t chunks = (a.M + chunkRows - 1) / chunkRows;
    if (a.H > 65535 || chunks > 65535)
      return cudaErrorInvalidConfiguration;
    const dim3 grid(unsigned(kTiles * nTiles), unsigned(a.H),
                    unsigned(chunks));
    kernel<<<grid, threads, 0, stream>>>(a, kTiles, chunkRows);
    return cudaGetLastError();
  }
  const int64_t sliceHeads = a.numSlices * a.H;
  // rowType: split each slice's rows over blocks only when atomics may
  // combine them; aim at ~2048 rows per block for the average slice.
  int64_t chunks = 1;
  if (a.atomic && !a.deterministic) {
    const int64_t rowsPerSlice = (a.M + a.numSlices - 1) / a.numSlices;
    chunks = (rowsPerSlice + 2047) / 2048;
    chunks = chunks < 1 ? 1 : (chunks > 256 ? 256 : chunks);
  }
  if (sliceHeads > 65535)
    return cudaErrorInvalidConfiguration;
  const dim3 grid(unsigned(kTiles * nTiles), unsigned(sliceHeads),
                  unsigned(chunks));
  kernel<<<grid, threads, 0, stream>>>(singleWriter(a), kTiles, 0);
  return cudaGetLastError();
}

/// HECTOR_GEMM_GATHER_ORDER=0 keeps every call in its own row order (A/B
/// runs on one build; read once).
bool gatherOrderEnabled() {
  static const bool on = !trav::envIs("HECTOR_GEMM_GATHER_ORDER", "0");
  return on;
}

/// `a` with its rows in its gather order (SegmentGemmArgs::
/// gatherOrderRowIds), for a kernel that needs no slice's rows together:
/// logical row r reads X[gatherOrderGather[r]] with slice
/// gatherOrderRowType[r] and writes Y[gatherOrderRowIds[r]] (as a scatter),
/// so that every index is read in sequence; an epilogue scale is read at
/// the row's id. `a` itself without one.
template <typename T>
SegmentGemmArgsT<T> inGatherOrder(const SegmentGemmArgsT<T> &a) {
  if (!a.gatherOrderRowIds || !gatherOrderEnabled())
    return a;
  SegmentGemmArgsT<T> b = a;
  b.gather = a.gatherOrderGather;
  b.rowType = a.gatherOrderRowType;
  b.segmentPtr = nullptr;
  b.scatter = a.gatherOrderRowIds;
  if (a.epilogue != EpilogueOp::None)
    b.scaleGather = a.gatherOrderRowIds;
  return b;
}

/// HECTOR_GEMM_DOT64=0 sends every dot call to linearDotKernel (read once;
/// setLeanDotForTesting overrides it).
trav::OverridableSwitch dot64Switch{"HECTOR_GEMM_DOT64", "0"};

/// Whether linearDot64Kernel takes a dot call that linearDotKernel would
/// (the caller checked N = 1, K <= 64 and the alignment).
bool linearDot64Fits(const SegmentGemmArgs &a) {
  return dot64Switch.on() && a.K == 64 && a.H == 1 && !a.rowIds &&
         a.epilogue == EpilogueOp::None && !a.accumulate && !a.atomic;
}

/// A dot call (one scalar a row from at most 64 aligned inputs), in its
/// gather order where it has one: linearDot64Kernel where it fits, else
/// linearDotKernel.
cudaError_t launchLinearDot(const SegmentGemmArgs &call, cudaStream_t stream) {
  const SegmentGemmArgs a = inGatherOrder(call);
  if (!linearDot64Fits(a))
    return launchWarpRuns(linearDotKernel, a, kDotRowsPerStep, stream);
  constexpr int U = kDot64RowsInFlight;
  if (a.rowType)
    return launchWarpRuns(linearDot64Kernel<true, U>, a, kDot64RowsPerStep,
                          stream);
  return launchWarpRuns(linearDot64Kernel<false, U>, a, kDot64RowsPerStep,
                        stream);
}

/// launchSegmentGemm for either scalar type: the float fast paths when the
/// shape allows them, else the general kernels.
template <typename T>
cudaError_t launch(const SegmentGemmArgsT<T> &a, cudaStream_t stream) {
  if (!checkSegmentGemmArgs(a).empty())
    return cudaErrorInvalidValue;
  if (a.N == 0)
    return cudaSuccess;

  if (a.mode == SegmentGemmMode::Linear) {
    if (a.M == 0)
      return cudaSuccess;
    // Only the tensor-core kernel computes a row dot in its epilogue; on
    // any other path the dot is a second call that reads the rows back.
    if (a.rowDotY) {
      bool fused = false;
      if constexpr (std::is_same_v<T, float>)
        fused = linearMmaFits(a);
      if (!fused) {
        HECTOR_CUDA_TRY(launch(withoutRowDot(a), stream));
        return launch(rowDotCall(a), stream);
      }
    }
    if (a.atomic && a.deterministic)
      return launchLinearOrdered(a, stream);
    if constexpr (std::is_same_v<T, float>) {
      if (denseRowsMmaFits(a))
        return launchDenseRowsMma(a, stream);
      if (linearMmaFits(a))
        return launchLinearMma(a, stream);
      // The other fast paths write one plain output buffer from one X row
      // a row, with X and W in their per-head layouts; a bias, output
      // parts, summed rows, or heads sharing X rows or W columns fall
      // through to the general kernels below, and so does an input op.
      if (plainOutput(a) && !a.sumPtr && perHeadLayouts(a) &&
          a.inputOp == InputOp::None) {
        const bool vec = a.K > 0 && a.K <= 64 && a.N <= 64 && a.K % 4 == 0 &&
                         a.N % 4 == 0 && aligned16(a.X) && aligned16(a.Y);
        if (vec && a.N > 32)
          return launchLinearVec<16, 8>(a, stream);
        if (vec)
          return launchLinearVec<8, 4>(a, stream);
        // One scalar per row from at most 64 aligned inputs: 8 lanes a row,
        // in the gather order where the call has one.
        if (a.N == 1 && a.K >= 4 && a.K <= 64 && a.K % 4 == 0 &&
            aligned16(a.X) && aligned16(a.W))
          return launchLinearDot(a, stream);
        // One scalar per row scaling at most 64 aligned weights: 8 lanes a
        // row.
        if (a.K == 1 && a.N >= 4 && a.N <= 64 && a.N % 4 == 0 &&
            aligned16(a.Y) && aligned16(a.W))
          return launchWarpRuns(linearScaleKernel, a, kDotRowsPerStep, stream);
        // The narrow kernels load X unpredicated, so they need K >= 1.
        if (a.K >= 1 && a.N <= kNarrowMax && a.K <= kNarrowWide)
          return launchLinearNarrow</*kDot=*/true>(a, stream);
        if (a.K >= 1 && a.K <= kNarrowMax && a.N <= kNarrowWide)
          return launchLinearNarrow</*kDot=*/false>(a, stream);
      }
    }
    // Wide outputs take 64x64 tiles with 4x4 per thread; narrow ones 32x32
    // with 2x2, so that few columns of a tile are wasted. Both 256 threads.
    if (a.N >= 48)
      return launchLinear<T, 64, 64, 16, 4, 4>(a, stream);
    return launchLinear<T, 32, 32, 16, 2, 2>(a, stream);
  }

  if (a.K == 0 || a.numSlices == 0)
    return cudaSuccess;
  if constexpr (std::is_same_v<T, float>) {
    if (outerMmaFits(a))
      return launchOuterMma(a, stream);
    if (a.K <= 64 && a.N <= 64 && a.K % 4 == 0 && a.N % 4 == 0 &&
        aligned16(a.X) && aligned16(a.B))
      return launchOuterVec(a, stream);
    // One scalar per row on the right, at most 64 aligned entries on the
    // left: 8 lanes a row.
    if (a.N == 1 && a.K >= 4 && a.K <= 64 && a.K % 4 == 0 && aligned16(a.X))
      return launchOuterDot(a, stream);
    if (a.N <= kNarrowMax && a.K <= kNarrowWide)
      return launchOuterNarrow(a, stream);
  }
  return launchOuter(a, stream);
}

} // namespace

cudaError_t launchSegmentGemm(const SegmentGemmArgsT<float> &args,
                              cudaStream_t stream) {
  return launch(args, stream);
}

cudaError_t launchSegmentGemm(const SegmentGemmArgsT<double> &args,
                              cudaStream_t stream) {
  return launch(args, stream);
}

bool setLeanDotForTesting(bool enabled) { return dot64Switch.set(enabled); }

bool setDeterministicWorkspaceForTesting(bool allowed) {
  return deterministicWorkspaceAllowed.exchange(allowed);
}

} // namespace hector::templates
