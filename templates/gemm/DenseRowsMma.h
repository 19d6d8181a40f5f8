// DenseRowsMma.h: the GEMM template's kernel for dense rows, Y = X W
// (+ bias), where row i reads X row i and writes Y row i with the weight of
// its slice: RGCN's root GEMM (`x root + bias`) and RGAT's self-loop GEMM
// over every node, and HGT's kqv and output projections, one weight and
// bias a node type (segments of a graph whose nodes are numbered by type),
// the latter reading gelu of its input and mixing its rows with a gated
// skip. Float,
// sm_80 and newer; products exact to fp32 (three TF32 products a term) or,
// with SegmentGemmArgs::tf32, one TF32 product, as the tiled kernel makes
// them. Internal to templates/gemm: launchSegmentGemm (SegmentGemm.cu)
// takes it for the calls it fits, before the tiled tensor-core kernel
// (SegmentGemmMma.h).
//
// Why a kernel of its own: the tiled kernel serves gathers, scatters,
// slices, summed rows and epilogues, and its blocks wait for one another
// at every 64-row tile (the tile's lookups, copies and slices). On dense
// rows it moved am's 1.89M rows (K = N = 64, TF32, bias) at 71% of the
// copy bandwidth, against cuBLAS's 86% without the bias
// (docs/perf-notes.md sections 71 and 86).
#pragma once

#include "templates/gemm/SegmentGemm.h"

#include <cuda_runtime.h>

namespace hector::templates {

/// Whether the dense-rows kernel computes `a`: a call linearMmaFits
/// accepts with one head, K = 64, N a multiple of 64, rows read and
/// written in place (no rowIds, gather, scatter or summed rows; an input
/// op is fine), one weight slice or at most 32 given as segments of
/// consecutive rows (segmentPtr, not rowType; a bias shared or one a
/// slice), a plain store (not accumulate, atomic or an epilogue op) to Y
/// or to output parts whole windows wide, no row dot, and a gated mix only
/// beside a bias; and the environment
/// variable HECTOR_GEMM_DENSE is not "0" (read once: it is there to
/// compare the kernels on one build).
bool denseRowsMmaFits(const SegmentGemmArgs &a);

/// Launches the dense-rows kernel for `a` on `stream` (denseRowsMmaFits
/// must hold): a resident wave of blocks, one slice each and one window of
/// 64 output columns each (TF32 calls of two or three windows: all of
/// them, where the device grants the shared memory), whose warps take the
/// slice's 16-row tiles in turn and keep their next tiles' rows in flight
/// in a ring of their own.
cudaError_t launchDenseRowsMma(const SegmentGemmArgs &a, cudaStream_t stream);

/// Turns the kernel off (false) or back on for this process, whatever
/// HECTOR_GEMM_DENSE says; returns the previous setting. For tests that
/// compare it with the tiled kernel.
bool setDenseRowsForTesting(bool enabled);

/// Lets one block multiply all windows of a TF32 call of two or three
/// (true, the default) or gives each window blocks of its own (false) for
/// this process, whatever HECTOR_GEMM_DENSE_WINDOWS says; returns the
/// previous setting. For tests that compare the two.
bool setDenseWindowsTogetherForTesting(bool enabled);

} // namespace hector::templates
