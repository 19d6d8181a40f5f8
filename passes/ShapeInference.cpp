#include "passes/ShapeInference.h"

#include "ir/InterIRVerifier.h"
#include "passes/LoopWalk.h"

#include <vector>

namespace hector::passes {
namespace {

/// One attribute step of an index path (the table in docs/ir.md).
std::optional<ir::Space> step(ir::Space from, ir::Attr a) {
  using ir::Attr;
  using ir::Space;
  bool edgeOrPair = from == Space::Edge || from == Space::Pair;
  switch (a) {
  case Attr::Src:
    return edgeOrPair ? std::optional(Space::Node) : std::nullopt;
  case Attr::EType:
    return edgeOrPair ? std::optional(Space::EdgeType) : std::nullopt;
  case Attr::Dst:
    return from == Space::Edge ? std::optional(Space::Node) : std::nullopt;
  case Attr::Pair:
    return from == Space::Edge ? std::optional(Space::Pair) : std::nullopt;
  case Attr::NType:
    return from == Space::Node ? std::optional(Space::NodeType)
                               : std::nullopt;
  }
  return std::nullopt;
}

std::string valueText(ir::Space space, const ir::Shape &shape) {
  return std::string(ir::spaceName(space)) + ir::shapeStr(shape);
}

/// Walks the loops in program order, so that each statement's operands
/// have their final shapes by the time the statement is reached.
class Inferrer {
public:
  Inferrer(ir::Module &m, ir::DiagnosticEngine &diags)
      : m_(m), diags_(diags) {}

  bool run() {
    for (const auto &loop : m_.loops)
      visitLoop(*loop);
    return ok_;
  }

private:
  void error(const ir::SourceLoc &loc, const std::string &message) {
    ok_ = false;
    diags_.error(loc, message);
  }

  void visitLoop(const ir::Loop &loop) {
    scopes_.push_back(&loop);
    for (const ir::BodyItem &item : loop.body) {
      if (const auto *stmt = std::get_if<ir::Stmt>(&item))
        visitStmt(*stmt);
      else
        visitLoop(*std::get<std::unique_ptr<ir::Loop>>(item));
    }
    scopes_.pop_back();
  }

  /// The space the target's index path ends in, from the loop that binds
  /// its variable.
  std::optional<ir::Space> targetSpace(const ir::Stmt &s) {
    const ir::IndexPath &path = s.target.index;
    if (path.isGlobal())
      return ir::Space::Global;
    const ir::Loop *binder = bindingLoop(scopes_, path.var);
    if (!binder) {
      error(s.loc, "'" + path.var + "' in '" + s.target.str() +
                       "' is not the variable of an enclosing loop");
      return std::nullopt;
    }
    ir::Space space = ir::loopVarSpace(binder->kind);
    for (ir::Attr a : path.attrs) {
      std::optional<ir::Space> next = step(space, a);
      if (!next) {
        error(s.loc, "'." + std::string(ir::attrName(a)) +
                         "' does not apply to a " + ir::spaceName(space) +
                         " index in '" + s.target.str() + "'");
        return std::nullopt;
      }
      space = *next;
    }
    return space;
  }

  void visitStmt(const ir::Stmt &s) {
    std::optional<ir::Space> space = targetSpace(s);
    std::string err;
    std::optional<ir::Shape> shape = ir::inferResultShape(m_, s, &err);
    if (!shape)
      error(s.loc, err);
    if (!space || !shape)
      return;
    ir::ValueDecl *decl = m_.findValue(s.target.value);
    if (!decl) {
      ir::ValueDecl fresh;
      fresh.name = s.target.value;
      fresh.kind = ir::ValueKind::Temp;
      fresh.loc = s.loc;
      m_.values.push_back(fresh);
      decl = &m_.values.back();
    }
    switch (decl->kind) {
    case ir::ValueKind::Temp:
      decl->space = *space;
      decl->shape = *shape;
      break;
    case ir::ValueKind::Output:
      // An output's declaration is its interface with the caller: a
      // disagreement is the program's error, not something to paper over.
      if (decl->space != *space || decl->shape != *shape) {
        error(s.loc, "output '" + decl->name + "' is declared " +
                         valueText(decl->space, decl->shape) +
                         " but its defining statement computes " +
                         valueText(*space, *shape));
        diags_.note(decl->loc, "'" + decl->name + "' is declared here");
      }
      break;
    default:
      error(s.loc, "cannot write " +
                       std::string(ir::valueKindName(decl->kind)) + " '" +
                       decl->name + "'; only temp and output values are "
                       "written");
    }
  }

  ir::Module &m_;
  ir::DiagnosticEngine &diags_;
  bool ok_ = true;
  std::vector<const ir::Loop *> scopes_; ///< enclosing loops, outermost first
};

} // namespace

bool inferShapes(ir::Module &module, ir::DiagnosticEngine &diags) {
  return Inferrer(module, diags).run();
}

} // namespace hector::passes
