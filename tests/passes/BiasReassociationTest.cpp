// Bias reassociation: `(a + r) + b` with r a linear's row and b a shared
// bias becomes `a + (r + b)`. Small modules for what reassociates and what
// must not, with the interpreter's outputs before and after.
#include "LoopPassTestUtil.h"

#include "passes/BiasReassociation.h"

#include <gtest/gtest.h>

using namespace hector;
using passtest::countOf;

namespace {

using Result = passtest::PassResult;

/// Header of the small cases: features x and y, a shared weight W and
/// bias b, a per-head weight Wh, an etype bias bt and the output h.
const char *kHeader = R"(module @m {
  hyper d : int = 4
  input x : node[d]
  input y : node[d]
  param W : global[d, d]
  param b : global[d]
  param bt : etype[d]
  output h : node[d]
)";

Result reassociated(const std::string &body,
                    const std::set<std::string> &keep = {}) {
  ir::Module m =
      passtest::parseVerified(std::string(kHeader) + body + "}\n", "t.ir");
  Result r = passtest::applyPass(
      [&](ir::Module &module) { return passes::reassociateBias(module, keep); },
      m);
  EXPECT_LE(passtest::outputDifference(m, r.module, {}), 1e-12) << r.text;
  return r;
}

const char *kRootPlusBias = R"(  temp r : node[d]
  temp u : node[d]
  foreach n in dst_nodes {
    r[n] = linear(x[n], W)
    u[n] = add(y[n], r[n])
    h[n] = add(u[n], b)
  }
)";

// The linear term takes the bias; the last add sums the other term and it.
TEST(BiasReassociation, MovesTheBiasToTheLinearTerm) {
  Result r = reassociated(kRootPlusBias);
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.text.find("u[n] = add(r[n], b)\n    h[n] = add(y[n], u[n])"),
            std::string::npos)
      << r.text;
}

// Either order of each add's operands, and the bias first.
TEST(BiasReassociation, TakesEitherOperandOrder) {
  Result r = reassociated(R"(  temp r : node[d]
  temp u : node[d]
  foreach n in nodes {
    r[n] = linear_t(x[n], W)
    u[n] = add(r[n], y[n])
    h[n] = add(b, u[n])
  }
)");
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.text.find("u[n] = add(r[n], b)"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("h[n] = add(y[n], u[n])"), std::string::npos) << r.text;
}

// Left alone: a sum the backward keeps, a linear term read elsewhere, a
// term that is not a linear's, and a bias taken per type.
TEST(BiasReassociation, LeavesKeptSharedNonLinearAndTypedBiases) {
  EXPECT_FALSE(reassociated(kRootPlusBias, {"u"}).changed);
  EXPECT_FALSE(reassociated(kRootPlusBias, {"r"}).changed);
  EXPECT_FALSE(reassociated(R"(  temp r : node[d]
  temp u : node[d]
  output o : node[d]
  foreach n in dst_nodes {
    r[n] = linear(x[n], W)
    u[n] = add(y[n], r[n])
    h[n] = add(u[n], b)
    o[n] = neg(r[n])
  }
)")
                   .changed);
  EXPECT_FALSE(reassociated(R"(  temp r : node[d]
  temp u : node[d]
  foreach n in dst_nodes {
    r[n] = neg(x[n])
    u[n] = add(y[n], r[n])
    h[n] = add(u[n], b)
  }
)")
                   .changed);
  Result typed = reassociated(R"(  temp r : node[d]
  temp u : node[d]
  foreach n in dst_nodes {
    r[n] = linear(x[n], W)
    u[n] = add(y[n], r[n])
    foreach e in n.incoming {
      h[e.dst] += add(u[e.dst], bt[e.etype])
    }
  }
)");
  EXPECT_FALSE(typed.changed);
}

} // namespace
