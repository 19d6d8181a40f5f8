#include "passes/LoopFusion.h"

#include "ir/Diagnostics.h"
#include "ir/InterIRVerifier.h"

#include <string>

namespace hector::passes {
namespace {

bool isNeighborLoop(ir::LoopKind k) {
  return k == ir::LoopKind::Incoming || k == ir::LoopKind::Outgoing;
}

/// Renames loop variable `from` to `to` in `loop` (its header, nested
/// headers and every index path). The verifier forbids shadowing, so every
/// use of `from` inside the loop is this variable.
void renameVar(ir::Loop &loop, const std::string &from, const std::string &to) {
  auto rename = [&](ir::Access &a) {
    if (a.index.var == from)
      a.index.var = to;
  };
  if (loop.var == from)
    loop.var = to;
  if (loop.parent == from)
    loop.parent = to;
  for (ir::BodyItem &item : loop.body) {
    if (auto *inner = std::get_if<std::unique_ptr<ir::Loop>>(&item)) {
      renameVar(**inner, from, to);
      continue;
    }
    ir::Stmt &s = std::get<ir::Stmt>(item);
    rename(s.target);
    for (ir::Operand &op : s.operands)
      if (auto *a = std::get_if<ir::Access>(&op))
        rename(*a);
  }
}

/// Whether `name` is the variable of `loop` or of a loop nested in it.
bool usesVar(const ir::Loop &loop, const std::string &name) {
  if (loop.var == name)
    return true;
  for (const ir::BodyItem &item : loop.body)
    if (const auto *inner = std::get_if<std::unique_ptr<ir::Loop>>(&item);
        inner && usesVar(**inner, name))
      return true;
  return false;
}

/// Appends `second`'s body to `first`'s, under `first`'s variable. A
/// nested loop of `second` that already uses that name is renamed first,
/// so that it does not shadow the outer variable.
void fuseInto(ir::Loop &first, std::unique_ptr<ir::Loop> second) {
  for (ir::BodyItem &item : second->body) {
    auto *inner = std::get_if<std::unique_ptr<ir::Loop>>(&item);
    if (!inner || !usesVar(**inner, first.var) || second->var == first.var)
      continue;
    std::string fresh = first.var;
    for (int i = 0; usesVar(*second, fresh) || usesVar(first, fresh); ++i)
      fresh = first.var + std::to_string(i);
    renameVar(**inner, first.var, fresh);
  }
  std::string from = second->var; // renameVar overwrites second->var
  renameVar(*second, from, first.var);
  for (ir::BodyItem &item : second->body)
    first.body.push_back(std::move(item));
}

bool verifies(const ir::Module &m) {
  ir::DiagnosticEngine quiet;
  return ir::verifyModule(m, quiet);
}

/// Whether two loops range over the same iterations.
bool sameRange(const ir::Loop &a, const ir::Loop &b) {
  return a.kind == b.kind && a.parent == b.parent;
}

/// Two loops of one list: the module's top level (top == -1) or the body
/// of the top-level loop `top` (for neighbour loops). `second` comes after
/// `first`, not necessarily right after it.
struct Site {
  int top = -1;
  size_t first = 0, second = 0;
};

size_t listSize(const ir::Module &m, int top) {
  return top < 0 ? m.loops.size() : m.loops[top]->body.size();
}

ir::Loop *loopAt(ir::Module &m, int top, size_t index) {
  if (top < 0)
    return m.loops[index].get();
  auto *l = std::get_if<std::unique_ptr<ir::Loop>>(&m.loops[top]->body[index]);
  return l ? l->get() : nullptr;
}

/// Takes the loop at `index` out of its list.
std::unique_ptr<ir::Loop> takeLoop(ir::Module &m, int top, size_t index) {
  std::unique_ptr<ir::Loop> loop;
  if (top < 0) {
    loop = std::move(m.loops[index]);
    m.loops.erase(m.loops.begin() + index);
  } else {
    auto &body = m.loops[top]->body;
    loop = std::move(std::get<std::unique_ptr<ir::Loop>>(body[index]));
    body.erase(body.begin() + index);
  }
  return loop;
}

/// Fuses `second` into `first` in a copy of `m` (moving it up past the
/// loops in between); replaces `m` with the copy and returns true when the
/// copy verifies.
bool tryFuse(ir::Module &m, const Site &site) {
  ir::Module fused = m.clone();
  std::unique_ptr<ir::Loop> second = takeLoop(fused, site.top, site.second);
  fuseInto(*loopAt(fused, site.top, site.first), std::move(second));
  if (!verifies(fused))
    return false;
  m = std::move(fused);
  return true;
}

/// Top level: fuses each loop into the nearest earlier loop of the same
/// kind. The loops in between stay where they are, so the second loop's
/// statements move up past them; the verifier rejects the move when one of
/// them writes what those statements read.
bool fuseTopLevel(ir::Module &m) {
  bool changed = false;
  for (size_t j = 1; j < m.loops.size();) {
    size_t i = j;
    while (i > 0 && !sameRange(*m.loops[i - 1], *m.loops[j]))
      --i;
    if (i > 0 && tryFuse(m, Site{-1, i - 1, j}))
      changed = true; // loop j is gone; its successor is now at j
    else
      ++j;
  }
  return changed;
}

/// Inside top-level loop `top`: fuses adjacent neighbour loops only, since
/// the statements between them are per-node work in program order.
bool fuseNeighbourLoops(ir::Module &m, int top) {
  bool changed = false;
  for (size_t i = 0; i + 1 < listSize(m, top);) {
    ir::Loop *a = loopAt(m, top, i), *b = loopAt(m, top, i + 1);
    if (a && b && isNeighborLoop(a->kind) && sameRange(*a, *b) &&
        tryFuse(m, Site{top, i, i + 1}))
      changed = true; // the fused loop may fuse with the next one too
    else
      ++i;
  }
  return changed;
}

} // namespace

bool fuseLoops(ir::Module &module) {
  // Fusion needs verified input to tell legal from illegal; on anything
  // else it does nothing rather than guess.
  if (!verifies(module))
    return false;
  bool changed = false;
  for (bool again = true; again;) {
    again = fuseTopLevel(module);
    for (size_t t = 0; t < module.loops.size(); ++t)
      again = fuseNeighbourLoops(module, static_cast<int>(t)) || again;
    changed = changed || again;
  }
  return changed;
}

} // namespace hector::passes
