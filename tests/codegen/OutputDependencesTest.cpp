// codegen/OutputDependences.h: which outputs each instance and value
// feeds, the guards the backward host function puts around work that
// feeds only some of them, and the autograd mask the binding builds.
#include "codegen/OutputDependences.h"

#include "CodegenTestUtil.h"
#include "codegen/Emit.h"
#include "codegen/KernelFileEmitter.h"
#include "passes/Pipeline.h"

#include <gtest/gtest.h>

namespace hector::codegen {
namespace {

using codegentest::countOf;

intra::Program lowerText(const char *text) {
  return codegentest::lowerVerified(
      codegentest::parseVerified(text, "deps.ir"));
}

/// The index of the instance that writes `value`.
size_t writerOf(const intra::Program &p, const std::string &value) {
  for (size_t i = 0; i < p.instances.size(); ++i) {
    if (const auto *g = std::get_if<intra::GemmInstance>(&p.instances[i]))
      if (g->output.value == value)
        return i;
    if (const auto *t =
            std::get_if<intra::TraversalInstance>(&p.instances[i])) {
      bool writes = false;
      intra::forEachTravStmt(*t->root, [&](const intra::TravStmt &s) {
        writes = writes || s.stmt.target.value == value;
      });
      if (writes)
        return i;
    }
  }
  ADD_FAILURE() << "no instance writes " << value;
  return 0;
}

// t feeds both outputs; a only the first, b (through a GEMM) the second.
const char *kTwoOutputs = R"(module @two {
  hyper d : int = 4
  input x : node[d]
  param W : global[d, d]
  temp t : node[d]
  output a : edge[d]
  output b : node[d]
  foreach n in nodes {
    t[n] = relu(x[n])
  }
  foreach e in edges {
    a[e] = copy(t[e.src])
  }
  foreach n in nodes {
    b[n] = linear(t[n], W)
  }
}
)";

TEST(OutputDependencesTest, MasksFollowTheDataFlowBackwards) {
  intra::Program p = lowerText(kTwoOutputs);
  ASSERT_FALSE(p.instances.empty());
  const ProgramLayout layout(p, "backward");
  const OutputDependences deps(layout);
  EXPECT_FALSE(deps.tooManyOutputs());
  EXPECT_EQ(deps.all(), OutputMask(0x3));
  EXPECT_EQ(deps.ofValue("a"), OutputMask(0x1));
  EXPECT_EQ(deps.ofValue("b"), OutputMask(0x2));
  EXPECT_EQ(deps.ofValue("t"), OutputMask(0x3));
  EXPECT_EQ(deps.ofValue("x"), OutputMask(0x3));
  EXPECT_EQ(deps.ofValue("W"), OutputMask(0x2));
  EXPECT_EQ(deps.ofInstance(writerOf(p, "t")), OutputMask(0x3));
  EXPECT_EQ(deps.ofInstance(writerOf(p, "a")), OutputMask(0x1));
  EXPECT_EQ(deps.ofInstance(writerOf(p, "b")), OutputMask(0x2));
}

// One edge traversal adds to s (which feeds only a) and to u (only b).
const char *kFusedAccumulation = R"(module @fused {
  hyper d : int = 4
  input x : node[d]
  temp s : node[d]
  temp u : node[d]
  output a : node[d]
  output b : node[d]
  foreach e in edges {
    s[e.dst] += copy(x[e.src])
    u[e.dst] += relu(x[e.src])
  }
  foreach n in nodes {
    a[n] = relu(s[n])
  }
  foreach n in nodes {
    b[n] = relu(u[n])
  }
}
)";

TEST(OutputDependencesTest, ZeroFillRunsWheneverAWriterRuns) {
  intra::Program p = lowerText(kFusedAccumulation);
  const ProgramLayout layout(p, "backward");
  ASSERT_EQ(layout.zeroFilled().count(layout.root("s")), 1u);
  ASSERT_EQ(writerOf(p, "s"), writerOf(p, "u")) << "not fused";
  const OutputDependences deps(layout);
  EXPECT_EQ(deps.ofValue("s"), OutputMask(0x1));
  EXPECT_EQ(deps.ofValue("u"), OutputMask(0x2));
  EXPECT_EQ(deps.ofInstance(writerOf(p, "s")), OutputMask(0x3));
  // The traversal runs when either output is asked for, and then adds to
  // both: each buffer is cleared whenever it runs.
  EXPECT_EQ(deps.ofZeroFill("s"), OutputMask(0x3));
  EXPECT_EQ(deps.ofZeroFill("u"), OutputMask(0x3));
  EXPECT_EQ(deps.ofZeroFill("a"), OutputMask(0x1));
}

TEST(OutputDependencesTest, GuardsOnlyWhatFeedsSomeOutputs) {
  intra::Program p = lowerText(kTwoOutputs);
  const ProgramLayout layout(p, "backward");
  const OutputDependences deps(layout);
  EXPECT_EQ(deps.guard(0x1), "hp.hector_needed_outputs & UINT64_C(0x1)");
  EXPECT_EQ(deps.guard(0x2), "hp.hector_needed_outputs & UINT64_C(0x2)");
  EXPECT_EQ(deps.guard(0x3), std::nullopt); // every output
  EXPECT_EQ(deps.guard(0x0), std::nullopt); // none: runs as before
}

TEST(OutputDependencesTest, OnlyTheBackwardHostFunctionIsGuarded) {
  intra::Program p = lowerText(kTwoOutputs);
  const ProgramLayout f(p, "forward"), b(p, "backward");
  for (Target target : {Target::Cpu, Target::Cuda}) {
    const std::string text = emitKernelFile(f, b, target);
    const std::string forward =
        codegentest::textFrom(text, "void forward_", "void backward_");
    const std::string backward =
        codegentest::textFrom(text, "void backward_", "// The scalar types");
    ASSERT_FALSE(forward.empty());
    ASSERT_FALSE(backward.empty());
    // The forward's CUDA launch key holds the mask as it holds every
    // flag; nothing in the forward is guarded by it.
    EXPECT_EQ(countOf(forward, "if (hp.hector_needed_outputs"), 0u) << forward;
    EXPECT_EQ(countOf(forward, "hector_needed_outputs"),
              target == Target::Cuda ? 1u : 0u)
        << forward;
    // The instances of a and of b, each under its own bit; t's unguarded.
    EXPECT_EQ(countOf(backward, "if (hp.hector_needed_outputs & "
                                "UINT64_C(0x1)) {"),
              1u)
        << backward;
    EXPECT_EQ(countOf(backward, "if (hp.hector_needed_outputs & "
                                "UINT64_C(0x2)) {"),
              1u)
        << backward;
  }
}

TEST(OutputDependencesTest, BundledRgcnSkipsTheInputGradient) {
  ir::Module source = codegentest::loadBundledModel("rgcn");
  ASSERT_FALSE(source.name.empty());
  ir::DiagnosticEngine diags;
  std::ostringstream dump;
  std::optional<passes::CompiledLayer> layer =
      passes::compileLayer(source, passes::PipelineOptions{}, diags, dump);
  ASSERT_TRUE(layer);
  std::optional<std::vector<EmittedFile>> files = emitLayer(*layer, diags);
  ASSERT_TRUE(files);
  std::string header, binding, cu;
  for (const EmittedFile &f : *files) {
    if (f.name == "kernels.h")
      header = f.text;
    if (f.name == "binding.cpp")
      binding = f.text;
    if (f.name == "kernels.cu")
      cu = f.text;
  }
  EXPECT_EQ(countOf(header, "uint64_t hector_needed_outputs = "
                            "~uint64_t(0);"),
            1u);
  // The binding asks autograd about each argument with a gradient and
  // returns none for the ones it did not ask for.
  EXPECT_EQ(countOf(binding, "hp.hector_needed_outputs = needed;"), 1u);
  EXPECT_EQ(countOf(binding, "if (ctx->needs_input_grad(0)) needed |="), 1u)
      << binding;
  EXPECT_EQ(countOf(binding, "ctx->needs_input_grad(0) ? out["), 1u);
  // grad_x (output 0 of rgcn's backward) has instances of its own.
  const std::string backward = codegentest::textFrom(
      cu, "void backward_cuda_body(", "// The scalar types");
  EXPECT_GE(countOf(backward, "if (hp.hector_needed_outputs & UINT64_C(0x1))"),
            1u)
      << backward;
}

} // namespace
} // namespace hector::codegen
