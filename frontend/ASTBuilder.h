// Parsing: .hgnn text -> AST (frontend/AST.h), through the ANTLR4 grammar
// frontend/Hgnn.g4. Syntax errors are reported into the DiagnosticEngine
// with file:line:col (ANTLR's own recovery finds several per run).
#pragma once

#include "frontend/AST.h"
#include "ir/Diagnostics.h"

#include <memory>
#include <string>

namespace hector::frontend {

/// Inputs larger than this are rejected before lexing.
constexpr size_t kMaxSourceBytes = 1 << 20;
/// Bracket nesting and expression depth limits; deeper input is rejected
/// with a diagnostic so that no recursion (ANTLR's or ours) can exhaust the
/// stack.
constexpr int kMaxNesting = 128;
constexpr int kMaxExprDepth = 256;

/// Parses `text` (named `file` in diagnostics; the caller registers the
/// source with the engine). Returns nullptr when any error was reported.
std::unique_ptr<File> parseHgnn(const std::string &text,
                                const std::string &file,
                                ir::DiagnosticEngine &diags);

/// Depth of an expression tree (a leaf is 1).
int exprDepth(const Expr &e);

} // namespace hector::frontend
