// Naming: how IR entities appear in the emitted C++ (one place, so that the
// kernels, the host code and the torch binding agree), and C++ expressions
// for symbolic dims and scalar expressions.
//
// Every identifier the emitters derive from user names is prefixed, so
// that a model's value or hyper named `e`, `g` or `float` cannot collide
// with the emitted code's own names or with C++ keywords:
//   hyper h    -> local `hp_h` (a field `h` of the Hypers struct)
//   value v    -> buffer `b.v` (a field of the Buffers struct),
//                 register slot `r_v`, row size `sz_v`
//   loop var x -> `v_x`
#pragma once

#include "ir/Dim.h"
#include "ir/InterIR.h"
#include "ir/IntraIR.h"

#include <string>

namespace hector::codegen {

/// Thrown by the emitters for what they cannot emit (the message says what
/// and where); hectorc reports it as an error.
struct EmitError {
  std::string message;
};

std::string hyperLocal(const std::string &hyper);  ///< "hp_" + hyper
std::string sizeLocal(const std::string &value);   ///< "sz_" + value
std::string registerLocal(const std::string &value); ///< "r_" + value
std::string loopVarLocal(const std::string &var);  ///< "v_" + var
/// The CSR position of an incoming/outgoing loop's edge variable, safe to
/// index the CSR-ordered edge arrays with: "c_" + var.
std::string csrPosLocal(const std::string &var);

/// A C++ int64 expression for `dim` over the hyper locals:
/// `out_dim/heads` -> `(hp_out_dim / hp_heads)`, `64` -> `INT64_C(64)`.
std::string dimExpr(const ir::Dim &dim);
/// The number of elements of a row of `shape` as a Dim (1 for a scalar).
ir::Dim shapeSize(const ir::Shape &shape);
/// `size` / `part` as a C++ expression, symbolically when the division is
/// exact, else as a runtime division.
std::string ratioExpr(const ir::Dim &size, const ir::Dim &part);
/// A C++ float expression for a compile-time scalar over the hyper locals.
std::string scalarExpr(const ir::ScalarExpr &expr);

/// The C++ expression of the number of rows of a row scheme, from the
/// GraphArrays `g`: `g.num_edges`, ..., `1` for Global.
std::string rowCountExpr(intra::RowScheme rows);
/// Same for a GEMM's or traversal's row domain.
std::string rowCountExpr(intra::RowDomain rows);
/// The element count of value `value`'s buffer, `rows` rows of its row
/// size: `g.num_edges * sz_alpha`.
std::string bufferNumelExpr(intra::RowScheme rows, const std::string &value);

} // namespace hector::codegen
