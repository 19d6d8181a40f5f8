// Linear operator reordering (hector.txt 3.2.3): when one linear operator
// follows another, compute them in the other order where the FLOP count on
// the target graph's sizes (passes/CostModel.h) says that is cheaper.
//
// Rewrites (x, k, q per-edge rows; W, a, B, W_att weights; r = e.etype):
//   dot(linear(x, W[r]), a[r])               x [K], W [K,N], a [N]
//     -> dot(x, c[r]),   c[r] = linear_t(a[r], W[r])              [K]
//   dot(reshape(linear(x, W[r])) [H,D], a[r]) W [K,H*D], a [H,D]
//     -> linear_t(x, c[r]),  c[r] = linear_t(a[r], transpose(
//        reshape(W[r]) [K,H,D]) perm [1,0,2])                     [H,K]
//   linear(linear(x, W[r]), B[r])            W [K,N], B [N,M]
//     -> linear(x, c[r]),  c[r] = linear(W[r], B[r])              [K,M]
//     (and linear_t(linear(x, W[r]), B[r]) with B [M,N] alike)
//   dot(linear(k, W_att[r]), q)              per head: k [H,Dk], q [H,Dq],
//     -> dot(k, linear_t(q, W_att[r]))         W_att [H,Dk,Dq]  (HGT)
// `dot(a, b)` is matched in either operand order. The weight products are
// computed once per relation in a `foreach r in etypes` loop placed first
// (the weights are params or inputs, so they are available there); at
// least one of the two weights must be sliced by the edge's type. The
// original producer statements stay while anything else still reads them
// (RGAT's z feeds the message) and are removed otherwise.
//
// Each candidate is tried on a copy and kept only when the copy verifies
// and countFlops on `stats` drops strictly; a rewrite that does not pay,
// or a pattern that does not match, leaves the module unchanged.
//
// Ordering: runs on the forward program, before compact materialization
// (a rewritten `linear(x[e.src], c[e.etype])` is still compactable) and
// before loop canonicalization and lowering. On a module that already holds
// backward statements it stays correct, but producers the backward reads
// cannot be removed, so fewer rewrites pay.
//
// Preconditions: `module` verifies; `stats.hypers` and the module's int
// hyper defaults bind every dim to an integer (as countFlops needs).
// Postconditions: the module verifies, computes the same outputs, and
// countFlops(module, stats) is no larger than before.
#pragma once

#include "ir/InterIR.h"
#include "passes/GraphStats.h"

namespace hector::passes {

/// What reorderLinearOps did: the number of rewrites kept and the FLOP
/// count (countFlops on the given stats) before and after.
struct ReorderStats {
  int rewrites = 0;
  double flopsBefore = 0, flopsAfter = 0;
};

/// Swaps adjacent linear operators where countFlops says it is cheaper on
/// a graph of `stats`' sizes (hector.txt 3.2.3): dot(linear(x, W[r]), a[r])
/// -> linear(x, (W[r] a[r])) with the weight product computed once per
/// relation in a `foreach r in etypes` loop; likewise with a reshape to
/// heads in between ([K, H*D] weights, a [H, D] -> product [K, H]), and
/// HGT's attention dot(linear(k, W_att[r]), q) (move W_att to the other
/// operand when cheaper). Returns whether it changed the module.
bool reorderLinearOps(ir::Module &module, const GraphStats &stats,
                      ReorderStats *out = nullptr);

} // namespace hector::passes
