// HubSplit.h: a hub's edges shared by several blocks (CUDA only).
//
// The heavy launch of a node-row kernel (Traversal.h) gave each heavy row
// one block, so the largest hub bounded the whole launch: mag's
// 473,022-edge row ran alone on one SM for 15 ms of a 22 ms forward
// (docs/perf-notes.md section 13). Here the heavy rows come by degree,
// largest first (GraphArrays heavy_dst_rows / heavy_src_rows, with their
// edges laid end to end in heavy_*_edge_ptr), and the launch cuts the
// rows with more than an even share of the edges into pieces that
// several blocks take at once (hubWork). A row shared by several blocks
// (its "parts") needs the whole row's reductions before anything that
// reads them: after each edge loop with segmented reductions, every part
// adds its partial row into the row's slot of a global workspace
// (atomics), waits at a per-row barrier for the row's other parts, and
// reads the combined row back. What follows the loop then runs in every
// part on the same values: per-edge statements on the part's own edges,
// node statements on all of them alike (the same values stored by each
// part), except a node statement that adds atomically, which would
// repeat: only the part holding the row's first edges runs it
// (codegen/TraversalEmitter.cpp printLoopBody).
//
// A row's pieces go to consecutive blocks in one round of the launch, and
// every block takes its pieces before any whole row, so the parts of a
// row start together and wait for each other for at most a piece. The
// whole rows (the heavy rows no longer than a piece) are not given out in
// advance: a block that is done with its pieces takes the next whole row
// from a queue (a counter in the workspace), largest first, until none is
// left. Given out statically by edges, they had left the SMs idle for 40%
// to 46% of am's heavy launches (Nsight Compute, docs/perf-notes.md
// section 30): a block's share counted its edges, not its rows' fixed
// costs (folds, syncs, the row's stores), nor the round of pieces that
// some blocks took twice. (An
// earlier version split the heavy edges evenly over the blocks, rows and
// all: a block then met its last row, shared with the next block, only at
// the end of its span, while that block took it first and waited, and so
// on down the line; the whole launch ran one block at a time.)
//
// The barrier is safe because every block of the launch is resident at
// once (the host launches at most as many blocks as fit on the device,
// and cooperatively: hubLaunchShape and launchCooperative in
// TraversalCuda.h), no row has more pieces than there are blocks, and
// every block takes its pieces in ascending order: the lowest row with a
// waiting part has all its parts either waiting or still working on an
// earlier piece, whose row is complete.
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
/// of one arrival counter per heavy row, the whole-row queue's counter,
/// and then `width` combining slots per heavy row; and the smallest share
/// of edges per block. A null workspace: no split (the warp launch,
/// deterministic mode, the CPU).
struct HubArgs {
  void *workspace = nullptr;
  int64_t rows = 0;       ///< heavy rows (counters)
  int64_t width = 0;      ///< combining slots per heavy row
  int64_t pieceEdges = kHubPieceEdges;
};

/// Bytes of the counters (one per heavy row, then the whole-row queue's),
/// rounded up so that the slots after them stay 16-byte aligned.
HECTOR_HD int64_t hubCounterBytes(int64_t rows) {
  return ((rows + 1) * static_cast<int64_t>(sizeof(unsigned)) + 15) / 16 * 16;
}

/// The blocks that take part, of `launched`: one per heavy row (what the
/// unsplit launch had), or more where there are more than `pieceEdges`
/// heavy edges per row, so that a small graph's hubs are not cut into
/// slivers. (With one block per `pieceEdges` edges alone, aifb's RGAT hub
/// kernel ran on 15 blocks instead of one per row, 4x slower.)
HECTOR_HD int64_t hubBlocks(int64_t edges, int64_t rows, int64_t pieceEdges,
                            int64_t launched) {
  int64_t wanted = edges / (pieceEdges > 0 ? pieceEdges : 1);
  if (wanted < rows)
    wanted = rows;
  if (wanted < 1)
    wanted = 1;
  return wanted < launched ? wanted : launched;
}

HECTOR_HD int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The edges of heavy row k.
HECTOR_HD int64_t hubDegree(const int64_t *edgePtr, int64_t k) {
  return edgePtr[k + 1] - edgePtr[k];
}

/// The first k in [lo, hi) with edgePtr[k] - edgePtr[lo] >= x (hi if
/// none): where a run of edges starting x edges after row lo's first one
/// begins.
HECTOR_HD int64_t hubRowAt(const int64_t *edgePtr, int64_t lo, int64_t hi,
                           int64_t x) {
  const int64_t base = edgePtr[lo];
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (edgePtr[mid] - base >= x)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/// What one block of a split heavy launch takes. With E heavy edges over
/// B blocks, a piece is at most C = ceil(E / B) edges:
/// - the big rows (more than C edges; the heavy rows come by degree,
///   largest first, so they are rows [0, bigRows)) are cut into
///   ceil(degree / C) even pieces, at most B per row and at most 2B in
///   all; piece p goes to block p mod B, so that a row's pieces start
///   together in one round (or two);
/// - every other heavy row, [bigRows, rows), goes whole to the block that
///   takes it from the queue (hubWholeRow).
/// A block takes its pieces first and then whole rows, so every barrier
/// (in a piece) comes before anything that does not wait.
struct HubWork {
  int64_t block = 0, blocks = 1;
  int64_t pieceEdges = 1; ///< C
  int64_t rows = 0;       ///< heavy rows
  int64_t bigRows = 0;    ///< rows [0, bigRows) are cut
  int64_t pieces = 0;     ///< this block's pieces
  /// The most items a block may take: its pieces, then at most every
  /// whole row.
  HECTOR_HD int64_t items() const { return pieces + rows - bigRows; }
};

HECTOR_HD HubWork hubWork(const int64_t *edgePtr, int64_t rows,
                          int64_t block, int64_t blocks) {
  HubWork w;
  w.block = block;
  w.blocks = blocks;
  const int64_t edges = edgePtr[rows];
  if (block >= blocks || edges == 0)
    return w;
  w.rows = rows;
  w.pieceEdges = ceilDiv(edges, blocks);
  // Degrees do not increase with k: the big rows are a prefix.
  int64_t lo = 0, hi = rows;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (hubDegree(edgePtr, mid) <= w.pieceEdges)
      hi = mid;
    else
      lo = mid + 1;
  }
  w.bigRows = lo;
  int64_t allPieces = 0;
  for (int64_t k = 0; k < w.bigRows; ++k)
    allPieces += ceilDiv(hubDegree(edgePtr, k), w.pieceEdges);
  w.pieces = block < allPieces ? ceilDiv(allPieces - block, blocks) : 0;
  return w;
}

/// One item of a block's work: heavy row `row`, edges [begin, end) of it
/// (offsets within the row; end < 0: all of them), shared by `parts`
/// blocks. row < 0: no more work.
struct HubItem {
  int64_t row;
  int64_t begin, end;
  int64_t parts;
};

/// Piece `item` (< w.pieces) of `w`.
HECTOR_HD HubItem hubPiece(const HubWork &w, const int64_t *edgePtr,
                           int64_t item) {
  int64_t p = w.block + item * w.blocks;
  for (int64_t k = 0;; ++k) {
    const int64_t degree = hubDegree(edgePtr, k);
    const int64_t parts = ceilDiv(degree, w.pieceEdges);
    if (p < parts)
      return {k, degree * p / parts, degree * (p + 1) / parts, parts};
    p -= parts;
  }
}

/// The whole row that the queue's `taken`-th take gives (counting from 0
/// over all blocks), or row -1 when the whole rows have run out.
HECTOR_HD HubItem hubWholeRow(const HubWork &w, int64_t taken) {
  const int64_t row = w.bigRows + taken;
  if (row >= w.rows)
    return {-1, 0, -1, 0};
  return {row, 0, -1, 1};
}

/// The edges of one row a thread group takes, as CSR positions, and how
/// many blocks share the row (1: the whole row).
struct EdgeSpan {
  int64_t begin, end;
  int64_t parts;
};

/// Item `it`'s edges of node `node` in the CSR pointers `ptr`.
HECTOR_HD EdgeSpan hubSpan(const int64_t *ptr, int64_t node,
                           const HubItem &it) {
  if (it.end < 0)
    return {ptr[node], ptr[node + 1], 1};
  return {ptr[node] + it.begin, ptr[node] + it.end, it.parts};
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

/// Item k of this block's work (called by the whole block, with the same
/// k in every thread): piece k while there are pieces, then the next whole
/// row off the queue, which one thread takes for the block. row < 0 when
/// the whole rows have run out.
__device__ __forceinline__ HubItem hubNextItem(const HubWork &w,
                                               const int64_t *edgePtr,
                                               int64_t k, const HubArgs &hub) {
  if (k < w.pieces)
    return hubPiece(w, edgePtr, k);
  __shared__ unsigned taken;
  __syncthreads(); // every thread has read the previous take
  if (threadIdx.x == 0)
    taken = ::atomicAdd(hubCounter(hub, hub.rows), 1u);
  __syncthreads();
  return hubWholeRow(w, static_cast<int64_t>(taken));
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
