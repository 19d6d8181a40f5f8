// The inter-op IR interpreter: runs a verified ir::Module on a Graph with
// plain libtorch ops (index_select, index_add, scatter_reduce, matmul per
// type), on whatever device the graph and the tensors live on. It is the
// third lowering level (whatever the templates cannot do runs through it)
// and the numerical oracle that every generated kernel is checked against,
// so it favours being obviously right over being fast.
//
// Execution model (docs/ir.md): top-level loops run in order; each
// statement runs as one whole-tensor operation over all iterations of its
// enclosing loops. A nested `n.incoming` loop iterates over edges, with the
// parent node of edge e being e.dst (e.src for `n.outgoing`). Every op is
// out of place, so torch autograd differentiates the whole program: the
// gradients of the outputs flow back to the inputs and params.
#pragma once

#include "ir/InterIR.h"
#include "runtime/Graph.h"

#include <torch/types.h>

#include <map>
#include <string>

namespace hector::runtime {

using TensorMap = std::map<std::string, torch::Tensor>;

struct InterpretOptions {
  /// Hyper-parameter values that replace the module's defaults. An unknown
  /// name, or a non-integral value for an int hyper, is an error.
  std::map<std::string, double> hypers;
  /// Return every value (inputs, params, graph values, temps, outputs)
  /// rather than only the outputs; for debugging and tests.
  bool returnAllValues = false;
};

/// Runs `module` (which must have passed ir::verifyModule) on `graph`.
///
/// `inputs` and `params` are keyed by the names the module declares. Each
/// tensor must be floating point, of one dtype shared by all of them, on
/// the graph's device, and of shape [rows, *shape] where rows is the number
/// of nodes / edges / unique pairs / edge types / node types of the graph
/// for the value's space, or [*shape] for a global value. Violations, and
/// missing or unknown names, throw ArgumentValueError / ArgumentTypeError
/// (runtime/Errors.h) naming the argument, e.g.
/// `params['W']: expected shape [3, 64, 64], got [3, 64, 32]`.
///
/// Returns the module's outputs (or every value, see InterpretOptions),
/// node/edge/... values with a leading row axis, global values without.
TensorMap interpret(const ir::Module &module, const Graph &graph,
                    const TensorMap &inputs, const TensorMap &params,
                    const InterpretOptions &options = {});

/// The full shape ([rows, *shape], or [*shape] for global values) of every
/// value `module` declares, on `graph` with the hypers of `options`; what a
/// caller must allocate for inputs and params. Throws like interpret() on
/// bad hypers.
std::map<std::string, std::vector<int64_t>>
valueShapes(const ir::Module &module, const Graph &graph,
            const InterpretOptions &options = {});

} // namespace hector::runtime
