// The GEMM template's tensor-core kernels for linear and outer calls
// (SegmentGemmMma.h says which calls and how exact). The linear kernel is
// described first; the outer one (weight gradients) further down shares
// its fragments, products and row copies.
//
// Why: the CUDA-core kernels (linearVecKernel, linearKernel) load a tile,
// wait, multiply it with FFMA, and load the next; on the large graphs they
// ran at a third of DRAM bandwidth (am: 1.2 ms for 3.2M rows of 64 x 64,
// about 0.45 ms of traffic), and every output wider than 64 took the
// general kernel (HGT's 64 -> 192 projection, 3.8 ms on am; its weight
// gradient, 8.1 ms a training step on am, in the general outer kernel).
//
// Shape. A block of 4 warps owns 64-row tiles of one head and one window
// of 64 output columns (8 mma tiles of 8 columns): warp w takes rows
// 16w .. 16w + 15. Wider outputs (N up to 256) run one block per window,
// the windows of a run of rows side by side in launch order, so that the
// gathered X rows the first window reads from DRAM are still in L2 for the
// others. The block takes a contiguous run of tiles, so that rows sorted by
// slice (segmentPtr) change slice rarely within a block and the weight
// window, staged in shared memory, stays (summed rows: a contiguous range
// of rows of about equal cost, TileSequence). Each tile's gathered X rows are
// copied into one of two shared buffers with cp.async (16-byte words)
// while the tile before is multiplied; each row's id, output row and
// scale are looked up by the two threads that copy the row, a tile before
// its copies start, and its slice by walking the segment pointers on from
// the previous tile's last row.
//
// Issue. A 64 x 64 tile takes 192 mma a warp when products are exact to
// fp32 (three a term, see SegmentGemmMma.h), so every other instruction in
// the inner loop costs: the weight window is staged already rounded to
// TF32, as a head plane and (split) a tail plane, once per slice instead of
// being converted by every warp for every tile, and both factors are read
// with ldmatrix, one instruction for four 8 x 4 fragments. Nsight Compute
// had the old form (per-fragment loads and conversions) at 40% of DRAM
// bandwidth on am, waiting on dependent conversions half its cycles.
//
// Summed rows (SegmentGemmArgs::sumPtr, aggregate-then-transform): a
// row's input is the sum of several X rows, which stageSummedTile adds in
// registers, the tile's entries spread evenly over the block, and stores
// to the tile's buffer; everything after staging is the same. The rows
// arrive through a small cp.async ring (kSumRingBatch).
//
// Slices. A tile's rows may have several slices (a segment boundary, or
// rowType). The warps find the tile's distinct slices in increasing order
// with a warp-wide minimum (every warp reaches the same sequence, so the
// block stages each slice's weight at the same point) and run one pass per
// slice, each row's X fragment zeroed in the passes of other slices. The
// accumulators carry over, so each output is stored once.
//
// Shared-memory rows (X rows, and the weight window stored [n][k] whether
// W is [K, N] or [N, K]) are K + 4 words: 16-byte aligned for ldmatrix,
// and 4 modulo 8, so that the 8 rows of an 8 x 4 fragment fall in distinct
// groups of 4 banks.
#include "templates/gemm/SegmentGemmMma.h"

#include "templates/DeviceQueries.h"
#include "templates/gemm/MmaFragments.cuh"
#include "templates/gemm/SegmentGemmRows.cuh"
#include "templates/traversal/HostSwitches.h"

#include <cuda_pipeline.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace hector::templates {
namespace {

using gemm_rows::aligned16;
using gemm_rows::rowIdOf;
using gemm_rows::RowTileGrid;
using gemm_rows::rowTileGrid;
using gemm_rows::singleWriter;
using gemm_rows::sliceOfRow;
using gemm_rows::storeOut;
using gemm_rows::sumOuterRows;
using mma_fragments::LaneQuad;
using mma_fragments::loadFragments;
using mma_fragments::mmaTerm;
using mma_fragments::mmaTf32;
using mma_fragments::mmaTilePair;
using mma_fragments::quadOfPairs;
using mma_fragments::Tf32Parts;
using mma_fragments::toTf32;

constexpr int kMmaWarps = 4;
constexpr int kMmaThreads = 32 * kMmaWarps;
constexpr int kTileRows = 16 * kMmaWarps; // a warp's 16 rows each
constexpr int kPassCols = mma_fragments::kWindowCols;
constexpr int kPassTiles = kPassCols / 8;
constexpr int kMaxK = 64;
constexpr int kMaxN = 256;
constexpr unsigned kNoSlice32 = 0xffffffffu;
static_assert(kMmaThreads == 2 * kTileRows, "two threads copy each row");

/// Shared-memory layout of one launch, the same on the host (its size)
/// and in the kernel (its offsets). Words first (X buffers, then the
/// weight planes), so every array starts on a 16-byte boundary; then the
/// per-row fields.
struct MmaSmem {
  int stride = 0; ///< words a staged X row or weight row (K + 4)
  int planes = 0; ///< weight planes: TF32 heads, and with kSplit tails
  bool sum = false; ///< summed rows: SummedTileSmem after the row fields
  bool oneX = false; ///< one X buffer (oneXBuffer)

  __host__ __device__ MmaSmem(int K, bool split, bool summed = false,
                              bool oneXBuffer = false)
      : stride(K + 4), planes(split ? 2 : 1), sum(summed), oneX(oneXBuffer) {}

  __host__ __device__ int xFloats() const { return kTileRows * stride; }
  /// X buffers (oneXBuffer says when there is one).
  __host__ __device__ int xBuffers() const { return oneX ? 1 : 2; }
  /// Words of one weight plane: the window's 64 rows.
  __host__ __device__ int planeWords() const { return kPassCols * stride; }
  /// Bytes: the X buffers (two, or one with oneX), the weight planes, then
  /// per tile buffer (always two) and row the output row (int64), the
  /// scale (float) and the slice (unsigned).
  __host__ __device__ size_t rowFieldsEnd() const {
    return size_t(xBuffers() * xFloats() + planes * planeWords()) * 4 +
           2 * kTileRows * (8 + 4 + 4);
  }
  __host__ __device__ size_t bytes() const;
};

/// What stageSummedTile keeps in shared memory besides the X buffer: the
/// tile's rows' first entries in sumRows and the prefix sums of their
/// entry counts, and each 16-lane group's partial sum of the first row of
/// its run with that row's number.
constexpr int kSumGroups = kMmaThreads / 16;
/// Summed rows: entries a 16-lane group copies into shared memory at once
/// (cp.async), two batches in flight (stageSummedTile). 0: they are
/// loaded into registers.
#ifndef HECTOR_SUM_RING_BATCH
#define HECTOR_SUM_RING_BATCH 4
#endif
constexpr int kSumRingBatch = HECTOR_SUM_RING_BATCH;
/// Whether weighted summed rows take the ring too (0: their rows are
/// loaded into registers, two X buffers, as before session 33).
#ifndef HECTOR_SUM_RING_WEIGHTED
#define HECTOR_SUM_RING_WEIGHTED 1
#endif
constexpr bool kSumRingWeighted = HECTOR_SUM_RING_WEIGHTED != 0;
/// Whether summed rows, weighted or not, arrive through the ring.
__host__ __device__ constexpr bool sumRing(bool weighted) {
  return kSumRingBatch > 0 && (!weighted || kSumRingWeighted);
}
/// Bytes of the ring the batches land in: two batches a group, a 16-byte
/// word a lane.
__host__ __device__ constexpr size_t sumRingBytes(bool ring) {
  return ring ? size_t(kSumGroups) * 2 * kSumRingBatch * 16 * 16 : 0;
}
struct alignas(16) SummedTileSmem {
  int64_t begin[kTileRows]; ///< -1: a row past M
  float carry[kSumGroups][kMaxK];
  int prefix[kTileRows + 1];
  int carryRow[kSumGroups];
  /// Whether each row's entries follow the previous row's in sumRows (rows
  /// in id order without rowIds): entry t is then sumRows[begin[0] + t].
  int contiguous;
};

__host__ __device__ inline size_t MmaSmem::bytes() const {
  // rowFieldsEnd() is a multiple of 16 (K + 4 words a row, 64 rows; the
  // row fields 2 * 64 * 16 bytes), so is sizeof(SummedTileSmem).
  return rowFieldsEnd() + (sum ? sizeof(SummedTileSmem) : 0) +
         sumRingBytes(sum && oneX && kSumRingBatch > 0);
}

/// The per-row fields of one staged tile, in shared memory.
struct TileRows {
  int64_t *dst;    ///< output row (after scatter); -1: past M
  float *scale;    ///< the epilogue's scalar (1 without one)
  unsigned *slice; ///< weight slice; kNoSlice32: past M
};

/// What staging one row of a tile needs from global memory: its id, the X
/// row it gathers, the output row it scatters to, its epilogue scale and
/// (rowType) its slice. lookupRow issues these loads a tile ahead of
/// stageTile, so that their latency passes while the warps multiply the
/// tile before (docs/perf-notes.md section 45): looked up just before its
/// copies, a tile's gather index stalled every warp of the block at the
/// start of each tile.
struct RowLookup {
  int64_t id = -1; ///< -1: past the last row
  int64_t src = 0, dst = -1;
  int64_t srcEnd = 0; ///< summed rows: sumRows[src .. srcEnd) are the row's
  float scale = 1.f;
  unsigned slice = kNoSlice32; ///< rowType's; segments: found by stageTile
  __device__ bool live() const { return id >= 0; }
};

/// The lookups of this thread's row of the tile whose first row is
/// `row0` (two threads a row; the row fields only for the first of them).
/// Rows at or past `rowEnd` (the block's last row + 1, at most M) are past
/// the tile's end.
__device__ __forceinline__ RowLookup lookupRow(const SegmentGemmArgs &a,
                                               int64_t row0, int64_t rowEnd,
                                               int64_t h) {
  RowLookup l;
  const int64_t r = row0 + threadIdx.x / 2;
  if (r >= rowEnd)
    return l;
  l.id = rowIdOf(a, r);
  if (a.sumPtr) {
    l.src = a.sumPtr[l.id];
    l.srcEnd = a.sumPtr[l.id + 1];
  } else {
    l.src = a.gather ? a.gather[l.id] : l.id;
  }
  if (threadIdx.x % 2 == 0) {
    l.dst = a.scatter ? a.scatter[l.id] : l.id;
    if (a.rowType)
      l.slice = unsigned(a.rowType[l.id]);
    if (a.epilogue != EpilogueOp::None) {
      const int64_t sr = a.scaleGather ? a.scaleGather[l.id] : l.id;
      l.scale = a.scale[a.scalePerHead ? sr * a.H + h : sr];
    }
  }
  return l;
}

/// The slice of row r (segments over r) at or after `floor`, a slice no
/// later than r's: a tile's rows follow the previous tile's last row, so
/// a short walk forward from its slice replaces sliceOfRow's binary search
/// (seven dependent loads over am's 108 relations). kNoSlice32 as the
/// floor: no earlier row known, search.
__device__ __forceinline__ unsigned
segmentSliceFrom(const SegmentGemmArgs &a, int64_t r, unsigned floor) {
  if (floor == kNoSlice32)
    return unsigned(sliceOfRow(a, r, r));
  int64_t s = floor;
  // The last s with segmentPtr[s] <= r (empty segments share a start).
  while (s + 1 < a.numSlices && a.segmentPtr[s + 1] <= r)
    ++s;
  return unsigned(s);
}

/// The last row whose entries start at or before entry t of a tile
/// (prefix: the tile's prefix sums of entry counts; t < prefix[kTileRows]).
__device__ __forceinline__ int rowOfEntry(const int *prefix, int t) {
  int lo = 0, hi = kTileRows; // prefix[lo] <= t < prefix[hi]
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (prefix[mid] <= t)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/// Stages a tile of summed rows (sumPtr): row i of `xs` becomes the sum of
/// X rows sumRows[j] (head h) over the row's entries, each times its
/// weight sumWeights[j * H + h] when kWeighted (loaded beside the entry's
/// row number, so that it waits on nothing the row does not), or with
/// kWeightIds sumWeights[sumWeightIds[j] * H + h] (the id loaded beside
/// the row number, the weight after it). Called by the whole block (it
/// synchronises), after the row fields; `l` is this thread's row's lookup
/// (two threads a row).
///
/// Why not a row per thread pair, as copies are staged: a segment's size
/// follows the graph's degrees, and the block waited for its longest row
/// with two loads in flight (am: 1.83 ms for what the copy bandwidth
/// moves in about 0.5 ms, session 25 call a). Here the tile's entries are
/// numbered in row order and cut into one equal run per 16-lane group;
/// each lane holds one 16-byte word of the row being summed and loads
/// kAhead entries at a time. A group stores each row it finishes, except
/// the first row of its run, which may have started in the run before:
/// that partial sum goes to `carry` and is added after the others, in
/// group order, so that a row's sum is the same on every run.
///
/// kRing (sumRing): the entries' rows are copied
/// into `ring` (sumRingBytes) with cp.async instead of loaded into
/// registers, kSumRingBatch entries a batch and the next batch in flight
/// while this one is added. Each lane copies and reads back its own word,
/// so only its own copies are waited for.
template <bool kWeighted, bool kWeightIds>
__device__ __forceinline__ void
stageSummedTile(const SegmentGemmArgs &a, int64_t h, float *xs, int xStride,
                const RowLookup &l, SummedTileSmem &sm, float4 *ring) {
  constexpr bool kRing = sumRing(kWeighted);
  // Entries a 16-lane group loads at a time. 4, 6 and 8 ran within 3% of
  // each other on am, mag and wikikg2 at four blocks a multiprocessor
  // (session 25 call e). Unweighted rows ran five blocks at 96 registers
  // (sumMinBlocks), where 3 kept the spills near what 6 spilled at 128;
  // weighted rows, at four blocks, load 4 (their weights take registers
  // of their own).
  constexpr int kAhead = kRing ? kSumRingBatch : kWeighted ? 4 : 3;
  const int K = int(a.K), i = threadIdx.x / 2;
  if (threadIdx.x % 2 == 0) {
    sm.begin[i] = l.live() ? l.src : -1;
    sm.prefix[i + 1] = l.live() ? int(l.srcEnd - l.src) : 0;
  }
  // Rows without entries, and rows only carries add to, stay zero. A
  // 16-lane group a row and a lane a word (K <= 64), so that no thread
  // divides by the runtime K.
  static_assert(kMaxK <= 64, "a lane a 16-byte word of the row");
  for (int row = threadIdx.x / 16; row < kTileRows; row += kSumGroups)
    if (4 * (threadIdx.x % 16) < K)
      *reinterpret_cast<float4 *>(xs + row * xStride + 4 * (threadIdx.x % 16)) =
          make_float4(0.f, 0.f, 0.f, 0.f);
  __syncthreads();
  if (threadIdx.x < 32) { // counts -> inclusive prefix sums, two rows a lane
    const int lane = threadIdx.x;
    const int c0 = sm.prefix[2 * lane + 1], c1 = sm.prefix[2 * lane + 2];
    // Row r + 1 starts where row r ends (or is past M, as all later rows
    // are then).
    auto follows = [&](int r, int count) {
      return r + 1 >= kTileRows || sm.begin[r + 1] < 0 ||
             sm.begin[r + 1] == sm.begin[r] + count;
    };
    const bool contiguous = __all_sync(
        0xffffffffu, follows(2 * lane, c0) && follows(2 * lane + 1, c1));
    if (lane == 0)
      sm.contiguous = contiguous && sm.begin[0] >= 0;
    int run = c0 + c1;
    for (int off = 1; off < 32; off *= 2) {
      const int v = __shfl_up_sync(0xffffffffu, run, off);
      if (lane >= off)
        run += v;
    }
    sm.prefix[2 * lane + 2] = run;
    sm.prefix[2 * lane + 1] = run - c1;
    if (lane == 0)
      sm.prefix[0] = 0;
  }
  __syncthreads();

  const int group = threadIdx.x / 16, lane = threadIdx.x % 16;
  const int total = sm.prefix[kTileRows];
  const int t0 = int(int64_t(total) * group / kSumGroups);
  const int t1 = int(int64_t(total) * (group + 1) / kSumGroups);
  const bool active = 4 * lane < K; // this lane's word is in the row
  const float4 *x4 = reinterpret_cast<const float4 *>(a.X);
  const int64_t rowWords = a.H * K / 4, headWord = h * K / 4 + lane;
  int row = t0 < t1 ? rowOfEntry(sm.prefix, t0) : 0;
  const int firstRow = row;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  int accRow = row;
  // The entry past row `row`'s last, kept in a register: read from shared
  // memory for every entry, it cost a load and its wait an entry (finish
  // stores to shared memory, so the compiler could not keep it).
  int rowEnd = sm.prefix[row + 1];
  // Ends row accRow's part in this run: the first row of the run (which
  // an earlier run may have started) to the carry, any other to xs.
  auto finish = [&]() {
    if (!active)
      return;
    float *to = accRow == firstRow && group > 0
                    ? &sm.carry[group][4 * lane]
                    : xs + accRow * xStride + 4 * lane;
    *reinterpret_cast<float4 *>(to) = acc;
  };
  // Entry t's place in sumRows: found without walking the rows when they
  // are contiguous, so that its load need not wait for the walk. The next
  // batch's entries are loaded while this batch's rows are, so a batch
  // waits for one round trip instead of two.
  const bool contiguous = sm.contiguous;
  const int64_t base = sm.begin[0];
  int loadRow = row; // the row walk of the non-contiguous loads
  auto loadEntries = [&](int t, int64_t(&src)[kAhead], float(&wt)[kAhead]) {
#pragma unroll
    for (int u = 0; u < kAhead; ++u) {
      if (t + u >= t1)
        break;
      int64_t j;
      if (contiguous) {
        j = base + t + u;
      } else {
        while (t + u >= sm.prefix[loadRow + 1])
          ++loadRow;
        j = sm.begin[loadRow] + (t + u - sm.prefix[loadRow]);
      }
      src[u] = __ldg(a.sumRows + j);
      if constexpr (kWeightIds)
        wt[u] = __ldg(a.sumWeights + __ldg(a.sumWeightIds + j) * a.H + h);
      else if constexpr (kWeighted)
        wt[u] = __ldg(a.sumWeights + j * a.H + h);
    }
  };
  // Adds entry te's row v (times w when kWeighted) to its row's sum,
  // first ending the row before when te starts a later one.
  auto addEntry = [&](int te, const float4 &v, float w) {
    if (te >= rowEnd) {
      do
        ++row;
      while (te >= sm.prefix[row + 1]);
      rowEnd = sm.prefix[row + 1];
      finish();
      acc = make_float4(0.f, 0.f, 0.f, 0.f);
      accRow = row;
    }
    if (active) {
      acc.x += kWeighted ? w * v.x : v.x;
      acc.y += kWeighted ? w * v.y : v.y;
      acc.z += kWeighted ? w * v.z : v.z;
      acc.w += kWeighted ? w * v.w : v.w;
    }
  };
  int64_t src[kAhead], nextSrc[kAhead];
  // The entries' weights (kWeighted; otherwise unused and optimised away).
  float wt[kAhead], nextWt[kAhead];
  if constexpr (kRing) {
    // Slot u of batch buffer b is mine[(b * kAhead + u) * 16].
    float4 *const mine = ring + group * 2 * kAhead * 16 + lane;
    auto copyBatch = [&](int t, int b) {
#pragma unroll
      for (int u = 0; u < kAhead; ++u)
        if (t + u < t1 && active)
          __pipeline_memcpy_async(mine + (b * kAhead + u) * 16,
                                  x4 + src[u] * rowWords + headWord, 16);
      __pipeline_commit();
    };
    // Weighted rows: the weights of the batch being added (curWt) and of
    // the batch in flight (nextWt), loaded with their entries' row numbers.
    float curWt[kAhead];
    if (t0 < t1) {
      loadEntries(t0, src, wt);
      copyBatch(t0, 0);
#pragma unroll
      for (int u = 0; u < kAhead; ++u)
        curWt[u] = wt[u];
    }
    if (t0 + kAhead < t1)
      loadEntries(t0 + kAhead, src, wt);
    int b = 0;
    for (int t = t0; t < t1; t += kAhead, b ^= 1) {
      // The other buffer's slots were read (and their values used) in the
      // batch before, by this lane only.
      if (t + kAhead < t1) {
        copyBatch(t + kAhead, b ^ 1);
#pragma unroll
        for (int u = 0; u < kAhead; ++u)
          nextWt[u] = wt[u];
      } else {
        __pipeline_commit(); // an empty group: one wait for every batch
      }
      if (t + 2 * kAhead < t1)
        loadEntries(t + 2 * kAhead, src, wt);
      __pipeline_wait_prior(1); // batch t's copies (this lane's)
#pragma unroll
      for (int u = 0; u < kAhead; ++u) {
        if (t + u >= t1)
          break;
        addEntry(t + u,
                 active ? mine[(b * kAhead + u) * 16]
                        : make_float4(0.f, 0.f, 0.f, 0.f),
                 kWeighted ? curWt[u] : 1.f);
      }
      if constexpr (kWeighted)
#pragma unroll
        for (int u = 0; u < kAhead; ++u)
          curWt[u] = nextWt[u];
    }
  } else {
    if (t0 < t1)
      loadEntries(t0, src, wt);
    for (int t = t0; t < t1; t += kAhead) {
      float4 v[kAhead];
#pragma unroll
      for (int u = 0; u < kAhead; ++u)
        if (t + u < t1 && active)
          v[u] = __ldg(x4 + src[u] * rowWords + headWord);
      if (t + kAhead < t1)
        loadEntries(t + kAhead, nextSrc, nextWt);
#pragma unroll
      for (int u = 0; u < kAhead; ++u) {
        if (t + u >= t1)
          break;
        addEntry(t + u, v[u], kWeighted ? wt[u] : 1.f);
      }
#pragma unroll
      for (int u = 0; u < kAhead; ++u) {
        src[u] = nextSrc[u];
        if constexpr (kWeighted)
          wt[u] = nextWt[u];
      }
    }
  }
  if (lane == 0)
    sm.carryRow[group] = t0 < t1 && group > 0 ? firstRow : -1;
  if (t0 < t1)
    finish();
  __syncthreads();
  // The carries, in group order: one thread a column.
  for (int k = threadIdx.x; k < K; k += kMmaThreads)
    for (int g = 1; g < kSumGroups; ++g)
      if (sm.carryRow[g] >= 0)
        xs[sm.carryRow[g] * xStride + k] += sm.carry[g][k];
  // The caller's next barrier orders these adds before the tile is read.
}

/// Writes the row fields of the tile whose first row is `row0` from this
/// thread's lookup and starts copying its X row (head h) into `xs`: two
/// threads a row, each copying every other 16-byte word. `floor`: a slice no
/// later than the tile's first row's (the previous tile's last row's), or
/// kNoSlice32. kSum: the call sums rows (sumPtr), which stageSummedTile adds
/// instead of copying (then every thread of the block must call this: it
/// synchronises), with their weights when kWeighted (at their ids with
/// kWeightIds).
template <bool kSum, bool kWeighted, bool kWeightIds>
__device__ __forceinline__ void
stageTile(const SegmentGemmArgs &a, int64_t row0, int64_t h, float *xs,
          const TileRows &rows, int xStride, const RowLookup &l, unsigned floor,
          SummedTileSmem *summed = nullptr, float4 *ring = nullptr) {
  const int i = threadIdx.x / 2, half = threadIdx.x % 2;
  if (half == 0) {
    unsigned slice = kNoSlice32;
    if (l.live())
      slice = a.rowType      ? l.slice
              : a.segmentPtr ? segmentSliceFrom(a, row0 + i, floor)
                             : 0u;
    rows.dst[i] = l.live() ? l.dst : -1;
    rows.slice[i] = slice;
    // A divisor is stored as its reciprocal, once a row: the epilogue's
    // 64 divisions a row (each a reciprocal, two FMAs, a range check and a
    // branch) were, by count, about 7% of the summed GEMM's instructions
    // (am, session 33 call c).
    rows.scale[i] = a.epilogue == EpilogueOp::Div ? 1.f / l.scale : l.scale;
  }
  if constexpr (kSum) {
    stageSummedTile<kWeighted, kWeightIds>(a, h, xs, xStride, l, *summed, ring);
    return;
  }
  if (!l.live())
    return; // its X row stays as it was: every pass masks the row out
  const int K = int(a.K);
  const float *x = a.X + (l.src * a.H + h) * K;
  for (int q = 4 * half; q < K; q += 8)
    __pipeline_memcpy_async(xs + i * xStride + q, x + q, 16);
}

/// The least slice >= lowest among the tile's rows (kNoSlice32: none),
/// the same on every warp.
__device__ __forceinline__ unsigned nextSlice(const unsigned *slice,
                                              unsigned lowest, int lane) {
  static_assert(kTileRows == 64, "two rows a lane");
  const unsigned s0 = slice[lane], s1 = slice[lane + 32];
  unsigned v = kNoSlice32;
  if (s0 >= lowest)
    v = s0;
  if (s1 >= lowest && s1 < v)
    v = s1;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_min_sync(0xffffffffu, v);
#else
  for (int off = 16; off > 0; off /= 2)
    v = min(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
#endif
}

/// Writes (or adds) a warp's two output values of one row and mma tile.
__device__ __forceinline__ void storePair(const SegmentGemmArgs &a, float *y,
                                          float2 v) {
  if (a.atomic) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd(reinterpret_cast<float2 *>(y), v);
#else
    atomicAdd(y, v.x);
    atomicAdd(y + 1, v.y);
#endif
  } else if (a.accumulate) {
    float2 o = *reinterpret_cast<float2 *>(y);
    o.x += v.x;
    o.y += v.y;
    *reinterpret_cast<float2 *>(y) = o;
  } else {
    *reinterpret_cast<float2 *>(y) = v;
  }
}

/// Writes (or adds) four adjacent output values of one row at y, 16-byte
/// aligned: one vector atomic instead of storePair's two.
__device__ __forceinline__ void storeQuad(const SegmentGemmArgs &a, float *y,
                                          float4 v) {
  if (a.atomic) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd(reinterpret_cast<float4 *>(y), v);
#else
    atomicAdd(y, v.x);
    atomicAdd(y + 1, v.y);
    atomicAdd(y + 2, v.z);
    atomicAdd(y + 3, v.w);
#endif
  } else if (a.accumulate) {
    float4 o = *reinterpret_cast<float4 *>(y);
    o.x += v.x;
    o.y += v.y;
    o.z += v.z;
    o.w += v.w;
    *reinterpret_cast<float4 *>(y) = o;
  } else {
    *reinterpret_cast<float4 *>(y) = v;
  }
}

#ifndef HECTOR_GEMM_QUAD_STORES
#define HECTOR_GEMM_QUAD_STORES 1
#endif
/// Whether the linear kernel's epilogue stores quads: the two lanes of a
/// row's adjacent column pairs swap one pair of each two mma tiles, so
/// that each stores four columns of one tile (storeQuad).
constexpr bool kQuadStores = HECTOR_GEMM_QUAD_STORES != 0;

/// Where a block's window of output columns [c0, c0 + 64) goes: row r's
/// first column is window + r * stride. In Y, or in the one output part
/// that holds the whole window (linearMmaFits asks for parts a whole
/// number of windows wide), worked out once per block: per element,
/// outputAt's division cost the kqv projection 1.75x.
struct OutputWindow {
  float *window;
  int64_t stride;
};

__device__ __forceinline__ OutputWindow outputWindow(const SegmentGemmArgs &a,
                                                     int64_t h, int c0) {
  if (a.yParts <= 1)
    return {a.Y + h * a.N + c0, a.H * a.N};
  return {outputAt(a, 0, 0, c0), a.N / a.yParts}; // H = 1 with parts
}

/// Two adjacent columns of a row the epilogue reads, a bias's or a gated
/// mix's (`bias` points at the first), or zeros for a null pointer.
__device__ __forceinline__ float2 loadBiasPair(const float *bias) {
  return bias ? __ldg(reinterpret_cast<const float2 *>(bias))
              : make_float2(0.f, 0.f);
}

/// The epilogue's value of two adjacent columns of a row: plus their bias
/// `b` (kBias; zeros when the call has none), then times the row's scale
/// (with EpilogueOp::Div, stageTile stored its reciprocal).
template <bool kBias>
__device__ __forceinline__ float2 finishPair(const SegmentGemmArgs &a, float2 v,
                                             float2 b, float sc) {
  if constexpr (kBias) {
    v.x += b.x;
    v.y += b.y;
  }
  if (a.epilogue != EpilogueOp::None) {
    v.x *= sc;
    v.y *= sc;
  }
  return v;
}

/// The row dot (SegmentGemmArgs::rowDotY, one column: rowDotN = 1) of a
/// row whose finished values at columns n, n + 1 (n = 8j + 2t) this lane
/// added to `dot` times rowDotW[n], rowDotW[n + 1]: the quad's four lanes,
/// which hold the whole row (H = 1 and one 64-column window,
/// linearMmaFits), add their sums, and lane t = 0 stores it. Every lane of
/// the warp calls it (the sums shuffle); dst < 0 (past M) stores nothing.
__device__ __forceinline__ void storeRowDot(const SegmentGemmArgs &a, float dot,
                                            int64_t dst, int t) {
  dot += __shfl_xor_sync(0xffffffffu, dot, 1);
  dot += __shfl_xor_sync(0xffffffffu, dot, 2);
  if (t == 0 && dst >= 0)
    a.rowDotY[dst] = dot;
}

/// Summed rows with rowIds: a block takes runs of this many consecutive
/// row tiles, strided by the number of runs (TileSequence).
constexpr int64_t kSumRunTiles = 4;
/// Summed rows: blocks an SM must hold at once. The staging's loads wait
/// on DRAM and L2 (gathered rows), and at 162 registers three blocks a
/// multiprocessor kept 35% of DRAM bandwidth busy on am (Nsight Compute,
/// session 25 call d); four cap the registers at 128. Unweighted rows took
/// five with their rows loaded into registers (96 registers, one X buffer:
/// oneXBuffer; session 32 call f). Their cp.async ring (kSumRingBatch 4,
/// 16 KB) leaves room for four, which ran the summed GEMM 1.014x to 1.06x
/// faster than five without it on am, mag and wikikg2; batches of 6 and 8
/// at three blocks gained less (bench_summed_rows, H100, session 33 call
/// e). Weighted rows ran four blocks with two X buffers (at five, RGAT's
/// inference ran 3% to 4% slower on am, mag and wikikg2, session 32 call
/// e); with the ring and one buffer, still four, the weighted GEMM ran
/// 1.031x to 1.065x faster (session 33 call i).
__host__ __device__ constexpr int sumMinBlocks(bool weighted) {
  return !sumRing(weighted)  ? (weighted ? 4 : 5)
         : kSumRingBatch > 4 ? 3 // the ring's 24 KB and more
                             : 4;
}

/// Whether a kernel stages its X rows into one buffer instead of two:
/// summed rows (weighted ones with the ring), so that the ring fits in
/// shared memory beside four blocks' buffers (five without the ring).
/// Their sums are added in registers while the loads arrive, so the
/// second buffer overlapped nothing within a block: the next tile is
/// staged after this one's epilogue instead of before its products.
__host__ __device__ constexpr bool oneXBuffer(bool sum, bool weighted) {
  return sum && (!weighted || sumRing(weighted));
}

/// Summed rows: what a row costs a block besides its entries, in entries
/// (TileSequence's balanced ranges): its output row's atomic adds, its
/// lookups and its share of the tile's products. On bench_summed_rows
/// (H100, session 27 calls a and b) 4 was best on am, mag and wikikg2
/// alike: the summed GEMM took 1.12 / 2.10 / 3.63 ms with 4, 1.19 / 2.23 /
/// 3.82 with 2, 1.24 / 2.06 / 4.10 with 8 and 1.55 / 2.27 / 5.10 with 16.
constexpr int64_t kSumRowCost = 4;

/// The row tiles a block takes, in increasing order: at(k) is the first
/// row of its k-th (-1 past its last), and its rows end at the next
/// tile's first row or at `end`, whichever comes first.
/// - Contiguous: a run of tilesPerRun 64-row tiles (rows sorted by slice
///   change slice rarely within a block, so the staged weight stays).
/// - Strided (summed rows with rowIds): runs of kSumRunTiles tiles strided
///   by the number of runs. A hub's segment is cut into consecutive rows
///   (chunks) that fill many consecutive tiles, and in one block's
///   contiguous run of equal tiles they made that block the whole launch's
///   tail (mag: 13.8 ms where the other blocks needed well under 1,
///   session 25 call b).
/// - Balanced (summed rows in id order): one contiguous range of rows a
///   block, cut where the running cost (entries plus kSumRowCost a row)
///   crosses an equal share (balancedRowStart); its tiles start at the
///   range's first row, so only its last tile may be short. Strided runs
///   left a quarter of the multiprocessors' cycles idle at the end of am's
///   summed GEMM (Nsight Compute, session 26 call b: 1.88M of 2.51M cycles
///   active): the tiles' entry counts differ tenfold between hub chunks
///   and the rest, and a block's share of heavy runs was left to chance.
///   Balanced: am 1.50 -> 1.12 ms, mag 2.73 -> 2.10, wikikg2 4.43 -> 3.66
///   (bench_summed_rows, H100, session 27 call b).
struct TileSequence {
  enum class Kind { Contiguous, Strided, Balanced };
  Kind kind = Kind::Contiguous;
  int64_t first = 0, last = 0; ///< contiguous: tiles [first, last)
  int64_t run = 0, runs = 1, rowTiles = 0;
  int64_t begin = 0, end = 0; ///< balanced: rows [begin, end); else end = M
  __device__ int64_t at(int64_t k) const {
    switch (kind) {
    case Kind::Contiguous:
      return first + k < last ? (first + k) * kTileRows : -1;
    case Kind::Strided: {
      const int64_t t =
          ((k / kSumRunTiles) * runs + run) * kSumRunTiles + k % kSumRunTiles;
      return t < rowTiles ? t * kTileRows : -1;
    }
    default:
      return begin + k * kTileRows < end ? begin + k * kTileRows : -1;
    }
  }
};

/// The first row of run b of `runs` in the balanced partition of summed
/// rows (rows in id order): the least r with cost(r) >= cost(M) * b / runs,
/// where cost(r) = sumPtr[r] - sumPtr[0] + rowCost * r counts the entries
/// and rows before r. A warp-wide search, 32 probes a step (five steps for
/// am's 1.8M chunks instead of 21 dependent loads); every lane returns the
/// same row. Called by a whole warp.
__device__ int64_t balancedRowStart(const SegmentGemmArgs &a, int64_t b,
                                    int64_t runs, int64_t rowCost, int lane) {
  const int64_t M = a.M;
  if (b <= 0)
    return 0;
  if (b >= runs)
    return M;
  const int64_t base = a.sumPtr[0];
  auto cost = [&](int64_t r) { return a.sumPtr[r] - base + rowCost * r; };
  const int64_t target = cost(M) * b / runs;
  if (target <= 0)
    return 0;
  int64_t lo = 0, hi = M; // cost(lo) < target <= cost(hi)
  while (hi - lo > 1) {
    const int64_t span = hi - lo;
    // Probes strictly between lo and hi, non-decreasing by lane.
    const int64_t probe =
        lo + max(int64_t(1), min(span - 1, span * (lane + 1) / 33));
    const unsigned reached = __ballot_sync(0xffffffffu, cost(probe) >= target);
    if (reached == 0) {
      lo = __shfl_sync(0xffffffffu, probe, 31);
    } else {
      const int f = __ffs(reached) - 1;
      const int64_t below = __shfl_sync(0xffffffffu, probe, f > 0 ? f - 1 : 0);
      hi = __shfl_sync(0xffffffffu, probe, f);
      if (f > 0)
        lo = below;
    }
  }
  return hi;
}

/// A gated mix's kernel: blocks an SM must hold at once. Its prefetched
/// mix rows took it to 133 to 148 registers, three blocks of kMmaThreads
/// a multiprocessor; four, as many as its shared memory allows, cap it at
/// 128 registers, with no spills (sm_90, session 35).
constexpr int kMixMinBlocks = 4;

/// kFused: the call has a bias, output parts, a gated mix or a row dot
/// (plainOutput false); kRowDot: it has a row dot (and kFused). Each is its own
/// instantiation: with the bias and parts in the plain one every GEMM ran
/// 2% to 5% slower on am (H100, session 17 call g), and the row dot's
/// registers (108 against 80) stay out of the others. kSum: the call sums
/// rows (sumPtr; never with a row dot), staged by stageSummedTile;
/// kWeighted: with weights (sumWeights, kSum only), whose loads stay out
/// of the unweighted staging's registers; kWeightIds: read at their ids
/// (sumWeightIds, kWeighted only), whose loads stay out of the others'.
template <bool kSplit, bool kTransW, bool kFused, bool kRowDot, bool kSum,
          bool kWeighted, bool kWeightIds, bool kMix>
__global__ void __launch_bounds__(kMmaThreads,
                                  kSum   ? sumMinBlocks(kWeighted)
                                  : kMix ? kMixMinBlocks
                                         : 1)
    linearMmaKernel(const SegmentGemmArgs a, int64_t rowTiles,
                    int64_t tilesPerRun, int windows) {
  static_assert(kSum || !kWeighted, "weights weigh summed rows");
  static_assert(kWeighted || !kWeightIds, "weight ids pick weights");
  static_assert(!kMix || (kFused && !kSum && !kRowDot),
                "a gated mix goes with the fused plain epilogue only");
  extern __shared__ float4 mmaSmem[];
  const int K = int(a.K), N = int(a.N);
  constexpr bool kOneX = oneXBuffer(kSum, kWeighted);
  const MmaSmem layout(K, kSplit, kSum, kOneX);
  // Buffer b's X rows and row fields (computed, not an array of pointers:
  // an array indexed by the buffer number would live in local memory).
  float *const xBase = reinterpret_cast<float *>(mmaSmem);
  uint32_t *const wHead = reinterpret_cast<uint32_t *>(
      xBase + layout.xBuffers() * layout.xFloats());
  uint32_t *const wTail = wHead + (kSplit ? layout.planeWords() : 0);
  int64_t *const dstBase = reinterpret_cast<int64_t *>(
      wHead + layout.planes * layout.planeWords());
  float *const scaleBase = reinterpret_cast<float *>(dstBase + 2 * kTileRows);
  unsigned *const sliceBase =
      reinterpret_cast<unsigned *>(scaleBase + 2 * kTileRows);
  SummedTileSmem *const summed =
      kSum ? reinterpret_cast<SummedTileSmem *>(
                 reinterpret_cast<char *>(mmaSmem) + layout.rowFieldsEnd())
           : nullptr;
  // Summed rows' cp.async ring, after SummedTileSmem.
  float4 *const ring = kSum ? reinterpret_cast<float4 *>(summed + 1) : nullptr;
  auto xbuf = [&](int b) { return xBase + (kOneX ? 0 : b) * layout.xFloats(); };
  auto rowsOf = [&](int b) {
    return TileRows{dstBase + b * kTileRows, scaleBase + b * kTileRows,
                    sliceBase + b * kTileRows};
  };

  const int64_t h = blockIdx.y;
  TileSequence tiles;
  tiles.run = blockIdx.x / windows;
  tiles.runs = gridDim.x / windows;
  tiles.rowTiles = rowTiles;
  tiles.first = tiles.run * tilesPerRun;
  tiles.last = min(tiles.first + tilesPerRun, rowTiles);
  tiles.end = a.M;
  if constexpr (kSum) {
    tiles.kind = TileSequence::Kind::Strided;
    if (!a.rowIds) { // rows in id order: balanced ranges
      __shared__ int64_t range[2];
      if (threadIdx.x < 32) {
        const int64_t b = balancedRowStart(a, tiles.run, tiles.runs,
                                           kSumRowCost, threadIdx.x);
        const int64_t e = balancedRowStart(a, tiles.run + 1, tiles.runs,
                                           kSumRowCost, threadIdx.x);
        if (threadIdx.x == 0) {
          range[0] = b;
          range[1] = e;
        }
      }
      __syncthreads();
      tiles.kind = TileSequence::Kind::Balanced;
      tiles.begin = range[0];
      tiles.end = range[1];
    }
  }
  const int64_t first = tiles.at(0);
  if (first < 0)
    return;
  const int c0 = int(blockIdx.x % windows) * kPassCols;
  const int nTiles = min(kPassTiles, (N - c0) / 8);
  const OutputWindow out =
      kFused ? outputWindow(a, h, c0) : OutputWindow{nullptr, 0};

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;
  const int rowA = 16 * warp + g, rowB = rowA + 8; // this lane's rows
  // The row dot's weight at this lane's columns, for every tile.
  float dotW[kRowDot ? kPassTiles : 1][2] = {};
  if constexpr (kRowDot) {
#pragma unroll
    for (int j = 0; j < kPassTiles; ++j)
      if (j < nTiles) {
        dotW[j][0] = __ldg(a.rowDotW + c0 + 8 * j + 2 * t);
        dotW[j][1] = __ldg(a.rowDotW + c0 + 8 * j + 2 * t + 1);
      }
  }
  const int st = layout.stride;
  // The rows whose addresses this lane gives ldmatrix. X: fragments 0..3
  // are (rows 0-7, words 0-3), (rows 8-15, 0-3), (0-7, 4-7), (8-15, 4-7)
  // of the warp's rows, which is the mma's A layout. Weight: (tile j,
  // words 0-3), (j, 4-7), (j + 1, 0-3), (j + 1, 4-7): b0 and b1 of two
  // mma tiles.
  const int q = lane / 8, r = lane % 8;
  const int xLaneWord = (16 * warp + r + 8 * (q & 1)) * st + 4 * (q >> 1);
  const int wLaneWord = (8 * (q >> 1) + r) * st + 4 * (q & 1);
  unsigned loaded = kNoSlice32; // the slice whose weight is staged

  stageTile<kSum, kWeighted, kWeightIds>(a, first, h, xbuf(0), rowsOf(0), st,
                                         lookupRow(a, first, tiles.end, h),
                                         kNoSlice32, summed, ring);
  __pipeline_commit();
  // The next tile's lookups, a tile ahead of its copies.
  RowLookup next =
      tiles.at(1) >= 0 ? lookupRow(a, tiles.at(1), tiles.end, h) : RowLookup{};
  __syncthreads(); // the first tile's row fields: the next tile's floor
  for (int64_t k = 0; tiles.at(k) >= 0; ++k) {
    const int cur = int(k & 1);
    // A gated mix's rows and gates of this lane's two rows, loaded before
    // the tile's copies are waited for and its products made, so that
    // their trip to DRAM passes meanwhile. Loaded in the epilogue, each
    // tile waited it out before its stores: HGT's output projection with
    // the mix ran as long as it and the separate skip loop had together
    // (H100, session 35 call a). This tile's row fields were written
    // before the previous tile's closing sync (or the one above the loop).
    float2 mixPair[kMix ? 2 : 1][kMix ? kPassTiles : 1];
    float mixGate[2] = {1.f, 1.f};
    if constexpr (kMix) {
      const TileRows tr = rowsOf(cur);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int64_t dst = tr.dst[half ? rowB : rowA];
        const float *mix =
            dst >= 0 ? a.mixRows + (dst * a.H + h) * N + c0 + 2 * t : nullptr;
        if (dst >= 0)
          mixGate[half] = mixGateAt(a, int64_t(tr.slice[half ? rowB : rowA]));
#pragma unroll
        for (int j = 0; j < kPassTiles; ++j)
          mixPair[half][j] =
              loadBiasPair(j < nTiles && mix ? mix + 8 * j : nullptr);
      }
    }
    // Stages tile k + 1 into X buffer cur ^ 1 (kOneX: the one buffer) and
    // row fields cur ^ 1, reading this tile's last slice.
    auto stageNext = [&] {
      if (tiles.at(k + 1) < 0)
        return;
      stageTile<kSum, kWeighted, kWeightIds>(
          a, tiles.at(k + 1), h, xbuf(cur ^ 1), rowsOf(cur ^ 1), st, next,
          rowsOf(cur).slice[kTileRows - 1], summed, ring);
      if (tiles.at(k + 2) >= 0)
        next = lookupRow(a, tiles.at(k + 2), tiles.end, h);
    };
    if constexpr (!kOneX) {
      // The other buffer was last read before the previous tile's closing
      // sync, so the next tile's copies may start now. This tile's row
      // fields were written before that sync (or the one above).
      stageNext();
      __pipeline_commit();
      __pipeline_wait_prior(1); // this tile's copies (this thread's)
      __syncthreads();          // everyone's copies and row fields
    }

    const float *x = xbuf(cur);
    const TileRows tr = rowsOf(cur);
    const unsigned sliceA = tr.slice[rowA], sliceB = tr.slice[rowB];
    float acc[kPassTiles][4] = {};
    for (unsigned lowest = 0;;) {
      const unsigned s = nextSlice(tr.slice, lowest, lane);
      if (s == kNoSlice32)
        break;
      lowest = s + 1;
      if (s != loaded) { // the same s on every warp: a block-wide branch
        __syncthreads(); // nobody reads the old slice any more
        mma_fragments::stageWeight<kSplit, kTransW, kMmaThreads>(
            a, s, h, c0, wHead, wTail, st);
        __syncthreads();
        loaded = s;
      }
      const bool liveA = sliceA == s, liveB = sliceB == s;
      for (int k0 = 0; k0 < K; k0 += 8) {
        uint32_t xw[4];
        loadFragments(xw, x + xLaneWord + k0);
        // The input op on the fragment: each X element of the pass is in
        // one lane's fragment once, so it is applied once a pass (the
        // staged rows stay as read).
        if constexpr (!kSum) {
          if (a.inputOp != InputOp::None) {
#pragma unroll
            for (int i = 0; i < 4; ++i)
              xw[i] = __float_as_uint(
                  applyInputOp(a.inputOp, __uint_as_float(xw[i])));
          }
        }
        const float av[4] = {liveA ? __uint_as_float(xw[0]) : 0.f,
                             liveB ? __uint_as_float(xw[1]) : 0.f,
                             liveA ? __uint_as_float(xw[2]) : 0.f,
                             liveB ? __uint_as_float(xw[3]) : 0.f};
        const Tf32Parts<kSplit, 4> af(av);
#pragma unroll
        for (int j = 0; j < kPassTiles; j += 2) {
          if (j >= nTiles)
            break;
          mmaTilePair<kSplit>(acc[j], acc[j + 1], af, wHead, wTail,
                              wLaneWord + 8 * j * st + k0, j + 1 < nTiles);
        }
      }
    }
    // The epilogue: rows g and g + 8 of the warp, columns 2t, 2t + 1 of
    // each mma tile.
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = half ? rowB : rowA;
      const int64_t dst = tr.dst[row];
      // With a row dot or quad stores every lane goes on (its values
      // shuffle); rows past M (dst < 0) are a whole quad's and store
      // nothing.
      if (dst < 0 && !kRowDot && !kQuadStores)
        continue;
      const float sc = tr.scale[row];
      float *y = kFused ? out.window + dst * out.stride + 2 * t
                        : a.Y + (dst * a.H + h) * N + c0 + 2 * t;
      // The bias row of this row's slice, at this lane's columns.
      const float *bias =
          kFused && a.bias && dst >= 0
              ? a.bias +
                    ((a.biasPerSlice ? int64_t(tr.slice[row]) * a.H : 0) + h) *
                        N +
                    c0 + 2 * t
              : nullptr;
      // Every mma tile's bias pair is loaded before the first store. Loaded
      // between the stores, each load was waited out on its own (sixteen
      // trips to L1 a tile): the biased TF32 root GEMM took 0.625 ms on am's
      // 1.89M rows against the plain one's 0.461, and 0.471 with the pairs
      // loaded first (bench_segment_gemm, H100, session 32 calls a and b).
      // Summed rows keep loading them one at a time: their 128 registers
      // have no room for sixteen more.
      constexpr bool kBatchBias = kFused && !kSum;
      float2 biasPair[kBatchBias ? kPassTiles : 1];
      // A gated mix: the value is g acc + (g b + (1 - g) mix), its second
      // term folded into the bias pairs (MmaFragments.cuh mixAddend).
      const float gate = mixGate[half];
      if constexpr (kBatchBias) {
#pragma unroll
        for (int j = 0; j < kPassTiles; ++j) {
          biasPair[j] =
              loadBiasPair(j < nTiles && bias ? bias + 8 * j : nullptr);
          if constexpr (kMix)
            biasPair[j] =
                mma_fragments::mixAddend(biasPair[j], mixPair[half][j], gate);
        }
      }
      float dot = 0.f;
      // Tile j's finished pair of this lane's columns.
      auto finished = [&](int j) {
        float2 b;
        if constexpr (kBatchBias)
          b = biasPair[j];
        else
          b = loadBiasPair(bias ? bias + 8 * j : nullptr);
        // A mix has no epilogue scale (checkSegmentGemmArgs).
        const float2 v =
            kMix ? mma_fragments::mixValue(acc[j][2 * half],
                                           acc[j][2 * half + 1], b, gate)
                 : finishPair<kFused>(
                       a, make_float2(acc[j][2 * half], acc[j][2 * half + 1]),
                       b, sc);
        if constexpr (kRowDot)
          dot += v.x * dotW[j][0] + v.y * dotW[j][1];
        return v;
      };
#pragma unroll
      for (int j = 0; j < kPassTiles; j += 2) {
        if (j >= nTiles)
          break;
        const float2 v0 = finished(j);
        if (j + 1 >= nTiles) {
          if (dst >= 0)
            storePair(a, y + 8 * j, v0);
          break;
        }
        const float2 v1 = finished(j + 1);
        if constexpr (kQuadStores) {
          const LaneQuad quad = quadOfPairs(v0, v1, t);
          if (dst >= 0)
            storeQuad(a, y + 8 * j + quad.offset, quad.value);
        } else if (dst >= 0) {
          storePair(a, y + 8 * j, v0);
          storePair(a, y + 8 * j + 8, v1);
        }
      }
      if constexpr (kRowDot)
        storeRowDot(a, dot, dst, t);
    }
    __syncthreads(); // this buffer is staged again two tiles on (kOneX:
                     // now)
    if constexpr (kOneX) {
      stageNext();
      __syncthreads(); // the sums, carries and row fields
    }
  }
}

// Outer mode: dW[s][h] += X^T B over a slice's rows. The mma's M side is
// a window of 64 entries k of X (warp w owns k0 + [16w, 16w + 16)), its N
// side a window of 64 columns of B (blockIdx.z numbers the pairs of
// windows), its reduction side the rows, 8 a step. A block sums 64-row
// tiles of one slice; which rows follows sumOuterRows, as in the other
// outer kernels. Rows not of the slice (rowType), or past
// its end, are staged as zeros in both factors; entries past K or N are
// left as they are, since they meet only outputs that are not stored.
constexpr int kOuterRows = 64;
constexpr int kOuterMaxK = 256; // four K windows

/// Shared-memory layout of the outer kernel: two buffers, each a tile's
/// X rows then its B rows. Strides are 8 modulo 32 floats, so that the 4
/// rows a fragment reads at once fall 8 banks apart.
struct OuterSmem {
  int xStride = 0; ///< the K window (K, at most 64) rounded up to 32,
                   ///< plus 8
  int bStride = 0; ///< 64 columns plus 8

  __host__ __device__ explicit OuterSmem(int K)
      : xStride((min(K, kPassCols) + 31) / 32 * 32 + 8),
        bStride(kPassCols + 8) {}
  __host__ __device__ int bufferFloats() const {
    return kOuterRows * (xStride + bStride);
  }
  __host__ __device__ size_t bytes() const {
    return size_t(2 * bufferFloats()) * 4;
  }
};

template <bool kSplit>
__global__ void __launch_bounds__(kMmaThreads)
    outerMmaKernel(const SegmentGemmArgs a, int64_t chunkRows) {
  extern __shared__ float4 mmaSmem[];
  const int K = int(a.K), N = int(a.N);
  const OuterSmem layout(K);
  float *const smem = reinterpret_cast<float *>(mmaSmem);
  auto xbuf = [&](int b) { return smem + b * layout.bufferFloats(); };
  auto bbuf = [&](int b) { return xbuf(b) + kOuterRows * layout.xStride; };
  const int nWindows = (N + kPassCols - 1) / kPassCols;
  const int k0 = int(blockIdx.z) / nWindows * kPassCols;
  const int n0 = int(blockIdx.z) % nWindows * kPassCols;
  const int kWidth = min(kPassCols, K - k0); // this block's entries k
  const int nTiles = min(kPassTiles, (N - n0 + 7) / 8);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;
  const int m0 = 16 * warp;          // this warp's first k in the window
  const bool computes = m0 < kWidth; // warps past K only stage rows

  float acc[kPassTiles][4];
  auto clear = [&] {
#pragma unroll
    for (int j = 0; j < kPassTiles; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c)
        acc[j][c] = 0.f;
  };
  // Starts copying the rows first .. first + 63 (those of slice s before
  // end) into buffer b; two threads a row, each every other 16-byte word.
  auto stage = [&](int b, int64_t s, int64_t h, int64_t first, int64_t end) {
    const int i = threadIdx.x / 2, half = threadIdx.x % 2;
    const int64_t r = first + i;
    int64_t id = r < end ? rowIdOf(a, r) : -1;
    if (id >= 0 && a.rowType && a.rowType[id] != s)
      id = -1;
    float *xs = xbuf(b) + i * layout.xStride;
    float *bs = bbuf(b) + i * layout.bStride;
    const int bWords = min(kPassCols, N - n0);
    if (id < 0) {
      const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
      for (int q = 4 * half; q < kWidth; q += 8)
        *reinterpret_cast<float4 *>(xs + q) = zero;
      for (int q = 4 * half; q < bWords; q += 8)
        *reinterpret_cast<float4 *>(bs + q) = zero;
      return;
    }
    const int64_t xr = a.gather ? a.gather[id] : id;
    const int64_t br = a.gatherB ? a.gatherB[id] : id;
    const float *x = a.X + (xr * a.H + h) * K + k0;
    const float *bsrc = a.B + (br * a.H + h) * N + n0;
    for (int q = 4 * half; q < kWidth; q += 8)
      __pipeline_memcpy_async(xs + q, x + q, 16);
    for (int q = 4 * half; q < bWords; q += 8)
      __pipeline_memcpy_async(bs + q, bsrc + q, 16);
  };
  // A tile's products are summed on the tensor cores, then added to acc
  // with FADD: the mma's fp32 accumulation truncates, and over a slice's
  // thousands of rows its bias grew to 5e-5 of the sums (the tests' table,
  // H200); 24 products a tile keep it below fp32 rounding.
  auto multiply = [&](int b) {
    if (!computes)
      return;
    const float *xs = xbuf(b), *bs = bbuf(b);
    const int xst = layout.xStride, bst = layout.bStride;
    float tileAcc[kPassTiles][4] = {};
#pragma unroll 2
    for (int r0 = 0; r0 < kOuterRows; r0 += 8) {
      // A = X^T: entry (k, row) is X[row][k].
      const float av[4] = {
          xs[(r0 + t) * xst + m0 + g], xs[(r0 + t) * xst + m0 + g + 8],
          xs[(r0 + t + 4) * xst + m0 + g], xs[(r0 + t + 4) * xst + m0 + g + 8]};
      const Tf32Parts<kSplit, 4> af(av);
#pragma unroll
      for (int j = 0; j < kPassTiles; ++j) {
        if (j >= nTiles)
          break;
        const int n = 8 * j + g;
        const float bv[2] = {bs[(r0 + t) * bst + n],
                             bs[(r0 + t + 4) * bst + n]};
        mmaTerm<kSplit>(tileAcc[j], af, Tf32Parts<kSplit, 2>(bv));
      }
    }
#pragma unroll
    for (int j = 0; j < kPassTiles; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c)
        acc[j][c] += tileAcc[j][c];
  };
  auto sumRows = [&](int64_t s, int64_t h, int64_t first, int64_t end,
                     int64_t step) {
    int b = 0;
    stage(b, s, h, first, end);
    __pipeline_commit();
    for (int64_t base = first; base < end; base += step) {
      // The other buffer was last read before the previous tile's
      // closing sync.
      if (base + step < end)
        stage(b ^ 1, s, h, base + step, end);
      __pipeline_commit();
      __pipeline_wait_prior(1);
      __syncthreads();
      multiply(b);
      __syncthreads();
      b ^= 1;
    }
  };
  // Rows m0 + g and m0 + g + 8, columns 2t and 2t + 1 of each mma tile.
  auto store = [&](int64_t s, int64_t h) {
    if (!computes)
      return;
    float *dw = a.dW + (s * a.H + h) * K * N;
#pragma unroll
    for (int j = 0; j < kPassTiles; ++j) {
      if (j >= nTiles)
        break;
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int kw = m0 + g + 8 * (c / 2), n = n0 + 8 * j + 2 * t + c % 2;
        const int k = k0 + kw;
        if (kw < kWidth && n < N)
          storeOut(a.transposeW ? dw + n * K + k : dw + k * N + n, acc[j][c],
                   a);
      }
    }
  };
  sumOuterRows<kOuterRows>(a, chunkRows, blockIdx.x, gridDim.x, clear, sumRows,
                           store);
}

/// HECTOR_GEMM_MMA=0 turns the kernels off (read once).
bool mmaEnabledByEnvironment() {
  static const bool enabled = !trav::envIs("HECTOR_GEMM_MMA", "0");
  return enabled;
}

template <bool kSplit, bool kTransW, bool kFused, bool kRowDot = false,
          bool kSum = false, bool kWeighted = false, bool kWeightIds = false,
          bool kMix = false>
cudaError_t launchAs(const SegmentGemmArgs &a, cudaStream_t stream) {
  const size_t smem =
      MmaSmem(int(a.K), kSplit, kSum, oneXBuffer(kSum, kWeighted)).bytes();
  const auto kernel = linearMmaKernel<kSplit, kTransW, kFused, kRowDot, kSum,
                                      kWeighted, kWeightIds, kMix>;
  const void *symbol = reinterpret_cast<const void *>(kernel);
  HECTOR_CUDA_TRY(allowDynamicShared(symbol, smem));
  int sms = 0, perSm = 0;
  HECTOR_CUDA_TRY(deviceAttribute(cudaDevAttrMultiProcessorCount, &sms));
  HECTOR_CUDA_TRY(blocksPerMultiprocessor(symbol, kMmaThreads, smem, &perSm));
  const int64_t rowTiles = (a.M + kTileRows - 1) / kTileRows;
  const int windows = int((a.N + kPassCols - 1) / kPassCols);
  // One resident wave over all heads and windows; each run of rows a
  // contiguous run of tiles, its windows adjacent blocks.
  const int64_t perRunOfRows = a.H * windows;
  int64_t runs =
      (int64_t(sms) * (perSm < 1 ? 1 : perSm) + perRunOfRows - 1) /
      perRunOfRows;
  if (runs > rowTiles)
    runs = rowTiles;
  const int64_t tilesPerRun = (rowTiles + runs - 1) / runs;
  runs = (rowTiles + tilesPerRun - 1) / tilesPerRun;
  const dim3 grid{unsigned(runs * windows), unsigned(a.H)};
  kernel<<<grid, kMmaThreads, smem, stream>>>(a, rowTiles, tilesPerRun,
                                              windows);
  return cudaGetLastError();
}

/// launchAs with the fused epilogue exactly when the call has a bias,
/// output parts or a row dot, and the row dot's only with one (each its
/// own instantiation, so that the plain and the fused GEMMs without a dot
/// keep their registers). Summed rows (sumPtr) have their own
/// instantiations too: their staging holds a row's sum in registers.
/// Weighted summed rows have only the plain epilogue (linearMmaFits), and
/// weights at their ids (sumWeightIds) an instantiation of their own.
template <bool kSplit, bool kTransW>
cudaError_t launchWithEpilogue(const SegmentGemmArgs &a, cudaStream_t stream) {
  if (a.sumWeightIds)
    return launchAs<kSplit, kTransW, false, false, true, true, true>(a, stream);
  if (a.sumWeights)
    return launchAs<kSplit, kTransW, false, false, true, true>(a, stream);
  if (a.sumPtr)
    return plainOutput(a)
               ? launchAs<kSplit, kTransW, false, false, true>(a, stream)
               : launchAs<kSplit, kTransW, true, false, true>(a, stream);
  if (a.rowDotY)
    return launchAs<kSplit, kTransW, true, true>(a, stream);
  // A gated mix (never with summed rows or a row dot): its own
  // instantiation, whose prefetched rows (32 registers) stay out of the
  // other fused GEMMs'.
  if (a.mixRows)
    return launchAs<kSplit, kTransW, true, false, false, false, false, true>(
        a, stream);
  return plainOutput(a) ? launchAs<kSplit, kTransW, false>(a, stream)
                        : launchAs<kSplit, kTransW, true>(a, stream);
}

template <bool kSplit>
cudaError_t launchOuterAs(const SegmentGemmArgs &a, cudaStream_t stream) {
  const size_t smem = OuterSmem(int(a.K)).bytes();
  const auto kernel = outerMmaKernel<kSplit>;
  const void *symbol = reinterpret_cast<const void *>(kernel);
  HECTOR_CUDA_TRY(allowDynamicShared(symbol, smem));
  int sms = 0, perSm = 0;
  HECTOR_CUDA_TRY(deviceAttribute(cudaDevAttrMultiProcessorCount, &sms));
  HECTOR_CUDA_TRY(blocksPerMultiprocessor(symbol, kMmaThreads, smem, &perSm));
  // One block column per pair of (K window, N window).
  const int64_t colTiles =
      (a.K + kPassCols - 1) / kPassCols * ((a.N + kPassCols - 1) / kPassCols);
  // One wave over the column windows together.
  const int64_t resident = int64_t(sms) * (perSm < 1 ? 1 : perSm);
  RowTileGrid g;
  HECTOR_CUDA_TRY(rowTileGrid(a, std::max<int64_t>(1, resident / colTiles), 1,
                              kOuterRows, &g));
  g.grid.z = unsigned(colTiles);
  if (g.chunkRows > 0)
    kernel<<<g.grid, kMmaThreads, smem, stream>>>(a, g.chunkRows);
  else
    kernel<<<g.grid, kMmaThreads, smem, stream>>>(singleWriter(a), 0);
  return cudaGetLastError();
}

/// Whether the current device has mma.sync TF32 (sm_80 or newer) and the
/// environment leaves the kernels on.
bool tensorCoresUsable() {
  if (!mmaEnabledByEnvironment())
    return false;
  int major = 0;
  return deviceAttribute(cudaDevAttrComputeCapabilityMajor, &major) ==
             cudaSuccess &&
         major >= 8;
}

} // namespace

bool outerMmaFits(const SegmentGemmArgs &a) {
  if (a.mode != SegmentGemmMode::Outer)
    return false;
  if (a.K < 4 || a.K > kOuterMaxK || a.K % 4 != 0 || a.N < 4 || a.N > kMaxN ||
      a.N % 4 != 0 || a.H < 1)
    return false;
  if (!aligned16(a.X) || !aligned16(a.B))
    return false;
  return tensorCoresUsable();
}

cudaError_t launchOuterMma(const SegmentGemmArgs &a, cudaStream_t stream) {
  return a.tf32 ? launchOuterAs<false>(a, stream)
                : launchOuterAs<true>(a, stream);
}

bool linearMmaFits(const SegmentGemmArgs &a) {
  if (a.mode != SegmentGemmMode::Linear || (a.atomic && a.deterministic))
    return false;
  if (a.K < 8 || a.K > kMaxK || a.K % 8 != 0 || a.N < 8 || a.N > kMaxN ||
      a.N % 8 != 0 || a.M < 1 || a.H < 1 || a.H > 65535 ||
      a.numSlices > int64_t(INT32_MAX))
    return false;
  if (!aligned16(a.X) || !aligned16(a.W))
    return false;
  if (a.yParts <= 1 && !aligned16(a.Y))
    return false;
  // Output parts a whole number of 64-column windows wide, so that a
  // block's window lies in one part (outputWindow); a bias 16-byte aligned
  // (float2 loads).
  if (a.yParts > 1 && (a.N / a.yParts) % kPassCols != 0)
    return false;
  for (int p = 0; a.yParts > 1 && p < a.yParts; ++p)
    if (!aligned16(a.yPart[p]))
      return false;
  if (a.bias && !aligned16(a.bias))
    return false;
  if (a.mixRows && !aligned16(a.mixRows))
    return false;
  // A row dot in the epilogue: one column, the whole row in one block's
  // window.
  if (a.rowDotY && (a.H != 1 || a.N > kPassCols || a.rowDotN != 1))
    return false;
  // Summed rows and a row dot have no instantiation together, nor weighted
  // summed rows and a bias or output parts (their one use so far, an
  // attention layer's aggregation, adds into an output a bias is in).
  if (a.sumPtr && a.rowDotY)
    return false;
  if (a.sumWeights && !plainOutput(a))
    return false;
  // Heads that share X rows or W's columns: the general kernel (the
  // staging here reads a head's K inputs and its weight as H separate
  // blocks).
  if (!perHeadLayouts(a))
    return false;
  return tensorCoresUsable();
}

cudaError_t launchLinearMma(const SegmentGemmArgs &a, cudaStream_t stream) {
  const bool split = !a.tf32;
  if (split)
    return a.transposeW ? launchWithEpilogue<true, true>(a, stream)
                        : launchWithEpilogue<true, false>(a, stream);
  return a.transposeW ? launchWithEpilogue<false, true>(a, stream)
                      : launchWithEpilogue<false, false>(a, stream);
}

} // namespace hector::templates
