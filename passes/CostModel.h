// The FLOP cost model of the inter-op IR: how many floating-point
// operations one run of a module takes on a graph of given sizes. Linear
// operator reordering decides with it whether a rewrite pays, and the
// compiler reports it per model (before and after the optimisations).
//
// Counting rules (per row of the statement's loop; shapes are per-row
// shapes evaluated with the int hypers):
//   linear / linear_t    2 * numel(result) * K  (K: the contracted axis:
//                        [..,K]x[K,N] is 2*prod(..)*K*N, per-head [H,K] x
//                        [H,K,N] is 2*H*K*N)
//   dot                  2 * numel(operand a)
//   outer                numel(result)
//   elementwise          numel(result) (unary, binary, leaky_relu, the
//                        activation gradients, eq)
//   sum_to               numel(operand)
//   copy, detach, reshape, transpose, concat, slice, embed: 0 (data
//                        movement)
//   a reduction (+=, mean=, max=) adds numel(result) per contribution.
// A statement's count is its per-row cost times its loop's trip count:
// edges for `edges` and nested `n.incoming`/`n.outgoing` loops, nodes for
// `nodes`/`dst_nodes`/`src_nodes`, and pairs, etypes, ntypes likewise;
// with GraphStats::dstProductsPerSegment, an edge loop's `linear(x[e.dst],
// W[e.etype])` (or linear_t) counts (destination, relation) segments
// instead (the lowering runs it once a chunk).
//
// Precondition: the module verifies, and every dim of every value's shape
// evaluates to an integer under the module's int hypers with `stats.hypers`
// replacing their defaults (otherwise countFlops throws
// std::invalid_argument naming the value).
#pragma once

#include "ir/InterIR.h"
#include "passes/GraphStats.h"

#include <string>
#include <utility>
#include <vector>

namespace hector::passes {

/// The FLOP count of a module, in total and per statement.
struct FlopReport {
  double total = 0;
  /// Target value name -> flops of its defining statement, in program
  /// order.
  std::vector<std::pair<std::string, double>> perValue;
};

/// Multiply-add count (2 flops per MAC; 1 per elementwise op/reduction
/// step) of running `module` once on a graph of the given sizes with the
/// given (or default) int hypers: each statement's per-row cost times its
/// trip count (edges, nodes, pairs, etypes, ntypes; nested incoming/outgoing
/// loops: edges).
FlopReport countFlops(const ir::Module &module, const GraphStats &stats);

} // namespace hector::passes
