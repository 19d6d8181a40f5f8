// Tests of passes/LowerToIntraOp: instance counts and order per bundled
// model, GEMM epilogue fusion and scatter, hoisting, reduction schemes,
// register/buffer/view storage, the fallback scan, determinism, the
// intra-op verifier, and semantics: running each instance's statements as
// one loop nest, in instance order, through the interpreter gives the
// original module's outputs (forward programs, the pipeline's output under
// every switch combination, and the autodiff pass's backward programs).
#include "passes/LowerToIntraOp.h"

#include "ir/InterIRPrinter.h"
#include "ir/InterIRVerifier.h"
#include "passes/Autodiff.h"
#include "passes/Pipeline.h"
#include "tests/passes/PassTestUtil.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace hector {
namespace {

using passtest::loadBundledModel;
using passtest::parseVerified;

intra::Program lower(const ir::Module &m, passes::LoweringOptions options = {}) {
  ir::DiagnosticEngine diags;
  std::optional<intra::Program> p = passes::lowerToIntraOp(m, options, diags);
  std::ostringstream err;
  diags.print(err);
  EXPECT_TRUE(p.has_value()) << err.str();
  EXPECT_FALSE(diags.hasErrors()) << err.str();
  return p ? std::move(*p) : intra::Program{};
}

/// One letter per instance, in order: G(emm), T(raversal), F(allback).
std::string shape(const intra::Program &p) {
  std::string s;
  for (const intra::Instance &inst : p.instances)
    s += std::holds_alternative<intra::GemmInstance>(inst)        ? 'G'
         : std::holds_alternative<intra::TraversalInstance>(inst) ? 'T'
                                                                  : 'F';
  return s;
}

const intra::GemmInstance &gemm(const intra::Program &p, size_t i) {
  return std::get<intra::GemmInstance>(p.instances.at(i));
}

// --------------------------------------------------- counts per model

struct Expected {
  const char *model;
  int gemm, traversal;
  const char *order; ///< instance kinds in execution order
};

// Derived by hand from generated/<model>/<model>.inter.ir (the comments
// say how); reshapes are views and never instances.
const Expected kExpected[] = {
    // edges: msg_0 linear + msg = div(.., rel_in_degree) fused -> G.
    // dst_nodes: h_1 = linear(x[n], W_self) -> G first (reads nothing of
    // the nest), then h_0 +=, h_2, h in one traversal.
    {"rgcn", 2, 1, "GGT"},
    // edges: z_0, zd_0 -> G G, the attention scores -> T; softmax's four
    // loops -> T T T T; last nest: h_2 (W_self) -> G, the rest -> T.
    {"rgat", 3, 6, "GGTTTTTGT"},
    // edges: k_0, q_0, m_0 (sliced by src/dst ntype), att_0 (per-head
    // W_att, reads the view k) -> 4 G, scores -> T; softmax -> T T T;
    // att -> T, msg (per-head W_msg) -> G; last nest: t_0 -> T, h_0 =
    // linear(t, A) with the gated skip (gate, h_1 to h_3, h) as its mix
    // -> G (lowered without a backward's saved values: nothing keeps h_0).
    {"hgt", 6, 6, "GGGGTTTTGTTG"},
    // incoming: h_1 linear with h_0 += div(h_1, rel_in_degree) fused
    // (scatter to e.dst, atomic) -> G; h_2 = linear(x, root) -> G;
    // h_3, h -> T.
    {"rgcn_pyg", 2, 1, "GGT"},
    // edges: outj with alpha_1 = linear(outj, k) as its row dot, outi
    // with alpha_0 = linear(outi, q) as its own -> 2 G (the rows stay
    // stored: outj has other readers), alpha_2/score -> T; softmax ->
    // T T T; alpha, msg -> T; h_0, h -> T.
    {"rgat_pyg", 2, 6, "GGTTTTTT"},
    // nodes: kqv_0 (linear_t by ntype) with the bias and the k, q, v
    // slices fused (three output parts) -> G; edges: alpha_0 (per-head
    // k_rel) -> G, scores -> T; softmax -> T T T; alpha -> T, msg_0 with
    // msg = mul(alpha, msg_0) fused (per head) -> G; last nest: agg_0, a_0
    // -> T, a_1 (linear_t) with its bias and the gated skip (gate, h_0 to
    // h_2, h) fused -> G (nothing keeps a without a backward).
    {"hgt_pyg", 4, 6, "GGTTTTTGTG"},
};

class LoweringModelTest : public ::testing::TestWithParam<Expected> {};

TEST_P(LoweringModelTest, ExpectedInstancesAndNoFallback) {
  const Expected &e = GetParam();
  ir::Module m = loadBundledModel(e.model);
  intra::Program p = lower(m);
  passes::LoweringSummary s = passes::summarizeLowering(p);
  EXPECT_EQ(s.gemm, e.gemm);
  EXPECT_EQ(s.traversal, e.traversal);
  EXPECT_EQ(s.fallback, 0);
  EXPECT_EQ(shape(p), e.order);
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(intra::verifyProgram(p, diags));
}

TEST_P(LoweringModelTest, DeterministicText) {
  ir::Module m = loadBundledModel(GetParam().model);
  const std::string a = intra::printProgram(lower(m));
  const std::string b = intra::printProgram(lower(m.clone()));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.rfind("intra.program @" + std::string(GetParam().model) + " {", 0),
            0u);
}

/// Without fusion: one traversal per non-GEMM, non-reshape statement, and
/// no epilogues (so one more traversal per epilogue the fused form had).
TEST_P(LoweringModelTest, NoFuseGivesOneTraversalPerStatement) {
  ir::Module m = loadBundledModel(GetParam().model);
  passes::LoweringOptions options;
  options.fuse = false;
  intra::Program p = lower(m, options);
  int reshapes = 0, linears = 0, total = p.numStmts;
  for (const intra::ValueLayout &l : p.layouts)
    reshapes += l.storage == intra::Storage::View;
  for (const intra::Instance &inst : p.instances)
    if (const auto *g = std::get_if<intra::GemmInstance>(&inst)) {
      EXPECT_FALSE(g->epilogue);
      EXPECT_EQ(g->stmts.size(), 1u);
      ++linears;
    }
  passes::LoweringSummary s = passes::summarizeLowering(p);
  EXPECT_EQ(s.traversal, total - reshapes - linears);
  EXPECT_EQ(s.fallback, 0);
  EXPECT_GE(s.traversal, GetParam().traversal);
}

/// The third scan: with traversals switched off, everything that is not a
/// GEMM falls back to the interpreter, grouped like traversals would be.
TEST_P(LoweringModelTest, FallbackScanTakesWhatTraversalsWouldHave) {
  ir::Module m = loadBundledModel(GetParam().model);
  passes::LoweringOptions options;
  options.traversal = false;
  intra::Program p = lower(m, options);
  passes::LoweringSummary s = passes::summarizeLowering(p);
  EXPECT_EQ(s.gemm, GetParam().gemm);
  EXPECT_EQ(s.traversal, 0);
  EXPECT_EQ(s.fallback, GetParam().traversal);
}

// ------------------------------------------------------------ semantics

/// The statement with each id (pre-order), and its top-level loop.
void indexStmts(const ir::Loop &loop, std::vector<const ir::Stmt *> &out) {
  for (const ir::BodyItem &item : loop.body) {
    if (const auto *s = std::get_if<ir::Stmt>(&item))
      out.push_back(s);
    else
      indexStmts(*std::get<std::unique_ptr<ir::Loop>>(item), out);
  }
}

/// A copy of `loop` keeping only the statements in `keep`; null if empty.
std::unique_ptr<ir::Loop> filterLoop(const ir::Loop &loop,
                                     const std::map<const ir::Stmt *, int> &ids,
                                     const std::set<int> &keep) {
  auto out = std::make_unique<ir::Loop>();
  out->kind = loop.kind;
  out->var = loop.var;
  out->parent = loop.parent;
  for (const ir::BodyItem &item : loop.body) {
    if (const auto *s = std::get_if<ir::Stmt>(&item)) {
      if (keep.count(ids.at(s)))
        out->body.emplace_back(*s);
    } else if (auto sub = filterLoop(*std::get<std::unique_ptr<ir::Loop>>(item),
                                     ids, keep)) {
      out->body.emplace_back(std::move(sub));
    }
  }
  return out->body.empty() ? nullptr : std::move(out);
}

/// The module that runs each instance as its own top-level loop nest, in
/// instance order, with each view's reshape right after the instance that
/// writes its source (or first, for views of inputs).
ir::Module linearize(const ir::Module &m, const intra::Program &p) {
  std::vector<const ir::Stmt *> stmts;
  std::map<const ir::Stmt *, int> ids;
  std::map<int, int> nestOf;
  for (size_t i = 0; i < m.loops.size(); ++i) {
    size_t before = stmts.size();
    indexStmts(*m.loops[i], stmts);
    for (size_t s = before; s < stmts.size(); ++s)
      nestOf[static_cast<int>(s)] = static_cast<int>(i);
  }
  for (size_t i = 0; i < stmts.size(); ++i)
    ids[stmts[i]] = static_cast<int>(i);

  ir::Module out = m.clone();
  out.loops.clear();
  std::set<std::string> written;
  for (const ir::ValueDecl &d : m.values)
    if (d.kind != ir::ValueKind::Temp && d.kind != ir::ValueKind::Output)
      written.insert(d.name);
  // Views made by their own statement; a sum a GEMM adds in place is the
  // GEMM's statement and runs with it.
  std::map<std::string, int> viewStmt;
  for (const intra::ValueLayout &l : p.layouts)
    if (l.storage == intra::Storage::View && !intra::isAccumulatedView(p, l))
      viewStmt[l.decl.name] = l.viewStmt;
  auto emit = [&](std::set<int> keep) {
    // Views the instance reads that do not exist yet run inside it (in
    // program order, so after their source when it is written here too).
    for (bool added = true; added;) {
      added = false;
      for (int id : std::set<int>(keep))
        for (const ir::Operand &op : stmts[id]->operands)
          if (const auto *a = std::get_if<ir::Access>(&op))
            if (viewStmt.count(a->value) && !written.count(a->value) &&
                keep.insert(viewStmt[a->value]).second)
              added = true;
    }
    std::map<int, std::set<int>> byNest;
    for (int id : keep)
      byNest[nestOf.at(id)].insert(id);
    for (const auto &[nest, idsInNest] : byNest)
      out.loops.push_back(filterLoop(*m.loops[nest], ids, idsInNest));
    for (int id : keep)
      written.insert(stmts[id]->target.value);
    // Views whose source now exists, until none is left to add.
    for (bool added = true; added;) {
      added = false;
      for (const intra::ValueLayout &l : p.layouts)
        if (viewStmt.count(l.decl.name) && !written.count(l.decl.name) &&
            written.count(l.viewOf)) {
          out.loops.push_back(
              filterLoop(*m.loops[nestOf.at(l.viewStmt)], ids, {l.viewStmt}));
          written.insert(l.decl.name);
          added = true;
        }
    }
  };
  emit({});
  for (const intra::Instance &inst : p.instances) {
    std::set<int> keep;
    if (const auto *g = std::get_if<intra::GemmInstance>(&inst))
      keep.insert(g->stmts.begin(), g->stmts.end());
    else if (const auto *t = std::get_if<intra::TraversalInstance>(&inst))
      intra::forEachTravStmt(*t->root,
                             [&](const intra::TravStmt &s) { keep.insert(s.id); });
    else
      intra::forEachTravStmt(*std::get<intra::FallbackInstance>(inst).root,
                             [&](const intra::TravStmt &s) { keep.insert(s.id); });
    emit(keep);
  }
  return out;
}

/// The instances, run in order (linearize), compute what the module does:
/// the interpreter on a random graph agrees to 1e-12.
void expectInstanceOrderComputesTheModule(const ir::Module &m,
                                          const intra::Program &p,
                                          uint64_t seed) {
  auto graph = passtest::randomGraph(30, 120, 5, 3, 5);
  auto args = passtest::randomArguments(m, *graph, seed);
  ir::DiagnosticEngine diags;
  ir::Module lin = linearize(m, p);
  ASSERT_TRUE(ir::verifyModule(lin, diags)) << ir::printModule(lin);
  EXPECT_LE(passtest::maxRelativeError(
                runtime::interpret(lin, *graph, args.inputs, args.params),
                runtime::interpret(m, *graph, args.inputs, args.params)),
            1e-12);
}

TEST_P(LoweringModelTest, InstanceOrderPreservesSemantics) {
  ir::Module m = loadBundledModel(GetParam().model);
  auto graph = passtest::randomGraph(30, 120, 5, 3, 7);
  auto args = passtest::randomArguments(m, *graph, 11);
  const runtime::TensorMap want =
      runtime::interpret(m, *graph, args.inputs, args.params);
  for (bool fuse : {true, false}) {
    passes::LoweringOptions options;
    options.fuse = fuse;
    ir::Module lin = linearize(m, lower(m, options));
    ir::DiagnosticEngine diags;
    ASSERT_TRUE(ir::verifyModule(lin, diags)) << ir::printModule(lin);
    const runtime::TensorMap got =
        runtime::interpret(lin, *graph, args.inputs, args.params);
    EXPECT_LE(passtest::maxRelativeError(got, want), 1e-12)
        << "fuse=" << fuse;
  }
}

/// The same on what lowering sees in hectorc: the output of the whole
/// inter-op pipeline (pairs loops, per-relation weight products, fused
/// node nests), with every switch combination.
TEST_P(LoweringModelTest, PipelineOutputLowersWithoutFallbackAndKeepsSemantics) {
  ir::Module m = loadBundledModel(GetParam().model);
  auto graph = passtest::randomGraph(30, 120, 5, 3, 7);
  auto args = passtest::randomArguments(m, *graph, 11);
  const runtime::TensorMap want =
      runtime::interpret(m, *graph, args.inputs, args.params);
  for (int flags = 0; flags < 8; ++flags) {
    passes::PipelineOptions options;
    options.reorder = flags & 1;
    options.compact = flags & 2;
    options.fuse = flags & 4;
    ir::Module opt = m.clone();
    ir::DiagnosticEngine diags;
    std::ostringstream dump;
    ASSERT_TRUE(passes::runInterOpPipeline(opt, options, diags, dump));
    std::optional<intra::Program> p =
        passes::lowerToIntra(opt, options, diags);
    ASSERT_TRUE(p) << "flags=" << flags;
    EXPECT_EQ(passes::summarizeLowering(*p).fallback, 0);
    ir::Module lin = linearize(opt, *p);
    ASSERT_TRUE(ir::verifyModule(lin, diags)) << ir::printModule(lin);
    const runtime::TensorMap got =
        runtime::interpret(lin, *graph, args.inputs, args.params);
    EXPECT_LE(passtest::maxRelativeError(got, want), 1e-10)
        << "flags=" << flags;
  }
}

/// The backward program (passes/Autodiff.h) lowers too: weight gradients
/// become outer-product GEMMs, nothing falls back.
TEST_P(LoweringModelTest, BackwardProgramLowersWithoutFallback) {
  ir::Module m = loadBundledModel(GetParam().model);
  ir::DiagnosticEngine diags;
  std::optional<passes::BackwardProgram> bwd = passes::buildBackward(m, diags);
  ASSERT_TRUE(bwd);
  intra::Program p = lower(bwd->module);
  passes::LoweringSummary s = passes::summarizeLowering(p);
  EXPECT_EQ(s.fallback, 0);
  int outer = 0;
  for (const intra::Instance &inst : p.instances)
    if (const auto *g = std::get_if<intra::GemmInstance>(&inst))
      outer += g->mode == intra::GemmInstance::Mode::Outer;
  EXPECT_GT(outer, 0) << intra::printProgram(p);
  // And the instance order computes the same gradients.
  expectInstanceOrderComputesTheModule(bwd->module, p, 13);
}

INSTANTIATE_TEST_SUITE_P(Bundled, LoweringModelTest,
                         ::testing::ValuesIn(kExpected),
                         [](const auto &info) {
                           return std::string(info.param.model);
                         });

// ------------------------------------------------------- GEMM details

TEST(LowerToIntraOpTest, RgcnFusesNormIntoGemmEpilogue) {
  intra::Program p = lower(loadBundledModel("rgcn"));
  const intra::GemmInstance &g = gemm(p, 0);
  EXPECT_EQ(g.rows, intra::RowDomain::Edges);
  ASSERT_TRUE(g.segmentBy);
  EXPECT_EQ(*g.segmentBy, std::vector<ir::Attr>{ir::Attr::EType});
  EXPECT_EQ(g.input.str("e"), "x[e.src]");
  EXPECT_EQ(g.weight.str("e"), "W[e.etype]");
  EXPECT_EQ(g.output.str("e"), "msg[e]");
  EXPECT_EQ(g.accumulate, ir::Reduce::None);
  EXPECT_FALSE(g.atomic);
  ASSERT_TRUE(g.epilogue);
  EXPECT_EQ(g.epilogue->op, ir::OpKind::Div);
  EXPECT_EQ(g.epilogue->scalar.str("e"), "rel_in_degree[e]");
  EXPECT_EQ(g.stmts, (std::vector<int>{0, 1}));
  EXPECT_EQ(p.findLayout("msg_0")->storage, intra::Storage::Register);
  EXPECT_EQ(p.findLayout("msg")->storage, intra::Storage::Buffer);
  EXPECT_NE(intra::printProgram(p).find("    epilogue div rel_in_degree[e]\n"),
            std::string::npos);
  // The self loop: nodes, shared weight, no segments.
  const intra::GemmInstance &self = gemm(p, 1);
  EXPECT_EQ(self.rows, intra::RowDomain::Nodes);
  EXPECT_FALSE(self.segmentBy);
  EXPECT_EQ(self.weight.str("n"), "W_self");
}

TEST(LowerToIntraOpTest, RgcnPygScattersEpilogueWithAtomics) {
  intra::Program p = lower(loadBundledModel("rgcn_pyg"));
  const intra::GemmInstance &g = gemm(p, 0);
  EXPECT_EQ(g.output.str("e"), "h_0[e.dst]");
  EXPECT_EQ(g.accumulate, ir::Reduce::Sum);
  EXPECT_TRUE(g.atomic);
  ASSERT_TRUE(g.epilogue);
  EXPECT_EQ(g.epilogue->scalar.str("e"), "rel_in_degree[e]");
  EXPECT_EQ(p.findLayout("h_1")->storage, intra::Storage::Register);
  // The remaining node statements need no edges: no CSR.
  const auto &t = std::get<intra::TraversalInstance>(p.instances.at(2));
  EXPECT_EQ(t.access, intra::AccessScheme::None);
}

TEST(LowerToIntraOpTest, HgtPerHeadAndTypeSlicedGemms) {
  intra::Program p = lower(loadBundledModel("hgt"));
  EXPECT_EQ(gemm(p, 0).weight.str("e"), "K[e.src.ntype]");
  EXPECT_EQ(*gemm(p, 0).segmentBy,
            (std::vector<ir::Attr>{ir::Attr::Src, ir::Attr::NType}));
  EXPECT_EQ(gemm(p, 1).input.str("e"), "x[e.dst]");
  const intra::GemmInstance &att = gemm(p, 3);
  EXPECT_EQ(att.input.str("e"), "k[e]"); // a view of k_0
  EXPECT_TRUE(att.perHead);
  EXPECT_EQ(att.heads.str(), "heads");
  EXPECT_EQ(att.k.str(), "in_dim/heads");
  EXPECT_EQ(p.findLayout("k")->storage, intra::Storage::View);
  EXPECT_EQ(p.findLayout("k")->viewOf, "k_0");
  // The gated skip `h = gate * h_0 + (1 - gate) * x` is the mix of h_0's
  // GEMM; with h_0 kept for a backward (the training forward), h_0 is its
  // output.
  const intra::GemmInstance &out = gemm(p, 11);
  EXPECT_EQ(out.rows, intra::RowDomain::Nodes);
  EXPECT_EQ(*out.segmentBy, std::vector<ir::Attr>{ir::Attr::NType});
  ASSERT_TRUE(out.mix);
  EXPECT_EQ(out.mix->gate.str("n"), "skip[n.ntype]");
  EXPECT_EQ(out.mix->rows.str("n"), "x[n]");
  EXPECT_EQ(out.output.str("n"), "h[n]");
  EXPECT_FALSE(out.epilogue);
  passes::LoweringOptions kept;
  kept.saved = {"h_0"};
  intra::Program q = lower(loadBundledModel("hgt"), kept);
  const intra::GemmInstance &kept0 = gemm(q, 11);
  EXPECT_EQ(kept0.output.str("n"), "h_0[n]");
  EXPECT_FALSE(kept0.mix);
  EXPECT_FALSE(kept0.epilogue);
}

TEST(LowerToIntraOpTest, HgtPygPerHeadEpilogueAndTransposedWeight) {
  intra::Program p = lower(loadBundledModel("hgt_pyg"));
  EXPECT_TRUE(gemm(p, 0).transposeWeight);
  const intra::GemmInstance &msg = gemm(p, 7);
  ASSERT_TRUE(msg.epilogue);
  EXPECT_TRUE(msg.epilogue->perHead);
  EXPECT_EQ(msg.epilogue->scalar.str("e"), "alpha[e]");
  EXPECT_EQ(msg.output.str("e"), "msg[e]");
}

// HGT's kqv projection: `linear_t(x, W[ntype]) + b[ntype]` cut by three
// slices into k, q and v is one GEMM with a per-type bias and three output
// parts (no traversal copies the slices out); out_lin's bias is fused
// too, and the gated skip with it, unless `a` is saved for the backward:
// then `a` stays its output.
TEST(LowerToIntraOpTest, HgtPygKqvBiasAndSlicesFuseIntoTheGemm) {
  intra::Program p = lower(loadBundledModel("hgt_pyg"));
  const intra::GemmInstance &kqv = gemm(p, 0);
  ASSERT_TRUE(kqv.bias);
  EXPECT_EQ(kqv.bias->str("n"), "kqv_bias[n.ntype]");
  ASSERT_EQ(kqv.outputParts.size(), 3u);
  EXPECT_EQ(kqv.outputParts[0].str("n"), "k_0[n]");
  EXPECT_EQ(kqv.outputParts[1].str("n"), "q_0[n]");
  EXPECT_EQ(kqv.outputParts[2].str("n"), "v_0[n]");
  EXPECT_EQ(kqv.output.str("n"), "k_0[n]");
  EXPECT_EQ(kqv.stmts.size(), 5u); // linear_t, add, three slices
  const std::string text = intra::printProgram(p);
  EXPECT_NE(text.find("    output k_0[n], q_0[n], v_0[n] =\n"
                      "    bias kqv_bias[n.ntype]\n"),
            std::string::npos);
  EXPECT_NE(text.find("layout kqv : node_rows[3*in_dim] temp register "
                      "from @gemm_0"),
            std::string::npos);
  const intra::GemmInstance &outLin = gemm(p, 9);
  ASSERT_TRUE(outLin.bias);
  EXPECT_EQ(outLin.bias->str("n"), "out_lin_bias[n.ntype]");
  EXPECT_EQ(outLin.output.str("n"), "h[n]");
  EXPECT_TRUE(outLin.mix);
  EXPECT_TRUE(outLin.outputParts.empty());
  passes::LoweringOptions kept;
  kept.saved = {"a"};
  intra::Program q = lower(loadBundledModel("hgt_pyg"), kept);
  const intra::GemmInstance &keptLin = gemm(q, 9);
  EXPECT_EQ(keptLin.output.str("n"), "a[n]");
  EXPECT_FALSE(keptLin.mix);
}

// Slices fuse only when they cut the row into equal parts in order; a
// bias only when it is a weight of the row's shape taken by the segment
// key (or shared).
TEST(LowerToIntraOpTest, OnlyPartitioningSlicesAndWeightBiasesFuse) {
  ir::Module m = parseVerified(R"(module @parts {
  hyper d : int = 4
  input x : node[d]
  param w : ntype[d, 2*d]
  param b : ntype[2*d]
  param c : global[2*d]
  input x2 : node[2*d]
  output y1 : node[d]
  output y2 : node[d]
  output z1 : node[d]
  output z2 : node[d]
  output u : node[2*d]
  temp p0 : node[2*d]
  temp p : node[2*d]
  temp q0 : node[2*d]
  temp q : node[2*d]
  temp r0 : node[2*d]
  foreach n in nodes {
    p0[n] = linear(x[n], w[n.ntype])
    p[n] = add(p0[n], b[n.ntype])
    y1[n] = slice(p[n]) start 0 size d
    y2[n] = slice(p[n]) start d size d
    q0[n] = linear(x[n], w[n.ntype])
    q[n] = add(c, q0[n])
    z1[n] = slice(q[n]) start 0 size d
    z2[n] = slice(q[n]) start 1 size d
    r0[n] = linear(x[n], w[n.ntype])
    u[n] = add(r0[n], x2[n])
  }
}
)",
                               "parts.ir");
  intra::Program p = lower(m);
  std::vector<const intra::GemmInstance *> gemms;
  for (const intra::Instance &inst : p.instances)
    if (const auto *g = std::get_if<intra::GemmInstance>(&inst))
      gemms.push_back(g);
  ASSERT_EQ(gemms.size(), 3u);
  const intra::GemmInstance &first = *gemms[0];
  ASSERT_TRUE(first.bias);
  EXPECT_FALSE(first.bias->global);
  ASSERT_EQ(first.outputParts.size(), 2u);
  EXPECT_EQ(first.outputParts[1].str("n"), "y2[n]");
  // A shared bias fuses; slices that overlap do not.
  const intra::GemmInstance &second = *gemms[1];
  ASSERT_TRUE(second.bias);
  EXPECT_TRUE(second.bias->global);
  EXPECT_TRUE(second.outputParts.empty());
  EXPECT_EQ(second.output.str("n"), "q[n]");
  // An input row is no bias.
  EXPECT_FALSE(gemms[2]->bias);
  EXPECT_EQ(gemms[2]->output.str("n"), "r0[n]");
}

// A shared-weight linear of a GEMM's finished row becomes the GEMM's row
// dot; the row is still stored when others read it. Not a row dot: a
// linear by a per-type weight, one that accumulates, and any without
// fusion.
TEST(LowerToIntraOpTest, SharedLinearsOfAGemmRowBecomeItsRowDot) {
  const char *text = R"(module @dots {
  hyper d : int = 4
  hyper m : int = 2
  input x : node[d]
  param w : ntype[d, d]
  param we : etype[d, d]
  param k : global[d, m]
  param kt : etype[d, m]
  output y : node[d]
  output a : node[m]
  output b : edge[m]
  output c : node[m]
  temp p : node[d]
  temp q : edge[d]
  foreach n in nodes {
    p[n] = linear(x[n], w[n.ntype])
    a[n] = linear(p[n], k)
    y[n] = add(p[n], x[n])
  }
  foreach e in edges {
    q[e] = linear(x[e.src], we[e.etype])
    b[e] = linear(q[e], kt[e.etype])
    c[e.dst] += linear(q[e], k)
  }
}
)";
  intra::Program p = lower(parseVerified(text, "dots.ir"));
  std::vector<const intra::GemmInstance *> gemms;
  for (const intra::Instance &inst : p.instances)
    if (const auto *g = std::get_if<intra::GemmInstance>(&inst))
      gemms.push_back(g);
  ASSERT_EQ(gemms.size(), 4u);
  const intra::GemmInstance &first = *gemms[0];
  ASSERT_TRUE(first.rowDot);
  EXPECT_EQ(first.output.str("n"), "p[n]");
  EXPECT_EQ(first.rowDot->weight.str("n"), "k");
  EXPECT_EQ(first.rowDot->output.str("n"), "a[n]");
  EXPECT_EQ(first.rowDot->m.str(), "m");
  EXPECT_EQ(first.stmts, (std::vector<int>{0, 1}));
  ASSERT_TRUE(p.findLayout("a") && p.findLayout("p"));
  EXPECT_EQ(p.findLayout("a")->producer, first.name);
  EXPECT_EQ(p.findLayout("p")->storage, intra::Storage::Buffer);
  const std::string text0 = intra::printProgram(p);
  EXPECT_NE(text0.find("    row_dot a[n] = linear(p[n], k) m m\n"),
            std::string::npos);
  // q's readers: a per-type weight (its own GEMM) and a sum into c.
  for (size_t i = 1; i < gemms.size(); ++i)
    EXPECT_FALSE(gemms[i]->rowDot) << gemms[i]->name;
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(intra::verifyProgram(p, diags));

  passes::LoweringOptions unfused;
  unfused.fuse = false;
  intra::Program q = lower(parseVerified(text, "dots.ir"), unfused);
  for (const intra::Instance &inst : q.instances) {
    if (const auto *g = std::get_if<intra::GemmInstance>(&inst)) {
      EXPECT_FALSE(g->rowDot) << g->name;
    }
  }
}

TEST(LowerToIntraOpTest, VerifierRejectsARowDotOfAScatteredRow) {
  intra::Program p = lower(loadBundledModel("rgat_pyg"));
  auto &g = std::get<intra::GemmInstance>(p.instances[0]);
  ASSERT_TRUE(g.rowDot);
  ir::DiagnosticEngine ok;
  EXPECT_TRUE(intra::verifyProgram(p, ok));
  g.rowDot->weight.global = false;
  g.rowDot->weight.path = {ir::Attr::EType};
  ir::DiagnosticEngine diags;
  EXPECT_FALSE(intra::verifyProgram(p, diags));
}

TEST(LowerToIntraOpTest, OuterProductIntoWeightRows) {
  ir::Module m = parseVerified(R"(module @grad {
  hyper d : int = 4
  input x : node[d]
  input g : edge[d]
  input y : node[d]
  output gW : etype[d, d]
  output gS : global[d, d]
  foreach e in edges {
    gW[e.etype] += outer(x[e.src], g[e])
  }
  foreach n in nodes {
    gS += outer(x[n], y[n])
  }
}
)",
                               "grad.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "GG");
  const intra::GemmInstance &w = gemm(p, 0);
  EXPECT_EQ(w.mode, intra::GemmInstance::Mode::Outer);
  EXPECT_EQ(*w.segmentBy, std::vector<ir::Attr>{ir::Attr::EType});
  EXPECT_EQ(w.output.str("e"), "gW[e.etype]");
  EXPECT_TRUE(w.atomic);
  const intra::GemmInstance &s = gemm(p, 1);
  EXPECT_FALSE(s.segmentBy);
  EXPECT_EQ(s.output.str("n"), "gS");
  EXPECT_NE(intra::printProgram(p).find("    mode outer\n"), std::string::npos);
}

// --------------------------------------------------- traversal details

TEST(LowerToIntraOpTest, HoistsNodeLevelStatementOutOfIncomingLoop) {
  ir::Module m = parseVerified(R"(module @hoist {
  hyper d : int = 4
  input x : node[d]
  input w : edge[d]
  temp s : node[d]
  temp t : edge[d]
  temp u : edge[d]
  output h : node[d]
  foreach n in dst_nodes {
    s[n] = exp(x[n])
    foreach e in n.incoming {
      t[e] = relu(s[e.dst])
      u[e] = mul(t[e], w[e])
      h[n] += copy(u[e])
    }
  }
}
)",
                               "hoist.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "T");
  const auto &t = std::get<intra::TraversalInstance>(p.instances[0]);
  EXPECT_EQ(t.access, intra::AccessScheme::CsrByDst);
  // t moved to the node level, reading s[n]; the edge loop keeps u and h.
  ASSERT_EQ(t.root->body.size(), 3u);
  const auto &hoisted = std::get<intra::TravStmt>(t.root->body[1]);
  EXPECT_EQ(hoisted.id, 1);
  EXPECT_TRUE(hoisted.hoisted);
  EXPECT_FALSE(hoisted.storeInInnerLoop);
  EXPECT_EQ(ir::printStmt(hoisted.stmt), "t[e] = relu(s[n])");
  const auto &inner = *std::get<std::unique_ptr<intra::TravLoop>>(t.root->body[2]);
  ASSERT_EQ(inner.body.size(), 2u);
  EXPECT_EQ(std::get<intra::TravStmt>(inner.body[1]).reduction,
            intra::ReductionScheme::Segmented);
  // Everything but the output stays in registers.
  for (const char *v : {"s", "t", "u"})
    EXPECT_EQ(p.findLayout(v)->storage, intra::Storage::Register) << v;
  EXPECT_EQ(p.findLayout("h")->storage, intra::Storage::Buffer);
  EXPECT_NE(intra::printProgram(p).find(
                "      s1: t[e] = relu(s[n]) {hoisted}\n"
                "      foreach e in n.incoming {\n"),
            std::string::npos)
      << intra::printProgram(p);
}

TEST(LowerToIntraOpTest, HoistedStatementWithStoredRowsStoresInInnerLoop) {
  ir::Module m = parseVerified(R"(module @hoist2 {
  hyper d : int = 4
  input x : node[d]
  output t : edge[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      t[e] = relu(x[e.dst])
    }
  }
}
)",
                               "hoist2.ir");
  intra::Program p = lower(m);
  const auto &t = std::get<intra::TraversalInstance>(p.instances.at(0));
  ASSERT_EQ(t.root->body.size(), 2u); // the hoisted stmt, the edge loop
  const auto &s = std::get<intra::TravStmt>(t.root->body[0]);
  EXPECT_TRUE(s.hoisted);
  EXPECT_TRUE(s.storeInInnerLoop);
  EXPECT_EQ(t.access, intra::AccessScheme::CsrByDst);
}

TEST(LowerToIntraOpTest, ReductionSchemes) {
  ir::Module m = parseVerified(R"(module @red {
  hyper d : int = 4
  input m : edge[d]
  output a : node[d]
  output b : etype[d]
  output c : node[d]
  output o : node[d]
  output u : node[d]
  foreach e in edges {
    a[e.dst] += copy(m[e])
    u[e.src] += copy(m[e])
    b[e.etype] max= copy(m[e])
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      c[n] mean= copy(m[e])
    }
  }
  foreach n in src_nodes {
    foreach e in n.outgoing {
      o[n] += copy(m[e])
    }
  }
}
)",
                               "red.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "TTT");
  std::vector<intra::ReductionScheme> got;
  std::vector<intra::AccessScheme> access;
  for (const intra::Instance &inst : p.instances) {
    const auto &t = std::get<intra::TraversalInstance>(inst);
    access.push_back(t.access);
    intra::forEachTravStmt(*t.root,
                           [&](const intra::TravStmt &s) { got.push_back(s.reduction); });
  }
  // A flat edge loop's sum into e.dst is aggregated over a node's run of
  // in-edges (consecutive on edges numbered by destination); into e.src,
  // no such run: one atomic per edge.
  EXPECT_EQ(got, (std::vector<intra::ReductionScheme>{
                     intra::ReductionScheme::PartialAtomic,
                     intra::ReductionScheme::Atomic,
                     intra::ReductionScheme::PartialAtomic,
                     intra::ReductionScheme::Segmented,
                     intra::ReductionScheme::Segmented}));
  EXPECT_EQ(access, (std::vector<intra::AccessScheme>{
                        intra::AccessScheme::Coo, intra::AccessScheme::CsrByDst,
                        intra::AccessScheme::CscBySrc}));
}

TEST(LowerToIntraOpTest, CompactPairRowsAndGemmOverPairs) {
  ir::Module m = parseVerified(R"(module @compact {
  hyper d : int = 4
  input x : node[d]
  param W : etype[d, d]
  temp msg : pair[d]
  output h : node[d]
  foreach p in pairs {
    msg[p] = linear(x[p.src], W[p.etype])
  }
  foreach e in edges {
    h[e.dst] += copy(msg[e.pair])
  }
}
)",
                               "compact.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "GT");
  EXPECT_EQ(gemm(p, 0).rows, intra::RowDomain::Pairs);
  EXPECT_EQ(gemm(p, 0).input.str("p"), "x[p.src]");
  EXPECT_EQ(p.findLayout("msg")->rows, intra::RowScheme::PairRows);
  EXPECT_EQ(p.findLayout("msg")->storage, intra::Storage::Buffer);
}

// RGCN's messages when they are not compacted: `m[e] = linear(x[e.src],
// W[e.etype])` summed into the destination over `rel_in_degree[e]`. The
// GEMM absorbs the scaled sum (`h[e.dst] += atomic`, epilogue div) and,
// since the scalar is the same on a whole (destination, relation)
// segment, runs summed by segment.
TEST(LowerToIntraOpTest, EdgeGemmIntoDestinationsRunsSummedBySegment) {
  intra::Program p =
      lower(parseVerified(passtest::summedMessagesModule(), "summed.ir"));
  ASSERT_EQ(shape(p), "G") << intra::printProgram(p);
  const intra::GemmInstance &g = gemm(p, 0);
  EXPECT_TRUE(g.summedBySegment);
  EXPECT_EQ(g.output.str("e"), "h[e.dst]");
  EXPECT_TRUE(g.atomic);
  EXPECT_NE(intra::printProgram(p).find(
                "    rows edges segments etype summed dst_etype\n"),
            std::string::npos);
  // Without fusion the scaled sum stays a traversal: nothing to sum.
  passes::LoweringOptions unfused;
  unfused.fuse = false;
  intra::Program plain = lower(
      parseVerified(passtest::summedMessagesModule(), "summed.ir"), unfused);
  EXPECT_FALSE(gemm(plain, 0).summedBySegment);
}

TEST(LowerToIntraOpTest, PerEdgeScalarsAndOtherTargetsAreNotSummed) {
  // A scalar that differs between the edges of one segment.
  intra::Program scaled =
      lower(parseVerified(passtest::summedMessagesModule("w"), "w.ir"));
  ASSERT_EQ(shape(scaled), "G") << intra::printProgram(scaled);
  EXPECT_FALSE(gemm(scaled, 0).summedBySegment);
  // Into the source: the segments would be (source, relation) ones.
  intra::Program bySrc = lower(parseVerified(
      R"(module @bysrc {
  hyper d : int = 8
  input x : node[d]
  param W : etype[d, d]
  output h : node[d]
  foreach e in edges {
    h[e.src] += linear(x[e.dst], W[e.etype])
  }
}
)",
      "bysrc.ir"));
  EXPECT_FALSE(gemm(bySrc, 0).summedBySegment);
}

TEST(LowerToIntraOpTest, VerifierRejectsASummedGemmThatIsNotASegmentSum) {
  intra::Program p =
      lower(parseVerified(passtest::summedMessagesModule(), "summed.ir"));
  auto &g = std::get<intra::GemmInstance>(p.instances[0]);
  ASSERT_TRUE(g.summedBySegment);
  g.output.path = {ir::Attr::Src};
  ir::DiagnosticEngine wrongTarget;
  EXPECT_FALSE(intra::verifyProgram(p, wrongTarget));
  g.output.path = {ir::Attr::Dst};
  g.epilogue->scalar.value = "w";
  ir::DiagnosticEngine wrongScalar;
  EXPECT_FALSE(intra::verifyProgram(p, wrongScalar));
  std::ostringstream text;
  wrongScalar.print(text);
  EXPECT_NE(text.str().find("only rel_in_degree"), std::string::npos)
      << text.str();
}

/// An attention layer's weighted sum as uncompact-weighted-sums leaves it:
/// each edge's message x[e.src] W[e.etype], cut into heads, times its
/// per-head weight a[e], added into its destination. `sum` is the sum's
/// target (h[n]: a segment sum; another row otherwise).
std::string weightedHeadsModule(const std::string &sum = "h[n] +=") {
  return R"(module @weighted {
  hyper d : int = 4
  hyper heads : int = 2
  input x : node[d]
  input a : edge[heads]
  param W : etype[d, heads*d]
  temp m : edge[heads*d]
  temp z : edge[heads, d]
  output h : node[heads, d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      m[e] = linear(x[e.src], W[e.etype])
      z[e] = reshape(m[e]) shape [heads, d]
      )" +
         sum + R"( mul(a[e], z[e])
    }
  }
}
)";
}

// The weights go into the summed rows (no epilogue), and the heads become
// the template's: each reads the same x row and its columns of W.
TEST(LowerToIntraOpTest, PerEdgeWeightsOfASegmentSumWeighItsRows) {
  ir::Module m = parseVerified(weightedHeadsModule(), "weighted.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "G") << intra::printProgram(p);
  const intra::GemmInstance &g = gemm(p, 0);
  EXPECT_TRUE(g.summedBySegment);
  ASSERT_TRUE(g.sumWeights.has_value());
  EXPECT_EQ(g.sumWeights->str("e"), "a[e]");
  EXPECT_FALSE(g.epilogue.has_value());
  EXPECT_TRUE(g.headsInColumns);
  EXPECT_FALSE(g.perHead);
  EXPECT_EQ(g.heads.str(), "heads");
  EXPECT_EQ(g.n.str(), "d");
  EXPECT_EQ(g.k.str(), "d");
  const std::string text = intra::printProgram(p);
  EXPECT_NE(text.find("    rows edges segments etype summed dst_etype "
                      "weighted a[e]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    weight W[e.etype] heads_in_columns\n"),
            std::string::npos)
      << text;
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(intra::verifyProgram(p, diags));
  expectInstanceOrderComputesTheModule(m, p, 21);
}

/// Whether some GEMM of `p` has `field` set (an optional of GemmInstance).
template <typename Field>
bool anyGemmHas(const intra::Program &p, Field intra::GemmInstance::*field) {
  for (const intra::Instance &i : p.instances) {
    const auto *g = std::get_if<intra::GemmInstance>(&i);
    if (g && ((*g).*field).has_value())
      return true;
  }
  return false;
}

/// `p`, lowered from `m`, prints `line`, verifies, and computes `m` when
/// its instances run in order (a fused GEMM's checks).
void expectPrintsVerifiesAndComputes(const ir::Module &m,
                                     const intra::Program &p,
                                     const std::string &line, int seed) {
  const std::string text = intra::printProgram(p);
  EXPECT_NE(text.find(line), std::string::npos) << text;
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(intra::verifyProgram(p, diags));
  expectInstanceOrderComputesTheModule(m, p, seed);
}

/// HGT-PyG's output projection of gelu(agg): `a = gelu(t)` before a
/// linear GEMM that alone reads a (`extra` adds another reader of a).
std::string geluInputModule(const std::string &extra = "") {
  return R"(module @gelu_input {
  hyper d : int = 4
  input t : node[d]
  param W : ntype[d, d]
  temp a : node[d]
  output h : node[d]
  output y : node[d]
  foreach n in nodes {
    a[n] = gelu(t[n])
    h[n] = linear(a[n], W[n.ntype])
    )" + (extra.empty() ? std::string("y[n] = copy(t[n])") : extra) +
         R"(
  }
}
)";
}

// The gelu goes into the GEMM's input (GemmInstance::inputOp): the GEMM
// reads t, and a is never a row. A kept a (saved for a backward), or an a
// another statement reads too, stays a row its traversal writes.
TEST(LowerToIntraOpTest, AGeluThatOnlyAGemmReadsIsItsInputOp) {
  ir::Module m = parseVerified(geluInputModule(), "gelu.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "GT") << intra::printProgram(p);
  const intra::GemmInstance &g = gemm(p, 0);
  ASSERT_TRUE(g.inputOp.has_value());
  EXPECT_EQ(*g.inputOp, ir::OpKind::Gelu);
  EXPECT_EQ(g.input.str("n"), "t[n]");
  EXPECT_EQ(p.findLayout("a")->storage, intra::Storage::Register);
  expectPrintsVerifiesAndComputes(m, p, "    input gelu(t[n])\n", 25);

  passes::LoweringOptions kept;
  kept.saved = {"a"};
  intra::Program q = lower(m, kept);
  EXPECT_FALSE(anyGemmHas(q, &intra::GemmInstance::inputOp))
      << intra::printProgram(q);
  EXPECT_EQ(q.findLayout("a")->storage, intra::Storage::Buffer);

  ir::Module read = parseVerified(geluInputModule("y[n] = copy(a[n])"), "r.ir");
  intra::Program r = lower(read);
  EXPECT_FALSE(anyGemmHas(r, &intra::GemmInstance::inputOp))
      << intra::printProgram(r);
  expectInstanceOrderComputesTheModule(read, r, 26);
}

/// HGT-PyG's gated skip after its output projection, as the frontend
/// writes `h = gate * (linear(t, W) + b) + (1 - gate) * x` with
/// `gate = sigmoid(skip[n.ntype])`. `gateStmt` and `complementStmt` replace
/// gate's and h_1's statements; `extra` is one more statement.
std::string gatedSkipModule(
    const std::string &extra = "y[n] = copy(t[n])",
    const std::string &gateStmt = "gate[n] = sigmoid(skip[n.ntype])",
    const std::string &complementStmt = "h_1[n] = sub(1, gate[n])") {
  return R"(module @gated_skip {
  hyper d : int = 4
  input x : node[d]
  input t : node[d]
  input s : node[]
  param W : ntype[d, d]
  param b : ntype[d]
  param skip : ntype[]
  temp a_0 : node[d]
  temp a : node[d]
  temp gate : node[]
  temp h_0 : node[d]
  temp h_1 : node[]
  temp h_2 : node[d]
  output h : node[d]
  output y : node[d]
  foreach n in nodes {
    a_0[n] = linear(t[n], W[n.ntype])
    a[n] = add(a_0[n], b[n.ntype])
    )" + gateStmt +
         R"(
    h_0[n] = mul(gate[n], a[n])
    )" + complementStmt +
         R"(
    h_2[n] = mul(h_1[n], x[n])
    h[n] = add(h_0[n], h_2[n])
    )" + extra +
         R"(
  }
}
)";
}

// The gated skip goes into the projection's epilogue (GemmInstance::mix):
// the GEMM writes h, and a and the gate's temps are never rows. Not when a
// is kept for a backward, when the gate or h_1 has another reader, when
// the gate is not a param sliced by the segment key, or when the
// complement is not 1 - gate.
TEST(LowerToIntraOpTest, AGatedSkipAfterAProjectionIsItsEpiloguesMix) {
  ir::Module m = parseVerified(gatedSkipModule(), "skip.ir");
  intra::Program p = lower(m);
  const intra::GemmInstance &g = gemm(p, 0);
  ASSERT_TRUE(g.mix.has_value()) << intra::printProgram(p);
  EXPECT_EQ(g.mix->gate.str("n"), "skip[n.ntype]");
  EXPECT_EQ(g.mix->rows.str("n"), "x[n]");
  EXPECT_EQ(g.output.str("n"), "h[n]");
  ASSERT_TRUE(g.bias.has_value());
  EXPECT_EQ(g.stmts, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  for (const char *v : {"a", "gate", "h_0", "h_1", "h_2"})
    EXPECT_EQ(p.findLayout(v)->storage, intra::Storage::Register) << v;
  expectPrintsVerifiesAndComputes(m, p, "    mix sigmoid(skip[n.ntype]) x[n]\n",
                                  27);

  passes::LoweringOptions kept;
  kept.saved = {"a"};
  intra::Program q = lower(m, kept);
  EXPECT_FALSE(anyGemmHas(q, &intra::GemmInstance::mix))
      << intra::printProgram(q);
  EXPECT_EQ(q.findLayout("a")->storage, intra::Storage::Buffer);
  expectInstanceOrderComputesTheModule(m, q, 28);

  const std::vector<std::string> others[] = {
      {"y[n] = mul(gate[n], t[n])"},
      {"y[n] = mul(h_1[n], t[n])"},
      {"y[n] = copy(t[n])", "gate[n] = sigmoid(s[n])"},
      {"y[n] = copy(t[n])", "gate[n] = sigmoid(skip[n.ntype])",
       "h_1[n] = sub(2, gate[n])"},
      {"y[n] = copy(t[n])", "gate[n] = tanh(skip[n.ntype])"},
  };
  int seed = 29;
  for (const std::vector<std::string> &o : others) {
    ir::Module other =
        parseVerified(o.size() == 1   ? gatedSkipModule(o[0])
                      : o.size() == 2 ? gatedSkipModule(o[0], o[1])
                                      : gatedSkipModule(o[0], o[1], o[2]),
                      "other.ir");
    intra::Program r = lower(other);
    EXPECT_FALSE(anyGemmHas(r, &intra::GemmInstance::mix))
        << o.back() << "\n"
        << intra::printProgram(r);
    expectInstanceOrderComputesTheModule(other, r, seed++);
  }
}

/// HGT's weighted sum as uncompact-weighted-sums leaves it: each edge's
/// message is v[e.src] times its relation's per-head matrices, each head
/// weighed by its own a[e] (`weight` a[e], or s[e], one for all heads).
std::string weightedPerHeadModule(const std::string &weight) {
  return R"(module @weighted_per_head {
  hyper d : int = 4
  hyper heads : int = 2
  input v : node[heads, d]
  input a : edge[heads]
  input s : edge[]
  param V : etype[heads, d, d]
  temp m : edge[heads, d]
  output h : node[heads, d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      m[e] = linear(v[e.src], V[e.etype])
      h[n] += mul()" +
         weight + R"(, m[e])
    }
  }
}
)";
}

// Per-head matrices keep their heads: the GEMM is summed with per-head
// weights on its rows (the template weighs head h's input by weight h),
// not heads taken from the weight's columns. A weight shared by the heads
// stays out of the summed rows.
TEST(LowerToIntraOpTest, PerHeadWeightsOfPerHeadMatricesWeighTheirRows) {
  ir::Module m = parseVerified(weightedPerHeadModule("a[e]"), "per_head.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "G") << intra::printProgram(p);
  const intra::GemmInstance &g = gemm(p, 0);
  EXPECT_TRUE(g.summedBySegment);
  ASSERT_TRUE(g.sumWeights.has_value());
  EXPECT_EQ(g.sumWeights->str("e"), "a[e]");
  EXPECT_FALSE(g.epilogue.has_value());
  EXPECT_TRUE(g.perHead);
  EXPECT_FALSE(g.headsInColumns);
  EXPECT_EQ(g.heads.str(), "heads");
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(intra::verifyProgram(p, diags));
  expectInstanceOrderComputesTheModule(m, p, 23);

  ir::Module shared = parseVerified(weightedPerHeadModule("s[e]"), "s.ir");
  intra::Program q = lower(shared);
  EXPECT_FALSE(anyGemmHas(q, &intra::GemmInstance::sumWeights))
      << intra::printProgram(q);
  expectInstanceOrderComputesTheModule(shared, q, 24);
}

// Per-head weights on a row of a one-head GEMM that is not a segment sum
// (here: into the source) stay in the traversal: the template would scale
// every head by the first weight.
TEST(LowerToIntraOpTest, PerHeadScalesOfOneHeadGemmsStayOutOfTheEpilogue) {
  ir::Module m =
      parseVerified(weightedHeadsModule("h[e.src] +="), "weighted_src.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "GT") << intra::printProgram(p);
  EXPECT_FALSE(gemm(p, 0).epilogue.has_value());
  EXPECT_FALSE(gemm(p, 0).summedBySegment);
  expectInstanceOrderComputesTheModule(m, p, 22);
}

// RGAT-PyG's `h = reshape(sum) + bias` after the weighted sum: the GEMM's
// output starts as the bias in every row (no zero-fill, no traversal that
// adds the bias), and the heads' sums are a view of h.
TEST(LowerToIntraOpTest, AnAddingGemmsOutputStartsAsTheBiasAddedToIt) {
  ir::Module m = parseVerified(R"(module @biased {
  hyper d : int = 4
  hyper heads : int = 2
  input x : node[d]
  input a : edge[heads]
  param W : etype[d, heads*d]
  param bias : global[heads*d]
  temp m : edge[heads*d]
  temp z : edge[heads, d]
  temp s : node[heads, d]
  temp s1 : node[heads*d]
  output h : node[heads*d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      m[e] = linear(x[e.src], W[e.etype])
      z[e] = reshape(m[e]) shape [heads, d]
      s[n] += mul(a[e], z[e])
    }
    s1[n] = reshape(s[n]) shape [heads*d]
    h[n] = add(s1[n], bias)
  }
}
)",
                               "biased.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "G") << intra::printProgram(p);
  const intra::GemmInstance &g = gemm(p, 0);
  ASSERT_TRUE(g.initRow.has_value());
  EXPECT_EQ(g.initRow->str("e"), "bias");
  EXPECT_EQ(g.stmts, (std::vector<int>{0, 1, 2, 4}));
  EXPECT_EQ(p.findLayout("s")->viewOf, "h");
  EXPECT_EQ(p.findLayout("h")->storage, intra::Storage::Buffer);
  EXPECT_NE(intra::printProgram(p).find("    init bias\n"), std::string::npos);
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(intra::verifyProgram(p, diags));
  expectInstanceOrderComputesTheModule(m, p, 23);
}

// RGAT's softmax weights, written by the traversal and read only as the
// summed GEMM's weights, are stored in the entries' order.
TEST(LowerToIntraOpTest, WeightsOnlyTheSummedGemmReadsAreStoredInEntryOrder) {
  ir::Module m = parseVerified(R"(module @entry {
  hyper d : int = 4
  input x : node[d]
  input s : edge[]
  param W : etype[d, d]
  temp a : edge[]
  temp m : edge[d]
  output h : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      a[e] = exp(s[e])
      m[e] = linear(x[e.src], W[e.etype])
      h[n] += mul(a[e], m[e])
    }
  }
}
)",
                               "entry.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "TG") << intra::printProgram(p);
  EXPECT_EQ(p.findLayout("a")->rows, intra::RowScheme::EntryRows);
  EXPECT_EQ(p.findLayout("s")->rows, intra::RowScheme::EdgeRows); // an input
  EXPECT_NE(intra::printProgram(p).find("layout a : entry_rows[] temp buffer"),
            std::string::npos)
      << intra::printProgram(p);
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(intra::verifyProgram(p, diags));
  // A GEMM that read them by edge id would read the wrong rows.
  auto &g = std::get<intra::GemmInstance>(p.instances[1]);
  g.epilogue = intra::GemmEpilogue{ir::OpKind::Mul, *g.sumWeights, false};
  g.sumWeights.reset();
  g.summedBySegment = false;
  ir::DiagnosticEngine wrong;
  EXPECT_FALSE(intra::verifyProgram(p, wrong));
  std::ostringstream text;
  wrong.print(text);
  EXPECT_NE(text.str().find("stored in entry order"), std::string::npos)
      << text.str();
}

// A softmax's scores and exponentials, stored and loaded only in the
// traversal's incoming loops, are stored at their CSR position; one that a
// GEMM reads, or that the backward keeps, stays at its edge id.
const char *softmaxModule() {
  return R"(module @softmax {
  hyper d : int = 4
  input x : node[d]
  input s : edge[]
  param W : etype[d, d]
  temp score : edge[]
  temp peak : node[]
  temp shifted : edge[]
  temp expd : edge[]
  temp total : node[]
  temp a : edge[]
  temp m : edge[d]
  output h : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      score[e] = copy(s[e])
      peak[n] max= detach(score[e])
    }
    foreach e in n.incoming {
      shifted[e] = sub(score[e], peak[e.dst])
      expd[e] = exp(shifted[e])
      total[n] += copy(expd[e])
    }
    foreach e in n.incoming {
      a[e] = div(expd[e], total[e.dst])
      m[e] = linear(x[e.src], W[e.etype])
      h[n] += mul(a[e], m[e])
    }
  }
}
)";
}

TEST(LowerToIntraOpTest, TraversalOnlyEdgeTempsAreStoredInCsrOrder) {
  ir::Module m = parseVerified(softmaxModule(), "softmax.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "TG") << intra::printProgram(p);
  EXPECT_EQ(p.findLayout("score")->rows, intra::RowScheme::DstCsrRows)
      << intra::printProgram(p);
  EXPECT_EQ(p.findLayout("expd")->rows, intra::RowScheme::DstCsrRows);
  EXPECT_EQ(p.findLayout("a")->rows, intra::RowScheme::EntryRows); // a GEMM's
  EXPECT_EQ(p.findLayout("s")->rows, intra::RowScheme::EdgeRows);  // an input
  EXPECT_NE(
      intra::printProgram(p).find("layout score : dst_csr_rows[] temp buffer"),
      std::string::npos)
      << intra::printProgram(p);
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(intra::verifyProgram(p, diags));
  expectInstanceOrderComputesTheModule(m, p, 29);

  passes::LoweringOptions keep;
  keep.saved = {"score"};
  intra::Program kept = lower(m, keep);
  EXPECT_EQ(kept.findLayout("score")->rows, intra::RowScheme::EdgeRows);
  EXPECT_EQ(kept.findLayout("expd")->rows, intra::RowScheme::DstCsrRows);
}

TEST(LowerToIntraOpTest, CsrOrderNeedsOneTraversalsEdgeLoopsOfOneKind) {
  ir::Module m = parseVerified(R"(module @mixed {
  hyper d : int = 4
  input s : edge[]
  temp t : edge[]
  temp u : edge[]
  temp v : edge[]
  output h : node[]
  output g : node[]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      t[e] = exp(s[e])
      u[e] = exp(s[e])
      h[n] += copy(t[e])
    }
  }
  foreach n in src_nodes {
    foreach e in n.outgoing {
      v[e] = exp(s[e])
      g[n] += mul(u[e], v[e])
    }
  }
}
)",
                               "mixed.ir");
  intra::Program p = lower(m);
  // t: only the incoming loop; u: read again by the outgoing loop's
  // traversal; v: only the outgoing loop.
  EXPECT_EQ(intra::csrOrderOf(p, "t"), intra::RowScheme::DstCsrRows)
      << intra::printProgram(p);
  EXPECT_EQ(intra::csrOrderOf(p, "u"), std::nullopt);
  EXPECT_EQ(intra::csrOrderOf(p, "v"), intra::RowScheme::SrcCsrRows);
  EXPECT_EQ(intra::csrOrderOf(p, "s"), std::nullopt) // read by two nests
      << intra::printProgram(p);
  EXPECT_EQ(intra::csrOrderOf(p, "h"), std::nullopt); // a node value
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(intra::verifyProgram(p, diags));
  // Forced onto u, or onto t in the other CSR, the verifier objects.
  for (auto [value, rows] : {std::pair{"u", intra::RowScheme::DstCsrRows},
                             std::pair{"t", intra::RowScheme::SrcCsrRows}}) {
    intra::Program forced = lower(m);
    for (intra::ValueLayout &l : forced.layouts)
      if (l.decl.name == value)
        l.rows = rows;
    ir::DiagnosticEngine wrong;
    EXPECT_FALSE(intra::verifyProgram(forced, wrong)) << value;
    std::ostringstream text;
    wrong.print(text);
    EXPECT_NE(
        text.str().find(std::string("value '") + value + "' is stored in"),
        std::string::npos)
        << text.str();
  }
}

// A row with several edge loops (the softmax) runs its hubs on blocks of
// 512 threads; rows with one edge loop keep the build's default (0).
TEST(LowerToIntraOpTest, MultiLoopRowsTakeSmallerHeavyBlocks) {
  intra::Program p = lower(parseVerified(softmaxModule(), "softmax.ir"));
  ASSERT_EQ(shape(p), "TG") << intra::printProgram(p);
  const auto &softmax = std::get<intra::TraversalInstance>(p.instances[0]);
  EXPECT_EQ(softmax.schedule.heavyGroupSize, 512);
  EXPECT_NE(intra::printProgram(p).find(
                "schedule warp_per_vertex feature_tile 32 heavy_group 512\n"),
            std::string::npos)
      << intra::printProgram(p);
  intra::Program sums = lower(parseVerified(R"(module @sums {
  hyper d : int = 4
  input x : node[d]
  output h : node[d]
  output m : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      h[n] += copy(x[e.src])
    }
  }
  foreach e in edges {
    m[e.dst] += copy(x[e.src])
  }
}
)",
                                            "sums.ir"));
  for (const intra::Instance &inst : sums.instances) {
    if (const auto *t = std::get_if<intra::TraversalInstance>(&inst)) {
      EXPECT_EQ(t->schedule.heavyGroupSize, 0) << t->name;
    }
  }
  EXPECT_EQ(intra::printProgram(sums).find("heavy_group"), std::string::npos);

  // Blocks of whole warps, at most 1024 threads, on node rows only.
  auto rejects = [](intra::Program program, int instance, int group) {
    std::get<intra::TraversalInstance>(program.instances[instance])
        .schedule.heavyGroupSize = group;
    ir::DiagnosticEngine diags;
    EXPECT_FALSE(intra::verifyProgram(program, diags)) << group;
    std::ostringstream text;
    diags.print(text);
    EXPECT_NE(text.str().find("has heavy_group " + std::to_string(group)),
              std::string::npos)
        << text.str();
  };
  rejects(lower(parseVerified(softmaxModule(), "softmax.ir")), 0, 48);
  rejects(lower(parseVerified(softmaxModule(), "softmax.ir")), 0, 2048);
  intra::Program edges = lower(parseVerified(R"(module @edges {
  hyper d : int = 4
  input x : node[d]
  output m : node[d]
  foreach e in edges {
    m[e.dst] += copy(x[e.src])
  }
}
)",
                                             "edges.ir"));
  ASSERT_EQ(shape(edges), "T");
  rejects(std::move(edges), 0, 512); // an edge loop has no heavy rows
}

TEST(LowerToIntraOpTest, VerifierRejectsMisplacedWeightsAndHeads) {
  auto good = [] {
    return lower(parseVerified(weightedHeadsModule(), "weighted.ir"));
  };
  auto rejects = [](const intra::Program &p, const std::string &message) {
    ir::DiagnosticEngine diags;
    EXPECT_FALSE(intra::verifyProgram(p, diags)) << message;
    std::ostringstream text;
    diags.print(text);
    EXPECT_NE(text.str().find(message), std::string::npos) << text.str();
  };
  intra::Program unsummed = good();
  std::get<intra::GemmInstance>(unsummed.instances[0]).summedBySegment = false;
  rejects(unsummed, "weighs its rows without being summed by segment");
  intra::Program transposed = good();
  std::get<intra::GemmInstance>(transposed.instances[0]).transposeWeight = true;
  rejects(transposed, "takes its heads from the weight's columns");
  intra::Program scaled = good();
  auto &g = std::get<intra::GemmInstance>(scaled.instances[0]);
  g.headsInColumns = false;
  g.epilogue = intra::GemmEpilogue{ir::OpKind::Mul, *g.sumWeights, true};
  g.sumWeights.reset();
  rejects(scaled, "scales its rows by head but has no heads");
  // An input op on summed rows, or one that is not gelu.
  intra::Program summedGelu = good();
  std::get<intra::GemmInstance>(summedGelu.instances[0]).inputOp =
      ir::OpKind::Gelu;
  rejects(summedGelu, "applies an op other than gelu to its input");
  intra::Program relu = lower(parseVerified(geluInputModule(), "gelu.ir"));
  std::get<intra::GemmInstance>(relu.instances[0]).inputOp = ir::OpKind::Relu;
  rejects(relu, "applies an op other than gelu to its input");
  // A gated mix into an accumulated output, by a gate that is not a []
  // param sliced by the segment key, or of rows not of the output's shape.
  auto mixed = [] {
    return lower(parseVerified(gatedSkipModule(), "skip.ir"));
  };
  intra::Program accumulated = mixed();
  auto &ga = std::get<intra::GemmInstance>(accumulated.instances[0]);
  ga.accumulate = ir::Reduce::Sum;
  rejects(accumulated, "mixes rows into an output that is not plainly");
  intra::Program byBias = mixed();
  auto &gb = std::get<intra::GemmInstance>(byBias.instances[0]);
  gb.mix->gate = *gb.bias;
  rejects(byBias, "mix gate is not a [] param sliced by the segment key");
  intra::Program byRow = mixed();
  std::get<intra::GemmInstance>(byRow.instances[0]).mix->rows.value = "s";
  rejects(byRow, "mixes in rows not of its output's shape and space");
}

// A gradient reached two ways, `s = add(a, t)` with `t` a linear GEMM's
// row and `a` summed in an earlier nest: the GEMM adds into a's buffer
// (`s[p] +=`, no atomics) and `s` becomes a view of `a`, so no traversal
// reads two rows to write a third. The instance order still computes the
// module's values.
const char *kTwoWayGradient = R"(module @twoway {
  hyper d : int = 4
  input g : edge[d]
  input c : pair[1]
  param k : global[1, d]
  param W : etype[d, d]
  temp a : pair[d]
  temp t : pair[d]
  temp s : pair[d]
  output y : node[d]
  foreach e in edges {
    a[e.pair] += copy(g[e])
  }
  foreach p in pairs {
    t[p] = linear(c[p], k)
    s[p] = add(a[p], t[p])
    y[p.src] += linear(s[p], W[p.etype])
  }
}
)";

TEST(LowerToIntraOpTest, GemmAddsIntoAnAddendSummedEarlier) {
  ir::Module m = parseVerified(kTwoWayGradient, "twoway.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "TGG") << intra::printProgram(p);
  const intra::GemmInstance &sum = gemm(p, 1);
  EXPECT_EQ(sum.output.str("p"), "s[p]");
  EXPECT_EQ(sum.accumulate, ir::Reduce::Sum);
  EXPECT_FALSE(sum.atomic);
  EXPECT_EQ(sum.stmts.size(), 2u);
  const intra::ValueLayout &view = *p.findLayout("s");
  EXPECT_EQ(view.storage, intra::Storage::View);
  EXPECT_EQ(view.viewOf, "a");
  EXPECT_TRUE(intra::isAccumulatedView(p, view));
  EXPECT_EQ(p.findLayout("a")->storage, intra::Storage::Buffer);
  EXPECT_EQ(p.findLayout("t")->storage, intra::Storage::Register);
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(intra::verifyProgram(p, diags));
  // The printed program parses back to the same text.
  const std::string text = intra::printProgram(p);
  EXPECT_NE(text.find("layout s : pair_rows[d] temp view of a s2"),
            std::string::npos)
      << text;
  expectInstanceOrderComputesTheModule(m, p, 7);
}

// The sum stays a traversal when the GEMM may not overwrite the addend:
// another statement reads it, it is summed in the same nest (the sum then
// fuses into that traversal), or it is saved for the backward.
TEST(LowerToIntraOpTest, GemmLeavesAnAddendItMayNotOverwrite) {
  const std::string text = kTwoWayGradient;
  auto lowered = [](const std::string &module,
                    passes::LoweringOptions options = {}) {
    return lower(parseVerified(module, "twoway.ir"), options);
  };
  auto replaced = [&](const std::string &from, const std::string &to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  // Read again after the sum.
  std::string twice = replaced("  output y : node[d]\n",
                               "  output y : node[d]\n  output z : pair[d]\n");
  twice.replace(twice.find("    y[p.src] +="), 0, "    z[p] = copy(a[p])\n");
  intra::Program reread = lowered(twice);
  EXPECT_NE(reread.findLayout("s")->storage, intra::Storage::View);
  // Written in the same nest.
  std::string same = replaced(
      "  foreach e in edges {\n    a[e.pair] += copy(g[e])\n  }\n"
      "  foreach p in pairs {\n",
      "  foreach p in pairs {\n    a[p] = relu(b[p])\n");
  same.replace(same.find("  input c"), 0, "  input b : pair[d]\n");
  intra::Program sameNest = lowered(same);
  EXPECT_NE(sameNest.findLayout("s")->storage, intra::Storage::View);
  // Saved.
  passes::LoweringOptions saved;
  saved.saved = {"a"};
  EXPECT_NE(lowered(text, saved).findLayout("s")->storage,
            intra::Storage::View);
}

// A gradient reached two ways, each way a GEMM of its own nest: the sum
// over every node runs in neither a loop nor a buffer of its own.
const char *kSummedPartials = R"(module @partials {
  hyper d : int = 4
  input x : node[d]
  param W : etype[d, d]
  param V : global[d, d]
  temp a : node[d]
  temp b : node[d]
  output y : node[d]
  foreach e in edges {
    a[e.dst] += linear(x[e.src], W[e.etype])
  }
  foreach n in nodes {
    b[n] = linear(x[n], V)
  }
  foreach n in nodes {
    y[n] = add(a[n], b[n])
  }
}
)";

TEST(LowerToIntraOpTest, GemmsAddTheirPartialsIntoTheSum) {
  ir::Module m = parseVerified(kSummedPartials, "partials.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "GG") << intra::printProgram(p);
  // The scatter keeps its atomics; the plain rows now add (one output row
  // per GEMM row: no atomics); the later GEMM lowers the sum's statement.
  EXPECT_EQ(gemm(p, 0).output.str("e"), "a[e.dst]");
  EXPECT_TRUE(gemm(p, 0).atomic);
  const intra::GemmInstance &last = gemm(p, 1);
  EXPECT_EQ(last.output.str("n"), "b[n]");
  EXPECT_EQ(last.accumulate, ir::Reduce::Sum);
  EXPECT_FALSE(last.atomic);
  EXPECT_EQ(last.stmts, (std::vector<int>{1, 2}));
  for (const char *partial : {"a", "b"}) {
    const intra::ValueLayout &view = *p.findLayout(partial);
    EXPECT_EQ(view.storage, intra::Storage::View) << partial;
    EXPECT_EQ(view.viewOf, "y") << partial;
    EXPECT_TRUE(intra::isAccumulatedView(p, view)) << partial;
  }
  EXPECT_EQ(p.findLayout("y")->storage, intra::Storage::Buffer);
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(intra::verifyProgram(p, diags));
  const std::string text = intra::printProgram(p);
  EXPECT_NE(text.find("layout b : node_rows[d] temp view of y s1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("layout y : node_rows[d] output buffer from @gemm_1"),
            std::string::npos)
      << text;
  expectInstanceOrderComputesTheModule(m, p, 7);
  // -fno-fuse keeps the sum's traversal.
  passes::LoweringOptions unfused;
  unfused.fuse = false;
  EXPECT_EQ(shape(lower(m, unfused)), "GGT");
}

// The partials keep their buffers and the sum its traversal when a partial
// has another reader, is saved for the backward or comes from a
// traversal, and when the sum is read, is a temp, or is written in a
// partial's nest.
TEST(LowerToIntraOpTest, PartialsStayApartWhenTheSumMayNotTakeThem) {
  using Edits = std::vector<std::pair<std::string, std::string>>;
  // Whether b became a view of the sum; the sum's statement is then in
  // no traversal.
  auto taken = [](const Edits &edits, passes::LoweringOptions options = {}) {
    std::string t = kSummedPartials;
    for (const auto &[from, to] : edits)
      t.replace(t.find(from), from.size(), to);
    intra::Program p = lower(parseVerified(t, "partials.ir"), options);
    return p.findLayout("b")->storage == intra::Storage::View;
  };
  ASSERT_TRUE(taken({}));
  const std::string outputs = "  output y : node[d]\n";
  const std::string withZ = outputs + "  output z : node[d]\n";
  const std::string sum = "    y[n] = add(a[n], b[n])\n";
  EXPECT_FALSE(
      taken({{outputs, withZ}, {sum, sum + "    z[n] = relu(a[n])\n"}}))
      << "a partial read again";
  passes::LoweringOptions saved;
  saved.saved = {"a"};
  EXPECT_FALSE(taken({}, saved)) << "a saved partial";
  EXPECT_FALSE(taken({{"a[e.dst] += linear(x[e.src], W[e.etype])",
                       "a[e.dst] += relu(x[e.src])"}}))
      << "a partial from a traversal";
  EXPECT_FALSE(
      taken({{outputs, withZ}, {sum, sum + "    z[n] = relu(y[n])\n"}}))
      << "the sum read";
  EXPECT_FALSE(taken({{outputs, "  temp y : node[d]\n  output z : node[d]\n"},
                      {sum, sum + "    z[n] = relu(x[n])\n"}}))
      << "a temp sum";
  EXPECT_FALSE(
      taken({{"    b[n] = linear(x[n], V)\n  }\n  foreach n in nodes {\n",
              "    b[n] = linear(x[n], V)\n"}}))
      << "the sum in b's nest";
}

// RGCN's forward after bias reassociation: one partial is a GEMM that
// writes every row (with its bias), the other a GEMM that adds into its
// rows (summed by segment, with an epilogue). The first writes the sum,
// the second adds into it after it: two GEMMs, no traversal.
const char *kWrittenThenAdded = R"(module @written {
  hyper d : int = 4
  input x : node[d]
  param W : etype[d, d]
  param V : global[d, d]
  param c : global[d]
  graph rel_in_degree : edge[]
  temp m : edge[d]
  temp a : node[d]
  temp r : node[d]
  temp b : node[d]
  output y : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      m[e] = linear(x[e.src], W[e.etype])
      a[n] += div(m[e], rel_in_degree[e])
    }
    r[n] = linear(x[n], V)
    b[n] = add(r[n], c)
    y[n] = add(a[n], b[n])
  }
}
)";

TEST(LowerToIntraOpTest, OneGemmWritesTheSumAndTheOtherAddsIntoIt) {
  ir::Module m = parseVerified(kWrittenThenAdded, "written.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "GG") << intra::printProgram(p);
  const intra::GemmInstance &writes = gemm(p, 0), &adds = gemm(p, 1);
  EXPECT_EQ(writes.output.str("n"), "b[n]");
  EXPECT_TRUE(writes.bias.has_value());
  EXPECT_EQ(writes.accumulate, ir::Reduce::None);
  EXPECT_EQ(adds.output.str("e"), "a[e.dst]");
  EXPECT_TRUE(adds.summedBySegment);
  EXPECT_TRUE(adds.epilogue.has_value());
  EXPECT_EQ(adds.stmts, (std::vector<int>{0, 1, 4}));
  for (const char *partial : {"a", "b"}) {
    EXPECT_EQ(p.findLayout(partial)->storage, intra::Storage::View) << partial;
    EXPECT_EQ(p.findLayout(partial)->viewOf, "y") << partial;
  }
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(intra::verifyProgram(p, diags));
  expectInstanceOrderComputesTheModule(m, p, 9);
}

// The adding GEMM of an earlier nest than the writing one would be
// overwritten: the sum keeps its traversal. Without the bias the writing
// GEMM still writes the sum first.
TEST(LowerToIntraOpTest, NoGemmWritesASumAfterAnotherAddedIntoIt) {
  std::string later = kWrittenThenAdded;
  const std::string root = "    r[n] = linear(x[n], V)\n";
  later.replace(later.find(root), root.size(),
                "  }\n  foreach n in dst_nodes {\n" + root);
  intra::Program p = lower(parseVerified(later, "later.ir"));
  EXPECT_EQ(shape(p), "GGT") << intra::printProgram(p);
  EXPECT_NE(p.findLayout("b")->storage, intra::Storage::View);
  std::string plain = kWrittenThenAdded;
  const std::string bias = "    b[n] = add(r[n], c)\n";
  plain.replace(plain.find(bias), bias.size(), "");
  const std::string sum = "y[n] = add(a[n], b[n])";
  plain.replace(plain.find(sum), sum.size(), "y[n] = add(a[n], r[n])");
  const std::string decl = "  temp b : node[d]\n";
  plain.replace(plain.find(decl), decl.size(), "");
  ir::Module m = parseVerified(plain, "plain.ir");
  p = lower(m);
  EXPECT_EQ(shape(p), "GG") << intra::printProgram(p);
  EXPECT_EQ(gemm(p, 0).output.str("n"), "r[n]");
  EXPECT_EQ(gemm(p, 0).accumulate, ir::Reduce::None);
  EXPECT_EQ(p.findLayout("r")->viewOf, "y");
  expectInstanceOrderComputesTheModule(m, p, 10);
}

// An attention logit from the destination's own row (RGAT's alpha_0 after
// linear reordering) stays in the traversal over the destination's
// in-edges; from the source's row, or wider than a few scalars a row, it
// is a GEMM.
const char *kDstLogit = R"(module @logit {
  hyper d : int = 8
  hyper heads : int = 2
  input x : node[d]
  param w : etype[d, heads]
  temp s : edge[heads]
  output h : node[heads]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      s[e] = linear(x[e.dst], w[e.etype])
      h[n] += exp(s[e])
    }
  }
}
)";

// A narrow product of the destination row is the same on every edge of a
// (destination, relation) segment: with fusion it runs once a chunk of
// the summed segments (a per-chunk GEMM into a chunk_rows buffer the
// traversal reads through sum_edge_chunk); without, it stays a
// traversal statement. A wide one, or one of the source row, is a
// per-edge GEMM either way.
TEST(LowerToIntraOpTest, NarrowProductOfTheDestinationRowRunsOncePerChunk) {
  auto edited = [](const std::string &from, const std::string &to) {
    std::string text = kDstLogit;
    if (!from.empty())
      text.replace(text.find(from), from.size(), to);
    return text;
  };
  auto lowered = [&](const std::string &from, const std::string &to) {
    return lower(parseVerified(edited(from, to), "logit.ir"));
  };
  EXPECT_EQ(shape(lowered("x[e.dst]", "x[e.src]")), "GT");
  EXPECT_FALSE(gemm(lowered("x[e.dst]", "x[e.src]"), 0).perChunk);
  // Wider than a traversal takes (8 scalars an edge): still a GEMM, and
  // still once a chunk (a row a chunk, not one an edge).
  EXPECT_EQ(shape(lowered("heads : int = 2", "heads : int = 8")), "GT");
  EXPECT_TRUE(gemm(lowered("heads : int = 2", "heads : int = 8"), 0).perChunk);
  {
    ir::Module wide =
        parseVerified(edited("heads : int = 2", "heads : int = 8"), "w.ir");
    expectInstanceOrderComputesTheModule(wide, lower(wide), 8);
  }
  // The node's row by its own name, and linear_t (w stored as [heads,
  // d]) too; each computes what the module does.
  std::string transposed = edited("etype[d, heads]", "etype[heads, d]");
  transposed.replace(transposed.find("linear("), 7, "linear_t(");
  passes::LoweringOptions unfused;
  unfused.fuse = false;
  for (const std::string &text :
       {std::string(kDstLogit), edited("x[e.dst]", "x[n]"), transposed}) {
    ir::Module m = parseVerified(text, "logit.ir");
    intra::Program p = lower(m);
    ASSERT_EQ(shape(p), "GT") << intra::printProgram(p);
    EXPECT_TRUE(gemm(p, 0).perChunk);
    EXPECT_EQ(p.findLayout("s")->rows, intra::RowScheme::ChunkRows);
    EXPECT_NE(intra::printProgram(p).find("segments etype per_chunk\n"),
              std::string::npos);
    ir::DiagnosticEngine diags;
    EXPECT_TRUE(intra::verifyProgram(p, diags));
    expectInstanceOrderComputesTheModule(m, p, 7);
    // Unfused, each statement is a traversal of its own.
    intra::Program plain = lower(m, unfused);
    EXPECT_EQ(shape(plain), "TT") << intra::printProgram(plain);
    EXPECT_EQ(plain.findLayout("s")->rows, intra::RowScheme::EdgeRows);
  }
  // A per-chunk value that a GEMM read by edge id would be misread.
  intra::Program p = lower(parseVerified(kDstLogit, "logit.ir"));
  std::get<intra::GemmInstance>(p.instances[0]).perChunk = false;
  ir::DiagnosticEngine wrong;
  EXPECT_FALSE(intra::verifyProgram(p, wrong));
  std::ostringstream text;
  wrong.print(text);
  EXPECT_NE(text.str().find("a row a chunk"), std::string::npos) << text.str();
}

// ------------------------------------------------------------- verifier

// HGT's skip term in small: `t` and `u` read nothing the first traversal
// computes and only the traversal after the GEMM reads them.
const char *kSkipAfterGemm = R"(module @skip {
  hyper d : int = 4
  input x : node[d]
  param W : global[d, d]
  param c : ntype[]
  temp s : node[d]
  temp a : node[d]
  temp g : node[]
  temp t : node[d]
  output h : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      s[n] += copy(x[e.src])
    }
    a[n] = linear(s[n], W)
    g[n] = sigmoid(c[n.ntype])
    t[n] = mul(g[n], x[n])
    h[n] = add(a[n], t[n])
  }
}
)";

/// The statements (ids) of instance i, a traversal, in order.
std::vector<int> travStmts(const intra::Program &p, size_t i) {
  std::vector<int> ids;
  intra::forEachTravStmt(
      *std::get<intra::TraversalInstance>(p.instances.at(i)).root,
      [&](const intra::TravStmt &s) { ids.push_back(s.id); });
  return ids;
}

TEST(LowerToIntraOpTest, NodeStatementsSinkToTheTraversalThatReadsThem) {
  ir::Module m = parseVerified(kSkipAfterGemm, "skip.ir");
  intra::Program p = lower(m);
  ASSERT_EQ(shape(p), "TGT") << intra::printProgram(p);
  // s0: s +=, s1: a = linear, s2: g, s3: t, s4: h.
  EXPECT_EQ(travStmts(p, 0), std::vector<int>{0}) << intra::printProgram(p);
  EXPECT_EQ(travStmts(p, 2), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(p.findLayout("t")->storage, intra::Storage::Register);
  EXPECT_EQ(p.findLayout("g")->storage, intra::Storage::Register);
  expectInstanceOrderComputesTheModule(m, p, 5);
  // Without fusion nothing moves (every statement is its own traversal).
  passes::LoweringOptions unfused;
  unfused.fuse = false;
  EXPECT_EQ(lower(m, unfused).findLayout("t")->storage, intra::Storage::Buffer);
}

TEST(LowerToIntraOpTest, NodeStatementsStayWhereSinkingWouldCostALoad) {
  auto lowered = [](const std::string &text,
                    passes::LoweringOptions options = {}) {
    return lower(parseVerified(text, "skip.ir"), options);
  };
  auto edited = [](std::string text, const std::string &from,
                   const std::string &to) {
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  // The first traversal loads x[n] too: t would load it a second time.
  const std::string twice = edited(
      edited(kSkipAfterGemm, "    a[n] = linear(s[n], W)\n",
             "    b[n] = add(s[n], x[n])\n    a[n] = linear(b[n], W)\n"),
      "  temp a : node[d]\n", "  temp a : node[d]\n  temp b : node[d]\n");
  intra::Program loadsX = lowered(twice);
  EXPECT_EQ(loadsX.findLayout("t")->storage, intra::Storage::Buffer)
      << intra::printProgram(loadsX);
  // A GEMM reads t: it is stored wherever it is computed.
  const std::string gemmReads =
      edited(edited(kSkipAfterGemm, "  output h : node[d]\n",
                    "  output h : node[d]\n  output y : node[d]\n"),
             "    h[n] = add(a[n], t[n])\n",
             "    h[n] = add(a[n], t[n])\n    y[n] = linear(t[n], W)\n");
  intra::Program gemmRead = lowered(gemmReads);
  EXPECT_EQ(gemmRead.findLayout("t")->storage, intra::Storage::Buffer);
  EXPECT_EQ(gemmRead.findLayout("t")->producer, "trav_0")
      << intra::printProgram(gemmRead);
  // Kept for a backward, and g kept too: nothing stops being stored, so
  // nothing moves.
  passes::LoweringOptions saved;
  saved.saved = {"t", "g"};
  intra::Program kept = lowered(kSkipAfterGemm, saved);
  EXPECT_EQ(kept.findLayout("t")->producer, "trav_0")
      << intra::printProgram(kept);
  // Only t kept: g still frees a row, so both move and t is stored there.
  saved.saved = {"t"};
  intra::Program tKept = lowered(kSkipAfterGemm, saved);
  EXPECT_EQ(tKept.findLayout("t")->producer, "trav_2");
  EXPECT_EQ(tKept.findLayout("t")->storage, intra::Storage::Buffer);
  EXPECT_EQ(tKept.findLayout("g")->storage, intra::Storage::Register);
}

TEST(LowerToIntraOpTest, VerifierRejectsStatementLoweredTwiceOrNever) {
  intra::Program p = lower(loadBundledModel("rgcn"));
  auto &g = std::get<intra::GemmInstance>(p.instances[0]);
  g.stmts.push_back(g.stmts.front()); // s0 twice
  ir::DiagnosticEngine twice;
  EXPECT_FALSE(intra::verifyProgram(p, twice));
  g.stmts = {0}; // s1 (the fused div) now never
  ir::DiagnosticEngine never;
  EXPECT_FALSE(intra::verifyProgram(p, never));
  ASSERT_FALSE(never.diagnostics().empty());
  EXPECT_NE(never.diagnostics()[0].message.find("s1 is lowered 0 times"),
            std::string::npos);
}

TEST(LowerToIntraOpTest, VerifierRejectsInconsistentFields) {
  intra::Program p = lower(loadBundledModel("rgcn"));
  auto &g = std::get<intra::GemmInstance>(p.instances[0]);
  g.atomic = true; // atomic without accumulation
  ir::DiagnosticEngine d1;
  EXPECT_FALSE(intra::verifyProgram(p, d1));
  g.atomic = false;
  g.segmentBy.reset(); // a sliced weight without segments
  ir::DiagnosticEngine d2;
  EXPECT_FALSE(intra::verifyProgram(p, d2));
  g.segmentBy = std::vector<ir::Attr>{ir::Attr::EType};
  auto &t = std::get<intra::TraversalInstance>(p.instances[2]);
  t.access = intra::AccessScheme::Coo; // its loops need CSR
  ir::DiagnosticEngine d3;
  EXPECT_FALSE(intra::verifyProgram(p, d3));
}

TEST(LowerToIntraOpTest, VerifierRejectsReadBeforeWrite) {
  intra::Program p = lower(loadBundledModel("rgcn"));
  // trav_2 reads h_1, which gemm_1 writes: run it first.
  std::swap(p.instances[1], p.instances[2]);
  ir::DiagnosticEngine diags;
  EXPECT_FALSE(intra::verifyProgram(p, diags));
  ASSERT_FALSE(diags.diagnostics().empty());
  EXPECT_NE(diags.diagnostics()[0].message.find(
                "@trav_2 reads 'h_1' before any earlier instance writes it"),
            std::string::npos)
      << diags.diagnostics()[0].message;
}

TEST(LowerToIntraOpTest, RejectsInvalidModule) {
  ir::Module m = loadBundledModel("rgcn");
  m.values.pop_back(); // h is no longer declared
  ir::DiagnosticEngine diags;
  EXPECT_FALSE(passes::lowerToIntraOp(m, {}, diags));
  EXPECT_TRUE(diags.hasErrors());
}

} // namespace
} // namespace hector
