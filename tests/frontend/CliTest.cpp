// The hectorc command line: exit statuses, --version, --emit, -o, and the
// pipeline options.
#include "tests/frontend/TestUtil.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace hector {
namespace {

std::string model(const std::string &name) {
  return test::shellQuote(std::string(HECTOR_SOURCE_DIR) + "/models/" + name +
                          ".hgnn");
}

TEST(Cli, VersionPrintsVersionMacro) {
  test::RunResult r = test::runHectorc("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, std::string("hectorc ") + HECTOR_VERSION + "\n");
}

TEST(Cli, HelpExitsZero) {
  test::RunResult r = test::runHectorc("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--emit"), std::string::npos);
  EXPECT_NE(r.out.find("--print-after-all"), std::string::npos);
}

TEST(Cli, DefaultEmitsInterIrToStdout) {
  test::RunResult r = test::runHectorc(model("rgcn"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("module @rgcn {", 0), 0u) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(Cli, UnimplementedEmitsExitTwo) {
  for (const char *what : {"cuda", "cpu", "all"}) {
    test::RunResult r =
        test::runHectorc(model("rgcn") + " --emit=" + std::string(what));
    EXPECT_EQ(r.status, 2) << what;
    EXPECT_EQ(r.err, std::string("hectorc: --emit=") + what +
                         " is not implemented yet\n");
  }
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(test::runHectorc("").status, 2);
  EXPECT_EQ(test::runHectorc(model("rgcn") + " --emit=ptx").status, 2);
  EXPECT_EQ(test::runHectorc(model("rgcn") + " --no-such-flag").status, 2);
  test::RunResult r = test::runHectorc(model("rgcn") + " --print-after=nope");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown pass 'nope'"), std::string::npos) << r.err;
}

TEST(Cli, MissingFileExitsOne) {
  test::RunResult r = test::runHectorc("/no/such/model.hgnn");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("cannot open file /no/such/model.hgnn"),
            std::string::npos)
      << r.err;
}

TEST(Cli, OutputDirGetsInterIrAndStdoutStaysQuiet) {
  const std::string dir = test::tempDir() + "/out_rgat";
  test::RunResult r =
      test::runHectorc(model("rgat") + " -o " + test::shellQuote(dir));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("hectorc: rgat: ", 0), 0u) << r.err; // the summary
  EXPECT_EQ(test::slurp(dir + "/rgat.inter.ir"),
            test::slurp(std::string(HECTOR_SOURCE_DIR) +
                        "/tests/golden/rgat.inter.ir"));
}

TEST(Cli, PrintAfterDumpsToStderr) {
  test::RunResult r = test::runHectorc(model("hgt") + " --print-after=verify");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("IR after verify"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("module @hgt"), std::string::npos);
  test::RunResult all = test::runHectorc(model("hgt") + " --print-after-all");
  EXPECT_EQ(all.status, 0);
  EXPECT_NE(all.err.find("IR after verify"), std::string::npos);
}

TEST(Cli, IrInputWithErrorsExitsOne) {
  const std::string path = test::tempDir() + "/bad.ir";
  {
    std::ofstream(path) << "module @m {\n  foreach e in edges {\n";
  }
  test::RunResult r = test::runHectorc(test::shellQuote(path));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad.ir:"), std::string::npos) << r.err;
}

} // namespace
} // namespace hector
