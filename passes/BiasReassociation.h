// Bias reassociation: a bias added after a sum moves next to the linear
// term of the sum, whose GEMM then adds it in its epilogue.
//
// Purpose: a layer's output is often `sum + linear(x, W) + bias`, which
// the frontend writes left to right,
//     u[n] = add(a[n], r[n])     // a: the messages' sum, r = linear(x[n], W)
//     h[n] = add(u[n], bias)
// so the bias meets the sum of both terms and no GEMM can take it: the
// lowering fuses `add(row, bias)` into a GEMM only right after the GEMM's
// own row (LowerToIntraOp's biasInEpilogue). Reassociated,
//     u[n] = add(r[n], bias)     // the GEMM's epilogue
//     h[n] = add(a[n], u[n])
// the GEMM writes r + bias, and the last add is the sum of two partials
// that the lowering can have the GEMMs write and add into h's buffer
// (accumulatePartialsIntoSums): RGCN's forward then runs without a
// traversal (docs/perf-notes.md section 57).
//
// What reassociates: in one loop body, `u[i] = add(a[i], r[i])` (either
// order) followed by `o[i] = add(u[i], b)` (either order), all at the
// loop's own row, where b is a shared (global) param of u's row shape, u
// a temp not in `keep` that only the second add reads, and r a temp not
// in `keep` that only the first add reads, written earlier in the same
// body by a linear (linear or linear_t with a two-dimensional weight: the
// GEMM epilogue takes no bias with heads) at the loop's own row.
//
// Why it is legal: a, r and b are complete at the first add, and (a + r)
// + b = a + (r + b) up to rounding (the summands' order changes; results
// differ by a few ulps).
//
// Preconditions: the module verifies. Postconditions: it verifies and
// computes the same outputs up to rounding.
#pragma once

#include "ir/InterIR.h"

#include <set>
#include <string>

namespace hector::passes {

/// Returns whether the module changed.
bool reassociateBias(ir::Module &module,
                     const std::set<std::string> &keep = {});

} // namespace hector::passes
