// The interpreter, op by op and reduction by reduction, on one small
// multigraph with hand-computed results (the numbers in the comments are
// the derivations).
#include "runtime/Interpreter.h"
#include "ir/InterIRParser.h"
#include "ir/InterIRVerifier.h"
#include "runtime/Errors.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace hector::runtime {
namespace {

torch::Tensor longs(std::vector<int64_t> v) {
  return torch::tensor(v, torch::kLong);
}

torch::Tensor doubles(std::vector<double> v, std::vector<int64_t> shape) {
  return torch::tensor(v, torch::kDouble).reshape(shape);
}

// 4 nodes (node 3 isolated; node types 0 1 0 1), 3 relations (relation 2
// has no edge):
//   e0: 0->1 r0   e1: 2->1 r0   e2: 2->1 r0 (multi-edge)
//   e3: 1->2 r1   e4: 2->2 r1 (self-loop)
// Incoming: node1 <- {0, 2, 2}, node2 <- {1, 2}. Outgoing: node0 -> {1},
// node1 -> {2}, node2 -> {1, 1, 2}.
Graph &graph() {
  static Graph g(longs({0, 2, 2, 1, 2}), longs({1, 1, 1, 2, 2}),
                 longs({0, 0, 0, 1, 1}), longs({0, 1, 0, 1}), 4, 3, 2);
  return g;
}

// x[v] = [2v+1, 2v+2]: x0 = [1,2], x1 = [3,4], x2 = [5,6], x3 = [7,8].
torch::Tensor features() { return doubles({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}); }

ir::Module parse(const std::string &text) {
  ir::DiagnosticEngine diags;
  diags.addSource("test.ir", text);
  std::optional<ir::Module> m = ir::parseModule(text, "test.ir", diags);
  if (m)
    ir::verifyModule(*m, diags);
  if (!m || diags.hasErrors()) {
    std::ostringstream os;
    diags.print(os);
    throw std::runtime_error("test IR does not verify:\n" + os.str());
  }
  return std::move(*m);
}

TensorMap run(const std::string &text, const TensorMap &inputs,
              const TensorMap &params = {}, InterpretOptions options = {}) {
  ir::Module m = parse(text);
  return interpret(m, graph(), inputs, params, options);
}

void expectValues(const torch::Tensor &t, std::vector<int64_t> shape,
                  std::vector<double> expected, double tol = 1e-12) {
  ASSERT_TRUE(t.defined());
  ASSERT_EQ(t.sizes().vec(), shape);
  auto c = t.detach().to(torch::kDouble).contiguous();
  ASSERT_EQ(c.numel(), static_cast<int64_t>(expected.size()));
  const double *p = c.data_ptr<double>();
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(p[i], expected[i], tol) << "element " << i;
}

// The start of every test module: one node input x : node[2].
const std::string kHead = R"(module @t {
  hyper d : int = 2
  input x : node[d]
)";

TEST(Interpreter, SumOverIncomingEdges) {
  auto out = run(kHead + R"(
  output s : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      s[n] += copy(x[e.src])
    }
  }
})",
                 {{"x", features()}});
  // node1: x0 + x2 + x2 = [11, 14]; node2: x1 + x2 = [8, 10].
  expectValues(out.at("s"), {4, 2}, {0, 0, 11, 14, 8, 10, 0, 0});
}

TEST(Interpreter, MeanOverIncomingEdges) {
  auto out = run(kHead + R"(
  output s : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      s[n] mean= copy(x[e.src])
    }
  }
})",
                 {{"x", features()}});
  expectValues(out.at("s"), {4, 2}, {0, 0, 11.0 / 3, 14.0 / 3, 4, 5, 0, 0});
}

TEST(Interpreter, MaxOverIncomingEdgesIgnoresTheInitialZero) {
  auto out = run(kHead + R"(
  temp y : node[d]
  output s : node[d]
  foreach n in nodes {
    y[n] = neg(x[n])
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      s[n] max= copy(y[e.src])
    }
  }
})",
                 {{"x", features()}});
  // All contributions are negative: node1 max(-1,-5,-5) = -1, max(-2,-6,-6)
  // = -2; node2 max(-3,-5) = -3, max(-4,-6) = -4; empty rows are 0.
  expectValues(out.at("s"), {4, 2}, {0, 0, -1, -2, -3, -4, 0, 0});
}

TEST(Interpreter, SumOverOutgoingEdges) {
  auto out = run(kHead + R"(
  output s : node[d]
  foreach n in src_nodes {
    foreach e in n.outgoing {
      s[n] += copy(x[e.dst])
    }
  }
})",
                 {{"x", features()}});
  // node0: x1; node1: x2; node2: x1 + x1 + x2 = [11, 14].
  expectValues(out.at("s"), {4, 2}, {3, 4, 5, 6, 11, 14, 0, 0});
}

TEST(Interpreter, EdgeLoopReductionsThroughDstAndSrc) {
  auto out = run(kHead + R"(
  output h : node[d]
  output m : node[d]
  foreach e in edges {
    h[e.dst] += copy(x[e.src])
    m[e.src] mean= copy(x[e.dst])
  }
})",
                 {{"x", features()}});
  expectValues(out.at("h"), {4, 2}, {0, 0, 11, 14, 8, 10, 0, 0});
  // node2 sends to 1, 1, 2: mean(x1, x1, x2) = [11/3, 14/3].
  expectValues(out.at("m"), {4, 2}, {3, 4, 5, 6, 11.0 / 3, 14.0 / 3, 0, 0});
}

TEST(Interpreter, GlobalReductions) {
  auto out = run(kHead + R"(
  output total : global[d]
  output avg : global[d]
  output top : global[d]
  foreach e in edges {
    total += copy(x[e.src])
    avg mean= copy(x[e.src])
    top max= copy(x[e.src])
  }
})",
                 {{"x", features()}});
  // Sources 0, 2, 2, 1, 2: x0 + 3 x2 + x1 = [19, 24].
  expectValues(out.at("total"), {2}, {19, 24});
  expectValues(out.at("avg"), {2}, {19.0 / 5, 24.0 / 5});
  expectValues(out.at("top"), {2}, {5, 6});
}

TEST(Interpreter, GraphValues) {
  auto out = run(kHead + R"(
  graph in_degree : node[]
  graph out_degree : node[]
  graph rel_in_degree : edge[]
  output i : node[]
  output o : node[]
  output r : edge[]
  foreach n in nodes {
    i[n] = copy(in_degree[n])
    o[n] = copy(out_degree[n])
  }
  foreach e in edges {
    r[e] = div(1, rel_in_degree[e])
  }
})",
                 {{"x", features()}});
  expectValues(out.at("i"), {4}, {0, 3, 2, 0});
  expectValues(out.at("o"), {4}, {1, 1, 3, 0});
  expectValues(out.at("r"), {5}, {1.0 / 3, 1.0 / 3, 1.0 / 3, 0.5, 0.5});
}

TEST(Interpreter, LinearByEdgeTypeAndItsGradient) {
  // W[0] picks the first feature, W[1] the second, W[2] is never used.
  auto w = doubles({1, 0, 0, 1, 10, 10}, {3, 2, 1}).requires_grad_();
  auto out = run(kHead + R"(
  param W : etype[d, 1]
  output m : edge[1]
  foreach e in edges {
    m[e] = linear(x[e.src], W[e.etype])
  }
})",
                 {{"x", features()}}, {{"W", w}});
  // e0: x0[0] = 1; e1, e2: x2[0] = 5; e3: x1[1] = 4; e4: x2[1] = 6.
  expectValues(out.at("m"), {5, 1}, {1, 5, 5, 4, 6});
  out.at("m").sum().backward();
  // dW[r] = sum of x[src] over the edges of r: r0: x0 + 2 x2, r1: x1 + x2.
  expectValues(w.grad(), {3, 2, 1}, {11, 14, 8, 10, 0, 0});
}

TEST(Interpreter, LinearByNodeTypeAndTransposedAndPerHead) {
  // U[0] = I, U[1] = 2 I.
  auto u = doubles({1, 0, 0, 1, 2, 0, 0, 2}, {2, 2, 2});
  // T in torch.nn.Linear layout [N=3, K=2]: rows pick x[0], x[1], x[0]+x[1].
  auto t = doubles({1, 0, 0, 1, 1, 1}, {3, 2});
  // Per-head weights [H=2, K=1, N=1]: head 0 times 3, head 1 times 4.
  auto h = doubles({3, 4}, {2, 1, 1});
  auto out = run(kHead + R"(
  param U : ntype[d, d]
  param T : global[3, d]
  param H : global[d, 1, 1]
  output y : node[d]
  output z : node[3]
  temp xh : node[d, 1]
  output w : node[d, 1]
  foreach n in nodes {
    y[n] = linear(x[n], U[n.ntype])
    z[n] = linear_t(x[n], T)
    xh[n] = reshape(x[n]) shape [d, 1]
    w[n] = linear(xh[n], H)
  }
})",
                 {{"x", features()}}, {{"U", u}, {"T", t}, {"H", h}});
  // Node types 0 1 0 1: odd nodes are doubled.
  expectValues(out.at("y"), {4, 2}, {1, 2, 6, 8, 5, 6, 14, 16});
  expectValues(out.at("z"), {4, 3}, {1, 2, 3, 3, 4, 7, 5, 6, 11, 7, 8, 15});
  expectValues(out.at("w"), {4, 2, 1}, {3, 8, 9, 16, 15, 24, 21, 32});
}

TEST(Interpreter, LinearWithPerRowWeightsInATypeLoop) {
  // a[r] . W[r] in an etypes loop: the weight row is the loop's own row.
  auto a = doubles({1, 2, 3, 4, 5, 6}, {3, 2});
  auto w = doubles({1, 1, 2, 0, 0, 3}, {3, 2, 1});
  auto out = run(kHead + R"(
  param a : etype[d]
  param W : etype[d, 1]
  output y : etype[1]
  foreach r in etypes {
    y[r] = linear(a[r], W[r])
  }
})",
                 {{"x", features()}}, {{"a", a}, {"W", w}});
  // [1,2].[1,1] = 3; [3,4].[2,0] = 6; [5,6].[0,3] = 18.
  expectValues(out.at("y"), {3, 1}, {3, 6, 18});
}

TEST(Interpreter, DotAndOuter) {
  auto out = run(kHead + R"(
  output p : edge[]
  output o : node[d, d]
  foreach e in edges {
    p[e] = dot(x[e.src], x[e.dst])
  }
  foreach n in nodes {
    o[n] = outer(x[n], x[n])
  }
})",
                 {{"x", features()}});
  // x0.x1 = 11; x2.x1 = 39 (twice); x1.x2 = 39; x2.x2 = 61.
  expectValues(out.at("p"), {5}, {11, 39, 39, 39, 61});
  auto o = out.at("o");
  expectValues(o[0], {2, 2}, {1, 2, 2, 4});
  expectValues(o[3], {2, 2}, {49, 56, 56, 64});
}

TEST(Interpreter, UnaryOps) {
  auto c = doubles({-2, -0.5, 0.5, 2}, {4});
  auto out = run(R"(module @t {
  hyper slope : float = 0.1
  param c : global[4]
  output neg_ : ntype[4]
  output exp_ : ntype[4]
  output relu_ : ntype[4]
  output leaky : ntype[4]
  output gelu_ : ntype[4]
  output sig : ntype[4]
  output tanh_ : ntype[4]
  output copy_ : ntype[4]
  output det : ntype[4]
  temp e : global[4]
  output log_ : ntype[4]
  output sqrt_ : ntype[4]
  foreach t in ntypes {
    neg_[t] = neg(c)
    exp_[t] = exp(c)
    relu_[t] = relu(c)
    leaky[t] = leaky_relu(c, slope)
    gelu_[t] = gelu(c)
    sig[t] = sigmoid(c)
    tanh_[t] = tanh(c)
    copy_[t] = copy(c)
    det[t] = detach(c)
    e += exp(c)
  }
  foreach t in ntypes {
    log_[t] = log(e)
    sqrt_[t] = sqrt(e)
  }
})",
                 {}, {{"c", c}});
  // Every node type (2 rows) gets the same row.
  auto row = [&](const char *name) { return out.at(name)[1]; };
  expectValues(row("neg_"), {4}, {2, 0.5, -0.5, -2});
  expectValues(row("exp_"), {4},
               {0.1353352832366127, 0.6065306597126334, 1.6487212707001282,
                7.38905609893065});
  expectValues(row("relu_"), {4}, {0, 0, 0.5, 2});
  expectValues(row("leaky"), {4}, {-0.2, -0.05, 0.5, 2});
  // Exact GELU x * Phi(x) (not the tanh approximation).
  expectValues(row("gelu_"), {4},
               {-0.04550026389635842, -0.15426876936299344, 0.34573123063700656,
                1.9544997361036416});
  expectValues(row("sig"), {4},
               {0.11920292202211755, 0.3775406687981454, 0.6224593312018546,
                0.8807970779778823});
  expectValues(row("tanh_"), {4},
               {-0.9640275800758169, -0.46211715726000974, 0.46211715726000974,
                0.9640275800758169});
  expectValues(row("copy_"), {4}, {-2, -0.5, 0.5, 2});
  expectValues(row("det"), {4}, {-2, -0.5, 0.5, 2});
  // e = 2 exp(c) (two node types): log e = c + log 2, sqrt e = sqrt(2 e^c).
  expectValues(row("log_"), {4},
               {-2 + 0.6931471805599453, -0.5 + 0.6931471805599453,
                0.5 + 0.6931471805599453, 2 + 0.6931471805599453});
  expectValues(row("sqrt_"), {4},
               {0.520260095022889, 1.1013906298063676, 1.8158861587115687,
                3.844231028159117});
}

TEST(Interpreter, BinaryOpsBroadcastScalarsAndPrefixes) {
  auto w = doubles({1, 10, 100}, {3});
  auto out = run(kHead + R"(
  param w : global[3]
  temp m : node[d, 3]
  output prod : node[d, 3]
  output plus : node[d]
  output inv : node[d]
  output diff : node[d]
  foreach n in nodes {
    m[n] = outer(x[n], w)
    prod[n] = mul(x[n], m[n])
    plus[n] = add(x[n], 1.5)
    inv[n] = div(1, x[n])
    diff[n] = sub((2 * 3), x[n])
  }
})",
                 {{"x", features()}}, {{"w", w}});
  // A [d] value times a [d, 3] one broadcasts over the trailing axis:
  // node0: [1 * [1,10,100], 2 * [2,20,200]].
  expectValues(out.at("prod")[0], {2, 3}, {1, 10, 100, 4, 40, 400});
  expectValues(out.at("prod")[3], {2, 3}, {49, 490, 4900, 64, 640, 6400});
  expectValues(out.at("plus"), {4, 2},
               {2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5});
  expectValues(out.at("inv")[1], {2}, {1.0 / 3, 0.25});
  expectValues(out.at("diff"), {4, 2}, {5, 4, 3, 2, 1, 0, -1, -2});
}

TEST(Interpreter, ReshapeConcatSlice) {
  auto out = run(kHead + R"(
  output r : node[d, 1]
  output c : node[2*d]
  output s : node[d]
  foreach n in nodes {
    r[n] = reshape(x[n]) shape [d, 1]
    c[n] = concat(x[n], x[n])
    s[n] = slice(c[n]) start 1 size d
  }
})",
                 {{"x", features()}});
  expectValues(out.at("r")[2], {2, 1}, {5, 6});
  expectValues(out.at("c")[1], {4}, {3, 4, 3, 4});
  expectValues(out.at("s"), {4, 2}, {2, 1, 4, 3, 6, 5, 8, 7});
}

TEST(Interpreter, PairsAndTypePaths) {
  auto b = doubles({10, 20}, {2});        // per node type
  auto r = doubles({100, 200, 300}, {3}); // per edge type
  auto out =
      run(kHead + R"(
  param b : ntype[]
  param r : etype[]
  param one : global[]
  temp pv : pair[d]
  output ev : edge[d]
  output cnt : pair[]
  output pr : pair[]
  output st : edge[]
  foreach p in pairs {
    pv[p] = copy(x[p.src])
    pr[p] = copy(r[p.etype])
  }
  foreach e in edges {
    ev[e] = copy(pv[e.pair])
    cnt[e.pair] += copy(one)
    st[e] = add(b[e.src.ntype], r[e.etype])
  }
})",
          {{"x", features()}},
          {{"b", b}, {"r", r}, {"one", torch::ones({}, torch::kDouble)}});
  // Pairs in (etype, src) order: (r0,0) (r0,2) (r1,1) (r1,2); e1 and e2
  // share (r0,2).
  expectValues(out.at("ev"), {5, 2}, {1, 2, 5, 6, 5, 6, 3, 4, 5, 6});
  expectValues(out.at("cnt"), {4}, {1, 2, 1, 1});
  expectValues(out.at("pr"), {4}, {100, 100, 200, 200});
  // Sources 0 2 2 1 2 have types 0 0 0 1 0; etypes 0 0 0 1 1.
  expectValues(out.at("st"), {5}, {110, 110, 110, 220, 210});
}

TEST(Interpreter, StatementsAfterANestedLoopSeeTheCompleteReduction) {
  auto out =
      run(kHead + R"(
  param one : global[]
  temp s : node[d]
  temp cnt : node[]
  output avg : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      s[n] += copy(x[e.src])
      cnt[n] += copy(one)
    }
    avg[n] = div(s[n], cnt[n])
  }
})",
          {{"x", features()}}, {{"one", torch::ones({}, torch::kDouble)}});
  // Empty rows divide 0 by 0.
  auto avg = out.at("avg");
  expectValues(avg.narrow(0, 1, 2), {2, 2}, {11.0 / 3, 14.0 / 3, 4, 5});
  EXPECT_TRUE(at::isnan(avg[0]).all().item<bool>());
}

TEST(Interpreter, MaxAndMeanGradients) {
  auto x = features().requires_grad_();
  auto out = run(kHead + R"(
  output mx : node[d]
  output mn : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      mx[n] max= copy(x[e.src])
      mn[n] mean= copy(x[e.src])
    }
  }
})",
                 {{"x", x}});
  (out.at("mx").sum() + out.at("mn").sum()).backward();
  // max: node1's max comes from x2 twice (a tie: torch splits the gradient
  // evenly), node2's from x2: x2 gets 1 + 1. mean: node1 gives 1/3 per
  // edge (x0 once, x2 twice), node2 1/2 each to x1 and x2.
  expectValues(
      x.grad(), {4, 2},
      {1.0 / 3, 1.0 / 3, 0.5, 0.5, 2 + 2.0 / 3 + 0.5, 2 + 2.0 / 3 + 0.5, 0, 0});
}

TEST(Interpreter, HyperOverridesChangeShapesAndScalars) {
  const std::string text = R"(module @t {
  hyper d : int = 2
  hyper slope : float = 0.5
  input x : node[d]
  output y : node[d]
  foreach n in nodes {
    y[n] = leaky_relu(x[n], (slope * 2))
  }
})";
  auto x = -doubles({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {4, 3});
  InterpretOptions options;
  options.hypers = {{"d", 3}, {"slope", 0.25}};
  auto out = run(text, {{"x", x}}, {}, options);
  expectValues(out.at("y")[0], {3}, {-0.5, -1, -1.5});

  options.hypers = {{"d", 2.5}};
  EXPECT_THROW(run(text, {{"x", x}}, {}, options), ArgumentValueError);
  options.hypers = {{"nope", 1}};
  EXPECT_THROW(run(text, {{"x", x}}, {}, options), ArgumentValueError);
}

TEST(Interpreter, ReturnAllValues) {
  InterpretOptions options;
  options.returnAllValues = true;
  auto out = run(kHead + R"(
  temp t : node[d]
  output y : node[d]
  foreach n in nodes {
    t[n] = add(x[n], 1)
    y[n] = mul(t[n], 2)
  }
})",
                 {{"x", features()}}, {}, options);
  EXPECT_EQ(out.size(), 3u);
  expectValues(out.at("t")[0], {2}, {2, 3});
  expectValues(out.at("y")[0], {2}, {4, 6});
}

TEST(Interpreter, EmptyGraph) {
  Graph empty(longs({}), longs({}), longs({}), longs({}), 0, 0, 0);
  ir::Module m = parse(kHead + R"(
  param W : etype[d, d]
  temp msg : edge[d]
  output h : node[d]
  foreach e in edges {
    msg[e] = linear(x[e.src], W[e.etype])
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      h[n] max= copy(msg[e])
    }
  }
})");
  auto out = interpret(m, empty, {{"x", torch::zeros({0, 2}, torch::kDouble)}},
                       {{"W", torch::zeros({0, 2, 2}, torch::kDouble)}});
  EXPECT_EQ(out.at("h").sizes().vec(), (std::vector<int64_t>{0, 2}));
}

/// Runs `f`, expects an exception of type E whose message contains `needle`.
template <typename E, typename F>
void expectError(F f, const std::string &needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing: " << needle;
  } catch (const E &e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << e.what();
  }
}

TEST(Interpreter, ArgumentErrorsNameTheArgument) {
  ir::Module m = parse(kHead + R"(
  param W : etype[d, 3]
  output m : edge[3]
  foreach e in edges {
    m[e] = linear(x[e.src], W[e.etype])
  }
})");
  auto x = features();
  auto w = torch::zeros({3, 2, 3}, torch::kDouble);
  const Graph &g = graph();
  expectError<ArgumentValueError>(
      [&] {
        interpret(m, g, {{"x", x}}, {});
      },
      "params['W']: missing");
  expectError<ArgumentValueError>(
      [&] {
        interpret(m, g, {{"x", x}},
                  {{"W", torch::zeros({3, 2, 2}, torch::kDouble)}});
      },
      "params['W']: expected shape [3, 2, 3]");
  expectError<ArgumentValueError>(
      [&] {
        interpret(m, g, {{"x", x.narrow(0, 0, 3)}}, {{"W", w}});
      },
      "inputs['x']: expected shape [4, 2]");
  expectError<ArgumentTypeError>(
      [&] {
        interpret(m, g, {{"x", x.to(torch::kLong)}}, {{"W", w}});
      },
      "inputs['x']: expected a floating-point tensor, got torch.int64");
  expectError<ArgumentTypeError>(
      [&] {
        interpret(m, g, {{"x", x}}, {{"W", w.to(torch::kFloat)}});
      },
      "params['W']: dtype torch.float32 differs");
  expectError<ArgumentValueError>(
      [&] {
        interpret(m, g, {{"x", x}, {"y", x}}, {{"W", w}});
      },
      "inputs['y']: model @t has no input named 'y'");
  expectError<ArgumentValueError>(
      [&] {
        interpret(m, g, {{"x", x}, {"W", w}}, {{"W", w}});
      },
      "inputs['W']: model @t has no input named 'W' (it is a param)");
}

// --- The derivative ops autodiff emits ---------------------------------------

TEST(Interpreter, ActivationDerivatives) {
  // s = x - 4: node0 [-3,-2], node1 [-1,0], node2 [1,2], node3 [3,4].
  auto out = run(kHead + R"(
  temp s : node[d]
  output r : node[d]
  output l : node[d]
  output g : node[d]
  foreach n in nodes {
    s[n] = sub(x[n], 4)
    r[n] = relu_grad(s[n])
    l[n] = leaky_relu_grad(s[n], 0.1)
    g[n] = gelu_grad(s[n])
  }
})",
                 {{"x", features()}});
  // At 0 both take the left derivative.
  expectValues(out.at("r"), {4, 2}, {0, 0, 0, 0, 1, 1, 1, 1});
  expectValues(out.at("l"), {4, 2}, {0.1, 0.1, 0.1, 0.1, 1, 1, 1, 1});
  // Phi(x) + x phi(x): Phi(-1) = 0.158655253931457, phi(1) =
  // 0.241970724519143, Phi(1) = 0.841344746068543, Phi(2) =
  // 0.977249868051821, phi(2) = 0.053990966513188.
  expectValues(out.at("g")[1], {2}, {0.158655253931457 - 0.241970724519143, 0.5},
               1e-12);
  expectValues(out.at("g")[2], {2},
               {0.841344746068543 + 0.241970724519143,
                0.977249868051821 + 2 * 0.053990966513188},
               1e-12);
  // And it is gelu's derivative as torch computes it.
  torch::Tensor s = (features() - 4).requires_grad_(true);
  at::gelu(s).sum().backward();
  EXPECT_TRUE(at::allclose(out.at("g"), s.grad(), 1e-14, 1e-14));
}

TEST(Interpreter, EqBroadcastsLikeTheBinaryOps) {
  auto out = run(kHead + R"(
  temp f : node[1]
  temp first : node[]
  output q : node[d]
  output p : node[d]
  foreach n in nodes {
    q[n] = eq(x[n], 3)
    f[n] = slice(x[n]) start 0 size 1
    first[n] = reshape(f[n]) shape []
    p[n] = eq(first[n], x[n])
  }
})",
                 {{"x", features()}});
  expectValues(out.at("q"), {4, 2}, {0, 0, 1, 0, 0, 0, 0, 0});
  expectValues(out.at("p"), {4, 2}, {1, 0, 1, 0, 1, 0, 1, 0});
}

TEST(Interpreter, SumToEmbedTranspose) {
  // Node 1: x = [3,4], o = outer(x, x) = [[9,12],[12,16]], c = [3,4,3],
  // w = outer(x, c) = [[9,12,9],[12,16,12]].
  auto out = run(kHead + R"(
  temp o : node[d, d]
  temp f : node[1]
  temp c : node[d+1]
  temp w : node[d, d+1]
  output rows : node[d]
  output all : node[]
  output same : node[d, d]
  output em : node[4]
  output tr : node[d+1, d]
  foreach n in nodes {
    o[n] = outer(x[n], x[n])
    rows[n] = sum_to(o[n]) shape [d]
    all[n] = sum_to(o[n]) shape []
    same[n] = sum_to(o[n]) shape [d, d]
    em[n] = embed(x[n]) start 1 size 4
    f[n] = slice(x[n]) start 0 size 1
    c[n] = concat(x[n], f[n])
    w[n] = outer(x[n], c[n])
    tr[n] = transpose(w[n]) perm [1, 0]
  }
})",
                 {{"x", features()}});
  expectValues(out.at("rows")[1], {2}, {21, 28});
  expectValues(out.at("all"), {4}, {9, 49, 121, 225});
  expectValues(out.at("same")[1], {2, 2}, {9, 12, 12, 16});
  expectValues(out.at("em")[1], {4}, {0, 3, 4, 0});
  expectValues(out.at("tr")[1], {3, 2}, {9, 12, 12, 16, 9, 12});
}

TEST(Interpreter, PerHeadLinearT) {
  // W [H=2, N=2, K=1]: head 0 maps a to [a, 2a], head 1 to [3a, 4a].
  auto w = doubles({1, 2, 3, 4}, {2, 2, 1});
  auto out = run(kHead + R"(
  param W : global[d, 2, 1]
  temp xh : node[d, 1]
  output y : node[d, 2]
  foreach n in nodes {
    xh[n] = reshape(x[n]) shape [d, 1]
    y[n] = linear_t(xh[n], W)
  }
})",
                 {{"x", features()}}, {{"W", w}});
  expectValues(out.at("y")[1], {2, 2}, {3, 6, 12, 16});
}

} // namespace
} // namespace hector::runtime
