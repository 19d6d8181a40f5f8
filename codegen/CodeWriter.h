// CodeWriter: an indentation-aware text builder for the emitters. Lines are
// formatted with fmt; open()/close() bracket a block and indent it.
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>

namespace hector::codegen {

class CodeWriter {
public:
  /// Starts at `indent` levels (for text spliced into an outer block).
  explicit CodeWriter(int indent = 0) : indent_(indent) {}

  /// Appends one line (fmt format string and arguments), indented.
  template <typename... Args>
  void line(fmt::format_string<Args...> format, Args &&...args) {
    raw(fmt::format(format, std::forward<Args>(args)...));
  }
  /// Appends `text` as one indented line (no formatting).
  void raw(const std::string &text) {
    if (!text.empty())
      out_.append(static_cast<size_t>(indent_) * 2, ' ');
    out_ += text;
    out_ += '\n';
  }
  void blank() { out_ += '\n'; }
  /// Appends `head` followed by " {" and indents what follows.
  void open(const std::string &head) {
    raw(head.empty() ? "{" : head + " {");
    ++indent_;
  }
  /// Closes the innermost block with "}" plus `tail` (e.g. ";").
  void close(const std::string &tail = "") {
    --indent_;
    raw("}" + tail);
  }
  /// Appends each line of `text` (written at indentation 0) indented.
  void lines(const std::string &text) {
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t end = text.find('\n', pos);
      raw(text.substr(pos, end == std::string::npos ? end : end - pos));
      if (end == std::string::npos)
        break;
      pos = end + 1;
    }
  }
  /// Appends already indented multi-line text verbatim.
  void verbatim(const std::string &text) { out_ += text; }

  const std::string &str() const { return out_; }

private:
  std::string out_;
  int indent_ = 0;
};

} // namespace hector::codegen
