#include "passes/Pipeline.h"

#include "ir/InterIRPrinter.h"
#include "ir/InterIRVerifier.h"
#include "passes/Autodiff.h"
#include "passes/BiasReassociation.h"
#include "passes/BroadcastForwarding.h"
#include "passes/CompactMaterialization.h"
#include "passes/LinearReordering.h"
#include "passes/LoopCanonicalization.h"
#include "passes/LoopFusion.h"
#include "passes/LowerToIntraOp.h"
#include "passes/SegmentSumUncompaction.h"
#include "passes/ShapeInference.h"
#include "passes/WeightedSegmentSums.h"

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>

namespace hector::passes {
namespace {

/// One stage of the pipeline: a name for --print-after, whether the
/// options switch it on, and the transform (false: it reported an error).
struct Stage {
  const char *name;
  PipelinePhase phase; ///< Algebraic or Loops
  std::function<bool(const PipelineOptions &)> enabled;
  std::function<bool(ir::Module &, const PipelineOptions &,
                     const std::set<std::string> &keep,
                     ir::DiagnosticEngine &)>
      run;
};

bool always(const PipelineOptions &) { return true; }

/// The stages in the order they run. The frontend's output is verified
/// first ("verify"), so that every later pass may assume verified input.
///  - Shape inference comes next: later passes declare temps without
///    working out their shapes.
///  - Reordering runs before compaction: its `linear(x[e.src], c[e.etype])`
///    is still compactable, and compaction would hide the adjacent linears.
///  - Compaction runs before canonicalization: it moves statements out of
///    edge loops into pairs loops, which changes what canonicalizes.
///  - Broadcast forwarding runs before canonicalization: the loops it
///    empties would otherwise keep edge loops apart that canonicalization
///    and fusion can join.
///  - Canonicalization puts edge phases into dst-node nests, so that fusion
///    can merge them with the reductions around them.
///  - Segment-sum uncompaction and bias reassociation run last, on the
///    fused nests, and only with fusion: they prepare the GEMM fusions of
///    the lowering (a GEMM summed by segment, a bias in a GEMM's
///    epilogue). Uncompaction is a loop-phase pass so that the backward,
///    built from the compacted forward, keeps its per-pair GEMMs.
/// Autodiff is not a stage: it builds a second module (passes/Autodiff.h).
std::vector<Stage> stages() {
  return {
      {"verify", PipelinePhase::Algebraic, always,
       [](ir::Module &, const PipelineOptions &, const std::set<std::string> &,
          ir::DiagnosticEngine &) { return true; }},
      {"infer-shapes", PipelinePhase::Algebraic, always,
       [](ir::Module &m, const PipelineOptions &, const std::set<std::string> &,
          ir::DiagnosticEngine &d) { return inferShapes(m, d); }},
      {"reorder-linear", PipelinePhase::Algebraic,
       [](const PipelineOptions &o) { return o.reorder; },
       [](ir::Module &m, const PipelineOptions &o,
          const std::set<std::string> &, ir::DiagnosticEngine &) {
         reorderLinearOps(m, o.graph);
         return true;
       }},
      {"compact-materialization", PipelinePhase::Algebraic,
       [](const PipelineOptions &o) { return o.compact; },
       [](ir::Module &m, const PipelineOptions &, const std::set<std::string> &,
          ir::DiagnosticEngine &) {
         compactMaterialization(m);
         return true;
       }},
      {"forward-broadcasts", PipelinePhase::Loops,
       [](const PipelineOptions &o) { return o.fuse; },
       [](ir::Module &m, const PipelineOptions &,
          const std::set<std::string> &keep, ir::DiagnosticEngine &) {
         forwardBroadcasts(m, keep);
         return true;
       }},
      {"canonicalize-loops", PipelinePhase::Loops, always,
       [](ir::Module &m, const PipelineOptions &, const std::set<std::string> &,
          ir::DiagnosticEngine &) {
         canonicalizeLoops(m);
         return true;
       }},
      {"fuse-loops", PipelinePhase::Loops,
       [](const PipelineOptions &o) { return o.fuse; },
       [](ir::Module &m, const PipelineOptions &, const std::set<std::string> &,
          ir::DiagnosticEngine &) {
         fuseLoops(m);
         return true;
       }},
      {"uncompact-segment-sums", PipelinePhase::Loops,
       [](const PipelineOptions &o) { return o.fuse; },
       [](ir::Module &m, const PipelineOptions &,
          const std::set<std::string> &keep, ir::DiagnosticEngine &) {
         uncompactSegmentSums(m, keep);
         return true;
       }},
      {"uncompact-weighted-sums", PipelinePhase::Loops,
       [](const PipelineOptions &o) { return o.fuse; },
       [](ir::Module &m, const PipelineOptions &o,
          const std::set<std::string> &keep, ir::DiagnosticEngine &) {
         uncompactWeightedSums(m, o.graph, keep);
         return true;
       }},
      {"reassociate-bias", PipelinePhase::Loops,
       [](const PipelineOptions &o) { return o.fuse; },
       [](ir::Module &m, const PipelineOptions &,
          const std::set<std::string> &keep, ir::DiagnosticEngine &) {
         reassociateBias(m, keep);
         return true;
       }},
  };
}

bool wantsDump(const PipelineOptions &options, const std::string &name) {
  return options.printAfterAll ||
         std::find(options.printAfter.begin(), options.printAfter.end(),
                   name) != options.printAfter.end();
}

} // namespace

bool runInterOpPipeline(ir::Module &module, const PipelineOptions &options,
                        ir::DiagnosticEngine &diags, std::ostream &dump,
                        PipelinePhase phase,
                        const std::set<std::string> &keep) {
  for (const Stage &stage : stages()) {
    if (phase != PipelinePhase::All && stage.phase != phase)
      continue;
    if (!stage.enabled(options))
      continue;
    if (!stage.run(module, options, keep, diags))
      return false;
    if (options.verifyEach && !ir::verifyModule(module, diags))
      return false;
    if (wantsDump(options, stage.name))
      dump << "// -----// IR after " << stage.name << " (@" << module.name
           << ") //----- //\n"
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

std::optional<intra::Program> lowerToIntra(const ir::Module &module,
                                           const PipelineOptions &options,
                                           ir::DiagnosticEngine &diags) {
  LoweringOptions lowering;
  lowering.fuse = options.fuse;
  return lowerToIntraOp(module, lowering, diags);
}

/// The inference program: `algebraic` (the forward after the algebraic
/// passes) through the loop passes with nothing kept, then lowered. Left
/// out (nullopt) when its inter-op IR is the training forward's, so that a
/// layer whose backward constrains nothing gets no second forward. False
/// on failure.
static bool compileInference(const ir::Module &algebraic,
                             const ir::Module &forward,
                             const PipelineOptions &options,
                             ir::DiagnosticEngine &diags, std::ostream &dump,
                             std::optional<ir::Module> &inference,
                             std::optional<intra::Program> &program) {
  ir::Module m = algebraic.clone();
  m.name = forward.name + "_inference";
  // Its --print-after dumps are held back until the program is kept.
  std::ostringstream dumps;
  if (!runInterOpPipeline(m, options, diags, dumps, PipelinePhase::Loops))
    return false;
  ir::Module renamed = m.clone();
  renamed.name = forward.name;
  if (ir::printModule(renamed) == ir::printModule(forward))
    return true;
  dump << dumps.str();
  program = lowerToIntra(m, options, diags);
  if (!program)
    return false;
  inference = std::move(m);
  return true;
}

std::optional<CompiledLayer> compileLayer(const ir::Module &source,
                                          const PipelineOptions &options,
                                          ir::DiagnosticEngine &diags,
                                          std::ostream &dump) {
  ir::Module forward = source.clone();
  if (!runInterOpPipeline(forward, options, diags, dump,
                          PipelinePhase::Algebraic))
    return std::nullopt;
  std::optional<BackwardProgram> grad = buildBackward(forward, diags);
  if (!grad)
    return std::nullopt;
  const std::set<std::string> saved(grad->savedValues.begin(),
                                    grad->savedValues.end());
  const ir::Module algebraic = forward.clone();
  if (!runInterOpPipeline(forward, options, diags, dump, PipelinePhase::Loops,
                          saved))
    return std::nullopt;
  LoweringOptions lowering;
  lowering.fuse = options.fuse;
  lowering.saved = saved;
  std::optional<intra::Program> forwardProgram =
      lowerToIntraOp(forward, lowering, diags);
  if (!forwardProgram)
    return std::nullopt;
  ir::Module backward = grad->module.clone();
  if (!runInterOpPipeline(backward, options, diags, dump))
    return std::nullopt;
  std::optional<intra::Program> backwardProgram =
      lowerToIntra(backward, options, diags);
  if (!backwardProgram)
    return std::nullopt;
  std::optional<ir::Module> inference;
  std::optional<intra::Program> inferenceProgram;
  if (!compileInference(algebraic, forward, options, diags, dump, inference,
                        inferenceProgram))
    return std::nullopt;
  CompiledLayer layer;
  layer.inference = std::move(inference);
  layer.inferenceProgram = std::move(inferenceProgram);
  layer.forward = std::move(forward);
  layer.forwardProgram = std::move(*forwardProgram);
  layer.backwardSource = std::move(grad->module);
  layer.backward = std::move(backward);
  layer.backwardProgram = std::move(*backwardProgram);
  layer.saved = grad->savedValues;
  layer.gradients = grad->gradients;
  return layer;
}

} // namespace hector::passes
