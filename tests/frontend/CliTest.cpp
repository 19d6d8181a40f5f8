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

std::string readText(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The golden files of the emitted code are the committed generated/<model>/
// (hectorc's output, kept fresh by the ctest `generated_is_fresh`).
TEST(Cli, EmitCudaAndCpuPrintTheGeneratedKernels) {
  const std::filesystem::path generated =
      std::filesystem::path(HECTOR_SOURCE_DIR) / "generated";
  for (const char *name :
       {"rgcn", "rgat", "hgt", "rgcn_pyg", "rgat_pyg", "hgt_pyg"}) {
    test::RunResult cuda = test::runHectorc(model(name) + " --emit=cuda");
    ASSERT_EQ(cuda.status, 0) << name << ": " << cuda.err;
    EXPECT_EQ(cuda.out, readText(generated / name / "kernels.cu")) << name;
    EXPECT_NE(cuda.out.find("__global__ void"), std::string::npos) << name;
    test::RunResult cpu = test::runHectorc(model(name) + " --emit=cpu");
    ASSERT_EQ(cpu.status, 0) << name << ": " << cpu.err;
    EXPECT_EQ(cpu.out, readText(generated / name / "kernels_cpu.cpp"))
        << name;
    EXPECT_NE(cpu.out.find("#pragma omp parallel"), std::string::npos);
  }
}

TEST(Cli, EmitAllPrintsEveryFileOnce) {
  test::RunResult r = test::runHectorc(model("rgat") + " --emit=all");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char *file : {"kernels.h", "kernels_cpu.cpp", "kernels.cu",
                           "binding.cpp", "CMakeLists.txt", "layer.json"}) {
    const std::string banner = std::string("// ===== ") + file + " =====\n";
    const size_t at = r.out.find(banner);
    EXPECT_NE(at, std::string::npos) << file;
    EXPECT_EQ(r.out.find(banner, at + 1), std::string::npos) << file;
  }
  EXPECT_NE(r.out.find("TORCH_LIBRARY(hector_rgat, m)"), std::string::npos);
}

TEST(Cli, EmittedCodeIsDeterministic) {
  test::RunResult a = test::runHectorc(model("hgt") + " --emit=all");
  test::RunResult b = test::runHectorc(model("hgt") + " --emit=all");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
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
