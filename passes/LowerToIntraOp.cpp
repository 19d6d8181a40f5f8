#include "passes/LowerToIntraOp.h"

#include "ir/InterIRVerifier.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>

namespace hector::passes {
namespace {

using intra::GemmInstance;
using intra::ReductionScheme;
using intra::RowAccess;
using intra::RowDomain;
using intra::Storage;
using intra::TravItem;
using intra::TravLoop;
using intra::TravStmt;

/// A statement of the module with the loops around it.
struct StmtInfo {
  int id = -1;
  const ir::Stmt *stmt = nullptr;
  const ir::Loop *loop = nullptr;  ///< innermost enclosing loop
  const ir::Loop *outer = nullptr; ///< the node loop around an incoming /
                                   ///< outgoing loop; null at the top level
  int nest = -1;                   ///< index of the top-level loop
};

void collectStmts(const ir::Loop &loop, const ir::Loop *outer, int nest,
                  std::vector<StmtInfo> &out) {
  for (const ir::BodyItem &item : loop.body) {
    if (const auto *s = std::get_if<ir::Stmt>(&item))
      out.push_back({static_cast<int>(out.size()), s, &loop, outer, nest});
    else
      collectStmts(*std::get<std::unique_ptr<ir::Loop>>(item), &loop, nest,
                   out);
  }
}

bool isEdgeSubLoop(ir::LoopKind k) {
  return k == ir::LoopKind::Incoming || k == ir::LoopKind::Outgoing;
}

/// The step from an incoming (outgoing) loop's edge to its parent node.
ir::Attr parentStep(ir::LoopKind k) {
  return k == ir::LoopKind::Incoming ? ir::Attr::Dst : ir::Attr::Src;
}

/// An access rewritten relative to the innermost loop's variable: inside
/// `n.incoming`, `x[n]` is `x[e.dst]` (inside `n.outgoing`, `x[e.src]`).
RowAccess normalize(const ir::Access &a, const ir::Loop &loop) {
  RowAccess r;
  r.value = a.value;
  if (a.index.isGlobal()) {
    r.global = true;
    return r;
  }
  if (a.index.var != loop.var && isEdgeSubLoop(loop.kind))
    r.path.push_back(parentStep(loop.kind));
  r.path.insert(r.path.end(), a.index.attrs.begin(), a.index.attrs.end());
  return r;
}

RowDomain domainOf(const ir::Loop &loop) {
  switch (ir::loopVarSpace(loop.kind)) {
  case ir::Space::Edge: return RowDomain::Edges;
  case ir::Space::Pair: return RowDomain::Pairs;
  case ir::Space::Node: return RowDomain::Nodes;
  case ir::Space::EdgeType: return RowDomain::EdgeTypes;
  case ir::Space::NodeType: return RowDomain::NodeTypes;
  case ir::Space::Global: break;
  }
  return RowDomain::Edges;
}

bool isTypeSpace(ir::Space s) {
  return s == ir::Space::EdgeType || s == ir::Space::NodeType;
}

/// Every op the traversal template implements (elementwise, dot, row-local
/// reshape/concat/slice, and per-row vector x matrix products). Kept as a
/// predicate so that scan 3 has a single place to grow from.
bool traversalSupports(const ir::Stmt &) { return true; }

/// What runs a statement.
enum class UnitKind { Gemm, Traversal, Fallback, View };

/// The scheduling unit of one nest: a GEMM instance (its statements), a
/// single traversal or fallback statement, or a view.
struct Unit {
  UnitKind kind = UnitKind::Traversal;
  std::vector<int> stmts;
  int nest = -1;
  int phase = 0;
  std::optional<GemmInstance> gemm;
  std::set<int> deps; ///< units of the same nest this one reads from
};

class Lowering {
public:
  Lowering(const ir::Module &m, const LoweringOptions &o)
      : module_(m), options_(o) {}

  intra::Program run();

private:
  const ir::ValueDecl &decl(const std::string &name) const {
    return *module_.findValue(name);
  }
  void indexModule();
  // Scan 1.
  std::optional<GemmInstance> matchGemm(const StmtInfo &info) const;
  bool dstRowProductInTraversal(const GemmInstance &g) const;
  bool isDstRowProduct(const GemmInstance &g) const;
  bool runsPerChunk(const GemmInstance &g) const;
  void fuseEpilogue(GemmInstance &g, const StmtInfo &info);
  bool readsRowOnce(const StmtInfo &r, const StmtInfo &gemm,
                    const std::string &row) const;
  bool biasInEpilogue(GemmInstance &g, const StmtInfo &sum,
                      const std::string &row);
  bool cutIntoParts(GemmInstance &g, const StmtInfo &gemm,
                    const std::string &row, const std::vector<int> &readers);
  bool scaleInEpilogue(GemmInstance &g, const StmtInfo &consumer,
                       const std::string &row);
  bool accumulateIntoAddend(GemmInstance &g, const StmtInfo &sum,
                            const std::string &row);
  std::vector<int> mixInEpilogue(GemmInstance &g, const StmtInfo &gemm,
                                 const StmtInfo &scaled,
                                 const std::string &row);
  const StmtInfo *soleUnloweredReader(const std::string &value,
                                      const StmtInfo &gemm) const;
  const ir::Access *otherRowOperand(const StmtInfo &s,
                                    const std::string &other) const;
  const StmtInfo *unloweredWriter(const std::string &value,
                                  const StmtInfo &gemm) const;
  std::optional<RowAccess>
  mixGateOf(const std::string &gate, const StmtInfo &gemm,
            const std::vector<ir::Attr> &segmentBy) const;
  const StmtInfo *gateComplement(const std::string &gate,
                                 const StmtInfo &scaled,
                                 const StmtInfo &gemm) const;
  bool mixableRows(const ir::Access &y, const std::string &row,
                   const StmtInfo &gemm) const;
  bool rowDotInEpilogue(GemmInstance &g, const StmtInfo &gemm);
  bool opOnInput(GemmInstance &g, const StmtInfo &gemm);
  void sumBySegment(GemmInstance &g) const;
  bool isEdgeWeight(const GemmInstance &g) const;
  bool storedInEntryOrder(const intra::ValueLayout &l) const;
  std::optional<intra::RowScheme>
  csrOrderToStore(const intra::ValueLayout &l) const;
  void accumulatePartialsIntoSums();
  /// A partial's GEMM for accumulatePartialsIntoSums, and what it can do.
  struct PartialGemm {
    int unit = -1;
    bool earlierNest = false; ///< of a nest before the sum's
    bool plain = false;       ///< no bias or epilogue; adds or writes a row
    bool writesWhole = false; ///< linear, one output row per row, no adding
    bool adds = false;        ///< linear, adds into its output, no bias
    /// The GEMM's output when `partial` is a reshape of it (RGAT's
    /// `h_1 = reshape(h_0)` of the heads' sums); empty otherwise.
    std::string reshaped;
  };
  PartialGemm partialGemm(const std::string &partial,
                          const StmtInfo &sum) const;
  bool startOutputAsRow(const StmtInfo &sum, const ir::Access &partial,
                        const PartialGemm &p, const ir::Access &row);
  std::string reshapeRoot(const std::string &value) const;
  // Scans 2 and 3.
  std::string viewRoot(const std::string &value) const;
  void computeDeps();
  void computePhases(const std::vector<int> &nestUnits);
  bool sinkable(int unit) const;
  void sinkToReaders(const std::vector<int> &nestUnits);
  std::vector<int> orderNest(const std::vector<int> &nestUnits) const;
  void emitNest(const std::vector<int> &ordered);
  void emitTraversal(const std::vector<int> &stmts, UnitKind kind);
  std::unique_ptr<TravLoop> buildNest(const ir::Loop &loop,
                                      const std::set<int> &stmts) const;
  void hoist(TravLoop &loop);
  void assignStorage();
  void finishTraversal(intra::TraversalInstance &t);

  const ir::Module &module_;
  const LoweringOptions &options_;
  std::vector<StmtInfo> infos_;
  std::map<const ir::Stmt *, int> idOf_;
  std::map<std::string, int> writer_;               ///< value -> stmt
  std::map<std::string, std::vector<int>> readers_; ///< value -> stmts
  std::vector<int> unitOf_;                         ///< stmt -> unit
  std::vector<Unit> units_;
  std::map<std::string, std::string> viewOf_; ///< view -> source value
  std::set<std::string> gemmRegisters_;       ///< fused GEMM intermediates
  /// Buffers a GEMM accumulates into in place (accumulateIntoAddend).
  std::set<std::string> accumulatedInPlace_;
  intra::Program program_;
  std::map<int, std::string> instanceOfStmt_;
  /// Where each traversal statement ended up (after hoisting).
  struct Placement {
    TravLoop *loop = nullptr;   ///< the loop whose body holds it
    TravLoop *origin = nullptr; ///< hoisted: the loop it came from
    TravStmt *stmt = nullptr;
  };
  std::map<int, Placement> placement_;
};

void Lowering::indexModule() {
  for (size_t i = 0; i < module_.loops.size(); ++i)
    collectStmts(*module_.loops[i], nullptr, static_cast<int>(i), infos_);
  for (const StmtInfo &info : infos_) {
    idOf_[info.stmt] = info.id;
    writer_[info.stmt->target.value] = info.id;
    std::set<std::string> read;
    for (const ir::Operand &op : info.stmt->operands)
      if (const auto *a = std::get_if<ir::Access>(&op))
        if (read.insert(a->value).second)
          readers_[a->value].push_back(info.id);
  }
  unitOf_.assign(infos_.size(), -1);
}

// ------------------------------------------------------------------ scan 1

/// The most scalars per edge a product over the destination's own row may
/// make and still run in the traversal (one per head of an attention
/// logit).
constexpr int64_t kMaxDstRowProductWidth = 4;

/// Whether a linear that a GEMM would run is better left to the traversal:
/// a narrow product of the edge's destination row, one scalar per head per
/// edge (RGAT's `alpha_0[e] = linear(x[e.dst], w[e.etype])`). As a GEMM it
/// gathers the destination's whole row once per edge; a traversal over the
/// destination's in-edges reads that row once and keeps it in cache for
/// every edge of the node (perf-notes 34).
bool Lowering::dstRowProductInTraversal(const GemmInstance &g) const {
  if (!options_.traversal || !isDstRowProduct(g))
    return false;
  const std::optional<int64_t> width =
      (g.n * g.heads).evaluate(ir::declaredIntHypers(module_.hypers));
  return width && *width <= kMaxDstRowProductWidth;
}

/// Whether `g` is a linear of the edge's destination row written plainly
/// at the edge (`t[e] = linear(x[e.dst], W[..])`), of any width.
bool Lowering::isDstRowProduct(const GemmInstance &g) const {
  return g.mode == GemmInstance::Mode::Linear && g.rows == RowDomain::Edges &&
         g.accumulate == ir::Reduce::None && g.output.isIdentity() &&
         !g.input.global &&
         g.input.path == std::vector<ir::Attr>{ir::Attr::Dst};
}

/// Whether a narrow product of the destination row that
/// dstRowProductInTraversal keeps out of a per-edge GEMM, `t[e] =
/// linear(x[e.dst], W[e.etype])`, runs once a chunk of the graph's summed
/// (destination, relation) segments instead (GemmInstance::perChunk): it
/// is the same on every edge of a segment. RGAT's destination score
/// `x[dst] . W_r q` was a 64-long dot an edge in the softmax traversal,
/// which read 512 bytes an edge from L1 (docs/perf-notes.md section 65).
/// Only with fusion, for a temp that is not saved and that nothing but
/// traversal statements read, at the edge itself.
bool Lowering::runsPerChunk(const GemmInstance &g) const {
  using A = ir::Attr;
  if (!options_.fuse || g.segmentBy != std::vector<A>{A::EType} ||
      !g.output.path.empty())
    return false;
  const ir::ValueDecl &t = decl(g.output.value);
  if (t.kind != ir::ValueKind::Temp || t.space != ir::Space::Edge ||
      options_.saved.count(t.name))
    return false;
  const auto readers = readers_.find(t.name);
  if (readers == readers_.end())
    return false;
  for (int id : readers->second) {
    const StmtInfo &r = infos_[id];
    const ir::OpKind op = r.stmt->op;
    if (op == ir::OpKind::Linear || op == ir::OpKind::LinearT ||
        op == ir::OpKind::Outer || op == ir::OpKind::Reshape)
      return false; // a GEMM or a view would read it by edge id
    for (const ir::Operand &o : r.stmt->operands)
      if (const auto *a = std::get_if<ir::Access>(&o);
          a && a->value == t.name && !normalize(*a, *r.loop).isIdentity())
        return false;
  }
  return true;
}

std::optional<GemmInstance> Lowering::matchGemm(const StmtInfo &info) const {
  const ir::Stmt &s = *info.stmt;
  const bool linear = s.op == ir::OpKind::Linear || s.op == ir::OpKind::LinearT;
  if (!linear && s.op != ir::OpKind::Outer)
    return std::nullopt;
  if (s.operands.size() != 2)
    return std::nullopt;
  const auto *a = std::get_if<ir::Access>(&s.operands[0]);
  const auto *b = std::get_if<ir::Access>(&s.operands[1]);
  if (!a || !b || a->index.isGlobal())
    return std::nullopt;

  GemmInstance g;
  g.rows = domainOf(*info.loop);
  g.input = normalize(*a, *info.loop);
  g.weight = normalize(*b, *info.loop);
  g.output = normalize(s.target, *info.loop);
  g.accumulate = s.reduce;
  g.heads = ir::Dim::constant(1);
  g.stmts = {info.id};
  const ir::Shape &aShape = decl(a->value).shape;
  const ir::Shape &bShape = decl(b->value).shape;
  if (aShape.empty() || bShape.empty())
    return std::nullopt;

  if (linear) {
    if (s.reduce != ir::Reduce::None && s.reduce != ir::Reduce::Sum)
      return std::nullopt;
    // The weight: shared, or one slice per type reached from the row.
    const ir::Space ws = decl(b->value).space;
    if (ws == ir::Space::Global)
      g.segmentBy = std::nullopt;
    else if (isTypeSpace(ws))
      g.segmentBy = g.weight.path;
    else
      return std::nullopt;
    g.atomic = !g.output.isIdentity();
    if (s.op == ir::OpKind::LinearT) {
      g.transposeWeight = true;
      if (bShape.size() == 2) {
        g.n = bShape[0];
        g.k = bShape[1];
      } else if (bShape.size() == 3 && aShape.size() >= 2) {
        g.perHead = true;
        g.heads = bShape[0];
        g.n = bShape[1];
        g.k = bShape[2];
      } else {
        return std::nullopt;
      }
    } else if (bShape.size() == 2) {
      g.k = bShape[0];
      g.n = bShape[1];
    } else if (bShape.size() == 3 && aShape.size() >= 2) {
      g.perHead = true;
      g.heads = bShape[0];
      g.k = bShape[1];
      g.n = bShape[2];
    } else {
      return std::nullopt;
    }
    return g;
  }

  // Outer products: a weight-gradient reduction over the rows of each
  // segment (the rows are the contraction axis).
  const ir::Space ts = decl(s.target.value).space;
  if (s.reduce != ir::Reduce::Sum || b->index.isGlobal() ||
      (ts != ir::Space::Global && !isTypeSpace(ts)) || aShape.size() > 2)
    return std::nullopt;
  g.mode = GemmInstance::Mode::Outer;
  if (ts == ir::Space::Global)
    g.segmentBy = std::nullopt;
  else
    g.segmentBy = g.output.path;
  g.atomic = true; // tiles of one segment's rows meet in one weight slice
  g.k = aShape.back();
  g.n = bShape.back();
  if (aShape.size() == 2) {
    g.perHead = true;
    g.heads = aShape[0];
  }
  return g;
}

/// Extends a plain linear GEMM with what follows it in the same loop, when
/// the GEMM's result (and each value on the way) is read by nothing else
/// and is neither an output nor saved for the backward:
/// - reshapes (views of the row);
/// - a bias, `add(row, b)` with b a weight row (biasInEpilogue), after
///   which the chain goes on;
/// - then one of: a gated mix with another row (mixInEpilogue); a
///   consumer that scales its rows by a scalar (scaleInEpilogue) or adds
///   them to an addend summed earlier (accumulateIntoAddend), these two
///   only without a bias; or slices that cut the row into equal parts, each
///   written to its own buffer (cutIntoParts; several readers).
void Lowering::fuseEpilogue(GemmInstance &g, const StmtInfo &info) {
  if (g.mode != GemmInstance::Mode::Linear ||
      g.accumulate != ir::Reduce::None)
    return;
  std::vector<int> chain;          // reshapes not yet absorbed
  std::vector<std::string> hidden; // values that stay in the GEMM's registers
  std::string cur = info.stmt->target.value;
  // Takes the reshapes so far and `stmts` into the GEMM.
  auto absorb = [&](const std::vector<int> &stmts) {
    g.stmts.insert(g.stmts.end(), chain.begin(), chain.end());
    g.stmts.insert(g.stmts.end(), stmts.begin(), stmts.end());
    gemmRegisters_.insert(hidden.begin(), hidden.end());
    chain.clear();
    hidden.clear();
  };
  for (;;) {
    if (decl(cur).kind == ir::ValueKind::Output || options_.saved.count(cur))
      return;
    auto it = readers_.find(cur);
    if (it == readers_.end())
      return;
    if (it->second.size() > 1) {
      hidden.push_back(cur);
      if (chain.empty() && cutIntoParts(g, info, cur, it->second))
        absorb(it->second);
      return;
    }
    const StmtInfo &r = infos_[it->second.front()];
    if (!readsRowOnce(r, info, cur))
      return;
    hidden.push_back(cur);
    if (r.stmt->op == ir::OpKind::Reshape) {
      chain.push_back(r.id);
      cur = r.stmt->target.value;
      continue;
    }
    if (!g.bias && r.stmt->op == ir::OpKind::Add && biasInEpilogue(g, r, cur)) {
      absorb({r.id});
      cur = r.stmt->target.value;
      continue;
    }
    if (r.stmt->op == ir::OpKind::Mul) {
      const std::vector<int> mixed = mixInEpilogue(g, info, r, cur);
      if (!mixed.empty()) {
        absorb(mixed);
        return;
      }
    }
    if (g.bias)
      return; // a bias is followed by a gated mix, slices or nothing
    // The consumer: a per-row scaling (the epilogue) or a sum (in place).
    const bool absorbed = r.stmt->op == ir::OpKind::Add
                              ? accumulateIntoAddend(g, r, cur)
                              : scaleInEpilogue(g, r, cur);
    if (absorbed)
      absorb({r.id});
    return;
  }
}

/// Whether `r`, a statement of the GEMM statement `gemm`'s loop that comes
/// after it and is not lowered yet, reads `row` exactly once, as the row
/// itself.
bool Lowering::readsRowOnce(const StmtInfo &r, const StmtInfo &gemm,
                            const std::string &row) const {
  if (r.loop != gemm.loop || r.id < gemm.id || unitOf_[r.id] != -1)
    return false;
  int uses = 0;
  for (const ir::Operand &op : r.stmt->operands)
    if (const auto *a = std::get_if<ir::Access>(&op))
      if (a->value == row) {
        if (!normalize(*a, *r.loop).isIdentity())
          return false;
        ++uses;
      }
  return uses == 1;
}

/// `add(row, b)` (either order) after a linear GEMM whose result is `row`,
/// with b a weight of the row's shape, shared or taken by the GEMM's
/// segment key (HGT's `kqv_bias[n.ntype]`): the bias of the GEMM's
/// epilogue, and the sum's target its output.
bool Lowering::biasInEpilogue(GemmInstance &g, const StmtInfo &sum,
                              const std::string &row) {
  const ir::Stmt &c = *sum.stmt;
  if (c.operands.size() != 2 || c.reduce != ir::Reduce::None || g.perHead ||
      g.epilogue)
    return false;
  const auto *x = std::get_if<ir::Access>(&c.operands[0]);
  const auto *y = std::get_if<ir::Access>(&c.operands[1]);
  if (!x || !y)
    return false;
  const ir::Access &b = x->value == row ? *y : *x;
  if (b.value == row || decl(b.value).kind != ir::ValueKind::Param ||
      decl(b.value).shape != decl(row).shape ||
      !normalize(c.target, *sum.loop).isIdentity())
    return false;
  const RowAccess bias = normalize(b, *sum.loop);
  if (!bias.global && (!g.segmentBy || bias.path != *g.segmentBy))
    return false;
  g.bias = bias;
  g.output = normalize(c.target, *sum.loop);
  return true;
}

/// The readers of a linear GEMM's row `row`, when they are 2 to 4 slices
/// of the row that cut it into equal parts in order (start i * size, size
/// n / parts) and write whole rows: the GEMM's output parts (HGT's k, q and
/// v out of one kqv projection, which a traversal copied out before).
bool Lowering::cutIntoParts(GemmInstance &g, const StmtInfo &gemm,
                            const std::string &row,
                            const std::vector<int> &readers) {
  if (g.perHead || g.epilogue || readers.size() < 2 || readers.size() > 4)
    return false;
  std::vector<const StmtInfo *> slices;
  for (int id : readers) {
    const StmtInfo &r = infos_[id];
    if (r.stmt->op != ir::OpKind::Slice || r.stmt->reduce != ir::Reduce::None ||
        !readsRowOnce(r, gemm, row) ||
        !normalize(r.stmt->target, *r.loop).isIdentity())
      return false;
    slices.push_back(&r);
  }
  const ir::Dim size = slices.front()->stmt->sliceSize;
  const auto parts = static_cast<int64_t>(slices.size());
  if (!(ir::Dim::constant(parts) * size == g.n))
    return false;
  std::vector<RowAccess> outputs(slices.size());
  std::vector<bool> taken(slices.size(), false);
  for (const StmtInfo *r : slices) {
    if (!(r->stmt->sliceSize == size))
      return false;
    int64_t part = -1;
    for (int64_t i = 0; i < parts; ++i)
      if (r->stmt->sliceStart == ir::Dim::constant(i) * size)
        part = i;
    if (part < 0 || taken[part])
      return false;
    taken[part] = true;
    outputs[part] = normalize(r->stmt->target, *r->loop);
  }
  g.outputParts = outputs;
  g.output = outputs.front();
  return true;
}

/// The one statement that reads `value`, when it is in the loop of the
/// GEMM statement `gemm`, after it, not lowered yet, and `value` is a temp
/// that no backward keeps, read as the row itself; else null.
const StmtInfo *Lowering::soleUnloweredReader(const std::string &value,
                                              const StmtInfo &gemm) const {
  const auto it = readers_.find(value);
  if (decl(value).kind != ir::ValueKind::Temp || options_.saved.count(value) ||
      it == readers_.end() || it->second.size() != 1)
    return nullptr;
  const StmtInfo &r = infos_[it->second.front()];
  return readsRowOnce(r, gemm, value) ? &r : nullptr;
}

/// The gated skip after a plain linear GEMM whose finished row is `row`
/// (HGT's `h = gate * a + (1 - gate) * x`, as the frontend writes it):
///   gate = sigmoid(p[seg])        p a [] param sliced by the segment key
///   h_0 = mul(gate, row)          `scaled`, the row's one reader
///   h_1 = sub(1, gate)
///   h_2 = mul(h_1, y)             y a row of row's shape, at the GEMM's row
///   h = add(h_0, h_2)
/// (each product and the sum in either order), where gate, h_0, h_1 and h_2
/// are temps read only there: the epilogue's mix (GemmInstance::mix), so
/// that row is never written and read back. HGT-PyG's inference program:
/// a node traversal that read a and x and wrote h (0.56 ms of am's 5.9)
/// goes. A training forward keeps a for the backward (options_.saved), so
/// fuseEpilogue stops before this. Returns the statements absorbed, or
/// none.
std::vector<int> Lowering::mixInEpilogue(GemmInstance &g, const StmtInfo &gemm,
                                         const StmtInfo &scaled,
                                         const std::string &row) {
  if (g.mode != GemmInstance::Mode::Linear ||
      g.accumulate != ir::Reduce::None || g.perHead || g.epilogue ||
      !g.outputParts.empty() || g.rowDot || g.summedBySegment || g.perChunk ||
      !g.segmentBy || !g.output.isIdentity())
    return {};
  // gate = sigmoid(p[seg]), read by h_0 (`scaled`) and h_1 only.
  const ir::Access *gateAcc = otherRowOperand(scaled, row);
  if (!gateAcc || decl(gateAcc->value).kind != ir::ValueKind::Temp ||
      options_.saved.count(gateAcc->value))
    return {};
  const std::string gate = gateAcc->value;
  const std::optional<RowAccess> gateRow = mixGateOf(gate, gemm, *g.segmentBy);
  if (!gateRow)
    return {};
  const StmtInfo *complement = gateComplement(gate, scaled, gemm);
  if (!complement)
    return {};
  const std::string &complementRow = complement->stmt->target.value;
  // h_2 = mul(h_1, y), h_1's one reader.
  const StmtInfo *skipped = soleUnloweredReader(complementRow, gemm);
  if (!skipped || skipped->stmt->op != ir::OpKind::Mul ||
      unloweredWriter(skipped->stmt->target.value, gemm) != skipped)
    return {};
  const ir::Access *y = otherRowOperand(*skipped, complementRow);
  if (!y || !mixableRows(*y, row, gemm))
    return {};
  // h = add(h_0, h_2), the one reader of both.
  const std::string &scaledRow = scaled.stmt->target.value;
  const std::string &skippedRow = skipped->stmt->target.value;
  const StmtInfo *sum = soleUnloweredReader(scaledRow, gemm);
  if (!sum || sum->stmt->op != ir::OpKind::Add ||
      soleUnloweredReader(skippedRow, gemm) != sum ||
      unloweredWriter(scaledRow, gemm) != &scaled)
    return {};
  const ir::Access *other = otherRowOperand(*sum, scaledRow);
  if (!other || other->value != skippedRow ||
      !normalize(sum->stmt->target, *sum->loop).isIdentity() ||
      !(decl(sum->stmt->target.value).shape == decl(row).shape))
    return {};
  g.mix = intra::GemmMix{*gateRow, normalize(*y, *skipped->loop)};
  g.output = normalize(sum->stmt->target, *sum->loop);
  gemmRegisters_.insert({gate, scaledRow, complementRow, skippedRow});
  std::vector<int> ids = {unloweredWriter(gate, gemm)->id, scaled.id,
                          complement->id, skipped->id, sum->id};
  std::sort(ids.begin(), ids.end());
  return ids;
}

/// The access of `s`'s two operands that is not `other`, when `s` is a
/// plain two-operand statement reading both at its loop's own row.
const ir::Access *Lowering::otherRowOperand(const StmtInfo &s,
                                            const std::string &other) const {
  const ir::Stmt &st = *s.stmt;
  if (st.operands.size() != 2 || st.reduce != ir::Reduce::None)
    return nullptr;
  const auto *x = std::get_if<ir::Access>(&st.operands[0]);
  const auto *y = std::get_if<ir::Access>(&st.operands[1]);
  if (!x || !y || !normalize(*x, *s.loop).isIdentity() ||
      !normalize(*y, *s.loop).isIdentity())
    return nullptr;
  if (x->value == other && y->value != other)
    return y;
  if (y->value == other && x->value != other)
    return x;
  return nullptr;
}

/// The statement that writes `value` at its own row, when it is in the
/// GEMM statement `gemm`'s loop and not lowered yet; else null.
const StmtInfo *Lowering::unloweredWriter(const std::string &value,
                                          const StmtInfo &gemm) const {
  const auto w = writer_.find(value);
  if (w == writer_.end())
    return nullptr;
  const StmtInfo &s = infos_[w->second];
  return s.loop == gemm.loop && unitOf_[s.id] == -1 &&
                 normalize(s.stmt->target, *s.loop).isIdentity()
             ? &s
             : nullptr;
}

/// A gated mix's gate: `gate = sigmoid(p[seg])` in `gemm`'s loop, with p
/// a [] param taken by the GEMM's segment key `segmentBy`; p's access, or
/// nullopt.
std::optional<RowAccess>
Lowering::mixGateOf(const std::string &gate, const StmtInfo &gemm,
                    const std::vector<ir::Attr> &segmentBy) const {
  const StmtInfo *def = unloweredWriter(gate, gemm);
  if (!def || def->stmt->op != ir::OpKind::Sigmoid ||
      def->stmt->reduce != ir::Reduce::None || def->stmt->operands.size() != 1)
    return std::nullopt;
  const auto *logit = std::get_if<ir::Access>(&def->stmt->operands[0]);
  if (!logit || decl(logit->value).kind != ir::ValueKind::Param ||
      !decl(logit->value).shape.empty())
    return std::nullopt;
  const RowAccess row = normalize(*logit, *def->loop);
  if (row.global || row.path != segmentBy)
    return std::nullopt;
  return row;
}

/// `h_1 = sub(1, gate)`: the other of gate's exactly two readers (one is
/// `scaled`), in `gemm`'s loop, writing h_1 at its own row; else null.
const StmtInfo *Lowering::gateComplement(const std::string &gate,
                                         const StmtInfo &scaled,
                                         const StmtInfo &gemm) const {
  const auto readers = readers_.find(gate);
  if (readers == readers_.end() || readers->second.size() != 2)
    return nullptr;
  const int id =
      readers->second[0] == scaled.id ? readers->second[1] : readers->second[0];
  const StmtInfo &c = infos_[id];
  const ir::Stmt &cs = *c.stmt;
  const auto *one = cs.operands.size() == 2
                        ? std::get_if<ir::ScalarExpr>(&cs.operands[0])
                        : nullptr;
  const auto *gateRead = cs.operands.size() == 2
                             ? std::get_if<ir::Access>(&cs.operands[1])
                             : nullptr;
  if (cs.op != ir::OpKind::Sub || cs.reduce != ir::Reduce::None || !one ||
      one->kind != ir::ScalarExpr::Kind::Literal || one->literal != 1.0 ||
      !gateRead || gateRead->value != gate || !readsRowOnce(c, gemm, gate) ||
      unloweredWriter(cs.target.value, gemm) != &c)
    return nullptr;
  return &c;
}

/// Whether `y` can be a gated mix's rows against the GEMM row `row`: of
/// row's shape and space, and there before the GEMM runs (an input, or a
/// value an earlier loop nest writes).
bool Lowering::mixableRows(const ir::Access &y, const std::string &row,
                           const StmtInfo &gemm) const {
  const ir::ValueDecl &yd = decl(y.value);
  if (y.value == row || !(yd.shape == decl(row).shape) ||
      yd.space != decl(row).space)
    return false;
  const auto w = writer_.find(y.value);
  return yd.kind == ir::ValueKind::Input ||
         (w != writer_.end() && infos_[w->second].nest < gemm.nest);
}

/// A reader `linear(row, w)` of a plain linear GEMM's finished output row,
/// with w a shared weight [n, m]: the GEMM's row dot, computed from the row
/// in the epilogue instead of read back from memory by a GEMM of its own
/// (RGAT's attention term `alpha_1 = linear(outj, k)`, next to the
/// message outj). Unlike fuseEpilogue's consumers, the row stays an output
/// that others may read. Rows that hold several [k] inputs (heads folded
/// into rows, GemmEmitter's foldedRows) keep the separate GEMM: their
/// template rows are not the row the dot reads.
bool Lowering::rowDotInEpilogue(GemmInstance &g, const StmtInfo &gemm) {
  if (g.mode != GemmInstance::Mode::Linear || g.mix ||
      g.accumulate != ir::Reduce::None || g.perHead || !g.outputParts.empty() ||
      !g.output.isIdentity())
    return false;
  const std::string &row = g.output.value;
  const ir::Shape &rowShape = decl(row).shape;
  const ir::Shape &inShape = decl(g.input.value).shape;
  if (rowShape.size() != 1 || !(rowShape[0] == g.n) || inShape.size() != 1 ||
      !(inShape[0] == g.k))
    return false;
  auto it = readers_.find(row);
  if (it == readers_.end())
    return false;
  for (int id : it->second) {
    const StmtInfo &r = infos_[id];
    const ir::Stmt &s = *r.stmt;
    if (s.op != ir::OpKind::Linear || s.reduce != ir::Reduce::None ||
        s.operands.size() != 2 || !readsRowOnce(r, gemm, row))
      continue;
    const auto *x = std::get_if<ir::Access>(&s.operands[0]);
    const auto *w = std::get_if<ir::Access>(&s.operands[1]);
    if (!x || !w || x->value != row)
      continue;
    const ir::ValueDecl &wd = decl(w->value);
    if (wd.kind != ir::ValueKind::Param || wd.space != ir::Space::Global ||
        wd.shape.size() != 2 || !(wd.shape[0] == g.n))
      continue;
    const RowAccess out = normalize(s.target, *r.loop);
    if (!out.isIdentity())
      continue;
    g.rowDot = intra::GemmRowDot{normalize(*w, *r.loop), out, wd.shape[1]};
    g.stmts.push_back(id);
    return true;
  }
  return false;
}

/// `a[n] = gelu(t[n])` before a linear GEMM of the same loop that alone
/// reads a, at its own row: the GEMM reads t and applies gelu to each
/// input element as it loads it (GemmInstance::inputOp), so a is never
/// written. HGT-PyG's `linear(gelu(agg), out_lin_weight)` in its inference
/// program: a traversal that read and wrote a 256-byte row a node (0.40
/// ms of am's 6.37) goes. A kept a (the backward's) stays a row.
bool Lowering::opOnInput(GemmInstance &g, const StmtInfo &gemm) {
  if (g.mode != GemmInstance::Mode::Linear || g.summedBySegment || g.perChunk ||
      !g.input.isIdentity())
    return false;
  const std::string a = g.input.value; // a copy: the input changes below
  const ir::ValueDecl &ad = decl(a);
  const auto w = writer_.find(a);
  const auto readers = readers_.find(a);
  if (ad.kind != ir::ValueKind::Temp || options_.saved.count(a) ||
      w == writer_.end() || readers == readers_.end() ||
      readers->second != std::vector<int>{gemm.id})
    return false;
  const StmtInfo &op = infos_[w->second];
  const ir::Stmt &s = *op.stmt;
  const auto *t = s.operands.size() == 1
                      ? std::get_if<ir::Access>(&s.operands[0])
                      : nullptr;
  if (s.op != ir::OpKind::Gelu || s.reduce != ir::Reduce::None || !t ||
      op.loop != gemm.loop || op.id > gemm.id || unitOf_[op.id] != -1 ||
      !normalize(*t, *op.loop).isIdentity() ||
      !(decl(t->value).shape == ad.shape))
    return false;
  g.input = normalize(*t, *op.loop);
  g.inputOp = ir::OpKind::Gelu;
  g.stmts.insert(g.stmts.begin(), op.id);
  gemmRegisters_.insert(a);
  return true;
}

/// A linear GEMM over edges that adds `x[e.src] W[e.etype]`, divided or
/// multiplied by rel_in_degree[e] or not, atomically into `h[e.dst]`
/// (RGCN's messages, fused with their sum when they are not compacted):
/// run it summed by (destination, relation) segment, one template row per
/// chunk of a segment's edges instead of one per edge
/// (GemmInstance::summedBySegment). The rows' gathered inputs are summed
/// before the multiply, so the products and the atomic adds drop from one
/// per edge to one per chunk (docs/perf-notes.md section 55).
///
/// A per-edge multiplier that is not the same on a segment (an attention
/// weight alpha[e], one per edge or per head) becomes the rows' weights
/// instead (GemmInstance::sumWeights): each edge's gathered row is added
/// times its weight before the multiply (section 62). Per-head weights
/// on a row cut into heads make the heads the template's: each reads the
/// same input row and its own columns of the weight (headsInColumns). A
/// GEMM with per-head weight matrices (HGT's v_rel) keeps its heads, each
/// head's input weighed by its own weight.
void Lowering::sumBySegment(GemmInstance &g) const {
  if (!intra::isSegmentSumShape(g))
    return;
  if (isEdgeWeight(g)) {
    const intra::GemmEpilogue epi = *g.epilogue;
    g.epilogue.reset();
    g.sumWeights = epi.scalar;
    // Per-head weights keep their heads; a row cut into heads takes the
    // heads from the weight's columns.
    if (epi.perHead && !g.perHead) {
      const ir::Shape &row = decl(g.output.value).shape; // [heads, n]
      g.heads = row.front();
      g.n = row.back();
      g.headsInColumns = true;
    }
    g.summedBySegment = true;
    return;
  }
  // The scalar must be the same on a whole segment: the relation's
  // in-degree of the destination (the graph value, not a value of that
  // name) is.
  if (!intra::hasSegmentConstantScale(g) ||
      (g.epilogue &&
       decl(g.epilogue->scalar.value).kind != ir::ValueKind::Graph))
    return;
  g.summedBySegment = true;
}

/// Whether the buffer of `l` can be stored in the order of the graph's
/// summed entries (RowScheme::EntryRows): an edge temp that a traversal
/// writes plainly, that traversals read, and that GEMMs read only as the
/// weights of their summed rows. Those GEMMs then read the weights in
/// order instead of gathering each entry's through its edge id (on mag,
/// 21M dependent loads in the GEMM's row staging); the traversals store
/// and load through sum_edge_entry instead, which does not stall them.
bool Lowering::storedInEntryOrder(const intra::ValueLayout &l) const {
  if (l.decl.kind != ir::ValueKind::Temp || l.decl.space != ir::Space::Edge ||
      l.storage != Storage::Buffer || options_.saved.count(l.decl.name))
    return false;
  const auto w = writer_.find(l.decl.name);
  if (w == writer_.end() || unitOf_[w->second] < 0 ||
      units_[unitOf_[w->second]].kind != UnitKind::Traversal ||
      infos_[w->second].stmt->reduce != ir::Reduce::None)
    return false;
  bool weighs = false;
  for (const Unit &u : units_) {
    if (u.kind != UnitKind::Gemm)
      continue;
    const GemmInstance &g = *u.gemm;
    for (const RowAccess *r : g.reads())
      if (r->value == l.decl.name && (!g.sumWeights || r != &*g.sumWeights))
        return false;
    for (const RowAccess *o : g.writes())
      if (o->value == l.decl.name)
        return false;
    weighs = weighs || (g.sumWeights && g.sumWeights->value == l.decl.name);
  }
  const auto readers = readers_.find(l.decl.name);
  if (readers != readers_.end())
    for (int id : readers->second) {
      const Unit &u = units_[unitOf_[id]];
      if (u.kind != UnitKind::Traversal && u.kind != UnitKind::Gemm)
        return false;
    }
  return weighs;
}

/// The CSR order (RowScheme::DstCsrRows, SrcCsrRows) the buffer of `l`
/// can be stored in, that of the CSR its one traversal walks: an edge
/// temp that no backward keeps, accessed only at the edges of that
/// traversal's incoming (or outgoing) loops. A softmax's scores and
/// exponentials are. Stored by edge id, a warp's lanes would each touch
/// their own 32-byte sector where the edges are not numbered in that
/// CSR's order (a layer with per-edge values runs on the given
/// numbering), and would load each edge id first.
std::optional<intra::RowScheme>
Lowering::csrOrderToStore(const intra::ValueLayout &l) const {
  if (l.decl.kind != ir::ValueKind::Temp ||
      l.rows != intra::RowScheme::EdgeRows || l.storage != Storage::Buffer ||
      options_.saved.count(l.decl.name) ||
      accumulatedInPlace_.count(l.decl.name))
    return std::nullopt;
  return intra::csrOrderOf(program_, l.decl.name);
}

/// Whether `g`'s epilogue multiplies by a computed per-edge value read at
/// the edge (not a graph value), [] or one per head of an output row
/// [heads, n]: a weight sumBySegment can move into the summed rows.
bool Lowering::isEdgeWeight(const GemmInstance &g) const {
  if (!g.epilogue || g.epilogue->op != ir::OpKind::Mul ||
      g.rows != intra::RowDomain::Edges)
    return false;
  const RowAccess &w = g.epilogue->scalar;
  const ir::ValueDecl &d = decl(w.value);
  if (d.kind == ir::ValueKind::Graph || d.space != ir::Space::Edge ||
      w.global || !w.path.empty())
    return false;
  // A GEMM with per-head weight matrices takes one weight a head: the
  // template reads sumWeights[j * H + h], so a scalar one would not do.
  if (g.perHead)
    return g.epilogue->perHead;
  return !g.epilogue->perHead || decl(g.output.value).shape.size() == 2;
}

/// The scaling consumer of a linear GEMM's row `row`: `mul(row, s)`,
/// `mul(s, row)` or `div(row, s)` with `s` a per-row (or per-head) scalar
/// becomes the GEMM's epilogue, and the consumer's target (reduced or not)
/// its output.
bool Lowering::scaleInEpilogue(GemmInstance &g, const StmtInfo &consumer,
                               const std::string &row) {
  const ir::Stmt &c = *consumer.stmt;
  if ((c.op != ir::OpKind::Mul && c.op != ir::OpKind::Div) ||
      c.operands.size() != 2)
    return false;
  if (c.reduce != ir::Reduce::None && c.reduce != ir::Reduce::Sum)
    return false;
  const auto *x = std::get_if<ir::Access>(&c.operands[0]);
  const auto *y = std::get_if<ir::Access>(&c.operands[1]);
  if (!x || !y)
    return false;
  const ir::Access *scalar = nullptr;
  if (x->value == row)
    scalar = y;
  else if (c.op == ir::OpKind::Mul && y->value == row)
    scalar = x;
  if (!scalar || scalar->value == row)
    return false;
  const ir::Shape &rowShape = decl(row).shape;
  const ir::Shape &sShape = decl(scalar->value).shape;
  intra::GemmEpilogue epi;
  epi.op = c.op;
  epi.scalar = normalize(*scalar, *consumer.loop);
  if (sShape.empty())
    epi.perHead = false;
  else if (rowShape.size() >= 2 &&
           sShape == ir::Shape(rowShape.begin(), rowShape.end() - 1))
    epi.perHead = true;
  else
    return false;
  GemmInstance scaled = g;
  scaled.epilogue = epi;
  scaled.output = normalize(c.target, *consumer.loop);
  scaled.accumulate = c.reduce;
  scaled.atomic = !scaled.output.isIdentity();
  // The template scales head h by the scalar's entry h: a row cut into
  // heads by a reshape, of a GEMM with one head, takes per-head scalars
  // only as the weights of a segment sum (sumBySegment).
  if (epi.perHead && !g.perHead &&
      !(intra::isSegmentSumShape(scaled) && isEdgeWeight(scaled)))
    return false;
  g = std::move(scaled);
  return true;
}

/// The value whose buffer `value` shares through a chain of reshapes (the
/// views scan 2 makes), or `value` itself.
std::string Lowering::reshapeRoot(const std::string &value) const {
  std::string v = value;
  for (auto w = writer_.find(v); w != writer_.end(); w = writer_.find(v)) {
    const ir::Stmt &s = *infos_[w->second].stmt;
    if (s.op != ir::OpKind::Reshape)
      break;
    v = std::get<ir::Access>(s.operands[0]).value;
  }
  return v;
}

/// `sum[r] = add(row[r], addend[r])` (either order) after a linear GEMM
/// whose result is `row`: the GEMM adds into the addend's buffer instead
/// (`sum[r] +=`, no atomics: one output row per GEMM row), and `sum`
/// becomes a view of the addend. The autodiff writes a gradient reached
/// two ways as such a sum (RGAT's grad_outj = grad1_outj + grad2_outj over
/// every pair), and its traversal read two rows and wrote a third. Only
/// when nothing but the sum (and the reshapes that view it) reads the
/// addend's buffer, which the GEMM overwrites, and when both are temps
/// that are not saved for the backward.
bool Lowering::accumulateIntoAddend(GemmInstance &g, const StmtInfo &sum,
                                    const std::string &row) {
  const ir::Stmt &c = *sum.stmt;
  if (c.operands.size() != 2 || c.reduce != ir::Reduce::None)
    return false;
  const auto *x = std::get_if<ir::Access>(&c.operands[0]);
  const auto *y = std::get_if<ir::Access>(&c.operands[1]);
  if (!x || !y)
    return false;
  const ir::Access &addend = x->value == row ? *y : *x;
  if (addend.value == row || !normalize(addend, *sum.loop).isIdentity() ||
      !normalize(c.target, *sum.loop).isIdentity())
    return false;
  // The addend is complete before this loop nest starts (written in an
  // earlier one): in the same nest the sum fuses into the addend's own
  // traversal instead.
  const std::string root = reshapeRoot(addend.value);
  const auto rootWriter = writer_.find(root);
  if (rootWriter == writer_.end() ||
      infos_[rootWriter->second].nest >= sum.nest)
    return false;
  for (const std::string &v : {addend.value, c.target.value, root}) {
    if (decl(v).kind != ir::ValueKind::Temp || options_.saved.count(v))
      return false;
  }
  const ir::ValueDecl &a = decl(addend.value), &s = decl(c.target.value);
  if (a.shape != s.shape || a.space != s.space)
    return false;
  for (const auto &[value, readers] : readers_) {
    if (reshapeRoot(value) != root)
      continue;
    for (int id : readers) {
      const ir::Stmt &reader = *infos_[id].stmt;
      if (id != sum.id && !(reader.op == ir::OpKind::Reshape &&
                            reshapeRoot(reader.target.value) == root))
        return false;
    }
  }
  g.output = normalize(c.target, *sum.loop);
  g.accumulate = ir::Reduce::Sum;
  g.atomic = false;
  viewOf_[c.target.value] = addend.value;
  accumulatedInPlace_.insert(root);
  return true;
}

/// The GEMM unit that writes `partial`, for accumulatePartialsIntoSums,
/// and how it can take part: `partial` is a temp that is not saved, of the
/// sum's shape and space, read by the sum alone, and the output (no parts
/// or row dot) of a GEMM of the sum's nest or an earlier one, or a reshape
/// of such an output (of any shape with as many elements) that only the
/// reshape reads. unit -1: none.
Lowering::PartialGemm Lowering::partialGemm(const std::string &partial,
                                            const StmtInfo &sum) const {
  PartialGemm none;
  const ir::ValueDecl &p = decl(partial), &s = decl(sum.stmt->target.value);
  if (p.kind != ir::ValueKind::Temp || options_.saved.count(partial) ||
      p.shape != s.shape || p.space != s.space)
    return none;
  const auto readers = readers_.find(partial);
  if (readers == readers_.end() || readers->second != std::vector<int>{sum.id})
    return none;
  auto w = writer_.find(partial);
  if (w == writer_.end())
    return none;
  std::string reshaped;
  if (const ir::Stmt &r = *infos_[w->second].stmt;
      r.op == ir::OpKind::Reshape && unitOf_[w->second] < 0) {
    const std::string &in = std::get<ir::Access>(r.operands[0]).value;
    const auto inReaders = readers_.find(in);
    const ir::ValueDecl &d = decl(in);
    if (d.kind != ir::ValueKind::Temp || options_.saved.count(in) ||
        d.space != s.space || inReaders == readers_.end() ||
        inReaders->second != std::vector<int>{w->second} ||
        !normalize(r.target, *infos_[w->second].loop).isIdentity())
      return none;
    reshaped = in;
    w = writer_.find(in);
    if (w == writer_.end())
      return none;
  }
  if (unitOf_[w->second] < 0)
    return none;
  const int u = unitOf_[w->second];
  const Unit &unit = units_[u];
  if (unit.kind != UnitKind::Gemm || unit.nest > sum.nest)
    return none;
  const GemmInstance &g = *unit.gemm;
  if (g.output.value != (reshaped.empty() ? partial : reshaped) ||
      !g.outputParts.empty() || g.rowDot)
    return none;
  PartialGemm out;
  out.unit = u;
  out.reshaped = reshaped;
  out.earlierNest = unit.nest < sum.nest;
  const bool adds =
      g.mode == GemmInstance::Mode::Outer || g.accumulate == ir::Reduce::Sum;
  out.plain = !g.bias && !g.epilogue && (adds || g.output.isIdentity());
  out.writesWhole = g.mode == GemmInstance::Mode::Linear &&
                    g.accumulate == ir::Reduce::None && !g.atomic &&
                    g.output.isIdentity();
  out.adds = g.mode == GemmInstance::Mode::Linear &&
             g.accumulate == ir::Reduce::Sum && !g.bias;
  return out;
}

/// `sum[r] = add(a[r], b[r])` in a loop over every row of its space, where
/// a and b are each the whole output of a GEMM and nothing else reads them
/// (partialGemm). Two forms:
/// - Both GEMMs plain and of earlier nests: both add into the sum's
///   buffer, zero-filled once. The autodiff writes a gradient reached two
///   ways as such a sum (RGAT-PyG's grad_x = grad1_x + grad2_x over every
///   node, one partial from the edges' attention logits, one from the
///   messages): its traversal read two rows and wrote a third, and each
///   partial had a zero-filled buffer of its own. A linear GEMM that wrote
///   its rows plainly now adds them (one output row per GEMM row: no
///   atomics).
/// - One GEMM writes one output row per row (a bias or an epilogue
///   allowed) and the other adds into its output (an epilogue allowed,
///   atomics too): the first writes the sum's buffer, the second adds into
///   it after it, and nothing is zero-filled (codegen's ProgramLayout sees
///   the first write cover every row). RGCN's forward, reassociated
///   (passes/BiasReassociation.h): `h = add(h_0, h_3)` with h_3 = x root +
///   bias and h_0 the messages' GEMM summed by segment. Its traversal read
///   two rows and wrote a third, and h_0 was zero-filled (am: 1.4 GB of the
///   forward's 3.4).
/// Either way a and b become views of the sum, and the sum needs no loop of
/// its own: the later GEMM lowers its statement. A third form starts the
/// adding GEMM's output as a bias row (startOutputAsRow). Only for an output
/// that nothing in the program reads, since the reads-after-writes order of the
/// intra IR sees the sum written through its partials' views only.
void Lowering::accumulatePartialsIntoSums() {
  for (const StmtInfo &info : infos_) {
    const ir::Stmt &c = *info.stmt;
    if (unitOf_[info.id] != -1 || c.op != ir::OpKind::Add ||
        c.operands.size() != 2 || c.reduce != ir::Reduce::None ||
        info.outer != nullptr || isEdgeSubLoop(info.loop->kind))
      continue;
    const auto *x = std::get_if<ir::Access>(&c.operands[0]);
    const auto *y = std::get_if<ir::Access>(&c.operands[1]);
    const ir::ValueDecl &sum = decl(c.target.value);
    if (!x || !y || x->value == y->value || sum.kind != ir::ValueKind::Output ||
        readers_.count(sum.name) ||
        ir::loopVarSpace(info.loop->kind) != sum.space ||
        !normalize(c.target, *info.loop).isIdentity())
      continue;
    const bool xRow = normalize(*x, *info.loop).isIdentity();
    const bool yRow = normalize(*y, *info.loop).isIdentity();
    const PartialGemm px = xRow ? partialGemm(x->value, info) : PartialGemm{};
    const PartialGemm py = yRow ? partialGemm(y->value, info) : PartialGemm{};
    // A shared row (read globally) and a partial: the third form.
    if ((xRow && !yRow && startOutputAsRow(info, *x, px, *y)) ||
        (yRow && !xRow && startOutputAsRow(info, *y, py, *x)))
      continue;
    if (!xRow || !yRow || px.unit < 0 || py.unit < 0 || px.unit == py.unit)
      continue;
    int last = -1;
    if (px.plain && py.plain && px.earlierNest && py.earlierNest) {
      for (int u : {px.unit, py.unit}) {
        GemmInstance &g = *units_[u].gemm;
        if (g.mode == GemmInstance::Mode::Linear &&
            g.accumulate == ir::Reduce::None) {
          g.accumulate = ir::Reduce::Sum;
          g.atomic = false;
        }
      }
      last = units_[px.unit].nest > units_[py.unit].nest ? px.unit : py.unit;
    } else {
      const PartialGemm *writes = px.writesWhole && py.adds   ? &px
                                  : py.writesWhole && px.adds ? &py
                                                              : nullptr;
      if (!writes)
        continue;
      const PartialGemm &adds = writes == &px ? py : px;
      if (units_[writes->unit].nest > units_[adds.unit].nest)
        continue; // the adds would run first and be overwritten
      if (units_[writes->unit].nest == units_[adds.unit].nest)
        units_[adds.unit].deps.insert(writes->unit); // deps are per nest
      last = adds.unit;
    }
    viewOf_[x->value] = sum.name;
    viewOf_[y->value] = sum.name;
    for (const PartialGemm *pg : {&px, &py})
      if (!pg->reshaped.empty())
        viewOf_[pg->reshaped] = sum.name;
    units_[last].stmts.push_back(info.id);
    units_[last].gemm->stmts.push_back(info.id);
    unitOf_[info.id] = last;
  }
}

/// The third form of accumulatePartialsIntoSums: `sum = add(partial, b)`
/// with `partial` the output of a GEMM that adds into it (partialGemm's
/// `adds`: atomics and an epilogue allowed) and b a shared param row of
/// the sum's shape (a bias). The GEMM's output starts as b in every row
/// (GemmInstance::initRow) instead of zeros, partial becomes a view of
/// the sum, and the GEMM lowers the sum's statement: RGAT-PyG's `h =
/// reshape(h_0) + bias` over the weighted summed GEMM, whose traversal
/// read the zero-filled sums and wrote h (am: 0.5 ms of the inference
/// program's 3.4).
bool Lowering::startOutputAsRow(const StmtInfo &sum, const ir::Access &partial,
                                const PartialGemm &p, const ir::Access &row) {
  if (p.unit < 0 || !p.adds || row.value == partial.value)
    return false;
  const ir::ValueDecl &b = decl(row.value);
  const ir::ValueDecl &s = decl(sum.stmt->target.value);
  if (b.kind != ir::ValueKind::Param || b.space != ir::Space::Global ||
      !row.index.isGlobal() || b.shape != s.shape)
    return false;
  GemmInstance &g = *units_[p.unit].gemm;
  if (g.initRow)
    return false;
  g.initRow = normalize(row, *sum.loop);
  viewOf_[partial.value] = s.name;
  if (!p.reshaped.empty())
    viewOf_[p.reshaped] = s.name;
  units_[p.unit].stmts.push_back(sum.id);
  g.stmts.push_back(sum.id);
  unitOf_[sum.id] = p.unit;
  return true;
}

// ------------------------------------------------------------ scans 2, 3

std::string Lowering::viewRoot(const std::string &value) const {
  std::string v = value;
  for (auto it = viewOf_.find(v); it != viewOf_.end(); it = viewOf_.find(v))
    v = it->second;
  return v;
}

void Lowering::computeDeps() {
  for (size_t u = 0; u < units_.size(); ++u) {
    Unit &unit = units_[u];
    if (unit.kind == UnitKind::View)
      continue;
    for (int id : unit.stmts)
      for (const ir::Operand &op : infos_[id].stmt->operands) {
        const auto *a = std::get_if<ir::Access>(&op);
        if (!a)
          continue;
        // The root's writer, and the writer of each view on the way that
        // is not a plain reshape (a GEMM that adds into its addend in
        // place writes the sum's view).
        for (std::string v = a->value;; v = viewOf_.at(v)) {
          auto w = writer_.find(v);
          if (w != writer_.end()) {
            const int d = unitOf_[w->second];
            if (d != static_cast<int>(u) && units_[d].nest == unit.nest &&
                units_[d].kind != UnitKind::View)
              unit.deps.insert(d);
          }
          if (!viewOf_.count(v))
            break;
        }
      }
  }
}

/// GEMM units take even phases, traversal and fallback units odd ones; a
/// unit runs no earlier than what it reads. GEMMs that read GEMMs share a
/// phase (they are ordered inside it), as do traversal statements that read
/// each other (they fuse); everything else moves to a later phase. This
/// ASAP placement keeps the traversal statements of a nest in as few
/// phases (= instances) as the GEMMs between them allow.
void Lowering::computePhases(const std::vector<int> &nestUnits) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (int u : nestUnits) {
      Unit &unit = units_[u];
      int phase = 0;
      for (int d : unit.deps) {
        const Unit &dep = units_[d];
        phase = std::max(phase, dep.kind == unit.kind ? dep.phase
                                                      : dep.phase + 1);
      }
      const int parity = unit.kind == UnitKind::Gemm ? 0 : 1;
      if (phase % 2 != parity)
        ++phase;
      if (phase != unit.phase) {
        unit.phase = phase;
        changed = true;
      }
    }
  }
}

/// Whether a unit may move to a later traversal (sinkToReaders): one plain
/// (not reducing) traversal statement at the top level of its nest, whose
/// output is not a module output.
bool Lowering::sinkable(int unit) const {
  const Unit &u = units_[unit];
  if (u.kind != UnitKind::Traversal || u.stmts.size() != 1)
    return false;
  const StmtInfo &info = infos_[u.stmts.front()];
  if (info.outer || info.stmt->reduce != ir::Reduce::None)
    return false;
  const ir::ValueDecl *d = module_.findValue(info.stmt->target.value);
  return d && d->kind != ir::ValueKind::Output;
}

/// computePhases places every traversal statement as early as it can
/// run, so a node statement that only a later traversal reads, as HGT's
/// skip term `h_2[n] = mul(h_1[n], x[n])` read after the out_lin GEMM,
/// lands in the earlier traversal and its row is stored there and loaded
/// again. Sinking moves such statements, as a group per phase, to the
/// first later phase that reads them, where their values can stay in
/// registers.
///
/// The group holds the sinkable units of a phase such that: no unit of
/// that phase outside the group reads one of them, and none of them reads
/// a value of that phase from outside the group (it would have to be
/// stored for the later phase); every reader outside the group is a
/// traversal of a later phase (a GEMM needs the row stored anyway); and no
/// unit staying in the phase loads a value one of them loads (it would be
/// loaded twice). It moves to the earliest of its outside readers' phases,
/// and only when one of its values then stops being stored: a temp that
/// no backward keeps, no other nest reads and only that phase reads.
void Lowering::sinkToReaders(const std::vector<int> &nestUnits) {
  std::map<int, std::vector<int>> readersOf;
  std::map<int, std::set<int>> groups; // phase -> its sinkable units
  for (int u : nestUnits) {
    for (int d : units_[u].deps)
      readersOf[d].push_back(u);
    if (sinkable(u))
      groups[units_[u].phase].insert(u);
  }
  // The values whose row of the nest's node (or edge) a unit loads:
  // `x[n]`, or `x[e.dst]` in n's incoming loop. Gathers of other rows
  // (`x[e.src]`) load other rows, and params are a few rows: left out.
  auto loads = [&](int u) {
    std::set<std::string> values;
    for (int id : units_[u].stmts) {
      const StmtInfo &info = infos_[id];
      for (const ir::Operand &op : info.stmt->operands) {
        const auto *a = std::get_if<ir::Access>(&op);
        if (!a || decl(a->value).kind == ir::ValueKind::Param)
          continue;
        const ir::Loop &top = info.outer ? *info.outer : *info.loop;
        const bool ownRow =
            (a->index.var == top.var && a->index.attrs.empty()) ||
            (info.outer && isEdgeSubLoop(info.loop->kind) &&
             a->index.var == info.loop->var &&
             a->index.attrs ==
                 std::vector<ir::Attr>{parentStep(info.loop->kind)});
        if (ownRow)
          values.insert(viewRoot(a->value));
      }
    }
    return values;
  };
  std::map<int, std::set<std::string>> loadsOf;
  for (int u : nestUnits)
    loadsOf[u] = loads(u);
  auto written = [&](int u) {
    return infos_[units_[u].stmts.front()].stmt->target.value;
  };
  for (auto &[phase, group] : groups) {
    // What the units staying in the phase load.
    std::set<std::string> stayingLoads;
    for (int u : nestUnits)
      if (units_[u].phase == phase && !group.count(u))
        stayingLoads.insert(loadsOf[u].begin(), loadsOf[u].end());
    int target = INT_MAX;
    for (bool changed = true; changed;) {
      changed = false;
      target = INT_MAX;
      std::set<std::string> groupWrites;
      for (int u : group)
        groupWrites.insert(written(u));
      for (auto it = group.begin(); it != group.end();) {
        bool keep = true;
        for (int r : readersOf[*it]) {
          if (group.count(r))
            continue;
          const Unit &reader = units_[r];
          keep = keep && reader.kind == UnitKind::Traversal &&
                 reader.phase > phase;
          target = std::min(target, reader.phase);
        }
        for (int d : units_[*it].deps)
          keep = keep && (group.count(d) || units_[d].phase < phase);
        for (const std::string &v : loadsOf[*it])
          keep = keep && (groupWrites.count(v) || !stayingLoads.count(v));
        if (keep) {
          ++it;
        } else {
          // Its loads stay in the phase; the others may not share them.
          stayingLoads.insert(loadsOf[*it].begin(), loadsOf[*it].end());
          it = group.erase(it);
          changed = true;
        }
      }
    }
    if (group.empty() || target == INT_MAX)
      continue;
    // A value that stops being stored: read by nothing but the group and
    // units of the target phase, in this nest, and kept by no backward.
    auto freed = [&](int u) {
      const std::string &v = written(u);
      if (decl(v).kind != ir::ValueKind::Temp || options_.saved.count(v) ||
          viewOf_.count(v))
        return false;
      auto rs = readers_.find(v);
      if (rs == readers_.end())
        return false;
      for (int id : rs->second) {
        const int r = unitOf_[id];
        if (units_[r].nest != units_[u].nest ||
            units_[r].kind != UnitKind::Traversal ||
            !(group.count(r) || units_[r].phase == target))
          return false;
      }
      return true;
    };
    if (std::none_of(group.begin(), group.end(), freed))
      continue;
    for (int u : group)
      units_[u].phase = target;
  }
}

/// A topological order of a nest's units by (phase, kind, first statement).
std::vector<int> Lowering::orderNest(const std::vector<int> &nestUnits) const {
  auto key = [&](int u) {
    return std::make_tuple(units_[u].phase, static_cast<int>(units_[u].kind),
                           units_[u].stmts.front());
  };
  std::vector<int> order, pending = nestUnits;
  std::set<int> done;
  while (!pending.empty()) {
    int best = -1;
    for (int u : pending) {
      bool ready = true;
      for (int d : units_[u].deps)
        ready = ready && done.count(d);
      if (ready && (best < 0 || key(u) < key(best)))
        best = u;
    }
    if (best < 0) // a cycle cannot happen in verified IR; keep going anyway
      best = pending.front();
    order.push_back(best);
    done.insert(best);
    pending.erase(std::find(pending.begin(), pending.end(), best));
  }
  return order;
}

std::unique_ptr<TravLoop> Lowering::buildNest(const ir::Loop &loop,
                                              const std::set<int> &stmts) const {
  auto out = std::make_unique<TravLoop>();
  out->kind = loop.kind;
  out->var = loop.var;
  out->parent = loop.parent;
  for (const ir::BodyItem &item : loop.body) {
    if (const auto *s = std::get_if<ir::Stmt>(&item)) {
      const int id = idOf_.at(s);
      if (!stmts.count(id))
        continue;
      TravStmt t;
      t.id = id;
      t.stmt = *s;
      out->body.emplace_back(std::move(t));
    } else {
      auto sub = buildNest(*std::get<std::unique_ptr<ir::Loop>>(item), stmts);
      if (!sub->body.empty())
        out->body.emplace_back(std::move(sub));
    }
  }
  return out;
}

/// A plain statement of an incoming/outgoing loop that reads only rows of
/// the parent node (or global values) runs once per node, in the node
/// body right before the loop it came from.
void Lowering::hoist(TravLoop &node) {
  std::vector<TravItem> body;
  for (TravItem &item : node.body) {
    auto *subp = std::get_if<std::unique_ptr<TravLoop>>(&item);
    if (!subp || !isEdgeSubLoop((*subp)->kind)) {
      body.push_back(std::move(item));
      continue;
    }
    TravLoop &sub = **subp;
    std::vector<TravItem> kept;
    for (TravItem &inner : sub.body) {
      auto *ts = std::get_if<TravStmt>(&inner);
      bool hoistable = ts && ts->stmt.reduce == ir::Reduce::None;
      if (hoistable)
        for (const ir::Operand &op : ts->stmt.operands)
          if (const auto *a = std::get_if<ir::Access>(&op)) {
            const RowAccess r = normalize(*a, *infos_[ts->id].loop);
            hoistable = hoistable &&
                        (r.global || (!r.path.empty() &&
                                      r.path.front() == parentStep(sub.kind)));
          }
      if (!hoistable) {
        kept.push_back(std::move(inner));
        continue;
      }
      for (ir::Operand &op : ts->stmt.operands)
        if (auto *a = std::get_if<ir::Access>(&op))
          if (a->index.var == sub.var) {
            a->index.var = node.var;
            a->index.attrs.erase(a->index.attrs.begin());
          }
      ts->hoisted = true;
      body.push_back(std::move(inner));
    }
    sub.body = std::move(kept);
    body.push_back(std::move(item));
  }
  node.body = std::move(body);
}

ReductionScheme reductionFor(const ir::Stmt &s, const TravLoop &loop,
                             const TravLoop *outer, const ir::Module &m) {
  if (s.reduce == ir::Reduce::None)
    return ReductionScheme::None;
  // Node-parallel over CSR/CSC: one thread group owns the node's edges.
  if (outer && isEdgeSubLoop(loop.kind) && s.target.index.var == outer->var &&
      s.target.index.attrs.empty())
    return ReductionScheme::Segmented;
  // Few target rows, many contributions each: aggregate before atomics.
  const ir::Space ts = m.findValue(s.target.value)->space;
  if (ts == ir::Space::Global || isTypeSpace(ts))
    return ReductionScheme::PartialAtomic;
  // A flat edge loop's sum into each edge's destination row: on edges
  // numbered by destination (runtime EdgeOrder::ByDst, what layers without
  // per-edge values run on) a group's run of one node's in-edges adds into
  // one accumulator and flushes it once. One atomic per edge would queue a
  // hub's in-edges on the same addresses.
  if (!outer && loop.kind == ir::LoopKind::Edges &&
      s.reduce == ir::Reduce::Sum && s.target.index.var == loop.var &&
      s.target.index.attrs == std::vector<ir::Attr>{ir::Attr::Dst})
    return ReductionScheme::PartialAtomic;
  return ReductionScheme::Atomic;
}

void Lowering::emitTraversal(const std::vector<int> &stmts, UnitKind kind) {
  const std::set<int> ids(stmts.begin(), stmts.end());
  const ir::Loop &top = *module_.loops[infos_[stmts.front()].nest];
  std::unique_ptr<TravLoop> root = buildNest(top, ids);
  const std::string index = std::to_string(program_.instances.size());
  if (kind == UnitKind::Fallback) {
    intra::FallbackInstance f;
    f.name = "fallback_" + index;
    f.root = std::move(root);
    for (int id : stmts)
      instanceOfStmt_[id] = f.name;
    program_.instances.emplace_back(std::move(f));
    return;
  }
  hoist(*root);
  intra::TraversalInstance t;
  t.name = "trav_" + index;
  t.root = std::move(root);
  for (int id : stmts)
    instanceOfStmt_[id] = t.name;
  program_.instances.emplace_back(std::move(t));
}

void Lowering::emitNest(const std::vector<int> &ordered) {
  for (size_t i = 0; i < ordered.size();) {
    const Unit &unit = units_[ordered[i]];
    if (unit.kind == UnitKind::Gemm) {
      GemmInstance g = *unit.gemm;
      g.name = "gemm_" + std::to_string(program_.instances.size());
      for (int id : g.stmts)
        instanceOfStmt_[id] = g.name;
      program_.instances.emplace_back(std::move(g));
      ++i;
      continue;
    }
    std::vector<int> stmts = unit.stmts;
    size_t j = i + 1;
    while (options_.fuse && j < ordered.size() &&
           units_[ordered[j]].kind == unit.kind &&
           units_[ordered[j]].phase == unit.phase) {
      stmts.insert(stmts.end(), units_[ordered[j]].stmts.begin(),
                   units_[ordered[j]].stmts.end());
      ++j;
    }
    emitTraversal(stmts, unit.kind);
    i = j;
  }
}

/// Records where every traversal statement sits (for the storage and
/// reduction decisions).
void recordPlacements(TravLoop &loop, TravLoop *outer,
                      std::map<int, TravStmt *> &stmts,
                      std::map<int, TravLoop *> &loops,
                      std::map<TravLoop *, TravLoop *> &parents) {
  parents[&loop] = outer;
  for (TravItem &item : loop.body) {
    if (auto *s = std::get_if<TravStmt>(&item)) {
      stmts[s->id] = s;
      loops[s->id] = &loop;
    } else {
      recordPlacements(*std::get<std::unique_ptr<TravLoop>>(item), &loop,
                       stmts, loops, parents);
    }
  }
}

/// The sub-loop a hoisted statement came from: the first edge loop after
/// it in its node body.
TravLoop *originOf(TravLoop &node, int id) {
  bool seen = false;
  for (TravItem &item : node.body) {
    if (auto *s = std::get_if<TravStmt>(&item))
      seen = seen || s->id == id;
    else if (seen)
      return std::get<std::unique_ptr<TravLoop>>(item).get();
  }
  return nullptr;
}

/// The heavy-row block of a node nest: 512 threads where a row runs two
/// or more edge loops (a softmax: maximum, sum, normalise), whose blocks
/// wait at a barrier between loops. Four such blocks fit on an SM where
/// two of 1024 did, so the SM has others to run while one waits: RGAT's
/// and HGT's steps ran 1.00x to 1.10x faster, mag's inference about 1.05x
/// (docs/perf-notes.md sections 67 and 68). A one-loop row (a sum) keeps
/// the build's default: RGCN's training lost up to 8% at 512 (section
/// 49d).
int heavyGroupSizeOf(const TravLoop &root) {
  constexpr int kMultiLoopHeavyGroupSize = 512;
  int edgeLoops = 0;
  for (const TravItem &item : root.body)
    if (std::holds_alternative<std::unique_ptr<TravLoop>>(item))
      ++edgeLoops;
  return edgeLoops >= 2 ? kMultiLoopHeavyGroupSize : 0;
}

void Lowering::finishTraversal(intra::TraversalInstance &t) {
  // Drop edge loops left empty by hoisting unless a hoisted statement
  // still stores its rows there.
  std::set<TravLoop *> storing;
  intra::forEachTravStmt(*t.root, [&](const TravStmt &s) {
    if (s.storeInInnerLoop)
      storing.insert(placement_.at(s.id).origin);
  });
  auto &body = t.root->body;
  body.erase(std::remove_if(body.begin(), body.end(),
                            [&](const TravItem &item) {
                              const auto *l =
                                  std::get_if<std::unique_ptr<TravLoop>>(&item);
                              return l && (*l)->body.empty() &&
                                     !storing.count(l->get());
                            }),
             body.end());
  bool incoming = false, outgoing = false;
  for (const TravItem &item : body)
    if (const auto *l = std::get_if<std::unique_ptr<TravLoop>>(&item)) {
      incoming = incoming || (*l)->kind == ir::LoopKind::Incoming;
      outgoing = outgoing || (*l)->kind == ir::LoopKind::Outgoing;
    }
  switch (t.root->kind) {
  case ir::LoopKind::Edges:
    t.access = intra::AccessScheme::Coo;
    t.schedule.mapping = intra::TravMapping::WarpPerEdge;
    break;
  case ir::LoopKind::Pairs:
    t.access = intra::AccessScheme::UniquePairs;
    t.schedule.mapping = intra::TravMapping::WarpPerEdge;
    break;
  case ir::LoopKind::EdgeTypes:
  case ir::LoopKind::NodeTypes:
    t.access = intra::AccessScheme::None;
    t.schedule.mapping = intra::TravMapping::BlockPerType;
    break;
  default:
    t.access = incoming && outgoing ? intra::AccessScheme::CsrAndCsc
               : incoming           ? intra::AccessScheme::CsrByDst
               : outgoing           ? intra::AccessScheme::CscBySrc
                                    : intra::AccessScheme::None;
    t.schedule.mapping = intra::TravMapping::WarpPerVertex;
    t.schedule.heavyGroupSize = heavyGroupSizeOf(*t.root);
    break;
  }
}

/// Layouts: row schemes from the spaces; views for unfused reshapes;
/// registers for fused GEMM intermediates and for traversal values read
/// only where (and at the row where) they are computed.
void Lowering::assignStorage() {
  // Where every traversal statement sits.
  std::map<int, TravStmt *> stmts;
  std::map<int, TravLoop *> loops;
  std::map<TravLoop *, TravLoop *> parents;
  for (intra::Instance &inst : program_.instances)
    if (auto *t = std::get_if<intra::TraversalInstance>(&inst))
      recordPlacements(*t->root, nullptr, stmts, loops, parents);
  for (auto &[id, s] : stmts) {
    Placement p;
    p.stmt = s;
    p.loop = loops[id];
    if (s->hoisted)
      p.origin = originOf(*p.loop, id);
    placement_[id] = p;
    s->reduction = reductionFor(s->stmt, *p.loop, parents[p.loop], module_);
  }

  // Readers through views: reading a view reads its root's buffer.
  std::map<std::string, std::vector<std::pair<int, std::string>>> reads;
  for (const StmtInfo &info : infos_)
    for (const ir::Operand &op : info.stmt->operands)
      if (const auto *a = std::get_if<ir::Access>(&op))
        reads[viewRoot(a->value)].push_back({info.id, a->value});

  auto registerCandidate = [&](const std::string &value) {
    const ir::ValueDecl &d = decl(value);
    if (d.kind != ir::ValueKind::Temp || viewOf_.count(value))
      return false;
    auto w = writer_.find(value);
    if (w == writer_.end() || !placement_.count(w->second))
      return false;
    const Placement &p = placement_.at(w->second);
    const ir::Stmt &ws = p.stmt->stmt;
    // The loop whose iteration owns the value's row.
    TravLoop *scope = nullptr;
    if (ws.reduce == ir::Reduce::None)
      scope = p.stmt->hoisted ? p.origin : p.loop;
    else if (p.stmt->reduction == ReductionScheme::Segmented)
      scope = parents.at(p.loop);
    if (!scope)
      return false;
    const std::string &inst = instanceOfStmt_.at(w->second);
    for (const auto &[rid, name] : reads[value]) {
      if (units_[unitOf_[rid]].kind == UnitKind::View)
        continue; // the view's own readers are in `reads` too
      if (instanceOfStmt_.at(rid) != inst || !placement_.count(rid))
        return false;
      const Placement &rp = placement_.at(rid);
      // Find the access, relative to the reader's loop.
      for (const ir::Operand &op : rp.stmt->stmt.operands) {
        const auto *a = std::get_if<ir::Access>(&op);
        if (!a || a->value != name)
          continue;
        const bool ownRow = a->index.var == scope->var && a->index.attrs.empty();
        const bool parentRow =
            isEdgeSubLoop(rp.loop->kind) && parents.at(rp.loop) == scope &&
            a->index.var == rp.loop->var && a->index.attrs.size() == 1 &&
            a->index.attrs[0] == parentStep(rp.loop->kind);
        // A hoisted value stands for every edge of its node's edge loops
        // of the same kind.
        const bool hoistedRow =
            p.stmt->hoisted && rp.loop->kind == scope->kind &&
            parents.at(rp.loop) == parents.at(scope) &&
            a->index.var == rp.loop->var && a->index.attrs.empty();
        if (!(ownRow && (rp.loop == scope || parents.at(rp.loop) == scope)) &&
            !parentRow && !hoistedRow)
          return false;
      }
    }
    return true;
  };

  // Saved values, the buffers their views share, and buffers a GEMM adds
  // into in place stay in memory.
  std::set<std::string> mustStore = accumulatedInPlace_;
  for (const std::string &v : options_.saved) {
    mustStore.insert(v);
    mustStore.insert(viewRoot(v));
  }
  for (const ir::ValueDecl &d : module_.values) {
    intra::ValueLayout l;
    l.decl = d;
    l.rows = intra::rowSchemeOf(d.space);
    if (auto v = viewOf_.find(d.name); v != viewOf_.end()) {
      l.storage = Storage::View;
      l.viewOf = v->second;
      l.viewStmt = writer_.at(d.name);
    } else if (auto w = writer_.find(d.name); w != writer_.end()) {
      l.producer = instanceOfStmt_.at(w->second);
      if (!mustStore.count(d.name) &&
          (gemmRegisters_.count(d.name) || registerCandidate(d.name)))
        l.storage = Storage::Register;
    }
    program_.layouts.push_back(l);
  }
  for (intra::ValueLayout &l : program_.layouts)
    if (storedInEntryOrder(l))
      l.rows = intra::RowScheme::EntryRows;
  // A per-chunk GEMM's output holds a row a chunk.
  for (const Unit &u : units_)
    if (u.kind == UnitKind::Gemm && u.gemm->perChunk)
      for (intra::ValueLayout &l : program_.layouts)
        if (l.decl.name == u.gemm->output.value)
          l.rows = intra::RowScheme::ChunkRows;
  for (intra::ValueLayout &l : program_.layouts)
    if (const std::optional<intra::RowScheme> order = csrOrderToStore(l))
      l.rows = *order;

  for (const intra::ValueLayout &l : program_.layouts) {
    auto w = writer_.find(l.decl.name);
    if (l.storage != Storage::Buffer || w == writer_.end() ||
        !placement_.count(w->second))
      continue;
    const Placement &p = placement_.at(w->second);
    if (p.stmt->hoisted)
      p.stmt->storeInInnerLoop = true;
  }
  for (intra::Instance &inst : program_.instances)
    if (auto *t = std::get_if<intra::TraversalInstance>(&inst))
      finishTraversal(*t);
}

intra::Program Lowering::run() {
  indexModule();
  program_.name = module_.name;
  program_.hypers = module_.hypers;
  program_.numStmts = static_cast<int>(infos_.size());

  // Scan 1: GEMM instances, with their fused epilogues.
  for (const StmtInfo &info : infos_) {
    if (!options_.gemm || unitOf_[info.id] != -1)
      continue;
    std::optional<GemmInstance> g = matchGemm(info);
    if (!g)
      continue;
    if (dstRowProductInTraversal(*g)) {
      if (!runsPerChunk(*g))
        continue;
      g->perChunk = true;
    } else if (options_.traversal && isDstRowProduct(*g) && runsPerChunk(*g)) {
      // A wide one (HGT's q[dst] k_rel^T once its attention moved k_rel to
      // the destination side) is a GEMM either way: once a chunk instead
      // of once an edge, it writes a row a chunk, not one an edge. Its
      // readers are traversals, which read it at the edge's chunk.
      g->perChunk = true;
    } else if (options_.fuse) {
      fuseEpilogue(*g, info);
      rowDotInEpilogue(*g, info);
      sumBySegment(*g);
      opOnInput(*g, info);
    }
    Unit unit;
    unit.kind = UnitKind::Gemm;
    unit.stmts = g->stmts;
    unit.nest = info.nest;
    unit.gemm = std::move(g);
    for (int id : unit.stmts)
      unitOf_[id] = static_cast<int>(units_.size());
    units_.push_back(std::move(unit));
  }
  if (options_.fuse)
    accumulatePartialsIntoSums();
  // Scans 2 and 3: views, traversal statements, fallbacks.
  for (const StmtInfo &info : infos_) {
    if (unitOf_[info.id] != -1)
      continue;
    Unit unit;
    unit.nest = info.nest;
    unit.stmts = {info.id};
    if (info.stmt->op == ir::OpKind::Reshape) {
      unit.kind = UnitKind::View;
      viewOf_[info.stmt->target.value] =
          std::get<ir::Access>(info.stmt->operands[0]).value;
    } else if (options_.traversal && traversalSupports(*info.stmt)) {
      unit.kind = UnitKind::Traversal;
    } else {
      unit.kind = UnitKind::Fallback;
    }
    unitOf_[info.id] = static_cast<int>(units_.size());
    units_.push_back(std::move(unit));
  }
  computeDeps();
  for (size_t nest = 0; nest < module_.loops.size(); ++nest) {
    std::vector<int> nestUnits;
    for (size_t u = 0; u < units_.size(); ++u)
      if (units_[u].nest == static_cast<int>(nest) &&
          units_[u].kind != UnitKind::View)
        nestUnits.push_back(static_cast<int>(u));
    computePhases(nestUnits);
    if (options_.fuse)
      sinkToReaders(nestUnits);
    emitNest(orderNest(nestUnits));
  }
  assignStorage();
  return std::move(program_);
}

} // namespace

std::optional<intra::Program> lowerToIntraOp(const ir::Module &module,
                                             const LoweringOptions &options,
                                             ir::DiagnosticEngine &diags) {
  if (!ir::verifyModule(module, diags))
    return std::nullopt;
  intra::Program program = Lowering(module, options).run();
  if (!intra::verifyProgram(program, diags))
    return std::nullopt;
  return program;
}

LoweringSummary summarizeLowering(const intra::Program &program) {
  LoweringSummary s;
  for (const intra::Instance &inst : program.instances) {
    if (std::holds_alternative<intra::GemmInstance>(inst))
      ++s.gemm;
    else if (std::holds_alternative<intra::TraversalInstance>(inst))
      ++s.traversal;
    else
      ++s.fallback;
  }
  return s;
}

} // namespace hector::passes
