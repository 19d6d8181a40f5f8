// Preprocessing-plan collection (issue 5, pass 7; hector.txt 3.6): the
// graph arrays the chosen instances need, as JSON that the runtime's
// preprocessing executor builds once per graph (and that hectorc writes to
// DIR/plan.json).
//
// Purpose: scan every instance of a lowered program and name the derived
// graph arrays its access schemes read:
//   etype_sorted_coo (+ etype_ptr)   segment GEMMs over edges by relation
//   <key>_sorted_coo (+ <key>_ptr)   segment GEMMs over edges by another
//                                    type path (src_ntype, dst_ntype)
//   csr_by_dst                       node-parallel traversals of n.incoming
//   csc_by_src                       node-parallel traversals of n.outgoing
//                                    (the transpose of csr_by_dst)
//   ntype_sorted_nodes (+ ntype_ptr) segment GEMMs over nodes by node type
//   unique_pairs                     compact rows: edge_to_pair, pair_src,
//                                    pair_etype, pair_etype_ptr
//   sum_chunks                       GEMMs summed by (dst, etype) segment:
//                                    the segments' chunks (sum_chunk_*)
//   in_degree, out_degree, rel_in_degree   graph values read by instances
// Each entry lists the arrays it holds and the instances that need it
// ("needed_by", in execution order). Absent entries are not needed. The edge
// list, edge types and node types the user passes are inputs, never listed.
//
// Preconditions: `program` passes intra::verifyProgram.
// Postconditions: the JSON is a pure function of the program: objects
// keep their keys sorted (nlohmann::json), lists are in program order, so
// the same program dumps to the same bytes.
#pragma once

#include "ir/IntraIR.h"

#include <nlohmann/json.hpp>

namespace hector::passes {

nlohmann::json collectPreprocessingPlan(const intra::Program &program);

} // namespace hector::passes
