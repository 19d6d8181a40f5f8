// Shape and index-space inference: it recovers every temp declaration of
// the bundled models from their statements, declares what is missing, and
// reports (with locations) outputs and statements whose shapes disagree.
#include "LoopPassTestUtil.h"

#include "ir/InterIRParser.h"
#include "passes/ShapeInference.h"

#include <gtest/gtest.h>

using namespace hector;
using passtest::bundledModelCases;

namespace {

/// Parses without verifying: the inputs of the error tests do not verify.
ir::Module parseOnly(const std::string &text) {
  ir::DiagnosticEngine diags;
  auto m = ir::parseModule(text, "t.ir", diags);
  EXPECT_TRUE(m.has_value());
  return m ? std::move(*m) : ir::Module{};
}

std::string messages(const ir::DiagnosticEngine &diags) {
  std::string out;
  for (const ir::Diagnostic &d : diags.diagnostics())
    out += std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) +
           ": " + d.message + "\n";
  return out;
}

const char *kRgcnLike = R"(module @m {
  hyper in_dim : int = 4
  hyper out_dim : int = 3
  input x : node[in_dim]
  param W : etype[in_dim, out_dim]
  temp msg : edge[out_dim]
  output h : node[in_dim]
  foreach e in edges {
    msg[e] = linear(x[e.src], W[e.etype])
  }
  foreach n in dst_nodes {
    foreach e in n.incoming {
      h[n] += copy(msg[e])
    }
  }
}
)";

} // namespace

// Every temp of every bundled model, stripped of its space and shape,
// comes back exactly as the frontend declared it.
TEST(ShapeInference, RecoversEveryTempOfTheBundledModels) {
  for (const char *name : {"rgcn", "rgat", "hgt", "rgcn_pyg", "rgat_pyg",
                           "hgt_pyg"}) {
    ir::Module original = passtest::loadBundledModel(name);
    ir::Module m = original.clone();
    int stripped = 0;
    for (ir::ValueDecl &v : m.values)
      if (v.kind == ir::ValueKind::Temp) {
        v.space = ir::Space::Global;
        v.shape.clear();
        ++stripped;
      }
    EXPECT_GT(stripped, 0) << name;
    ir::DiagnosticEngine diags;
    ASSERT_TRUE(passes::inferShapes(m, diags)) << name << messages(diags);
    EXPECT_EQ(ir::printModule(m), ir::printModule(original)) << name;
    EXPECT_EQ(passtest::verifierErrors(m), "") << name;
  }
}

// On verified input the pass changes nothing and the outputs are the same,
// with default and small hyper-parameters.
TEST(ShapeInference, LeavesVerifiedModelsAndTheirOutputsUnchanged) {
  for (const passtest::ModelCase &c : bundledModelCases()) {
    ir::Module original = passtest::loadBundledModel(c.model);
    ir::Module m = original.clone();
    ir::DiagnosticEngine diags;
    ASSERT_TRUE(passes::inferShapes(m, diags)) << c.label();
    EXPECT_EQ(ir::printModule(m), ir::printModule(original)) << c.label();
    EXPECT_LE(passtest::outputDifference(original, m, c.hypers), 1e-12)
        << c.label();
  }
}

// A pass may write a temp it has not declared; inference declares it with
// the space of its target path and the shape of its op.
TEST(ShapeInference, DeclaresAWrittenButUndeclaredTemp) {
  ir::Module original = passtest::loadBundledModel("rgat");
  ir::Module m = original.clone();
  auto isZ = [](const ir::ValueDecl &v) { return v.name == "z"; };
  m.values.erase(std::remove_if(m.values.begin(), m.values.end(), isZ),
                 m.values.end());
  ASSERT_EQ(m.findValue("z"), nullptr);
  ir::DiagnosticEngine diags;
  ASSERT_TRUE(passes::inferShapes(m, diags)) << messages(diags);
  const ir::ValueDecl *z = m.findValue("z");
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->kind, ir::ValueKind::Temp);
  EXPECT_EQ(z->space, ir::Space::Edge);
  EXPECT_EQ(ir::shapeStr(z->shape), "[heads, out_dim/heads]");
  EXPECT_EQ(passtest::verifierErrors(m), "");
  EXPECT_LE(passtest::outputDifference(original, m,
                                       {{"out_dim", 6}, {"heads", 2}}),
            1e-12);
}

// A temp declared in the wrong space with the wrong shape is corrected.
TEST(ShapeInference, CorrectsAWrongTempDeclaration) {
  std::string text = kRgcnLike;
  text.replace(text.find("output h : node[in_dim]"), 23,
               "output h : node[out_dim]");
  text.replace(text.find("temp msg : edge[out_dim]"), 24,
               "temp msg : node[in_dim, 7]");
  ir::Module m = parseOnly(text);
  ir::DiagnosticEngine diags;
  ASSERT_TRUE(passes::inferShapes(m, diags)) << messages(diags);
  EXPECT_NE(ir::printModule(m).find("temp msg : edge[out_dim]"),
            std::string::npos);
  EXPECT_EQ(passtest::verifierErrors(m), "");
}

// An output's declaration is the caller's contract: a shape that disagrees
// with its statement is an error at the statement, with a note at the
// declaration, and the declaration is left alone.
TEST(ShapeInference, ReportsAnOutputWhoseShapeDisagrees) {
  ir::Module m = parseOnly(kRgcnLike);
  ir::DiagnosticEngine diags;
  EXPECT_FALSE(passes::inferShapes(m, diags));
  EXPECT_EQ(messages(diags),
            "13:7: output 'h' is declared node[in_dim] but its defining "
            "statement computes node[out_dim]\n"
            "7:10: 'h' is declared here\n");
  EXPECT_EQ(ir::shapeStr(m.findValue("h")->shape), "[in_dim]");
}

TEST(ShapeInference, ReportsAnOutputWhoseSpaceDisagrees) {
  std::string text = kRgcnLike;
  text.replace(text.find("output h : node[in_dim]"), 23,
               "output h : edge[out_dim]");
  ir::Module m = parseOnly(text);
  ir::DiagnosticEngine diags;
  EXPECT_FALSE(passes::inferShapes(m, diags));
  EXPECT_EQ(messages(diags),
            "13:7: output 'h' is declared edge[out_dim] but its defining "
            "statement computes node[out_dim]\n"
            "7:10: 'h' is declared here\n");
}

// Operands that do not fit their op are reported at the statement.
TEST(ShapeInference, ReportsOperandsThatDoNotFitTheirOp) {
  std::string text = kRgcnLike;
  text.replace(text.find("x[e.src], W[e.etype]"), 20, "W[e.etype], x[e.src]");
  ir::Module m = parseOnly(text);
  ir::DiagnosticEngine diags;
  EXPECT_FALSE(passes::inferShapes(m, diags));
  ASSERT_FALSE(diags.diagnostics().empty());
  EXPECT_EQ(diags.diagnostics()[0].loc.line, 9);
  EXPECT_NE(diags.diagnostics()[0].message.find("linear: input"),
            std::string::npos)
      << messages(diags);
}
