// Graph-semantic loop canonicalization (issue 5, pass 5a; Hector paper
// section 3.3).
//
// Purpose: a loop over all edges visits the same iterations as a loop over
// all destination nodes of their incoming edges (and as a loop over all
// source nodes of their outgoing edges). Rewriting edge loops into node
// nests puts them in the same shape as the reductions that follow them, so
// that loop fusion (passes/LoopFusion.h) can merge a model's edge phases and
// reductions into one node loop: one traversal kernel instead of several.
//
// The canonical form, applied to top-level `foreach e in edges` loops only:
//   1. A loop whose statements are all edge-local (`v[e] = ...`) or reduce
//      into the destination row (`h[e.dst] op= ...`), with at least one
//      such reduction, becomes
//          foreach n in dst_nodes { foreach e in n.incoming { ... } }
//      with the reduction targets `h[e.dst]` written `h[n]`. Reads are left
//      as they are (`x[e.dst]` inside `n.incoming` is `x[n]`).
//   2. Symmetrically, a loop of edge-local statements and reductions into
//      `[e.src]` becomes `foreach n in src_nodes { foreach e in
//      n.outgoing { ... } }` with `h[e.src]` written `h[n]`.
//   3. A loop of edge-local statements only is rewritten like 1 when a
//      neighbouring top-level loop is a `dst_nodes` loop holding an
//      `incoming` loop (otherwise like 2 when a neighbour is a `src_nodes`
//      loop holding an `outgoing` loop), repeated to a fixed point, so that
//      a run of edge phases between reductions joins the nests around it.
// Edge loops with any other reduction (into a global value, into
// `[e.dst.ntype]`, into both e.src and e.dst rows), and edge-local loops
// with no such neighbour, stay as they are.
//
// Preconditions: the module verifies. Postconditions: it verifies and
// computes the same values (the iterations and statement order per
// iteration are unchanged; only their grouping by node is made explicit).
#pragma once

#include "ir/InterIR.h"

namespace hector::passes {

/// Returns whether the module changed.
bool canonicalizeLoops(ir::Module &module);

} // namespace hector::passes
