// libFuzzer target over the whole frontend: parse, sema, IR building and
// the IR verifier, on in-memory text. Imports resolve to nothing (every
// import is an error), so no file is read. Any crash, sanitizer report,
// leak or timeout is a bug: keep the reproducer in tests/fuzz/regressions/
// (FrontendTest.FuzzRegressionsDoNotCrash runs them).
#include "frontend/Frontend.h"
#include "ir/InterIRPrinter.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  hector::ir::DiagnosticEngine diags;
  std::optional<hector::ir::Module> module = hector::frontend::compileHgnnSource(
      text, "fuzz.hgnn", diags, hector::frontend::SourceLoader());
  if (module) {
    // The printer must handle everything the frontend builds.
    volatile size_t n = hector::ir::printModule(*module).size();
    (void)n;
  }
  // Rendering exercises the caret code on arbitrary lines.
  std::ostringstream sink;
  diags.print(sink);
  return 0;
}
