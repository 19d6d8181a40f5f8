// Diagnostic collection and rendering (see Diagnostics.h for the format).
#include "ir/Diagnostics.h"

namespace hector::ir {

namespace {

const char *severityName(Diagnostic::Severity s) {
  switch (s) {
  case Diagnostic::Severity::Error:
    return "error";
  case Diagnostic::Severity::Warning:
    return "warning";
  case Diagnostic::Severity::Note:
    return "note";
  }
  return "error";
}

std::vector<std::string> splitLines(const std::string &text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

/// The caret line: whitespace up to the column, keeping tabs as tabs so
/// that the caret lines up under the source line in any tab width.
std::string caretLine(const std::string &line, int col) {
  std::string out;
  for (int i = 0; i + 1 < col; ++i)
    out += (static_cast<size_t>(i) < line.size() && line[i] == '\t') ? '\t'
                                                                       : ' ';
  return out + "^";
}

} // namespace

void DiagnosticEngine::addSource(const std::string &file,
                                 const std::string &text) {
  sourceLines_[file] = splitLines(text);
}

void DiagnosticEngine::error(const SourceLoc &loc, const std::string &message) {
  add(Diagnostic::Severity::Error, loc, message);
}

void DiagnosticEngine::warning(const SourceLoc &loc,
                               const std::string &message) {
  add(Diagnostic::Severity::Warning, loc, message);
}

void DiagnosticEngine::note(const SourceLoc &loc, const std::string &message) {
  add(Diagnostic::Severity::Note, loc, message);
}

void DiagnosticEngine::add(Diagnostic::Severity s, const SourceLoc &loc,
                           const std::string &m) {
  bool isError = s == Diagnostic::Severity::Error;
  bool stopped = errorCount_ >= errorLimit_;
  if (isError)
    ++errorCount_;
  if (stopped) {
    // Past the limit nothing more is kept (a note would be orphaned from
    // its error), but the first suppressed error says so, once.
    if (isError && errorCount_ == errorLimit_ + 1) {
      Diagnostic last;
      last.loc.file = loc.file;
      last.message = "too many errors, stopping";
      diags_.push_back(std::move(last));
    }
    return;
  }
  diags_.push_back(Diagnostic{s, loc, m});
}

std::string DiagnosticEngine::render(const Diagnostic &d) const {
  std::string out;
  if (!d.loc.valid()) {
    if (!d.loc.file.empty())
      out += d.loc.file + ": ";
  } else {
    if (!d.loc.file.empty())
      out += d.loc.file + ":";
    out += std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": ";
  }
  out += std::string(severityName(d.severity)) + ": " + d.message + "\n";
  if (!d.loc.valid())
    return out;
  auto it = sourceLines_.find(d.loc.file);
  if (it == sourceLines_.end() ||
      static_cast<size_t>(d.loc.line) > it->second.size())
    return out;
  const std::string &line = it->second[d.loc.line - 1];
  out += line + "\n" + caretLine(line, d.loc.col) + "\n";
  return out;
}

void DiagnosticEngine::print(std::ostream &os) const {
  for (const Diagnostic &d : diags_)
    os << render(d);
}

} // namespace hector::ir
