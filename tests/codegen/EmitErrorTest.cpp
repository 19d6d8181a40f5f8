// What the emitters cannot emit: EmitError, and from emitLayer a located
// error diagnostic and nullopt.
#include "codegen/Emit.h"

#include "CodegenTestUtil.h"
#include "codegen/KernelFileEmitter.h"
#include "codegen/Naming.h"
#include "codegen/ProgramLayout.h"

#include <gtest/gtest.h>

namespace hector::codegen {
namespace {

using codegentest::lowerVerified;

/// emitKernelFile's EmitError message for `program` as both forward and
/// backward ("" when it emits).
std::string kernelFileError(const intra::Program &program, Target target) {
  const ProgramLayout forward(program, "forward");
  const ProgramLayout backward(program, "backward");
  try {
    emitKernelFile(forward, backward, target);
  } catch (const EmitError &e) {
    return e.message;
  }
  return "";
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

const char *kAtomicMax = R"(module @amax {
  hyper d : int = 4
  input x : node[d]
  output m : node[d]
  foreach e in edges {
    m[e.dst] max= copy(x[e.src])
  }
}
)";

TEST(EmitErrorTest, AtomicMaxIsRejected) {
  ir::Module m = codegentest::parseVerified(kAtomicMax, "amax.ir");
  intra::Program p = lowerVerified(m);
  ASSERT_EQ(p.instances.size(), 1u);
  auto *t = std::get_if<intra::TraversalInstance>(&p.instances[0]);
  ASSERT_NE(t, nullptr);
  std::vector<intra::ReductionScheme> schemes;
  intra::forEachTravStmt(*t->root, [&](const intra::TravStmt &s) {
    schemes.push_back(s.reduction);
  });
  // An edge loop scattering to e.dst: one atomic per contribution.
  EXPECT_EQ(schemes, std::vector<intra::ReductionScheme>{
                         intra::ReductionScheme::Atomic});
  for (Target target : {Target::Cpu, Target::Cuda}) {
    const std::string message = kernelFileError(p, target);
    EXPECT_TRUE(contains(message, "atomic max=")) << message;
    EXPECT_TRUE(contains(message, "not supported")) << message;
    EXPECT_TRUE(contains(message, "@" + t->name + ": s0:")) << message;
  }
}

// A value stored at its CSR position but written in an edge-parallel
// loop, which knows no CSR position (the verifier rejects such a program; the
// emitter does not guess a row).
TEST(EmitErrorTest, CsrRowsReadWithoutACsrPositionAreRejected) {
  ir::Module m = codegentest::parseVerified(R"(module @csr {
  hyper d : int = 4
  input x : node[d]
  temp t : edge[d]
  output h : node[d]
  foreach e in edges {
    t[e] = copy(x[e.src])
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      h[n] += copy(t[e])
    }
  }
}
)",
                                            "csr.ir");
  intra::Program p = lowerVerified(m);
  bool forced = false;
  for (intra::ValueLayout &l : p.layouts)
    if (l.decl.name == "t") {
      ASSERT_EQ(l.storage, intra::Storage::Buffer);
      l.rows = intra::RowScheme::DstCsrRows;
      forced = true;
    }
  ASSERT_TRUE(forced);
  for (Target target : {Target::Cpu, Target::Cuda}) {
    const std::string message = kernelFileError(p, target);
    EXPECT_TRUE(contains(message, "'t[e]' is stored in dst_csr_rows but not "
                                  "read at a loop's CSR position"))
        << message;
  }
}

TEST(EmitErrorTest, EmitLayerReportsALocatedError) {
  // emitLayer turns the EmitError into an error at the module.
  ir::Module m = codegentest::parseVerified(kAtomicMax, "amax.ir");
  ASSERT_TRUE(m.loc.valid());
  passes::CompiledLayer layer;
  layer.forward = m.clone();
  layer.forwardProgram = lowerVerified(m);
  layer.backwardSource = m.clone();
  layer.backward = m.clone();
  layer.backwardProgram = lowerVerified(m);
  ir::DiagnosticEngine diags;
  std::optional<std::vector<EmittedFile>> files = emitLayer(layer, diags);
  EXPECT_FALSE(files.has_value());
  ASSERT_EQ(diags.errorCount(), 1);
  const ir::Diagnostic &d = diags.diagnostics().at(0);
  EXPECT_EQ(d.severity, ir::Diagnostic::Severity::Error);
  EXPECT_EQ(d.loc.file, "amax.ir");
  EXPECT_EQ(d.loc.line, m.loc.line);
  EXPECT_TRUE(contains(d.message, "cannot emit code for @amax: ")) << d.message;
  EXPECT_TRUE(contains(d.message, "atomic max=")) << d.message;
  EXPECT_TRUE(contains(d.message, "not supported")) << d.message;
}

TEST(EmitErrorTest, AtomicSumIsEmitted) {
  // The same nest with += emits (a partial-atomic sum: a run of one node's
  // in-edges adds into an accumulator, flushed by atomic adds), so the
  // rejection above is about max= only.
  std::string text = kAtomicMax;
  text.replace(text.find("max="), 4, "+=");
  ir::Module m = codegentest::parseVerified(text, "asum.ir");
  intra::Program p = lowerVerified(m);
  EXPECT_EQ(kernelFileError(p, Target::Cpu), "");
  EXPECT_EQ(kernelFileError(p, Target::Cuda), "");
  const ProgramLayout f(p, "forward"), b(p, "backward");
  EXPECT_TRUE(
      contains(emitKernelFile(f, b, Target::Cuda),
               "hector::trav::accumulate(t + i, acc_s0[i], hector_ordered);"));
  EXPECT_EQ(f.zeroFilled().count("m"), 1u);
}

TEST(EmitErrorTest, GemmSegmentedByAnUnsupportedPath) {
  ir::Module m = codegentest::parseVerified(R"(module @seg {
  hyper d : int = 4
  input x : node[d]
  param W : etype[d, d]
  output y : edge[d]
  foreach e in edges {
    y[e] = linear(x[e.src], W[e.etype])
  }
}
)",
                                            "seg.ir");
  intra::Program p = lowerVerified(m);
  ASSERT_EQ(p.instances.size(), 1u);
  auto *g = std::get_if<intra::GemmInstance>(&p.instances[0]);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->segmentBy.has_value());
  EXPECT_EQ(*g->segmentBy, std::vector<ir::Attr>{ir::Attr::EType});
  EXPECT_EQ(kernelFileError(p, Target::Cpu), "");
  // Edges segmented by their destination node (no type step): no
  // segment arrays in the graph.
  g->segmentBy = std::vector<ir::Attr>{ir::Attr::Dst};
  for (Target target : {Target::Cpu, Target::Cuda}) {
    const std::string message = kernelFileError(p, target);
    EXPECT_TRUE(contains(message, "@" + g->name + ": rows edges segmented by "
                                  "'dst' have no segment arrays in the graph"))
        << message;
  }
  g->segmentBy = std::vector<ir::Attr>{ir::Attr::Src, ir::Attr::EType};
  EXPECT_TRUE(contains(kernelFileError(p, Target::Cpu),
                       "segmented by 'src.etype' have no segment arrays"));
}

TEST(EmitErrorTest, FallbackInstanceIsRejected) {
  ir::Module m = codegentest::parseVerified(R"(module @fb {
  hyper d : int = 4
  input x : node[d]
  output y : node[d]
  foreach n in nodes {
    y[n] = relu(x[n])
  }
}
)",
                                            "fb.ir");
  passes::LoweringOptions options;
  options.traversal = false;
  intra::Program p = lowerVerified(m, options);
  ASSERT_EQ(p.instances.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<intra::FallbackInstance>(p.instances[0]));
  const std::string name = intra::instanceName(p.instances[0]);
  for (Target target : {Target::Cpu, Target::Cuda}) {
    const std::string message = kernelFileError(p, target);
    EXPECT_TRUE(contains(message, "@" + name + " of @fb is a fallback instance"))
        << message;
    EXPECT_TRUE(contains(message, "fallback")) << message;
  }
}

} // namespace
} // namespace hector::codegen
