// TorchBindingEmitter: binding.cpp, the torch side of a generated layer.
//
// It registers, with TORCH_LIBRARY, the ops of library `hector_<model>`:
//   forward(Tensor[] graph_arrays, <inputs and params>, <hypers>) -> Tensor[]
//       the layer's outputs, differentiable: an autograd function whose
//       backward runs exactly the backward program's kernels;
//   forward_kernels(same) -> Tensor[]
//       the forward kernels alone: the outputs, then the saved values;
//   inference_kernels(same) -> Tensor[]   (layers with an inference program)
//       the inference program's kernels: the outputs, nothing kept; forward
//       runs it when grad mode is off or no argument requires grad;
//   backward_kernels(Tensor[] graph_arrays, Tensor[] values, <hypers>)
//       -> Tensor[]
//       the backward kernels alone: `values` are the backward program's
//       inputs and params in declaration order; returns its outputs.
// graph_arrays is hector.Graph.kernel_arrays() (runtime/GraphArrays.h).
// Inputs and params come in declaration order, hypers last. Every argument
// is checked (float32, the graph's device, contiguous, shape) and a bad one
// raises TypeError/ValueError naming it.
#pragma once

#include "codegen/ProgramLayout.h"

#include <map>
#include <string>
#include <vector>

namespace hector::codegen {

std::string
emitTorchBinding(const ProgramLayout &forward, const ProgramLayout &backward,
                 const std::vector<std::string> &saved,
                 const std::map<std::string, std::string> &gradients,
                 const ProgramLayout *inference = nullptr);

} // namespace hector::codegen
