// Traversal.h: the traversal template's building blocks (hector.txt section
// 3.3, Algorithm 2), shared by the generated CUDA (kernels.cu) and C++
// (kernels_cpu.cpp) code. No torch and no CUDA runtime API here.
//
// The emitter (codegen/TraversalEmitter) prints each traversal instance as
// a loop nest over rows (edges, pairs, nodes, types). A row is handled by a
// thread group: on the GPU a warp, or a whole block of kHeavyGroupSize
// threads for the heavy rows below; one thread on the CPU. Every kernel
// names its group size kGroupSize (a template parameter of the CUDA
// kernels, 1 in the CPU ones). Within a group, every statement is an
// element loop over its target row, HECTOR_FOR_ELEMENTS(i, n), in which
// element i always goes to the same lane (i mod hector_lanes on the GPU),
// so per-element accumulators (segmented and partial-atomic reductions)
// need no synchronisation; values other lanes read (registers, kept in
// per-group scratch memory) are published by HECTOR_GROUP_SYNC() after
// each statement.
//
// An edge loop of a row (a node's incoming or outgoing edges) may be split
// over workers: the group's lanes form workersFor(n, kGroupSize) workers
// (n: the widest row the loop writes), each worker takes every W-th edge,
// and the kernel shadows hector_lane and hector_lanes with the worker's own
// inside the loop. All lanes run the loop the same number of times (a
// worker past its last edge skips the statements) so that HECTOR_GROUP_SYNC
// stays the whole group's. A hub node's narrow edge statements (attention
// scores, softmax sums: one scalar per head) then run many edges at a time
// instead of one.
//
// Heavy rows: a node-row kernel whose edge loops are split over workers is
// launched twice on the GPU. The warp launch skips the nodes with more
// than GraphArrays::heavy_row_edges edges in the split direction; the
// heavy launch, first (and on large graphs beside the warp launch, on
// another stream: TraversalCuda.h overlapLaunches), gives each of those
// nodes (GraphArrays' heavy_dst_rows / heavy_src_rows) a block of
// kHeavyGroupSize threads. On a power-law graph the hubs otherwise keep
// one warp busy long after the rest of the GPU is idle
// (docs/perf-notes.md).
#pragma once

#include <cmath>
#include <cstdint>
#include <math.h>
#include <type_traits>

#include "templates/Activations.h"

#if defined(_OPENMP) && !defined(__CUDACC__)
#include <omp.h>
#endif

#if defined(__CUDACC__)
#define HECTOR_HD __host__ __device__ __forceinline__
/// Kernels declare hector_lane and hector_lanes (kGroupSize); a
/// worker-split edge loop shadows them with its worker's.
/// Element indices are ints: a row has fewer than 2^31 elements (the host
/// functions check), and 32-bit index arithmetic and division cost a
/// fraction of 64-bit ones.
#define HECTOR_FOR_ELEMENTS(i, n)                                              \
  for (int i = hector_lane; i < (n); i += hector_lanes)
#define HECTOR_GROUP_SYNC() hector::trav::groupSync<kGroupSize>()
#define HECTOR_UNROLL _Pragma("unroll")
/// Batches of HECTOR_GROUP_BATCH elements per lane: element
/// i0 + u * hector_lanes for u < HECTOR_GROUP_BATCH (see HECTOR_BATCH
/// below).
#define HECTOR_GROUP_BATCH                                                     \
  (kGroupSize > hector::trav::kWarpSize ? HECTOR_HEAVY_BATCH : HECTOR_BATCH)
#define HECTOR_FOR_ELEMENT_BATCHES(i0, n)                                      \
  for (int i0 = hector_lane; i0 < (n); i0 += hector_lanes * HECTOR_GROUP_BATCH)
#define HECTOR_FOR_BATCH(u, i, i0, n)                                          \
  HECTOR_UNROLL for (int u = 0; u < HECTOR_GROUP_BATCH; ++u)                  \
    if (const int i = (i0) + u * hector_lanes; i < (n))
/// Quads of 4 consecutive elements per lane, for rows whose size is a
/// multiple of 4 (quadAccumulates): lane l takes elements 4l to 4l + 3,
/// then 4 (l + lanes) and on.
#define HECTOR_FOR_ELEMENT_QUADS(i0, n)                                        \
  for (int i0 = 4 * hector_lane; i0 < (n); i0 += 4 * hector_lanes)
#else
#define HECTOR_HD inline
#define HECTOR_FOR_ELEMENTS(i, n) for (int64_t i = 0; i < (n); ++i)
#define HECTOR_GROUP_SYNC() ((void)0)
#define HECTOR_UNROLL
#define HECTOR_GROUP_BATCH HECTOR_BATCH
#define HECTOR_FOR_ELEMENT_BATCHES(i0, n)                                      \
  for (int64_t i0 = 0; i0 < (n); i0 += HECTOR_BATCH)
#define HECTOR_FOR_BATCH(u, i, i0, n)                                          \
  for (int u = 0; u < HECTOR_BATCH; ++u)                                      \
    if (const int64_t i = (i0) + u; i < (n))
#define HECTOR_FOR_ELEMENT_QUADS(i0, n) for (int64_t i0 = 0; i0 < (n); i0 += 4)
#endif

/// A statement whose target shares no storage with its operands computes
/// HECTOR_BATCH elements into registers before storing any: the compiler
/// cannot prove that a store to the target does not change the next
/// element's operands, so an element-at-a-time loop waits for every load
/// in turn (one memory latency per element); a batch issues its loads
/// together.
#ifndef HECTOR_BATCH
#define HECTOR_BATCH 1
#endif
/// The batch of the heavy rows' block groups (GPU). 4 is the batch of the
/// fastest variant measured, together with 1024-thread blocks; a batch
/// alone did not speed the hubs up, whose edge loops wait on their index
/// loads rather than on element loads (docs/perf-notes.md section 10).
/// HECTOR_BATCH stays the warp groups' (section 2 found batches slower
/// there).
#ifndef HECTOR_HEAVY_BATCH
#define HECTOR_HEAVY_BATCH 4
#endif

namespace hector::trav {

/// Threads of the group that handles one heavy row on the GPU (one block).
#ifndef HECTOR_HEAVY_GROUP_SIZE
#define HECTOR_HEAVY_GROUP_SIZE 1024
#endif
constexpr int kHeavyGroupSize = HECTOR_HEAVY_GROUP_SIZE;
constexpr int kWarpSize = 32;

#if defined(__CUDACC__)
/// The lanes of this thread's warp that belong to its group of GroupSize
/// lanes: the whole warp for warp and block groups; for a group of a few
/// lanes (narrow rows, or two node rows per warp) its own lanes only,
/// since the warp's other groups walk other rows.
template <int GroupSize> __device__ __forceinline__ unsigned groupLaneMask() {
  if constexpr (GroupSize >= kWarpSize) {
    return 0xffffffffu;
  } else {
    const unsigned first = (threadIdx.x % kWarpSize) / GroupSize * GroupSize;
    return ((1u << GroupSize) - 1u) << first;
  }
}

/// Publishes a group's scratch writes to the whole group: a warp sync for
/// warp groups (or the group's lanes of it), a block barrier for block
/// groups.
template <int GroupSize> __device__ __forceinline__ void groupSync() {
  if constexpr (GroupSize < kWarpSize) {
    __syncwarp(groupLaneMask<GroupSize>());
  } else if constexpr (GroupSize == kWarpSize) {
    __syncwarp();
  } else {
    __syncthreads();
  }
}
#endif

/// `*target += value` where several groups may add to the same element.
template <typename T> HECTOR_HD void atomicAdd(T *target, T value) {
#if defined(__CUDA_ARCH__)
  ::atomicAdd(target, value);
#elif defined(_OPENMP)
#pragma omp atomic
  *target += value;
#else
  *target += value;
#endif
}

/// `*target += value` from an atomic reduction: a plain add when `ordered`
/// (deterministic mode: the kernel runs as one thread group, which then
/// owns every target element, so the adds happen in program order), an
/// atomic add otherwise.
template <typename T>
HECTOR_HD void accumulate(T *target, T value, bool ordered) {
  if (ordered)
    *target += value;
  else
    atomicAdd(target, value);
}

/// Whether an atomic statement's row at `target` (`size` elements) may be
/// added four elements at a time (accumulateQuad): float rows of whole
/// 16-byte quads on an sm_90 GPU, not in deterministic mode. A scalar
/// atomic add is one L2 operation per float; RGAT's backward made 64 an
/// edge into grad_msg_0 (docs/perf-notes.md section 25f).
template <typename T>
HECTOR_HD bool quadAccumulates(const T *target, int64_t size, bool ordered) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (std::is_same<T, float>::value)
    return !ordered && size % 4 == 0 &&
           (reinterpret_cast<uintptr_t>(target) & 15) == 0;
#endif
  (void)target;
  (void)size;
  (void)ordered;
  return false;
}

/// Whether an element loop may read its rows `rows` four elements at a
/// time (rowQuad, HECTOR_FOR_ELEMENT_QUADS): float rows of whole 16-byte
/// quads, on the GPU. A 64-wide row gathered per edge takes two 16-byte
/// loads a lane instead of eight 4-byte ones; RGCN's edge loop reached
/// 39% of DRAM bandwidth with the scalar loads (docs/perf-notes.md
/// section 35).
template <typename T, typename... Rows>
HECTOR_HD bool quadRows(int64_t size, const Rows *...rows) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same<T, float>::value)
    return size % 4 == 0 &&
           ((reinterpret_cast<uintptr_t>(rows) | ... | uintptr_t{0}) & 15) == 0;
#endif
  (void)size;
  ((void)rows, ...);
  return false;
}

/// Elements i0 to i0 + 3 of a row, loaded at once (one 16-byte load for a
/// float row on the GPU; quadRows says when the row allows it) and read
/// back by their element index: quad[i] is row[i] for i0 <= i < i0 + 4.
/// In a loop unrolled over the four elements, i - i0 is a constant and the
/// quad stays in registers.
template <typename T, typename I> struct RowQuad {
  T v[4];
  I first;
  HECTOR_HD T operator[](I i) const { return v[i - first]; }
};

template <typename T, typename I>
HECTOR_HD RowQuad<T, I> rowQuad(const T *row, I first) {
  RowQuad<T, I> q;
  q.first = first;
#if defined(__CUDA_ARCH__)
  constexpr bool kVector = std::is_same<T, float>::value;
#else
  constexpr bool kVector = false;
#endif
  if constexpr (kVector) {
#if defined(__CUDA_ARCH__)
    const float4 f = *reinterpret_cast<const float4 *>(row + first);
    q.v[0] = f.x;
    q.v[1] = f.y;
    q.v[2] = f.z;
    q.v[3] = f.w;
#endif
  } else {
    for (int c = 0; c < 4; ++c)
      q.v[c] = row[first + c];
  }
  return q;
}

/// `target[c] += value[c]` for c < 4, atomically: one 16-byte vector
/// atomic where quadAccumulates holds, else four scalar ones.
template <typename T>
HECTOR_HD void accumulateQuad(T *target, const T (&value)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr bool kVector = std::is_same<T, float>::value;
#else
  constexpr bool kVector = false;
#endif
  if constexpr (kVector) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    ::atomicAdd(reinterpret_cast<float4 *>(target),
                make_float4(value[0], value[1], value[2], value[3]));
#endif
  } else {
    for (int c = 0; c < 4; ++c)
      atomicAdd(target + c, value[c]);
  }
}

// Elementwise functions of the IR's ops (docs/ir.md), for float and double
// (the generated kernels are templates over the scalar type).
HECTOR_HD float exp(float x) { return expf(x); }
HECTOR_HD double exp(double x) { return ::exp(x); }
HECTOR_HD float log(float x) { return logf(x); }
HECTOR_HD double log(double x) { return ::log(x); }
HECTOR_HD float tanh(float x) { return tanhf(x); }
HECTOR_HD double tanh(double x) { return ::tanh(x); }
HECTOR_HD float sqrt(float x) { return sqrtf(x); }
HECTOR_HD double sqrt(double x) { return ::sqrt(x); }
HECTOR_HD float erf(float x) { return erff(x); }
HECTOR_HD double erf(double x) { return ::erf(x); }
template <typename T> HECTOR_HD T max(T a, T b) { return a > b ? a : b; }
template <typename T> HECTOR_HD T infinity() { return static_cast<T>(INFINITY); }

template <typename T> HECTOR_HD T relu(T x) { return x > T(0) ? x : T(0); }
template <typename T> HECTOR_HD T leakyRelu(T x, T slope) {
  return x > T(0) ? x : x * slope;
}
/// The logistic sigmoid and the exact (erf) GELU, as the GEMM template
/// applies them too (templates/Activations.h).
template <typename T> HECTOR_HD T sigmoid(T x) {
  return activations::sigmoid(x);
}
template <typename T> HECTOR_HD T gelu(T x) { return activations::gelu(x); }
template <typename T> HECTOR_HD T reluGrad(T x) {
  return x > T(0) ? T(1) : T(0);
}
template <typename T> HECTOR_HD T leakyReluGrad(T x, T slope) {
  return x > T(0) ? T(1) : slope;
}
/// d/dx x*Phi(x) = Phi(x) + x*phi(x).
template <typename T> HECTOR_HD T geluGrad(T x) {
  const T cdf = T(0.5) * (T(1) + erf(x * T(0.70710678118654752440)));
  const T pdf = exp(T(-0.5) * x * x) * T(0.39894228040143267794);
  return cdf + x * pdf;
}
template <typename T> HECTOR_HD T eq(T a, T b) { return a == b ? T(1) : T(0); }

/// The larger of its arguments (the widest row a loop writes).
HECTOR_HD int64_t maxOf(int64_t a) { return a; }
template <typename... Rest>
HECTOR_HD int64_t maxOf(int64_t a, int64_t b, Rest... rest) {
  return maxOf(a > b ? a : b, rest...);
}

/// Elements each lane of a worker handles in the widest row of a
/// worker-split loop: fewer lanes per worker (more edges in flight) for
/// narrow rows, at most this many sequential elements per lane for wide
/// ones. 8: a 64-wide row gets 8 lanes per worker, whose loads of one
/// element step cover whole 32-byte sectors, and 4 workers per warp with a
/// quarter of the accumulator scratch of 16. With 32 (2 lanes per worker)
/// each warp load touched 16 rows for 8 bytes each, and the kernels were
/// bound by their L1 and L2 traffic (docs/perf-notes.md section 15).
#ifndef HECTOR_ELEMENTS_PER_WORKER_LANE
#define HECTOR_ELEMENTS_PER_WORKER_LANE 8
#endif
constexpr int64_t kElementsPerWorkerLane = HECTOR_ELEMENTS_PER_WORKER_LANE;

/// Most scalars one per-worker scratch buffer of a loop may take (its
/// widest row times the worker count), so that a block group's scratch
/// fits in shared memory; a warp group never reaches it.
#ifndef HECTOR_MAX_WORKER_ELEMENTS
#define HECTOR_MAX_WORKER_ELEMENTS 8192
#endif
constexpr int64_t kMaxWorkerElements = HECTOR_MAX_WORKER_ELEMENTS;

/// How many workers a group of `groupSize` lanes forms for an edge loop
/// whose widest row has `widest` elements: groupSize / (lanes per worker),
/// with lanes per worker the smallest power of two >= widest /
/// kElementsPerWorkerLane that keeps workers x widest within
/// kMaxWorkerElements, at most groupSize. One on the CPU (groupSize 1).
HECTOR_HD int64_t workersFor(int64_t widest, int64_t groupSize) {
  int64_t lanes = 1;
  while (lanes < groupSize && (lanes * kElementsPerWorkerLane < widest ||
                               (groupSize / lanes) * widest >
                                   kMaxWorkerElements))
    lanes *= 2;
  return groupSize / lanes;
}

/// Shared-memory banks: consecutive 4-byte words fall in consecutive
/// banks, modulo this many.
constexpr int64_t kSharedBanks = 32;

/// The scalars between consecutive workers' copies of a per-worker buffer
/// of `size` scalars (a worker-split loop's accumulators), when
/// `groupSize` lanes form `workers` workers of L = groupSize / workers
/// lanes. Lane l of a warp is sublane l % L of worker l / L and touches
/// element sublane + L * k of its copy, at word
/// worker * stride + sublane + L * k: with stride = L (mod 32) that is
/// l + L * k (mod 32), a distinct bank for each lane of the warp. Unpadded
/// (stride = size, a multiple of 32 for the usual 64-wide rows) every
/// worker's lane hit the same bank: a 16-way conflict on each accumulator
/// update of a warp of 16 workers. The smallest such stride >= size; size
/// itself when a worker has a warp or more (no two workers share a warp).
HECTOR_HD int64_t workerStride(int64_t size, int64_t workers,
                               int64_t groupSize) {
  const int64_t lanes = groupSize / workers;
  if (workers <= 1 || lanes >= kSharedBanks)
    return size;
  const int64_t pad = ((lanes - size) % kSharedBanks + kSharedBanks) % kSharedBanks;
  return size + pad;
}

/// The lanes of one group of a flat row loop (edges, pairs: no neighbour
/// loop): as many as a worker of a warp would take for the widest row
/// (workersFor), so that a row of one scalar per head takes one lane and
/// a 64-wide row eight, instead of a whole warp per row.
HECTOR_HD int rowGroupLanes(int64_t widest) {
  return static_cast<int>(kWarpSize / workersFor(widest, kWarpSize));
}

/// Lanes that fold each element of a segmented reduction's per-worker
/// copies together (shuffle partners within a warp): a power of two, at
/// most a warp and at most `workers`, and only as many as leave the
/// element rounds of a one-lane fold unchanged (p * size <= groupSize).
/// A narrow row's fold otherwise ran on one lane: an attention score's
/// max over a block group's 1024 one-lane workers was 1024 dependent
/// shared-memory loads. One on the CPU (groupSize 1).
HECTOR_HD int foldLanes(int64_t size, int64_t workers, int64_t groupSize) {
  int64_t p = 1;
  while (p < kWarpSize && p * 2 <= workers && p * 2 * size <= groupSize)
    p *= 2;
  return static_cast<int>(p);
}

/// The sum (foldSum) or max (foldMax) of `v` over each run of `lanes`
/// consecutive lanes (a power of two, at most GroupSize and a warp), left
/// in every lane of the run. Every lane of the thread's group of
/// GroupSize lanes must call it (the shuffles take the group's lanes,
/// groupLaneMask); with one lane, and on the CPU, `v` itself.
template <int GroupSize = kWarpSize, typename T>
HECTOR_HD T foldSum(T v, int lanes) {
#if defined(__CUDA_ARCH__)
  const unsigned mask = groupLaneMask<GroupSize>();
  for (int offset = lanes / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(mask, v, offset);
#else
  (void)lanes;
#endif
  return v;
}
template <int GroupSize = kWarpSize, typename T>
HECTOR_HD T foldMax(T v, int lanes) {
#if defined(__CUDA_ARCH__)
  const unsigned mask = groupLaneMask<GroupSize>();
  for (int offset = lanes / 2; offset > 0; offset /= 2)
    v = max(v, __shfl_xor_sync(mask, v, offset));
#else
  (void)lanes;
#endif
  return v;
}

/// Whether a statement whose `size` elements each sum `terms` terms (a
/// sum_to or a dot) has the group's lanes split every element's terms
/// (each lane adding every kGroupSize-th term, then groupSum) instead of
/// giving each lane whole elements. Split when that takes fewer steps a
/// lane: one head's attention gradient summed 64 terms on one lane of a
/// warp while the other 31 waited. Never on the CPU (one lane) or in a
/// block group (groupSum stays within a warp).
template <int GroupSize>
HECTOR_HD bool splitsSum(int64_t size, int64_t terms) {
  if (GroupSize <= 1 || GroupSize > kWarpSize || size <= 0)
    return false;
  int log2Lanes = 0;
  while ((1 << log2Lanes) < GroupSize)
    ++log2Lanes;
  const int64_t whole = (size + GroupSize - 1) / GroupSize * terms;
  const int64_t split = size * ((terms + GroupSize - 1) / GroupSize + log2Lanes);
  return split < whole;
}

/// The sum of `v` over the GroupSize lanes of this thread's group (at most
/// a warp; lanes [GroupSize * j, GroupSize * (j + 1)) of the warp), left in
/// every lane of the group. Only the group's lanes take part, so the
/// warp's other groups may be at other rows. `v` itself on the CPU.
template <int GroupSize, typename T> HECTOR_HD T groupSum(T v) {
#if defined(__CUDA_ARCH__)
  if constexpr (GroupSize > 1 && GroupSize <= kWarpSize) {
    const unsigned mask = groupLaneMask<GroupSize>();
    for (int offset = GroupSize / 2; offset > 0; offset /= 2)
      v += __shfl_xor_sync(mask, v, offset);
  }
#endif
  return v;
}

/// Whether node `row` is heavy: more than `limit` edges in the CSR
/// `ptr` (dst_ptr or src_ptr).
HECTOR_HD bool isHeavy(const int64_t *ptr, int64_t row, int64_t limit) {
  return ptr[row + 1] - ptr[row] > limit;
}

/// The rows [begin, end) a thread group handles when `rows` rows are split
/// into contiguous chunks over `groups` groups (contiguous, so that
/// partial-atomic accumulators see runs of equal target rows).
struct RowRange {
  int64_t begin, end;
};
HECTOR_HD RowRange chunkOf(int64_t rows, int64_t group, int64_t groups) {
  const int64_t chunk = (rows + groups - 1) / groups;
  int64_t begin = group * chunk;
  if (begin > rows)
    begin = rows;
  int64_t end = begin + chunk;
  if (end > rows)
    end = rows;
  return {begin, end};
}

/// A warp launch's row queue: a zeroed counter of the rows handed out so
/// far (TraversalCuda.h queuedLaunchShape). With one, the launch is one
/// wave of blocks and each warp takes its next row from the counter when
/// it is done with the last, so that a warp that drew short rows keeps
/// working instead of idling until the slowest warp of its block is done:
/// a block holds its slot until then, and on power-law graphs that left
/// RGAT's forward warp launch at 35% achieved occupancy of 75%
/// (docs/perf-notes.md section 23). Block groups, the CPU kernels and the
/// warp launches that overlap a heavy launch (TraversalCuda.h
/// overlapLaunches) walk their chunkOf rows instead.
struct RowQueue {
  unsigned long long *next = nullptr;
};

#if defined(__CUDACC__)
/// The next row of a group's queue (a warp, or a group of fewer lanes):
/// the group's first lane takes it, every lane of the group gets it (the
/// group's lanes call this together).
template <int GroupSize>
__device__ __forceinline__ int64_t takeRow(RowQueue q) {
  static_assert(GroupSize <= kWarpSize, "a row queue serves warp groups");
  unsigned long long row = 0;
  if (threadIdx.x % GroupSize == 0)
    row = ::atomicAdd(q.next, 1ull);
  return static_cast<int64_t>(
      __shfl_sync(groupLaneMask<GroupSize>(), row, 0, GroupSize));
}

/// A group's first row: from the queue for a queued launch's warp (or
/// narrower) group, else the start of its chunk. The kernels are
/// instantiated for both (a run-time choice took RGAT's forward warp
/// kernel from 40 to 61 registers).
template <int GroupSize, bool Queued>
__device__ __forceinline__ int64_t firstRow(RowRange chunk, RowQueue q) {
  if constexpr (Queued && GroupSize <= kWarpSize)
    return takeRow<GroupSize>(q);
  else
    return chunk.begin;
}

/// The row after `k` (see firstRow).
template <int GroupSize, bool Queued>
__device__ __forceinline__ int64_t nextRow(int64_t k, RowQueue q) {
  if constexpr (Queued && GroupSize <= kWarpSize)
    return takeRow<GroupSize>(q);
  else
    return k + 1;
}
#endif

#if !defined(__CUDACC__)
/// The CPU kernels' thread group index and count (OpenMP threads).
inline int64_t cpuThreadNum() {
#if defined(_OPENMP)
  return omp_get_thread_num();
#else
  return 0;
#endif
}
inline int64_t cpuNumThreads() {
#if defined(_OPENMP)
  return omp_get_num_threads();
#else
  return 1;
#endif
}
#endif

} // namespace hector::trav
