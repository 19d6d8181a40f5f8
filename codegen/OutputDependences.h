// OutputDependences: which of a program's outputs each instance feeds.
//
// A backward program computes every gradient, but autograd often needs
// only some: the input features of a first layer, or a frozen parameter,
// need none. The host function of a program with at most 64 outputs runs
// an instance only when one of the outputs it feeds (directly or through
// later instances) is among the caller's `Hypers::hector_needed_outputs`
// bits, and zero-fills a buffer only when something that runs adds to it.
// PyG gets the same from autograd, which never builds the gradient graph
// of a tensor that does not require grad; without this, Hector's training
// step would do work (the input-gradient GEMM with its atomic scatter) its
// baselines skip.
#pragma once

#include "codegen/ProgramLayout.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hector::codegen {

/// Bit i stands for the i-th output of the program (in declaration order,
/// as the host function returns them).
using OutputMask = uint64_t;

class OutputDependences {
public:
  explicit OutputDependences(const ProgramLayout &layout);

  /// Whether the program has more outputs than a mask holds; then every
  /// instance always runs (no guards).
  bool tooManyOutputs() const { return tooMany_; }
  /// The mask of every output.
  OutputMask all() const { return all_; }
  /// The outputs instance `i` (program order) feeds.
  OutputMask ofInstance(size_t i) const { return instances_.at(i); }
  /// The outputs that the storage of `value` feeds.
  OutputMask ofValue(const std::string &value) const;
  /// When the zero-fill of `value`'s storage must run: whenever an
  /// instance that writes it runs. That is more than ofValue(value) when
  /// the writer also writes something else (a fused traversal adding to
  /// two buffers runs for either, and must not add to uncleared memory).
  OutputMask ofZeroFill(const std::string &value) const;

  /// The guard of an instance or zero-fill feeding `mask`:
  /// "hp.hector_needed_outputs & UINT64_C(0x5)", or nullopt when it must
  /// always run (it feeds every output, or the program has too many).
  std::optional<std::string> guard(OutputMask mask) const;

private:
  const ProgramLayout &layout_;
  bool tooMany_ = false;
  OutputMask all_ = 0;
  std::vector<OutputMask> instances_;
  std::map<std::string, OutputMask> roots_; ///< per storage root
  /// Per storage root, the union of its writers' instance masks.
  std::map<std::string, OutputMask> writers_;
};

} // namespace hector::codegen
