#include "passes/SegmentSumUncompaction.h"

#include "passes/LoopWalk.h"

#include <optional>

namespace hector::passes {
namespace {

/// The graph scalar that is the same on a whole (destination, relation)
/// segment: the relation's in-degree of the destination
/// (intra::hasSegmentConstantScale accepts it alone).
const char *const kSegmentScalar = "rel_in_degree";

/// Whether `a` is `rel_in_degree[e]`, e the edge loop's variable.
bool isSegmentScalar(const ir::Module &m, const ir::Access &a,
                     const ir::Loop &edges) {
  const ir::ValueDecl *d = m.findValue(a.value);
  return a.value == kSegmentScalar && d && d->kind == ir::ValueKind::Graph &&
         a.index == ir::IndexPath{edges.var, {}};
}

/// The operand of `op(row, rel_in_degree[e])` that is the row: a copy's
/// only operand, a div's first, either of a mul's. -1: not such a form.
int scaledRowOperand(const ir::Module &m, const ir::Stmt &s,
                     const ir::Loop &edges) {
  auto access = [&](size_t i) {
    return std::get_if<ir::Access>(&s.operands[i]);
  };
  if (s.op == ir::OpKind::Copy)
    return s.operands.size() == 1 && access(0) ? 0 : -1;
  if ((s.op != ir::OpKind::Div && s.op != ir::OpKind::Mul) ||
      s.operands.size() != 2 || !access(0) || !access(1))
    return -1;
  if (isSegmentScalar(m, *access(1), edges))
    return 0;
  if (s.op == ir::OpKind::Mul && isSegmentScalar(m, *access(0), edges))
    return 1;
  return -1;
}

/// Folds `v[e] = op(row, rel_in_degree[e])` into the sum `t[n] +=
/// copy(v[e])` that alone reads v (see the header). Returns whether it did.
bool foldScaledCopy(ir::Module &m, ir::Loop &edges, size_t sumAt,
                    const ir::Loop &node, const std::set<std::string> &keep) {
  ir::Stmt &sum = std::get<ir::Stmt>(edges.body[sumAt]);
  if (!isNodeSum(sum, node) || sum.op != ir::OpKind::Copy ||
      scaledRowOperand(m, sum, edges) != 0)
    return false;
  // A copy, not a reference: the sum's operands are replaced below.
  const ir::Access v = std::get<ir::Access>(sum.operands[0]);
  const ir::ValueDecl *vd = m.findValue(v.value);
  if (!isUnkeptTemp(m, v.value, keep) || vd->space != ir::Space::Edge ||
      !(v.index == ir::IndexPath{edges.var, {}}) || readCount(m, v.value) != 1)
    return false;
  for (size_t i = 0; i < sumAt; ++i) {
    auto *w = std::get_if<ir::Stmt>(&edges.body[i]);
    if (!w || w->target.value != v.value)
      continue;
    if (w->reduce != ir::Reduce::None || w->op == ir::OpKind::Copy ||
        scaledRowOperand(m, *w, edges) < 0 ||
        !(w->target.index == ir::IndexPath{edges.var, {}}))
      return false;
    sum.op = w->op;
    sum.operands = w->operands;
    eraseValue(m, v.value); // w and v's declaration
    return true;
  }
  return false;
}

/// Moves the pair message that the sum at `sumAt` alone reads into the
/// incoming loop, right before the sum (see the header). Returns whether
/// it did.
bool uncompactMessage(ir::Module &m, ir::Loop &edges, size_t sumAt,
                      const ir::Loop &node, const std::set<std::string> &keep) {
  ir::Stmt &sum = std::get<ir::Stmt>(edges.body[sumAt]);
  if (!isNodeSum(sum, node))
    return false;
  const int row = scaledRowOperand(m, sum, edges);
  if (row < 0)
    return false;
  auto &message = std::get<ir::Access>(sum.operands[row]);
  ir::ValueDecl *md = m.findValue(message.value);
  if (!isUnkeptTemp(m, message.value, keep) || md->space != ir::Space::Pair ||
      !(message.index == ir::IndexPath{edges.var, {ir::Attr::Pair}}) ||
      readCount(m, message.value) != 1)
    return false;
  const std::optional<PairStmt> writer = findPairMessage(m, message.value);
  if (!writer)
    return false;
  ir::Stmt perEdge =
      std::get<ir::Stmt>(std::move(writer->pairs->body[writer->at]));
  writer->pairs->body.erase(writer->pairs->body.begin() +
                            static_cast<long>(writer->at));
  perEdge.target.index = ir::IndexPath{edges.var, {}};
  for (ir::Operand &op : perEdge.operands) // x[p.src], W[p.etype]
    std::get<ir::Access>(op).index.var = edges.var;
  message.index = ir::IndexPath{edges.var, {}};
  md->space = ir::Space::Edge;
  edges.body.insert(edges.body.begin() + static_cast<long>(sumAt),
                    std::move(perEdge));
  return true;
}

/// One pass over the incoming loops of the dst-node loops; returns
/// whether anything changed (the loops' bodies moved: start again).
bool uncompactOnce(ir::Module &m, const std::set<std::string> &keep) {
  return rewriteFirstIncomingStmt(
      m, [&](ir::Loop &edges, size_t i, const ir::Loop &node) {
        return foldScaledCopy(m, edges, i, node, keep) ||
               uncompactMessage(m, edges, i, node, keep);
      });
}

} // namespace

std::optional<PairStmt> findPairStmt(ir::Module &m, const std::string &value) {
  for (auto &top : m.loops) {
    if (top->kind != ir::LoopKind::Pairs)
      continue;
    for (size_t i = 0; i < top->body.size(); ++i) {
      const auto *s = std::get_if<ir::Stmt>(&top->body[i]);
      if (s && s->target.value == value)
        return PairStmt{top.get(), i};
    }
  }
  return std::nullopt;
}

std::optional<PairStmt> findPairMessage(ir::Module &m, const std::string &value,
                                        bool perHeadWeights) {
  std::optional<PairStmt> found = findPairStmt(m, value);
  if (!found)
    return std::nullopt;
  const ir::Stmt &s = found->stmt();
  const std::string &p = found->pairs->var;
  if (s.op != ir::OpKind::Linear || s.reduce != ir::Reduce::None ||
      s.operands.size() != 2 || !(s.target.index == ir::IndexPath{p, {}}))
    return std::nullopt;
  const auto *x = std::get_if<ir::Access>(&s.operands[0]);
  const auto *w = std::get_if<ir::Access>(&s.operands[1]);
  if (!x || !w || !(x->index == ir::IndexPath{p, {ir::Attr::Src}}) ||
      !(w->index == ir::IndexPath{p, {ir::Attr::EType}}))
    return std::nullopt;
  const ir::ValueDecl *xd = m.findValue(x->value);
  const ir::ValueDecl *wd = m.findValue(w->value);
  if (!xd || !wd || xd->space != ir::Space::Node ||
      wd->space != ir::Space::EdgeType)
    return std::nullopt;
  if (wd->shape.size() == 2)
    return found;
  // Per head: x's rows are [H, K] with the weight's H.
  if (perHeadWeights && wd->shape.size() == 3 && xd->shape.size() == 2 &&
      xd->shape[0] == wd->shape[0] && xd->shape[1] == wd->shape[1])
    return found;
  return std::nullopt;
}

bool uncompactSegmentSums(ir::Module &module,
                          const std::set<std::string> &keep) {
  bool changed = false;
  while (uncompactOnce(module, keep))
    changed = true;
  if (changed)
    dropEmptyLoops(module);
  return changed;
}

} // namespace hector::passes
