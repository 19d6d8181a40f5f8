#include "codegen/ElementGroups.h"

#include "codegen/ElementPrinter.h"
#include "codegen/Naming.h"

#include <algorithm>

namespace hector::codegen {

using intra::ReductionScheme;
using intra::TravStmt;

namespace {

const ir::Access *accessOf(const ir::Operand &op) {
  return std::get_if<ir::Access>(&op);
}

} // namespace

ElementGrouper::ElementGrouper(const ProgramLayout &layout,
                               const intra::TraversalInstance &inst)
    : layout_(layout) {
  intra::forEachTravStmt(*inst.root, [&](const TravStmt &s) {
    for (const ir::Operand &op : s.stmt.operands)
      if (const ir::Access *a = accessOf(op))
        ++reads_[layout_.root(a->value)];
  });
}

bool ElementGrouper::isGroupable(const TravStmt &s) const {
  // Atomic and partial-atomic adds keep their own loops (the partial
  // accumulator flushes when the target row changes); a hoisted statement
  // whose result the next edge loop stores keeps its own scratch row.
  if (s.reduction != ReductionScheme::None &&
      s.reduction != ReductionScheme::Segmented)
    return false;
  if (s.hoisted && s.storeInInnerLoop)
    return false;
  // A read of its own target at another element would see a value some
  // other lane may already have replaced.
  const ir::Shape &result = layout_.layout(s.stmt.target.value).decl.shape;
  const std::string target = layout_.root(s.stmt.target.value);
  for (size_t k = 0; k < s.stmt.operands.size(); ++k) {
    const ir::Access *a = accessOf(s.stmt.operands[k]);
    if (a && layout_.root(a->value) == target &&
        !readsOnlyElement(s.stmt, k, result,
                          layout_.layout(a->value).decl.shape))
      return false;
  }
  return true;
}

bool ElementGrouper::tryJoin(ElementGroup &g, const TravStmt &s) const {
  const ir::Stmt &stmt = s.stmt;
  const ir::Shape &result = layout_.layout(stmt.target.value).decl.shape;
  // loopMember past the members: `s` is to be the loop's row
  // (tryJoinOverBroadcast).
  const ir::Stmt &loop =
      g.loopMember < g.members.size() ? g.members[g.loopMember]->stmt : stmt;
  // Same row size: element i goes to the same lane in both loops.
  if (shapeSize(result) !=
      shapeSize(layout_.layout(loop.target.value).decl.shape))
    return false;
  const std::string target = layout_.root(stmt.target.value);
  std::map<std::pair<size_t, size_t>, int> forwarded;
  for (const TravStmt *m : g.members) {
    const std::string written = layout_.root(m->stmt.target.value);
    // Two members writing one row, or a later member overwriting what an
    // earlier one reads: either would need an order across lanes.
    if (written == target)
      return false;
    for (const ir::Operand &op : m->stmt.operands)
      if (const ir::Access *a = accessOf(op);
          a && layout_.root(a->value) == target)
        return false;
    for (size_t k = 0; k < stmt.operands.size(); ++k) {
      const ir::Access *a = accessOf(stmt.operands[k]);
      if (!a || layout_.root(a->value) != written)
        continue;
      // Only a plain result, read as itself at element i of the same row,
      // is the member's value there; a segmented accumulator's local is
      // one contribution, not the row.
      const bool sameRow =
          a->value == m->stmt.target.value &&
          (layout_.home(a->value) == Home::Register ||
           a->index == m->stmt.target.index);
      // A broadcast member holds the element that element i reads.
      const ir::Shape &read = layout_.layout(a->value).decl.shape;
      const bool atElement = g.broadcast.count(m->id)
                                 ? readsPrefixOnly(stmt, k, result, read)
                                 : readsOnlyElement(stmt, k, result, read);
      if (m->reduction != ReductionScheme::None || !sameRow || !atElement)
        return false;
      forwarded[{g.members.size(), k}] = m->id;
    }
  }
  g.members.push_back(&s);
  g.forwarded.insert(forwarded.begin(), forwarded.end());
  return true;
}

bool ElementGrouper::recomputable(
    const TravStmt &s, const std::vector<const TravStmt *> &run) const {
  const ir::Stmt &stmt = s.stmt;
  if (s.reduction != ReductionScheme::None || s.hoisted ||
      !(ir::isElementwiseUnary(stmt.op) || ir::isElementwiseBinary(stmt.op)))
    return false;
  for (const ir::Operand &op : stmt.operands) {
    const ir::Access *a = accessOf(op);
    if (!a)
      continue;
    const std::string root = layout_.root(a->value);
    for (const TravStmt *w : run)
      if (layout_.root(w->stmt.target.value) == root)
        return false;
  }
  return true;
}

bool ElementGrouper::tryJoinOverBroadcast(
    ElementGroup &g, const TravStmt &s,
    const std::vector<const TravStmt *> &run) const {
  if (g.members.size() != 1 || !g.broadcast.empty())
    return false;
  const TravStmt &narrow = *g.members.front();
  const ir::Dim wide =
      shapeSize(layout_.layout(s.stmt.target.value).decl.shape);
  if (shapeSize(layout_.layout(narrow.stmt.target.value).decl.shape) == wide ||
      !recomputable(narrow, run))
    return false;
  ElementGroup joined = g;
  joined.broadcast.insert(narrow.id);
  joined.loopMember = 1; // s's row
  if (!tryJoin(joined, s) || joined.forwarded.empty())
    return false;
  g = std::move(joined);
  return true;
}

bool ElementGrouper::tryJoinNarrow(
    ElementGroup &g, const TravStmt &s,
    const std::vector<const TravStmt *> &run) const {
  const ir::Stmt &stmt = s.stmt;
  if (g.broadcast.empty() || g.loopMember >= g.members.size() ||
      s.reduction != ReductionScheme::None || s.hoisted ||
      !(ir::isElementwiseUnary(stmt.op) || ir::isElementwiseBinary(stmt.op)))
    return false;
  const ir::Shape &result = layout_.layout(stmt.target.value).decl.shape;
  const ir::Dim size = shapeSize(result);
  const ir::Dim whole = shapeSize(
      layout_.layout(g.members[g.loopMember]->stmt.target.value).decl.shape);
  if (size == whole)
    return false;
  // Its element at prefixIndex(i) must be the one the wider rows' readers
  // take: a row of one element, or a shape a broadcast member has already.
  bool knownShape = size == ir::Dim::constant(1);
  for (const TravStmt *m : g.members)
    if (g.broadcast.count(m->id) &&
        layout_.layout(m->stmt.target.value).decl.shape == result)
      knownShape = true;
  if (!knownShape)
    return false;
  const std::string target = layout_.root(stmt.target.value);
  std::map<std::pair<size_t, size_t>, int> forwarded;
  for (const TravStmt *m : g.members) {
    // As tryJoin: no second writer of a row, no overwrite of a row a
    // member reads.
    if (layout_.root(m->stmt.target.value) == target)
      return false;
    for (const ir::Operand &op : m->stmt.operands)
      if (const ir::Access *a = accessOf(op);
          a && layout_.root(a->value) == target)
        return false;
  }
  for (size_t k = 0; k < stmt.operands.size(); ++k) {
    const ir::Access *a = accessOf(stmt.operands[k]);
    if (!a)
      continue;
    const std::string root = layout_.root(a->value);
    const TravStmt *writer = nullptr;
    for (const TravStmt *w : run)
      if (layout_.root(w->stmt.target.value) == root)
        writer = w;
    if (!writer)
      continue; // written before the run: any lane may read any element
    // Written in the run: only by a broadcast member of g, read as that
    // member's row at this statement's own element.
    if (!g.broadcast.count(writer->id) ||
        std::find(g.members.begin(), g.members.end(), writer) ==
            g.members.end() ||
        a->value != writer->stmt.target.value ||
        !(layout_.home(a->value) == Home::Register ||
          a->index == writer->stmt.target.index) ||
        layout_.layout(a->value).decl.shape != result ||
        !readsOnlyElement(stmt, k, result, layout_.layout(a->value).decl.shape))
      return false;
    forwarded[{g.members.size(), k}] = writer->id;
  }
  g.members.push_back(&s);
  g.broadcast.insert(s.id);
  g.forwarded.insert(forwarded.begin(), forwarded.end());
  return true;
}

void ElementGrouper::findUnstored(ElementGroup &g) const {
  if (!g.fused())
    return;
  for (const TravStmt *m : g.members) {
    const std::string &value = m->stmt.target.value;
    if (m->reduction != ReductionScheme::None ||
        layout_.home(value) != Home::Register || layout_.root(value) != value)
      continue;
    int forwardedReads = 0;
    for (const auto &[operand, producer] : g.forwarded)
      forwardedReads += producer == m->id;
    auto it = reads_.find(value);
    const int reads = it == reads_.end() ? 0 : it->second;
    if (forwardedReads > 0 && forwardedReads == reads)
      g.unstored.insert(m->id);
  }
}

std::vector<ElementGroup>
ElementGrouper::group(const std::vector<const TravStmt *> &run) const {
  std::vector<ElementGroup> groups;
  bool open = false; // whether the last group may take more members
  for (const TravStmt *s : run) {
    const bool groupable = isGroupable(*s);
    if (!(open && groupable &&
          (tryJoin(groups.back(), *s) ||
           tryJoinOverBroadcast(groups.back(), *s, run) ||
           tryJoinNarrow(groups.back(), *s, run)))) {
      groups.push_back(ElementGroup{{s}, {}, {}, {}, 0});
      open = groupable;
    }
  }
  for (ElementGroup &g : groups)
    findUnstored(g);
  return groups;
}

bool ElementGrouper::repeatsWithoutSync(
    const std::vector<const TravStmt *> &run) const {
  return !run.empty() && isGroupable(*run.front()) && group(run).size() == 1;
}

std::set<std::string>
ElementGrouper::unstoredRegisters(const intra::TravLoop &root) const {
  std::set<int> unstored;
  // The same runs as the emitter prints: the statements between loops.
  auto visit = [&](const intra::TravLoop &loop, auto &self) -> void {
    std::vector<const TravStmt *> run;
    auto flush = [&] {
      for (const ElementGroup &g : group(run))
        unstored.insert(g.unstored.begin(), g.unstored.end());
      run.clear();
    };
    for (const intra::TravItem &item : loop.body) {
      if (const auto *s = std::get_if<TravStmt>(&item)) {
        run.push_back(s);
        continue;
      }
      flush();
      self(*std::get<std::unique_ptr<intra::TravLoop>>(item), self);
    }
    flush();
  };
  visit(root, visit);
  std::map<std::string, bool> allUnstored; // root -> every writer unstored
  intra::forEachTravStmt(root, [&](const TravStmt &s) {
    const std::string r = layout_.root(s.stmt.target.value);
    auto [it, fresh] = allUnstored.emplace(r, true);
    it->second = it->second && unstored.count(s.id) > 0;
  });
  std::set<std::string> roots;
  for (const auto &[r, none] : allUnstored)
    if (none)
      roots.insert(r);
  return roots;
}

} // namespace hector::codegen
