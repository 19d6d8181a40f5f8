// HubSplit.h: a hub's edges shared by several blocks (CUDA only).
//
// The heavy launch of a node-row kernel (Traversal.h) gave each heavy row
// one block, so the largest hub bounded the whole launch: mag's
// 473,022-edge row ran alone on one SM for 15 ms of a 22 ms forward
// (docs/perf-notes.md section 13). Here the heavy rows' edges are laid end
// to end (GraphArrays heavy_dst_edge_ptr / heavy_src_edge_ptr) and split
// evenly over the launch's blocks. A block walks the heavy rows its span
// touches, each over the part of its edges that falls in the span. A row
// that lies in one block's span runs as before. A row shared by several
// blocks (its "parts") needs the whole row's reductions before anything
// that reads them: after each edge loop with segmented reductions, every
// part adds its partial row into the row's slot of a global workspace
// (atomics), waits at a per-row barrier for the row's other parts, and
// reads the combined row back. What follows the loop then runs in every
// part on the same values: per-edge statements on the part's own edges,
// node statements on all of them alike (the same values stored by each
// part; a kernel with atomic reductions, whose adds would repeat, is
// never split).
//
// The barrier is safe because every block of the launch is resident at
// once (the host launches at most as many blocks as fit on the device,
// and cooperatively: hubLaunchShape and launchCooperative in
// TraversalCuda.h) and every block visits its rows in
// ascending order: the lowest row with a waiting part has all its parts
// either waiting or still working on that row.
#pragma once

#include "templates/traversal/Traversal.h"

#include <cstdint>

namespace hector::trav {

/// A heavy row's smallest share of edges per block: below it, the atomics
/// and the barrier cost more than the edges. A build may set it lower
/// (the tests split small hubs with a few edges per block), and so may the
/// environment (HECTOR_HUB_PIECE_EDGES, read by the host per launch).
#ifndef HECTOR_HUB_PIECE_EDGES
#define HECTOR_HUB_PIECE_EDGES 2048
#endif
constexpr int64_t kHubPieceEdges = HECTOR_HUB_PIECE_EDGES;

/// What a split heavy launch gets besides the graph: a zeroed workspace
/// of one arrival counter per heavy row and then `width` combining slots
/// per heavy row, and the smallest share of edges per block. A null
/// workspace: no split (the warp launch, deterministic mode, the CPU).
struct HubArgs {
  void *workspace = nullptr;
  int64_t rows = 0;       ///< heavy rows (counters)
  int64_t width = 0;      ///< combining slots per heavy row
  int64_t pieceEdges = kHubPieceEdges;
};

/// Bytes of the arrival counters, rounded up so that the slots after them
/// stay 16-byte aligned.
HECTOR_HD int64_t hubCounterBytes(int64_t rows) {
  return (rows * static_cast<int64_t>(sizeof(unsigned)) + 15) / 16 * 16;
}

/// The blocks that take part: at most one per `pieceEdges` heavy edges, so
/// that a small graph's hubs are not cut into slivers.
HECTOR_HD int64_t hubBlocks(int64_t edges, int64_t pieceEdges,
                            int64_t launched) {
  int64_t wanted = edges / (pieceEdges > 0 ? pieceEdges : 1);
  if (wanted < 1)
    wanted = 1;
  return wanted < launched ? wanted : launched;
}

/// The first heavy edge of block `block`'s span: block b of B takes
/// [b * E / B, (b + 1) * E / B).
HECTOR_HD int64_t hubSpanStart(int64_t edges, int64_t block, int64_t blocks) {
  return edges * block / blocks;
}

/// The block whose span holds heavy edge x: the largest b with
/// hubSpanStart(b) <= x.
HECTOR_HD int64_t hubBlockOf(int64_t x, int64_t edges, int64_t blocks) {
  return ((x + 1) * blocks - 1) / edges;
}

/// The first k in [0, rows] with edgePtr[k + 1] > x (the heavy row that
/// holds heavy edge x; rows when x is past the last).
HECTOR_HD int64_t hubRowOf(const int64_t *edgePtr, int64_t rows, int64_t x) {
  int64_t lo = 0, hi = rows;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (edgePtr[mid + 1] > x)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/// The heavy rows block `block` of `blocks` touches (empty for a block
/// past the ones that take part, or with an empty span).
HECTOR_HD RowRange hubRowsOfBlock(const int64_t *edgePtr, int64_t rows,
                                  int64_t block, int64_t blocks) {
  const int64_t edges = edgePtr[rows];
  if (block >= blocks || edges == 0)
    return {0, 0};
  const int64_t lo = hubSpanStart(edges, block, blocks);
  const int64_t hi = hubSpanStart(edges, block + 1, blocks);
  if (lo >= hi)
    return {0, 0};
  return {hubRowOf(edgePtr, rows, lo), hubRowOf(edgePtr, rows, hi - 1) + 1};
}

/// The edges of one row a thread group takes, as CSR positions, and how
/// many blocks share the row (1: the whole row).
struct EdgeSpan {
  int64_t begin, end;
  int64_t parts;
};

/// The whole row `row` of the CSR pointers `ptr`.
HECTOR_HD EdgeSpan wholeRow(const int64_t *ptr, int64_t row) {
  return {ptr[row], ptr[row + 1], 1};
}

/// Heavy row k (node `row`) as block `block` of `blocks` takes it.
HECTOR_HD EdgeSpan hubSpan(const int64_t *ptr, int64_t row,
                           const int64_t *edgePtr, int64_t rows, int64_t k,
                           int64_t block, int64_t blocks) {
  const int64_t edges = edgePtr[rows];
  const int64_t first = edgePtr[k], last = edgePtr[k + 1]; // [first, last)
  int64_t lo = hubSpanStart(edges, block, blocks);
  int64_t hi = hubSpanStart(edges, block + 1, blocks);
  lo = lo > first ? lo : first;
  hi = hi < last ? hi : last;
  const int64_t parts =
      hubBlockOf(last - 1, edges, blocks) - hubBlockOf(first, edges, blocks) + 1;
  return {ptr[row] + (lo - first), ptr[row] + (hi - first), parts};
}

#if defined(__CUDACC__)
/// The combining slots of heavy row k.
template <typename T>
__device__ __forceinline__ T *hubSlots(const HubArgs &hub, int64_t k) {
  return reinterpret_cast<T *>(static_cast<unsigned char *>(hub.workspace) +
                               hubCounterBytes(hub.rows)) +
         k * hub.width;
}

__device__ __forceinline__ unsigned *hubCounter(const HubArgs &hub,
                                                int64_t k) {
  return static_cast<unsigned *>(hub.workspace) + k;
}

// Max-combining stores a float (double) as an unsigned key whose order is
// the values' order and in which 0 (the zeroed workspace) is below every
// value, so that atomicMax on the keys is a max on the values.
__device__ __forceinline__ unsigned orderedKey(float v) {
  const unsigned b = __float_as_uint(v);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float fromOrderedKey(unsigned key, float) {
  return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}
__device__ __forceinline__ unsigned long long orderedKey(double v) {
  const auto b = static_cast<unsigned long long>(__double_as_longlong(v));
  return (b >> 63) ? ~b : (b | (1ull << 63));
}
__device__ __forceinline__ double fromOrderedKey(unsigned long long key,
                                                 double) {
  const unsigned long long b = (key >> 63) ? (key & ~(1ull << 63)) : ~key;
  return __longlong_as_double(static_cast<long long>(b));
}
template <typename T> struct OrderedKeyOf;
template <> struct OrderedKeyOf<float> { using type = unsigned; };
template <> struct OrderedKeyOf<double> { using type = unsigned long long; };

/// Adds a part's partial sum into a combining slot.
template <typename T>
__device__ __forceinline__ void hubAdd(T *slot, T partial) {
  ::atomicAdd(slot, partial);
}

/// Maxes a part's partial max into a combining slot.
template <typename T>
__device__ __forceinline__ void hubMax(T *slot, T partial) {
  using Key = typename OrderedKeyOf<T>::type;
  ::atomicMax(reinterpret_cast<Key *>(slot), orderedKey(partial));
}

/// The combined sum, read past the SM's L1 (which may hold a line of the
/// slots from before the other parts' adds).
template <typename T> __device__ __forceinline__ T hubSum(const T *slot) {
  return __ldcg(slot);
}

template <typename T> __device__ __forceinline__ T hubMaxValue(const T *slot) {
  using Key = typename OrderedKeyOf<T>::type;
  return fromOrderedKey(__ldcg(reinterpret_cast<const Key *>(slot)), T());
}

/// Waits, with the whole block, until the row's counter reaches `target`
/// (every part's arrival at this and all earlier barriers of the row),
/// after counting this block's arrival. The fences order this block's
/// combining atomics before its arrival, and the other parts' before what
/// the block reads next (as cooperative groups' grid sync does).
__device__ __forceinline__ void hubBarrier(unsigned *counter,
                                           unsigned target) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    ::atomicAdd(counter, 1u);
    while (*static_cast<volatile unsigned *>(counter) < target)
      __nanosleep(128);
    __threadfence();
  }
  __syncthreads();
}
#endif

} // namespace hector::trav
