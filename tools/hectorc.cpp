// hectorc: compiles a relational GNN layer written in .hgnn (docs/dsl.md),
// or reads printed inter-op IR (FILE.ir), runs the inter-op pipeline
// (passes/Pipeline.h) and emits the result.
//
// Exit status: 0 on success, 1 on errors in the input (diagnostics on
// stderr), 2 on usage errors and on what is not implemented yet.
#include "frontend/Frontend.h"
#include "ir/Diagnostics.h"
#include "ir/InterIRParser.h"
#include "ir/InterIRPrinter.h"
#include "passes/Pipeline.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace hector;

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Reads FILE as printed IR (*.ir) or as .hgnn source.
std::optional<ir::Module> load(const std::string &path,
                               ir::DiagnosticEngine &diags) {
  if (!endsWith(path, ".ir"))
    return frontend::compileHgnn(path, diags);
  std::optional<std::string> text = frontend::readFile(path);
  if (!text) {
    diags.error(ir::SourceLoc{path, 0, 0}, "cannot open file " + path);
    return std::nullopt;
  }
  diags.addSource(path, *text);
  return ir::parseModule(*text, path, diags);
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"hectorc: compiles relational GNN layers (.hgnn) to CUDA and "
               "CPU kernels",
               "hectorc"};
  std::string input;
  std::string outDir;
  std::string emit;
  std::vector<std::string> printAfter;
  bool printAfterAll = false;
  app.add_option("FILE", input, "model.hgnn, or printed inter-op IR (*.ir)")
      ->required();
  app.add_option("-o", outDir,
                 "write the outputs into DIR (DIR/<model>.inter.ir)")
      ->type_name("DIR");
  app.add_option("--emit", emit,
                 "what to emit: inter-ir|intra-ir|cuda|cpu|all (default: "
                 "inter-ir to stdout, or everything into -o DIR)")
      ->check(CLI::IsMember({"inter-ir", "intra-ir", "cuda", "cpu", "all"}));
  app.add_option("--print-after", printAfter,
                 "print the IR to stderr after the named inter-op pass "
                 "(repeatable)")
      ->type_name("PASS")
      ->allow_extra_args(false);
  app.add_flag("--print-after-all", printAfterAll,
               "print the IR to stderr after every inter-op pass");
  app.set_version_flag("--version", std::string("hectorc ") + HECTOR_VERSION);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  if (!emit.empty() && emit != "inter-ir") {
    std::cerr << "hectorc: --emit=" << emit << " is not implemented yet\n";
    return 2;
  }
  const std::vector<std::string> passes = passes::interOpPassNames();
  for (const std::string &p : printAfter) {
    if (std::find(passes.begin(), passes.end(), p) == passes.end()) {
      std::cerr << "hectorc: unknown pass '" << p << "' for --print-after;"
                << " passes:";
      for (const std::string &name : passes)
        std::cerr << " " << name;
      std::cerr << "\n";
      return 2;
    }
  }

  ir::DiagnosticEngine diags;
  std::optional<ir::Module> module = load(input, diags);
  if (module) {
    passes::PipelineOptions options;
    options.printAfter = printAfter;
    options.printAfterAll = printAfterAll;
    if (!passes::runInterOpPipeline(*module, options, diags, std::cerr))
      module.reset();
  }
  if (!module || diags.hasErrors()) {
    diags.print(std::cerr);
    return 1;
  }
  diags.print(std::cerr); // warnings, if any

  const std::string text = ir::printModule(*module);
  if (outDir.empty()) {
    std::cout << text;
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(outDir, ec);
  const std::string path =
      (std::filesystem::path(outDir) / (module->name + ".inter.ir")).string();
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (ec || !out) {
    std::cerr << "hectorc: cannot write " << path << "\n";
    return 1;
  }
  return 0;
}
