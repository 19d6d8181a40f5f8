// Golden tests: the printed inter-op IR of each bundled model equals
// tests/golden/<model>.inter.ir (regenerate with scripts/update-goldens.sh),
// and printed IR parses back and prints byte for byte the same, both in
// process and through `hectorc FILE.ir --emit=inter-ir`.
#include "frontend/Frontend.h"
#include "ir/InterIRParser.h"
#include "ir/InterIRPrinter.h"
#include "ir/InterIRVerifier.h"
#include "tests/frontend/TestUtil.h"

#include <gtest/gtest.h>

#include <sstream>

namespace hector {
namespace {

class GoldenTest : public ::testing::TestWithParam<std::string> {
protected:
  std::string modelPath() const {
    return std::string(HECTOR_SOURCE_DIR) + "/models/" + GetParam() + ".hgnn";
  }
  std::string goldenPath() const {
    return std::string(HECTOR_SOURCE_DIR) + "/tests/golden/" + GetParam() +
           ".inter.ir";
  }
};

std::string render(const ir::DiagnosticEngine &diags) {
  std::ostringstream s;
  diags.print(s);
  return s.str();
}

TEST_P(GoldenTest, FrontendOutputMatchesGolden) {
  ir::DiagnosticEngine diags;
  std::optional<ir::Module> m = frontend::compileHgnn(modelPath(), diags);
  ASSERT_TRUE(m) << render(diags);
  EXPECT_EQ(ir::printModule(*m), test::slurp(goldenPath()))
      << "run scripts/update-goldens.sh if the change is intended";
}

TEST_P(GoldenTest, GoldenParsesVerifiesAndPrintsBack) {
  const std::string golden = test::slurp(goldenPath());
  ir::DiagnosticEngine diags;
  std::optional<ir::Module> m =
      ir::parseModule(golden, goldenPath(), diags);
  ASSERT_TRUE(m) << render(diags);
  EXPECT_TRUE(ir::verifyModule(*m, diags)) << render(diags);
  EXPECT_EQ(ir::printModule(*m), golden);
}

TEST_P(GoldenTest, HectorcPrintsGolden) {
  test::RunResult r =
      test::runHectorc(test::shellQuote(modelPath()) + " --emit=inter-ir");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, test::slurp(goldenPath()));
  EXPECT_EQ(r.err, "");
}

TEST_P(GoldenTest, HectorcRoundTripsGolden) {
  test::RunResult r =
      test::runHectorc(test::shellQuote(goldenPath()) + " --emit=inter-ir");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, test::slurp(goldenPath()));
}

INSTANTIATE_TEST_SUITE_P(Models, GoldenTest,
                         ::testing::Values("rgcn", "rgat", "hgt"),
                         [](const auto &info) { return info.param; });

} // namespace
} // namespace hector
