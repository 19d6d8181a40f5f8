#include "passes/CompactMaterialization.h"

#include "passes/LoopWalk.h"

#include <set>
#include <string>
#include <vector>

namespace hector::passes {
namespace {

/// The variable of the pairs loops this pass creates. Top-level loop
/// variables cannot shadow anything, so a fixed name is safe.
const char *const kPairVar = "p";

void collectTargets(const ir::Loop &loop, std::set<std::string> &out) {
  for (const ir::BodyItem &item : loop.body) {
    if (const auto *stmt = std::get_if<ir::Stmt>(&item))
      out.insert(stmt->target.value);
    else
      collectTargets(*std::get<std::unique_ptr<ir::Loop>>(item), out);
  }
}

/// Whether every read of edge value `name` is at its own edge row (`v[e]`
/// with e an edge loop's variable): those are the reads `v[e.pair]` can
/// replace.
bool readsOnlyOwnRow(ir::Module &m, const std::string &name) {
  bool ok = true;
  forEachStmt(m, [&](ir::Stmt &s, const std::vector<ir::Loop *> &scopes) {
    for (const ir::Operand &op : s.operands) {
      const auto *a = std::get_if<ir::Access>(&op);
      if (!a || a->value != name)
        continue;
      const ir::Loop *l = bindingLoop(scopes, a->index.var);
      ok = ok && l && isEdgeLoop(l->kind) && a->index.attrs.empty();
    }
  });
  return ok;
}

/// Turns every read `v[e]` into `v[e.pair]`.
void readThroughPairs(ir::Module &m, const std::string &name) {
  forEachStmt(m, [&](ir::Stmt &s, const std::vector<ir::Loop *> &) {
    for (ir::Operand &op : s.operands)
      if (auto *a = std::get_if<ir::Access>(&op);
          a && a->value == name && a->index.attrs.empty())
        a->index.attrs.push_back(ir::Attr::Pair);
  });
}

/// Moves the compactable statements of one top-level loop out, in program
/// order, so that a chain compacts in one sweep.
class LoopCompactor {
public:
  LoopCompactor(ir::Module &m, ir::Loop &top) : m_(m) {
    collectTargets(top, writtenHere_);
    std::vector<ir::Loop *> scopes;
    visit(top, scopes);
  }

  /// The moved statements, rewritten to range over pairs, in order.
  std::vector<ir::Stmt> moved;

private:
  void visit(ir::Loop &loop, std::vector<ir::Loop *> &scopes) {
    scopes.push_back(&loop);
    for (size_t i = 0; i < loop.body.size();) {
      if (auto *inner = std::get_if<std::unique_ptr<ir::Loop>>(&loop.body[i])) {
        visit(**inner, scopes);
        ++i;
        continue;
      }
      ir::Stmt &stmt = std::get<ir::Stmt>(loop.body[i]);
      if (std::optional<ir::Stmt> compact = pairStmt(stmt, loop)) {
        writtenHere_.erase(stmt.target.value);
        loop.body.erase(loop.body.begin() + i);
        m_.findValue(compact->target.value)->space = ir::Space::Pair;
        readThroughPairs(m_, compact->target.value);
        moved.push_back(std::move(*compact));
        continue;
      }
      ++i;
    }
    scopes.pop_back();
  }

  /// The statement rewritten over `p in pairs`, or nullopt when it does not
  /// compact.
  std::optional<ir::Stmt> pairStmt(const ir::Stmt &s, const ir::Loop &loop) {
    if (!isEdgeLoop(loop.kind) || s.reduce != ir::Reduce::None ||
        s.target.index.var != loop.var || !s.target.index.attrs.empty())
      return std::nullopt;
    ir::ValueDecl *decl = m_.findValue(s.target.value);
    if (!decl || decl->kind != ir::ValueKind::Temp ||
        decl->space != ir::Space::Edge ||
        !readsOnlyOwnRow(m_, s.target.value))
      return std::nullopt;
    ir::Stmt out = s;
    out.target.index = ir::IndexPath{kPairVar, {}};
    for (ir::Operand &op : out.operands) {
      auto *a = std::get_if<ir::Access>(&op);
      if (!a)
        continue;
      std::optional<ir::IndexPath> path = pairPath(*a, loop);
      if (!path)
        return std::nullopt;
      a->index = *path;
    }
    return out;
  }

  /// The operand's index path rewritten from the edge to its pair, or
  /// nullopt when the row is not determined by (e.src, e.etype) or is not
  /// complete before the enclosing top-level loop.
  std::optional<ir::IndexPath> pairPath(const ir::Access &a,
                                        const ir::Loop &loop) const {
    if (writtenHere_.count(a.value))
      return std::nullopt;
    const ir::IndexPath &path = a.index;
    if (path.isGlobal())
      return path;
    std::vector<ir::Attr> attrs = path.attrs;
    if (loop.kind == ir::LoopKind::Outgoing && path.var == loop.parent)
      attrs.insert(attrs.begin(), ir::Attr::Src); // n is e.src here
    else if (path.var != loop.var)
      return std::nullopt; // another loop's row, e.g. e.dst's node n
    if (attrs.empty())
      return std::nullopt; // the edge row itself
    switch (attrs.front()) {
    case ir::Attr::Pair:
      attrs.erase(attrs.begin());
      [[fallthrough]];
    case ir::Attr::Src:
    case ir::Attr::EType:
      return ir::IndexPath{kPairVar, attrs};
    default:
      return std::nullopt;
    }
  }

  ir::Module &m_;
  std::set<std::string> writtenHere_; ///< targets still in the top loop
};

/// A moved statement joins a pairs loop that may name its variable
/// differently.
void renamePairVar(ir::Stmt &s, const std::string &var) {
  auto rename = [&](ir::Access &a) {
    if (a.index.var == kPairVar)
      a.index.var = var;
  };
  rename(s.target);
  for (ir::Operand &op : s.operands)
    if (auto *a = std::get_if<ir::Access>(&op))
      rename(*a);
}

/// One sweep over the top-level loops; returns the number compacted.
int compactOnce(ir::Module &m) {
  int count = 0;
  for (size_t t = 0; t < m.loops.size(); ++t) {
    if (m.loops[t]->kind == ir::LoopKind::Pairs)
      continue;
    LoopCompactor compactor(m, *m.loops[t]);
    if (compactor.moved.empty())
      continue;
    count += static_cast<int>(compactor.moved.size());
    // Everything the moved statements read is complete before loop t, so
    // they may run at the end of a pairs loop right before it.
    ir::Loop *pairs = t > 0 && m.loops[t - 1]->kind == ir::LoopKind::Pairs
                          ? m.loops[t - 1].get()
                          : nullptr;
    if (!pairs) {
      auto fresh = std::make_unique<ir::Loop>();
      fresh->kind = ir::LoopKind::Pairs;
      fresh->var = kPairVar;
      fresh->loc = m.loops[t]->loc;
      pairs = fresh.get();
      m.loops.insert(m.loops.begin() + t, std::move(fresh));
      ++t;
    }
    for (ir::Stmt &s : compactor.moved) {
      renamePairVar(s, pairs->var);
      pairs->body.emplace_back(std::move(s));
    }
  }
  return count;
}

} // namespace

bool compactMaterialization(ir::Module &module, CompactStats *stats) {
  int total = 0;
  while (int count = compactOnce(module))
    total += count;
  if (stats)
    stats->compactedValues = total;
  if (total == 0)
    return false;
  dropEmptyLoops(module);
  return true;
}

} // namespace hector::passes
