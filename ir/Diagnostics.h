// User-facing diagnostics: `file:line:col: error: message`, then the source
// line and a caret under the column. Shared by the frontend, the IR parser
// and the verifier so that every user error looks the same.
#pragma once

#include "ir/InterIR.h"

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace hector::ir {

struct Diagnostic {
  enum class Severity { Error, Warning, Note };
  Severity severity = Severity::Error;
  SourceLoc loc;
  std::string message;
};

/// Collects diagnostics; renders them with source excerpts. Sources are
/// registered by file name so that carets can be drawn for imported files.
class DiagnosticEngine {
public:
  void addSource(const std::string &file, const std::string &text);
  void error(const SourceLoc &loc, const std::string &message);
  void warning(const SourceLoc &loc, const std::string &message);
  void note(const SourceLoc &loc, const std::string &message);

  bool hasErrors() const { return errorCount_ > 0; }
  int errorCount() const { return errorCount_; }
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }

  /// Stops collecting once this many errors were reported (a file full of
  /// garbage must not produce a million lines); the rest are counted.
  void setErrorLimit(int limit) { errorLimit_ = limit; }

  /// Renders one diagnostic: header line, source line, caret line.
  std::string render(const Diagnostic &d) const;
  /// Renders all, in the order they were reported.
  void print(std::ostream &os) const;

private:
  void add(Diagnostic::Severity s, const SourceLoc &loc, const std::string &m);
  std::vector<Diagnostic> diags_;
  std::map<std::string, std::vector<std::string>> sourceLines_;
  int errorCount_ = 0;
  int errorLimit_ = 50;
};

} // namespace hector::ir
