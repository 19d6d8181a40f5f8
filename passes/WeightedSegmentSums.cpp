#include "passes/WeightedSegmentSums.h"

#include "passes/LinearReordering.h"
#include "passes/LoopWalk.h"
#include "passes/SegmentSumUncompaction.h"

#include <optional>

namespace hector::passes {
namespace {

/// A weighted message read `mul(w[e], m[e.pair])`: which operand is the
/// message, and the pair statements behind it (the linear, and the reshape
/// to heads when the message is one).
struct WeightedMessage {
  size_t messageOperand = 0;
  PairStmt linear;
  std::optional<PairStmt> reshape;
};

/// Whether `a` reads a temp of `space` that no later phase needs, at the
/// row `index`.
bool isUnkeptRead(const ir::Module &m, const ir::Access &a, ir::Space space,
                  const ir::IndexPath &index,
                  const std::set<std::string> &keep) {
  const ir::ValueDecl *d = m.findValue(a.value);
  return isUnkeptTemp(m, a.value, keep) && d->space == space &&
         a.index == index;
}

/// Matches `mul(w[e], m[e.pair])` (either order) against the header's
/// conditions.
std::optional<WeightedMessage>
matchWeightedMessage(ir::Module &m, const ir::Stmt &s, const ir::Loop &edges,
                     const std::set<std::string> &keep) {
  if (s.op != ir::OpKind::Mul || s.operands.size() != 2)
    return std::nullopt;
  for (size_t mi = 0; mi < 2; ++mi) {
    const auto *msg = std::get_if<ir::Access>(&s.operands[mi]);
    const auto *w = std::get_if<ir::Access>(&s.operands[1 - mi]);
    if (!msg || !w ||
        !isUnkeptRead(m, *msg, ir::Space::Pair,
                      ir::IndexPath{edges.var, {ir::Attr::Pair}}, keep))
      continue;
    const ir::ValueDecl *wd = m.findValue(w->value);
    if (!wd || wd->space != ir::Space::Edge ||
        !(w->index == ir::IndexPath{edges.var, {}}))
      continue;
    const ir::Shape &msgShape = m.findValue(msg->value)->shape;
    WeightedMessage match;
    match.messageOperand = mi;
    std::string linear = msg->value;
    if (wd->shape.empty()) {
      // A scalar weight scales the message itself.
    } else if (wd->shape.size() == 1 && msgShape.size() == 2 &&
               wd->shape[0] == msgShape[0]) {
      // Per-head weights on a per-head message (each head its own
      // matrix): the template weighs each head's input by its own weight.
      if (std::optional<PairStmt> perHead =
              findPairMessage(m, msg->value, /*perHeadWeights=*/true);
          perHead &&
          m.findValue(std::get<ir::Access>(perHead->stmt().operands[1]).value)
                  ->shape.size() == 3) {
        match.linear = *perHead;
        return match;
      }
      // Per-head weights: the message is the linear's row cut into heads.
      std::optional<PairStmt> reshape = findPairStmt(m, msg->value);
      if (!reshape)
        continue;
      const ir::Stmt &r = reshape->stmt();
      const auto *in = r.operands.size() == 1
                           ? std::get_if<ir::Access>(&r.operands[0])
                           : nullptr;
      if (r.op != ir::OpKind::Reshape || r.reduce != ir::Reduce::None || !in ||
          !isUnkeptRead(m, *in, ir::Space::Pair,
                        ir::IndexPath{reshape->pairs->var, {}}, keep))
        continue;
      match.reshape = reshape;
      linear = in->value;
    } else {
      continue;
    }
    std::optional<PairStmt> writer = findPairMessage(m, linear);
    if (!writer)
      continue;
    match.linear = *writer;
    return match;
  }
  return std::nullopt;
}

/// Folds `v[e] = mul(w[e], m[e.pair])` into the sum `t[n] += copy(v[e])`
/// that alone reads v. Returns whether it did.
bool foldWeightedCopy(ir::Module &m, ir::Loop &edges, size_t sumAt,
                      const ir::Loop &node, const std::set<std::string> &keep) {
  ir::Stmt &sum = std::get<ir::Stmt>(edges.body[sumAt]);
  if (!isNodeSum(sum, node) || sum.op != ir::OpKind::Copy ||
      sum.operands.size() != 1)
    return false;
  const auto *v = std::get_if<ir::Access>(&sum.operands[0]);
  if (!v ||
      !isUnkeptRead(m, *v, ir::Space::Edge, ir::IndexPath{edges.var, {}},
                    keep) ||
      readCount(m, v->value) != 1)
    return false;
  const std::string value = v->value;
  for (size_t i = 0; i < sumAt; ++i) {
    const auto *w = std::get_if<ir::Stmt>(&edges.body[i]);
    if (!w || w->target.value != value)
      continue;
    if (w->reduce != ir::Reduce::None ||
        !(w->target.index == ir::IndexPath{edges.var, {}}) ||
        !matchWeightedMessage(m, *w, edges, keep))
      return false;
    sum.op = w->op;
    sum.operands = w->operands;
    eraseValue(m, value); // w and v's declaration
    return true;
  }
  return false;
}

/// Declares `name`, an edge temp like the pair value `like`, right after it.
void declareEdgeCopy(ir::Module &m, const std::string &name,
                     const std::string &like) {
  auto it = m.values.begin();
  while (it != m.values.end() && it->name != like)
    ++it;
  ir::ValueDecl decl = *it;
  decl.name = name;
  decl.space = ir::Space::Edge;
  m.values.insert(it + 1, std::move(decl));
}

/// `s` (a statement of a pairs loop over p) replayed per edge e: target
/// `target[e]`, reads `x[p.src]` -> `x[e.src]`, `o[p]` -> `renamed[e]`.
ir::Stmt perEdgeCopy(const ir::Stmt &s, const std::string &pairVar,
                     const std::string &edgeVar, const std::string &target,
                     const std::string &renamedFrom = "",
                     const std::string &renamed = "") {
  ir::Stmt copy = s;
  copy.target.value = target;
  copy.target.index = ir::IndexPath{edgeVar, {}};
  for (ir::Operand &op : copy.operands) {
    auto &a = std::get<ir::Access>(op);
    if (a.index.var != pairVar)
      continue;
    a.index.var = edgeVar;
    if (!renamedFrom.empty() && a.value == renamedFrom)
      a.value = renamed;
  }
  return copy;
}

/// Gives the weighted sum at `sumAt` its own per-edge message, computed
/// right before it, and drops the pair rows nothing else reads. Returns
/// whether it did.
bool uncompactWeightedMessage(ir::Module &m, ir::Loop &edges, size_t sumAt,
                              const ir::Loop &node,
                              const std::set<std::string> &keep) {
  ir::Stmt &sum = std::get<ir::Stmt>(edges.body[sumAt]);
  if (!isNodeSum(sum, node))
    return false;
  const std::optional<WeightedMessage> match =
      matchWeightedMessage(m, sum, edges, keep);
  if (!match)
    return false;
  const ir::Stmt linear = match->linear.stmt();
  const std::string &pairVar = match->linear.pairs->var;
  std::vector<ir::Stmt> perEdge;
  const std::string linearName =
      freshValueName(m, linear.target.value + "_edge");
  declareEdgeCopy(m, linearName, linear.target.value);
  perEdge.push_back(perEdgeCopy(linear, pairVar, edges.var, linearName));
  std::string messageName = linearName;
  std::vector<std::string> pairValues = {linear.target.value};
  if (match->reshape) {
    const ir::Stmt reshape = match->reshape->stmt();
    messageName = freshValueName(m, reshape.target.value + "_edge");
    declareEdgeCopy(m, messageName, reshape.target.value);
    perEdge.push_back(perEdgeCopy(reshape, match->reshape->pairs->var,
                                  edges.var, messageName, linear.target.value,
                                  linearName));
    pairValues.insert(pairValues.begin(), reshape.target.value);
  }
  auto &message = std::get<ir::Access>(sum.operands[match->messageOperand]);
  message.value = messageName;
  message.index = ir::IndexPath{edges.var, {}};
  edges.body.insert(edges.body.begin() + static_cast<long>(sumAt),
                    std::make_move_iterator(perEdge.begin()),
                    std::make_move_iterator(perEdge.end()));
  // The reshape first: its read of the linear's row counts until it goes.
  for (const std::string &value : pairValues)
    if (readCount(m, value) == 0)
      eraseValue(m, value);
  return true;
}

/// One pass over the incoming loops of the dst-node loops; returns
/// whether anything changed (the loops' bodies moved: start again).
bool uncompactOnce(ir::Module &m, const std::set<std::string> &keep) {
  return rewriteFirstIncomingStmt(
      m, [&](ir::Loop &edges, size_t i, const ir::Loop &node) {
        return foldWeightedCopy(m, edges, i, node, keep) ||
               uncompactWeightedMessage(m, edges, i, node, keep);
      });
}

} // namespace

bool uncompactWeightedSums(ir::Module &module, const GraphStats &stats,
                           const std::set<std::string> &keep) {
  bool changed = false;
  while (uncompactOnce(module, keep))
    changed = true;
  if (!changed)
    return false;
  dropEmptyLoops(module);
  // The pair message's other readers (the attention's term) now read it
  // alone: reordered, they read x and a per-relation weight product, and
  // the message goes. Reordering deletes the temps nothing reads, which a
  // kept value is in the forward (the backward reads it): a reordering
  // that deleted one is not taken.
  // With nothing kept (the inference program), a product of the edge's
  // destination row by its relation's weight runs once a (destination,
  // relation) chunk (the lowering's per-chunk GEMM), and is counted so:
  // HGT's attention then moves its k_rel to the destination side.
  ir::Module reordered = module.clone();
  GraphStats reorderStats = stats;
  reorderStats.dstProductsPerSegment = keep.empty();
  reorderLinearOps(reordered, reorderStats);
  for (const std::string &value : keep)
    if (module.findValue(value) && !reordered.findValue(value))
      return true;
  module = std::move(reordered);
  return true;
}

} // namespace hector::passes
