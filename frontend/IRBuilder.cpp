#include "frontend/IRBuilder.h"

#include <set>

namespace hector::frontend {
namespace {

using ir::Shape;

class Builder {
public:
  explicit Builder(const CheckedModel &cm)
      : cm_(cm), taken_(cm.takenNames) {}

  ir::Module build() {
    mod_.name = cm_.name;
    mod_.loc = cm_.loc;
    mod_.hypers = cm_.hypers;
    for (const StmtPtr &s : cm_.model->body)
      buildTopLoop(*s);
    // Print order: what comes in, then what is computed.
    for (const auto *list : {&cm_.inputs, &cm_.params, &cm_.graphValues})
      mod_.values.insert(mod_.values.end(), list->begin(), list->end());
    mod_.values.insert(mod_.values.end(), temps_.begin(), temps_.end());
    mod_.values.insert(mod_.values.end(), cm_.outputs.begin(),
                       cm_.outputs.end());
    return std::move(mod_);
  }

private:
  void buildTopLoop(const Stmt &s) {
    auto loop = std::make_unique<ir::Loop>();
    loop->kind = s.loopKind;
    loop->var = s.var;
    loop->loc = s.loc;
    stack_ = {loop.get()};
    mod_.loops.push_back(std::move(loop));
    for (const StmtPtr &c : s.body)
      buildItem(*c);
    stack_.clear();
  }

  void buildItem(const Stmt &s) {
    if (s.kind == Stmt::Kind::For) {
      auto loop = std::make_unique<ir::Loop>();
      loop->kind = s.loopKind;
      loop->var = s.var;
      loop->parent = s.loopParent;
      loop->loc = s.loc;
      ir::Loop *raw = loop.get();
      stack_.back()->body.emplace_back(std::move(loop));
      stack_.push_back(raw);
      for (const StmtPtr &c : s.body)
        buildItem(*c);
      stack_.pop_back();
      return;
    }
    // A local bound to a constant has no row to write.
    if (s.targetAccess.value.empty())
      return;
    base_ = s.targetAccess.value;
    lowerInto(*s.value, s.targetAccess, s.targetReduce, s.loc);
  }

  // ---------------------------------------------------------------------
  // Names and values.

  std::string fresh(const std::string &stem, bool numbered = true) {
    if (!numbered && !taken_.count(stem)) {
      taken_.insert(stem);
      return stem;
    }
    int &n = counters_[stem];
    std::string name;
    do
      name = stem + "_" + std::to_string(n++);
    while (taken_.count(name));
    taken_.insert(name);
    return name;
  }

  /// Declares a temp named `name` with one row per element of `space`.
  void declareTemp(const std::string &name, ir::Space space,
                   const Shape &shape, const SourceLoc &loc) {
    ir::ValueDecl decl;
    decl.name = name;
    decl.kind = ir::ValueKind::Temp;
    decl.space = space;
    decl.shape = shape;
    decl.loc = loc;
    declared_.insert(name);
    temps_.push_back(decl);
  }

  /// A new temp in the innermost loop variable's space, indexed by it.
  ir::Access freshTemp(const Shape &shape, const SourceLoc &loc,
                       const std::string &name) {
    const ir::Loop &loop = *stack_.back();
    declareTemp(name, ir::loopVarSpace(loop.kind), shape, loc);
    return ir::Access{name, ir::IndexPath{loop.var, {}}, loc};
  }

  ir::Access freshTemp(const Shape &shape, const SourceLoc &loc) {
    return freshTemp(shape, loc, fresh(base_));
  }

  /// Declares a user-defined temp on its (single) write.
  void declare(const std::string &name) {
    if (declared_.count(name))
      return;
    auto it = cm_.defined.find(name);
    if (it == cm_.defined.end())
      return; // an output or a builder temp: declared already
    declared_.insert(name);
    temps_.push_back(it->second);
  }

  void emit(const ir::Access &target, ir::Reduce reduce, ir::OpKind op,
            std::vector<ir::Operand> operands, const SourceLoc &loc,
            const Expr *attrs = nullptr) {
    declare(target.value);
    ir::Stmt st;
    st.target = target;
    st.reduce = reduce;
    st.op = op;
    st.operands = std::move(operands);
    st.loc = loc;
    if (attrs) {
      st.shape = attrs->attrShape;
      st.sliceStart = attrs->sliceStart;
      st.sliceSize = attrs->sliceSize;
    }
    stack_.back()->body.emplace_back(std::move(st));
  }

  // ---------------------------------------------------------------------
  // Expressions.

  /// The operand expressions of an Op expression, in order.
  static std::vector<const Expr *> opArgs(const Expr &e) {
    std::vector<const Expr *> out;
    if (e.kind != Expr::Kind::Call) {
      for (const ExprPtr &a : e.args)
        out.push_back(a.get());
      return out;
    }
    if (e.op == ir::OpKind::Reshape || e.op == ir::OpKind::Slice)
      return {e.args[1].get()};
    for (size_t i = 1; i < e.args.size(); ++i)
      out.push_back(e.args[i].get());
    return out;
  }

  std::vector<ir::Operand> lowerOperands(const Expr &e) {
    std::vector<ir::Operand> ops;
    for (const Expr *a : opArgs(e))
      ops.push_back(lower(*a));
    return ops;
  }

  /// Writes the value of `e` to `target` (with `reduce`).
  void lowerInto(const Expr &e, const ir::Access &target, ir::Reduce reduce,
                 const SourceLoc &loc) {
    if (e.meaning == ExprMeaning::Op) {
      emit(target, reduce, e.op, lowerOperands(e), e.loc, &e);
      return;
    }
    if (e.meaning == ExprMeaning::Reduce && reduce == ir::Reduce::None &&
        target.index.attrs.empty() && target.index.var == e.reduceParent) {
      lowerReduction(e, target);
      return;
    }
    if (e.meaning == ExprMeaning::Softmax && reduce == ir::Reduce::None) {
      lowerSoftmax(e, &target);
      return;
    }
    emit(target, reduce, ir::OpKind::Copy, {lower(e)}, loc);
  }

  /// An operand holding the value of `e`, materialising it when needed.
  /// Temps are named in the order their statements are emitted.
  ir::Operand lower(const Expr &e, const std::string &name = "") {
    switch (e.meaning) {
    case ExprMeaning::Scalar:
      return *e.scalar;
    case ExprMeaning::Access:
      return *e.access;
    case ExprMeaning::Reduce: {
      // Per node: a temp of the node loop, not of a nested loop.
      ir::ValueDecl decl;
      decl.name = name.empty() ? fresh(base_) : name;
      decl.kind = ir::ValueKind::Temp;
      decl.space = ir::Space::Node;
      decl.shape = e.shape;
      decl.loc = e.loc;
      declared_.insert(decl.name);
      temps_.push_back(decl);
      ir::Access target{decl.name, ir::IndexPath{e.reduceParent, {}}, e.loc};
      lowerReduction(e, target);
      return target;
    }
    case ExprMeaning::Softmax:
      return lowerSoftmax(e, nullptr);
    default: {
      std::vector<ir::Operand> ops = lowerOperands(e);
      ir::Access target =
          freshTemp(e.shape, e.loc, name.empty() ? fresh(base_) : name);
      emit(target, ir::Reduce::None, e.op, std::move(ops), e.loc, &e);
      return target;
    }
    }
  }

  /// `target[n] reduce= body` in a nested loop over n's edges.
  void lowerReduction(const Expr &e, const ir::Access &target) {
    const Expr &body = *e.args[e.reduceArg];
    auto loop = std::make_unique<ir::Loop>();
    loop->kind = e.reduceLoop;
    loop->var = body.genVar;
    loop->parent = e.reduceParent;
    loop->loc = e.loc;
    ir::Loop *raw = loop.get();
    stack_.back()->body.emplace_back(std::move(loop));
    stack_.push_back(raw);
    lowerInto(body, target, e.reduce, e.loc);
    stack_.pop_back();
  }

  /// edge_softmax(score) in a top-level edge loop: materialise the score,
  /// close the loop, compute the per-destination max, the exponentials and
  /// their per-destination sum in three loops, and continue the original
  /// loop's body in a new edge loop that starts with the division.
  ir::Access lowerSoftmax(const Expr &e, const ir::Access *target) {
    const std::string edge = stack_.back()->var;
    const SourceLoc loc = e.loc;
    const std::string stem = base_;
    const Expr &arg = *e.args[1];
    ir::Operand scoreOp = arg.meaning == ExprMeaning::Op
                              ? lower(arg, fresh(stem + "_score", false))
                              : lower(arg);
    ir::Access score;
    const auto *acc = std::get_if<ir::Access>(&scoreOp);
    if (acc && acc->index.var == edge && acc->index.attrs.empty()) {
      score = *acc; // already one row per edge of this loop
    } else {
      score = freshTemp(e.shape, loc, fresh(stem + "_score", false));
      emit(score, ir::Reduce::None, ir::OpKind::Copy, {scoreOp}, loc);
    }
    const std::string node = edge == "n" ? "v" : "n";
    const ir::IndexPath atEdge{edge, {}};
    const ir::IndexPath atNode{node, {}};
    const ir::IndexPath atDst{edge, {ir::Attr::Dst}};
    auto nodeTemp = [&](const std::string &name) {
      declareTemp(name, ir::Space::Node, e.shape, loc);
    };
    auto edgeTemp = [&](const std::string &name) {
      declareTemp(name, ir::Space::Edge, e.shape, loc);
    };
    auto topLoop = [&](ir::LoopKind kind, const std::string &var) {
      auto loop = std::make_unique<ir::Loop>();
      loop->kind = kind;
      loop->var = var;
      loop->loc = loc;
      ir::Loop *raw = loop.get();
      mod_.loops.push_back(std::move(loop));
      return raw;
    };
    auto incoming = [&](ir::Loop *parent) {
      auto loop = std::make_unique<ir::Loop>();
      loop->kind = ir::LoopKind::Incoming;
      loop->var = edge;
      loop->parent = node;
      loop->loc = loc;
      ir::Loop *raw = loop.get();
      parent->body.emplace_back(std::move(loop));
      return raw;
    };

    const std::string maxName = fresh(stem + "_max", false);
    nodeTemp(maxName);
    stack_ = {incoming(topLoop(ir::LoopKind::DstNodes, node))};
    emit(ir::Access{maxName, atNode, loc}, ir::Reduce::Max,
         ir::OpKind::Detach, {score}, loc);

    const std::string diffName = fresh(stem + "_shifted", false);
    const std::string expName = fresh(stem + "_exp", false);
    edgeTemp(diffName);
    edgeTemp(expName);
    stack_ = {topLoop(ir::LoopKind::Edges, edge)};
    emit(ir::Access{diffName, atEdge, loc}, ir::Reduce::None, ir::OpKind::Sub,
         {score, ir::Access{maxName, atDst, loc}}, loc);
    emit(ir::Access{expName, atEdge, loc}, ir::Reduce::None, ir::OpKind::Exp,
         {ir::Access{diffName, atEdge, loc}}, loc);

    const std::string sumName = fresh(stem + "_sum", false);
    nodeTemp(sumName);
    stack_ = {incoming(topLoop(ir::LoopKind::DstNodes, node))};
    emit(ir::Access{sumName, atNode, loc}, ir::Reduce::Sum, ir::OpKind::Copy,
         {ir::Access{expName, atEdge, loc}}, loc);

    stack_ = {topLoop(ir::LoopKind::Edges, edge)};
    ir::Access result = target ? *target : freshTemp(e.shape, loc);
    emit(result, ir::Reduce::None, ir::OpKind::Div,
         {ir::Access{expName, atEdge, loc}, ir::Access{sumName, atDst, loc}},
         loc);
    return result;
  }

  const CheckedModel &cm_;
  ir::Module mod_;
  std::set<std::string> taken_;
  std::map<std::string, int> counters_;
  std::set<std::string> declared_;
  std::vector<ir::ValueDecl> temps_;
  std::vector<ir::Loop *> stack_;
  std::string base_;
};

} // namespace

ir::Module buildModule(const CheckedModel &checked) {
  return Builder(checked).build();
}

} // namespace hector::frontend
