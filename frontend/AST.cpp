#include "frontend/AST.h"

namespace hector::frontend {

ExprPtr Expr::clone() const {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->loc = loc;
  e->number = number;
  e->isInteger = isInteger;
  e->text = text;
  e->binop = binop;
  e->genVar = genVar;
  e->args.reserve(args.size());
  for (const ExprPtr &a : args)
    e->args.push_back(a->clone());
  if (genRange)
    e->genRange = genRange->clone();
  // Sema results are copied too, so that a clone of a checked expression
  // stays checked.
  e->meaning = meaning;
  e->shape = shape;
  e->space = space;
  e->scalar = scalar;
  e->scalarSize = scalarSize;
  e->access = access;
  e->transposed = transposed;
  e->op = op;
  e->attrShape = attrShape;
  e->sliceStart = sliceStart;
  e->sliceSize = sliceSize;
  e->reduce = reduce;
  e->reduceParent = reduceParent;
  e->reduceLoop = reduceLoop;
  e->reduceArg = reduceArg;
  return e;
}

} // namespace hector::frontend
