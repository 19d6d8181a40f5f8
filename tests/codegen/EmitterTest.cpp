// codegen/Emit.h on the bundled models: the files, their order, their
// determinism, one kernel per traversal, one launch per GEMM, the torch
// registration and layer.json.
#include "codegen/Emit.h"

#include "CodegenTestUtil.h"
#include "codegen/KernelFileEmitter.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

namespace hector::codegen {
namespace {

using codegentest::countOf;
using codegentest::textFrom;

struct Emitted {
  passes::CompiledLayer layer;
  std::vector<EmittedFile> files;
};

/// Compiles `source` (named `label` in failures) and emits its files.
std::optional<Emitted>
compileAndEmitModule(const ir::Module &source, const std::string &label,
                     const passes::PipelineOptions &options = {}) {
  if (source.name.empty())
    return std::nullopt;
  ir::DiagnosticEngine diags;
  std::ostringstream dump;
  std::optional<passes::CompiledLayer> layer =
      passes::compileLayer(source, options, diags, dump);
  std::ostringstream os;
  diags.print(os);
  EXPECT_TRUE(layer.has_value()) << label << ":\n" << os.str();
  if (!layer)
    return std::nullopt;
  std::optional<std::vector<EmittedFile>> files = emitLayer(*layer, diags);
  diags.print(os);
  EXPECT_TRUE(files.has_value()) << label << ":\n" << os.str();
  EXPECT_FALSE(diags.hasErrors()) << os.str();
  if (!files)
    return std::nullopt;
  return Emitted{std::move(*layer), std::move(*files)};
}

/// Each program of a layer with the entry its names start with: forward,
/// backward, and inference where the layer has one.
std::vector<std::pair<std::string, const intra::Program *>>
programsOf(const passes::CompiledLayer &layer) {
  std::vector<std::pair<std::string, const intra::Program *>> programs = {
      {"forward", &layer.forwardProgram}, {"backward", &layer.backwardProgram}};
  if (layer.inferenceProgram)
    programs.emplace_back("inference", &*layer.inferenceProgram);
  return programs;
}

std::optional<Emitted> compileAndEmit(const std::string &model) {
  return compileAndEmitModule(codegentest::loadBundledModel(model), model);
}

/// A module whose forward keeps a hoisted store: t[e] is a function of
/// its destination's row (relu, so broadcast forwarding leaves it), and a
/// later outgoing loop, which cannot fuse with the incoming one, reads it.
/// Its node loop also sums x into a global (a partial-atomic reduction).
const char *kHoistedStoreModule = R"(module @store {
  hyper d : int = 8
  input x : node[d]
  input w : edge[d] const
  temp t : edge[d]
  output c : global[d]
  output g : node[d]
  foreach n in dst_nodes {
    c += copy(x[n])
    foreach e in n.incoming {
      t[e] = relu(x[n])
    }
  }
  foreach e in edges {
    g[e.src] += mul(t[e], w[e])
  }
}
)";

/// compileAndEmit for printed inter-op IR.
std::optional<Emitted> compileAndEmitIr(const std::string &text) {
  return compileAndEmitModule(codegentest::parseVerified(text, "module.ir"),
                              "module.ir");
}

const std::string &fileText(const Emitted &e, const std::string &name) {
  for (const EmittedFile &f : e.files)
    if (f.name == name)
      return f.text;
  static const std::string none;
  ADD_FAILURE() << "no file " << name;
  return none;
}

class EmitterTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EmitterTest, SixFilesInOrder) {
  std::optional<Emitted> e = compileAndEmit(GetParam());
  ASSERT_TRUE(e);
  std::vector<std::string> names;
  for (const EmittedFile &f : e->files) {
    names.push_back(f.name);
    EXPECT_FALSE(f.text.empty()) << f.name;
    EXPECT_EQ(f.text.back(), '\n') << f.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"kernels.h", "kernels_cpu.cpp",
                                             "kernels.cu", "binding.cpp",
                                             "CMakeLists.txt", "layer.json"}));
}

TEST_P(EmitterTest, Deterministic) {
  std::optional<Emitted> a = compileAndEmit(GetParam());
  ASSERT_TRUE(a);
  // The same layer emitted twice, and the layer compiled afresh.
  ir::DiagnosticEngine diags;
  std::optional<std::vector<EmittedFile>> again = emitLayer(a->layer, diags);
  ASSERT_TRUE(again);
  std::optional<Emitted> b = compileAndEmit(GetParam());
  ASSERT_TRUE(b);
  ASSERT_EQ(again->size(), a->files.size());
  ASSERT_EQ(b->files.size(), a->files.size());
  for (size_t i = 0; i < a->files.size(); ++i) {
    EXPECT_EQ((*again)[i].name, a->files[i].name);
    EXPECT_TRUE((*again)[i].text == a->files[i].text) << a->files[i].name;
    EXPECT_TRUE(b->files[i].text == a->files[i].text) << a->files[i].name;
  }
}

TEST_P(EmitterTest, OneKernelPerTraversal) {
  std::optional<Emitted> e = compileAndEmit(GetParam());
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string &cpu = fileText(*e, "kernels_cpu.cpp");
  size_t traversals = 0;
  for (const auto &[entry, program] : programsOf(e->layer)) {
    size_t here = 0;
    for (const intra::Instance &inst : program->instances) {
      const auto *t = std::get_if<intra::TraversalInstance>(&inst);
      ASSERT_FALSE(std::holds_alternative<intra::FallbackInstance>(inst));
      if (!t)
        continue;
      ++here;
      const std::string kernel = entry + "_" + t->name;
      // A node-row kernel may have a row-queue flag and, with narrow
      // groups, a block count in its launch bounds (EmitterRowQueue).
      size_t declarations = 0;
      for (const char *bounds :
           {")", ", kFixedHypers && !kRowQueue && kGroupSize == "
                 "hector::trav::kNarrowNodeRowLanes ? "
                 "hector::trav::kNarrowNodeRowMinBlocks : 0)"}) {
        const std::string declared =
            "__global__ void __launch_bounds__(kGroupSize > 256 ? kGroupSize "
            ": 256" +
            std::string(bounds) + "\n" + kernel +
            "([[maybe_unused]] const hector::rt::GraphArrays g";
        declarations +=
            countOf(cu, "template <typename scalar_t, bool kFixedHypers, "
                        "int kGroupSize>\n" +
                            declared) +
            countOf(cu, "template <typename scalar_t, bool kFixedHypers, int "
                        "kGroupSize, bool kRowQueue = false>\n" +
                            declared);
      }
      EXPECT_EQ(declarations, 1u) << kernel;
      EXPECT_EQ(countOf(cpu, "template <typename scalar_t, bool "
                             "kFixedHypers>\nvoid " +
                                 kernel +
                                 "([[maybe_unused]] const "
                                 "hector::rt::GraphArrays &g"),
                1u)
          << kernel;
      // Launched once from the host function's body, with its kFixedHypers.
      EXPECT_EQ(countOf(cpu, "  " + kernel +
                                 "<scalar_t, kFixedHypers>(g, gv, b, hp); //"),
                1u)
          << kernel;
      // Once with warp groups, at most once more for the heavy rows; a
      // flat row loop (edges or pairs, no loop inside) once per group size
      // (rowGroupLanes picks one at run time).
      bool flat = t->root->kind == ir::LoopKind::Edges ||
                  t->root->kind == ir::LoopKind::Pairs;
      for (const intra::TravItem &item : t->root->body)
        flat = flat && std::holds_alternative<intra::TravStmt>(item);
      if (flat) {
        for (int lanes : {1, 2, 4, 8, 16, 32})
          EXPECT_EQ(countOf(cu, kernel + "<scalar_t, kFixedHypers, " +
                                    std::to_string(lanes) + "><<<"),
                    1u)
              << kernel << " " << lanes;
      }
      EXPECT_EQ(
          countOf(cu,
                  kernel +
                      "<scalar_t, kFixedHypers, hector::trav::kWarpSize><<<"),
          flat ? 0u : 1u)
          << kernel;
      EXPECT_LE(
          countOf(
              cu,
              kernel +
                  "<scalar_t, kFixedHypers, hector::trav::kHeavyGroupSize><<<"),
          1u)
          << kernel;
    }
    EXPECT_EQ(countOf(cpu, "\nvoid " + entry + "_trav"), here) << entry;
    traversals += here;
  }
  EXPECT_GT(traversals, 0u);
  EXPECT_EQ(countOf(cu, "__global__"), traversals);
  EXPECT_EQ(countOf(cpu, "__global__"), 0u);
}

TEST_P(EmitterTest, OneLaunchPerGemm) {
  std::optional<Emitted> e = compileAndEmit(GetParam());
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string &cpu = fileText(*e, "kernels_cpu.cpp");
  size_t gemms = 0;
  for (const auto &[entry, program] : programsOf(e->layer))
    for (const intra::Instance &inst : program->instances)
      if (const auto *g = std::get_if<intra::GemmInstance>(&inst)) {
        ++gemms;
        EXPECT_EQ(countOf(cu, "launchSegmentGemm(a, stream), \"" + entry +
                                  "_" + g->name + "\");"),
                  1u)
            << entry << " " << g->name;
        EXPECT_EQ(countOf(cpu, "// @" + g->name + ": "), countOf(cu, "// @" + g->name + ": "))
            << g->name;
      }
  EXPECT_GT(gemms, 0u);
  EXPECT_EQ(countOf(cu, "hector::templates::launchSegmentGemm("), gemms);
  EXPECT_EQ(countOf(cpu, "hector::templates::segmentGemmCpu(a);"), gemms);
  EXPECT_EQ(countOf(cpu, "launchSegmentGemm"), 0u);
  EXPECT_EQ(countOf(cu, "segmentGemmCpu"), 0u);
}

/// torch's allow_tf32 reaches every CUDA GEMM launch, the weight-gradient
/// (outer) GEMMs as well as the linear ones; the CPU GEMMs have no TF32.
TEST_P(EmitterTest, Tf32FlagReachesEveryCudaGemm) {
  std::optional<Emitted> e = compileAndEmit(GetParam());
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string launch = "hector::templates::launchSegmentGemm(a, stream)";
  size_t launches = 0;
  for (size_t at = cu.find(launch); at != std::string::npos;
       at = cu.find(launch, at + 1), ++launches) {
    // The line before the launch sets the flag.
    const size_t lineStart = cu.rfind('\n', at);
    const size_t previous = cu.rfind('\n', lineStart - 1);
    EXPECT_NE(cu.substr(previous, lineStart - previous)
                  .find("a.tf32 = hp.hector_tf32;"),
              std::string::npos)
        << cu.substr(previous, at - previous + launch.size());
  }
  EXPECT_EQ(launches, countOf(cu, "hector::templates::launchSegmentGemm("));
  EXPECT_EQ(countOf(cu, "a.tf32 = hp.hector_tf32;"), launches);
  EXPECT_EQ(countOf(fileText(*e, "kernels_cpu.cpp"), "tf32"), 0u);
  EXPECT_EQ(countOf(fileText(*e, "binding.cpp"),
                    "hp.hector_tf32 = at::globalContext().allowTF32CuBLAS();"),
            1u);
  size_t outer = 0;
  for (const intra::Program *program :
       {&e->layer.forwardProgram, &e->layer.backwardProgram})
    for (const intra::Instance &inst : program->instances)
      if (const auto *g = std::get_if<intra::GemmInstance>(&inst))
        outer += g->mode == intra::GemmInstance::Mode::Outer;
  // Every bundled model's backward has a weight gradient's GEMM.
  EXPECT_GT(outer, 0u);
}

/// RGAT's attention term alpha_1 = linear(outj, k) is outj's GEMM's row
/// dot: one launch writes both, on both targets, and no GEMM reads outj
/// back for it.
TEST(EmitterRowDot, RgatPygWritesAlpha1FromTheMessageGemm) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  for (const char *file : {"kernels.cu", "kernels_cpu.cpp"}) {
    const std::string &text = fileText(*e, file);
    const std::string launch =
        textFrom(text, "// @gemm_1: linear GEMM, rows pairs", "\n    }\n");
    ASSERT_FALSE(launch.empty()) << file;
    EXPECT_EQ(countOf(launch, "a.Y = b.outj;"), 1u) << file;
    EXPECT_EQ(countOf(launch, "a.rowDotW = b.k;"), 1u) << file;
    EXPECT_EQ(countOf(launch, "a.rowDotY = b.alpha_1;"), 1u) << file;
    EXPECT_EQ(countOf(launch, "a.rowDotN = hp_heads;"), 1u) << file;
  }
  for (const intra::Instance &inst : e->layer.forwardProgram.instances) {
    if (const auto *g = std::get_if<intra::GemmInstance>(&inst)) {
      EXPECT_NE(g->input.value, "outj") << g->name;
    }
  }
}

// RGCN-PyG, with compact materialization or without: its message GEMM
// adds into the destinations over rel_in_degree, so it runs summed by
// (destination, relation) segment, its rows the graph's chunks
// (GraphArrays sum_chunk_*), after the root GEMM has written x root + bias
// into the output. The forward is these two launches: no traversal, and no
// zero-fill (the root GEMM writes every row first).
TEST(EmitterSummedRows, RgcnPygSumsItsSegmentsIntoTheRootGemmsOutput) {
  for (bool compact : {true, false}) {
    SCOPED_TRACE(compact ? "compact" : "no compaction");
    passes::PipelineOptions options;
    options.compact = compact;
    std::optional<Emitted> e = compileAndEmitModule(
        codegentest::loadBundledModel("rgcn_pyg"), "rgcn_pyg", options);
    ASSERT_TRUE(e);
    for (const char *file : {"kernels.cu", "kernels_cpu.cpp"}) {
      const std::string &text = fileText(*e, file);
      const std::string forward = textFrom(text, "void forward_", "\n  }\n");
      ASSERT_FALSE(forward.empty()) << file;
      EXPECT_EQ(countOf(forward, "// @"), 2u) << file << forward;
      EXPECT_EQ(countOf(forward, "zero_spans"), 0u) << file;
      EXPECT_EQ(countOf(forward, "std::fill"), 0u) << file;
      const std::string root =
          textFrom(text, "// @gemm_0: linear GEMM, rows nodes", "\n    }\n");
      ASSERT_FALSE(root.empty()) << file;
      for (const char *line :
           {"a.W = b.root;", "a.Y = b.h;", "a.bias = b.bias;"})
        EXPECT_EQ(countOf(root, line), 1u) << file << ": " << line;
      EXPECT_EQ(countOf(root, "a.accumulate"), 0u) << file;
      EXPECT_EQ(countOf(root, "scatterSortedInSegments"), 0u) << file;
      const std::string launch =
          textFrom(text, "// @gemm_1: linear GEMM, rows edges", "\n    }\n");
      ASSERT_FALSE(launch.empty()) << file;
      for (const char *line :
           {"a.M = g.num_sum_chunks;", "a.sumPtr = g.sum_chunk_ptr;",
            "a.sumRows = g.sum_chunk_src;",
            "a.segmentPtr = g.sum_chunk_etype_ptr;", "a.Y = b.h;",
            "a.scatter = g.sum_chunk_dst;",
            "a.scale = gv.sum_chunk_rel_in_degree;", "a.accumulate = true;",
            "a.atomic = true;", "a.scatterSortedInSegments = true;"})
        EXPECT_EQ(countOf(launch, line), 1u) << file << ": " << line;
      // The divisor is read once a chunk, not through its first edge.
      EXPECT_EQ(countOf(launch, "a.scaleGather"), 0u) << file;
      EXPECT_EQ(countOf(launch, "a.gather"), 0u) << file;
      EXPECT_EQ(countOf(launch, "a.rowIds"), 0u) << file;
    }
  }
}

// HGT-PyG's kqv projection: a GEMM over the nodes by type, cut into k, q
// and v. Nodes numbered by type (GraphArrays::
// ntype_sorted_nodes_is_identity) are read and written in place, without
// row ids, so that the dense-rows kernel can take the call; other graphs
// keep the sorted ids.
TEST(EmitterNodeTypes, NodesNumberedByTypeNeedNoRowIds) {
  std::optional<Emitted> e = compileAndEmit("hgt_pyg");
  ASSERT_TRUE(e);
  for (const char *file : {"kernels.cu", "kernels_cpu.cpp"}) {
    const std::string &text = fileText(*e, file);
    const std::string kqv =
        textFrom(text, "// @gemm_0: linear GEMM, rows nodes", "\n    }\n");
    ASSERT_FALSE(kqv.empty()) << file;
    for (const char *line :
         {"a.rowIds = g.ntype_sorted_nodes_is_identity ? nullptr : "
          "g.ntype_sorted_nodes;",
          "a.segmentPtr = g.ntype_ptr;", "a.numSlices = g.num_ntypes;",
          "a.yParts = 3;", "a.biasPerSlice = true;"})
      EXPECT_EQ(countOf(kqv, line), 1u) << file << ": " << line;
  }
}

// HGT-PyG's backward sums gradients into node-type rows (the skip's and the
// biases') in node-row kernels taken by node type, so that a partial sum
// flushes once a run of one type. Nodes numbered by type take their rows
// in place, as the node-type GEMMs do; other graphs keep the sorted ids.
TEST(EmitterNodeTypes, NodeTypeRowsOfNodesNumberedByTypeNeedNoIds) {
  std::optional<Emitted> e = compileAndEmit("hgt_pyg");
  ASSERT_TRUE(e);
  for (const char *file : {"kernels.cu", "kernels_cpu.cpp"}) {
    const std::string &text = fileText(*e, file);
    EXPECT_EQ(countOf(text, "const int64_t v_n = (g.ntype_sorted_nodes_is_"
                            "identity ? k : g.ntype_sorted_nodes[k]);"),
              2u)
        << file;
    EXPECT_EQ(countOf(text, "= g.ntype_sorted_nodes[k];"), 0u) << file;
  }
}

// RGAT-PyG's inference program: the attention weights' traversal writes
// alpha in the summed entries' order (through sum_edge_entry), then one
// GEMM summed by segment adds each chunk's sources, each times its entry's
// weight, with the heads sharing the input row and taking the weight's
// columns, into h filled with the bias first. The forward op runs it when
// no argument requires grad; the training forward is unchanged (its pair
// message is kept for alpha's gradient).
TEST(EmitterSummedRows, RgatPygInferenceSumsWeightedSegments) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  ASSERT_TRUE(e->layer.inferenceProgram);
  for (const char *file : {"kernels.cu", "kernels_cpu.cpp"}) {
    const std::string &text = fileText(*e, file);
    // The host function (inference_cpu_body, inference_cuda_body), not a
    // traversal kernel (inference_trav_*).
    const std::string inference = textFrom(text, "void inference_c", "\n  }\n");
    ASSERT_FALSE(inference.empty()) << file;
    const std::string launch =
        textFrom(inference, "// @gemm_5: linear GEMM, rows edges", "\n    }\n");
    ASSERT_FALSE(launch.empty()) << file << inference;
    for (const char *line :
         {"a.M = g.num_sum_chunks;", "a.H = hp_heads;", "a.K = hp_in_dim;",
          "a.N = hp_out_dim;", "a.xSharedByHeads = true;",
          "a.wHeadsInColumns = true;", "a.sumRows = g.sum_chunk_src;",
          "a.sumWeights = b.alpha;", "a.W = b.weight_;", "a.Y = b.h;",
          "a.scatter = g.sum_chunk_dst;", "a.atomic = true;",
          "b.h, g.num_nodes, b.bias, sz_h);"})
      EXPECT_EQ(countOf(launch, line), 1u) << file << ": " << line << launch;
    EXPECT_EQ(countOf(launch, "a.epilogue"), 0u) << file;
    EXPECT_EQ(countOf(launch, "a.sumWeightIds"), 0u) << file;
    EXPECT_EQ(countOf(inference, "zero_spans"), 0u) << file;
    EXPECT_EQ(countOf(inference, "std::fill"), 0u) << file;
    EXPECT_EQ(countOf(text, "(b.alpha + (g.sum_edge_entry[v_e]) * sz_alpha)"),
              1u)
        << file;
    // The destination score once a chunk, read through sum_edge_chunk.
    const std::string score =
        textFrom(inference, "// @gemm_3: linear GEMM, rows edges", "\n    }\n");
    for (const char *line :
         {"a.M = g.num_sum_chunks;", "a.gather = g.sum_chunk_dst;",
          "a.segmentPtr = g.sum_chunk_etype_ptr;", "a.W = b.alpha_0_w;",
          "a.Y = b.alpha_0;"})
      EXPECT_EQ(countOf(score, line), 1u) << file << ": " << line << score;
    EXPECT_EQ(
        countOf(text, "(b.alpha_0 + (g.sum_edge_chunk[v_e]) * sz_alpha_0)"),
        2u) // the training forward's traversal and the inference one's
        << file;
    // The training forward still gathers the pair messages.
    const std::string forward = textFrom(text, "void forward_c", "\n  }\n");
    ASSERT_FALSE(forward.empty()) << file;
    EXPECT_EQ(countOf(forward, "sumWeights"), 0u) << file;
  }
  const std::string &binding = fileText(*e, "binding.cpp");
  EXPECT_EQ(countOf(binding, "if (!at::GradMode::is_enabled() || "
                             "!(arg_x.requires_grad() || "),
            1u)
      << binding;
  EXPECT_EQ(countOf(binding, "return runInference(graph_arrays, arg_x,"), 2u)
      << binding;
  EXPECT_EQ(countOf(binding, "m.def(\"inference_kernels("), 1u) << binding;
}

// RGAT-PyG's inference scores: the source score once a (source, relation)
// pair and the destination score once a chunk, each a dot over x's gathered
// row. Both name their rows again in the order of that row (pairs by
// source, chunks by destination), which the dot kernel visits so
// (SegmentGemmArgs::gatherOrderRowIds). The summed GEMM, which needs its
// chunks by relation, names none.
TEST(EmitterGatherOrder, RgatPygScoresNameTheirRowsByTheGatheredRow) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  for (const char *file : {"kernels.cu", "kernels_cpu.cpp"}) {
    const std::string &text = fileText(*e, file);
    const std::string inference = textFrom(text, "void inference_c", "\n  }\n");
    ASSERT_FALSE(inference.empty()) << file;
    const std::string pairs =
        textFrom(inference, "// @gemm_2: linear GEMM, rows pairs", "\n    }\n");
    for (const char *line :
         {"a.gather = g.pair_src;", "a.segmentPtr = g.pair_ptr;",
          "a.gatherOrderRowIds = g.pair_src_order;",
          "a.gatherOrderGather = g.pair_src_order_src;",
          "a.gatherOrderRowType = g.pair_src_order_etype;"})
      EXPECT_EQ(countOf(pairs, line), 1u) << file << ": " << line << pairs;
    const std::string chunks =
        textFrom(inference, "// @gemm_3: linear GEMM, rows edges", "\n    }\n");
    for (const char *line :
         {"a.gather = g.sum_chunk_dst;",
          "a.gatherOrderRowIds = g.sum_chunk_dst_order;",
          "a.gatherOrderGather = g.sum_chunk_dst_order_dst;",
          "a.gatherOrderRowType = g.sum_chunk_dst_order_etype;"})
      EXPECT_EQ(countOf(chunks, line), 1u) << file << ": " << line << chunks;
    const std::string summed =
        textFrom(inference, "// @gemm_5: linear GEMM, rows edges", "\n    }\n");
    ASSERT_FALSE(summed.empty()) << file;
    EXPECT_EQ(countOf(summed, "gatherOrder"), 0u) << file << summed;
  }
}

TEST_P(EmitterTest, TorchRegistration) {
  std::optional<Emitted> e = compileAndEmit(GetParam());
  ASSERT_TRUE(e);
  const std::string &m = GetParam();
  const std::string &binding = fileText(*e, "binding.cpp");
  EXPECT_EQ(countOf(binding, "TORCH_LIBRARY(hector_" + m + ", m)"), 1u);
  std::string tensors, hypers;
  for (const intra::ValueLayout &l : e->layer.forwardProgram.layouts)
    if (l.decl.kind == ir::ValueKind::Input ||
        l.decl.kind == ir::ValueKind::Param)
      tensors += ", Tensor " + l.decl.name;
  for (const ir::HyperDecl &h : e->layer.forwardProgram.hypers)
    hypers += std::string(", ") +
              (h.type == ir::HyperDecl::Type::Int ? "int " : "float ") + h.name;
  const std::string ns = "&hector_gen::" + m + "::";
  EXPECT_EQ(countOf(binding, "m.def(\"forward(Tensor[] graph_arrays" +
                                 tensors + hypers + ") -> Tensor[]\", " + ns +
                                 "forwardOp);"),
            1u)
      << binding;
  EXPECT_EQ(countOf(binding, "m.def(\"forward_kernels(Tensor[] graph_arrays" +
                                 tensors + hypers + ") -> Tensor[]\", " + ns +
                                 "forwardKernelsOp);"),
            1u);
  EXPECT_EQ(countOf(binding,
                    "m.def(\"backward_kernels(Tensor[] graph_arrays, Tensor[] "
                    "values" +
                        hypers + ") -> Tensor[]\", " + ns +
                        "backwardKernelsOp);"),
            1u);
  EXPECT_EQ(countOf(binding, "m.def(\"inference_kernels(Tensor[] "
                             "graph_arrays" +
                                 tensors + hypers + ") -> Tensor[]\", " + ns +
                                 "inferenceKernelsOp);"),
            e->layer.inferenceProgram ? 1u : 0u);
  EXPECT_EQ(countOf(binding, "m.def("), e->layer.inferenceProgram ? 4u : 3u);
  EXPECT_NE(fileText(*e, "CMakeLists.txt")
                .find("add_library(hector_" + m + " SHARED"),
            std::string::npos);
}

TEST_P(EmitterTest, LayerJson) {
  std::optional<Emitted> e = compileAndEmit(GetParam());
  ASSERT_TRUE(e);
  const std::string &m = GetParam();
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(fileText(*e, "layer.json")));
  EXPECT_EQ(j["format"], 1);
  EXPECT_EQ(j["model"], m);
  EXPECT_EQ(j["library"], "hector_" + m);
  // The arguments: the source module's inputs and params, in declaration
  // order (the order of the op schemas).
  const ir::Module source = codegentest::loadBundledModel(m);
  std::vector<std::string> want, got, outputs, gotOutputs;
  for (const ir::ValueDecl &v : source.values) {
    if (v.kind == ir::ValueKind::Input || v.kind == ir::ValueKind::Param)
      want.push_back(v.name);
    if (v.kind == ir::ValueKind::Output)
      outputs.push_back(v.name);
  }
  ASSERT_TRUE(j["arguments"].is_array());
  for (const auto &a : j["arguments"]) {
    got.push_back(a["name"].get<std::string>());
    EXPECT_TRUE(a["kind"] == "input" || a["kind"] == "param") << a.dump();
    EXPECT_TRUE(a["shape"].is_array());
  }
  EXPECT_EQ(got, want);
  for (const auto &a : j["outputs"])
    gotOutputs.push_back(a["name"].get<std::string>());
  EXPECT_EQ(gotOutputs, outputs);
  std::vector<std::string> hypers;
  for (const auto &h : j["hypers"])
    hypers.push_back(h["name"].get<std::string>());
  std::vector<std::string> wantHypers;
  for (const ir::HyperDecl &h : source.hypers)
    wantHypers.push_back(h.name);
  EXPECT_EQ(hypers, wantHypers);
  EXPECT_EQ(j["saved"].get<std::vector<std::string>>(), e->layer.saved);
  EXPECT_EQ((j["gradients"].get<std::map<std::string, std::string>>()),
            e->layer.gradients);
}

TEST_P(EmitterTest, KernelsHeaderNamespaceAndBuffers) {
  std::optional<Emitted> e = compileAndEmit(GetParam());
  ASSERT_TRUE(e);
  const std::string &h = fileText(*e, "kernels.h");
  EXPECT_NE(h.find("#pragma once"), std::string::npos);
  EXPECT_NE(h.find("namespace " + layerNamespace(GetParam())),
            std::string::npos);
  EXPECT_NE(h.find("struct ForwardBuffers"), std::string::npos);
  EXPECT_NE(h.find("struct BackwardBuffers"), std::string::npos);
}

// Every node's edge loop with statements and no partial-atomic accumulator
// is split over workers (Traversal.h): a worker-count local, a uniform
// trip count, statements guarded by the worker's activity, and the
// segmented reductions folded from per-worker accumulators afterwards.
TEST(EmitterWorkerLoops, RgatPygForwardSplitsItsThreeEdgeLoops) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string kernel = textFrom(cu, "\nforward_trav_", "\n}\n");
  ASSERT_FALSE(kernel.empty());
  for (int j = 0; j < 3; ++j) {
    const std::string n = std::to_string(j);
    EXPECT_EQ(countOf(kernel, "const int64_t hector_workers_" + n +
                                  " = hector::trav::workersFor("),
              1u);
    // Over the row's edges this group takes (all of them but in a split
    // hub's parts: EmitterHubSplit below).
    EXPECT_EQ(countOf(kernel, "for (int64_t hector_base_" + n +
                                  " = hector_span.begin; hector_base_" + n +
                                  " < hector_end_" + n + "; hector_base_" +
                                  n + " += hector_workers_" + n + ")"),
              1u);
    EXPECT_GE(countOf(kernel, "if (hector_active_" + n + ") {"), 1u);
  }
  EXPECT_EQ(countOf(kernel, "hector_workers_3"), 0u);
  // max= and the two sum= of the softmax and the aggregation. A block
  // group folds each by foldLanes lanes per element over every
  // foldLanes-th worker, then a shuffle across those lanes, and syncs
  // after each loop's folds, since a lane may have folded another lane's
  // elements; a warp group (and the CPU) one lane per element over all
  // workers.
  for (const auto &[id, workers, fold] :
       {std::tuple{"s7", "hector_workers_0", "foldMax"},
        std::tuple{"s10", "hector_workers_1", "foldSum"},
        std::tuple{"s13", "hector_workers_2", "foldSum"}}) {
    const std::string lanes = std::string("hector_fold_") + id;
    EXPECT_EQ(countOf(kernel, "const int " + lanes +
                                  " = hector::trav::foldLanes("),
              1u);
    EXPECT_EQ(countOf(kernel, std::string("for (int64_t w = hector_part; w < ") +
                                  workers + "; w += " + lanes + ")"),
              1u);
    EXPECT_EQ(countOf(kernel, std::string("acc = hector::trav::") + fold +
                                  "<kGroupSize>(acc, " + lanes + ");"),
              1u);
  }
  EXPECT_EQ(countOf(kernel, "hector_part == 0)"), 3u);
  EXPECT_EQ(countOf(kernel, "if constexpr (kGroupSize > "
                            "hector::trav::kWarpSize) {"),
            3u);
  EXPECT_EQ(countOf(kernel, "for (int64_t w = 0; w < hector_workers_"), 3u);
  EXPECT_EQ(countOf(kernel, "if constexpr (kGroupSize > hector::trav::"
                            "kWarpSize) HECTOR_GROUP_SYNC();"),
            3u);
  EXPECT_EQ(countOf(kernel, "++k_e)"), 0u);
  // The launch sizes scratch with the same worker counts.
  const std::string host =
      textFrom(cu, "const int64_t rows = g.num_nodes;", "<<<");
  ASSERT_FALSE(host.empty());
  EXPECT_EQ(countOf(host, "const int64_t hector_workers_"), 3u);
  // Loop 2's per-worker accumulator; its message (msg = alpha * msg_0) is
  // forwarded to the aggregation in one element loop and has no scratch.
  EXPECT_EQ(countOf(host, "* hector_workers_2)"), 1u);
  // The workers' copies of the aggregation's accumulator lie a padded
  // stride apart (Traversal.h workerStride: no shared-memory bank
  // conflicts between workers), in the host's scratch size, the update,
  // the initialisation and the fold alike.
  const std::string stride = "hector_stride_w_acc_s13";
  // (The host text is the narrow groups' launch, the first; the warp's
  // follows with the same counts for a warp.)
  EXPECT_EQ(countOf(host, "const int64_t " + stride +
                              " = hector::trav::workerStride((hp_heads * "
                              "hp_out_dim), hector_workers_2, "
                              "hector::trav::kNarrowNodeRowLanes);"),
            1u);
  EXPECT_EQ(countOf(cu, "const int64_t " + stride +
                            " = hector::trav::workerStride((hp_heads * "
                            "hp_out_dim), hector_workers_2, "
                            "hector::trav::kWarpSize);"),
            1u);
  EXPECT_EQ(countOf(host, "(" + stride + " * hector_workers_2)"), 1u);
  EXPECT_EQ(countOf(kernel, "w_acc_s13 + hector_worker_2 * " + stride + ";"),
            1u);
  EXPECT_EQ(countOf(kernel, "HECTOR_FOR_ELEMENTS(i, " + stride +
                                " * hector_workers_2) w_acc_s13[i] = "),
            1u);
  EXPECT_EQ(countOf(kernel, "w_acc_s13[w * " + stride + " + i]"), 2u);
  EXPECT_EQ(countOf(kernel, "* sz_h_0 + i]"), 0u);
}

// An incoming loop's edges read their pair (and relation) at their CSR
// position from GraphArrays' dst_csr_* arrays, one load instead of two
// dependent ones; a worker past its last edge reads position 0. The CPU
// kernels are printed by the same code.
TEST(EmitterCsrArrays, EdgeLoopsReadAttributesAtTheirCsrPosition) {
  std::optional<Emitted> rgcn = compileAndEmit("rgcn_pyg");
  std::optional<Emitted> hgt = compileAndEmit("hgt_pyg");
  ASSERT_TRUE(rgcn && hgt);
  for (const char *file : {"kernels.cu", "kernels_cpu.cpp"}) {
    SCOPED_TRACE(file);
    // rgcn_pyg reads pairs in its backward scatter only, over incoming
    // edges (its forward sums its messages in a GEMM).
    const std::string &r = fileText(*rgcn, file);
    EXPECT_EQ(countOf(r, "[[maybe_unused]] const int64_t c_e = "
                         "hector_active_0 ? k_e : 0;"),
              1u);
    EXPECT_EQ(countOf(r, "g.dst_csr_pair[c_e]"), 1u);
    EXPECT_EQ(countOf(r, "g.edge_pair[v_e]"), 0u);
    // hgt_pyg also reads the relation of an incoming edge, in its forward
    // and its inference program's softmax; its edge-row kernels (no CSR
    // position) keep edge_pair.
    const std::string &h = fileText(*hgt, file);
    EXPECT_EQ(countOf(h, "g.dst_csr_etype[c_e]"), 2u);
    EXPECT_GE(countOf(h, "g.dst_csr_pair[c_e]"), 1u);
    EXPECT_GE(countOf(h, "g.edge_pair[v_e]"), 1u);
  }
}

// The softmax's scores, which only its traversal touches, are stored and
// loaded at the CSR position of the edge loops (lowering: DstCsrRows); the
// weights the summed GEMM reads stay in the entries' order.
TEST(EmitterCsrRows, SoftmaxScoresAreStoredAtTheirCsrPosition) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  for (const char *file : {"kernels.cu", "kernels_cpu.cpp"}) {
    SCOPED_TRACE(file);
    const std::string &text = fileText(*e, file);
    // Written and read once in the training forward and the inference
    // program each.
    EXPECT_EQ(countOf(text, "(b.alpha_score + (c_e) * sz_alpha_score)"), 4u);
    EXPECT_EQ(countOf(text, "(b.alpha_score + (v_e)"), 0u);
    // The inference program's exponentials too; the training forward
    // keeps its own for the backward, at the edge id.
    EXPECT_EQ(countOf(text, "(b.alpha_exp + (c_e) * sz_alpha_exp)"), 2u);
    EXPECT_EQ(countOf(text, "(b.alpha_exp + (v_e) * sz_alpha_exp)"), 3u);
    // An incoming edge's id is its CSR position in the dst numbering.
    EXPECT_EQ(countOf(text, "g.dst_eid[k_e]"),
              countOf(text, "(g.dst_eid_is_identity ? k_e : g.dst_eid[k_e])"));
    EXPECT_GE(countOf(text, "g.dst_eid[k_e]"), 6u);
    EXPECT_EQ(countOf(text, "g.src_eid_is_identity"), 0u);
  }
}

// A hoisted store to every incoming edge, in a loop with no statements of
// its own, is split over workers too, each worker storing its own edges'
// rows.
TEST(EmitterWorkerLoops, HoistedStoreLoopIsSplit) {
  std::optional<Emitted> e = compileAndEmitIr(kHoistedStoreModule);
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string kernel = textFrom(cu, "\nforward_trav_0(", "\n}\n");
  ASSERT_FALSE(kernel.empty());
  EXPECT_EQ(countOf(kernel, "for (int64_t k_e = g.dst_ptr[v_n]; k_e < "
                            "g.dst_ptr[v_n + 1]; ++k_e)"),
            0u);
  EXPECT_EQ(countOf(kernel, "for (int64_t hector_base_"), 1u);
  // The store is guarded by the worker's activity and sized by the row
  // it stores.
  EXPECT_EQ(countOf(kernel, "if (hector_active_0) HECTOR_FOR_ELEMENTS(i, "
                            "sz_t) b.t[v_e * sz_t + i] = r_t[i];"),
            1u);
  // Its widest row is t's (d).
  EXPECT_EQ(countOf(kernel, "hector::trav::workersFor(hector::trav::maxOf("
                            "hp_d), kGroupSize);"),
            1u);
}

// Deterministic mode (torch.use_deterministic_algorithms): the binding
// reads the flag into the hypers; every traversal with atomic adds runs on
// one thread (CPU) or one warp (CUDA) with plain adds and one worker per
// edge loop; every atomic GEMM gets SegmentGemmArgs::deterministic.
TEST_P(EmitterTest, DeterministicModeReachesEveryAtomic) {
  std::optional<Emitted> e = compileAndEmit(GetParam());
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string &cpu = fileText(*e, "kernels_cpu.cpp");
  EXPECT_EQ(countOf(fileText(*e, "binding.cpp"),
                    "hp.hector_deterministic = "
                    "at::globalContext().deterministicAlgorithms();"),
            1u);
  EXPECT_EQ(countOf(fileText(*e, "kernels.h"),
                    "bool hector_deterministic = false;"),
            1u);
  for (const std::string *text : {&cu, &cpu}) {
    EXPECT_EQ(countOf(*text, "atomicAdd"), 0u);
    EXPECT_EQ(countOf(*text, "a.atomic = true;"),
              countOf(*text, "a.deterministic = hp.hector_deterministic;"));
  }
  const size_t ordered = countOf(cpu, "#pragma omp parallel if (!hector_ordered)");
  // One single-warp launch per kernel with atomics: a warp launch (with a
  // row queue or not), or a flat row loop's 32-lane case, which
  // deterministic mode picks.
  EXPECT_EQ(countOf(cu, "sizeof(scalar_t), hp.hector_deterministic);") +
                countOf(cu, "sizeof(scalar_t), hp.hector_deterministic), "
                            "{}};") +
                countOf(cu, "sizeof(scalar_t), hp.hector_deterministic, 32);"),
            ordered);
  EXPECT_EQ(countOf(cu, "const int row_lanes = hp.hector_deterministic ? "
                        "hector::trav::kWarpSize : "),
            countOf(cu, "sizeof(scalar_t), hp.hector_deterministic, 32);"));
  EXPECT_EQ(countOf(cu, "const bool hector_ordered = hp.hector_deterministic;"),
            ordered);
  EXPECT_EQ(countOf(cpu, "hector_ordered);") > 0, ordered > 0);
  // A single-warp launch gets no heavy-row launch beside it.
  for (size_t at = cu.find("    // @trav_"); at != std::string::npos;) {
    const size_t next = cu.find("    // @trav_", at + 1);
    // A launch ends at the next one or with its host function (the host
    // entry after the body keys on hp.hector_deterministic too).
    const size_t end = std::min(next, cu.find("\n  template <", at));
    const std::string launch = cu.substr(at, end - at);
    if (countOf(launch, "hp.hector_deterministic);") > 0 &&
        countOf(launch, "heavy_launch") > 0) {
      EXPECT_EQ(countOf(launch, "const bool heavy_launch = "
                                "!hp.hector_deterministic && "),
                1u)
          << launch;
    }
    at = next;
  }
}

// A node-row kernel whose edge loops are split over workers is launched a
// second time for the heavy rows (Traversal.h): blocks of its schedule's
// heavy_group threads (512 for rgat_pyg's three-loop softmax) take the rows
// of g.heavy_dst_rows on a side stream, the warp launch skips them, and
// each launch sizes its scratch with its own group size.
TEST(EmitterHeavyRows, RgatPygForwardGivesItsHeavyRowsBlocks) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string kernel = textFrom(cu, "\nforward_trav_", "\n}\n");
  ASSERT_FALSE(kernel.empty());
  EXPECT_EQ(countOf(kernel, "constexpr bool hector_heavy = kGroupSize > "
                            "hector::trav::kWarpSize;"),
            1u);
  EXPECT_EQ(countOf(kernel, "chunkOf(hector_heavy ? g.num_heavy_dst : "
                            "g.num_nodes, group, groups)"),
            1u);
  // (The k-th item of a split heavy launch: EmitterHubSplit below.)
  EXPECT_EQ(countOf(kernel, "const int64_t v_n = hector_heavy ? "
                            "g.heavy_dst_rows[hector_item.row] : k;"),
            1u);
  EXPECT_EQ(countOf(kernel, "if (!hector_heavy && hector::trav::isHeavy("
                            "g.dst_ptr, v_n, hector_heavy_limit)) continue;"),
            1u);
  EXPECT_EQ(countOf(kernel, "workersFor(hector::trav::maxOf("), 3u);
  EXPECT_EQ(countOf(kernel, "), kGroupSize);"), 3u);

  const std::string host = textFrom(
      cu, "const int64_t heavy_scratch_size = [&] {", "\n    }\n");
  ASSERT_FALSE(host.empty());
  // Three worker strides, then the two launch shapes below.
  EXPECT_EQ(countOf(host, "), 512);"), 5u);
  EXPECT_EQ(countOf(host, "kHeavyGroupSize"), 0u);
  EXPECT_EQ(countOf(host, "), hector::trav::kWarpSize);"), 3u);
  // The kernel, its launch shape and its launch all take 512 threads.
  EXPECT_EQ(countOf(host, "<scalar_t, kFixedHypers, 512>)"), 3u);
  EXPECT_EQ(countOf(host, "sizeof(scalar_t), 512);"), 2u);
  EXPECT_EQ(countOf(host, "<scalar_t, kFixedHypers, 512><<<"), 1u);
  EXPECT_EQ(countOf(host, "const bool heavy_launch = g.num_heavy_dst > 0 && "
                          "hector::trav::fitsInBlock(heavy_scratch_size * "
                          "sizeof(scalar_t));"),
            1u);
  // The warp launch beside it: in groups of 16 lanes or of a warp.
  EXPECT_EQ(countOf(host, "(g, gv, b, hp, scratch_size, heavy_launch ? "
                          "g.heavy_row_edges : INT64_MAX, "
                          "hector::trav::HubArgs{}, launch.queue);"),
            2u);
  EXPECT_EQ(countOf(host, "if (heavy_launch) {"), 1u);
  // One block per heavy row when the hubs are not split (HubSplit.h).
  EXPECT_EQ(countOf(host, "heavyLaunchShape("), 1u);
  EXPECT_EQ(countOf(host, "(g, gv, b, hp, heavy_scratch_size, INT64_MAX, "
                          "hub, hector::trav::RowQueue{});"),
            1u);
  // The heavy launch is issued first, the warp launch after it, on the
  // streams launchStreams picks by the graph's size (side by side or one
  // after the other); joinLaunches after both.
  const size_t streams = host.find(
      "const hector::trav::LaunchStreams streams = "
      "hector::trav::launchStreams(stream, heavy_launch, g.num_edges);");
  const size_t heavyLaunch = host.find("shape.sharedBytes, heavy_stream>>>");
  const size_t warpLaunch = host.find("shape.sharedBytes, warp_stream>>>");
  const size_t join = host.find("hector::trav::joinLaunches(streams, stream);");
  ASSERT_NE(streams, std::string::npos);
  ASSERT_NE(heavyLaunch, std::string::npos);
  ASSERT_NE(warpLaunch, std::string::npos);
  ASSERT_NE(join, std::string::npos);
  EXPECT_LT(streams, heavyLaunch);
  EXPECT_LT(heavyLaunch, warpLaunch);
  EXPECT_LT(warpLaunch, join);
  EXPECT_EQ(countOf(host, "const cudaStream_t heavy_stream = streams.heavy;"),
            1u);
  EXPECT_EQ(countOf(host, "const cudaStream_t warp_stream = streams.warp;"),
            1u);
  EXPECT_EQ(countOf(host, "joinLaunches("), 1u);
}

// A one-loop row (a sum) keeps the build's heavy block
// (hector::trav::kHeavyGroupSize): only nests with two or more edge loops
// per row take 512 threads (lowering: heavyGroupSizeOf).
TEST(EmitterHeavyRows, OneLoopRowsKeepTheBuildsBlockSize) {
  std::optional<Emitted> e = compileAndEmit("rgcn_pyg");
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  EXPECT_GE(countOf(cu, "if (heavy_launch) {"), 1u);
  EXPECT_GE(countOf(cu, "<scalar_t, kFixedHypers, "
                        "hector::trav::kHeavyGroupSize>"),
            1u);
  EXPECT_EQ(countOf(cu, "kFixedHypers, 512>"), 0u);
  EXPECT_EQ(countOf(cu, "heavy_group"), 0u);
}

// The heavy launch shares a hub's edges among several blocks
// (templates/traversal/HubSplit.h): each block takes its items (pieces of
// hubs, then whole heavy rows), and after each loop with segmented
// reductions a row's parts add their partials into the row's slots, wait
// for each other and read the whole row back. rgat_pyg's forward has
// three such loops (max, the softmax sum, the aggregation), so three
// barriers, counting 1, 2 and 3 arrivals per part.
TEST(EmitterHubSplit, RgatPygForwardCombinesItsThreeReductions) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string kernel = textFrom(cu, "\nforward_trav_", "\n}\n");
  ASSERT_FALSE(kernel.empty());
  EXPECT_EQ(countOf(kernel, "const hector::trav::HubArgs hector_hub, const "
                            "hector::trav::RowQueue hector_queue)"),
            1u);
  EXPECT_EQ(countOf(kernel, "hector::trav::hubWork(g.heavy_dst_edge_ptr, "
                            "g.num_heavy_dst, blockIdx.x, "
                            "hector::trav::hubBlocks(g.heavy_dst_edge_ptr["
                            "g.num_heavy_dst], g.num_heavy_dst, "
                            "hector_hub.pieceEdges, gridDim.x))"),
            1u);
  EXPECT_EQ(countOf(kernel, "hector::trav::RowRange{0, hub_work.items()}"),
            1u);
  // The block's share lives in shared memory (in registers it stayed live
  // through every row and pushed the kernel into spills).
  EXPECT_EQ(countOf(kernel, "__shared__ hector::trav::HubWork hub_work;"),
            1u);
  // Pieces first, then whole rows off the queue; a block leaves the row
  // loop when the queue runs out.
  EXPECT_EQ(countOf(kernel, "hector::trav::hubNextItem(hub_work, "
                            "g.heavy_dst_edge_ptr, k, hector_hub) : "
                            "hector::trav::HubItem{k, 0, -1, 1};"),
            1u);
  EXPECT_EQ(countOf(kernel, "if (hector_item.row < 0) break;"), 1u);
  EXPECT_EQ(countOf(kernel, "const hector::trav::EdgeSpan hector_span = "
                            "hector::trav::hubSpan(g.dst_ptr, v_n, "
                            "hector_item);"),
            1u);
  // Partials go to the slots (one max, two sums), never to a buffer row
  // that the other parts share; each fold is printed twice, for block
  // groups (across lanes) and for warp groups (printWorkerFold).
  EXPECT_EQ(countOf(kernel, "hector::trav::hubMax(hector::trav::hubSlots<"
                            "scalar_t>(hector_hub, hector_item.row) + 0 + i, "
                            "acc);"),
            2u);
  EXPECT_EQ(countOf(kernel, "hector::trav::hubAdd(hector::trav::hubSlots<"
                            "scalar_t>(hector_hub, hector_item.row) + "
                            "sz_alpha_max + i, acc);"),
            2u);
  EXPECT_EQ(countOf(kernel, "hector::trav::hubAdd(hector::trav::hubSlots<"
                            "scalar_t>(hector_hub, hector_item.row) + "
                            "sz_alpha_max + sz_alpha_sum + i, acc);"),
            2u);
  EXPECT_EQ(countOf(kernel, "else t[i] = acc;"), 6u);
  for (int barrier = 1; barrier <= 3; ++barrier)
    EXPECT_EQ(countOf(kernel, "hubCounter(hector_hub, hector_item.row), "
                              "static_cast<unsigned>(" +
                                  std::to_string(barrier) +
                                  " * hector_span.parts));"),
              1u);
  EXPECT_EQ(countOf(kernel, "hector::trav::hubMaxValue(hub_slots + 0 + i)"),
            1u);
  EXPECT_EQ(countOf(kernel, "hector::trav::hubSum(hub_slots + "), 2u);

  // The host sizes the slots (heads * (1 + 1 + out_dim)), launches
  // cooperatively, and keeps one block per row in deterministic mode.
  const std::string host = textFrom(
      cu, "const int64_t heavy_scratch_size = [&] {", "\n    }\n");
  ASSERT_FALSE(host.empty());
  EXPECT_EQ(countOf(host, "hp.hector_deterministic ? "
                          "hector::trav::LaunchShape{} : "
                          "hector::trav::hubLaunchShape("),
            1u);
  EXPECT_EQ(countOf(host, "hub = hector::trav::hubArgs(g.num_heavy_dst, "
                          "((INT64_C(2) * hp_heads) + (hp_heads * "
                          "hp_out_dim)), sizeof(scalar_t), heavy_stream);"),
            1u);
  EXPECT_EQ(countOf(host, "if (hub.workspace) hector::trav::check("
                          "hector::trav::launchCooperative("),
            1u);
  // The workspace goes back to its pool behind the launch, on its stream.
  const size_t launch = host.find("launchCooperative(");
  const size_t release =
      host.find("hector::trav::hubRelease(hub, heavy_stream);");
  ASSERT_NE(release, std::string::npos);
  EXPECT_LT(launch, release);
  // The warp launch never splits (in groups of 16 lanes or of a warp).
  EXPECT_EQ(countOf(host, "heavy_launch ? g.heavy_row_edges : INT64_MAX, "
                          "hector::trav::HubArgs{}, launch.queue);"),
            2u);
}

// A kernel with atomic reductions splits its hubs too: each part adds its
// own edges' contributions, and a node-level atomic add, which every part
// would repeat, runs only in the part holding the row's first edges. In
// the hoisted-store module the forward's incoming kernel sums x[n] into a
// global at node level.
TEST(EmitterHubSplit, KernelsWithAtomicsSplitAndAddOnce) {
  std::optional<Emitted> e = compileAndEmitIr(kHoistedStoreModule);
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  size_t heavyKernels = 0, splitKernels = 0;
  for (size_t at = cu.find("__global__"); at != std::string::npos;
       at = cu.find("__global__", at + 1)) {
    const std::string kernel = textFrom(cu.substr(at), "__global__", "\n}\n");
    if (kernel.find("constexpr bool hector_heavy") == std::string::npos)
      continue;
    ++heavyKernels;
    splitKernels += kernel.find("hubSpan(") != std::string::npos;
  }
  EXPECT_EQ(heavyKernels, 3u);
  EXPECT_EQ(splitKernels, 3u);
  const std::string forward = textFrom(cu, "\nforward_trav_0(", "\n}\n");
  const size_t guard = forward.find("if (hector_item.begin == 0) {");
  const size_t sum = forward.find("c += copy(x[n]) {partial_atomic}");
  ASSERT_NE(guard, std::string::npos) << forward;
  ASSERT_NE(sum, std::string::npos) << forward;
  EXPECT_LT(guard, sum);
  EXPECT_EQ(countOf(forward, "if (hector_item.begin == 0) {"), 1u);
  // The edge loop after it runs in every part, on the part's own edges.
  EXPECT_LT(sum, forward.find("hector_span.begin"));
}

// The hoisted-store kernel splits its store loop over workers, so it gets
// a heavy launch too; in deterministic mode (it has a partial-atomic
// reduction) the heavy launch is off.
TEST(EmitterHeavyRows, HoistedStoreKernelHasAHeavyLaunch) {
  std::optional<Emitted> e = compileAndEmitIr(kHoistedStoreModule);
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string kernel = textFrom(cu, "\nforward_trav_0(", "\n}\n");
  ASSERT_FALSE(kernel.empty());
  EXPECT_EQ(countOf(kernel, "const int64_t v_n = hector_heavy ? "
                            "g.heavy_dst_rows[hector_item.row] : k;"),
            1u);
  EXPECT_EQ(countOf(cu, "forward_trav_0<scalar_t, kFixedHypers, "
                        "hector::trav::kHeavyGroupSize><<<"),
            1u);
  const std::string host = textFrom(cu, "    // @trav_0:", "\n    }\n");
  EXPECT_EQ(countOf(host, "const bool heavy_launch = !hp.hector_deterministic "
                          "&& g.num_heavy_dst > 0"),
            1u);
}

// A loop over relations gets a block per relation: rgat_pyg's backward
// sums a 64 x 64 outer product per relation into grad_q, which a warp per
// relation did on a few dozen warps. Deterministic mode (the sum is a
// partial atomic) keeps the single warp.
TEST(EmitterBlockPerType, RelationLoopsLaunchABlockPerRelation) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string host =
      textFrom(cu, "      // @trav_10: access none, schedule block_per_type",
               "\n      }\n");
  ASSERT_FALSE(host.empty());
  EXPECT_EQ(countOf(host, "const int64_t rows = g.num_etypes;"), 1u);
  EXPECT_EQ(countOf(host, "const bool block_launch = !hp.hector_deterministic "
                          "&& hector::trav::fitsInBlock(block_scratch_size * "
                          "sizeof(scalar_t));"),
            1u);
  EXPECT_EQ(countOf(host,
                    "hector::trav::heavyLaunchShape(reinterpret_cast<"
                    "const void *>(&backward_trav_10<scalar_t, kFixedHypers, "
                    "hector::trav::kHeavyGroupSize>), rows, "
                    "block_scratch_size, sizeof(scalar_t));"),
            1u);
  // The warp launch is the fallback, one warp in deterministic mode.
  EXPECT_EQ(countOf(host, "else {"), 1u);
  EXPECT_EQ(
      countOf(
          host,
          "backward_trav_10<scalar_t, kFixedHypers, hector::trav::kWarpSize>"
          "), rows, scratch_size, sizeof(scalar_t), "
          "hp.hector_deterministic);"),
      1u);
  // The relation loop is the only one (the flag declared, then tested).
  EXPECT_EQ(countOf(cu, "block_launch"), 2u);
}

// A kernel whose rows cost the same and that sums them with partial
// atomics (rgat_pyg's grad_bias over all nodes) launches one wave of
// groups of at least a few rows (rowSumsLaunchShape), so that each warp
// adds many rows before its atomic adds; a kernel with edge loops (the
// forward) takes its rows from a queue.
TEST(EmitterOneWave, PartialAtomicNodeSumsLaunchOneWave) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string bias =
      textFrom(cu, "      // @trav_0: access none", "\n      }\n");
  EXPECT_EQ(countOf(bias,
                    "hector::trav::rowSumsLaunchShape(reinterpret_cast<"
                    "const void *>(&backward_trav_0<scalar_t, kFixedHypers, "
                    "hector::trav::kWarpSize>), rows, scratch_size, "
                    "sizeof(scalar_t), hp.hector_deterministic);"),
            1u)
      << bias;
  // ... the warp fallback of the relation loop summing grad_q, and the
  // softmax-gradient COO loop summing grad_alpha_sum into e.dst (one launch
  // per row-lane width, six).
  EXPECT_EQ(countOf(cu, "rowSumsLaunchShape("), 8u);
  EXPECT_EQ(countOf(cu, "oneWaveLaunchShape("), 0u);
  EXPECT_EQ(countOf(cu, "hector::trav::queuedLaunchShape(reinterpret_cast<"
                        "const void *>(&forward_trav_3<scalar_t, kFixedHypers, "
                        "hector::trav::kWarpSize, true>)"),
            1u);
}

// A flat row loop (edges or pairs, no loop inside) runs in groups of
// rowGroupLanes(widest row) lanes: rgat_pyg's softmax-gradient COO loop
// has one scalar per head in every row, so a group is one lane and a warp
// walks 32 edges at once. Each group size is its own instantiation.
TEST(EmitterFlatRows, FlatRowLoopsPickTheirGroupSizeAtRunTime) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string host =
      textFrom(cu, "      // @trav_2: access coo", "\n      }\n    }\n");
  ASSERT_FALSE(host.empty());
  EXPECT_EQ(countOf(host, "const int row_lanes = hp.hector_deterministic ? "
                          "hector::trav::kWarpSize : "
                          "hector::trav::rowGroupLanes(hector::trav::maxOf("
                          "hp_heads, hp_heads, hp_heads, hp_heads, hp_heads));"),
            1u)
      << host;
  EXPECT_EQ(countOf(host, "switch (row_lanes)"), 1u);
  EXPECT_EQ(countOf(host, "case 1: {"), 1u);
  EXPECT_EQ(countOf(host, "default: {"), 1u);
  EXPECT_EQ(
      countOf(host,
              "hector::trav::launchShape(reinterpret_cast<const "
              "void *>(&backward_trav_2<scalar_t, kFixedHypers, 1>), rows, "
              "scratch_size, sizeof(scalar_t), "
              "hp.hector_deterministic, 1);"),
      1u);
  // Node loops keep their warp launch.
  EXPECT_EQ(
      countOf(
          cu,
          "forward_trav_3<scalar_t, kFixedHypers, hector::trav::kWarpSize><<<"),
      1u);
}

// A node-row kernel with neighbour loops and a partial-atomic sum (the
// bias gradient, fused into RGCN's backward edge loop) takes chunks of
// rows per warp (TraversalCuda.h partialRowsLaunchShape), not a wave: its
// rows' degrees make them uneven. Its heavy launch is unchanged, and the
// forward's node-row kernel, which has no partial sums, keeps a warp per
// row.
TEST(EmitterPartialRows, PartialAtomicEdgeLoopsTakeChunksOfRows) {
  std::optional<Emitted> e = compileAndEmit("rgcn_pyg");
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string backward =
      textFrom(cu, "void backward_cuda_body(", "\n  }\n");
  ASSERT_FALSE(backward.empty());
  EXPECT_EQ(countOf(backward,
                    "hector::trav::partialRowsLaunchShape("
                    "reinterpret_cast<const void *>(&backward_trav_2<"
                    "scalar_t, kFixedHypers, hector::trav::kWarpSize>), rows, "
                    "scratch_size, sizeof(scalar_t), "
                    "hp.hector_deterministic);"),
            1u)
      << backward;
  EXPECT_EQ(countOf(cu, "partialRowsLaunchShape("), 1u);
  EXPECT_EQ(countOf(cu, "rowSumsLaunchShape("), 0u);
}

// A node-row kernel with neighbour loops and no partial-atomic sums
// (hgt_pyg's forward aggregation) has a row-queue instantiation: its warp
// groups take every row from the queue, the others walk their chunks. The
// warp launch takes the queue when it does not overlap the heavy launch
// (same stream), allocating it on its stream and releasing it after the
// launch; the heavy launches and the overlapping warp launch pass none.
// rgcn_pyg's backward partial-atomic kernel keeps its chunks and has no
// queue.
TEST(EmitterRowQueue, NodeRowWarpLaunchesTakeTheirRowsFromAQueue) {
  std::optional<Emitted> e = compileAndEmit("hgt_pyg");
  std::optional<Emitted> rgcn = compileAndEmit("rgcn_pyg");
  ASSERT_TRUE(e && rgcn);
  const std::string &cu = fileText(*e, "kernels.cu");
  EXPECT_EQ(countOf(cu, "template <typename scalar_t, bool kFixedHypers, int "
                        "kGroupSize, bool "
                        "kRowQueue = false>\n__global__ void "
                        "__launch_bounds__(kGroupSize > 256 ? kGroupSize : "
                        "256)\nforward_trav_3("),
            1u);
  const std::string kernel = textFrom(cu, "\nforward_trav_3(", "\n}\n");
  ASSERT_FALSE(kernel.empty());
  EXPECT_EQ(countOf(kernel, "const hector::trav::RowQueue hector_queue)"), 1u);
  EXPECT_EQ(countOf(kernel, "const hector::trav::RowRange hector_rows = "
                            "kRowQueue ? hector::trav::RowRange{0, "
                            "g.num_nodes} : range;"),
            1u)
      << kernel;
  EXPECT_EQ(countOf(kernel, "for (int64_t k = hector::trav::firstRow<"
                            "kGroupSize, kRowQueue>(hector_rows, "
                            "hector_queue); k < hector_rows.end; k = "
                            "hector::trav::nextRow<kGroupSize, kRowQueue>(k, "
                            "hector_queue))"),
            1u)
      << kernel;
  const std::string forward =
      textFrom(cu, "void forward_cuda_body(", "\n  }\n");
  ASSERT_FALSE(forward.empty());
  const size_t shape = forward.find(
      "const hector::trav::QueuedLaunch launch = warp_stream == stream ? "
      "hector::trav::queuedLaunchShape(reinterpret_cast<const void "
      "*>(&forward_trav_3<scalar_t, kFixedHypers, hector::trav::kWarpSize, "
      "true>), rows, "
      "scratch_size, sizeof(scalar_t), false, warp_stream) : "
      "hector::trav::QueuedLaunch{hector::trav::launchShape(reinterpret_cast<"
      "const void *>(&forward_trav_3<scalar_t, kFixedHypers, "
      "hector::trav::kWarpSize>), "
      "rows, scratch_size, sizeof(scalar_t), false), {}};");
  const size_t queued = forward.find(
      "if (launch.queue.next) forward_trav_3<scalar_t, kFixedHypers, "
      "hector::trav::kWarpSize, true><<<");
  const size_t chunked =
      forward.find("else forward_trav_3<scalar_t, kFixedHypers, "
                   "hector::trav::kWarpSize><<<");
  // (The warp's launch; the narrow groups' comes first, the same way.)
  const size_t release = forward.find(
      "hector::trav::rowQueueRelease(launch.queue, warp_stream);", shape);
  ASSERT_NE(shape, std::string::npos) << forward;
  ASSERT_NE(queued, std::string::npos) << forward;
  ASSERT_NE(chunked, std::string::npos) << forward;
  ASSERT_NE(release, std::string::npos) << forward;
  EXPECT_LT(shape, queued);
  EXPECT_LT(queued, chunked);
  EXPECT_LT(chunked, release);
  // One edge loop: a warp per row only (no groups of 16 lanes).
  EXPECT_EQ(countOf(forward, "nodeRowLanes"), 0u) << forward;
  EXPECT_EQ(countOf(forward, ", launch.queue);"), 1u) << forward;
  EXPECT_EQ(countOf(forward, "hector::trav::RowQueue{}"), 3u) << forward;
  const std::string partial =
      textFrom(fileText(*rgcn, "kernels.cu"), "\nbackward_trav_2(", "\n}\n");
  ASSERT_FALSE(partial.empty());
  EXPECT_EQ(countOf(partial, "hector_queue"), 0u);
  EXPECT_EQ(countOf(partial, "for (int64_t k = range.begin; k < range.end; "
                             "++k)"),
            1u);
}

/// A node loop over both directions' edges: it has no heavy launch (a
/// node would be heavy by two degrees), so its one warp launch is queued.
const char *kTwoDirectionModule = R"(module @both {
  hyper d : int = 8
  input x : node[d]
  output g : node[d]
  output f : node[d]
  foreach n in nodes {
    foreach e in n.incoming {
      g[n] += copy(x[e.src])
    }
    foreach e in n.outgoing {
      f[n] += copy(x[e.dst])
    }
  }
}
)";

// RGAT's forward rows run a softmax's three edge loops, a chain of steps
// per row: on graphs with few edges per row its warp launch takes groups
// of 16 lanes, two rows per warp (docs/perf-notes.md section 42), each
// sized for 16 lanes; the choice is made at run time.
TEST(EmitterRowQueue, ThreeLoopRowsTakeGroupsOf16LanesWhenRowsAreSmall) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string forward =
      textFrom(cu, "void forward_cuda_body(", "\n  }\n");
  ASSERT_FALSE(forward.empty());
  EXPECT_EQ(countOf(forward, "const int row_lanes = hector::trav::"
                             "nodeRowLanes(g.num_edges, rows, false);"),
            1u);
  EXPECT_EQ(countOf(forward,
                    "if (row_lanes == hector::trav::kNarrowNodeRowLanes) {"),
            1u);
  EXPECT_EQ(countOf(forward, "hector::trav::maxOf(hp_heads, (hp_heads * "
                             "hp_out_dim), (hp_heads * hp_out_dim)), "
                             "hector::trav::kNarrowNodeRowLanes);"),
            1u);
  EXPECT_EQ(countOf(forward,
                    "hector::trav::queuedLaunchShape(reinterpret_cast<const "
                    "void *>(&forward_trav_3<scalar_t, kFixedHypers, "
                    "hector::trav::kNarrowNodeRowLanes, true>), rows, "
                    "scratch_size, sizeof(scalar_t), false, warp_stream, "
                    "hector::trav::kNarrowNodeRowLanes)"),
            1u);
  EXPECT_EQ(countOf(forward, "hector::trav::launchShape(reinterpret_cast<"
                             "const void *>(&forward_trav_3<scalar_t, "
                             "kFixedHypers, hector::trav::"
                             "kNarrowNodeRowLanes>), rows, scratch_size, "
                             "sizeof(scalar_t), false, hector::trav::"
                             "kNarrowNodeRowLanes)"),
            1u);
  // The backward's kernels keep a warp per row.
  const std::string backward =
      textFrom(cu, "void backward_cuda_body(", "\n  }\n");
  ASSERT_FALSE(backward.empty());
  EXPECT_EQ(countOf(backward, "nodeRowLanes"), 0u);
  // The forward kernel's fixed-hyper, chunked 16-lane instantiation asks
  // for more blocks an SM, and so does the inference program's softmax
  // (the same three loops, less the message); no other kernel names a
  // block count (0: ptxas's own).
  for (const char *kernel : {"forward_trav_3(", "inference_trav_4("})
    EXPECT_EQ(countOf(cu, std::string("__launch_bounds__(kGroupSize > 256 ? "
                                      "kGroupSize : 256, kFixedHypers && "
                                      "!kRowQueue && kGroupSize == hector::"
                                      "trav::kNarrowNodeRowLanes ? hector::"
                                      "trav::kNarrowNodeRowMinBlocks : "
                                      "0)\n") +
                              kernel),
              1u)
        << kernel;
  EXPECT_EQ(countOf(cu, "kNarrowNodeRowMinBlocks"), 2u);
}

// A queued warp launch with no heavy launch before it is only the queued
// instantiation: no stream test, no chunked fallback that cannot run.
TEST(EmitterRowQueue, AWarpLaunchWithoutAHeavyLaunchIsOnlyQueued) {
  std::optional<Emitted> e = compileAndEmitIr(kTwoDirectionModule);
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string forward =
      textFrom(cu, "void forward_cuda_body(", "\n  }\n");
  ASSERT_FALSE(forward.empty());
  EXPECT_EQ(countOf(forward, "heavy_launch"), 0u) << forward;
  EXPECT_EQ(countOf(forward, "warp_stream"), 0u) << forward;
  EXPECT_EQ(countOf(forward,
                    "const hector::trav::QueuedLaunch launch = "
                    "hector::trav::queuedLaunchShape("
                    "reinterpret_cast<const void *>(&forward_trav_0<"
                    "scalar_t, kFixedHypers, hector::trav::kWarpSize, true>), "
                    "rows, scratch_size, sizeof(scalar_t), false, "
                    "stream);"),
            1u)
      << forward;
  EXPECT_EQ(countOf(forward,
                    "forward_trav_0<scalar_t, kFixedHypers, hector::trav::"
                    "kWarpSize, true><<<"),
            1u);
  // Two edge loops: a warp per row only (no groups of 16 lanes).
  EXPECT_EQ(countOf(forward, "nodeRowLanes"), 0u);
  EXPECT_EQ(countOf(forward, ", launch.queue);"), 1u);
  EXPECT_EQ(countOf(forward,
                    "forward_trav_0<scalar_t, kFixedHypers, hector::trav::"
                    "kWarpSize><<<"),
            0u);
  EXPECT_EQ(countOf(forward, "RowQueue{}"), 0u);
  EXPECT_EQ(countOf(forward, "hector::trav::rowQueueRelease(launch.queue, "
                             "stream);"),
            1u);
}

// The CUDA host function runs its kernels' kFixedHypers instantiation
// when the run's int hypers are the declared ones (float only): the
// kernels then read the declared values as constants. Float hypers are
// never fixed.
TEST(EmitterFixedHypers, DeclaredIntHypersBecomeKernelConstants) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string kernel = textFrom(cu, "\nforward_trav_3(", "\n}\n");
  ASSERT_FALSE(kernel.empty());
  EXPECT_EQ(countOf(kernel, "const int hp_in_dim = kFixedHypers ? 64 : "
                            "static_cast<int>(hp.in_dim);"),
            1u)
      << kernel;
  EXPECT_EQ(countOf(kernel, "const int hp_heads = kFixedHypers ? 1 : "
                            "static_cast<int>(hp.heads);"),
            1u);
  EXPECT_EQ(countOf(kernel, "const double hp_slope = hp.slope;"), 1u);
  for (const char *entry : {"forward", "backward"}) {
    const std::string dispatch = textFrom(
        cu, std::string("void ") + entry + "_cuda([[maybe_unused]]", "\n  }\n");
    ASSERT_FALSE(dispatch.empty()) << entry;
    // Inside the launch graph cache's body, on the stream it is given.
    const std::string args = "(g, gv, b, hp, stream);";
    const size_t fixed = dispatch.find(
        "if constexpr (std::is_same_v<scalar_t, float>) {\n        if "
        "(hector::trav::fixedHypersEnabled() && hp.in_dim == 64 && hp.out_dim "
        "== 64 && hp.heads == 1) {\n          " +
        std::string(entry) + "_cuda_body<scalar_t, true>" + args +
        "\n          return;");
    const size_t general = dispatch.find(std::string(entry) +
                                         "_cuda_body<scalar_t, false>" + args);
    ASSERT_NE(fixed, std::string::npos) << dispatch;
    ASSERT_NE(general, std::string::npos) << dispatch;
    EXPECT_LT(fixed, general);
    // The float hyper is not compiled in: no comparison of it.
    EXPECT_EQ(countOf(dispatch, "hp.slope =="), 0u);
  }
  // Every launch passes the flag on.
  const std::string body = textFrom(cu, "void forward_cuda_body(", "\n  }\n");
  EXPECT_EQ(countOf(body, "forward_trav_3<scalar_t, "),
            countOf(body, "forward_trav_3<scalar_t, kFixedHypers, "));
  EXPECT_GT(countOf(body, "forward_trav_3<scalar_t, kFixedHypers, "), 0u);
}

// The C++ host functions dispatch the same way: their traversal kernels'
// element loops divide by row sizes, which fold as constants (int64 on the
// CPU, where the sizes are not narrowed).
TEST(EmitterFixedHypers, CpuKernelsTakeTheDeclaredHypersToo) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  const std::string &cpp = fileText(*e, "kernels_cpu.cpp");
  EXPECT_EQ(countOf(cpp, "#include \"templates/traversal/HostSwitches.h\""),
            1u);
  const std::string kernel = textFrom(cpp, "void backward_trav_10(", "\n}\n");
  ASSERT_FALSE(kernel.empty());
  EXPECT_EQ(countOf(kernel, "const int64_t hp_in_dim = kFixedHypers ? "
                            "INT64_C(64) : hp.in_dim;"),
            1u)
      << kernel;
  EXPECT_EQ(countOf(kernel, "const double hp_slope = hp.slope;"), 1u);
  for (const char *entry : {"forward", "backward", "inference"}) {
    const std::string dispatch = textFrom(
        cpp, std::string("void ") + entry + "_cpu([[maybe_unused]]", "\n  }\n");
    ASSERT_FALSE(dispatch.empty()) << entry;
    const std::string args = "(g, gv, b, hp);";
    const size_t fixed = dispatch.find(
        "if constexpr (std::is_same_v<scalar_t, float>) {\n      if "
        "(hector::trav::fixedHypersEnabled() && hp.in_dim == 64 && hp.out_dim "
        "== 64 && hp.heads == 1) {\n        " +
        std::string(entry) + "_cpu_body<scalar_t, true>" + args);
    const size_t general =
        dispatch.find(std::string(entry) + "_cpu_body<scalar_t, false>" + args);
    ASSERT_NE(fixed, std::string::npos) << dispatch;
    ASSERT_NE(general, std::string::npos) << dispatch;
    EXPECT_LT(fixed, general);
  }
  // Every traversal call in a body passes its flag on.
  const std::string body = textFrom(cpp, "void backward_cpu_body(", "\n  }\n");
  EXPECT_GT(countOf(body, "<scalar_t, kFixedHypers>(g, gv, b, hp);"), 0u);
  EXPECT_EQ(countOf(body, "<scalar_t>(g, gv, b, hp);"), 0u);
}

// Each CUDA host function runs its body through the program's launch graph
// cache (templates/LaunchGraphCache.h), keyed by every argument that decides
// its launches: the graph, its values, the buffers, each hyper and each flag
// of Hypers. The C++ host functions have no cache.
TEST(EmitterLaunchGraphs, CudaHostFunctionsKeyEveryArgument) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  EXPECT_EQ(countOf(cu, "#include \"templates/LaunchGraphCache.h\""), 1u);
  for (const char *entry : {"forward", "backward", "inference"}) {
    const std::string host = textFrom(
        cu, std::string("void ") + entry + "_cuda([[maybe_unused]]", "\n  }\n");
    ASSERT_FALSE(host.empty()) << entry;
    EXPECT_EQ(countOf(host, "static hector::templates::LaunchGraphCache "
                            "&launch_graphs = *new "
                            "hector::templates::LaunchGraphCache;"),
              1u)
        << host;
    for (const char *part : {"g", "gv", "b", "hp.in_dim", "hp.out_dim",
                             "hp.heads", "hp.slope", "hp.hector_deterministic",
                             "hp.hector_tf32", "hp.hector_needed_outputs"})
      EXPECT_EQ(countOf(host, std::string("key.add(") + part + ");"), 1u)
          << entry << ": " << part;
    const size_t run = host.find(
        "launch_graphs.run(std::move(key), "
        "!hector::trav::overlapLaunches(g.num_edges), "
        "static_cast<cudaStream_t>(stream_handle), [&](cudaStream_t stream) {");
    const size_t body = host.find(std::string(entry) + "_cuda_body<");
    ASSERT_NE(run, std::string::npos) << host;
    EXPECT_LT(run, body);
    // The body launches on the cache's stream, never on the caller's.
    EXPECT_EQ(countOf(host, "(g, gv, b, hp, stream_handle)"), 0u) << host;
  }
  const std::string &cpp = fileText(*e, "kernels_cpu.cpp");
  EXPECT_EQ(countOf(cpp, "LaunchGraphCache"), 0u);
  EXPECT_EQ(countOf(cpp, "LaunchKey"), 0u);
}

// The constants are whatever the module declares.
TEST(EmitterFixedHypers, ConstantsAreTheModulesDeclaredValues) {
  std::optional<Emitted> e = compileAndEmitIr(kHoistedStoreModule);
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  EXPECT_EQ(countOf(cu, "const int hp_d = kFixedHypers ? 8 : "
                        "static_cast<int>(hp.d);"),
            countOf(cu, "__global__ void"));
  EXPECT_EQ(
      countOf(cu, "if (hector::trav::fixedHypersEnabled() && hp.d == 8) {"),
      2u);
}

// A contraction in a worker-split edge loop (HGT's attention score: one
// scalar a head from two 64-wide rows) is shared by its worker's lanes,
// which are as many as its operands' rows ask for: each lane adds its
// share of the terms, a shuffle fold sums them (on every lane, active or
// not), and the element's own lane runs the rest of the group. A worker
// wider than a warp keeps the one-lane element loop.
TEST(EmitterWorkerSplit, WorkerLoopContractionsShareTheirTerms) {
  std::optional<Emitted> e = compileAndEmit("hgt_pyg");
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string kernel = textFrom(cu, "\nforward_trav_3(", "\n}\n");
  ASSERT_FALSE(kernel.empty());
  EXPECT_EQ(countOf(kernel, "hector_workers_0 = hector::trav::workersFor("
                            "hector::trav::maxOf(hp_heads, hp_in_dim, "
                            "hp_in_dim, hp_heads, hp_heads, hp_heads), "
                            "kGroupSize);"),
            1u)
      << kernel;
  const size_t sum = kernel.find(
      "if (hector_active_0) {\n                if "
      "(hector::trav::quadRows<scalar_t>((hp_in_dim / hp_heads), (s10_o0 + i "
      "* (hp_in_dim / hp_heads)), (s10_o1 + i * (hp_in_dim / hp_heads)))) {");
  const size_t fold =
      kernel.find("v_s10 = hector::trav::foldSum<kGroupSize>(v_s10, "
                  "hector_lanes);");
  const size_t own =
      kernel.find("if (hector_active_0 && i % hector_lanes == hector_lane) {");
  const size_t rest = kernel.find("s13_t[i] = hector::trav::max(s13_t[i], "
                                  "v_s13);");
  const size_t plain = kernel.find("else if (hector_active_0) {");
  ASSERT_NE(sum, std::string::npos) << kernel;
  ASSERT_NE(fold, std::string::npos);
  ASSERT_NE(own, std::string::npos);
  ASSERT_NE(plain, std::string::npos);
  EXPECT_LT(sum, fold);
  EXPECT_LT(fold, own);
  EXPECT_LT(own, rest);
  EXPECT_LT(rest, plain);
  EXPECT_NE(kernel.find("if (hector_lanes <= hector::trav::kWarpSize) {"),
            std::string::npos);
  // A sum_to in a backward worker loop (HGT's score gradient over a
  // head's elements) takes the same form.
  std::optional<Emitted> hgt = compileAndEmit("hgt");
  ASSERT_TRUE(hgt);
  const std::string &hgtCu = fileText(*hgt, "kernels.cu");
  EXPECT_EQ(countOf(hgtCu, "v_s15 = hector::trav::foldSum<kGroupSize>("
                           "v_s15, hector_lanes);"),
            1u);
}

// Rows gathered per edge are read a quad at a time (docs/perf-notes.md
// sections 35 and 37): in a flat edge loop (rgat_pyg's softmax gradient),
// by plain statements and by the quad atomics, whose per-head broadcast
// operand stays a pointer; a node's own rows keep the batch loop.
TEST(EmitterQuads, GatheredRowsAreReadAQuadAtATime) {
  std::optional<Emitted> e = compileAndEmit("rgat_pyg");
  ASSERT_TRUE(e);
  const std::string &cu = fileText(*e, "kernels.cu");
  const std::string flat = textFrom(cu, "\nbackward_trav_1(", "\n}\n");
  ASSERT_FALSE(flat.empty());
  EXPECT_EQ(countOf(flat, "if (hector::trav::quadRows<scalar_t>(sz_d_1, o0, "
                          "o1)) {"),
            1u)
      << flat;
  EXPECT_EQ(countOf(flat, "const scalar_t v = q_o0[i] * q_o1[i];"), 1u);
  const size_t atomics = flat.find(
      "if (hector::trav::quadAccumulates(t, sz_grad_msg_0, hector_ordered)) "
      "{\n        if (hector::trav::quadRows<scalar_t>(sz_grad_msg_0, o0)) {");
  ASSERT_NE(atomics, std::string::npos) << flat;
  EXPECT_NE(flat.find("const scalar_t v = q_o0[i] * o1[(hp_heads == 1 ? 0 : "
                      "i / hp_out_dim)];",
                      atomics),
            std::string::npos);
  // rgcn_pyg's bias gradient, a partial-atomic sum of the node's own row,
  // and rgat_pyg's node-level output keep their element order.
  std::optional<Emitted> rgcn = compileAndEmit("rgcn_pyg");
  ASSERT_TRUE(rgcn);
  const std::string &rgcnCu = fileText(*rgcn, "kernels.cu");
  const std::string bias = textFrom(
      rgcnCu, "// s0: grad_bias += copy(grad_h[n]) {partial_atomic}", "// s3:");
  ASSERT_FALSE(bias.empty());
  EXPECT_EQ(countOf(bias, "rowQuad"), 0u) << bias;
  const std::string out =
      textFrom(cu, "// s15: h[n] = add(h_1[n], bias)", "HECTOR_GROUP_SYNC();");
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(countOf(out, "rowQuad"), 0u) << out;
}

INSTANTIATE_TEST_SUITE_P(Bundled, EmitterTest,
                         ::testing::Values("rgcn", "rgcn_pyg", "rgat",
                                           "rgat_pyg", "hgt", "hgt_pyg"),
                         [](const auto &info) { return info.param; });

} // namespace
} // namespace hector::codegen
