// The inter-op pass pipeline, as one function that reads top to bottom
// (after Halide's Lower.cpp): each stage, then the verifier, then the
// optional dump. Only hectorc and the pass test driver call it.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/InterIR.h"

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
};

/// Runs the inter-op passes in order on `module`, verifying after each and
/// printing the IR to `dump` after the passes selected by `options`.
/// Returns false (with diagnostics reported) when the verifier fails.
bool runInterOpPipeline(ir::Module &module, const PipelineOptions &options,
                        ir::DiagnosticEngine &diags, std::ostream &dump);

/// Names of the passes runInterOpPipeline runs, in order; used to validate
/// `--print-after=PASS`.
std::vector<std::string> interOpPassNames();

} // namespace hector::passes
