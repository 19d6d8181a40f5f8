// The inter-op IR verifier: every rule of docs/ir.md, checked in one walk
// over the loops in program order.
//
// Reads are checked against a per-value state that follows program order:
// a value is unwritten, written (only the rows of the current iteration of
// its row loop are known to exist while the enclosing top-level loop runs),
// being reduced (nothing may be read until the reduced-over loop closes), or
// complete (every row exists). Two index paths name the same row when they
// are equal after rewriting `e.dst` inside `n.incoming` (and `e.src` inside
// `n.outgoing`) to `n`.
#include "ir/InterIRVerifier.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace hector::ir {

namespace {

bool isIdentifier(const std::string &name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) ||
                        name[0] == '_'))
    return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

bool isNodeLoop(LoopKind k) {
  return k == LoopKind::Nodes || k == LoopKind::DstNodes ||
         k == LoopKind::SrcNodes;
}

bool isNeighborLoop(LoopKind k) {
  return k == LoopKind::Incoming || k == LoopKind::Outgoing;
}

/// One attribute step of an index path (the table in docs/ir.md).
std::optional<Space> step(Space from, Attr a) {
  switch (a) {
  case Attr::Src:
    if (from == Space::Edge || from == Space::Pair)
      return Space::Node;
    break;
  case Attr::Dst:
    if (from == Space::Edge)
      return Space::Node;
    break;
  case Attr::EType:
    if (from == Space::Edge || from == Space::Pair)
      return Space::EdgeType;
    break;
  case Attr::Pair:
    if (from == Space::Edge)
      return Space::Pair;
    break;
  case Attr::NType:
    if (from == Space::Node)
      return Space::NodeType;
    break;
  }
  return std::nullopt;
}

std::string where(const SourceLoc &loc) {
  return loc.valid() ? std::to_string(loc.line) + ":" + std::to_string(loc.col)
                     : std::string("an unknown location");
}

/// "a node", "an edge", ... for messages.
std::string aSpace(Space s) {
  std::string name = spaceName(s);
  bool vowel = name[0] == 'e' || name == "ntype";
  return (vowel ? "an " : "a ") + name;
}

std::string rangeText(const Loop &loop) {
  std::string kind = loopKindName(loop.kind);
  return isNeighborLoop(loop.kind) ? loop.parent + "." + kind : kind;
}

// --- Shape inference ---------------------------------------------------------

Shape dropLast(const Shape &s) { return Shape(s.begin(), s.end() - 1); }

bool isPrefix(const Shape &prefix, const Shape &of) {
  return prefix.size() <= of.size() &&
         std::equal(prefix.begin(), prefix.end(), of.begin());
}

Dim elementCount(const Shape &s) {
  Dim n = Dim::constant(1);
  for (const Dim &d : s)
    n = n * d;
  return n;
}

struct OperandShape {
  Shape shape;
  bool scalar = false;
};

/// Per-op shape rules; `ops` has been checked for count and kinds.
class ShapeRules {
public:
  ShapeRules(const Stmt &stmt, std::vector<OperandShape> ops,
             std::string *error)
      : stmt_(stmt), ops_(std::move(ops)), error_(error),
        name_(opName(stmt.op)) {}

  std::optional<Shape> infer() {
    switch (stmt_.op) {
    case OpKind::Linear:
      return linear();
    case OpKind::LinearT:
      return linearT();
    case OpKind::Dot:
      return dot();
    case OpKind::Outer:
      return outer();
    case OpKind::LeakyRelu:
    case OpKind::LeakyReluGrad:
      if (!count(2) || !value(0))
        return std::nullopt;
      if (!ops_[1].scalar)
        return fail(name_ + "'s slope (operand 2) must be a scalar");
      return ops_[0].shape;
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Eq:
      return broadcast();
    case OpKind::Reshape:
      return reshape();
    case OpKind::Concat:
      return concat();
    case OpKind::Slice:
      return slice();
    case OpKind::SumTo:
      return sumTo();
    case OpKind::Embed:
      return embed();
    case OpKind::Transpose:
      return transpose();
    default: // elementwise unary
      if (!count(1) || !value(0))
        return std::nullopt;
      return ops_[0].shape;
    }
  }

private:
  std::nullopt_t fail(const std::string &message) {
    if (error_)
      *error_ = message;
    return std::nullopt;
  }
  bool count(size_t n) {
    if (ops_.size() == n)
      return true;
    fail(name_ + " takes " + std::to_string(n) + " operand" +
         (n == 1 ? "" : "s") + ", got " + std::to_string(ops_.size()));
    return false;
  }
  bool value(size_t i) {
    if (!ops_[i].scalar)
      return true;
    fail("operand " + std::to_string(i + 1) + " of " + name_ +
         " must be a value, not a scalar");
    return false;
  }
  bool values(size_t n) {
    if (!count(n))
      return false;
    for (size_t i = 0; i < n; ++i)
      if (!value(i))
        return false;
    return true;
  }
  bool nonScalar(size_t i) {
    if (!ops_[i].shape.empty())
      return true;
    fail("operand " + std::to_string(i + 1) + " of " + name_ +
         " must have at least one dimension, got []");
    return false;
  }
  std::string shapes() const {
    std::string out;
    for (size_t i = 0; i < ops_.size(); ++i)
      out += (i ? " and " : "") + shapeStr(ops_[i].shape);
    return out;
  }

  std::optional<Shape> linear() {
    if (!values(2) || !nonScalar(0))
      return std::nullopt;
    const Shape &a = ops_[0].shape, &w = ops_[1].shape;
    if (w.size() == 2 && a.back() == w[0]) {
      Shape r = dropLast(a);
      r.push_back(w[1]);
      return r;
    }
    // Per-head weights: a [.., H, K] times W [H, K, N].
    if (w.size() == 3 && a.size() >= 2 && a[a.size() - 2] == w[0] &&
        a.back() == w[1]) {
      Shape r = dropLast(a);
      r.push_back(w[2]);
      return r;
    }
    return fail("linear: input " + shapeStr(a) + " does not fit weight " +
                shapeStr(w) + " (need [.., K] with [K, N], or [H, K] with "
                "[H, K, N])");
  }

  std::optional<Shape> linearT() {
    if (!values(2) || !nonScalar(0))
      return std::nullopt;
    const Shape &a = ops_[0].shape, &w = ops_[1].shape;
    if (w.size() == 2 && a.back() == w[1]) {
      Shape r = dropLast(a);
      r.push_back(w[0]);
      return r;
    }
    // Per-head weights: a [.., H, K] times W [H, N, K].
    if (w.size() == 3 && a.size() >= 2 && a[a.size() - 2] == w[0] &&
        a.back() == w[2]) {
      Shape r = dropLast(a);
      r.push_back(w[1]);
      return r;
    }
    return fail("linear_t: input " + shapeStr(a) + " does not fit weight " +
                shapeStr(w) + " (need [.., K] with [N, K], or [H, K] with "
                "[H, N, K])");
  }

  std::optional<Shape> dot() {
    if (!values(2) || !nonScalar(0))
      return std::nullopt;
    if (ops_[0].shape != ops_[1].shape)
      return fail("dot: operand shapes " + shapes() + " differ");
    return dropLast(ops_[0].shape);
  }

  std::optional<Shape> outer() {
    if (!values(2) || !nonScalar(0) || !nonScalar(1))
      return std::nullopt;
    const Shape &a = ops_[0].shape, &b = ops_[1].shape;
    if (dropLast(a) != dropLast(b))
      return fail("outer: operand shapes " + shapes() +
                  " have different prefixes");
    Shape r = a;
    r.push_back(b.back());
    return r;
  }

  std::optional<Shape> broadcast() {
    if (!count(2))
      return std::nullopt;
    const Shape &a = ops_[0].shape, &b = ops_[1].shape;
    // Equal, one scalar, or one a prefix of the other (broadcast over the
    // trailing axes): in every legal case the longer shape is the result.
    if (isPrefix(a, b))
      return b;
    if (isPrefix(b, a))
      return a;
    return fail(name_ + ": shapes " + shapes() + " do not broadcast");
  }

  std::optional<Shape> reshape() {
    if (!values(1))
      return std::nullopt;
    Dim from = elementCount(ops_[0].shape), to = elementCount(stmt_.shape);
    if (from != to)
      return fail("reshape: " + shapeStr(ops_[0].shape) + " has " +
                  from.str() + " elements but " + shapeStr(stmt_.shape) +
                  " has " + to.str());
    return stmt_.shape;
  }

  std::optional<Shape> concat() {
    if (ops_.size() < 2)
      return fail("concat takes at least 2 operands, got " +
                  std::to_string(ops_.size()));
    Dim last;
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (!value(i) || !nonScalar(i))
        return std::nullopt;
      if (dropLast(ops_[i].shape) != dropLast(ops_[0].shape))
        return fail("concat: operand shapes " + shapes() +
                    " have different prefixes");
      last = last + ops_[i].shape.back();
    }
    Shape r = dropLast(ops_[0].shape);
    r.push_back(last);
    return r;
  }

  std::optional<Shape> slice() {
    if (!values(1) || !nonScalar(0))
      return std::nullopt;
    const Dim &start = stmt_.sliceStart, &size = stmt_.sliceSize;
    if (size.isConstant() && size.constantValue() <= 0)
      return fail("slice: size " + size.str() + " is not positive");
    if (start.isConstant() && start.constantValue() < 0)
      return fail("slice: start " + start.str() + " is negative");
    // Symbolic bounds are checked when the hypers are bound; a constant
    // overrun is wrong for every binding.
    Dim spare = ops_[0].shape.back() - start - size;
    if (spare.isConstant() && spare.constantValue() < 0)
      return fail("slice: start " + start.str() + " + size " + size.str() +
                  " exceeds the last dimension " +
                  ops_[0].shape.back().str());
    Shape r = dropLast(ops_[0].shape);
    r.push_back(size);
    return r;
  }

  std::optional<Shape> sumTo() {
    if (!values(1))
      return std::nullopt;
    if (!isPrefix(stmt_.shape, ops_[0].shape))
      return fail("sum_to: " + shapeStr(stmt_.shape) + " is not a prefix of " +
                  shapeStr(ops_[0].shape));
    return stmt_.shape;
  }

  std::optional<Shape> embed() {
    if (!values(1) || !nonScalar(0))
      return std::nullopt;
    const Dim &start = stmt_.sliceStart, &size = stmt_.sliceSize;
    if (start.isConstant() && start.constantValue() < 0)
      return fail("embed: start " + start.str() + " is negative");
    // As for slice: only a constant overrun is wrong for every binding.
    Dim spare = size - start - ops_[0].shape.back();
    if (spare.isConstant() && spare.constantValue() < 0)
      return fail("embed: start " + start.str() + " + the last dimension " +
                  ops_[0].shape.back().str() + " exceeds size " + size.str());
    Shape r = dropLast(ops_[0].shape);
    r.push_back(size);
    return r;
  }

  std::optional<Shape> transpose() {
    if (!values(1))
      return std::nullopt;
    const Shape &a = ops_[0].shape;
    const std::vector<int> &perm = stmt_.perm;
    std::vector<int> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    bool isPermutation = perm.size() == a.size();
    for (size_t i = 0; isPermutation && i < sorted.size(); ++i)
      isPermutation = sorted[i] == static_cast<int>(i);
    if (!isPermutation) {
      std::string text;
      for (size_t i = 0; i < perm.size(); ++i)
        text += (i ? ", " : "") + std::to_string(perm[i]);
      return fail("transpose: perm [" + text + "] is not a permutation of the " +
                  std::to_string(a.size()) + " axes of " + shapeStr(a));
    }
    Shape r;
    for (int p : perm)
      r.push_back(a[p]);
    return r;
  }

  const Stmt &stmt_;
  std::vector<OperandShape> ops_;
  std::string *error_;
  std::string name_;
};

// --- The verifier -------------------------------------------------------------

/// What is known about a computed value at the current program point.
struct ValueState {
  enum class Kind {
    Written,   ///< rows of the current iteration of rowLoop exist
    Reducing,  ///< its reduction runs until `completes` closes
    Complete,  ///< every row exists
  };
  Kind kind = Kind::Complete;
  const Loop *rowLoop = nullptr;   ///< Written; Reducing: after it completes
  const Loop *top = nullptr;       ///< the top-level loop that writes it
  const Loop *completes = nullptr; ///< Reducing
  SourceLoc loc;                   ///< the writing statement
};

class Verifier {
public:
  Verifier(const Module &m, DiagnosticEngine &diags) : m_(m), diags_(diags) {}

  bool run() {
    if (!isIdentifier(m_.name))
      error(m_.loc, "module name '" + m_.name + "' is not a valid name");
    checkHypers();
    checkValues();
    for (const auto &loop : m_.loops)
      checkLoop(*loop);
    checkAllWritten();
    return ok_;
  }

private:
  void error(const SourceLoc &loc, const std::string &message) {
    ok_ = false;
    diags_.error(loc, message);
  }

  // --- Declarations --------------------------------------------------------

  void declare(const std::string &name, const SourceLoc &loc) {
    if (!isIdentifier(name))
      error(loc, "'" + name + "' is not a valid name");
    auto [it, fresh] = declared_.emplace(name, loc);
    if (!fresh)
      error(loc, "'" + name + "' is already declared at " +
                     where(it->second));
  }

  void checkHypers() {
    for (const HyperDecl &h : m_.hypers) {
      declare(h.name, h.loc);
      if (isGraphValueName(h.name))
        error(h.loc, "'" + h.name + "' is reserved for a graph value");
      if (h.type == HyperDecl::Type::Int &&
          (std::floor(h.defaultValue) != h.defaultValue ||
           std::fabs(h.defaultValue) >= 9.2e18))
        error(h.loc, "int hyper-parameter '" + h.name +
                         "' has a non-integer value");
    }
  }

  void checkValues() {
    bool hasOutput = false;
    for (const ValueDecl &v : m_.values) {
      declare(v.name, v.loc);
      hasOutput = hasOutput || v.kind == ValueKind::Output;
      checkGraphValue(v);
      if (v.constant && v.kind != ValueKind::Input)
        error(v.loc, "'" + v.name + "' is " +
                         std::string(valueKindName(v.kind)) +
                         "; only inputs can be const");
      for (const Dim &d : v.shape)
        checkDim(d, v.loc, "shape of '" + v.name + "'");
    }
    if (!hasOutput)
      error(m_.loc, "module '@" + m_.name + "' has no output");
  }

  void checkGraphValue(const ValueDecl &v) {
    std::optional<Space> space = graphValueSpace(v.name);
    if (v.kind != ValueKind::Graph) {
      if (space)
        error(v.loc, "'" + v.name + "' is reserved for the graph value " +
                         v.name + " : " + spaceName(*space) + "[]");
      return;
    }
    if (!space)
      error(v.loc, "unknown graph value '" + v.name +
                       "'; graph values are in_degree, out_degree and "
                       "rel_in_degree");
    else if (v.space != *space || !v.shape.empty())
      error(v.loc, "graph value '" + v.name + "' must be declared " +
                       spaceName(*space) + "[]");
  }

  /// Dims use int hyper-parameters only; constant dims are positive.
  void checkDim(const Dim &d, const SourceLoc &loc, const std::string &what) {
    if (d.isConstant() && d.constantValue() <= 0)
      error(loc, what + " has non-positive dimension " + d.str());
    std::set<std::string> seen;
    for (const DimTerm &t : d.terms()) {
      for (const auto &entry : t.powers) {
        const std::string &sym = entry.first;
        if (!seen.insert(sym).second)
          continue;
        const HyperDecl *h = m_.findHyper(sym);
        if (!h)
          error(loc, what + " uses unknown hyper-parameter '" + sym + "'");
        else if (h->type != HyperDecl::Type::Int)
          error(loc, what + " uses float hyper-parameter '" + sym +
                         "'; dimensions need int hyper-parameters");
      }
    }
  }

  // --- Loops -----------------------------------------------------------------

  void checkLoop(const Loop &loop) {
    checkLoopHeader(loop);
    scopes_.push_back(&loop);
    for (const BodyItem &item : loop.body) {
      if (const auto *stmt = std::get_if<Stmt>(&item))
        checkStmt(*stmt);
      else
        checkLoop(*std::get<std::unique_ptr<Loop>>(item));
    }
    scopes_.pop_back();
    closeLoop(&loop);
  }

  void checkLoopHeader(const Loop &loop) {
    std::string range = "'" + rangeText(loop) + "'";
    if (!isIdentifier(loop.var))
      error(loop.loc, "loop variable '" + loop.var + "' is not a valid name");
    for (const Loop *outer : scopes_)
      if (outer->var == loop.var)
        error(loop.loc, "loop variable '" + loop.var +
                            "' shadows the variable of the loop at " +
                            where(outer->loc));
    if (!isNeighborLoop(loop.kind)) {
      if (!scopes_.empty())
        error(loop.loc, range + " loop must be at top level");
      if (!loop.parent.empty())
        error(loop.loc, range + " loop cannot have a parent variable");
      return;
    }
    if (scopes_.empty() || !isNodeLoop(scopes_.back()->kind)) {
      error(loop.loc, range + " loop must be directly inside a node loop "
                              "(nodes, dst_nodes or src_nodes)");
      return;
    }
    if (loop.parent != scopes_.back()->var)
      error(loop.loc, range + " must range over the enclosing loop's "
                              "variable '" +
                          scopes_.back()->var + "'");
  }

  /// Reductions completed by this loop, and values whose top-level loop this
  /// is, become readable at more rows.
  void closeLoop(const Loop *loop) {
    for (auto &entry : state_) {
      ValueState &st = entry.second;
      if (st.kind == ValueState::Kind::Reducing && st.completes == loop)
        st.kind = st.rowLoop ? ValueState::Kind::Written
                             : ValueState::Kind::Complete;
      else if (st.kind == ValueState::Kind::Written && st.top == loop)
        st.kind = ValueState::Kind::Complete;
    }
  }

  int findScope(const std::string &var) const {
    for (int i = static_cast<int>(scopes_.size()) - 1; i >= 0; --i)
      if (scopes_[i]->var == var)
        return i;
    return -1;
  }

  /// `e.dst` inside `n.incoming` (and `e.src` inside `n.outgoing`) is `n`.
  IndexPath normalize(const IndexPath &p) const {
    int i = findScope(p.var);
    if (i < 0 || p.attrs.empty())
      return p;
    const Loop &l = *scopes_[i];
    if ((l.kind == LoopKind::Incoming && p.attrs[0] == Attr::Dst) ||
        (l.kind == LoopKind::Outgoing && p.attrs[0] == Attr::Src))
      return IndexPath{l.parent, {p.attrs.begin() + 1, p.attrs.end()}};
    return p;
  }

  // --- Statements ------------------------------------------------------------

  static SourceLoc locOf(const Access &a, const Stmt &s) {
    return a.loc.valid() ? a.loc : s.loc;
  }

  /// Index path legal in the enclosing loops and ending in the value's space.
  bool checkIndex(const Access &a, const ValueDecl &v, const Stmt &s) {
    SourceLoc loc = locOf(a, s);
    if (v.space == Space::Global) {
      if (a.index.isGlobal())
        return true;
      error(loc, "global value '" + v.name +
                     "' must be accessed without an index");
      return false;
    }
    if (a.index.isGlobal()) {
      error(loc, "'" + v.name + "' is " + aSpace(v.space) +
                     " value and needs an index");
      return false;
    }
    int i = findScope(a.index.var);
    if (i < 0) {
      error(loc, "'" + a.index.var + "' in '" + a.str() +
                     "' is not the variable of an enclosing loop");
      return false;
    }
    Space space = loopVarSpace(scopes_[i]->kind);
    for (Attr attr : a.index.attrs) {
      std::optional<Space> next = step(space, attr);
      if (!next) {
        error(loc, "'." + std::string(attrName(attr)) + "' does not apply to " +
                       aSpace(space) + " index in '" + a.str() + "'");
        return false;
      }
      space = *next;
    }
    if (space != v.space) {
      error(loc, "index '" + a.index.str() + "' is " + aSpace(space) +
                     " row but '" + v.name + "' is " + aSpace(v.space) +
                     " value");
      return false;
    }
    return true;
  }

  void checkStmt(const Stmt &s) {
    std::optional<ValueState> written = checkTarget(s);
    bool operandsKnown = true;
    for (const Operand &op : s.operands) {
      if (const auto *a = std::get_if<Access>(&op))
        operandsKnown = checkRead(*a, s) && operandsKnown;
      else
        checkScalar(std::get<ScalarExpr>(op), s.loc, 0);
    }
    checkAttrs(s);
    if (operandsKnown) {
      std::string err;
      std::optional<Shape> shape = inferResultShape(m_, s, &err);
      const ValueDecl *target = m_.findValue(s.target.value);
      if (!shape)
        error(s.loc, err);
      else if (target && *shape != target->shape)
        error(s.loc, std::string("result of ") + opName(s.op) + " has shape " +
                         shapeStr(*shape) + " but '" + target->name +
                         "' is declared " + shapeStr(target->shape));
    }
    // The write takes effect after the statement: it cannot read itself.
    if (written)
      state_[s.target.value] = *written;
  }

  /// Checks rules 1-3 for the target; returns the value's state after the
  /// statement (nullopt when the value cannot be written at all).
  std::optional<ValueState> checkTarget(const Stmt &s) {
    const Access &t = s.target;
    const ValueDecl *v = m_.findValue(t.value);
    SourceLoc loc = locOf(t, s);
    if (!v) {
      error(loc, "unknown value '" + t.value + "'");
      return std::nullopt;
    }
    if (v->kind != ValueKind::Temp && v->kind != ValueKind::Output) {
      error(loc, "cannot write " + std::string(valueKindName(v->kind)) + " '" +
                     v->name + "'; only temp and output values are written");
      return std::nullopt;
    }
    auto first = state_.find(v->name);
    if (first != state_.end()) {
      error(loc, "'" + v->name + "' is written more than once (first at " +
                     where(first->second.loc) + ")");
      return std::nullopt;
    }
    // A target that breaks a rule still counts as written, so that its
    // readers do not get follow-on errors.
    ValueState complete;
    complete.loc = s.loc;
    if (!checkIndex(t, *v, s))
      return complete;
    std::optional<ValueState> st = s.reduce == Reduce::None
                                       ? plainTarget(s, *v)
                                       : reductionTarget(s);
    if (!st)
      return complete;
    st->loc = s.loc;
    st->top = scopes_.front();
    return st;
  }

  /// Rule 2: `z[e] = ...` writes the row of the innermost loop variable.
  std::optional<ValueState> plainTarget(const Stmt &s, const ValueDecl &v) {
    const Loop *inner = scopes_.back();
    SourceLoc loc = locOf(s.target, s);
    if (v.space == Space::Global) {
      error(loc, "plain assignment to global value '" + v.name +
                     "' would write it once per iteration; reduce into it "
                     "with +=, mean= or max=");
      return std::nullopt;
    }
    IndexPath p = normalize(s.target.index);
    if (!p.attrs.empty() || p.var != inner->var) {
      error(loc, "plain assignment to '" + s.target.str() +
                     "' must be indexed by the innermost loop variable '" +
                     inner->var + "' alone, so that each row is written once");
      return std::nullopt;
    }
    ValueState st;
    st.kind = ValueState::Kind::Written;
    st.rowLoop = inner;
    return st;
  }

  /// Rule 3: a reduction's rows collect contributions from several
  /// iterations; it completes when the loop it reduces over closes.
  std::optional<ValueState> reductionTarget(const Stmt &s) {
    IndexPath p = normalize(s.target.index);
    ValueState st;
    st.kind = ValueState::Kind::Reducing;
    if (p.isGlobal() || !p.attrs.empty()) {
      // Rows reached through attributes collect from the whole top-level
      // loop (`h[e.dst] += ...` over all edges).
      st.completes = scopes_.front();
      return st;
    }
    int i = findScope(p.var);
    if (i + 1 >= static_cast<int>(scopes_.size())) {
      error(locOf(s.target, s),
            "reduction into '" + s.target.str() +
                "' is indexed by the innermost loop variable '" + p.var +
                "' alone, so each row gets one contribution; use '=' or "
                "index it through an outer loop variable");
      return std::nullopt;
    }
    st.rowLoop = scopes_[i];
    st.completes = scopes_[i + 1];
    return st;
  }

  /// Rule 4 for one operand; false when the value is unknown.
  bool checkRead(const Access &a, const Stmt &s) {
    const ValueDecl *v = m_.findValue(a.value);
    SourceLoc loc = locOf(a, s);
    if (!v) {
      error(loc, "unknown value '" + a.value + "'");
      return false;
    }
    if (!checkIndex(a, *v, s))
      return true;
    if (v->kind != ValueKind::Temp && v->kind != ValueKind::Output)
      return true;
    auto it = state_.find(v->name);
    if (it == state_.end()) {
      error(loc, "'" + v->name + "' is read before it is written");
      return true;
    }
    const ValueState &st = it->second;
    if (st.kind == ValueState::Kind::Reducing) {
      error(loc, "'" + v->name + "' is read before its reduction at " +
                     where(st.loc) + " completes (after the loop at " +
                     where(st.completes->loc) + ")");
    } else if (st.kind == ValueState::Kind::Written && !sameRows(a, st)) {
      error(loc, "'" + a.str() + "' may read a row that is not written yet: '" +
                     v->name + "' is written per '" + st.rowLoop->var +
                     "' by the loop at " + where(st.rowLoop->loc) +
                     "; read it in a later top-level loop");
    }
    return true;
  }

  /// Whether `a` reads the row written in the current iteration of the
  /// writer's row loop (the same loop, or a sibling neighbor loop of the
  /// same kind over the same node).
  bool sameRows(const Access &a, const ValueState &st) const {
    IndexPath p = normalize(a.index);
    if (!p.attrs.empty())
      return false;
    int i = findScope(p.var);
    if (i < 0)
      return false;
    const Loop *reader = scopes_[i];
    if (reader == st.rowLoop)
      return true;
    return reader != scopes_.front() && st.rowLoop != st.top &&
           reader->kind == st.rowLoop->kind;
  }

  void checkScalar(const ScalarExpr &e, const SourceLoc &loc, int depth) {
    size_t arity = 0;
    switch (e.kind) {
    case ScalarExpr::Kind::Literal:
      break;
    case ScalarExpr::Kind::Hyper:
      if (!m_.findHyper(e.hyper))
        error(loc, "unknown hyper-parameter '" + e.hyper +
                       "' in scalar expression");
      break;
    case ScalarExpr::Kind::Neg:
    case ScalarExpr::Kind::Sqrt:
      arity = 1;
      break;
    default:
      arity = 2;
    }
    if (e.args.size() != arity) {
      error(loc, "malformed scalar expression '" + e.str() + "'");
      return;
    }
    if (depth > 1000) {
      error(loc, "scalar expression nested too deeply");
      return;
    }
    for (const ScalarExpr &arg : e.args)
      checkScalar(arg, loc, depth + 1);
  }

  void checkAttrs(const Stmt &s) {
    std::string name = opName(s.op);
    if (s.op == OpKind::Reshape || s.op == OpKind::SumTo) {
      for (const Dim &d : s.shape)
        checkDim(d, s.loc, name + " shape");
    } else if (!s.shape.empty()) {
      error(s.loc, "only reshape and sum_to take a shape attribute, not " +
                       name);
    }
    if (s.op == OpKind::Slice || s.op == OpKind::Embed) {
      checkDimNames(s.sliceStart, s.loc, name + " start");
      checkDimNames(s.sliceSize, s.loc, name + " size");
    } else if (s.sliceStart != Dim() || s.sliceSize != Dim()) {
      error(s.loc, "only slice and embed take start/size attributes, not " +
                       name);
    }
    if (s.op != OpKind::Transpose && !s.perm.empty())
      error(s.loc, "only transpose takes a perm attribute, not " + name);
  }

  /// Like checkDim, but 0 is a legal value (a slice may start at 0).
  void checkDimNames(const Dim &d, const SourceLoc &loc,
                     const std::string &what) {
    if (d.isConstant())
      return;
    checkDim(d, loc, what);
  }

  void checkAllWritten() {
    for (const ValueDecl &v : m_.values)
      if ((v.kind == ValueKind::Temp || v.kind == ValueKind::Output) &&
          !state_.count(v.name))
        error(v.loc, std::string(valueKindName(v.kind)) + " '" + v.name +
                         "' is never written");
  }

  const Module &m_;
  DiagnosticEngine &diags_;
  bool ok_ = true;
  std::map<std::string, SourceLoc> declared_;
  std::vector<const Loop *> scopes_; ///< enclosing loops, outermost first
  std::map<std::string, ValueState> state_;
};

} // namespace

bool verifyModule(const Module &module, DiagnosticEngine &diags) {
  return Verifier(module, diags).run();
}

std::optional<Shape> inferResultShape(const Module &module, const Stmt &stmt,
                                      std::string *error) {
  std::vector<OperandShape> ops;
  for (const Operand &op : stmt.operands) {
    if (const auto *a = std::get_if<Access>(&op)) {
      const ValueDecl *v = module.findValue(a->value);
      if (!v) {
        if (error)
          *error = "unknown value '" + a->value + "'";
        return std::nullopt;
      }
      ops.push_back(OperandShape{v->shape, false});
    } else {
      ops.push_back(OperandShape{{}, true});
    }
  }
  return ShapeRules(stmt, std::move(ops), error).infer();
}

} // namespace hector::ir
