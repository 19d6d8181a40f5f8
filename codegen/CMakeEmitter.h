// CMakeEmitter: DIR/CMakeLists.txt, which builds a generated layer into the
// shared library libhector_<model>.so (the torch ops of binding.cpp), with
// kernels.cu when the build has CUDA.
#pragma once

#include <string>

namespace hector::codegen {

std::string emitCMakeLists(const std::string &model);

} // namespace hector::codegen
