#include "codegen/ElementPrinter.h"

#include "codegen/Naming.h"

#include <fmt/format.h>

namespace hector::codegen {
namespace {

using ir::OpKind;

/// Operand `k` at flat index `index`.
std::string at(const OperandRef &op, const std::string &index) {
  if (op.isScalar())
    return op.scalar;
  return op.ptr + "[" + index + "]";
}

/// Operand `k` of an elementwise op at result element `i` (prefix
/// broadcasting: the operand's shape is a prefix of the result's).
std::string broadcastPrefix(const OperandRef &op, const ir::Shape &result) {
  if (op.isScalar())
    return op.scalar;
  return at(op, prefixIndex(shapeSize(op.shape), shapeSize(result)));
}

/// Operand read at flat index `index` of a row of `full` elements, with
/// suffix (numpy) broadcasting: the operand's shape is a suffix of it.
std::string broadcastSuffix(const OperandRef &op, const ir::Dim &full,
                            const std::string &index) {
  if (op.isScalar())
    return op.scalar;
  const ir::Dim part = shapeSize(op.shape);
  if (full == part)
    return at(op, index);
  return at(op, "(" + index + ") % " + dimExpr(part));
}

std::string unaryExpr(OpKind op, const std::string &x,
                      const std::vector<OperandRef> &ops) {
  switch (op) {
  case OpKind::Copy:
  case OpKind::Detach:
    return x;
  case OpKind::Neg:
    return "-" + x;
  case OpKind::Exp:
    return "hector::trav::exp(" + x + ")";
  case OpKind::Log:
    return "hector::trav::log(" + x + ")";
  case OpKind::Relu:
    return "hector::trav::relu(" + x + ")";
  case OpKind::Gelu:
    return "hector::trav::gelu(" + x + ")";
  case OpKind::Sigmoid:
    return "hector::trav::sigmoid(" + x + ")";
  case OpKind::Tanh:
    return "hector::trav::tanh(" + x + ")";
  case OpKind::Sqrt:
    return "hector::trav::sqrt(" + x + ")";
  case OpKind::ReluGrad:
    return "hector::trav::reluGrad(" + x + ")";
  case OpKind::GeluGrad:
    return "hector::trav::geluGrad(" + x + ")";
  case OpKind::LeakyRelu:
    return "hector::trav::leakyRelu(" + x + ", " + ops.at(1).scalar + ")";
  case OpKind::LeakyReluGrad:
    return "hector::trav::leakyReluGrad(" + x + ", " + ops.at(1).scalar + ")";
  default:
    return "";
  }
}

/// The start of the weight's terms for output column `col` when they are
/// contiguous in the term index kk (one 16-byte load per quad), or empty:
/// linear_t stores W as [N,K], so a column's terms are a row; linear
/// stores [K,N], whose column is contiguous only when N is 1 (RGAT's
/// one-head attention logit, docs/perf-notes.md section 43).
std::string contiguousWeightColumn(const OperandRef &w, bool transposed,
                                   const std::string &head, const ir::Dim &n,
                                   const ir::Dim &k) {
  if (w.isScalar())
    return "";
  const std::string N = dimExpr(n), K = dimExpr(k);
  if (transposed)
    return fmt::format("({} + ({} * {} + col) * {})", w.ptr, head, N, K);
  if (n.isConstant() && n.constantValue() != 1)
    return "";
  return fmt::format("({} + {} * {})", w.ptr, head, K);
}

void printLinear(CodeWriter &w, const ir::Stmt &stmt, const ir::Shape &result,
                 const std::vector<OperandRef> &ops) {
  // linear(a:[..,K], W:[K,N]) or per head a:[H,K], W:[H,K,N]; linear_t
  // stores W as [N,K] ([H,N,K]).
  const bool transposed = stmt.op == OpKind::LinearT;
  const ir::Shape &wShape = ops.at(1).shape;
  const bool perHead = wShape.size() == 3;
  const ir::Dim n = transposed ? wShape[wShape.size() - 2] : wShape.back();
  const ir::Dim k = transposed ? wShape.back() : wShape[wShape.size() - 2];
  const std::string N = dimExpr(n), K = dimExpr(k);
  w.line("const int64_t col = i % {};", N);
  w.line("const int64_t lead = i / {};", N);
  const std::string head = perHead ? "lead" : "INT64_C(0)";
  const std::string wIndex =
      transposed ? fmt::format("({} * {} + col) * {} + kk", head, N, K)
                 : fmt::format("({} * {} + kk) * {} + col", head, K, N);
  w.line("scalar_t v = 0;");
  const auto scalarLoop = [&] {
    w.open(fmt::format("for (int64_t kk = 0; kk < {}; ++kk)", K));
    w.line("v += {} * {};", at(ops[0], "lead * " + K + " + kk"),
           at(ops[1], wIndex));
    w.close();
  };
  // One lane adds all K terms (a narrow product per edge, section 34):
  // read both rows a quad at a time where they allow it, in the same
  // order, so the sum is the scalar loop's.
  const std::string wColumn =
      contiguousWeightColumn(ops[1], transposed, head, n, k);
  if (ops[0].isScalar() || wColumn.empty()) {
    scalarLoop();
    return;
  }
  const std::string aRow = "(" + ops[0].ptr + " + lead * " + K + ")";
  std::string test = quadRowsTest(K, {aRow, wColumn});
  if (!transposed && !n.isConstant())
    test = fmt::format("{} == 1 && {}", N, test);
  w.open("if (" + test + ")");
  w.open(fmt::format("for (int64_t kk = 0; kk < {}; kk += 4)", K));
  w.line("const auto hector_qa = hector::trav::rowQuad({}, kk);", aRow);
  w.line("const auto hector_qw = hector::trav::rowQuad({}, kk);", wColumn);
  w.line("HECTOR_UNROLL for (int q = 0; q < 4; ++q) v += hector_qa.v[q] * "
         "hector_qw.v[q];");
  w.close();
  w.close();
  w.open("else");
  scalarLoop();
  w.close();
  (void)result;
}

void printTranspose(CodeWriter &w, const ir::Stmt &stmt,
                    const ir::Shape &result, const OperandRef &a) {
  // Result axis j is a's axis perm[j]: peel the result's coordinates from
  // the flat index (last axis first) and add each times a's stride.
  const size_t rank = result.size();
  std::vector<std::string> aStride(rank);
  for (size_t d = 0; d < rank; ++d) {
    ir::Dim stride = ir::Dim::constant(1);
    for (size_t e = d + 1; e < rank; ++e)
      stride = stride * a.shape[e];
    aStride[d] = dimExpr(stride);
  }
  w.line("int64_t rest = i;");
  w.line("int64_t src = 0;");
  for (size_t j = rank; j-- > 0;) {
    w.line("src += (rest % {}) * {};", dimExpr(result[j]),
           aStride[static_cast<size_t>(stmt.perm.at(j))]);
    if (j > 0)
      w.line("rest /= {};", dimExpr(result[j]));
  }
  w.line("const scalar_t v = {};", at(a, "src"));
}

/// A contraction's element i: the sum over `var` in [0, terms) of `term`.
/// When every factor of a term is a row read at `var` from its start,
/// `rows` holds those starts (C++ pointers), and the terms can be read a
/// quad at a time (printTermsLoop).
struct Contraction {
  std::string terms, var, term;
  std::vector<std::string> rows;
};

/// The start of `op`'s part for element i, when element i's terms read
/// `op` at `base + kk` (no broadcast); empty otherwise.
std::string contiguousRow(const OperandRef &op, const ir::Dim &full,
                          const std::string &base) {
  if (op.isScalar() || shapeSize(op.shape) != full)
    return "";
  return "(" + op.ptr + " + " + base + ")";
}

/// `sum += term` over this lane's share of the terms: `var` from `first`
/// by `step`; over quads (four consecutive terms a lane, one 16-byte load
/// a row) when the contraction's rows allow it at run time
/// (hector::trav::quadRows), as the edge loops' rows do (docs/perf-notes.md
/// section 36).
void printTermsLoop(CodeWriter &w, const Contraction &c, const std::string &sum,
                    const std::string &first, const std::string &step) {
  const auto scalarLoop = [&] {
    w.open(fmt::format("for (int {0} = {1}; {0} < {2}; {0} += {3})", c.var,
                       first, c.terms, step));
    w.line("{} += {};", sum, c.term);
    w.close();
  };
  if (c.rows.empty()) {
    scalarLoop();
    return;
  }
  w.open("if (" + quadRowsTest(c.terms, c.rows) + ")");
  w.open(fmt::format("for (int {0} = 4 * ({1}); {0} < {2}; {0} += 4 * ({3}))",
                     c.var, first, c.terms, step));
  std::string product;
  for (size_t r = 0; r < c.rows.size(); ++r) {
    w.line("const auto hector_q{} = hector::trav::rowQuad({}, {});", r,
           c.rows[r], c.var);
    product += (r ? " * " : "") + fmt::format("hector_q{}.v[q]", r);
  }
  w.line("HECTOR_UNROLL for (int q = 0; q < 4; ++q) {} += {};", sum, product);
  w.close();
  w.close();
  w.open("else");
  scalarLoop();
  w.close();
}

std::optional<Contraction> contractionOf(const ir::Stmt &stmt,
                                         const ir::Shape &result,
                                         const std::vector<OperandRef> &ops) {
  if (stmt.op == OpKind::SumTo) {
    // Sums the trailing axes of a's row down to the prefix `result`.
    const ir::Dim whole = shapeSize(ops.at(0).shape);
    const std::string group = ratioExpr(whole, shapeSize(result));
    Contraction c{group, "kk", at(ops[0], "i * " + group + " + kk"), {}};
    if (const std::string row = contiguousRow(ops[0], whole, "i * " + group);
        !row.empty())
      c.rows = {row};
    return c;
  }
  if (stmt.op == OpKind::Dot) {
    // dot(a:[..,K], b:[..,K]) -> [..]: element i contracts K elements.
    const ir::Shape &longer =
        ops.at(0).shape.size() >= ops.at(1).shape.size() ? ops[0].shape
                                                         : ops[1].shape;
    const ir::Dim k = longer.back();
    const ir::Dim full = shapeSize(result) * k;
    const std::string K = dimExpr(k), index = "i * " + K + " + kk";
    Contraction c{K,
                  "kk",
                  broadcastSuffix(ops[0], full, index) + " * " +
                      broadcastSuffix(ops[1], full, index),
                  {}};
    const std::string a = contiguousRow(ops[0], full, "i * " + K),
                      b = contiguousRow(ops[1], full, "i * " + K);
    if (!a.empty() && !b.empty())
      c.rows = {a, b};
    return c;
  }
  return std::nullopt;
}

} // namespace

std::string quadRowsTest(const std::string &size,
                         const std::vector<std::string> &rows) {
  std::string args = size;
  for (const std::string &r : rows)
    args += ", " + r;
  return "hector::trav::quadRows<scalar_t>(" + args + ")";
}

std::optional<std::string>
contractionTerms(const ir::Stmt &stmt, const ir::Shape &result,
                 const std::vector<OperandRef> &operands) {
  const std::optional<Contraction> c = contractionOf(stmt, result, operands);
  return c ? std::optional<std::string>(c->terms) : std::nullopt;
}

void printLaneSplitElement(CodeWriter &w, const ir::Stmt &stmt,
                           const ir::Shape &result,
                           const std::vector<OperandRef> &operands) {
  const std::optional<Contraction> c = contractionOf(stmt, result, operands);
  if (!c)
    throw EmitError{std::string("no lane-split form for op ") +
                    ir::opName(stmt.op)};
  w.line("scalar_t v = 0;");
  printTermsLoop(w, *c, "v", "hector_lane", "kGroupSize");
  w.line("v = hector::trav::groupSum<kGroupSize>(v);");
}

void printWorkerLaneTerms(CodeWriter &w, const ir::Stmt &stmt,
                          const ir::Shape &result,
                          const std::vector<OperandRef> &operands,
                          const std::string &sum, const std::string &active) {
  const std::optional<Contraction> c = contractionOf(stmt, result, operands);
  if (!c)
    throw EmitError{std::string("no lane-split form for op ") +
                    ir::opName(stmt.op)};
  w.line("scalar_t {} = 0;", sum);
  w.open(fmt::format("if ({})", active));
  printTermsLoop(w, *c, sum, "hector_lane", "hector_lanes");
  w.close();
}

std::string prefixIndex(const ir::Dim &part, const ir::Dim &whole) {
  if (whole == part)
    return "i";
  // One scalar per row (a per-edge norm or attention weight with one
  // head): every element reads it, without the division.
  if (part == ir::Dim::constant(1))
    return "0";
  // The same at run time when a symbolic part is 1 (one head): the
  // compiler then keeps a copy of the element loop that reads the scalar
  // once, without the integer division per element that took 17% of the
  // instructions of RGAT's forward node kernel on mutag (Nsight Compute;
  // docs/perf-notes.md section 22).
  if (!part.isConstant())
    return fmt::format("({} == 1 ? 0 : i / {})", dimExpr(part),
                       ratioExpr(whole, part));
  return "i / " + ratioExpr(whole, part);
}

bool readsPrefixOnly(const ir::Stmt &stmt, size_t operand,
                     const ir::Shape &result, const ir::Shape &operandShape) {
  return ir::isElementwiseBinary(stmt.op) && operand < 2 &&
         shapeSize(operandShape) != shapeSize(result);
}

bool readsOnlyElement(const ir::Stmt &stmt, size_t operand,
                      const ir::Shape &result,
                      const ir::Shape &operandShape) {
  if (shapeSize(operandShape) != shapeSize(result))
    return false;
  if (ir::isElementwiseUnary(stmt.op))
    return operand == 0;
  return ir::isElementwiseBinary(stmt.op) || stmt.op == OpKind::Reshape;
}

void printElement(CodeWriter &w, const ir::Stmt &stmt, const ir::Shape &result,
                  const std::vector<OperandRef> &ops) {
  switch (stmt.op) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div: {
    const char *sym = stmt.op == OpKind::Add   ? "+"
                      : stmt.op == OpKind::Sub ? "-"
                      : stmt.op == OpKind::Mul ? "*"
                                               : "/";
    w.line("const scalar_t v = {} {} {};", broadcastPrefix(ops.at(0), result),
           sym, broadcastPrefix(ops.at(1), result));
    return;
  }
  case OpKind::Eq:
    w.line("const scalar_t v = hector::trav::eq({}, {});",
           broadcastPrefix(ops.at(0), result),
           broadcastPrefix(ops.at(1), result));
    return;
  case OpKind::Reshape:
    w.line("const scalar_t v = {};", at(ops.at(0), "i"));
    return;
  case OpKind::Dot:
  case OpKind::SumTo: {
    const Contraction c = *contractionOf(stmt, result, ops);
    w.line("scalar_t v = 0;");
    w.open(fmt::format("for (int64_t {0} = 0; {0} < {1}; ++{0})", c.var,
                       c.terms));
    w.line("v += {};", c.term);
    w.close();
    return;
  }
  case OpKind::Outer: {
    // outer(a:[..,K], b:[..,N]) -> [..,K,N].
    const ir::Dim k = result[result.size() - 2], n = result.back();
    const ir::Dim lead = shapeSize(ir::Shape(result.begin(), result.end() - 2));
    const std::string K = dimExpr(k), N = dimExpr(n);
    w.line("const int64_t lead = i / ({} * {});", K, N);
    w.line("const int64_t row = (i / {}) % {};", N, K);
    w.line("const int64_t col = i % {};", N);
    w.line("const scalar_t v = {} * {};",
           broadcastSuffix(ops.at(0), lead * k, "lead * " + K + " + row"),
           broadcastSuffix(ops.at(1), lead * n, "lead * " + N + " + col"));
    return;
  }
  case OpKind::Slice: {
    const std::string z = dimExpr(stmt.sliceSize);
    const std::string k = dimExpr(ops.at(0).shape.back());
    w.line("const scalar_t v = {};",
           at(ops[0], fmt::format("(i / {}) * {} + {} + i % {}", z, k,
                                  dimExpr(stmt.sliceStart), z)));
    return;
  }
  case OpKind::Embed: {
    // embed(a:[..,K]) start S size Z: a's row placed at [S, S+K) of Z.
    const std::string z = dimExpr(stmt.sliceSize);
    const std::string k = dimExpr(ops.at(0).shape.back());
    const std::string s = dimExpr(stmt.sliceStart);
    w.line("const int64_t col = i % {} - {};", z, s);
    w.line("const scalar_t v = (col >= 0 && col < {}) ? {} : scalar_t(0);", k,
           at(ops[0], fmt::format("(i / {}) * {} + col", z, k)));
    return;
  }
  case OpKind::Concat: {
    // Along the last axis: operand k holds columns [off_k, off_k + K_k).
    const std::string width = dimExpr(result.back());
    w.line("const int64_t lead = i / {};", width);
    w.line("const int64_t col = i % {};", width);
    w.line("scalar_t v = 0;");
    ir::Dim offset = ir::Dim::constant(0);
    for (const OperandRef &op : ops) {
      const ir::Dim part = op.shape.back();
      const std::string off = dimExpr(offset), k = dimExpr(part);
      w.line("if (col >= {0} && col < {0} + {1}) v = {2};", off, k,
             at(op, fmt::format("lead * {} + col - {}", k, off)));
      offset = offset + part;
    }
    return;
  }
  case OpKind::Transpose:
    printTranspose(w, stmt, result, ops.at(0));
    return;
  case OpKind::Linear:
  case OpKind::LinearT:
    printLinear(w, stmt, result, ops);
    return;
  default: {
    const std::string e = unaryExpr(stmt.op, at(ops.at(0), "i"), ops);
    if (e.empty())
      throw EmitError{std::string("no element form for op ") +
                      ir::opName(stmt.op)};
    w.line("const scalar_t v = {};", e);
    return;
  }
  }
}

} // namespace hector::codegen
