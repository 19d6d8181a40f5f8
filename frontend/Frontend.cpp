#include "frontend/Frontend.h"

#include "frontend/ASTBuilder.h"
#include "frontend/IRBuilder.h"
#include "ir/InterIRVerifier.h"

#include <fstream>
#include <sstream>

namespace hector::frontend {

std::optional<std::string> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return std::nullopt;
  return text.str();
}

std::optional<ir::Module> compileHgnnSource(const std::string &text,
                                            const std::string &file,
                                            ir::DiagnosticEngine &diags,
                                            const SourceLoader &loader) {
  diags.addSource(file, text);
  std::unique_ptr<File> ast = parseHgnn(text, file, diags);
  if (!ast)
    return std::nullopt;
  std::vector<std::unique_ptr<File>> imported;
  std::optional<CheckedModel> checked = analyze(*ast, loader, diags, imported);
  if (!checked)
    return std::nullopt;
  ir::Module module = buildModule(*checked);
  // The frontend must produce valid IR; a failure here is a compiler bug,
  // reported with the verifier's findings so that it can be filed.
  ir::DiagnosticEngine internal;
  if (!ir::verifyModule(module, internal)) {
    std::ostringstream why;
    internal.print(why);
    diags.error(module.loc, "internal error: the frontend produced invalid "
                            "IR; please report this bug:\n" +
                                why.str());
    return std::nullopt;
  }
  return module;
}

std::optional<ir::Module> compileHgnn(const std::string &path,
                                      ir::DiagnosticEngine &diags) {
  std::optional<std::string> text = readFile(path);
  if (!text) {
    diags.error(ir::SourceLoc{path, 0, 0}, "cannot open file " + path);
    return std::nullopt;
  }
  return compileHgnnSource(*text, path, diags, readFile);
}

} // namespace hector::frontend
