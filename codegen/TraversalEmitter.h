// TraversalEmitter: one traversal instance (ir/IntraIR.h) as a kernel of
// the traversal template (templates/traversal/Traversal.h), for the CPU or
// the GPU, and the host code that launches it.
//
// Both targets print the same row body: the instance's loop nest, with
// each statement an element loop (codegen/ElementPrinter.h), registers in
// per-thread-group scratch, and the reductions as the lowering marked them:
//   segmented      the node's thread group owns the target row: it is
//                  initialised before the edge loop, accumulated without
//                  atomics, and finished after it (max of nothing and mean
//                  of nothing are 0);
//   partial_atomic contributions are summed in a scratch accumulator while
//                  the target row stays the same (rows are split into
//                  contiguous chunks per group, edges visited by etype when
//                  the target is per etype; a sum into the edge's
//                  destination row relies on the edges' numbering by
//                  destination, runtime EdgeOrder::ByDst), then added with
//                  one atomic per element;
//   atomic         one atomic add per contribution.
// The targets differ only in how rows are split over thread groups and how
// the kernel is declared and launched.
#pragma once

#include "codegen/CodeWriter.h"
#include "codegen/ProgramLayout.h"
#include "codegen/Target.h"
#include "ir/IntraIR.h"

#include <string>

namespace hector::codegen {

/// The kernel's C++ name: "<entry>_<instance>" ("forward_trav_3").
std::string traversalKernelName(const ProgramLayout &layout,
                                const intra::TraversalInstance &t);

/// The kernel definition (a __global__ function, or a static function
/// running an OpenMP parallel region). Throws EmitError for a statement it
/// cannot emit (an atomic max or mean).
std::string emitTraversalKernel(const ProgramLayout &layout,
                                const intra::TraversalInstance &t,
                                Target target);

/// The host statements that run the kernel, inside the program's host
/// function (which declares `g`, `b`, `hp`, the hyper and size locals and,
/// for CUDA, `stream`).
std::string emitTraversalLaunch(const ProgramLayout &layout,
                                const intra::TraversalInstance &t,
                                Target target);

/// Prints the hyper and row-size locals every kernel and host function
/// starts with (`hp_<h>`, `sz_<value>`): int64_t, or int in the CUDA
/// traversal kernels (`int32Sizes`). `fixedHypers` (those kernels): an int
/// hyper is its declared value where the kernel's kFixedHypers is true
/// (see fixedHypersCondition), so that the row sizes, worker counts and
/// element loops built from it are compile-time constants.
void printPrologue(CodeWriter &w, const ProgramLayout &layout,
                   bool int32Sizes = false, bool fixedHypers = false);

/// The host-side test that the run's int hypers are the model's declared
/// values (`hp.in_dim == 64 && ...`), under which the CUDA host function
/// runs the kFixedHypers instantiation of its traversal kernels; "" for a
/// model without int hypers.
std::string fixedHypersCondition(const ProgramLayout &layout);

/// Prints the CUDA host function's check that every row size fits in the
/// int the CUDA traversal kernels index rows with
/// (hector::trav::requireInt32Sizes), and so does every int hyper.
void printInt32SizeCheck(CodeWriter &w, const ProgramLayout &layout);

} // namespace hector::codegen
