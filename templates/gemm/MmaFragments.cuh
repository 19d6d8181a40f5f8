// MmaFragments.cuh: the pieces of the GEMM template's tensor-core kernels
// that both the tiled kernels (SegmentGemmMma.cu) and the dense-rows kernel
// (DenseRowsMma.cu) build on: TF32 rounding and the split of a factor into
// TF32 head and tail, the m16n8k8 product, ldmatrix
// fragments, a weight window staged into shared memory, the quad that
// two lanes of an epilogue store together, and a gated mix's rounding.
// Internal to templates/gemm.
#pragma once

#include "templates/gemm/SegmentGemm.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace hector::templates::mma_fragments {

/// Output columns a block multiplies at once: 8 mma tiles of 8 columns.
constexpr int kWindowCols = 64;

/// x rounded to the nearest TF32 value (its bits, as mma takes them).
__device__ __forceinline__ uint32_t toTf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

/// d += a * b on one 16 x 8 x 8 TF32 tile (PTX fragment layouts: a holds
/// rows g, g + 8 at columns t, t + 4; b rows t, t + 4 at column g; d rows
/// g, g + 8 at columns 2t, 2t + 1; g = lane / 4, t = lane % 4).
__device__ __forceinline__ void mmaTf32(float (&d)[4], const uint32_t (&a)[4],
                                        const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                 "r"(b[1]));
#else
  (void)d, (void)a, (void)b;
  __trap(); // tensorCoresUsable keeps older devices away
#endif
}

/// A fragment's factors as TF32: the heads, and with kSplit the tails
/// (x - head, rounded again).
template <bool kSplit, int R> struct Tf32Parts {
  uint32_t head[R];
  uint32_t tail[R];
  __device__ __forceinline__ explicit Tf32Parts(const float (&x)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
      head[i] = toTf32(x[i]);
      if constexpr (kSplit)
        tail[i] = toTf32(x[i] - __uint_as_float(head[i]));
    }
  }
};

/// d += a * b to fp32 accuracy (three products, tails first so that the
/// small terms are added before the large one) or in one TF32 product.
template <bool kSplit>
__device__ __forceinline__ void mmaTerm(float (&d)[4],
                                        const Tf32Parts<kSplit, 4> &a,
                                        const Tf32Parts<kSplit, 2> &b) {
  if constexpr (kSplit) {
    mmaTf32(d, a.tail, b.head);
    mmaTf32(d, a.head, b.tail);
  }
  mmaTf32(d, a.head, b.head);
}

/// mmaTerm with the B factor already split (the staged weight planes):
/// the same three products in the same order.
template <bool kSplit>
__device__ __forceinline__ void
mmaTerm(float (&d)[4], const Tf32Parts<kSplit, 4> &a,
        const uint32_t (&bHead)[2], const uint32_t (&bTail)[2]) {
  if constexpr (kSplit) {
    mmaTf32(d, a.tail, bHead);
    mmaTf32(d, a.head, bTail);
  }
  mmaTf32(d, a.head, bHead);
}

/// Four 8 x 4 fragments of 32-bit words from shared memory, one per
/// register: lanes 8q .. 8q + 7 give the addresses of fragment q's rows
/// (16 bytes each), and lane l receives word l % 4 of row l / 4 of each
/// (ldmatrix on b16 pairs moves 32-bit words whole).
__device__ __forceinline__ void loadFragments(uint32_t (&r)[4],
                                              const void *rowAddress) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  const unsigned addr =
      static_cast<unsigned>(__cvta_generic_to_shared(rowAddress));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
               "{%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#else
  (void)r, (void)rowAddress;
  __trap(); // tensorCoresUsable keeps older devices away
#endif
}

/// A k-step's products with two adjacent mma tiles of a window: this
/// lane's A fragment times W tiles j and j + 1 of the staged weight planes
/// (head, and tail with kSplit) at `word`, into accJ and accJ1; the second
/// only when `second` (a window whose last tile is odd). One ldmatrix a
/// plane gives both tiles' B fragments. The tiled kernel and the
/// dense-rows kernel both multiply through this, so their products are the
/// same.
template <bool kSplit>
__device__ __forceinline__ void
mmaTilePair(float (&accJ)[4], float (&accJ1)[4], const Tf32Parts<kSplit, 4> &a,
            const uint32_t *head, const uint32_t *tail, int word, bool second) {
  uint32_t bh[4], bt[4] = {};
  loadFragments(bh, head + word);
  if constexpr (kSplit)
    loadFragments(bt, tail + word);
  mmaTerm<kSplit>(accJ, a, {bh[0], bh[1]}, {bt[0], bt[1]});
  if (second)
    mmaTerm<kSplit>(accJ1, a, {bh[2], bh[3]}, {bt[2], bt[3]});
}

/// Stages the window of weight slice s, head h, whose output columns
/// start at c0 into the weight planes (MmaSmem, or DenseRowsMma.cu's plane):
/// row n - c0 of each plane holds column n's K weights, rounded to TF32 (head)
/// and, with kSplit, what rounding left (tail, rounded again); rows past N hold
/// zeros. Called by the whole block of kThreads threads.
template <bool kSplit, bool kTransW, int kThreads>
__device__ __forceinline__ void stageWeight(const SegmentGemmArgs &a, int64_t s,
                                            int64_t h, int c0, uint32_t *head,
                                            uint32_t *tail, int stride) {
  const int K = int(a.K), N = int(a.N);
  const float *w = a.W + (s * a.H + h) * K * N;
  // Consecutive threads read consecutive words of W: along k when W is
  // [N, K], along n when it is [K, N].
  for (int e = threadIdx.x; e < kWindowCols * K; e += kThreads) {
    const int row = kTransW ? e / K : e % kWindowCols;
    const int k = kTransW ? e % K : e / kWindowCols;
    const int n = c0 + row;
    const float v = n < N ? __ldg(w + (kTransW ? n * K + k : k * N + n)) : 0.f;
    const uint32_t hv = toTf32(v);
    head[row * stride + k] = hv;
    if constexpr (kSplit)
      tail[row * stride + k] = toTf32(v - __uint_as_float(hv));
  }
}

/// A gated mix (SegmentGemmArgs::mixRows) of a lane's pair of columns:
/// g (acc + b) + (1 - g) m, made as g acc + (g b + (1 - g) m) so that the
/// second term is one addend a column (a kernel may fold it into the bias
/// it holds). Every rounding is spelled out (no contraction left to the
/// compiler), so that the tiled and the dense-rows kernel, which compute
/// the same products, store the same bits.
__device__ __forceinline__ float2 mixAddend(float2 bias, float2 mix,
                                            float gate) {
  const float keep = __fsub_rn(1.f, gate);
  return make_float2(__fmaf_rn(gate, bias.x, __fmul_rn(keep, mix.x)),
                     __fmaf_rn(gate, bias.y, __fmul_rn(keep, mix.y)));
}
__device__ __forceinline__ float2 mixValue(float acc0, float acc1,
                                           float2 addend, float gate) {
  return make_float2(__fmaf_rn(gate, acc0, addend.x),
                     __fmaf_rn(gate, acc1, addend.y));
}

/// What one lane of an epilogue stores for mma tiles j and j + 1 of a row:
/// four adjacent columns as one 16-byte store instead of two 8-byte ones.
/// Lane pair (t even, t + 1) swaps one pair by shuffle: the even lane
/// stores tile j's columns 2t .. 2t + 3, the odd one tile j + 1's
/// 2t - 2 .. 2t + 1. `v0` and `v1` are this lane's pairs (columns 2t,
/// 2t + 1) of the two tiles. Every lane of the warp calls it.
struct LaneQuad {
  float4 value;
  int offset; ///< columns past tile j's column 2t
};
__device__ __forceinline__ LaneQuad quadOfPairs(float2 v0, float2 v1, int t) {
  const bool odd = t & 1;
  const float2 give = odd ? v0 : v1;
  const float2 got = make_float2(__shfl_xor_sync(0xffffffffu, give.x, 1),
                                 __shfl_xor_sync(0xffffffffu, give.y, 1));
  return odd ? LaneQuad{make_float4(got.x, got.y, v1.x, v1.y), 6}
             : LaneQuad{make_float4(v0.x, v0.y, got.x, got.y), 0};
}

} // namespace hector::templates::mma_fragments
