// Loop fusion (issue 5, pass 5b; Hector paper section 3.3).
//
// Purpose: merge adjacent loops over the same iteration space into one, so
// that the lowering can emit one traversal kernel (and keep per-row values
// in registers) where the program has several phases. Run after
// passes/LoopCanonicalization.h, which turns edge phases into
// dst_nodes/incoming nests so that they fuse with the reductions around
// them.
//
// What fuses:
//   - two top-level loops of the same kind (edges with edges, dst_nodes
//     with dst_nodes, pairs with pairs, etypes with etypes, ...), adjacent
//     or with loops of other kinds between them: the second loop's variable
//     is renamed to the first's and its body is appended to the first's.
//     When loops lie between, the second loop's statements move up past
//     them, which is legal only when none of them writes a value those
//     statements read (a pairs loop that compact materialization placed
//     between two node nests moves up to the earlier pairs loop, and the
//     nests it separated then fuse);
//   - inside every node loop, two adjacent `incoming` loops over the same
//     node (or two adjacent `outgoing` loops), the same way.
// Apart from that move, statement order within an iteration is
// unchanged; what changes is that the second loop's statements for one row
// now run before the first loop's statements for the next row. That is
// legal exactly when every read in the fused body obeys docs/ir.md rule 4:
// a value written by the first loop is read only at the current
// iteration's own row, and a value reduced by the first loop only after
// the nested loop that reduces it has closed (e.g. `alpha_max[n] max= ...`
// in one `n.incoming` loop, read as `alpha_max[e.dst]` in the next
// `n.incoming` loop of the same node loop, but not in the same one). Rule 4
// is what the verifier checks, reads after writes included, and values
// are single-assignment, so a fusion is kept only when the fused module
// verifies; otherwise the loops stay apart.
// Fusion repeats until nothing more fuses.
//
// Preconditions: the module verifies. Postconditions: it verifies and
// computes the same values.
#pragma once

#include "ir/InterIR.h"

namespace hector::passes {

/// Returns whether the module changed.
bool fuseLoops(ir::Module &module);

} // namespace hector::passes
