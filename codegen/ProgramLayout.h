// ProgramLayout: what the emitters need to know about the values of one
// lowered program (forward or backward): where each value lives in the
// generated code, which buffers the Buffers struct holds, and which of
// them must be zero-filled before the program runs.
#pragma once

#include "ir/IntraIR.h"

#include <set>
#include <string>
#include <vector>

namespace hector::codegen {

/// Where a value's rows are, as the kernels see them.
enum class Home {
  GraphArray, ///< a graph value: a float array of GraphArrays `g`
  Buffer,     ///< a field of the Buffers struct `b`
  Register,   ///< a per-thread-group scratch slot of a traversal
};

class ProgramLayout {
public:
  /// `entry` names the program in the emitted code: "forward", "backward".
  ProgramLayout(const intra::Program &program, std::string entry);

  const intra::Program &program() const { return program_; }
  const std::string &entry() const { return entry_; }
  /// "ForwardBuffers" / "BackwardBuffers".
  std::string buffersType() const;

  const intra::ValueLayout &layout(const std::string &value) const;
  /// The value whose storage `value` shares (itself unless it is a view).
  std::string root(const std::string &value) const;
  Home home(const std::string &value) const;

  /// Values with their own buffer (inputs, params, stored temps and
  /// outputs; not graph values, registers or views), in declaration order:
  /// the fields of the Buffers struct.
  const std::vector<const intra::ValueLayout *> &buffers() const {
    return buffers_;
  }
  /// Inputs and params: read-only buffers.
  bool isReadOnly(const std::string &value) const;
  /// Buffers written with `+=` by atomics or by the GEMM template's
  /// accumulation: the host code zero-fills them before the first
  /// instance runs, unless the first instance that writes one (in program
  /// order) is a GEMM that writes every row of it plainly.
  const std::set<std::string> &zeroFilled() const { return zeroFilled_; }

private:
  const intra::Program &program_;
  std::string entry_;
  std::vector<const intra::ValueLayout *> buffers_;
  std::set<std::string> zeroFilled_;
};

} // namespace hector::codegen
