// Broadcast forwarding: an edge value that only copies its node's row is
// read from the node instead of being stored per edge.
//
// Purpose: autodiff turns a node's sum over its incoming edges into a
// broadcast, the gradient of every edge being a copy of the node's:
//     foreach n in dst_nodes {
//       g_n[n] = reshape(grad_h[n]) ...
//       foreach e in n.incoming { g_e[e] = copy(g_n[n]) }
//     }
// Stored, `g_e` is a 64-wide row per edge that the next loops read back:
// on fb15k's 620K edges, 160 MB written and read again, and a traversal
// launch of its own (in RGAT's backward the slowest kernel on mutag). Every
// read `g_e[e2]` is `g_n[e2.dst]`, a row of a node-sized value that the
// cache holds, so this pass rewrites the reads and deletes the copy.
//
// What forwards: a temp `t : edge[S]` written by `t[e] = copy(x[n])` in a
// `foreach e in n.incoming` (or `n.outgoing`) loop nested in the loop of
// node variable n, where x is a node value of the same row shape S and t
// is not in `keep`, and every read of t is at its own edge row (`t[e2]`,
// e2 an edge loop's variable). Each read becomes `x[e2.dst]` (`x[e2.src]`
// for an outgoing loop); inside the same neighbour loop nest, where the
// verifier cannot see that e2.dst is n, it becomes `x[n]`.
//
// Why it is always legal: values are single-assignment, so x is complete
// where the copy reads it and unchanged afterwards, and every read of t
// comes after the copy.
//
// What does not: outputs and `keep`'s values (the forward's values that
// the backward reads are stored), copies that broadcast or read another
// row (`x[n.ntype]`), and values read other than at their own edge row.
//
// Preconditions: the module verifies. Postconditions: it verifies and
// computes the same outputs; loops left empty are removed.
#pragma once

#include "ir/InterIR.h"

#include <set>
#include <string>

namespace hector::passes {

/// Returns whether the module changed.
bool forwardBroadcasts(ir::Module &module,
                       const std::set<std::string> &keep = {});

} // namespace hector::passes
