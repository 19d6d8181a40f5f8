#include "runtime/KernelArgs.h"

#include "runtime/Errors.h"
#include "runtime/KernelGraph.h"

#include <c10/util/Exception.h>

#include <sstream>

namespace hector::rt {

GraphArrays graphArgument(const std::vector<at::Tensor> &arrays,
                          const char *name) {
  // The runtime's own errors become torch's, so that torch.ops raises
  // TypeError / ValueError rather than RuntimeError.
  try {
    return runtime::graphArraysFromTensors(arrays, name);
  } catch (const runtime::ArgumentTypeError &e) {
    TORCH_CHECK_TYPE(false, e.what());
  } catch (const runtime::ArgumentValueError &e) {
    TORCH_CHECK_VALUE(false, e.what());
  }
  return {}; // not reached
}

at::ScalarType floatScalarType(const at::Tensor &t, const char *name) {
  TORCH_CHECK_TYPE(t.defined(), name, ": expected a tensor, got None");
  TORCH_CHECK_VALUE(t.layout() == at::kStrided, name,
                    ": expected a dense (strided) tensor, got layout ",
                    t.layout(), " (call .to_dense())");
  // A lazily negated or conjugated view reads other values than its data
  // pointer holds.
  TORCH_CHECK_VALUE(!t.is_neg() && !t.is_conj(), name,
                    ": expected a tensor without a pending negation or "
                    "conjugation (call .resolve_neg() / .resolve_conj())");
  TORCH_CHECK_TYPE(t.scalar_type() == at::kFloat ||
                       t.scalar_type() == at::kDouble,
                   name, ": expected a float32 or float64 tensor, got ",
                   t.scalar_type());
  return t.scalar_type();
}

void checkArgument(const at::Tensor &t, const char *name,
                   std::initializer_list<int64_t> shape,
                   const at::Device &device, at::ScalarType dtype,
                   const char *dtypeFrom) {
  TORCH_CHECK_TYPE(t.defined(), name, ": expected a tensor, got None");
  TORCH_CHECK_VALUE(t.layout() == at::kStrided, name,
                    ": expected a dense (strided) tensor, got layout ",
                    t.layout(), " (call .to_dense())");
  // A lazily negated or conjugated view reads other values than its data
  // pointer holds.
  TORCH_CHECK_VALUE(!t.is_neg() && !t.is_conj(), name,
                    ": expected a tensor without a pending negation or "
                    "conjugation (call .resolve_neg() / .resolve_conj())");
  TORCH_CHECK_TYPE(t.scalar_type() == dtype, name, ": expected a ", dtype,
                   " tensor (the dtype of ", dtypeFrom, "), got ",
                   t.scalar_type());
  TORCH_CHECK_VALUE(t.device() == device, name, ": expected a tensor on ",
                    device, " (the graph's device), got one on ", t.device());
  TORCH_CHECK_VALUE(t.sizes() == at::IntArrayRef(shape), name,
                    ": expected shape ", at::IntArrayRef(shape), ", got ",
                    t.sizes());
  TORCH_CHECK_VALUE(t.is_contiguous(), name,
                    ": expected a contiguous tensor (call .contiguous())");
}

int64_t positiveHyper(int64_t value, const char *name) {
  TORCH_CHECK_VALUE(value >= 1, "hypers: ", name,
                    " must be a positive integer, got ", value);
  return value;
}

} // namespace hector::rt
