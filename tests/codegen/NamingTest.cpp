// codegen/Naming.h: C++ expressions for symbolic dims, ratios and scalar
// expressions (golden strings of the emitter).
#include "codegen/Naming.h"

#include <gtest/gtest.h>

namespace hector::codegen {
namespace {

ir::Dim dim(const std::string &text) {
  std::string error;
  std::optional<ir::Dim> d = ir::parseDim(text, &error);
  EXPECT_TRUE(d.has_value()) << text << ": " << error;
  return d.value_or(ir::Dim::constant(0));
}

ir::ScalarExpr lit(double v) {
  ir::ScalarExpr e;
  e.kind = ir::ScalarExpr::Kind::Literal;
  e.literal = v;
  return e;
}
ir::ScalarExpr hyper(const std::string &name) {
  ir::ScalarExpr e;
  e.kind = ir::ScalarExpr::Kind::Hyper;
  e.hyper = name;
  return e;
}
ir::ScalarExpr node(ir::ScalarExpr::Kind kind, std::vector<ir::ScalarExpr> args) {
  ir::ScalarExpr e;
  e.kind = kind;
  e.args = std::move(args);
  return e;
}

TEST(NamingTest, Locals) {
  EXPECT_EQ(hyperLocal("heads"), "hp_heads");
  EXPECT_EQ(sizeLocal("x"), "sz_x");
  EXPECT_EQ(registerLocal("msg"), "r_msg");
  EXPECT_EQ(loopVarLocal("e"), "v_e");
}

TEST(NamingTest, DimExprConstantsAndSymbols) {
  EXPECT_EQ(dimExpr(ir::Dim::constant(64)), "INT64_C(64)");
  EXPECT_EQ(dimExpr(ir::Dim::constant(1)), "INT64_C(1)");
  EXPECT_EQ(dimExpr(ir::Dim::constant(0)), "INT64_C(0)");
  EXPECT_EQ(dimExpr(ir::Dim::symbol("in_dim")), "hp_in_dim");
  EXPECT_EQ(dimExpr(dim("64")), "INT64_C(64)");
  EXPECT_EQ(dimExpr(dim("in_dim")), "hp_in_dim");
}

TEST(NamingTest, DimExprQuotientProductSum) {
  EXPECT_EQ(dimExpr(dim("out_dim/heads")), "(hp_out_dim / hp_heads)");
  EXPECT_EQ(dimExpr(dim("2*d")), "(INT64_C(2) * hp_d)");
  EXPECT_EQ(dimExpr(dim("a*b")), "(hp_a * hp_b)");
  EXPECT_EQ(dimExpr(dim("in_dim+out_dim")), "(hp_in_dim + hp_out_dim)");
  // `heads * (out_dim / heads)` cancels to out_dim.
  EXPECT_EQ(dimExpr(dim("heads * (out_dim / heads)")), "hp_out_dim");
}

TEST(NamingTest, ShapeSize) {
  EXPECT_EQ(shapeSize({}), ir::Dim::constant(1));
  EXPECT_EQ(dimExpr(shapeSize({dim("heads"), dim("out_dim/heads")})),
            "hp_out_dim");
  EXPECT_EQ(dimExpr(shapeSize({dim("2"), dim("d")})), "(INT64_C(2) * hp_d)");
}

TEST(NamingTest, RatioExprExact) {
  EXPECT_EQ(ratioExpr(dim("d"), dim("d")), "INT64_C(1)");
  EXPECT_EQ(ratioExpr(dim("2*d"), dim("d")), "INT64_C(2)");
  EXPECT_EQ(ratioExpr(dim("heads*d"), dim("heads")), "hp_d");
  EXPECT_EQ(ratioExpr(dim("out_dim"), dim("out_dim/heads")), "hp_heads");
  EXPECT_EQ(ratioExpr(dim("64"), dim("16")), "INT64_C(4)");
}

TEST(NamingTest, RatioExprInexactIsRuntimeDivision) {
  // A sum divisor: no symbolic quotient.
  EXPECT_EQ(ratioExpr(dim("d"), dim("d+1")),
            "(hp_d / (hp_d + INT64_C(1)))");
  EXPECT_EQ(ratioExpr(dim("3"), dim("2")), "(INT64_C(3) / INT64_C(2))");
}

TEST(NamingTest, ScalarExpr) {
  using K = ir::ScalarExpr::Kind;
  EXPECT_EQ(scalarExpr(lit(2)), "2");
  EXPECT_EQ(scalarExpr(lit(0.5)), "0.5");
  EXPECT_EQ(scalarExpr(hyper("slope")), "static_cast<double>(hp_slope)");
  // (1 / sqrt(d)): the attention scale.
  EXPECT_EQ(scalarExpr(node(K::Div, {lit(1), node(K::Sqrt, {hyper("d")})})),
            "(1 / std::sqrt(static_cast<double>(hp_d)))");
  EXPECT_EQ(scalarExpr(node(K::Neg, {hyper("a")})),
            "(-static_cast<double>(hp_a))");
  EXPECT_EQ(scalarExpr(node(K::Sub, {node(K::Mul, {lit(2), hyper("a")}),
                                     node(K::Add, {lit(1), lit(3)})})),
            "((2 * static_cast<double>(hp_a)) - (1 + 3))");
}

TEST(NamingTest, RowCounts) {
  EXPECT_EQ(rowCountExpr(intra::RowScheme::EdgeRows), "g.num_edges");
  EXPECT_EQ(rowCountExpr(intra::RowScheme::PairRows), "g.num_pairs");
  EXPECT_EQ(rowCountExpr(intra::RowScheme::NodeRows), "g.num_nodes");
  EXPECT_EQ(rowCountExpr(intra::RowScheme::Global), "INT64_C(1)");
  EXPECT_EQ(rowCountExpr(intra::RowScheme::DstCsrRows), "g.num_edges");
  EXPECT_EQ(rowCountExpr(intra::RowScheme::SrcCsrRows), "g.num_edges");
  EXPECT_EQ(rowCountExpr(intra::RowScheme::ChunkRows), "g.num_sum_chunks");
  EXPECT_EQ(rowCountExpr(intra::RowDomain::EdgeTypes), "g.num_etypes");
  EXPECT_EQ(rowCountExpr(intra::RowDomain::NodeTypes), "g.num_ntypes");
}

} // namespace
} // namespace hector::codegen
