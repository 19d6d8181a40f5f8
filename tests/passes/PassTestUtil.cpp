#include "PassTestUtil.h"

#include "ir/Diagnostics.h"
#include "ir/InterIRParser.h"
#include "ir/InterIRVerifier.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <limits>
#include <sstream>

namespace hector::passtest {

std::shared_ptr<runtime::Graph> randomGraph(int64_t numNodes, int64_t numEdges,
                                            int64_t numEtypes,
                                            int64_t numNtypes, uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(seed);
  auto opts = torch::TensorOptions().dtype(torch::kInt64);
  // The last node stays isolated: types and edges use nodes [0, N-1).
  int64_t live = numNodes - 1;
  torch::Tensor ntype = torch::arange(numNodes, opts) % numNtypes;
  // Each relation joins one src node type to one dst node type; the last
  // relation gets no edges.
  torch::Tensor relSrcType = torch::randint(numNtypes, {numEtypes}, gen, opts);
  torch::Tensor relDstType = torch::randint(numNtypes, {numEtypes}, gen, opts);
  torch::Tensor etype =
      torch::randint(std::max<int64_t>(numEtypes - 1, 1), {numEdges}, gen,
                     opts);
  // A node of type t is t + k * numNtypes; pick k so the node is live.
  int64_t perType = std::max<int64_t>(live / numNtypes, 1);
  torch::Tensor src = relSrcType.index_select(0, etype) +
                      torch::randint(perType, {numEdges}, gen, opts) * numNtypes;
  torch::Tensor dst = relDstType.index_select(0, etype) +
                      torch::randint(perType, {numEdges}, gen, opts) * numNtypes;
  // Multi-edges: repeat the first few edges.
  int64_t dup = std::min<int64_t>(4, numEdges / 2);
  if (dup > 0) {
    src.slice(0, numEdges - dup) = src.slice(0, 0, dup);
    dst.slice(0, numEdges - dup) = dst.slice(0, 0, dup);
    etype.slice(0, numEdges - dup) = etype.slice(0, 0, dup);
  }
  return std::make_shared<runtime::Graph>(src, dst, etype, ntype, numNodes,
                                          numEtypes, numNtypes);
}

Arguments randomArguments(const ir::Module &module,
                          const runtime::Graph &graph, uint64_t seed,
                          bool requiresGrad,
                          const std::map<std::string, double> &hypers) {
  runtime::InterpretOptions options;
  options.hypers = hypers;
  auto shapes = runtime::valueShapes(module, graph, options);
  auto gen = at::detail::createCPUGenerator(seed);
  Arguments args;
  for (const ir::ValueDecl &decl : module.values) {
    if (decl.kind != ir::ValueKind::Input && decl.kind != ir::ValueKind::Param)
      continue;
    torch::Tensor t =
        torch::randn(shapes.at(decl.name), gen,
                     torch::TensorOptions().dtype(torch::kFloat64)) *
        0.5;
    if (requiresGrad && !decl.constant)
      t.requires_grad_(true);
    (decl.kind == ir::ValueKind::Input ? args.inputs
                                       : args.params)[decl.name] = t;
  }
  return args;
}

ir::Module parseVerified(const std::string &text, const std::string &file) {
  ir::DiagnosticEngine diags;
  diags.addSource(file, text);
  std::optional<ir::Module> module = ir::parseModule(text, file, diags);
  if (module)
    ir::verifyModule(*module, diags);
  if (!module || diags.hasErrors()) {
    std::ostringstream os;
    diags.print(os);
    ADD_FAILURE() << file << " does not parse and verify:\n" << os.str();
    return ir::Module{};
  }
  return std::move(*module);
}

ir::Module loadBundledModel(const std::string &model) {
  std::string path = std::string(HECTOR_SOURCE_DIR) + "/generated/" + model +
                     "/" + model + ".inter.ir";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in)
    ADD_FAILURE() << "cannot read " << path;
  return parseVerified(text.str(), path);
}

std::string summedMessagesModule(const std::string &scalar,
                                 const std::string &target) {
  return R"(module @summed {
  hyper d : int = 8
  input x : node[d]
  input w : edge[]
  param W : etype[d, d]
  graph rel_in_degree : edge[]
  temp m : edge[d]
  output h : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      m[e] = linear(x[e.src], W[e.etype])
      h[)" +
         target + R"(] += div(m[e], )" + scalar + R"([e])
    }
  }
}
)";
}

double maxRelativeError(const runtime::TensorMap &a,
                        const runtime::TensorMap &b) {
  double worst = 0;
  EXPECT_EQ(a.size(), b.size());
  for (const auto &[name, ta] : a) {
    auto it = b.find(name);
    if (it == b.end()) {
      ADD_FAILURE() << "output '" << name << "' missing";
      continue;
    }
    const torch::Tensor &tb = it->second;
    EXPECT_EQ(ta.sizes(), tb.sizes()) << name;
    if (ta.sizes() != tb.sizes())
      continue;
    if (tb.numel() == 0)
      continue;
    // A NaN would compare false with everything below and vanish from
    // the maximum: a non-finite output is an error of its own.
    if (!ta.isfinite().all().item<bool>() ||
        !tb.isfinite().all().item<bool>()) {
      ADD_FAILURE() << "output '" << name << "' is not finite";
      worst = std::numeric_limits<double>::infinity();
      continue;
    }
    double scale = std::max(tb.abs().max().item<double>(), 1e-30);
    worst = std::max(worst, (ta - tb).abs().max().item<double>() / scale);
  }
  return worst;
}

} // namespace hector::passtest
