// The pass pipeline, as functions that read top to bottom (after Halide's
// Lower.cpp): each inter-op stage, then the verifier, then the optional
// dump; then the lowering to the intra-op IR and the preprocessing plan.
// Only hectorc and the pass test driver call it.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/InterIR.h"
#include "ir/IntraIR.h"
#include "passes/GraphStats.h"

#include <optional>
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
  /// Loop fusion, traversal fusion and GEMM epilogue fusion (-fno-fuse).
  bool fuse = true;
  /// The graph sizes the cost-driven passes optimise for.
  GraphStats graph = GraphStats::amShape();
};

/// Runs the inter-op passes in order on `module`, verifying after each and
/// printing the IR to `dump` after the passes selected by `options`.
/// Returns false (with diagnostics reported) when a pass or the verifier
/// fails.
bool runInterOpPipeline(ir::Module &module, const PipelineOptions &options,
                        ir::DiagnosticEngine &diags, std::ostream &dump);

/// Names of the passes runInterOpPipeline can run, in order (switched-off
/// ones included); used to validate `--print-after=PASS`.
std::vector<std::string> interOpPassNames();

/// Lowers a module that went through runInterOpPipeline to the intra-op
/// IR (passes/LowerToIntraOp.h) with the fusion setting of `options`.
/// Returns nullopt, with diagnostics, on failure.
std::optional<intra::Program> lowerToIntra(const ir::Module &module,
                                           const PipelineOptions &options,
                                           ir::DiagnosticEngine &diags);

} // namespace hector::passes
