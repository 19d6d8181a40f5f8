// User-facing argument errors of the runtime. Every runtime entry point
// (Graph construction, the interpreter) validates what the caller passed
// and throws one of these, with a message that names the offending argument
// (`params['W']: expected shape [3, 64, 64], got [3, 64, 32]`). The pybind11
// module maps ArgumentTypeError to Python's TypeError and ArgumentValueError
// to ValueError. Internal invariant violations (a bug, not a user error)
// throw std::logic_error instead.
#pragma once

#include <stdexcept>
#include <string>

namespace hector::runtime {

/// The argument has the wrong type or dtype (Python: TypeError).
class ArgumentTypeError : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

/// The argument has the wrong shape, range, device or name (Python:
/// ValueError).
class ArgumentValueError : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

} // namespace hector::runtime
