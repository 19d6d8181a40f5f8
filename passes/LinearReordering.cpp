#include "passes/LinearReordering.h"

#include "ir/Diagnostics.h"
#include "ir/InterIRVerifier.h"
#include "passes/CostModel.h"
#include "passes/LoopWalk.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace hector::passes {
namespace {

using ir::Access;
using ir::Attr;
using ir::Dim;
using ir::OpKind;
using ir::Shape;
using ir::Space;
using ir::Stmt;

// --- Use-def facts -----------------------------------------------------------

/// Where a statement is: the innermost loop holding it and its index there.
struct Site {
  ir::Loop *loop = nullptr;
  size_t index = 0;
  Stmt &stmt() const { return std::get<Stmt>(loop->body[index]); }
};

/// The defining statement of every computed value and how often each value
/// is read. Sites point into the module; rebuild after every edit.
struct UseDef {
  std::map<std::string, Site> def;
  std::map<std::string, int> reads;
};

void collect(ir::Loop &loop, UseDef &ud) {
  for (size_t i = 0; i < loop.body.size(); ++i) {
    if (auto *inner = std::get_if<std::unique_ptr<ir::Loop>>(&loop.body[i])) {
      collect(**inner, ud);
      continue;
    }
    const Stmt &stmt = std::get<Stmt>(loop.body[i]);
    ud.def[stmt.target.value] = Site{&loop, i};
    for (const ir::Operand &op : stmt.operands)
      if (const auto *a = std::get_if<Access>(&op))
        ++ud.reads[a->value];
  }
}

UseDef analyze(ir::Module &module) {
  UseDef ud;
  for (auto &loop : module.loops)
    collect(*loop, ud);
  return ud;
}

const Access *accessOperand(const Stmt &stmt, size_t i) {
  if (i >= stmt.operands.size())
    return nullptr;
  return std::get_if<Access>(&stmt.operands[i]);
}

/// True when the statement writes `t[v]` for its own loop variable v and
/// every value it reads is global or indexed from v: then it can be
/// replayed in another loop by renaming v.
bool isRebasable(const Stmt &stmt) {
  if (!stmt.target.index.attrs.empty() || stmt.target.index.var.empty() ||
      stmt.reduce != ir::Reduce::None)
    return false;
  for (const ir::Operand &op : stmt.operands)
    if (const auto *a = std::get_if<Access>(&op))
      if (!a->index.isGlobal() && a->index.var != stmt.target.index.var)
        return false;
  return true;
}

/// `a` read from loop variable `to` instead of `from`.
Access rebase(Access a, const std::string &from, const std::string &to) {
  if (a.index.var == from)
    a.index.var = to;
  a.loc = {};
  return a;
}

// --- Weights -----------------------------------------------------------------

/// A weight operand: a param or input that is global or sliced by the type
/// of the edge `edgeVar` (`W[e.etype]`). Products of weights are computed
/// ahead of every loop, so only values available from the start qualify.
struct Weight {
  std::string value;
  bool byEtype = false;
  Shape shape;
};

std::optional<Weight> asWeight(const ir::Module &module, const Access &a,
                               const std::string &edgeVar) {
  const ir::ValueDecl *decl = module.findValue(a.value);
  if (!decl || (decl->kind != ir::ValueKind::Param &&
                decl->kind != ir::ValueKind::Input))
    return std::nullopt;
  if (decl->space == Space::Global && a.index.isGlobal())
    return Weight{a.value, false, decl->shape};
  if (decl->space == Space::EdgeType && a.index.var == edgeVar &&
      a.index.attrs == std::vector<Attr>{Attr::EType})
    return Weight{a.value, true, decl->shape};
  return std::nullopt;
}

/// The weight's row for relation `r` of an etypes loop.
Access weightRow(const Weight &w, const std::string &r) {
  Access a;
  a.value = w.value;
  if (w.byEtype)
    a.index.var = r;
  return a;
}

/// `name[var.etype]`: a weight product read from an edge loop.
Access productRead(const std::string &name, const std::string &edgeVar) {
  Access a;
  a.value = name;
  a.index.var = edgeVar;
  a.index.attrs = {Attr::EType};
  return a;
}

// --- Editing -----------------------------------------------------------------

/// Declares a temp before the value `before` (or before the first computed
/// value when `before` is empty), so that products print near the weights.
void declareTemp(ir::Module &module, const std::string &name, Space space,
                 const Shape &shape, const std::string &before = "") {
  ir::ValueDecl decl;
  decl.name = name;
  decl.kind = ir::ValueKind::Temp;
  decl.space = space;
  decl.shape = shape;
  auto it = module.values.begin();
  for (; it != module.values.end(); ++it) {
    bool computed =
        it->kind == ir::ValueKind::Temp || it->kind == ir::ValueKind::Output;
    if (before.empty() ? computed : it->name == before)
      break;
  }
  module.values.insert(it, std::move(decl));
}

Stmt makeStmt(const std::string &target, const std::string &var, OpKind op,
              std::vector<ir::Operand> operands) {
  Stmt s;
  s.target.value = target;
  s.target.index.var = var;
  s.op = op;
  s.operands = std::move(operands);
  return s;
}

/// The loop that computes weight products: a leading `foreach r in etypes`
/// (reused when the module already starts with one, since products read
/// only params and inputs and may go anywhere).
ir::Loop &productLoop(ir::Module &module) {
  if (!module.loops.empty() &&
      module.loops.front()->kind == ir::LoopKind::EdgeTypes)
    return *module.loops.front();
  auto loop = std::make_unique<ir::Loop>();
  loop->kind = ir::LoopKind::EdgeTypes;
  loop->var = "r";
  module.loops.insert(module.loops.begin(), std::move(loop));
  return *module.loops.front();
}

/// Emits `name[r] = op(operands)` into the product loop, declared as an
/// etype temp of `shape`.
void emitProduct(ir::Module &module, const std::string &name,
                 const Shape &shape, Stmt stmt) {
  ir::Loop &loop = productLoop(module);
  // Declared after the products already there, so that the declarations
  // read in the order the loop computes them.
  std::set<std::string> products;
  for (const ir::BodyItem &item : loop.body)
    if (const auto *s = std::get_if<Stmt>(&item))
      products.insert(s->target.value);
  std::string before;
  for (const ir::ValueDecl &decl : module.values)
    if ((decl.kind == ir::ValueKind::Temp ||
         decl.kind == ir::ValueKind::Output) &&
        !products.count(decl.name)) {
      before = decl.name;
      break;
    }
  declareTemp(module, name, Space::EdgeType, shape, before);
  stmt.target.value = name;
  stmt.target.index.var = loop.var;
  loop.body.emplace_back(std::move(stmt));
}

/// `name[r]`: a row of an etype value inside the product loop.
Access etypeRow(const std::string &name, const std::string &r) {
  Access a;
  a.value = name;
  a.index.var = r;
  return a;
}

/// `target[r] = transpose(in) perm [..]`.
Stmt makeTranspose(const std::string &target, const Access &in,
                   std::vector<int> perm) {
  Stmt s = makeStmt(target, in.index.var, OpKind::Transpose, {in});
  s.perm = std::move(perm);
  return s;
}

void pruneEmptyLoops(std::vector<ir::BodyItem> &body) {
  for (auto it = body.begin(); it != body.end();) {
    auto *inner = std::get_if<std::unique_ptr<ir::Loop>>(&*it);
    if (inner) {
      pruneEmptyLoops((*inner)->body);
      if ((*inner)->body.empty()) {
        it = body.erase(it);
        continue;
      }
    }
    ++it;
  }
}

/// Removes the statements and declarations of the temps in `candidates`
/// that nothing reads any more (a removal may free the next one), then any
/// loop left empty.
void removeDead(ir::Module &module,
                const std::vector<std::string> &candidates) {
  for (bool changed = true; changed;) {
    changed = false;
    UseDef ud = analyze(module);
    for (const std::string &name : candidates) {
      const ir::ValueDecl *decl = module.findValue(name);
      auto def = ud.def.find(name);
      if (!decl || decl->kind != ir::ValueKind::Temp || ud.reads[name] > 0 ||
          def == ud.def.end())
        continue;
      ir::Loop &loop = *def->second.loop;
      loop.body.erase(loop.body.begin() + def->second.index);
      for (auto it = module.values.begin(); it != module.values.end(); ++it)
        if (it->name == name) {
          module.values.erase(it);
          break;
        }
      changed = true;
      break;
    }
  }
  for (auto it = module.loops.begin(); it != module.loops.end();) {
    pruneEmptyLoops((*it)->body);
    it = (*it)->body.empty() ? module.loops.erase(it) : it + 1;
  }
}

// --- Matching ----------------------------------------------------------------

/// A linear operator feeding a consumer's operand, possibly through one
/// reshape: `v[p] = linear(x[p..], W[p.etype])` (then `z[p] = reshape(v[p])`).
struct LinearChain {
  const Stmt *linear = nullptr;
  const Stmt *reshape = nullptr; ///< null when the consumer reads the linear
  std::string var;               ///< the loop variable the chain is written by
};

/// Follows the consumer's operand `read` back to a linear statement.
std::optional<LinearChain> findLinearChain(const ir::Module &module,
                                           const UseDef &ud,
                                           const Access &read) {
  if (!read.index.attrs.empty() || read.index.isGlobal())
    return std::nullopt;
  LinearChain chain;
  std::string value = read.value;
  for (int depth = 0; depth < 2; ++depth) {
    auto def = ud.def.find(value);
    const ir::ValueDecl *decl = module.findValue(value);
    // Pair values too: a loop-phase caller (uncompact-weighted-sums) may
    // reorder the per-pair readers of a compacted message.
    if (def == ud.def.end() || !decl ||
        (decl->space != Space::Edge && decl->space != Space::Pair))
      return std::nullopt;
    const Stmt &stmt = def->second.stmt();
    if (!isRebasable(stmt))
      return std::nullopt;
    if (!chain.var.empty() && stmt.target.index.var != chain.var)
      return std::nullopt;
    chain.var = stmt.target.index.var;
    if (stmt.op == OpKind::Linear) {
      chain.linear = &stmt;
      return chain;
    }
    if (stmt.op != OpKind::Reshape || chain.reshape)
      return std::nullopt;
    chain.reshape = &stmt;
    const Access *in = accessOperand(stmt, 0);
    if (!in)
      return std::nullopt;
    value = in->value;
  }
  return std::nullopt;
}

const Shape &shapeOf(const ir::Module &module, const std::string &value) {
  return module.findValue(value)->shape;
}

/// The pieces of `target = consumer(chain(x, W), other)` that a weight
/// product rewrite needs.
struct ProductMatch {
  LinearChain chain;
  Access x;     ///< the chain's input, rebased to the consumer's variable
  Weight w;     ///< the chain's weight [K, N]
  Weight other; ///< the consumer's weight
  std::string edgeVar; ///< the consumer's edge variable
};

/// Matches a consumer operand `read` that is `linear(x, W)` (through at
/// most one reshape) with a rank-2 weight W, and the consumer's weight
/// operand `otherRead`; at least one of the two is sliced by edge type.
std::optional<ProductMatch> matchProduct(const ir::Module &module,
                                         const UseDef &ud, const Access &read,
                                         const Access &otherRead) {
  auto chain = findLinearChain(module, ud, read);
  if (!chain)
    return std::nullopt;
  const Access *x = accessOperand(*chain->linear, 0);
  const Access *wRead = accessOperand(*chain->linear, 1);
  if (!x || !wRead)
    return std::nullopt;
  auto w = asWeight(module, *wRead, chain->var);
  auto other = asWeight(module, otherRead, read.index.var);
  if (!w || !other || w->shape.size() != 2 || !(w->byEtype || other->byEtype))
    return std::nullopt;
  return ProductMatch{*chain, rebase(*x, chain->var, read.index.var), *w,
                      *other, read.index.var};
}

/// dot(chain(x, W[r]), a[r]) in either operand order: the weight product
/// W a replaces the per-edge linear.
///   no reshape:  x [K], a [N]     -> dot(x, c[r]), c = linear_t(a, W) [K]
///   reshape:     x [K], a [H, D]  -> linear_t(x, c[r]),
///                c = linear_t(a, transpose(reshape(W) [K,H,D]) [1,0,2]) [H,K]
bool rewriteDotWithWeight(ir::Module &module, Stmt &consumer) {
  UseDef ud = analyze(module);
  for (int i = 0; i < 2; ++i) {
    const Access *read = accessOperand(consumer, i);
    const Access *otherRead = accessOperand(consumer, 1 - i);
    if (!read || !otherRead)
      continue;
    auto m = matchProduct(module, ud, *read, *otherRead);
    if (!m || shapeOf(module, m->x.value).size() != 1)
      continue;
    const Shape &wShape = m->w.shape; // [K, N]
    std::string base = consumer.target.value;
    if (!m->chain.reshape) {
      std::string r = productLoop(module).var;
      std::string c = freshValueName(module, base + "_w");
      emitProduct(module, c, {wShape[0]},
                  makeStmt(c, r, OpKind::LinearT,
                           {weightRow(m->other, r), weightRow(m->w, r)}));
      consumer.operands = {m->x, productRead(c, m->edgeVar)};
    } else {
      Shape heads = m->chain.reshape->shape; // [H, D]
      if (heads.size() != 2 || m->other.shape != heads)
        continue;
      std::string r = productLoop(module).var;
      std::string w3 = freshValueName(module, base + "_wr");
      Stmt reshape = makeStmt(w3, r, OpKind::Reshape, {weightRow(m->w, r)});
      reshape.shape = {wShape[0], heads[0], heads[1]};
      emitProduct(module, w3, reshape.shape, reshape);
      std::string w3t = freshValueName(module, base + "_wt");
      emitProduct(module, w3t, {heads[0], wShape[0], heads[1]},
                  makeTranspose(w3t, etypeRow(w3, r), {1, 0, 2}));
      std::string c = freshValueName(module, base + "_w");
      emitProduct(module, c, {heads[0], wShape[0]},
                  makeStmt(c, r, OpKind::LinearT,
                           {weightRow(m->other, r), etypeRow(w3t, r)}));
      consumer.op = OpKind::LinearT;
      consumer.operands = {m->x, productRead(c, m->edgeVar)};
    }
    return true;
  }
  return false;
}

/// linear(chain(x, W[r]), B[r]) -> linear(x, c[r]) with c = linear(W, B)
/// [K, M]; linear_t(chain(x, W[r]), B[r]) alike with c = linear_t(W, B).
/// No reshape may come between (the consumer contracts the linear's N).
bool rewriteLinearOfLinear(ir::Module &module, Stmt &consumer) {
  UseDef ud = analyze(module);
  const Access *read = accessOperand(consumer, 0);
  const Access *otherRead = accessOperand(consumer, 1);
  if (!read || !otherRead)
    return false;
  auto m = matchProduct(module, ud, *read, *otherRead);
  if (!m || m->chain.reshape || m->other.shape.size() != 2)
    return false;
  const Shape &w = m->w.shape;     // [K, N]
  const Shape &b = m->other.shape; // [N, M], or [M, N] for linear_t
  bool transposed = consumer.op == OpKind::LinearT;
  if ((transposed ? b[1] : b[0]) != w[1])
    return false;
  Dim outDim = transposed ? b[0] : b[1];
  std::string r = productLoop(module).var;
  std::string c = freshValueName(module, consumer.target.value + "_w");
  emitProduct(module, c, {w[0], outDim},
              makeStmt(c, r, consumer.op,
                       {weightRow(m->w, r), weightRow(m->other, r)}));
  consumer.op = OpKind::Linear;
  consumer.operands = {m->x, productRead(c, m->edgeVar)};
  return true;
}

/// HGT's attention: dot(linear(k, W[..]), q) with per-head W [H, Dk, Dq],
/// k [H, Dk], q [H, Dq] -> dot(k, u) with u = linear_t(q, W[..]) [H, Dk]
/// computed right before the consumer; also from a compacted pair row,
/// dot(a[e.pair], q) with a[p] = linear(k[p.src], W[p.etype]). Both forms cost
/// 2*H*Dk*Dq for the linear; the dot drops from 2*H*Dq to 2*H*Dk, and the
/// original linear disappears when nothing else reads it.
bool rewriteMovedAttention(ir::Module &module, Site site) {
  Stmt &consumer = site.stmt();
  UseDef ud = analyze(module);
  for (int i = 0; i < 2; ++i) {
    const Access *read = accessOperand(consumer, i);
    const Access *qRead = accessOperand(consumer, 1 - i);
    if (!read || !qRead || read->index.isGlobal())
      continue;
    auto def = ud.def.find(read->value);
    if (def == ud.def.end())
      continue;
    // The consumer's own row, or (compacted) its edge's pair row of a
    // pairs loop: k[p.src] and W[p.etype] are then k[e.src], W[e.etype].
    const bool pairRead =
        read->index.attrs == std::vector<ir::Attr>{ir::Attr::Pair} &&
        def->second.loop->kind == ir::LoopKind::Pairs;
    if (!read->index.attrs.empty() && !pairRead)
      continue;
    const Stmt &linear = def->second.stmt();
    const Access *k = accessOperand(linear, 0);
    const Access *w = accessOperand(linear, 1);
    if (linear.op != OpKind::Linear || !isRebasable(linear) || !k || !w ||
        shapeOf(module, w->value).size() != 3)
      continue;
    const std::string &from = linear.target.index.var;
    const ir::ValueDecl &uDecl = *module.findValue(read->value);
    std::string u = freshValueName(module, read->value + "_moved");
    Stmt moved = makeStmt(u, read->index.var, OpKind::LinearT,
                          {*qRead, rebase(*w, from, read->index.var)});
    Access kRebased = rebase(*k, from, read->index.var);
    Access uRead;
    uRead.value = u;
    uRead.index.var = read->index.var;
    consumer.operands = {kRebased, uRead};
    declareTemp(module, u, pairRead ? ir::Space::Edge : uDecl.space,
                shapeOf(module, k->value), consumer.target.value);
    site.loop->body.emplace(site.loop->body.begin() + site.index,
                            std::in_place_type<Stmt>, std::move(moved));
    return true;
  }
  return false;
}

/// Applies the first rewrite that matches the statement defining
/// `consumer`, then drops the producers nothing reads any more.
bool rewriteConsumer(ir::Module &module, const std::string &consumer) {
  UseDef ud = analyze(module);
  auto def = ud.def.find(consumer);
  if (def == ud.def.end())
    return false;
  Stmt &stmt = def->second.stmt();
  if (stmt.reduce != ir::Reduce::None)
    return false;
  std::vector<std::string> readBefore;
  for (const ir::Operand &op : stmt.operands)
    if (const auto *a = std::get_if<Access>(&op))
      readBefore.push_back(a->value);
  bool changed = false;
  if (stmt.op == OpKind::Dot)
    changed = rewriteDotWithWeight(module, stmt) ||
              rewriteMovedAttention(module, def->second);
  else if (stmt.op == OpKind::Linear || stmt.op == OpKind::LinearT)
    changed = rewriteLinearOfLinear(module, stmt);
  if (!changed)
    return false;
  // The chain behind each former operand: its values and, through a
  // reshape, the linear's own result.
  std::vector<std::string> dead;
  UseDef after = analyze(module);
  for (std::string value : readBefore)
    for (int depth = 0; depth < 2; ++depth) {
      dead.push_back(value);
      auto d = after.def.find(value);
      const Access *in =
          d == after.def.end() ? nullptr : accessOperand(d->second.stmt(), 0);
      if (!in)
        break;
      value = in->value;
    }
  removeDead(module, dead);
  return true;
}

/// Targets of the statements a rewrite may start from, in program order.
void collectConsumers(const ir::Loop &loop, std::vector<std::string> &out) {
  for (const ir::BodyItem &item : loop.body) {
    if (const auto *inner = std::get_if<std::unique_ptr<ir::Loop>>(&item)) {
      collectConsumers(**inner, out);
      continue;
    }
    const Stmt &stmt = std::get<Stmt>(item);
    if (stmt.op == OpKind::Dot || stmt.op == OpKind::Linear ||
        stmt.op == OpKind::LinearT)
      out.push_back(stmt.target.value);
  }
}

} // namespace

bool reorderLinearOps(ir::Module &module, const GraphStats &stats,
                      ReorderStats *out) {
  double before = countFlops(module, stats).total;
  double current = before;
  int rewrites = 0;
  std::vector<std::string> consumers;
  for (const auto &loop : module.loops)
    collectConsumers(*loop, consumers);
  // Greedy in program order: each candidate is tried on a copy and kept
  // only when it verifies and lowers the whole module's count, so a
  // rewrite that pays only by freeing a producer (RGAT's zd) is judged
  // with that saving, and one that does not pay is dropped.
  for (const std::string &consumer : consumers) {
    ir::Module trial = module.clone();
    if (!rewriteConsumer(trial, consumer))
      continue;
    ir::DiagnosticEngine diags;
    if (!ir::verifyModule(trial, diags))
      continue;
    double flops = countFlops(trial, stats).total;
    if (flops >= current)
      continue;
    module = std::move(trial);
    current = flops;
    ++rewrites;
  }
  if (out)
    *out = ReorderStats{rewrites, before, current};
  return rewrites > 0;
}

} // namespace hector::passes
