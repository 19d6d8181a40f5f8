#include "passes/LoopWalk.h"

#include <algorithm>

namespace hector::passes {
namespace {

bool dropEmptyLoops(std::vector<ir::BodyItem> &body) {
  bool dropped = false;
  for (size_t i = 0; i < body.size();) {
    auto *inner = std::get_if<std::unique_ptr<ir::Loop>>(&body[i]);
    if (inner) {
      dropped = dropEmptyLoops((*inner)->body) || dropped;
      if ((*inner)->body.empty()) {
        body.erase(body.begin() + i);
        dropped = true;
        continue;
      }
    }
    ++i;
  }
  return dropped;
}

/// bindingLoop over either kind of scope list.
template <typename LoopPtr>
const ir::Loop *innermostBinding(const std::vector<LoopPtr> &scopes,
                                 const std::string &var) {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
    if ((*it)->var == var)
      return *it;
  return nullptr;
}

} // namespace

bool isEdgeLoop(ir::LoopKind kind) {
  return kind == ir::LoopKind::Edges || kind == ir::LoopKind::Incoming ||
         kind == ir::LoopKind::Outgoing;
}

void forEachLoop(ir::Loop &loop, std::vector<ir::Loop *> &scopes,
                 const std::function<void(ir::Loop &,
                                          std::vector<ir::Loop *> &)> &f) {
  scopes.push_back(&loop);
  f(loop, scopes);
  for (ir::BodyItem &item : loop.body)
    if (auto *inner = std::get_if<std::unique_ptr<ir::Loop>>(&item))
      forEachLoop(**inner, scopes, f);
  scopes.pop_back();
}

void forEachStmt(ir::Module &m,
                 const std::function<void(ir::Stmt &,
                                          const std::vector<ir::Loop *> &)> &f) {
  std::vector<ir::Loop *> scopes;
  for (auto &top : m.loops)
    forEachLoop(*top, scopes, [&](ir::Loop &loop, std::vector<ir::Loop *> &s) {
      for (ir::BodyItem &item : loop.body)
        if (auto *stmt = std::get_if<ir::Stmt>(&item))
          f(*stmt, s);
    });
}

const ir::Loop *bindingLoop(const std::vector<ir::Loop *> &scopes,
                            const std::string &var) {
  return innermostBinding(scopes, var);
}

const ir::Loop *bindingLoop(const std::vector<const ir::Loop *> &scopes,
                            const std::string &var) {
  return innermostBinding(scopes, var);
}

bool rewriteFirstIncomingStmt(
    ir::Module &m,
    const std::function<bool(ir::Loop &edges, size_t at,
                             const ir::Loop &node)> &f) {
  for (auto &top : m.loops) {
    if (top->kind != ir::LoopKind::DstNodes && top->kind != ir::LoopKind::Nodes)
      continue;
    for (ir::BodyItem &item : top->body) {
      auto *inner = std::get_if<std::unique_ptr<ir::Loop>>(&item);
      if (!inner || (*inner)->kind != ir::LoopKind::Incoming ||
          (*inner)->parent != top->var)
        continue;
      ir::Loop &edges = **inner;
      for (size_t i = 0; i < edges.body.size(); ++i)
        if (std::holds_alternative<ir::Stmt>(edges.body[i]) &&
            f(edges, i, *top))
          return true;
    }
  }
  return false;
}

bool isNodeSum(const ir::Stmt &s, const ir::Loop &node) {
  return s.reduce == ir::Reduce::Sum &&
         s.target.index == ir::IndexPath{node.var, {}};
}

std::string freshValueName(const ir::Module &m, const std::string &base) {
  if (!m.findValue(base))
    return base;
  for (int i = 1;; ++i) {
    std::string name = base + "_" + std::to_string(i);
    if (!m.findValue(name))
      return name;
  }
}

void eraseValue(ir::Module &m, const std::string &value) {
  std::vector<ir::Loop *> scopes;
  for (auto &top : m.loops)
    forEachLoop(*top, scopes, [&](ir::Loop &loop, std::vector<ir::Loop *> &) {
      auto &body = loop.body;
      body.erase(std::remove_if(body.begin(), body.end(),
                                [&](const ir::BodyItem &item) {
                                  const auto *s = std::get_if<ir::Stmt>(&item);
                                  return s && s->target.value == value;
                                }),
                 body.end());
    });
  m.values.erase(
      std::remove_if(m.values.begin(), m.values.end(),
                     [&](const ir::ValueDecl &d) { return d.name == value; }),
      m.values.end());
}

int readCount(ir::Module &m, const std::string &value) {
  int reads = 0;
  forEachStmt(m, [&](ir::Stmt &s, const std::vector<ir::Loop *> &) {
    for (const ir::Operand &op : s.operands)
      if (const auto *a = std::get_if<ir::Access>(&op); a && a->value == value)
        ++reads;
  });
  return reads;
}

bool isUnkeptTemp(const ir::Module &m, const std::string &value,
                  const std::set<std::string> &keep) {
  const ir::ValueDecl *d = m.findValue(value);
  return d && d->kind == ir::ValueKind::Temp && !keep.count(value);
}

bool dropEmptyLoops(ir::Module &m) {
  bool dropped = false;
  for (auto &top : m.loops)
    dropped = dropEmptyLoops(top->body) || dropped;
  auto empty = [](const auto &loop) { return loop->body.empty(); };
  auto firstEmpty = std::remove_if(m.loops.begin(), m.loops.end(), empty);
  dropped = dropped || firstEmpty != m.loops.end();
  m.loops.erase(firstEmpty, m.loops.end());
  return dropped;
}

} // namespace hector::passes
