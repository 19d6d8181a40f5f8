// TraversalCuda.h: host-side launch helpers of the traversal template for
// the generated CUDA code (Traversal.h has the device side).
#pragma once

#include "templates/traversal/HubSplit.h"
#include "templates/traversal/Traversal.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <string>

namespace hector::trav {

/// Throws std::runtime_error naming `what` when `err` is an error.
inline void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("hector: CUDA error in ") + what +
                             ": " + cudaGetErrorString(err));
}

/// A launch of a traversal kernel: warps per block and dynamic shared
/// memory for `scratchSize` scalars of `scalarBytes` each per warp.
struct LaunchShape {
  int warpsPerBlock = 8;
  int64_t blocks = 0;
  size_t sharedBytes = 0;
};

/// Up to 8 warps per block, fewer when the per-warp scratch would exceed
/// 48 KiB per block; enough blocks for one row per warp, capped (the
/// kernels split rows into contiguous chunks per warp). Raises the
/// kernel's dynamic shared memory limit when one warp alone needs more
/// than 48 KiB. `single`: one warp in one block for all rows (deterministic
/// mode for kernels with atomic reductions: a fixed order of adds).
inline LaunchShape launchShape(const void *kernel, int64_t rows,
                               int64_t scratchSize, size_t scalarBytes,
                               bool single = false) {
  LaunchShape s;
  const size_t perWarp = static_cast<size_t>(scratchSize) * scalarBytes;
  const size_t budget = 48 * 1024;
  if (single)
    s.warpsPerBlock = 1;
  else if (perWarp > 0)
    s.warpsPerBlock = static_cast<int>(
        std::max<size_t>(1, std::min<size_t>(8, budget / perWarp)));
  s.sharedBytes = perWarp * s.warpsPerBlock;
  if (s.sharedBytes > budget)
    check(cudaFuncSetAttribute(kernel,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(s.sharedBytes)),
          "cudaFuncSetAttribute (scratch too large for shared memory)");
  const int64_t wanted = (rows + s.warpsPerBlock - 1) / s.warpsPerBlock;
  s.blocks =
      single ? 1 : std::max<int64_t>(1, std::min<int64_t>(wanted, 65535));
  return s;
}

/// A hyper or a value's row size, as the host function computed it.
struct NamedSize {
  const char *what; ///< "hyper 'in_dim'", "the row size of 'x'"
  int64_t size;
};

/// Throws std::runtime_error naming the first size that does not fit in an
/// int: the CUDA traversal kernels hold hypers and row sizes, and index
/// within a row, with 32-bit ints (rows themselves are addressed with
/// int64).
inline void requireInt32Sizes(std::initializer_list<NamedSize> sizes) {
  for (const NamedSize &s : sizes)
    if (s.size > INT32_MAX)
      throw std::runtime_error(std::string("hector: ") + s.what + " is " +
                               std::to_string(s.size) +
                               ", more than the CUDA kernels support "
                               "(2^31 - 1)");
}

/// Whether `bytes` of dynamic shared memory fit in one block of the
/// current device (with the opt-in above 48 KiB).
inline bool fitsInBlock(size_t bytes) {
  int device = 0, optin = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                               device),
        "cudaDeviceGetAttribute");
  return bytes <= static_cast<size_t>(optin);
}

/// The heavy-row launch runs on a second stream beside the warp launch:
/// forkSide(main) makes this thread's side stream of the current device
/// wait for everything queued on `main` so far and returns it; joinSide
/// makes `main` wait for what the side stream got since. Both are made once
/// per thread and device (thread-local, so that ops issued from several
/// threads do not share events), and both work under CUDA graph capture.
struct SideStream {
  cudaStream_t stream = nullptr;
  cudaEvent_t forked = nullptr, joined = nullptr;
  /// The split heavy launches' workspace (hubArgs): every heavy launch of
  /// this thread and device runs on `stream`, one after another, so one
  /// workspace serves them all. Grown on demand, never freed (it lives as
  /// long as the thread).
  void *hub = nullptr;
  size_t hubBytes = 0;
};

inline SideStream &sideStream() {
  constexpr int kMaxDevices = 64;
  thread_local SideStream perDevice[kMaxDevices];
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  if (device < 0 || device >= kMaxDevices)
    throw std::runtime_error("hector: CUDA device index " +
                             std::to_string(device) + " out of range");
  SideStream &s = perDevice[device];
  if (!s.stream) {
    check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
    check(cudaEventCreateWithFlags(&s.forked, cudaEventDisableTiming),
          "cudaEventCreateWithFlags");
    check(cudaEventCreateWithFlags(&s.joined, cudaEventDisableTiming),
          "cudaEventCreateWithFlags");
  }
  return s;
}

inline cudaStream_t forkSide(cudaStream_t main) {
  SideStream &s = sideStream();
  check(cudaEventRecord(s.forked, main), "cudaEventRecord (fork)");
  check(cudaStreamWaitEvent(s.stream, s.forked, 0), "cudaStreamWaitEvent (fork)");
  return s.stream;
}

inline void joinSide(cudaStream_t main) {
  SideStream &s = sideStream();
  check(cudaEventRecord(s.joined, s.stream), "cudaEventRecord (join)");
  check(cudaStreamWaitEvent(main, s.joined, 0), "cudaStreamWaitEvent (join)");
}

/// The launch of a kernel's heavy rows: one block of kHeavyGroupSize
/// threads per row (up to 65535 blocks, which then take contiguous chunks
/// of rows), `scratchSize` scalars of shared memory each.
inline LaunchShape heavyLaunchShape(const void *kernel, int64_t rows,
                                    int64_t scratchSize, size_t scalarBytes) {
  LaunchShape s;
  s.warpsPerBlock = kHeavyGroupSize / kWarpSize;
  s.sharedBytes = static_cast<size_t>(scratchSize) * scalarBytes;
  if (s.sharedBytes > 48 * 1024)
    check(cudaFuncSetAttribute(kernel,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(s.sharedBytes)),
          "cudaFuncSetAttribute (heavy-row scratch)");
  s.blocks = std::max<int64_t>(1, std::min<int64_t>(rows, 65535));
  return s;
}

/// The heavy launch of a kernel that splits hubs (HubSplit.h): as many
/// blocks of kHeavyGroupSize threads as the device holds at once, launched
/// cooperatively (launchCooperative), so that all of them run together:
/// the hub barrier waits for other blocks. Zero blocks when not even one
/// fits or the device has no cooperative launch; the caller then falls
/// back to heavyLaunchShape.
inline LaunchShape hubLaunchShape(const void *kernel, int64_t scratchSize,
                                  size_t scalarBytes) {
  LaunchShape s = heavyLaunchShape(kernel, 1, scratchSize, scalarBytes);
  int device = 0, perSm = 0, sms = 0, cooperative = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch,
                               device),
        "cudaDeviceGetAttribute");
  if (!cooperative) {
    s.blocks = 0;
    return s;
  }
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
        "cudaDeviceGetAttribute");
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &perSm, kernel, kHeavyGroupSize, s.sharedBytes),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor (hub launch)");
  s.blocks = std::min<int64_t>(int64_t(perSm) * sms, 65535);
  return s;
}

/// Launches `kernel` (a __global__ function taking exactly `args`, in
/// order and by type) as a cooperative grid of `shape`: CUDA then
/// guarantees that every block runs at the same time as every other.
template <typename... Args>
cudaError_t launchCooperative(const void *kernel, const LaunchShape &shape,
                              cudaStream_t stream, Args... args) {
  void *pointers[] = {static_cast<void *>(&args)...};
  return cudaLaunchCooperativeKernel(
      kernel, dim3(static_cast<unsigned>(shape.blocks)),
      dim3(static_cast<unsigned>(shape.warpsPerBlock * 32)), pointers,
      shape.sharedBytes, stream);
}

/// The smallest share of a hub's edges per block: HECTOR_HUB_PIECE_EDGES
/// from the environment when set to a positive number (the tests split
/// small hubs), else kHubPieceEdges.
inline int64_t hubPieceEdges() {
  if (const char *text = std::getenv("HECTOR_HUB_PIECE_EDGES")) {
    char *end = nullptr;
    const long long v = std::strtoll(text, &end, 10);
    if (end != text && *end == '\0' && v > 0)
      return v;
  }
  return kHubPieceEdges;
}

/// The arguments of a split heavy launch on `side` (this thread's side
/// stream): `rows` heavy rows with `width` combining slots of
/// `scalarBytes` each, in the side stream's workspace, zeroed on `side`.
inline HubArgs hubArgs(int64_t rows, int64_t width, size_t scalarBytes,
                       cudaStream_t side) {
  SideStream &s = sideStream();
  const size_t bytes = static_cast<size_t>(
      hubCounterBytes(rows) + rows * width * static_cast<int64_t>(scalarBytes));
  if (bytes > s.hubBytes) {
    const size_t grown = std::max(bytes, 2 * s.hubBytes);
    if (s.hub) {
      // Earlier launches on the side stream may still read the old one.
      check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize (hub)");
      check(cudaFree(s.hub), "cudaFree (hub workspace)");
      s.hub = nullptr;
      s.hubBytes = 0;
    }
    check(cudaMalloc(&s.hub, grown), "cudaMalloc (hub workspace)");
    s.hubBytes = grown;
  }
  check(cudaMemsetAsync(s.hub, 0, bytes, side), "cudaMemsetAsync (hub)");
  HubArgs a;
  a.workspace = s.hub;
  a.rows = rows;
  a.width = width;
  a.pieceEdges = hubPieceEdges();
  return a;
}

} // namespace hector::trav
