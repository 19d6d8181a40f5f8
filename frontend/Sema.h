// Semantic analysis of a parsed .hgnn file: imports and `def` inlining,
// hyper-parameters (plain and derived), value declarations with symbolic
// shapes (ir::Dim), and the loops: name resolution, index spaces, shapes,
// read-before-write, single definition. It annotates the AST in place
// (the `Sema results` fields of frontend/AST.h) and describes the values
// the IR module will declare; frontend/IRBuilder turns the annotated AST
// into statements without further checks.
#pragma once

#include "frontend/AST.h"
#include "ir/Diagnostics.h"
#include "ir/InterIR.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace hector::frontend {

/// Reads an imported file; nullopt when it cannot be read. The path is
/// already resolved against the importing file's directory.
using SourceLoader =
    std::function<std::optional<std::string>(const std::string &path)>;

/// The checked model, ready for IRBuilder.
struct CheckedModel {
  std::string name;
  SourceLoc loc;
  /// Plain (overridable) hypers; derived ones are substituted away.
  std::vector<ir::HyperDecl> hypers;
  /// Declared inputs, params and outputs, in source order, and the graph
  /// values the loops read.
  std::vector<ir::ValueDecl> inputs, params, outputs, graphValues;
  /// Values defined by assignments (`e.z = ...`, locals under their unique
  /// IR name), by name.
  std::map<std::string, ir::ValueDecl> defined;
  /// Every name in use, so that IRBuilder's fresh names never collide.
  std::set<std::string> takenNames;
  /// The annotated model (owned by the File passed to analyze()).
  const Model *model = nullptr;
};

/// Checks the (single) model of `file`, loading imports through `loader`.
/// Reports every error found; returns nullopt when there was any.
/// `file` must outlive the result (CheckedModel points into it); imported
/// files are kept alive in `keepAlive`.
std::optional<CheckedModel>
analyze(File &file, const SourceLoader &loader, ir::DiagnosticEngine &diags,
        std::vector<std::unique_ptr<File>> &keepAlive);

} // namespace hector::frontend
