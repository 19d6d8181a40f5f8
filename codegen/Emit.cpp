#include "codegen/Emit.h"

#include "codegen/CMakeEmitter.h"
#include "codegen/KernelFileEmitter.h"
#include "codegen/Naming.h"
#include "codegen/ProgramLayout.h"
#include "codegen/TorchBindingEmitter.h"

#include <nlohmann/json.hpp>

namespace hector::codegen {
namespace {

nlohmann::json valueJson(const intra::ValueLayout &l) {
  nlohmann::json shape = nlohmann::json::array();
  for (const ir::Dim &d : l.decl.shape)
    shape.push_back(d.str());
  return {{"name", l.decl.name},
          {"kind", ir::valueKindName(l.decl.kind)},
          {"rows", intra::rowSchemeName(l.rows)},
          {"shape", shape}};
}

std::vector<nlohmann::json> valuesOfKind(const intra::Program &p,
                                         std::initializer_list<ir::ValueKind> kinds) {
  std::vector<nlohmann::json> out;
  for (const intra::ValueLayout &l : p.layouts)
    for (ir::ValueKind k : kinds)
      if (l.decl.kind == k)
        out.push_back(valueJson(l));
  return out;
}

/// What the Python runtime needs to call the ops: argument order, shapes,
/// hypers, and how the backward connects.
std::string layerJson(const passes::CompiledLayer &layer) {
  const intra::Program &f = layer.forwardProgram;
  nlohmann::json j;
  j["format"] = 1;
  j["model"] = f.name;
  j["library"] = "hector_" + f.name;
  nlohmann::json hypers = nlohmann::json::array();
  for (const ir::HyperDecl &h : f.hypers)
    hypers.push_back({{"name", h.name},
                      {"type", h.type == ir::HyperDecl::Type::Int ? "int"
                                                                  : "float"},
                      {"default", h.defaultValue}});
  j["hypers"] = hypers;
  j["arguments"] =
      valuesOfKind(f, {ir::ValueKind::Input, ir::ValueKind::Param});
  j["outputs"] = valuesOfKind(f, {ir::ValueKind::Output});
  j["saved"] = layer.saved;
  j["backward_values"] = valuesOfKind(
      layer.backwardProgram, {ir::ValueKind::Input, ir::ValueKind::Param});
  j["backward_outputs"] =
      valuesOfKind(layer.backwardProgram, {ir::ValueKind::Output});
  j["gradients"] = layer.gradients;
  // The forward op runs a second program when no gradient is taken.
  j["inference_program"] = layer.inferenceProgram.has_value();
  return j.dump(2) + "\n";
}

} // namespace

std::optional<std::vector<EmittedFile>>
emitLayer(const passes::CompiledLayer &layer, ir::DiagnosticEngine &diags) {
  const ProgramLayout forward(layer.forwardProgram, "forward");
  const ProgramLayout backward(layer.backwardProgram, "backward");
  std::optional<ProgramLayout> inferenceLayout;
  if (layer.inferenceProgram)
    inferenceLayout.emplace(*layer.inferenceProgram, "inference");
  const ProgramLayout *inference =
      inferenceLayout ? &*inferenceLayout : nullptr;
  try {
    std::vector<EmittedFile> files;
    files.push_back(
        {"kernels.h", emitKernelsHeader(forward, backward, inference)});
    files.push_back(
        {"kernels_cpu.cpp",
         emitKernelFile(forward, backward, Target::Cpu, inference)});
    files.push_back({"kernels.cu", emitKernelFile(forward, backward,
                                                  Target::Cuda, inference)});
    files.push_back(
        {"binding.cpp", emitTorchBinding(forward, backward, layer.saved,
                                         layer.gradients, inference)});
    files.push_back({"CMakeLists.txt", emitCMakeLists(layer.forward.name)});
    files.push_back({"layer.json", layerJson(layer)});
    return files;
  } catch (const EmitError &e) {
    diags.error(layer.forward.loc,
                "cannot emit code for @" + layer.forward.name + ": " +
                    e.message);
    return std::nullopt;
  }
}

} // namespace hector::codegen
