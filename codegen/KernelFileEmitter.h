// KernelFileEmitter: the files holding a layer's kernels and their host
// functions, over raw pointers (no torch):
//   kernels.h       Hypers, ForwardBuffers, BackwardBuffers (and
//                   InferenceBuffers) and the host functions forward_cpu,
//                   backward_cpu (and inference_cpu; each also _cuda)
//   kernels_cpu.cpp the C++/OpenMP kernels and host functions
//   kernels.cu      the CUDA kernels and host functions (asynchronous on
//                   the caller's stream)
// A host function zero-fills its accumulation targets, then runs the
// program's instances in order.
#pragma once

#include "codegen/ProgramLayout.h"
#include "codegen/Target.h"

#include <string>

namespace hector::codegen {

/// The C++ namespace of a layer's generated code: "hector_gen::<model>".
std::string layerNamespace(const std::string &model);

/// `inference`, when the layer has one (passes::CompiledLayer), adds
/// InferenceBuffers and inference_cpu/_cuda.
std::string emitKernelsHeader(const ProgramLayout &forward,
                              const ProgramLayout &backward,
                              const ProgramLayout *inference = nullptr);

/// kernels_cpu.cpp (Target::Cpu) or kernels.cu (Target::Cuda). Throws
/// EmitError for an instance it cannot emit (fallback instances included).
std::string emitKernelFile(const ProgramLayout &forward,
                           const ProgramLayout &backward, Target target,
                           const ProgramLayout *inference = nullptr);

} // namespace hector::codegen
