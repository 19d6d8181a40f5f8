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

/// The scalar type of a call: `t`'s dtype, which must be float32 or
/// float64 (TypeError naming `name` otherwise).
at::ScalarType floatScalarType(const at::Tensor &t, const char *name);

/// Checks a tensor argument: defined, of `dtype` (the call's scalar type,
/// set by the argument `dtypeFrom`), on `device`, contiguous, of exactly
/// `shape`.
void checkArgument(const at::Tensor &t, const char *name,
                   std::initializer_list<int64_t> shape,
                   const at::Device &device, at::ScalarType dtype,
                   const char *dtypeFrom);

/// The graph values in the kernels' scalar type: the graph's float32
/// arrays for float, float64 copies (held in `keep`) for double.
template <typename T>
GraphValues<T> graphValues(const std::vector<at::Tensor> &arrays,
                           std::vector<at::Tensor> &keep) {
  auto pick = [&](GraphArray a) -> const T * {
    const at::Tensor &t = arrays.at(static_cast<size_t>(a));
    if (t.scalar_type() == c10::CppTypeToScalarType<T>::value)
      return t.data_ptr<T>();
    keep.push_back(t.to(c10::CppTypeToScalarType<T>::value));
    return keep.back().data_ptr<T>();
  };
  GraphValues<T> gv;
  gv.in_degree = pick(GraphArray::InDegree);
  gv.out_degree = pick(GraphArray::OutDegree);
  gv.rel_in_degree = pick(GraphArray::RelInDegree);
  gv.sum_chunk_rel_in_degree = pick(GraphArray::SumChunkRelInDegree);
  return gv;
}

/// `value` when it is at least 1; else ValueError naming the hyper.
int64_t positiveHyper(int64_t value, const char *name);

} // namespace hector::rt
