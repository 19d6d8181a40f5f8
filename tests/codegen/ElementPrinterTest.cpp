// codegen/ElementPrinter.h: the per-element C++ of each op, against the
// emitter's golden strings (operands are pointers o0, o1, ...).
#include "codegen/ElementPrinter.h"

#include "codegen/Naming.h"

#include <gtest/gtest.h>

namespace hector::codegen {
namespace {

using ir::OpKind;

ir::Dim dim(const std::string &text) {
  std::optional<ir::Dim> d = ir::parseDim(text);
  EXPECT_TRUE(d.has_value()) << text;
  return d.value_or(ir::Dim::constant(0));
}

ir::Shape shape(std::initializer_list<const char *> dims) {
  ir::Shape s;
  for (const char *d : dims)
    s.push_back(dim(d));
  return s;
}

OperandRef row(const std::string &ptr, ir::Shape s) {
  OperandRef r;
  r.ptr = ptr;
  r.shape = std::move(s);
  return r;
}

OperandRef scalar(const std::string &expr) {
  OperandRef r;
  r.scalar = expr;
  return r;
}

ir::Stmt stmtOf(OpKind op) {
  ir::Stmt s;
  s.op = op;
  return s;
}

std::string print(const ir::Stmt &stmt, const ir::Shape &result,
                  const std::vector<OperandRef> &ops) {
  CodeWriter w;
  printElement(w, stmt, result, ops);
  return w.str();
}

TEST(ElementPrinterTest, SameShapeBinary) {
  EXPECT_EQ(print(stmtOf(OpKind::Sub), shape({"d"}),
                  {row("o0", shape({"d"})), row("o1", shape({"d"}))}),
            "const scalar_t v = o0[i] - o1[i];\n");
  EXPECT_EQ(print(stmtOf(OpKind::Mul), shape({"d"}),
                  {row("o0", shape({"d"})), scalar("0.5f")}),
            "const scalar_t v = o0[i] * 0.5f;\n");
}

TEST(ElementPrinterTest, AddPrefixBroadcast) {
  // [H] + [H, D] -> [H, D]: the [H] operand is read at i / D, or at 0
  // when H is 1 at run time (no division per element then).
  EXPECT_EQ(print(stmtOf(OpKind::Add), shape({"heads", "d"}),
                  {row("o0", shape({"heads"})),
                   row("o1", shape({"heads", "d"}))}),
            "const scalar_t v = o0[(hp_heads == 1 ? 0 : i / hp_d)] + o1[i];\n");
  // A constant part larger than one keeps the plain division.
  EXPECT_EQ(print(stmtOf(OpKind::Add), shape({"2", "d"}),
                  {row("o0", shape({"2"})), row("o1", shape({"2", "d"}))}),
            "const scalar_t v = o0[i / hp_d] + o1[i];\n");
  // A scalar-row operand ([]) broadcasts over the whole row: element 0,
  // with no division.
  EXPECT_EQ(print(stmtOf(OpKind::Div), shape({"heads", "d"}),
                  {row("o0", shape({"heads", "d"})), row("o1", shape({}))}),
            "const scalar_t v = o0[i] / o1[0];\n");
  // A [1] operand too.
  EXPECT_EQ(print(stmtOf(OpKind::Mul), shape({"d"}),
                  {row("o0", shape({"1"})), row("o1", shape({"d"}))}),
            "const scalar_t v = o0[0] * o1[i];\n");
}

TEST(ElementPrinterTest, Eq) {
  EXPECT_EQ(print(stmtOf(OpKind::Eq), shape({"heads", "d"}),
                  {row("o0", shape({"heads", "d"})),
                   row("o1", shape({"heads"}))}),
            "const scalar_t v = hector::trav::eq(o0[i], "
            "o1[(hp_heads == 1 ? 0 : i / hp_d)]);\n");
}

TEST(ElementPrinterTest, Dot) {
  // dot([H, D], [H, D]) -> [H]: element i contracts D elements.
  EXPECT_EQ(print(stmtOf(OpKind::Dot), shape({"heads"}),
                  {row("o0", shape({"heads", "d"})),
                   row("o1", shape({"heads", "d"}))}),
            "scalar_t v = 0;\n"
            "for (int64_t kk = 0; kk < hp_d; ++kk) {\n"
            "  v += o0[i * hp_d + kk] * o1[i * hp_d + kk];\n"
            "}\n");
  // dot([H, D], [D]): the shorter operand is suffix-broadcast.
  EXPECT_EQ(print(stmtOf(OpKind::Dot), shape({"heads"}),
                  {row("o0", shape({"heads", "d"})), row("o1", shape({"d"}))}),
            "scalar_t v = 0;\n"
            "for (int64_t kk = 0; kk < hp_d; ++kk) {\n"
            "  v += o0[i * hp_d + kk] * o1[(i * hp_d + kk) % hp_d];\n"
            "}\n");
}

TEST(ElementPrinterTest, Outer) {
  EXPECT_EQ(print(stmtOf(OpKind::Outer), shape({"k", "n"}),
                  {row("o0", shape({"k"})), row("o1", shape({"n"}))}),
            "const int64_t lead = i / (hp_k * hp_n);\n"
            "const int64_t row = (i / hp_n) % hp_k;\n"
            "const int64_t col = i % hp_n;\n"
            "const scalar_t v = o0[lead * hp_k + row] * o1[lead * hp_n + col];\n");
}

TEST(ElementPrinterTest, SumTo) {
  ir::Stmt s = stmtOf(OpKind::SumTo);
  s.shape = shape({"heads"});
  EXPECT_EQ(print(s, shape({"heads"}), {row("o0", shape({"heads", "d"}))}),
            "scalar_t v = 0;\n"
            "for (int64_t kk = 0; kk < hp_d; ++kk) {\n"
            "  v += o0[i * hp_d + kk];\n"
            "}\n");
}

std::string printSplit(const ir::Stmt &stmt, const ir::Shape &result,
                       const std::vector<OperandRef> &ops) {
  CodeWriter w;
  printLaneSplitElement(w, stmt, result, ops);
  return w.str();
}

TEST(ElementPrinterTest, LaneSplitSumToStridesTheTermsAndSumsTheGroup) {
  ir::Stmt s = stmtOf(OpKind::SumTo);
  s.shape = shape({"heads"});
  const std::vector<OperandRef> ops = {row("o0", shape({"heads", "d"}))};
  EXPECT_EQ(contractionTerms(s, shape({"heads"}), ops), "hp_d");
  // Element i's terms are a run of its row: read a quad at a time where
  // the row allows it, else one at a time.
  EXPECT_EQ(
      printSplit(s, shape({"heads"}), ops),
      "scalar_t v = 0;\n"
      "if (hector::trav::quadRows<scalar_t>(hp_d, (o0 + i * hp_d))) {\n"
      "  for (int kk = 4 * (hector_lane); kk < hp_d; kk += 4 * (kGroupSize)) "
      "{\n"
      "    const auto hector_q0 = hector::trav::rowQuad((o0 + i * hp_d), kk);\n"
      "    HECTOR_UNROLL for (int q = 0; q < 4; ++q) v += hector_q0.v[q];\n"
      "  }\n"
      "}\n"
      "else {\n"
      "  for (int kk = hector_lane; kk < hp_d; kk += kGroupSize) {\n"
      "    v += o0[i * hp_d + kk];\n"
      "  }\n"
      "}\n"
      "v = hector::trav::groupSum<kGroupSize>(v);\n");
}

TEST(ElementPrinterTest, LaneSplitDotOfTwoRowsReadsQuads) {
  const std::vector<OperandRef> ops = {row("o0", shape({"heads", "d"})),
                                       row("o1", shape({"heads", "d"}))};
  const std::string text =
      printSplit(stmtOf(OpKind::Dot), shape({"heads"}), ops);
  EXPECT_NE(text.find("if (hector::trav::quadRows<scalar_t>(hp_d, (o0 + i * "
                      "hp_d), (o1 + i * hp_d))) {"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("HECTOR_UNROLL for (int q = 0; q < 4; ++q) v += "
                      "hector_q0.v[q] * hector_q1.v[q];"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("v += o0[i * hp_d + kk] * o1[i * hp_d + kk];"),
            std::string::npos)
      << text;
}

TEST(ElementPrinterTest, LaneSplitDotKeepsSuffixBroadcasting) {
  const std::vector<OperandRef> ops = {row("o0", shape({"heads", "d"})),
                                       row("o1", shape({"d"}))};
  EXPECT_EQ(contractionTerms(stmtOf(OpKind::Dot), shape({"heads"}), ops),
            "hp_d");
  EXPECT_EQ(printSplit(stmtOf(OpKind::Dot), shape({"heads"}), ops),
            "scalar_t v = 0;\n"
            "for (int kk = hector_lane; kk < hp_d; kk += kGroupSize) {\n"
            "  v += o0[i * hp_d + kk] * o1[(i * hp_d + kk) % hp_d];\n"
            "}\n"
            "v = hector::trav::groupSum<kGroupSize>(v);\n");
}

TEST(ElementPrinterTest, OnlyContractionsHaveALaneSplitForm) {
  const std::vector<OperandRef> ops = {row("o0", shape({"d"})),
                                       row("o1", shape({"d"}))};
  EXPECT_EQ(contractionTerms(stmtOf(OpKind::Mul), shape({"d"}), ops),
            std::nullopt);
  EXPECT_THROW(printSplit(stmtOf(OpKind::Mul), shape({"d"}), ops), EmitError);
}

TEST(ElementPrinterTest, Slice) {
  // slice(a:[H, 2*d]) start d size d -> [H, d].
  ir::Stmt s = stmtOf(OpKind::Slice);
  s.sliceStart = dim("d");
  s.sliceSize = dim("d");
  EXPECT_EQ(print(s, shape({"heads", "d"}), {row("o0", shape({"heads", "2*d"}))}),
            "const scalar_t v = o0[(i / hp_d) * (INT64_C(2) * hp_d) + hp_d + i % "
            "hp_d];\n");
}

TEST(ElementPrinterTest, Embed) {
  // embed(a:[d]) start d size 2*d -> [2*d]: the gradient of the slice.
  ir::Stmt s = stmtOf(OpKind::Embed);
  s.sliceStart = dim("d");
  s.sliceSize = dim("2*d");
  EXPECT_EQ(print(s, shape({"2*d"}), {row("o0", shape({"d"}))}),
            "const int64_t col = i % (INT64_C(2) * hp_d) - hp_d;\n"
            "const scalar_t v = (col >= 0 && col < hp_d) ? o0[(i / (INT64_C(2) * "
            "hp_d)) * hp_d + col] : scalar_t(0);\n");
}

TEST(ElementPrinterTest, Concat) {
  // concat(a:[d], b:[4]) -> [d+4].
  EXPECT_EQ(print(stmtOf(OpKind::Concat), shape({"d+4"}),
                  {row("o0", shape({"d"})), row("o1", shape({"4"}))}),
            "const int64_t lead = i / (hp_d + INT64_C(4));\n"
            "const int64_t col = i % (hp_d + INT64_C(4));\n"
            "scalar_t v = 0;\n"
            "if (col >= INT64_C(0) && col < INT64_C(0) + hp_d) v = o0[lead * "
            "hp_d + col - INT64_C(0)];\n"
            "if (col >= hp_d && col < hp_d + INT64_C(4)) v = o1[lead * "
            "INT64_C(4) + col - hp_d];\n");
}

TEST(ElementPrinterTest, Transpose) {
  // transpose(a:[A, B]) perm [1, 0] -> [B, A]: result (r0, r1) reads a at
  // r1 * B + r0.
  ir::Stmt s = stmtOf(OpKind::Transpose);
  s.perm = {1, 0};
  EXPECT_EQ(print(s, shape({"b", "a"}), {row("o0", shape({"a", "b"}))}),
            "int64_t rest = i;\n"
            "int64_t src = 0;\n"
            "src += (rest % hp_a) * hp_b;\n"
            "rest /= hp_a;\n"
            "src += (rest % hp_b) * INT64_C(1);\n"
            "const scalar_t v = o0[src];\n");
}

TEST(ElementPrinterTest, Reshape) {
  ir::Stmt s = stmtOf(OpKind::Reshape);
  s.shape = shape({"heads", "d"});
  EXPECT_EQ(print(s, s.shape, {row("o0", shape({"heads*d"}))}),
            "const scalar_t v = o0[i];\n");
}

TEST(ElementPrinterTest, UnaryOps) {
  const std::vector<OperandRef> x = {row("o0", shape({"d"}))};
  EXPECT_EQ(print(stmtOf(OpKind::Copy), shape({"d"}), x),
            "const scalar_t v = o0[i];\n");
  EXPECT_EQ(print(stmtOf(OpKind::Neg), shape({"d"}), x),
            "const scalar_t v = -o0[i];\n");
  EXPECT_EQ(print(stmtOf(OpKind::Exp), shape({"d"}), x),
            "const scalar_t v = hector::trav::exp(o0[i]);\n");
  EXPECT_EQ(print(stmtOf(OpKind::Relu), shape({"d"}), x),
            "const scalar_t v = hector::trav::relu(o0[i]);\n");
  EXPECT_EQ(print(stmtOf(OpKind::GeluGrad), shape({"d"}), x),
            "const scalar_t v = hector::trav::geluGrad(o0[i]);\n");
}

TEST(ElementPrinterTest, LeakyReluWithScalarSlope) {
  const std::vector<OperandRef> ops = {row("o0", shape({"heads"})),
                                       scalar("0.20000000000000001")};
  EXPECT_EQ(print(stmtOf(OpKind::LeakyRelu), shape({"heads"}), ops),
            "const scalar_t v = hector::trav::leakyRelu(o0[i], "
            "0.20000000000000001);\n");
  EXPECT_EQ(print(stmtOf(OpKind::LeakyReluGrad), shape({"heads"}), ops),
            "const scalar_t v = hector::trav::leakyReluGrad(o0[i], "
            "0.20000000000000001);\n");
}

/// printLinear's text when one lane reads both rows a quad at a time where
/// `test` holds, else term by term at `a` and `w`.
std::string linearWithQuads(const std::string &test, const std::string &aRow,
                            const std::string &wColumn, const std::string &a,
                            const std::string &w) {
  return "const int64_t col = i % hp_n;\n"
         "const int64_t lead = i / hp_n;\n"
         "scalar_t v = 0;\n"
         "if (" +
         test +
         ") {\n"
         "  for (int64_t kk = 0; kk < hp_k; kk += 4) {\n"
         "    const auto hector_qa = hector::trav::rowQuad(" +
         aRow +
         ", kk);\n"
         "    const auto hector_qw = hector::trav::rowQuad(" +
         wColumn +
         ", kk);\n"
         "    HECTOR_UNROLL for (int q = 0; q < 4; ++q) v += hector_qa.v[q] * "
         "hector_qw.v[q];\n"
         "  }\n"
         "}\n"
         "else {\n"
         "  for (int64_t kk = 0; kk < hp_k; ++kk) {\n"
         "    v += " +
         a + " * " + w +
         ";\n"
         "  }\n"
         "}\n";
}

TEST(ElementPrinterTest, LinearPerHead) {
  // linear(a:[H, K], W:[H, K, N]) -> [H, N]: W[h, kk, col]. A column's
  // terms are contiguous only when N is 1, which the quad loop tests.
  EXPECT_EQ(print(stmtOf(OpKind::Linear), shape({"heads", "n"}),
                  {row("o0", shape({"heads", "k"})),
                   row("o1", shape({"heads", "k", "n"}))}),
            linearWithQuads("hp_n == 1 && hector::trav::quadRows<scalar_t>("
                            "hp_k, (o0 + lead * hp_k), (o1 + lead * hp_k))",
                            "(o0 + lead * hp_k)", "(o1 + lead * hp_k)",
                            "o0[lead * hp_k + kk]",
                            "o1[(lead * hp_k + kk) * hp_n + col]"));
}

TEST(ElementPrinterTest, LinearSharedAndTransposed) {
  // linear(a:[H, K], W:[K, N]): the same W for every head.
  EXPECT_EQ(
      print(stmtOf(OpKind::Linear), shape({"heads", "n"}),
            {row("o0", shape({"heads", "k"})), row("o1", shape({"k", "n"}))}),
      linearWithQuads("hp_n == 1 && hector::trav::quadRows<scalar_t>("
                      "hp_k, (o0 + lead * hp_k), (o1 + INT64_C(0) * "
                      "hp_k))",
                      "(o0 + lead * hp_k)", "(o1 + INT64_C(0) * hp_k)",
                      "o0[lead * hp_k + kk]",
                      "o1[(INT64_C(0) * hp_k + kk) * hp_n + col]"));
  // linear_t(a:[H, K], W:[H, N, K]): W[h, col, kk], a row for every
  // column, so quads need no condition on N.
  EXPECT_EQ(print(stmtOf(OpKind::LinearT), shape({"heads", "n"}),
                  {row("o0", shape({"heads", "k"})),
                   row("o1", shape({"heads", "n", "k"}))}),
            linearWithQuads(
                "hector::trav::quadRows<scalar_t>(hp_k, (o0 + "
                "lead * hp_k), (o1 + (lead * hp_n + col) * hp_k))",
                "(o0 + lead * hp_k)", "(o1 + (lead * hp_n + col) * hp_k)",
                "o0[lead * hp_k + kk]", "o1[(lead * hp_n + col) * hp_k + kk]"));
}

TEST(ElementPrinterTest, LinearWithSeveralConstantColumnsKeepsTheScalarLoop) {
  // W:[K, 8]: a column's terms are 8 apart, so no quad loop.
  EXPECT_EQ(print(stmtOf(OpKind::Linear), shape({"8"}),
                  {row("o0", shape({"k"})), row("o1", shape({"k", "8"}))}),
            "const int64_t col = i % INT64_C(8);\n"
            "const int64_t lead = i / INT64_C(8);\n"
            "scalar_t v = 0;\n"
            "for (int64_t kk = 0; kk < hp_k; ++kk) {\n"
            "  v += o0[lead * hp_k + kk] * o1[(INT64_C(0) * hp_k + kk) * "
            "INT64_C(8) + col];\n"
            "}\n");
  // W:[K, 1]: always contiguous, no run-time test of N.
  const std::string one =
      print(stmtOf(OpKind::Linear), shape({"1"}),
            {row("o0", shape({"k"})), row("o1", shape({"k", "1"}))});
  EXPECT_NE(one.find("if (hector::trav::quadRows<scalar_t>(hp_k, (o0 + lead "
                     "* hp_k), (o1 + INT64_C(0) * hp_k))) {"),
            std::string::npos)
      << one;
}

TEST(ElementPrinterTest, IndentsInsideAnOuterBlock) {
  CodeWriter w(2);
  printElement(w, stmtOf(OpKind::Copy), shape({"d"}), {row("p", shape({"d"}))});
  EXPECT_EQ(w.str(), "    const scalar_t v = p[i];\n");
}

} // namespace
} // namespace hector::codegen
