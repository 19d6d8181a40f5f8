// Prints inter-op IR in its textual form (docs/ir.md). The output is
// deterministic and is the golden-test format; ir/InterIRParser reads it
// back to an equal module.
#pragma once

#include "ir/InterIR.h"

#include <string>

namespace hector::ir {

std::string printModule(const Module &module);
std::string printStmt(const Stmt &stmt);
std::string printOperand(const Operand &operand);

} // namespace hector::ir
