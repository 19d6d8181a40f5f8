#include "passes/CostModel.h"

#include <map>
#include <stdexcept>
#include <variant>

namespace hector::passes {
namespace {

using ir::OpKind;

/// The int hypers of `module`: defaults, replaced by those `stats` names.
std::map<std::string, int64_t> intBindings(const ir::Module &module,
                                           const GraphStats &stats) {
  std::map<std::string, int64_t> bindings =
      ir::declaredIntHypers(module.hypers);
  for (const auto &[name, value] : stats.hypers)
    bindings[name] = value;
  return bindings;
}

double tripCount(ir::LoopKind kind, const GraphStats &stats) {
  switch (kind) {
  case ir::LoopKind::Edges:
  case ir::LoopKind::Incoming:
  case ir::LoopKind::Outgoing:
    return static_cast<double>(stats.numEdges);
  case ir::LoopKind::Nodes:
  case ir::LoopKind::DstNodes:
  case ir::LoopKind::SrcNodes:
    return static_cast<double>(stats.numNodes);
  case ir::LoopKind::EdgeTypes:
    return static_cast<double>(stats.numEtypes);
  case ir::LoopKind::NodeTypes:
    return static_cast<double>(stats.numNtypes);
  case ir::LoopKind::Pairs:
    return static_cast<double>(stats.numPairs);
  }
  return 0;
}

/// Counts statement by statement; shapes are evaluated once per value.
class FlopCounter {
public:
  FlopCounter(const ir::Module &module, const GraphStats &stats)
      : module_(module), stats_(stats), bindings_(intBindings(module, stats)) {}

  FlopReport run() {
    for (const auto &loop : module_.loops)
      countLoop(*loop);
    return std::move(report_);
  }

private:
  void countLoop(const ir::Loop &loop) {
    double trips = tripCount(loop.kind, stats_);
    for (const ir::BodyItem &item : loop.body) {
      if (const auto *inner = std::get_if<std::unique_ptr<ir::Loop>>(&item)) {
        countLoop(**inner);
        continue;
      }
      const ir::Stmt &stmt = std::get<ir::Stmt>(item);
      double flops =
          perRow(stmt) * (perSegment(loop, stmt)
                              ? static_cast<double>(stats_.numDstSegments)
                              : trips);
      report_.total += flops;
      report_.perValue.emplace_back(stmt.target.value, flops);
    }
  }

  /// Whether `stmt` of `loop` runs once a (destination, relation) segment
  /// (GraphStats::dstProductsPerSegment): a linear of the edge's
  /// destination row by its relation's weight, in an edge loop.
  bool perSegment(const ir::Loop &loop, const ir::Stmt &stmt) const {
    using A = ir::Attr;
    if (!stats_.dstProductsPerSegment || stats_.numDstSegments <= 0 ||
        (loop.kind != ir::LoopKind::Edges &&
         loop.kind != ir::LoopKind::Incoming) ||
        (stmt.op != OpKind::Linear && stmt.op != OpKind::LinearT) ||
        stmt.operands.size() != 2 || stmt.reduce != ir::Reduce::None)
      return false;
    const auto *x = std::get_if<ir::Access>(&stmt.operands[0]);
    const auto *w = std::get_if<ir::Access>(&stmt.operands[1]);
    return x && w && x->index.var == loop.var &&
           x->index.attrs == std::vector<A>{A::Dst} &&
           w->index.var == loop.var &&
           w->index.attrs == std::vector<A>{A::EType} &&
           stmt.target.index == ir::IndexPath{loop.var, {}};
  }

  /// The evaluated per-row shape of a declared value.
  const std::vector<int64_t> &shapeOf(const std::string &name) {
    auto it = shapes_.find(name);
    if (it != shapes_.end())
      return it->second;
    const ir::ValueDecl *decl = module_.findValue(name);
    if (!decl)
      throw std::invalid_argument("countFlops: undeclared value '" + name +
                                  "'");
    std::string error;
    auto shape = ir::evaluateShape(decl->shape, bindings_, &error);
    if (!shape)
      throw std::invalid_argument("countFlops: shape of '" + name +
                                  "': " + error);
    return shapes_.emplace(name, *shape).first->second;
  }

  /// Operand i's per-row shape ([] for a scalar).
  std::vector<int64_t> operandShape(const ir::Stmt &stmt, size_t i) {
    if (i >= stmt.operands.size())
      return {};
    if (const auto *a = std::get_if<ir::Access>(&stmt.operands[i]))
      return shapeOf(a->value);
    return {};
  }

  static double numel(const std::vector<int64_t> &shape) {
    double n = 1;
    for (int64_t d : shape)
      n *= static_cast<double>(d);
    return n;
  }

  /// The cost of one row of `stmt` (one iteration of its loop), including
  /// the reduction step when it reduces.
  double perRow(const ir::Stmt &stmt) {
    double result = numel(shapeOf(stmt.target.value));
    double reduction = stmt.reduce == ir::Reduce::None ? 0 : result;
    return opCost(stmt, result) + reduction;
  }

  double opCost(const ir::Stmt &stmt, double result) {
    switch (stmt.op) {
    case OpKind::Linear:
    case OpKind::LinearT: {
      std::vector<int64_t> a = operandShape(stmt, 0);
      double k = a.empty() ? 1 : static_cast<double>(a.back());
      return 2 * result * k;
    }
    case OpKind::Dot:
      return 2 * numel(operandShape(stmt, 0));
    case OpKind::Outer:
      return result;
    case OpKind::Copy:
    case OpKind::Detach:
    case OpKind::Reshape:
    case OpKind::Concat:
    case OpKind::Slice:
    case OpKind::Embed:
    case OpKind::Transpose:
      return 0;
    case OpKind::SumTo:
      // One addition per element summed away.
      return numel(operandShape(stmt, 0));
    case OpKind::Neg:
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Relu:
    case OpKind::LeakyRelu:
    case OpKind::Gelu:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Sqrt:
    case OpKind::ReluGrad:
    case OpKind::LeakyReluGrad:
    case OpKind::GeluGrad:
    case OpKind::Eq:
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
      return result;
    }
    return result;
  }

  const ir::Module &module_;
  const GraphStats &stats_;
  std::map<std::string, int64_t> bindings_;
  std::map<std::string, std::vector<int64_t>> shapes_;
  FlopReport report_;
};

} // namespace

FlopReport countFlops(const ir::Module &module, const GraphStats &stats) {
  return FlopCounter(module, stats).run();
}

} // namespace hector::passes
