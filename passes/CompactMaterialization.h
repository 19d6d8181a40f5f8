// Compact materialization (issue 5, pass 4; Hector paper section 3.4).
//
// Purpose: an edge value that depends only on the edge's source node and
// edge type has the same row for every edge of one unique (src, etype)
// pair. Such a value is computed and stored once per pair, in a
// `foreach p in pairs` loop, and every edge that reads it reads its pair's
// row through the edge -> pair map (`z[e]` becomes `z[e.pair]`). On the
// am graph (0.57 pairs per edge) this removes 43% of RGAT's message GEMM
// and the memory of its result.
//
// What compacts: a temp `v : edge[..]` whose defining statement is a plain
// assignment `v[e] = op(...)` in an `edges`, `n.incoming` or `n.outgoing`
// loop and reads only
//   - rows reachable from (e.src, e.etype): `x[e.src]`, `x[e.src.ntype]`,
//     `W[e.etype]`, `u[e.pair]` (an already compacted value), and, inside
//     `n.outgoing`, `x[n]` / `x[n.ntype]` (n is e.src there);
//   - global values and scalars;
// and none of whose operands is written in the same top-level loop (the
// statement moves before that loop). The statement moves, with its index
// paths rewritten (e.src -> p.src, e.etype -> p.etype, e.pair -> p,
// e.src.ntype -> p.src.ntype), into a pairs loop placed right before the
// top-level loop that held it (appended to that loop when a pairs loop is
// already there), and `v` is redeclared `temp v : pair[..]`. The pass
// iterates to a fixed point, so chains (a linear, then a reshape of it,
// then a dot with a per-relation vector) compact together.
//
// What does not: outputs (their layout is the caller's), values reading
// e.dst or an edge row (`rel_in_degree[e]`, an uncompacted edge temp), and
// edge values read anywhere other than at their own edge row.
//
// Preconditions: the module verifies. Postconditions: it verifies, and
// computes the same outputs on every graph. Loops left empty by the move
// are removed.
#pragma once

#include "ir/InterIR.h"

namespace hector::passes {

struct CompactStats {
  int compactedValues = 0; ///< edge values now stored per (src, etype) pair
};

/// Returns whether the module changed.
bool compactMaterialization(ir::Module &module, CompactStats *stats = nullptr);

} // namespace hector::passes
