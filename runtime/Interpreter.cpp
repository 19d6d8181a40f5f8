#include "runtime/Interpreter.h"

#include "ir/InterIRPrinter.h"
#include "runtime/Errors.h"
#include "runtime/TensorText.h"

#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace hector::runtime {
namespace {

using ir::Space;

/// Which row of a space each iteration of the loops in scope touches.
struct Rows {
  Space space = Space::Global;
  /// [numIters] int64 row ids; undefined means the identity (iteration i is
  /// row i), which saves a gather in the common case of a top-level loop.
  torch::Tensor index;
  bool identity() const { return !index.defined(); }
};

/// The loops enclosing a statement, flattened: the statement runs once per
/// iteration, and each loop variable names one row per iteration.
struct Scope {
  int64_t numIters = 0;
  std::map<std::string, Rows> vars;
};

/// An operand or result of a statement, for all iterations at once. `t`
/// always has a leading row axis: numIters rows when `rowed`, or one row
/// shared by every iteration (a global value or a scalar) otherwise. The
/// per-row shape is t.sizes()[1:].
struct Val {
  torch::Tensor t;
  bool rowed = false;
  int64_t rank() const { return t.dim() - 1; }
};

[[noreturn]] void internalError(const std::string &message) {
  throw std::logic_error("hector interpreter internal error: " + message);
}

/// Inserts singleton axes right after the row axis until `v` has per-row
/// rank `rank` (numpy-style leading broadcast within a row).
torch::Tensor padLeading(const Val &v, int64_t rank) {
  torch::Tensor t = v.t;
  while (t.dim() - 1 < rank)
    t = t.unsqueeze(1);
  return t;
}

/// Appends singleton axes until `v` has per-row rank `rank` (the IR's
/// prefix broadcast: a per-head [H] score against an [H, D] message).
torch::Tensor padTrailing(const Val &v, int64_t rank) {
  torch::Tensor t = v.t;
  while (t.dim() - 1 < rank)
    t = t.unsqueeze(-1);
  return t;
}

/// `v` with numIters rows (a view when it has one shared row).
torch::Tensor expandRows(const Val &v, int64_t numIters) {
  if (v.rowed)
    return v.t;
  std::vector<int64_t> sizes = v.t.sizes().vec();
  sizes[0] = numIters;
  return v.t.expand(sizes);
}

/// One row's vector-matrix product: x [m, ..., K] times a shared weight
/// w [K, N] -> [m, ..., N], or per head x [m, H, K] times w [H, K, N] ->
/// [m, H, N].
torch::Tensor linearShared(const torch::Tensor &x, const torch::Tensor &w,
                           bool perHead) {
  if (perHead)
    return at::matmul(x.unsqueeze(-2), w).squeeze(-2);
  return at::matmul(x, w);
}

/// Row-wise product with one weight per row: x [M, ..., K], w [M, K, N]
/// (or [M, H, K, N] per head, with x [M, H, K]).
torch::Tensor linearPerRow(const torch::Tensor &x, const torch::Tensor &w,
                           bool perHead) {
  if (perHead)
    return at::matmul(x.unsqueeze(-2), w).squeeze(-2);
  int64_t m = x.size(0), k = x.size(-1), n = w.size(-1);
  int64_t middle = 1;
  for (int64_t i = 1; i + 1 < x.dim(); ++i)
    middle *= x.size(i);
  std::vector<int64_t> outSizes = x.sizes().vec();
  outSizes.back() = n;
  return at::matmul(x.reshape({m, middle, k}), w).reshape(outSizes);
}

class Executor {
public:
  Executor(const ir::Module &module, const Graph &graph,
           const InterpretOptions &options)
      : module_(module), graph_(graph), options_(options) {}

  TensorMap run(const TensorMap &inputs, const TensorMap &params) {
    bindHypers();
    evaluateShapes();
    bindArguments(inputs, params);
    bindGraphValues();
    for (const auto &loop : module_.loops)
      runLoop(*loop, nullptr);
    TensorMap result;
    for (const ir::ValueDecl &decl : module_.values) {
      if (!options_.returnAllValues && decl.kind != ir::ValueKind::Output)
        continue;
      auto it = values_.find(decl.name);
      if (it == values_.end())
        internalError("value '" + decl.name + "' was never written");
      result[decl.name] = it->second.contiguous();
    }
    return result;
  }

  /// The full tensor shape of every declared value under the bound hypers.
  std::map<std::string, std::vector<int64_t>> valueShapes() {
    bindHypers();
    evaluateShapes();
    std::map<std::string, std::vector<int64_t>> result;
    for (const ir::ValueDecl &decl : module_.values)
      result[decl.name] = fullShape(decl);
    return result;
  }

private:
  // ---- Binding -----------------------------------------------------------

  void bindHypers() {
    for (const auto &[name, value] : options_.hypers)
      if (!module_.findHyper(name))
        throw ArgumentValueError(
            "hypers['" + name + "']: model @" + module_.name +
            " has no hyper-parameter named '" + name + "'");
    for (const ir::HyperDecl &h : module_.hypers) {
      double value = h.defaultValue;
      auto it = options_.hypers.find(h.name);
      if (it != options_.hypers.end())
        value = it->second;
      if (h.type == ir::HyperDecl::Type::Int) {
        if (!std::isfinite(value) || std::floor(value) != value)
          throw ArgumentValueError("hypers['" + h.name +
                                   "']: expected an integer, got " +
                                   std::to_string(value));
        intHypers_[h.name] = static_cast<int64_t>(value);
      }
      hyperValues_[h.name] = value;
    }
  }

  void evaluateShapes() {
    for (const ir::ValueDecl &decl : module_.values) {
      std::string error;
      auto shape = ir::evaluateShape(decl.shape, intHypers_, &error);
      if (!shape)
        throw ArgumentValueError("hypers: the shape " +
                                 ir::shapeStr(decl.shape) + " of '" +
                                 decl.name + "' cannot be evaluated: " + error);
      for (int64_t d : *shape)
        if (d < 0)
          throw ArgumentValueError("hypers: the shape " +
                                   ir::shapeStr(decl.shape) + " of '" +
                                   decl.name + "' has a negative dimension");
      shapes_[decl.name] = *shape;
    }
  }

  /// Number of rows of a value in `space` (1 for global values).
  int64_t spaceRows(Space space) const {
    switch (space) {
    case Space::Global:
      return 1;
    case Space::Node:
      return graph_.numNodes();
    case Space::Edge:
      return graph_.numEdges();
    case Space::Pair:
      return graph_.numPairs();
    case Space::EdgeType:
      return graph_.numEtypes();
    case Space::NodeType:
      return graph_.numNtypes();
    }
    internalError("unknown space");
  }

  /// The full shape a tensor of `decl` must have: [rows, *shape], or
  /// [*shape] for a global value.
  std::vector<int64_t> fullShape(const ir::ValueDecl &decl) const {
    std::vector<int64_t> sizes;
    if (decl.space != Space::Global)
      sizes.push_back(spaceRows(decl.space));
    const auto &shape = shapes_.at(decl.name);
    sizes.insert(sizes.end(), shape.begin(), shape.end());
    return sizes;
  }

  void bindArguments(const TensorMap &inputs, const TensorMap &params) {
    checkNames(inputs, ir::ValueKind::Input, "inputs");
    checkNames(params, ir::ValueKind::Param, "params");
    std::string dtypeSource; // the argument that fixed the dtype
    for (const ir::ValueDecl &decl : module_.values) {
      if (decl.kind != ir::ValueKind::Input &&
          decl.kind != ir::ValueKind::Param)
        continue;
      bool isInput = decl.kind == ir::ValueKind::Input;
      const TensorMap &map = isInput ? inputs : params;
      std::string label =
          std::string(isInput ? "inputs" : "params") + "['" + decl.name + "']";
      auto it = map.find(decl.name);
      if (it == map.end())
        throw ArgumentValueError(
            label + ": missing (model @" + module_.name + " declares " +
            ir::valueKindName(decl.kind) + " " + decl.name + " : " +
            ir::spaceName(decl.space) + ir::shapeStr(decl.shape) + ")");
      const torch::Tensor &t = it->second;
      if (!t.defined())
        throw ArgumentTypeError(label + ": expected a tensor");
      if (!at::isFloatingType(t.scalar_type()))
        throw ArgumentTypeError(label +
                                ": expected a floating-point tensor, got " +
                                dtypeName(t.scalar_type()));
      if (dtypeSource.empty()) {
        dtype_ = t.scalar_type();
        dtypeSource = label;
      } else if (t.scalar_type() != dtype_) {
        throw ArgumentTypeError(label + ": dtype " +
                                dtypeName(t.scalar_type()) + " differs from " +
                                dtypeSource + " (" + dtypeName(dtype_) +
                                "); all inputs and params must share one "
                                "dtype");
      }
      if (t.device() != graph_.device())
        throw ArgumentValueError(label + ": on " + t.device().str() +
                                 " but the graph is on " +
                                 graph_.device().str());
      std::vector<int64_t> expected = fullShape(decl);
      if (t.sizes().vec() != expected) {
        std::string rows;
        if (decl.space != Space::Global)
          rows = std::string(" (") + ir::spaceName(decl.space) + " rows first)";
        throw ArgumentValueError(label + ": expected shape " +
                                 sizesText(expected) + rows + ", got " +
                                 sizesText(t.sizes()));
      }
      values_[decl.name] = t;
    }
  }

  void checkNames(const TensorMap &map, ir::ValueKind kind,
                  const std::string &what) const {
    for (const auto &[name, tensor] : map) {
      (void)tensor;
      const ir::ValueDecl *decl = module_.findValue(name);
      if (decl && decl->kind == kind)
        continue;
      std::string message = what + "['" + name + "']: model @" + module_.name +
                            " has no " + ir::valueKindName(kind) + " named '" +
                            name + "'";
      if (decl)
        message +=
            std::string(" (it is a ") + ir::valueKindName(decl->kind) + ")";
      throw ArgumentValueError(message);
    }
  }

  void bindGraphValues() {
    auto floatOpts = torch::TensorOptions().dtype(dtype_);
    for (const ir::ValueDecl &decl : module_.values) {
      if (decl.kind != ir::ValueKind::Graph)
        continue;
      torch::Tensor t;
      if (decl.name == "in_degree")
        t = graph_.inDegree();
      else if (decl.name == "out_degree")
        t = graph_.outDegree();
      else if (decl.name == "rel_in_degree")
        t = graph_.relInDegree();
      else
        internalError("unknown graph value '" + decl.name + "'");
      auto space = ir::graphValueSpace(decl.name);
      if (!space || *space != decl.space || !shapes_.at(decl.name).empty())
        internalError("graph value '" + decl.name + "' declared as " +
                      ir::spaceName(decl.space) + ir::shapeStr(decl.shape));
      values_[decl.name] = t.to(floatOpts);
    }
  }

  // ---- Loops -------------------------------------------------------------

  void runLoop(const ir::Loop &loop, const Scope *outer) {
    Scope scope;
    if (loop.kind == ir::LoopKind::Incoming ||
        loop.kind == ir::LoopKind::Outgoing) {
      if (!outer)
        internalError("an edge loop of a node must be nested");
      scope = expandEdges(loop, *outer);
    } else {
      if (outer)
        internalError(std::string("a '") + ir::loopKindName(loop.kind) +
                      "' loop must be top level");
      Space space = ir::loopVarSpace(loop.kind);
      scope.numIters = spaceRows(space);
      scope.vars[loop.var] = Rows{space, {}};
    }
    for (const ir::BodyItem &item : loop.body) {
      if (const auto *stmt = std::get_if<ir::Stmt>(&item))
        runStmt(*stmt, scope);
      else
        runLoop(*std::get<std::unique_ptr<ir::Loop>>(item), &scope);
    }
  }

  /// The scope of `foreach e in n.incoming` (or outgoing) inside the
  /// top-level node loop of `n`: one iteration per edge, in edge order; the
  /// iteration of edge e belongs to node e.dst (e.src), so every variable of
  /// the outer scope maps through that.
  Scope expandEdges(const ir::Loop &loop, const Scope &outer) {
    auto parentIt = outer.vars.find(loop.parent);
    // The verifier puts an edge loop directly inside a top-level node loop,
    // whose variable is the identity over the nodes.
    if (parentIt == outer.vars.end() || parentIt->second.space != Space::Node ||
        !parentIt->second.identity())
      internalError("'" + loop.parent + "." + ir::loopKindName(loop.kind) +
                    "' is not directly inside a top-level node loop");
    const torch::Tensor &owner =
        loop.kind == ir::LoopKind::Incoming ? graph_.dst() : graph_.src();
    Scope scope;
    scope.numIters = graph_.numEdges();
    for (const auto &[name, rows] : outer.vars)
      scope.vars[name] =
          Rows{rows.space,
               rows.identity() ? owner : rows.index.index_select(0, owner)};
    scope.vars[loop.var] = Rows{Space::Edge, {}};
    return scope;
  }

  // ---- Reads -------------------------------------------------------------

  /// The rows an index path selects, per iteration.
  Rows resolve(const ir::IndexPath &path, const Scope &scope) const {
    auto it = scope.vars.find(path.var);
    if (it == scope.vars.end())
      internalError("unbound loop variable '" + path.var + "'");
    Rows rows = it->second;
    for (ir::Attr attr : path.attrs) {
      Space to;
      const torch::Tensor *map = nullptr;
      if (rows.space == Space::Edge && attr == ir::Attr::Src) {
        to = Space::Node, map = &graph_.src();
      } else if (rows.space == Space::Edge && attr == ir::Attr::Dst) {
        to = Space::Node, map = &graph_.dst();
      } else if (rows.space == Space::Edge && attr == ir::Attr::EType) {
        to = Space::EdgeType, map = &graph_.etype();
      } else if (rows.space == Space::Edge && attr == ir::Attr::Pair) {
        to = Space::Pair, map = &graph_.edgePair();
      } else if (rows.space == Space::Pair && attr == ir::Attr::Src) {
        to = Space::Node, map = &graph_.pairSrc();
      } else if (rows.space == Space::Pair && attr == ir::Attr::EType) {
        to = Space::EdgeType, map = &graph_.pairEtype();
      } else if (rows.space == Space::Node && attr == ir::Attr::NType) {
        to = Space::NodeType, map = &graph_.ntype();
      } else {
        internalError(std::string("no step .") + ir::attrName(attr) +
                      " from a " + ir::spaceName(rows.space) + " in '" +
                      path.str() + "'");
      }
      rows.index = rows.identity() ? *map : map->index_select(0, rows.index);
      rows.space = to;
    }
    return rows;
  }

  const torch::Tensor &valueOf(const std::string &name) const {
    auto it = values_.find(name);
    if (it == values_.end())
      internalError("'" + name + "' is read before it is written");
    return it->second;
  }

  const ir::ValueDecl &declOf(const std::string &name) const {
    const ir::ValueDecl *decl = module_.findValue(name);
    if (!decl)
      internalError("undeclared value '" + name + "'");
    return *decl;
  }

  Val read(const ir::Access &access, const Scope &scope) const {
    const ir::ValueDecl &decl = declOf(access.value);
    const torch::Tensor &t = valueOf(access.value);
    if (decl.space == Space::Global)
      return Val{t.unsqueeze(0), false};
    Rows rows = resolve(access.index, scope);
    if (rows.space != decl.space)
      internalError("'" + access.str() + "' indexes a " +
                    ir::spaceName(decl.space) + " value with a " +
                    ir::spaceName(rows.space));
    return Val{rows.identity() ? t : t.index_select(0, rows.index), true};
  }

  double scalar(const ir::ScalarExpr &e) const {
    using K = ir::ScalarExpr::Kind;
    switch (e.kind) {
    case K::Literal:
      return e.literal;
    case K::Hyper: {
      auto it = hyperValues_.find(e.hyper);
      if (it == hyperValues_.end())
        internalError("unknown hyper-parameter '" + e.hyper + "'");
      return it->second;
    }
    case K::Neg:
      return -scalar(e.args.at(0));
    case K::Sqrt:
      return std::sqrt(scalar(e.args.at(0)));
    case K::Add:
      return scalar(e.args.at(0)) + scalar(e.args.at(1));
    case K::Sub:
      return scalar(e.args.at(0)) - scalar(e.args.at(1));
    case K::Mul:
      return scalar(e.args.at(0)) * scalar(e.args.at(1));
    case K::Div:
      return scalar(e.args.at(0)) / scalar(e.args.at(1));
    }
    internalError("unknown scalar expression");
  }

  Val operand(const ir::Stmt &stmt, size_t i, const Scope &scope) const {
    if (i >= stmt.operands.size())
      internalError(std::string(ir::opName(stmt.op)) + " lacks operand " +
                    std::to_string(i));
    const ir::Operand &op = stmt.operands[i];
    if (const auto *access = std::get_if<ir::Access>(&op))
      return read(*access, scope);
    double value = scalar(std::get<ir::ScalarExpr>(op));
    return Val{
        at::full({1}, value,
                 torch::TensorOptions().dtype(dtype_).device(graph_.device())),
        false};
  }

  // ---- Ops ---------------------------------------------------------------

  /// linear(a, W) / linear_t(a, W). A weight sliced by type (W[e.etype],
  /// W[n.ntype]) is applied with one matmul per type on the rows of that
  /// type, never materialising a weight per row.
  Val linear(const ir::Stmt &stmt, const Scope &scope, bool transposed) const {
    Val a = operand(stmt, 0, scope);
    if (stmt.operands.size() != 2 ||
        !std::holds_alternative<ir::Access>(stmt.operands[1]))
      internalError("linear needs a value as its weight");
    const ir::Access &wAccess = std::get<ir::Access>(stmt.operands[1]);
    const ir::ValueDecl &wDecl = declOf(wAccess.value);
    torch::Tensor w = valueOf(wAccess.value);
    if (transposed)
      w = w.transpose(-1, -2);
    bool perHead = shapes_.at(wDecl.name).size() == 3;

    if (wDecl.space == Space::Global)
      return Val{linearShared(a.t, w, perHead), a.rowed};

    Rows rows = resolve(wAccess.index, scope);
    torch::Tensor x = expandRows(a, scope.numIters);
    if (rows.identity())
      return Val{linearPerRow(x, w, perHead), true};
    bool typed =
        wDecl.space == Space::EdgeType || wDecl.space == Space::NodeType;
    int64_t numTypes = w.size(0);
    if (!typed || numTypes == 0)
      return Val{linearPerRow(x, w.index_select(0, rows.index), perHead), true};

    // Group the rows by type (stable sort), one matmul per type, then put
    // the results back in iteration order. Empty groups still take part so
    // that every type's weight is connected to the autograd graph.
    torch::Tensor order =
        std::get<1>(rows.index.sort(c10::optional<bool>(true), 0, false));
    torch::Tensor counts =
        at::bincount(rows.index, {}, numTypes).to(torch::kCPU);
    std::vector<int64_t> sizes(counts.data_ptr<int64_t>(),
                               counts.data_ptr<int64_t>() + numTypes);
    std::vector<torch::Tensor> chunks =
        x.index_select(0, order).split_with_sizes(sizes, 0);
    std::vector<torch::Tensor> outs;
    outs.reserve(numTypes);
    for (int64_t t = 0; t < numTypes; ++t)
      outs.push_back(linearShared(chunks[t], w[t], perHead));
    torch::Tensor inverse = at::empty_like(order).scatter_(
        0, order, at::arange(order.size(0), order.options()));
    return Val{at::cat(outs, 0).index_select(0, inverse), true};
  }

  Val binary(const ir::Stmt &stmt, const Scope &scope) const {
    Val a = operand(stmt, 0, scope), b = operand(stmt, 1, scope);
    int64_t rank = std::max(a.rank(), b.rank());
    torch::Tensor x = padTrailing(a, rank), y = padTrailing(b, rank);
    torch::Tensor r;
    switch (stmt.op) {
    case ir::OpKind::Add:
      r = at::add(x, y);
      break;
    case ir::OpKind::Sub:
      r = at::sub(x, y);
      break;
    case ir::OpKind::Mul:
      r = at::mul(x, y);
      break;
    case ir::OpKind::Div:
      r = at::div(x, y);
      break;
    case ir::OpKind::Eq:
      r = at::eq(x, y).to(x.scalar_type());
      break;
    default:
      internalError("not a binary op");
    }
    return Val{r, a.rowed || b.rowed};
  }

  Val unary(const ir::Stmt &stmt, const Scope &scope) const {
    Val a = operand(stmt, 0, scope);
    torch::Tensor x = a.t, r;
    switch (stmt.op) {
    case ir::OpKind::Copy:
      r = x;
      break;
    case ir::OpKind::Neg:
      r = at::neg(x);
      break;
    case ir::OpKind::Exp:
      r = at::exp(x);
      break;
    case ir::OpKind::Log:
      r = at::log(x);
      break;
    case ir::OpKind::Relu:
      r = at::relu(x);
      break;
    case ir::OpKind::Gelu:
      r = at::gelu(x);
      break; // exact (erf) GELU
    case ir::OpKind::Sigmoid:
      r = at::sigmoid(x);
      break;
    case ir::OpKind::Tanh:
      r = at::tanh(x);
      break;
    case ir::OpKind::Sqrt:
      r = at::sqrt(x);
      break;
    case ir::OpKind::Detach:
      r = x.detach();
      break;
    case ir::OpKind::LeakyRelu:
      r = at::leaky_relu(x, slope(stmt));
      break;
    case ir::OpKind::ReluGrad:
      r = at::gt(x, 0).to(x.scalar_type());
      break;
    case ir::OpKind::LeakyReluGrad:
      r = at::where(at::gt(x, 0), at::ones_like(x),
                    at::full_like(x, slope(stmt)));
      break;
    case ir::OpKind::GeluGrad: {
      // d/dx x*Phi(x) = Phi(x) + x*phi(x), Phi/phi the standard normal
      // CDF/density.
      torch::Tensor cdf = 0.5 * (1 + at::erf(x * M_SQRT1_2));
      torch::Tensor pdf = at::exp(-0.5 * x * x) * (M_2_SQRTPI * M_SQRT1_2 / 2);
      r = cdf + x * pdf;
      break;
    }
    default:
      internalError("not a unary op");
    }
    return Val{r, a.rowed};
  }

  /// The scalar slope (operand 1) of leaky_relu and leaky_relu_grad.
  double slope(const ir::Stmt &stmt) const {
    if (stmt.operands.size() != 2 ||
        !std::holds_alternative<ir::ScalarExpr>(stmt.operands[1]))
      internalError(std::string(ir::opName(stmt.op)) +
                    " needs a scalar slope");
    return scalar(std::get<ir::ScalarExpr>(stmt.operands[1]));
  }

  Val evaluate(const ir::Stmt &stmt, const Scope &scope) const {
    switch (stmt.op) {
    case ir::OpKind::Linear:
      return linear(stmt, scope, false);
    case ir::OpKind::LinearT:
      return linear(stmt, scope, true);
    case ir::OpKind::Dot: {
      Val a = operand(stmt, 0, scope), b = operand(stmt, 1, scope);
      int64_t rank = std::max(a.rank(), b.rank());
      return Val{at::mul(padLeading(a, rank), padLeading(b, rank)).sum(-1),
                 a.rowed || b.rowed};
    }
    case ir::OpKind::Outer: {
      Val a = operand(stmt, 0, scope), b = operand(stmt, 1, scope);
      int64_t rank = std::max(a.rank(), b.rank());
      return Val{at::mul(padLeading(a, rank).unsqueeze(-1),
                         padLeading(b, rank).unsqueeze(-2)),
                 a.rowed || b.rowed};
    }
    case ir::OpKind::Add:
    case ir::OpKind::Sub:
    case ir::OpKind::Mul:
    case ir::OpKind::Div:
    case ir::OpKind::Eq:
      return binary(stmt, scope);
    case ir::OpKind::Reshape: {
      Val a = operand(stmt, 0, scope);
      std::vector<int64_t> sizes{a.t.size(0)};
      for (const ir::Dim &d : stmt.shape)
        sizes.push_back(evalDim(d));
      return Val{a.t.reshape(sizes), a.rowed};
    }
    case ir::OpKind::Concat: {
      std::vector<Val> parts;
      bool rowed = false;
      for (size_t i = 0; i < stmt.operands.size(); ++i) {
        parts.push_back(operand(stmt, i, scope));
        rowed = rowed || parts.back().rowed;
      }
      std::vector<torch::Tensor> ts;
      for (const Val &v : parts)
        ts.push_back(rowed ? expandRows(v, scope.numIters) : v.t);
      return Val{at::cat(ts, -1), rowed};
    }
    case ir::OpKind::Slice: {
      Val a = operand(stmt, 0, scope);
      return Val{
          a.t.narrow(-1, evalDim(stmt.sliceStart), evalDim(stmt.sliceSize)),
          a.rowed};
    }
    case ir::OpKind::SumTo: {
      // Per-row axes from stmt.shape.size() on are summed away (axis 0 is
      // the row axis).
      Val a = operand(stmt, 0, scope);
      std::vector<int64_t> axes;
      for (int64_t d = 1 + static_cast<int64_t>(stmt.shape.size());
           d < a.t.dim(); ++d)
        axes.push_back(d);
      // An empty axis list would make sum() reduce every axis.
      return Val{axes.empty() ? a.t : a.t.sum(axes), a.rowed};
    }
    case ir::OpKind::Embed: {
      Val a = operand(stmt, 0, scope);
      int64_t start = evalDim(stmt.sliceStart);
      int64_t after = evalDim(stmt.sliceSize) - start - a.t.size(-1);
      return Val{at::constant_pad_nd(a.t, {start, after}, 0), a.rowed};
    }
    case ir::OpKind::Transpose: {
      Val a = operand(stmt, 0, scope);
      std::vector<int64_t> dims{0};
      for (int p : stmt.perm)
        dims.push_back(1 + p);
      return Val{a.t.permute(dims), a.rowed};
    }
    default:
      return unary(stmt, scope);
    }
  }

  int64_t evalDim(const ir::Dim &d) const {
    std::string error;
    auto v = d.evaluate(intHypers_, &error);
    if (!v)
      throw ArgumentValueError("hypers: the dimension " + d.str() +
                               " cannot be evaluated: " + error);
    return *v;
  }

  // ---- Writes ------------------------------------------------------------

  void runStmt(const ir::Stmt &stmt, const Scope &scope) {
    Val result = evaluate(stmt, scope);
    const ir::ValueDecl &decl = declOf(stmt.target.value);
    const std::vector<int64_t> &shape = shapes_.at(decl.name);
    if (result.t.sizes().slice(1).vec() != shape)
      internalError("'" + ir::printStmt(stmt) + "' computes rows of shape " +
                    sizesText(result.t.sizes().slice(1)) + ", but '" +
                    decl.name + "' is declared " + sizesText(shape));
    if (values_.count(decl.name))
      internalError("'" + decl.name + "' is written twice");
    values_[decl.name] = write(stmt, decl, shape, scope, result);
  }

  torch::Tensor write(const ir::Stmt &stmt, const ir::ValueDecl &decl,
                      const std::vector<int64_t> &shape, const Scope &scope,
                      const Val &result) const {
    int64_t numIters = scope.numIters;
    if (decl.space == Space::Global) {
      if (stmt.reduce == ir::Reduce::None) {
        if (result.rowed)
          internalError("a global value is assigned once per iteration");
        return result.t.select(0, 0);
      }
      torch::Tensor x = expandRows(result, numIters);
      if (numIters == 0)
        return at::zeros(shape, x.options());
      switch (stmt.reduce) {
      case ir::Reduce::Sum:
        return x.sum(0);
      case ir::Reduce::Mean:
        return x.mean(0);
      case ir::Reduce::Max:
        return x.amax(0);
      default:
        break;
      }
      internalError("unknown reduction");
    }

    Rows rows = resolve(stmt.target.index, scope);
    int64_t count = spaceRows(decl.space);
    torch::Tensor x = expandRows(result, numIters);
    std::vector<int64_t> full{count};
    full.insert(full.end(), shape.begin(), shape.end());
    torch::Tensor zeros = at::zeros(full, x.options());
    if (stmt.reduce == ir::Reduce::None)
      return rows.identity() ? x : zeros.index_copy(0, rows.index, x);

    torch::Tensor index =
        rows.identity()
            ? at::arange(
                  numIters,
                  torch::TensorOptions().dtype(torch::kLong).device(x.device()))
            : rows.index;
    // Broadcast view of the index over a row: [numIters, 1, ..., 1].
    std::vector<int64_t> indexShape(full.size(), 1);
    indexShape[0] = numIters;
    switch (stmt.reduce) {
    case ir::Reduce::Sum:
      return zeros.index_add(0, index, x);
    case ir::Reduce::Mean: {
      torch::Tensor contributions =
          at::bincount(index, {}, count).clamp_min(1).to(x.scalar_type());
      indexShape[0] = count;
      return zeros.index_add(0, index, x) / contributions.view(indexShape);
    }
    case ir::Reduce::Max:
      // include_self=false: a row is the max of its contributions only, and
      // a row without any keeps the 0 it starts with.
      return zeros.scatter_reduce(0, index.view(indexShape).expand_as(x), x,
                                  "amax", /*include_self=*/false);
    default:
      break;
    }
    internalError("unknown reduction");
  }

  const ir::Module &module_;
  const Graph &graph_;
  const InterpretOptions &options_;
  std::map<std::string, double> hyperValues_;
  std::map<std::string, int64_t> intHypers_;
  std::map<std::string, std::vector<int64_t>> shapes_;
  std::map<std::string, torch::Tensor> values_;
  c10::ScalarType dtype_ = c10::ScalarType::Float;
};

} // namespace

TensorMap interpret(const ir::Module &module, const Graph &graph,
                    const TensorMap &inputs, const TensorMap &params,
                    const InterpretOptions &options) {
  return Executor(module, graph, options).run(inputs, params);
}

std::map<std::string, std::vector<int64_t>>
valueShapes(const ir::Module &module, const Graph &graph,
            const InterpretOptions &options) {
  return Executor(module, graph, options).valueShapes();
}

} // namespace hector::runtime
