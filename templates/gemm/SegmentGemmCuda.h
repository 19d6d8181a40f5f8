// SegmentGemmCuda.h: the CUDA launcher of the segment-MM GEMM template
// (SegmentGemm.h states what a call computes). Only for CUDA builds.
#pragma once

#include "templates/gemm/SegmentGemm.h"

#include <cuda_runtime.h>

namespace hector::templates {

/// Launches the template on `stream` with device pointers. Asynchronous: no
/// host synchronisation. No allocation, except for a linear call with
/// `atomic` and `deterministic` and without rowIds, which computes its rows
/// into a workspace taken from and given back to `stream`
/// (cudaMallocAsync; without it, where it cannot be had, the call adds in
/// place, far slower). Returns cudaErrorInvalidValue when
/// checkSegmentGemmArgs fails, else the launch's error. Accumulates in the
/// scalar type; the double one needs sm_60 or newer (atomicAdd on double).
cudaError_t launchSegmentGemm(const SegmentGemmArgsT<float> &args,
                              cudaStream_t stream);
cudaError_t launchSegmentGemm(const SegmentGemmArgsT<double> &args,
                              cudaStream_t stream);

/// For tests: whether deterministic atomic calls may take their workspace
/// (true at start). With false they add in place, as they do when the
/// workspace cannot be had. Returns the previous setting.
bool setDeterministicWorkspaceForTesting(bool allowed);

/// For tests: whether the dot calls that fit it (K = 64, one head, no row
/// ids, epilogue or accumulation) take the lean dot kernel (on at start
/// unless HECTOR_GEMM_DOT64=0). Returns the previous setting.
bool setLeanDotForTesting(bool enabled);

} // namespace hector::templates
