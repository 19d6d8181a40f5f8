// SegmentGemm.h: one call of the GEMM template (hector.txt section 3.3,
// Algorithm 1), described by raw pointers and sizes, and its CPU and CUDA
// implementations. No torch here: the runtime and the generated code fill a
// SegmentGemmArgs from their tensors and call one of the launchers.
//
// Linear mode (one row r in [0, M), one head h in [0, H)):
//   s   = slice of r     (segmentPtr: the s with ptr[s] <= r < ptr[s+1];
//                         rowType: rowType[r]; neither: 0)
//   x   = X[gather ? gather[r] : r][h*K .. h*K+K)
//   y   = x * W[s][h]    (W[s][h] is [K, N], or [N, K] when transposeW)
//   y  *= scale[i] or y /= scale[i], i = (scaleGather ? scaleGather[r] : r)
//         (times H plus h when scalePerHead)
//   Y[scatter ? scatter[r] : r][h*N .. h*N+N)  = y   (or += y: accumulate;
//         with atomic adds when atomic)
// Outer mode (weight gradients):
//   dW[s][h] (= or +=) sum over rows r of slice s of
//            outer(X[gather(r)][h*K ..+K), B[gatherB(r)][h*N ..+N))
//   dW[s][h] is [K, N], or [N, K] when transposeW (the layout of the weight
//   whose gradient it is). Slices with no rows get 0 (or are unchanged with
//   accumulate).
//
// Layouts: X rows are H*K floats, Y and B rows H*N floats, all dense.
// W (or dW) holds numSlices slices of H*K*N floats each. Every index list is
// int64. The CPU implementation takes host pointers; the CUDA one device
// pointers (segmentPtr included: nothing is read back on the host).
#pragma once

#include <cstdint>
#include <string>

namespace hector::templates {

/// What the epilogue does with the per-row scalar.
enum class EpilogueOp { None, Mul, Div };

/// One segment-MM call. Zero-initialised fields mean "absent".
struct SegmentGemmArgs {
  enum class Mode { Linear, Outer };
  Mode mode = Mode::Linear;

  int64_t M = 0;  ///< rows
  int64_t K = 0;  ///< per-head input width
  int64_t N = 0;  ///< per-head output width
  int64_t H = 1;  ///< heads: one independent [K, N] weight per head

  const float *X = nullptr;        ///< input rows (Outer: the left factor A)
  const int64_t *gather = nullptr; ///< optional: row r reads X[gather[r]]

  /// Linear: the weight W, numSlices * H * K * N floats. Unused in Outer.
  const float *W = nullptr;
  bool transposeW = false;  ///< W (Outer: dW) slices are [N, K] (nn.Linear)
  int64_t numSlices = 1;    ///< weight slices S (segments)
  /// Optional, size S+1, non-decreasing, ptr[0] = 0, ptr[S] = M: rows
  /// [ptr[s], ptr[s+1]) use slice s. Empty segments are allowed.
  const int64_t *segmentPtr = nullptr;
  /// Optional (exclusive with segmentPtr), size M: row r uses slice
  /// rowType[r] in [0, S). Rows need not be sorted.
  const int64_t *rowType = nullptr;

  /// Linear: output rows. Outer: unused.
  float *Y = nullptr;
  const int64_t *scatter = nullptr; ///< optional: row r writes Y[scatter[r]]
  /// Y += instead of Y = (Outer: dW += instead of dW =).
  bool accumulate = false;
  /// Several rows may write one output row (or, Outer, the CUDA kernel may
  /// split one slice over blocks): use atomic adds. Needs accumulate.
  bool atomic = false;

  /// Linear epilogue: a per-row scalar ([rows] or [rows, H]).
  EpilogueOp epilogue = EpilogueOp::None;
  const float *scale = nullptr;
  const int64_t *scaleGather = nullptr; ///< optional: row r uses scale row
                                        ///< scaleGather[r]
  bool scalePerHead = false;

  /// Outer: the right factor B (rows of H*N floats) and its gather list.
  const float *B = nullptr;
  const int64_t *gatherB = nullptr;
  /// Outer: the output dW, numSlices * H * K * N floats.
  float *dW = nullptr;
};

/// "" when the arguments are consistent (pointers present for the mode,
/// sizes non-negative, one of segmentPtr / rowType at most, atomic only with
/// accumulate, scale with an epilogue); else what is wrong. Does not read
/// the index arrays.
std::string checkSegmentGemmArgs(const SegmentGemmArgs &args);

/// The CPU implementation (OpenMP over rows in Linear mode, over output
/// elements in Outer mode; deterministic unless atomic). Host pointers.
/// Throws std::invalid_argument when checkSegmentGemmArgs fails.
void segmentGemmCpu(const SegmentGemmArgs &args);

} // namespace hector::templates
