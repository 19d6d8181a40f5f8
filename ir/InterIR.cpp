// Name tables, small printers and Module helpers of the inter-op IR.
#include "ir/InterIR.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace hector::ir {

namespace {

constexpr std::pair<Space, const char *> kSpaces[] = {
    {Space::Global, "global"}, {Space::Node, "node"},
    {Space::Edge, "edge"},     {Space::Pair, "pair"},
    {Space::EdgeType, "etype"}, {Space::NodeType, "ntype"},
};

constexpr std::pair<OpKind, const char *> kOps[] = {
    {OpKind::Linear, "linear"},
    {OpKind::LinearT, "linear_t"},
    {OpKind::Dot, "dot"},
    {OpKind::Outer, "outer"},
    {OpKind::Copy, "copy"},
    {OpKind::Neg, "neg"},
    {OpKind::Exp, "exp"},
    {OpKind::Log, "log"},
    {OpKind::Relu, "relu"},
    {OpKind::LeakyRelu, "leaky_relu"},
    {OpKind::Gelu, "gelu"},
    {OpKind::Sigmoid, "sigmoid"},
    {OpKind::Tanh, "tanh"},
    {OpKind::Sqrt, "sqrt"},
    {OpKind::Detach, "detach"},
    {OpKind::ReluGrad, "relu_grad"},
    {OpKind::LeakyReluGrad, "leaky_relu_grad"},
    {OpKind::GeluGrad, "gelu_grad"},
    {OpKind::Add, "add"},
    {OpKind::Sub, "sub"},
    {OpKind::Mul, "mul"},
    {OpKind::Div, "div"},
    {OpKind::Eq, "eq"},
    {OpKind::Reshape, "reshape"},
    {OpKind::Concat, "concat"},
    {OpKind::Slice, "slice"},
    {OpKind::SumTo, "sum_to"},
    {OpKind::Embed, "embed"},
    {OpKind::Transpose, "transpose"},
};

struct GraphValue {
  const char *name;
  Space space;
};
constexpr GraphValue kGraphValues[] = {
    {"in_degree", Space::Node},
    {"out_degree", Space::Node},
    {"rel_in_degree", Space::Edge},
};

/// The shortest text that strtod reads back to the same double.
std::string formatNumber(double v) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

const char *binaryToken(ScalarExpr::Kind k) {
  switch (k) {
  case ScalarExpr::Kind::Add:
    return "+";
  case ScalarExpr::Kind::Sub:
    return "-";
  case ScalarExpr::Kind::Mul:
    return "*";
  default:
    return "/";
  }
}

std::unique_ptr<Loop> cloneLoop(const Loop &loop) {
  auto copy = std::make_unique<Loop>();
  copy->kind = loop.kind;
  copy->var = loop.var;
  copy->parent = loop.parent;
  copy->loc = loop.loc;
  for (const BodyItem &item : loop.body) {
    if (const auto *stmt = std::get_if<Stmt>(&item))
      copy->body.emplace_back(*stmt);
    else
      copy->body.emplace_back(cloneLoop(*std::get<std::unique_ptr<Loop>>(item)));
  }
  return copy;
}

} // namespace

const char *spaceName(Space s) {
  for (const auto &[space, name] : kSpaces)
    if (space == s)
      return name;
  return "?";
}

std::optional<Space> spaceFromName(const std::string &name) {
  for (const auto &[space, text] : kSpaces)
    if (name == text)
      return space;
  return std::nullopt;
}

const char *valueKindName(ValueKind k) {
  switch (k) {
  case ValueKind::Input:
    return "input";
  case ValueKind::Param:
    return "param";
  case ValueKind::Graph:
    return "graph";
  case ValueKind::Temp:
    return "temp";
  case ValueKind::Output:
    return "output";
  }
  return "?";
}

bool isGraphValueName(const std::string &name) {
  return graphValueSpace(name).has_value();
}

std::optional<Space> graphValueSpace(const std::string &name) {
  for (const GraphValue &g : kGraphValues)
    if (name == g.name)
      return g.space;
  return std::nullopt;
}

std::map<std::string, int64_t>
declaredIntHypers(const std::vector<HyperDecl> &hypers) {
  std::map<std::string, int64_t> bindings;
  for (const HyperDecl &h : hypers)
    if (h.type == HyperDecl::Type::Int)
      bindings[h.name] = static_cast<int64_t>(h.defaultValue);
  return bindings;
}

const char *attrName(Attr a) {
  switch (a) {
  case Attr::Src:
    return "src";
  case Attr::Dst:
    return "dst";
  case Attr::EType:
    return "etype";
  case Attr::NType:
    return "ntype";
  case Attr::Pair:
    return "pair";
  }
  return "?";
}

const char *opName(OpKind k) {
  for (const auto &[op, name] : kOps)
    if (op == k)
      return name;
  return "?";
}

bool isElementwiseUnary(OpKind k) {
  switch (k) {
  case OpKind::Copy:
  case OpKind::Neg:
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Relu:
  case OpKind::LeakyRelu:
  case OpKind::Gelu:
  case OpKind::Sigmoid:
  case OpKind::Tanh:
  case OpKind::Sqrt:
  case OpKind::Detach:
  case OpKind::ReluGrad:
  case OpKind::LeakyReluGrad:
  case OpKind::GeluGrad:
    return true;
  default:
    return false;
  }
}

bool isElementwiseBinary(OpKind k) {
  return k == OpKind::Add || k == OpKind::Sub || k == OpKind::Mul ||
         k == OpKind::Div || k == OpKind::Eq;
}

std::optional<OpKind> opFromName(const std::string &name) {
  for (const auto &[op, text] : kOps)
    if (name == text)
      return op;
  return std::nullopt;
}

const char *reduceToken(Reduce r) {
  switch (r) {
  case Reduce::None:
    return "=";
  case Reduce::Sum:
    return "+=";
  case Reduce::Mean:
    return "mean=";
  case Reduce::Max:
    return "max=";
  }
  return "?";
}

const char *loopKindName(LoopKind k) {
  switch (k) {
  case LoopKind::Edges:
    return "edges";
  case LoopKind::Nodes:
    return "nodes";
  case LoopKind::DstNodes:
    return "dst_nodes";
  case LoopKind::SrcNodes:
    return "src_nodes";
  case LoopKind::EdgeTypes:
    return "etypes";
  case LoopKind::NodeTypes:
    return "ntypes";
  case LoopKind::Pairs:
    return "pairs";
  case LoopKind::Incoming:
    return "incoming";
  case LoopKind::Outgoing:
    return "outgoing";
  }
  return "?";
}

Space loopVarSpace(LoopKind k) {
  switch (k) {
  case LoopKind::Nodes:
  case LoopKind::DstNodes:
  case LoopKind::SrcNodes:
    return Space::Node;
  case LoopKind::EdgeTypes:
    return Space::EdgeType;
  case LoopKind::NodeTypes:
    return Space::NodeType;
  case LoopKind::Pairs:
    return Space::Pair;
  case LoopKind::Edges:
  case LoopKind::Incoming:
  case LoopKind::Outgoing:
    return Space::Edge;
  }
  return Space::Global;
}

std::string IndexPath::str() const {
  std::string out = var;
  for (Attr a : attrs)
    out += std::string(".") + attrName(a);
  return out;
}

std::string Access::str() const {
  if (index.isGlobal())
    return value;
  return value + "[" + index.str() + "]";
}

std::string ScalarExpr::str() const {
  // Malformed nodes (wrong arity) print as `?` rather than crash: the
  // printer is used to show invalid modules in diagnostics too.
  auto arg = [&](size_t i) { return i < args.size() ? args[i].str() : "?"; };
  switch (kind) {
  case Kind::Literal:
    return formatNumber(literal);
  case Kind::Hyper:
    return hyper;
  case Kind::Neg:
    return "-" + arg(0);
  case Kind::Sqrt:
    return "sqrt(" + arg(0) + ")";
  case Kind::Add:
  case Kind::Sub:
  case Kind::Mul:
  case Kind::Div:
    return "(" + arg(0) + " " + binaryToken(kind) + " " + arg(1) + ")";
  }
  return "?";
}

const ValueDecl *Module::findValue(const std::string &name) const {
  for (const ValueDecl &v : values)
    if (v.name == name)
      return &v;
  return nullptr;
}

ValueDecl *Module::findValue(const std::string &name) {
  for (ValueDecl &v : values)
    if (v.name == name)
      return &v;
  return nullptr;
}

const HyperDecl *Module::findHyper(const std::string &name) const {
  for (const HyperDecl &h : hypers)
    if (h.name == name)
      return &h;
  return nullptr;
}

Module Module::clone() const {
  Module copy;
  copy.name = name;
  copy.hypers = hypers;
  copy.values = values;
  copy.loc = loc;
  for (const auto &loop : loops)
    copy.loops.push_back(cloneLoop(*loop));
  return copy;
}

} // namespace hector::ir
