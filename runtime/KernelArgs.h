// Argument checks of the generated torch ops (codegen/TorchBindingEmitter):
// each raises c10::TypeError or c10::ValueError (Python TypeError /
// ValueError through torch.ops) with a message that names the argument.
#pragma once

#include "runtime/GraphArrays.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace hector::rt {

/// The graph arrays of a generated op (hector.Graph.kernel_arrays()),
/// validated by runtime::graphArraysFromTensors.
GraphArrays graphArgument(const std::vector<at::Tensor> &arrays,
                          const char *name);

/// Checks a float32 tensor argument: defined, float32, on `device`,
/// contiguous, of exactly `shape`.
void checkFloatArgument(const at::Tensor &t, const char *name,
                        std::initializer_list<int64_t> shape,
                        const at::Device &device);

/// `value` when it is at least 1; else ValueError naming the hyper.
int64_t positiveHyper(int64_t value, const char *name);

} // namespace hector::rt
