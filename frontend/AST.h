// The abstract syntax tree of a .hgnn file (docs/dsl.md), built from the
// ANTLR parse tree by frontend/ASTBuilder. Every node carries the SourceLoc
// of its first token. Sema (frontend/Sema) fills in the `Sema results`
// fields of expressions and statements; IRBuilder (frontend/IRBuilder)
// reads only those, never re-deriving meaning from names.
#pragma once

#include "ir/InterIR.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hector::frontend {

using ir::SourceLoc;

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

/// What an expression computes, as decided by Sema.
enum class ExprMeaning {
  Unresolved, ///< not (yet) checked, or erroneous
  Scalar,     ///< a compile-time scalar (literal, hyper): `scalar`
  Access,     ///< a row of a value: `access`
  Op,         ///< an ir::OpKind applied to `args`: `op`
  Reduce,     ///< sum/mean/max over a node's edges: `reduce`, `genLoop`
  Softmax,    ///< edge_softmax(args[0])
  Graph,      ///< `g`, a loop variable, `e.etype`, ...: only for indexing
};

/// Expressions. One struct with a kind: the language is small and Sema and
/// IRBuilder switch on `kind` anyway.
struct Expr {
  enum class Kind {
    Number, ///< `number`
    String, ///< `text` (only valid as an import path)
    Name,   ///< `text`
    Member, ///< args[0] `.` text
    Index,  ///< args[0] `[` args[1] `]`
    Call,   ///< args[0] `(` args[1..] `)`; generator args have genVar set
    Neg,    ///< `-` args[0]
    Binary, ///< args[0] binop args[1]
  };
  Kind kind = Kind::Number;
  SourceLoc loc;
  double number = 0;
  bool isInteger = false; ///< Number written without '.' or exponent
  std::string text;
  char binop = 0; ///< '+', '-', '*', '/'
  std::vector<ExprPtr> args;
  /// Generator argument of a reduction: `EXPR for genVar in genRange`.
  std::string genVar;
  ExprPtr genRange;

  // --- Sema results ---
  ExprMeaning meaning = ExprMeaning::Unresolved;
  ir::Shape shape;                 ///< per-row shape of the result
  /// Graph: the index path (in `access->index`) ends in this space.
  ir::Space space = ir::Space::Global;
  std::optional<ir::ScalarExpr> scalar;
  long scalarSize = 0;             ///< nodes of `scalar`
  std::optional<ir::Access> access;
  bool transposed = false;         ///< `W.T`: only linear() accepts it
  ir::OpKind op = ir::OpKind::Copy;
  ir::Shape attrShape;             ///< Reshape
  ir::Dim sliceStart, sliceSize;   ///< Slice
  ir::Reduce reduce = ir::Reduce::None;
  /// Reduce: the loop var of the enclosing node loop and the edge loop kind.
  std::string reduceParent;
  ir::LoopKind reduceLoop = ir::LoopKind::Incoming;
  /// Index of the ExprPtr in `args` that holds the reduced expression.
  size_t reduceArg = 1;

  ExprPtr clone() const;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

/// `for var in range { body }` or `target = value` / `target += value`.
struct Stmt {
  enum class Kind { For, Assign };
  Kind kind = Kind::Assign;
  SourceLoc loc;
  // For.
  std::string var;
  SourceLoc varLoc;
  ExprPtr range;
  std::vector<StmtPtr> body;
  // Assign.
  ExprPtr target;
  bool accumulate = false; ///< `+=`
  ExprPtr value;

  // --- Sema results ---
  bool valid = false; ///< Sema checked it without errors
  ir::LoopKind loopKind = ir::LoopKind::Edges;
  std::string loopParent;     ///< Incoming / Outgoing
  ir::Access targetAccess;    ///< Assign: the row written
  ir::Reduce targetReduce = ir::Reduce::None;
};

/// `hyper NAME = EXPR`.
struct HyperDef {
  std::string name;
  ExprPtr value;
  SourceLoc loc;
};

/// `input|weight|output NAME : SPACE[dims] [const]`.
struct ValueDef {
  enum class Kind { Input, Weight, Output };
  Kind kind = Kind::Input;
  std::string name;
  std::string space; ///< as written; "" when omitted
  SourceLoc spaceLoc;
  std::vector<ExprPtr> dims;
  bool constant = false;
  SourceLoc loc;
};

/// `model NAME { ... }`: declarations, then loops (order kept for checks).
struct Model {
  std::string name;
  SourceLoc loc;
  std::vector<HyperDef> hypers;
  std::vector<ValueDef> values;
  std::vector<StmtPtr> body; ///< top-level statements (loops)
  /// Location of the first statement; declarations after it are errors.
  SourceLoc firstStmtLoc;
  /// Declarations that came after the first statement (for diagnostics).
  std::vector<SourceLoc> lateDecls;
};

/// `def NAME(params) { lets; return EXPR }`.
struct FuncDef {
  std::string name;
  SourceLoc loc;
  std::vector<std::string> params;
  std::vector<SourceLoc> paramLocs;
  std::vector<std::pair<std::string, ExprPtr>> lets;
  std::vector<SourceLoc> letLocs;
  ExprPtr result;
};

/// `import "path"`.
struct Import {
  std::string path;
  SourceLoc loc;
};

/// One parsed file.
struct File {
  std::string name;
  std::vector<Import> imports;
  std::vector<FuncDef> funcs;
  std::vector<Model> models;
};

} // namespace hector::frontend
