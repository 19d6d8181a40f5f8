// The dense-rows kernel (DenseRowsMma.h says which calls it takes).
//
// Shape. A block stages its window of 64 output columns of its slice's W
// once, rounded to TF32 (and, for products exact to fp32, what rounding
// left), as the tiled kernel does (MmaFragments.cuh stageWeight); in TF32
// calls of two or three windows it stages all of them and multiplies each
// tile it reads by each in turn, so that X is read once. Its warps then
// work alone: warp w of a slice's W warps takes the slice's 16-row tiles
// w, w + W, w + 2W, ..., copies each tile's rows into a ring of
// kDenseStages buffers of its own with cp.async, and keeps kDenseStages - 1
// tiles in flight while it multiplies one. A warp waits only for its own
// copies (cp.async groups, then __syncwarp so that every lane sees the
// others'), never for the block: the tiled kernel's per-tile barriers, row
// lookups and slice walks are what dense rows do not need. The epilogue
// adds the bias (loaded once a lane, or at each window's turn when the
// block has several) and stores quads (quadOfPairs) straight from the
// accumulators.
//
// Slices. With segmentPtr (rows sorted by slice, as a graph's nodes are by
// type), each slice gets blocks of its own (in every window, when windows
// have blocks of their own), in proportion to its tiles and at least one
// (denseBlockSlice), so that a block stages one slice's weight and its
// tiles never straddle two slices: a slice's tiles start at its first row.
#include "templates/gemm/DenseRowsMma.h"

#include "templates/DeviceQueries.h"
#include "templates/gemm/MmaFragments.cuh"
#include "templates/gemm/SegmentGemmMma.h"
#include "templates/gemm/SegmentGemmRows.cuh"
#include "templates/traversal/HostSwitches.h"

#include <cuda_pipeline.h>

#include <algorithm>
#include <cstdint>

namespace hector::templates {
namespace {

using mma_fragments::kWindowCols;
using mma_fragments::LaneQuad;
using mma_fragments::loadFragments;
using mma_fragments::mmaTilePair;
using mma_fragments::quadOfPairs;
using mma_fragments::Tf32Parts;
using trav::OverridableSwitch;

constexpr int kDenseK = 64;
/// Warps a block, and buffers in each warp's ring. On am's 1.89M rows (K =
/// N = 64, TF32, bias; H100) the biased GEMM took 0.354 ms with 4 x 3
/// (three blocks a multiprocessor), 0.350 with 8 x 3, 0.353 with 8 x 4 and
/// 4 x 4, 0.356 with 8 x 2 and 0.367 with 4 x 2, against the tiled
/// kernel's 0.468 (bench_segment_gemm, session 37 call a): once a
/// multiprocessor keeps about two tiles a warp in flight, the shape hardly
/// matters. 4 x 3 takes 70 KB of shared memory a block (87 KB with the
/// tails' plane of exact products), which every sm_80 and newer GPU grants
/// (sm_86 and sm_89 at most 99 KB; 8 x 3 takes 122).
constexpr int kDenseWarps = 4;
constexpr int kDenseStages = 3;
constexpr int kWarpRows = 16;        ///< a warp's tile: one mma row block
constexpr int kStride = kDenseK + 4; ///< words a staged row (MmaSmem's)
constexpr int kTileWords = kWarpRows * kStride;
constexpr int kWindowTiles = kWindowCols / 8;
/// 16-byte copies a lane makes a tile.
constexpr int kCopiesPerLane = kWarpRows * kDenseK / 4 / 32;
/// The most weight slices a call may have: every slice adds a block to
/// each window, and every block walks the slices' sizes to find its own.
/// Node types are a handful (am 7, mag 4); RGCN's 100-odd relations are
/// summed rows, which this kernel does not take anyway.
constexpr int64_t kDenseMaxSlices = 32;

/// The most windows one block multiplies on each staged tile (TF32 only):
/// three planes and the rings take 104 KB, two blocks a multiprocessor.
constexpr int kDenseBlockWindowsMax = 3;

/// Words of one weight plane: the window's 64 rows of kStride words.
constexpr int kPlaneWords = kWindowCols * kStride;

/// Bytes of shared memory: the weight planes of `windows` windows (TF32
/// heads, and with kSplit their tails), then each warp's ring.
static_assert(kDenseStages >= 2, "a tile in flight while one is multiplied");
constexpr size_t denseSmemBytes(bool split, int windows) {
  return (size_t(split ? 2 : 1) * windows * kPlaneWords +
          size_t(kDenseWarps) * kDenseStages * kTileWords) *
         4;
}

/// The slices a call's rows fall in: segmentPtr's, or one of all M rows.
__device__ __forceinline__ int64_t denseSlices(const SegmentGemmArgs &a) {
  return a.segmentPtr ? a.numSlices : 1;
}
__device__ __forceinline__ int64_t sliceStart(const SegmentGemmArgs &a,
                                              int64_t s) {
  return a.segmentPtr ? a.segmentPtr[s] : s * a.M;
}
/// Warp tiles that `rows` rows take (the launcher sizes the grid by it).
__host__ __device__ __forceinline__ int64_t tilesOf(int64_t rows) {
  return (rows + kWarpRows - 1) / kWarpRows;
}
/// Blocks that give each warp one of `tiles` tiles: more would idle.
__host__ __device__ __forceinline__ int64_t blocksForTiles(int64_t tiles) {
  return (tiles + kDenseWarps - 1) / kDenseWarps;
}

/// A block's share of the rows: slice s, rows [lo, hi), block `index` of
/// the slice's `blocks` in its window.
struct DenseBlock {
  int64_t s = -1, lo = 0, hi = 0, index = 0, blocks = 0;
};

/// Which slice block `b` of a window works on, when each window has
/// `spread` blocks to share out plus one a slice: slice s gets
/// 1 + spread * tiles(s) / tiles(all) of them (none when it has no rows),
/// but no more than give each of its warps a tile. A block past every
/// slice's share gets s = -1. Every thread computes the same (a few dozen
/// reads of segmentPtr, from cache after the first warp's).
__device__ DenseBlock denseBlockSlice(const SegmentGemmArgs &a, int64_t b,
                                      int64_t spread) {
  const int64_t S = denseSlices(a);
  int64_t allTiles = 0;
  for (int64_t s = 0; s < S; ++s)
    allTiles += tilesOf(sliceStart(a, s + 1) - sliceStart(a, s));
  DenseBlock d;
  if (allTiles == 0)
    return d;
  int64_t first = 0; // the slice's first block in the window
  for (int64_t s = 0; s < S; ++s) {
    const int64_t lo = sliceStart(a, s), hi = sliceStart(a, s + 1);
    const int64_t tiles = tilesOf(hi - lo);
    const int64_t blocks =
        tiles == 0 ? 0
                   : min(1 + spread * tiles / allTiles, blocksForTiles(tiles));
    if (b < first + blocks) {
      d.s = s;
      d.lo = lo;
      d.hi = hi;
      d.index = b - first;
      d.blocks = blocks;
      return d;
    }
    first += blocks;
  }
  return d;
}

/// kSplit: products exact to fp32 (three TF32 products a term, as the
/// tiled kernel makes them, SegmentGemmMma.h); else one TF32 product.
/// kMix: a gated mix (SegmentGemmArgs::mixRows; only with a bias, the one
/// use being HGT's output projection), made as the tiled kernel makes it
/// (MmaFragments.cuh mixAddend, mixValue).
/// kAllWindows: the block multiplies every window of the call, one after
/// another on each staged tile, so that each X row is read once, not once
/// a window (TF32, no mix, at most kDenseBlockWindowsMax windows); else
/// the launch's blocks take one window each.
template <bool kSplit, bool kTransW, bool kBias, bool kMix, bool kAllWindows>
__global__ void __launch_bounds__(32 * kDenseWarps)
    denseRowsMmaKernel(const SegmentGemmArgs a, int windows, int64_t spread) {
  static_assert(!kAllWindows || (!kSplit && !kMix),
                "all windows a block: TF32 products and no mix");
  const int gridWindows = kAllWindows ? 1 : windows;
  const int blockWindows = kAllWindows ? windows : 1;
  const DenseBlock mine =
      denseBlockSlice(a, int64_t(blockIdx.x / gridWindows), spread);
  if (mine.s < 0)
    return; // the whole block: the launch's spare blocks
  extern __shared__ float4 denseSmem[];
  uint32_t *const wHead = reinterpret_cast<uint32_t *>(denseSmem);
  uint32_t *const wTail = wHead + (kSplit ? kPlaneWords : 0);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float *const ring =
      reinterpret_cast<float *>(wHead +
                                (kSplit ? 2 : 1) * blockWindows * kPlaneWords) +
      warp * kDenseStages * kTileWords;
  // The block's first (kAllWindows: only) window's first column.
  const int c0 = int(blockIdx.x % gridWindows) * kWindowCols;
  const int64_t warps = mine.blocks * kDenseWarps;
  const int64_t firstTile = mine.index * kDenseWarps + warp;
  const int64_t rowEnd = mine.hi;
  const int64_t tiles = tilesOf(mine.hi - mine.lo);
  // Output rows' strides: Y's, or those of the output part a window lies
  // in (linearMmaFits: parts are whole windows wide).
  const int64_t yStride = a.yParts > 1 ? a.N / a.yParts : a.N;

  // Starts copying tile `tile`'s rows into buffer b of the ring; rows past
  // the slice's end are zeroed (their outputs are not stored, but the
  // products read them). One commit group a call, also past the last
  // tile, so that the waits below count groups the same way on every warp.
  auto copyTile = [&](int64_t tile, int b) {
    if (tile < tiles) {
      float *const to = ring + b * kTileWords;
      const int64_t row0 = mine.lo + tile * kWarpRows;
#pragma unroll
      for (int u = 0; u < kCopiesPerLane; ++u) {
        // Two rows a warp instruction: 512 contiguous bytes of X.
        const int c = lane + 32 * u, r = c / 16, word = 4 * (c % 16);
        if (row0 + r < rowEnd)
          __pipeline_memcpy_async(to + r * kStride + word,
                                  a.X + (row0 + r) * kDenseK + word, 16);
        else
          *reinterpret_cast<float4 *>(to + r * kStride + word) =
              make_float4(0.f, 0.f, 0.f, 0.f);
      }
    }
    __pipeline_commit();
  };
  // The first tiles' copies go out before the weight is staged, so that
  // their trip to DRAM passes meanwhile.
  for (int b = 0; b < kDenseStages - 1; ++b)
    copyTile(firstTile + b * warps, b);
  for (int w = 0; w < blockWindows; ++w)
    mma_fragments::stageWeight<kSplit, kTransW, 32 * kDenseWarps>(
        a, mine.s, 0, c0 + w * kWindowCols, wHead + w * kPlaneWords, wTail,
        kStride);
  const int g = lane / 4, t = lane % 4;
  // This lane's bias pair of mma tile j of the window at column c.
  auto loadBiasPair = [&](int c, int j) {
    return kBias ? __ldg(reinterpret_cast<const float2 *>(
                       a.bias + (a.biasPerSlice ? mine.s * a.N : 0) + c +
                       8 * j + 2 * t))
                 : make_float2(0.f, 0.f);
  };
  // One window a block: its bias pairs, loaded once. All windows: loaded
  // at each window's turn (from L1).
  float2 biasPair[kAllWindows ? 1 : kWindowTiles];
  if constexpr (!kAllWindows) {
#pragma unroll
    for (int j = 0; j < kWindowTiles; ++j)
      biasPair[j] = loadBiasPair(c0, j);
  }
  // A gated mix's gate is one a slice, so one a block.
  const float gate = kMix ? mixGateAt(a, mine.s) : 1.f;
  __syncthreads(); // the weight planes

  // The rows whose addresses this lane gives ldmatrix (SegmentGemmMma.cu's
  // xLaneWord and wLaneWord for a warp's own 16 rows).
  const int q = lane / 8, r = lane % 8;
  const int xLaneWord = (r + 8 * (q & 1)) * kStride + 4 * (q >> 1);
  const int wLaneWord = (8 * (q >> 1) + r) * kStride + 4 * (q & 1);
  int b = 0;
  for (int64_t tile = firstTile; tile < tiles; tile += warps) {
    // The buffer the tile kDenseStages - 1 on goes to is the one multiplied
    // in the step before; the __syncwarp closing that step let every lane
    // finish reading it.
    copyTile(tile + (kDenseStages - 1) * warps,
             (b + kDenseStages - 1) % kDenseStages);
    // A gated mix's values at this lane's two rows and columns, loaded
    // before the tile's copies are waited for and its products made, so
    // that their trip to DRAM passes meanwhile (as the tiled kernel loads
    // them, docs/perf-notes.md section 84).
    float2 mixPair[kMix ? 2 : 1][kMix ? kWindowTiles : 1];
    if constexpr (kMix) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int64_t row = mine.lo + tile * kWarpRows + g + 8 * half;
        const float *const m = a.mixRows + row * a.N + c0 + 2 * t;
#pragma unroll
        for (int j = 0; j < kWindowTiles; ++j)
          mixPair[half][j] =
              row < rowEnd ? __ldg(reinterpret_cast<const float2 *>(m + 8 * j))
                           : make_float2(0.f, 0.f);
      }
    }
    __pipeline_wait_prior(kDenseStages - 1); // this tile's copies (this lane's)
    __syncwarp();                            // and every other lane's
    const float *const x = ring + b * kTileWords;
#pragma unroll 1
    for (int w = 0; w < blockWindows; ++w) {
      const int cw = c0 + w * kWindowCols;
      const uint32_t *const head = wHead + w * kPlaneWords;
      float2 bias[kWindowTiles];
#pragma unroll
      for (int j = 0; j < kWindowTiles; ++j) {
        if constexpr (kAllWindows)
          bias[j] = loadBiasPair(cw, j);
        else
          bias[j] = biasPair[j];
      }
      float acc[kWindowTiles][4] = {};
#pragma unroll
      for (int k0 = 0; k0 < kDenseK; k0 += 8) {
        uint32_t xw[4];
        loadFragments(xw, x + xLaneWord + k0);
        // The input op on the fragment: each X element of the window is in
        // one lane's fragment once, so it is applied once a window.
        if (a.inputOp != InputOp::None) {
#pragma unroll
          for (int i = 0; i < 4; ++i)
            xw[i] = __float_as_uint(
                applyInputOp(a.inputOp, __uint_as_float(xw[i])));
        }
        const float xv[4] = {__uint_as_float(xw[0]), __uint_as_float(xw[1]),
                             __uint_as_float(xw[2]), __uint_as_float(xw[3])};
        const Tf32Parts<kSplit, 4> af(xv);
#pragma unroll
        for (int j = 0; j < kWindowTiles; j += 2)
          mmaTilePair<kSplit>(acc[j], acc[j + 1], af, head, wTail,
                              wLaneWord + 8 * j * kStride + k0, true);
      }
      // The epilogue: rows g and g + 8 of the tile, columns 2t, 2t + 1 of
      // each mma tile, two tiles a quad.
      float *const yWindow = outputAt(a, 0, 0, cw);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int64_t row = mine.lo + tile * kWarpRows + g + 8 * half;
        float *const y = yWindow + row * yStride + 2 * t;
        // Tile j's finished pair of this lane's columns (a mix's as the
        // tiled kernel makes it, mixAddend and mixValue).
        auto finished = [&](int j) {
          const float a0 = acc[j][2 * half], a1 = acc[j][2 * half + 1];
          if constexpr (kMix)
            return mma_fragments::mixValue(
                a0, a1,
                mma_fragments::mixAddend(bias[j], mixPair[half][j], gate),
                gate);
          return make_float2(a0 + bias[j].x, a1 + bias[j].y);
        };
#pragma unroll
        for (int j = 0; j < kWindowTiles; j += 2) {
          const float2 v0 = finished(j), v1 = finished(j + 1);
          const LaneQuad quad = quadOfPairs(v0, v1, t);
          // __stwb, not a float4 assignment: nvcc split the assignment
          // into four 4-byte stores, 69% of their L2 sectors excessive
          // (perf-notes section 93); __stwb is one 16-byte
          // st.global.wb.v4 (templates_dense_rows_stores_are_vectors).
          if (row < rowEnd)
            __stwb(reinterpret_cast<float4 *>(y + 8 * j + quad.offset),
                   quad.value);
        }
      }
    }
    __syncwarp(); // the buffer's reads, before the next step copies into it
    b = (b + 1) % kDenseStages;
  }
}

/// HECTOR_GEMM_DENSE=0 turns the kernel off (read once);
/// setDenseRowsForTesting overrides it.
OverridableSwitch denseSwitch{"HECTOR_GEMM_DENSE", "0"};

/// HECTOR_GEMM_DENSE_WINDOWS=1 gives every window of a call blocks of its
/// own again (read once: it is there to compare the two on one build;
/// setDenseWindowsTogetherForTesting overrides it).
OverridableSwitch windowsTogetherSwitch{"HECTOR_GEMM_DENSE_WINDOWS", "1"};

/// Whether one block may multiply all `windows` windows of a TF32 call:
/// two or three of them, the device grants the block their planes (104 KB
/// for three: sm_80 and sm_90 do, sm_86 and sm_89 do not), and the switch
/// above is on.
bool allWindowsInABlock(int windows) {
  if (!windowsTogetherSwitch.on() || windows < 2 ||
      windows > kDenseBlockWindowsMax)
    return false;
  int optIn = 0;
  return deviceAttribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, &optIn) ==
             cudaSuccess &&
         size_t(optIn) >= denseSmemBytes(false, windows);
}

template <bool kSplit, bool kTransW, bool kBias, bool kMix = false,
          bool kAllWindows = false>
cudaError_t launchAs(const SegmentGemmArgs &a, cudaStream_t stream) {
  const int windows = int(a.N / kWindowCols);
  const int gridWindows = kAllWindows ? 1 : windows;
  const size_t smem = denseSmemBytes(kSplit, kAllWindows ? windows : 1);
  const auto kernel =
      denseRowsMmaKernel<kSplit, kTransW, kBias, kMix, kAllWindows>;
  const void *symbol = reinterpret_cast<const void *>(kernel);
  HECTOR_CUDA_TRY(allowDynamicShared(symbol, smem));
  int sms = 0, perSm = 0;
  HECTOR_CUDA_TRY(deviceAttribute(cudaDevAttrMultiProcessorCount, &sms));
  HECTOR_CUDA_TRY(
      blocksPerMultiprocessor(symbol, 32 * kDenseWarps, smem, &perSm));
  const int64_t slices = a.segmentPtr ? a.numSlices : 1;
  // One resident wave, its blocks shared by the windows that have blocks
  // of their own (adjacent blocks take one run of a slice's rows in each
  // window, so the X rows the first reads are in L2 for the others) and,
  // in each window, by the slices: one block a slice plus `spread` shared
  // out by their sizes (denseBlockSlice). The kernel leaves a slice no
  // more blocks than give each warp a tile; the blocks left over return at
  // once.
  const int64_t resident = int64_t(sms) * (perSm < 1 ? 1 : perSm) / gridWindows;
  const int64_t tiles = tilesOf(a.M);
  const int64_t spread =
      std::max<int64_t>(0, std::min(resident - slices, blocksForTiles(tiles)));
  kernel<<<unsigned((spread + slices) * gridWindows), 32 * kDenseWarps, smem,
           stream>>>(a, windows, spread);
  return cudaGetLastError();
}

template <bool kSplit>
cudaError_t launchWithWeight(const SegmentGemmArgs &a, cudaStream_t stream) {
  if (a.mixRows) // with a bias (denseRowsMmaFits)
    return a.transposeW ? launchAs<kSplit, true, true, true>(a, stream)
                        : launchAs<kSplit, false, true, true>(a, stream);
  // TF32 calls of two or three windows: one block multiplies them all on
  // each tile it reads (HGT's kqv projection, 192 columns).
  if constexpr (!kSplit) {
    if (allWindowsInABlock(int(a.N / kWindowCols))) {
      if (a.transposeW)
        return a.bias ? launchAs<false, true, true, false, true>(a, stream)
                      : launchAs<false, true, false, false, true>(a, stream);
      return a.bias ? launchAs<false, false, true, false, true>(a, stream)
                    : launchAs<false, false, false, false, true>(a, stream);
    }
  }
  if (a.transposeW)
    return a.bias ? launchAs<kSplit, true, true>(a, stream)
                  : launchAs<kSplit, true, false>(a, stream);
  return a.bias ? launchAs<kSplit, false, true>(a, stream)
                : launchAs<kSplit, false, false>(a, stream);
}

} // namespace

bool denseRowsMmaFits(const SegmentGemmArgs &a) {
  if (!denseSwitch.on() || a.K != kDenseK || a.H != 1 || a.N % kWindowCols != 0)
    return false;
  if (a.rowIds || a.gather || a.scatter || a.sumPtr || a.sumWeights)
    return false;
  // Slices only as segments of consecutive rows, and a handful of them.
  if (a.rowType || (a.numSlices > 1 && !a.segmentPtr) ||
      a.numSlices > kDenseMaxSlices)
    return false;
  if (a.accumulate || a.atomic || a.epilogue != EpilogueOp::None || a.rowDotY)
    return false;
  // A gated mix is instantiated with a bias only (HGT's output projection).
  if (a.mixRows && !a.bias)
    return false;
  return linearMmaFits(a);
}

cudaError_t launchDenseRowsMma(const SegmentGemmArgs &a, cudaStream_t stream) {
  return a.tf32 ? launchWithWeight<false>(a, stream)
                : launchWithWeight<true>(a, stream);
}

bool setDenseRowsForTesting(bool enabled) { return denseSwitch.set(enabled); }

bool setDenseWindowsTogetherForTesting(bool enabled) {
  return windowsTogetherSwitch.set(enabled);
}

} // namespace hector::templates
