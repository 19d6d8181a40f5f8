// The inter-operator IR: a relational GNN layer as graph loops over
// single-assignment values bound to index spaces (docs/ir.md is the
// reference; this header is its data structure).
//
// The IR says *what* is computed per edge, node, edge type, ... and never
// *where* a row lives in memory: layout (vanilla vs compact rows, COO vs
// CSR) is decided by later passes. It is produced by the frontend
// (frontend/IRBuilder), by the textual parser (ir/InterIRParser), and by the
// inter-op passes; it is consumed by the passes, the printer, the verifier
// and the interpreter (runtime/Interpreter).
#pragma once

#include "ir/Dim.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace hector::ir {

/// A position in a source file (.hgnn or printed IR). line/col are 1-based;
/// line 0 means "no location" (e.g. a node created by a pass).
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;
  bool valid() const { return line > 0; }
};

/// The set a value has one row per element of.
enum class Space {
  Global,   ///< one row for the whole graph (shared weights, constants)
  Node,     ///< one row per node (any node type)
  Edge,     ///< one row per edge
  Pair,     ///< one row per unique (src node, edge type) pair (compact)
  EdgeType, ///< one row per relation (weights sliced by edge type)
  NodeType, ///< one row per node type (weights sliced by node type)
};
const char *spaceName(Space s); // "global", "node", "edge", ...
std::optional<Space> spaceFromName(const std::string &name);

/// What a value is to the outside world.
enum class ValueKind {
  Input,  ///< supplied by the caller per call (node features, edge norms)
  Param,  ///< a trainable weight, supplied by the layer
  Graph,  ///< derived from the graph structure (degrees), read-only
  Temp,   ///< computed inside the program
  Output, ///< computed inside the program and returned
};
const char *valueKindName(ValueKind k); // "input", "param", ...

/// Graph-derived values the runtime provides (ValueKind::Graph). Their
/// names are reserved.
///   in_degree     : node[]  number of incoming edges of the node
///   out_degree    : node[]  number of outgoing edges of the node
///   rel_in_degree : edge[]  number of incoming edges of e.dst whose type is
///                           e.etype (RGCN's 1/c_{v,r} normaliser)
bool isGraphValueName(const std::string &name);
std::optional<Space> graphValueSpace(const std::string &name);

/// A named, single-assignment value.
struct ValueDecl {
  std::string name;
  ValueKind kind = ValueKind::Temp;
  Space space = Space::Global;
  Shape shape;          ///< per-row shape
  bool constant = false;///< inputs only: no gradient is ever wanted
  SourceLoc loc;
};

/// A model hyper-parameter, bound when a layer is constructed.
struct HyperDecl {
  enum class Type { Int, Float };
  std::string name;
  Type type = Type::Int;
  double defaultValue = 0; ///< integral when type == Int
  SourceLoc loc;
};

/// The int hypers among `hypers`, each at its declared (default) value:
/// the bindings for evaluating Dims as the model declares them.
std::map<std::string, int64_t>
declaredIntHypers(const std::vector<HyperDecl> &hypers);

/// Attribute step of an index path (`e.src`, `e.etype`, `n.ntype`, ...).
enum class Attr { Src, Dst, EType, NType, Pair };
const char *attrName(Attr a); // "src", "dst", "etype", "ntype", "pair"

/// How an operand or target row is found from the loop variables:
/// a loop variable followed by attribute steps. `e` (the edge itself),
/// `e.src` (its source node), `e.src.ntype`, `n.ntype`, `e.pair`, `r`.
/// An empty `var` means the value is Global and has no index.
struct IndexPath {
  std::string var;
  std::vector<Attr> attrs;
  bool isGlobal() const { return var.empty(); }
  std::string str() const; // "e.src.ntype", "" for global
  bool operator==(const IndexPath &o) const {
    return var == o.var && attrs == o.attrs;
  }
};

/// A read or write of one row of a value: `x[e.src]`, `W[e.etype]`, `b`.
struct Access {
  std::string value;
  IndexPath index;
  SourceLoc loc;
  std::string str() const; // "x[e.src]" or "b"
};

/// A compile-time scalar expression over literals and float/int
/// hyper-parameters, e.g. `1.0 / sqrt(out_dim / heads)`; evaluated when the
/// hyper-parameters are bound.
struct ScalarExpr {
  enum class Kind { Literal, Hyper, Neg, Sqrt, Add, Sub, Mul, Div };
  Kind kind = Kind::Literal;
  double literal = 0;
  std::string hyper;
  std::vector<ScalarExpr> args; // 1 for Neg/Sqrt, 2 for binary
  std::string str() const;      // parsable: `0.2`, `slope`, `(1 / sqrt(d))`
};

/// An operand: a row of a value, or a scalar constant.
using Operand = std::variant<Access, ScalarExpr>;

/// The primitive operations. The table in docs/ir.md gives each one's
/// operand shapes and result shape; the verifier checks them.
enum class OpKind {
  // Linear algebra.
  Linear,  ///< linear(a:[..,K], W:[K,N]) -> [..,N];  W:[H,K,N] with a:[H,K] -> [H,N]
  LinearT, ///< linear_t(a:[..,K], W:[N,K]) -> [..,N]  (torch.nn.Linear layout);
           ///< W:[H,N,K] with a:[H,K] -> [H,N]
  Dot,    ///< dot(a:[..,K], b:[..,K]) -> [..]      (contract the last axis)
  Outer,  ///< outer(a:[..,K], b:[..,N]) -> [..,K,N]
  // Elementwise unary.
  Copy, Neg, Exp, Log, Relu, LeakyRelu, Gelu, Sigmoid, Tanh, Sqrt,
  Detach, ///< identity forward, no gradient (softmax's max)
  // Derivatives of the activations (emitted by autodiff), elementwise.
  ReluGrad,      ///< relu_grad(x): 1 where x > 0 else 0
  LeakyReluGrad, ///< leaky_relu_grad(x, slope): 1 where x > 0 else slope
  GeluGrad,      ///< gelu_grad(x): Phi(x) + x*phi(x), d/dx of exact GELU
  // Elementwise binary, with prefix broadcasting (docs/ir.md).
  Add, Sub, Mul, Div,
  Eq, ///< eq(a, b): 1 where a == b else 0 (the max reduction's gradient mask)
  // Shape manipulation (row-local).
  Reshape, ///< reshape(a, shape attr); element count must match
  Concat,  ///< concat(a, b, ...) along the last axis
  Slice,   ///< slice(a) along the last axis: attrs start, size
  SumTo,   ///< sum_to(a, shape attr S): sums the trailing axes down to the
           ///< prefix S of a's shape (the gradient of prefix broadcasting)
  Embed,   ///< embed(a:[..,K]) start S size Z -> [..,Z]: zeros with a at
           ///< [S, S+K) of the last axis (the gradient of slice)
  Transpose, ///< transpose(a) perm [p0, ...]: result axis i is a's axis p_i
};
const char *opName(OpKind k);
std::optional<OpKind> opFromName(const std::string &name);
/// The elementwise unary ops (activations, their derivatives, copy,
/// detach, neg): element i of the result reads element i of operand 0
/// (leaky_relu's second operand is its scalar slope).
bool isElementwiseUnary(OpKind k);
/// add, sub, mul, div, eq: element i reads each operand at i, or at
/// i / ratio when the operand is prefix-broadcast (docs/ir.md).
bool isElementwiseBinary(OpKind k);

/// How a statement writes its target.
enum class Reduce {
  None, ///< plain assignment: target row written exactly once
  Sum,  ///< target row = sum of the contributions (0 if none)
  Mean, ///< target row = mean of the contributions (0 if none)
  Max,  ///< target row = max of the contributions (0 if none)
};
const char *reduceToken(Reduce r); // "=", "+=", "mean=", "max="

/// One operation: `target = op(operands)` or `target += op(operands)`.
struct Stmt {
  Access target;
  Reduce reduce = Reduce::None;
  OpKind op = OpKind::Copy;
  std::vector<Operand> operands;
  /// LeakyRelu, LeakyReluGrad: the slope is operand 1 (a ScalarExpr).
  /// Reshape, SumTo: `shape`. Slice, Embed: `sliceStart`, `sliceSize`
  /// (dims, last axis). Transpose: `perm`, a permutation of the per-row axes.
  Shape shape;
  Dim sliceStart, sliceSize;
  std::vector<int> perm;
  SourceLoc loc;
};

/// What a loop iterates over.
enum class LoopKind {
  Edges,     ///< every edge (top level)
  Nodes,     ///< every node (top level)
  DstNodes,  ///< every node, viewed as a destination (top level)
  SrcNodes,  ///< every node, viewed as a source (top level)
  EdgeTypes, ///< every relation (top level)
  NodeTypes, ///< every node type (top level)
  Pairs,     ///< every unique (src, etype) pair (top level)
  Incoming,  ///< incoming edges of the enclosing node loop's variable
  Outgoing,  ///< outgoing edges of the enclosing node loop's variable
};
const char *loopKindName(LoopKind k); // "edges", ..., "incoming"
/// The space the loop variable ranges over.
Space loopVarSpace(LoopKind k);

struct Loop;
/// A loop body item: an operation or a nested loop.
using BodyItem = std::variant<Stmt, std::unique_ptr<Loop>>;

/// `foreach VAR in KIND { body }`; for Incoming/Outgoing the range is
/// `PARENT.incoming` where PARENT is the enclosing node loop's variable.
struct Loop {
  LoopKind kind = LoopKind::Edges;
  std::string var;
  std::string parent; ///< Incoming/Outgoing only
  std::vector<BodyItem> body;
  SourceLoc loc;
};

/// A whole layer: hyper-parameters, value declarations, and top-level loops
/// that run in order. Every Temp/Output value is written by exactly one
/// statement; inputs, params and graph values are never written.
struct Module {
  std::string name;
  std::vector<HyperDecl> hypers;
  std::vector<ValueDecl> values; ///< in declaration (= print) order
  std::vector<std::unique_ptr<Loop>> loops;
  SourceLoc loc;

  const ValueDecl *findValue(const std::string &name) const;
  ValueDecl *findValue(const std::string &name);
  const HyperDecl *findHyper(const std::string &name) const;
  /// Deep copy (loops are owned through unique_ptr).
  Module clone() const;
};

} // namespace hector::ir
