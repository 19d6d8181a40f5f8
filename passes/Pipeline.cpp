#include "passes/Pipeline.h"

#include "ir/InterIRPrinter.h"
#include "ir/InterIRVerifier.h"

#include <algorithm>
#include <functional>

namespace hector::passes {
namespace {

/// One stage of the pipeline: a name for --print-after and the transform.
struct Stage {
  const char *name;
  std::function<bool(ir::Module &, ir::DiagnosticEngine &)> run;
};

/// The stages in the order they run. The frontend's output is verified
/// first ("verify"), so that every later pass may assume verified input.
/// The inter-op optimisations of issue 5 (shape inference, autodiff,
/// reordering, compaction, loop canonicalisation and fusion, lowering)
/// slot in after it, each followed by the verifier.
std::vector<Stage> stages() {
  return {
      {"verify", [](ir::Module &, ir::DiagnosticEngine &) { return true; }},
  };
}

bool wantsDump(const PipelineOptions &options, const std::string &name) {
  return options.printAfterAll ||
         std::find(options.printAfter.begin(), options.printAfter.end(),
                   name) != options.printAfter.end();
}

} // namespace

bool runInterOpPipeline(ir::Module &module, const PipelineOptions &options,
                        ir::DiagnosticEngine &diags, std::ostream &dump) {
  for (const Stage &stage : stages()) {
    if (!stage.run(module, diags))
      return false;
    if (options.verifyEach && !ir::verifyModule(module, diags))
      return false;
    if (wantsDump(options, stage.name))
      dump << "// -----// IR after " << stage.name << " //----- //\n"
           << ir::printModule(module);
  }
  return true;
}

std::vector<std::string> interOpPassNames() {
  std::vector<std::string> names;
  for (const Stage &stage : stages())
    names.push_back(stage.name);
  return names;
}

} // namespace hector::passes
