// Golden tests: the printed inter-op IR of each bundled model equals
// tests/golden/<model>.inter.ir (regenerate with scripts/update-goldens.sh),
// and printed IR parses back and prints byte for byte the same, both in
// process and through `hectorc FILE.ir --emit=inter-ir`. For every bundled
// model, `hectorc --emit=intra-ir` prints tests/golden/<model>.intra.ir and
// `hectorc -o DIR` writes it and tests/golden/<model>.plan.json.
#include "frontend/Frontend.h"
#include "ir/InterIRParser.h"
#include "ir/InterIRPrinter.h"
#include "ir/InterIRVerifier.h"
#include "tests/frontend/TestUtil.h"

#include <gtest/gtest.h>

#include <filesystem>
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

class IntraGoldenTest : public ::testing::TestWithParam<std::string> {
protected:
  std::string modelPath() const {
    return std::string(HECTOR_SOURCE_DIR) + "/models/" + GetParam() + ".hgnn";
  }
  std::string golden(const std::string &ext) const {
    return std::string(HECTOR_SOURCE_DIR) + "/tests/golden/" + GetParam() +
           ext;
  }
};

TEST_P(IntraGoldenTest, HectorcPrintsIntraGolden) {
  test::RunResult r =
      test::runHectorc(test::shellQuote(modelPath()) + " --emit=intra-ir");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, test::slurp(golden(".intra.ir")))
      << "run scripts/update-goldens.sh if the change is intended";
  EXPECT_EQ(r.err, "");
}

TEST_P(IntraGoldenTest, OutputDirHoldsIntraIrAndPlanGoldens) {
  const std::string dir = test::tempDir() + "/intra_" + GetParam();
  test::RunResult r = test::runHectorc(test::shellQuote(modelPath()) +
                                       " -o " + test::shellQuote(dir));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("hectorc: " + GetParam() + ": ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(" fallback instances\n"), std::string::npos) << r.err;
  EXPECT_EQ(test::slurp(dir + "/" + GetParam() + ".intra.ir"),
            test::slurp(golden(".intra.ir")));
  EXPECT_EQ(test::slurp(dir + "/plan.json"), test::slurp(golden(".plan.json")))
      << "run scripts/update-goldens.sh if the change is intended";
}

TEST_P(IntraGoldenTest, SwitchesAreAcceptedAndChangeTheLowering) {
  test::RunResult r = test::runHectorc(
      test::shellQuote(modelPath()) +
      " --emit=intra-ir --stats -fno-reorder -fno-compact -fno-fuse");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("intra.program @" + GetParam() + " {", 0), 0u);
  EXPECT_NE(r.out, test::slurp(golden(".intra.ir")));
  EXPECT_NE(r.err.find(" 0 fallback instances\n"), std::string::npos) << r.err;
}

TEST_P(IntraGoldenTest, OutputDirHoldsBackwardProgramGoldens) {
  const std::string dir = test::tempDir() + "/backward_" + GetParam();
  test::RunResult r = test::runHectorc(test::shellQuote(modelPath()) +
                                       " -o " + test::shellQuote(dir));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("; backward "), std::string::npos) << r.err;
  for (const char *ext : {".inter.ir", ".intra.ir"})
    EXPECT_EQ(test::slurp(dir + "/" + GetParam() + "_backward" + ext),
              test::slurp(golden(std::string("_backward") + ext)))
        << ext << ": run scripts/update-goldens.sh if the change is intended";
}

// The attention models whose message is a relation's linear of a node row
// get an inference program (the forward with nothing kept: their weighted
// message sums become a summed GEMM): RGAT's and HGT-PyG's. The others'
// would equal their forward, so hectorc writes none (hgt.hgnn's message is
// a linear of a pair row, V's projection of the source, which stays).
TEST_P(IntraGoldenTest, OutputDirHoldsInferenceProgramGoldensWhereItDiffers) {
  const std::string dir = test::tempDir() + "/inference_" + GetParam();
  test::RunResult r = test::runHectorc(test::shellQuote(modelPath()) + " -o " +
                                       test::shellQuote(dir));
  ASSERT_EQ(r.status, 0) << r.err;
  const bool attention =
      GetParam().rfind("rgat", 0) == 0 || GetParam() == "hgt_pyg";
  for (const char *ext : {".inter.ir", ".intra.ir"}) {
    const std::string file = dir + "/" + GetParam() + "_inference" + ext;
    ASSERT_EQ(std::filesystem::exists(file), attention) << file;
    if (attention) {
      EXPECT_EQ(test::slurp(file),
                test::slurp(golden(std::string("_inference") + ext)))
          << ext << ": run scripts/update-goldens.sh if the change is intended";
    }
  }
  EXPECT_EQ(
      test::slurp(dir + "/layer.json").find("\"inference_program\": true") !=
          std::string::npos,
      attention);
}

// The IR after each inter-op pass (forward, then the backward program,
// then the inference program where there is one):
// tests/golden/passes/<model>.<pass>.ir.
TEST_P(IntraGoldenTest, IrAfterEachPassMatchesGolden) {
  for (const char *pass :
       {"verify", "infer-shapes", "reorder-linear", "compact-materialization",
        "forward-broadcasts", "canonicalize-loops", "fuse-loops",
        "uncompact-segment-sums", "uncompact-weighted-sums",
        "reassociate-bias"}) {
    test::RunResult r = test::runHectorc(test::shellQuote(modelPath()) +
                                         " --emit=inter-ir --print-after=" +
                                         pass);
    ASSERT_EQ(r.status, 0) << pass << ": " << r.err;
    EXPECT_EQ(r.err, test::slurp(std::string(HECTOR_SOURCE_DIR) +
                                 "/tests/golden/passes/" + GetParam() + "." +
                                 pass + ".ir"))
        << pass << ": run scripts/update-goldens.sh if the change is intended";
  }
}

INSTANTIATE_TEST_SUITE_P(Models, IntraGoldenTest,
                         ::testing::Values("rgcn", "rgat", "hgt", "rgcn_pyg",
                                           "rgat_pyg", "hgt_pyg"),
                         [](const auto &info) { return info.param; });

TEST(IntraGoldenCli, UnknownSwitchExitsTwo) {
  test::RunResult r = test::runHectorc(
      test::shellQuote(std::string(HECTOR_SOURCE_DIR) + "/models/rgcn.hgnn") +
      " -fno-such-pass");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown switch -fno-such-pass"), std::string::npos)
      << r.err;
}

} // namespace
} // namespace hector
