// TraversalCuda.h: host-side launch helpers of the traversal template for
// the generated CUDA code (Traversal.h has the device side).
#pragma once

#include "templates/CudaHost.h"
#include "templates/DeviceQueries.h"
#include "templates/traversal/HostSwitches.h"
#include "templates/traversal/HubSplit.h"
#include "templates/traversal/Traversal.h"
#include "templates/traversal/ZeroFillCuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <stdexcept>
#include <string>

namespace hector::trav {

/// Throws std::runtime_error naming `what` when `err` is an error (the
/// generated host code calls it as hector::trav::check).
using templates::cuda_host::check;

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
/// `groupLanes`: the lanes of one thread group (a warp, or fewer for a
/// flat row loop's narrow rows, rowGroupLanes); each warp then holds
/// kWarpSize / groupLanes groups, rows and scratches.
inline LaunchShape launchShape(const void *kernel, int64_t rows,
                               int64_t scratchSize, size_t scalarBytes,
                               bool single = false,
                               int groupLanes = kWarpSize) {
  LaunchShape s;
  const int64_t groupsPerWarp = kWarpSize / groupLanes;
  const size_t perWarp =
      static_cast<size_t>(scratchSize * groupsPerWarp) * scalarBytes;
  const size_t budget = 48 * 1024;
  if (single)
    s.warpsPerBlock = 1;
  else if (perWarp > 0)
    s.warpsPerBlock = static_cast<int>(
        std::max<size_t>(1, std::min<size_t>(8, budget / perWarp)));
  s.sharedBytes = perWarp * s.warpsPerBlock;
  if (s.sharedBytes > budget)
    check(templates::allowDynamicShared(kernel, s.sharedBytes),
          "cudaFuncSetAttribute (scratch too large for shared memory)");
  const int64_t perBlock = s.warpsPerBlock * groupsPerWarp;
  const int64_t wanted = (rows + perBlock - 1) / perBlock;
  s.blocks =
      single ? 1 : std::max<int64_t>(1, std::min<int64_t>(wanted, 65535));
  return s;
}

/// The blocks of `threads` threads and `sharedBytes` of dynamic shared
/// memory that the current device holds at once for `kernel`: 0 when not
/// even one fits (asked once per shape: DeviceQueries.h).
inline int64_t residentBlocks(const void *kernel, int threads,
                              size_t sharedBytes, const char *what) {
  long long blocks = 0;
  check(templates::residentBlocksOnDevice(kernel, threads, sharedBytes,
                                          &blocks),
        what);
  return blocks;
}

/// launchShape capped at the blocks resident at once (one wave), at least
/// one block: for kernels whose warps loop over their rows (a row queue's,
/// a row sum's).
inline LaunchShape oneWaveLaunchShape(const void *kernel, int64_t rows,
                                      int64_t scratchSize, size_t scalarBytes,
                                      bool single = false,
                                      int groupLanes = kWarpSize) {
  LaunchShape s = launchShape(kernel, rows, scratchSize, scalarBytes, single,
                              groupLanes);
  if (single)
    return s;
  s.blocks = std::max<int64_t>(
      1, std::min<int64_t>(
             s.blocks, residentBlocks(kernel, s.warpsPerBlock * kWarpSize,
                                      s.sharedBytes,
                                      "cudaOccupancyMaxActiveBlocksPerMultiprocessor (one wave)")));
  return s;
}

/// The blocks of `s` that give each thread group (`groupLanes` lanes)
/// `rowsPerGroup` of `rows` rows.
inline int64_t blocksForGroupChunks(const LaunchShape &s, int64_t rows,
                                    int groupLanes, int64_t rowsPerGroup) {
  const int64_t perBlock = int64_t(s.warpsPerBlock) *
                           (kWarpSize / groupLanes) * rowsPerGroup;
  return (rows + perBlock - 1) / perBlock;
}

/// Rows each thread group of a row sum takes at least (rowSumsLaunchShape).
constexpr int64_t kRowSumRowsPerGroup = 8;

/// launchShape for a kernel whose rows all cost about the same and whose
/// groups flush partial-atomic accumulators (a bias gradient summed over
/// all nodes): one wave, so that on large graphs each warp folds many rows
/// before its atomic adds (with a warp per row, mutag's RGAT backward made
/// 1.7 M adds to grad_bias's 64 floats, and the kernel took 130 us), and
/// at least kRowSumRowsPerGroup rows per group on small ones: a wave holds
/// about as many warps as aifb and fb15k have rows, and their bias sums
/// took 38 us, each of grad_bias's floats taking 7 K to 14 K atomic adds
/// one after another (Nsight Compute: 5% SM throughput).
inline LaunchShape rowSumsLaunchShape(const void *kernel, int64_t rows,
                                      int64_t scratchSize, size_t scalarBytes,
                                      bool single = false,
                                      int groupLanes = kWarpSize) {
  LaunchShape s = oneWaveLaunchShape(kernel, rows, scratchSize, scalarBytes,
                                     single, groupLanes);
  if (single)
    return s;
  const int64_t chunked =
      blocksForGroupChunks(s, rows, groupLanes, kRowSumRowsPerGroup);
  s.blocks = std::max<int64_t>(1, std::min(s.blocks, chunked));
  return s;
}

/// Rows each thread group takes at most in a launch of a kernel whose
/// rows hold neighbour loops and whose groups flush partial-atomic
/// accumulators (partialRowsLaunchShape; fewer when a wave of blocks
/// needs them).
#ifndef HECTOR_PARTIAL_ROWS_PER_GROUP
#define HECTOR_PARTIAL_ROWS_PER_GROUP 16
#endif
constexpr int64_t kPartialRowsPerGroup = HECTOR_PARTIAL_ROWS_PER_GROUP;

/// launchShape for a kernel whose rows hold neighbour loops and whose
/// groups flush partial-atomic accumulators (a bias gradient fused into an
/// edge loop's kernel): each group takes a contiguous chunk of up to
/// HECTOR_PARTIAL_ROWS_PER_GROUP rows (environment, else
/// kPartialRowsPerGroup), so that it folds them before its atomic adds,
/// but the launch keeps at least the blocks the device holds at once. A
/// group per row made am's RGCN backward add 1.9 M rows into grad_bias's
/// 64 floats (3.6 ms of a 13 ms step). One wave (oneWaveLaunchShape) was
/// slower: rows of uneven degree in long chunks left the GPU waiting on
/// the slowest, and fb15k's 14.5 K rows in chunks of 16 filled 113 of 132
/// SMs (docs/perf-notes.md section 22).
inline LaunchShape partialRowsLaunchShape(const void *kernel, int64_t rows,
                                          int64_t scratchSize,
                                          size_t scalarBytes,
                                          bool single = false,
                                          int groupLanes = kWarpSize) {
  LaunchShape s = launchShape(kernel, rows, scratchSize, scalarBytes, single,
                              groupLanes);
  const int64_t perGroup = std::max<int64_t>(
      1, envCount("HECTOR_PARTIAL_ROWS_PER_GROUP", kPartialRowsPerGroup));
  if (single || perGroup == 1)
    return s;
  const int64_t chunked = blocksForGroupChunks(s, rows, groupLanes, perGroup);
  const int64_t wave = residentBlocks(
      kernel, s.warpsPerBlock * kWarpSize, s.sharedBytes,
      "cudaOccupancyMaxActiveBlocksPerMultiprocessor (partial rows)");
  s.blocks = std::min(s.blocks, std::max({chunked, wave, int64_t{1}}));
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
  int optin = 0;
  check(templates::deviceAttribute(cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                   &optin),
        "cudaDeviceGetAttribute");
  return bytes <= static_cast<size_t>(optin);
}

/// On large graphs the warp launch runs on a second stream beside the
/// heavy launch (launchStreams, joinLaunches): this thread's side stream
/// of the current device and its fork and join events, made once per
/// thread and device (thread-local, so that ops issued from several
/// threads do not share events).
struct SideStream {
  cudaStream_t stream = nullptr;
  cudaEvent_t forked = nullptr, joined = nullptr;
};

/// The devices the per-device tables below hold.
constexpr int kMaxDevices = 64;

/// The current device's index, checked against kMaxDevices.
inline int currentDeviceSlot() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  if (device < 0 || device >= kMaxDevices)
    throw std::runtime_error("hector: CUDA device index " +
                             std::to_string(device) + " out of range");
  return device;
}

inline SideStream &sideStream() {
  thread_local SideStream perDevice[kMaxDevices];
  SideStream &s = perDevice[currentDeviceSlot()];
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

/// Graphs with at least this many edges run a node-row kernel's heavy and
/// warp launches side by side (overlapLaunches). The environment may set
/// it too (HECTOR_HEAVY_FIRST_EDGES, read per launch: the tests take both
/// ways on small graphs; the name says that the heavy launch goes first,
/// on the op's stream, when the two overlap).
#ifndef HECTOR_HEAVY_FIRST_EDGES
#define HECTOR_HEAVY_FIRST_EDGES (1 << 20)
#endif
constexpr int64_t kHeavyFirstEdges = HECTOR_HEAVY_FIRST_EDGES;

/// Whether a graph of `edges` edges runs the heavy and warp launches side
/// by side: the heavy launch first on the op's stream, the warp launch on
/// the side stream. A cooperative (split) heavy launch needs all its
/// blocks resident at once, so queued behind a warp launch that fills the
/// GPU it would wait for that launch to drain; issued first it starts at
/// once, its blocks without work exit, and the warp launch fills their
/// SMs (biokg 1.07x to 1.30x). On small graphs the overlap loses: run
/// beside the heavy launch, the warp launch took 1.8x as long (mutag
/// RGCN and RGAT inference, H100), so there both go on the op's stream,
/// one after the other (docs/perf-notes.md sections 16 and 18).
inline bool overlapLaunches(int64_t edges) {
  return edges >= envCount("HECTOR_HEAVY_FIRST_EDGES", kHeavyFirstEdges);
}

/// Whether `stream` is being captured into a CUDA graph.
using templates::cuda_host::capturing;

/// The streams of a node-row kernel's heavy and warp launches; `forked`
/// when the warp launch went to the side stream (joinLaunches then makes
/// the op's stream wait for it).
struct LaunchStreams {
  cudaStream_t heavy = nullptr, warp = nullptr;
  bool forked = false;
};

/// Side by side when there is a heavy launch and overlapLaunches(edges),
/// except under capture: as two branches of a graph the launches ran side
/// by side on small graphs too, with the same 1.8x slower warp launch.
/// Otherwise both on `main`.
inline LaunchStreams launchStreams(cudaStream_t main, bool heavyLaunch,
                                   int64_t edges) {
  if (!heavyLaunch || !overlapLaunches(edges) || capturing(main))
    return {main, main, false};
  SideStream &s = sideStream();
  check(cudaEventRecord(s.forked, main), "cudaEventRecord (fork)");
  check(cudaStreamWaitEvent(s.stream, s.forked, 0), "cudaStreamWaitEvent (fork)");
  return {main, s.stream, true};
}

inline void joinLaunches(const LaunchStreams &streams, cudaStream_t main) {
  if (!streams.forked)
    return;
  SideStream &s = sideStream();
  check(cudaEventRecord(s.joined, streams.warp), "cudaEventRecord (join)");
  check(cudaStreamWaitEvent(main, s.joined, 0), "cudaStreamWaitEvent (join)");
}

/// The launch of a kernel's heavy rows: one block of `groupSize` threads
/// (the kernel's kGroupSize) per row (up to 65535 blocks, which then take
/// contiguous chunks of rows), `scratchSize` scalars of shared memory
/// each.
inline LaunchShape heavyLaunchShape(const void *kernel, int64_t rows,
                                    int64_t scratchSize, size_t scalarBytes,
                                    int groupSize = kHeavyGroupSize) {
  LaunchShape s;
  s.warpsPerBlock = groupSize / kWarpSize;
  s.sharedBytes = static_cast<size_t>(scratchSize) * scalarBytes;
  if (s.sharedBytes > 48 * 1024)
    check(templates::allowDynamicShared(kernel, s.sharedBytes),
          "cudaFuncSetAttribute (heavy-row scratch)");
  s.blocks = std::max<int64_t>(1, std::min<int64_t>(rows, 65535));
  return s;
}

/// The heavy launch of a kernel that splits hubs (HubSplit.h): as many
/// blocks of `groupSize` threads as the device holds at once, launched
/// cooperatively (launchCooperative), so that all of them run together:
/// the hub barrier waits for other blocks. Zero blocks when not even one
/// fits or the device has no cooperative launch; the caller then falls
/// back to heavyLaunchShape.
inline LaunchShape hubLaunchShape(const void *kernel, int64_t scratchSize,
                                  size_t scalarBytes,
                                  int groupSize = kHeavyGroupSize) {
  LaunchShape s =
      heavyLaunchShape(kernel, 1, scratchSize, scalarBytes, groupSize);
  int cooperative = 0;
  check(templates::deviceAttribute(cudaDevAttrCooperativeLaunch, &cooperative),
        "cudaDeviceGetAttribute");
  if (!cooperative) {
    s.blocks = 0;
    return s;
  }
  s.blocks = std::min<int64_t>(
      residentBlocks(
          kernel, groupSize, s.sharedBytes,
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor (hub launch)"),
      65535);
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
  const int64_t v = envCount("HECTOR_HUB_PIECE_EDGES", kHubPieceEdges);
  return v > 0 ? v : kHubPieceEdges;
}

/// The memory pool of the split heavy launches' workspaces and the warp
/// launches' row queues (queuedLaunchShape), one per device:
/// stream-ordered allocations (cudaMallocFromPoolAsync), so that launches
/// on different streams each get their own and one is reused only after
/// the launch that had it. The pool keeps what it holds (an unbounded
/// release threshold): a step then allocates without calling the driver's
/// allocator, even after a synchronisation.
inline cudaMemPool_t hubPool() {
  static std::mutex mutex;
  static cudaMemPool_t pools[kMaxDevices] = {};
  const int device = currentDeviceSlot();
  std::lock_guard<std::mutex> lock(mutex);
  if (!pools[device]) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate (hub)");
    uint64_t keep = UINT64_MAX;
    check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
                                  &keep),
          "cudaMemPoolSetAttribute (hub)");
    pools[device] = pool;
  }
  return pools[device];
}

/// `bytes` allocated from hubPool and zeroed on `stream` (the hub
/// workspace, a row queue); `what` names the buffer in errors, and the
/// message is only built for one. Freed with cudaFreeAsync on a stream
/// past its use.
inline void *zeroedPoolBytes(size_t bytes, cudaStream_t stream,
                             const char *what) {
  auto fail = [&](cudaError_t err, const char *call) {
    check(err, (std::string(call) + " (" + what + ")").c_str());
  };
  void *p = nullptr;
  if (cudaError_t err = cudaMallocFromPoolAsync(&p, bytes, hubPool(), stream))
    fail(err, "cudaMallocFromPoolAsync");
  if (cudaError_t err = cudaMemsetAsync(p, 0, bytes, stream))
    fail(err, "cudaMemsetAsync");
  return p;
}

/// The arguments of a split heavy launch on `stream`: `rows` heavy rows
/// with `width` combining slots of `scalarBytes` each, in a workspace
/// allocated and zeroed on `stream` (hubPool); hubRelease gives it back
/// after the launch.
inline HubArgs hubArgs(int64_t rows, int64_t width, size_t scalarBytes,
                       cudaStream_t stream) {
  const size_t bytes = static_cast<size_t>(
      hubCounterBytes(rows) + rows * width * static_cast<int64_t>(scalarBytes));
  HubArgs a;
  a.workspace = zeroedPoolBytes(bytes, stream, "hub workspace");
  a.rows = rows;
  a.width = width;
  a.pieceEdges = hubPieceEdges();
  return a;
}

/// Frees hubArgs' workspace once `stream` is past the launch that used it.
inline void hubRelease(const HubArgs &a, cudaStream_t stream) {
  if (a.workspace)
    check(cudaFreeAsync(a.workspace, stream), "cudaFreeAsync (hub workspace)");
}

/// A warp launch's shape and its row queue.
struct QueuedLaunch {
  LaunchShape shape;
  RowQueue queue;
};

/// launchShape for the queued warp launch of a node-row kernel with
/// neighbour loops (rows of uneven cost) on `stream`, capped at one wave
/// of blocks, and its row queue: a counter allocated from the hub pool and
/// zeroed on `stream` (rowQueueRelease gives it back after the launch).
/// `single` (deterministic mode with atomics) keeps launchShape's one warp,
/// which takes the rows in order. Capping at 4 waves, or not at all, was
/// no faster (docs/perf-notes.md section 23).
inline QueuedLaunch queuedLaunchShape(const void *kernel, int64_t rows,
                                      int64_t scratchSize, size_t scalarBytes,
                                      bool single, cudaStream_t stream,
                                      int groupLanes = kWarpSize) {
  QueuedLaunch q;
  q.shape = oneWaveLaunchShape(kernel, rows, scratchSize, scalarBytes, single,
                               groupLanes);
  q.queue.next = static_cast<unsigned long long *>(
      zeroedPoolBytes(sizeof(unsigned long long), stream, "row queue"));
  return q;
}

/// The lanes of a node-row kernel's narrow groups: two rows per warp. A
/// 64-wide row is 16 lanes of quads.
constexpr int kNarrowNodeRowLanes = 16;
/// The most edges per row, on average, at which node-row kernels take
/// narrow groups. RGAT's forward on an H100 (docs/perf-notes.md section
/// 42): 1.04x to 1.06x at 3 to 11 edges per node, 0.94x to 0.98x at 41
/// and 51.
constexpr int64_t kNarrowNodeRowEdges = 16;
/// The blocks of 256 threads an SM that the launch bounds of a 16-lane
/// node-row kernel's chunked fixed-hyper instantiation ask for: at most 40
/// registers a thread (RGAT's forward had 54; ptxas now spills 32 bytes).
/// RGAT inference on an H100 with TF32: am 1.026x, wikikg2 1.015x, mag
/// 0.999x (docs/perf-notes.md section 46).
constexpr int kNarrowNodeRowMinBlocks = 6;

/// The lanes of a group of a node-row kernel's warp launch (its rows hold
/// edge loops split over workers): kNarrowNodeRowLanes when the rows have
/// at most kNarrowNodeRowEdges edges on average, a warp otherwise and in
/// a single-group launch (`single`: deterministic mode with atomics).
/// HECTOR_NODE_ROW_LANES=16 or 32 sets it for every launch (tests, A/B
/// runs).
inline int nodeRowLanes(int64_t edges, int64_t rows, bool single) {
  if (single)
    return kWarpSize;
  const int64_t forced = envCount("HECTOR_NODE_ROW_LANES", 0);
  if (forced == kNarrowNodeRowLanes || forced == kWarpSize)
    return static_cast<int>(forced);
  return edges <= kNarrowNodeRowEdges * rows ? kNarrowNodeRowLanes
                                             : kWarpSize;
}

/// Frees a queuedLaunchShape counter once `stream` is past its launch.
inline void rowQueueRelease(const RowQueue &q, cudaStream_t stream) {
  if (q.next)
    check(cudaFreeAsync(q.next, stream), "cudaFreeAsync (row queue)");
}

} // namespace hector::trav
