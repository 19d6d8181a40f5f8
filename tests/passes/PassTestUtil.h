// Shared helpers of the pass tests: random typed multigraphs (isolated
// nodes, an empty relation, multi-edges, self-loops), random arguments for
// a module, and running the interpreter on two modules to compare them.
#pragma once

#include "ir/InterIR.h"
#include "runtime/Graph.h"
#include "runtime/Interpreter.h"

#include <memory>
#include <string>

namespace hector::passtest {

/// A random graph with `numNodes` nodes of `numNtypes` types and `numEdges`
/// edges of `numEtypes` relations; relation numEtypes-1 has no edges, node
/// numNodes-1 has no edges at all, and every relation joins one src node
/// type to one dst node type. Deterministic per seed. fp64 on CPU.
std::shared_ptr<runtime::Graph> randomGraph(int64_t numNodes, int64_t numEdges,
                                            int64_t numEtypes,
                                            int64_t numNtypes, uint64_t seed);

/// Random fp64 inputs and params for every input/param `module` declares,
/// shaped for `graph` with the module's default hypers (or `hypers`).
/// Inputs and params require grad when `requiresGrad`.
struct Arguments {
  runtime::TensorMap inputs, params;
};
Arguments randomArguments(const ir::Module &module,
                          const runtime::Graph &graph, uint64_t seed,
                          bool requiresGrad = false,
                          const std::map<std::string, double> &hypers = {});

/// Parses and verifies printed IR; fails the current test (and returns an
/// empty module) when it does not parse or verify.
ir::Module parseVerified(const std::string &text, const std::string &file);

/// Reads `generated/<model>/<model>.inter.ir` (the committed hectorc output
/// of a bundled model) from the source tree.
ir::Module loadBundledModel(const std::string &model);

/// Printed IR of RGCN's uncompacted messages: `m[e] = linear(x[e.src],
/// W[e.etype])` in an incoming loop, then `h[<target>] += div(m[e],
/// <scalar>[e])` (scalar: the graph value rel_in_degree, or the edge input
/// w; target: n, or another access of the incoming loop).
std::string summedMessagesModule(const std::string &scalar = "rel_in_degree",
                                 const std::string &target = "n");

/// The largest relative error max|a-b| / max(max|b|, 1e-30) over the
/// outputs both modules return; fails the test when their output names
/// differ or an output is not finite (then the error is infinite).
double maxRelativeError(const runtime::TensorMap &a,
                        const runtime::TensorMap &b);

} // namespace hector::passtest
