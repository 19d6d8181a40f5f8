// Autodiff (issue 5, pass 2): from a forward program, the backward program
// in inter-op IR.
//
// Purpose: given the gradient of every forward output, compute the gradient
// of every non-const forward input and every param. The backward program
// reads the forward values it needs (saved by the caller, e.g. with the
// interpreter's returnAllValues) as const inputs of the same names; it runs
// the forward's loops in reverse order, each mirrored with its body
// reversed, and every op's derivative rule is one case of a switch in
// Autodiff.cpp. A value read in several places gets one partial gradient
// per read, summed by one statement once all of them are complete.
// Gradients are computed only for values that depend on an input or param
// (through differentiable ops: not through detach) and on which an output
// depends, so there is no gradient for graph values or const inputs, and no
// computation that feeds no output.
//
// Preconditions: `forward` passes ir::verifyModule.
// Postconditions: the backward module passes ir::verifyModule (checked
// before returning). Forward ops or reductions without a derivative rule
// (gelu_grad, sum_to; mean= over anything but a node's incoming/outgoing
// edges; a global value read in two loops) are reported as located errors
// and nothing is returned.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/InterIR.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hector::passes {

/// The backward program of a forward module.
struct BackwardProgram {
  /// Named <forward>_backward. Inputs: `grad_<output>` for each forward
  /// output, then the forward values it reads under their own names
  /// (inputs, params and graph values as declared in the forward, temps and
  /// outputs as const inputs); outputs: one gradient per non-const forward
  /// input and per param.
  ir::Module module;
  /// Forward temps/outputs the backward reads (declared `input ... const`).
  std::vector<std::string> savedValues;
  /// Forward input/param name -> output name in `module` ("x" -> "grad_x").
  std::map<std::string, std::string> gradients;
};

/// Builds the backward program of `forward` (see the file comment); reports
/// a located error and returns nullopt for what it cannot differentiate.
std::optional<BackwardProgram> buildBackward(const ir::Module &forward,
                                             ir::DiagnosticEngine &diags);

} // namespace hector::passes
