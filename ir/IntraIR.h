// The intra-operator IR: what the kernels of one layer are (docs/intra-ir.md
// is the reference; this header is its data structure).
//
// The inter-op IR (ir/InterIR.h) says what is computed per edge, node, ...;
// the intra-op IR says how: which template instance (segment GEMM or graph
// traversal, or the interpreter fallback) runs each inter-op statement, in
// which order, over which rows, through which gather/scatter lists, with
// which reductions and which schedule. It is produced by
// passes/LowerToIntraOp, read by passes/PreprocessingPlan (the graph arrays
// the instances need) and by the CUDA and C++/OpenMP emitters (issue 6).
//
// Inter-op statements are referred to by their id: their position in a
// pre-order walk of the module's loops (the first statement is s0). Every
// instance carries copies of the statements it runs, so an emitter needs
// nothing but the Program and the value declarations it copies.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/InterIR.h"

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace hector::intra {

/// Which rows of which tensor hold a value (the layout decision).
enum class RowScheme {
  EdgeRows, ///< vanilla: one row per edge, indexed by edge id
  /// One row per edge, stored in the order of the graph's summed entries
  /// (edge e at row sum_edge_entry[e], runtime/GraphArrays.h): a temp
  /// that only a traversal writes and a weighted summed GEMM reads as its
  /// weights, which then reads them in order (GemmInstance::sumWeights).
  EntryRows,
  /// One row per chunk of the summed (destination, relation) segments
  /// (edge e reads row sum_edge_chunk[e]): an edge temp that depends only
  /// on its edge's destination and relation, computed once a chunk by a
  /// GEMM (GemmInstance::perChunk) and read by traversals.
  ChunkRows,
  /// One row per edge, stored at the edge's position in the CSR by
  /// destination (dst_eid's order, runtime/GraphArrays.h): an edge temp
  /// that one traversal writes and reads only at the edges of its
  /// incoming loops (csrOrderOf). Consecutive lanes then store and load
  /// consecutive rows instead of rows scattered by edge id.
  DstCsrRows,
  /// The same at the edge's position in the CSR by source (src_eid's
  /// order), for a temp accessed only in outgoing loops.
  SrcCsrRows,
  PairRows,     ///< compact: one row per unique (src, etype) pair
  NodeRows,     ///< one row per node
  EdgeTypeRows, ///< one row per relation
  NodeTypeRows, ///< one row per node type
  Global,       ///< a single row
};
const char *rowSchemeName(RowScheme s); // "edge_rows", "pair_rows", ...
RowScheme rowSchemeOf(ir::Space space);

/// Where a value lives.
enum class Storage {
  Buffer,   ///< a tensor in global memory (inputs, params, outputs, temps
            ///< read by another instance)
  Register, ///< never stored: produced and consumed inside one instance
            ///< (a GEMM accumulator tile before its fused epilogue, or a
            ///< traversal temporary read only where it is computed)
  View,     ///< a reshape of another value: shares that value's buffer
};
const char *storageName(Storage s); // "buffer", "register", "view"

/// The layout decision for one inter-op value.
struct ValueLayout {
  ir::ValueDecl decl;  ///< copy of the inter-op declaration
  RowScheme rows = RowScheme::Global;
  Storage storage = Storage::Buffer;
  std::string viewOf;   ///< Storage::View: the value whose buffer it shares
  int viewStmt = -1;    ///< Storage::View: the reshape statement it lowers
  std::string producer; ///< the instance that writes it ("" if none)
};

/// The rows a GEMM instance iterates over (its M dimension) and, for
/// traversal loops, what a loop ranges over.
enum class RowDomain { Edges, Pairs, Nodes, EdgeTypes, NodeTypes };
const char *rowDomainName(RowDomain d); // "edges", "pairs", ...
/// The loop variable name used in printed instances: e, p, n, r, t.
const char *rowVarName(RowDomain d);
/// The space a row domain ranges over, every row of it once.
ir::Space spaceOf(RowDomain d);

/// A row of a value read or written by a GEMM, found from the GEMM's row
/// (an edge, pair, node, ...) through attribute steps: the empty path is
/// the row itself; `src` gathers through the source-node list, `pair`
/// through the edge -> pair map, `etype` selects a weight slice. A Global
/// value has `global` set and no path.
struct RowAccess {
  std::string value;
  std::vector<ir::Attr> path;
  bool global = false;
  bool isIdentity() const { return !global && path.empty(); }
  bool operator==(const RowAccess &o) const {
    return value == o.value && path == o.path && global == o.global;
  }
  /// "x[e.src]", "msg[e]", "W[e.etype]", "bias" for row variable `var`.
  std::string str(const std::string &var) const;
};

/// Schedule knobs of a GEMM instance (hector.txt 3.4.1).
struct GemmKnobs {
  int tileM = 16, tileN = 16, tileK = 16;
  int coarsening = 1;    ///< elements per thread in load/compute/store
  int launchBounds = 256; ///< __launch_bounds__ max threads per block
};

/// A scalar applied to every output row in the GEMM epilogue:
/// out[row] = acc[row] * s[row] (Mul) or acc[row] / s[row] (Div).
struct GemmEpilogue {
  ir::OpKind op = ir::OpKind::Mul; ///< Mul or Div
  RowAccess scalar;
  /// The scalar has one entry per head ([H]) rather than one per row ([]);
  /// head h scales output columns [h*N/H, (h+1)*N/H).
  bool perHead = false;
};

/// A narrow linear of a GEMM's finished output rows, computed in the
/// GEMM's epilogue (a fused `linear(row, w)` whose weight w [n, m] is
/// shared: RGAT's attention term `linear(outj, k)`), so that the rows are
/// not read back from memory for it.
struct GemmRowDot {
  RowAccess weight; ///< w, a global [n, m] weight
  RowAccess output; ///< the [m] row written per GEMM row
  ir::Dim m;        ///< the output width
};

/// A gated mix of a GEMM's finished output rows with rows of their own
/// shape, computed in the epilogue (a fused gated skip, HGT's
/// `h = g a + (1 - g) x` with `g = sigmoid(skip[n.ntype])` over its output
/// projection a), so that a is never written and read back:
///   out[row] = g (row's value) + (1 - g) rows[row],  g = sigmoid(gate)
struct GemmMix {
  RowAccess gate; ///< a [] param sliced by the GEMM's segment key
  RowAccess rows; ///< read at the output's row
};

/// A segment-MM instance of the GEMM template (hector.txt Algorithm 1).
///   Linear mode: out[scatter(row)] (=|+=)
///                epilogue(gather(A)[row] x W[seg] + bias[seg])
///   Outer mode:  W_out[seg] += sum over rows of seg: outer(A[row], B[row])
struct GemmInstance {
  std::string name;
  enum class Mode { Linear, Outer };
  Mode mode = Mode::Linear;
  RowDomain rows = RowDomain::Edges;
  /// The rows are sorted into one segment per weight slice, by this path
  /// from the row (e.g. {etype}: edges sorted by etype; {ntype}: nodes by
  /// ntype; {} for type domains: each row its own segment). nullopt: one
  /// segment, the weight is shared.
  std::optional<std::vector<ir::Attr>> segmentBy;
  RowAccess input;   ///< A, gathered by its path
  /// Linear: each input element goes through this op as the GEMM reads
  /// it (a fused `a[n] = gelu(t[n])` whose a only this GEMM reads: input
  /// is t). Only Gelu, and not with summed rows. Printed `input
  /// gelu(t[n])`.
  std::optional<ir::OpKind> inputOp;
  RowAccess weight;  ///< Linear: W, sliced by the segment. Outer: B.
  bool transposeWeight = false; ///< linear_t: W is [N, K]
  bool perHead = false;         ///< W is [H, K, N]: one GEMM per head
  RowAccess output;             ///< scattered by its path
  ir::Reduce accumulate = ir::Reduce::None; ///< None or Sum
  /// Several rows write the same output row: accumulate with atomics
  /// (the output is zero-filled first).
  bool atomic = false;
  /// Linear over edges: run summed by (destination, relation) segment
  /// (aggregate-then-transform). Each template row is a chunk of one
  /// segment's edges (the graph's sum_chunk_* arrays) whose gathered
  /// inputs are summed before the multiply; the chunk's result is scaled
  /// and added into the destination. It is the edges' sum in another
  /// order because the input is gathered by e.src, the weight sliced by
  /// e.etype, the output `h[e.dst] +=` and the epilogue's scalar the same
  /// on a whole segment (rel_in_degree[e]). Printed `summed dst_etype`
  /// after the segments.
  bool summedBySegment = false;
  /// Linear over edges: `t[e] = linear(x[e.dst], W[e.etype])`, the same on
  /// every edge of a (destination, relation) segment, computed once a
  /// chunk of the graph's summed segments (rows: the chunks, gathering
  /// x[sum_chunk_dst[c]]) into t's chunk_rows buffer, which traversals
  /// read at sum_edge_chunk[e]. Printed `per_chunk` after the segments.
  bool perChunk = false;
  /// Summed by segment: each edge's gathered row is added times its
  /// weight (a per-edge value read at the edge, [] or one per head), as an
  /// attention layer's sum_e alpha[e] x[e.src] W[e.etype] is aggregated
  /// before the transform. Printed `weighted alpha[e]` after `summed`.
  std::optional<RowAccess> sumWeights;
  /// The weight [K, heads * n] is shared by the heads, head h using its
  /// columns [h*n, h*n + n), and every head reads the same input row [K]
  /// (a message `reshape(linear(x, W)) [heads, n]` whose heads are
  /// weighted apart). Printed `heads_in_columns` after the weight.
  bool headsInColumns = false;
  std::optional<GemmEpilogue> epilogue;
  /// Linear, adding into its output: the output buffer starts as this
  /// shared row in every row of its space (written before the GEMM adds,
  /// instead of zeros): a bias added once per output row rather than once
  /// per GEMM row (RGAT-PyG's `h = sum + bias` over a summed GEMM's
  /// atomic adds). Printed `init bias`.
  std::optional<RowAccess> initRow;
  /// Linear: a row of width n added before the epilogue (a fused
  /// `add(row, b)`), shared (global) or sliced by the segment key. Only
  /// without accumulation.
  std::optional<RowAccess> bias;
  /// Linear: the finished row (product and bias) mixed with another row by
  /// a gate per segment. Only on a plain output (no accumulation, epilogue
  /// scale, parts, row dot or summed rows). Printed `mix sigmoid(gate)
  /// rows`.
  std::optional<GemmMix> mix;
  /// Linear: the output row cut by columns into these values, in order,
  /// each n / size() wide (fused `slice`s that partition the row); then
  /// `output` is the first of them. Empty: `output` holds the whole row.
  /// Only without accumulation or heads.
  std::vector<RowAccess> outputParts;
  /// Linear: the finished output row times a shared weight, to a second
  /// output. Only with a plain, unscattered output and no heads or parts.
  std::optional<GemmRowDot> rowDot;
  ir::Dim k, n;       ///< per-row contraction and output widths
  ir::Dim heads;      ///< perHead: H; otherwise 1
  GemmKnobs knobs;
  /// The inter-op statements lowered here: the input op's, the
  /// linear/outer, then the reshapes, the bias and the scaling consumer,
  /// gated mix or slices fused into the epilogue, then the row dot.
  std::vector<int> stmts;

  /// The rows the template's output holds: the output, or every part.
  std::vector<const RowAccess *> outputs() const {
    if (outputParts.empty())
      return {&output};
    std::vector<const RowAccess *> parts;
    for (const RowAccess &p : outputParts)
      parts.push_back(&p);
    return parts;
  }
  /// The second row order a linear GEMM over relation-grouped rows can
  /// also be visited in: rows that gather the same input row adjacent
  /// (pairs by source, x[p.src]; chunks by destination, per_chunk's
  /// x[e.dst]). Where the template's kernel needs no relation's rows
  /// together, a shared input row is then read from DRAM once instead of
  /// once per relation (graph arrays pair_src_order and
  /// sum_chunk_dst_order, with each row's input row and relation in that
  /// order). The template writes each row at its id, so only a GEMM whose
  /// output (one buffer) and epilogue scalar are at the row itself has one.
  enum class GatherOrder { None, PairsBySrc, ChunksByDst };
  GatherOrder gatherOrder() const {
    if (mode != Mode::Linear || !segmentBy || summedBySegment)
      return GatherOrder::None;
    const bool atTheRow = !output.global && output.path.empty() &&
                          outputParts.empty() &&
                          (!epilogue || epilogue->scalar.path.empty());
    if (!atTheRow)
      return GatherOrder::None;
    if (perChunk)
      return GatherOrder::ChunksByDst;
    if (rows == RowDomain::Pairs &&
        *segmentBy == std::vector<ir::Attr>{ir::Attr::EType} && !input.global &&
        input.path == std::vector<ir::Attr>{ir::Attr::Src})
      return GatherOrder::PairsBySrc;
    return GatherOrder::None;
  }
  /// The graph arrays (runtime/GraphArrays.h) of a gather order, each in
  /// that order: the row ids, the input row each gathers, and its relation
  /// (the template's gatherOrderRowIds, gatherOrderGather and
  /// gatherOrderRowType). The emitter passes them and the preprocessing
  /// plan asks for them.
  struct GatherOrderArrays {
    const char *rowIds, *gather, *rowType;
  };
  static std::optional<GatherOrderArrays> gatherOrderArrays(GatherOrder o) {
    switch (o) {
    case GatherOrder::PairsBySrc:
      return GatherOrderArrays{"pair_src_order", "pair_src_order_src",
                               "pair_src_order_etype"};
    case GatherOrder::ChunksByDst:
      return GatherOrderArrays{"sum_chunk_dst_order", "sum_chunk_dst_order_dst",
                               "sum_chunk_dst_order_etype"};
    case GatherOrder::None:
      break;
    }
    return std::nullopt;
  }

  /// Every value this instance writes: its outputs and the row dot's.
  std::vector<const RowAccess *> writes() const {
    std::vector<const RowAccess *> w = outputs();
    if (rowDot)
      w.push_back(&rowDot->output);
    return w;
  }
  /// Every value this instance reads (an accumulated output aside): the
  /// input, the weight (Outer: B), the epilogue's scalar, the bias, the
  /// mix's gate and rows and the row dot's weight.
  std::vector<const RowAccess *> reads() const {
    std::vector<const RowAccess *> r = {&input, &weight};
    if (epilogue)
      r.push_back(&epilogue->scalar);
    if (sumWeights)
      r.push_back(&*sumWeights);
    if (initRow)
      r.push_back(&*initRow);
    if (bias)
      r.push_back(&*bias);
    if (mix) {
      r.push_back(&mix->gate);
      r.push_back(&mix->rows);
    }
    if (rowDot)
      r.push_back(&rowDot->weight);
    return r;
  }
};

/// How a traversal reduction reaches its target rows.
enum class ReductionScheme {
  None,          ///< plain assignment
  Segmented,     ///< all contributions of a row come from one thread group
                 ///< (node-parallel over CSR/CSC): registers, no atomics
  PartialAtomic, ///< partial aggregation in registers and warps, then one
                 ///< atomic per warp (many contributions per target row)
  Atomic,        ///< one atomic per contribution (scattered target rows)
};
const char *reductionSchemeName(ReductionScheme s);

/// One inter-op statement placed in a traversal loop nest.
struct TravStmt {
  int id = -1;    ///< the inter-op statement id
  ir::Stmt stmt;  ///< as written; when hoisted, its operands are rewritten
                  ///< to the outer loop's variable (`x[e.dst]` -> `x[n]`)
  ReductionScheme reduction = ReductionScheme::None;
  /// Moved out of its `n.incoming`/`n.outgoing` loop because it reads only
  /// node-level rows: computed once per node, in the node body, right
  /// before the loop it came from.
  bool hoisted = false;
  /// Hoisted with a stored edge-row target: the inner loop still writes
  /// the node-level result to every edge row.
  bool storeInInnerLoop = false;
};

/// The sparse encoding a traversal loop reads its graph through.
enum class AccessScheme {
  None,      ///< node or type loop without edge sub-loops
  Coo,       ///< edges in id order: edge_index / edge_type as given
  UniquePairs, ///< pair_src / pair_etype
  CsrByDst,  ///< incoming edges of each node
  CscBySrc,  ///< outgoing edges of each node
  CsrAndCsc, ///< a node loop with both kinds of sub-loops
};
const char *accessSchemeName(AccessScheme s);

struct TravLoop;
using TravItem = std::variant<TravStmt, std::unique_ptr<TravLoop>>;

/// A loop of a traversal nest: the inter-op loop it comes from, with only
/// the statements of this instance.
struct TravLoop {
  ir::LoopKind kind = ir::LoopKind::Edges;
  std::string var;
  std::string parent; ///< Incoming/Outgoing
  std::vector<TravItem> body;
};

/// Thread mapping of a traversal (the seeds' schedule space).
enum class TravMapping {
  ThreadPerEdge, WarpPerEdge, ThreadPerVertex, WarpPerVertex, BlockPerVertex,
  BlockPerType,
};
const char *travMappingName(TravMapping m);

struct TravSchedule {
  TravMapping mapping = TravMapping::WarpPerEdge;
  int featureTile = 32; ///< feature elements per thread group pass
  /// Threads of the block a heavy row (a hub) runs on, when the emitter
  /// gives the nest a heavy launch; 0: the build's kHeavyGroupSize
  /// (templates/traversal/Traversal.h, 1024). Printed `heavy_group N`
  /// when set. Only warp_per_vertex nests have heavy rows.
  int heavyGroupSize = 0;
};

/// An instance of the traversal template (hector.txt Algorithm 2): one
/// edge-, pair-, node- or type-parallel loop nest.
struct TraversalInstance {
  std::string name;
  AccessScheme access = AccessScheme::None;
  TravSchedule schedule;
  std::unique_ptr<TravLoop> root;
};

/// Inter-op statements the interpreter runs (the lowest preference): a
/// loop nest in inter-op form.
struct FallbackInstance {
  std::string name;
  std::unique_ptr<TravLoop> root; ///< statements carry no reduction scheme
};

using Instance = std::variant<GemmInstance, TraversalInstance, FallbackInstance>;
const std::string &instanceName(const Instance &instance);

/// A lowered layer: layout decisions and instances in execution order.
struct Program {
  std::string name;                 ///< the module's name
  std::vector<ir::HyperDecl> hypers;
  std::vector<ValueLayout> layouts; ///< in the module's declaration order
  std::vector<Instance> instances;
  int numStmts = 0;                 ///< statements of the inter-op module

  const ValueLayout *findLayout(const std::string &value) const;
};

/// Calls `fn(stmt)` for every TravStmt of a nest in order.
template <typename Fn> void forEachTravStmt(const TravLoop &loop, Fn &&fn) {
  for (const TravItem &item : loop.body) {
    if (const auto *s = std::get_if<TravStmt>(&item))
      fn(*s);
    else
      forEachTravStmt(*std::get<std::unique_ptr<TravLoop>>(item), fn);
  }
}

/// Whether view `l` is a sum that a GEMM of `program` adds into its
/// addend's buffer in place (passes/LowerToIntraOp accumulateIntoAddend):
/// the view's statement is one of the GEMM's and its output is the view.
/// The GEMM, not the view, computes that statement.
bool isAccumulatedView(const Program &program, const ValueLayout &l);

/// The CSR order (DstCsrRows or SrcCsrRows) in which edge value `value`
/// of `program` may be stored: every access to it is a statement of one
/// traversal, at the variable of an enclosing incoming loop (or of an
/// outgoing loop, all of one kind) with no attribute path, and every
/// write is plain. Then each access knows its edge's CSR position. Nothing
/// where a GEMM, a fallback, a view, a hoisted statement or a second
/// traversal touches it.
std::optional<RowScheme> csrOrderOf(const Program &program,
                                    const std::string &value);

/// Prints the deterministic textual form (the golden-test format).
std::string printProgram(const Program &program);

/// Checks the invariants: every statement id in [0, numStmts) is lowered
/// exactly once (by a GEMM, a traversal, a fallback, or a view), instance
/// names are unique, every instance field is consistent (a segmented GEMM
/// has a sliced weight, atomic only with accumulation, an epilogue only in
/// linear mode, a traversal's access scheme matches its loops, reductions
/// only on reduction statements), and every value an instance reads is an
/// input, param or graph value, or written by an earlier instance or by
/// itself (through views). Reports violations to `diags`.
bool verifyProgram(const Program &program, ir::DiagnosticEngine &diags);

/// Whether `g` is a sum over edges that may run summed by (destination,
/// relation) segment (GemmInstance::summedBySegment) as far as its shape
/// goes: linear, `x[e.src]` times `W[e.etype]` added atomically into
/// `h[e.dst]`, no bias, output parts or row dot. The lowering sets the flag
/// where this holds (and the scale is segment-constant); the verifier
/// rejects the flag where it does not.
bool isSegmentSumShape(const GemmInstance &g);
/// Whether `g`'s epilogue scalar, if any, is the same on every edge of a
/// (destination, relation) segment: rel_in_degree[e], one per row.
bool hasSegmentConstantScale(const GemmInstance &g);

} // namespace hector::intra
