#include "codegen/GemmEmitter.h"

#include "codegen/CodeWriter.h"
#include "codegen/Naming.h"

#include <fmt/format.h>

namespace hector::codegen {
namespace {

using intra::GemmInstance;
using intra::RowDomain;

std::string where(const GemmInstance &g) { return "@" + g.name; }

/// The graph array that maps a row of `rows` one step along `path`
/// (nullptr for the row itself).
std::string indexArray(const GemmInstance &g, RowDomain rows,
                       const std::vector<ir::Attr> &path) {
  if (path.empty())
    return "nullptr";
  if (path.size() == 1) {
    const ir::Attr a = path[0];
    if (rows == RowDomain::Edges) {
      if (a == ir::Attr::Src) return "g.src";
      if (a == ir::Attr::Dst) return "g.dst";
      if (a == ir::Attr::Pair) return "g.edge_pair";
      if (a == ir::Attr::EType) return "g.etype";
    } else if (rows == RowDomain::Pairs) {
      if (a == ir::Attr::Src) return "g.pair_src";
      if (a == ir::Attr::EType) return "g.pair_etype";
    } else if (rows == RowDomain::Nodes && a == ir::Attr::NType) {
      return "g.ntype";
    }
  }
  std::string text = intra::rowVarName(rows);
  for (ir::Attr a : path)
    text += std::string(".") + ir::attrName(a);
  throw EmitError{where(g) + ": the GEMM template has no index list for '" +
                  text + "'"};
}

/// A value's data pointer (its root buffer, or a graph array).
std::string dataPtr(const ProgramLayout &layout, const GemmInstance &g,
                    const intra::RowAccess &a) {
  const std::string root = layout.root(a.value);
  switch (layout.home(a.value)) {
  case Home::GraphArray:
    return "gv." + root;
  case Home::Buffer:
    return "b." + root;
  case Home::Register:
    break;
  }
  throw EmitError{where(g) + ": '" + a.value +
                  "' is a traversal register, not a buffer"};
}

void printSegments(CodeWriter &w, const GemmInstance &g) {
  if (!g.segmentBy)
    return; // one slice: the weight is shared
  if (g.summedBySegment || g.perChunk) { // chunks of (etype, dst) segments
    w.line("a.segmentPtr = g.sum_chunk_etype_ptr;");
    w.line("a.numSlices = g.num_etypes;");
    return;
  }
  const std::vector<ir::Attr> &key = *g.segmentBy;
  using A = ir::Attr;
  auto is = [&](std::initializer_list<A> k) {
    return key == std::vector<A>(k);
  };
  if (g.rows == RowDomain::Edges && is({A::EType})) {
    w.line("a.rowIds = g.etype_sorted_eid;");
    w.line("a.segmentPtr = g.etype_ptr;");
    w.line("a.numSlices = g.num_etypes;");
  } else if (g.rows == RowDomain::Pairs && is({A::EType})) {
    w.line("a.segmentPtr = g.pair_ptr;");
    w.line("a.numSlices = g.num_etypes;");
  } else if (g.rows == RowDomain::Nodes && is({A::NType})) {
    // Nodes numbered by type are their own type order: without row ids
    // the call reads and writes rows in place, which the dense-rows kernel
    // takes (templates/gemm/DenseRowsMma.h).
    w.line("a.rowIds = g.ntype_sorted_nodes_is_identity ? nullptr : "
           "g.ntype_sorted_nodes;");
    w.line("a.segmentPtr = g.ntype_ptr;");
    w.line("a.numSlices = g.num_ntypes;");
  } else if (g.rows == RowDomain::Edges && is({A::Src, A::NType})) {
    w.line("a.rowType = g.edge_src_ntype;");
    w.line("a.numSlices = g.num_ntypes;");
  } else if (g.rows == RowDomain::Edges && is({A::Dst, A::NType})) {
    w.line("a.rowType = g.edge_dst_ntype;");
    w.line("a.numSlices = g.num_ntypes;");
  } else if (g.rows == RowDomain::Pairs && is({A::Src, A::NType})) {
    w.line("a.rowType = g.pair_src_ntype;");
    w.line("a.numSlices = g.num_ntypes;");
  } else if (g.rows == RowDomain::EdgeTypes && key.empty()) {
    w.line("a.segmentPtr = g.type_iota;");
    w.line("a.numSlices = g.num_etypes;");
  } else if (g.rows == RowDomain::NodeTypes && key.empty()) {
    w.line("a.segmentPtr = g.type_iota;");
    w.line("a.numSlices = g.num_ntypes;");
  } else {
    std::string text;
    for (A a : key)
      text += std::string(text.empty() ? "" : ".") + ir::attrName(a);
    throw EmitError{where(g) + ": rows " + intra::rowDomainName(g.rows) +
                    " segmented by '" + text +
                    "' have no segment arrays in the graph"};
  }
}

/// A linear GEMM whose rows are grouped by relation but gather their input
/// by another key (pairs by source, chunks by destination) also names the
/// rows in the order of that key, with each one's input row and relation
/// in that order: a kernel that needs no relation's rows together (the
/// attention scores' 8-lane dot kernel) then reads a row several relations
/// share from DRAM once, and its indices in sequence (SegmentGemmArgs::
/// gatherOrderRowIds; docs/perf-notes.md section 97).
void printGatherOrder(CodeWriter &w, const GemmInstance &g) {
  const auto arrays = GemmInstance::gatherOrderArrays(g.gatherOrder());
  if (!arrays)
    return;
  w.line("a.gatherOrderRowIds = g.{};", arrays->rowIds);
  w.line("a.gatherOrderGather = g.{};", arrays->gather);
  w.line("a.gatherOrderRowType = g.{};", arrays->rowType);
}

/// The template sees rows of H*K input floats. An input whose row holds
/// more than one [K] vector without per-head weights (a shared W applied
/// to every head) has its heads folded into the rows, which only works
/// without gather, scatter or segments.
ir::Dim foldedRows(const ProgramLayout &layout, const GemmInstance &g) {
  const ir::Dim rowSize = shapeSize(layout.layout(g.input.value).decl.shape);
  const ir::Dim perRow = g.perHead ? g.heads * g.k : g.k;
  if (rowSize == perRow)
    return ir::Dim::constant(1);
  std::optional<ir::Dim> fold = rowSize.divide(perRow);
  if (!fold || g.mode != GemmInstance::Mode::Linear || g.segmentBy ||
      !g.input.isIdentity() || !g.output.isIdentity() || g.epilogue || g.rowDot)
    throw EmitError{where(g) + ": input rows of " + rowSize.str() +
                    " elements for K = " + g.k.str() +
                    " need a folded GEMM the template cannot gather"};
  return *fold;
}

} // namespace

std::string emitGemmLaunch(const ProgramLayout &layout,
                           const intra::GemmInstance &g, Target target) {
  CodeWriter w;
  const bool outer = g.mode == GemmInstance::Mode::Outer;
  w.line("// @{}: {} GEMM, rows {}", g.name, outer ? "outer" : "linear",
         intra::rowDomainName(g.rows));
  w.open("");
  w.line("hector::templates::SegmentGemmArgsT<scalar_t> a;");
  const ir::Dim fold = foldedRows(layout, g);
  if (outer)
    w.line("a.mode = hector::templates::SegmentGemmArgs::Mode::Outer;");
  w.line("a.M = {}{};",
         g.summedBySegment || g.perChunk ? "g.num_sum_chunks"
                                         : rowCountExpr(g.rows),
         fold == ir::Dim::constant(1) ? "" : " * " + dimExpr(fold));
  w.line("a.K = {};", dimExpr(g.k));
  w.line("a.N = {};", dimExpr(g.n));
  w.line("a.H = {};", g.perHead || g.headsInColumns ? dimExpr(g.heads) : "1");
  if (g.headsInColumns) {
    // The heads share the input row and take the weight's columns.
    w.line("a.xSharedByHeads = true;");
    w.line("a.wHeadsInColumns = true;");
  }
  w.line("a.X = {};", dataPtr(layout, g, g.input));
  if (g.inputOp) {
    // The input's fused op, applied as the template reads each element.
    if (*g.inputOp != ir::OpKind::Gelu)
      throw EmitError{where(g) + ": an input op other than gelu"};
    w.line("a.inputOp = hector::templates::InputOp::Gelu;");
  }
  if (g.summedBySegment) {
    // Each row sums its chunk's sources (the verifier checked x[e.src]).
    w.line("a.sumPtr = g.sum_chunk_ptr;");
    w.line("a.sumRows = g.sum_chunk_src;");
    if (g.sumWeights) {
      w.line("a.sumWeights = {};", dataPtr(layout, g, *g.sumWeights));
      // Weights stored by edge id: entry j reads edge sum_chunk_edge[j]'s.
      // In the entries' order (RowScheme::EntryRows) it reads its own.
      if (layout.layout(layout.root(g.sumWeights->value)).rows !=
          intra::RowScheme::EntryRows)
        w.line("a.sumWeightIds = g.sum_chunk_edge;");
    }
  } else if (g.perChunk) {
    // Each chunk's destination row (the verifier checked x[e.dst]).
    w.line("a.gather = g.sum_chunk_dst;");
  } else if (!g.input.global) {
    w.line("a.gather = {};", indexArray(g, g.rows, g.input.path));
  }
  printSegments(w, g);
  printGatherOrder(w, g);
  w.line("a.transposeW = {};", g.transposeWeight ? "true" : "false");
  if (outer) {
    w.line("a.B = {};", dataPtr(layout, g, g.weight));
    if (!g.weight.global)
      w.line("a.gatherB = {};", indexArray(g, g.rows, g.weight.path));
    w.line("a.dW = {};", dataPtr(layout, g, g.output));
    // The host code zero-filled dW (ProgramLayout::zeroFilled).
    w.line("a.accumulate = true;");
    w.line("a.atomic = true;");
    w.line("a.deterministic = hp.hector_deterministic;");
  } else {
    // The weight is sliced by the segment key (or shared).
    w.line("a.W = {};", dataPtr(layout, g, g.weight));
    if (g.outputParts.empty()) {
      w.line("a.Y = {};", dataPtr(layout, g, g.output));
    } else {
      // Fused slices: each part of the output row to its own buffer.
      w.line("a.yParts = {};", g.outputParts.size());
      for (size_t p = 0; p < g.outputParts.size(); ++p)
        w.line("a.yPart[{}] = {};", p, dataPtr(layout, g, g.outputParts[p]));
    }
    if (g.bias) {
      w.line("a.bias = {};", dataPtr(layout, g, *g.bias));
      w.line("a.biasPerSlice = {};", g.bias->global ? "false" : "true");
    }
    if (g.mix) {
      // A gated skip: the finished row mixed with mixRows at the output's
      // row by sigmoid(mixGate[slice]) (the verifier checked both).
      w.line("a.mixRows = {};", dataPtr(layout, g, g.mix->rows));
      w.line("a.mixGate = {};", dataPtr(layout, g, g.mix->gate));
    }
    if (g.rowDot) {
      // The finished row times a shared weight, to a second output.
      w.line("a.rowDotW = {};", dataPtr(layout, g, g.rowDot->weight));
      w.line("a.rowDotY = {};", dataPtr(layout, g, g.rowDot->output));
      w.line("a.rowDotN = {};", dimExpr(g.rowDot->m));
    }
    if (g.summedBySegment)
      w.line("a.scatter = g.sum_chunk_dst;");
    else if (!g.output.global)
      w.line("a.scatter = {};", indexArray(g, g.rows, g.output.path));
    if (g.accumulate != ir::Reduce::None) {
      if (g.accumulate != ir::Reduce::Sum)
        throw EmitError{where(g) + ": a GEMM can only accumulate with +="};
      w.line("a.accumulate = true;");
      w.line("a.atomic = {};", g.atomic ? "true" : "false");
      if (g.atomic)
        w.line("a.deterministic = hp.hector_deterministic;");
      // The chunks are sorted by (etype, dst) (Graph::setSumChunks).
      if (g.summedBySegment)
        w.line("a.scatterSortedInSegments = true;");
    }
    if (g.epilogue) {
      w.line("a.epilogue = hector::templates::EpilogueOp::{};",
             g.epilogue->op == ir::OpKind::Div ? "Div" : "Mul");
      if (g.epilogue->scalar.global)
        throw EmitError{where(g) + ": a global epilogue scalar"};
      if (g.summedBySegment) {
        // The scalar is rel_in_degree (the verifier checked it), the same
        // on the whole segment: its copy once a chunk is read with one
        // load a row, not through the chunk's first edge (sum_chunk_eid),
        // which cost 2% to 4% of the summed GEMM (docs/perf-notes.md
        // section 89).
        w.line("a.scale = gv.sum_chunk_rel_in_degree;");
      } else {
        w.line("a.scale = {};", dataPtr(layout, g, g.epilogue->scalar));
        w.line("a.scaleGather = {};",
               indexArray(g, g.rows, g.epilogue->scalar.path));
      }
      w.line("a.scalePerHead = {};", g.epilogue->perHead ? "true" : "false");
    }
  }
  if (g.initRow) {
    // The output starts as the shared row in every row (no zero-fill).
    const std::string root = layout.root(g.output.value);
    const std::string args = fmt::format(
        "b.{}, {}, {}, {}", root, rowCountExpr(layout.layout(root).rows),
        dataPtr(layout, g, *g.initRow), sizeLocal(root));
    if (target == Target::Cuda)
      w.line("hector::trav::fillRows(stream, {});", args);
    else
      w.line("hector::trav::fillRowsCpu({});", args);
  }
  // torch's allow_tf32 reaches the weight-gradient (outer) GEMMs as it
  // does the linear ones: only the CUDA tensor-core kernels round to TF32.
  if (target == Target::Cuda) {
    w.line("a.tf32 = hp.hector_tf32;");
    w.line("hector::trav::check(hector::templates::launchSegmentGemm(a, "
           "stream), \"{}\");",
           layout.entry() + "_" + g.name);
  } else {
    w.line("hector::templates::segmentGemmCpu(a);");
  }
  w.close();
  return w.str();
}

} // namespace hector::codegen
