// Reverse-mode differentiation of an inter-op module (see Autodiff.h).
//
// The backward program mirrors the forward's loops in reverse order. For a
// forward statement `t[row] R= op(args)` it reads the gradient of the
// target row (`grad_t[row]`, through the same index path; divided by the
// contribution count for mean=, masked by eq(contribution, t[row]) for
// max=) and applies op's rule (Differentiator::differentiate), which ends
// in one contribution per differentiable operand. A contribution to an
// operand read at the loop's own row is written plainly into a fresh
// partial (`grad1_x[e] = ...`); one read through another path is reduced
// into it (`grad1_x[e.src] += ...`, `grad1_W[e.etype] += ...`).
//
// Where each gradient is summed follows from where its partials complete:
//  * a plainly assigned value: at its defining statement's mirror, before
//    the statement's own rule runs (its partials are plain writes earlier in
//    the same loop, or complete reductions of later forward loops);
//  * a value reduced inside `n.incoming` into `t[n]`: at the node level of
//    the backward node loop, before the mirrored neighbour loop;
//  * a value reduced through an attribute path or into a global: in a loop
//    of its own before the mirror of its top-level loop;
//  * inputs and params: in loops at the end of the program.
// A global value's contributions made in one loop are summed in one
// reduction; contributions from two loops cannot be summed without a plain
// assignment to a global, which the IR forbids, so that is reported.
#include "passes/Autodiff.h"

#include "ir/InterIRVerifier.h"

#include <algorithm>
#include <set>

namespace hector::passes {

namespace {

using namespace ir;

/// A right-hand side not yet given a target.
struct Expr {
  OpKind op = OpKind::Copy;
  std::vector<Operand> operands;
  Shape shape;            ///< reshape, sum_to
  Dim start, size;        ///< slice, embed
  std::vector<int> perm;  ///< transpose
};

Expr expr(OpKind op, std::vector<Operand> operands) {
  Expr e;
  e.op = op;
  e.operands = std::move(operands);
  return e;
}

Expr shaped(OpKind op, Operand a, Shape shape) {
  Expr e = expr(op, {std::move(a)});
  e.shape = std::move(shape);
  return e;
}

Expr ranged(OpKind op, Operand a, Dim start, Dim size) {
  Expr e = expr(op, {std::move(a)});
  e.start = std::move(start);
  e.size = std::move(size);
  return e;
}

Expr permuted(Operand a, std::vector<int> perm) {
  Expr e = expr(OpKind::Transpose, {std::move(a)});
  e.perm = std::move(perm);
  return e;
}

ScalarExpr literal(double v) {
  ScalarExpr s;
  s.literal = v;
  return s;
}

/// The perm that swaps the last two of `rank` axes.
std::vector<int> swapLastTwo(size_t rank) {
  std::vector<int> perm;
  for (size_t i = 0; i < rank; ++i)
    perm.push_back(static_cast<int>(i));
  std::swap(perm[rank - 2], perm[rank - 1]);
  return perm;
}

bool isNeighborLoop(LoopKind k) {
  return k == LoopKind::Incoming || k == LoopKind::Outgoing;
}

/// Whether `p`, inside `loop`, names the row of the enclosing node loop's
/// variable (`n`, or `e.dst` in `n.incoming`, `e.src` in `n.outgoing`).
bool isParentRow(const Loop &loop, const IndexPath &p) {
  if (!isNeighborLoop(loop.kind))
    return false;
  if (p.var == loop.parent && p.attrs.empty())
    return true;
  Attr own = loop.kind == LoopKind::Incoming ? Attr::Dst : Attr::Src;
  return p.var == loop.var && p.attrs == std::vector<Attr>{own};
}

/// Ops whose derivative is zero almost everywhere (or that cut gradients).
bool isConstantOp(OpKind op) {
  return op == OpKind::Detach || op == OpKind::Eq || op == OpKind::ReluGrad ||
         op == OpKind::LeakyReluGrad;
}

/// A top-level loop over every row of `space` (for sums and final copies).
std::unique_ptr<Loop> loopOver(Space space) {
  auto loop = std::make_unique<Loop>();
  switch (space) {
  case Space::Node:
    loop->kind = LoopKind::Nodes, loop->var = "n";
    break;
  case Space::Edge:
    loop->kind = LoopKind::Edges, loop->var = "e";
    break;
  case Space::EdgeType:
    loop->kind = LoopKind::EdgeTypes, loop->var = "r";
    break;
  case Space::NodeType:
    loop->kind = LoopKind::NodeTypes, loop->var = "t";
    break;
  case Space::Pair:
  case Space::Global:
    loop->kind = LoopKind::Pairs, loop->var = "p";
    break;
  }
  return loop;
}

template <typename F> void forEachStmt(const Loop &loop, F &&f) {
  for (const BodyItem &item : loop.body) {
    if (const auto *s = std::get_if<Stmt>(&item))
      f(*s);
    else
      forEachStmt(*std::get<std::unique_ptr<Loop>>(item), f);
  }
}

template <typename F> void forEachStmt(Loop &loop, F &&f) {
  for (BodyItem &item : loop.body) {
    if (auto *s = std::get_if<Stmt>(&item))
      f(*s);
    else
      forEachStmt(*std::get<std::unique_ptr<Loop>>(item), f);
  }
}

class Differentiator {
public:
  Differentiator(const Module &forward, DiagnosticEngine &diags)
      : fwd_(forward), diags_(diags) {}

  std::optional<BackwardProgram> run() {
    bw_.name = fwd_.name + "_backward";
    bw_.hypers = fwd_.hypers;
    bw_.loc = fwd_.loc;
    for (const HyperDecl &h : fwd_.hypers)
      taken_.insert(h.name);
    for (const ValueDecl &v : fwd_.values)
      taken_.insert(v.name);
    analyseActivity();
    declareOutputGradients();
    for (auto it = fwd_.loops.rbegin(); it != fwd_.loops.rend() && ok_; ++it)
      backwardTopLoop(**it);
    if (ok_)
      finalizeArguments();
    if (!ok_)
      return std::nullopt;
    applyRenames();
    removeDeadCode();
    orderDeclarations();
    BackwardProgram result;
    for (const ValueDecl &v : bw_.values) {
      const ValueDecl *f = fwd_.findValue(v.name);
      if (f && (f->kind == ValueKind::Temp || f->kind == ValueKind::Output))
        result.savedValues.push_back(v.name);
    }
    result.gradients = gradients_;
    if (!verifyModule(bw_, diags_)) {
      diags_.error(fwd_.loc, "internal error: the backward program of @" +
                                 fwd_.name + " does not verify");
      return std::nullopt;
    }
    result.module = std::move(bw_);
    return result;
  }

private:
  /// A backward loop being filled and the forward loop it mirrors (for
  /// loops of its own, the loop itself).
  struct Frame {
    const Loop *fwd;
    Loop *bwd;
  };

  /// A contribution to a global value's gradient, made in `loop` by the
  /// statement at `index` of its body, which writes the temp `temp`.
  struct GlobalPart {
    Loop *loop;
    size_t index;
    Access temp;
  };

  // --- Errors ------------------------------------------------------------

  void unsupported(const SourceLoc &loc, const std::string &what) {
    diags_.error(loc, "autodiff: cannot differentiate " + what);
    ok_ = false;
  }

  void internal(const std::string &what) {
    diags_.error(current_ ? current_->loc : fwd_.loc,
                 "internal error in autodiff: " + what);
    ok_ = false;
  }

  // --- Which values get gradients ------------------------------------------

  /// needsGrad_ = values that depend on a non-const input or param through
  /// differentiable ops (active) and on which an output depends.
  void analyseActivity() {
    std::set<std::string> active;
    for (const ValueDecl &v : fwd_.values)
      if ((v.kind == ValueKind::Input && !v.constant) ||
          v.kind == ValueKind::Param)
        active.insert(v.name);
    std::vector<const Stmt *> order;
    for (const auto &loop : fwd_.loops)
      forEachStmt(*loop, [&](const Stmt &s) { order.push_back(&s); });
    for (const Stmt *s : order) {
      if (isConstantOp(s->op))
        continue;
      for (const Operand &o : s->operands)
        if (const auto *a = std::get_if<Access>(&o); a && active.count(a->value))
          active.insert(s->target.value);
    }
    std::set<std::string> needed;
    for (const ValueDecl &v : fwd_.values)
      if (v.kind == ValueKind::Output)
        needed.insert(v.name);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const Stmt &s = **it;
      if (!needed.count(s.target.value) || isConstantOp(s.op))
        continue;
      for (const Operand &o : s.operands)
        if (const auto *a = std::get_if<Access>(&o))
          needed.insert(a->value);
    }
    for (const std::string &name : active)
      if (needed.count(name))
        needsGrad_.insert(name);
  }

  /// `grad_<output>` inputs; each is the first partial of its output.
  void declareOutputGradients() {
    for (const ValueDecl &v : fwd_.values) {
      if (v.kind != ValueKind::Output)
        continue;
      ValueDecl g = v;
      g.name = fresh("grad_" + v.name);
      g.kind = ValueKind::Input;
      g.constant = false;
      bw_.values.push_back(g);
      gradInputs_.insert(g.name);
      if (needsGrad_.count(v.name))
        partials_[v.name].push_back(g.name);
    }
  }

  // --- Names and declarations ------------------------------------------------

  std::string fresh(const std::string &base) {
    std::string name = base;
    for (int k = 1; taken_.count(name); ++k)
      name = base + "_" + std::to_string(k);
    taken_.insert(name);
    return name;
  }

  void declare(const std::string &name, ValueKind kind, Space space,
               Shape shape) {
    ValueDecl v;
    v.name = name;
    v.kind = kind;
    v.space = space;
    v.shape = std::move(shape);
    bw_.values.push_back(std::move(v));
  }

  const ValueDecl &fwdDecl(const std::string &name) const {
    return *fwd_.findValue(name);
  }

  /// A forward value read by the backward program: declared under its own
  /// name (temps and outputs as const inputs: the caller saves them).
  Access saved(const Access &a) {
    if (!bw_.findValue(a.value)) {
      ValueDecl v = fwdDecl(a.value);
      if (v.kind == ValueKind::Temp || v.kind == ValueKind::Output) {
        v.kind = ValueKind::Input;
        v.constant = true;
      }
      bw_.values.push_back(v);
    }
    Access copy = a;
    copy.loc = {};
    return copy;
  }

  Operand saved(const Operand &o) {
    if (const auto *a = std::get_if<Access>(&o))
      return saved(*a);
    return o;
  }

  /// A graph value (in_degree, out_degree) read at `index`.
  Access graphValue(const std::string &name, IndexPath index) {
    if (!bw_.findValue(name))
      declare(name, ValueKind::Graph, *graphValueSpace(name), {});
    return Access{name, std::move(index), {}};
  }

  // --- Emitting statements --------------------------------------------------

  Frame &frame() { return frames_.back(); }

  IndexPath ownRow() { return IndexPath{frame().fwd->var, {}}; }

  Stmt makeStmt(Access target, Reduce reduce, Expr e) {
    Stmt s;
    s.target = std::move(target);
    s.reduce = reduce;
    s.op = e.op;
    s.operands = std::move(e.operands);
    s.shape = std::move(e.shape);
    s.sliceStart = std::move(e.start);
    s.sliceSize = std::move(e.size);
    s.perm = std::move(e.perm);
    if (current_)
      s.loc = current_->loc;
    return s;
  }

  std::optional<Shape> shapeOf(const Stmt &s) {
    std::string error;
    std::optional<Shape> shape = inferResultShape(bw_, s, &error);
    if (!shape)
      internal("'" + std::string(opName(s.op)) + "': " + error);
    return shape;
  }

  /// Writes `e` into a fresh temp at the current loop's own row.
  Access emitTemp(Expr e, const std::string &base = "d") {
    Stmt s = makeStmt(Access{"", ownRow(), {}}, Reduce::None, std::move(e));
    std::optional<Shape> shape = shapeOf(s);
    s.target.value = fresh(base);
    declare(s.target.value, ValueKind::Temp, loopVarSpace(frame().fwd->kind),
            shape ? *shape : Shape{});
    Access target = s.target;
    frame().bwd->body.emplace_back(std::move(s));
    return target;
  }

  Shape shapeOfOperand(const Operand &o) {
    if (const auto *a = std::get_if<Access>(&o)) {
      if (const ValueDecl *v = bw_.findValue(a->value))
        return v->shape;
      return fwdDecl(a->value).shape;
    }
    return {};
  }

  /// A new partial gradient of `v`, owned by it.
  std::string newPartial(const ValueDecl &v) {
    // `grad<k>_x`, not `grad_x_<k>`, which could be the gradient of `x_<k>`.
    std::string name = fresh("grad" +
                             std::to_string(partials_[v.name].size() + 1) +
                             "_" + v.name);
    declare(name, ValueKind::Temp, v.space, v.shape);
    owner_[name] = v.name;
    partials_[v.name].push_back(name);
    return name;
  }

  /// Adds `e` (of v's shape, per iteration) as the gradient contribution of
  /// the forward read `read` of v.
  void deliver(const Access &read, Expr e) {
    if (!needsGrad_.count(read.value) || !ok_)
      return;
    const ValueDecl &v = fwdDecl(read.value);
    if (v.space == Space::Global) {
      Access temp = emitTemp(std::move(e), "d");
      globalParts_[v.name].push_back(
          GlobalPart{frame().bwd, frame().bwd->body.size() - 1, temp});
      return;
    }
    bool ownRowRead =
        read.index.attrs.empty() && read.index.var == frame().fwd->var;
    // A plain copy of a gradient row that already has v's rows is used as
    // the partial itself.
    if (ownRowRead && e.op == OpKind::Copy) {
      const auto *g = std::get_if<Access>(&e.operands[0]);
      const ValueDecl *gd = g ? bw_.findValue(g->value) : nullptr;
      if (gd && g->index == read.index && gd->space == v.space &&
          gd->shape == v.shape) {
        partials_[v.name].push_back(g->value);
        return;
      }
    }
    Access target{"", read.index, {}};
    Stmt s = makeStmt(target, ownRowRead ? Reduce::None : Reduce::Sum,
                      std::move(e));
    std::optional<Shape> shape = shapeOf(s);
    if (!shape)
      return;
    if (*shape != v.shape) {
      internal("the gradient of '" + read.str() + "' has shape " +
               shapeStr(*shape) + ", not " + shapeStr(v.shape));
      return;
    }
    s.target.value = newPartial(v);
    frame().bwd->body.emplace_back(std::move(s));
  }

  /// deliver() for an operand of a broadcasting binary op: a contribution
  /// of the result's shape is summed down to the operand's.
  void deliverBroadcast(const Operand &operand, const Shape &result, Expr e) {
    const auto *a = std::get_if<Access>(&operand);
    if (!a || !needsGrad_.count(a->value))
      return;
    Shape want = fwdDecl(a->value).shape;
    if (want == result)
      return deliver(*a, std::move(e));
    Operand summed = e.op == OpKind::Copy ? e.operands[0]
                                          : Operand(emitTemp(std::move(e)));
    deliver(*a, shaped(OpKind::SumTo, summed, want));
  }

  /// Global contributions made in `loop` are reduced in one statement.
  void flushGlobalParts(Loop &loop) {
    for (auto &[name, parts] : globalParts_) {
      std::vector<GlobalPart> here;
      for (const GlobalPart &p : parts)
        if (p.loop == &loop)
          here.push_back(p);
      if (here.empty())
        continue;
      const ValueDecl &v = fwdDecl(name);
      if (!partials_[name].empty()) {
        unsupported(v.loc, "global value '" + name +
                               "': it is read in more than one loop, and "
                               "gradients from two loops cannot be summed "
                               "into a global value");
        return;
      }
      std::string partial = newPartial(v);
      Access target{partial, {}, {}};
      if (here.size() == 1) {
        // Reduce the one contribution directly instead of through its temp.
        Stmt &s = std::get<Stmt>(loop.body[here[0].index]);
        std::string temp = s.target.value;
        s.target = target;
        s.reduce = Reduce::Sum;
        bw_.values.erase(std::find_if(
            bw_.values.begin(), bw_.values.end(),
            [&](const ValueDecl &d) { return d.name == temp; }));
        continue;
      }
      Access sum = here[0].temp;
      for (size_t i = 1; i + 1 < here.size(); ++i)
        sum = emitTemp(expr(OpKind::Add, {sum, here[i].temp}));
      loop.body.emplace_back(makeStmt(
          target, Reduce::Sum, expr(OpKind::Add, {sum, here.back().temp})));
    }
    for (auto &entry : globalParts_)
      entry.second.erase(
          std::remove_if(entry.second.begin(), entry.second.end(),
                         [&](const GlobalPart &p) { return p.loop == &loop; }),
          entry.second.end());
  }

  // --- Summing partial gradients ------------------------------------------------

  /// Sums v's partials into its gradient at the current loop's own row
  /// (which is a row of v's space); afterwards total_[v] names it ("" when
  /// no gradient reaches v).
  void finalizeHere(const std::string &v) {
    std::vector<std::string> parts = partials_[v];
    const ValueDecl &decl = fwdDecl(v);
    if (parts.empty()) {
      total_[v] = "";
      return;
    }
    if (parts.size() == 1) {
      if (owner_[parts[0]] == v)
        rename_[parts[0]] = fresh("grad_" + v);
      total_[v] = parts[0];
      return;
    }
    if (decl.space == Space::Global) {
      unsupported(decl.loc, "global value '" + v +
                                "': it is read in more than one loop, and "
                                "gradients from two loops cannot be summed "
                                "into a global value");
      return;
    }
    std::string name = fresh("grad_" + v);
    declare(name, ValueKind::Temp, decl.space, decl.shape);
    total_[v] = name;
    sumInto(name, parts);
  }

  /// `name[row] = add(...)` over `parts` at the current loop's own row.
  void sumInto(const std::string &name, const std::vector<std::string> &parts) {
    IndexPath row = ownRow();
    Access sum{parts[0], row, {}};
    for (size_t i = 1; i + 1 < parts.size(); ++i)
      sum = emitTemp(expr(OpKind::Add, {sum, Access{parts[i], row, {}}}));
    frame().bwd->body.emplace_back(
        makeStmt(Access{name, row, {}}, Reduce::None,
                 expr(OpKind::Add, {sum, Access{parts.back(), row, {}}})));
  }

  /// finalizeHere() in a loop of its own over v's space, collected in
  /// `loops` (one per space).
  void finalizeInOwnLoop(const std::string &v,
                         std::vector<std::unique_ptr<Loop>> &loops) {
    const ValueDecl &decl = fwdDecl(v);
    // A global's gradient is a single partial, renamed, or an error: no
    // statement is emitted, so no loop is needed.
    if (decl.space == Space::Global)
      return finalizeHere(v);
    Loop &loop = loopFor(decl.space, loops);
    frames_.push_back(Frame{&loop, &loop});
    finalizeHere(v);
    frames_.pop_back();
  }

  Loop &loopFor(Space space, std::vector<std::unique_ptr<Loop>> &loops) {
    for (auto &loop : loops)
      if (loopVarSpace(loop->kind) == space)
        return *loop;
    loops.push_back(loopOver(space));
    return *loops.back();
  }

  // --- Walking the forward program backwards ------------------------------------

  void backwardTopLoop(const Loop &loop) {
    // Reductions that complete only when `loop` closes (through an
    // attribute path, or into a global) are summed before its mirror.
    std::vector<std::unique_ptr<Loop>> before;
    forEachStmt(loop, [&](const Stmt &s) {
      if (s.reduce == Reduce::None || !needsGrad_.count(s.target.value))
        return;
      if (isParentRowReduction(loop, s))
        return;
      finalizeInOwnLoop(s.target.value, before);
    });
    for (auto &l : before)
      if (!l->body.empty())
        bw_.loops.push_back(std::move(l));
    auto mirror = mirrorOf(loop);
    backwardBody(loop, *mirror);
    if (!mirror->body.empty())
      bw_.loops.push_back(std::move(mirror));
  }

  /// Whether `s` (somewhere in top-level `top`) reduces into the row of
  /// the node loop around its neighbour loop.
  static bool isParentRowReduction(const Loop &top, const Stmt &s) {
    for (const BodyItem &item : top.body) {
      const auto *inner = std::get_if<std::unique_ptr<Loop>>(&item);
      if (!inner)
        continue;
      for (const BodyItem &x : (*inner)->body)
        if (const auto *t = std::get_if<Stmt>(&x); t == &s)
          return isParentRow(**inner, s.target.index);
    }
    return false;
  }

  static std::unique_ptr<Loop> mirrorOf(const Loop &loop) {
    auto m = std::make_unique<Loop>();
    m->kind = loop.kind;
    m->var = loop.var;
    m->parent = loop.parent;
    m->loc = loop.loc;
    return m;
  }

  void backwardBody(const Loop &fwdLoop, Loop &bwdLoop) {
    frames_.push_back(Frame{&fwdLoop, &bwdLoop});
    for (auto it = fwdLoop.body.rbegin(); it != fwdLoop.body.rend() && ok_;
         ++it) {
      if (const auto *s = std::get_if<Stmt>(&*it)) {
        backwardStmt(*s);
        continue;
      }
      const Loop &inner = *std::get<std::unique_ptr<Loop>>(*it);
      // Its reductions into this loop's row complete when it closes; their
      // gradients are summed here, before its mirror reads them.
      for (const BodyItem &x : inner.body)
        if (const auto *s = std::get_if<Stmt>(&x))
          if (s->reduce != Reduce::None && needsGrad_.count(s->target.value) &&
              isParentRow(inner, s->target.index))
            finalizeHere(s->target.value);
      auto mirror = mirrorOf(inner);
      backwardBody(inner, *mirror);
      if (!mirror->body.empty())
        bwdLoop.body.emplace_back(std::move(mirror));
    }
    flushGlobalParts(bwdLoop);
    frames_.pop_back();
  }

  void backwardStmt(const Stmt &s) {
    const std::string &t = s.target.value;
    if (!needsGrad_.count(t))
      return;
    current_ = &s;
    if (s.reduce == Reduce::None)
      finalizeHere(t);
    auto summed = total_.find(t);
    if (summed == total_.end()) {
      internal("the gradient of '" + t + "' was not summed before its use");
      return;
    }
    const std::string name = summed->second;
    if (name.empty() || !ok_)
      return;
    Access g{name, s.target.index, {}};
    if (s.reduce == Reduce::Mean) {
      std::optional<Access> count = contributionCount(s);
      if (!count)
        return;
      g = emitTemp(expr(OpKind::Div, {g, *count}));
    } else if (s.reduce == Reduce::Max) {
      if (s.op == OpKind::Detach)
        return;
      // Only the contributions equal to the maximum receive its gradient.
      Access mask = emitTemp(
          expr(OpKind::Eq, {opOutput(s), saved(Access{t, s.target.index, {}})}));
      g = emitTemp(expr(OpKind::Mul, {g, mask}));
    }
    differentiate(s, g);
  }

  /// The number of contributions a `mean=` divides by, at the target row.
  std::optional<Access> contributionCount(const Stmt &s) {
    const Loop &loop = *frame().fwd;
    const IndexPath &p = s.target.index;
    if (isParentRow(loop, p))
      return graphValue(loop.kind == LoopKind::Incoming ? "in_degree"
                                                        : "out_degree",
                        IndexPath{loop.parent, {}});
    if (loop.kind == LoopKind::Edges && p.var == loop.var &&
        p.attrs.size() == 1 &&
        (p.attrs[0] == Attr::Dst || p.attrs[0] == Attr::Src))
      return graphValue(p.attrs[0] == Attr::Dst ? "in_degree" : "out_degree",
                        p);
    unsupported(s.loc, "'mean=' into '" + s.target.str() + "' in a '" +
                           loopKindName(loop.kind) +
                           "' loop: only a node's incoming or outgoing edges "
                           "have a known count");
    return std::nullopt;
  }

  /// The value of `s`'s right-hand side per iteration: the target row for a
  /// plain assignment, recomputed for a reduction (only the reduced rows
  /// were saved).
  Operand opOutput(const Stmt &s) {
    if (s.reduce == Reduce::None)
      return saved(s.target);
    if (s.op == OpKind::Copy)
      return saved(s.operands[0]);
    Expr e = expr(s.op, {});
    for (const Operand &o : s.operands)
      e.operands.push_back(saved(o));
    e.shape = s.shape;
    e.start = s.sliceStart;
    e.size = s.sliceSize;
    e.perm = s.perm;
    return emitTemp(std::move(e));
  }

  /// The gradient of a weight from outer(a, g) per iteration ([.., K, N]):
  /// axes of `a` before the weight's own are summed away.
  Expr weightGradient(Expr outer, size_t outerRank, const Shape &weight) {
    size_t extra = outerRank - weight.size();
    if (extra == 0)
      return outer;
    std::vector<int> perm;
    for (size_t i = extra; i < outerRank; ++i)
      perm.push_back(static_cast<int>(i));
    for (size_t i = 0; i < extra; ++i)
      perm.push_back(static_cast<int>(i));
    Access o = emitTemp(std::move(outer));
    Access moved = emitTemp(permuted(o, perm));
    return shaped(OpKind::SumTo, moved, weight);
  }

  // --- The derivative rules -----------------------------------------------------

  /// Delivers the contributions of `s`'s operands given `g`, the gradient
  /// of one right-hand-side value per iteration.
  void differentiate(const Stmt &s, const Access &g) {
    auto access = [&](size_t i) -> const Access * {
      return i < s.operands.size() ? std::get_if<Access>(&s.operands[i])
                                   : nullptr;
    };
    auto wants = [&](size_t i) {
      const Access *a = access(i);
      return a && needsGrad_.count(a->value) > 0;
    };
    auto op = [&](size_t i) { return saved(s.operands[i]); };
    Shape result = fwdDecl(s.target.value).shape;

    switch (s.op) {
    case OpKind::Linear: // a [.., K] W [K, N]: ga = g W^T, gW += a^T g
      if (wants(0))
        deliver(*access(0), expr(OpKind::LinearT, {g, op(1)}));
      if (wants(1))
        deliver(*access(1),
                weightGradient(expr(OpKind::Outer, {op(0), g}),
                               shapeOfOperand(s.operands[0]).size() + 1,
                               shapeOfOperand(s.operands[1])));
      return;
    case OpKind::LinearT: // a [.., K] W [N, K]: ga = g W, gW += g^T a
      if (wants(0))
        deliver(*access(0), expr(OpKind::Linear, {g, op(1)}));
      if (wants(1))
        deliver(*access(1),
                weightGradient(expr(OpKind::Outer, {g, op(0)}),
                               result.size() + 1,
                               shapeOfOperand(s.operands[1])));
      return;
    case OpKind::Dot: // g [..]: ga = g b, gb = g a (prefix broadcast)
      if (wants(0))
        deliver(*access(0), expr(OpKind::Mul, {g, op(1)}));
      if (wants(1))
        deliver(*access(1), expr(OpKind::Mul, {g, op(0)}));
      return;
    case OpKind::Outer: { // g [.., K, N]: ga = sum_n g b, gb = sum_k g a
      std::vector<int> swap = swapLastTwo(result.size());
      if (wants(0)) {
        Access gT = emitTemp(permuted(g, swap));
        Access m = emitTemp(expr(OpKind::Mul, {op(1), gT}));
        Access mT = emitTemp(permuted(m, swap));
        deliver(*access(0),
                shaped(OpKind::SumTo, mT, shapeOfOperand(s.operands[0])));
      }
      if (wants(1)) {
        Access m = emitTemp(expr(OpKind::Mul, {op(0), g}));
        Access mT = emitTemp(permuted(m, swap));
        deliver(*access(1),
                shaped(OpKind::SumTo, mT, shapeOfOperand(s.operands[1])));
      }
      return;
    }
    case OpKind::Copy:
      if (wants(0))
        deliver(*access(0), expr(OpKind::Copy, {g}));
      return;
    case OpKind::Neg:
      if (wants(0))
        deliver(*access(0), expr(OpKind::Neg, {g}));
      return;
    case OpKind::Exp: // d exp(a) = exp(a)
      if (wants(0))
        deliver(*access(0), expr(OpKind::Mul, {g, opOutput(s)}));
      return;
    case OpKind::Log: // d log(a) = 1/a
      if (wants(0))
        deliver(*access(0), expr(OpKind::Div, {g, op(0)}));
      return;
    case OpKind::Sqrt: // d sqrt(a) = 1 / (2 sqrt(a))
      if (wants(0)) {
        Access twice = emitTemp(expr(OpKind::Mul, {opOutput(s), literal(2)}));
        deliver(*access(0), expr(OpKind::Div, {g, twice}));
      }
      return;
    case OpKind::Relu:
      if (wants(0)) {
        Access d = emitTemp(expr(OpKind::ReluGrad, {op(0)}));
        deliver(*access(0), expr(OpKind::Mul, {g, d}));
      }
      return;
    case OpKind::LeakyRelu:
      if (wants(0)) {
        Access d = emitTemp(expr(OpKind::LeakyReluGrad, {op(0), op(1)}));
        deliver(*access(0), expr(OpKind::Mul, {g, d}));
      }
      return;
    case OpKind::Gelu:
      if (wants(0)) {
        Access d = emitTemp(expr(OpKind::GeluGrad, {op(0)}));
        deliver(*access(0), expr(OpKind::Mul, {g, d}));
      }
      return;
    case OpKind::Sigmoid: // d sigmoid(a) = s (1 - s)
      if (wants(0)) {
        Operand sig = opOutput(s);
        Access rest = emitTemp(expr(OpKind::Sub, {literal(1), sig}));
        Access d = emitTemp(expr(OpKind::Mul, {sig, rest}));
        deliver(*access(0), expr(OpKind::Mul, {g, d}));
      }
      return;
    case OpKind::Tanh: // d tanh(a) = 1 - t^2
      if (wants(0)) {
        Operand t = opOutput(s);
        Access sq = emitTemp(expr(OpKind::Mul, {t, t}));
        Access d = emitTemp(expr(OpKind::Sub, {literal(1), sq}));
        deliver(*access(0), expr(OpKind::Mul, {g, d}));
      }
      return;
    case OpKind::Detach:
    case OpKind::Eq:
    case OpKind::ReluGrad:
    case OpKind::LeakyReluGrad:
      return; // no gradient (zero almost everywhere)
    case OpKind::Add:
      deliverBroadcast(s.operands[0], result, expr(OpKind::Copy, {g}));
      deliverBroadcast(s.operands[1], result, expr(OpKind::Copy, {g}));
      return;
    case OpKind::Sub:
      deliverBroadcast(s.operands[0], result, expr(OpKind::Copy, {g}));
      deliverBroadcast(s.operands[1], result, expr(OpKind::Neg, {g}));
      return;
    case OpKind::Mul:
      deliverBroadcast(s.operands[0], result, expr(OpKind::Mul, {g, op(1)}));
      deliverBroadcast(s.operands[1], result, expr(OpKind::Mul, {g, op(0)}));
      return;
    case OpKind::Div: // d(a/b)/db = -(a/b)/b
      deliverBroadcast(s.operands[0], result, expr(OpKind::Div, {g, op(1)}));
      if (wants(1)) {
        Access q = emitTemp(expr(OpKind::Div, {opOutput(s), op(1)}));
        Access gq = emitTemp(expr(OpKind::Mul, {g, q}));
        deliverBroadcast(s.operands[1], result, expr(OpKind::Neg, {gq}));
      }
      return;
    case OpKind::Reshape:
      if (wants(0))
        deliver(*access(0),
                shaped(OpKind::Reshape, g, shapeOfOperand(s.operands[0])));
      return;
    case OpKind::Concat: { // each operand's gradient is its slice of g
      Dim offset = Dim::constant(0);
      for (size_t i = 0; i < s.operands.size(); ++i) {
        Dim size = shapeOfOperand(s.operands[i]).back();
        if (wants(i))
          deliver(*access(i), ranged(OpKind::Slice, g, offset, size));
        offset = offset + size;
      }
      return;
    }
    case OpKind::Slice:
      if (wants(0))
        deliver(*access(0), ranged(OpKind::Embed, g, s.sliceStart,
                                   shapeOfOperand(s.operands[0]).back()));
      return;
    case OpKind::Embed:
      if (wants(0))
        deliver(*access(0), ranged(OpKind::Slice, g, s.sliceStart,
                                   shapeOfOperand(s.operands[0]).back()));
      return;
    case OpKind::Transpose: {
      std::vector<int> inverse(s.perm.size());
      for (size_t i = 0; i < s.perm.size(); ++i)
        inverse[s.perm[i]] = static_cast<int>(i);
      if (wants(0))
        deliver(*access(0), permuted(g, inverse));
      return;
    }
    case OpKind::GeluGrad:
    case OpKind::SumTo:
      unsupported(s.loc, std::string("'") + opName(s.op) +
                             "': it has no derivative rule");
      return;
    }
  }

  // --- Gradients of inputs and params ---------------------------------------------

  /// One output per non-const input and param, in declaration order.
  void finalizeArguments() {
    current_ = nullptr;
    std::vector<std::unique_ptr<Loop>> loops;
    for (const ValueDecl &v : fwd_.values) {
      bool wanted = (v.kind == ValueKind::Input && !v.constant) ||
                    v.kind == ValueKind::Param;
      if (!wanted || !ok_)
        continue;
      std::vector<std::string> parts = partials_[v.name];
      std::string name = fresh("grad_" + v.name);
      gradients_[v.name] = name;
      if (parts.size() == 1 && owner_[parts[0]] == v.name) {
        rename_[parts[0]] = name;
        bw_.findValue(parts[0])->kind = ValueKind::Output;
        continue;
      }
      if (v.space == Space::Global) {
        if (!parts.empty()) {
          unsupported(v.loc, "global value '" + v.name +
                                 "': it is read in more than one loop, and "
                                 "gradients from two loops cannot be summed "
                                 "into a global value");
          return;
        }
        // Nothing reaches it: a sum of zeros over any loop is zero.
        Loop &loop = loopFor(Space::Node, loops);
        declare(name, ValueKind::Output, v.space, v.shape);
        loop.body.emplace_back(makeStmt(
            Access{name, {}, {}}, Reduce::Sum,
            expr(OpKind::Mul, {saved(Access{v.name, {}, {}}), literal(0)})));
        continue;
      }
      Loop &loop = loopFor(v.space, loops);
      frames_.push_back(Frame{&loop, &loop});
      declare(name, ValueKind::Output, v.space, v.shape);
      IndexPath row = ownRow();
      if (parts.empty())
        loop.body.emplace_back(makeStmt(
            Access{name, row, {}}, Reduce::None,
            expr(OpKind::Mul, {saved(Access{v.name, row, {}}), literal(0)})));
      else if (parts.size() == 1)
        loop.body.emplace_back(
            makeStmt(Access{name, row, {}}, Reduce::None,
                     expr(OpKind::Copy, {Access{parts[0], row, {}}})));
      else
        sumInto(name, parts);
      frames_.pop_back();
    }
    for (auto &loop : loops)
      if (!loop->body.empty())
        bw_.loops.push_back(std::move(loop));
  }

  // --- Clean-up ---------------------------------------------------------------

  void applyRenames() {
    auto fix = [&](std::string &name) {
      auto it = rename_.find(name);
      if (it != rename_.end())
        name = it->second;
    };
    for (ValueDecl &v : bw_.values)
      fix(v.name);
    for (auto &loop : bw_.loops)
      forEachStmt(*loop, [&](Stmt &s) {
        fix(s.target.value);
        for (Operand &o : s.operands)
          if (auto *a = std::get_if<Access>(&o))
            fix(a->value);
      });
  }

  /// Removes statements whose temp nobody reads, then loops left empty and
  /// declarations nobody uses (the grad_<output> inputs stay: they are the
  /// interface).
  void removeDeadCode() {
    bool changed = true;
    while (changed) {
      changed = false;
      std::set<std::string> read;
      for (auto &loop : bw_.loops)
        forEachStmt(*loop, [&](Stmt &s) {
          for (Operand &o : s.operands)
            if (auto *a = std::get_if<Access>(&o))
              read.insert(a->value);
        });
      auto dead = [&](const BodyItem &item) {
        const auto *s = std::get_if<Stmt>(&item);
        if (!s || read.count(s->target.value))
          return false;
        const ValueDecl *v = bw_.findValue(s->target.value);
        return v && v->kind == ValueKind::Temp;
      };
      for (auto &loop : bw_.loops)
        changed = prune(*loop, dead) || changed;
    }
    bw_.loops.erase(std::remove_if(bw_.loops.begin(), bw_.loops.end(),
                                   [](const std::unique_ptr<Loop> &l) {
                                     return l->body.empty();
                                   }),
                    bw_.loops.end());
    std::set<std::string> used;
    for (auto &loop : bw_.loops)
      forEachStmt(*loop, [&](Stmt &s) {
        used.insert(s.target.value);
        for (Operand &o : s.operands)
          if (auto *a = std::get_if<Access>(&o))
            used.insert(a->value);
      });
    bw_.values.erase(std::remove_if(bw_.values.begin(), bw_.values.end(),
                                    [&](const ValueDecl &v) {
                                      return !used.count(v.name) &&
                                             !gradInputs_.count(v.name);
                                    }),
                     bw_.values.end());
  }

  template <typename Dead> static bool prune(Loop &loop, Dead &dead) {
    bool changed = false;
    for (BodyItem &item : loop.body)
      if (auto *inner = std::get_if<std::unique_ptr<Loop>>(&item))
        changed = prune(**inner, dead) || changed;
    size_t before = loop.body.size();
    loop.body.erase(
        std::remove_if(loop.body.begin(), loop.body.end(),
                       [&](const BodyItem &item) {
                         if (const auto *inner =
                                 std::get_if<std::unique_ptr<Loop>>(&item))
                           return (*inner)->body.empty();
                         return dead(item);
                       }),
        loop.body.end());
    return changed || loop.body.size() != before;
  }

  /// grad_<output> inputs, then forward values in forward order, then
  /// temps in creation order, then the gradient outputs in forward order.
  void orderDeclarations() {
    std::map<std::string, size_t> fwdIndex, outIndex;
    for (size_t i = 0; i < fwd_.values.size(); ++i)
      fwdIndex[fwd_.values[i].name] = i;
    for (const auto &[value, name] : gradients_)
      outIndex[name] = fwdIndex[value];
    auto rank = [&](const ValueDecl &v) -> std::pair<int, size_t> {
      if (gradInputs_.count(v.name))
        return {0, 0};
      if (v.kind == ValueKind::Output)
        return {3, outIndex[v.name]};
      if (fwdIndex.count(v.name) && !owner_.count(v.name))
        return {1, fwdIndex[v.name]};
      return {2, 0};
    };
    std::stable_sort(bw_.values.begin(), bw_.values.end(),
                     [&](const ValueDecl &a, const ValueDecl &b) {
                       return rank(a) < rank(b);
                     });
  }

  const Module &fwd_;
  DiagnosticEngine &diags_;
  Module bw_;
  bool ok_ = true;
  const Stmt *current_ = nullptr; ///< the forward statement being mirrored
  std::vector<Frame> frames_;
  std::set<std::string> taken_;
  std::set<std::string> needsGrad_;
  std::set<std::string> gradInputs_;
  /// Per forward value: the backward values whose sum is its gradient.
  std::map<std::string, std::vector<std::string>> partials_;
  /// Partial temp -> the forward value it was made for.
  std::map<std::string, std::string> owner_;
  /// Per forward value, once summed: its gradient ("" when none reaches it).
  std::map<std::string, std::string> total_;
  std::map<std::string, std::vector<GlobalPart>> globalParts_;
  std::map<std::string, std::string> rename_;
  std::map<std::string, std::string> gradients_;
};

} // namespace

std::optional<BackwardProgram> buildBackward(const ir::Module &forward,
                                             ir::DiagnosticEngine &diags) {
  return Differentiator(forward, diags).run();
}

} // namespace hector::passes
