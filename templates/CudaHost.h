// CudaHost.h: the CUDA runtime checks that host code of both templates'
// launchers and of the generated programs shares: an error turned into an
// exception, and whether a stream is being captured. One copy, so that the
// traversal launchers (TraversalCuda.h) and the launch graph cache
// (LaunchGraphCache.h), which must agree on what a capture is, cannot
// drift apart.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace hector::templates::cuda_host {

/// Throws std::runtime_error naming `what` when `err` is an error.
inline void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("hector: CUDA error in ") + what +
                             ": " + cudaGetErrorString(err));
}

/// Whether `stream` is being captured into a CUDA graph (hector/replay.py
/// records small graphs' ops; LaunchGraphCache records a program's
/// launches; a caller may capture any).
inline bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(stream, &status), "cudaStreamIsCapturing");
  return status != cudaStreamCaptureStatusNone;
}

/// Whether a host-held device pointer is on a 16-byte boundary: the
/// vectorised kernels (the GEMM template's, the row fill) move rows as
/// 16-byte words and fall back to narrower ones otherwise.
inline bool aligned16(const void *p) {
  return (reinterpret_cast<uintptr_t>(p) & 15) == 0;
}

} // namespace hector::templates::cuda_host
