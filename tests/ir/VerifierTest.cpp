// The verifier: one case per rule of docs/ir.md, each asserting the message
// and where it points; plus shape inference and the legal patterns that the
// read/write rules must accept.
#include "ir/InterIRParser.h"
#include "ir/InterIRPrinter.h"
#include "ir/InterIRVerifier.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace hector::ir;

namespace {

/// A module header shared by most cases: lines 1-9, loops start at line 10.
const char *kHead = "module @t {\n"                    // 1
                    "  hyper d : int = 8\n"            // 2
                    "  hyper f : float = 0.5\n"        // 3
                    "  input x : node[d]\n"            // 4
                    "  param W : etype[d, d]\n"        // 5
                    "  param b : global[d]\n"          // 6
                    "  temp z : edge[d]\n"             // 7
                    "  temp agg : node[d]\n"           // 8
                    "  output h : node[d]\n";          // 9

std::string render(const DiagnosticEngine &diags) {
  std::ostringstream os;
  diags.print(os);
  return os.str();
}

/// The shared header declares temps `z` and `agg` that most cases leave
/// unwritten; those two reports are dropped unless a case asks for them.
bool isHeaderNoise(const Diagnostic &d) {
  return d.message == "temp 'z' is never written" ||
         d.message == "temp 'agg' is never written";
}

/// Parses (must succeed) and verifies; returns the verifier's diagnostics.
std::vector<Diagnostic> verify(const std::string &text, bool *ok = nullptr,
                               bool keepNoise = false) {
  DiagnosticEngine diags;
  std::optional<Module> m = parseModule(text, "v.ir", diags);
  EXPECT_TRUE(m.has_value()) << render(diags);
  if (!m)
    return {};
  bool valid = verifyModule(*m, diags);
  EXPECT_EQ(valid, !diags.hasErrors());
  if (ok)
    *ok = valid;
  std::vector<Diagnostic> out;
  for (const Diagnostic &d : diags.diagnostics())
    if (keepNoise || !isHeaderNoise(d))
      out.push_back(d);
  return out;
}

void expectValid(const std::string &text) {
  bool ok = false;
  std::vector<Diagnostic> d = verify(text, &ok, true);
  EXPECT_TRUE(ok);
  for (const Diagnostic &x : d)
    ADD_FAILURE() << x.loc.line << ":" << x.loc.col << ": " << x.message;
}

struct Expected {
  int line, col;
  std::string message;
};

/// The module must produce exactly these errors, in this order.
void expectErrors(const std::string &text, const std::vector<Expected> &want,
                  bool keepNoise = false) {
  bool ok = true;
  std::vector<Diagnostic> got = verify(text, &ok, keepNoise);
  EXPECT_FALSE(ok);
  ASSERT_EQ(got.size(), want.size()) << [&] {
    std::string all;
    for (const Diagnostic &d : got)
      all += std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) +
             ": " + d.message + "\n";
    return all;
  }();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].message, want[i].message);
    EXPECT_EQ(got[i].loc.line, want[i].line) << want[i].message;
    EXPECT_EQ(got[i].loc.col, want[i].col) << want[i].message;
  }
}

/// kHead + the given loops + a closing brace. `h` must be written by them
/// (otherwise "never written" errors join in).
std::string module(const std::string &loops) {
  return std::string(kHead) + loops + "}\n";
}

const char *kWriteH = "  foreach n in nodes {\n"
                      "    h[n] = copy(x[n])\n"
                      "  }\n";

} // namespace

// --- Legal programs --------------------------------------------------------------

TEST(VerifierTest, LegalReadAndWritePatterns) {
  expectValid(module("  foreach e in edges {\n"
                     "    z[e] = linear(x[e.src], W[e.etype])\n"
                     "    agg[e.dst] += copy(z[e])\n"
                     "  }\n"
                     "  foreach n in nodes {\n"
                     "    h[n] = add(agg[n], b)\n"
                     "  }\n"));
  // `agg[e.dst]` inside `n.incoming` is `agg[n]`: complete when the
  // incoming loop closes, readable at `n` afterwards.
  expectValid(module("  foreach n in dst_nodes {\n"
                     "    foreach e in n.incoming {\n"
                     "      z[e] = linear(x[e.src], W[e.etype])\n"
                     "      agg[e.dst] max= copy(z[e])\n"
                     "    }\n"
                     "    foreach e in n.incoming {\n"
                     "      h[e.dst] mean= add(z[e], agg[n])\n"
                     "    }\n"
                     "  }\n"));
}

TEST(VerifierTest, InferResultShape) {
  DiagnosticEngine diags;
  std::optional<Module> m =
      parseModule("module @s {\n  hyper h : int = 2\n  hyper k : int = 3\n"
                  "  hyper n : int = 5\n  input a : node[h, k]\n"
                  "  param W : global[h, k, n]\n  param V : global[n, k]\n"
                  "  param U : global[k, n]\n}\n",
                  "s.ir", diags);
  ASSERT_TRUE(m);
  auto shapeOf = [&](OpKind op, std::vector<std::string> names,
                     std::string *error = nullptr) {
    Stmt s;
    s.op = op;
    for (const std::string &name : names) {
      if (name == "#")
        s.operands.push_back(ScalarExpr{});
      else
        s.operands.push_back(Access{name, {}, {}});
    }
    std::optional<Shape> r = inferResultShape(*m, s, error);
    return r ? shapeStr(*r) : std::string("none");
  };
  EXPECT_EQ(shapeOf(OpKind::Linear, {"a", "W"}), "[h, n]");
  EXPECT_EQ(shapeOf(OpKind::Linear, {"a", "U"}), "[h, n]");
  EXPECT_EQ(shapeOf(OpKind::LinearT, {"a", "V"}), "[h, n]");
  EXPECT_EQ(shapeOf(OpKind::Dot, {"a", "a"}), "[h]");
  EXPECT_EQ(shapeOf(OpKind::Outer, {"a", "a"}), "[h, k, k]");
  EXPECT_EQ(shapeOf(OpKind::Concat, {"a", "a", "a"}), "[h, 3*k]");
  EXPECT_EQ(shapeOf(OpKind::Mul, {"#", "a"}), "[h, k]");
  EXPECT_EQ(shapeOf(OpKind::Tanh, {"W"}), "[h, k, n]");
  std::string error;
  EXPECT_EQ(shapeOf(OpKind::Linear, {"a", "V"}, &error), "none");
  EXPECT_EQ(error, "linear: input [h, k] does not fit weight [n, k] (need "
                   "[.., K] with [K, N], or [H, K] with [H, K, N])");
  EXPECT_EQ(shapeOf(OpKind::Add, {"a", "V"}, &error), "none");
  EXPECT_EQ(error, "add: shapes [h, k] and [n, k] do not broadcast");
  EXPECT_EQ(shapeOf(OpKind::Concat, {"a"}, &error), "none");
  EXPECT_EQ(error, "concat takes at least 2 operands, got 1");
  EXPECT_EQ(shapeOf(OpKind::Exp, {"missing"}, &error), "none");
  EXPECT_EQ(error, "unknown value 'missing'");
}

// --- Declarations ------------------------------------------------------------------

TEST(VerifierTest, DuplicateNamesShareOneNamespace) {
  expectErrors("module @t {\n  hyper d : int = 8\n  input d : node[]\n"
               "  output d : node[]\n}\n",
               {{3, 9, "'d' is already declared at 2:9"},
                {4, 10, "'d' is already declared at 2:9"},
                {4, 10, "output 'd' is never written"}});
}

TEST(VerifierTest, GraphValuesHaveTheirDocumentedSpaces) {
  expectErrors("module @t {\n  input in_degree : node[]\n"
               "  graph rel_in_degree : node[]\n  graph width : node[]\n"
               "  graph out_degree : node[]\n  output h : node[]\n"
               "  foreach n in nodes {\n    h[n] = copy(out_degree[n])\n  }\n}\n",
               {{2, 9, "'in_degree' is reserved for the graph value "
                       "in_degree : node[]"},
                {3, 9, "graph value 'rel_in_degree' must be declared edge[]"},
                {4, 9, "unknown graph value 'width'; graph values are "
                       "in_degree, out_degree and rel_in_degree"}});
}

TEST(VerifierTest, ConstOnlyOnInputs) {
  expectErrors("module @t {\n  param W : global[] const\n  output h : node[]\n"
               "  foreach n in nodes {\n    h[n] = copy(W)\n  }\n}\n",
               {{2, 9, "'W' is param; only inputs can be const"}});
}

TEST(VerifierTest, DimsUseDeclaredIntHypers) {
  expectErrors("module @t {\n  hyper f : float = 2\n  input x : node[f, g]\n"
               "  output h : node[0]\n"
               "  foreach n in nodes {\n    h[n] = reshape(x[n]) shape [f]\n"
               "  }\n}\n",
               {{3, 9, "shape of 'x' uses float hyper-parameter 'f'; "
                       "dimensions need int hyper-parameters"},
                {3, 9, "shape of 'x' uses unknown hyper-parameter 'g'"},
                {4, 10, "shape of 'h' has non-positive dimension 0"},
                {6, 5, "reshape shape uses float hyper-parameter 'f'; "
                       "dimensions need int hyper-parameters"},
                {6, 5, "reshape: [f, g] has f*g elements but [f] has f"}});
}

TEST(VerifierTest, ModuleNeedsAnOutput) {
  expectErrors("module @t {\n  input x : node[]\n}\n",
               {{1, 1, "module '@t' has no output"}});
}

// --- Index paths -------------------------------------------------------------------

TEST(VerifierTest, IndexVariableMustBeBound) {
  expectErrors(module("  foreach n in nodes {\n"
                      "    h[n] = copy(x[m])\n"
                      "  }\n"),
               {{11, 17, "'m' in 'x[m]' is not the variable of an enclosing "
                         "loop"}});
}

TEST(VerifierTest, AttributeStepsFollowTheTable) {
  expectErrors(module("  foreach n in nodes {\n"
                      "    h[n] = copy(x[n.src])\n"
                      "  }\n"),
               {{11, 17, "'.src' does not apply to a node index in "
                         "'x[n.src]'"}});
}

TEST(VerifierTest, PathMustEndInTheValuesSpace) {
  expectErrors(module("  foreach e in edges {\n"
                      "    z[e] = linear(x[e], W[e.etype])\n"
                      "  }\n") ,
               {{11, 19, "index 'e' is an edge row but 'x' is a node value"},
                {9, 10, "output 'h' is never written"}});
}

TEST(VerifierTest, GlobalValuesAreAccessedBare) {
  expectErrors(module("  foreach n in nodes {\n"
                      "    h[n] = add(x, b[n])\n"
                      "  }\n"),
               {{11, 16, "'x' is a node value and needs an index"},
                {11, 19, "global value 'b' must be accessed without an "
                         "index"}});
}

// --- Loops -----------------------------------------------------------------------

TEST(VerifierTest, NeighborLoopsOnlyInsideNodeLoops) {
  expectErrors(module("  foreach e in n.incoming {\n"
                      "  }\n"
                      "  foreach r in etypes {\n"
                      "    foreach e in r.outgoing {\n"
                      "    }\n"
                      "  }\n") + "",
               {{10, 3, "'n.incoming' loop must be directly inside a node "
                        "loop (nodes, dst_nodes or src_nodes)"},
                {13, 5, "'r.outgoing' loop must be directly inside a node "
                        "loop (nodes, dst_nodes or src_nodes)"},
                {9, 10, "output 'h' is never written"}});
}

TEST(VerifierTest, NeighborLoopNamesTheEnclosingVariable) {
  expectErrors(module("  foreach n in nodes {\n"
                      "    foreach m in nodes {\n"
                      "    }\n"
                      "    foreach e in m.incoming {\n"
                      "    }\n"
                      "    h[n] = copy(x[n])\n"
                      "  }\n"),
               {{11, 5, "'nodes' loop must be at top level"},
                {13, 5, "'m.incoming' must range over the enclosing loop's "
                        "variable 'n'"}});
}

TEST(VerifierTest, LoopVariablesAreNotShadowed) {
  expectErrors(module("  foreach n in nodes {\n"
                      "    foreach n in n.outgoing {\n"
                      "    }\n"
                      "    h[n] = copy(x[n])\n"
                      "  }\n"),
               {{11, 5, "loop variable 'n' shadows the variable of the loop "
                        "at 10:3"}});
}

// --- Operands and shapes -----------------------------------------------------------

TEST(VerifierTest, OperandCounts) {
  expectErrors(module("  foreach n in nodes {\n"
                      "    h[n] = linear(x[n])\n"
                      "  }\n"),
               {{11, 5, "linear takes 2 operands, got 1"}});
}

TEST(VerifierTest, ScalarOperandsOnlyWhereAllowed) {
  expectErrors(module("  foreach n in nodes {\n"
                      "    agg[n] = exp(f)\n"
                      "    h[n] = leaky_relu(x[n], agg[n])\n"
                      "  }\n"),
               {{11, 5, "operand 1 of exp must be a value, not a scalar"},
                {12, 5, "leaky_relu's slope (operand 2) must be a scalar"}});
}

TEST(VerifierTest, LinearShapesMustFit) {
  expectErrors("module @t {\n  hyper d : int = 8\n  hyper k : int = 4\n"
               "  input x : node[k]\n  param W : etype[d, k]\n"
               "  output h : node[k]\n"
               "  foreach n in nodes {\n    h[n] = linear(x[n], W[n.ntype])\n"
               "  }\n}\n",
               {{8, 25, "index 'n.ntype' is an ntype row but 'W' is an etype "
                        "value"},
                {8, 5, "linear: input [k] does not fit weight [d, k] (need "
                       "[.., K] with [K, N], or [H, K] with [H, K, N])"}});
}

TEST(VerifierTest, ResultShapeMustMatchTheTarget) {
  expectErrors(module("  foreach n in nodes {\n"
                      "    agg[n] = dot(x[n], x[n])\n"
                      "    h[n] = copy(agg[n])\n"
                      "  }\n"),
               {{11, 5, "result of dot has shape [] but 'agg' is declared "
                        "[d]"}});
}

TEST(VerifierTest, SliceBoundsAndStrayAttributes) {
  Module m;
  {
    DiagnosticEngine diags;
    auto parsed = parseModule(module("  foreach n in nodes {\n"
                                     "    agg[n] = slice(x[n]) start 2 size d\n"
                                     "    h[n] = slice(x[n]) start d size 1\n"
                                     "  }\n"),
                              "v.ir", diags);
    ASSERT_TRUE(parsed);
    m = std::move(*parsed);
  }
  // A pass that sets attributes on the wrong op is caught too.
  Stmt &second = std::get<Stmt>(m.loops[0]->body[1]);
  second.op = OpKind::Copy;
  second.shape = {Dim::constant(3)};
  DiagnosticEngine diags;
  EXPECT_FALSE(verifyModule(m, diags));
  const auto &d = diags.diagnostics();
  ASSERT_EQ(d.size(), 4u) << render(diags);
  EXPECT_EQ(d[0].message, "slice: start 2 + size d exceeds the last dimension d");
  EXPECT_EQ(d[0].loc.line, 11);
  EXPECT_EQ(d[1].message, "only reshape and sum_to take a shape attribute, not copy");
  EXPECT_EQ(d[2].message, "only slice and embed take start/size attributes, not copy");
  EXPECT_EQ(d[2].loc.line, 12);
  EXPECT_EQ(d[3].message, "temp 'z' is never written");
}

TEST(VerifierTest, DerivativeOpShapes) {
  DiagnosticEngine diags;
  std::optional<Module> m =
      parseModule("module @s {\n  hyper h : int = 2\n  hyper k : int = 3\n"
                  "  hyper n : int = 5\n  input a : node[h, k]\n"
                  "  input g : node[h, n]\n  param W : global[h, n, k]\n}\n",
                  "s.ir", diags);
  ASSERT_TRUE(m);
  auto shapeOf = [&](Stmt s, std::string *error = nullptr) {
    std::optional<Shape> r = inferResultShape(*m, s, error);
    return r ? shapeStr(*r) : std::string("none");
  };
  auto stmt = [](OpKind op, std::vector<std::string> names) {
    Stmt s;
    s.op = op;
    for (const std::string &name : names) {
      if (name == "#")
        s.operands.push_back(ScalarExpr{});
      else
        s.operands.push_back(Access{name, {}, {}});
    }
    return s;
  };
  EXPECT_EQ(shapeOf(stmt(OpKind::ReluGrad, {"a"})), "[h, k]");
  EXPECT_EQ(shapeOf(stmt(OpKind::GeluGrad, {"a"})), "[h, k]");
  EXPECT_EQ(shapeOf(stmt(OpKind::LeakyReluGrad, {"a", "#"})), "[h, k]");
  EXPECT_EQ(shapeOf(stmt(OpKind::Eq, {"a", "#"})), "[h, k]");
  EXPECT_EQ(shapeOf(stmt(OpKind::LinearT, {"a", "W"})), "[h, n]");
  Stmt sumTo = stmt(OpKind::SumTo, {"a"});
  sumTo.shape = {Dim::symbol("h")};
  EXPECT_EQ(shapeOf(sumTo), "[h]");
  Stmt embed = stmt(OpKind::Embed, {"a"});
  embed.sliceStart = Dim::constant(1);
  embed.sliceSize = Dim::symbol("k") + Dim::constant(2);
  EXPECT_EQ(shapeOf(embed), "[h, k+2]");
  Stmt transpose = stmt(OpKind::Transpose, {"a"});
  transpose.perm = {1, 0};
  EXPECT_EQ(shapeOf(transpose), "[k, h]");

  std::string error;
  EXPECT_EQ(shapeOf(stmt(OpKind::LeakyReluGrad, {"a", "a"}), &error), "none");
  EXPECT_EQ(error, "leaky_relu_grad's slope (operand 2) must be a scalar");
  EXPECT_EQ(shapeOf(stmt(OpKind::LinearT, {"g", "W"}), &error), "none");
  EXPECT_EQ(error, "linear_t: input [h, n] does not fit weight [h, n, k] "
                   "(need [.., K] with [N, K], or [H, K] with [H, N, K])");
  sumTo.shape = {Dim::symbol("k")};
  EXPECT_EQ(shapeOf(sumTo, &error), "none");
  EXPECT_EQ(error, "sum_to: [k] is not a prefix of [h, k]");
  embed.sliceSize = Dim::symbol("k");
  EXPECT_EQ(shapeOf(embed, &error), "none");
  EXPECT_EQ(error, "embed: start 1 + the last dimension k exceeds size k");
  transpose.perm = {0, 0};
  EXPECT_EQ(shapeOf(transpose, &error), "none");
  EXPECT_EQ(error, "transpose: perm [0, 0] is not a permutation of the 2 "
                   "axes of [h, k]");
}

TEST(VerifierTest, DerivativeOpAttributesOnlyOnTheirOps) {
  Module m;
  {
    DiagnosticEngine diags;
    auto parsed = parseModule(module("  foreach n in nodes {\n"
                                     "    agg[n] = embed(x[n]) start 0 size d\n"
                                     "    h[n] = sum_to(agg[n]) shape [d]\n"
                                     "  }\n"),
                              "v.ir", diags);
    ASSERT_TRUE(parsed);
    m = std::move(*parsed);
  }
  DiagnosticEngine ok;
  EXPECT_TRUE(verifyModule(m, ok) || ok.errorCount() == 1); // z unwritten
  Stmt &second = std::get<Stmt>(m.loops[0]->body[1]);
  second.op = OpKind::Copy;
  second.shape.clear();
  second.perm = {0};
  DiagnosticEngine diags;
  EXPECT_FALSE(verifyModule(m, diags));
  const auto &d = diags.diagnostics();
  ASSERT_EQ(d.size(), 2u) << render(diags);
  EXPECT_EQ(d[0].message, "only transpose takes a perm attribute, not copy");
  EXPECT_EQ(d[0].loc.line, 12);
  EXPECT_EQ(d[1].message, "temp 'z' is never written");
}

TEST(VerifierTest, ScalarsNameExistingHypers) {
  // `g` is no hyper, so it parses as a global access; inside parentheses a
  // name is always a hyper reference.
  expectErrors(module("  foreach n in nodes {\n"
                      "    h[n] = mul(x[n], (f * g))\n"
                      "  }\n"),
               {{11, 5, "unknown hyper-parameter 'g' in scalar expression"}});
}

// --- Writes (rules 1-3) ------------------------------------------------------------

TEST(VerifierTest, SingleAssignment) {
  expectErrors(module("  foreach n in nodes {\n"
                      "    h[n] = copy(x[n])\n"
                      "  }\n"
                      "  foreach n in nodes {\n"
                      "    h[n] = neg(x[n])\n"
                      "  }\n"),
               {{14, 5, "'h' is written more than once (first at 11:5)"}});
}

TEST(VerifierTest, InputsAreNeverWritten) {
  expectErrors(module("  foreach n in nodes {\n"
                      "    x[n] = relu(x[n])\n"
                      "    h[n] = copy(x[n])\n"
                      "  }\n"),
               {{11, 5, "cannot write input 'x'; only temp and output values "
                        "are written"}});
}

TEST(VerifierTest, PlainAssignmentWritesTheInnermostRow) {
  expectErrors(module("  foreach e in edges {\n"
                      "    h[e.dst] = copy(x[e.src])\n"
                      "  }\n"),
               {{11, 5, "plain assignment to 'h[e.dst]' must be indexed by "
                        "the innermost loop variable 'e' alone, so that each "
                        "row is written once"}});
  expectErrors(module("  foreach n in dst_nodes {\n"
                      "    foreach e in n.incoming {\n"
                      "      h[n] = copy(x[e.src])\n"
                      "    }\n"
                      "  }\n"),
               {{12, 7, "plain assignment to 'h[n]' must be indexed by the "
                        "innermost loop variable 'e' alone, so that each row "
                        "is written once"}});
}

TEST(VerifierTest, PlainAssignmentToGlobal) {
  expectErrors("module @t {\n  input x : node[]\n  output s : global[]\n"
               "  foreach n in nodes {\n    s = copy(x[n])\n  }\n}\n",
               {{5, 5, "plain assignment to global value 's' would write it "
                       "once per iteration; reduce into it with +=, mean= or "
                       "max="}});
}

TEST(VerifierTest, ReductionNeedsSeveralContributions) {
  expectErrors(module("  foreach n in nodes {\n"
                      "    h[n] += copy(x[n])\n"
                      "  }\n"),
               {{11, 5, "reduction into 'h[n]' is indexed by the innermost "
                        "loop variable 'n' alone, so each row gets one "
                        "contribution; use '=' or index it through an outer "
                        "loop variable"}});
}

TEST(VerifierTest, TempsMustBeWritten) {
  expectErrors(module(kWriteH),
               {{7, 8, "temp 'z' is never written"},
                {8, 8, "temp 'agg' is never written"}},
               /*keepNoise=*/true);
}

// --- Reads (rule 4) ----------------------------------------------------------------

TEST(VerifierTest, ReadBeforeWrite) {
  expectErrors(module("  foreach e in edges {\n"
                      "    agg[e.dst] += copy(z[e])\n"
                      "    z[e] = linear(x[e.src], W[e.etype])\n"
                      "  }\n"
                      "  foreach n in nodes {\n"
                      "    h[n] = copy(agg[n])\n"
                      "  }\n"),
               {{11, 24, "'z' is read before it is written"}});
}

TEST(VerifierTest, ReadBeforeReductionCompletes) {
  expectErrors(module("  foreach n in dst_nodes {\n"
                      "    foreach e in n.incoming {\n"
                      "      agg[n] += copy(x[e.src])\n"
                      "      z[e] = add(x[e.src], agg[n])\n"
                      "    }\n"
                      "    h[n] = copy(agg[n])\n"
                      "  }\n"),
               {{13, 28, "'agg' is read before its reduction at 12:7 "
                         "completes (after the loop at 11:5)"}});
  // An attribute-path reduction completes only with its top-level loop.
  expectErrors(module("  foreach e in edges {\n"
                      "    agg[e.dst] += copy(x[e.src])\n"
                      "    z[e] = copy(agg[e.dst])\n"
                      "  }\n" +
                      std::string(kWriteH)),
               {{12, 17, "'agg' is read before its reduction at 11:5 "
                         "completes (after the loop at 10:3)"}});
}

TEST(VerifierTest, ReadOfARowOtherIterationsWrite) {
  expectErrors(module("  foreach n in dst_nodes {\n"
                      "    agg[n] = copy(x[n])\n"
                      "    foreach e in n.incoming {\n"
                      "      z[e] = add(agg[e.dst], agg[e.src])\n"
                      "    }\n"
                      "    h[n] = copy(agg[n])\n"
                      "  }\n"),
               {{13, 30, "'agg[e.src]' may read a row that is not written "
                         "yet: 'agg' is written per 'n' by the loop at 10:3; "
                         "read it in a later top-level loop"}});
}

TEST(VerifierTest, AllViolationsAreReportedWithRenderedLocations) {
  DiagnosticEngine diags;
  std::string text = module("  foreach n in nodes {\n"
                            "    h[n] = copy(y[n])\n"
                            "    q[n] = copy(x[n])\n"
                            "  }\n");
  std::optional<Module> m = parseModule(text, "v.ir", diags);
  ASSERT_TRUE(m);
  EXPECT_FALSE(verifyModule(*m, diags));
  EXPECT_EQ(render(diags), "v.ir:11:17: error: unknown value 'y'\n"
                           "    h[n] = copy(y[n])\n"
                           "                ^\n"
                           "v.ir:12:5: error: unknown value 'q'\n"
                           "    q[n] = copy(x[n])\n"
                           "    ^\n"
                           "v.ir:7:8: error: temp 'z' is never written\n"
                           "  temp z : edge[d]\n"
                           "       ^\n"
                           "v.ir:8:8: error: temp 'agg' is never written\n"
                           "  temp agg : node[d]\n"
                           "       ^\n");
}
