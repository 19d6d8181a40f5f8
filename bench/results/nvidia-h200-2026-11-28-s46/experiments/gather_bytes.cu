// Session 46, built for the next session (not run): does gathering x's
// rows as fp16 (128 bytes a row) instead of fp32 (256 bytes) move more
// rows a second under the summed GEMM's gather pattern? (docs/perf-notes.md,
// the proposal after section 110.) Only the gathers and the sums: each
// 16-lane group sums the rows of one chunk at a time (a (destination,
// relation) segment cut at 64 edges, as the summed GEMM's chunks are) and
// writes the chunk's sum; no MMA, no atomics.
//
//   fp32: lane l of a group loads floats 4l..4l+3 of a row (16 lanes, 256
//         bytes, one row a load step)
//   fp16: lane l loads halves 8(l%8)..8(l%8)+7 of row j + l/8 (8 lanes a
//         row, two rows a load step), sums in fp32, and the two half-groups
//         are joined by shuffles at the end of the chunk
// Both keep kAhead load steps in flight a lane. The second argument (4 by
// default) pins that many 128-thread blocks an SM with dynamic shared
// memory (four: as the summed GEMM runs); 0 leaves occupancy to the
// registers. The graph, its chunks and the timing are bench/gemm's
// (BenchGraph.h, BenchTiming.h).
//
// Build (from the repository root, for bench/gemm's headers): nvcc -O3
//   -std=c++17 -arch=sm_90 -I. <this file> -o gather_bytes
// Run:   ./gather_bytes GRAPH_FILE [blocks_per_sm]   (dump_graph.py's file)
#include "bench/gemm/BenchGraph.h"
#include "bench/gemm/BenchTiming.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int kDim = 64;
constexpr int kThreads = 128;
constexpr int kGroupLanes = 16;
constexpr int kCap = 64;  // edges a chunk at most
constexpr int kAhead = 4; // load steps in flight a lane

__global__ void __launch_bounds__(kThreads)
    sumRowsFp32(const float4 *__restrict__ x, const int64_t *__restrict__ ptr,
                const int64_t *__restrict__ rows, int64_t chunks,
                float4 *__restrict__ out) {
  extern __shared__ char pin[]; // occupancy only
  (void)pin;
  const int lane = threadIdx.x % kGroupLanes;
  const int64_t groups = int64_t(gridDim.x) * (kThreads / kGroupLanes);
  for (int64_t c =
           blockIdx.x * (kThreads / kGroupLanes) + threadIdx.x / kGroupLanes;
       c < chunks; c += groups) {
    const int64_t b = ptr[c], e = ptr[c + 1];
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int64_t j = b; j < e; j += kAhead) {
      float4 v[kAhead];
#pragma unroll
      for (int u = 0; u < kAhead; ++u)
        v[u] = j + u < e ? x[rows[j + u] * (kDim / 4) + lane]
                         : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int u = 0; u < kAhead; ++u) {
        s.x += v[u].x;
        s.y += v[u].y;
        s.z += v[u].z;
        s.w += v[u].w;
      }
    }
    out[c * (kDim / 4) + lane] = s;
  }
}

__global__ void __launch_bounds__(kThreads)
    sumRowsFp16(const uint4 *__restrict__ x, const int64_t *__restrict__ ptr,
                const int64_t *__restrict__ rows, int64_t chunks,
                float4 *__restrict__ out) {
  extern __shared__ char pin[];
  (void)pin;
  const int lane = threadIdx.x % kGroupLanes;
  const int part = lane % 8, half = lane / 8; // 8 halves at 8 * part
  const unsigned groupMask = 0xffffu << (threadIdx.x % 32 / kGroupLanes * 16);
  const int64_t groups = int64_t(gridDim.x) * (kThreads / kGroupLanes);
  for (int64_t c =
           blockIdx.x * (kThreads / kGroupLanes) + threadIdx.x / kGroupLanes;
       c < chunks; c += groups) {
    const int64_t b = ptr[c], e = ptr[c + 1];
    float s[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    for (int64_t j = b + half; j < e; j += 2 * kAhead) {
      uint4 v[kAhead];
#pragma unroll
      for (int u = 0; u < kAhead; ++u)
        v[u] = j + 2 * u < e ? x[rows[j + 2 * u] * (kDim / 8) + part]
                             : make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
      for (int u = 0; u < kAhead; ++u) {
        const __half2 *h = reinterpret_cast<const __half2 *>(&v[u]);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const float2 f = __half22float2(h[q]);
          s[2 * q] += f.x;
          s[2 * q + 1] += f.y;
        }
      }
    }
    // Join the two half-groups' sums (lanes part and part + 8), then lane
    // l writes floats 4l..4l+3: lane l < 8 holds halves 8l.. of the row's
    // first 64 values; it writes its first four, lane l + 8 its last four.
#pragma unroll
    for (int q = 0; q < 8; ++q)
      s[q] += __shfl_xor_sync(groupMask, s[q], 8, kGroupLanes);
    const int col = 8 * part + 4 * half;
    const float4 w = half == 0 ? make_float4(s[0], s[1], s[2], s[3])
                               : make_float4(s[4], s[5], s[6], s[7]);
    out[c * (kDim / 4) + col / 4] = w;
  }
}

__global__ void toHalf(const float *x, __half *xh, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    xh[i] = __float2half_rn(x[i]);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s GRAPH_FILE [blocks_per_sm]\n", argv[0]);
    return 2;
  }
  const int pinned = argc > 2 ? std::atoi(argv[2]) : 4;
  const bench_graph::Graph g = bench_graph::readGraph(argv[1]);
  const int64_t N = g.N, E = g.E;
  const bench_graph::Chunks ch =
      bench_graph::chunk(g, bench_graph::edgesInChunkOrder(g, 0), kCap);
  const int64_t C = int64_t(ch.sumPtr.size()) - 1;

  std::vector<float> hx(N * kDim);
  uint64_t state = 12345;
  for (float &v : hx) { // uniform in [-1, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = float((state >> 40) & 0xffffff) / float(1 << 23) - 1.f;
  }
  float *x = bench_graph::toDevice(hx), *out32, *out16;
  __half *xh;
  const int64_t *ptr = bench_graph::toDevice(ch.sumPtr);
  const int64_t *rows = bench_graph::toDevice(ch.sumRows);
  CHECK_CUDA(cudaMalloc(&xh, N * kDim * 2));
  CHECK_CUDA(cudaMalloc(&out32, C * kDim * 4));
  CHECK_CUDA(cudaMalloc(&out16, C * kDim * 4));

  int device = 0, sms = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // Dynamic shared memory that lets `pinned` blocks fit an SM (228 KB an
  // SM, 1 KB reserved a block), else none.
  const int smem = pinned > 0 ? (228 * 1024) / pinned - 1024 - 64 : 0;
  if (smem > 48 * 1024) {
    CHECK_CUDA(cudaFuncSetAttribute(
        sumRowsFp32, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    CHECK_CUDA(cudaFuncSetAttribute(
        sumRowsFp16, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  }
  int per32 = 0, per16 = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per32, sumRowsFp32,
                                                           kThreads, smem));
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per16, sumRowsFp16,
                                                           kThreads, smem));
  const int grid32 = sms * per32, grid16 = sms * per16;

  const float convertMs =
      timeMs([&] { toHalf<<<sms * 8, 256>>>(x, xh, N * kDim); });
  const float ms32 = timeMs([&] {
    sumRowsFp32<<<grid32, kThreads, smem>>>(reinterpret_cast<const float4 *>(x),
                                            ptr, rows, C,
                                            reinterpret_cast<float4 *>(out32));
  });
  const float ms16 = timeMs([&] {
    sumRowsFp16<<<grid16, kThreads, smem>>>(reinterpret_cast<const uint4 *>(xh),
                                            ptr, rows, C,
                                            reinterpret_cast<float4 *>(out16));
  });
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());

  // Check both against a double sum on the host: every chunk of the first
  // 20000, and the fp16 one's error is TF32-sized (2^-11 a term).
  std::vector<float> o32(C * kDim), o16(C * kDim);
  CHECK_CUDA(
      cudaMemcpy(o32.data(), out32, C * kDim * 4, cudaMemcpyDeviceToHost));
  CHECK_CUDA(
      cudaMemcpy(o16.data(), out16, C * kDim * 4, cudaMemcpyDeviceToHost));
  double err32 = 0, err16 = 0, norm = 0;
  for (int64_t c = 0; c < std::min<int64_t>(C, 20000); ++c)
    for (int k = 0; k < kDim; ++k) {
      double s = 0;
      for (int64_t j = ch.sumPtr[c]; j < ch.sumPtr[c + 1]; ++j)
        s += hx[ch.sumRows[j] * kDim + k];
      err32 += (o32[c * kDim + k] - s) * (o32[c * kDim + k] - s);
      err16 += (o16[c * kDim + k] - s) * (o16[c * kDim + k] - s);
      norm += s * s;
    }
  const double gb32 = (E * 256.0 + C * 256.0) / 1e9,
               gb16 = (E * 128.0 + C * 256.0) / 1e9;
  std::printf("N %lld E %lld chunks %lld blocks/SM fp32 %d fp16 %d | "
              "convert %.3f ms | fp32 %.3f ms (%.0f GB/s, %.0f Mrows/s) | "
              "fp16 %.3f ms (%.0f GB/s, %.0f Mrows/s) | fp32/fp16 %.3f | "
              "rel err fp32 %.2e fp16 %.2e\n",
              (long long)N, (long long)E, (long long)C, per32, per16, convertMs,
              ms32, gb32 / ms32 * 1e3, E / ms32 / 1e3, ms16, gb16 / ms16 * 1e3,
              E / ms16 / 1e3, ms32 / ms16, std::sqrt(err32 / norm),
              std::sqrt(err16 / norm));
  return 0;
}
