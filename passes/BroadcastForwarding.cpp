#include "passes/BroadcastForwarding.h"

#include "passes/LoopWalk.h"

#include <optional>

namespace hector::passes {
namespace {

/// `t[e] = copy(x[n])` found in neighbour loop `edges` of node loop `node`.
struct Broadcast {
  std::string edgeValue; ///< t
  std::string nodeValue; ///< x
  const ir::Loop *node = nullptr;
  const ir::Loop *edges = nullptr;
  /// x[e.dst] for an incoming loop, x[e.src] for an outgoing one.
  ir::Attr end() const {
    return edges->kind == ir::LoopKind::Incoming ? ir::Attr::Dst
                                                 : ir::Attr::Src;
  }
};

bool isNeighbourLoop(ir::LoopKind kind) {
  return kind == ir::LoopKind::Incoming || kind == ir::LoopKind::Outgoing;
}

/// The broadcast `s` is, if it is one (see the header for the conditions
/// on the statement and the two values).
std::optional<Broadcast> asBroadcast(const ir::Module &m, const ir::Stmt &s,
                                     const ir::Loop &node,
                                     const ir::Loop &edges,
                                     const std::set<std::string> &keep) {
  if (s.reduce != ir::Reduce::None || s.op != ir::OpKind::Copy ||
      s.operands.size() != 1 ||
      !(s.target.index == ir::IndexPath{edges.var, {}}))
    return std::nullopt;
  const auto *source = std::get_if<ir::Access>(&s.operands[0]);
  if (!source || !(source->index == ir::IndexPath{node.var, {}}))
    return std::nullopt;
  const ir::ValueDecl *t = m.findValue(s.target.value);
  const ir::ValueDecl *x = m.findValue(source->value);
  if (!t || !x || t->kind != ir::ValueKind::Temp ||
      t->space != ir::Space::Edge || keep.count(t->name) ||
      x->space != ir::Space::Node || !(t->shape == x->shape))
    return std::nullopt;
  return Broadcast{t->name, x->name, &node, &edges};
}

std::vector<Broadcast> findBroadcasts(const ir::Module &m,
                                      const std::set<std::string> &keep) {
  std::vector<Broadcast> found;
  for (const auto &top : m.loops) {
    if (ir::loopVarSpace(top->kind) != ir::Space::Node)
      continue;
    for (const ir::BodyItem &item : top->body) {
      const auto *inner = std::get_if<std::unique_ptr<ir::Loop>>(&item);
      if (!inner || !isNeighbourLoop((*inner)->kind) ||
          (*inner)->parent != top->var)
        continue;
      for (const ir::BodyItem &innerItem : (*inner)->body)
        if (const auto *s = std::get_if<ir::Stmt>(&innerItem))
          if (auto b = asBroadcast(m, *s, *top, **inner, keep))
            found.push_back(*b);
    }
  }
  return found;
}

/// What a read `t[e2]` of the broadcast's edge value becomes, or nullopt
/// when it cannot be forwarded.
std::optional<ir::IndexPath> forwardedIndex(const Broadcast &b,
                                            const ir::IndexPath &read,
                                            const std::vector<ir::Loop *> &scopes) {
  const ir::Loop *loop = bindingLoop(scopes, read.var);
  if (!read.attrs.empty() || !loop || !isEdgeLoop(loop->kind))
    return std::nullopt;
  if (scopes.front() != b.node)
    return ir::IndexPath{read.var, {b.end()}};
  // Inside the node loop that wrote x: only its own neighbours' reads, as
  // x[n] (the verifier takes x[e2.dst] for another node's row).
  if (loop->kind == b.edges->kind && loop->parent == b.node->var)
    return ir::IndexPath{b.node->var, {}};
  return std::nullopt;
}

/// Rewrites every read of the broadcast's edge value, if all of them can
/// be; returns whether it did.
bool forwardReads(ir::Module &m, const Broadcast &b) {
  bool forwardable = true;
  forEachStmt(m, [&](ir::Stmt &s, const std::vector<ir::Loop *> &scopes) {
    for (const ir::Operand &op : s.operands)
      if (const auto *a = std::get_if<ir::Access>(&op);
          a && a->value == b.edgeValue)
        forwardable = forwardable && forwardedIndex(b, a->index, scopes);
  });
  if (!forwardable)
    return false;
  forEachStmt(m, [&](ir::Stmt &s, const std::vector<ir::Loop *> &scopes) {
    for (ir::Operand &op : s.operands)
      if (auto *a = std::get_if<ir::Access>(&op);
          a && a->value == b.edgeValue) {
        a->index = *forwardedIndex(b, a->index, scopes);
        a->value = b.nodeValue;
      }
  });
  return true;
}

} // namespace

bool forwardBroadcasts(ir::Module &module, const std::set<std::string> &keep) {
  bool changed = false;
  // Erasing statements moves the loops' bodies, so each broadcast is
  // found again after the one before it is forwarded.
  for (bool again = true; again;) {
    again = false;
    for (const Broadcast &b : findBroadcasts(module, keep)) {
      if (!forwardReads(module, b))
        continue;
      eraseValue(module, b.edgeValue);
      again = changed = true;
      break;
    }
  }
  if (changed)
    dropEmptyLoops(module);
  return changed;
}

} // namespace hector::passes
