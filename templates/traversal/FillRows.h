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
#include <cstdint>

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#endif

namespace hector::trav {

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
__global__ void __launch_bounds__(256)
    fillRowsKernel(T *dst, int64_t total, const T *row, int64_t width) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < total; i += stride)
    dst[i] = __ldg(row + i % width);
}

/// fillRowsCpu on device pointers, asynchronously on `stream` (nothing for
/// an empty buffer). Throws std::runtime_error for a failed launch.
template <typename T>
void fillRows(cudaStream_t stream, T *dst, int64_t rows, const T *row,
              int64_t width) {
  const int64_t total = rows * width;
  if (total <= 0)
    return;
  const int64_t blocks = std::min<int64_t>((total + 255) / 256, 4096);
  fillRowsKernel<T><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
      dst, total, row, width);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("hector: CUDA error in fillRows: ") +
                             cudaGetErrorString(err));
}
#endif

} // namespace hector::trav
