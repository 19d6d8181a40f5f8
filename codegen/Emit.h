// Emit: every file hectorc writes for a compiled layer besides the IR
// dumps and the plan: the kernels (codegen/KernelFileEmitter.h), the torch
// binding (codegen/TorchBindingEmitter.h), the CMakeLists.txt
// (codegen/CMakeEmitter.h) and layer.json, which tells the Python runtime
// the ops' argument order (docs/codegen.md). Deterministic: the same layer
// gives the same bytes.
#pragma once

#include "ir/Diagnostics.h"
#include "passes/Pipeline.h"

#include <optional>
#include <string>
#include <vector>

namespace hector::codegen {

struct EmittedFile {
  std::string name; ///< relative to the output directory
  std::string text;
};

/// kernels.h, kernels_cpu.cpp, kernels.cu, binding.cpp, CMakeLists.txt,
/// layer.json, in that order. Returns nullopt, with an error reported at
/// the model, for what the emitters cannot emit.
std::optional<std::vector<EmittedFile>>
emitLayer(const passes::CompiledLayer &layer, ir::DiagnosticEngine &diags);

} // namespace hector::codegen
