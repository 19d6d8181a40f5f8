// SegmentGemm.h: one call of the GEMM template (hector.txt section 3.3,
// Algorithm 1), described by raw pointers and sizes, and its CPU and CUDA
// implementations. No torch here: the runtime and the generated code fill a
// SegmentGemmArgs (float) or SegmentGemmArgsT<double> from their tensors and
// call one of the launchers.
//
// Rows. Logical row r in [0, M) stands for the row id
//   id = rowIds ? rowIds[r] : r.
// Segments (segmentPtr) are over logical rows r, so that rows can be visited
// in an order sorted by slice; everything else that is per row (gather,
// scatter, scaleGather, gatherB, rowType, and the identity accesses X[id],
// Y[id], scale[id], B[id] when the list is absent) is indexed by the id.
// So the code generator can pass the graph's plain per-edge arrays (src,
// dst, ...) as gather / scatter lists and still iterate the edges in
// etype-sorted order: rowIds = etype-sorted edge ids, segmentPtr = etype_ptr.
// The per-row lists then need an entry for every id that rowIds holds
// (without rowIds, for every r < M).
//
// Linear mode (one row r in [0, M) with id as above, one head h in [0, H)):
//   s   = slice of r     (segmentPtr: the s with ptr[s] <= r < ptr[s+1];
//                         rowType: rowType[id]; neither: 0)
//   x   = X[gather ? gather[id] : id][h*K .. h*K+K)
//         (xSharedByHeads: [0 .. K) for every head)
//         (with sumPtr: the sum of X[sumRows[j]][h*K ..+K) over
//          j in [sumPtr[id], sumPtr[id+1]), each times
//          sumWeights[(sumWeightIds ? sumWeightIds[j] : j) * H + h] when
//          there are weights)
//   y   = x * W[s][h]    (W[s][h] is [K, N], or [N, K] when transposeW;
//                         wHeadsInColumns: columns [h*N, h*N+N) of W[s],
//                         one [K, H*N] matrix)
//   y  += bias[s][h] (biasPerSlice) or bias[h]   (when there is a bias)
//   y  *= scale[i] or y /= scale[i], i = (scaleGather ? scaleGather[id] : id)
//         (times H plus h when scalePerHead)
//   Y[scatter ? scatter[id] : id][h*N .. h*N+N)  = y   (or += y: accumulate;
//         with atomic adds when atomic); with yParts > 1 (H = 1), columns
//         [p*w, p*w + w) of the row go to yPart[p] instead (w = N / yParts)
//   with rowDotY: once the whole output row y (all heads) is written,
//   rowDotY[scatter ? scatter[id] : id][0 .. D) = y * rowDotW
//         (rowDotW is [H*N, D], D = rowDotN: a second, narrow linear of the
//         finished row, as RGAT's attention term outj * k)
// Outer mode (weight gradients):
//   dW[s][h] (= or +=) sum over rows r of slice s of
//            outer(X[gather ? gather[id] : id][h*K ..+K),
//                  B[gatherB ? gatherB[id] : id][h*N ..+N))
//   dW[s][h] is [K, N], or [N, K] when transposeW (the layout of the weight
//   whose gradient it is). Slices with no rows get 0 (or are unchanged with
//   accumulate).
//
// Scalar type. SegmentGemmArgsT<T> takes T = float or double for X, W, Y,
// scale, B and dW (one T per call; the index lists stay int64). Sums are
// accumulated in T. SegmentGemmArgs is the float one, which existing callers
// use unchanged; the double one serves fp64 layers (torch gradcheck).
//
// Layouts: X rows are H*K scalars (K with xSharedByHeads), Y and B rows H*N
// scalars, all dense. W (or dW) holds numSlices slices of H*K*N scalars
// each: H matrices [K, N] (or [N, K]) one after another, or with
// wHeadsInColumns one [K, H*N] matrix whose columns [h*N, h*N+N) are head
// h's. With both flags, a linear call is one [K, H*N] linear of the rows
// with its output columns grouped by head (each head's input weighted by
// its own weights when summed rows are weighted). Every index list is
// int64. The CPU implementation takes host pointers; the CUDA one device
// pointers (segmentPtr included: nothing is read back on the host).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "templates/Activations.h"

namespace hector::templates {

/// What the epilogue does with the per-row scalar.
enum class EpilogueOp { None, Mul, Div };

/// What a linear call does to each input element as it reads it
/// (SegmentGemmArgsT::inputOp).
enum class InputOp { None, Gelu };

/// The most buffers a linear call's output rows may be cut into (yParts).
constexpr int kMaxYParts = 4;

#if defined(__CUDACC__)
#define HECTOR_GEMM_HD __host__ __device__ __forceinline__
#else
#define HECTOR_GEMM_HD inline
#endif

/// Linear (Y from X and W) or Outer (dW from X and B); see the top of this
/// file. One type for every scalar type: SegmentGemmArgsT<T>::Mode names it.
enum class SegmentGemmMode { Linear, Outer };

/// One segment-MM call on scalars of type T (float or double). Zero-
/// initialised fields mean "absent".
template <typename T> struct SegmentGemmArgsT {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "the GEMM template is built for float and double only");
  using Scalar = T;             ///< the element type of X, W, Y, scale, B, dW
  using Mode = SegmentGemmMode; ///< SegmentGemmArgs::Mode::Outer, as before
  Mode mode = Mode::Linear;

  int64_t M = 0;  ///< (logical) rows
  int64_t K = 0;  ///< per-head input width
  int64_t N = 0;  ///< per-head output width
  int64_t H = 1;  ///< heads: one independent [K, N] weight per head

  /// Optional, size M: logical row r is row id rowIds[r] >= 0 (see the top
  /// of this file). Ids need be neither distinct nor all of a range: a
  /// repeated id is computed once per occurrence, so without scatter its
  /// output rows collide (use accumulate + atomic). Absent: id = r.
  const int64_t *rowIds = nullptr;

  const T *X = nullptr;            ///< input rows (Outer: the left factor A)
  const int64_t *gather = nullptr; ///< optional: row id reads X[gather[id]]
  /// Linear, optional (both or neither; exclusive with gather): row id's
  /// input is a sum of X rows instead of one row,
  ///   x = sum over j in [sumPtr[id], sumPtr[id + 1]) of X[sumRows[j]]
  /// (0 for an empty range), added in order of j. This is an aggregation
  /// fused into the GEMM's row loads: with rows that are (destination,
  /// relation) segments of a graph, sumRows their edges' sources, the
  /// epilogue's scale 1 / |segment| and atomic adds into the destinations,
  /// one call computes sum_r mean_{u in N_r(v)} x_u W_r without writing a
  /// message or an aggregate to memory (aggregate-then-transform). sumPtr
  /// needs an entry for every id that occurs, and one more, and must not
  /// decrease (an empty range is two equal entries); the rows of one
  /// 64-row tile may hold fewer than 2^31 entries together. The tensor-core
  /// kernel spreads a tile's entries evenly over its threads, but a tile is
  /// one block's work: cut a row of many thousands of entries (a hub's
  /// segment) into rows of a few dozen that add into the same output row
  /// (bench/gemm/bench_summed_rows.cu measures the cut).
  const int64_t *sumPtr = nullptr;
  const int64_t *sumRows = nullptr;
  /// Linear with sumPtr, optional: entry j's X row (head h) is added times
  /// sumWeights[j * H + h] (an entry's H weights side by side, in sumRows'
  /// order; with sumWeightIds, at row sumWeightIds[j] instead of j), so
  /// that a row's input is a weighted sum,
  ///   x = sum over j of sumWeights[j * H + h] * X[sumRows[j]],
  /// still added in order of j. With the graph's attention scores as
  /// weights this is the aggregation of sum_e alpha_e x_src W_r done before
  /// the transform (an attention layer's aggregate-then-transform): the
  /// messages x_src W_r are never written. Absent: every weight is 1.
  const T *sumWeights = nullptr;
  /// Linear with sumWeights, optional: entry j's weights are row
  /// sumWeightIds[j] of sumWeights (sumWeights[sumWeightIds[j] * H + h])
  /// instead of row j, so that weights stored in another order (attention
  /// scores by edge id, while the entries are the edges in (relation,
  /// destination) order) need no copy in sumRows' order. Ids may repeat.
  const int64_t *sumWeightIds = nullptr;
  /// Linear without summed rows: each X element goes through this op as it
  /// is read, so that `linear(gelu(a), W)` reads a and never writes
  /// gelu(a) (HGT's output projection of its aggregate). Gelu is the exact
  /// (erf) one, torch's default and the traversals' (templates/Activations.h).
  InputOp inputOp = InputOp::None;
  /// Linear: X rows are K scalars, and every head reads the same row:
  /// head h's input is X[row][0 .. K) (with sumPtr, the sum over the
  /// entries of their rows, each times the entry's weight of head h). Off:
  /// rows of H*K scalars, head h's K of them at h*K. No effect with H = 1.
  bool xSharedByHeads = false;
  /// Linear, with transposeW off: each W slice is one [K, H*N] matrix
  /// (row-major) and head h's [K, N] weight is its columns [h*N, h*N+N):
  /// W[s][h][k][n] = W[s*K*H*N + k*H*N + h*N + n] instead of
  /// W[((s*H + h)*K + k)*N + n] (a [K, H*N] linear whose output columns
  /// are grouped by head, as a multi-head layer's x W reshaped to
  /// [heads, out / heads]). The size of W is the same. No effect with
  /// H = 1.
  bool wHeadsInColumns = false;

  /// Linear: the weight W, numSlices * H * K * N scalars. Unused in Outer.
  const T *W = nullptr;
  bool transposeW = false;  ///< W (Outer: dW) slices are [N, K] (nn.Linear)
  int64_t numSlices = 1;    ///< weight slices S (segments)
  /// Optional, size S+1, non-decreasing, ptr[0] = 0, ptr[S] = M: logical
  /// rows r in [ptr[s], ptr[s+1]) use slice s. Empty segments are allowed.
  const int64_t *segmentPtr = nullptr;
  /// Optional (exclusive with segmentPtr), indexed by row id: row id uses
  /// slice rowType[id] in [0, S). Rows need not be sorted (with rowIds that
  /// sort the rows by type, the CUDA linear kernel does one pass per tile).
  const int64_t *rowType = nullptr;
  /// Linear, optional (all three or none; with segmentPtr and gather,
  /// without rowIds, scatter or scaleGather): the same rows once more, in
  /// an order where rows that read one X row are adjacent. Entry i of each
  /// is about the i-th row of that order: its row id (gatherOrderRowIds),
  /// the X row it reads (gatherOrderGather, = gather[id]) and its slice
  /// (gatherOrderRowType, = the slice segmentPtr gives it). A kernel that
  /// needs no slice's rows together visits the rows in that order and
  /// writes row id's output at Y[id]: an X row several slices share is
  /// then read from DRAM once instead of once per slice, and every index
  /// is read in sequence (on CUDA the 8-lane dot kernel, N = 1: the
  /// attention scores of RGAT's pairs and chunks; docs/perf-notes.md
  /// section 97). Every other kernel, and the CPU, ignores them; the
  /// results do not depend on the order.
  const int64_t *gatherOrderRowIds = nullptr;
  const int64_t *gatherOrderGather = nullptr;
  const int64_t *gatherOrderRowType = nullptr;

  /// Linear: output rows. Outer: unused.
  T *Y = nullptr;
  const int64_t *scatter = nullptr; ///< optional: row id writes
                                    ///< Y[scatter[id]]
  /// Y += instead of Y = (Outer: dW += instead of dW =).
  bool accumulate = false;
  /// Several rows may write one output row (or, Outer, the CUDA kernel may
  /// split one slice over blocks): use atomic adds. Needs accumulate.
  bool atomic = false;
  /// Bitwise reproducible results (torch.use_deterministic_algorithms):
  /// where `atomic` would add rows in whatever order threads reach an
  /// output, add them without atomics in logical row order instead. Calls
  /// without `atomic` are reproducible already. On CUDA, linear calls
  /// without rowIds compute their rows into a workspace and add them in
  /// order after a sort by output row (SegmentGemmCuda.h); the others, or
  /// where the workspace cannot be had, add in place with one thread per
  /// output column (slow for large M: a debugging mode).
  bool deterministic = false;
  /// Linear with segmentPtr and scatter, without rowIds: within each
  /// segment, rows that write one output row are consecutive (scatter
  /// sorted in each segment, as the graph's sum_chunk_* rows are). Then the
  /// CUDA `deterministic` path, where it adds in place, adds in the same
  /// order with one launch per segment, each block adding whole runs of
  /// such rows, instead of one thread per column walking all M rows (am's
  /// summed RGCN messages: 1.8M rows, about a second a call).
  bool scatterSortedInSegments = false;
  /// May round X and W to TF32 (10-bit mantissa) before multiplying, as
  /// torch.backends.cuda.matmul.allow_tf32 lets cuBLAS: the CUDA tensor-
  /// core kernel (SegmentGemmMma.h) then makes one product per term
  /// instead of three. Sums stay in T. Off: results as accurate as fp32
  /// products. The CPU implementation and the other kernels ignore it.
  bool tf32 = false;

  /// Linear: a row added to every output row before the epilogue's scale
  /// (a fused `+ b`): bias[(s * H + h) * N + n] for a row of slice s with
  /// biasPerSlice (a bias per node type, as nn.Linear's per type), else
  /// bias[h * N + n]. With accumulate every row adds its bias too
  /// (Y += (x W + b) * scale): a GEMM that adds `x root + b` into an
  /// output other calls add to.
  const T *bias = nullptr;
  bool biasPerSlice = false;
  /// Linear: the output rows cut by columns into yParts buffers (2 to
  /// kMaxYParts, H = 1, N a multiple of yParts): column n of row `dst`
  /// goes to yPart[n / w][dst * w + n % w], w = N / yParts (slices of a
  /// fused projection, as HGT's k, q and v of one kqv GEMM). Y is then
  /// unused. Needs accumulate off. 1: the output is Y.
  int yParts = 1;
  T *yPart[kMaxYParts] = {};

  /// Linear: each finished output row times a shared weight [H*N, D]
  /// (D = rowDotN), written to rowDotY rows of D scalars indexed as Y's
  /// rows are (a fused `linear(Y_row, rowDotW)` that reads the row from
  /// registers instead of from Y). Needs accumulate off and yParts = 1.
  /// The tensor-core kernel computes it in its epilogue when H = 1,
  /// N <= 64 and D = 1 (its weight column held in registers); every other
  /// path runs it as a second call (rowDotCall) over Y.
  const T *rowDotW = nullptr;
  T *rowDotY = nullptr;
  int64_t rowDotN = 0;

  /// Linear: each finished output row (its product and bias) mixed with a
  /// row of the same shape by a gate per slice, a fused gated skip (HGT's
  /// h = g a + (1 - g) x over its output projection a):
  ///   Y[dst] = g (x W + b) + (1 - g) mixRows[dst],  g = sigmoid(mixGate[s])
  /// for a row of slice s, mixRows indexed as Y's rows (H*N scalars). Both
  /// or neither; needs accumulate off, one output buffer, no epilogue
  /// scale, no row dot and no summed rows.
  const T *mixRows = nullptr;
  const T *mixGate = nullptr;

  /// Linear epilogue: a per-row scalar ([rows] or [rows, H]).
  EpilogueOp epilogue = EpilogueOp::None;
  const T *scale = nullptr;
  const int64_t *scaleGather = nullptr; ///< optional: row id uses scale
                                        ///< row scaleGather[id]
  bool scalePerHead = false;

  /// Outer: the right factor B (rows of H*N scalars) and its gather list
  /// (row id reads B[gatherB[id]]).
  const T *B = nullptr;
  const int64_t *gatherB = nullptr;
  /// Outer: the output dW, numSlices * H * K * N scalars.
  T *dW = nullptr;
};

/// The float call, as every caller spelled it before the double one.
using SegmentGemmArgs = SegmentGemmArgsT<float>;

/// Where column n of head h of output row `dst` goes: Y, or its part.
template <typename T>
HECTOR_GEMM_HD T *outputAt(const SegmentGemmArgsT<T> &a, int64_t dst, int64_t h,
                           int64_t n) {
  if (a.yParts <= 1)
    return a.Y + (dst * a.H + h) * a.N + n;
  const int64_t w = a.N / a.yParts, p = n / w;
  // Selected, not indexed: a run-time index into the kernel's parameter
  // array would copy it to local memory.
  T *part = p == 0   ? a.yPart[0]
            : p == 1 ? a.yPart[1]
            : p == 2 ? a.yPart[2]
                     : a.yPart[3];
  return part + dst * w + (n - p * w);
}

/// The bias of column n of head h for a row of slice s (0 without one).
template <typename T>
HECTOR_GEMM_HD T biasAt(const SegmentGemmArgsT<T> &a, int64_t s, int64_t h,
                        int64_t n) {
  if (!a.bias)
    return T(0);
  return a.bias[((a.biasPerSlice ? s * a.H : 0) + h) * a.N + n];
}

/// The offset in X of input 0 of head h of X row `row` (every head's is
/// the row's start with xSharedByHeads).
template <typename T>
HECTOR_GEMM_HD int64_t inputOffset(const SegmentGemmArgsT<T> &a, int64_t row,
                                   int64_t h) {
  return a.xSharedByHeads ? row * a.K : (row * a.H + h) * a.K;
}

/// Where head h's weight of slice s starts in W: its entry (k, n) is at
/// k * weightRowStride(a) + n, or (transposeW) its entry (n, k) at n * K + k.
template <typename T>
HECTOR_GEMM_HD const T *weightOf(const SegmentGemmArgsT<T> &a, int64_t s,
                                 int64_t h) {
  return a.wHeadsInColumns ? a.W + s * a.H * a.K * a.N + h * a.N
                           : a.W + (s * a.H + h) * a.K * a.N;
}

/// The distance in W between rows k and k + 1 of a head's [K, N] weight
/// (transposeW off): N, or H*N with wHeadsInColumns.
template <typename T>
HECTOR_GEMM_HD int64_t weightRowStride(const SegmentGemmArgsT<T> &a) {
  return a.wHeadsInColumns ? a.H * a.N : a.N;
}

/// `x` through `op` (SegmentGemmArgsT::inputOp).
template <typename T> HECTOR_GEMM_HD T applyInputOp(InputOp op, T x) {
  return op == InputOp::Gelu ? activations::gelu(x) : x;
}

/// The gate of a row of slice s in a call with a gated mix (mixGate):
/// sigmoid(mixGate[s]), as a traversal computes it (templates/Activations.h).
template <typename T>
HECTOR_GEMM_HD T mixGateAt(const SegmentGemmArgsT<T> &a, int64_t s) {
  return activations::sigmoid(a.mixGate[s]);
}

/// The row of sumWeights that entry j's weights are in.
template <typename T>
HECTOR_GEMM_HD int64_t sumWeightRow(const SegmentGemmArgsT<T> &a, int64_t j) {
  return a.sumWeightIds ? a.sumWeightIds[j] : j;
}

/// Whether X and W have their per-head layouts (H = 1, or neither
/// xSharedByHeads nor wHeadsInColumns): the fast paths that index them by
/// head themselves take only such calls.
template <typename T>
HECTOR_GEMM_HD bool perHeadLayouts(const SegmentGemmArgsT<T> &a) {
  return a.H == 1 || (!a.xSharedByHeads && !a.wHeadsInColumns);
}

/// Whether the output is plain: no bias, one output buffer, no row dot and
/// no gated mix (the fast paths that take none of these check this).
template <typename T>
HECTOR_GEMM_HD bool plainOutput(const SegmentGemmArgsT<T> &a) {
  return !a.bias && a.yParts <= 1 && !a.rowDotY && !a.mixRows;
}

/// The call without its row dot.
template <typename T>
SegmentGemmArgsT<T> withoutRowDot(const SegmentGemmArgsT<T> &a) {
  SegmentGemmArgsT<T> b = a;
  b.rowDotW = nullptr;
  b.rowDotY = nullptr;
  b.rowDotN = 0;
  return b;
}

/// The row dot of `a` as a call of its own, to run after `a` without it:
/// the same rows, reading each finished output row back from Y.
template <typename T>
SegmentGemmArgsT<T> rowDotCall(const SegmentGemmArgsT<T> &a) {
  SegmentGemmArgsT<T> d;
  d.M = a.M;
  d.K = a.H * a.N;
  d.N = a.rowDotN;
  d.rowIds = a.rowIds;
  d.X = a.Y;
  d.gather = a.scatter;
  d.W = a.rowDotW;
  d.Y = a.rowDotY;
  d.scatter = a.scatter;
  d.tf32 = a.tf32;
  return d;
}

/// "" when the arguments are consistent (pointers present for the mode,
/// sizes non-negative, one of segmentPtr / rowType at most, atomic only with
/// accumulate, scale with an epilogue, a bias and output parts only in
/// linear mode (parts without accumulate), parts that divide N with H = 1, a
/// row dot only on one plain-assigned output buffer, summed rows (sumPtr and
/// sumRows together) only in linear mode and without gather, weights
/// (sumWeights) only with summed rows, weight ids (sumWeightIds) only with
/// weights, xSharedByHeads and wHeadsInColumns only in linear mode, and
/// wHeadsInColumns only with transposeW off, an input op only in linear
/// mode without summed rows, a gated mix only on one plain-assigned output
/// buffer without an epilogue scale, row dot or summed rows, a gather
/// order's three arrays together, with segmentPtr and gather and without
/// rowIds, scatter or scaleGather); else what is wrong. rowIds goes with
/// either segmentPtr or rowType. Does not read the index arrays.
std::string checkSegmentGemmArgs(const SegmentGemmArgsT<float> &args);
std::string checkSegmentGemmArgs(const SegmentGemmArgsT<double> &args);

/// The CPU implementation (OpenMP over rows in Linear mode, over output
/// elements in Outer mode; deterministic unless atomic), accumulating in T.
/// Host pointers. Throws std::invalid_argument when checkSegmentGemmArgs
/// fails.
void segmentGemmCpu(const SegmentGemmArgsT<float> &args);
void segmentGemmCpu(const SegmentGemmArgsT<double> &args);

} // namespace hector::templates
