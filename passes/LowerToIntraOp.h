// Lowering to the intra-operator IR (issue 5, pass 6; hector.txt 3.2.5).
//
// Purpose: decide, for every statement of an inter-op module, which
// template instance runs it, in three scans by preference:
//   1. GEMM: every `linear`/`linear_t` whose weight is a global value or an
//      etype/ntype value sliced by a type path (`W[e.etype]`,
//      `K[e.src.ntype]`, `W_self`) becomes a segment-MM instance (rows =
//      the loop's edges/pairs/nodes, segments = the weight's type path,
//      gather = the input's path, scatter = the target's path), together
//      with, when `fuse` is on, the reshapes after it and a consumer in the
//      same loop that scales its rows by a per-row scalar
//      (`y = div(t, s[e])`, `h[n] += mul(s[e], t)`): that consumer becomes
//      the GEMM's epilogue and `t` is never stored; a shared-weight
//      `linear` of the GEMM's finished row (`a = linear(t, w)`) becomes its
//      row dot, while `t` is still stored. `outer` reductions into
//      weight rows (`gW[e.etype] += outer(a[e.src], b[e])`) become
//      outer-product GEMMs.
//   2. Traversal: the rest of each top-level loop nest becomes as few
//      traversal instances as the GEMMs between them allow (one per
//      statement when `fuse` is off); a statement in `n.incoming` that reads
//      only node rows is hoisted to the node level; reductions are marked
//      segmented (CSR/CSC), partial-atomic or atomic; values read only
//      where they are computed stay in registers.
//   3. Fallback: whatever no template supports runs in the interpreter
//      (nothing, for the bundled models).
// Reshapes not fused into a GEMM become views of their source's buffer.
//
// Preconditions: `module` passes ir::verifyModule (checked again here).
// Postconditions: the returned program passes intra::verifyProgram: every
// statement is lowered exactly once; instances are in an order that
// respects every dependency (top-level loops in order; within one, a
// GEMM's instances before the traversals that read them and vice versa).
// Returns nullopt, with diagnostics, on an invalid module.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/InterIR.h"
#include "ir/IntraIR.h"

#include <optional>
#include <set>
#include <string>

namespace hector::passes {

struct LoweringOptions {
  /// Fuse: traversal statements of a loop nest share instances, GEMMs
  /// absorb their row-scaling consumers, and an edge GEMM that adds into
  /// its destinations sums each (destination, relation) segment before
  /// the multiply. Off (-fno-fuse): one instance per statement, no
  /// epilogues.
  bool fuse = true;
  /// Let scan 1 produce GEMM instances (off: linears run in traversals).
  bool gemm = true;
  /// Let scan 2 produce traversal instances (off: everything that is not a
  /// GEMM falls back to the interpreter; for testing the third scan).
  bool traversal = true;
  /// Values the backward program reads (passes/Autodiff.h's savedValues):
  /// they are stored in buffers, never kept in registers or hidden in a
  /// GEMM epilogue, so that the forward kernels leave them for the
  /// backward kernels.
  std::set<std::string> saved;
};

std::optional<intra::Program> lowerToIntraOp(const ir::Module &module,
                                             const LoweringOptions &options,
                                             ir::DiagnosticEngine &diags);

/// Instance counts of a lowered program (the per-model summary line).
struct LoweringSummary {
  int gemm = 0, traversal = 0, fallback = 0;
};
LoweringSummary summarizeLowering(const intra::Program &program);

} // namespace hector::passes
