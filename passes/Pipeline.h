// The pass pipeline, as functions that read top to bottom (after Halide's
// Lower.cpp): each inter-op stage, then the verifier, then the optional
// dump; then the lowering to the intra-op IR and the preprocessing plan.
// Only hectorc and the pass test driver call it.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/InterIR.h"
#include "ir/IntraIR.h"
#include "passes/GraphStats.h"

#include <map>

#include <optional>
#include <set>
#include <ostream>
#include <string>
#include <vector>

namespace hector::passes {

struct PipelineOptions {
  /// Print the IR after each pass named here (see interOpPassNames()).
  std::vector<std::string> printAfter;
  /// Print the IR after every pass.
  bool printAfterAll = false;
  /// Run the verifier after every pass (always on in tests and hectorc).
  bool verifyEach = true;
  /// Linear operator reordering (-fno-reorder switches it off).
  bool reorder = true;
  /// Compact materialization (-fno-compact).
  bool compact = true;
  /// Loop fusion, traversal fusion, GEMM epilogue fusion and broadcast
  /// forwarding (-fno-fuse).
  bool fuse = true;
  /// The graph sizes the cost-driven passes optimise for.
  GraphStats graph = GraphStats::amShape();
};

/// Which inter-op stages to run. Autodiff sits between the two phases
/// (see compileLayer): the algebraic passes (verify, infer-shapes,
/// reorder-linear, compact-materialization) choose what is computed, and
/// the backward program is derived from their result, so that it reads
/// what the optimised forward kernels store; the loop passes
/// (forward-broadcasts, canonicalize-loops, fuse-loops,
/// uncompact-segment-sums, reassociate-bias) rearrange loops and the
/// values they store, not what the outputs are.
enum class PipelinePhase { Algebraic, Loops, All };

/// Runs the inter-op passes of `phase` in order on `module`, verifying
/// after each and printing the IR to `dump` after the passes selected by
/// `options`. `keep`: values the passes must not remove (the forward's
/// values that its backward reads). Returns false (with diagnostics
/// reported) when a pass or the verifier fails.
bool runInterOpPipeline(ir::Module &module, const PipelineOptions &options,
                        ir::DiagnosticEngine &diags, std::ostream &dump,
                        PipelinePhase phase = PipelinePhase::All,
                        const std::set<std::string> &keep = {});

/// Names of the passes runInterOpPipeline can run, in order (switched-off
/// ones included); used to validate `--print-after=PASS`.
std::vector<std::string> interOpPassNames();

/// Lowers a module that went through runInterOpPipeline to the intra-op
/// IR (passes/LowerToIntraOp.h) with the fusion setting of `options`.
/// Returns nullopt, with diagnostics, on failure.
std::optional<intra::Program> lowerToIntra(const ir::Module &module,
                                           const PipelineOptions &options,
                                           ir::DiagnosticEngine &diags);

/// A layer through the whole compiler: forward and backward programs,
/// optimised and lowered, and how they connect.
struct CompiledLayer {
  ir::Module forward;  ///< the forward module after the inter-op passes
  intra::Program forwardProgram;
  /// The backward module as autodiff built it from the forward after the
  /// algebraic passes (before its own passes); `<model>_backward`.
  ir::Module backwardSource;
  ir::Module backward; ///< backwardSource after the inter-op passes
  intra::Program backwardProgram;
  /// The forward compiled with nothing kept for a backward (every loop
  /// pass free to drop or rewrite a value the backward would read), when
  /// that changes its inter-op IR; `<model>_inference`. The binding runs
  /// it when no argument needs a gradient (docs/codegen.md). nullopt: the
  /// forward serves inference too.
  std::optional<ir::Module> inference;
  std::optional<intra::Program> inferenceProgram;
  /// Forward values the backward reads (the forward stores them).
  std::vector<std::string> saved;
  /// Forward input/param -> its gradient output in the backward program.
  std::map<std::string, std::string> gradients;
};

/// The compiler's driver, used by hectorc: the algebraic passes on a copy
/// of `source`, autodiff, the loop passes, then both programs through the
/// lowering (the forward keeping `saved` in buffers), and the inference
/// program (the loop passes and the lowering with nothing kept) when it
/// differs. Dumps go to `dump` (forward passes first, then the backward
/// program's, then the inference program's). Returns nullopt,
/// with diagnostics, on failure.
std::optional<CompiledLayer> compileLayer(const ir::Module &source,
                                          const PipelineOptions &options,
                                          ir::DiagnosticEngine &diags,
                                          std::ostream &dump);

} // namespace hector::passes
