// Shape and index-space inference (issue 5, pass 1).
//
// Purpose: recompute, from the program itself, the per-row shape and the
// index space of every computed (temp or output) value, so that passes that
// create values need not work out their shapes: a pass may declare a new
// temp with any space and an empty shape, and this pass fills both in.
//
// A value's space is the space its defining statement's target index path
// ends in (`z[e]` in an edge loop: edge; `agg[n]` in a node loop: node;
// `s` with no index: global); its shape is ir::inferResultShape of the
// defining statement, computed in program order so that every operand's
// shape is already known.
//
// Preconditions: every temp/output is written by exactly one statement,
// operands are declared, index paths are legal for their loops (the module
// verifies except, possibly, for temp shapes and spaces).
// Postconditions: every temp declaration carries its inferred space and
// shape (a written but undeclared target is declared as a temp). An output
// whose declared space or shape disagrees is left unchanged and reported
// as a located error (the statement's location, the declaration's in a
// note); so is a statement whose operands do not fit its op.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/InterIR.h"

namespace hector::passes {

/// Returns false when an error was reported.
bool inferShapes(ir::Module &module, ir::DiagnosticEngine &diags);

} // namespace hector::passes
