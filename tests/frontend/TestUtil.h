// Helpers shared by the frontend tests: running hectorc, reading files.
#pragma once

#include <string>

namespace hector::test {

/// What a finished command left behind.
struct RunResult {
  int status = -1; ///< exit status, or -1 when it did not exit normally
  std::string out, err;
};

/// Runs hectorc with `args` (already shell-quoted where needed).
RunResult runHectorc(const std::string &args);

/// The whole file; fails the current test when it cannot be read.
std::string slurp(const std::string &path);

/// A fresh directory for this test process.
std::string tempDir();

/// Quotes a path for /bin/sh.
std::string shellQuote(const std::string &s);

} // namespace hector::test
