// GemmEmitter: one GEMM instance (ir/IntraIR.h) as a call of the segment-MM
// GEMM template (templates/gemm/SegmentGemm.h): the host statements that
// fill a SegmentGemmArgs from the graph arrays `g`, the buffers `b` and the
// size locals, and run it on the CPU or launch it on the GPU.
//
// How rows become segments (the template's segmentPtr / rowType / rowIds):
//   edges by etype      rowIds = g.etype_sorted_eid, segmentPtr = g.etype_ptr
//   pairs by etype      segmentPtr = g.pair_ptr (pairs are numbered by etype)
//   nodes by ntype      rowIds = g.ntype_sorted_nodes, segmentPtr = g.ntype_ptr
//   edges by src/dst ntype, pairs by src ntype
//                       rowType = g.edge_src_ntype / g.edge_dst_ntype /
//                                 g.pair_src_ntype
//   types, one per row  segmentPtr = g.type_iota
//   summed by (dst, etype) segment (summedBySegment): rows are the chunks,
//                       segmentPtr = g.sum_chunk_etype_ptr, sumPtr /
//                       sumRows = g.sum_chunk_ptr / g.sum_chunk_src,
//                       scatter = g.sum_chunk_dst, scaleGather =
//                       g.sum_chunk_eid
// Gather and scatter lists are the graph's arrays for the access path
// (`x[e.src]`: g.src), indexed by row id.
#pragma once

#include "codegen/ProgramLayout.h"
#include "codegen/Target.h"
#include "ir/IntraIR.h"

#include <string>

namespace hector::codegen {

/// The host statements running `gemm`. Throws EmitError for a row/segment
/// combination or an access path the template cannot express.
std::string emitGemmLaunch(const ProgramLayout &layout,
                           const intra::GemmInstance &gemm, Target target);

} // namespace hector::codegen
