// hectorc: compiles a relational GNN layer written in .hgnn (docs/dsl.md),
// or reads printed inter-op IR (FILE.ir), runs the inter-op pipeline
// (passes/Pipeline.h), lowers the result to the intra-op IR
// (docs/intra-ir.md) and emits them: `--emit=inter-ir|intra-ir` to stdout,
// or with `-o DIR` DIR/<model>.inter.ir, DIR/<model>.intra.ir and
// DIR/plan.json (the preprocessing plan), plus a summary line on stderr.
//
// Exit status: 0 on success, 1 on errors in the input (diagnostics on
// stderr), 2 on usage errors and on what is not implemented yet.
#include "codegen/Emit.h"
#include "frontend/Frontend.h"
#include "ir/Diagnostics.h"
#include "ir/InterIRParser.h"
#include "ir/InterIRPrinter.h"
#include "passes/Autodiff.h"
#include "passes/CostModel.h"
#include "passes/LowerToIntraOp.h"
#include "passes/Pipeline.h"
#include "passes/PreprocessingPlan.h"

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

/// Takes the GCC-style switches (`-fno-reorder`, ...) out of argv, which
/// CLI11 cannot declare (its single-dash options are one letter). Returns
/// false with `bad` set on an unknown `-f` switch.
bool takeSwitches(std::vector<std::string> &args,
                  passes::PipelineOptions &options, std::string &bad) {
  std::vector<std::string> rest;
  for (const std::string &a : args) {
    if (a == "-fno-reorder")
      options.reorder = false;
    else if (a == "-fno-compact")
      options.compact = false;
    else if (a == "-fno-fuse")
      options.fuse = false;
    else if (a.rfind("-f", 0) == 0 && a.size() > 2) {
      bad = a;
      return false;
    } else
      rest.push_back(a);
  }
  args = std::move(rest);
  return true;
}

bool writeFile(const std::filesystem::path &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "hectorc: cannot write " << path.string() << "\n";
    return false;
  }
  return true;
}

} // namespace

namespace {

std::string summaryText(const intra::Program &program) {
  const passes::LoweringSummary s = passes::summarizeLowering(program);
  return std::to_string(s.gemm) + " GEMM, " + std::to_string(s.traversal) +
         " traversal, " + std::to_string(s.fallback) + " fallback instances";
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
  bool stats = false;
  passes::PipelineOptions options;
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string badSwitch;
  if (!takeSwitches(args, options, badSwitch)) {
    std::cerr << "hectorc: unknown switch " << badSwitch
              << " (known: -fno-reorder, -fno-compact, -fno-fuse)\n";
    return 2;
  }
  app.add_option("FILE", input, "model.hgnn, or printed inter-op IR (*.ir)")
      ->required();
  app.add_option("-o", outDir,
                 "write the outputs into DIR (DIR/<model>.inter.ir, "
                 "DIR/<model>.intra.ir, DIR/plan.json)")
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
  app.add_flag("--stats", stats,
               "print the instance counts of the lowering to stderr "
               "(always on with -o)");
  app.footer("Switches: -fno-reorder, -fno-compact, -fno-fuse turn off linear "
             "operator reordering, compact materialization, and loop/kernel "
             "fusion.");
  app.set_version_flag("--version", std::string("hectorc ") + HECTOR_VERSION);

  try {
    std::reverse(args.begin(), args.end()); // CLI11 takes them reversed
    app.parse(args);
  } catch (const CLI::ParseError &e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
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
  options.printAfter = printAfter;
  options.printAfterAll = printAfterAll;
  // `inter-ir` is the model as the frontend wrote it (the interpreter's
  // reference program and the pipeline's input); the optimised inter-op
  // IR is what --print-after shows and what the lowering consumes.
  std::optional<passes::CompiledLayer> layer;
  if (module)
    layer = passes::compileLayer(*module, options, diags, std::cerr);
  if (!layer || diags.hasErrors()) {
    diags.print(std::cerr);
    return 1;
  }
  diags.print(std::cerr); // warnings, if any

  if (stats || !outDir.empty())
    std::cerr << "hectorc: " << module->name << ": forward "
              << summaryText(layer->forwardProgram) << "; backward "
              << summaryText(layer->backwardProgram) << "\n";
  if (stats)
    std::cerr << "hectorc: " << module->name
              << ": FLOPs on the am-shaped graph: forward "
              << passes::countFlops(*module, options.graph).total << " -> "
              << passes::countFlops(layer->forward, options.graph).total
              << ", backward "
              << passes::countFlops(layer->backwardSource, options.graph).total
              << " -> "
              << passes::countFlops(layer->backward, options.graph).total
              << "\n";
  std::optional<std::vector<codegen::EmittedFile>> files;
  if (!outDir.empty() || emit == "cuda" || emit == "cpu" || emit == "all") {
    files = codegen::emitLayer(*layer, diags);
    if (!files) {
      diags.print(std::cerr);
      return 1;
    }
  }
  if (outDir.empty()) {
    if (emit == "intra-ir")
      std::cout << intra::printProgram(layer->forwardProgram);
    else if (emit == "cuda" || emit == "cpu" || emit == "all") {
      for (const codegen::EmittedFile &f : *files) {
        if (emit == "all")
          std::cout << "// ===== " << f.name << " =====\n" << f.text;
        else if (f.name == (emit == "cuda" ? "kernels.cu" : "kernels_cpu.cpp"))
          std::cout << f.text;
      }
    } else
      std::cout << ir::printModule(*module);
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(outDir, ec);
  const std::filesystem::path dir(outDir);
  nlohmann::json plan;
  plan["forward"] = passes::collectPreprocessingPlan(layer->forwardProgram);
  plan["backward"] = passes::collectPreprocessingPlan(layer->backwardProgram);
  if (layer->inferenceProgram)
    plan["inference"] =
        passes::collectPreprocessingPlan(*layer->inferenceProgram);
  const bool ok =
      !ec &&
      writeFile(dir / (module->name + ".inter.ir"), ir::printModule(*module)) &&
      writeFile(dir / (module->name + ".intra.ir"),
                intra::printProgram(layer->forwardProgram)) &&
      writeFile(dir / (layer->backwardSource.name + ".inter.ir"),
                ir::printModule(layer->backwardSource)) &&
      writeFile(dir / (layer->backwardSource.name + ".intra.ir"),
                intra::printProgram(layer->backwardProgram)) &&
      writeFile(dir / "plan.json", plan.dump(2) + "\n") &&
      (!layer->inference ||
       (writeFile(dir / (layer->inference->name + ".inter.ir"),
                  ir::printModule(*layer->inference)) &&
        writeFile(dir / (layer->inference->name + ".intra.ir"),
                  intra::printProgram(*layer->inferenceProgram))));
  for (const codegen::EmittedFile &f : *files)
    if (ok && !writeFile(dir / f.name, f.text))
      return 1;
  if (!ok) {
    if (ec)
      std::cerr << "hectorc: cannot create " << outDir << "\n";
    return 1;
  }
  return 0;
}
