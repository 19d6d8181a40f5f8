#include "frontend/Sema.h"

#include "frontend/ASTBuilder.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>

namespace hector::frontend {
namespace {

using ir::Dim;
using ir::Shape;
using ir::Space;

const std::set<std::string> kBuiltins = {
    "linear",  "dot",  "outer", "exp",        "log",          "relu",   "gelu",
    "sigmoid", "tanh", "sqrt",  "leaky_relu", "reshape",      "concat", "slice",
    "split",   "sum",  "mean",  "max",        "edge_softmax", "detach"};

/// Upper bounds that keep adversarial input cheap: `def` inlining can
/// grow expressions exponentially, and nested calls can recurse.
constexpr int kMaxInlineDepth = 16;
constexpr long kMaxInlinedNodes = 100000;
constexpr int kMaxImportDepth = 32;

std::string quote(const std::string &s) { return "'" + s + "'"; }

/// "a node", "an edge", ... for messages.
std::string spaceNoun(Space s) {
  switch (s) {
  case Space::Node: return "a node";
  case Space::Edge: return "an edge";
  case Space::EdgeType: return "an edge type";
  case Space::NodeType: return "a node type";
  case Space::Pair: return "a pair";
  case Space::Global: return "global";
  }
  return "?";
}

std::string dataNoun(Space s) {
  switch (s) {
  case Space::Node: return "node data";
  case Space::Edge: return "edge data";
  default: return std::string("per-") + ir::spaceName(s) + " data";
  }
}

std::string pathText(const ir::IndexPath &p) {
  std::string s = p.var;
  for (ir::Attr a : p.attrs)
    s += std::string(".") + ir::attrName(a);
  return s;
}

std::string shapeText(const Shape &s) { return ir::shapeStr(s); }

/// Dims stay small (bounded terms, coefficients and exponents) so that
/// adversarial hyper expressions such as repeated squaring of `x + 1`
/// cannot blow up; past the bounds a dim is "too complex", an error.
constexpr size_t kMaxDimTerms = 64;
constexpr double kMaxDimCoeff = 1e12;
constexpr int kMaxDimExponent = 16;
/// Likewise for constant (ScalarExpr) expressions, counted in nodes.
constexpr long kMaxScalarSize = 4096;

void dimBounds(const Dim &d, double &coeff, int &exponent) {
  coeff = 0;
  exponent = 0;
  for (const ir::DimTerm &t : d.terms()) {
    coeff = std::max(coeff, std::fabs(static_cast<double>(t.coeff)));
    int sum = 0;
    for (const auto &[sym, p] : t.powers)
      sum += std::abs(p);
    exponent = std::max(exponent, sum);
  }
}

bool dimSmall(const Dim &d) {
  double c;
  int e;
  dimBounds(d, c, e);
  return d.terms().size() <= kMaxDimTerms && c <= kMaxDimCoeff &&
         e <= kMaxDimExponent;
}

std::optional<Dim> mulChecked(const Dim &a, const Dim &b) {
  double ca, cb;
  int ea, eb;
  dimBounds(a, ca, ea);
  dimBounds(b, cb, eb);
  const double n = static_cast<double>(a.terms().size()) *
                   static_cast<double>(b.terms().size());
  if (n > kMaxDimTerms || ca * cb * n > kMaxDimCoeff ||
      ea + eb > kMaxDimExponent)
    return std::nullopt;
  return a * b;
}

std::optional<Dim> product(const Shape &s) {
  Dim p = Dim::constant(1);
  for (const Dim &d : s) {
    std::optional<Dim> q = mulChecked(p, d);
    if (!q)
      return std::nullopt;
    p = *q;
  }
  return p;
}

Shape prefix(const Shape &s) { return Shape(s.begin(), s.end() - 1); }

/// What a hyper-parameter (or a hyper expression) stands for.
struct HyperInfo {
  long size = 1;            ///< nodes of `scalar`
  bool isInt = false;       ///< integral: usable in dims
  std::optional<Dim> dim;   ///< when isInt
  ir::ScalarExpr scalar;    ///< its value in scalar operands
  double value = 0;         ///< with the default values
  SourceLoc loc;
};

/// A declared or assigned value and how far the checked program has
/// written it.
struct ValueInfo {
  ir::ValueDecl decl;
  std::string what; ///< "input", "weight", "output", "graph value", "value"
  enum class State { Unwritten, Reducing, Written };
  State state = State::Unwritten;
  /// While the loop binding `defVar` is open, only the row `defVar` itself
  /// may be read (other rows belong to other iterations).
  const Stmt *openLoop = nullptr;
  std::string defVar;
  /// A `+=` value is complete when this loop closes.
  const Stmt *completesAt = nullptr;
  SourceLoc defLoc;
  bool used = false;
};

/// A loop-local name: a value (by IR name) or an alias of a constant.
struct Local {
  std::string irName;
  std::optional<ir::ScalarExpr> scalar;
  long scalarSize = 0;
  SourceLoc loc;
  bool poisoned = false; ///< its definition had errors
};

/// One enclosing loop (or the generator of a reduction).
struct Scope {
  const Stmt *loop = nullptr;
  std::string var;
  Space space = Space::Edge;
  ir::LoopKind kind = ir::LoopKind::Edges;
  bool generator = false;
  std::map<std::string, Local> locals;
};

struct Ctx {
  bool allowSoftmax = false;
};

class Checker {
public:
  Checker(const SourceLoader &loader, ir::DiagnosticEngine &diags,
          std::vector<std::unique_ptr<File>> &keepAlive)
      : loader_(loader), diags_(diags), keepAlive_(keepAlive) {}

  std::optional<CheckedModel> run(File &file) {
    std::vector<std::string> stack{normalize(file.name)};
    collectFuncs(file);
    loadImports(file, stack);
    if (file.models.empty()) {
      err(SourceLoc{file.name, 1, 1}, "the file defines no model");
      return std::nullopt;
    }
    for (size_t i = 1; i < file.models.size(); ++i)
      err(file.models[i].loc, "a file may define only one model");
    Model &model = file.models[0];
    inlineModel(model);
    if (diags_.hasErrors())
      return std::nullopt;
    checkModel(model);
    if (diags_.hasErrors())
      return std::nullopt;
    return std::move(result_);
  }

private:
  bool err(const SourceLoc &loc, const std::string &msg) {
    diags_.error(loc, msg);
    return false;
  }

  // ---------------------------------------------------------------------
  // Imports and functions.

  static std::string normalize(const std::string &path) {
    return std::filesystem::path(path).lexically_normal().generic_string();
  }

  void collectFuncs(File &file) {
    for (FuncDef &f : file.funcs) {
      if (kBuiltins.count(f.name)) {
        err(f.loc, "cannot define function " + quote(f.name) +
                       ": it is a builtin");
        continue;
      }
      auto [it, fresh] = funcs_.emplace(f.name, &f);
      if (!fresh) {
        err(f.loc, "duplicate definition of function " + quote(f.name));
        diags_.note(it->second->loc, "previous definition is here");
      }
    }
  }

  void loadImports(File &file, std::vector<std::string> &stack) {
    for (const Import &imp : file.imports) {
      if (stack.size() > static_cast<size_t>(kMaxImportDepth)) {
        err(imp.loc, "imports nested too deeply");
        return;
      }
      std::filesystem::path base =
          std::filesystem::path(file.name).parent_path();
      std::string path = imp.path;
      if (!std::filesystem::path(path).is_absolute())
        path = (base / path).generic_string();
      path = normalize(path);
      if (std::find(stack.begin(), stack.end(), path) != stack.end()) {
        err(imp.loc, "import cycle: " + quote(imp.path) +
                         " is already being imported");
        continue;
      }
      if (loaded_.count(path))
        continue;
      std::optional<std::string> text = loader_ ? loader_(path) : std::nullopt;
      if (!text) {
        err(imp.loc, "cannot open imported file " + quote(imp.path));
        continue;
      }
      loaded_.insert(path);
      diags_.addSource(path, *text);
      std::unique_ptr<File> sub = parseHgnn(*text, path, diags_);
      if (!sub)
        continue;
      for (const Model &m : sub->models)
        err(m.loc, "an imported file may define functions only, not a model");
      collectFuncs(*sub);
      stack.push_back(path);
      loadImports(*sub, stack);
      stack.pop_back();
      keepAlive_.push_back(std::move(sub));
    }
  }

  /// Replaces every call of a `def` in the model by its body.
  void inlineModel(Model &m) {
    for (HyperDef &h : m.hypers)
      inlineExpr(h.value, 0);
    for (ValueDef &v : m.values)
      for (ExprPtr &d : v.dims)
        inlineExpr(d, 0);
    for (StmtPtr &s : m.body)
      inlineStmt(*s);
  }

  void inlineStmt(Stmt &s) {
    if (s.kind == Stmt::Kind::For) {
      inlineExpr(s.range, 0);
      for (StmtPtr &c : s.body)
        inlineStmt(*c);
    } else {
      inlineExpr(s.target, 0);
      inlineExpr(s.value, 0);
      // Nested inlining can deepen a tree level by level; the checker's
      // recursion needs the same bound as parsed expressions have.
      if (!inlineFailed_ && exprDepth(*s.value) > 2 * kMaxExprDepth) {
        inlineFailed_ = true;
        err(s.value->loc, "the expression is nested too deeply after "
                          "inlining function calls");
      }
    }
  }

  /// A copy of `src` with the names in `env` replaced by copies of their
  /// bindings.
  ExprPtr substitute(const Expr &src,
                     const std::map<std::string, const Expr *> &env) {
    if (++inlinedNodes_ > kMaxInlinedNodes) {
      auto leaf = std::make_unique<Expr>();
      leaf->loc = src.loc;
      return leaf;
    }
    if (src.kind == Expr::Kind::Name) {
      auto it = env.find(src.text);
      if (it != env.end()) {
        ExprPtr r = it->second->clone();
        inlinedNodes_ += exprSize(*r);
        // A generator argument keeps its generator.
        r->genVar = src.genVar;
        if (src.genRange)
          r->genRange = substitute(*src.genRange, env);
        return r;
      }
    }
    auto e = std::make_unique<Expr>();
    e->kind = src.kind;
    e->loc = src.loc;
    e->number = src.number;
    e->isInteger = src.isInteger;
    e->text = src.text;
    e->binop = src.binop;
    e->genVar = src.genVar;
    for (const ExprPtr &a : src.args)
      e->args.push_back(substitute(*a, env));
    if (src.genRange)
      e->genRange = substitute(*src.genRange, env);
    return e;
  }

  static long exprSize(const Expr &e) {
    long n = 1;
    for (const ExprPtr &a : e.args)
      n += exprSize(*a);
    if (e.genRange)
      n += exprSize(*e.genRange);
    return n;
  }

  /// Walks `e` and replaces calls of defs by their bodies. Kept small:
  /// its recursion follows the expression tree through nested inlining.
  void inlineExpr(ExprPtr &e, int depth) {
    if (!e || inlineFailed_)
      return;
    for (ExprPtr &a : e->args)
      inlineExpr(a, depth);
    inlineExpr(e->genRange, depth);
    if (e->kind != Expr::Kind::Call || e->args[0]->kind != Expr::Kind::Name)
      return;
    auto it = funcs_.find(e->args[0]->text);
    if (it == funcs_.end())
      return;
    ExprPtr body = expandCall(*e, *it->second, depth);
    if (!body)
      return;
    inlineExpr(body, depth + 1);
    if (inlineFailed_)
      return;
    body->genVar = e->genVar;
    body->genRange = std::move(e->genRange);
    e = std::move(body);
  }

  /// The body of `f` with the call's arguments substituted for its
  /// parameters, or nullptr (with an error) when it cannot be inlined.
  ExprPtr expandCall(const Expr &call, const FuncDef &f, int depth) {
    const size_t given = call.args.size() - 1;
    if (given != f.params.size()) {
      err(call.loc, "function " + quote(f.name) + " takes " +
                        std::to_string(f.params.size()) + " argument" +
                        (f.params.size() == 1 ? "" : "s") + ", " +
                        std::to_string(given) + " given");
      return nullptr;
    }
    if (depth >= kMaxInlineDepth) {
      inlineFailed_ = true;
      err(call.loc, "calls of " + quote(f.name) +
                        " nested too deeply (is the function recursive?)");
      return nullptr;
    }
    std::map<std::string, const Expr *> env;
    for (size_t i = 0; i < given; ++i)
      env[f.params[i]] = call.args[i + 1].get();
    std::vector<ExprPtr> lets;
    for (const auto &[name, value] : f.lets) {
      lets.push_back(substitute(*value, env));
      env[name] = lets.back().get();
    }
    ExprPtr body = substitute(*f.result, env);
    if (inlinedNodes_ > kMaxInlinedNodes) {
      inlineFailed_ = true;
      err(call.loc, "the expression is too large after inlining " +
                        quote(f.name));
      return nullptr;
    }
    if (exprDepth(*body) > 2 * kMaxExprDepth) {
      inlineFailed_ = true;
      err(call.loc, "the expression is nested too deeply after inlining " +
                        quote(f.name));
      return nullptr;
    }
    return body;
  }

  // ---------------------------------------------------------------------
  // Hyper-parameters and dims.

  /// Evaluates a hyper expression: numbers, hypers, + - * /, sqrt.
  std::optional<HyperInfo> evalHyper(const Expr &e) {
    HyperInfo r;
    r.loc = e.loc;
    switch (e.kind) {
    case Expr::Kind::Number:
      r.value = e.number;
      r.scalar.kind = ir::ScalarExpr::Kind::Literal;
      r.scalar.literal = e.number;
      if (e.isInteger) {
        if (e.number > 1e15) {
          err(e.loc, "integer " + e.text + " is too large");
          return std::nullopt;
        }
        r.isInt = true;
        r.dim = Dim::constant(static_cast<int64_t>(e.number));
      }
      return r;
    case Expr::Kind::Name: {
      auto it = hypers_.find(e.text);
      if (it != hypers_.end())
        return it->second;
      if (poisoned_.count(e.text))
        return std::nullopt;
      if (values_.count(e.text) || isLocal(e.text))
        err(e.loc, quote(e.text) + " is not a hyper-parameter");
      else
        err(e.loc, "unknown hyper-parameter " + quote(e.text));
      return std::nullopt;
    }
    case Expr::Kind::Neg: {
      std::optional<HyperInfo> a = evalHyper(*e.args[0]);
      if (!a)
        return std::nullopt;
      r = *a;
      r.size = a->size + 1;
      r.value = -a->value;
      if (a->dim)
        r.dim = Dim() - *a->dim;
      if (a->scalar.kind == ir::ScalarExpr::Kind::Literal) {
        r.scalar.literal = -a->scalar.literal;
      } else {
        r.scalar = ir::ScalarExpr{};
        r.scalar.kind = ir::ScalarExpr::Kind::Neg;
        r.scalar.args = {a->scalar};
      }
      return r;
    }
    case Expr::Kind::Binary: {
      std::optional<HyperInfo> a = evalHyper(*e.args[0]);
      std::optional<HyperInfo> b = evalHyper(*e.args[1]);
      if (!a || !b)
        return std::nullopt;
      r.size = a->size + b->size + 1;
      if (r.size > kMaxScalarSize) {
        err(e.loc, "the constant expression is too large");
        return std::nullopt;
      }
      r.isInt = a->isInt && b->isInt;
      r.scalar.args = {a->scalar, b->scalar};
      switch (e.binop) {
      case '+':
        r.scalar.kind = ir::ScalarExpr::Kind::Add;
        r.value = a->value + b->value;
        if (r.isInt)
          r.dim = *a->dim + *b->dim;
        break;
      case '-':
        r.scalar.kind = ir::ScalarExpr::Kind::Sub;
        r.value = a->value - b->value;
        if (r.isInt)
          r.dim = *a->dim - *b->dim;
        break;
      case '*':
        r.scalar.kind = ir::ScalarExpr::Kind::Mul;
        r.value = a->value * b->value;
        if (r.isInt) {
          r.dim = mulChecked(*a->dim, *b->dim);
          if (!r.dim) {
            err(e.loc, "the dim expression is too complex");
            return std::nullopt;
          }
        }
        break;
      default:
        r.scalar.kind = ir::ScalarExpr::Kind::Div;
        if (b->value == 0) {
          err(e.loc, "division by zero");
          return std::nullopt;
        }
        r.value = a->value / b->value;
        if (r.isInt) {
          r.dim = a->dim->divide(*b->dim);
          r.isInt = r.dim.has_value();
        }
        break;
      }
      if (r.dim && !dimSmall(*r.dim)) {
        err(e.loc, "the dim expression is too complex");
        return std::nullopt;
      }
      if (!std::isfinite(r.value) || std::fabs(r.value) > 1e15) {
        err(e.loc, "the constant is too large");
        return std::nullopt;
      }
      return r;
    }
    case Expr::Kind::Call:
      if (e.args[0]->kind == Expr::Kind::Name && e.args[0]->text == "sqrt" &&
          e.args.size() == 2 && e.args[1]->genVar.empty()) {
        std::optional<HyperInfo> a = evalHyper(*e.args[1]);
        if (!a)
          return std::nullopt;
        if (a->value < 0) {
          err(e.loc, "sqrt of a negative number");
          return std::nullopt;
        }
        r.value = std::sqrt(a->value);
        r.size = a->size + 1;
        r.scalar.kind = ir::ScalarExpr::Kind::Sqrt;
        r.scalar.args = {a->scalar};
        return r;
      }
      break;
    default:
      break;
    }
    err(e.loc, "a constant expression may use only numbers, "
               "hyper-parameters, + - * / and sqrt()");
    return std::nullopt;
  }

  /// Evaluates a dim: an integer expression over integer hypers whose
  /// value with the default hypers is a positive (or, with allowZero,
  /// non-negative) integer.
  std::optional<Dim> evalDim(const Expr &e, bool allowZero = false) {
    std::optional<HyperInfo> h = evalHyper(e);
    if (!h)
      return std::nullopt;
    if (!h->isInt) {
      err(e.loc, "a dim must be an integer expression over integer "
                 "hyper-parameters");
      return std::nullopt;
    }
    std::optional<int64_t> v = h->dim->evaluate(defaults_, nullptr);
    if (!v) {
      err(e.loc, "dim " + quote(h->dim->str()) +
                     " is not an integer with the default "
                     "hyper-parameters");
      return std::nullopt;
    }
    if (*v < 0 || (*v == 0 && !allowZero)) {
      err(e.loc, "dim " + quote(h->dim->str()) + " is " + std::to_string(*v) +
                     " with the default hyper-parameters; it must be " +
                     (allowZero ? "non-negative" : "positive"));
      return std::nullopt;
    }
    return h->dim;
  }

  std::optional<int64_t> evalDefault(const Dim &d) {
    return d.evaluate(defaults_, nullptr);
  }

  // ---------------------------------------------------------------------
  // Declarations.

  /// Reports a clash of a new model-level name; true when it is free.
  bool claimName(const std::string &name, const SourceLoc &loc) {
    if (name == "g") {
      err(loc, "'g' is the graph and cannot be redefined");
      return false;
    }
    if (kBuiltins.count(name) || funcs_.count(name)) {
      err(loc, quote(name) + " is a function and cannot be redefined");
      return false;
    }
    if (ir::isGraphValueName(name)) {
      err(loc, quote(name) + " is a reserved graph value");
      return false;
    }
    const SourceLoc *prev = nullptr;
    if (auto it = hypers_.find(name); it != hypers_.end())
      prev = &it->second.loc;
    else if (auto it2 = values_.find(name); it2 != values_.end())
      prev = &it2->second.defLoc;
    if (prev) {
      err(loc, "duplicate definition of " + quote(name));
      if (prev->valid())
        diags_.note(*prev, "previous definition is here");
      return false;
    }
    return true;
  }

  void declareHyper(const HyperDef &h) {
    if (!claimName(h.name, h.loc))
      return;
    const Expr *v = h.value.get();
    bool negated = false;
    if (v->kind == Expr::Kind::Neg) {
      negated = true;
      v = v->args[0].get();
    }
    HyperInfo info;
    info.loc = h.loc;
    if (v->kind == Expr::Kind::Number) {
      // A plain, overridable hyper.
      ir::HyperDecl decl;
      decl.name = h.name;
      decl.loc = h.loc;
      decl.defaultValue = negated ? -v->number : v->number;
      decl.type = v->isInteger ? ir::HyperDecl::Type::Int
                               : ir::HyperDecl::Type::Float;
      if (v->isInteger && v->number > 1e15) {
        err(v->loc, "integer " + v->text + " is too large");
        return;
      }
      info.value = decl.defaultValue;
      info.scalar.kind = ir::ScalarExpr::Kind::Hyper;
      info.scalar.hyper = h.name;
      if (v->isInteger) {
        info.isInt = true;
        info.dim = Dim::symbol(h.name);
        defaults_[h.name] = static_cast<int64_t>(decl.defaultValue);
      }
      result_.hypers.push_back(decl);
    } else {
      // Derived: substituted where used.
      std::optional<HyperInfo> d = evalHyper(*h.value);
      if (!d) {
        poisoned_.insert(h.name);
        return;
      }
      info = *d;
      info.loc = h.loc;
    }
    hypers_[h.name] = info;
    result_.takenNames.insert(h.name);
  }

  void declareValue(const ValueDef &v) {
    if (!claimName(v.name, v.loc))
      return;
    ir::ValueDecl decl;
    decl.name = v.name;
    decl.loc = v.loc;
    decl.constant = v.constant;
    std::string what;
    bool ok = true;
    auto badSpace = [&](const char *allowed) {
      err(v.spaceLoc.valid() ? v.spaceLoc : v.loc,
          (v.space.empty() ? std::string("a missing space")
                           : "space " + quote(v.space)) +
              " is not valid here; " + allowed);
      ok = false;
    };
    switch (v.kind) {
    case ValueDef::Kind::Input:
    case ValueDef::Kind::Output:
      decl.kind = v.kind == ValueDef::Kind::Input ? ir::ValueKind::Input
                                                  : ir::ValueKind::Output;
      what = v.kind == ValueDef::Kind::Input ? "input" : "output";
      if (v.space == "node")
        decl.space = Space::Node;
      else if (v.space == "edge")
        decl.space = Space::Edge;
      else
        badSpace("expected node[...] or edge[...]");
      break;
    case ValueDef::Kind::Weight:
      decl.kind = ir::ValueKind::Param;
      what = "weight";
      if (v.space == "etype")
        decl.space = Space::EdgeType;
      else if (v.space == "ntype")
        decl.space = Space::NodeType;
      else if (v.space.empty() || v.space == "shared")
        decl.space = Space::Global;
      else
        badSpace("expected etype[...], ntype[...] or [...] (shared)");
      break;
    }
    if (v.constant && v.kind != ValueDef::Kind::Input) {
      err(v.loc, "only an input can be 'const'");
      ok = false;
    }
    for (const ExprPtr &d : v.dims) {
      std::optional<Dim> dim = evalDim(*d);
      if (!dim)
        ok = false;
      else
        decl.shape.push_back(*dim);
    }
    if (!ok) {
      poisoned_.insert(v.name);
      return;
    }
    ValueInfo info;
    info.decl = decl;
    info.what = what;
    info.defLoc = v.loc;
    if (decl.kind != ir::ValueKind::Output)
      info.state = ValueInfo::State::Written;
    values_[v.name] = info;
    result_.takenNames.insert(v.name);
    if (decl.kind == ir::ValueKind::Input)
      result_.inputs.push_back(decl);
    else if (decl.kind == ir::ValueKind::Param)
      result_.params.push_back(decl);
    else
      result_.outputs.push_back(decl);
  }

  void declareGraphValues() {
    for (const char *name : {"in_degree", "out_degree", "rel_in_degree"}) {
      ValueInfo info;
      info.decl.name = name;
      info.decl.kind = ir::ValueKind::Graph;
      info.decl.space = *ir::graphValueSpace(name);
      info.what = "graph value";
      info.state = ValueInfo::State::Written;
      values_[name] = info;
      result_.takenNames.insert(name);
    }
  }

  // ---------------------------------------------------------------------
  // The model.

  void checkModel(Model &m) {
    result_.name = m.name;
    result_.loc = m.loc;
    result_.model = &m;
    for (const SourceLoc &l : m.lateDecls)
      err(l, "declarations must come before the model's loops");
    declareGraphValues();
    for (const HyperDef &h : m.hypers)
      declareHyper(h);
    for (const ValueDef &v : m.values)
      declareValue(v);
    for (const StmtPtr &s : m.body)
      prescan(*s);
    for (StmtPtr &s : m.body) {
      if (s->kind != Stmt::Kind::For) {
        err(s->loc, "a statement must be inside a loop, e.g. "
                    "for e in g.edges() { ... }");
        continue;
      }
      checkFor(*s);
    }
    for (const ValueDef &v : m.values) {
      auto it = values_.find(v.name);
      if (v.kind == ValueDef::Kind::Output && it != values_.end() &&
          !future_.count(v.name) &&
          it->second.decl.kind == ir::ValueKind::Output &&
          it->second.state == ValueInfo::State::Unwritten)
        err(v.loc, "output " + quote(v.name) + " is never assigned");
    }
    for (const auto &[name, info] : values_)
      if (info.decl.kind == ir::ValueKind::Graph && info.used)
        result_.graphValues.push_back(info.decl);
  }

  /// Collects the names assignments will define, so that an early read
  /// says "read before it is written" rather than "unknown name".
  void prescan(const Stmt &s) {
    if (s.kind == Stmt::Kind::For) {
      for (const StmtPtr &c : s.body)
        prescan(*c);
      return;
    }
    const Expr &t = *s.target;
    if (t.kind == Expr::Kind::Name)
      future_.insert(t.text);
    else if (t.kind == Expr::Kind::Member)
      future_.insert(t.text);
    else if (t.kind == Expr::Kind::Index &&
             t.args[1]->kind == Expr::Kind::String)
      future_.insert(t.args[1]->text);
    // Data names become IR names; locals must not take them.
    if (t.kind == Expr::Kind::Member)
      result_.takenNames.insert(t.text);
    else if (t.kind == Expr::Kind::Index &&
             t.args[1]->kind == Expr::Kind::String)
      result_.takenNames.insert(t.args[1]->text);
  }

  bool isBound(const std::string &var) const {
    for (const Scope &s : scopes_)
      if (s.var == var)
        return true;
    return false;
  }

  const Local *findLocal(const std::string &name, const Scope **where) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto l = it->locals.find(name);
      if (l != it->locals.end()) {
        if (where)
          *where = &*it;
        return &l->second;
      }
    }
    return nullptr;
  }
  bool isLocal(const std::string &name) const {
    return findLocal(name, nullptr) != nullptr;
  }

  /// A new loop or generator variable must not hide anything.
  bool checkNewVar(const std::string &var, const SourceLoc &loc) {
    if (var == "g" || isBound(var) || hypers_.count(var) ||
        values_.count(var) || kBuiltins.count(var) || isLocal(var)) {
      return err(loc, "loop variable " + quote(var) +
                          " hides another name; choose a different one");
    }
    return true;
  }

  /// Recognises `BASE.METHOD()` loop ranges.
  static bool rangeParts(const Expr &r, std::string &base,
                         std::string &method) {
    if (r.kind != Expr::Kind::Call || r.args.size() != 1)
      return false;
    const Expr &callee = *r.args[0];
    if (callee.kind != Expr::Kind::Member ||
        callee.args[0]->kind != Expr::Kind::Name)
      return false;
    base = callee.args[0]->text;
    method = callee.text;
    return true;
  }

  /// Names a loop body would define, for a loop that could not be checked:
  /// their reads later on stay quiet.
  void poisonBody(const Stmt &s) {
    for (const StmtPtr &c : s.body) {
      if (c->kind == Stmt::Kind::For) {
        poisonBody(*c);
        continue;
      }
      const Expr &t = *c->target;
      if (t.kind == Expr::Kind::Member)
        poisoned_.insert(t.text);
      else if (t.kind == Expr::Kind::Index &&
               t.args[1]->kind == Expr::Kind::String)
        poisoned_.insert(t.args[1]->text);
    }
  }

  void checkFor(Stmt &s) {
    if (!checkLoop(s))
      poisonBody(s);
  }

  bool checkLoop(Stmt &s) {
    std::string base, method;
    const char *rangeHelp =
        "a loop ranges over g.edges(), g.nodes(), g.dst_nodes(), "
        "g.src_nodes(), n.incoming_edges() or n.outgoing_edges()";
    if (!rangeParts(*s.range, base, method)) {
      err(s.range->loc, rangeHelp);
      return false;
    }
    Scope scope;
    scope.loop = &s;
    scope.var = s.var;
    if (scopes_.empty()) {
      static const std::map<std::string, ir::LoopKind> top = {
          {"edges", ir::LoopKind::Edges},
          {"nodes", ir::LoopKind::Nodes},
          {"dst_nodes", ir::LoopKind::DstNodes},
          {"src_nodes", ir::LoopKind::SrcNodes}};
      auto it = top.find(method);
      if (base != "g" || it == top.end()) {
        if (method == "incoming_edges" || method == "outgoing_edges")
          err(s.range->loc, "a loop over the edges of " + quote(base) +
                                " must be inside the loop over " +
                                quote(base));
        else
          err(s.range->loc, rangeHelp);
        return false;
      }
      scope.kind = it->second;
    } else {
      const Scope &outer = scopes_.back();
      if (base == "g") {
        err(s.range->loc,
            "a loop over the whole graph must be at the top level of the "
            "model");
        return false;
      }
      if (method != "incoming_edges" && method != "outgoing_edges") {
        err(s.range->loc, rangeHelp);
        return false;
      }
      if (outer.space != Space::Node || scopes_.size() != 1) {
        err(s.range->loc, "only a loop over nodes can contain a loop over "
                          "a node's edges");
        return false;
      }
      if (base != outer.var) {
        err(s.range->loc, "a nested loop ranges over the edges of " +
                              quote(outer.var) +
                              ", the enclosing loop's variable");
        return false;
      }
      scope.kind = method == "incoming_edges" ? ir::LoopKind::Incoming
                                              : ir::LoopKind::Outgoing;
      s.loopParent = base;
    }
    if (!checkNewVar(s.var, s.varLoc))
      return false;
    s.loopKind = scope.kind;
    scope.space = ir::loopVarSpace(scope.kind);
    scopes_.push_back(std::move(scope));
    for (StmtPtr &c : s.body) {
      if (c->kind == Stmt::Kind::For)
        checkFor(*c);
      else
        checkAssign(*c);
    }
    scopes_.pop_back();
    for (auto &[name, v] : values_) {
      if (v.completesAt == &s) {
        v.completesAt = nullptr;
        v.state = ValueInfo::State::Written;
      }
      if (v.openLoop == &s)
        v.openLoop = nullptr;
    }
    s.valid = true;
    return true;
  }

  /// The scope that binds `var`, or -1.
  int scopeIndex(const std::string &var) const {
    for (size_t i = 0; i < scopes_.size(); ++i)
      if (scopes_[i].var == var)
        return static_cast<int>(i);
    return -1;
  }

  void checkAssign(Stmt &s) {
    Ctx ctx;
    ctx.allowSoftmax =
        scopes_.size() == 1 && scopes_.back().kind == ir::LoopKind::Edges;
    bool ok = checkExpr(*s.value, ctx) && requireValue(*s.value);
    // Only now: checking the value pushes and pops generator scopes.
    Scope &inner = scopes_.back();
    Expr &t = *s.target;

    if (t.kind == Expr::Kind::Name) {
      const std::string &name = t.text;
      if (!ok) {
        // Later reads of a name whose definition failed stay quiet.
        Local bad;
        bad.loc = t.loc;
        bad.poisoned = true;
        inner.locals.emplace(name, bad);
        return;
      }
      if (s.accumulate) {
        err(s.loc, "'+=' accumulates into node or edge data "
                   "(n.NAME += ... or e.dst.NAME += ...), not into " +
                       quote(name));
        return;
      }
      if (auto it = values_.find(name);
          it != values_.end() && it->second.decl.kind != ir::ValueKind::Temp) {
        err(t.loc, "cannot assign to " + it->second.what + " " + quote(name));
        return;
      }
      if (hypers_.count(name)) {
        err(t.loc, "cannot assign to hyper-parameter " + quote(name));
        return;
      }
      if (name == "g" || kBuiltins.count(name) || isBound(name)) {
        err(t.loc, "cannot assign to " + quote(name));
        return;
      }
      const Scope *where = nullptr;
      if (const Local *prev = findLocal(name, &where)) {
        err(t.loc, "duplicate definition of " + quote(name));
        diags_.note(prev->loc, "previous definition is here");
        return;
      }
      Local local;
      local.loc = t.loc;
      if (s.value->meaning == ExprMeaning::Scalar) {
        local.scalar = s.value->scalar;
        local.scalarSize = s.value->scalarSize;
      } else {
        local.irName = freshLocalName(name);
        ir::ValueDecl decl;
        decl.name = local.irName;
        decl.kind = ir::ValueKind::Temp;
        decl.space = inner.space;
        decl.shape = s.value->shape;
        decl.loc = t.loc;
        result_.defined[local.irName] = decl;
        s.targetAccess.value = local.irName;
        s.targetAccess.index.var = inner.var;
        s.targetAccess.loc = t.loc;
      }
      inner.locals[name] = local;
      s.valid = true;
      return;
    }

    // Node or edge data: `PATH.NAME` or `PATH["NAME"]`.
    std::string name;
    Expr *pathExpr = nullptr;
    if (t.kind == Expr::Kind::Member) {
      name = t.text;
      pathExpr = t.args[0].get();
    } else if (t.kind == Expr::Kind::Index &&
               t.args[1]->kind == Expr::Kind::String) {
      name = t.args[1]->text;
      pathExpr = t.args[0].get();
    } else {
      err(t.loc, "cannot assign to this expression; assign to e.NAME, "
                 "n.NAME or a local NAME");
      return;
    }
    if (!checkExpr(*pathExpr, Ctx{}))
      return;
    if (pathExpr->meaning != ExprMeaning::Graph) {
      err(t.loc, "cannot assign to this expression; assign to e.NAME, "
                 "n.NAME or a local NAME");
      return;
    }
    const ir::IndexPath path = pathExpr->access->index;
    const Space space = pathExpr->space;
    if (space != Space::Node && space != Space::Edge) {
      err(t.loc, "only node or edge data can be assigned, but " +
                     quote(pathText(path)) + " is " + spaceNoun(space));
      return;
    }
    const int varScope = scopeIndex(path.var);
    const bool ownRow =
        path.attrs.empty() && varScope == static_cast<int>(scopes_.size()) - 1;
    if (!s.accumulate && !ownRow) {
      return (void)err(
          s.loc, quote(pathText(path) + "." + name) +
                     " would be written once per iteration of the inner "
                     "loop; accumulate with '+=' or assign in the loop over " +
                     quote(path.var));
    }
    if (s.accumulate && ownRow)
      return (void)err(s.loc, "'+=' into the loop's own row " +
                                  quote(pathText(path) + "." + name) +
                                  " has a single contribution; use '='");

    auto it = values_.find(name);
    if (it != values_.end()) {
      ValueInfo &v = it->second;
      if (v.decl.kind == ir::ValueKind::Input ||
          v.decl.kind == ir::ValueKind::Param ||
          v.decl.kind == ir::ValueKind::Graph)
        return (void)err(t.loc, "cannot assign to " + v.what + " " +
                                    quote(name));
      if (v.state != ValueInfo::State::Unwritten) {
        err(t.loc, "duplicate definition of " + quote(name) +
                       "; every value is defined once");
        diags_.note(v.defLoc, "previous definition is here");
        return;
      }
      if (v.decl.space != space)
        return (void)err(t.loc, "output " + quote(name) + " is " +
                                    dataNoun(v.decl.space) + ", but " +
                                    quote(pathText(path)) + " is " +
                                    spaceNoun(space));
    } else if (hypers_.count(name)) {
      return (void)err(t.loc, "cannot assign to hyper-parameter " +
                                  quote(name));
    } else if (name == "g" || kBuiltins.count(name) || funcs_.count(name)) {
      return (void)err(t.loc, "cannot assign to " + quote(name));
    }
    if (!ok) {
      poisoned_.insert(name);
      return;
    }
    if (it != values_.end() && s.value->shape != it->second.decl.shape)
      return (void)err(s.value->loc,
                       "shape mismatch: output " + quote(name) +
                           " is declared " + shapeText(it->second.decl.shape) +
                           " but the value is " + shapeText(s.value->shape));
    if (it == values_.end()) {
      ValueInfo info;
      info.decl.name = name;
      info.decl.kind = ir::ValueKind::Temp;
      info.decl.space = space;
      info.decl.shape = s.value->shape;
      info.decl.loc = t.loc;
      info.what = "value";
      it = values_.emplace(name, info).first;
      result_.defined[name] = info.decl;
      result_.takenNames.insert(name);
    }
    ValueInfo &v = it->second;
    v.defLoc = t.loc;
    if (s.accumulate) {
      v.state = ValueInfo::State::Reducing;
      if (path.attrs.empty()) {
        v.completesAt = scopes_[varScope + 1].loop;
        v.openLoop = scopes_[varScope].loop;
        v.defVar = path.var;
      } else {
        v.completesAt = scopes_[0].loop;
        v.openLoop = scopes_[0].loop;
        v.defVar.clear();
      }
    } else {
      v.state = ValueInfo::State::Written;
      v.openLoop = inner.loop;
      v.defVar = inner.var;
    }
    s.targetAccess.value = name;
    s.targetAccess.index = path;
    s.targetAccess.loc = t.loc;
    s.targetReduce = s.accumulate ? ir::Reduce::Sum : ir::Reduce::None;
    s.valid = true;
  }

  std::string freshLocalName(const std::string &name) {
    std::string n = name;
    for (int i = 1; result_.takenNames.count(n) || values_.count(n); ++i)
      n = name + "_" + std::to_string(i);
    result_.takenNames.insert(n);
    return n;
  }

  // ---------------------------------------------------------------------
  // Expressions.

  /// True for an expression that denotes a value (not an index, not W.T).
  bool requireValue(const Expr &e) {
    switch (e.meaning) {
    case ExprMeaning::Unresolved:
      return false;
    case ExprMeaning::Graph:
      return err(e.loc, quote(pathText(e.access->index)) +
                            " is an index, not a value");
    default:
      if (e.transposed)
        return err(e.loc, "a transposed weight (W.T) is only valid as the "
                          "weight of linear()");
      return true;
    }
  }

  /// `size` counts the nodes of `s`, tracked so that aliases of aliases
  /// cannot grow a constant exponentially.
  bool setScalar(Expr &e, ir::ScalarExpr s, long size) {
    if (size > kMaxScalarSize)
      return err(e.loc, "the constant expression is too large");
    e.meaning = ExprMeaning::Scalar;
    e.scalar = std::move(s);
    e.scalarSize = size;
    e.shape.clear();
    return true;
  }

  void setAccess(Expr &e, const std::string &value, ir::IndexPath path,
                 const Shape &shape) {
    e.meaning = ExprMeaning::Access;
    e.access = ir::Access{value, std::move(path), e.loc};
    e.shape = shape;
  }

  void setGraph(Expr &e, ir::IndexPath path, Space space) {
    e.meaning = ExprMeaning::Graph;
    e.access = ir::Access{"", std::move(path), e.loc};
    e.space = space;
  }

  bool checkExpr(Expr &e, const Ctx &ctx) {
    switch (e.kind) {
    case Expr::Kind::Number: {
      ir::ScalarExpr s;
      s.literal = e.number;
      return setScalar(e, s, 1);
    }
    case Expr::Kind::String:
      return err(e.loc, "a string is only valid as an import path or as a "
                        "data name in e[\"NAME\"]");
    case Expr::Kind::Name:
      return checkName(e);
    case Expr::Kind::Member:
      return checkMember(e, *e.args[0], e.text, ctx);
    case Expr::Kind::Index:
      return checkIndex(e, ctx);
    case Expr::Kind::Call:
      return checkCall(e, ctx);
    case Expr::Kind::Neg: {
      Expr &a = *e.args[0];
      if (!checkExpr(a, ctx) || !requireValue(a))
        return false;
      if (a.meaning == ExprMeaning::Scalar) {
        ir::ScalarExpr s;
        s.kind = ir::ScalarExpr::Kind::Neg;
        s.args = {*a.scalar};
        return setScalar(e, s, a.scalarSize + 1);
      } else {
        setOp(e, ir::OpKind::Neg, a.shape);
      }
      return true;
    }
    case Expr::Kind::Binary:
      return checkBinary(e, ctx);
    }
    return false;
  }

  void setOp(Expr &e, ir::OpKind op, Shape shape) {
    e.meaning = ExprMeaning::Op;
    e.op = op;
    e.shape = std::move(shape);
  }

  bool checkName(Expr &e) {
    const std::string &name = e.text;
    if (poisoned_.count(name))
      return false;
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->var == name) {
        setGraph(e, ir::IndexPath{name, {}}, it->space);
        return true;
      }
      auto l = it->locals.find(name);
      if (l != it->locals.end()) {
        if (l->second.poisoned)
          return false;
        if (l->second.scalar)
          return setScalar(e, *l->second.scalar, l->second.scalarSize);
        else
          setAccess(e, l->second.irName, ir::IndexPath{it->var, {}},
                    result_.defined[l->second.irName].shape);
        return true;
      }
    }
    if (auto h = hypers_.find(name); h != hypers_.end()) {
      return setScalar(e, h->second.scalar, h->second.size);
    }
    if (name == "g")
      return err(e.loc, "the graph 'g' can only be used in a loop range "
                        "such as g.edges()");
    if (auto v = values_.find(name); v != values_.end()) {
      ValueInfo &info = v->second;
      const Space sp = info.decl.space;
      if (info.decl.kind == ir::ValueKind::Param) {
        if (sp == Space::Global) {
          setAccess(e, name, ir::IndexPath{}, info.decl.shape);
          return true;
        }
        return err(e.loc, "weight " + quote(name) + " is sliced by " +
                              (sp == Space::EdgeType ? "edge type: index it "
                                                       "as " + name +
                                                           "[e.etype]"
                                                     : "node type: index it "
                                                       "as " + name +
                                                           "[n.ntype]"));
      }
      return err(e.loc, quote(name) + " is " + dataNoun(sp) +
                            ": read it through " +
                            (sp == Space::Edge ? "an edge, e.g. e." + name
                                               : "a node, e.g. n." + name +
                                                     " or e.src." + name));
    }
    if (kBuiltins.count(name) || funcs_.count(name))
      return err(e.loc, quote(name) + " is a function: call it");
    if (future_.count(name))
      return err(e.loc, quote(name) + " is read before it is written");
    return err(e.loc, "unknown name " + quote(name));
  }

  bool checkMember(Expr &e, Expr &base, const std::string &name,
                   const Ctx &ctx) {
    if (name == "T") {
      if (!checkExpr(base, ctx))
        return false;
      if (base.meaning != ExprMeaning::Access || base.transposed ||
          base.shape.size() != 2)
        return err(e.loc, "'.T' transposes a weight matrix ([N, K]) for "
                          "linear()");
      e.meaning = ExprMeaning::Access;
      e.access = base.access;
      e.shape = base.shape;
      e.transposed = true;
      return true;
    }
    if (base.kind == Expr::Kind::Name && base.text == "g")
      return err(e.loc, "g." + name +
                            "() is only valid as a loop range: for e in g." +
                            name + "() { ... }");
    if (!checkExpr(base, ctx))
      return false;
    if (base.meaning != ExprMeaning::Graph)
      return err(e.loc, "only a loop variable (e, n, e.src, ...) has "
                        "fields; cannot read '." +
                            name + "' of a value");
    ir::IndexPath path = base.access->index;
    const Space sp = base.space;
    const std::string here = pathText(path);
    auto step = [&](ir::Attr a, Space from, Space to) {
      if (sp != from)
        return err(e.loc, "'." + name + "' needs " + spaceNoun(from) +
                              ", but " + quote(here) + " is " +
                              spaceNoun(sp));
      path.attrs.push_back(a);
      setGraph(e, path, to);
      return true;
    };
    if (name == "src")
      return step(ir::Attr::Src, Space::Edge, Space::Node);
    if (name == "dst")
      return step(ir::Attr::Dst, Space::Edge, Space::Node);
    if (name == "etype")
      return step(ir::Attr::EType, Space::Edge, Space::EdgeType);
    if (name == "ntype")
      return step(ir::Attr::NType, Space::Node, Space::NodeType);
    if (name == "incoming_edges" || name == "outgoing_edges")
      return err(e.loc, here + "." + name +
                            "() is only valid as a loop range or in "
                            "sum/mean/max(... for e in " +
                            here + "." + name + "())");
    return readData(e, name, path, sp);
  }

  /// `PATH.NAME`: a row of node or edge data.
  bool readData(Expr &e, const std::string &name, const ir::IndexPath &path,
                Space sp) {
    const std::string here = pathText(path);
    if (poisoned_.count(name))
      return false;
    auto it = values_.find(name);
    if (it == values_.end()) {
      if (future_.count(name))
        return err(e.loc, quote(name) + " is read before it is written");
      if (hypers_.count(name))
        return err(e.loc, quote(name) + " is a hyper-parameter; use it "
                                        "without " + quote(here + "."));
      return err(e.loc, "unknown name " + quote(name));
    }
    ValueInfo &v = it->second;
    if (v.decl.kind == ir::ValueKind::Param)
      return err(e.loc, "weight " + quote(name) +
                            " is not node or edge data; write " + name +
                            (v.decl.space == Space::EdgeType   ? "[e.etype]"
                             : v.decl.space == Space::NodeType ? "[n.ntype]"
                                                               : ""));
    if (v.decl.space != sp) {
      std::string hint;
      if (v.decl.space == Space::Node && sp == Space::Edge)
        hint = "; use " + here + ".src." + name + " or " + here + ".dst." +
               name;
      return err(e.loc, quote(name) + " is " + dataNoun(v.decl.space) +
                            ", but " + quote(here) + " is " + spaceNoun(sp) +
                            hint);
    }
    if (v.state == ValueInfo::State::Unwritten)
      return err(e.loc, quote(name) + " is read before it is written");
    if (v.state == ValueInfo::State::Reducing)
      return err(e.loc, quote(name) + " is read before its accumulation "
                                      "('+=') is complete; read it after "
                                      "the loop that accumulates it");
    if (v.openLoop && (path.var != v.defVar || !path.attrs.empty()))
      return err(e.loc, quote(name) + " is still being written by this "
                                      "loop; only the current row " +
                            quote(v.defVar + "." + name) +
                            " can be read until the loop ends");
    v.used = true;
    setAccess(e, name, path, v.decl.shape);
    return true;
  }

  bool checkIndex(Expr &e, const Ctx &ctx) {
    Expr &base = *e.args[0];
    Expr &idx = *e.args[1];
    if (idx.kind == Expr::Kind::String)
      return checkMember(e, base, idx.text, ctx);
    if (base.kind != Expr::Kind::Name)
      return err(e.loc, "only a weight sliced by type can be indexed, as "
                        "W[e.etype] or W[n.ntype]");
    auto it = values_.find(base.text);
    if (it == values_.end() || it->second.decl.kind != ir::ValueKind::Param) {
      if (it == values_.end() && !hypers_.count(base.text) &&
          !isLocal(base.text) && !isBound(base.text))
        return err(base.loc, "unknown name " + quote(base.text));
      return err(e.loc, quote(base.text) +
                            " is not a weight; only a weight sliced by "
                            "type can be indexed");
    }
    if (!checkExpr(idx, ctx))
      return false;
    const ValueInfo &w = it->second;
    const std::string name = base.text;
    if (w.decl.space == Space::Global)
      return err(e.loc, "weight " + quote(name) +
                            " is shared: use it without an index");
    if (idx.meaning != ExprMeaning::Graph ||
        (idx.space != Space::EdgeType && idx.space != Space::NodeType))
      return err(idx.loc, "a weight is indexed by a type: e.etype, "
                          "n.ntype, e.src.ntype or e.dst.ntype");
    if (idx.space != w.decl.space)
      return err(idx.loc,
                 "weight " + quote(name) + " is sliced by " +
                     (w.decl.space == Space::EdgeType ? "edge" : "node") +
                     " type, but " + quote(pathText(idx.access->index)) +
                     " is " + spaceNoun(idx.space));
    setAccess(e, name, idx.access->index, w.decl.shape);
    return true;
  }

  static std::optional<Shape> broadcast(const Shape &a, const Shape &b) {
    if (a == b || b.empty())
      return a;
    if (a.empty())
      return b;
    auto isPrefix = [](const Shape &p, const Shape &s) {
      return p.size() < s.size() && std::equal(p.begin(), p.end(), s.begin());
    };
    if (isPrefix(a, b))
      return b;
    if (isPrefix(b, a))
      return a;
    return std::nullopt;
  }

  bool checkBinary(Expr &e, const Ctx &ctx) {
    Expr &a = *e.args[0];
    Expr &b = *e.args[1];
    bool ok = checkExpr(a, ctx) && requireValue(a);
    ok = checkExpr(b, ctx) && requireValue(b) && ok;
    if (!ok)
      return false;
    if (a.meaning == ExprMeaning::Scalar && b.meaning == ExprMeaning::Scalar) {
      ir::ScalarExpr s;
      s.kind = e.binop == '+'   ? ir::ScalarExpr::Kind::Add
               : e.binop == '-' ? ir::ScalarExpr::Kind::Sub
               : e.binop == '*' ? ir::ScalarExpr::Kind::Mul
                                : ir::ScalarExpr::Kind::Div;
      s.args = {*a.scalar, *b.scalar};
      return setScalar(e, s, a.scalarSize + b.scalarSize + 1);
    }
    std::optional<Shape> r = broadcast(a.shape, b.shape);
    if (!r)
      return err(e.loc, std::string("shape mismatch in '") + e.binop +
                            "': " + shapeText(a.shape) + " and " +
                            shapeText(b.shape));
    const ir::OpKind op = e.binop == '+'   ? ir::OpKind::Add
                          : e.binop == '-' ? ir::OpKind::Sub
                          : e.binop == '*' ? ir::OpKind::Mul
                                           : ir::OpKind::Div;
    setOp(e, op, *r);
    return true;
  }

  bool arity(const Expr &e, const std::string &fn, size_t lo, size_t hi) {
    const size_t n = e.args.size() - 1;
    if (n >= lo && n <= hi)
      return true;
    std::string want = std::to_string(lo);
    if (hi != lo)
      want += hi == SIZE_MAX ? " or more" : " to " + std::to_string(hi);
    return err(e.loc, quote(fn) + " takes " + want + " argument" +
                          (hi == 1 && lo == 1 ? "" : "s") + ", " +
                          std::to_string(n) + " given");
  }

  /// Checks argument i as a value (tensor or scalar).
  bool valueArg(Expr &e, size_t i, const Ctx &ctx) {
    return checkExpr(*e.args[i], ctx) && requireValue(*e.args[i]);
  }

  bool tensorArg(Expr &e, size_t i, const Ctx &ctx, const std::string &fn) {
    if (!valueArg(e, i, ctx))
      return false;
    if (e.args[i]->shape.empty())
      return err(e.args[i]->loc, quote(fn) + " needs a tensor with at least "
                                             "one axis here, not a scalar");
    return true;
  }

  bool checkCall(Expr &e, const Ctx &ctx) {
    Expr &callee = *e.args[0];
    if (callee.kind == Expr::Kind::Member) {
      std::string text = callee.args[0]->kind == Expr::Kind::Name
                             ? callee.args[0]->text + "." + callee.text
                             : "'." + callee.text + "'";
      return err(e.loc, text + "() is only valid as a loop range or in "
                               "sum/mean/max(... for e in n.incoming_edges())");
    }
    if (callee.kind != Expr::Kind::Name)
      return err(e.loc, "only a function can be called");
    const std::string fn = callee.text;
    if (!kBuiltins.count(fn)) {
      if (hypers_.count(fn) || values_.count(fn) || isLocal(fn) ||
          isBound(fn))
        return err(callee.loc, quote(fn) + " is not a function");
      return err(callee.loc, "unknown function " + quote(fn));
    }
    const bool reduction = fn == "sum" || fn == "mean" || fn == "max";
    if (!reduction)
      for (size_t i = 1; i < e.args.size(); ++i)
        if (!e.args[i]->genVar.empty())
          return err(e.args[i]->loc, "a generator (... for e in ...) is only "
                                     "valid in sum, mean or max");
    if (reduction)
      return checkReduction(e, fn);
    if (fn == "edge_softmax") {
      if (!arity(e, fn, 1, 1))
        return false;
      if (!ctx.allowSoftmax)
        return err(e.loc, "edge_softmax must be used directly in a "
                          "top-level edge loop (for e in g.edges())");
      if (!valueArg(e, 1, ctx))
        return false;
      e.meaning = ExprMeaning::Softmax;
      e.shape = e.args[1]->shape;
      return true;
    }
    if (fn == "linear")
      return checkLinear(e, ctx);
    if (fn == "dot" || fn == "outer") {
      if (!arity(e, fn, 2, 2))
        return false;
      bool ok = tensorArg(e, 1, ctx, fn);
      ok = tensorArg(e, 2, ctx, fn) && ok;
      if (!ok)
        return false;
      const Shape &a = e.args[1]->shape, &b = e.args[2]->shape;
      if (fn == "dot") {
        if (a != b)
          return err(e.loc, "shape mismatch in dot: " + shapeText(a) +
                                " and " + shapeText(b));
        setOp(e, ir::OpKind::Dot, prefix(a));
      } else {
        if (prefix(a) != prefix(b))
          return err(e.loc, "shape mismatch in outer: " + shapeText(a) +
                                " and " + shapeText(b));
        Shape r = a;
        r.push_back(b.back());
        setOp(e, ir::OpKind::Outer, r);
      }
      return true;
    }
    static const std::map<std::string, ir::OpKind> unary = {
        {"exp", ir::OpKind::Exp},         {"log", ir::OpKind::Log},
        {"relu", ir::OpKind::Relu},       {"gelu", ir::OpKind::Gelu},
        {"sigmoid", ir::OpKind::Sigmoid}, {"tanh", ir::OpKind::Tanh},
        {"sqrt", ir::OpKind::Sqrt},       {"detach", ir::OpKind::Detach}};
    if (auto u = unary.find(fn); u != unary.end()) {
      if (!arity(e, fn, 1, 1) || !valueArg(e, 1, ctx))
        return false;
      Expr &a = *e.args[1];
      if (fn == "sqrt" && a.meaning == ExprMeaning::Scalar) {
        ir::ScalarExpr s;
        s.kind = ir::ScalarExpr::Kind::Sqrt;
        s.args = {*a.scalar};
        return setScalar(e, s, a.scalarSize + 1);
      }
      setOp(e, u->second, a.shape);
      return true;
    }
    if (fn == "leaky_relu") {
      if (!arity(e, fn, 2, 2))
        return false;
      bool ok = valueArg(e, 1, ctx);
      ok = valueArg(e, 2, ctx) && ok;
      if (!ok)
        return false;
      if (e.args[2]->meaning != ExprMeaning::Scalar)
        return err(e.args[2]->loc, "leaky_relu's slope must be a constant "
                                   "or a hyper-parameter");
      setOp(e, ir::OpKind::LeakyRelu, e.args[1]->shape);
      return true;
    }
    if (fn == "reshape") {
      if (!arity(e, fn, 2, SIZE_MAX) || !valueArg(e, 1, ctx))
        return false;
      Shape to;
      for (size_t i = 2; i < e.args.size(); ++i) {
        std::optional<Dim> d = evalDim(*e.args[i]);
        if (!d)
          return false;
        to.push_back(*d);
      }
      const Shape &from = e.args[1]->shape;
      std::optional<Dim> pf = product(from), pt = product(to);
      if (!pf || !pt)
        return err(e.loc, "reshape: the shapes are too complex");
      if (*pf != *pt)
        return err(e.loc, "reshape: " + shapeText(from) + " and " +
                              shapeText(to) +
                              " have different numbers of elements");
      setOp(e, ir::OpKind::Reshape, to);
      e.attrShape = to;
      return true;
    }
    if (fn == "concat") {
      if (!arity(e, fn, 2, SIZE_MAX))
        return false;
      bool ok = true;
      for (size_t i = 1; i < e.args.size(); ++i)
        ok = tensorArg(e, i, ctx, fn) && ok;
      if (!ok)
        return false;
      Shape r = e.args[1]->shape;
      for (size_t i = 2; i < e.args.size(); ++i) {
        const Shape &s = e.args[i]->shape;
        if (prefix(s) != prefix(r))
          return err(e.loc, "shape mismatch in concat: " +
                                shapeText(e.args[1]->shape) + " and " +
                                shapeText(s));
        r.back() = r.back() + s.back();
        if (!dimSmall(r.back()))
          return err(e.loc, "concat: the result dim is too complex");
      }
      setOp(e, ir::OpKind::Concat, r);
      return true;
    }
    if (fn == "slice" || fn == "split") {
      if (!arity(e, fn, 3, 3) || !tensorArg(e, 1, ctx, fn))
        return false;
      const Shape &from = e.args[1]->shape;
      const Dim k = from.back();
      Dim start, size;
      if (fn == "slice") {
        std::optional<Dim> s0 = evalDim(*e.args[2], /*allowZero=*/true);
        std::optional<Dim> s1 = evalDim(*e.args[3]);
        if (!s0 || !s1)
          return false;
        start = *s0;
        size = *s1;
      } else {
        std::optional<Dim> parts = evalDim(*e.args[2]);
        std::optional<Dim> index = evalDim(*e.args[3], /*allowZero=*/true);
        if (!parts || !index)
          return false;
        std::optional<Dim> chunk = k.divide(*parts);
        std::optional<int64_t> pv = evalDefault(*parts);
        std::optional<int64_t> iv = evalDefault(*index);
        if (!chunk || !evalDefault(*chunk))
          return err(e.loc, "split: the last axis " + quote(k.str()) +
                                " does not divide into " +
                                quote(parts->str()) + " equal parts");
        if (pv && iv && *iv >= *pv)
          return err(e.args[3]->loc, "split: part " + std::to_string(*iv) +
                                         " of " + std::to_string(*pv) +
                                         " does not exist");
        size = *chunk;
        std::optional<Dim> s0 = mulChecked(*chunk, *index);
        if (!s0 || !dimSmall(size))
          return err(e.loc, "split: the dims are too complex");
        start = *s0;
      }
      std::optional<int64_t> kv = evalDefault(k);
      std::optional<int64_t> end = evalDefault(start + size);
      if (kv && end && *end > *kv)
        return err(e.loc, fn + ": [" + start.str() + ", " +
                              (start + size).str() +
                              ") is out of range of the last axis " +
                              quote(k.str()));
      Shape r = prefix(from);
      r.push_back(size);
      setOp(e, ir::OpKind::Slice, r);
      e.sliceStart = start;
      e.sliceSize = size;
      return true;
    }
    return err(e.loc, "unknown function " + quote(fn));
  }

  bool checkLinear(Expr &e, const Ctx &ctx) {
    if (!arity(e, "linear", 2, 2))
      return false;
    bool ok = tensorArg(e, 1, ctx, "linear");
    Expr &w = *e.args[2];
    ok = checkExpr(w, ctx) && ok;
    if (!ok)
      return false;
    if (w.meaning == ExprMeaning::Graph || w.meaning == ExprMeaning::Scalar ||
        w.shape.size() < 2)
      return err(w.loc, "linear's weight must be a matrix ([K, N], or "
                        "[H, K, N] per head)");
    const Shape &a = e.args[1]->shape;
    const Shape &ws = w.shape;
    Shape r = prefix(a);
    bool fits = false;
    if (w.transposed) {
      fits = ws.size() == 2 && ws[1] == a.back();
      r.push_back(ws[0]);
    } else if (ws.size() == 2) {
      fits = ws[0] == a.back();
      r.push_back(ws[1]);
    } else if (ws.size() == 3) {
      fits = a.size() == 2 && ws[0] == a[0] && ws[1] == a[1];
      r.push_back(ws[2]);
    }
    if (!fits)
      return err(e.loc, "shape mismatch in linear: the input is " +
                            shapeText(a) + " but the weight is " +
                            shapeText(ws) + (w.transposed ? " (transposed)" : ""));
    setOp(e, w.transposed ? ir::OpKind::LinearT : ir::OpKind::Linear, r);
    return true;
  }

  bool checkReduction(Expr &e, const std::string &fn) {
    const std::string usage =
        fn + "(EXPR for e in n.incoming_edges()) or over n.outgoing_edges()";
    if (e.args.size() != 2 || e.args[1]->genVar.empty())
      return err(e.loc, quote(fn) + " takes one generator argument: " + usage);
    Expr &body = *e.args[1];
    std::string base, method;
    if (!rangeParts(*body.genRange, base, method) ||
        (method != "incoming_edges" && method != "outgoing_edges"))
      return err(body.genRange->loc, "a reduction ranges over a node's "
                                     "edges: " + usage);
    const Scope &inner = scopes_.back();
    if (inner.generator)
      return err(e.loc, "reductions over edges cannot be nested");
    if (inner.space != Space::Node)
      return err(e.loc, quote(fn) + "(...) over edges must be directly "
                                    "inside a loop over nodes "
                                    "(for n in g.dst_nodes())");
    if (base != inner.var)
      return err(body.genRange->loc,
                 "the reduction must range over the edges of " +
                     quote(inner.var) + ", the enclosing loop's variable");
    if (!checkNewVar(body.genVar, body.loc))
      return false;
    Scope gen;
    gen.var = body.genVar;
    gen.space = Space::Edge;
    gen.kind = method == "incoming_edges" ? ir::LoopKind::Incoming
                                          : ir::LoopKind::Outgoing;
    gen.generator = true;
    scopes_.push_back(std::move(gen));
    const bool ok = checkExpr(body, Ctx{}) && requireValue(body);
    scopes_.pop_back();
    if (!ok)
      return false;
    e.meaning = ExprMeaning::Reduce;
    e.reduce = fn == "sum"    ? ir::Reduce::Sum
               : fn == "mean" ? ir::Reduce::Mean
                              : ir::Reduce::Max;
    e.reduceParent = base;
    e.reduceLoop = method == "incoming_edges" ? ir::LoopKind::Incoming
                                              : ir::LoopKind::Outgoing;
    e.reduceArg = 1;
    e.shape = body.shape;
    return true;
  }

  const SourceLoader &loader_;
  ir::DiagnosticEngine &diags_;
  std::vector<std::unique_ptr<File>> &keepAlive_;
  std::map<std::string, const FuncDef *> funcs_;
  std::set<std::string> loaded_;
  long inlinedNodes_ = 0;
  bool inlineFailed_ = false;
  std::map<std::string, HyperInfo> hypers_;
  std::map<std::string, int64_t> defaults_;
  std::map<std::string, ValueInfo> values_;
  std::set<std::string> future_;
  std::set<std::string> poisoned_;
  std::vector<Scope> scopes_;
  CheckedModel result_;
};

} // namespace

std::optional<CheckedModel>
analyze(File &file, const SourceLoader &loader, ir::DiagnosticEngine &diags,
        std::vector<std::unique_ptr<File>> &keepAlive) {
  Checker checker(loader, diags, keepAlive);
  return checker.run(file);
}

} // namespace hector::frontend
