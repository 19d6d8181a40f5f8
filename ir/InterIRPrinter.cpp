// The textual form of the inter-op IR (docs/ir.md, "Grammar of the printed
// form"). Layout: two spaces per nesting level, one declaration or statement
// per line, and one blank line between the hyper-parameters, the value
// declarations and the loops (sections that are empty are skipped).
#include "ir/InterIRPrinter.h"

namespace hector::ir {

namespace {

/// Numbers print like scalar literals: the shortest text that reads back.
std::string numberText(double v) {
  ScalarExpr literal;
  literal.literal = v;
  return literal.str();
}

std::string hyperLine(const HyperDecl &h) {
  return "hyper " + h.name + " : " +
         (h.type == HyperDecl::Type::Int ? "int" : "float") + " = " +
         numberText(h.defaultValue);
}

std::string valueLine(const ValueDecl &v) {
  std::string out = std::string(valueKindName(v.kind)) + " " + v.name + " : " +
                    spaceName(v.space) + shapeStr(v.shape);
  if (v.constant)
    out += " const";
  return out;
}

std::string loopHeader(const Loop &loop) {
  std::string range = loopKindName(loop.kind);
  if (loop.kind == LoopKind::Incoming || loop.kind == LoopKind::Outgoing)
    range = loop.parent + "." + range;
  return "foreach " + loop.var + " in " + range + " {";
}

void printLoop(const Loop &loop, int depth, std::string &out) {
  std::string indent(2 * depth, ' ');
  out += indent + loopHeader(loop) + "\n";
  for (const BodyItem &item : loop.body) {
    if (const auto *stmt = std::get_if<Stmt>(&item))
      out += indent + "  " + printStmt(*stmt) + "\n";
    else
      printLoop(*std::get<std::unique_ptr<Loop>>(item), depth + 1, out);
  }
  out += indent + "}\n";
}

} // namespace

std::string printOperand(const Operand &operand) {
  if (const auto *access = std::get_if<Access>(&operand))
    return access->str();
  return std::get<ScalarExpr>(operand).str();
}

std::string printStmt(const Stmt &stmt) {
  std::string out = stmt.target.str() + " " + reduceToken(stmt.reduce) + " " +
                    opName(stmt.op) + "(";
  for (size_t i = 0; i < stmt.operands.size(); ++i)
    out += (i ? ", " : "") + printOperand(stmt.operands[i]);
  out += ")";
  // Attributes are printed by op, not by presence, so that the parser can
  // tell from the op alone whether attribute keywords follow.
  if (stmt.op == OpKind::Reshape || stmt.op == OpKind::SumTo) {
    out += " shape " + shapeStr(stmt.shape);
  } else if (stmt.op == OpKind::Slice || stmt.op == OpKind::Embed) {
    out += " start " + stmt.sliceStart.str() + " size " + stmt.sliceSize.str();
  } else if (stmt.op == OpKind::Transpose) {
    out += " perm [";
    for (size_t i = 0; i < stmt.perm.size(); ++i)
      out += (i ? ", " : "") + std::to_string(stmt.perm[i]);
    out += "]";
  }
  return out;
}

std::string printModule(const Module &module) {
  std::string out = "module @" + module.name + " {\n";
  bool needBlank = false;
  auto section = [&](bool nonEmpty) {
    if (nonEmpty && needBlank)
      out += "\n";
    needBlank = needBlank || nonEmpty;
  };
  section(!module.hypers.empty());
  for (const HyperDecl &h : module.hypers)
    out += "  " + hyperLine(h) + "\n";
  section(!module.values.empty());
  for (const ValueDecl &v : module.values)
    out += "  " + valueLine(v) + "\n";
  section(!module.loops.empty());
  for (const auto &loop : module.loops)
    printLoop(*loop, 1, out);
  return out + "}\n";
}

} // namespace hector::ir
