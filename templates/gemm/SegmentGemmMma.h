// SegmentGemmMma.h: the GEMM template's tensor-core kernels for linear
// and outer calls (SegmentGemm.h), float only, on sm_80 and newer.
// Internal to templates/gemm: launchSegmentGemm (SegmentGemm.cu) takes
// them for the calls they fit.
//
// Products run on mma.sync m16n8k8 TF32 with fp32 accumulators. TF32 keeps
// 10 of fp32's 23 mantissa bits, so by default each factor is split into a
// TF32 head and a TF32 tail (x = head + tail, both rounded to nearest) and
// a product is head*head + head*tail + tail*head: three tensor-core
// products a term, an error of about 2^-21 relative, which is what fp32
// products give (the tail*tail term and the tail's own rounding are below
// it). With SegmentGemmArgs::tf32 a term is one product of the rounded
// factors (about 2^-11 relative each).
#pragma once

#include "templates/gemm/SegmentGemm.h"

#include <cuda_runtime.h>

namespace hector::templates {

/// Whether the tensor-core kernel computes `a`: a float linear call, not
/// atomic-and-deterministic, K and N multiples of 8 with 8 <= K <= 64 and
/// 8 <= N <= 256, X, W and Y (or each output part, whose width is a
/// multiple of 8) on 16-byte boundaries, fewer than 2^31
/// slices, not summed rows (sumPtr) together with a row dot, nor weighted
/// summed rows (sumWeights, at their rows or at sumWeightIds) with a bias
/// or output parts, nor heads (H > 1) sharing X rows (xSharedByHeads) or
/// W's columns (wHeadsInColumns); the current device is sm_80 or newer;
/// and the environment
/// variable HECTOR_GEMM_MMA is not "0" (read once: it is there to compare
/// the kernels on one build).
bool linearMmaFits(const SegmentGemmArgs &a);

/// Launches the tensor-core kernel for `a` on `stream` (linearMmaFits must
/// hold). A resident wave of blocks, each taking a contiguous run of
/// 64-row tiles and one window of 64 output columns, with the next tile's
/// gathered rows copied into shared memory while the current one is
/// multiplied.
cudaError_t launchLinearMma(const SegmentGemmArgs &a, cudaStream_t stream);

/// Whether the tensor-core kernel computes outer call `a` (weight
/// gradients): a float outer call, K and N multiples of 4 with 4 <= K <= 256
/// and 4 <= N <= 256, X and B on 16-byte boundaries; the current device
/// sm_80 or newer; HECTOR_GEMM_MMA not "0".
bool outerMmaFits(const SegmentGemmArgs &a);

/// Launches the outer tensor-core kernel for `a` (outerMmaFits must hold):
/// blocks of 64 x 64 entries of dW[s][h] summing 64-row tiles, the rows a
/// block sums chosen as for the other outer kernels (rowTileGrid), the
/// next tile copied while the current one is multiplied.
cudaError_t launchOuterMma(const SegmentGemmArgs &a, cudaStream_t stream);

} // namespace hector::templates
