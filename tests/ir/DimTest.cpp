// Symbolic dims: canonical forms, arithmetic, parsing, evaluation.
#include "ir/Dim.h"

#include <gtest/gtest.h>

using namespace hector::ir;

namespace {

Dim sym(const char *name) { return Dim::symbol(name); }
Dim num(int64_t v) { return Dim::constant(v); }

Dim parsed(const std::string &text) {
  std::string error;
  std::optional<Dim> d = parseDim(text, &error);
  EXPECT_TRUE(d.has_value()) << text << ": " << error;
  return d.value_or(Dim());
}

std::string parseError(const std::string &text) {
  std::string error;
  std::optional<Dim> d = parseDim(text, &error);
  EXPECT_FALSE(d.has_value()) << text << " parsed as " << d->str();
  return error;
}

} // namespace

TEST(DimTest, CanonicalTextOfTheDocExamples) {
  EXPECT_EQ(sym("in_dim").str(), "in_dim");
  EXPECT_EQ(sym("out_dim").divide(sym("heads"))->str(), "out_dim/heads");
  EXPECT_EQ((num(3) * sym("out_dim")).str(), "3*out_dim");
  EXPECT_EQ((sym("out_dim") + sym("in_dim")).str(), "in_dim+out_dim");
  EXPECT_EQ(num(64).str(), "64");
  EXPECT_EQ((sym("out_dim") * sym("heads")).str(), "heads*out_dim");
  EXPECT_EQ(Dim().str(), "0");
}

TEST(DimTest, CanonicalFormMergesAndOrdersTerms) {
  EXPECT_EQ(parsed("2*d + d").str(), "3*d");
  EXPECT_EQ(parsed("out_dim / heads * heads").str(), "out_dim");
  EXPECT_EQ(parsed("heads * (out_dim / heads)").str(), "out_dim");
  EXPECT_EQ(parsed("d - d").str(), "0");
  EXPECT_EQ(parsed("1 + d").str(), "d+1");
  EXPECT_EQ(parsed("d * d").str(), "d*d");
  EXPECT_EQ(parsed("-d").str(), "-d");
  EXPECT_EQ(parsed("b - a").str(), "-a+b");
  EXPECT_EQ(parsed("a - 2*b - 1").str(), "a-2*b-1");
  EXPECT_EQ(parsed("(a + b) * (a - b)").str(), "a*a-b*b");
  EXPECT_EQ(parsed("6 * a / (2 * b * b)").str(), "3*a/b/b");
  EXPECT_EQ(parsed("3 / h").str(), "3/h");
  EXPECT_EQ(parsed("(a+b)/c").str(), "a/c+b/c");
  EXPECT_EQ(parsed("12 / 4").str(), "3");
}

TEST(DimTest, EqualityIsCanonical) {
  EXPECT_EQ(sym("a") * sym("b"), sym("b") * sym("a"));
  EXPECT_EQ(sym("a") + sym("b") - sym("a"), sym("b"));
  EXPECT_NE(sym("a"), sym("b"));
  EXPECT_EQ(parsed("out_dim/heads") * sym("heads"), sym("out_dim"));
  EXPECT_NE(parsed("out_dim/heads"), sym("out_dim"));
  EXPECT_EQ(num(2) * num(3), num(6));
  EXPECT_EQ(num(5) - num(5), Dim());
}

TEST(DimTest, DivisionOnlyByMonomialsAndExactly) {
  Dim d = num(6) * sym("d");
  EXPECT_EQ(d.divide(num(2))->str(), "3*d");
  EXPECT_EQ(d.divide(num(-3))->str(), "-2*d");
  EXPECT_FALSE(d.divide(num(4)).has_value());
  EXPECT_FALSE(d.divide(Dim()).has_value());
  EXPECT_FALSE(d.divide(sym("a") + sym("b")).has_value());
  EXPECT_EQ(d.divide(sym("d"))->str(), "6");
}

TEST(DimTest, ConstantQueries) {
  EXPECT_TRUE(num(7).isConstant());
  EXPECT_EQ(num(7).constantValue(), 7);
  EXPECT_TRUE(Dim().isConstant());
  EXPECT_EQ(Dim().constantValue(), 0);
  EXPECT_FALSE(sym("a").isConstant());
  EXPECT_FALSE((sym("a") + num(1)).isConstant());
  ASSERT_EQ((sym("a") * num(4)).terms().size(), 1u);
  EXPECT_EQ((sym("a") * num(4)).terms()[0].coeff, 4);
}

TEST(DimTest, StrParsesBackToTheSameDim) {
  const char *texts[] = {"in_dim",    "out_dim/heads", "3*out_dim",
                         "in_dim+out_dim", "64",       "heads*out_dim",
                         "a*a-b*b",   "-a+b",          "3*a/b/b",
                         "1/h",       "a-7",           "-12"};
  for (const char *text : texts) {
    Dim d = parsed(text);
    EXPECT_EQ(d.str(), text);
    EXPECT_EQ(parsed(d.str()), d) << text;
  }
}

TEST(DimTest, EvaluateWithBindings) {
  std::map<std::string, int64_t> b{{"out_dim", 64}, {"heads", 4}, {"d", 3}};
  EXPECT_EQ(parsed("out_dim/heads").evaluate(b), 16);
  EXPECT_EQ(parsed("3*out_dim + 1").evaluate(b), 193);
  EXPECT_EQ(parsed("d*d - out_dim").evaluate(b), -55);
  EXPECT_EQ(Dim().evaluate(b), 0);
  // Terms need not be integral, only the sum: 3/2 + 5/2 = 4.
  std::map<std::string, int64_t> odd{{"a", 3}, {"c", 5}, {"h", 2}};
  EXPECT_EQ(parsed("a/h + c/h").evaluate(odd), 4);
}

TEST(DimTest, EvaluateErrors) {
  std::string error;
  std::map<std::string, int64_t> b{{"out_dim", 10}, {"heads", 3}};
  EXPECT_FALSE(parsed("out_dim/heads").evaluate(b, &error).has_value());
  EXPECT_EQ(error, "dimension 'out_dim/heads' is not an integer when "
                   "heads=3, out_dim=10");

  EXPECT_FALSE(parsed("out_dim/heads").evaluate({{"out_dim", 8}}, &error));
  EXPECT_EQ(error, "unbound symbol 'heads' in dimension 'out_dim/heads'");

  EXPECT_FALSE(parsed("d/h").evaluate({{"d", 8}, {"h", 0}}, &error));
  EXPECT_EQ(error, "division by zero in dimension 'd/h' (h=0)");

  EXPECT_FALSE(parsed("a*a*a").evaluate({{"a", 3000000}}, &error));
  EXPECT_EQ(error, "integer overflow evaluating dimension 'a*a*a'");
}

TEST(DimTest, EvaluateShape) {
  Shape s{sym("heads"), parsed("out_dim/heads")};
  EXPECT_EQ(shapeStr(s), "[heads, out_dim/heads]");
  EXPECT_EQ(shapeStr({}), "[]");
  auto v = evaluateShape(s, {{"heads", 4}, {"out_dim", 64}});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, (std::vector<int64_t>{4, 16}));
  std::string error;
  EXPECT_FALSE(evaluateShape(s, {{"heads", 4}}, &error).has_value());
  EXPECT_EQ(error, "unbound symbol 'out_dim' in dimension 'out_dim/heads'");
}

TEST(DimTest, ParseErrors) {
  EXPECT_EQ(parseError(""), "expected a dimension");
  EXPECT_EQ(parseError("a +"), "expected a dimension");
  EXPECT_EQ(parseError("(a"), "expected ')' in dimension");
  EXPECT_EQ(parseError("a b"), "unexpected 'b' in dimension");
  EXPECT_EQ(parseError("a $ b"), "unexpected '$' in dimension");
  EXPECT_EQ(parseError("a / (b + c)"), "cannot divide 'a' by 'b+c' exactly");
  EXPECT_EQ(parseError("3 / 2"), "cannot divide '3' by '2' exactly");
  EXPECT_EQ(parseError("a / 0"), "cannot divide 'a' by '0' exactly");
  EXPECT_EQ(parseError("99999999999999999999"), "integer overflow in dimension");
  EXPECT_EQ(parseError("4611686018427387904 * 4"),
            "integer overflow in dimension");
  EXPECT_EQ(parseError(std::string(300, '(') + "a" + std::string(300, ')')),
            "dimension expression nested too deeply");
  EXPECT_EQ(parseError(std::string(300, '-') + "a"),
            "dimension expression nested too deeply");
  // Products of sums expand; the term count is bounded.
  std::string sum = "(a+b+c+d+e+f+g+h)";
  std::string product = sum;
  for (int i = 0; i < 5; ++i)
    product += "*" + sum;
  EXPECT_EQ(parseError(product), "dimension expression has too many terms");
}
