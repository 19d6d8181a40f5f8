// In-process tests of the frontend (parse + sema + IR building + verify):
// one test per language feature, checking the printed IR for what the
// feature must produce. Every module compileHgnnSource returns has passed
// the IR verifier.
#include "frontend/Frontend.h"
#include "ir/InterIRPrinter.h"
#include "tests/frontend/TestUtil.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace hector {
namespace {

struct Compiled {
  std::optional<ir::Module> module;
  std::string ir;    ///< printed module when it compiled
  std::string diags; ///< rendered diagnostics
  int errors = 0;
};

Compiled compile(const std::string &text,
                 const std::map<std::string, std::string> &files = {}) {
  Compiled c;
  ir::DiagnosticEngine diags;
  frontend::SourceLoader loader =
      [&files](const std::string &path) -> std::optional<std::string> {
    auto it = files.find(path);
    if (it == files.end())
      return std::nullopt;
    return it->second;
  };
  c.module = frontend::compileHgnnSource(text, "test.hgnn", diags, loader);
  if (c.module)
    c.ir = ir::printModule(*c.module);
  std::ostringstream s;
  diags.print(s);
  c.diags = s.str();
  c.errors = diags.errorCount();
  return c;
}

/// A model with the usual declarations around `body`.
std::string model(const std::string &body, const std::string &decls = "") {
  return "model m {\n"
         "  hyper d = 8\n"
         "  input x : node[d]\n"
         "  weight W : etype[d, d]\n" +
         decls + "  output h : node[d]\n" + body + "}\n";
}

#define EXPECT_IR_HAS(c, text)                                                 \
  EXPECT_NE((c).ir.find(text), std::string::npos)                              \
      << "missing: " << (text) << "\nIR:\n"                                    \
      << (c).ir << (c).diags

TEST(Frontend, MessagePassingWithSum) {
  Compiled c = compile(model("  for e in g.edges() {\n"
                             "    e.m = linear(e.src.x, W[e.etype])\n"
                             "  }\n"
                             "  for n in g.dst_nodes() {\n"
                             "    n.h = sum(e.m for e in n.incoming_edges())\n"
                             "  }\n"));
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_IR_HAS(c, "m[e] = linear(x[e.src], W[e.etype])");
  EXPECT_IR_HAS(c, "    foreach e in n.incoming {\n      h[n] += copy(m[e])");
}

TEST(Frontend, MeanAndMaxOverOutgoingEdges) {
  Compiled c = compile(model(
      "  for n in g.src_nodes() {\n"
      "    n.a = mean(linear(e.dst.x, W[e.etype]) for e in n.outgoing_edges())\n"
      "    n.b = max(e.dst.x for e in n.outgoing_edges())\n"
      "    n.h = n.a + n.b\n"
      "  }\n"));
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_IR_HAS(c, "foreach n in src_nodes");
  EXPECT_IR_HAS(c, "foreach e in n.outgoing");
  EXPECT_IR_HAS(c, "a[n] mean= linear(x[e.dst], W[e.etype])");
  EXPECT_IR_HAS(c, "b[n] max= copy(x[e.dst])");
}

TEST(Frontend, ScatterIntoDestinationFromEdgeLoop) {
  Compiled c = compile(model("  for e in g.edges() {\n"
                             "    e.dst.h += linear(e.src.x, W[e.etype])\n"
                             "  }\n"));
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_IR_HAS(c, "h[e.dst] += linear(x[e.src], W[e.etype])");
}

TEST(Frontend, AccumulateFromNestedLoopStatement) {
  Compiled c = compile(model("  for n in g.dst_nodes() {\n"
                             "    for e in n.incoming_edges() {\n"
                             "      n.acc += e.src.x * 2\n"
                             "    }\n"
                             "    n.h = n.acc\n"
                             "  }\n"));
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_IR_HAS(c, "acc[n] += mul(x[e.src], 2)");
  EXPECT_IR_HAS(c, "h[n] = copy(acc[n])");
}

TEST(Frontend, GraphValuesAreDeclaredWhenUsed) {
  Compiled c = compile(model("  for n in g.nodes() {\n"
                             "    n.h = n.x / n.in_degree + n.x / n.out_degree\n"
                             "  }\n"));
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_IR_HAS(c, "graph in_degree : node[]");
  EXPECT_IR_HAS(c, "graph out_degree : node[]");
  EXPECT_EQ(c.ir.find("rel_in_degree"), std::string::npos);
}

TEST(Frontend, TransposedWeightIsLinearT) {
  Compiled c = compile(model("  for n in g.nodes() {\n"
                             "    n.h = linear(n.x, L.T)\n"
                             "  }\n",
                             "  weight L : [d, d]\n"));
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_IR_HAS(c, "h[n] = linear_t(x[n], L)");
}

TEST(Frontend, StringDataNamesAndLineJoining) {
  Compiled c = compile(model("  for e in g.edges() {\n"
                             "    e[\"att\"] = dot(e.src.x,\n"
                             "                   e.dst.x)\n"
                             "  }\n"
                             "  for n in g.dst_nodes() {\n"
                             "    n.h = sum(e.att * e.src.x\n"
                             "              for e in n.incoming_edges())\n"
                             "  }\n"));
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_IR_HAS(c, "att[e] = dot(x[e.src], x[e.dst])");
  EXPECT_IR_HAS(c, "h[n] += mul(att[e], x[e.src])");
}

TEST(Frontend, HeadsReshapeConcatSliceSplit) {
  Compiled c = compile(
      "model m {\n"
      "  hyper heads = 2\n"
      "  hyper d = 8\n"
      "  input x : node[d]\n"
      "  output h : node[d + 2 * d / heads]\n"
      "  for n in g.nodes() {\n"
      "    r = reshape(n.x, heads, d / heads)\n"
      "    a = split(n.x, heads, 1)\n"
      "    b = slice(n.x, 0, d / heads)\n"
      "    n.h = concat(reshape(r, d), a, b)\n"
      "  }\n"
      "}\n");
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_IR_HAS(c, "r[n] = reshape(x[n]) shape [heads, d/heads]");
  EXPECT_IR_HAS(c, "a[n] = slice(x[n]) start d/heads size d/heads");
  EXPECT_IR_HAS(c, "b[n] = slice(x[n]) start 0 size d/heads");
  EXPECT_IR_HAS(c, "h[n] = concat(");
}

TEST(Frontend, ElementwiseMathAndScalars) {
  Compiled c = compile(
      "model m {\n"
      "  hyper d = 8\n"
      "  hyper slope = 0.2\n"
      "  input x : node[d]\n"
      "  output h : node[d]\n"
      "  for n in g.nodes() {\n"
      "    c = 1 / sqrt(d)\n"
      "    n.h = exp(log(relu(gelu(sigmoid(tanh(sqrt(n.x))))))) * c - "
      "leaky_relu(-n.x, slope)\n"
      "  }\n"
      "}\n");
  ASSERT_TRUE(c.module) << c.diags;
  for (const char *op : {"exp(", "log(", "relu(", "gelu(", "sigmoid(",
                         "tanh(", "sqrt(x[n])", "neg(x[n])",
                         "leaky_relu(h_", "slope)"})
    EXPECT_IR_HAS(c, op);
  EXPECT_IR_HAS(c, "(1 / sqrt(d))");
}

TEST(Frontend, DetachStopsTheGradientOfItsOperand) {
  // A softmax written out by hand, stable and with the max outside the
  // gradient as edge_softmax has it: the max reduces detach(...) directly.
  Compiled c = compile(
      model("  for e in g.edges() {\n"
            "    e.score = dot(linear(e.src.x, W[e.etype]), e.dst.x)\n"
            "  }\n"
            "  for n in g.dst_nodes() {\n"
            "    n.m = max(detach(e.score) for e in n.incoming_edges())\n"
            "  }\n"
            "  for e in g.edges() {\n"
            "    e.ex = exp(e.score - e.dst.m)\n"
            "  }\n"
            "  for n in g.dst_nodes() {\n"
            "    n.s = sum(e.ex for e in n.incoming_edges())\n"
            "    n.u = sum(e.ex * e.src.x for e in n.incoming_edges())\n"
            "    n.h = n.u / n.s * detach(n.x)\n"
            "  }\n"));
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_IR_HAS(c, "m[n] max= detach(score[e])");
  EXPECT_IR_HAS(c, "= detach(x[n])");

  Compiled wrong = compile(model("  for n in g.nodes() {\n"
                                 "    n.h = detach(n.x, n.x)\n  }\n"));
  EXPECT_FALSE(wrong.module);
  EXPECT_NE(wrong.diags.find("test.hgnn:7:11: error:"), std::string::npos)
      << wrong.diags;
  EXPECT_NE(wrong.diags.find("detach"), std::string::npos) << wrong.diags;
}

TEST(Frontend, OuterAndPerHeadLinear) {
  Compiled c = compile(
      "model m {\n"
      "  hyper heads = 2\n"
      "  hyper d = 4\n"
      "  input x : node[heads, d]\n"
      "  weight Wh : etype[heads, d, d]\n"
      "  output h : node[heads, d, d]\n"
      "  for e in g.edges() {\n"
      "    e.dst.h += outer(linear(e.src.x, Wh[e.etype]), e.dst.x)\n"
      "  }\n"
      "}\n");
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_IR_HAS(c, "h_0[e] = linear(x[e.src], Wh[e.etype])");
  EXPECT_IR_HAS(c, "h[e.dst] += outer(h_0[e], x[e.dst])");
}

TEST(Frontend, EdgeSoftmaxSplitsTheLoop) {
  Compiled c = compile(model("  for e in g.edges() {\n"
                             "    e.a = edge_softmax(dot(e.src.x, e.dst.x))\n"
                             "    e.m = e.a * e.src.x\n"
                             "  }\n"
                             "  for n in g.dst_nodes() {\n"
                             "    n.h = sum(e.m for e in n.incoming_edges())\n"
                             "  }\n"));
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_IR_HAS(c, "a_score[e] = dot(x[e.src], x[e.dst])");
  EXPECT_IR_HAS(c, "a_max[n] max= detach(a_score[e])");
  EXPECT_IR_HAS(c, "a_shifted[e] = sub(a_score[e], a_max[e.dst])");
  EXPECT_IR_HAS(c, "a_exp[e] = exp(a_shifted[e])");
  EXPECT_IR_HAS(c, "a_sum[n] += copy(a_exp[e])");
  EXPECT_IR_HAS(c, "  foreach e in edges {\n    a[e] = div(a_exp[e], "
                   "a_sum[e.dst])\n    m[e] = mul(a[e], x[e.src])");
  EXPECT_EQ(c.module->loops.size(), 6u);
}

TEST(Frontend, ImportedDefsAreInlined) {
  std::map<std::string, std::string> files = {
      {"lib/act.hgnn", "import \"more.hgnn\"\n"
                       "def swish(v) {\n  return v * sigmoid(v)\n}\n"},
      {"lib/more.hgnn", "def twice(v) {\n  t = v + v\n  return t\n}\n"}};
  Compiled c = compile("import \"lib/act.hgnn\"\n" +
                           model("  for n in g.nodes() {\n"
                                 "    n.h = twice(swish(n.x))\n"
                                 "  }\n"),
                       files);
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_IR_HAS(c, "sigmoid(x[n])");
  EXPECT_IR_HAS(c, "h[n] = add(");
}

TEST(Frontend, ImportsResolveRelativeToTheImporterOnDisk) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(test::tempDir()) / "imports";
  fs::create_directories(dir / "lib");
  std::ofstream(dir / "lib" / "act.hgnn")
      << "def double(v) {\n  return 2 * v\n}\n";
  std::ofstream(dir / "main.hgnn")
      << "import \"lib/act.hgnn\"\n"
      << model("  for n in g.nodes() {\n    n.h = double(n.x)\n  }\n");
  ir::DiagnosticEngine diags;
  std::optional<ir::Module> m =
      frontend::compileHgnn((dir / "main.hgnn").string(), diags);
  std::ostringstream s;
  diags.print(s);
  ASSERT_TRUE(m) << s.str();
  EXPECT_NE(ir::printModule(*m).find("h[n] = mul(2, x[n])"),
            std::string::npos);
}

TEST(Frontend, LocalsGetUniqueNamesPerLoop) {
  Compiled c = compile(model("  for e in g.edges() {\n"
                             "    t = e.src.x * 2\n"
                             "    e.m = t\n"
                             "  }\n"
                             "  for n in g.dst_nodes() {\n"
                             "    t = n.x * 3\n"
                             "    n.h = t + sum(e.m for e in n.incoming_edges())\n"
                             "  }\n"));
  ASSERT_TRUE(c.module) << c.diags;
  EXPECT_IR_HAS(c, "temp t : edge[d]");
  EXPECT_IR_HAS(c, "temp t_1 : node[d]");
}

TEST(Frontend, ReportsSeveralErrorsPerRun) {
  Compiled c = compile(model("  for e in g.edges() {\n"
                             "    e.a = foo\n"
                             "    e.b = e.x\n"
                             "    e.c = linear(e.src.x, W)\n"
                             "  }\n"));
  EXPECT_FALSE(c.module);
  EXPECT_GE(c.errors, 3) << c.diags;
}

TEST(Frontend, ErrorsAreRenderedWithSourceLineAndCaret) {
  Compiled c = compile(model("  for e in g.edges() {\n"
                             "    e.a = foo\n"
                             "  }\n"));
  EXPECT_NE(c.diags.find("test.hgnn:7:11: error: unknown name 'foo'\n"
                         "    e.a = foo\n"
                         "          ^"),
            std::string::npos)
      << c.diags;
}

TEST(Frontend, HostileInputsFailCleanly) {
  const std::string cases[] = {
      "",
      "\n\n\n",
      "model",
      "model m {",
      "}}}}",
      std::string(5000, '('),
      std::string(5000, '-') + "x",
      std::string(3000, '{'),
      "model m { for e in g.edges() { e.a = " + std::string(400, '[') + " } }",
      "\xff\xfe\x00garbage",
      "def f(x) {\n return f(f(x)) \n}\nmodel m {\n output h : node[1]\n for "
      "n in g.nodes() {\n n.h = f(1)\n }\n}\n",
      "def f(x) {\n return x*x*x*x*x*x*x*x \n}\nmodel m {\n output h : "
      "node[1]\n for n in g.nodes() {\n n.h = f(f(f(f(f(f(f(f(f(1)))))))))\n "
      "}\n}\n",
  };
  for (const std::string &text : cases) {
    Compiled c = compile(text);
    EXPECT_FALSE(c.module);
    EXPECT_GE(c.errors, 1) << text.substr(0, 80);
  }
}

TEST(Frontend, FuzzRegressionsDoNotCrash) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::path(HECTOR_SOURCE_DIR) / "tests" / "fuzz" / "regressions";
  if (!fs::exists(dir))
    GTEST_SKIP() << "no regression inputs";
  int count = 0;
  for (const auto &entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().filename() == "README.md")
      continue;
    ++count;
    Compiled c = compile(test::slurp(entry.path().string()));
    // Either outcome is fine; crashing, hanging or leaking is not.
    EXPECT_TRUE(c.module || c.errors > 0) << entry.path();
  }
  RecordProperty("inputs", count);
}

} // namespace
} // namespace hector
