#include "codegen/TraversalEmitter.h"

#include "codegen/CodeWriter.h"
#include "codegen/ElementGroups.h"
#include "codegen/ElementPrinter.h"
#include "codegen/Naming.h"
#include "ir/InterIRPrinter.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace hector::codegen {
namespace {

using intra::ReductionScheme;
using intra::TravItem;
using intra::TravLoop;
using intra::TravStmt;

/// The value a segmented reduction starts from (max= from -inf).
const char *reductionIdentity(const TravStmt &s) {
  return s.stmt.reduce == ir::Reduce::Max
             ? "-hector::trav::infinity<scalar_t>()"
             : "scalar_t(0)";
}

bool isEdgeSubLoop(ir::LoopKind k) {
  return k == ir::LoopKind::Incoming || k == ir::LoopKind::Outgoing;
}

/// A loop body's statements when it has no nested loop; empty otherwise.
std::vector<const TravStmt *> statementsOf(const TravLoop &loop) {
  std::vector<const TravStmt *> stmts;
  for (const TravItem &item : loop.body) {
    const auto *s = std::get_if<TravStmt>(&item);
    if (!s)
      return {};
    stmts.push_back(s);
  }
  return stmts;
}

/// A loop variable in scope: its C++ name and what it ranges over.
struct Binding {
  std::string cpp;
  ir::Space space;
  /// Edge variables of an incoming/outgoing loop: the node variable they
  /// hang off (their dst/src is that node) and which end it is.
  std::string parent;
  std::optional<ir::Attr> parentEnd;
  /// Such an edge's CSR position (a local) and the prefix of the arrays
  /// that hold its attributes in that order ("dst_csr_" for incoming,
  /// "src_csr_" for outgoing; GraphArrays).
  std::string csrPos;
  std::string csrPrefix;
};

/// A per-thread-group scratch slot of `size` scalars, or, for the
/// per-worker copies of a worker-split edge loop, of `workers` (a local of
/// the kernel) copies `stride` scalars apart (a local too:
/// hector::trav::workerStride pads the copies so that the lanes of a warp
/// reach distinct shared-memory banks).
struct Slot {
  std::string name;
  ir::Dim size;
  std::string workers;
  std::string stride;
};

/// The local holding the distance between the workers' copies of the
/// per-worker slot `slot`.
std::string workerStrideOf(const std::string &slot) {
  return "hector_stride_" + slot;
}

/// An edge loop split over workers (Traversal.h): its worker count local,
/// the widest row it writes, and the statements whose per-row state each
/// worker keeps to itself.
struct WorkerLoop {
  int index = 0;
  std::string workers;              ///< "hector_workers_0"
  std::vector<std::string> widths;  ///< dimExpr of every target's row size
  std::vector<const TravStmt *> segmented;
  std::vector<std::string> registers; ///< roots of registers it writes
  std::string suffix() const { return std::to_string(index); }
};

/// Prints one traversal instance's row body. Its scratch slots and row
/// range are known on construction (the launch code needs them without
/// the body). Shared by both targets.
class NestPrinter {
public:
  NestPrinter(const ProgramLayout &layout, const intra::TraversalInstance &t)
      : layout_(layout), inst_(t),
        declaredHypers_(ir::declaredIntHypers(layout.program().hypers)),
        grouper_(layout, t), unstored_(grouper_.unstoredRegisters(*t.root)) {
    collectSlots();
    chooseRows();
    findHeavyRows();
  }

  void print(CodeWriter &w);

  const std::vector<Slot> &slots() const { return slots_; }
  const std::vector<WorkerLoop> &workerLoops() const { return workerLoops_; }
  /// Whether the instance adds with atomics (atomic or partial-atomic
  /// reductions): in deterministic mode it then runs as one thread group.
  bool hasAtomics() const;
  /// Partial-atomic accumulators (statement ids) and their targets.
  struct Partial {
    int id;
    std::string slot, target;
  };
  const std::vector<Partial> &partials() const { return partials_; }
  /// Whether the rows hold loops (a node's incoming or outgoing edges).
  bool hasNeighbourLoops() const {
    for (const TravItem &item : inst_.root->body)
      if (std::holds_alternative<std::unique_ptr<TravLoop>>(item))
        return true;
    return false;
  }
  /// The number of top-level rows ("g.num_edges").
  std::string rowCount() const { return rowCount_; }
  /// Whether the CUDA kernel takes a row queue (Traversal.h RowQueue): rows
  /// with neighbour loops cost as much as their degree, and its warp
  /// launch on the op's stream gives them out from a queue. Partial-atomic
  /// nests keep their contiguous chunks (their accumulators flush when the
  /// row changes).
  bool takesRowQueue() const {
    return hasNeighbourLoops() && partials_.empty();
  }
  /// Whether an edge loop holds a contraction whose terms a worker's lanes
  /// share (splitsInWorker): per-edge work that wants more lanes a row.
  bool hasLaneContractions() const;
  /// Whether `s` is a contraction whose terms a worker's lanes would
  /// share in a worker loop (stored plainly or into the worker's
  /// accumulator, not into storage it reads).
  bool sharesLaneTerms(const TravStmt &s) const;

  /// A node-row instance whose edge loops all go one way and are split
  /// over workers gets a second launch for its heavy rows (Traversal.h):
  /// the CSR pointers of that direction and the heavy-row list.
  struct HeavyRows {
    std::string ptr;     ///< "g.dst_ptr"
    std::string rows;    ///< "g.heavy_dst_rows"
    std::string count;   ///< "g.num_heavy_dst"
    std::string edgePtr; ///< "g.heavy_dst_edge_ptr"
  };
  const std::optional<HeavyRows> &heavyRows() const { return heavyRows_; }
  /// CUDA kernels: print the rows of either launch (kGroupSize says which).
  void bindHeavyRows() { bindHeavy_ = heavyRows_.has_value(); }
  bool bindsHeavyRows() const { return bindHeavy_; }

  /// Whether the heavy launch may share a hub's edges among several blocks
  /// (templates/traversal/HubSplit.h): every edge loop is split over
  /// workers (so each takes a span of the row's edges) and no statement
  /// adds with atomics (the statements after a loop run in every part).
  bool splitsHubs() const { return splitsHubs_; }
  /// The combining slots a split heavy row needs: the summed row sizes of
  /// every segmented reduction (an expression of the hypers).
  std::string hubWidth() const { return dimExpr(hubWidth_); }

  /// Emits the flush of a partial accumulator into its target row.
  void printFlush(CodeWriter &w, const Partial &p) const;

private:
  void collectSlots();
  void findWorkerLoops();
  bool canSplitOverWorkers(const TravLoop &loop) const;
  void chooseRows();
  void findHeavyRows();
  void addSlot(const std::string &name, const ir::Dim &size,
               const std::string &workers = "");
  std::string rowExpr(const ir::IndexPath &path) const;
  std::string operandPtr(const ir::Access &a) const;
  /// The CSR position of the edge `a` reads, for a value stored in the
  /// order `rows` (DstCsrRows or SrcCsrRows).
  std::string csrPosition(const ir::Access &a, intra::RowScheme rows) const;
  std::string sizeOf(const std::string &value) const {
    return sizeLocal(value);
  }
  void printLoopBody(CodeWriter &w, const TravLoop &loop);
  void printSubLoop(CodeWriter &w, const TravLoop &loop,
                    const std::string &nodeVar);
  void printStmt(CodeWriter &w, const TravStmt &s);
  /// A statement's element loop in batches (HECTOR_FOR_ELEMENT_BATCHES),
  /// behind a quad loop where `quads` and its rows allow one
  /// (printQuadLoop).
  void printBatchLoop(CodeWriter &w, const ir::Stmt &stmt,
                      const ir::Shape &shape,
                      const std::vector<OperandRef> &ops,
                      const std::string &size, const std::string &store,
                      bool quads = true) const;
  /// `ops` with the row operands that `stmt` reads at element i alone
  /// renamed to their quads (q_<ptr>), whose names go to `quads`; none
  /// outside edge loops (worker-split, or flat loops over edges or pairs),
  /// or when the row is not a whole number of quads at the declared
  /// hypers.
  std::vector<OperandRef> quadOperands(const ir::Stmt &stmt,
                                       const ir::Shape &shape,
                                       const std::vector<OperandRef> &ops,
                                       std::vector<std::string> &quads) const;
  /// Whether the nest is a flat loop over edges or pairs (no loop inside).
  bool flatEdgeRows() const {
    return (inst_.root->kind == ir::LoopKind::Edges ||
            inst_.root->kind == ir::LoopKind::Pairs) &&
           !hasNeighbourLoops();
  }
  /// An element loop over quads of four elements a lane
  /// (HECTOR_FOR_ELEMENT_QUADS) that loads each of `quads`' rows a quad
  /// at a time (Traversal.h rowQuad) and runs `element` for each of the
  /// four elements i, where the rows allow it (quadRows); `fallback`
  /// otherwise. Without quads, `fallback` alone.
  void printQuadLoop(CodeWriter &w, const std::string &size,
                     const std::vector<std::string> &quads,
                     const std::function<void()> &element,
                     const std::function<void()> &fallback) const;
  /// A contraction in two forms: lanes splitting each element's terms
  /// (when splitsSum says so at run time), else the batch loop.
  void printSplitSum(CodeWriter &w, const ir::Stmt &stmt,
                     const ir::Shape &shape, const std::vector<OperandRef> &ops,
                     const std::string &size, const std::string &terms,
                     const std::string &store) const;
  /// An atomic statement in two forms: 16-byte atomics on quads of
  /// elements (when quadAccumulates holds for the row), else the batch
  /// loop.
  void printQuadAtomic(CodeWriter &w, const ir::Stmt &stmt,
                       const ir::Shape &shape,
                       const std::vector<OperandRef> &ops,
                       const std::string &size, const std::string &store) const;
  /// The terms each element sums when the statement may split them over
  /// the group's lanes (a contraction outside worker loops, stored plainly
  /// or atomically); std::nullopt otherwise.
  std::optional<std::string> splitsTerms(const TravStmt &s,
                                         const ir::Shape &shape,
                                         const std::vector<OperandRef> &ops) const;
  /// Whether `s`, in a worker loop, is a contraction its worker's lanes
  /// share (printWorkerSplit): stored plainly or into the worker's
  /// accumulator, not into storage it reads.
  bool splitsInWorker(const TravStmt &s) const;
  /// A worker-loop contraction `lead` (splitsInWorker) and what follows it
  /// for each element: every lane of the worker adds its share of element
  /// i's terms into v_s<lead>, the worker's lanes fold them with shuffles
  /// (the whole warp runs the element loop, active or not), and element
  /// i's own lane (i mod lanes, as in HECTOR_FOR_ELEMENTS) runs `rest`.
  /// With more lanes a worker than a warp (a block group's wide rows) the
  /// shuffles cannot fold them: the plain element loop, `plain`, runs.
  void printWorkerSplit(CodeWriter &w, const TravStmt &lead,
                        const std::vector<OperandRef> &ops,
                        const std::function<void()> &rest,
                        const std::function<void()> &plain) const;
  /// Prints statements that share one element loop (ElementGroups.h).
  void printGroup(CodeWriter &w, const ElementGroup &g);
  /// The members of `g` for element i; the lead's value is already in
  /// v_s<lead> when `leadSummed`.
  void printGroupMembers(CodeWriter &w, const ElementGroup &g,
                         const std::vector<std::vector<OperandRef>> &operands,
                         bool leadSummed) const;
  /// A broadcast member `s` of a group whose loop runs over rows of
  /// `whole` elements: its element at prefixIndex(i) into v_s<id>, and
  /// (`store`) that element stored where i is the first to read it.
  void printBroadcastMember(CodeWriter &w, const TravStmt &s,
                            const ir::Dim &whole,
                            const std::vector<OperandRef> &operands,
                            bool store) const;
  /// Prints consecutive statements of one loop body, grouped.
  void printStatements(CodeWriter &w,
                       const std::vector<const TravStmt *> &run);
  void printStmtComment(CodeWriter &w, const TravStmt &s) const;
  /// Declares `PREFIXk` pointing to each row operand k of `s` (k in
  /// `locals`: read from that local instead) and returns how the element
  /// code reads every operand.
  std::vector<OperandRef>
  declareOperands(CodeWriter &w, const TravStmt &s, const std::string &prefix,
                  const std::map<size_t, std::string> &locals) const;
  /// The row a plain or segmented statement writes (a worker's own
  /// accumulator for a segmented one in a worker loop).
  std::string plainTargetPtr(const TravStmt &s) const;
  /// Assigns or reduces `v` into element i of the row `t` points to.
  std::string plainStore(const TravStmt &s, const std::string &t,
                         const std::string &v) const;
  /// Opens the block of a statement or group: in a worker loop, a worker
  /// past its last edge skips it but still takes part in the group's syncs.
  void openActiveBlock(CodeWriter &w) const;
  /// Whether the statement reads storage it writes (same root value).
  bool sharesStorage(const ir::Stmt &stmt) const;
  void printSegmentedInit(CodeWriter &w, const TravLoop &sub);
  void printSegmentedFinish(CodeWriter &w, const TravLoop &sub,
                            const std::string &degree);
  void printWorkerLoop(CodeWriter &w, const TravLoop &loop,
                       const WorkerLoop &wl, const std::string &ptr,
                       const std::string &node);
  const WorkerLoop *workerLoopOf(const TravLoop &loop) const;
  std::string workerAccumulator(const TravStmt &s) const;
  /// Whether the row being printed may be a part of a split hub (CUDA
  /// heavy-capable kernels that split hubs).
  bool printsHubSpans() const { return bindHeavy_ && splitsHubs_; }
  /// After a worker loop's fold: a split hub's parts combine the loop's
  /// segmented reductions and wait for each other (HubSplit.h).
  void printHubCombine(CodeWriter &w, const WorkerLoop &wl);
  /// The fold of the workers' accumulators of a loop's segmented
  /// reduction `s` into its target row. Where the row may be a part of a
  /// split hub, a part adds its partial into the row's combining slot
  /// instead of storing it (parts share a buffer target's row, and must
  /// not see each other's partials); a whole row stores its sum: the
  /// target still holds the identity, since a value has one writing
  /// statement (docs/ir.md).
  void printWorkerFold(CodeWriter &w, const WorkerLoop &wl, const TravStmt &s);

  const ProgramLayout &layout_;
  const intra::TraversalInstance &inst_;
  /// The int hypers at their declared values (the kFixedHypers
  /// instantiation's), for choices by row width.
  std::map<std::string, int64_t> declaredHypers_;
  ElementGrouper grouper_;
  /// Registers whose value never leaves its element group: no slot.
  std::set<std::string> unstored_;
  std::map<std::string, Binding> scope_;
  std::vector<Slot> slots_;
  std::vector<Partial> partials_;
  std::vector<WorkerLoop> workerLoops_;
  std::map<const TravLoop *, size_t> workerLoopIndex_;
  /// The worker-split loop being printed (its segmented statements
  /// accumulate into per-worker copies).
  const WorkerLoop *inWorkerLoop_ = nullptr;
  /// Set while printing an edge loop body that repeats without a sync
  /// (ElementGrouper::repeatsWithoutSync): its one statement or group
  /// leaves the sync to the one after the loop.
  bool omitBodySync_ = false;
  /// Hoisted statements whose buffer target the next edge loop stores.
  std::vector<const TravStmt *> pendingStores_;
  std::string rowBinding_, rowCount_;
  std::optional<HeavyRows> heavyRows_;
  bool bindHeavy_ = false;
  bool splitsHubs_ = false;
  /// The combining slot offset of each segmented statement (by id), in
  /// the kernel's size locals; their total, for the host; and the barriers
  /// printed so far in the row (the next one's number).
  std::map<int, std::string> hubOffsets_;
  ir::Dim hubWidth_ = ir::Dim::constant(0);
  int hubBarriers_ = 0;
};

void NestPrinter::addSlot(const std::string &name, const ir::Dim &size,
                          const std::string &workers) {
  for (const Slot &s : slots_)
    if (s.name == name)
      return;
  slots_.push_back(Slot{name, size, workers,
                        workers.empty() ? "" : workerStrideOf(name)});
}

/// An edge loop can be split over workers when its edges are independent
/// apart from segmented and atomic reductions: only statements, no
/// partial-atomic accumulator (its flush follows one group's row order),
/// every plain write per edge, and no read of a row it is still reducing.
bool NestPrinter::canSplitOverWorkers(const TravLoop &loop) const {
  if (loop.body.empty())
    return false;
  std::vector<std::string> reducing;
  for (const TravItem &item : loop.body) {
    const auto *s = std::get_if<TravStmt>(&item);
    if (!s || s->reduction == ReductionScheme::PartialAtomic)
      return false;
    const std::string &target = s->stmt.target.value;
    if (s->reduction == ReductionScheme::None &&
        layout_.layout(target).decl.space != ir::Space::Edge)
      return false;
    if (s->hoisted)
      return false;
    if (s->reduction == ReductionScheme::Segmented)
      reducing.push_back(layout_.root(target));
  }
  for (const TravItem &item : loop.body)
    for (const ir::Operand &op : std::get<TravStmt>(item).stmt.operands)
      if (const auto *a = std::get_if<ir::Access>(&op))
        for (const std::string &r : reducing)
          if (layout_.root(a->value) == r)
            return false;
  return true;
}

void NestPrinter::findWorkerLoops() {
  // Hoisted statements store their node-level value to every edge row of
  // the next edge loop (printSubLoop): a loop with only such stores (an
  // empty body) splits over workers too, each worker storing its edges.
  std::vector<std::string> stores;
  for (const TravItem &item : inst_.root->body) {
    if (const auto *s = std::get_if<TravStmt>(&item)) {
      if (s->hoisted && s->storeInInnerLoop)
        stores.push_back(s->stmt.target.value);
      continue;
    }
    const auto &sub = std::get<std::unique_ptr<TravLoop>>(item);
    std::vector<std::string> storesHere;
    storesHere.swap(stores);
    if (!isEdgeSubLoop(sub->kind))
      continue;
    if (sub->body.empty() ? storesHere.empty() : !canSplitOverWorkers(*sub))
      continue;
    WorkerLoop wl;
    wl.index = static_cast<int>(workerLoops_.size());
    wl.workers = "hector_workers_" + wl.suffix();
    for (const std::string &target : storesHere)
      wl.widths.push_back(
          dimExpr(shapeSize(layout_.layout(target).decl.shape)));
    for (const TravItem &it : sub->body) {
      const TravStmt &s = std::get<TravStmt>(it);
      const std::string &target = s.stmt.target.value;
      wl.widths.push_back(
          dimExpr(shapeSize(layout_.layout(target).decl.shape)));
      // A contraction's worker lanes share its terms (printWorkerSplit):
      // its workers are as wide as the rows it reads. HGT's attention
      // score, one scalar per head from two 64-wide rows, otherwise had a
      // worker of one lane per edge adding all 64 products.
      if (s.stmt.op == ir::OpKind::Dot || s.stmt.op == ir::OpKind::SumTo)
        for (const ir::Operand &op : s.stmt.operands)
          if (const auto *a = std::get_if<ir::Access>(&op))
            wl.widths.push_back(
                dimExpr(shapeSize(layout_.layout(a->value).decl.shape)));
      if (s.reduction == ReductionScheme::Segmented)
        wl.segmented.push_back(&s);
      else if (layout_.home(target) == Home::Register &&
               !unstored_.count(layout_.root(target)))
        wl.registers.push_back(layout_.root(target));
    }
    workerLoopIndex_[sub.get()] = workerLoops_.size();
    workerLoops_.push_back(std::move(wl));
  }
}

/// Whether `s` adds into its target with atomics (atomic or partial-
/// atomic reductions).
bool addsAtomically(const TravStmt &s) {
  return s.reduction == ReductionScheme::Atomic ||
         s.reduction == ReductionScheme::PartialAtomic;
}

bool NestPrinter::hasAtomics() const {
  bool found = false;
  intra::forEachTravStmt(*inst_.root, [&](const TravStmt &s) {
    if (addsAtomically(s))
      found = true;
  });
  return found;
}

const WorkerLoop *NestPrinter::workerLoopOf(const TravLoop &loop) const {
  auto it = workerLoopIndex_.find(&loop);
  return it == workerLoopIndex_.end() ? nullptr : &workerLoops_[it->second];
}

std::string NestPrinter::workerAccumulator(const TravStmt &s) const {
  return fmt::format("w_acc_s{}", s.id);
}

void NestPrinter::collectSlots() {
  findWorkerLoops();
  for (const WorkerLoop &wl : workerLoops_) {
    for (const TravStmt *s : wl.segmented)
      addSlot(workerAccumulator(*s),
              shapeSize(layout_.layout(s->stmt.target.value).decl.shape),
              wl.workers);
    for (const std::string &root : wl.registers)
      addSlot("w_" + registerLocal(root),
              shapeSize(layout_.layout(root).decl.shape), wl.workers);
  }
  std::set<std::string> perWorker;
  for (const WorkerLoop &wl : workerLoops_)
    perWorker.insert(wl.registers.begin(), wl.registers.end());
  intra::forEachTravStmt(*inst_.root, [&](const TravStmt &s) {
    const std::string &target = s.stmt.target.value;
    const ir::Dim size = shapeSize(layout_.layout(target).decl.shape);
    if (layout_.home(target) == Home::Register &&
        !perWorker.count(layout_.root(target)) &&
        !unstored_.count(layout_.root(target)))
      addSlot(registerLocal(layout_.root(target)), size);
    else if (s.hoisted && s.storeInInnerLoop)
      addSlot(registerLocal(target), size);
    if (s.reduction == ReductionScheme::PartialAtomic) {
      const std::string slot = fmt::format("acc_s{}", s.id);
      addSlot(slot, size);
      partials_.push_back(Partial{s.id, slot, target});
    }
  });
}

std::string NestPrinter::rowExpr(const ir::IndexPath &path) const {
  auto it = scope_.find(path.var);
  if (it == scope_.end())
    throw EmitError{"@" + inst_.name + ": '" + path.str() +
                    "' uses a variable not bound by the nest"};
  std::string expr = it->second.cpp;
  ir::Space space = it->second.space;
  for (size_t i = 0; i < path.attrs.size(); ++i) {
    const ir::Attr a = path.attrs[i];
    // `e.dst` in `n.incoming` is `n` itself (no load).
    if (i == 0 && it->second.parentEnd && *it->second.parentEnd == a) {
      expr = scope_.at(it->second.parent).cpp;
      space = ir::Space::Node;
      continue;
    }
    // An incoming/outgoing loop's edge reads its other end, relation and
    // pair at its CSR position: one load instead of two dependent ones.
    if (i == 0 && !it->second.csrPrefix.empty()) {
      std::optional<std::pair<std::string, ir::Space>> csr;
      switch (a) {
      case ir::Attr::Src: csr = {{"src", ir::Space::Node}}; break;
      case ir::Attr::Dst: csr = {{"dst", ir::Space::Node}}; break;
      case ir::Attr::EType: csr = {{"etype", ir::Space::EdgeType}}; break;
      case ir::Attr::Pair: csr = {{"pair", ir::Space::Pair}}; break;
      default: break;
      }
      if (csr) {
        expr = "g." + it->second.csrPrefix + csr->first + "[" +
               it->second.csrPos + "]";
        space = csr->second;
        continue;
      }
    }
    std::string array;
    ir::Space next = space;
    if (space == ir::Space::Edge) {
      switch (a) {
      case ir::Attr::Src: array = "src"; next = ir::Space::Node; break;
      case ir::Attr::Dst: array = "dst"; next = ir::Space::Node; break;
      case ir::Attr::EType: array = "etype"; next = ir::Space::EdgeType; break;
      case ir::Attr::Pair: array = "edge_pair"; next = ir::Space::Pair; break;
      default: break;
      }
    } else if (space == ir::Space::Pair) {
      if (a == ir::Attr::Src) {
        array = "pair_src";
        next = ir::Space::Node;
      } else if (a == ir::Attr::EType) {
        array = "pair_etype";
        next = ir::Space::EdgeType;
      }
    } else if (space == ir::Space::Node && a == ir::Attr::NType) {
      array = "ntype";
      next = ir::Space::NodeType;
    }
    if (array.empty())
      throw EmitError{"@" + inst_.name + ": no graph array for '" +
                      path.str() + "'"};
    expr = "g." + array + "[" + expr + "]";
    space = next;
  }
  return expr;
}

std::string NestPrinter::operandPtr(const ir::Access &a) const {
  const std::string root = layout_.root(a.value);
  switch (layout_.home(a.value)) {
  case Home::GraphArray:
    return "(gv." + root + " + " + rowExpr(a.index) + ")";
  case Home::Register:
    return registerLocal(root);
  case Home::Buffer:
    break;
  }
  const intra::RowScheme rows = layout_.layout(root).rows;
  if (a.index.isGlobal() || rows == intra::RowScheme::Global)
    return "b." + root;
  // Stored in the summed entries' order, edge e's row is its entry's; a
  // row a chunk, its chunk's; in a CSR's order, its position there.
  if (rows == intra::RowScheme::DstCsrRows ||
      rows == intra::RowScheme::SrcCsrRows)
    return "(b." + root + " + (" + csrPosition(a, rows) + ") * " +
           sizeOf(root) + ")";
  std::string row = rowExpr(a.index);
  if (rows == intra::RowScheme::EntryRows)
    row = "g.sum_edge_entry[" + row + "]";
  else if (rows == intra::RowScheme::ChunkRows)
    row = "g.sum_edge_chunk[" + row + "]";
  return "(b." + root + " + (" + row + ") * " + sizeOf(root) + ")";
}

std::string NestPrinter::csrPosition(const ir::Access &a,
                                     intra::RowScheme rows) const {
  const std::string prefix =
      rows == intra::RowScheme::DstCsrRows ? "dst_csr_" : "src_csr_";
  auto it = scope_.find(a.index.var);
  if (!a.index.attrs.empty() || it == scope_.end() ||
      it->second.csrPrefix != prefix)
    throw EmitError{"@" + inst_.name + ": '" + a.str() + "' is stored in " +
                    intra::rowSchemeName(rows) +
                    " but not read at a loop's CSR position"};
  return it->second.csrPos;
}

void NestPrinter::printFlush(CodeWriter &w, const Partial &p) const {
  const std::string root = layout_.root(p.target);
  const std::string base =
      layout_.layout(root).rows == intra::RowScheme::Global
          ? "b." + root
          : fmt::format("b.{} + cur_s{} * {}", root, p.id, sizeOf(root));
  w.open(fmt::format("if (cur_s{} >= 0)", p.id));
  w.line("scalar_t *t = {};", base);
  w.line("HECTOR_FOR_ELEMENTS(i, {}) hector::trav::accumulate(t + i, "
         "{}[i], hector_ordered);",
         sizeOf(p.target), p.slot);
  w.close();
}

void NestPrinter::printStmtComment(CodeWriter &w, const TravStmt &s) const {
  w.line("// s{}: {}{}", s.id, ir::printStmt(s.stmt),
         s.reduction == ReductionScheme::None
             ? std::string()
             : std::string(" {") + intra::reductionSchemeName(s.reduction) +
                   "}");
}

void NestPrinter::openActiveBlock(CodeWriter &w) const {
  w.open(inWorkerLoop_ ? "if (hector_active_" + inWorkerLoop_->suffix() + ")"
                       : std::string());
}

std::string NestPrinter::plainTargetPtr(const TravStmt &s) const {
  if (s.reduction == ReductionScheme::Segmented && inWorkerLoop_)
    return fmt::format("{} + hector_worker_{} * {}", workerAccumulator(s),
                       inWorkerLoop_->suffix(),
                       workerStrideOf(workerAccumulator(s)));
  return operandPtr(s.stmt.target);
}

std::string NestPrinter::plainStore(const TravStmt &s, const std::string &t,
                                    const std::string &v) const {
  if (s.reduction == ReductionScheme::None)
    return fmt::format("{}[i] = {};", t, v);
  return s.stmt.reduce == ir::Reduce::Max
             ? fmt::format("{0}[i] = hector::trav::max({0}[i], {1});", t, v)
             : fmt::format("{}[i] += {};", t, v);
}

void NestPrinter::printBatchLoop(CodeWriter &w, const ir::Stmt &stmt,
                                 const ir::Shape &shape,
                                 const std::vector<OperandRef> &ops,
                                 const std::string &size,
                                 const std::string &store, bool quads) const {
  std::vector<std::string> quadRows;
  const std::vector<OperandRef> quadOps =
      quads ? quadOperands(stmt, shape, ops, quadRows) : ops;
  printQuadLoop(
      w, size, quadRows,
      [&] {
        printElement(w, stmt, shape, quadOps);
        w.raw(store);
      },
      [&] {
        w.open(fmt::format("HECTOR_FOR_ELEMENT_BATCHES(i0, {})", size));
        w.line("scalar_t hv[HECTOR_GROUP_BATCH];");
        w.open(fmt::format("HECTOR_FOR_BATCH(u, i, i0, {})", size));
        printElement(w, stmt, shape, ops);
        w.line("hv[u] = v;");
        w.close();
        w.open(fmt::format("HECTOR_FOR_BATCH(u, i, i0, {})", size));
        w.line("const scalar_t v = hv[u];");
        w.raw(store);
        w.close();
        w.close();
      });
}

std::vector<OperandRef>
NestPrinter::quadOperands(const ir::Stmt &stmt, const ir::Shape &shape,
                          const std::vector<OperandRef> &ops,
                          std::vector<std::string> &quads) const {
  std::vector<OperandRef> renamed = ops;
  // Only edge loops (split over workers, or flat loops over edges or
  // pairs) gather a row per edge; in a node's own rows the quads' extra
  // registers cost more than their loads save (HGT's node-level kernels
  // went from 22 to 38 registers, 0.97x on am).
  if (!inWorkerLoop_ && !flatEdgeRows())
    return renamed;
  const std::optional<int64_t> width =
      shapeSize(shape).evaluate(declaredHypers_);
  if (!width || *width < 4 || *width % 4 != 0)
    return renamed;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k].isScalar() || !readsOnlyElement(stmt, k, shape, ops[k].shape))
      continue;
    quads.push_back(ops[k].ptr);
    renamed[k].ptr = "q_" + ops[k].ptr;
  }
  return renamed;
}

void NestPrinter::printQuadLoop(CodeWriter &w, const std::string &size,
                                const std::vector<std::string> &quads,
                                const std::function<void()> &element,
                                const std::function<void()> &fallback) const {
  if (quads.empty()) {
    fallback();
    return;
  }
  w.open("if (" + quadRowsTest(size, quads) + ")");
  w.open(fmt::format("HECTOR_FOR_ELEMENT_QUADS(i0, {})", size));
  for (const std::string &q : quads)
    w.line("const auto q_{0} = hector::trav::rowQuad({0}, i0);", q);
  w.open("HECTOR_UNROLL for (int c = 0; c < 4; ++c)");
  w.line("const auto i = i0 + c;");
  element();
  w.close();
  w.close();
  w.close();
  w.open("else");
  fallback();
  w.close();
}

std::optional<std::string>
NestPrinter::splitsTerms(const TravStmt &s, const ir::Shape &shape,
                         const std::vector<OperandRef> &ops) const {
  // A worker's lanes are a part of the group, and a worker past its last
  // edge skips the statement: groupSum needs the whole group. A register
  // accumulator's element stays with its lane; hoisted stores wait for the
  // loop's end.
  const bool plainOrAtomic = s.reduction == ReductionScheme::None ||
                             s.reduction == ReductionScheme::Atomic;
  if (inWorkerLoop_ || !plainOrAtomic || (s.hoisted && s.storeInInnerLoop))
    return std::nullopt;
  return contractionTerms(s.stmt, shape, ops);
}

void NestPrinter::printSplitSum(CodeWriter &w, const ir::Stmt &stmt,
                                const ir::Shape &shape,
                                const std::vector<OperandRef> &ops,
                                const std::string &size,
                                const std::string &terms,
                                const std::string &store) const {
  // Few elements of many terms (one head's attention gradient: 1 x 64):
  // every lane takes part in each element's sum, and the element's own
  // lane (i mod lanes, as in the element loops) stores it.
  w.open(fmt::format("if (hector::trav::splitsSum<kGroupSize>({}, {}))",
                     size, terms));
  w.open(fmt::format("for (int i = 0; i < {}; ++i)", size));
  printLaneSplitElement(w, stmt, shape, ops);
  w.open("if (i % kGroupSize == hector_lane)");
  w.raw(store);
  w.close();
  w.close();
  w.close();
  w.open("else");
  printBatchLoop(w, stmt, shape, ops, size, store);
  w.close();
}

void NestPrinter::printQuadAtomic(CodeWriter &w, const ir::Stmt &stmt,
                                  const ir::Shape &shape,
                                  const std::vector<OperandRef> &ops,
                                  const std::string &size,
                                  const std::string &store) const {
  // Four elements a lane, added with one 16-byte atomic where the row
  // allows it (Traversal.h quadAccumulates); the element loop otherwise.
  // The operands read at element i alone are loaded a quad at a time too
  // where their rows allow it (quadOperands, rowQuad).
  std::vector<std::string> quadRows;
  const std::vector<OperandRef> quadOps =
      quadOperands(stmt, shape, ops, quadRows);
  const auto quadLoop = [&](const std::vector<OperandRef> &operands,
                            bool loadQuads) {
    w.open(fmt::format("HECTOR_FOR_ELEMENT_QUADS(i0, {})", size));
    if (loadQuads)
      for (const std::string &q : quadRows)
        w.line("const auto q_{0} = hector::trav::rowQuad({0}, i0);", q);
    w.line("scalar_t hv[4];");
    w.open("HECTOR_UNROLL for (int c = 0; c < 4; ++c)");
    w.line("const auto i = i0 + c;");
    printElement(w, stmt, shape, operands);
    w.line("hv[c] = v;");
    w.close();
    w.line("hector::trav::accumulateQuad(t + i0, hv);");
    w.close();
  };
  w.open(fmt::format(
      "if (hector::trav::quadAccumulates(t, {}, hector_ordered))", size));
  if (quadRows.empty()) {
    quadLoop(ops, false);
  } else {
    w.open("if (" + quadRowsTest(size, quadRows) + ")");
    quadLoop(quadOps, true);
    w.close();
    w.open("else");
    quadLoop(ops, false);
    w.close();
  }
  w.close();
  w.open("else");
  printBatchLoop(w, stmt, shape, ops, size, store);
  w.close();
}

void NestPrinter::printStmt(CodeWriter &w, const TravStmt &s) {
  const ir::Stmt &stmt = s.stmt;
  const std::string &target = stmt.target.value;
  const ir::Shape &shape = layout_.layout(target).decl.shape;
  printStmtComment(w, s);
  const bool split = splitsInWorker(s);
  if (split)
    w.open(""); // see printGroup
  else
    openActiveBlock(w);
  const std::vector<OperandRef> ops = declareOperands(w, s, "o", {});
  const std::string size = sizeOf(target);
  std::string store;
  switch (s.reduction) {
  case ReductionScheme::None:
  case ReductionScheme::Segmented:
    if (s.hoisted && s.storeInInnerLoop) {
      w.line("scalar_t *t = {};", registerLocal(target));
      pendingStores_.push_back(&s);
    } else {
      w.line("scalar_t *t = {};", plainTargetPtr(s));
    }
    store = plainStore(s, "t", "v");
    break;
  case ReductionScheme::Atomic:
    if (stmt.reduce != ir::Reduce::Sum)
      throw EmitError{fmt::format(
          "@{}: s{}: an atomic {} reduction is not supported by the emitters",
          inst_.name, s.id, ir::reduceToken(stmt.reduce))};
    w.line("scalar_t *t = {};", operandPtr(stmt.target));
    store = "hector::trav::accumulate(t + i, v, hector_ordered);";
    break;
  case ReductionScheme::PartialAtomic: {
    if (stmt.reduce != ir::Reduce::Sum)
      throw EmitError{fmt::format(
          "@{}: s{}: a partial-atomic {} reduction is not supported by the "
          "emitters",
          inst_.name, s.id, ir::reduceToken(stmt.reduce))};
    const Partial *p = nullptr;
    for (const Partial &q : partials_)
      if (q.id == s.id)
        p = &q;
    const bool global =
        layout_.layout(layout_.root(target)).rows == intra::RowScheme::Global;
    w.line("const int64_t row = {};",
           global ? std::string("0") : rowExpr(stmt.target.index));
    w.open(fmt::format("if (row != cur_s{})", s.id));
    printFlush(w, *p);
    w.line("HECTOR_FOR_ELEMENTS(i, {}) {}[i] = scalar_t(0);", size, p->slot);
    w.line("cur_s{} = row;", s.id);
    w.close();
    w.line("scalar_t *t = {};", p->slot);
    store = "t[i] += v;";
    break;
  }
  }
  if (split) {
    printWorkerSplit(
        w, s, ops,
        [&] {
          w.line("const scalar_t v = v_s{};", s.id);
          w.raw(store);
        },
        [&] { printBatchLoop(w, stmt, shape, ops, size, store); });
  } else if (sharesStorage(stmt)) {
    // Element at a time: a later element may read what an earlier stored.
    w.open(fmt::format("HECTOR_FOR_ELEMENTS(i, {})", size));
    printElement(w, stmt, shape, ops);
    w.raw(store);
    w.close();
  } else if (const std::optional<std::string> terms =
                 splitsTerms(s, shape, ops)) {
    printSplitSum(w, stmt, shape, ops, size, *terms, store);
  } else if (s.reduction == ReductionScheme::Atomic) {
    printQuadAtomic(w, stmt, shape, ops, size, store);
  } else {
    // A partial-atomic accumulator is cleared and flushed by element
    // (HECTOR_FOR_ELEMENTS) with no sync in between, and a hoisted row is
    // stored to the edges the same way: their lanes must keep that
    // element order.
    const bool quads = s.reduction != ReductionScheme::PartialAtomic &&
                       !(s.hoisted && s.storeInInnerLoop);
    printBatchLoop(w, stmt, shape, ops, size, store, quads);
  }
  w.close();
  if (!omitBodySync_)
    w.line("HECTOR_GROUP_SYNC();");
}

std::vector<OperandRef>
NestPrinter::declareOperands(CodeWriter &w, const TravStmt &s,
                             const std::string &prefix,
                             const std::map<size_t, std::string> &locals) const {
  std::vector<OperandRef> ops;
  for (size_t k = 0; k < s.stmt.operands.size(); ++k) {
    const ir::Operand &op = s.stmt.operands[k];
    OperandRef ref;
    if (const auto *a = std::get_if<ir::Access>(&op)) {
      ref.shape = layout_.layout(a->value).decl.shape;
      if (auto local = locals.find(k); local != locals.end()) {
        ref.scalar = local->second;
      } else {
        ref.ptr = prefix + std::to_string(k);
        w.line("const scalar_t *{} = {};", ref.ptr, operandPtr(*a));
      }
    } else {
      ref.scalar = "static_cast<scalar_t>(" +
                   scalarExpr(std::get<ir::ScalarExpr>(op)) + ")";
    }
    ops.push_back(std::move(ref));
  }
  return ops;
}

bool NestPrinter::hasLaneContractions() const {
  bool found = false;
  for (const TravItem &item : inst_.root->body) {
    const auto *sub = std::get_if<std::unique_ptr<TravLoop>>(&item);
    if (!sub)
      continue;
    intra::forEachTravStmt(
        **sub, [&](const TravStmt &s) { found = found || sharesLaneTerms(s); });
  }
  return found;
}

bool NestPrinter::sharesLaneTerms(const TravStmt &s) const {
  if ((s.hoisted && s.storeInInnerLoop) || sharesStorage(s.stmt))
    return false;
  if (s.reduction != ReductionScheme::None &&
      s.reduction != ReductionScheme::Segmented)
    return false;
  return s.stmt.op == ir::OpKind::Dot || s.stmt.op == ir::OpKind::SumTo;
}

bool NestPrinter::splitsInWorker(const TravStmt &s) const {
  return inWorkerLoop_ && sharesLaneTerms(s);
}

void NestPrinter::printWorkerSplit(CodeWriter &w, const TravStmt &lead,
                                   const std::vector<OperandRef> &ops,
                                   const std::function<void()> &rest,
                                   const std::function<void()> &plain) const {
  const std::string active = "hector_active_" + inWorkerLoop_->suffix();
  const std::string v = fmt::format("v_s{}", lead.id);
  w.open("if (hector_lanes <= hector::trav::kWarpSize)");
  w.open(fmt::format("for (int i = 0; i < {}; ++i)",
                     sizeOf(lead.stmt.target.value)));
  printWorkerLaneTerms(w, lead.stmt,
                       layout_.layout(lead.stmt.target.value).decl.shape, ops,
                       v, active);
  w.line("{0} = hector::trav::foldSum<kGroupSize>({0}, hector_lanes);", v);
  w.open(fmt::format("if ({} && i % hector_lanes == hector_lane)", active));
  rest();
  w.close();
  w.close();
  w.close();
  w.open(fmt::format("else if ({})", active));
  plain();
  w.close();
}

void NestPrinter::printBroadcastMember(CodeWriter &w, const TravStmt &s,
                                       const ir::Dim &whole,
                                       const std::vector<OperandRef> &operands,
                                       bool store) const {
  const ir::Shape &shape = layout_.layout(s.stmt.target.value).decl.shape;
  const ir::Dim part = shapeSize(shape);
  const std::string v = fmt::format("v_s{}", s.id);
  const std::string at = fmt::format("hector_at_s{}", s.id);
  w.line("scalar_t {};", v);
  w.open("");
  w.line("const auto {} = {};", at, prefixIndex(part, whole));
  w.open("");
  // The member's own element, under its own name for the element index.
  w.line("[[maybe_unused]] const auto i = {};", at);
  printElement(w, s.stmt, shape, operands);
  w.line("{} = v;", v);
  w.close();
  if (store)
    w.line("if (i % {} == 0) s{}_t[{}] = {};", ratioExpr(whole, part), s.id, at,
           v);
  w.close();
}

void NestPrinter::printGroupMembers(
    CodeWriter &w, const ElementGroup &g,
    const std::vector<std::vector<OperandRef>> &operands,
    bool leadSummed) const {
  const ir::Dim whole = shapeSize(
      layout_.layout(g.members[g.loopMember]->stmt.target.value).decl.shape);
  for (size_t m = 0; m < g.members.size(); ++m) {
    const TravStmt &s = *g.members[m];
    if (g.broadcast.count(s.id)) {
      printBroadcastMember(w, s, whole, operands[m], !g.unstored.count(s.id));
      continue;
    }
    const std::string v = fmt::format("v_s{}", s.id);
    if (m > 0 || !leadSummed) {
      w.line("scalar_t {};", v);
      w.open("");
      printElement(w, s.stmt, layout_.layout(s.stmt.target.value).decl.shape,
                   operands[m]);
      w.line("{} = v;", v);
      w.close();
    }
    if (!g.unstored.count(s.id))
      w.raw(plainStore(s, fmt::format("s{}_t", s.id), v));
  }
}

void NestPrinter::printGroup(CodeWriter &w, const ElementGroup &g) {
  for (const TravStmt *s : g.members)
    printStmtComment(w, *s);
  // A shared contraction's element loop runs on every lane, active or
  // not; its pointers are declared for all of them (an inactive worker's
  // edge reads as edge 0, printSubLoop).
  const bool split = splitsInWorker(*g.members.front());
  if (split)
    w.open("");
  else
    openActiveBlock(w);
  // Pointers first, named per statement; an operand forwarded from an
  // earlier member reads that member's local instead.
  std::vector<std::vector<OperandRef>> operands;
  for (size_t m = 0; m < g.members.size(); ++m) {
    const TravStmt &s = *g.members[m];
    std::map<size_t, std::string> locals;
    for (const auto &[operand, producer] : g.forwarded)
      if (operand.first == m)
        locals[operand.second] = fmt::format("v_s{}", producer);
    operands.push_back(
        declareOperands(w, s, fmt::format("s{}_o", s.id), locals));
    if (!g.unstored.count(s.id))
      w.line("scalar_t *s{}_t = {};", s.id, plainTargetPtr(s));
  }
  const std::string size = sizeOf(g.members[g.loopMember]->stmt.target.value);
  std::vector<std::string> quads;
  std::vector<std::vector<OperandRef>> quadOps;
  for (size_t m = 0; m < g.members.size(); ++m) {
    const ir::Stmt &stmt = g.members[m]->stmt;
    // A broadcast member reads its rows at another index than i.
    quadOps.push_back(
        g.broadcast.count(g.members[m]->id)
            ? operands[m]
            : quadOperands(stmt, layout_.layout(stmt.target.value).decl.shape,
                           operands[m], quads));
  }
  const auto elementLoop = [&] {
    printQuadLoop(
        w, size, quads, [&] { printGroupMembers(w, g, quadOps, false); },
        [&] {
          w.open(fmt::format("HECTOR_FOR_ELEMENTS(i, {})", size));
          printGroupMembers(w, g, operands, false);
          w.close();
        });
  };
  if (split)
    printWorkerSplit(
        w, *g.members.front(), operands.front(),
        [&] { printGroupMembers(w, g, operands, true); }, elementLoop);
  else
    elementLoop();
  w.close();
  if (!omitBodySync_)
    w.line("HECTOR_GROUP_SYNC();");
}

void NestPrinter::printStatements(CodeWriter &w,
                                  const std::vector<const TravStmt *> &run) {
  for (const ElementGroup &g : grouper_.group(run)) {
    if (g.fused())
      printGroup(w, g);
    else
      printStmt(w, *g.members.front());
  }
}

bool NestPrinter::sharesStorage(const ir::Stmt &stmt) const {
  const std::string target = layout_.root(stmt.target.value);
  for (const ir::Operand &op : stmt.operands)
    if (const auto *a = std::get_if<ir::Access>(&op))
      if (layout_.root(a->value) == target)
        return true;
  return false;
}

void NestPrinter::printSegmentedInit(CodeWriter &w, const TravLoop &sub) {
  for (const TravItem &item : sub.body) {
    const auto *s = std::get_if<TravStmt>(&item);
    if (!s || s->reduction != ReductionScheme::Segmented)
      continue;
    w.open("");
    w.line("scalar_t *t = {};", operandPtr(s->stmt.target));
    w.line("HECTOR_FOR_ELEMENTS(i, {}) t[i] = {};",
           sizeOf(s->stmt.target.value), reductionIdentity(*s));
    w.close();
  }
}

void NestPrinter::printSegmentedFinish(CodeWriter &w, const TravLoop &sub,
                                       const std::string &degree) {
  for (const TravItem &item : sub.body) {
    const auto *s = std::get_if<TravStmt>(&item);
    if (!s || s->reduction != ReductionScheme::Segmented)
      continue;
    const std::string size = sizeOf(s->stmt.target.value);
    if (s->stmt.reduce == ir::Reduce::Max) {
      // The max of no contributions is 0 (docs/ir.md).
      w.open(fmt::format("if ({} == 0)", degree));
      w.line("scalar_t *t = {};", operandPtr(s->stmt.target));
      w.line("HECTOR_FOR_ELEMENTS(i, {}) t[i] = scalar_t(0);", size);
      w.close();
    } else if (s->stmt.reduce == ir::Reduce::Mean) {
      w.open(fmt::format("if ({} > 0)", degree));
      w.line("scalar_t *t = {};", operandPtr(s->stmt.target));
      w.line("HECTOR_FOR_ELEMENTS(i, {}) t[i] /= static_cast<scalar_t>({});",
             size, degree);
      w.close();
    }
  }
  w.line("HECTOR_GROUP_SYNC();");
}

void NestPrinter::printSubLoop(CodeWriter &w, const TravLoop &loop,
                               const std::string &nodeVar) {
  const bool incoming = loop.kind == ir::LoopKind::Incoming;
  const std::string ptr = incoming ? "g.dst_ptr" : "g.src_ptr";
  const std::string node = scope_.at(nodeVar).cpp;
  const std::string k = "k_" + loop.var;
  const std::string degree =
      fmt::format("({0}[{1} + 1] - {0}[{1}])", ptr, node);
  printSegmentedInit(w, loop);
  w.line("HECTOR_GROUP_SYNC();");
  const std::string e = loopVarLocal(loop.var);
  const WorkerLoop *wl = workerLoopOf(loop);
  if (wl) {
    printWorkerLoop(w, loop, *wl, ptr, node);
  } else {
    w.open(fmt::format(
        "for (int64_t {0} = {1}[{2}]; {0} < {1}[{2} + 1]; ++{0})", k, ptr,
        node));
  }
  // A worker past its last edge has k at or past the row's end (maybe
  // past the last edge): it reads edge 0 and position 0 instead.
  std::string pos = k;
  // In the dst numbering an incoming edge's id is its CSR position.
  const std::string edgeId =
      incoming
          ? fmt::format("(g.dst_eid_is_identity ? {0} : g.dst_eid[{0}])", k)
          : fmt::format("g.src_eid[{}]", k);
  if (wl) {
    pos = csrPosLocal(loop.var);
    w.line("[[maybe_unused]] const int64_t {} = hector_active_{} ? {} : 0;",
           pos, wl->suffix(), k);
    w.line("[[maybe_unused]] const int64_t {} = hector_active_{} ? {} : 0;", e,
           wl->suffix(), edgeId);
  } else {
    // Reading only the CSR-ordered arrays leaves the edge id unused.
    w.line("[[maybe_unused]] const int64_t {} = {};", e, edgeId);
  }
  scope_[loop.var] = Binding{e,
                             ir::Space::Edge,
                             nodeVar,
                             incoming ? ir::Attr::Dst : ir::Attr::Src,
                             pos,
                             incoming ? "dst_csr_" : "src_csr_"};
  for (const TravStmt *s : pendingStores_) {
    // A hoisted statement's node-level result, stored to every edge row.
    const std::string root = layout_.root(s->stmt.target.value);
    w.line("{4}HECTOR_FOR_ELEMENTS(i, {0}) b.{1}[{2} * {0} + i] = {3}[i];",
           sizeOf(root), root, e, registerLocal(s->stmt.target.value),
           wl ? "if (hector_active_" + wl->suffix() + ") " : "");
  }
  pendingStores_.clear();
  inWorkerLoop_ = wl;
  omitBodySync_ = grouper_.repeatsWithoutSync(statementsOf(loop));
  printLoopBody(w, loop);
  omitBodySync_ = false;
  inWorkerLoop_ = nullptr;
  scope_.erase(loop.var);
  w.close();
  if (wl) {
    w.close(); // the worker's block
    w.line("HECTOR_GROUP_SYNC();");
    // Fold the workers' accumulators into the row (initialised above).
    for (const TravStmt *s : wl->segmented)
      printWorkerFold(w, *wl, *s);
    // A block group's lane may have folded another lane's elements.
    if (!wl->segmented.empty())
      w.line("if constexpr (kGroupSize > hector::trav::kWarpSize) "
             "HECTOR_GROUP_SYNC();");
    if (printsHubSpans())
      printHubCombine(w, *wl);
  }
  printSegmentedFinish(w, loop, degree);
}

/// Opens the block and the edge loop of a worker-split loop: worker w of W
/// takes edges begin + w, begin + w + W, ...; inside, the lane, lane count
/// and sync mask are the worker's, and its registers and accumulators are
/// its own copies.
void NestPrinter::printWorkerLoop(CodeWriter &w, const TravLoop &loop,
                                  const WorkerLoop &wl, const std::string &ptr,
                                  const std::string &node) {
  const std::string j = wl.suffix(), k = "k_" + loop.var;
  for (const TravStmt *s : wl.segmented)
    w.line("HECTOR_FOR_ELEMENTS(i, {} * {}) {}[i] = {};",
           workerStrideOf(workerAccumulator(*s)), wl.workers,
           workerAccumulator(*s), reductionIdentity(*s));
  w.line("HECTOR_GROUP_SYNC();");
  w.open("");
  w.line("const int hector_lanes_{0} = kGroupSize / static_cast<int>({1});",
         j, wl.workers);
  w.line("const int64_t hector_worker_{0} = hector_lane / hector_lanes_{0};",
         j);
  w.line("[[maybe_unused]] const int hector_sublane_{0} = hector_lane % "
         "hector_lanes_{0};",
         j);
  const std::string begin =
      printsHubSpans() ? "hector_span.begin" : ptr + "[" + node + "]";
  if (printsHubSpans())
    w.line("const int64_t hector_end_{} = hector_span.end;", j);
  else
    w.line("const int64_t hector_end_{0} = {1}[{2} + 1];", j, ptr, node);
  // Every lane runs the same number of iterations, so that the syncs are
  // the whole warp's: workers syncing on their own lane masks would be
  // run one after another (divergent paths of a warp are serialised).
  w.open(fmt::format(
      "for (int64_t hector_base_{0} = {1}; hector_base_{0} < "
      "hector_end_{0}; hector_base_{0} += {2})",
      j, begin, wl.workers));
  w.line("const int64_t {0} = hector_base_{1} + hector_worker_{1};", k, j);
  w.line("const bool hector_active_{0} = {1} < hector_end_{0};", j, k);
  w.line("[[maybe_unused]] const int hector_lane = hector_sublane_{};", j);
  w.line("[[maybe_unused]] const int hector_lanes = hector_lanes_{};", j);
  for (const std::string &root : wl.registers)
    w.line("scalar_t *{0} = w_{0} + hector_worker_{1} * {2};",
           registerLocal(root), j, workerStrideOf("w_" + registerLocal(root)));
}

void NestPrinter::printLoopBody(CodeWriter &w, const TravLoop &loop) {
  std::vector<const TravStmt *> run;
  // In a split heavy launch every part of a hub runs the node's statements
  // (HubSplit.h); one that adds atomically must add once, so only the part
  // holding the row's first edges runs it (a whole row's item starts at 0).
  const bool guardAtomics = &loop == inst_.root.get() && printsHubSpans();
  for (const TravItem &item : loop.body) {
    if (const auto *s = std::get_if<TravStmt>(&item)) {
      if (guardAtomics && addsAtomically(*s)) {
        printStatements(w, run);
        run.clear();
        w.open("if (hector_item.begin == 0)");
        printStmt(w, *s);
        w.close();
        continue;
      }
      run.push_back(s);
      continue;
    }
    printStatements(w, run);
    run.clear();
    const TravLoop &sub = *std::get<std::unique_ptr<TravLoop>>(item);
    if (!isEdgeSubLoop(sub.kind))
      throw EmitError{"@" + inst_.name + ": a nested '" +
                      ir::loopKindName(sub.kind) + "' loop"};
    printSubLoop(w, sub, loop.var);
  }
  printStatements(w, run);
}

/// Whether the instance has a partial-atomic reduction whose target is
/// per `space` (then visiting rows grouped by that key keeps the
/// accumulator's target row the same for long runs).
bool hasPartialInto(const ProgramLayout &layout,
                    const intra::TraversalInstance &t, ir::Space space) {
  bool found = false;
  intra::forEachTravStmt(*t.root, [&](const TravStmt &s) {
    if (s.reduction == ReductionScheme::PartialAtomic &&
        layout.layout(s.stmt.target.value).decl.space == space)
      found = true;
  });
  return found;
}

/// The top-level rows: how many, and which row the k-th one is (the
/// edge id `k`, or the k-th of an order that keeps partial-atomic targets
/// together).
void NestPrinter::chooseRows() {
  const TravLoop &root = *inst_.root;
  switch (root.kind) {
  case ir::LoopKind::Edges:
    rowCount_ = "g.num_edges";
    // A partial-atomic sum into e.dst (LowerToIntraOp's reductionFor) needs
    // no order of its own: layers without per-edge values run on edges
    // numbered by destination (runtime EdgeOrder::ByDst), where a node's
    // in-edges are consecutive. On the given numbering it flushes at
    // nearly every edge, as the plain atomic did, and the edge rows are
    // still read in order (a dst_eid order made them random reads there).
    rowBinding_ = hasPartialInto(layout_, inst_, ir::Space::EdgeType)
                      ? "g.etype_sorted_eid[k]"
                      : "k";
    break;
  case ir::LoopKind::Pairs:
    rowCount_ = "g.num_pairs"; // numbered by etype already
    rowBinding_ = "k";
    break;
  case ir::LoopKind::Nodes:
  case ir::LoopKind::DstNodes:
  case ir::LoopKind::SrcNodes:
    rowCount_ = "g.num_nodes";
    // By node type, so partial sums flush once a run of one type; nodes
    // numbered by type (GraphArrays::ntype_sorted_nodes_is_identity) need
    // no id load for it, as the node-type GEMMs' rows need none.
    rowBinding_ = hasPartialInto(layout_, inst_, ir::Space::NodeType)
                      ? "(g.ntype_sorted_nodes_is_identity ? k : "
                        "g.ntype_sorted_nodes[k])"
                      : "k";
    break;
  case ir::LoopKind::EdgeTypes:
    rowCount_ = "g.num_etypes";
    rowBinding_ = "k";
    break;
  case ir::LoopKind::NodeTypes:
    rowCount_ = "g.num_ntypes";
    rowBinding_ = "k";
    break;
  default:
    throw EmitError{"@" + inst_.name + ": a top-level '" +
                    ir::loopKindName(root.kind) + "' loop"};
  }
}

void NestPrinter::findHeavyRows() {
  const TravLoop &root = *inst_.root;
  if (root.kind != ir::LoopKind::Nodes && root.kind != ir::LoopKind::DstNodes &&
      root.kind != ir::LoopKind::SrcNodes)
    return;
  std::set<ir::LoopKind> directions;
  for (const TravItem &item : root.body)
    if (const auto *sub = std::get_if<std::unique_ptr<TravLoop>>(&item))
      directions.insert((*sub)->kind);
  // Only worker-split loops run faster on a block; a loop of the other
  // direction would make a node heavy by another degree.
  if (workerLoops_.empty() || directions.size() != 1)
    return;
  const bool incoming = *directions.begin() == ir::LoopKind::Incoming;
  const std::string side = incoming ? "dst" : "src";
  heavyRows_ = HeavyRows{"g." + side + "_ptr", "g.heavy_" + side + "_rows",
                         "g.num_heavy_" + side,
                         "g.heavy_" + side + "_edge_ptr"};
  size_t edgeLoops = 0;
  for (const TravItem &item : root.body)
    if (std::holds_alternative<std::unique_ptr<TravLoop>>(item))
      ++edgeLoops;
  // Atomic adds split well: each part adds its own edges' contributions,
  // and a node-level one runs in one part only (printLoopBody).
  splitsHubs_ = edgeLoops == workerLoops_.size();
  if (!splitsHubs_)
    return;
  std::string offset = "0";
  for (const WorkerLoop &wl : workerLoops_)
    for (const TravStmt *s : wl.segmented) {
      hubOffsets_[s->id] = offset;
      const std::string size = sizeOf(s->stmt.target.value);
      offset = offset == "0" ? size : offset + " + " + size;
      hubWidth_ = hubWidth_ +
                  shapeSize(layout_.layout(s->stmt.target.value).decl.shape);
    }
}

/// Folds the workers' copies of a segmented statement's accumulator into
/// its target row (or, in a split hub's part, into the hub's slots).
/// A block group folds with foldLanes lanes per element, each over every
/// foldLanes-th worker, then a shuffle across them (Traversal.h foldSum /
/// foldMax); every lane runs the same rounds, so that the shuffles are
/// the whole warp's. A warp group and the CPU fold element by element,
/// one lane over all workers: in a warp group the shuffles made the fold
/// slower (am RGAT forward's warp launch 5.21 -> 5.78 ms), while a
/// block's fold over 1024 one-lane workers was the slow one (its heavy
/// launch 2.88 -> 2.37 ms; docs/perf-notes.md section 19).
void NestPrinter::printWorkerFold(CodeWriter &w, const WorkerLoop &wl,
                                  const TravStmt &s) {
  const std::string size = sizeOf(s.stmt.target.value);
  const std::string acc = workerAccumulator(s);
  const std::string lanes = fmt::format("hector_fold_s{}", s.id);
  const bool max = s.stmt.reduce == ir::Reduce::Max;
  auto printUse = [&] {
    if (printsHubSpans()) {
      w.line("if (hector_span.parts > 1) hector::trav::{}(hector::trav::"
             "hubSlots<scalar_t>(hector_hub, hector_item.row) + {} + i, acc);",
             max ? "hubMax" : "hubAdd", hubOffsets_.at(s.id));
      w.line("else t[i] = acc;");
    } else {
      w.line(max ? "t[i] = hector::trav::max(t[i], acc);" : "t[i] += acc;");
    }
  };
  auto printAccumulate = [&] {
    if (max)
      w.line("acc = hector::trav::max(acc, {}[w * {} + i]);", acc,
             workerStrideOf(acc));
    else
      w.line("acc += {}[w * {} + i];", acc, workerStrideOf(acc));
  };
  w.open("");
  w.line("scalar_t *t = {};", operandPtr(s.stmt.target));
  w.open("if constexpr (kGroupSize > hector::trav::kWarpSize)");
  w.line("const int {} = hector::trav::foldLanes({}, {}, kGroupSize);", lanes,
         size, wl.workers);
  w.open(fmt::format("for (int hector_i0 = 0; hector_i0 < {0}; hector_i0 += "
                     "kGroupSize / {1})",
                     size, lanes));
  w.line("const int i = hector_i0 + hector_lane / {};", lanes);
  w.line("const int hector_part = hector_lane % {};", lanes);
  w.line("scalar_t acc = {};", reductionIdentity(s));
  w.open(fmt::format("if (i < {})", size));
  w.open(fmt::format("for (int64_t w = hector_part; w < {}; w += {})",
                     wl.workers, lanes));
  printAccumulate();
  w.close();
  w.close();
  w.line("acc = hector::trav::{}<kGroupSize>(acc, {});",
         max ? "foldMax" : "foldSum", lanes);
  w.open(fmt::format("if (i < {} && hector_part == 0)", size));
  printUse();
  w.close();
  w.close();
  w.close();
  w.open("else");
  w.open(fmt::format("HECTOR_FOR_ELEMENTS(i, {})", size));
  w.line("scalar_t acc = {};", reductionIdentity(s));
  w.open(fmt::format("for (int64_t w = 0; w < {}; ++w)", wl.workers));
  printAccumulate();
  w.close();
  printUse();
  w.close();
  w.close();
  w.close();
}

void NestPrinter::printHubCombine(CodeWriter &w, const WorkerLoop &wl) {
  if (wl.segmented.empty())
    return;
  const int barrier = ++hubBarriers_;
  // A hub shared by several blocks: wait for the other parts' partials
  // (printHubFold), then read the whole row's reductions back.
  w.open("if (hector_span.parts > 1)");
  w.line("hector::trav::hubBarrier(hector::trav::hubCounter(hector_hub, "
         "hector_item.row), static_cast<unsigned>({} * hector_span.parts));",
         barrier);
  w.line("scalar_t *hub_slots = hector::trav::hubSlots<scalar_t>(hector_hub, "
         "hector_item.row);");
  for (const TravStmt *s : wl.segmented) {
    w.open("");
    w.line("scalar_t *t = {};", operandPtr(s->stmt.target));
    w.line("HECTOR_FOR_ELEMENTS(i, {}) t[i] = hector::trav::{}(hub_slots + "
           "{} + i);",
           sizeOf(s->stmt.target.value),
           s->stmt.reduce == ir::Reduce::Max ? "hubMaxValue" : "hubSum",
           hubOffsets_.at(s->id));
    w.close();
  }
  w.close();
}

void NestPrinter::print(CodeWriter &w) {
  const TravLoop &root = *inst_.root;
  const std::string v = loopVarLocal(root.var);
  scope_[root.var] =
      Binding{v, ir::loopVarSpace(root.kind), "", std::nullopt, "", ""};
  if (bindHeavy_) {
    // A block group takes the k-th heavy row whole, or in a split heavy
    // launch its k-th item: a piece of a hub, then whole heavy rows off
    // the launch's queue until they run out (HubSplit.h). A warp group
    // skips the heavy rows when the heavy launch takes them
    // (hector_heavy_limit is the edge count above which a row is heavy,
    // or INT64_MAX when there is no heavy launch).
    if (splitsHubs_) {
      w.line("const hector::trav::HubItem hector_item = hector_heavy && "
             "hector_hub.workspace ? hector::trav::hubNextItem(hub_work, {}, "
             "k, hector_hub) : hector::trav::HubItem{{k, 0, -1, 1}};",
             heavyRows_->edgePtr);
      w.line("if (hector_item.row < 0) break;");
    }
    w.line("const int64_t {} = hector_heavy ? {}[{}] : {};", v,
           heavyRows_->rows, splitsHubs_ ? "hector_item.row" : "k",
           rowBinding_);
    w.line("if (!hector_heavy && hector::trav::isHeavy({}, {}, "
           "hector_heavy_limit)) continue;",
           heavyRows_->ptr, v);
    if (splitsHubs_)
      w.line("const hector::trav::EdgeSpan hector_span = "
             "hector::trav::hubSpan({}, {}, hector_item);",
             heavyRows_->ptr, v);
  } else {
    w.line("const int64_t {} = {};", v, rowBinding_);
  }
  hubBarriers_ = 0;
  printLoopBody(w, root);
  scope_.erase(root.var);
}

/// A slot's scalars: its size, or its workers' stride times the worker
/// count for per-worker slots.
std::string slotSize(const Slot &s) {
  return s.workers.empty() ? dimExpr(s.size)
                           : fmt::format("({} * {})", s.stride, s.workers);
}

/// The scratch scalars of one thread group: the sum of its slots.
std::string scratchTotal(const std::vector<Slot> &slots) {
  ir::Dim total = ir::Dim::constant(0);
  std::string perWorker;
  for (const Slot &s : slots) {
    if (s.workers.empty())
      total = total + s.size;
    else
      perWorker += " + " + slotSize(s);
  }
  if (perWorker.empty())
    return dimExpr(total);
  return "(" + dimExpr(total) + perWorker + ")";
}

/// `scalar_t *r_x = scratch + 0;`, ...
void printSlotPointers(CodeWriter &w, const std::vector<Slot> &slots) {
  std::string offset = "0";
  for (const Slot &s : slots) {
    w.line("scalar_t *{} = scratch + {};", s.name, offset);
    offset = offset == "0" ? slotSize(s) : offset + " + " + slotSize(s);
  }
}

/// The worker count of every worker-split loop (Traversal.h workersFor)
/// and the stride of every per-worker slot (workerStride), declared
/// before the scratch size that depends on them.
/// In deterministic mode an instance with atomics has one worker per loop
/// (the atomic adds of one thread group then come in program order).
void printWorkerCounts(CodeWriter &w, const NestPrinter &nest,
                       const std::string &groupSize) {
  for (const WorkerLoop &wl : nest.workerLoops()) {
    std::string widths;
    for (const std::string &x : wl.widths)
      widths += (widths.empty() ? "" : ", ") + x;
    w.line("const int64_t {} = {}hector::trav::workersFor("
           "hector::trav::maxOf({}), {});",
           wl.workers, nest.hasAtomics() ? "hp.hector_deterministic ? 1 : " : "",
           widths, groupSize);
  }
  for (const Slot &s : nest.slots())
    if (!s.workers.empty())
      w.line("const int64_t {} = hector::trav::workerStride({}, {}, {});",
             s.stride, dimExpr(s.size), s.workers, groupSize);
}

/// `hector_ordered`: adds of atomic reductions are plain adds (the
/// instance runs as one thread group in deterministic mode).
void printOrdered(CodeWriter &w, const NestPrinter &nest) {
  if (nest.hasAtomics())
    w.line("const bool hector_ordered = hp.hector_deterministic;");
}

/// The kernel's loop over its group's rows. `rowQueue`: the CUDA kernel
/// of a nest that takesRowQueue, whose warp groups take their rows from
/// hector_queue in its kRowQueue instantiation.
void printGroupBody(CodeWriter &w, NestPrinter &nest, const std::string &body,
                    bool rowQueue) {
  for (const NestPrinter::Partial &p : nest.partials())
    w.line("int64_t cur_s{} = -1;", p.id);
  const auto &heavy = nest.heavyRows();
  const std::string chunk = fmt::format(
      "hector::trav::chunkOf({}, group, groups)",
      nest.bindsHeavyRows() ? fmt::format("hector_heavy ? {} : {}",
                                          heavy->count, nest.rowCount())
                            : nest.rowCount());
  if (nest.bindsHeavyRows() && nest.splitsHubs()) {
    // A split heavy launch: this block's pieces of the hubs and whole
    // heavy rows (HubSplit.h).
    // In shared memory, worked out once per block: in registers it stays
    // live through every row and pushed the kernels into spills.
    w.line("__shared__ hector::trav::HubWork hub_work;");
    w.open("if (hector_heavy && hector_hub.workspace)");
    w.line("if (threadIdx.x == 0) hub_work = hector::trav::hubWork({0}, {1}, "
           "blockIdx.x, hector::trav::hubBlocks({0}[{1}], {1}, "
           "hector_hub.pieceEdges, gridDim.x));",
           heavy->edgePtr, heavy->count);
    w.line("__syncthreads();");
    w.close();
    w.line("const hector::trav::RowRange range = hector_heavy && "
           "hector_hub.workspace ? hector::trav::RowRange{{0, "
           "hub_work.items()}} : {};",
           chunk);
  } else {
    w.line("const hector::trav::RowRange range = {};", chunk);
  }
  if (rowQueue) {
    w.line("const hector::trav::RowRange hector_rows = kRowQueue ? "
           "hector::trav::RowRange{{0, {}}} : range;",
           nest.rowCount());
    w.open("for (int64_t k = hector::trav::firstRow<kGroupSize, kRowQueue>("
           "hector_rows, hector_queue); k < hector_rows.end; k = "
           "hector::trav::nextRow<kGroupSize, kRowQueue>(k, hector_queue))");
  } else {
    w.open("for (int64_t k = range.begin; k < range.end; ++k)");
  }
  w.verbatim(body);
  w.close();
  for (const NestPrinter::Partial &p : nest.partials())
    nest.printFlush(w, p);
}

/// The row body at the indentation it will have inside the kernel.
std::string rowBody(NestPrinter &nest, int depth) {
  CodeWriter inner(depth);
  nest.print(inner);
  return inner.str();
}

std::string scheduleComment(const intra::TraversalInstance &t) {
  return fmt::format("@{}: access {}, schedule {} feature_tile {}", t.name,
                     intra::accessSchemeName(t.access),
                     intra::travMappingName(t.schedule.mapping),
                     t.schedule.featureTile);
}

} // namespace

std::string traversalKernelName(const ProgramLayout &layout,
                                const intra::TraversalInstance &t) {
  return layout.entry() + "_" + t.name;
}

void printPrologue(CodeWriter &w, const ProgramLayout &layout, bool int32Sizes,
                   bool fixedHypers) {
  const char *type = int32Sizes ? "int" : "int64_t";
  for (const ir::HyperDecl &h : layout.program().hypers) {
    if (h.type != ir::HyperDecl::Type::Int)
      w.line("[[maybe_unused]] const double {} = hp.{};", hyperLocal(h.name),
             h.name);
    else if (fixedHypers && int32Sizes)
      w.line("[[maybe_unused]] const int {} = kFixedHypers ? {} : "
             "static_cast<int>(hp.{});",
             hyperLocal(h.name), static_cast<int64_t>(h.defaultValue), h.name);
    else if (fixedHypers)
      w.line("[[maybe_unused]] const int64_t {} = kFixedHypers ? INT64_C({}) "
             ": hp.{};",
             hyperLocal(h.name), static_cast<int64_t>(h.defaultValue), h.name);
    else if (int32Sizes)
      w.line("[[maybe_unused]] const int {} = static_cast<int>(hp.{});",
             hyperLocal(h.name), h.name);
    else
      w.line("[[maybe_unused]] const int64_t {} = hp.{};", hyperLocal(h.name),
             h.name);
  }
  for (const intra::ValueLayout &l : layout.program().layouts)
    w.line(int32Sizes ? "[[maybe_unused]] const {} {} = static_cast<int>({});"
                      : "[[maybe_unused]] const {} {} = {};",
           type, sizeLocal(l.decl.name), dimExpr(shapeSize(l.decl.shape)));
}

std::string fixedHypersCondition(const ProgramLayout &layout) {
  std::string condition;
  for (const ir::HyperDecl &h : layout.program().hypers)
    if (h.type == ir::HyperDecl::Type::Int)
      condition += fmt::format("{}hp.{} == {}", condition.empty() ? "" : " && ",
                               h.name, static_cast<int64_t>(h.defaultValue));
  return condition;
}

void printInt32SizeCheck(CodeWriter &w, const ProgramLayout &layout) {
  std::string sizes;
  auto add = [&](const std::string &what, const std::string &local) {
    sizes += fmt::format("{}{{\"{}\", {}}}", sizes.empty() ? "" : ", ", what,
                         local);
  };
  for (const ir::HyperDecl &h : layout.program().hypers)
    if (h.type == ir::HyperDecl::Type::Int)
      add("hyper '" + h.name + "'", hyperLocal(h.name));
  for (const intra::ValueLayout &l : layout.program().layouts)
    add("the row size of '" + l.decl.name + "'", sizeLocal(l.decl.name));
  w.line("hector::trav::requireInt32Sizes({{{}}});", sizes);
}

/// Whether a nest's warp launch may take groups of 16 lanes
/// (printWarpLaunch): node rows off a queue with at least
/// kNarrowRowEdgeLoops edge loops split over workers and no contraction
/// split over a worker's lanes.
constexpr size_t kNarrowRowEdgeLoops = 3;
bool takesNarrowGroups(const NestPrinter &nest) {
  return nest.takesRowQueue() &&
         nest.workerLoops().size() >= kNarrowRowEdgeLoops &&
         !nest.hasLaneContractions();
}

/// The kernel's launch bounds: up to 256 threads a block (a block group:
/// kGroupSize). The fixed-hyper, chunked 16-lane instantiation of a
/// narrow-group kernel (the large graphs' launch beside the heavy one)
/// also asks for hector::trav::kNarrowNodeRowMinBlocks blocks an SM: its
/// rows are chains of dependent loads, and the warps that fewer registers
/// let in hide more of them (docs/perf-notes.md section 46).
/// - Not the queued one (small graphs): aifb, mutag and bgs lost 2% to 5%.
/// - Not the general-hyper one: capped alike, RGAT's spilled 640 bytes.
/// - The others ask for 0 blocks, which leaves ptxas its default: asked
///   for 1, it gave RGAT's forward 166 to 214 registers instead of 48 to
///   64.
std::string launchBounds(const NestPrinter &nest) {
  if (!takesNarrowGroups(nest))
    return "__launch_bounds__(kGroupSize > 256 ? kGroupSize : 256)";
  return "__launch_bounds__(kGroupSize > 256 ? kGroupSize : 256, "
         "kFixedHypers && !kRowQueue && kGroupSize == "
         "hector::trav::kNarrowNodeRowLanes ? "
         "hector::trav::kNarrowNodeRowMinBlocks : 0)";
}

std::string emitTraversalKernel(const ProgramLayout &layout,
                                const intra::TraversalInstance &t,
                                Target target) {
  NestPrinter nest(layout, t);
  const std::string name = traversalKernelName(layout, t);
  const std::string buffers = layout.buffersType();
  CodeWriter w;
  w.line("// {}", scheduleComment(t));
  if (target == Target::Cuda) {
    const bool heavy = nest.heavyRows().has_value();
    if (heavy)
      nest.bindHeavyRows();
    const std::string body = rowBody(nest, 2);
    // kFixedHypers: the integer hypers are the model's declared values,
    // compiled in as constants (printPrologue); kGroupSize: a warp, or a
    // block for the heavy rows (Traversal.h); kRowQueue: a warp launch that
    // takes its rows from a queue.
    w.line(nest.takesRowQueue()
               ? "template <typename scalar_t, bool kFixedHypers, int "
                 "kGroupSize, bool kRowQueue = false>"
               : "template <typename scalar_t, bool kFixedHypers, int "
                 "kGroupSize>");
    w.line("__global__ void {}", launchBounds(nest));
    w.open(fmt::format("{}([[maybe_unused]] const hector::rt::GraphArrays g, "
                       "[[maybe_unused]] const "
                       "hector::rt::GraphValues<scalar_t> gv, const "
                       "{}<scalar_t> b, const Hypers hp, const int64_t "
                       "scratch_size, [[maybe_unused]] const int64_t "
                       "hector_heavy_limit{}{})",
                       name, buffers,
                       nest.splitsHubs()
                           ? ", const hector::trav::HubArgs hector_hub"
                           : "",
                       nest.takesRowQueue()
                           ? ", const hector::trav::RowQueue hector_queue"
                           : ""));
    w.line("extern __shared__ __align__(16) unsigned char hector_smem_bytes[];");
    w.line("scalar_t *hector_smem = reinterpret_cast<scalar_t *>(hector_smem_bytes);");
    // 32-bit hypers and row sizes: element indices and their divisions
    // (`i / hp_out_dim`) are the inner loops' integer work, and 64-bit
    // division costs several times as many instructions. The host function
    // checks that every row size fits (printInt32SizeCheck).
    printPrologue(w, layout, /*int32Sizes=*/true, /*fixedHypers=*/true);
    w.line("const int hector_lane = static_cast<int>(threadIdx.x % kGroupSize);");
    w.line("[[maybe_unused]] const int hector_lanes = kGroupSize;");
    if (heavy)
      w.line("constexpr bool hector_heavy = kGroupSize > hector::trav::kWarpSize;");
    printWorkerCounts(w, nest, "kGroupSize");
    printOrdered(w, nest);
    w.line("const int64_t groups_per_block = blockDim.x / kGroupSize;");
    w.line("const int64_t group = static_cast<int64_t>(blockIdx.x) * "
           "groups_per_block + threadIdx.x / kGroupSize;");
    w.line("const int64_t groups = static_cast<int64_t>(gridDim.x) * "
           "groups_per_block;");
    w.line("[[maybe_unused]] scalar_t *scratch = hector_smem + (threadIdx.x / "
           "kGroupSize) * scratch_size;");
    printSlotPointers(w, nest.slots());
    printGroupBody(w, nest, body, nest.takesRowQueue());
    w.close();
    return w.str();
  }
  const std::string body = rowBody(nest, 3);
  // kFixedHypers, as on the GPU: the element loops' divisions by row sizes
  // fold when the sizes are constants (RGAT's per-relation weight-gradient
  // traversal took 45% of a small graph's training step on the CPU).
  w.line("template <typename scalar_t, bool kFixedHypers>");
  w.open(fmt::format("void {}([[maybe_unused]] const hector::rt::GraphArrays "
                     "&g, [[maybe_unused]] const "
                     "hector::rt::GraphValues<scalar_t> &gv, const "
                     "{}<scalar_t> &b, const Hypers &hp)",
                     name, buffers));
  printPrologue(w, layout, /*int32Sizes=*/false, /*fixedHypers=*/true);
  w.line("[[maybe_unused]] constexpr int kGroupSize = 1; // one thread");
  printWorkerCounts(w, nest, "kGroupSize");
  printOrdered(w, nest);
  w.line("const int64_t scratch_size = {};", scratchTotal(nest.slots()));
  // Deterministic mode: an instance with atomics runs on one thread.
  w.line(nest.hasAtomics() ? "#pragma omp parallel if (!hector_ordered)"
                           : "#pragma omp parallel");
  w.open("");
  w.line("std::vector<scalar_t> scratch_storage(static_cast<size_t>("
         "scratch_size) + 1);");
  w.line("[[maybe_unused]] scalar_t *scratch = scratch_storage.data();");
  w.line("[[maybe_unused]] const int hector_lane = 0;");
  w.line("const int64_t group = hector::trav::cpuThreadNum();");
  w.line("const int64_t groups = hector::trav::cpuNumThreads();");
  printSlotPointers(w, nest.slots());
  printGroupBody(w, nest, body, /*rowQueue=*/false);
  w.close();
  w.close();
  return w.str();
}

/// The build's block size (Traversal.h), for block-per-type launches and
/// heavy rows whose schedule names none.
constexpr const char *kDefaultBlockGroup = "hector::trav::kHeavyGroupSize";

/// The threads of the nest's heavy-row blocks (C++): its schedule's
/// heavy_group, else the build's.
std::string heavyGroupOf(const intra::TraversalInstance &t) {
  return t.schedule.heavyGroupSize ? std::to_string(t.schedule.heavyGroupSize)
                                   : kDefaultBlockGroup;
}

/// The scratch of a block of `group` threads (C++: a constant) (`const
/// int64_t SCRATCH`), and whether the launch that uses it goes ahead
/// (`const bool FLAG`): `condition` (C++ ending in "&& ", or empty) and
/// the scratch fitting in a block's shared memory.
void printBlockScratch(CodeWriter &w, const NestPrinter &nest,
                       const std::string &scratch, const std::string &flag,
                       const std::string &condition, const std::string &group) {
  w.open(fmt::format("const int64_t {} = [&]", scratch));
  printWorkerCounts(w, nest, group);
  w.line("return {};", scratchTotal(nest.slots()));
  w.close("();");
  w.line("const bool {} = {}hector::trav::fitsInBlock({} * sizeof(scalar_t));",
         flag, condition, scratch);
}

/// The TraversalCuda.h function that shapes a launch of the nest's rows:
/// with partial-atomic reductions, one wave of groups of several rows each
/// when the rows cost about the same and chunks of several rows when they
/// hold neighbour loops (their degrees make them uneven); else a group per
/// row.
const char *launchShapeFunction(const NestPrinter &nest) {
  if (nest.partials().empty())
    return "launchShape";
  return nest.hasNeighbourLoops() ? "partialRowsLaunchShape"
                                  : "rowSumsLaunchShape";
}

/// The row-queue argument of a launch without a queue (a block group's, or
/// a warp launch beside a heavy launch): empty for a kernel that takes none.
std::string noRowQueue(const NestPrinter &nest) {
  return nest.takesRowQueue() ? ", hector::trav::RowQueue{}" : "";
}

/// The row sizes of a flat nest's statements' targets, as C++.
std::string flatRowWidths(const ProgramLayout &layout,
                          const intra::TraversalInstance &t) {
  std::string widths;
  for (const TravItem &item : t.root->body)
    if (const auto *s = std::get_if<TravStmt>(&item))
      widths += (widths.empty() ? "" : ", ") +
                dimExpr(shapeSize(layout.layout(s->stmt.target.value).decl.shape));
  return widths;
}

/// A loop over edges or pairs with no loop inside: its rows are
/// independent, so a group may be smaller than a warp.
bool isFlatRowNest(const intra::TraversalInstance &t, const NestPrinter &nest) {
  return (t.root->kind == ir::LoopKind::Edges ||
          t.root->kind == ir::LoopKind::Pairs) &&
         !nest.hasNeighbourLoops();
}

/// A flat row loop's launch: groups of rowGroupLanes(widest row) lanes,
/// a lane per row for one scalar per head, so that a warp walks 32 such
/// rows at once instead of one (Nsight Compute found fb15k's RGAT
/// softmax-gradient loop bound by issued instructions, one lane of 32
/// busy). The group size is a template argument, so each size has its
/// own launch; deterministic mode with atomics keeps a single warp.
void printFlatRowLaunch(CodeWriter &w, const ProgramLayout &layout,
                        const intra::TraversalInstance &t,
                        const NestPrinter &nest, const std::string &name) {
  w.line("const int64_t scratch_size = {};", scratchTotal(nest.slots()));
  w.open("if (rows > 0)");
  w.line("const int row_lanes = {}hector::trav::rowGroupLanes("
         "hector::trav::maxOf({}));",
         nest.hasAtomics() ? "hp.hector_deterministic ? hector::trav::kWarpSize : "
                           : "",
         flatRowWidths(layout, t));
  w.open("switch (row_lanes)");
  for (int lanes : {1, 2, 4, 8, 16, 32}) {
    w.open(lanes == 32 ? std::string("default:") : fmt::format("case {}:", lanes));
    w.line("const hector::trav::LaunchShape shape = hector::trav::{}("
           "reinterpret_cast<const void *>(&{}<scalar_t, kFixedHypers, {}>), "
           "rows, scratch_size, sizeof(scalar_t), {}, {});",
           launchShapeFunction(nest), name, lanes,
           nest.hasAtomics() ? "hp.hector_deterministic" : "false", lanes);
    w.line(
        "{}<scalar_t, kFixedHypers, {}><<<static_cast<unsigned>(shape.blocks), "
        "shape.warpsPerBlock * 32, shape.sharedBytes, stream>>>(g, gv, b, "
        "hp, scratch_size, INT64_MAX);",
        name, lanes);
    w.line("break;");
    w.close();
  }
  w.close();
  w.line("hector::trav::check(cudaGetLastError(), \"{}\");", name);
  w.close();
}

/// The launch of a kernel's rows (all of them, or the light ones after a
/// heavy launch) with a warp per row, or with `narrow` a group of
/// kNarrowNodeRowLanes lanes.
void printRowGroupLaunch(CodeWriter &w, const NestPrinter &nest,
                         const std::string &name, bool afterHeavy,
                         bool narrow) {
  const std::string lanes =
      narrow ? "hector::trav::kNarrowNodeRowLanes" : "hector::trav::kWarpSize";
  printWorkerCounts(w, nest, lanes);
  // The launch shapes' group lanes: left at their default for a warp.
  const std::string lanesArg = narrow ? ", " + lanes : "";
  w.line("const int64_t scratch_size = {};", scratchTotal(nest.slots()));
  w.open("if (rows > 0)");
  const std::string kernel =
      fmt::format("reinterpret_cast<const void *>(&{}<scalar_t, kFixedHypers, "
                  "{}>)",
                  name, lanes);
  const std::string single =
      nest.hasAtomics() ? "hp.hector_deterministic" : "false";
  const std::string stream = afterHeavy ? "warp_stream" : "stream";
  // The kernel's arguments up to the row queue.
  const std::string args = fmt::format(
      "g, gv, b, hp, scratch_size, {}{}",
      afterHeavy ? "heavy_launch ? g.heavy_row_edges : INT64_MAX" : "INT64_MAX",
      nest.splitsHubs() ? ", hector::trav::HubArgs{}" : "");
  const std::string config = fmt::format(
      "<<<static_cast<unsigned>(shape.blocks), shape.warpsPerBlock * 32, "
      "shape.sharedBytes, {}>>>",
      stream);
  const std::string queuedShape = fmt::format(
      "hector::trav::queuedLaunchShape(reinterpret_cast<const void *>(&{}<"
      "scalar_t, kFixedHypers, {}, true>), rows, scratch_size, "
      "sizeof(scalar_t), {}, {}{})",
      name, lanes, single, stream, lanesArg);
  const std::string queuedCall =
      fmt::format("{}<scalar_t, kFixedHypers, {}, true>{}({}, launch.queue);",
                  name, lanes, config, args);
  if (nest.takesRowQueue() && !afterHeavy) {
    // Rows of uneven cost: the warps take them from a queue.
    w.line("const hector::trav::QueuedLaunch launch = {};", queuedShape);
    w.line("const hector::trav::LaunchShape &shape = launch.shape;");
    w.line(queuedCall);
  } else if (nest.takesRowQueue()) {
    // Beside a heavy launch on the side stream the warp launch keeps its
    // chunks: with a persistent wave of warps the two launches no longer
    // overlapped, and am and biokg lost about 10% (docs/perf-notes.md
    // section 23). Chained after it, on the op's stream, it takes the
    // queue.
    w.line("const hector::trav::QueuedLaunch launch = warp_stream == stream "
           "? {} : hector::trav::QueuedLaunch{{hector::trav::launchShape({}, "
           "rows, scratch_size, sizeof(scalar_t), {}{}), {{}}}};",
           queuedShape, kernel, single, lanesArg);
    w.line("const hector::trav::LaunchShape &shape = launch.shape;");
    w.line("if (launch.queue.next) {}", queuedCall);
    w.line("else {}<scalar_t, kFixedHypers, {}>{}({}, "
           "hector::trav::RowQueue{{}});",
           name, lanes, config, args);
  } else {
    w.line("const hector::trav::LaunchShape shape = hector::trav::{}({}, "
           "rows, scratch_size, sizeof(scalar_t), {}{});",
           launchShapeFunction(nest), kernel, single, lanesArg);
    w.line("{}<scalar_t, kFixedHypers, {}>{}({});", name, lanes, config,
           args);
  }
  w.line("hector::trav::check(cudaGetLastError(), \"{}\");", name);
  if (nest.takesRowQueue())
    w.line("hector::trav::rowQueueRelease(launch.queue, {});", stream);
  w.close();
}

/// The launch of a kernel's rows (all of them, or the light ones after a
/// heavy launch): a warp per row, or, for node rows that take a row queue
/// and split their edge loops over workers, a group of 16 lanes per row
/// when the graph's rows have few edges (TraversalCuda.h nodeRowLanes).
/// Such a launch is a chain of dependent steps per row, so two rows per
/// warp keep twice as many in flight (docs/perf-notes.md section 42). Only
/// rows with at least kNarrowRowEdgeLoops edge loops (a softmax's max,
/// sum and weighted sum) and no contraction split over a worker's lanes
/// take them (RGAT's forward). With one loop (RGCN's aggregation) the
/// row's gathers bound the launch, and halving its workers lost 7% to 10%
/// on am, mag and wikikg2. HGT's per-head dots lost 1.5% to 3% on
/// wikikg2 with half the lanes each. Partial-atomic nests keep a warp:
/// their flushes were measured with it only (takesNarrowGroups).
void printWarpLaunch(CodeWriter &w, const NestPrinter &nest,
                     const std::string &name, bool afterHeavy) {
  if (!takesNarrowGroups(nest)) {
    printRowGroupLaunch(w, nest, name, afterHeavy, false);
    return;
  }
  w.line("const int row_lanes = hector::trav::nodeRowLanes(g.num_edges, "
         "rows, {});",
         nest.hasAtomics() ? "hp.hector_deterministic" : "false");
  w.open("if (row_lanes == hector::trav::kNarrowNodeRowLanes)");
  printRowGroupLaunch(w, nest, name, afterHeavy, true);
  w.close();
  w.open("else");
  printRowGroupLaunch(w, nest, name, afterHeavy, false);
  w.close();
}

/// A loop over relations or node types (block_per_type): one block of
/// kHeavyGroupSize threads per type. There are few types (4 to 474 in the
/// benchmark graphs) and each row is large (RGAT's backward sums a
/// 64 x 64 outer product per relation), so a warp per type left most of
/// the GPU idle. Deterministic mode keeps one warp for a nest with atomics
/// (its adds then run in one order), and so does a scratch too large for a
/// block.
void printBlockPerTypeLaunch(CodeWriter &w, const NestPrinter &nest,
                             const std::string &name) {
  printBlockScratch(w, nest, "block_scratch_size", "block_launch",
                    nest.hasAtomics() ? "!hp.hector_deterministic && " : "",
                    kDefaultBlockGroup);
  w.open("if (rows > 0 && block_launch)");
  w.line("const hector::trav::LaunchShape shape = "
         "hector::trav::heavyLaunchShape(reinterpret_cast<const void *>("
         "&{}<scalar_t, kFixedHypers, hector::trav::kHeavyGroupSize>), rows, "
         "block_scratch_size, sizeof(scalar_t));",
         name);
  w.line("{}<scalar_t, kFixedHypers, "
         "hector::trav::kHeavyGroupSize><<<static_cast<unsigned>("
         "shape.blocks), shape.warpsPerBlock * 32, shape.sharedBytes, "
         "stream>>>(g, gv, b, hp, block_scratch_size, INT64_MAX{});",
         name, noRowQueue(nest));
  w.line("hector::trav::check(cudaGetLastError(), \"{}\");", name);
  w.close();
  w.open("else");
  printWarpLaunch(w, nest, name, false);
  w.close();
}

std::string emitTraversalLaunch(const ProgramLayout &layout,
                                const intra::TraversalInstance &t,
                                Target target) {
  const std::string name = traversalKernelName(layout, t);
  CodeWriter w;
  if (target == Target::Cpu) {
    w.line("{}<scalar_t, kFixedHypers>(g, gv, b, hp); // {}", name,
           scheduleComment(t));
    return w.str();
  }
  const NestPrinter nest(layout, t);
  const auto &heavy = nest.heavyRows();
  const std::string group = heavyGroupOf(t);
  w.line("// {}", scheduleComment(t));
  w.open("");
  // The heavy launch's scratch first: whether it fits in a block's shared
  // memory decides whether the warp launch leaves the heavy rows to it.
  if (heavy) {
    printBlockScratch(
        w, nest, "heavy_scratch_size", "heavy_launch",
        (nest.hasAtomics() ? "!hp.hector_deterministic && " : "") +
            heavy->count + " > 0 && ",
        group);
  }
  const std::string heavyKernel =
      fmt::format("reinterpret_cast<const void *>(&{}<scalar_t, kFixedHypers, "
                  "{}>)",
                  name, group);
  if (heavy) {
    // The heavy launch first; on large graphs the warp launch overlaps it
    // from the side stream, on small ones it follows on the op's stream
    // (TraversalCuda.h overlapLaunches says why).
    w.line("const hector::trav::LaunchStreams streams = "
           "hector::trav::launchStreams(stream, heavy_launch, g.num_edges);");
    w.line("const cudaStream_t heavy_stream = streams.heavy;");
    w.line("const cudaStream_t warp_stream = streams.warp;");
    w.open("if (heavy_launch)");
    if (nest.splitsHubs()) {
      // As many blocks as fit at once, sharing the hubs' edges, with a
      // zeroed workspace to combine them; one block per heavy row when
      // none fits or in deterministic mode (the combining adds are
      // atomics).
      w.raw("hector::trav::HubArgs hub{};");
      w.line("hector::trav::LaunchShape shape = hp.hector_deterministic ? "
             "hector::trav::LaunchShape{{}} : hector::trav::hubLaunchShape({}, "
             "heavy_scratch_size, sizeof(scalar_t), {});",
             heavyKernel, group);
      w.line("if (shape.blocks > 0) hub = hector::trav::hubArgs({}, {}, "
             "sizeof(scalar_t), heavy_stream);",
             heavy->count, nest.hubWidth());
      w.line("else shape = hector::trav::heavyLaunchShape({}, {}, "
             "heavy_scratch_size, sizeof(scalar_t), {});",
             heavyKernel, heavy->count, group);
      w.line("if (hub.workspace) hector::trav::check(hector::trav::"
             "launchCooperative({}, shape, heavy_stream, g, gv, b, hp, "
             "heavy_scratch_size, int64_t{{INT64_MAX}}, hub{}), \"{}\");",
             heavyKernel, noRowQueue(nest), name);
      w.line("else {}<scalar_t, kFixedHypers, {}><<<static_cast<"
             "unsigned>(shape.blocks), shape.warpsPerBlock * 32, "
             "shape.sharedBytes, heavy_stream>>>(g, gv, b, hp, "
             "heavy_scratch_size, INT64_MAX, hub{});",
             name, group, noRowQueue(nest));
    } else {
      w.line("const hector::trav::LaunchShape shape = "
             "hector::trav::heavyLaunchShape({}, {}, heavy_scratch_size, "
             "sizeof(scalar_t), {});",
             heavyKernel, heavy->count, group);
      w.line("{}<scalar_t, kFixedHypers, {}><<<static_cast<"
             "unsigned>(shape.blocks), shape.warpsPerBlock * 32, "
             "shape.sharedBytes, heavy_stream>>>(g, gv, b, hp, "
             "heavy_scratch_size, INT64_MAX{});",
             name, group, noRowQueue(nest));
    }
    w.line("hector::trav::check(cudaGetLastError(), \"{}\");", name);
    if (nest.splitsHubs())
      w.line("hector::trav::hubRelease(hub, heavy_stream);");
    w.close();
  }
  w.line("const int64_t rows = {};", nest.rowCount());
  if (t.schedule.mapping == intra::TravMapping::BlockPerType)
    printBlockPerTypeLaunch(w, nest, name);
  else if (isFlatRowNest(t, nest) && !heavy)
    printFlatRowLaunch(w, layout, t, nest, name);
  else
    printWarpLaunch(w, nest, name, heavy.has_value());
  if (heavy)
    w.line("hector::trav::joinLaunches(streams, stream);");
  w.close();
  return w.str();
}

} // namespace hector::codegen
