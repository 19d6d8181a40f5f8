// The segment-MM GEMM template against a naive reference loop, over a table
// of cases covering every SegmentGemmArgs field, in float (reference in
// double, tolerance 1e-5) and in double (SegmentGemmArgsT<double>, reference
// in long double, tolerance 1e-12). CPU always; CUDA when built with it and
// a GPU is present (skipped otherwise).
#include "templates/gemm/SegmentGemm.h"
#ifdef HECTOR_TEMPLATES_CUDA
#include "templates/gemm/DenseRowsMma.h"
#include "templates/gemm/SegmentGemmCuda.h"
#include <cuda_runtime.h>
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hector::templates {
namespace {

using Mode = SegmentGemmArgs::Mode;

// Existing float callers spell the float call as before, and one Mode serves
// both scalar types.
static_assert(std::is_same_v<SegmentGemmArgs, SegmentGemmArgsT<float>>);
static_assert(std::is_same_v<SegmentGemmArgsT<double>::Mode, Mode>);
static_assert(std::is_same_v<SegmentGemmArgsT<double>::Scalar, double>);

/// Per scalar type: the type of the reference sums and the largest error
/// allowed, relative to the largest magnitude of the expected output.
template <typename T> struct Precision;
template <> struct Precision<float> {
  using Ref = double;
  static constexpr double tolerance = 1e-5;
};
template <> struct Precision<double> {
  using Ref = long double;
  static constexpr double tolerance = 1e-12;
};

enum class Seg { None, Ptr, RowType };
/// CollideSortedInSegments: as Collide, then sorted within each segment
/// (Seg::Ptr, no rowIds), as the graph's summed-row chunks are; the args
/// say so (SegmentGemmArgs::scatterSortedInSegments).
enum class Scatter { None, Permute, Collide, CollideSortedInSegments };
/// SegmentGemmArgs::bias: none, one row for all, or one per slice.
enum class Bias { None, Shared, PerSlice };
/// How a case fills SegmentGemmArgs::rowIds.
enum class RowIds {
  None,
  /// M distinct ids out of [0, M+7), in random order.
  Shuffled,
  /// M ids out of [0, M/2+3) with repeats (outputs collide: the linear
  /// cases that use it accumulate atomically).
  Repeated,
  /// A permutation of [0, M) sorted by a random type per id: the edge list
  /// in etype order. With Seg::Ptr the segments are the type counts (the
  /// etype_ptr); with Seg::RowType, rowType[id] is that type.
  SortedByType,
};

/// How a case fills SegmentGemmArgs::sumWeightIds (with sumWeights).
enum class WeightIds {
  None,
  /// A permutation of the entries: every weight row read once.
  Permute,
  /// Ids out of [0, entries/2 + 3) with repeats: rows read twice or never.
  Repeated,
};

/// One row of the test table.
struct Case {
  std::string name;
  Mode mode = Mode::Linear;
  int64_t M, K, N, H = 1, S = 1;
  Seg seg = Seg::None;
  bool gather = false;
  Scatter scatter = Scatter::None;
  bool accumulate = false;
  bool transposeW = false;
  EpilogueOp epilogue = EpilogueOp::None;
  bool scalePerHead = false;
  bool scaleGather = false;
  bool gatherB = false;
  bool emptySegments = false; ///< Ptr: some segments get no rows
  /// Ptr: segment 1 holds about 90% of the rows, the others a few each
  /// (relation sizes follow a power law).
  bool skewedSegments = false;
  RowIds rowIds = RowIds::None;
  bool deterministic = false; ///< SegmentGemmArgs::deterministic
  /// SegmentGemmArgs::tf32: products may round their factors to TF32
  /// (the tensor-core kernel's one-product mode); checked to tf32Tolerance.
  bool tf32 = false;
  Bias bias = Bias::None;
  /// SegmentGemmArgs::yParts: the output cut by columns into this many
  /// buffers (H = 1), laid end to end in the test's output array.
  int yParts = 1;
  /// SegmentGemmArgs::rowDotN: each finished output row times a random
  /// [H*N, rowDotN] weight, written after the output rows in the test's
  /// output array (0: no row dot).
  int64_t rowDotN = 0;
  /// SegmentGemmArgs::sumPtr: each id's input is the sum of 0 to this many
  /// random X rows (some ids sum none; 0: one X row per id, as before).
  int64_t summedRows = 0;
  /// With summedRows: id 3 sums 1000 rows (a hub's segment: the tensor-
  /// core kernel spreads a tile's entries over its 16-lane groups, so this
  /// row spans every group's run).
  bool longSum = false;
  /// With summedRows: each entry's X row is added times a random weight
  /// per head (SegmentGemmArgs::sumWeights), as attention scores weigh an
  /// attention layer's aggregation.
  bool sumWeights = false;
  /// With sumWeights: entry j's weights at row sumWeightIds[j] of them.
  WeightIds weightIds = WeightIds::None;
  /// SegmentGemmArgs::xSharedByHeads: X rows of K scalars for all heads.
  bool xSharedByHeads = false;
  /// SegmentGemmArgs::wHeadsInColumns: W slices [K, H*N], head h's weight
  /// their columns [h*N, h*N + N).
  bool wHeadsInColumns = false;
  /// SegmentGemmArgs::inputOp = InputOp::Gelu: the GEMM of gelu(X).
  bool geluInput = false;
  /// SegmentGemmArgs::mixRows and mixGate: each output row a gated mix
  /// g (x W + b) + (1 - g) m of its value and a row m of its own, with
  /// g = sigmoid(gate[slice]) (HGT's gated skip).
  bool gatedMix = false;
  /// SegmentGemmArgs::gatherOrderRowIds, gatherOrderGather and
  /// gatherOrderRowType (Seg::Ptr with a gather, no rowIds or scatter): the
  /// rows again, sorted by the X row they gather (stable), with each one's
  /// X row and segment in that order, as RGAT's pair and chunk scores name
  /// them.
  bool gatherOrder = false;
};

/// The largest error a tf32 case may have, relative to the output's
/// largest magnitude: each product of factors rounded to 10 mantissa bits
/// is off by up to 2^-10 of its size, and these cases' sums add such
/// errors with random signs, so they grow as the square root of the terms,
/// as the sums themselves do.
constexpr double kTf32Tolerance = 4e-3;

/// gtest prints a case by its name (not as bytes).
void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

std::vector<Case> cases() {
  std::vector<Case> t;
  auto add = [&](Case c) { t.push_back(std::move(c)); };
  add({"plain", Mode::Linear, 37, 5, 7});
  add({"wide", Mode::Linear, 130, 64, 64});
  add({"emptyM", Mode::Linear, 0, 8, 8});
  add({"emptyK", Mode::Linear, 9, 0, 5});
  add({"gather", Mode::Linear, 37, 5, 7, 1, 1, Seg::None, true});
  {
    Case c{"scatterPermute", Mode::Linear, 37, 5, 7};
    c.scatter = Scatter::Permute;
    add(c);
  }
  {
    Case c{"scatterCollideAtomic", Mode::Linear, 300, 9, 70};
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    add(c);
  }
  // Deterministic twins of the atomic cases (SegmentGemmArgs::
  // deterministic): the same sums, added in row order without atomics;
  // DeterministicIsBitwiseRepeatable runs them again.
  {
    Case c{"scatterCollideDeterministic", Mode::Linear, 300, 9, 70, 2, 3,
           Seg::Ptr};
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.epilogue = EpilogueOp::Div;
    c.scaleGather = true;
    c.deterministic = true;
    add(c);
  }
  {
    Case c{"vecRepeatedIdsDeterministic", Mode::Linear, 2000, 64, 64, 1, 4,
           Seg::RowType};
    c.rowIds = RowIds::Repeated;
    c.accumulate = true;
    c.transposeW = true;
    c.deterministic = true;
    add(c);
  }
  {
    Case c{"vecOuterDeterministic", Mode::Outer, 20000, 64, 64, 1, 3,
           Seg::Ptr};
    c.rowIds = RowIds::SortedByType;
    c.accumulate = true;
    c.gather = true;
    c.gatherB = true;
    c.deterministic = true;
    add(c);
  }
  {
    Case c{"outerHeadsDeterministic", Mode::Outer, 5000, 20, 36, 2, 3,
           Seg::RowType};
    c.rowIds = RowIds::Shuffled;
    c.accumulate = true;
    c.transposeW = true;
    c.deterministic = true;
    add(c);
  }
  {
    Case c{"accumulate", Mode::Linear, 37, 5, 7};
    c.accumulate = true;
    add(c);
  }
  {
    Case c{"transposed", Mode::Linear, 100, 33, 65};
    c.transposeW = true;
    add(c);
  }
  {
    Case c{"heads2", Mode::Linear, 37, 5, 7, 2};
    c.transposeW = true;
    c.gather = true;
    add(c);
  }
  {
    Case c{"epilogueMulRow", Mode::Linear, 37, 5, 7};
    c.epilogue = EpilogueOp::Mul;
    add(c);
  }
  {
    Case c{"epilogueDivRowGathered", Mode::Linear, 37, 5, 7};
    c.epilogue = EpilogueOp::Div;
    c.scaleGather = true;
    add(c);
  }
  {
    Case c{"epilogueMulHead", Mode::Linear, 37, 5, 7, 2};
    c.epilogue = EpilogueOp::Mul;
    c.scalePerHead = true;
    add(c);
  }
  {
    Case c{"epilogueDivHeadScatter", Mode::Linear, 50, 6, 66, 2};
    c.epilogue = EpilogueOp::Div;
    c.scalePerHead = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    add(c);
  }
  add({"segmentPtr", Mode::Linear, 200, 17, 19, 1, 4, Seg::Ptr});
  {
    Case c{"segmentPtrEmpty", Mode::Linear, 150, 16, 64, 2, 7, Seg::Ptr};
    c.emptySegments = true;
    c.gather = true;
    c.scatter = Scatter::Permute;
    add(c);
  }
  add({"rowType", Mode::Linear, 200, 17, 19, 1, 5, Seg::RowType, true});
  {
    Case c{"rowTypeAllFields", Mode::Linear, 181, 12, 50, 2, 3, Seg::RowType};
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.transposeW = true;
    c.epilogue = EpilogueOp::Mul;
    c.scalePerHead = true;
    add(c);
  }
  add({"outerPlain", Mode::Outer, 37, 5, 7});
  {
    Case c{"outerSegPtrEmpty", Mode::Outer, 300, 33, 40, 2, 6, Seg::Ptr};
    c.emptySegments = true;
    c.gather = true;
    c.gatherB = true;
    add(c);
  }
  {
    Case c{"outerRowTypeTransposed", Mode::Outer, 120, 9, 11, 1, 4,
           Seg::RowType};
    c.transposeW = true;
    c.gatherB = true;
    add(c);
  }
  {
    Case c{"outerAccumulateAtomic", Mode::Outer, 5000, 16, 16, 1, 2,
           Seg::Ptr};
    c.accumulate = true;
    c.gather = true;
    add(c);
  }
  add({"outerEmptyM", Mode::Outer, 0, 4, 4, 1, 3, Seg::Ptr});
  // Shapes that take the vectorized (float4) paths: K, N multiples of 4,
  // at most 64, with several row tiles and segment boundaries inside tiles.
  {
    Case c{"vecLinearSegPtr", Mode::Linear, 1000, 64, 64, 1, 5, Seg::Ptr};
    c.emptySegments = true;
    add(c);
  }
  {
    Case c{"vecLinearRowTypeAll", Mode::Linear, 777, 64, 60, 2, 3,
           Seg::RowType};
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.transposeW = true;
    c.epilogue = EpilogueOp::Div;
    c.scalePerHead = true;
    c.scaleGather = true;
    add(c);
  }
  {
    Case c{"vecLinearNarrowAccumulate", Mode::Linear, 531, 20, 28, 1, 1};
    c.accumulate = true;
    c.scatter = Scatter::Permute;
    c.epilogue = EpilogueOp::Mul;
    add(c);
  }
  {
    Case c{"vecOuterAtomic", Mode::Outer, 20000, 64, 64, 1, 3, Seg::Ptr};
    c.accumulate = true;
    c.gather = true;
    c.gatherB = true;
    add(c);
  }
  {
    Case c{"vecOuterPlain", Mode::Outer, 3000, 64, 64};
    add(c);
  }
  {
    Case c{"vecOuterRowTypeTransposed", Mode::Outer, 1500, 36, 52, 2, 4,
           Seg::RowType};
    c.transposeW = true;
    c.gather = true;
    add(c);
  }
  {
    Case c{"vecOuterSegPtrEmptyAccumulate", Mode::Outer, 900, 32, 64, 1, 6,
           Seg::Ptr};
    c.emptySegments = true;
    c.accumulate = true;
    add(c);
  }
  // Atomic outer sums split all rows into equal chunks, whatever the
  // slices' sizes: chunks that cross several boundaries (skewed, empty
  // segments), one slice taking most chunks, the narrow N = 1 shape of an
  // attention vector's gradient, heads, and rows of one shared slice.
  {
    Case c{"vecOuterSkewedAtomic", Mode::Outer, 40000, 64, 64, 1, 40,
           Seg::Ptr};
    c.skewedSegments = true;
    c.emptySegments = true;
    c.accumulate = true;
    c.gather = true;
    add(c);
  }
  {
    Case c{"outerSkewedNarrowAtomic", Mode::Outer, 40000, 64, 1, 1, 30,
           Seg::Ptr};
    c.skewedSegments = true;
    c.accumulate = true;
    c.gather = true;
    c.rowIds = RowIds::Shuffled;
    add(c);
  }
  {
    Case c{"outerSkewedHeadsAtomic", Mode::Outer, 20000, 20, 36, 2, 9,
           Seg::Ptr};
    c.skewedSegments = true;
    c.emptySegments = true;
    c.accumulate = true;
    c.transposeW = true;
    c.gatherB = true;
    add(c);
  }
  {
    Case c{"vecOuterSkewedHeadsTransposed", Mode::Outer, 30000, 32, 16, 2, 7,
           Seg::Ptr};
    c.skewedSegments = true;
    c.accumulate = true;
    c.transposeW = true;
    add(c);
  }
  {
    Case c{"outerSharedSliceAtomic", Mode::Outer, 9000, 9, 11, 1, 3};
    c.accumulate = true;
    c.gather = true;
    add(c);
  }
  {
    Case c{"vecOuterSharedSliceAtomic", Mode::Outer, 9000, 64, 64, 1, 2};
    c.accumulate = true;
    add(c);
  }
  // The narrow linear paths (float): N < 4 with K <= 128 (a warp-wide dot
  // product per output) and K < 4 with N <= 128 (lanes over columns),
  // with every row scheme, the epilogue, heads and colliding scatters.
  {
    Case c{"narrowDotSegPtrAll", Mode::Linear, 3000, 64, 1, 2, 9, Seg::Ptr};
    c.skewedSegments = true;
    c.emptySegments = true;
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.epilogue = EpilogueOp::Div;
    c.scaleGather = true;
    c.scalePerHead = true;
    add(c);
  }
  {
    Case c{"narrowDotRowTypeTransposed", Mode::Linear, 777, 100, 3, 1, 4,
           Seg::RowType};
    c.transposeW = true;
    c.rowIds = RowIds::Shuffled;
    c.epilogue = EpilogueOp::Mul;
    add(c);
  }
  {
    Case c{"narrowDotWide", Mode::Linear, 500, 128, 2};
    c.accumulate = true;
    c.scatter = Scatter::Permute;
    add(c);
  }
  {
    Case c{"narrowColumnsSegPtrTransposed", Mode::Linear, 2000, 1, 64, 1,
           7, Seg::Ptr};
    c.transposeW = true;
    c.rowIds = RowIds::SortedByType;
    c.gather = true;
    add(c);
  }
  {
    Case c{"narrowColumnsAtomicEpilogue", Mode::Linear, 900, 3, 128, 2, 3,
           Seg::RowType};
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.epilogue = EpilogueOp::Mul;
    c.scalePerHead = true;
    add(c);
  }
  add({"narrowColumnsPlain", Mode::Linear, 41, 2, 5});
  // The narrow linear paths take groups of 4 rows per warp, with 1, 2 or
  // 4 values per lane: M not a multiple of 4, so the last group is partial;
  // M large enough that a warp's run is several groups on an H100 or H200
  // (about 50000 rows per group of each warp), with segment boundaries and
  // empty segments inside groups and between them (the slice steps
  // forward group to group); rows of many short segments; fewer rows than
  // one group; heads with the epilogue.
  {
    Case c{"narrowDotSegPtrRunsTail", Mode::Linear, 100003, 40, 2, 2, 700,
           Seg::Ptr};
    c.emptySegments = true;
    c.gather = true;
    c.scatter = Scatter::Permute;
    c.accumulate = true;
    c.transposeW = true;
    c.epilogue = EpilogueOp::Div;
    c.scalePerHead = true;
    c.scaleGather = true;
    add(c);
  }
  {
    Case c{"narrowColumnsSortedRunsTail", Mode::Linear, 100002, 3, 33, 3,
           500, Seg::Ptr};
    c.rowIds = RowIds::SortedByType;
    c.emptySegments = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.epilogue = EpilogueOp::Mul;
    c.scaleGather = true;
    add(c);
  }
  {
    Case c{"narrowDotRowTypeRunsTail", Mode::Linear, 60001, 128, 1, 1, 5,
           Seg::RowType};
    c.rowIds = RowIds::Shuffled;
    c.epilogue = EpilogueOp::Div;
    add(c);
  }
  {
    Case c{"narrowDotShortSegments", Mode::Linear, 103, 20, 3, 3, 60,
           Seg::Ptr};
    c.emptySegments = true;
    c.gather = true;
    c.epilogue = EpilogueOp::Mul;
    c.scalePerHead = true;
    add(c);
  }
  {
    Case c{"narrowColumnsUnderOneGroup", Mode::Linear, 3, 1, 128, 1, 5,
           Seg::Ptr};
    c.emptySegments = true;
    c.transposeW = true;
    c.accumulate = true;
    add(c);
  }
  // One scalar per row from K <= 64, K % 4 == 0 (float, aligned): 8 lanes
  // a row (linearDotKernel). Every row scheme; K of one 16-byte word, of
  // two words short of 64, of exactly 64; runs of several steps with a
  // partial last one; heads with the epilogue; fewer rows than one step.
  {
    Case c{"dotRowTypeShuffled", Mode::Linear, 60001, 64, 1, 1, 5,
           Seg::RowType};
    c.rowIds = RowIds::Shuffled;
    c.epilogue = EpilogueOp::Mul;
    add(c);
  }
  {
    Case c{"dotSegPtrRunsTail", Mode::Linear, 100003, 60, 1, 3, 700,
           Seg::Ptr};
    c.emptySegments = true;
    c.gather = true;
    c.scatter = Scatter::Permute;
    c.accumulate = true;
    c.transposeW = true;
    c.epilogue = EpilogueOp::Div;
    c.scalePerHead = true;
    c.scaleGather = true;
    add(c);
  }
  {
    Case c{"dotSortedRowIdsCollide", Mode::Linear, 20000, 32, 1, 2, 40,
           Seg::Ptr};
    c.rowIds = RowIds::SortedByType;
    c.skewedSegments = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    add(c);
  }
  add({"dotOneWordFewRows", Mode::Linear, 5, 4, 1});
  // The dot calls the lean kernel takes (linearDot64Kernel: K = 64, one
  // head, no row ids, epilogue or accumulation): segments with a gather, a
  // permuted scatter, empty segments and a partial last step; rowType
  // without a gather; one slice and fewer rows than a step.
  {
    Case c{"dot64SegPtrGatherScatter",
           Mode::Linear,
           100003,
           64,
           1,
           1,
           700,
           Seg::Ptr};
    c.emptySegments = true;
    c.gather = true;
    c.scatter = Scatter::Permute;
    add(c);
  }
  {
    Case c{"dot64RowType", Mode::Linear, 30001, 64, 1, 1, 5, Seg::RowType};
    add(c);
  }
  add({"dot64OneSliceFewRows", Mode::Linear, 7, 64, 1});
  // Rows also named by the X row they gather (gatherOrderRowIds): the dot
  // kernel visits them so, as RGAT's pair scores; X rows that several
  // segments share (fewer X rows than rows), empty segments and a per-head
  // epilogue (read at the row's id). Other kernels ignore the order: a
  // wide call keeps its own.
  {
    Case c{"dotGatherOrderShared", Mode::Linear, 50003, 64, 1, 1, 37, Seg::Ptr};
    c.gather = true;
    c.gatherOrder = true;
    add(c);
  }
  {
    Case c{"dotGatherOrderHeads", Mode::Linear, 9001, 32, 1, 2, 9, Seg::Ptr};
    c.gather = true;
    c.gatherOrder = true;
    c.emptySegments = true;
    c.epilogue = EpilogueOp::Mul;
    c.scalePerHead = true;
    add(c);
  }
  {
    Case c{
        "wideGatherOrderIgnored", Mode::Linear, 3001, 64, 64, 1, 7, Seg::Ptr};
    c.gather = true;
    c.gatherOrder = true;
    add(c);
  }
  // The other one-scalar shape, K == 1 with N <= 64, N % 4 == 0 (float,
  // aligned Y and W: linearScaleKernel): atomic and plain accumulation,
  // permuted and colliding scatters, heads with the epilogue, N of one
  // 16-byte word and of two words short of 64, fewer rows than one step.
  {
    Case c{"scaleSegPtrRunsTailAtomic", Mode::Linear, 100003, 1, 60, 2, 700,
           Seg::Ptr};
    c.emptySegments = true;
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.epilogue = EpilogueOp::Mul;
    c.scaleGather = true;
    c.scalePerHead = true;
    add(c);
  }
  {
    Case c{"scaleRowTypeShuffled", Mode::Linear, 30001, 1, 64, 1, 5,
           Seg::RowType};
    c.rowIds = RowIds::Shuffled;
    c.scatter = Scatter::Permute;
    c.accumulate = true;
    c.transposeW = true;
    c.epilogue = EpilogueOp::Div;
    add(c);
  }
  add({"scaleOneWordFewRows", Mode::Linear, 3, 1, 4});
  // The narrow outer path (float, N < 4, K <= 128): every row scheme and
  // schedule, K over one and over several lane slots, the deterministic
  // twin.
  {
    Case c{"narrowOuterSegPtrAtomic", Mode::Outer, 30000, 100, 3, 1, 12,
           Seg::Ptr};
    c.skewedSegments = true;
    c.emptySegments = true;
    c.accumulate = true;
    c.gather = true;
    c.gatherB = true;
    add(c);
  }
  {
    Case c{"narrowOuterRowTypeTransposed", Mode::Outer, 3000, 37, 2, 2, 4,
           Seg::RowType};
    c.transposeW = true;
    c.rowIds = RowIds::Shuffled;
    add(c);
  }
  {
    Case c{"narrowOuterRowTypeAtomic", Mode::Outer, 20000, 16, 1, 1, 3,
           Seg::RowType};
    c.accumulate = true;
    c.gather = true;
    add(c);
  }
  {
    Case c{"narrowOuterDeterministic", Mode::Outer, 9000, 64, 1, 2, 5,
           Seg::Ptr};
    c.rowIds = RowIds::SortedByType;
    c.accumulate = true;
    c.gather = true;
    c.deterministic = true;
    add(c);
  }
  add({"narrowOuterPlain", Mode::Outer, 300, 128, 3});
  // The outer path for N == 1, K <= 64, K % 4 == 0 (float, aligned X;
  // outerDotKernel): K of one 16-byte word and of two words short of 64,
  // gathers on both sides, heads, chunks across empty segments, rowType
  // slices, the deterministic twin.
  {
    Case c{"dotOuterSegPtrGatherB", Mode::Outer, 50001, 60, 1, 3, 50,
           Seg::Ptr};
    c.emptySegments = true;
    c.skewedSegments = true;
    c.rowIds = RowIds::SortedByType;
    c.accumulate = true;
    c.gather = true;
    c.gatherB = true;
    c.transposeW = true;
    add(c);
  }
  {
    Case c{"dotOuterRowTypeOneWord", Mode::Outer, 7000, 4, 1, 2, 6,
           Seg::RowType};
    c.accumulate = true;
    c.gather = true;
    add(c);
  }
  {
    Case c{"dotOuterDeterministic", Mode::Outer, 9000, 32, 1, 1, 7,
           Seg::Ptr};
    c.emptySegments = true;
    c.accumulate = true;
    c.gather = true;
    c.deterministic = true;
    add(c);
  }
  add({"dotOuterPlain", Mode::Outer, 301, 64, 1});

  add({"narrowOuterEmptyM", Mode::Outer, 0, 64, 1, 1, 3, Seg::Ptr});
  // rowType in outer mode with the rows of a slice split over blocks
  // (atomic), general and vectorized kernels.
  {
    Case c{"outerRowTypeAtomicSplit", Mode::Outer, 9000, 9, 11, 1, 2,
           Seg::RowType};
    c.accumulate = true;
    c.gather = true;
    add(c);
  }
  {
    Case c{"vecOuterRowTypeAtomic", Mode::Outer, 20000, 64, 64, 1, 3,
           Seg::RowType};
    c.accumulate = true;
    c.gatherB = true;
    add(c);
  }
  // Row ids: segments over logical rows, every per-row list (and the
  // identity accesses when a list is absent) indexed by the row id.
  {
    Case c{"rowIdsSegPtrGatherScatterAtomic", Mode::Linear, 300, 9, 70, 1, 5,
           Seg::Ptr};
    c.rowIds = RowIds::SortedByType;
    c.emptySegments = true;
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    add(c);
  }
  {
    Case c{"rowIdsShuffledSegPtrEmpty", Mode::Linear, 150, 17, 19, 1, 7,
           Seg::Ptr};
    c.rowIds = RowIds::Shuffled;
    c.emptySegments = true;
    add(c);
  }
  {
    Case c{"rowIdsEpilogueScaleGather", Mode::Linear, 37, 5, 7};
    c.rowIds = RowIds::Shuffled;
    c.epilogue = EpilogueOp::Div;
    c.scaleGather = true;
    c.scatter = Scatter::Permute;
    add(c);
  }
  {
    Case c{"rowIdsEpilogueIdentityHeads", Mode::Linear, 41, 6, 9, 2};
    c.rowIds = RowIds::Shuffled;
    c.epilogue = EpilogueOp::Mul;
    c.scalePerHead = true;
    c.accumulate = true;
    add(c);
  }
  {
    Case c{"rowIdsHeadsTransposed", Mode::Linear, 100, 33, 65, 2, 3,
           Seg::Ptr};
    c.rowIds = RowIds::Shuffled;
    c.transposeW = true;
    c.gather = true;
    add(c);
  }
  {
    Case c{"rowIdsRowTypeSorted", Mode::Linear, 200, 17, 19, 1, 5,
           Seg::RowType};
    c.rowIds = RowIds::SortedByType;
    c.gather = true;
    c.scatter = Scatter::Permute;
    add(c);
  }
  {
    Case c{"rowIdsRowTypeAllFields", Mode::Linear, 181, 12, 50, 2, 3,
           Seg::RowType};
    c.rowIds = RowIds::Shuffled;
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.transposeW = true;
    c.epilogue = EpilogueOp::Mul;
    c.scalePerHead = true;
    c.scaleGather = true;
    add(c);
  }
  {
    Case c{"rowIdsRepeatedAtomic", Mode::Linear, 120, 7, 11, 1, 2, Seg::Ptr};
    c.rowIds = RowIds::Repeated;
    c.accumulate = true;
    add(c);
  }
  {
    Case c{"rowIdsEmptyM", Mode::Linear, 0, 8, 8, 1, 3, Seg::Ptr};
    c.rowIds = RowIds::Shuffled;
    add(c);
  }
  {
    Case c{"outerRowIdsSegPtrGatherB", Mode::Outer, 300, 33, 40, 2, 6,
           Seg::Ptr};
    c.rowIds = RowIds::SortedByType;
    c.emptySegments = true;
    c.gather = true;
    c.gatherB = true;
    add(c);
  }
  {
    Case c{"outerRowIdsShuffledIdentity", Mode::Outer, 120, 9, 11, 1, 4,
           Seg::Ptr};
    c.rowIds = RowIds::Shuffled;
    c.transposeW = true;
    add(c);
  }
  {
    Case c{"outerRowIdsRowTypeAtomic", Mode::Outer, 5000, 9, 11, 1, 2,
           Seg::RowType};
    c.rowIds = RowIds::Shuffled;
    c.gatherB = true;
    c.accumulate = true;
    add(c);
  }
  {
    Case c{"outerRowIdsRepeated", Mode::Outer, 200, 5, 6, 1, 2, Seg::Ptr};
    c.rowIds = RowIds::Repeated;
    c.gather = true;
    add(c);
  }
  {
    Case c{"outerRowIdsEmptyM", Mode::Outer, 0, 4, 4, 1, 3, Seg::Ptr};
    c.rowIds = RowIds::Shuffled;
    add(c);
  }
  // Row ids on the vectorized paths.
  {
    Case c{"vecRowIdsLinearSegPtr", Mode::Linear, 1000, 64, 64, 1, 5,
           Seg::Ptr};
    c.rowIds = RowIds::SortedByType;
    c.emptySegments = true;
    c.gather = true;
    c.scatter = Scatter::Permute;
    add(c);
  }
  {
    Case c{"vecRowIdsLinearRowTypeAll", Mode::Linear, 777, 64, 60, 2, 3,
           Seg::RowType};
    c.rowIds = RowIds::SortedByType;
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.transposeW = true;
    c.epilogue = EpilogueOp::Div;
    c.scalePerHead = true;
    c.scaleGather = true;
    add(c);
  }
  {
    Case c{"vecRowIdsLinearNarrowIdentity", Mode::Linear, 531, 20, 28};
    c.rowIds = RowIds::Shuffled;
    c.epilogue = EpilogueOp::Mul;
    c.accumulate = true;
    add(c);
  }
  {
    Case c{"vecRowIdsLinearRepeatedAtomic", Mode::Linear, 600, 32, 16, 2, 3,
           Seg::Ptr};
    c.rowIds = RowIds::Repeated;
    c.accumulate = true;
    c.gather = true;
    add(c);
  }
  {
    Case c{"vecRowIdsOuterAtomic", Mode::Outer, 20000, 64, 64, 1, 3,
           Seg::Ptr};
    c.rowIds = RowIds::SortedByType;
    c.accumulate = true;
    c.gather = true;
    c.gatherB = true;
    add(c);
  }
  {
    Case c{"vecRowIdsOuterRowTypeTransposed", Mode::Outer, 1500, 36, 52, 2, 4,
           Seg::RowType};
    c.rowIds = RowIds::Shuffled;
    c.transposeW = true;
    add(c);
  }
  {
    Case c{"vecRowIdsOuterRepeated", Mode::Outer, 900, 32, 64, 1, 6,
           Seg::Ptr};
    c.rowIds = RowIds::Repeated;
    c.emptySegments = true;
    c.accumulate = true;
    add(c);
  }
  // The tensor-core kernel (SegmentGemmMma.h: K, N multiples of 8, K <=
  // 64, N <= 256, aligned rows): every field it reads, column passes
  // beyond 64 outputs, tiles that straddle segments, tiles past M, and
  // the one-product TF32 mode. The default mode must meet the float
  // tolerance, which TF32 products alone would miss by two orders.
  {
    Case c{"mmaWideSegPtrSkewedGather", Mode::Linear, 5003, 64, 192, 1, 7,
           Seg::Ptr};
    c.gather = true;
    c.skewedSegments = true;
    add(c);
  }
  {
    Case c{"mmaRowTypeHeadsTransposedAll", Mode::Linear, 3001, 32, 136, 2, 5,
           Seg::RowType};
    c.transposeW = true;
    c.gather = true;
    c.scatter = Scatter::Permute;
    c.epilogue = EpilogueOp::Mul;
    c.scalePerHead = true;
    c.scaleGather = true;
    add(c);
  }
  {
    Case c{"mmaSortedRowIdsEmptySegmentsDiv", Mode::Linear, 2500, 48, 72, 1,
           9, Seg::Ptr};
    c.rowIds = RowIds::SortedByType;
    c.emptySegments = true;
    c.accumulate = true;
    c.epilogue = EpilogueOp::Div;
    add(c);
  }
  {
    Case c{"mmaCollideAtomic", Mode::Linear, 4000, 16, 40, 1, 3, Seg::Ptr};
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    add(c);
  }
  {
    Case c{"mmaRepeatedIdsAtomicHeads", Mode::Linear, 1500, 24, 256, 2, 4,
           Seg::RowType};
    c.rowIds = RowIds::Repeated;
    c.accumulate = true;
    add(c);
  }
  add({"mmaSmallestUnderOneTile", Mode::Linear, 13, 8, 8});
  {
    Case c{"mmaTf32SegPtr", Mode::Linear, 3000, 64, 64, 1, 5, Seg::Ptr};
    c.gather = true;
    c.tf32 = true;
    add(c);
  }
  {
    Case c{"mmaTf32TransposedWide", Mode::Linear, 1000, 64, 192, 1, 2,
           Seg::RowType};
    c.transposeW = true;
    c.tf32 = true;
    add(c);
  }
  // Dense rows (DenseRowsMma.h: K = 64, N a multiple of 64, rows in
  // place, one slice): fewer rows than a warp's 16-row tile, a last tile
  // cut short, several windows with W transposed, and enough rows that
  // every warp of the resident wave takes several tiles through its ring.
  {
    Case c{"denseUnderOneWarpTileBias", Mode::Linear, 7, 64, 128};
    c.tf32 = true;
    c.bias = Bias::Shared;
    add(c);
  }
  {
    Case c{"denseTransposedWindows", Mode::Linear, 5001, 64, 192};
    c.transposeW = true;
    c.tf32 = true;
    add(c);
  }
  {
    Case c{"denseManyTilesAWarpBias", Mode::Linear, 150007, 64, 64};
    c.tf32 = true;
    c.bias = Bias::Shared;
    add(c);
  }
  {
    Case c{"denseWidestTransposedBias", Mode::Linear, 12003, 64, 256};
    c.transposeW = true;
    c.tf32 = true;
    c.bias = Bias::Shared;
    add(c);
  }
  // The same without TF32 (products exact to fp32: three a term).
  {
    Case c{"denseExactBias", Mode::Linear, 30011, 64, 64};
    c.bias = Bias::Shared;
    add(c);
  }
  {
    Case c{"denseExactTransposedWindows", Mode::Linear, 3001, 64, 128};
    c.transposeW = true;
    add(c);
  }
  // Slices as segments of consecutive rows (a graph's nodes numbered by
  // type): HGT's kqv projection (three windows, each its own output part,
  // a bias a slice); segments that are empty, shorter than a warp's tile
  // or hold most of the rows; the most slices the kernel takes.
  {
    Case c{"denseSegmentsPartsBiasPerSlice", Mode::Linear, 20011, 64, 192};
    c.S = 7;
    c.seg = Seg::Ptr;
    c.transposeW = true;
    c.tf32 = true;
    c.bias = Bias::PerSlice;
    c.yParts = 3;
    add(c);
  }
  {
    Case c{"denseSegmentsEmptySkewed", Mode::Linear, 40009, 64, 128};
    c.S = 6;
    c.seg = Seg::Ptr;
    c.emptySegments = true;
    c.skewedSegments = true;
    c.tf32 = true;
    c.bias = Bias::PerSlice;
    add(c);
  }
  {
    Case c{"denseSegmentsUnderOneWarpTile", Mode::Linear, 11, 64, 64};
    c.S = 4;
    c.seg = Seg::Ptr;
    c.tf32 = true;
    c.bias = Bias::Shared;
    add(c);
  }
  {
    Case c{"denseSegmentsMostSlices", Mode::Linear, 9001, 64, 64};
    c.S = 32;
    c.seg = Seg::Ptr;
    c.transposeW = true;
    c.tf32 = true;
    c.bias = Bias::PerSlice;
    add(c);
  }
  {
    Case c{"denseExactSegmentsParts", Mode::Linear, 3001, 64, 128};
    c.S = 3;
    c.seg = Seg::Ptr;
    c.bias = Bias::PerSlice;
    c.yParts = 2;
    add(c);
  }
  // HGT's output projection: gelu of the input, a bias a node type, W
  // transposed, and in the inference program the gated skip (mixRows);
  // TF32 and exact.
  {
    Case c{"denseGeluMixBiasPerSlice", Mode::Linear, 30011, 64, 64};
    c.S = 5;
    c.seg = Seg::Ptr;
    c.geluInput = true;
    c.gatedMix = true;
    c.transposeW = true;
    c.tf32 = true;
    c.bias = Bias::PerSlice;
    add(c);
  }
  {
    Case c{"denseExactGeluMixWindows", Mode::Linear, 2001, 64, 128};
    c.S = 3;
    c.seg = Seg::Ptr;
    c.geluInput = true;
    c.gatedMix = true;
    c.bias = Bias::Shared;
    add(c);
  }
  {
    Case c{"denseGeluBiasPerSlice", Mode::Linear, 5003, 64, 64};
    c.S = 2;
    c.seg = Seg::Ptr;
    c.geluInput = true;
    c.transposeW = true;
    c.tf32 = true;
    c.bias = Bias::PerSlice;
    add(c);
  }
  // Runs of several tiles a block (a resident wave of 132 SMs holds at
  // most about 600 blocks of 64 rows, so 200 K rows give each block 5 or
  // more): each tile's rows are looked up during the tile before, and its
  // slices walked forward from the previous tile's last row, across
  // empty segments and segments shorter than a tile (docs/perf-notes.md
  // section 45); rowType slices, sorted ids of skewed segments and TF32
  // the same way.
  {
    Case c{"mmaRunsOfTilesSegPtrEmptyGatherScatter",
           Mode::Linear,
           200003,
           64,
           64,
           1,
           300,
           Seg::Ptr};
    c.emptySegments = true;
    c.gather = true;
    c.scatter = Scatter::Permute;
    c.epilogue = EpilogueOp::Div;
    c.scaleGather = true;
    add(c);
  }
  {
    Case c{"mmaRunsOfTilesRowTypeWindows",
           Mode::Linear,
           150001,
           32,
           136,
           1,
           9,
           Seg::RowType};
    c.rowIds = RowIds::Shuffled;
    c.epilogue = EpilogueOp::Mul;
    add(c);
  }
  {
    Case c{"mmaRunsOfTilesSortedSkewedTf32",
           Mode::Linear,
           180002,
           64,
           64,
           1,
           40,
           Seg::Ptr};
    c.rowIds = RowIds::SortedByType;
    c.skewedSegments = true;
    c.emptySegments = true;
    c.tf32 = true;
    add(c);
  }
  // The outer tensor-core kernel (K, N multiples of 4, both <= 256,
  // aligned X and B): column windows beyond 64, K not a multiple of 16,
  // chunks across segments, rowType blocks, the deterministic single
  // writer, a plain store, TF32.
  {
    Case c{"mmaOuterWideSegPtrAtomic", Mode::Outer, 20000, 64, 192, 1, 5,
           Seg::Ptr};
    c.gather = true;
    c.gatherB = true;
    c.accumulate = true;
    add(c);
  }
  {
    Case c{"mmaOuterRowTypeHeadsTransposed", Mode::Outer, 6000, 20, 136, 2,
           4, Seg::RowType};
    c.transposeW = true;
    c.accumulate = true;
    c.gatherB = true;
    add(c);
  }
  {
    Case c{"mmaOuterDeterministicWide", Mode::Outer, 9000, 48, 200, 1, 3,
           Seg::Ptr};
    c.accumulate = true;
    c.deterministic = true;
    add(c);
  }
  {
    Case c{"mmaOuterPlainShuffledIds", Mode::Outer, 3000, 12, 100};
    c.rowIds = RowIds::Shuffled;
    add(c);
  }
  {
    Case c{"mmaOuterSortedIdsEmptySegments", Mode::Outer, 7000, 64, 64, 1, 8,
           Seg::Ptr};
    c.rowIds = RowIds::SortedByType;
    c.emptySegments = true;
    c.accumulate = true;
    c.gather = true;
    add(c);
  }
  // K above 64 in windows of 64 (HGT's kqv gradient: K = 192, N = 64).
  {
    Case c{"mmaOuterKWindowsTransposedAtomic", Mode::Outer, 12000, 192, 64,
           1, 3, Seg::Ptr};
    c.transposeW = true;
    c.accumulate = true;
    c.gather = true;
    add(c);
  }
  {
    Case c{"mmaOuterKWindowsRowTypeDeterministic", Mode::Outer, 4000, 136,
           100, 1, 3, Seg::RowType};
    c.accumulate = true;
    c.deterministic = true;
    add(c);
  }
  add({"mmaOuterWidestPlain", Mode::Outer, 700, 256, 256});
  {
    Case c{"mmaOuterTf32", Mode::Outer, 5000, 64, 64, 1, 2, Seg::Ptr};
    c.accumulate = true;
    c.tf32 = true;
    add(c);
  }
  // A fused bias (per slice, or one row for all rows) and outputs cut by
  // columns into separate buffers (HGT's kqv projection: one GEMM writing
  // k, q and v): the tensor-core kernel where each part is a whole number
  // of its 64-column windows wide, the general kernel otherwise (and for
  // double, and for every shape when the tensor cores are off: a bias or
  // parts keep the vec, narrow, dot and scale paths out).
  {
    Case c{"mmaBiasPerSliceThreeParts", Mode::Linear, 5003, 64, 192, 1, 7,
           Seg::Ptr};
    c.gather = true;
    c.transposeW = true;
    c.scatter = Scatter::Permute;
    c.bias = Bias::PerSlice;
    c.yParts = 3;
    add(c);
  }
  {
    Case c{"mmaBiasSharedRowTypeEpilogue", Mode::Linear, 3001, 32, 136, 1,
           5, Seg::RowType};
    c.rowIds = RowIds::Shuffled;
    c.bias = Bias::Shared;
    c.epilogue = EpilogueOp::Mul;
    c.scaleGather = true;
    add(c);
  }
  {
    Case c{"fourPartsSortedIds", Mode::Linear, 2000, 16, 32, 1, 6,
           Seg::Ptr};
    c.rowIds = RowIds::SortedByType;
    c.emptySegments = true;
    c.bias = Bias::PerSlice;
    c.yParts = 4;
    add(c);
  }
  {
    Case c{"mmaTwoWidePartsHeadsOfWindows", Mode::Linear, 1500, 48, 256, 1,
           3, Seg::RowType};
    c.rowIds = RowIds::Shuffled;
    c.bias = Bias::Shared;
    c.yParts = 2;
    add(c);
  }
  {
    Case c{"biasVecShape", Mode::Linear, 1000, 64, 64, 1, 3, Seg::Ptr};
    c.bias = Bias::Shared;
    c.gather = true;
    add(c);
  }
  {
    Case c{"partsNarrowGeneralEpilogue", Mode::Linear, 777, 5, 6, 1, 4,
           Seg::RowType};
    c.bias = Bias::PerSlice;
    c.yParts = 2;
    c.epilogue = EpilogueOp::Div;
    c.scaleGather = true;
    c.scatter = Scatter::Permute;
    add(c);
  }
  {
    Case c{"biasHeadsPerSlice", Mode::Linear, 900, 24, 40, 2, 3, Seg::Ptr};
    c.bias = Bias::PerSlice;
    c.transposeW = true;
    c.epilogue = EpilogueOp::Mul;
    c.scalePerHead = true;
    add(c);
  }
  {
    Case c{"mmaBiasTf32", Mode::Linear, 3000, 64, 64, 1, 5, Seg::Ptr};
    c.bias = Bias::PerSlice;
    c.tf32 = true;
    add(c);
  }
  // Row dots (RGAT's outj * k): in the tensor-core kernel's epilogue when
  // H = 1, N <= 64 and rowDotN = 1 (the mma* ones, on a GPU with the
  // tensor cores on), else as a second call that reads the rows back (the
  // rest, the CPU, and double).
  {
    Case c{
        "mmaRowDotGatherSegments", Mode::Linear, 5003, 64, 64, 1, 7, Seg::Ptr};
    c.gather = true;
    c.rowDotN = 1;
    add(c);
  }
  {
    Case c{"mmaRowDotBiasEpilogueScatter",
           Mode::Linear,
           3001,
           32,
           48,
           1,
           5,
           Seg::RowType};
    c.rowIds = RowIds::Shuffled;
    c.scatter = Scatter::Permute;
    c.bias = Bias::PerSlice;
    c.epilogue = EpilogueOp::Div;
    c.scaleGather = true;
    c.transposeW = true;
    c.rowDotN = 1;
    add(c);
  }
  {
    Case c{
        "mmaRowDotSortedIdsTf32", Mode::Linear, 2000, 64, 64, 1, 3, Seg::Ptr};
    c.rowIds = RowIds::SortedByType;
    c.tf32 = true;
    c.rowDotN = 1;
    add(c);
  }
  {
    Case c{"rowDotThreeColumnsSecondCall",
           Mode::Linear,
           1000,
           64,
           64,
           1,
           2,
           Seg::Ptr};
    c.gather = true;
    c.bias = Bias::Shared;
    c.rowDotN = 3;
    add(c);
  }
  {
    Case c{"rowDotTwoWindowsHeads", Mode::Linear, 700, 16, 80, 2, 3, Seg::Ptr};
    c.gather = true;
    c.rowDotN = 2;
    add(c);
  }
  {
    Case c{"rowDotNarrowGeneral", Mode::Linear, 333, 5, 6, 1, 1};
    c.scatter = Scatter::Permute;
    c.rowDotN = 1;
    add(c);
  }
  // A bias with accumulate: each row adds (x W + b) * scale into its output
  // row (a root GEMM adding into an output that other calls add to): the
  // tensor-core kernel's fused epilogue, the general kernel (heads, odd
  // widths) and the ordered kernel (deterministic atomics).
  {
    Case c{"biasAccumulate", Mode::Linear, 200, 64, 64, 1, 3, Seg::Ptr};
    c.bias = Bias::PerSlice;
    c.accumulate = true;
    add(c);
  }
  {
    Case c{"biasAccumulateAtomicScaled",
           Mode::Linear,
           300,
           32,
           40,
           1,
           2,
           Seg::RowType};
    c.bias = Bias::Shared;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.epilogue = EpilogueOp::Div;
    add(c);
    c.name = "biasAccumulateAtomicScaledDeterministic";
    c.deterministic = true;
    add(c);
  }
  {
    Case c{
        "biasAccumulateGeneralHeads", Mode::Linear, 70, 5, 7, 2, 2, Seg::Ptr};
    c.bias = Bias::PerSlice;
    c.accumulate = true;
    c.gather = true;
    add(c);
  }
  // Summed rows (SegmentGemmArgs::sumPtr): each row's input is the sum of
  // several X rows, as an RGCN forward's (destination, relation) segments
  // are: the mean (a Div epilogue by the count) of each segment's sources
  // times the relation's weight, added atomically into the destinations.
  // The tensor-core kernel stages the sums (K, N multiples of 8); the
  // general kernel takes the rest, double, and every shape with the tensor
  // cores off; the ordered kernel the deterministic twin.
  {
    Case c{"summedRowsMeanAtomic", Mode::Linear, 300, 64, 64, 1, 5, Seg::Ptr};
    c.summedRows = 9;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.epilogue = EpilogueOp::Div;
    add(c);
    c.name = "summedRowsMeanDeterministic";
    c.deterministic = true;
    add(c);
    // The chunks' order (sorted by destination in each relation): the
    // ordered path's per-segment runs.
    c.name = "summedRowsMeanDeterministicRuns";
    c.scatter = Scatter::CollideSortedInSegments;
    add(c);
  }
  {
    // Per-segment runs with heads, a gather, a per-slice bias and empty
    // segments (0, 2 and S-1).
    Case c{"orderedRunsBiasHeads", Mode::Linear, 120, 6, 10, 2, 5, Seg::Ptr};
    c.gather = true;
    c.bias = Bias::PerSlice;
    c.emptySegments = true;
    c.scatter = Scatter::CollideSortedInSegments;
    c.accumulate = true;
    c.deterministic = true;
    add(c);
  }
  {
    Case c{
        "summedRowsSortedTf32Wide", Mode::Linear, 700, 64, 128, 1, 7, Seg::Ptr};
    c.summedRows = 4;
    c.rowIds = RowIds::SortedByType;
    c.emptySegments = true;
    c.tf32 = true;
    add(c);
  }
  // An input op (SegmentGemmArgs::inputOp): HGT's output projection of
  // gelu(agg) reads agg. The tensor-core kernel's fragments (exact and
  // TF32, a transposed weight with a bias per slice, as out_lin's) and the
  // general kernel (heads, a gather, K and N not multiples of 8).
  {
    Case c{
        "geluInputBiasTransposed", Mode::Linear, 500, 64, 64, 1, 4, Seg::Ptr};
    c.geluInput = true;
    c.transposeW = true;
    c.bias = Bias::PerSlice;
    add(c);
    c.name = "geluInputBiasTransposedTf32";
    c.tf32 = true;
    add(c);
  }
  {
    Case c{
        "geluInputGeneralHeads", Mode::Linear, 90, 20, 12, 2, 3, Seg::RowType};
    c.geluInput = true;
    c.gather = true;
    add(c);
  }
  // A gated mix (SegmentGemmArgs::mixRows, mixGate): HGT's gated skip in
  // its output projection's epilogue. The tensor-core kernel with gelu
  // input, a transposed weight and a bias per slice, as HGT's out_lin
  // (exact and TF32); with two 64-column windows, shuffled row ids and
  // rowType and no bias; the general kernel with heads and a gather.
  {
    Case c{"gatedMixGeluBiasTransposed",
           Mode::Linear,
           500,
           64,
           64,
           1,
           4,
           Seg::Ptr};
    c.gatedMix = true;
    c.geluInput = true;
    c.transposeW = true;
    c.bias = Bias::PerSlice;
    add(c);
    c.name = "gatedMixGeluBiasTransposedTf32";
    c.tf32 = true;
    add(c);
  }
  {
    Case c{"gatedMixTwoWindowsShuffled",
           Mode::Linear,
           300,
           32,
           128,
           1,
           3,
           Seg::RowType};
    c.gatedMix = true;
    c.rowIds = RowIds::Shuffled;
    add(c);
  }
  {
    Case c{
        "gatedMixGeneralHeads", Mode::Linear, 90, 20, 12, 2, 3, Seg::RowType};
    c.gatedMix = true;
    c.gather = true;
    c.bias = Bias::Shared;
    add(c);
  }
  {
    Case c{"summedRowsBiasTransposed",
           Mode::Linear,
           200,
           32,
           16,
           1,
           3,
           Seg::RowType};
    c.summedRows = 6;
    c.bias = Bias::PerSlice;
    c.transposeW = true;
    add(c);
  }
  {
    Case c{"summedRowsLongRow", Mode::Linear, 150, 64, 64};
    c.summedRows = 3;
    c.longSum = true;
    add(c);
  }
  {
    // More tiles than a GPU holds blocks at once, so that the tensor-core
    // kernel cuts the rows into one range a block by cost (entries plus a
    // constant a row): ranges that start inside a tile, end in short
    // tiles, or, around the hub row, hold no rows at all. A row counted
    // twice or left out shows in the output.
    Case c{"summedRowsBalancedRanges",
           Mode::Linear,
           40000,
           64,
           64,
           1,
           5,
           Seg::Ptr};
    c.summedRows = 5;
    c.longSum = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.epilogue = EpilogueOp::Div;
    c.tf32 = true;
    add(c);
    // Deterministic: the rows' values through the same kernel into a
    // workspace, then added in row order after the sort by output row.
    c.name = "summedRowsBalancedRangesDeterministic";
    c.deterministic = true;
    add(c);
  }
  {
    Case c{"summedRowsGeneralHeads", Mode::Linear, 90, 20, 12, 2, 3, Seg::Ptr};
    c.summedRows = 5;
    c.scatter = Scatter::Permute;
    c.epilogue = EpilogueOp::Mul;
    c.scalePerHead = true;
    add(c);
  }
  // Weighted summed rows (SegmentGemmArgs::sumWeights): an attention
  // layer's aggregation, sum_e alpha_e x_src, before the transform. The
  // tensor-core kernel's weighted staging (exact and TF32, balanced ranges
  // and strided runs with rowIds), the general kernel (heads, a bias, K
  // and N not multiples of 8), and the deterministic workspace.
  {
    Case c{
        "weightedSummedRowsAtomic", Mode::Linear, 300, 64, 64, 1, 5, Seg::Ptr};
    c.summedRows = 9;
    c.sumWeights = true;
    c.longSum = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    add(c);
    c.name = "weightedSummedRowsAtomicTf32";
    c.tf32 = true;
    add(c);
  }
  {
    Case c{"weightedSummedRowsBalancedRanges",
           Mode::Linear,
           40000,
           64,
           64,
           1,
           5,
           Seg::Ptr};
    c.summedRows = 5;
    c.sumWeights = true;
    c.longSum = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.epilogue = EpilogueOp::Mul;
    c.tf32 = true;
    add(c);
    c.name = "weightedSummedRowsBalancedRangesDeterministic";
    c.deterministic = true;
    add(c);
  }
  {
    Case c{"weightedSummedRowsSortedTransposed",
           Mode::Linear,
           700,
           64,
           128,
           1,
           7,
           Seg::Ptr};
    c.summedRows = 4;
    c.sumWeights = true;
    c.rowIds = RowIds::SortedByType;
    c.emptySegments = true;
    c.transposeW = true;
    add(c);
  }
  {
    // HGT's message sum with two heads: per-head [K, N] matrices (not a
    // weight's columns), each head's rows weighed by its own weight, on the
    // tensor cores (K = N = 32 a head) and exact.
    Case c{"weightedSummedRowsPerHeadMatrices",
           Mode::Linear,
           600,
           32,
           32,
           2,
           5,
           Seg::Ptr};
    c.summedRows = 6;
    c.sumWeights = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    add(c);
    c.name = "weightedSummedRowsPerHeadMatricesTf32";
    c.tf32 = true;
    add(c);
  }
  {
    Case c{"weightedSummedRowsGeneralHeadsBias",
           Mode::Linear,
           90,
           20,
           12,
           2,
           3,
           Seg::RowType};
    c.summedRows = 5;
    c.sumWeights = true;
    c.bias = Bias::PerSlice;
    c.scatter = Scatter::Permute;
    add(c);
  }
  {
    // Fits the tensor cores but for its bias: the general kernel.
    Case c{"weightedSummedRowsBiasFallback",
           Mode::Linear,
           200,
           64,
           64,
           1,
           3,
           Seg::Ptr};
    c.summedRows = 6;
    c.sumWeights = true;
    c.bias = Bias::Shared;
    add(c);
  }
  // Weights at their ids (SegmentGemmArgs::sumWeightIds): attention scores
  // stored by edge id, the entries in (relation, destination) order. A
  // permutation and ids with repeats; the tensor-core kernel's id staging
  // in all four of its instantiations (exact and TF32, W plain and
  // transposed), the general kernel with heads, and the deterministic
  // paths.
  {
    Case c{
        "weightIdsPermutedAtomic", Mode::Linear, 300, 64, 64, 1, 5, Seg::Ptr};
    c.summedRows = 9;
    c.sumWeights = true;
    c.weightIds = WeightIds::Permute;
    c.longSum = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    add(c);
    c.name = "weightIdsPermutedAtomicTf32";
    c.tf32 = true;
    add(c);
  }
  {
    Case c{"weightIdsRepeatedSortedTransposed",
           Mode::Linear,
           700,
           64,
           128,
           1,
           7,
           Seg::Ptr};
    c.summedRows = 4;
    c.sumWeights = true;
    c.weightIds = WeightIds::Repeated;
    c.rowIds = RowIds::SortedByType;
    c.emptySegments = true;
    c.transposeW = true;
    add(c);
    c.name = "weightIdsRepeatedSortedTransposedTf32";
    c.tf32 = true;
    add(c);
  }
  {
    Case c{"weightIdsRepeatedBalancedRanges",
           Mode::Linear,
           40000,
           64,
           64,
           1,
           5,
           Seg::Ptr};
    c.summedRows = 5;
    c.sumWeights = true;
    c.weightIds = WeightIds::Repeated;
    c.longSum = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.epilogue = EpilogueOp::Mul;
    c.deterministic = true;
    add(c);
  }
  {
    Case c{"weightIdsRepeatedGeneralHeadsBias",
           Mode::Linear,
           90,
           20,
           12,
           2,
           3,
           Seg::RowType};
    c.summedRows = 5;
    c.sumWeights = true;
    c.weightIds = WeightIds::Repeated;
    c.bias = Bias::PerSlice;
    c.scatter = Scatter::Permute;
    add(c);
  }
  // Heads that share X rows and take W's column groups
  // (SegmentGemmArgs::xSharedByHeads, wHeadsInColumns): one [K, H*N]
  // linear whose output columns are grouped by head, as RGAT's multi-head
  // message x_src W_r, with per-head weights on summed rows. With H > 1
  // they take the general kernels, also in the shapes of the tensor-core,
  // float4 and 8-lane kernels (which must not take them), and the
  // deterministic paths.
  {
    Case c{"headColumnsGather2", Mode::Linear, 150, 16, 24, 2, 3, Seg::Ptr};
    c.gather = true;
    c.xSharedByHeads = c.wHeadsInColumns = true;
    add(c);
  }
  {
    Case c{
        "headColumnsVecShape2", Mode::Linear, 500, 64, 32, 2, 4, Seg::RowType};
    c.rowIds = RowIds::Shuffled;
    c.xSharedByHeads = c.wHeadsInColumns = true;
    add(c);
  }
  {
    Case c{"headColumnsDotShape4", Mode::Linear, 300, 32, 1, 4, 2, Seg::Ptr};
    c.gather = true;
    c.xSharedByHeads = c.wHeadsInColumns = true;
    add(c);
  }
  {
    Case c{
        "headColumnsSummedAtomic4", Mode::Linear, 400, 64, 64, 4, 3, Seg::Ptr};
    c.summedRows = 5;
    c.sumWeights = true;
    c.weightIds = WeightIds::Repeated;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.xSharedByHeads = c.wHeadsInColumns = true;
    add(c);
  }
  {
    Case c{"headColumnsSummedBiasMul2",
           Mode::Linear,
           200,
           12,
           8,
           2,
           3,
           Seg::RowType};
    c.summedRows = 6;
    c.sumWeights = true;
    c.weightIds = WeightIds::Permute;
    c.bias = Bias::PerSlice;
    c.epilogue = EpilogueOp::Mul;
    c.scalePerHead = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.xSharedByHeads = c.wHeadsInColumns = true;
    add(c);
  }
  {
    Case c{"headColumnsSummedDeterministic4",
           Mode::Linear,
           300,
           16,
           8,
           4,
           4,
           Seg::Ptr};
    c.summedRows = 4;
    c.sumWeights = true;
    c.weightIds = WeightIds::Repeated;
    c.scatter = Scatter::CollideSortedInSegments;
    c.accumulate = true;
    c.deterministic = true;
    c.xSharedByHeads = c.wHeadsInColumns = true;
    add(c);
  }
  {
    Case c{"headColumnsGatherDeterministic2",
           Mode::Linear,
           250,
           10,
           6,
           2,
           3,
           Seg::Ptr};
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.deterministic = true;
    c.epilogue = EpilogueOp::Div;
    c.scaleGather = true;
    c.xSharedByHeads = c.wHeadsInColumns = true;
    add(c);
  }
  // Each flag alone: shared X rows with transposed per-head weights, and
  // head columns of W with per-head X rows.
  {
    Case c{"headsShareXOnly", Mode::Linear, 120, 8, 12, 3, 2, Seg::RowType};
    c.gather = true;
    c.transposeW = true;
    c.xSharedByHeads = true;
    add(c);
  }
  {
    Case c{"headColumnsOnly", Mode::Linear, 120, 8, 12, 3, 2, Seg::Ptr};
    c.summedRows = 3;
    c.sumWeights = true;
    c.wHeadsInColumns = true;
    add(c);
  }
  // With one head both flags change nothing: the fast kernels (tensor
  // cores, float4) take these as they take the plain calls.
  {
    Case c{"headFlagsOneHeadMma", Mode::Linear, 300, 64, 64, 1, 5, Seg::Ptr};
    c.summedRows = 9;
    c.sumWeights = true;
    c.weightIds = WeightIds::Permute;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.xSharedByHeads = c.wHeadsInColumns = true;
    add(c);
  }
  {
    Case c{"headFlagsOneHeadVec", Mode::Linear, 1000, 64, 64, 1, 5, Seg::Ptr};
    c.emptySegments = true;
    c.xSharedByHeads = c.wHeadsInColumns = true;
    add(c);
  }
  return t;
}

/// The data of one case in scalar type T: inputs, index lists, and the
/// expected output (computed in Precision<T>::Ref, rounded to T).
template <typename T> struct Problem {
  Case c;
  /// Row ids range over [0, ids): the size of every per-row list.
  int64_t ids = 0;
  int64_t xRows = 0, yRows = 0, scaleRows = 0, bRows = 0;
  /// Linear: the output rows (yRows * H * N scalars) come first in Y0 and
  /// expected; with a row dot its rows (yRows * rowDotN) follow.
  int64_t yCount = 0;
  std::vector<T> X, W, B, scale, bias, rowDotW, Y0, expected;
  std::vector<T> mixRows, mixGate; ///< [yRows, H*N], [S]; empty: no mix
  std::vector<int64_t> gather, gatherB, scatter, scaleGather, segPtr, rowType;
  std::vector<int64_t> sumPtr, sumRows; ///< empty: one X row per id
  std::vector<T> sumWeights;            ///< [weight rows, H]; empty: none
  std::vector<int64_t> sumWeightIds;    ///< [entries]; empty: row j
  std::vector<int64_t> rowIds; ///< empty: no rowIds
  /// Empty: no gather order (Case::gatherOrder).
  std::vector<int64_t> gatherOrderRowIds, gatherOrderGather, gatherOrderRowType;
  bool atomic = false;
};

/// A magnitude in [0.25, 1) with a random sign, using all of T's mantissa
/// (so that double results carry rounding that float would get wrong).
template <typename T> T randomNonZero(std::mt19937 &rng) {
  std::uniform_real_distribution<T> mag(T(0.25), T(1));
  std::bernoulli_distribution sign(0.5);
  return sign(rng) ? mag(rng) : -mag(rng);
}

template <typename T>
std::vector<T> randomVector(std::mt19937 &rng, int64_t n) {
  std::vector<T> v(n);
  for (T &x : v)
    x = randomNonZero<T>(rng);
  return v;
}

std::vector<int64_t> randomIndices(std::mt19937 &rng, int64_t n,
                                   int64_t range) {
  std::uniform_int_distribution<int64_t> d(0, range - 1);
  std::vector<int64_t> v(n);
  for (int64_t &x : v)
    x = d(rng);
  return v;
}

/// The ids [0, n) in random order.
std::vector<int64_t> randomPermutation(std::mt19937 &rng, int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

template <typename T> Problem<T> makeProblem(const Case &c) {
  using Ref = typename Precision<T>::Ref;
  std::mt19937 rng(1234 + c.M * 7 + c.K * 13 + c.N);
  Problem<T> p;
  p.c = c;
  const int64_t M = c.M, K = c.K, N = c.N, H = c.H, S = c.S;
  switch (c.rowIds) {
  case RowIds::None:
  case RowIds::SortedByType:
    p.ids = M;
    break;
  case RowIds::Shuffled:
    p.ids = M + 7;
    break;
  case RowIds::Repeated:
    p.ids = M / 2 + 3;
    break;
  }
  const int64_t I = p.ids;
  p.xRows = c.gather || c.summedRows > 0 ? I + 11 : I;
  if (c.gather)
    p.gather = randomIndices(rng, I, p.xRows);
  if (c.summedRows > 0) {
    // Every fifth id sums no rows; the others 1 to summedRows.
    std::vector<int64_t> counts = randomIndices(rng, I, c.summedRows);
    p.sumPtr.assign(I + 1, 0);
    for (int64_t i = 0; i < I; ++i)
      p.sumPtr[i + 1] = p.sumPtr[i] + (i % 5 == 4 ? 0 : counts[i] + 1) +
                        (c.longSum && i == 3 ? 1000 : 0);
    p.sumRows = randomIndices(rng, p.sumPtr[I], p.xRows);
    const int64_t entries = p.sumPtr[I];
    int64_t weightRows = entries;
    if (c.weightIds == WeightIds::Permute) {
      p.sumWeightIds = randomPermutation(rng, entries);
    } else if (c.weightIds == WeightIds::Repeated) {
      weightRows = entries / 2 + 3;
      p.sumWeightIds = randomIndices(rng, entries, weightRows);
    }
    if (c.sumWeights)
      p.sumWeights = randomVector<T>(rng, weightRows * H);
  }
  if (c.weightIds != WeightIds::None && !c.sumWeights)
    throw std::logic_error(c.name + ": weight ids need sumWeights");
  if (c.wHeadsInColumns && c.transposeW)
    throw std::logic_error(c.name + ": head columns need transposeW off");
  // X rows of K scalars (xSharedByHeads) or H*K.
  const int64_t xRowScalars = c.xSharedByHeads ? K : H * K;
  p.X = randomVector<T>(rng, p.xRows * xRowScalars);
  if (c.rowIds == RowIds::SortedByType) {
    // A type per id (none of 0, 2, S-1 with emptySegments); the ids sorted
    // by type, and the segments (or rowType) from those types.
    std::vector<int64_t> types = randomIndices(rng, I, S);
    if (c.emptySegments)
      for (int64_t &t : types)
        while (t == 0 || t == 2 || t == S - 1)
          t = (t + 1) % S;
    p.rowIds.resize(I);
    std::iota(p.rowIds.begin(), p.rowIds.end(), 0);
    std::stable_sort(p.rowIds.begin(), p.rowIds.end(),
                     [&](int64_t x, int64_t y) { return types[x] < types[y]; });
    if (c.seg == Seg::Ptr) {
      p.segPtr.assign(S + 1, 0);
      for (int64_t t : types)
        ++p.segPtr[t + 1];
      std::partial_sum(p.segPtr.begin(), p.segPtr.end(), p.segPtr.begin());
    } else if (c.seg == Seg::RowType) {
      p.rowType = types;
    }
  } else if (c.seg == Seg::Ptr) {
    // Random boundaries; with emptySegments, segments 0, 2 and S-1 are empty.
    std::vector<int64_t> cuts = randomIndices(rng, S - 1, M + 1);
    if (c.skewedSegments) {
      // The others share 10% of the rows; segment 1 takes what is left.
      cuts = randomIndices(rng, S - 1, std::max<int64_t>(1, M / 10));
      for (int64_t i = 1; i < S - 1; ++i)
        cuts[i] += M - M / 10;
    }
    std::sort(cuts.begin(), cuts.end());
    p.segPtr = {0};
    for (int64_t s = 0; s + 1 < S; ++s)
      p.segPtr.push_back(cuts[s]);
    p.segPtr.push_back(M);
    if (c.emptySegments) {
      p.segPtr[1] = 0;
      p.segPtr[3] = p.segPtr[2];
      p.segPtr[S - 1] = M;
    }
  } else if (c.seg == Seg::RowType) {
    p.rowType = randomIndices(rng, I, S);
  }
  if (c.mode == Mode::Linear) {
    p.W = randomVector<T>(rng, S * H * K * N);
    p.yRows = I;
    if (c.scatter == Scatter::Permute) {
      p.yRows = I + 5;
      std::vector<int64_t> perm = randomPermutation(rng, p.yRows);
      p.scatter.assign(perm.begin(), perm.begin() + I);
    } else if (c.scatter == Scatter::Collide ||
               c.scatter == Scatter::CollideSortedInSegments) {
      p.yRows = std::max<int64_t>(1, I / 4);
      p.scatter = randomIndices(rng, I, p.yRows);
      p.atomic = true;
      if (c.scatter == Scatter::CollideSortedInSegments) {
        if (c.seg != Seg::Ptr || c.rowIds != RowIds::None)
          throw std::logic_error(c.name + ": sorted scatter needs Seg::Ptr "
                                          "and no rowIds");
        for (int64_t s = 0; s < S; ++s)
          std::sort(p.scatter.begin() + p.segPtr[s],
                    p.scatter.begin() + p.segPtr[s + 1]);
      }
    }
    p.yCount = p.yRows * H * N;
    p.Y0 = randomVector<T>(rng, p.yRows * H * (N + c.rowDotN));
    if (c.rowDotN > 0)
      p.rowDotW = randomVector<T>(rng, H * N * c.rowDotN);
    if (c.epilogue != EpilogueOp::None) {
      p.scaleRows = c.scaleGather ? I + 3 : I;
      if (c.scaleGather)
        p.scaleGather = randomIndices(rng, I, p.scaleRows);
      p.scale = randomVector<T>(rng, p.scaleRows * (c.scalePerHead ? H : 1));
    }
    if (c.bias != Bias::None)
      p.bias = randomVector<T>(rng, (c.bias == Bias::PerSlice ? S : 1) * H * N);
    if (c.gatedMix) {
      p.mixRows = randomVector<T>(rng, p.yRows * H * N);
      // Gates from about 0.12 to 0.88, so that both terms count.
      p.mixGate = randomVector<T>(rng, S);
      for (T &g : p.mixGate)
        g *= T(2);
    }
    // Repeated ids write their output rows more than once.
    if (c.rowIds == RowIds::Repeated)
      p.atomic = true;
  } else {
    p.bRows = c.gatherB ? I + 4 : I;
    if (c.gatherB)
      p.gatherB = randomIndices(rng, I, p.bRows);
    p.B = randomVector<T>(rng, p.bRows * H * N);
    p.Y0 = randomVector<T>(rng, S * H * K * N); // the initial dW
    p.atomic = c.accumulate;
  }
  if (c.rowIds == RowIds::Shuffled) {
    p.rowIds = randomPermutation(rng, I);
    p.rowIds.resize(M);
  } else if (c.rowIds == RowIds::Repeated) {
    p.rowIds = randomIndices(rng, M, I);
  }
  if (c.gatherOrder) {
    if (c.seg != Seg::Ptr || !c.gather || c.rowIds != RowIds::None ||
        c.scatter != Scatter::None)
      throw std::logic_error(c.name + ": a gather order needs Seg::Ptr and "
                                      "a gather, no rowIds or scatter");
    // The rows stably by the X row they read, then each one's X row and
    // segment in that order.
    std::vector<int64_t> segmentOf(I, 0);
    for (int64_t s = 0; s < S; ++s)
      for (int64_t r = p.segPtr[s]; r < p.segPtr[s + 1]; ++r)
        segmentOf[r] = s;
    p.gatherOrderRowIds.resize(I);
    std::iota(p.gatherOrderRowIds.begin(), p.gatherOrderRowIds.end(), 0);
    std::stable_sort(
        p.gatherOrderRowIds.begin(), p.gatherOrderRowIds.end(),
        [&](int64_t x, int64_t y) { return p.gather[x] < p.gather[y]; });
    for (int64_t id : p.gatherOrderRowIds) {
      p.gatherOrderGather.push_back(p.gather[id]);
      p.gatherOrderRowType.push_back(segmentOf[id]);
    }
  }
  if (c.rowIds != RowIds::None && M == 0) {
    // A non-null rowIds that must not be read: an id far out of range.
    p.rowIds = {int64_t(1) << 40};
  }
  if (c.rowIds == RowIds::Repeated && c.mode == Mode::Linear &&
      !c.accumulate)
    throw std::logic_error(c.name + ": repeated row ids need accumulate");

  // The naive reference, in Ref.
  std::vector<Ref> out(p.Y0.begin(), p.Y0.end());
  auto idOf = [&](int64_t r) { return p.rowIds.empty() ? r : p.rowIds[r]; };
  auto sliceOf = [&](int64_t r, int64_t id) -> int64_t {
    if (c.seg == Seg::RowType)
      return p.rowType[id];
    if (c.seg == Seg::Ptr) {
      int64_t s = 0;
      while (!(p.segPtr[s] <= r && r < p.segPtr[s + 1]))
        ++s;
      return s;
    }
    return 0;
  };
  // Input k of head h of X row `row`: one row for all heads, or the head's
  // K of H*K.
  auto xAt = [&](int64_t row, int64_t h, int64_t k) -> Ref {
    const Ref x =
        Ref(c.xSharedByHeads ? p.X[row * K + k] : p.X[(row * H + h) * K + k]);
    return c.geluInput
               ? Ref(0.5) * x * (Ref(1) + std::erf(x / std::sqrt(Ref(2))))
               : x;
  };
  // Input k of head h of id `id`: its X row's, or the sum of its rows',
  // each times its entry's weight row (its id's, with weight ids).
  auto inputOf = [&](int64_t id, int64_t src, int64_t h, int64_t k) -> Ref {
    if (p.sumPtr.empty())
      return xAt(src, h, k);
    Ref v = 0;
    for (int64_t j = p.sumPtr[id]; j < p.sumPtr[id + 1]; ++j) {
      const int64_t wr = p.sumWeightIds.empty() ? j : p.sumWeightIds[j];
      v += xAt(p.sumRows[j], h, k) *
           (p.sumWeights.empty() ? Ref(1) : Ref(p.sumWeights[wr * H + h]));
    }
    return v;
  };
  // Weight (k, n) of head h of slice s: its own [K, N] (or [N, K]) matrix,
  // or with head columns column h*N + n of the slice's [K, H*N] matrix.
  auto wAt = [&](int64_t s, int64_t h, int64_t k, int64_t n) -> Ref {
    if (c.wHeadsInColumns)
      return Ref(p.W[s * K * H * N + k * H * N + h * N + n]);
    const int64_t wi = c.transposeW ? n * K + k : k * N + n;
    return Ref(p.W[(s * H + h) * K * N + wi]);
  };
  if (c.mode == Mode::Linear) {
    std::vector<bool> written(p.yRows, false);
    for (int64_t r = 0; r < M; ++r) {
      const int64_t id = idOf(r), s = sliceOf(r, id);
      const int64_t src = c.gather ? p.gather[id] : id;
      const int64_t dst = p.scatter.empty() ? id : p.scatter[id];
      written[dst] = true;
      for (int64_t h = 0; h < H; ++h)
        for (int64_t n = 0; n < N; ++n) {
          Ref v = 0;
          for (int64_t k = 0; k < K; ++k)
            v += inputOf(id, src, h, k) * wAt(s, h, k, n);
          if (c.bias != Bias::None)
            v += Ref(p.bias[((c.bias == Bias::PerSlice ? s * H : 0) + h) * N +
                            n]);
          if (c.epilogue != EpilogueOp::None) {
            const int64_t sr = c.scaleGather ? p.scaleGather[id] : id;
            const Ref sc = p.scale[c.scalePerHead ? sr * H + h : sr];
            v = c.epilogue == EpilogueOp::Mul ? v * sc : v / sc;
          }
          if (c.gatedMix) {
            const Ref g = Ref(1) / (Ref(1) + std::exp(-Ref(p.mixGate[s])));
            v = g * v + (Ref(1) - g) * Ref(p.mixRows[(dst * H + h) * N + n]);
          }
          Ref &o = out[(dst * H + h) * N + n];
          o = c.accumulate ? o + v : v;
        }
    }
    // The row dots of the rows written; the others keep Y0's.
    const int64_t D = c.rowDotN, HN = H * N;
    for (int64_t y = 0; y < p.yRows && D > 0; ++y)
      for (int64_t d = 0; d < D && written[y]; ++d) {
        Ref v = 0;
        for (int64_t n = 0; n < HN; ++n)
          v += out[y * HN + n] * Ref(p.rowDotW[n * D + d]);
        out[p.yCount + y * D + d] = v;
      }
  } else {
    if (!c.accumulate)
      std::fill(out.begin(), out.end(), Ref(0));
    for (int64_t r = 0; r < M; ++r) {
      const int64_t id = idOf(r), s = sliceOf(r, id);
      const int64_t ra = c.gather ? p.gather[id] : id;
      const int64_t rb = c.gatherB ? p.gatherB[id] : id;
      for (int64_t h = 0; h < H; ++h)
        for (int64_t k = 0; k < K; ++k)
          for (int64_t n = 0; n < N; ++n) {
            const int64_t wi = c.transposeW ? n * K + k : k * N + n;
            out[(s * H + h) * K * N + wi] +=
                Ref(p.X[(ra * H + h) * K + k]) * Ref(p.B[(rb * H + h) * N + n]);
          }
    }
  }
  p.expected.assign(out.begin(), out.end());
  if (c.yParts > 1) {
    // The parts end to end: part q holds columns [q*w, q*w + w) of every
    // output row, rows of w scalars.
    if (H != 1 || N % c.yParts != 0 || c.rowDotN > 0)
      throw std::logic_error(c.name + ": parts need H = 1, N % yParts == 0 "
                                      "and no row dot");
    const int64_t w = N / c.yParts;
    auto toParts = [&](const std::vector<T> &rows) {
      std::vector<T> parts(rows.size());
      for (int64_t y = 0; y < p.yRows; ++y)
        for (int64_t n = 0; n < N; ++n)
          parts[(n / w) * p.yRows * w + y * w + n % w] = rows[y * N + n];
      return parts;
    };
    p.expected = toParts(p.expected);
    p.Y0 = toParts(p.Y0);
  }
  return p;
}

/// Fills the args with pointers into `p` (host) or into the device copies.
template <typename T, typename Ptr>
SegmentGemmArgsT<T> makeArgs(const Problem<T> &p, Ptr ptr, T *out) {
  const Case &c = p.c;
  SegmentGemmArgsT<T> a;
  a.mode = c.mode;
  a.M = c.M;
  a.K = c.K;
  a.N = c.N;
  a.H = c.H;
  a.numSlices = c.S;
  a.rowIds = ptr(p.rowIds);
  a.X = ptr(p.X);
  a.gather = ptr(p.gather);
  a.sumPtr = ptr(p.sumPtr);
  a.sumRows = ptr(p.sumRows);
  a.sumWeights = ptr(p.sumWeights);
  a.sumWeightIds = ptr(p.sumWeightIds);
  a.xSharedByHeads = c.xSharedByHeads;
  a.wHeadsInColumns = c.wHeadsInColumns;
  a.inputOp = c.geluInput ? InputOp::Gelu : InputOp::None;
  a.transposeW = c.transposeW;
  a.segmentPtr = ptr(p.segPtr);
  a.rowType = ptr(p.rowType);
  a.gatherOrderRowIds = ptr(p.gatherOrderRowIds);
  a.gatherOrderGather = ptr(p.gatherOrderGather);
  a.gatherOrderRowType = ptr(p.gatherOrderRowType);
  a.accumulate = c.accumulate;
  a.atomic = p.atomic;
  a.deterministic = c.deterministic;
  a.scatterSortedInSegments = c.scatter == Scatter::CollideSortedInSegments;
  a.tf32 = c.tf32;
  if (c.mode == Mode::Linear) {
    a.W = ptr(p.W);
    a.Y = out;
    if (c.yParts > 1) {
      a.Y = nullptr;
      a.yParts = c.yParts;
      const int64_t w = c.N / c.yParts;
      for (int q = 0; q < c.yParts; ++q)
        a.yPart[q] = out + q * p.yRows * w;
    }
    a.bias = ptr(p.bias);
    a.biasPerSlice = c.bias == Bias::PerSlice;
    a.mixRows = ptr(p.mixRows);
    a.mixGate = ptr(p.mixGate);
    a.scatter = ptr(p.scatter);
    a.epilogue = c.epilogue;
    a.scale = ptr(p.scale);
    a.scaleGather = ptr(p.scaleGather);
    a.scalePerHead = c.scalePerHead;
    if (c.rowDotN > 0) {
      a.rowDotW = ptr(p.rowDotW);
      a.rowDotY = out + p.yCount;
      a.rowDotN = c.rowDotN;
    }
  } else {
    a.B = ptr(p.B);
    a.gatherB = ptr(p.gatherB);
    a.dW = out;
  }
  return a;
}

template <typename T>
void expectClose(const std::vector<T> &got, const std::vector<T> &want,
                 const std::string &what,
                 double tolerance = Precision<T>::tolerance) {
  using Ref = typename Precision<T>::Ref;
  ASSERT_EQ(got.size(), want.size()) << what;
  // Relative to the output's scale: sums of K random products can cancel.
  Ref maxAbs = 1e-30;
  for (T w : want)
    maxAbs = std::max(maxAbs, Ref(std::fabs(w)));
  Ref worst = 0;
  size_t worstAt = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const Ref err = std::fabs(Ref(got[i]) - Ref(want[i])) / maxAbs;
    if (err > worst) {
      worst = err;
      worstAt = i;
    }
  }
  EXPECT_LE(double(worst), tolerance)
      << what << ": element " << worstAt << " got " << got[worstAt] << " want "
      << want[worstAt];
}

/// expectClose on a call's output; the output rows and the row dots (a
/// row's sum over its elements, larger than they are) each to their own
/// scale.
template <typename T>
void expectOutputs(const std::vector<T> &got, const Problem<T> &p,
                   const std::string &what,
                   double tolerance = Precision<T>::tolerance) {
  if (p.c.rowDotN == 0 || got.size() != p.expected.size()) {
    expectClose(got, p.expected, what, tolerance);
    return;
  }
  const auto split = [&](const std::vector<T> &v, bool dots) {
    return dots ? std::vector<T>(v.begin() + p.yCount, v.end())
                : std::vector<T>(v.begin(), v.begin() + p.yCount);
  };
  expectClose(split(got, false), split(p.expected, false), what + " rows",
              tolerance);
  expectClose(split(got, true), split(p.expected, true), what + " row dots",
              tolerance);
}

/// The output of one CPU call on a problem (starting from Y0).
template <typename T> std::vector<T> cpuOutput(const Problem<T> &p) {
  std::vector<T> out = p.Y0;
  auto host = [](const auto &v) { return v.empty() ? nullptr : v.data(); };
  segmentGemmCpu(makeArgs(p, host, out.data()));
  return out;
}

template <typename T> void runCpu(const Case &c, const std::string &what) {
  const Problem<T> p = makeProblem<T>(c);
  expectOutputs(cpuOutput(p), p, what);
}

/// Runs a case `times` times on the CPU; the outputs.
template <typename T>
std::vector<std::vector<T>> repeatCpu(const Case &c, int times) {
  const Problem<T> p = makeProblem<T>(c);
  std::vector<std::vector<T>> outs;
  for (int i = 0; i < times; ++i)
    outs.push_back(cpuOutput(p));
  return outs;
}

/// Whether two outputs are the same bits.
template <typename T>
bool sameBits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](T x, T y) {
           return std::memcmp(&x, &y, sizeof(T)) == 0;
         });
}

/// The table's one-head cases with both head flags (headFlagsOneHead*),
/// each with the same problem without the flags; both deterministic, so
/// that colliding rows add in one order.
std::vector<std::pair<Problem<float>, Problem<float>>> oneHeadFlagPairs() {
  std::vector<std::pair<Problem<float>, Problem<float>>> pairs;
  for (const Case &c : cases()) {
    if (c.H != 1 || !c.xSharedByHeads || !c.wHeadsInColumns)
      continue;
    Problem<float> with = makeProblem<float>(c);
    with.c.deterministic = true;
    Problem<float> without = with;
    without.c.xSharedByHeads = without.c.wHeadsInColumns = false;
    pairs.emplace_back(std::move(with), std::move(without));
  }
  return pairs;
}

class SegmentGemm : public ::testing::TestWithParam<Case> {};

TEST_P(SegmentGemm, DeterministicIsBitwiseRepeatableCpu) {
  if (!GetParam().deterministic)
    GTEST_SKIP() << "not a deterministic case";
  const auto outs = repeatCpu<float>(GetParam(), 3);
  EXPECT_TRUE(sameBits(outs[0], outs[1]));
  EXPECT_TRUE(sameBits(outs[0], outs[2]));
}

TEST_P(SegmentGemm, Cpu) { runCpu<float>(GetParam(), "cpu"); }

TEST_P(SegmentGemm, CpuDouble) { runCpu<double>(GetParam(), "cpu double"); }

#ifdef HECTOR_TEMPLATES_CUDA
bool haveGpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

/// Device copies of a problem's arrays, freed on destruction.
class DeviceArrays {
public:
  ~DeviceArrays() {
    for (void *p : owned_)
      cudaFree(p);
  }
  template <typename T> T *copy(const std::vector<T> &v) {
    if (v.empty())
      return nullptr;
    void *d = nullptr;
    if (cudaMalloc(&d, v.size() * sizeof(T)) != cudaSuccess)
      throw std::runtime_error("cudaMalloc failed");
    owned_.push_back(d);
    if (cudaMemcpy(d, v.data(), v.size() * sizeof(T),
                   cudaMemcpyHostToDevice) != cudaSuccess)
      throw std::runtime_error("cudaMemcpy failed");
    return static_cast<T *>(d);
  }

private:
  std::vector<void *> owned_;
};

/// The output of one CUDA call on a problem (starting from Y0), in `got`.
template <typename T>
void cudaOutput(const Problem<T> &p, std::vector<T> &got) {
  DeviceArrays dev;
  T *out = dev.copy(p.Y0);
  auto device = [&](const auto &v) { return dev.copy(v); };
  ASSERT_EQ(launchSegmentGemm(makeArgs(p, device, out), nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  got.assign(p.Y0.size(), T(0));
  if (!got.empty()) {
    ASSERT_EQ(cudaMemcpy(got.data(), out, got.size() * sizeof(T),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
  }
}

template <typename T> void runCuda(const Case &c, const std::string &what) {
  const Problem<T> p = makeProblem<T>(c);
  std::vector<T> got;
  ASSERT_NO_FATAL_FAILURE(cudaOutput(p, got));
  // Only the float tensor-core kernel rounds to TF32; double ignores it.
  const bool tf32 = c.tf32 && std::is_same_v<T, float>;
  expectOutputs(got, p, what, tf32 ? kTf32Tolerance : Precision<T>::tolerance);
}

TEST_P(SegmentGemm, Cuda) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  runCuda<float>(GetParam(), "cuda");
}

TEST_P(SegmentGemm, DeterministicIsBitwiseRepeatableCuda) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  const Case &c = GetParam();
  const Problem<float> p = makeProblem<float>(c);
  // Summed rows without atomics must be reproducible too (SegmentGemm.h:
  // only atomic calls may differ between runs): the tensor-core kernel
  // adds a row's partial sums in a fixed order.
  if (!c.deterministic && !(c.summedRows > 0 && !p.atomic))
    GTEST_SKIP() << "not a deterministic case";
  std::vector<std::vector<float>> outs(3);
  for (std::vector<float> &out : outs)
    ASSERT_NO_FATAL_FAILURE(cudaOutput(p, out));
  EXPECT_TRUE(sameBits(outs[0], outs[1]));
  EXPECT_TRUE(sameBits(outs[0], outs[2]));
}

/// Deterministic atomic calls add in place while this object lives, as
/// they do where their workspace cannot be had
/// (setDeterministicWorkspaceForTesting).
class InPlaceDeterministicAdds {
public:
  InPlaceDeterministicAdds()
      : before_(setDeterministicWorkspaceForTesting(false)) {}
  ~InPlaceDeterministicAdds() { setDeterministicWorkspaceForTesting(before_); }
  InPlaceDeterministicAdds(const InPlaceDeterministicAdds &) = delete;
  InPlaceDeterministicAdds &
  operator=(const InPlaceDeterministicAdds &) = delete;

private:
  bool before_;
};

// The deterministic cases take the workspace path (values, a sort, ordered
// adds) in Cuda above; here the in-place kernels it falls back to, against
// the same reference, and repeatable.
TEST_P(SegmentGemm, DeterministicInPlaceCuda) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  const Case &c = GetParam();
  if (!c.deterministic || c.mode != Mode::Linear)
    GTEST_SKIP() << "not a deterministic linear case";
  InPlaceDeterministicAdds inPlace;
  runCuda<float>(c, "cuda in place");
  const Problem<float> p = makeProblem<float>(c);
  std::vector<float> first, second;
  ASSERT_NO_FATAL_FAILURE(cudaOutput(p, first));
  ASSERT_NO_FATAL_FAILURE(cudaOutput(p, second));
  EXPECT_TRUE(sameBits(first, second));
}

// Rows sorted by output row within each segment: the in-place ordered
// path's per-segment runs add every output row's values in the order the
// one-thread-a-column kernel does, bit for bit.
TEST_P(SegmentGemm, OrderedRunsAddAsTheOrderedKernelDoes) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  const Case &c = GetParam();
  if (!c.deterministic || c.scatter != Scatter::CollideSortedInSegments)
    GTEST_SKIP() << "not a sorted deterministic case";
  InPlaceDeterministicAdds inPlace;
  Case unsorted = c;
  unsorted.scatter = Scatter::Collide; // same data, flag off
  const Problem<float> p = makeProblem<float>(c);
  Problem<float> q = p;
  q.c = unsorted;
  std::vector<float> runs, walk;
  ASSERT_NO_FATAL_FAILURE(cudaOutput(p, runs));
  ASSERT_NO_FATAL_FAILURE(cudaOutput(q, walk));
  EXPECT_TRUE(sameBits(runs, walk));
}

// Double takes the general kernels for every shape (the vec* cases included)
// and atomicAdd on double for the colliding ones.
TEST_P(SegmentGemm, CudaDouble) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  runCuda<double>(GetParam(), "cuda double");
}

TEST(SegmentGemmCuda, HeadFlagsChangeNothingWithOneHead) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  const auto pairs = oneHeadFlagPairs();
  ASSERT_EQ(pairs.size(), 2u);
  for (const auto &[with, without] : pairs) {
    std::vector<float> got, want;
    ASSERT_NO_FATAL_FAILURE(cudaOutput(with, got));
    ASSERT_NO_FATAL_FAILURE(cudaOutput(without, want));
    EXPECT_TRUE(sameBits(got, want)) << with.c.name;
  }
}

/// The cases with a gather order, run in it and without it: each row's
/// value is computed the same way in either order, so the outputs agree
/// bit for bit (the dot kernel takes the order; the wide case's kernel
/// ignores it).
TEST(SegmentGemmCuda, GatherOrderChangesNoBit) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  int checked = 0;
  for (const Case &c : cases()) {
    if (!c.gatherOrder)
      continue;
    const Problem<float> p = makeProblem<float>(c);
    Problem<float> plain = p;
    plain.gatherOrderRowIds.clear();
    plain.gatherOrderGather.clear();
    plain.gatherOrderRowType.clear();
    std::vector<float> ordered, unordered;
    ASSERT_NO_FATAL_FAILURE(cudaOutput(p, ordered));
    ASSERT_NO_FATAL_FAILURE(cudaOutput(plain, unordered));
    EXPECT_TRUE(sameBits(ordered, unordered)) << c.name;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

/// The dot cases the lean kernel takes (linearDot64Kernel), run by it and
/// by linearDotKernel (setLeanDotForTesting): both add each row's products
/// in the same order, so the outputs agree bit for bit.
TEST(SegmentGemmCuda, LeanDotMatchesTheGeneralDotKernelBitwise) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  int checked = 0;
  for (const Case &c : cases()) {
    // The calls linearDot64Fits takes (either run of any other case goes
    // the same way).
    if (c.mode != Mode::Linear || c.N != 1 || c.K != 64 || c.H != 1 ||
        c.rowIds != RowIds::None || c.epilogue != EpilogueOp::None ||
        c.accumulate || c.bias != Bias::None || c.summedRows != 0 ||
        c.yParts != 1 || c.rowDotN != 0 || c.gatedMix || c.geluInput)
      continue;
    const Problem<float> p = makeProblem<float>(c);
    std::vector<float> lean, general;
    const bool before = setLeanDotForTesting(true);
    ASSERT_NO_FATAL_FAILURE(cudaOutput(p, lean));
    setLeanDotForTesting(false);
    ASSERT_NO_FATAL_FAILURE(cudaOutput(p, general));
    setLeanDotForTesting(before);
    EXPECT_TRUE(sameBits(lean, general)) << c.name;
    ++checked;
  }
  EXPECT_GE(checked, 4);
}

/// The dense-rows kernel's calls: each case of the table it takes, run
/// by it (with the windows of a TF32 call in one block and in blocks of
/// their own) and by the tiled kernel. All round X and W to TF32 (and
/// split them into heads and tails for exact products) the same way and
/// add the same products in the same order, then the bias, so their
/// outputs agree bit for bit.
TEST(SegmentGemmCuda, DenseRowsMatchTheTiledKernelBitwise) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  int checked = 0;
  for (const Case &c : cases()) {
    if (c.name.rfind("dense", 0) != 0)
      continue;
    const Problem<float> p = makeProblem<float>(c);
    std::vector<float> together, apart, tiled;
    const bool before = setDenseRowsForTesting(true);
    const bool beforeTogether = setDenseWindowsTogetherForTesting(true);
    ASSERT_NO_FATAL_FAILURE(cudaOutput(p, together));
    setDenseWindowsTogetherForTesting(false);
    ASSERT_NO_FATAL_FAILURE(cudaOutput(p, apart));
    setDenseWindowsTogetherForTesting(beforeTogether);
    setDenseRowsForTesting(false);
    ASSERT_NO_FATAL_FAILURE(cudaOutput(p, tiled));
    setDenseRowsForTesting(before);
    EXPECT_TRUE(sameBits(together, tiled)) << c.name << ": windows together";
    EXPECT_TRUE(sameBits(apart, tiled)) << c.name << ": windows apart";
    ++checked;
  }
  EXPECT_EQ(checked, 14);
}

/// Which calls the dense-rows kernel takes (DenseRowsMma.h): a dense call
/// of K = 64 and 64, 128 or 256 columns, TF32 or exact, with or without a
/// bias or a transposed W, with up to 32 slices as segments, output parts
/// a window wide or wider, gelu input and a gated mix beside a bias; not
/// one with anything that reads or
/// writes rows elsewhere, weighs them, slices them by a type array, or
/// needs other shapes. The pointers are only checked for alignment, never
/// read.
TEST(SegmentGemmCuda, DenseRowsTakeOnlyDenseCalls) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  int major = 0;
  ASSERT_EQ(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0),
      cudaSuccess);
  if (major < 8)
    GTEST_SKIP() << "no TF32 tensor cores";
  alignas(16) static float words[16];
  alignas(16) static int64_t ids[4];
  SegmentGemmArgs dense;
  dense.M = 1000;
  dense.K = 64;
  dense.N = 64;
  dense.X = dense.W = words;
  dense.Y = words;
  dense.tf32 = true;
  const bool before = setDenseRowsForTesting(true);
  EXPECT_TRUE(denseRowsMmaFits(dense));
  for (int64_t n : {128, 256}) {
    SegmentGemmArgs a = dense;
    a.N = n;
    a.bias = words;
    a.transposeW = true;
    EXPECT_TRUE(denseRowsMmaFits(a)) << n;
    a.tf32 = false;
    EXPECT_TRUE(denseRowsMmaFits(a)) << n << " exact";
  }
  {
    // Node types as segments, a bias each, and a window an output part
    // (HGT's kqv projection); up to 32 slices.
    SegmentGemmArgs a = dense;
    a.N = 192;
    a.numSlices = 7;
    a.segmentPtr = ids;
    a.bias = words;
    a.biasPerSlice = true;
    a.yParts = 3;
    a.yPart[0] = a.yPart[1] = a.yPart[2] = words;
    EXPECT_TRUE(denseRowsMmaFits(a)) << "segments and parts";
    a.numSlices = 32;
    EXPECT_TRUE(denseRowsMmaFits(a)) << "32 segments";
  }
  {
    // HGT's output projection: gelu input, and a gated mix beside a bias.
    SegmentGemmArgs a = dense;
    a.inputOp = InputOp::Gelu;
    EXPECT_TRUE(denseRowsMmaFits(a)) << "gelu input";
    a.bias = words;
    a.mixRows = a.mixGate = words;
    EXPECT_TRUE(denseRowsMmaFits(a)) << "gated mix and bias";
  }
  const std::vector<std::pair<const char *, void (*)(SegmentGemmArgs &)>>
      others = {
          {"K 32", [](SegmentGemmArgs &a) { a.K = 32; }},
          {"N 96", [](SegmentGemmArgs &a) { a.N = 96; }},
          {"N 320", [](SegmentGemmArgs &a) { a.N = 320; }},
          {"two heads", [](SegmentGemmArgs &a) { a.H = 2; }},
          {"row ids", [](SegmentGemmArgs &a) { a.rowIds = ids; }},
          {"gather", [](SegmentGemmArgs &a) { a.gather = ids; }},
          {"scatter", [](SegmentGemmArgs &a) { a.scatter = ids; }},
          {"summed rows",
           [](SegmentGemmArgs &a) {
             a.sumPtr = ids;
             a.sumRows = ids;
           }},
          {"two slices",
           [](SegmentGemmArgs &a) {
             a.numSlices = 2;
             a.rowType = ids;
           }},
          {"33 segments",
           [](SegmentGemmArgs &a) {
             a.numSlices = 33;
             a.segmentPtr = ids;
           }},
          {"two slices, no segments",
           [](SegmentGemmArgs &a) { a.numSlices = 2; }},
          {"accumulate", [](SegmentGemmArgs &a) { a.accumulate = true; }},
          {"atomic",
           [](SegmentGemmArgs &a) {
             a.accumulate = true;
             a.atomic = true;
           }},
          {"scale",
           [](SegmentGemmArgs &a) {
             a.epilogue = EpilogueOp::Mul;
             a.scale = words;
           }},
          {"gated mix without a bias",
           [](SegmentGemmArgs &a) { a.mixRows = a.mixGate = words; }},
          {"output parts narrower than a window",
           [](SegmentGemmArgs &a) {
             a.N = 128;
             a.yParts = 4;
             a.yPart[0] = a.yPart[1] = a.yPart[2] = a.yPart[3] = words;
           }},
          {"unaligned X", [](SegmentGemmArgs &a) { a.X = words + 1; }},
      };
  for (const auto &[what, change] : others) {
    SegmentGemmArgs a = dense;
    change(a);
    EXPECT_FALSE(denseRowsMmaFits(a)) << what;
  }
  setDenseRowsForTesting(false);
  EXPECT_FALSE(denseRowsMmaFits(dense)) << "switched off";
  setDenseRowsForTesting(before);
}

TEST(SegmentGemmCudaArgs, RejectsInconsistentArgs) {
  SegmentGemmArgs a;
  a.M = 4;
  a.K = a.N = 2;
  a.atomic = true; // without accumulate
  EXPECT_EQ(launchSegmentGemm(a, nullptr), cudaErrorInvalidValue);
}

TEST(SegmentGemmCudaArgs, RejectsInconsistentDoubleArgs) {
  SegmentGemmArgsT<double> a;
  a.M = 4;
  a.K = a.N = 2;
  a.atomic = true; // without accumulate
  EXPECT_EQ(launchSegmentGemm(a, nullptr), cudaErrorInvalidValue);
}
#endif

TEST(SegmentGemmArgsCheck, ReportsInconsistencies) {
  SegmentGemmArgs a;
  a.M = 4;
  a.K = a.N = 2;
  float buf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  a.X = a.W = buf;
  a.Y = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  a.atomic = true;
  EXPECT_NE(checkSegmentGemmArgs(a), "");
  EXPECT_THROW(segmentGemmCpu(a), std::invalid_argument);
  a.atomic = false;
  a.epilogue = EpilogueOp::Mul; // no scale
  EXPECT_NE(checkSegmentGemmArgs(a), "");
  a.epilogue = EpilogueOp::None;
  int64_t idx[5] = {0, 1, 2, 3, 4};
  a.segmentPtr = idx;
  a.rowType = idx;
  EXPECT_NE(checkSegmentGemmArgs(a), "");
}

TEST(SegmentGemmArgsCheck, ChecksGatherOrders) {
  SegmentGemmArgs a;
  a.M = 2;
  a.K = a.N = 2;
  a.numSlices = 2;
  float buf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  int64_t ptr[3] = {0, 1, 2}, gather[2] = {1, 0}, order[2] = {1, 0},
          orderGather[2] = {0, 1}, types[2] = {1, 0};
  a.X = a.W = a.Y = buf;
  a.segmentPtr = ptr;
  a.gather = gather;
  a.gatherOrderRowIds = order;
  a.gatherOrderGather = orderGather;
  a.gatherOrderRowType = types;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  const std::string together = "gatherOrderRowIds, gatherOrderGather and "
                               "gatherOrderRowType go together";
  a.gatherOrderRowType = nullptr;
  EXPECT_EQ(checkSegmentGemmArgs(a), together);
  a.gatherOrderRowType = types;
  a.gatherOrderGather = nullptr;
  EXPECT_EQ(checkSegmentGemmArgs(a), together);
  // No rows: an empty array may have no address.
  a.M = 0;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  a.M = 2;
  a.gatherOrderGather = orderGather;
  const std::string needs = "a gather order (gatherOrderRowIds) needs linear "
                            "mode with segmentPtr and gather, and no rowIds, "
                            "scatter or scaleGather";
  a.rowIds = order;
  EXPECT_EQ(checkSegmentGemmArgs(a), needs);
  a.rowIds = nullptr;
  a.scatter = order;
  EXPECT_EQ(checkSegmentGemmArgs(a), needs);
  a.scatter = nullptr;
  a.gather = nullptr;
  EXPECT_EQ(checkSegmentGemmArgs(a), needs);
  a.gather = gather;
  a.segmentPtr = nullptr;
  EXPECT_NE(checkSegmentGemmArgs(a), "");
  EXPECT_THROW(segmentGemmCpu(a), std::invalid_argument);
}

TEST(SegmentGemmArgsCheck, ChecksSummedRows) {
  SegmentGemmArgs a;
  a.M = 2;
  a.K = a.N = 2;
  float buf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  int64_t ptr[3] = {0, 1, 3}, rows[3] = {1, 0, 1};
  a.X = a.W = a.Y = buf;
  a.sumPtr = ptr;
  a.sumRows = rows;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  a.sumRows = nullptr;
  EXPECT_EQ(checkSegmentGemmArgs(a), "sumPtr and sumRows go together");
  // No rows: a graph without edges has no chunks, and its empty entry
  // array no address; nothing is read or written.
  a.M = 0;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  EXPECT_NO_THROW(segmentGemmCpu(a));
  a.M = 2;
  a.sumRows = rows;
  a.gather = rows;
  EXPECT_EQ(checkSegmentGemmArgs(a),
            "sumPtr (summed rows) and gather are exclusive");
  a.gather = nullptr;
  a.inputOp = InputOp::Gelu;
  EXPECT_EQ(checkSegmentGemmArgs(a),
            "an input op (inputOp) only in linear mode without summed rows");
  a.inputOp = InputOp::None;
  a.mode = Mode::Outer;
  a.B = a.dW = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a),
            "summed rows (sumPtr) only in linear mode");
  EXPECT_THROW(segmentGemmCpu(a), std::invalid_argument);
  // Weights weigh summed rows' entries: without sumPtr there are none.
  a.mode = Mode::Linear;
  a.sumPtr = a.sumRows = nullptr;
  a.sumWeights = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a),
            "sumWeights weigh summed rows: they need sumPtr");
  EXPECT_THROW(segmentGemmCpu(a), std::invalid_argument);
}

TEST(SegmentGemmCpu, WeightedSummedRowsAddEachRowTimesItsWeight) {
  // Row 0 sums X rows 1 and 0 with weights 0.5 and -2, row 1 sums row 1
  // with weight 3; W is the identity, so Y holds the weighted sums.
  SegmentGemmArgs a;
  a.M = 2;
  a.K = a.N = 2;
  const float X[4] = {1, 2, 10, 20}, W[4] = {1, 0, 0, 1};
  const float weights[3] = {0.5f, -2.f, 3.f};
  const int64_t ptr[3] = {0, 2, 3}, rows[3] = {1, 0, 1};
  float Y[4] = {};
  a.X = X;
  a.W = W;
  a.Y = Y;
  a.sumPtr = ptr;
  a.sumRows = rows;
  a.sumWeights = weights;
  segmentGemmCpu(a);
  EXPECT_FLOAT_EQ(Y[0], 0.5f * 10 - 2.f * 1);
  EXPECT_FLOAT_EQ(Y[1], 0.5f * 20 - 2.f * 2);
  EXPECT_FLOAT_EQ(Y[2], 30.f);
  EXPECT_FLOAT_EQ(Y[3], 60.f);
}

TEST(SegmentGemmCpu, WeightIdsPickEachEntrysWeightRow) {
  // As above, but the entries' weights are rows 2, 0 and 2 of the weights
  // (row 1, 7, is read by none): row 0 sums X rows 1 and 0 with weights
  // -2 and 0.5, row 1 sums row 1 with weight -2.
  SegmentGemmArgs a;
  a.M = 2;
  a.K = a.N = 2;
  const float X[4] = {1, 2, 10, 20}, W[4] = {1, 0, 0, 1};
  const float weights[3] = {0.5f, 7.f, -2.f};
  const int64_t ptr[3] = {0, 2, 3}, rows[3] = {1, 0, 1}, ids[3] = {2, 0, 2};
  float Y[4] = {};
  a.X = X;
  a.W = W;
  a.Y = Y;
  a.sumPtr = ptr;
  a.sumRows = rows;
  a.sumWeights = weights;
  a.sumWeightIds = ids;
  segmentGemmCpu(a);
  EXPECT_EQ(Y[0], -2.f * 10 + 0.5f * 1);
  EXPECT_EQ(Y[1], -2.f * 20 + 0.5f * 2);
  EXPECT_EQ(Y[2], -20.f);
  EXPECT_EQ(Y[3], -40.f);
}

TEST(SegmentGemmCpu, HeadsShareXRowsAndTakeWColumns) {
  // Two heads, K = N = 2: one X row [1, 2] for both heads, and one
  // [K, H*N] weight whose columns 0-1 are head 0's and 2-3 head 1's, so
  // the output row is x times the whole weight: [11, 14, 17, 20].
  SegmentGemmArgs a;
  a.M = 1;
  a.K = a.N = 2;
  a.H = 2;
  const float X[2] = {1, 2};
  const float W[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float Y[4] = {};
  a.X = X;
  a.W = W;
  a.Y = Y;
  a.xSharedByHeads = a.wHeadsInColumns = true;
  segmentGemmCpu(a);
  EXPECT_EQ(Y[0], 1.f * 1 + 2.f * 5);
  EXPECT_EQ(Y[1], 1.f * 2 + 2.f * 6);
  EXPECT_EQ(Y[2], 1.f * 3 + 2.f * 7);
  EXPECT_EQ(Y[3], 1.f * 4 + 2.f * 8);
  // Summed rows weighted per head, the weights at their ids: entries X
  // rows 0 = [1, 2] and 1 = [3, 1] with weight rows 1 = (1, 2) and
  // 0 = (-1, 0.5). Head 0's input is 1 * [1, 2] - 1 * [3, 1] = [-2, 1],
  // head 1's 2 * [1, 2] + 0.5 * [3, 1] = [3.5, 4.5]; each times its own
  // columns of W.
  const float X2[4] = {1, 2, 3, 1};
  const float weights[4] = {-1.f, 0.5f, 1.f, 2.f};
  const int64_t ptr[2] = {0, 2}, rows[2] = {0, 1}, ids[2] = {1, 0};
  a.X = X2;
  a.sumPtr = ptr;
  a.sumRows = rows;
  a.sumWeights = weights;
  a.sumWeightIds = ids;
  segmentGemmCpu(a);
  EXPECT_EQ(Y[0], -2.f * 1 + 1.f * 5);
  EXPECT_EQ(Y[1], -2.f * 2 + 1.f * 6);
  EXPECT_EQ(Y[2], 3.5f * 3 + 4.5f * 7);
  EXPECT_EQ(Y[3], 3.5f * 4 + 4.5f * 8);
}

TEST(SegmentGemmArgsCheck, ChecksWeightIdsAndHeadLayouts) {
  SegmentGemmArgs a;
  a.M = 2;
  a.K = a.N = 2;
  a.H = 2;
  float buf[16] = {};
  int64_t ptr[3] = {0, 1, 3}, rows[3] = {1, 0, 1};
  a.X = a.W = a.Y = buf;
  a.sumPtr = ptr;
  a.sumRows = rows;
  a.sumWeightIds = rows;
  EXPECT_EQ(checkSegmentGemmArgs(a),
            "sumWeightIds pick rows of sumWeights: they need sumWeights");
  EXPECT_THROW(segmentGemmCpu(a), std::invalid_argument);
  a.sumWeights = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  a.sumPtr = a.sumRows = nullptr;
  a.sumWeights = nullptr;
  a.sumWeightIds = nullptr;
  a.xSharedByHeads = true;
  a.wHeadsInColumns = true;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  // Head columns are columns of a [K, H*N] weight: not of a transposed one.
  a.transposeW = true;
  EXPECT_EQ(checkSegmentGemmArgs(a), "wHeadsInColumns needs transposeW off");
  EXPECT_THROW(segmentGemmCpu(a), std::invalid_argument);
  a.wHeadsInColumns = false;
  EXPECT_EQ(checkSegmentGemmArgs(a), ""); // shared X rows: either layout
  // Outer mode's dW keeps the per-head layouts, with either flag.
  a.transposeW = false;
  a.mode = Mode::Outer;
  a.B = a.dW = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a),
            "xSharedByHeads and wHeadsInColumns only in linear mode");
  EXPECT_THROW(segmentGemmCpu(a), std::invalid_argument);
  a.xSharedByHeads = false;
  a.wHeadsInColumns = true;
  EXPECT_EQ(checkSegmentGemmArgs(a),
            "xSharedByHeads and wHeadsInColumns only in linear mode");
  a.wHeadsInColumns = false;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
}

TEST(SegmentGemmCpu, HeadFlagsChangeNothingWithOneHead) {
  const auto pairs = oneHeadFlagPairs();
  ASSERT_EQ(pairs.size(), 2u);
  for (const auto &[with, without] : pairs)
    EXPECT_TRUE(sameBits(cpuOutput(with), cpuOutput(without))) << with.c.name;
}

TEST(SegmentGemmArgsCheck, ChecksBiasAndOutputParts) {
  SegmentGemmArgs a;
  a.M = 4;
  a.K = 2;
  a.N = 6;
  float buf[24] = {};
  a.X = a.W = buf;
  a.bias = buf;
  a.yParts = 3;
  a.yPart[0] = a.yPart[1] = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a), "output part 2 is missing");
  a.yPart[2] = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  a.N = 7;
  EXPECT_EQ(checkSegmentGemmArgs(a),
            "output parts need H = 1 and N a multiple of yParts");
  a.N = 6;
  a.H = 2;
  EXPECT_EQ(checkSegmentGemmArgs(a),
            "output parts need H = 1 and N a multiple of yParts");
  a.H = 1;
  a.yParts = kMaxYParts + 1;
  EXPECT_EQ(checkSegmentGemmArgs(a), "yParts must be 1 to 4");
  a.yParts = 1;
  EXPECT_EQ(checkSegmentGemmArgs(a), "Y is missing");
  a.Y = buf;
  a.accumulate = true; // a bias with accumulate: each row adds it
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  a.yParts = 3;
  a.yPart[2] = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a), "output parts need accumulate off");
  EXPECT_THROW(segmentGemmCpu(a), std::invalid_argument);
  a.yParts = 1;
  a.accumulate = false;
  a.mode = Mode::Outer;
  a.B = a.dW = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a), "no bias or output parts in outer mode");
}

TEST(SegmentGemmArgsCheck, ChecksRowDots) {
  SegmentGemmArgs a;
  a.M = 4;
  a.K = 2;
  a.N = 6;
  float buf[24] = {};
  a.X = a.W = a.Y = buf;
  a.rowDotY = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a),
            "a row dot needs rowDotY, rowDotW and rowDotN >= 1");
  a.rowDotW = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a),
            "a row dot needs rowDotY, rowDotW and rowDotN >= 1");
  a.rowDotN = 2;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  a.accumulate = true;
  EXPECT_EQ(checkSegmentGemmArgs(a),
            "a row dot needs accumulate off and one output buffer");
  EXPECT_THROW(segmentGemmCpu(a), std::invalid_argument);
  a.accumulate = false;
  a.yParts = 2;
  a.yPart[0] = a.yPart[1] = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a),
            "a row dot needs accumulate off and one output buffer");
  a.yParts = 1;
  a.mode = Mode::Outer;
  a.B = a.dW = buf;
  a.accumulate = true;
  EXPECT_EQ(checkSegmentGemmArgs(a), "no row dot in outer mode");
}

TEST(SegmentGemmArgsCheck, ChecksGatedMixes) {
  SegmentGemmArgs a;
  a.M = 4;
  a.K = 2;
  a.N = 6;
  float buf[24] = {};
  a.X = a.W = a.Y = buf;
  a.mixRows = buf;
  const std::string needsBoth = "a gated mix needs both mixRows and mixGate";
  EXPECT_EQ(checkSegmentGemmArgs(a), needsBoth);
  a.mixRows = nullptr;
  a.mixGate = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a), needsBoth);
  a.mixRows = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  const std::string plainOnly =
      "a gated mix needs accumulate off, one output buffer, and no epilogue "
      "scale, row dot or summed rows";
  a.accumulate = true;
  EXPECT_EQ(checkSegmentGemmArgs(a), plainOnly);
  EXPECT_THROW(segmentGemmCpu(a), std::invalid_argument);
  a.accumulate = false;
  a.epilogue = EpilogueOp::Mul;
  a.scale = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a), plainOnly);
  a.epilogue = EpilogueOp::None;
  a.scale = nullptr;
  const int64_t ptr[5] = {0, 1, 2, 3, 4}, rows[4] = {0, 1, 2, 3};
  a.sumPtr = ptr;
  a.sumRows = rows;
  EXPECT_EQ(checkSegmentGemmArgs(a), plainOnly);
  a.sumPtr = nullptr;
  a.sumRows = nullptr;
  a.rowDotY = buf;
  a.rowDotW = buf;
  a.rowDotN = 1;
  EXPECT_EQ(checkSegmentGemmArgs(a), plainOnly);
  a.rowDotY = nullptr;
  a.rowDotW = nullptr;
  a.rowDotN = 0;
  a.mode = Mode::Outer;
  a.B = a.dW = buf;
  a.accumulate = true;
  EXPECT_EQ(checkSegmentGemmArgs(a), "no gated mix in outer mode");
}

/// rowDotCall: the dot reads the rows back where the call wrote them.
TEST(SegmentGemmArgsCheck, RowDotCallReadsTheOutputRows) {
  SegmentGemmArgs a;
  a.M = 5;
  a.K = 3;
  a.N = 4;
  a.H = 2;
  const int64_t ids[5] = {4, 0, 3, 1, 2}, out[5] = {9, 7, 5, 3, 1};
  float buf[8] = {}, dots[16] = {};
  a.rowIds = ids;
  a.scatter = out;
  a.Y = buf;
  a.rowDotW = buf + 1;
  a.rowDotY = dots;
  a.rowDotN = 3;
  a.tf32 = true;
  const SegmentGemmArgs d = rowDotCall(a);
  EXPECT_EQ(d.M, 5);
  EXPECT_EQ(d.K, 8); // H * N
  EXPECT_EQ(d.N, 3);
  EXPECT_EQ(d.H, 1);
  EXPECT_EQ(d.X, buf);
  EXPECT_EQ(d.gather, out);
  EXPECT_EQ(d.scatter, out);
  EXPECT_EQ(d.rowIds, ids);
  EXPECT_EQ(d.W, buf + 1);
  EXPECT_EQ(d.Y, dots);
  EXPECT_EQ(d.rowDotY, nullptr);
  EXPECT_TRUE(d.tf32);
  const SegmentGemmArgs w = withoutRowDot(a);
  EXPECT_EQ(w.rowDotY, nullptr);
  EXPECT_EQ(w.rowDotW, nullptr);
  EXPECT_EQ(w.rowDotN, 0);
  EXPECT_EQ(w.Y, buf);
}

TEST(SegmentGemmArgsCheck, AcceptsRowIdsWithEitherSliceSource) {
  SegmentGemmArgs a;
  a.M = 4;
  a.K = a.N = 2;
  float buf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  a.X = a.W = buf;
  a.Y = buf;
  int64_t ids[4] = {3, 1, 0, 2}, ptr[2] = {0, 4}, types[4] = {0, 0, 0, 0};
  a.rowIds = ids;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  a.segmentPtr = ptr;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  a.segmentPtr = nullptr;
  a.rowType = types;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  a.segmentPtr = ptr; // both slice sources: still rejected
  EXPECT_EQ(checkSegmentGemmArgs(a), "segmentPtr and rowType are exclusive");
}

TEST(SegmentGemmArgsCheck, ChecksDoubleArgsLikeFloat) {
  SegmentGemmArgsT<double> a;
  a.M = 4;
  a.K = a.N = 2;
  double buf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  a.X = a.W = buf;
  a.Y = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  a.atomic = true;
  EXPECT_EQ(checkSegmentGemmArgs(a), "atomic needs accumulate");
  EXPECT_THROW(segmentGemmCpu(a), std::invalid_argument);
  a.atomic = false;
  a.mode = Mode::Outer; // no B, no dW
  EXPECT_EQ(checkSegmentGemmArgs(a), "B is missing (outer mode)");
}

// Inputs float cannot hold: (1 + 2^-30) * 1 + (1 - 2^-30) * -1 is exactly
// 2^-29 in double and 0 if anything on the double path went through float.
TEST(SegmentGemmDouble, KeepsDoublePrecisionCpu) {
  const double e = std::ldexp(1.0, -30);
  std::vector<double> X = {1 + e, 1 - e}, W = {1, -1}, Y = {0};
  SegmentGemmArgsT<double> a;
  a.M = 1;
  a.K = 2;
  a.N = 1;
  a.X = X.data();
  a.W = W.data();
  a.Y = Y.data();
  segmentGemmCpu(a);
  EXPECT_EQ(Y[0], 2 * e);
}

INSTANTIATE_TEST_SUITE_P(Table, SegmentGemm, ::testing::ValuesIn(cases()),
                         [](const auto &info) { return info.param.name; });

} // namespace
} // namespace hector::templates
