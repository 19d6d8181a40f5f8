// The diagnostics corpus: every tests/diagnostics/*.hgnn starts with lines
//   # expect: [FILE:]LINE:COL: SEVERITY: MESSAGE
// (FILE, relative to the test file, for diagnostics in imported files).
// hectorc must exit with status 1 and report each expected diagnostic
// exactly, followed by the source line and a caret.
#include "tests/frontend/TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>

namespace hector {
namespace {

namespace fs = std::filesystem;

std::string corpusDir() {
  return std::string(HECTOR_SOURCE_DIR) + "/tests/diagnostics";
}

std::vector<std::string> corpus() {
  std::vector<std::string> names;
  for (const auto &entry : fs::directory_iterator(corpusDir()))
    if (entry.path().extension() == ".hgnn")
      names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct Diag {
  std::string file; ///< empty: the test file itself
  int line = 0, col = 0;
  std::string severity, message;
};

std::string str(const Diag &d) {
  return (d.file.empty() ? "" : d.file + ":") + std::to_string(d.line) + ":" +
         std::to_string(d.col) + ": " + d.severity + ": " + d.message;
}

class DiagnosticsTest : public ::testing::TestWithParam<std::string> {};

TEST(DiagnosticsCorpus, HasAtLeastThirtyCases) {
  EXPECT_GE(corpus().size(), 30u);
}

TEST_P(DiagnosticsTest, ReportsExpectedDiagnostics) {
  const std::string path = corpusDir() + "/" + GetParam() + ".hgnn";
  const std::string text = test::slurp(path);

  static const std::regex expectRe(
      R"(^# expect: (?:([^:]+):)?(\d+):(\d+): (error|warning|note): (.*)$)");
  std::vector<Diag> expected;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, expectRe))
      expected.push_back(Diag{m[1], std::stoi(m[2]), std::stoi(m[3]), m[4],
                              m[5]});
  }
  ASSERT_FALSE(expected.empty()) << path << " has no '# expect:' line";

  test::RunResult r = test::runHectorc(test::shellQuote(path));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, "");

  static const std::regex diagRe(
      R"(^(.+):(\d+):(\d+): (error|warning|note): (.*)$)");
  std::vector<Diag> actual;
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);) {
    std::smatch m;
    if (std::regex_match(line, m, diagRe))
      actual.push_back(
          Diag{m[1], std::stoi(m[2]), std::stoi(m[3]), m[4], m[5]});
  }
  for (const Diag &want : expected) {
    const bool found =
        std::any_of(actual.begin(), actual.end(), [&](const Diag &got) {
          const bool sameFile =
              want.file.empty()
                  ? got.file == path
                  : fs::path(got.file).lexically_normal() ==
                        (fs::path(corpusDir()) / want.file).lexically_normal();
          return sameFile && got.line == want.line && got.col == want.col &&
                 got.severity == want.severity && got.message == want.message;
        });
    EXPECT_TRUE(found) << "missing diagnostic " << str(want)
                       << "\nhectorc reported:\n"
                       << r.err;
  }
  // Each diagnostic is rendered with its source line and a caret.
  EXPECT_NE(r.err.find("^"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Corpus, DiagnosticsTest,
                         ::testing::ValuesIn(corpus()),
                         [](const auto &info) { return info.param; });

} // namespace
} // namespace hector
