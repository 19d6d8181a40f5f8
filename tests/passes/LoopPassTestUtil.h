// Helpers shared by the tests of shape inference, compact materialization,
// loop canonicalization and loop fusion: the bundled models with their
// default and small hyper-parameters, a verifier that returns its messages,
// and an interpreter comparison of two modules on random graphs.
#pragma once

#include "PassTestUtil.h"

#include "ir/Diagnostics.h"
#include "ir/InterIRPrinter.h"
#include "ir/InterIRVerifier.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace hector::passtest {

/// A bundled model with one binding of its hyper-parameters (empty: the
/// module's defaults).
struct ModelCase {
  std::string model;
  std::map<std::string, double> hypers;
  std::string label() const {
    std::string out = model;
    for (const auto &[name, value] : hypers)
      out += " " + name + "=" + std::to_string(static_cast<int64_t>(value));
    return out;
  }
};

/// The six bundled models, each with its defaults and with small odd dims
/// and two heads (HGT's layers need in_dim == out_dim, so they have one
/// dim only).
inline std::vector<ModelCase> bundledModelCases() {
  std::vector<ModelCase> cases;
  for (const char *m : {"rgcn", "rgat", "hgt", "rgcn_pyg", "rgat_pyg",
                        "hgt_pyg"})
    cases.push_back({m, {}});
  cases.push_back({"rgcn", {{"in_dim", 5}, {"out_dim", 6}}});
  cases.push_back({"rgat", {{"in_dim", 5}, {"out_dim", 6}, {"heads", 2}}});
  cases.push_back({"hgt", {{"in_dim", 6}, {"heads", 2}}});
  cases.push_back({"rgcn_pyg", {{"in_dim", 5}, {"out_dim", 6}}});
  cases.push_back({"rgat_pyg", {{"in_dim", 5}, {"out_dim", 6}, {"heads", 2}}});
  cases.push_back({"hgt_pyg", {{"in_dim", 6}, {"heads", 2}}});
  return cases;
}

/// The verifier's messages, empty when `module` verifies.
inline std::string verifierErrors(const ir::Module &module) {
  ir::DiagnosticEngine diags;
  if (ir::verifyModule(module, diags))
    return "";
  std::ostringstream os;
  diags.print(os);
  return os.str() + "\nin:\n" + ir::printModule(module);
}

/// The largest relative difference between the outputs of `before` and
/// `after` over two random graphs (one with many multi-edges, so that
/// pairs are far fewer than edges), with the same random arguments.
inline double outputDifference(const ir::Module &before,
                               const ir::Module &after,
                               const std::map<std::string, double> &hypers) {
  double worst = 0;
  runtime::InterpretOptions options;
  options.hypers = hypers;
  for (uint64_t seed : {11u, 12u}) {
    auto graph = seed == 11u ? randomGraph(40, 200, 5, 3, seed)
                             : randomGraph(12, 300, 4, 2, seed);
    Arguments args = randomArguments(before, *graph, seed + 100, false,
                                     hypers);
    auto expected = runtime::interpret(before, *graph, args.inputs,
                                       args.params, options);
    auto actual = runtime::interpret(after, *graph, args.inputs, args.params,
                                     options);
    worst = std::max(worst, maxRelativeError(actual, expected));
  }
  return worst;
}

/// Number of non-overlapping occurrences of `needle` in `text`.
inline int countOf(const std::string &text, const std::string &needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

/// A module after one pass: whether it changed, the module and its text.
struct PassResult {
  bool changed = false;
  std::string text;
  ir::Module module;
};

/// Runs `pass` (a `bool(ir::Module &)` returning "changed") on a copy of
/// `m`, expects the result to verify, and prints it.
template <typename Pass>
PassResult applyPass(Pass pass, const ir::Module &m) {
  PassResult r;
  r.module = m.clone();
  r.changed = pass(r.module);
  EXPECT_EQ(verifierErrors(r.module), "");
  r.text = ir::printModule(r.module);
  return r;
}

} // namespace hector::passtest
