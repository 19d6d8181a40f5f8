// Diagnostic rendering: header, source line, caret; the error limit.
#include "ir/Diagnostics.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace hector::ir;

namespace {
SourceLoc at(const std::string &file, int line, int col) {
  return SourceLoc{file, line, col};
}
} // namespace

TEST(DiagnosticsTest, RendersHeaderSourceAndCaret) {
  DiagnosticEngine diags;
  diags.addSource("m.ir", "module @m {\n  temp x : node[d]\n}\n");
  diags.error(at("m.ir", 2, 8), "unknown thing");
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.render(diags.diagnostics()[0]),
            "m.ir:2:8: error: unknown thing\n"
            "  temp x : node[d]\n"
            "       ^\n");
  EXPECT_TRUE(diags.hasErrors());
  EXPECT_EQ(diags.errorCount(), 1);
}

TEST(DiagnosticsTest, CaretKeepsTabs) {
  DiagnosticEngine diags;
  diags.addSource("t.ir", "\tfoo\t bar\n");
  diags.error(at("t.ir", 1, 7), "here");
  EXPECT_EQ(diags.render(diags.diagnostics()[0]),
            "t.ir:1:7: error: here\n"
            "\tfoo\t bar\n"
            "\t   \t ^\n");
}

TEST(DiagnosticsTest, CaretOnCrlfLineAndColumnOne) {
  DiagnosticEngine diags;
  diags.addSource("w.ir", "abc\r\nxyz\r\n");
  diags.error(at("w.ir", 2, 1), "start");
  EXPECT_EQ(diags.render(diags.diagnostics()[0]),
            "w.ir:2:1: error: start\nxyz\n^\n");
}

TEST(DiagnosticsTest, WithoutLocationOrSource) {
  DiagnosticEngine diags;
  diags.error(at("m.ir", 0, 0), "no location");
  diags.error(SourceLoc{}, "no file");
  diags.warning(at("other.ir", 3, 2), "no source registered");
  diags.note(at("", 4, 5), "note without file");
  const auto &d = diags.diagnostics();
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(diags.render(d[0]), "m.ir: error: no location\n");
  EXPECT_EQ(diags.render(d[1]), "error: no file\n");
  EXPECT_EQ(diags.render(d[2]), "other.ir:3:2: warning: no source registered\n");
  EXPECT_EQ(diags.render(d[3]), "4:5: note: note without file\n");
  // Warnings and notes are not errors.
  EXPECT_EQ(diags.errorCount(), 2);
}

TEST(DiagnosticsTest, LineBeyondTheSourceRendersHeaderOnly) {
  DiagnosticEngine diags;
  diags.addSource("s.ir", "one line");
  diags.error(at("s.ir", 5, 1), "past the end");
  EXPECT_EQ(diags.render(diags.diagnostics()[0]), "s.ir:5:1: error: past the end\n");
}

TEST(DiagnosticsTest, ErrorLimitStopsOnceAndCountsTheRest) {
  DiagnosticEngine diags;
  diags.setErrorLimit(3);
  diags.addSource("g.ir", "x\n");
  for (int i = 0; i < 10; ++i)
    diags.error(at("g.ir", 1, 1), "error " + std::to_string(i));
  diags.note(at("g.ir", 1, 1), "dropped too");
  EXPECT_EQ(diags.errorCount(), 10);
  const auto &d = diags.diagnostics();
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[2].message, "error 2");
  EXPECT_EQ(diags.render(d[3]), "g.ir: error: too many errors, stopping\n");
  std::ostringstream os;
  diags.print(os);
  std::string out = os.str();
  EXPECT_EQ(out.find("too many errors"), out.rfind("too many errors"));
  EXPECT_EQ(out.find("error 3"), std::string::npos);
  EXPECT_EQ(out.rfind("g.ir:1:1: error: error 0\nx\n^\n", 0), 0u);
}

TEST(DiagnosticsTest, PrintKeepsReportOrder) {
  DiagnosticEngine diags;
  diags.error(at("a.ir", 0, 0), "first");
  diags.warning(at("a.ir", 0, 0), "second");
  std::ostringstream os;
  diags.print(os);
  EXPECT_EQ(os.str(), "a.ir: error: first\na.ir: warning: second\n");
}
