// How the runtime names dtypes and shapes in error messages: the way a
// Python user writes them (`torch.float32`, `[3, 64, 64]`).
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>

#include <sstream>
#include <string>

namespace hector::runtime {

inline std::string dtypeName(c10::ScalarType t) {
  switch (t) {
  case c10::ScalarType::Float:
    return "torch.float32";
  case c10::ScalarType::Double:
    return "torch.float64";
  case c10::ScalarType::Half:
    return "torch.float16";
  case c10::ScalarType::BFloat16:
    return "torch.bfloat16";
  case c10::ScalarType::Long:
    return "torch.int64";
  case c10::ScalarType::Int:
    return "torch.int32";
  case c10::ScalarType::Short:
    return "torch.int16";
  case c10::ScalarType::Char:
    return "torch.int8";
  case c10::ScalarType::Byte:
    return "torch.uint8";
  case c10::ScalarType::Bool:
    return "torch.bool";
  default:
    return std::string("torch.") + c10::toString(t);
  }
}

inline std::string sizesText(c10::IntArrayRef sizes) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    os << (i ? ", " : "") << sizes[i];
  os << "]";
  return os.str();
}

} // namespace hector::runtime
