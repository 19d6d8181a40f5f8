// Checks every invariant of the inter-op IR listed in docs/ir.md: declared
// names, index paths legal for the enclosing loops, operand and result
// shapes, single assignment, reads after writes (and after the reducing
// loop closes). A pass may assume verified input and must produce verified
// output; the pipeline runs this after every pass.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/InterIR.h"

namespace hector::ir {

/// Returns true when `module` is valid; otherwise reports every violation
/// found (with the statement's location when it has one) and returns false.
bool verifyModule(const Module &module, DiagnosticEngine &diags);

/// The result shape of `stmt`'s operation given its operands' shapes, or
/// nullopt with `error` set when the operands do not fit the op.
std::optional<Shape> inferResultShape(const Module &module, const Stmt &stmt,
                                      std::string *error);

} // namespace hector::ir
