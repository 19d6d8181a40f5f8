// The test helpers themselves: the random graph has the promised corner
// cases, and the bundled models run on it.
#include "PassTestUtil.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

using namespace hector;

TEST(PassTestUtil, RandomGraphHasIsolatedNodeEmptyRelationAndMultiEdges) {
  auto g = passtest::randomGraph(40, 200, 5, 3, 7);
  EXPECT_EQ(g->numEdges(), 200);
  EXPECT_EQ(g->inDegree()[39].item().toDouble(), 0);
  EXPECT_EQ(g->outDegree()[39].item().toDouble(), 0);
  EXPECT_EQ((g->etype() == 4).sum().item<int64_t>(), 0);
  EXPECT_LT(g->numPairs(), g->numEdges());
}

TEST(PassTestUtil, BundledModelsRunAndCompareEqualToThemselves) {
  auto g = passtest::randomGraph(40, 200, 5, 3, 7);
  for (const char *name : {"rgcn", "rgat", "hgt", "rgcn_pyg", "rgat_pyg",
                           "hgt_pyg"}) {
    ir::Module m = passtest::loadBundledModel(name);
    auto args = passtest::randomArguments(m, *g, 1);
    auto out = runtime::interpret(m, *g, args.inputs, args.params);
    ASSERT_FALSE(out.empty()) << name;
    EXPECT_EQ(passtest::maxRelativeError(out, out), 0.0) << name;
  }
}
