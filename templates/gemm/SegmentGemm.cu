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
// Outer mode: a block owns one (tile of K, tile of N) of dW[s][h] and sums
// the outer products of the slice's rows in chunks of TR rows. Without
// atomic each tile is summed by one block (deterministic); with atomic the
// rows of a slice are split over gridDim.z blocks that atomicAdd. With
// rowType every block scans all M rows and keeps those of its slice.
#include "templates/gemm/SegmentGemmCuda.h"

#include <climits>
#include <cstdint>

namespace hector::templates {
namespace {

#define HECTOR_CUDA_TRY(expr)                                                  \
  do {                                                                         \
    cudaError_t err_ = (expr);                                                 \
    if (err_ != cudaSuccess)                                                   \
      return err_;                                                             \
  } while (0)

constexpr unsigned long long kNoSlice = ULLONG_MAX;

__device__ inline int64_t sliceOfRow(const SegmentGemmArgs &a, int64_t r) {
  if (a.rowType)
    return a.rowType[r];
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

__device__ inline void storeOut(float *p, float v, const SegmentGemmArgs &a) {
  if (a.atomic)
    atomicAdd(p, v);
  else if (a.accumulate)
    *p += v;
  else
    *p = v;
}

template <int TM, int TN, int TK, int RM, int RN>
__global__ void __launch_bounds__((TM / RM) * (TN / RN))
    linearKernel(const SegmentGemmArgs a) {
  constexpr int TX = TN / RN, TY = TM / RM, NT = TX * TY;
  __shared__ float As[TK][TM + 1];
  __shared__ float Ws[TK][TN + 1];
  __shared__ int64_t srcRow[TM];               // -1: row out of range
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
      srcRow[i] = a.gather ? a.gather[r] : r;
      sliceRow[i] = static_cast<unsigned long long>(sliceOfRow(a, r));
    } else {
      srcRow[i] = -1;
      sliceRow[i] = kNoSlice;
    }
  }

  float acc[RM][RN];
#pragma unroll
  for (int i = 0; i < RM; ++i)
#pragma unroll
    for (int j = 0; j < RN; ++j)
      acc[i][j] = 0.f;

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
    const float *w = a.W + (int64_t(s) * H + h) * K * N;

    for (int64_t k0 = 0; k0 < K; k0 += TK) {
      // X tile: consecutive threads read consecutive k of one row.
      for (int e = tid; e < TM * TK; e += NT) {
        const int m = e / TK, kk = e % TK;
        const int64_t k = k0 + kk;
        float v = 0.f;
        if (k < K && srcRow[m] >= 0 && sliceRow[m] == s)
          v = a.X[srcRow[m] * H * K + h * K + k];
        As[kk][m] = v;
      }
      // W tile: read along the contiguous dimension of either layout.
      if (!a.transposeW) {
        for (int e = tid; e < TK * TN; e += NT) {
          const int kk = e / TN, n = e % TN;
          const int64_t k = k0 + kk, col = col0 + n;
          Ws[kk][n] = (k < K && col < N) ? w[k * N + col] : 0.f;
        }
      } else {
        for (int e = tid; e < TK * TN; e += NT) {
          const int n = e / TK, kk = e % TK;
          const int64_t k = k0 + kk, col = col0 + n;
          Ws[kk][n] = (k < K && col < N) ? w[col * K + k] : 0.f;
        }
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < TK; ++kk) {
        float av[RM], wv[RN];
#pragma unroll
        for (int i = 0; i < RM; ++i)
          av[i] = As[kk][ty + i * TY];
#pragma unroll
        for (int j = 0; j < RN; ++j)
          wv[j] = Ws[kk][tx + j * TX];
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
          for (int j = 0; j < RN; ++j)
            acc[i][j] += av[i] * wv[j];
      }
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
    float scale = 1.f;
    if (a.epilogue != EpilogueOp::None) {
      const int64_t sr = a.scaleGather ? a.scaleGather[r] : r;
      scale = a.scale[a.scalePerHead ? sr * H + h : sr];
    }
    const int64_t dst = a.scatter ? a.scatter[r] : r;
    float *y = a.Y + dst * H * N + h * N;
#pragma unroll
    for (int j = 0; j < RN; ++j) {
      const int64_t col = col0 + tx + j * TX;
      if (col >= N)
        continue;
      float v = acc[i][j];
      if (a.epilogue == EpilogueOp::Mul)
        v *= scale;
      else if (a.epilogue == EpilogueOp::Div)
        v /= scale;
      storeOut(y + col, v, a);
    }
  }
}

// Outer mode: output tile TKO x TN of dW[s][h]; TR rows per step.
template <int TKO, int TN, int TR, int RK, int RN>
__global__ void __launch_bounds__((TKO / RK) * (TN / RN))
    outerKernel(const SegmentGemmArgs a, int64_t kTiles) {
  constexpr int TX = TN / RN, TY = TKO / RK, NT = TX * TY;
  __shared__ float As[TR][TKO + 1];
  __shared__ float Bs[TR][TN + 1];
  __shared__ int64_t rowA[TR], rowB[TR]; // -1: not a row of this slice

  const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
  const int64_t K = a.K, N = a.N, H = a.H;
  const int64_t k0 = (int64_t(blockIdx.x) % kTiles) * TKO;
  const int64_t n0 = (int64_t(blockIdx.x) / kTiles) * TN;
  const int64_t s = blockIdx.y / H, h = blockIdx.y % H;

  int64_t begin = 0, end = a.M;
  if (a.segmentPtr) {
    begin = a.segmentPtr[s];
    end = a.segmentPtr[s + 1];
  } else if (!a.rowType && s > 0) {
    end = 0; // one shared slice: slices > 0 get no rows
  }

  float acc[RK][RN];
#pragma unroll
  for (int i = 0; i < RK; ++i)
#pragma unroll
    for (int j = 0; j < RN; ++j)
      acc[i][j] = 0.f;

  const int64_t stride = int64_t(gridDim.z) * TR;
  for (int64_t base = begin + int64_t(blockIdx.z) * TR; base < end;
       base += stride) {
    for (int i = tid; i < TR; i += NT) {
      const int64_t r = base + i;
      const bool mine = r < end && (!a.rowType || a.rowType[r] == s);
      rowA[i] = mine ? (a.gather ? a.gather[r] : r) : -1;
      rowB[i] = mine ? (a.gatherB ? a.gatherB[r] : r) : -1;
    }
    __syncthreads();
    for (int e = tid; e < TR * TKO; e += NT) {
      const int i = e / TKO, kk = e % TKO;
      const int64_t k = k0 + kk;
      As[i][kk] = (rowA[i] >= 0 && k < K) ? a.X[rowA[i] * H * K + h * K + k]
                                          : 0.f;
    }
    for (int e = tid; e < TR * TN; e += NT) {
      const int i = e / TN, n = e % TN;
      const int64_t col = n0 + n;
      Bs[i][n] = (rowB[i] >= 0 && col < N) ? a.B[rowB[i] * H * N + h * N + col]
                                           : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TR; ++i) {
      float av[RK], bv[RN];
#pragma unroll
      for (int p = 0; p < RK; ++p)
        av[p] = As[i][ty + p * TY];
#pragma unroll
      for (int q = 0; q < RN; ++q)
        bv[q] = Bs[i][tx + q * TX];
#pragma unroll
      for (int p = 0; p < RK; ++p)
#pragma unroll
        for (int q = 0; q < RN; ++q)
          acc[p][q] += av[p] * bv[q];
    }
    __syncthreads();
  }

  float *dw = a.dW + (s * H + h) * K * N;
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
      storeOut(a.transposeW ? dw + n * K + k : dw + k * N + n, acc[p][q], a);
    }
  }
}

template <int TM, int TN, int TK, int RM, int RN>
cudaError_t launchLinear(const SegmentGemmArgs &a, cudaStream_t stream) {
  const int64_t rowTiles = (a.M + TM - 1) / TM;
  const int64_t colTiles = (a.N + TN - 1) / TN;
  if (rowTiles > INT_MAX || colTiles > 65535 || a.H > 65535)
    return cudaErrorInvalidConfiguration;
  const dim3 grid(unsigned(rowTiles), unsigned(colTiles), unsigned(a.H));
  linearKernel<TM, TN, TK, RM, RN>
      <<<grid, (TM / RM) * (TN / RN), 0, stream>>>(a);
  return cudaGetLastError();
}

} // namespace

cudaError_t launchSegmentGemm(const SegmentGemmArgs &a, cudaStream_t stream) {
  if (!checkSegmentGemmArgs(a).empty())
    return cudaErrorInvalidValue;
  if (a.N == 0)
    return cudaSuccess;

  if (a.mode == SegmentGemmArgs::Mode::Linear) {
    if (a.M == 0)
      return cudaSuccess;
    // Wide outputs take 64x64 tiles with 4x4 per thread; narrow ones 32x32
    // with 2x2, so that few columns of a tile are wasted. Both 256 threads.
    if (a.N >= 48)
      return launchLinear<64, 64, 16, 4, 4>(a, stream);
    return launchLinear<32, 32, 16, 2, 2>(a, stream);
  }

  if (a.K == 0)
    return cudaSuccess;
  constexpr int TKO = 32, TN = 32, TR = 16, RK = 2, RN = 2;
  const int64_t kTiles = (a.K + TKO - 1) / TKO;
  const int64_t nTiles = (a.N + TN - 1) / TN;
  const int64_t sliceHeads = a.numSlices * a.H;
  // Split each slice's rows over blocks only when atomics may combine them;
  // aim at ~2048 rows per block for the average slice.
  int64_t chunks = 1;
  if (a.atomic) {
    const int64_t rowsPerSlice = (a.M + a.numSlices - 1) / a.numSlices;
    chunks = (rowsPerSlice + 2047) / 2048;
    chunks = chunks < 1 ? 1 : (chunks > 256 ? 256 : chunks);
  }
  if (kTiles * nTiles > INT_MAX || sliceHeads > 65535)
    return cudaErrorInvalidConfiguration;
  const dim3 grid(unsigned(kTiles * nTiles), unsigned(sliceHeads),
                  unsigned(chunks));
  outerKernel<TKO, TN, TR, RK, RN>
      <<<grid, (TKO / RK) * (TN / RN), 0, stream>>>(a, kTiles);
  HECTOR_CUDA_TRY(cudaGetLastError());
  return cudaSuccess;
}

} // namespace hector::templates
