// Weighted segment-sum uncompaction: an attention layer's weighted message
// sum goes back to the edges, where the lowering sums it by (destination,
// relation) segment inside the GEMM with per-edge weights.
//
// Purpose: compact materialization computes RGAT's message once per unique
// (source, relation) pair and the sum gathers it per edge:
//     foreach p in pairs {
//       o[p] = linear(x[p.src], W[p.etype])
//       m[p] = reshape(o[p]) shape [H, D]
//       s[p] = linear(o[p], k)                   (the attention's term)
//     }
//     foreach n in dst_nodes {
//       foreach e in n.incoming { t[n] += mul(alpha[e], m[e.pair]) }
//     }
// which writes a row per pair and gathers it again per edge (am: 0.8 GB
// written, 1.5 GB gathered). Per edge the sum reads
//     o2[e] = linear(x[e.src], W[e.etype]); m2[e] = reshape(o2[e])
//     t[n] += mul(alpha[e], m2[e])
// which the lowering runs as one GEMM summed by segment with weights
// alpha (GemmInstance::sumWeights): each chunk of a (destination,
// relation) segment adds its sources' rows, each times its edge's weight,
// before one multiply (docs/perf-notes.md sections 62 and 63). The other
// readers of o and m keep the pair rows; linear operator reordering then
// rewrites them where that pays (s[p] = linear(x[p.src], c[p.etype]) with
// c = linear(W, k) per relation), and the pair message goes when nothing
// reads it any more: no message row reaches memory.
//
// What rewrites: a sum `t[n] += mul(w[e], m[e.pair])` (either operand
// order) in a `foreach e in n.incoming` nested in n's dst-node loop, or
// `t[n] += copy(v[e])` with `v[e] = mul(w[e], m[e.pair])` earlier in that
// loop (v a temp not in `keep` that only the copy reads, which folds into
// the sum first), where
//   - w is an edge value read at the loop's edge, of shape [H] or [];
//   - m is a pair temp not in `keep`, either a message `m[p] =
//     linear(x[p.src], W[p.etype])` (SegmentSumUncompaction.h
//     findPairMessage; w of shape []) or its reshape `m[p] = reshape(o[p])`
//     of shape [H, D] with o such a message (w of shape [H]).
//
// Why it is legal: values are single-assignment and the pairs loop runs
// before the node loop that reads m, so x and W are complete there; m[e.pair]
// equals the same linear (and reshape) of x[e.src] and W[e.etype].
//
// Kept messages are left alone: in a training forward the backward reads
// the message (alpha's gradient is grad_t . m), so only a program with
// nothing kept (the inference program) rewrites RGAT's. Rewrites that do
// not pay are impossible to undo here, but the sum's GEMM reads x[e.src]
// once per edge where the gather read m[e.pair] once per edge: the same
// rows, without the pair rows' write.
//
// Preconditions: the module verifies. Postconditions: it verifies and
// computes the same outputs.
#pragma once

#include "ir/InterIR.h"
#include "passes/GraphStats.h"

#include <set>
#include <string>

namespace hector::passes {

/// Returns whether the module changed. `stats` sizes the linear operator
/// reordering run after the rewrite (passes/LinearReordering.h).
bool uncompactWeightedSums(ir::Module &module, const GraphStats &stats,
                           const std::set<std::string> &keep = {});

} // namespace hector::passes
