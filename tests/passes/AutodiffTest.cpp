// Autodiff: the interpreter running the generated backward program gives
// the gradients torch autograd computes through the interpreter on the
// forward program (fp64, rel err <= 1e-10), for the six bundled models and
// for small modules exercising every op's rule; plus what gets no gradient
// and what cannot be differentiated.
#include "passes/Autodiff.h"

#include "PassTestUtil.h"
#include "ir/InterIRPrinter.h"
#include "ir/InterIRVerifier.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sstream>

namespace hector::passes {
namespace {

using runtime::TensorMap;

std::string render(const ir::DiagnosticEngine &diags) {
  std::ostringstream os;
  diags.print(os);
  return os.str();
}

/// Builds the backward program; fails the test unless it builds and
/// verifies.
std::optional<BackwardProgram> backwardOf(const ir::Module &forward) {
  ir::DiagnosticEngine diags;
  std::optional<BackwardProgram> bp = buildBackward(forward, diags);
  EXPECT_TRUE(bp.has_value()) << render(diags);
  if (!bp)
    return std::nullopt;
  ir::DiagnosticEngine verify;
  EXPECT_TRUE(ir::verifyModule(bp->module, verify))
      << render(verify) << ir::printModule(bp->module);
  return bp;
}

/// Runs forward + torch autograd and forward + backward program on one
/// random graph; returns the largest relative error over all gradients.
double gradientError(const ir::Module &forward, const runtime::Graph &graph,
                     uint64_t seed,
                     const std::map<std::string, double> &hypers = {},
                     std::map<std::string, bool> *nonzero = nullptr) {
  std::optional<BackwardProgram> bp = backwardOf(forward);
  if (!bp)
    return 1e30;
  passtest::Arguments args =
      passtest::randomArguments(forward, graph, seed, true, hypers);
  runtime::InterpretOptions options;
  options.hypers = hypers;
  options.returnAllValues = true;
  TensorMap all =
      runtime::interpret(forward, graph, args.inputs, args.params, options);

  // Random upstream gradients; torch autograd through the interpreter.
  torch::manual_seed(seed + 1000);
  std::vector<torch::Tensor> outputs, upstream, wrt;
  TensorMap bwInputs, bwParams;
  for (const ir::ValueDecl &v : forward.values) {
    if (v.kind != ir::ValueKind::Output)
      continue;
    outputs.push_back(all.at(v.name));
    upstream.push_back(torch::randn_like(all.at(v.name)));
    bwInputs["grad_" + v.name] = upstream.back();
  }
  std::vector<std::string> names;
  for (const ir::ValueDecl &v : forward.values) {
    if (v.kind == ir::ValueKind::Param ||
        (v.kind == ir::ValueKind::Input && !v.constant)) {
      names.push_back(v.name);
      wrt.push_back(all.at(v.name));
    }
  }
  std::vector<torch::Tensor> expected = torch::autograd::grad(
      outputs, wrt, upstream, /*retain_graph=*/true, /*create_graph=*/false,
      /*allow_unused=*/true);
  TensorMap want;
  for (size_t i = 0; i < names.size(); ++i)
    want[names[i]] = expected[i].defined() ? expected[i]
                                           : torch::zeros_like(wrt[i]);

  // The backward program on the saved values.
  EXPECT_EQ(bp->gradients.size(), names.size());
  for (const ir::ValueDecl &v : bp->module.values) {
    if (v.kind == ir::ValueKind::Input && !bwInputs.count(v.name))
      bwInputs[v.name] = all.at(v.name).detach();
    if (v.kind == ir::ValueKind::Param)
      bwParams[v.name] = all.at(v.name).detach();
  }
  runtime::InterpretOptions bwOptions;
  bwOptions.hypers = hypers;
  TensorMap got = runtime::interpret(bp->module, graph, bwInputs, bwParams,
                                     bwOptions);
  TensorMap gotByName;
  for (const auto &[value, output] : bp->gradients)
    gotByName[value] = got.at(output);
  // The comparison means something only where gradients flow.
  for (const auto &[name, t] : want)
    if (nonzero)
      (*nonzero)[name] = t.abs().max().item<double>() > 0;
  return passtest::maxRelativeError(gotByName, want);
}

std::shared_ptr<runtime::Graph> graphFor(uint64_t seed) {
  return passtest::randomGraph(13, 47, 4, 3, seed);
}

// --- The bundled models --------------------------------------------------------

class BundledModelGradients : public testing::TestWithParam<const char *> {};

TEST_P(BundledModelGradients, MatchTorchAutogradWithDefaultHypers) {
  ir::Module forward = passtest::loadBundledModel(GetParam());
  for (uint64_t seed : {1, 2}) {
    auto graph = graphFor(seed);
    std::map<std::string, bool> nonzero;
    EXPECT_LE(gradientError(forward, *graph, seed, {}, &nonzero), 1e-10)
        << "seed " << seed;
    // Every input and param of a bundled model gets a gradient.
    EXPECT_FALSE(nonzero.empty());
    for (const auto &[name, flows] : nonzero)
      EXPECT_TRUE(flows) << name;
  }
}

TEST_P(BundledModelGradients, MatchTorchAutogradWithTwoHeads) {
  ir::Module forward = passtest::loadBundledModel(GetParam());
  std::map<std::string, double> hypers;
  for (const char *name : {"heads", "in_dim", "out_dim"})
    if (forward.findHyper(name))
      hypers[name] = std::string(name) == "heads" ? 2 : 6;
  auto graph = graphFor(3);
  EXPECT_LE(gradientError(forward, *graph, 3, hypers), 1e-10);
}

TEST_P(BundledModelGradients, SavesOnlyForwardValuesAndNamesEveryGradient) {
  ir::Module forward = passtest::loadBundledModel(GetParam());
  std::optional<BackwardProgram> bp = backwardOf(forward);
  ASSERT_TRUE(bp);
  EXPECT_EQ(bp->module.name, forward.name + "_backward");
  for (const std::string &name : bp->savedValues) {
    const ir::ValueDecl *f = forward.findValue(name);
    ASSERT_TRUE(f) << name;
    EXPECT_TRUE(f->kind == ir::ValueKind::Temp ||
                f->kind == ir::ValueKind::Output);
    const ir::ValueDecl *b = bp->module.findValue(name);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->kind, ir::ValueKind::Input);
    EXPECT_TRUE(b->constant);
  }
  // Detached softmax maxima never get (or need) a gradient.
  for (const ir::ValueDecl &v : bp->module.values)
    EXPECT_EQ(v.name.find("grad_alpha_max"), std::string::npos);
  for (const auto &[value, output] : bp->gradients) {
    EXPECT_EQ(output, "grad_" + value);
    const ir::ValueDecl *decl = bp->module.findValue(output);
    ASSERT_TRUE(decl) << output;
    EXPECT_EQ(decl->kind, ir::ValueKind::Output);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, BundledModelGradients,
                         testing::Values("rgcn", "rgat", "hgt", "rgcn_pyg",
                                         "rgat_pyg", "hgt_pyg"));

// --- One rule at a time --------------------------------------------------------

struct OpCase {
  const char *name;
  const char *body; // declarations after the shared hypers, then loops
};

void PrintTo(const OpCase &c, std::ostream *os) { *os << c.name; }

std::string opModule(const OpCase &c) {
  return std::string("module @") + c.name +
         " {\n  hyper d : int = 3\n  hyper h : int = 2\n"
         "  hyper slope : float = 0.1\n\n" +
         c.body + "}\n";
}

const OpCase kOpCases[] = {
    {"linear_by_etype_and_global",
     "  input x : node[d]\n  input s : node[]\n  param W : etype[d, h]\n"
     "  param G : global[d, h]\n"
     "  temp m : edge[h]\n  output y : node[h]\n  output z : node[h]\n"
     "  foreach e in edges {\n    m[e] = linear(x[e.src], W[e.etype])\n  }\n"
     "  foreach n in dst_nodes {\n    foreach e in n.incoming {\n"
     "      y[n] += mul(m[e], s[n])\n    }\n  }\n"
     "  foreach n in nodes {\n    z[n] = linear(x[n], G)\n  }\n"},
    {"linear_per_head_and_prefix",
     "  input x : node[h, d]\n  param W : ntype[h, d, d]\n"
     "  param G : global[d, d]\n  temp a : node[h, d]\n"
     "  output y : node[h, d]\n"
     "  foreach n in nodes {\n    a[n] = linear(x[n], W[n.ntype])\n"
     "    y[n] = linear(a[n], G)\n  }\n"},
    {"linear_t_both_ranks",
     "  input x : node[h, d]\n  param W : global[h, h, d]\n"
     "  param V : etype[d, h]\n  temp a : node[h, h]\n"
     "  output y : edge[h, d]\n"
     "  foreach n in nodes {\n    a[n] = linear_t(x[n], W)\n  }\n"
     "  foreach e in edges {\n    y[e] = linear_t(a[e.src], V[e.etype])\n"
     "  }\n"},
    {"dot_and_outer",
     "  input x : node[h, d]\n  input w : edge[h, d]\n"
     "  temp s : edge[h]\n  output o : edge[h, d, d]\n  output t : edge[h]\n"
     "  foreach e in edges {\n    s[e] = dot(x[e.src], w[e])\n"
     "    o[e] = outer(w[e], x[e.dst])\n    t[e] = copy(s[e])\n  }\n"},
    {"unary_ops",
     "  input x : node[d]\n  temp sq : node[d]\n  temp pos : node[d]\n"
     "  temp a : node[d]\n  temp b : node[d]\n  temp c : node[d]\n"
     "  temp f : node[d]\n  temp g : node[d]\n  temp i : node[d]\n"
     "  temp j : node[d]\n  temp k : node[d]\n  temp t1 : node[d]\n"
     "  temp t2 : node[d]\n  temp t3 : node[d]\n  temp t4 : node[d]\n"
     "  output y : node[d]\n"
     "  foreach n in nodes {\n    sq[n] = mul(x[n], x[n])\n"
     "    pos[n] = add(sq[n], 0.5)\n    a[n] = log(pos[n])\n"
     "    b[n] = sqrt(pos[n])\n    c[n] = exp(x[n])\n"
     "    f[n] = sigmoid(a[n])\n    g[n] = tanh(b[n])\n"
     "    i[n] = relu(x[n])\n    j[n] = leaky_relu(x[n], slope)\n"
     "    k[n] = gelu(c[n])\n    t1[n] = add(f[n], g[n])\n"
     "    t2[n] = sub(i[n], j[n])\n    t3[n] = neg(k[n])\n"
     "    t4[n] = add(t1[n], t2[n])\n    y[n] = add(t4[n], t3[n])\n  }\n"},
    {"binary_broadcasting",
     "  input x : node[h, d]\n  input s : node[h]\n  input u : node[]\n"
     "  param b : global[h]\n  temp p : node[h, d]\n  temp q : node[h, d]\n"
     "  temp r : node[h, d]\n  temp v : node[h, d]\n  temp w : node[h]\n"
     "  temp x3 : node[h, d]\n  output y : node[h, d]\n"
     "  foreach n in nodes {\n    p[n] = mul(s[n], x[n])\n"
     "    q[n] = sub(p[n], u[n])\n    w[n] = add(b, s[n])\n"
     "    r[n] = div(q[n], w[n])\n    v[n] = div(2, r[n])\n"
     "    x3[n] = mul(x[n], 3)\n    y[n] = add(v[n], x3[n])\n  }\n"},
    {"shapes_slice_concat_reshape_transpose",
     "  input x : node[h, d]\n  input z : node[d]\n  temp f : node[h*d]\n"
     "  temp s : node[d]\n  temp c : node[2*d]\n  temp t : node[d, h]\n"
     "  temp e : node[2*d+1]\n  output y : node[2*d+1]\n"
     "  output o : node[d, h]\n"
     "  foreach n in nodes {\n    f[n] = reshape(x[n]) shape [h*d]\n"
     "    s[n] = slice(f[n]) start 1 size d\n    c[n] = concat(s[n], z[n])\n"
     "    e[n] = embed(c[n]) start 1 size 2*d+1\n"
     "    y[n] = mul(e[n], e[n])\n    t[n] = transpose(x[n]) perm [1, 0]\n"
     "    o[n] = exp(t[n])\n  }\n"},
    {"sum_mean_reductions",
     "  input x : node[d]\n  input w : edge[d]\n  param G : global[d]\n"
     "  temp a : node[d]\n  temp b : node[d]\n  temp c : node[d]\n"
     "  temp g : global[d]\n  temp t : node[d]\n  temp t2 : node[d]\n"
     "  output y : node[d]\n"
     "  foreach n in dst_nodes {\n    foreach e in n.incoming {\n"
     "      a[n] mean= mul(x[e.src], w[e])\n    }\n  }\n"
     "  foreach n in src_nodes {\n    foreach e in n.outgoing {\n"
     "      b[e.src] mean= exp(w[e])\n    }\n  }\n"
     "  foreach e in edges {\n    c[e.dst] mean= mul(w[e], a[e.src])\n"
     "    g += mul(x[e.dst], G)\n  }\n"
     "  foreach n in nodes {\n    t[n] = add(a[n], b[n])\n"
     "    t2[n] = mul(t[n], c[n])\n    y[n] = add(t2[n], g)\n  }\n"},
    {"max_reduction",
     "  input x : node[d]\n  input w : edge[d]\n  temp m : node[d]\n"
     "  temp k : global[d]\n  output y : node[d]\n"
     "  foreach n in dst_nodes {\n    foreach e in n.incoming {\n"
     "      m[n] max= mul(x[e.src], w[e])\n    }\n  }\n"
     "  foreach n in nodes {\n    k max= mul(x[n], 2)\n  }\n"
     "  foreach n in nodes {\n    y[n] = add(m[n], k)\n  }\n"},
    {"outputs_read_again_and_reductions_through_paths",
     "  input x : node[d]\n  param W : ntype[d, d]\n  temp s : ntype[d]\n"
     "  temp q : node[d]\n  temp u : node[d]\n  output y : node[d]\n"
     "  output z : node[d]\n  output w : node[d]\n"
     "  foreach n in nodes {\n    y[n] = tanh(x[n])\n"
     "    s[n.ntype] += mul(y[n], x[n])\n  }\n"
     "  foreach n in dst_nodes {\n    foreach e in n.incoming {\n"
     "      q[e.src] += mul(x[n], y[e.src])\n    }\n  }\n"
     "  foreach n in nodes {\n    u[n] = linear(s[n.ntype], W[n.ntype])\n"
     "    z[n] = mul(u[n], y[n])\n    w[n] = mul(q[n], y[n])\n  }\n"},
    {"detach_passes_no_gradient",
     "  input x : node[d]\n  input w : edge[d]\n  temp a : node[d]\n"
     "  temp m : node[d]\n  temp b : node[d]\n  output y : node[d]\n"
     "  foreach n in dst_nodes {\n    foreach e in n.incoming {\n"
     "      m[n] max= detach(w[e])\n    }\n  }\n"
     "  foreach n in nodes {\n    a[n] = detach(x[n])\n"
     "    b[n] = mul(a[n], x[n])\n    y[n] = add(b[n], m[n])\n  }\n"},
    {"derivative_ops_pass_no_gradient",
     "  input x : node[d]\n  temp a : node[d]\n  temp b : node[d]\n"
     "  temp c : node[d]\n  temp t : node[d]\n  temp u : node[d]\n"
     "  output y : node[d]\n"
     "  foreach n in nodes {\n    a[n] = relu_grad(x[n])\n"
     "    b[n] = leaky_relu_grad(x[n], slope)\n    c[n] = eq(x[n], a[n])\n"
     "    t[n] = add(a[n], b[n])\n    u[n] = add(t[n], c[n])\n"
     "    y[n] = mul(u[n], x[n])\n  }\n"},
};

class OpGradients : public testing::TestWithParam<OpCase> {};

TEST_P(OpGradients, MatchTorchAutograd) {
  ir::Module forward =
      passtest::parseVerified(opModule(GetParam()), GetParam().name);
  for (uint64_t seed : {4, 5}) {
    auto graph = graphFor(seed);
    EXPECT_LE(gradientError(forward, *graph, seed), 1e-10)
        << GetParam().name << " seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rules, OpGradients, testing::ValuesIn(kOpCases),
    [](const testing::TestParamInfo<OpCase> &info) { return info.param.name; });

// --- What gets no gradient ------------------------------------------------------

TEST(Autodiff, ConstInputsAndUnusedComputationsGetNoGradient) {
  ir::Module forward = passtest::parseVerified(R"(module @m {
  hyper d : int = 3

  input x : node[d]
  input norm : edge[] const
  input y : node[d]
  param W : etype[d, d]
  temp msg : edge[d]
  temp dead : node[d]
  temp cut : node[d]
  output h : node[d]

  foreach e in edges {
    msg[e] = linear(x[e.src], W[e.etype])
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      h[n] += mul(norm[e], msg[e])
    }
    dead[n] = exp(x[n])
    cut[n] = detach(y[n])
  }
}
)",
                                               "m.ir");
  std::optional<BackwardProgram> bp = backwardOf(forward);
  ASSERT_TRUE(bp);
  EXPECT_EQ(bp->gradients.count("norm"), 0u);
  EXPECT_FALSE(bp->module.findValue("grad_norm"));
  EXPECT_EQ(bp->gradients.at("x"), "grad_x");
  EXPECT_EQ(bp->gradients.at("y"), "grad_y");
  std::string printed = ir::printModule(bp->module);
  // Nothing of the dead or detached computations survives; norm is read
  // (it scales the message's gradient) as the const input it is.
  EXPECT_EQ(printed.find("dead"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("cut"), std::string::npos) << printed;
  EXPECT_NE(printed.find("  input norm : edge[] const\n"), std::string::npos);
  EXPECT_EQ(bp->savedValues, std::vector<std::string>{});
  auto graph = graphFor(6);
  EXPECT_LE(gradientError(forward, *graph, 6), 1e-10);
}

// The golden backward program of rgcn_pyg: the mean by rel_in_degree is a
// division whose gradient is the division of the gradient, x's gradient
// sums its three reads, global weights reduce over the rows that read them.
TEST(Autodiff, PrintsTheBackwardProgramOfRgcnPyg) {
  std::optional<BackwardProgram> bp =
      backwardOf(passtest::loadBundledModel("rgcn_pyg"));
  ASSERT_TRUE(bp);
  EXPECT_EQ(ir::printModule(bp->module), R"(module @rgcn_pyg_backward {
  hyper in_dim : int = 64
  hyper out_dim : int = 64

  input grad_h : node[out_dim]
  input x : node[in_dim]
  param weight_ : etype[in_dim, out_dim]
  param root : global[in_dim, out_dim]
  graph rel_in_degree : edge[]
  temp grad1_x : node[in_dim]
  temp grad_h_1 : edge[out_dim]
  temp grad2_x : node[in_dim]
  output grad_x : node[in_dim]
  output grad_weight_ : etype[in_dim, out_dim]
  output grad_root : global[in_dim, out_dim]
  output grad_bias : global[out_dim]

  foreach n in dst_nodes {
    grad_bias += copy(grad_h[n])
    grad1_x[n] = linear_t(grad_h[n], root)
    grad_root += outer(x[n], grad_h[n])
    foreach e in n.incoming {
      grad_h_1[e] = div(grad_h[n], rel_in_degree[e])
      grad2_x[e.src] += linear_t(grad_h_1[e], weight_[e.etype])
      grad_weight_[e.etype] += outer(x[e.src], grad_h_1[e])
    }
  }
  foreach n in nodes {
    grad_x[n] = add(grad1_x[n], grad2_x[n])
  }
}
)");
}

// --- What cannot be differentiated -------------------------------------------------

TEST(Autodiff, UnsupportedReductionsAreLocatedErrors) {
  ir::Module forward = passtest::parseVerified(R"(module @m {
  hyper d : int = 3

  input x : node[d]
  temp g : global[d]
  output h : node[d]

  foreach n in nodes {
    g mean= copy(x[n])
  }
  foreach n in nodes {
    h[n] = add(x[n], g)
  }
}
)",
                                               "m.ir");
  ir::DiagnosticEngine diags;
  EXPECT_FALSE(buildBackward(forward, diags));
  ASSERT_EQ(diags.errorCount(), 1) << render(diags);
  const ir::Diagnostic &d = diags.diagnostics()[0];
  EXPECT_EQ(d.message, "autodiff: cannot differentiate 'mean=' into 'g' in a "
                       "'nodes' loop: only a node's incoming or outgoing "
                       "edges have a known count");
  EXPECT_EQ(d.loc.line, 9);
}

TEST(Autodiff, GlobalReadInTwoLoopsIsALocatedError) {
  ir::Module forward = passtest::parseVerified(R"(module @m {
  hyper d : int = 3

  input x : node[d]
  param b : global[d]
  temp a : edge[d]
  temp s : node[d]
  output h : node[d]

  foreach e in edges {
    a[e] = add(x[e.src], b)
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      s[n] += copy(a[e])
    }
    h[n] = add(s[n], b)
  }
}
)",
                                               "m.ir");
  ir::DiagnosticEngine diags;
  EXPECT_FALSE(buildBackward(forward, diags));
  ASSERT_EQ(diags.errorCount(), 1) << render(diags);
  EXPECT_EQ(diags.diagnostics()[0].loc.line, 5);
}

} // namespace
} // namespace hector::passes
