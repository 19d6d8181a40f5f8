// ZeroFillCuda.h: the zero-fill of a program's accumulators (the buffers
// its kernels add into atomically) in one kernel launch.
//
// A backward program zero-fills up to ten buffers before its kernels run.
// One cudaMemsetAsync each cost about 3 to 7 us of host time and a
// separate device command per buffer, on steps whose host work bounds
// them (small graphs). zeroFill takes them all in one launch: one block row
// per buffer, 16-byte stores where the buffer allows them.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace hector::trav {

/// `bytes` bytes at `ptr` to be zeroed (none when bytes is 0, as for a
/// buffer the call does not need). `bytes` is a multiple of 4.
struct ZeroSpan {
  void *ptr = nullptr;
  size_t bytes = 0;
};

/// The spans of one launch, passed by value.
constexpr int kZeroSpansPerLaunch = 16;
struct ZeroSpans {
  ZeroSpan span[kZeroSpansPerLaunch];
};

/// Block row y zeroes span y: 16-byte words from the first 16-byte aligned
/// address, 4-byte words before and after it.
template <int kUnused = 0>
__global__ void __launch_bounds__(256) zeroSpansKernel(const ZeroSpans spans) {
  const ZeroSpan s = spans.span[blockIdx.y];
  if (s.bytes == 0)
    return;
  char *const begin = static_cast<char *>(s.ptr);
  char *const end = begin + s.bytes;
  const uintptr_t address = reinterpret_cast<uintptr_t>(begin);
  char *aligned = begin + ((16 - address % 16) % 16);
  if (aligned > end)
    aligned = end;
  const size_t words16 = static_cast<size_t>(end - aligned) / 16;
  char *const tail = aligned + words16 * 16;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (size_t i = first; i < words16; i += stride)
    reinterpret_cast<uint4 *>(aligned)[i] = make_uint4(0, 0, 0, 0);
  // The unaligned head and the tail: at most 3 words each.
  if (first < static_cast<size_t>(aligned - begin) / 4)
    reinterpret_cast<uint32_t *>(begin)[first] = 0;
  if (first < static_cast<size_t>(end - tail) / 4)
    reinterpret_cast<uint32_t *>(tail)[first] = 0;
}

/// Zeroes the `count` spans at `spans` with one launch per
/// kZeroSpansPerLaunch spans on `stream` (none when every span is empty).
/// Throws std::invalid_argument for a span whose size is not a multiple of
/// 4 and std::runtime_error for a failed launch. (The generated code passes
/// a named array: nvcc's front end turned a braced list argument inside a
/// function template into a GNU statement expression.)
inline void zeroFill(cudaStream_t stream, const ZeroSpan *spans,
                     size_t count) {
  ZeroSpans batch{};
  int batched = 0;
  size_t widest = 0;
  auto launch = [&] {
    if (widest == 0)
      return;
    // Enough 256-thread blocks for the widest span's 16-byte words, capped:
    // each block strides through the rest.
    const size_t words = (widest + 15) / 16;
    const unsigned blocks = static_cast<unsigned>(
        words / 256 + 1 < 1024 ? words / 256 + 1 : 1024);
    zeroSpansKernel<><<<dim3(blocks, static_cast<unsigned>(batched)), 256, 0,
                        stream>>>(batch);
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
      throw std::runtime_error(std::string("hector: CUDA error in zero-fill: ") +
                               cudaGetErrorString(err));
  };
  for (size_t i = 0; i < count; ++i) {
    const ZeroSpan &s = spans[i];
    if (s.bytes % 4 != 0)
      throw std::invalid_argument("hector: zero-fill of " +
                                  std::to_string(s.bytes) +
                                  " bytes, not a multiple of 4");
    if (s.bytes == 0)
      continue;
    batch.span[batched++] = s;
    widest = s.bytes > widest ? s.bytes : widest;
    if (batched == kZeroSpansPerLaunch) {
      launch();
      batch = ZeroSpans{};
      batched = 0;
      widest = 0;
    }
  }
  launch();
}

/// zeroFill of every span of an array.
template <size_t N>
void zeroFill(cudaStream_t stream, const ZeroSpan (&spans)[N]) {
  zeroFill(stream, spans, N);
}

} // namespace hector::trav
