// The textual IR: printing, parsing, print -> parse -> print round trips on
// tests/ir/inputs/*.ir, and syntax errors with their locations.
#include "ir/InterIRParser.h"
#include "ir/InterIRPrinter.h"
#include "ir/InterIRVerifier.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace hector::ir;

namespace {

std::string readInput(const std::string &name) {
  std::ifstream in(std::string(HECTOR_SOURCE_DIR) + "/tests/ir/inputs/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string allDiags(const DiagnosticEngine &diags) {
  std::ostringstream os;
  diags.print(os);
  return os.str();
}

Module parseOk(const std::string &text) {
  DiagnosticEngine diags;
  std::optional<Module> m = parseModule(text, "test.ir", diags);
  EXPECT_TRUE(m.has_value()) << allDiags(diags);
  EXPECT_FALSE(diags.hasErrors());
  return m ? std::move(*m) : Module();
}

/// Parses `text`, which must fail, and returns the first error.
Diagnostic parseFails(const std::string &text) {
  DiagnosticEngine diags;
  std::optional<Module> m = parseModule(text, "bad.ir", diags);
  EXPECT_FALSE(m.has_value()) << text;
  EXPECT_EQ(diags.errorCount(), 1) << allDiags(diags);
  return diags.diagnostics().empty() ? Diagnostic() : diags.diagnostics()[0];
}

class RoundTripTest : public testing::TestWithParam<const char *> {};

} // namespace

TEST_P(RoundTripTest, PrintParsePrintIsIdentityAndVerifies) {
  std::string text = readInput(GetParam());
  Module m = parseOk(text);
  EXPECT_EQ(printModule(m), text);
  Module again = parseOk(printModule(m));
  EXPECT_EQ(printModule(again), text);
  EXPECT_EQ(printModule(m.clone()), text);
  DiagnosticEngine diags;
  EXPECT_TRUE(verifyModule(m, diags)) << allDiags(diags);
}

INSTANTIATE_TEST_SUITE_P(Inputs, RoundTripTest,
                         testing::Values("rgcn.ir", "rgat.ir", "hgt.ir",
                                         "compact.ir", "ops.ir",
                                         "grad_ops.ir"));

TEST(PrinterParserTest, ParsedStructureOfRgcn) {
  Module m = parseOk(readInput("rgcn.ir"));
  EXPECT_EQ(m.name, "rgcn");
  ASSERT_EQ(m.hypers.size(), 2u);
  EXPECT_EQ(m.hypers[1].name, "out_dim");
  EXPECT_EQ(m.hypers[1].defaultValue, 64);
  ASSERT_EQ(m.values.size(), 11u);
  const ValueDecl *w = m.findValue("W");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->kind, ValueKind::Param);
  EXPECT_EQ(w->space, Space::EdgeType);
  EXPECT_EQ(shapeStr(w->shape), "[in_dim, out_dim]");
  EXPECT_EQ(w->loc.line, 6);
  EXPECT_EQ(w->loc.col, 9);
  EXPECT_EQ(m.findValue("nope"), nullptr);
  EXPECT_NE(m.findHyper("in_dim"), nullptr);

  ASSERT_EQ(m.loops.size(), 2u);
  const Loop &nodes = *m.loops[1];
  EXPECT_EQ(nodes.kind, LoopKind::DstNodes);
  EXPECT_EQ(nodes.loc.line, 21);
  const Loop &in = *std::get<std::unique_ptr<Loop>>(nodes.body[0]);
  EXPECT_EQ(in.kind, LoopKind::Incoming);
  EXPECT_EQ(in.parent, "n");
  const Stmt &agg = std::get<Stmt>(in.body[0]);
  EXPECT_EQ(agg.reduce, Reduce::Sum);
  EXPECT_EQ(agg.op, OpKind::Mul);
  EXPECT_EQ(agg.loc.line, 23);
  EXPECT_EQ(agg.loc.col, 7);

  const Stmt &norm = std::get<Stmt>(m.loops[0]->body[0]);
  ASSERT_EQ(norm.operands.size(), 2u);
  const auto &one = std::get<ScalarExpr>(norm.operands[0]);
  EXPECT_EQ(one.kind, ScalarExpr::Kind::Literal);
  EXPECT_EQ(one.literal, 1.0);
  const Stmt &msg = std::get<Stmt>(m.loops[0]->body[1]);
  const auto &w_e = std::get<Access>(msg.operands[1]);
  EXPECT_EQ(w_e.value, "W");
  EXPECT_EQ(w_e.index.var, "e");
  EXPECT_EQ(w_e.index.attrs, std::vector<Attr>{Attr::EType});
  EXPECT_EQ(w_e.loc.col, 31);
}

TEST(PrinterParserTest, HyperNamesAreScalarsOtherNamesGlobalAccesses) {
  Module m = parseOk(readInput("rgat.ir"));
  const Loop &edges = *m.loops[0];
  const Stmt &lr = std::get<Stmt>(edges.body.back());
  EXPECT_EQ(lr.op, OpKind::LeakyRelu);
  const auto &slope = std::get<ScalarExpr>(lr.operands[1]);
  EXPECT_EQ(slope.kind, ScalarExpr::Kind::Hyper);
  EXPECT_EQ(slope.hyper, "slope");
  const Stmt &self = std::get<Stmt>(m.loops[1]->body[4]);
  const auto &wself = std::get<Access>(self.operands[1]);
  EXPECT_TRUE(wself.index.isGlobal());
  EXPECT_EQ(wself.str(), "W_self");
}

TEST(PrinterParserTest, ScalarExpressionsAndAttributes) {
  Module m = parseOk(readInput("ops.ir"));
  const Loop &loop = *m.loops[0];
  const Stmt &part = std::get<Stmt>(loop.body[2]);
  EXPECT_EQ(part.op, OpKind::Slice);
  EXPECT_EQ(part.sliceStart.str(), "d-k");
  EXPECT_EQ(part.sliceSize.str(), "k");
  const Stmt &sc = std::get<Stmt>(loop.body[7]);
  const auto &e = std::get<ScalarExpr>(sc.operands[1]);
  EXPECT_EQ(e.kind, ScalarExpr::Kind::Neg);
  ASSERT_EQ(e.args.size(), 1u);
  EXPECT_EQ(e.args[0].kind, ScalarExpr::Kind::Mul);
  EXPECT_EQ(e.args[0].args[1].kind, ScalarExpr::Kind::Sqrt);
  EXPECT_EQ(e.str(), "-(alpha * sqrt((tiny + 2)))");
  EXPECT_EQ(printStmt(sc), "sc[n] = mul(hi[n], -(alpha * sqrt((tiny + 2))))");
}

TEST(PrinterParserTest, DocExampleWithCommentsPrintsCanonically) {
  std::string text = "// leading comment\n"
                     "module   @doc{hyper d:int=64 // trailing\n"
                     "\tinput x : node[ d ]\n"
                     "  output y : node[d]   const\n"
                     "  foreach n in nodes { y[n] = mul(x[n], 1.0) }\n"
                     "  foreach e in edges{}}\n";
  Module m = parseOk(text);
  EXPECT_EQ(printModule(m), "module @doc {\n"
                            "  hyper d : int = 64\n"
                            "\n"
                            "  input x : node[d]\n"
                            "  output y : node[d] const\n"
                            "\n"
                            "  foreach n in nodes {\n"
                            "    y[n] = mul(x[n], 1)\n"
                            "  }\n"
                            "  foreach e in edges {\n"
                            "  }\n"
                            "}\n");
}

TEST(PrinterParserTest, NumbersPrintShortestRoundTrippingText) {
  auto text = [](double v) {
    ScalarExpr e;
    e.literal = v;
    return e.str();
  };
  EXPECT_EQ(text(0.2), "0.2");
  EXPECT_EQ(text(1), "1");
  EXPECT_EQ(text(0.125), "0.125");
  EXPECT_EQ(text(-2.5), "-2.5");
  EXPECT_EQ(text(1e-7), "1e-07");
  EXPECT_EQ(text(1e20), "1e+20");
  EXPECT_EQ(text(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(std::strtod(text(0.1 + 0.2).c_str(), nullptr), 0.1 + 0.2);

  // Through the parser: float hypers read back bit-exactly.
  Module m = parseOk("module @n {\n  hyper a : float = 0.30000000000000004\n"
                     "  hyper b : float = -1e-07\n  hyper c : int = -3\n}\n");
  EXPECT_EQ(m.hypers[0].defaultValue, 0.1 + 0.2);
  EXPECT_EQ(m.hypers[1].defaultValue, -1e-7);
  EXPECT_EQ(m.hypers[2].defaultValue, -3);
  EXPECT_EQ(printModule(m), "module @n {\n  hyper a : float = 0.30000000000000004\n"
                            "  hyper b : float = -1e-07\n"
                            "  hyper c : int = -3\n}\n");
}

TEST(PrinterParserTest, PrintsAModuleBuiltInCode) {
  Module m;
  m.name = "built";
  m.hypers.push_back(HyperDecl{"d", HyperDecl::Type::Int, 16, {}});
  m.values.push_back(
      ValueDecl{"x", ValueKind::Input, Space::Node, {Dim::symbol("d")}, true, {}});
  m.values.push_back(ValueDecl{"s", ValueKind::Output, Space::Node,
                               {}, false, {}});
  auto loop = std::make_unique<Loop>();
  loop->kind = LoopKind::DstNodes;
  loop->var = "v";
  auto in = std::make_unique<Loop>();
  in->kind = LoopKind::Incoming;
  in->var = "e";
  in->parent = "v";
  Stmt st;
  st.target = Access{"s", IndexPath{"v", {}}, {}};
  st.reduce = Reduce::Mean;
  st.op = OpKind::Dot;
  st.operands.push_back(Access{"x", IndexPath{"e", {Attr::Src}}, {}});
  st.operands.push_back(Access{"x", IndexPath{"e", {Attr::Dst}}, {}});
  in->body.emplace_back(std::move(st));
  loop->body.emplace_back(std::move(in));
  m.loops.push_back(std::move(loop));
  std::string expected = "module @built {\n"
                         "  hyper d : int = 16\n"
                         "\n"
                         "  input x : node[d] const\n"
                         "  output s : node[]\n"
                         "\n"
                         "  foreach v in dst_nodes {\n"
                         "    foreach e in v.incoming {\n"
                         "      s[v] mean= dot(x[e.src], x[e.dst])\n"
                         "    }\n"
                         "  }\n"
                         "}\n";
  EXPECT_EQ(printModule(m), expected);
  EXPECT_EQ(printModule(parseOk(expected)), expected);
  DiagnosticEngine diags;
  EXPECT_TRUE(verifyModule(m, diags)) << allDiags(diags);
}

TEST(PrinterParserTest, EmptyModule) {
  EXPECT_EQ(printModule(parseOk("module @e {}")), "module @e {\n}\n");
}

TEST(PrinterParserTest, KeywordsAreContextual) {
  // Values may be called like keywords; the op decides whether attribute
  // keywords follow.
  std::string text = "module @k {\n"
                     "  input shape : node[]\n"
                     "  temp max : node[]\n"
                     "  output start : node[]\n"
                     "\n"
                     "  foreach foreach in nodes {\n"
                     "    max[foreach] = copy(shape[foreach])\n"
                     "    start[foreach] = exp(max[foreach])\n"
                     "  }\n"
                     "}\n";
  EXPECT_EQ(printModule(parseOk(text)), text);
}

namespace {
struct SyntaxCase {
  const char *text;
  int line, col;
  const char *message;
};
} // namespace

TEST(PrinterParserTest, SyntaxErrorsHaveLocations) {
  const SyntaxCase cases[] = {
      {"modul @m {}", 1, 1, "expected 'module', found 'modul'"},
      {"module m {}", 1, 8, "expected '@', found 'm'"},
      {"module @m {\n  input x : node[d]$\n}", 2, 20,
       "unexpected character '$'"},
      {"module @m {\n  input x : vertex[d]\n}", 2, 13,
       "expected a space (global, node, edge, pair, etype, ntype), found "
       "'vertex'"},
      {"module @m {\n  input x : node[d\n}", 3, 1,
       "expected ',' or ']' in shape, found '}'"},
      {"module @m {\n  hyper d : int = 1.5\n}", 2, 9,
       "int hyper-parameter 'd' needs an integer value"},
      {"module @m {\n  hyper d : bool = 1\n}", 2, 13,
       "expected 'int' or 'float', found 'bool'"},
      {"module @m {\n  hyper f : float = 1e999\n}", 2, 21,
       "number 1e999 is out of range"},
      {"module @m {\n  input x : node[a/(b+c)]\n}", 2, 18,
       "invalid dimension 'a / ( b + c )': cannot divide 'a' by 'b+c' "
       "exactly"},
      {"module @m {\n  input x : node[(a]\n}", 2, 20,
       "expected ')' in dimension, found ']'"},
      {"module @m {\n  foreach n in nodes {\n  }\n  input x : node[]\n}", 4,
       3, "declarations must come before the loops"},
      {"module @m {\n  foreach n in vertices {\n  }\n}", 2, 16,
       "expected a loop range (edges, nodes, dst_nodes, src_nodes, etypes, "
       "ntypes, pairs, VAR.incoming, VAR.outgoing), found 'vertices'"},
      {"module @m {\n  foreach n in nodes {\n    foreach e in n.inbound {\n"
       "    }\n  }\n}",
       3, 20, "expected 'incoming' or 'outgoing', found 'inbound'"},
      {"module @m {\n  foreach n in nodes {\n    y[n] = frobnicate(x[n])\n"
       "  }\n}",
       3, 12, "unknown operation 'frobnicate'"},
      {"module @m {\n  foreach n in nodes {\n    y[n] *= exp(x[n])\n  }\n}",
       3, 10, "expected '=', '+=', 'mean=' or 'max=', found '*'"},
      {"module @m {\n  foreach e in edges {\n    y[e] = exp(x[e.source])\n"
       "  }\n}",
       3, 20, "expected src, dst, etype, ntype or pair, found 'source'"},
      {"module @m {\n  foreach n in nodes {\n    y[n] = add(x[n] 2)\n  }\n}",
       3, 21, "expected ',' or ')' after an operand, found '2'"},
      {"module @m {\n  foreach n in nodes {\n    y[n] = mul(x[n], (2 ^ 3))\n"
       "  }\n}",
       3, 25, "unexpected character '^'"},
      {"module @m {\n  foreach n in nodes {\n    y[n] = mul(x[n], (2, 3))\n"
       "  }\n}",
       3, 24,
       "expected '+', '-', '*' or '/' in scalar expression, found ','"},
      {"module @m {\n  foreach n in nodes {\n    y[n] = reshape(x[n])\n"
       "  }\n}",
       4, 3, "expected 'shape', found '}'"},
      {"module @m {\n  foreach n in nodes {\n    y[n] = slice(x[n]) start 0 "
       "length 2\n  }\n}",
       3, 32, "expected 'size', found 'length'"},
      {"module @m {\n  foreach n in nodes {\n    y[n] = copy(x[n])\n", 4, 1,
       "expected a statement, found end of input"},
      {"module @m {\n}\nmodule @n {\n}\n", 3, 1,
       "expected end of input after the module, found 'module'"},
  };
  for (const SyntaxCase &c : cases) {
    SCOPED_TRACE(c.text);
    Diagnostic d = parseFails(c.text);
    EXPECT_EQ(d.message, c.message);
    EXPECT_EQ(d.loc.line, c.line);
    EXPECT_EQ(d.loc.col, c.col);
    EXPECT_EQ(d.loc.file, "bad.ir");
  }
}

TEST(PrinterParserTest, RenderedSyntaxErrorShowsTheLine) {
  DiagnosticEngine diags;
  EXPECT_FALSE(parseModule("module @m {\n\tinput x : nod[d]\n}\n", "f.ir", diags));
  std::ostringstream os;
  diags.print(os);
  EXPECT_EQ(os.str(),
            "f.ir:2:12: error: expected a space (global, node, edge, pair, "
            "etype, ntype), found 'nod'\n"
            "\tinput x : nod[d]\n"
            "\t          ^\n");
}

TEST(PrinterParserTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "module @m {\n  hyper a : float = 1\n  output y : node[]\n"
                     "  foreach n in nodes {\n    y[n] = copy(";
  deep += std::string(250, '-') + "a)\n  }\n}\n";
  EXPECT_EQ(parseFails(deep).message, "scalar expression nested too deeply");

  std::string parens = "module @m {\n  foreach n in nodes {\n    y[n] = copy(";
  for (int i = 0; i < 300; ++i)
    parens += "(1 + ";
  EXPECT_EQ(parseFails(parens).message, "scalar expression nested too deeply");

  std::string loops = "module @m {\n";
  for (int i = 0; i < 100; ++i)
    loops += "foreach e" + std::to_string(i) + " in edges {\n";
  EXPECT_EQ(parseFails(loops).message, "loops nested too deeply");
}

TEST(PrinterParserTest, EveryPrefixOfAValidFileFailsCleanly) {
  // A cheap deterministic fuzz: truncations and byte flips never crash, and
  // a failed parse always reported an error.
  std::string text = readInput("rgat.ir");
  int parsed = 0;
  for (size_t n = 0; n < text.size(); n += 7) {
    DiagnosticEngine diags;
    std::optional<Module> m = parseModule(text.substr(0, n), "p.ir", diags);
    EXPECT_EQ(m.has_value(), !diags.hasErrors());
    parsed += m.has_value();
  }
  EXPECT_EQ(parsed, 0);
  const char noise[] = {'{', '}', '[', ']', '(', ')', '.', ',', '-', '\0', 'x'};
  for (size_t i = 0; i < text.size(); i += 5) {
    std::string mutated = text;
    mutated[i] = noise[i % sizeof noise];
    DiagnosticEngine diags;
    std::optional<Module> m = parseModule(mutated, "p.ir", diags);
    EXPECT_EQ(m.has_value(), !diags.hasErrors());
    // Whatever parses prints to text that parses to the same text.
    if (m) {
      EXPECT_EQ(printModule(parseOk(printModule(*m))), printModule(*m));
    }
  }
}
