#include "passes/LoopCanonicalization.h"

#include <set>
#include <string>

namespace hector::passes {
namespace {

/// Which node nest an edge loop can become.
enum class Shape {
  None,  ///< stays an edge loop
  Local, ///< edge-local statements only: either nest, or none
  Dst,   ///< reduces into e.dst rows: dst_nodes / incoming
  Src,   ///< reduces into e.src rows: src_nodes / outgoing
};

bool isEdgeLocal(const ir::Stmt &s, const std::string &var) {
  return s.reduce == ir::Reduce::None && s.target.index.var == var &&
         s.target.index.attrs.empty();
}

bool reducesInto(const ir::Stmt &s, const std::string &var, ir::Attr end) {
  return s.reduce != ir::Reduce::None && s.target.index.var == var &&
         s.target.index.attrs == std::vector<ir::Attr>{end};
}

Shape classify(const ir::Loop &loop) {
  if (loop.kind != ir::LoopKind::Edges)
    return Shape::None;
  bool dst = false, src = false;
  for (const ir::BodyItem &item : loop.body) {
    const auto *s = std::get_if<ir::Stmt>(&item);
    if (!s)
      return Shape::None;
    if (isEdgeLocal(*s, loop.var))
      continue;
    if (reducesInto(*s, loop.var, ir::Attr::Dst))
      dst = true;
    else if (reducesInto(*s, loop.var, ir::Attr::Src))
      src = true;
    else
      return Shape::None;
  }
  if (dst && src)
    return Shape::None;
  return dst ? Shape::Dst : src ? Shape::Src : Shape::Local;
}

/// Whether `loop` is a node loop of `kind` holding a neighbour loop of
/// `inner`: the nest an edge-local loop joins.
bool isNest(const ir::Loop &loop, ir::LoopKind kind, ir::LoopKind inner) {
  if (loop.kind != kind)
    return false;
  for (const ir::BodyItem &item : loop.body)
    if (const auto *l = std::get_if<std::unique_ptr<ir::Loop>>(&item);
        l && (*l)->kind == inner)
      return true;
  return false;
}

/// A node variable name that the edge loop does not use.
std::string freshNodeVar(const ir::Loop &edges) {
  std::string name = "n";
  for (int i = 0; name == edges.var; ++i)
    name = "n" + std::to_string(i);
  return name;
}

/// `foreach e in edges { body }` -> `foreach n in NODES { foreach e in
/// n.NEIGHBORS { body } }`, with reduction targets `[e.end]` written `[n]`.
std::unique_ptr<ir::Loop> toNest(std::unique_ptr<ir::Loop> edges,
                                 bool incoming) {
  ir::Attr end = incoming ? ir::Attr::Dst : ir::Attr::Src;
  auto outer = std::make_unique<ir::Loop>();
  outer->kind = incoming ? ir::LoopKind::DstNodes : ir::LoopKind::SrcNodes;
  outer->var = freshNodeVar(*edges);
  outer->loc = edges->loc;
  for (ir::BodyItem &item : edges->body) {
    ir::Stmt &s = std::get<ir::Stmt>(item);
    if (reducesInto(s, edges->var, end))
      s.target.index = ir::IndexPath{outer->var, {}};
  }
  edges->kind = incoming ? ir::LoopKind::Incoming : ir::LoopKind::Outgoing;
  edges->parent = outer->var;
  outer->body.emplace_back(std::move(edges));
  return outer;
}

/// Rule 3: the nest an edge-local loop at `i` joins, if any.
Shape neighbourNest(const ir::Module &m, size_t i) {
  auto neighbourIs = [&](ir::LoopKind kind, ir::LoopKind inner) {
    return (i > 0 && isNest(*m.loops[i - 1], kind, inner)) ||
           (i + 1 < m.loops.size() && isNest(*m.loops[i + 1], kind, inner));
  };
  if (neighbourIs(ir::LoopKind::DstNodes, ir::LoopKind::Incoming))
    return Shape::Dst;
  if (neighbourIs(ir::LoopKind::SrcNodes, ir::LoopKind::Outgoing))
    return Shape::Src;
  return Shape::None;
}

} // namespace

bool canonicalizeLoops(ir::Module &module) {
  bool changed = false;
  // Rules 1 and 2 first: they create the nests that rule 3 joins.
  for (auto &loop : module.loops) {
    Shape shape = classify(*loop);
    if (shape == Shape::Dst || shape == Shape::Src) {
      loop = toNest(std::move(loop), shape == Shape::Dst);
      changed = true;
    }
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < module.loops.size(); ++i) {
      if (classify(*module.loops[i]) != Shape::Local)
        continue;
      Shape nest = neighbourNest(module, i);
      if (nest == Shape::None)
        continue;
      module.loops[i] = toNest(std::move(module.loops[i]), nest == Shape::Dst);
      grew = changed = true;
    }
  }
  return changed;
}

} // namespace hector::passes
