// The frontend's entry points: .hgnn text -> verified inter-op IR module
// (parse with frontend/Hgnn.g4, check with Sema, lower with IRBuilder, then
// ir::verifyModule). Every user error is reported into the engine with
// file:line:col; the result is then nullopt.
#pragma once

#include "frontend/Sema.h"
#include "ir/Diagnostics.h"
#include "ir/InterIR.h"

#include <optional>
#include <string>

namespace hector::frontend {

/// Reads, checks and lowers the .hgnn file at `path`; imports are read
/// from the file system relative to the importing file.
std::optional<ir::Module> compileHgnn(const std::string &path,
                                      ir::DiagnosticEngine &diags);

/// The same for in-memory text named `file` in diagnostics; imports are
/// read through `loader` (a null loader makes every import an error).
std::optional<ir::Module> compileHgnnSource(const std::string &text,
                                            const std::string &file,
                                            ir::DiagnosticEngine &diags,
                                            const SourceLoader &loader);

/// Reads a whole file; nullopt when it cannot be opened.
std::optional<std::string> readFile(const std::string &path);

} // namespace hector::frontend
