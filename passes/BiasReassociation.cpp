#include "passes/BiasReassociation.h"

#include "passes/LoopWalk.h"

#include <optional>

namespace hector::passes {
namespace {

/// The access of operand i of `s` when it reads the loop's own row.
const ir::Access *ownRow(const ir::Stmt &s, size_t i, const ir::Loop &loop) {
  const auto *a = std::get_if<ir::Access>(&s.operands[i]);
  return a && a->index == ir::IndexPath{loop.var, {}} ? a : nullptr;
}

/// Whether `s` is a plain two-operand add writing the loop's own row.
bool isRowAdd(const ir::Stmt &s, const ir::Loop &loop) {
  return s.op == ir::OpKind::Add && s.reduce == ir::Reduce::None &&
         s.operands.size() == 2 &&
         s.target.index == ir::IndexPath{loop.var, {}};
}

/// A temp the pass may rename the meaning of: not kept, read `reads` times.
bool isPrivateTemp(ir::Module &m, const std::string &value,
                   const std::set<std::string> &keep, int reads) {
  return isUnkeptTemp(m, value, keep) && readCount(m, value) == reads;
}

/// Whether `value` is written in `loop.body[0, before)` by a linear whose
/// epilogue can take a bias (see the header).
bool isLinearRow(const ir::Module &m, const ir::Loop &loop, size_t before,
                 const std::string &value) {
  for (size_t i = 0; i < before; ++i) {
    const auto *s = std::get_if<ir::Stmt>(&loop.body[i]);
    if (!s || s->target.value != value)
      continue;
    if ((s->op != ir::OpKind::Linear && s->op != ir::OpKind::LinearT) ||
        s->reduce != ir::Reduce::None || s->operands.size() != 2 ||
        !(s->target.index == ir::IndexPath{loop.var, {}}))
      return false;
    const auto *w = std::get_if<ir::Access>(&s->operands[1]);
    const ir::ValueDecl *wd = w ? m.findValue(w->value) : nullptr;
    return wd && wd->shape.size() == 2;
  }
  return false;
}

/// The shared bias operand of `o[i] = add(u[i], b)` (either order), or
/// nullptr.
const ir::Access *sharedBias(const ir::Module &m, const ir::Stmt &s,
                             const ir::Loop &loop, const std::string &u) {
  for (size_t i = 0; i < 2; ++i) {
    const ir::Access *row = ownRow(s, i, loop);
    const auto *b = std::get_if<ir::Access>(&s.operands[1 - i]);
    if (!row || !b || row->value != u || !b->index.isGlobal())
      continue;
    const ir::ValueDecl *bd = m.findValue(b->value);
    const ir::ValueDecl *ud = m.findValue(u);
    if (bd && bd->kind == ir::ValueKind::Param &&
        bd->space == ir::Space::Global && bd->shape == ud->shape)
      return b;
  }
  return nullptr;
}

/// Reassociates the pair of adds whose first is loop.body[at], if they
/// match the header's form. Returns whether it did.
bool reassociateAt(ir::Module &m, ir::Loop &loop, size_t at,
                   const std::set<std::string> &keep) {
  auto &first = std::get<ir::Stmt>(loop.body[at]);
  if (!isRowAdd(first, loop) || !ownRow(first, 0, loop) ||
      !ownRow(first, 1, loop) || !isPrivateTemp(m, first.target.value, keep, 1))
    return false;
  const std::string &u = first.target.value;
  for (size_t j = at + 1; j < loop.body.size(); ++j) {
    auto *second = std::get_if<ir::Stmt>(&loop.body[j]);
    if (!second || !isRowAdd(*second, loop))
      continue;
    const ir::Access *bias = sharedBias(m, *second, loop, u);
    if (!bias)
      continue;
    // The linear term r (operand ri of the first add); a is the other.
    for (size_t ri : {1u, 0u}) {
      const ir::Access r = *ownRow(first, ri, loop);
      const ir::Access a = *ownRow(first, 1 - ri, loop);
      if (r.value == a.value || !isPrivateTemp(m, r.value, keep, 1) ||
          !isLinearRow(m, loop, at, r.value))
        continue;
      const ir::Access b = *bias;
      const ir::Access uRow = first.target;
      first.operands = {r, b};
      second->operands = {a, uRow};
      return true;
    }
    return false;
  }
  return false;
}

} // namespace

bool reassociateBias(ir::Module &module, const std::set<std::string> &keep) {
  bool changed = false;
  std::vector<ir::Loop *> scopes;
  for (auto &top : module.loops)
    forEachLoop(*top, scopes, [&](ir::Loop &loop, std::vector<ir::Loop *> &) {
      for (size_t i = 0; i < loop.body.size(); ++i)
        if (std::holds_alternative<ir::Stmt>(loop.body[i]))
          changed = reassociateAt(module, loop, i, keep) || changed;
    });
  return changed;
}

} // namespace hector::passes
