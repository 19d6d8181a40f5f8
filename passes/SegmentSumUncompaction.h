// Segment-sum uncompaction: a per-pair message that only its destination's
// sum reads goes back to the edges, where the lowering sums it by
// (destination, relation) segment inside the GEMM.
//
// Purpose: compact materialization (CompactMaterialization.h) computes
// RGCN's message once per unique (source, relation) pair,
//     foreach p in pairs { m[p] = linear(x[p.src], W[p.etype]) }
//     foreach n in dst_nodes {
//       foreach e in n.incoming { h[n] += div(m[e.pair], rel_in_degree[e]) }
//     }
// which writes a row per pair and gathers it again per edge (am: 0.8 GB
// written, 1.5 GB gathered). Per edge, the same sum is
//     m[e] = linear(x[e.src], W[e.etype]); h[n] += div(m[e], rel_in_degree[e])
// which the lowering runs as one GEMM summed by segment
// (GemmInstance::summedBySegment): each chunk of a (destination, relation)
// segment adds its sources' rows before one multiply, and no message
// reaches memory (docs/perf-notes.md sections 55 to 57). The pass runs in
// the loop phase, after the backward is built from the compacted forward,
// so the backward keeps its per-pair gradient GEMMs.
//
// What uncompacts: a temp `m : pair[S]` not in `keep`, written by
// `m[p] = linear(x[p.src], W[p.etype])` (x a node value, W an etype
// weight [K, S]) and read by exactly one statement,
// `t[n] += op(m[e.pair]...)` in a `foreach e in n.incoming` nested in the
// dst-node loop of n, where op is copy, or div or mul by rel_in_degree[e]
// (a scalar the same on a whole segment). The statement `m[e] =
// linear(x[e.src], W[e.etype])` goes right before the sum, which reads
// m[e]; m becomes an edge value, and a pairs loop left empty goes.
//
// Before that, a scaled copy folds into its sum (rgcn.hgnn's form):
// `v[e] = div(m[..], rel_in_degree[e]); t[n] += copy(v[e])`, with v a temp
// not in `keep` read by the copy alone, becomes `t[n] += div(m[..],
// rel_in_degree[e])` (v goes), whether m is a pair value or an edge one.
//
// Why it is legal: values are single-assignment and m's pairs loop runs
// before the node loop that reads m, so x and W are complete there and
// stay so; the sum of m[e] over the incoming edges is the sum of
// m[e.pair], since m[e.pair] = linear(x[e.src], W[e.etype]).
//
// What does not: messages that anything else reads (RGAT's and HGT's
// attention reads theirs), kept ones (the backward reads them), per-edge
// scalars other than rel_in_degree (they may differ within a segment),
// and messages of other shapes (per-head weights, other gathers).
//
// Preconditions: the module verifies. Postconditions: it verifies and
// computes the same outputs.
#pragma once

#include "ir/InterIR.h"

#include <optional>
#include <set>
#include <string>
#include <variant>

namespace hector::passes {

/// A statement of a top-level pairs loop: the loop and its place in the
/// body.
struct PairStmt {
  ir::Loop *pairs = nullptr;
  size_t at = 0;
  ir::Stmt &stmt() const { return std::get<ir::Stmt>(pairs->body[at]); }
};

/// The statement of a pairs loop that writes pair value `value`.
std::optional<PairStmt> findPairStmt(ir::Module &m, const std::string &value);

/// That statement when it is a pair message `m[p] = linear(x[p.src],
/// W[p.etype])` (x a node value, W an etype weight [K, N]). With
/// `perHeadWeights`, also one whose weight is per head, [H, K, N], on an
/// x of shape [H, K] (HGT's `linear(v[p.src], v_rel[p.etype])`): each
/// head's K values times its own [K, N] matrix.
std::optional<PairStmt> findPairMessage(ir::Module &m, const std::string &value,
                                        bool perHeadWeights = false);

/// Returns whether the module changed.
bool uncompactSegmentSums(ir::Module &module,
                          const std::set<std::string> &keep = {});

} // namespace hector::passes
