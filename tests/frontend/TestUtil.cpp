#include "tests/frontend/TestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace hector::test {

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string tempDir() {
  static const std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() /
             ("hector_frontend_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

std::string shellQuote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

RunResult runHectorc(const std::string &args) {
  static int counter = 0;
  const std::string base = tempDir() + "/run" + std::to_string(counter++);
  const std::string cmd = shellQuote(HECTORC_PATH) + " " + args + " >" +
                          shellQuote(base + ".out") + " 2>" +
                          shellQuote(base + ".err");
  const int raw = std::system(cmd.c_str());
  RunResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  return r;
}

} // namespace hector::test
