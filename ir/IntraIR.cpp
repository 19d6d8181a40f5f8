#include "ir/IntraIR.h"

#include "ir/InterIRPrinter.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace hector::intra {

const char *rowSchemeName(RowScheme s) {
  switch (s) {
  case RowScheme::EdgeRows: return "edge_rows";
  case RowScheme::EntryRows:
    return "entry_rows";
  case RowScheme::ChunkRows:
    return "chunk_rows";
  case RowScheme::DstCsrRows:
    return "dst_csr_rows";
  case RowScheme::SrcCsrRows:
    return "src_csr_rows";
  case RowScheme::PairRows: return "pair_rows";
  case RowScheme::NodeRows: return "node_rows";
  case RowScheme::EdgeTypeRows: return "etype_rows";
  case RowScheme::NodeTypeRows: return "ntype_rows";
  case RowScheme::Global: return "global";
  }
  return "?";
}

RowScheme rowSchemeOf(ir::Space space) {
  switch (space) {
  case ir::Space::Edge: return RowScheme::EdgeRows;
  case ir::Space::Pair: return RowScheme::PairRows;
  case ir::Space::Node: return RowScheme::NodeRows;
  case ir::Space::EdgeType: return RowScheme::EdgeTypeRows;
  case ir::Space::NodeType: return RowScheme::NodeTypeRows;
  case ir::Space::Global: return RowScheme::Global;
  }
  return RowScheme::Global;
}

const char *storageName(Storage s) {
  switch (s) {
  case Storage::Buffer: return "buffer";
  case Storage::Register: return "register";
  case Storage::View: return "view";
  }
  return "?";
}

const char *rowDomainName(RowDomain d) {
  switch (d) {
  case RowDomain::Edges: return "edges";
  case RowDomain::Pairs: return "pairs";
  case RowDomain::Nodes: return "nodes";
  case RowDomain::EdgeTypes: return "etypes";
  case RowDomain::NodeTypes: return "ntypes";
  }
  return "?";
}

ir::Space spaceOf(RowDomain d) {
  switch (d) {
  case RowDomain::Edges:
    return ir::Space::Edge;
  case RowDomain::Pairs:
    return ir::Space::Pair;
  case RowDomain::Nodes:
    return ir::Space::Node;
  case RowDomain::EdgeTypes:
    return ir::Space::EdgeType;
  case RowDomain::NodeTypes:
    return ir::Space::NodeType;
  }
  return ir::Space::Global;
}

const char *rowVarName(RowDomain d) {
  switch (d) {
  case RowDomain::Edges: return "e";
  case RowDomain::Pairs: return "p";
  case RowDomain::Nodes: return "n";
  case RowDomain::EdgeTypes: return "r";
  case RowDomain::NodeTypes: return "t";
  }
  return "?";
}

std::string RowAccess::str(const std::string &var) const {
  if (global)
    return value;
  std::string s = value + "[" + var;
  for (ir::Attr a : path)
    s += std::string(".") + ir::attrName(a);
  return s + "]";
}

const char *reductionSchemeName(ReductionScheme s) {
  switch (s) {
  case ReductionScheme::None: return "none";
  case ReductionScheme::Segmented: return "segmented";
  case ReductionScheme::PartialAtomic: return "partial_atomic";
  case ReductionScheme::Atomic: return "atomic";
  }
  return "?";
}

const char *accessSchemeName(AccessScheme s) {
  switch (s) {
  case AccessScheme::None: return "none";
  case AccessScheme::Coo: return "coo";
  case AccessScheme::UniquePairs: return "unique_pairs";
  case AccessScheme::CsrByDst: return "csr_by_dst";
  case AccessScheme::CscBySrc: return "csc_by_src";
  case AccessScheme::CsrAndCsc: return "csr_by_dst+csc_by_src";
  }
  return "?";
}

const char *travMappingName(TravMapping m) {
  switch (m) {
  case TravMapping::ThreadPerEdge: return "thread_per_edge";
  case TravMapping::WarpPerEdge: return "warp_per_edge";
  case TravMapping::ThreadPerVertex: return "thread_per_vertex";
  case TravMapping::WarpPerVertex: return "warp_per_vertex";
  case TravMapping::BlockPerVertex: return "block_per_vertex";
  case TravMapping::BlockPerType: return "block_per_type";
  }
  return "?";
}

const std::string &instanceName(const Instance &instance) {
  return std::visit([](const auto &i) -> const std::string & { return i.name; },
                    instance);
}

const ValueLayout *Program::findLayout(const std::string &value) const {
  for (const ValueLayout &l : layouts)
    if (l.decl.name == value)
      return &l;
  return nullptr;
}

namespace {

// ---------------------------------------------------------------- printer

std::string pathStr(const std::vector<ir::Attr> &path) {
  std::string s;
  for (ir::Attr a : path)
    s += (s.empty() ? "" : ".") + std::string(ir::attrName(a));
  return s;
}

std::string segmentStr(const GemmInstance &g) {
  if (!g.segmentBy)
    return "none";
  if (g.segmentBy->empty())
    return "row";
  return pathStr(*g.segmentBy);
}

void printLayout(std::ostringstream &os, const ValueLayout &l) {
  os << "  layout " << l.decl.name << " : " << rowSchemeName(l.rows)
     << ir::shapeStr(l.decl.shape) << " " << ir::valueKindName(l.decl.kind)
     << " " << storageName(l.storage);
  if (l.storage == Storage::View)
    os << " of " << l.viewOf << " s" << l.viewStmt;
  if (!l.producer.empty())
    os << " from @" << l.producer;
  os << "\n";
}

void printGemm(std::ostringstream &os, const GemmInstance &g) {
  const std::string v = rowVarName(g.rows);
  os << "  gemm @" << g.name << " {\n";
  os << "    stmts";
  for (int id : g.stmts)
    os << " s" << id;
  os << "\n";
  os << "    mode " << (g.mode == GemmInstance::Mode::Linear ? "linear" : "outer")
     << "\n";
  os << "    rows " << rowDomainName(g.rows) << " segments " << segmentStr(g)
     << (g.summedBySegment ? " summed dst_etype" : "")
     << (g.perChunk ? " per_chunk" : "");
  if (g.sumWeights)
    os << " weighted " << g.sumWeights->str(v);
  os << "\n";
  if (g.inputOp)
    os << "    input " << ir::opName(*g.inputOp) << "(" << g.input.str(v)
       << ")\n";
  else
    os << "    input " << g.input.str(v) << "\n";
  os << "    weight " << g.weight.str(v);
  if (g.transposeWeight)
    os << " transposed";
  if (g.perHead)
    os << " per_head";
  if (g.headsInColumns)
    os << " heads_in_columns";
  os << "\n";
  os << "    output ";
  const std::vector<const RowAccess *> outs = g.outputs();
  for (size_t i = 0; i < outs.size(); ++i)
    os << (i ? ", " : "") << outs[i]->str(v);
  os << " " << ir::reduceToken(g.accumulate);
  if (g.atomic)
    os << " atomic";
  os << "\n";
  if (g.bias)
    os << "    bias " << g.bias->str(v) << "\n";
  if (g.mix)
    os << "    mix sigmoid(" << g.mix->gate.str(v) << ") " << g.mix->rows.str(v)
       << "\n";
  if (g.initRow)
    os << "    init " << g.initRow->str(v) << "\n";
  if (g.epilogue)
    os << "    epilogue " << ir::opName(g.epilogue->op) << " "
       << g.epilogue->scalar.str(v) << (g.epilogue->perHead ? " per_head" : "")
       << "\n";
  if (g.rowDot)
    os << "    row_dot " << g.rowDot->output.str(v) << " = linear("
       << g.output.str(v) << ", " << g.rowDot->weight.str(v) << ") m "
       << g.rowDot->m.str() << "\n";
  os << "    dims k " << g.k.str() << " n " << g.n.str() << " heads "
     << g.heads.str() << "\n";
  os << "    knobs tile " << g.knobs.tileM << "x" << g.knobs.tileN << "x"
     << g.knobs.tileK << " coarsening " << g.knobs.coarsening
     << " launch_bounds " << g.knobs.launchBounds << "\n";
  os << "  }\n";
}

void printNest(std::ostringstream &os, const TravLoop &loop, int depth,
               bool withSchemes) {
  const std::string ind(2 * depth, ' ');
  os << ind << "foreach " << loop.var << " in ";
  if (loop.kind == ir::LoopKind::Incoming || loop.kind == ir::LoopKind::Outgoing)
    os << loop.parent << "." << ir::loopKindName(loop.kind);
  else
    os << ir::loopKindName(loop.kind);
  os << " {\n";
  for (const TravItem &item : loop.body) {
    if (const auto *s = std::get_if<TravStmt>(&item)) {
      os << ind << "  s" << s->id << ": " << ir::printStmt(s->stmt);
      std::vector<std::string> notes;
      if (withSchemes && s->reduction != ReductionScheme::None)
        notes.push_back(reductionSchemeName(s->reduction));
      if (s->hoisted)
        notes.push_back("hoisted");
      if (s->storeInInnerLoop)
        notes.push_back("store_in_inner_loop");
      if (!notes.empty()) {
        os << " {";
        for (size_t i = 0; i < notes.size(); ++i)
          os << (i ? ", " : "") << notes[i];
        os << "}";
      }
      os << "\n";
    } else {
      printNest(os, *std::get<std::unique_ptr<TravLoop>>(item), depth + 1,
                withSchemes);
    }
  }
  os << ind << "}\n";
}

void printTraversal(std::ostringstream &os, const TraversalInstance &t) {
  os << "  traversal @" << t.name << " {\n";
  os << "    access " << accessSchemeName(t.access) << "\n";
  os << "    schedule " << travMappingName(t.schedule.mapping)
     << " feature_tile " << t.schedule.featureTile;
  if (t.schedule.heavyGroupSize)
    os << " heavy_group " << t.schedule.heavyGroupSize;
  os << "\n";
  printNest(os, *t.root, 2, true);
  os << "  }\n";
}

void printFallback(std::ostringstream &os, const FallbackInstance &f) {
  os << "  fallback @" << f.name << " {\n";
  printNest(os, *f.root, 2, false);
  os << "  }\n";
}

// --------------------------------------------------------------- verifier

class Verifier {
public:
  Verifier(const Program &p, ir::DiagnosticEngine &d) : program_(p), diags_(d) {}

  bool run() {
    for (const ValueLayout &l : program_.layouts)
      checkLayout(l);
    std::set<std::string> names;
    for (const Instance &inst : program_.instances) {
      const std::string &name = instanceName(inst);
      if (name.empty() || !names.insert(name).second)
        error("instance name '" + name + "' is empty or not unique");
      std::visit([&](const auto &i) { check(i); }, inst);
    }
    checkOrder();
    for (int id = 0; id < program_.numStmts; ++id)
      if (lowered_[id] != 1)
        error("statement s" + std::to_string(id) + " is lowered " +
              std::to_string(lowered_[id]) + " times, expected once");
    for (const auto &[id, count] : lowered_)
      if (id < 0 || id >= program_.numStmts)
        error("statement id s" + std::to_string(id) + " is out of range");
    return ok_;
  }

private:
  void error(const std::string &message) {
    diags_.error(ir::SourceLoc{}, "intra-op IR @" + program_.name + ": " +
                                      message);
    ok_ = false;
  }

  void lower(int id) { ++lowered_[id]; }

  void checkLayout(const ValueLayout &l) {
    // An edge temp's buffer may be ordered by the summed entries or hold a
    // row a chunk instead.
    const bool edgeTempBuffer = l.decl.space == ir::Space::Edge &&
                                l.decl.kind == ir::ValueKind::Temp &&
                                l.storage == Storage::Buffer;
    const bool csrOrdered =
        l.rows == RowScheme::DstCsrRows || l.rows == RowScheme::SrcCsrRows;
    const bool reordered =
        edgeTempBuffer && (l.rows == RowScheme::EntryRows ||
                           l.rows == RowScheme::ChunkRows || csrOrdered);
    if (l.rows != rowSchemeOf(l.decl.space) && !reordered)
      error("value '" + l.decl.name + "' has row scheme " +
            rowSchemeName(l.rows) + " but lives in space " +
            ir::spaceName(l.decl.space));
    // Only the accesses csrOrderOf accepts know an edge's CSR position.
    if (csrOrdered && csrOrderOf(program_, l.decl.name) != l.rows)
      error("value '" + l.decl.name + "' is stored in " +
            rowSchemeName(l.rows) +
            " but is not accessed only at the edges of one traversal's " +
            (l.rows == RowScheme::DstCsrRows ? "incoming" : "outgoing") +
            " loops");
    if (l.storage == Storage::View) {
      if (!program_.findLayout(l.viewOf) || l.viewStmt < 0)
        error("view '" + l.decl.name + "' names no source value or statement");
      else if (!isAccumulatedView(program_, l))
        lower(l.viewStmt); // an accumulated view's GEMM lowers it
    }
    const bool external = l.decl.kind == ir::ValueKind::Input ||
                          l.decl.kind == ir::ValueKind::Param ||
                          l.decl.kind == ir::ValueKind::Graph;
    if ((external || l.decl.kind == ir::ValueKind::Output) &&
        l.storage == Storage::Register)
      error("value '" + l.decl.name + "' is visible outside but kept in "
            "registers");
  }

  /// A gated mix: on a plain linear output, its gate a [] param sliced
  /// by the segment key, its rows of the output's shape at the output's
  /// row.
  void checkMix(const GemmInstance &g) {
    const GemmMix &m = *g.mix;
    if (g.mode != GemmInstance::Mode::Linear ||
        g.accumulate != ir::Reduce::None || g.epilogue ||
        !g.outputParts.empty() || g.rowDot || g.summedBySegment)
      error("gemm @" + g.name +
            " mixes rows into an output that is not plainly assigned (an "
            "accumulation, epilogue scale, parts, row dot or summed rows)");
    const ValueLayout *gate = program_.findLayout(m.gate.value);
    if (!gate || gate->decl.kind != ir::ValueKind::Param ||
        !gate->decl.shape.empty() || m.gate.global || !g.segmentBy ||
        m.gate.path != *g.segmentBy)
      error("gemm @" + g.name +
            "'s mix gate is not a [] param sliced by the segment key");
    const ValueLayout *rows = program_.findLayout(m.rows.value);
    const ValueLayout *out = program_.findLayout(g.output.value);
    if (!rows || !out || !m.rows.isIdentity() ||
        !(rows->decl.shape == out->decl.shape) ||
        rows->decl.space != out->decl.space)
      error("gemm @" + g.name +
            " mixes in rows not of its output's shape and space, or not at "
            "the output's row");
  }

  void check(const GemmInstance &g) {
    if (g.stmts.empty())
      error("gemm @" + g.name + " lowers no statement");
    for (int id : g.stmts)
      lower(id);
    const bool linear = g.mode == GemmInstance::Mode::Linear;
    if (g.input.global || g.input.value.empty())
      error("gemm @" + g.name + " has no per-row input");
    if (linear && g.segmentBy.has_value() == g.weight.global)
      error("gemm @" + g.name +
            " must slice its weight by the segment key exactly when it has "
            "segments");
    if (linear && g.segmentBy && g.weight.path != *g.segmentBy)
      error("gemm @" + g.name + " slices its weight by a path other than the "
            "segment key");
    if (!linear && g.epilogue)
      error("gemm @" + g.name + " has an epilogue in outer-product mode");
    if (!linear && g.accumulate != ir::Reduce::Sum)
      error("gemm @" + g.name + " in outer mode must accumulate");
    if (g.atomic && g.accumulate == ir::Reduce::None)
      error("gemm @" + g.name + " is atomic without accumulation");
    if (g.accumulate == ir::Reduce::None && !g.output.isIdentity())
      error("gemm @" + g.name + " scatters a plain assignment");
    if (g.accumulate != ir::Reduce::None && g.accumulate != ir::Reduce::Sum)
      error("gemm @" + g.name + " accumulates with other than a sum");
    if (g.transposeWeight && !linear)
      error("gemm @" + g.name + " transposes the weight in outer mode");
    if (g.epilogue && g.epilogue->op != ir::OpKind::Mul &&
        g.epilogue->op != ir::OpKind::Div)
      error("gemm @" + g.name + " has an epilogue other than mul/div");
    if ((g.bias || !g.outputParts.empty()) &&
        (!linear || g.accumulate != ir::Reduce::None))
      error("gemm @" + g.name +
            " has a bias or output parts without being a plain linear GEMM");
    if (g.bias && !g.bias->global &&
        (!g.segmentBy || g.bias->path != *g.segmentBy))
      error("gemm @" + g.name +
            " slices its bias by other than the segment key");
    if (!g.outputParts.empty()) {
      if (g.outputParts.size() < 2 || g.outputParts.size() > 4 || g.perHead)
        error("gemm @" + g.name + " cuts its output into " +
              std::to_string(g.outputParts.size()) +
              " parts (2 to 4, without heads)");
      if (!(g.output == g.outputParts.front()))
        error("gemm @" + g.name + "'s output is not its first part");
      for (const RowAccess &p : g.outputParts)
        if (!p.isIdentity())
          error("gemm @" + g.name + " scatters an output part");
    }
    if (g.summedBySegment)
      checkSummed(g);
    if (g.mix)
      checkMix(g);
    if (g.inputOp &&
        (*g.inputOp != ir::OpKind::Gelu || !linear || g.summedBySegment))
      error("gemm @" + g.name +
            " applies an op other than gelu to its input, or one in outer "
            "mode or on summed rows");
    if (g.sumWeights && (!g.summedBySegment || !g.sumWeights->path.empty() ||
                         g.sumWeights->global))
      error("gemm @" + g.name +
            " weighs its rows without being summed by segment, or by a "
            "value not read at the edge");
    if (g.perChunk) {
      using A = ir::Attr;
      const ValueLayout *out = program_.findLayout(g.output.value);
      if (!linear || g.rows != RowDomain::Edges || g.summedBySegment ||
          g.input.path != std::vector<A>{A::Dst} ||
          g.segmentBy != std::vector<A>{A::EType} || !g.output.isIdentity() ||
          g.accumulate != ir::Reduce::None || g.epilogue || g.bias ||
          !g.outputParts.empty() || g.rowDot || !out ||
          out->rows != RowScheme::ChunkRows)
        error("gemm @" + g.name +
              " runs per chunk but is not x[e.dst] times W[e.etype] written "
              "plainly into a chunk_rows value");
    }
    // Only a per-chunk GEMM's output holds a row a chunk; a GEMM indexes
    // its other rows by edge id, and only its summed rows' weights are
    // read in the entries' order.
    forbidOtherAccesses(g, RowScheme::ChunkRows,
                        g.perChunk ? &g.output : nullptr,
                        "a row a chunk, other than as a per-chunk GEMM's "
                        "output");
    forbidOtherAccesses(g, RowScheme::EntryRows,
                        g.sumWeights ? &*g.sumWeights : nullptr,
                        "stored in entry order, other than as its rows' "
                        "weights");
    if (g.sumWeights)
      if (const ValueLayout *l = program_.findLayout(g.sumWeights->value);
          l && l->rows == RowScheme::EntryRows && !g.summedBySegment)
        error("gemm @" + g.name +
              " reads weights in entry order without "
              "summing entries");
    if (g.initRow && (!linear || g.accumulate != ir::Reduce::Sum ||
                      !g.initRow->global || !g.outputParts.empty()))
      error("gemm @" + g.name +
            " starts its output as a row without adding into it, or from a "
            "row that is not shared");
    if (g.headsInColumns && (!linear || g.perHead || g.transposeWeight))
      error("gemm @" + g.name +
            " takes its heads from the weight's columns in outer mode, with "
            "per-head weights or with a transposed weight");
    // The template scales head h of its H by the scalar's entry h: a
    // GEMM of one head would read entry 0 for every head of the row.
    if (g.epilogue && g.epilogue->perHead && !g.perHead && !g.headsInColumns)
      error("gemm @" + g.name + " scales its rows by head but has no heads");
    if (g.rowDot &&
        (!linear || g.accumulate != ir::Reduce::None || g.perHead ||
         !g.outputParts.empty() || !g.output.isIdentity() ||
         !g.rowDot->output.isIdentity() || !g.rowDot->weight.global))
      error("gemm @" + g.name +
            " has a row dot without a plain, unscattered output row and a "
            "shared weight");
  }

  /// A GEMM summed by (destination, relation) segment computes its edges'
  /// sum only when nothing per edge but the gathered input enters the
  /// product (GemmInstance::summedBySegment).
  /// Reports each access of `g` to a value stored in row order `scheme`
  /// but `allowed` (the one access that order is made for, or none): the
  /// GEMM would read or write it at the wrong rows.
  void forbidOtherAccesses(const GemmInstance &g, RowScheme scheme,
                           const RowAccess *allowed, const std::string &what) {
    std::vector<const RowAccess *> accesses = g.reads();
    for (const RowAccess *w : g.writes())
      accesses.push_back(w);
    for (const RowAccess *r : accesses)
      if (const ValueLayout *l = program_.findLayout(r->value);
          r != allowed && l && l->rows == scheme)
        error("gemm @" + g.name + " reads or writes '" + r->value + "', " +
              what);
  }

  void checkSummed(const GemmInstance &g) {
    if (!isSegmentSumShape(g))
      error("gemm @" + g.name +
            " is summed by segment but is not x[e.src] times W[e.etype] "
            "added atomically into h[e.dst] (no bias, parts or row dot)");
    if (!hasSegmentConstantScale(g))
      error("gemm @" + g.name +
            " is summed by segment with an epilogue scalar that may differ "
            "within a segment (only rel_in_degree[e] is the same on one)");
  }

  void checkNest(const std::string &name, const TravLoop &loop, bool isRoot,
                 bool fallback, bool *incoming, bool *outgoing) {
    const bool nested = loop.kind == ir::LoopKind::Incoming ||
                        loop.kind == ir::LoopKind::Outgoing;
    if (nested == isRoot)
      error("@" + name + ": loop '" + loop.var + "' is " +
            (isRoot ? "a nested loop at the top" : "a top-level loop nested"));
    if (loop.kind == ir::LoopKind::Incoming)
      *incoming = true;
    if (loop.kind == ir::LoopKind::Outgoing)
      *outgoing = true;
    for (const TravItem &item : loop.body) {
      if (const auto *s = std::get_if<TravStmt>(&item)) {
        lower(s->id);
        const bool reduces = s->stmt.reduce != ir::Reduce::None;
        if (fallback ? s->reduction != ReductionScheme::None
                     : reduces != (s->reduction != ReductionScheme::None))
          error("@" + name + ": s" + std::to_string(s->id) +
                " has a reduction scheme that does not match its statement");
        if (s->storeInInnerLoop && !s->hoisted)
          error("@" + name + ": s" + std::to_string(s->id) +
                " stores in an inner loop without being hoisted");
      } else {
        checkNest(name, *std::get<std::unique_ptr<TravLoop>>(item), false,
                  fallback, incoming, outgoing);
      }
    }
  }

  void check(const TraversalInstance &t) {
    if (!t.root) {
      error("traversal @" + t.name + " has no loop");
      return;
    }
    bool incoming = false, outgoing = false;
    checkNest(t.name, *t.root, true, false, &incoming, &outgoing);
    AccessScheme want = AccessScheme::None;
    if (t.root->kind == ir::LoopKind::Edges)
      want = AccessScheme::Coo;
    else if (t.root->kind == ir::LoopKind::Pairs)
      want = AccessScheme::UniquePairs;
    else if (incoming && outgoing)
      want = AccessScheme::CsrAndCsc;
    else if (incoming)
      want = AccessScheme::CsrByDst;
    else if (outgoing)
      want = AccessScheme::CscBySrc;
    if (t.access != want)
      error("traversal @" + t.name + " reads the graph through " +
            accessSchemeName(t.access) + " but its loops need " +
            accessSchemeName(want));
    // A block of whole warps, at most CUDA's 1024 threads.
    const int group = t.schedule.heavyGroupSize;
    if (group != 0 && (t.schedule.mapping != TravMapping::WarpPerVertex ||
                       group < 64 || group > 1024 || group % 32 != 0))
      error("traversal @" + t.name + " has heavy_group " +
            std::to_string(group) +
            ": a warp_per_vertex nest's heavy blocks take 64 to 1024 "
            "threads, a multiple of 32");
  }

  void check(const FallbackInstance &f) {
    if (!f.root) {
      error("fallback @" + f.name + " has no loop");
      return;
    }
    bool incoming = false, outgoing = false;
    checkNest(f.name, *f.root, true, true, &incoming, &outgoing);
  }

  /// Reads after writes across instances: every value an instance reads
  /// is an input/param/graph value, written by an earlier instance or by
  /// this one, or a view of such a value.
  void checkOrder() {
    std::set<std::string> available;
    for (const ValueLayout &l : program_.layouts)
      if (l.decl.kind == ir::ValueKind::Input ||
          l.decl.kind == ir::ValueKind::Param ||
          l.decl.kind == ir::ValueKind::Graph)
        available.insert(l.decl.name);
    auto addViews = [&] {
      for (bool added = true; added;) {
        added = false;
        for (const ValueLayout &l : program_.layouts)
          if (l.storage == Storage::View && available.count(l.viewOf) &&
              available.insert(l.decl.name).second)
            added = true;
      }
    };
    addViews();
    for (const Instance &inst : program_.instances) {
      std::set<std::string> reads, writes;
      if (const auto *g = std::get_if<GemmInstance>(&inst)) {
        for (const RowAccess *in : g->reads())
          reads.insert(in->value);
        for (const RowAccess *out : g->writes())
          writes.insert(out->value);
      } else {
        const TravLoop *root =
            std::holds_alternative<TraversalInstance>(inst)
                ? std::get<TraversalInstance>(inst).root.get()
                : std::get<FallbackInstance>(inst).root.get();
        if (!root)
          continue;
        forEachTravStmt(*root, [&](const TravStmt &s) {
          writes.insert(s.stmt.target.value);
          for (const ir::Operand &op : s.stmt.operands)
            if (const auto *a = std::get_if<ir::Access>(&op))
              reads.insert(a->value);
        });
      }
      available.insert(writes.begin(), writes.end());
      addViews();
      for (const std::string &v : reads)
        if (!available.count(v))
          error("@" + instanceName(inst) + " reads '" + v +
                "' before any earlier instance writes it");
    }
  }

  const Program &program_;
  ir::DiagnosticEngine &diags_;
  std::map<int, int> lowered_;
  bool ok_ = true;
};

} // namespace

namespace {

/// The accesses of one traversal (or fallback) to an edge value, and the
/// CSR order they agree on (csrOrderOf).
class CsrAccessScan {
public:
  explicit CsrAccessScan(const std::string &value) : value_(value) {}

  void scan(const TravLoop &loop) {
    enclosing_.push_back(&loop);
    for (const TravItem &item : loop.body) {
      if (const auto *s = std::get_if<TravStmt>(&item))
        scanStmt(*s);
      else
        scan(*std::get<std::unique_ptr<TravLoop>>(item));
    }
    enclosing_.pop_back();
  }

  bool touched() const { return touched_; }
  /// The order every access agrees on, if any.
  std::optional<RowScheme> order() const {
    return unordered_ ? std::nullopt : order_;
  }

private:
  void scanStmt(const TravStmt &s) {
    if (s.stmt.target.value == value_) {
      // A reduction's partials are flushed by row index, not by position.
      if (s.stmt.reduce != ir::Reduce::None)
        unordered_ = true;
      access(s.stmt.target.index, s);
    }
    for (const ir::Operand &op : s.stmt.operands)
      if (const auto *a = std::get_if<ir::Access>(&op); a && a->value == value_)
        access(a->index, s);
  }

  void access(const ir::IndexPath &index, const TravStmt &s) {
    touched_ = true;
    // A hoisted statement runs outside the edge loop its row belongs to.
    if (s.hoisted || index.isGlobal() || !index.attrs.empty()) {
      unordered_ = true;
      return;
    }
    const TravLoop *loop = nullptr;
    for (auto it = enclosing_.rbegin(); it != enclosing_.rend() && !loop; ++it)
      if ((*it)->var == index.var)
        loop = *it;
    std::optional<RowScheme> here;
    if (loop && loop->kind == ir::LoopKind::Incoming)
      here = RowScheme::DstCsrRows;
    else if (loop && loop->kind == ir::LoopKind::Outgoing)
      here = RowScheme::SrcCsrRows;
    if (!here || (order_ && *order_ != *here))
      unordered_ = true;
    order_ = here;
  }

  const std::string &value_;
  std::vector<const TravLoop *> enclosing_;
  std::optional<RowScheme> order_;
  bool touched_ = false, unordered_ = false;
};

} // namespace

std::optional<RowScheme> csrOrderOf(const Program &program,
                                    const std::string &value) {
  const ValueLayout *l = program.findLayout(value);
  if (!l || l->decl.space != ir::Space::Edge || l->storage == Storage::View)
    return std::nullopt;
  for (const ValueLayout &other : program.layouts)
    if (other.storage == Storage::View && other.viewOf == value)
      return std::nullopt;
  std::optional<RowScheme> order;
  int traversals = 0;
  for (const Instance &inst : program.instances) {
    if (const auto *g = std::get_if<GemmInstance>(&inst)) {
      for (const RowAccess *r : g->reads())
        if (r->value == value)
          return std::nullopt;
      for (const RowAccess *r : g->writes())
        if (r->value == value)
          return std::nullopt;
    } else if (const auto *f = std::get_if<FallbackInstance>(&inst)) {
      CsrAccessScan scan(value);
      if (f->root)
        scan.scan(*f->root);
      if (scan.touched())
        return std::nullopt;
    } else if (const auto &t = std::get<TraversalInstance>(inst); t.root) {
      CsrAccessScan scan(value);
      scan.scan(*t.root);
      if (!scan.touched())
        continue;
      order = scan.order();
      if (!order || ++traversals > 1)
        return std::nullopt;
    }
  }
  return order;
}

bool isAccumulatedView(const Program &program, const ValueLayout &l) {
  if (l.storage != Storage::View)
    return false;
  for (const Instance &inst : program.instances)
    if (const auto *g = std::get_if<GemmInstance>(&inst))
      if (g->output.value == l.decl.name &&
          std::find(g->stmts.begin(), g->stmts.end(), l.viewStmt) !=
              g->stmts.end())
        return true;
  return false;
}

std::string printProgram(const Program &program) {
  std::ostringstream os;
  os << "intra.program @" << program.name << " {\n";
  for (const ir::HyperDecl &h : program.hypers) {
    std::ostringstream value;
    value << h.defaultValue;
    os << "  hyper " << h.name << " : "
       << (h.type == ir::HyperDecl::Type::Int ? "int" : "float") << " = "
       << value.str() << "\n";
  }
  if (!program.hypers.empty())
    os << "\n";
  for (const ValueLayout &l : program.layouts)
    printLayout(os, l);
  for (const Instance &inst : program.instances) {
    os << "\n";
    if (const auto *g = std::get_if<GemmInstance>(&inst))
      printGemm(os, *g);
    else if (const auto *t = std::get_if<TraversalInstance>(&inst))
      printTraversal(os, *t);
    else
      printFallback(os, std::get<FallbackInstance>(inst));
  }
  os << "}\n";
  return os.str();
}

bool isSegmentSumShape(const GemmInstance &g) {
  using A = ir::Attr;
  return g.mode == GemmInstance::Mode::Linear && g.rows == RowDomain::Edges &&
         g.input.path == std::vector<A>{A::Src} &&
         g.segmentBy == std::vector<A>{A::EType} &&
         g.output.path == std::vector<A>{A::Dst} &&
         g.accumulate == ir::Reduce::Sum && g.atomic && !g.bias &&
         g.outputParts.empty() && !g.rowDot;
}

bool hasSegmentConstantScale(const GemmInstance &g) {
  return !g.epilogue ||
         (g.epilogue->scalar.value == "rel_in_degree" &&
          g.epilogue->scalar.path.empty() && !g.epilogue->perHead);
}

bool verifyProgram(const Program &program, ir::DiagnosticEngine &diags) {
  return Verifier(program, diags).run();
}

} // namespace hector::intra
