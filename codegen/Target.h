// The two targets of the emitters: one intra-op IR, two dialects of the
// same kernel bodies.
#pragma once

namespace hector::codegen {

enum class Target {
  Cpu,  ///< C++ with OpenMP: a thread group is one thread (kernels_cpu.cpp)
  Cuda, ///< CUDA: a thread group is a warp (kernels.cu)
};

} // namespace hector::codegen
