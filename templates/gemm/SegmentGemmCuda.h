// SegmentGemmCuda.h: the CUDA launcher of the segment-MM GEMM template
// (SegmentGemm.h states what a call computes). Only for CUDA builds.
#pragma once

#include "templates/gemm/SegmentGemm.h"

#include <cuda_runtime.h>

namespace hector::templates {

/// Launches the template on `stream` with device pointers. Asynchronous: no
/// host synchronisation, no allocation. Returns cudaErrorInvalidValue when
/// checkSegmentGemmArgs fails, else the launch's error. Accumulates in the
/// scalar type; the double one needs sm_60 or newer (atomicAdd on double).
cudaError_t launchSegmentGemm(const SegmentGemmArgsT<float> &args,
                              cudaStream_t stream);
cudaError_t launchSegmentGemm(const SegmentGemmArgsT<double> &args,
                              cudaStream_t stream);

} // namespace hector::templates
