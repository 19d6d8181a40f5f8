// FillRows.h: every row of a buffer set to one shared row, on the CPU
// (fillRowsCpu) and, compiled by nvcc, on the GPU (fillRows, asynchronous
// on a stream).
//
// A GEMM that adds into its output atomically needs the output
// initialised first: zeros (ZeroFillCuda.h) or, when the sum it computes
// is followed by a shared bias (RGAT-PyG's `h = sum + bias`), the bias in
// every row (intra::GemmInstance::initRow). Filling with the bias costs
// what the zero-fill did and saves the pass that added the bias after it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#include "templates/CudaHost.h"

#include <cuda_runtime.h>
#endif

namespace hector::trav {

/// Threads a block of the GPU fill.
constexpr int64_t kFillThreads = 256;

/// How many 16-byte words a row has when the GPU fill may store it a word
/// a thread, each thread on one column for the whole grid-strided loop:
/// float rows of whole words (width a multiple of 4) whose word count
/// divides the block, with both pointers 16-byte aligned. 0: one element a
/// thread instead. RGAT-PyG's bias fill of a 64-wide output is 16 words.
inline int64_t fillRowWords(int64_t width, int64_t elementBytes,
                            bool aligned16) {
  if (elementBytes != 4 || !aligned16 || width <= 0 || width % 4 != 0)
    return 0;
  const int64_t words = width / 4;
  return kFillThreads % words == 0 ? words : 0;
}

/// dst[r * width + c] = row[c] for r < rows, c < width (host pointers).
template <typename T>
void fillRowsCpu(T *dst, int64_t rows, const T *row, int64_t width) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r)
    std::copy(row, row + width, dst + r * width);
}

#if defined(__CUDACC__)
/// One thread an element, grid-strided; the row stays in L1.
template <typename T>
__global__ void __launch_bounds__(kFillThreads)
    fillRowsKernel(T *dst, int64_t total, const T *row, int64_t width) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < total; i += stride)
    dst[i] = __ldg(row + i % width);
}

/// One thread a 16-byte word (fillRowWords): the block and the grid's
/// stride are multiples of `words`, so word i of the buffer is column
/// threadIdx.x % words on every pass. The thread loads its word once and
/// stores it with one st.global.wb.v4 a pass: the element kernel's 64-bit
/// remainder and 4-byte stores ran at about two thirds of the copy
/// bandwidth (RGAT wikikg2's bias fill, 0.23 ms a step on an H200).
__global__ void __launch_bounds__(kFillThreads)
    fillRowWordsKernel(float4 *dst, int64_t totalWords, const float4 *row,
                       int words) {
  const float4 v = __ldg(row + threadIdx.x % words);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kFillThreads;
  for (int64_t i =
           static_cast<int64_t>(blockIdx.x) * kFillThreads + threadIdx.x;
       i < totalWords; i += stride)
    __stwb(dst + i, v);
}

/// fillRowsCpu on device pointers, asynchronously on `stream` (nothing for
/// an empty buffer). Throws std::runtime_error for a failed launch.
template <typename T>
void fillRows(cudaStream_t stream, T *dst, int64_t rows, const T *row,
              int64_t width) {
  const int64_t total = rows * width;
  if (total <= 0)
    return;
  using templates::cuda_host::aligned16;
  const int64_t words =
      fillRowWords(width, sizeof(T), aligned16(dst) && aligned16(row));
  const int64_t items = words ? total / 4 : total;
  const int64_t blocks =
      std::min<int64_t>((items + kFillThreads - 1) / kFillThreads, 4096);
  if (words)
    fillRowWordsKernel<<<static_cast<unsigned>(blocks), kFillThreads, 0,
                         stream>>>(reinterpret_cast<float4 *>(dst), items,
                                   reinterpret_cast<const float4 *>(row),
                                   static_cast<int>(words));
  else
    fillRowsKernel<T>
        <<<static_cast<unsigned>(blocks), kFillThreads, 0, stream>>>(
            dst, total, row, width);
  templates::cuda_host::check(cudaGetLastError(), "fillRows");
}
#endif

} // namespace hector::trav
