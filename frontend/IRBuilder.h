// Lowering of a checked model (frontend/Sema) to the inter-operator IR:
// one ir::Stmt per primitive operation, nested expressions materialised
// into fresh temps named after the statement's target (`h_0`, `h_1`, ...),
// reductions as nested `foreach e in n.incoming` loops, and edge_softmax
// expanded into its max / exp / sum / div loops (docs/dsl.md).
#pragma once

#include "frontend/Sema.h"
#include "ir/InterIR.h"

namespace hector::frontend {

/// Builds the module. The model must have passed analyze() without errors.
ir::Module buildModule(const CheckedModel &checked);

} // namespace hector::frontend
