// ElementGroups: which consecutive statements of a traversal loop body
// share one element loop (codegen/TraversalEmitter).
//
// Each statement of a traversal is an element loop over its target row, in
// which element i always goes to the same lane (Traversal.h), followed by
// a group sync that publishes its writes to the other lanes. A later
// statement that reads an earlier one's target only at its own element i,
// over a row of the same size, reads what its own lane has just written.
// Such statements run in one element loop with no sync between them, and
// the later one takes the earlier one's value from a local instead of
// reloading it. A target that nothing outside the group reads (a per-edge
// temporary, such as RGCN's normalised message) is then not stored at all.
//
// This removes, per edge and statement, a sync, a scratch round trip and
// an element loop's overhead: the bulk of a traversal kernel's
// instructions on wide rows (docs/perf-notes.md section 7).
//
// A narrow statement may also join the wider statement after it that
// broadcasts its row (RGAT's `alpha[e] = div(alpha_exp[e], alpha_sum[n])`,
// one scalar per head, then `msg[e] = mul(alpha[e], msg_0[e.pair])`): when
// it reads nothing the run writes, every lane can compute the element its
// own elements read, so the group runs over the wider row and the narrow
// statement is recomputed where it is needed and stored once per element
// (docs/perf-notes.md section 41). The lanes no longer wait for one lane's
// store, a sync and a reload before they read the message row. A later
// narrow statement that reads only such broadcast members (and what the
// run does not write) joins as one more (tryJoinNarrow), so that a chain
// of per-row scalars stays in the wider loop.

#pragma once

#include "codegen/ProgramLayout.h"
#include "ir/IntraIR.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hector::codegen {

/// Statements that run in one element loop, in program order.
struct ElementGroup {
  std::vector<const intra::TravStmt *> members;
  /// Operands that read an earlier member's result at element i:
  /// (member position, operand position) -> the producer's statement id.
  std::map<std::pair<size_t, size_t>, int> forwarded;
  /// Statement ids of members whose target only this group's forwarded
  /// operands read: their store is left out.
  std::set<int> unstored;
  /// Statement ids of members whose row is smaller than the loop's, a
  /// prefix of it (ElementGroups.h): each runs at element prefixIndex(i)
  /// of its own row, in every lane that reads it, and stores that element
  /// where i is the first of the elements that read it.
  std::set<int> broadcast;
  /// The member whose row the element loop runs over.
  size_t loopMember = 0;

  bool fused() const { return members.size() > 1; }
};

/// Splits runs of consecutive statements of one traversal instance into
/// element groups.
class ElementGrouper {
public:
  ElementGrouper(const ProgramLayout &layout,
                 const intra::TraversalInstance &inst);

  /// `run`: consecutive statements of one loop body (no loop between).
  std::vector<ElementGroup>
  group(const std::vector<const intra::TravStmt *> &run) const;

  /// Whether a loop whose body is `run` needs no group sync between its
  /// iterations: the run is one group, so every value one lane reads that
  /// the body writes is its own (forwarded or its own element), and what
  /// other lanes wrote was written before the loop.
  bool repeatsWithoutSync(const std::vector<const intra::TravStmt *> &run) const;

  /// The register roots no statement of the nest stores (every writer is
  /// unstored in its group): they need no scratch slot.
  std::set<std::string> unstoredRegisters(const intra::TravLoop &root) const;

private:
  /// Whether `s` may start a group or join one as a later member.
  bool isGroupable(const intra::TravStmt &s) const;
  /// Adds `s` to `g` if it can share g's element loop; false otherwise.
  bool tryJoin(ElementGroup &g, const intra::TravStmt &s) const;
  /// Whether `s` may run at a broadcast index inside a wider statement's
  /// loop: an elementwise, unreduced statement that reads nothing `run`
  /// writes, so that any lane may compute any of its elements.
  bool recomputable(const intra::TravStmt &s,
                    const std::vector<const intra::TravStmt *> &run) const;
  /// Adds `s` to `g`, a group of one recomputable narrow statement whose
  /// row `s` broadcasts, with the loop over s's row; false (and `g`
  /// unchanged) otherwise.
  bool
  tryJoinOverBroadcast(ElementGroup &g, const intra::TravStmt &s,
                       const std::vector<const intra::TravStmt *> &run) const;
  /// Adds `s` to `g` as another broadcast member: a narrow statement
  /// whose row is one element a row (or has an earlier broadcast member's
  /// shape), elementwise and unreduced, that reads from the run only
  /// earlier broadcast members of `g` with its own shape, at its own
  /// element. Each lane recomputes it from those members' values at the
  /// same prefix index (HGT's `h_1[n] = sub(1, gate[n])` after `gate[n] =
  /// sigmoid(skip[n.ntype])`, both read by the row's later statements).
  /// False (and `g` unchanged) otherwise.
  bool tryJoinNarrow(ElementGroup &g, const intra::TravStmt &s,
                     const std::vector<const intra::TravStmt *> &run) const;
  /// Marks the members whose every read is forwarded within `g`.
  void findUnstored(ElementGroup &g) const;

  const ProgramLayout &layout_;
  /// Operand reads in the whole instance, per storage root.
  std::map<std::string, int> reads_;
};

} // namespace hector::codegen
