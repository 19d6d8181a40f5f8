#include "codegen/TraversalEmitter.h"

#include "codegen/CodeWriter.h"
#include "codegen/ElementPrinter.h"
#include "codegen/Naming.h"
#include "ir/InterIRPrinter.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <vector>

namespace hector::codegen {
namespace {

using intra::ReductionScheme;
using intra::TravItem;
using intra::TravLoop;
using intra::TravStmt;

bool isEdgeSubLoop(ir::LoopKind k) {
  return k == ir::LoopKind::Incoming || k == ir::LoopKind::Outgoing;
}

/// A loop variable in scope: its C++ name and what it ranges over.
struct Binding {
  std::string cpp;
  ir::Space space;
  /// Edge variables of an incoming/outgoing loop: the node variable they
  /// hang off (their dst/src is that node) and which end it is.
  std::string parent;
  std::optional<ir::Attr> parentEnd;
};

/// A per-thread-group scratch slot of `size` scalars.
struct Slot {
  std::string name;
  ir::Dim size;
};

/// Prints one traversal instance's row body. Its scratch slots and row
/// range are known on construction (the launch code needs them without
/// the body). Shared by both targets.
class NestPrinter {
public:
  NestPrinter(const ProgramLayout &layout, const intra::TraversalInstance &t)
      : layout_(layout), inst_(t) {
    collectSlots();
    chooseRows();
  }

  void print(CodeWriter &w);

  const std::vector<Slot> &slots() const { return slots_; }
  /// Partial-atomic accumulators (statement ids) and their targets.
  struct Partial {
    int id;
    std::string slot, target;
  };
  const std::vector<Partial> &partials() const { return partials_; }
  /// The number of top-level rows ("g.num_edges").
  std::string rowCount() const { return rowCount_; }

  /// Emits the flush of a partial accumulator into its target row.
  void printFlush(CodeWriter &w, const Partial &p) const;

private:
  void collectSlots();
  void chooseRows();
  void addSlot(const std::string &name, const ir::Dim &size);
  std::string rowExpr(const ir::IndexPath &path) const;
  std::string operandPtr(const ir::Access &a) const;
  std::string sizeOf(const std::string &value) const {
    return sizeLocal(value);
  }
  void printLoopBody(CodeWriter &w, const TravLoop &loop);
  void printSubLoop(CodeWriter &w, const TravLoop &loop,
                    const std::string &nodeVar);
  void printStmt(CodeWriter &w, const TravStmt &s);
  void printSegmentedInit(CodeWriter &w, const TravLoop &sub);
  void printSegmentedFinish(CodeWriter &w, const TravLoop &sub,
                            const std::string &degree);

  const ProgramLayout &layout_;
  const intra::TraversalInstance &inst_;
  std::map<std::string, Binding> scope_;
  std::vector<Slot> slots_;
  std::vector<Partial> partials_;
  /// Hoisted statements whose buffer target the next edge loop stores.
  std::vector<const TravStmt *> pendingStores_;
  std::string rowBinding_, rowCount_;
};

void NestPrinter::addSlot(const std::string &name, const ir::Dim &size) {
  for (const Slot &s : slots_)
    if (s.name == name)
      return;
  slots_.push_back(Slot{name, size});
}

void NestPrinter::collectSlots() {
  intra::forEachTravStmt(*inst_.root, [&](const TravStmt &s) {
    const std::string &target = s.stmt.target.value;
    const ir::Dim size = shapeSize(layout_.layout(target).decl.shape);
    if (layout_.home(target) == Home::Register)
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
  if (a.index.isGlobal() ||
      layout_.layout(root).rows == intra::RowScheme::Global)
    return "b." + root;
  return "(b." + root + " + (" + rowExpr(a.index) + ") * " + sizeOf(root) +
         ")";
}

void NestPrinter::printFlush(CodeWriter &w, const Partial &p) const {
  const std::string root = layout_.root(p.target);
  const std::string base =
      layout_.layout(root).rows == intra::RowScheme::Global
          ? "b." + root
          : fmt::format("b.{} + cur_s{} * {}", root, p.id, sizeOf(root));
  w.open(fmt::format("if (cur_s{} >= 0)", p.id));
  w.line("scalar_t *t = {};", base);
  w.line("HECTOR_FOR_ELEMENTS(i, {}) hector::trav::atomicAdd(t + i, "
         "{}[i]);",
         sizeOf(p.target), p.slot);
  w.close();
}

void NestPrinter::printStmt(CodeWriter &w, const TravStmt &s) {
  const ir::Stmt &stmt = s.stmt;
  const std::string &target = stmt.target.value;
  const ir::Shape &shape = layout_.layout(target).decl.shape;
  w.line("// s{}: {}{}", s.id, ir::printStmt(stmt),
         s.reduction == ReductionScheme::None
             ? std::string()
             : std::string(" {") + intra::reductionSchemeName(s.reduction) +
                   "}");
  w.open("");
  std::vector<OperandRef> ops;
  int k = 0;
  for (const ir::Operand &op : stmt.operands) {
    OperandRef ref;
    if (const auto *a = std::get_if<ir::Access>(&op)) {
      ref.ptr = fmt::format("o{}", k);
      ref.shape = layout_.layout(a->value).decl.shape;
      w.line("const scalar_t *o{} = {};", k, operandPtr(*a));
    } else {
      ref.scalar = "static_cast<scalar_t>(" +
                   scalarExpr(std::get<ir::ScalarExpr>(op)) + ")";
    }
    ops.push_back(std::move(ref));
    ++k;
  }
  const std::string size = sizeOf(target);
  std::string store;
  switch (s.reduction) {
  case ReductionScheme::None:
    if (s.hoisted && s.storeInInnerLoop) {
      w.line("scalar_t *t = {};", registerLocal(target));
      pendingStores_.push_back(&s);
    } else {
      w.line("scalar_t *t = {};", operandPtr(stmt.target));
    }
    store = "t[i] = v;";
    break;
  case ReductionScheme::Segmented:
    w.line("scalar_t *t = {};", operandPtr(stmt.target));
    store = stmt.reduce == ir::Reduce::Max ? "t[i] = hector::trav::max(t[i], v);"
                                           : "t[i] += v;";
    break;
  case ReductionScheme::Atomic:
    if (stmt.reduce != ir::Reduce::Sum)
      throw EmitError{fmt::format(
          "@{}: s{}: an atomic {} reduction is not supported by the emitters",
          inst_.name, s.id, ir::reduceToken(stmt.reduce))};
    w.line("scalar_t *t = {};", operandPtr(stmt.target));
    store = "hector::trav::atomicAdd(t + i, v);";
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
  w.open(fmt::format("HECTOR_FOR_ELEMENTS(i, {})", size));
  printElement(w, stmt, shape, ops);
  w.raw(store);
  w.close();
  w.close();
  w.line("HECTOR_GROUP_SYNC();");
}

void NestPrinter::printSegmentedInit(CodeWriter &w, const TravLoop &sub) {
  for (const TravItem &item : sub.body) {
    const auto *s = std::get_if<TravStmt>(&item);
    if (!s || s->reduction != ReductionScheme::Segmented)
      continue;
    const char *init = s->stmt.reduce == ir::Reduce::Max
                           ? "-hector::trav::infinity<scalar_t>()"
                           : "scalar_t(0)";
    w.open("");
    w.line("scalar_t *t = {};", operandPtr(s->stmt.target));
    w.line("HECTOR_FOR_ELEMENTS(i, {}) t[i] = {};",
           sizeOf(s->stmt.target.value), init);
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
  const std::string eids = incoming ? "g.dst_eid" : "g.src_eid";
  const std::string node = scope_.at(nodeVar).cpp;
  const std::string k = "k_" + loop.var;
  const std::string degree =
      fmt::format("({0}[{1} + 1] - {0}[{1}])", ptr, node);
  printSegmentedInit(w, loop);
  w.line("HECTOR_GROUP_SYNC();");
  const std::string e = loopVarLocal(loop.var);
  w.open(fmt::format("for (int64_t {0} = {1}[{2}]; {0} < {1}[{2} + 1]; ++{0})",
                     k, ptr, node));
  w.line("const int64_t {} = {}[{}];", e, eids, k);
  scope_[loop.var] = Binding{e, ir::Space::Edge, nodeVar,
                             incoming ? ir::Attr::Dst : ir::Attr::Src};
  for (const TravStmt *s : pendingStores_) {
    // A hoisted statement's node-level result, stored to every edge row.
    const std::string root = layout_.root(s->stmt.target.value);
    w.line("HECTOR_FOR_ELEMENTS(i, {0}) b.{1}[{2} * {0} + i] = {3}[i];",
           sizeOf(root), root, e, registerLocal(s->stmt.target.value));
  }
  pendingStores_.clear();
  printLoopBody(w, loop);
  scope_.erase(loop.var);
  w.close();
  printSegmentedFinish(w, loop, degree);
}

void NestPrinter::printLoopBody(CodeWriter &w, const TravLoop &loop) {
  for (const TravItem &item : loop.body) {
    if (const auto *s = std::get_if<TravStmt>(&item)) {
      printStmt(w, *s);
      continue;
    }
    const TravLoop &sub = *std::get<std::unique_ptr<TravLoop>>(item);
    if (!isEdgeSubLoop(sub.kind))
      throw EmitError{"@" + inst_.name + ": a nested '" +
                      ir::loopKindName(sub.kind) + "' loop"};
    printSubLoop(w, sub, loop.var);
  }
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
    rowBinding_ = hasPartialInto(layout_, inst_, ir::Space::NodeType)
                      ? "g.ntype_sorted_nodes[k]"
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

void NestPrinter::print(CodeWriter &w) {
  const TravLoop &root = *inst_.root;
  const std::string v = loopVarLocal(root.var);
  scope_[root.var] = Binding{v, ir::loopVarSpace(root.kind), "", std::nullopt};
  w.line("const int64_t {} = {};", v, rowBinding_);
  printLoopBody(w, root);
  scope_.erase(root.var);
}

/// `scalar_t *r_x = scratch + 0;`, ... and the total.
std::string scratchTotal(const std::vector<Slot> &slots) {
  ir::Dim total = ir::Dim::constant(0);
  for (const Slot &s : slots)
    total = total + s.size;
  return dimExpr(total);
}

void printSlotPointers(CodeWriter &w, const std::vector<Slot> &slots) {
  ir::Dim offset = ir::Dim::constant(0);
  for (const Slot &s : slots) {
    w.line("scalar_t *{} = scratch + {};", s.name, dimExpr(offset));
    offset = offset + s.size;
  }
}

void printGroupBody(CodeWriter &w, NestPrinter &nest, const std::string &body) {
  for (const NestPrinter::Partial &p : nest.partials())
    w.line("int64_t cur_s{} = -1;", p.id);
  w.line("const hector::trav::RowRange range = hector::trav::chunkOf({}, "
         "group, groups);",
         nest.rowCount());
  w.open("for (int64_t k = range.begin; k < range.end; ++k)");
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

void printPrologue(CodeWriter &w, const ProgramLayout &layout) {
  for (const ir::HyperDecl &h : layout.program().hypers)
    w.line("[[maybe_unused]] const {} {} = hp.{};",
           h.type == ir::HyperDecl::Type::Int ? "int64_t" : "double",
           hyperLocal(h.name), h.name);
  for (const intra::ValueLayout &l : layout.program().layouts)
    w.line("[[maybe_unused]] const int64_t {} = {};", sizeLocal(l.decl.name),
           dimExpr(shapeSize(l.decl.shape)));
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
    const std::string body = rowBody(nest, 2);
    w.line("template <typename scalar_t>");
    w.line("__global__ void __launch_bounds__(256)");
    w.open(fmt::format("{}([[maybe_unused]] const hector::rt::GraphArrays g, "
                       "[[maybe_unused]] const "
                       "hector::rt::GraphValues<scalar_t> gv, const "
                       "{}<scalar_t> b, const Hypers hp, const int64_t "
                       "scratch_size)",
                       name, buffers));
    w.line("extern __shared__ __align__(16) unsigned char hector_smem_bytes[];");
    w.line("scalar_t *hector_smem = reinterpret_cast<scalar_t *>(hector_smem_bytes);");
    printPrologue(w, layout);
    w.line("const int hector_lane = static_cast<int>(threadIdx.x % 32);");
    w.line("const int64_t warps_per_block = blockDim.x / 32;");
    w.line("const int64_t group = static_cast<int64_t>(blockIdx.x) * "
           "warps_per_block + threadIdx.x / 32;");
    w.line("const int64_t groups = static_cast<int64_t>(gridDim.x) * "
           "warps_per_block;");
    w.line("[[maybe_unused]] scalar_t *scratch = hector_smem + (threadIdx.x / 32) * "
           "scratch_size;");
    printSlotPointers(w, nest.slots());
    printGroupBody(w, nest, body);
    w.close();
    return w.str();
  }
  const std::string body = rowBody(nest, 3);
  w.line("template <typename scalar_t>");
  w.open(fmt::format("void {}([[maybe_unused]] const hector::rt::GraphArrays "
                     "&g, [[maybe_unused]] const "
                     "hector::rt::GraphValues<scalar_t> &gv, const "
                     "{}<scalar_t> &b, const Hypers &hp)",
                     name, buffers));
  printPrologue(w, layout);
  w.line("const int64_t scratch_size = {};", scratchTotal(nest.slots()));
  w.line("#pragma omp parallel");
  w.open("");
  w.line("std::vector<scalar_t> scratch_storage(static_cast<size_t>("
         "scratch_size) + 1);");
  w.line("[[maybe_unused]] scalar_t *scratch = scratch_storage.data();");
  w.line("const int64_t group = hector::trav::cpuThreadNum();");
  w.line("const int64_t groups = hector::trav::cpuNumThreads();");
  printSlotPointers(w, nest.slots());
  printGroupBody(w, nest, body);
  w.close();
  w.close();
  return w.str();
}

std::string emitTraversalLaunch(const ProgramLayout &layout,
                                const intra::TraversalInstance &t,
                                Target target) {
  const std::string name = traversalKernelName(layout, t);
  CodeWriter w;
  if (target == Target::Cpu) {
    w.line("{}<scalar_t>(g, gv, b, hp); // {}", name, scheduleComment(t));
    return w.str();
  }
  const NestPrinter nest(layout, t);
  w.line("// {}", scheduleComment(t));
  w.open("");
  w.line("const int64_t rows = {};", nest.rowCount());
  w.line("const int64_t scratch_size = {};", scratchTotal(nest.slots()));
  w.open("if (rows > 0)");
  w.line("const hector::trav::LaunchShape shape = hector::trav::launchShape("
         "reinterpret_cast<const void *>(&{}<scalar_t>), rows, scratch_size, "
         "sizeof(scalar_t));",
         name);
  w.line("{}<scalar_t><<<static_cast<unsigned>(shape.blocks), "
         "shape.warpsPerBlock * 32, shape.sharedBytes, stream>>>(g, gv, b, hp, "
         "scratch_size);",
         name);
  w.line("hector::trav::check(cudaGetLastError(), \"{}\");", name);
  w.close();
  w.close();
  return w.str();
}

} // namespace hector::codegen
