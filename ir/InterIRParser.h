// Parses the textual inter-op IR that ir/InterIRPrinter prints. Hand
// written (no ANTLR) so that the runtime can read printed IR on machines
// without the compiler. Syntax errors are reported through the
// DiagnosticEngine with file:line:col; the result is then not usable.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/InterIR.h"

#include <optional>
#include <string>

namespace hector::ir {

/// Parses `text` (named `file` in diagnostics). Returns nullopt when any
/// error was reported. Does not run the verifier.
std::optional<Module> parseModule(const std::string &text,
                                  const std::string &file,
                                  DiagnosticEngine &diags);

} // namespace hector::ir
