// ElementPrinter: the per-element C++ of one inter-op statement, shared by
// the CUDA and the C++ emitters (the traversal template's statement body).
//
// A statement computes one row of its target. The emitted code runs inside
// HECTOR_FOR_ELEMENTS(i, size): for the flat element index `i` of the
// target row it declares `scalar_t v` (the kernels are templates over the
// scalar type, float or double), reading
// operand k's row through the pointer named in OperandRef::ptr. Operand
// indexing follows docs/ir.md: prefix broadcasting for the elementwise
// binary ops (an operand of size s in a result of size S is read at
// i / (S / s)), suffix broadcasting for dot and outer, and each shape op's
// own index map.
#pragma once

#include "codegen/CodeWriter.h"
#include "ir/InterIR.h"

#include <optional>
#include <string>
#include <vector>

namespace hector::codegen {

/// How the element code reads one operand.
struct OperandRef {
  /// A row operand: the C++ name of a `const scalar_t *` to its row.
  std::string ptr;
  ir::Shape shape; ///< the operand's per-row shape
  /// A scalar operand (ir::ScalarExpr): its C++ scalar_t expression.
  std::string scalar;
  bool isScalar() const { return ptr.empty(); }
};

/// Whether element i of `stmt`'s result (row shape `result`) reads operand
/// `operand` (row shape `operandShape`) at its element i and nowhere else.
/// Then the lane that computes element i of the result is the lane that
/// computed element i of the operand in an element loop of the same size,
/// and the two statements can share one element loop with no sync between
/// them (codegen/ElementGroups.h).
bool readsOnlyElement(const ir::Stmt &stmt, size_t operand,
                      const ir::Shape &result, const ir::Shape &operandShape);

/// The index of a row of `part` elements that element `i` of a row of
/// `whole` elements reads under prefix broadcasting ("i" when they are the
/// same size; "0" or a run-time choice when the part may be one scalar).
std::string prefixIndex(const ir::Dim &part, const ir::Dim &whole);

/// Whether element i of `stmt`'s result reads operand `operand`, a
/// smaller row than the result, at prefixIndex(operand's size, result's
/// size) and nowhere else: an elementwise binary op broadcasting it (an
/// attention weight of one scalar per head against a [heads, d] row).
bool readsPrefixOnly(const ir::Stmt &stmt, size_t operand,
                     const ir::Shape &result, const ir::Shape &operandShape);

/// Prints the lines that declare `v` (a scalar_t) for element `i` of
/// `stmt`'s result, whose row shape is `result`. Throws EmitError for an
/// op it has no element form for.
void printElement(CodeWriter &w, const ir::Stmt &stmt, const ir::Shape &result,
                  const std::vector<OperandRef> &operands);

/// The run-time test that `rows` (C++ pointers to row starts) may be read
/// a quad at a time over `size` elements (Traversal.h quadRows).
std::string quadRowsTest(const std::string &size,
                         const std::vector<std::string> &rows);

/// For a contraction (sum_to, dot): the C++ count of the terms each
/// element of the result sums; std::nullopt for other ops.
std::optional<std::string>
contractionTerms(const ir::Stmt &stmt, const ir::Shape &result,
                 const std::vector<OperandRef> &operands);

/// printElement for a contraction whose terms the lanes of the thread
/// group share (Traversal.h splitsSum): lane l adds terms l, l +
/// kGroupSize, ..., and groupSum leaves the whole sum `v` in every lane.
/// Every lane of the group must run it, for the same element i.
void printLaneSplitElement(CodeWriter &w, const ir::Stmt &stmt,
                           const ir::Shape &result,
                           const std::vector<OperandRef> &operands);

/// For a contraction in an edge loop split over workers: declares
/// `scalar_t <sum> = 0` and adds to it this lane's share of element i's
/// terms (terms hector_lane, hector_lane + hector_lanes, ..., with the
/// worker's lanes) when `active`; the caller folds the worker's lanes
/// (foldSum). Every lane of the warp must then take part in the fold.
void printWorkerLaneTerms(CodeWriter &w, const ir::Stmt &stmt,
                          const ir::Shape &result,
                          const std::vector<OperandRef> &operands,
                          const std::string &sum, const std::string &active);

} // namespace hector::codegen
