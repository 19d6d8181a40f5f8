// Helpers of the codegen tests: modules from IR text or from the committed
// frontend output of a bundled model (no torch, unlike tests/passes).
#pragma once

#include "ir/Diagnostics.h"
#include "ir/InterIRParser.h"
#include "ir/InterIRVerifier.h"
#include "passes/LowerToIntraOp.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace hector::codegentest {

/// Parses and verifies IR text; fails the test (empty module) otherwise.
inline ir::Module parseVerified(const std::string &text,
                                const std::string &file) {
  ir::DiagnosticEngine diags;
  diags.addSource(file, text);
  std::optional<ir::Module> module = ir::parseModule(text, file, diags);
  if (module)
    ir::verifyModule(*module, diags);
  if (!module || diags.hasErrors()) {
    std::ostringstream os;
    diags.print(os);
    ADD_FAILURE() << file << " does not parse and verify:\n" << os.str();
    return ir::Module{};
  }
  return std::move(*module);
}

/// Lowers a module (lowerToIntraOp with `options`); fails the test (an
/// empty program) on an error.
inline intra::Program lowerVerified(const ir::Module &m,
                                    const passes::LoweringOptions &options = {}) {
  ir::DiagnosticEngine diags;
  std::optional<intra::Program> p = passes::lowerToIntraOp(m, options, diags);
  std::ostringstream os;
  diags.print(os);
  EXPECT_TRUE(p.has_value()) << os.str();
  EXPECT_FALSE(diags.hasErrors()) << os.str();
  return p ? std::move(*p) : intra::Program{};
}

/// generated/<model>/<model>.inter.ir: the frontend's output for
/// models/<model>.hgnn, as hectorc wrote it.
inline ir::Module loadBundledModel(const std::string &model) {
  const std::string path = std::string(HECTOR_SOURCE_DIR) + "/generated/" +
                           model + "/" + model + ".inter.ir";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in)
    ADD_FAILURE() << "cannot read " << path;
  return parseVerified(text.str(), path);
}

inline size_t countOf(const std::string &text, const std::string &needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + needle.size()))
    ++n;
  return n;
}

/// The part of `text` from the first `from` up to (not including) the next
/// `until` after it, or to the end; "" when `from` is absent.
inline std::string textFrom(const std::string &text, const std::string &from,
                            const std::string &until) {
  const size_t begin = text.find(from);
  if (begin == std::string::npos)
    return "";
  return text.substr(begin, text.find(until, begin) - begin);
}

} // namespace hector::codegentest
