// codegen/ElementGroups.h: which statements of a traversal loop body share
// one element loop, which operands read an earlier member's local, which
// registers are never stored, and which loop bodies repeat without a sync.
#include "codegen/ElementGroups.h"

#include "CodegenTestUtil.h"
#include "codegen/ElementPrinter.h"
#include "codegen/Emit.h"
#include "codegen/KernelFileEmitter.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace hector::codegen {
namespace {

using codegentest::countOf;
using codegentest::textFrom;

struct Lowered {
  intra::Program program;
  const intra::TraversalInstance *traversal = nullptr;
};

/// Lowers `text` (one module) and finds its only traversal instance.
Lowered lowerModule(const char *text) {
  Lowered out;
  out.program =
      codegentest::lowerVerified(codegentest::parseVerified(text, "groups.ir"));
  for (const intra::Instance &inst : out.program.instances)
    if (const auto *t = std::get_if<intra::TraversalInstance>(&inst)) {
      EXPECT_EQ(out.traversal, nullptr) << "more than one traversal";
      out.traversal = t;
    }
  EXPECT_NE(out.traversal, nullptr);
  return out;
}

/// The statements of the first edge loop of the traversal's node loop.
std::vector<const intra::TravStmt *> edgeLoopStmts(const Lowered &l) {
  std::vector<const intra::TravStmt *> stmts;
  for (const intra::TravItem &item : l.traversal->root->body) {
    const auto *sub = std::get_if<std::unique_ptr<intra::TravLoop>>(&item);
    if (!sub)
      continue;
    for (const intra::TravItem &it : (*sub)->body)
      if (const auto *s = std::get_if<intra::TravStmt>(&it))
        stmts.push_back(s);
    break;
  }
  return stmts;
}

/// The target value of each member of each group: {{"a", "h"}, {"b"}}.
std::vector<std::vector<std::string>>
targets(const std::vector<ElementGroup> &groups) {
  std::vector<std::vector<std::string>> out;
  for (const ElementGroup &g : groups) {
    out.emplace_back();
    for (const intra::TravStmt *s : g.members)
      out.back().push_back(s->stmt.target.value);
  }
  return out;
}

using Targets = std::vector<std::vector<std::string>>;

/// What the grouper says about the first edge loop of `text`'s traversal.
struct EdgeLoopGroups {
  Targets groups;
  bool repeatsWithoutSync = false;
  std::set<std::string> unstoredRegisters;
};

EdgeLoopGroups groupEdgeLoop(const char *text) {
  EdgeLoopGroups out;
  Lowered l = lowerModule(text);
  if (!l.traversal)
    return out;
  const ProgramLayout layout(l.program, "forward");
  const ElementGrouper grouper(layout, *l.traversal);
  const auto run = edgeLoopStmts(l);
  out.groups = targets(grouper.group(run));
  out.repeatsWithoutSync = grouper.repeatsWithoutSync(run);
  out.unstoredRegisters = grouper.unstoredRegisters(*l.traversal->root);
  return out;
}

// A per-edge temporary read at its own element by the aggregation: one
// loop, the temporary forwarded and never stored.
const char *kChain = R"(module @chain {
  hyper d : int = 4
  input x : node[d]
  graph rel_in_degree : edge[]
  temp a : edge[d]
  output h : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      a[e] = div(x[e.src], rel_in_degree[e])
      h[n] += relu(a[e])
    }
  }
}
)";

TEST(ElementGroupsTest, ElementwiseChainSharesOneLoop) {
  Lowered l = lowerModule(kChain);
  ASSERT_NE(l.traversal, nullptr);
  const ProgramLayout layout(l.program, "forward");
  const ElementGrouper grouper(layout, *l.traversal);
  const auto run = edgeLoopStmts(l);
  ASSERT_EQ(run.size(), 2u);
  const std::vector<ElementGroup> groups = grouper.group(run);
  EXPECT_EQ(targets(groups), (Targets{{"a", "h"}}));
  ASSERT_EQ(groups.size(), 1u);
  // h's operand 0 is a's local.
  ASSERT_EQ(groups[0].forwarded.size(), 1u);
  EXPECT_EQ(groups[0].forwarded.begin()->first,
            (std::pair<size_t, size_t>{1, 0}));
  EXPECT_EQ(groups[0].forwarded.begin()->second, run[0]->id);
  EXPECT_EQ(layout.home("a"), Home::Register);
  EXPECT_EQ(groups[0].unstored, std::set<int>{run[0]->id});
  EXPECT_EQ(grouper.unstoredRegisters(*l.traversal->root),
            std::set<std::string>{"a"});
  EXPECT_TRUE(grouper.repeatsWithoutSync(run));
}

TEST(ElementGroupsTest, ChainKernelForwardsAndSyncsOnceAfterTheLoop) {
  Lowered l = lowerModule(kChain);
  ASSERT_NE(l.traversal, nullptr);
  const ProgramLayout f(l.program, "forward"), b(l.program, "backward");
  const std::string cu = emitKernelFile(f, b, Target::Cuda);
  const std::string body = textFrom(cu, "// s0:", "HECTOR_GROUP_SYNC();");
  ASSERT_FALSE(body.empty()) << cu;
  // One element loop over quads (d = 4 at the declared hypers) and its
  // fallback: each computes a and h once. The gathered row x[e.src] is
  // read a quad at a time; the per-edge scalar rel_in_degree[e] is not.
  EXPECT_EQ(countOf(body, "HECTOR_FOR_ELEMENT_QUADS(i0, "), 1u) << body;
  EXPECT_EQ(countOf(body, "hector::trav::quadRows<scalar_t>(sz_a, s0_o0))"), 1u)
      << body;
  EXPECT_EQ(countOf(body, "const auto q_s0_o0 = hector::trav::rowQuad(s0_o0, "
                          "i0);"),
            1u)
      << body;
  EXPECT_EQ(countOf(body, "q_s0_o0[i] / s0_o1[0]"), 1u) << body;
  EXPECT_EQ(countOf(body, "HECTOR_FOR_ELEMENTS(i, "), 1u) << body;
  EXPECT_EQ(countOf(body, "hector::trav::relu(v_s0)"), 2u) << body;
  EXPECT_EQ(countOf(body, "/ s0_o1[0]"), 2u) << body;
  // No scratch slot for a, and no store of it.
  EXPECT_EQ(countOf(cu, "*r_a = "), 0u) << cu;
  EXPECT_EQ(countOf(cu, "*w_r_a = "), 0u) << cu;
  EXPECT_EQ(countOf(body, "s0_t"), 0u) << body;
  // The edge loop's only sync is after it.
  const std::string loop = textFrom(cu, "for (int64_t hector_base_0", "\n    }\n");
  ASSERT_FALSE(loop.empty()) << cu;
  EXPECT_EQ(countOf(loop, "HECTOR_GROUP_SYNC();"), 0u) << loop;
}

// Rows narrower than a quad, or not a whole number of quads, at the
// declared hypers keep the one loop of single elements.
TEST(ElementGroupsTest, RowsOfPartialQuadsHaveNoQuadLoop) {
  for (const char *d : {"2", "6"}) {
    std::string text = kChain;
    text.replace(text.find("d : int = 4"), 11, std::string("d : int = ") + d);
    Lowered l = lowerModule(text.c_str());
    ASSERT_NE(l.traversal, nullptr);
    const ProgramLayout f(l.program, "forward"), b(l.program, "backward");
    const std::string cu = emitKernelFile(f, b, Target::Cuda);
    EXPECT_EQ(countOf(cu, "HECTOR_FOR_ELEMENT_QUADS"), 0u) << d << cu;
    EXPECT_EQ(countOf(cu, "rowQuad"), 0u) << d;
  }
}

// The attention weight has one scalar per edge, the message d: different
// row sizes, so different lanes hold their elements.
TEST(ElementGroupsTest, DifferentRowSizesDoNotShareALoop) {
  const EdgeLoopGroups g = groupEdgeLoop(R"(module @sizes {
  hyper d : int = 4
  input x : node[d]
  input q : node[d]
  temp s : edge[]
  temp m : edge[d]
  output h : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      s[e] = dot(x[e.src], q[n])
      m[e] = mul(s[e], x[e.src])
      h[n] += copy(m[e])
    }
  }
}
)");
  EXPECT_EQ(g.groups, (Targets{{"s"}, {"m", "h"}}));
  EXPECT_FALSE(g.repeatsWithoutSync);
  // s is read across lanes: it keeps its slot; m does not.
  EXPECT_EQ(g.unstoredRegisters, std::set<std::string>{"m"});
}

// RGAT's normalised attention weight: a narrow elementwise statement that
// reads only rows written before the loop joins the message row that
// broadcasts it. Every lane recomputes the element its own elements read,
// so the loop repeats without a sync, and the weight, a temp read nowhere
// else, is never stored.
const char *kBroadcast = R"(module @bcast {
  hyper h : int = 1
  hyper d : int = 4
  input x : node[h, d]
  input ex : edge[h]
  input sm : node[h]
  temp a : edge[h]
  temp m : edge[h, d]
  output y : node[h, d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      a[e] = div(ex[e], sm[n])
      m[e] = mul(a[e], x[e.src])
      y[n] += copy(m[e])
    }
  }
}
)";

TEST(ElementGroupsTest, NarrowRowJoinsTheRowThatBroadcastsIt) {
  Lowered l = lowerModule(kBroadcast);
  ASSERT_NE(l.traversal, nullptr);
  const ProgramLayout layout(l.program, "forward");
  const ElementGrouper grouper(layout, *l.traversal);
  const auto run = edgeLoopStmts(l);
  ASSERT_EQ(run.size(), 3u);
  const std::vector<ElementGroup> groups = grouper.group(run);
  EXPECT_EQ(targets(groups), (Targets{{"a", "m", "y"}}));
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].broadcast, std::set<int>{run[0]->id});
  EXPECT_EQ(groups[0].loopMember, 1u);
  // m's operand 0 is a's local; y's operand 0 is m's.
  EXPECT_EQ(groups[0].forwarded.at({1, 0}), run[0]->id);
  EXPECT_EQ(groups[0].forwarded.at({2, 0}), run[1]->id);
  EXPECT_TRUE(grouper.repeatsWithoutSync(run));
  EXPECT_EQ(grouper.unstoredRegisters(*l.traversal->root),
            (std::set<std::string>{"a", "m"}));
}

// Stored (an output), the weight's element is written by the lanes whose
// element i is the first of its head's; the loop has no sync.
TEST(ElementGroupsTest, BroadcastMemberIsComputedPerLaneAndStoredOnce) {
  std::string text = kBroadcast;
  text.replace(text.find("temp a : edge[h]"), 16, "output a : edge[h]");
  Lowered l = lowerModule(text.c_str());
  ASSERT_NE(l.traversal, nullptr);
  const ProgramLayout f(l.program, "forward"), b(l.program, "backward");
  const std::string cu = emitKernelFile(f, b, Target::Cuda);
  const std::string loop =
      textFrom(cu, "for (int64_t hector_base_0", "\n    }\n");
  ASSERT_FALSE(loop.empty()) << cu;
  EXPECT_EQ(countOf(loop, "HECTOR_GROUP_SYNC();"), 0u) << loop;
  // In the quad loop and in its fallback: a's element at the head of i.
  EXPECT_EQ(countOf(loop, "const auto hector_at_s0 = (hp_h == 1 ? 0 : i / "
                          "hp_d);"),
            2u)
      << loop;
  EXPECT_EQ(countOf(loop, "const scalar_t v = s0_o0[i] / s0_o1[i];"), 2u)
      << loop;
  EXPECT_EQ(countOf(loop, "if (i % hp_d == 0) s0_t[hector_at_s0] = v_s0;"), 2u)
      << loop;
  EXPECT_EQ(countOf(loop, "v_s0 * "), 2u) << loop;
}

// HGT's gated skip in an edge loop: a second narrow statement (c) that
// reads only the first broadcast member (g) joins the group as another
// broadcast member, its operand forwarded from g's local, so that the
// whole body is one loop without a sync.
const char *kNarrowChain = R"(module @chain {
  hyper h : int = 1
  hyper d : int = 4
  input x : node[h, d]
  input ex : edge[h]
  input sm : node[h]
  temp g : edge[h]
  temp m : edge[h, d]
  output c : edge[h]
  temp k : edge[h, d]
  temp o : edge[h, d]
  output y : node[h, d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      g[e] = div(ex[e], sm[n])
      m[e] = mul(g[e], x[e.src])
      c[e] = sub(1, g[e])
      k[e] = mul(c[e], x[n])
      o[e] = add(m[e], k[e])
      y[n] += copy(o[e])
    }
  }
}
)";

TEST(ElementGroupsTest, NarrowChainOfBroadcastsSharesTheWideLoop) {
  Lowered l = lowerModule(kNarrowChain);
  ASSERT_NE(l.traversal, nullptr);
  const ProgramLayout layout(l.program, "forward");
  const ElementGrouper grouper(layout, *l.traversal);
  const auto run = edgeLoopStmts(l);
  ASSERT_EQ(run.size(), 6u);
  const std::vector<ElementGroup> groups = grouper.group(run);
  EXPECT_EQ(targets(groups), (Targets{{"g", "m", "c", "k", "o", "y"}}));
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].broadcast, (std::set<int>{run[0]->id, run[2]->id}));
  EXPECT_EQ(groups[0].loopMember, 1u);
  // c's operand 1 is g's local; k's operand 0 is c's; o reads m and k.
  EXPECT_EQ(groups[0].forwarded.at({2, 1}), run[0]->id);
  EXPECT_EQ(groups[0].forwarded.at({3, 0}), run[2]->id);
  EXPECT_EQ(groups[0].forwarded.at({4, 0}), run[1]->id);
  EXPECT_EQ(groups[0].forwarded.at({4, 1}), run[3]->id);
  EXPECT_TRUE(grouper.repeatsWithoutSync(run));
  // c is an output: stored once per head, from its local.
  const ProgramLayout b(l.program, "backward");
  const std::string cu = emitKernelFile(layout, b, Target::Cuda);
  EXPECT_NE(cu.find("const scalar_t v = static_cast<scalar_t>(1) - v_s0;"),
            std::string::npos)
      << cu;
  EXPECT_NE(cu.find("s2_t[hector_at_s2] = v_s2;"), std::string::npos) << cu;
}

// A narrow statement that reads a broadcast member of the open group and
// also a row another group of the body wrote (s, a contraction) cannot be
// recomputed by any lane: it keeps its own loop.
TEST(ElementGroupsTest, NarrowReadOfAnotherGroupsRowKeepsItsLoop) {
  const EdgeLoopGroups g = groupEdgeLoop(R"(module @mixed {
  hyper d : int = 4
  input x : node[d]
  input q : node[d]
  input ex : edge[]
  input sm : node[]
  temp s : edge[]
  temp m0 : edge[d]
  temp g : edge[]
  temp m : edge[d]
  temp c : edge[]
  temp k : edge[d]
  temp o : edge[d]
  output y : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      s[e] = dot(x[e.src], q[n])
      m0[e] = mul(s[e], x[e.src])
      g[e] = div(ex[e], sm[n])
      m[e] = mul(g[e], x[e.src])
      c[e] = add(g[e], s[e])
      k[e] = mul(c[e], m0[e])
      o[e] = add(m[e], k[e])
      y[n] += copy(o[e])
    }
  }
}
)");
  EXPECT_EQ(g.groups,
            (Targets{{"s"}, {"m0"}, {"g", "m"}, {"c"}, {"k", "o", "y"}}));
  EXPECT_FALSE(g.repeatsWithoutSync);
}

// A narrow statement that reads what the loop body writes (s, a
// contraction of the worker's lanes) would read another lane's element
// before a sync: it keeps its own loop.
TEST(ElementGroupsTest, NarrowRowReadingTheBodysWritesKeepsItsLoop) {
  const EdgeLoopGroups g = groupEdgeLoop(R"(module @reads {
  hyper d : int = 4
  input x : node[d]
  input q : node[d]
  input ex : edge[]
  temp s : edge[]
  temp t : edge[d]
  temp a : edge[]
  temp m : edge[d]
  output y : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      s[e] = dot(x[e.src], q[n])
      t[e] = mul(s[e], x[e.src])
      a[e] = add(s[e], ex[e])
      m[e] = mul(a[e], t[e])
      y[n] += copy(m[e])
    }
  }
}
)");
  EXPECT_EQ(g.groups, (Targets{{"s"}, {"t"}, {"a"}, {"m", "y"}}));
  EXPECT_FALSE(g.repeatsWithoutSync);
}

// A transpose reads its operand at other elements of the row: a
// statement that does so starts a new loop after a sync.
TEST(ElementGroupsTest, ARowWideReadStartsANewGroup) {
  const EdgeLoopGroups g = groupEdgeLoop(R"(module @wide {
  hyper d : int = 4
  input x : node[d, d]
  temp a : edge[d, d]
  temp m : edge[d, d]
  output h : node[d, d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      a[e] = relu(x[e.src])
      m[e] = transpose(a[e]) perm [1, 0]
      h[n] += copy(m[e])
    }
  }
}
)");
  EXPECT_EQ(g.groups, (Targets{{"a"}, {"m", "h"}}));
  EXPECT_FALSE(g.repeatsWithoutSync);
  // a is read across lanes by the transpose: it keeps its slot.
  EXPECT_EQ(g.unstoredRegisters, std::set<std::string>{"m"});
}

// A segmented accumulator's local is one edge's contribution, not the
// row: a later statement reading the row cannot take it.
TEST(ElementGroupsTest, ReadingASegmentedRowIsNotForwarded) {
  Lowered l = lowerModule(R"(module @seg {
  hyper d : int = 4
  input x : node[d]
  temp s : node[d]
  output y : node[d]
  foreach n in dst_nodes {
    foreach e in n.incoming {
      s[n] += copy(x[e.src])
    }
    y[n] = relu(s[n])
  }
}
)");
  ASSERT_NE(l.traversal, nullptr);
  const ProgramLayout layout(l.program, "forward");
  const ElementGrouper grouper(layout, *l.traversal);
  std::vector<const intra::TravStmt *> run;
  intra::forEachTravStmt(*l.traversal->root,
                         [&](const intra::TravStmt &s) { run.push_back(&s); });
  ASSERT_EQ(run.size(), 2u);
  ASSERT_EQ(run[0]->reduction, intra::ReductionScheme::Segmented);
  // As one run (which the emitter never forms across a loop), the two
  // still would not join.
  EXPECT_EQ(targets(grouper.group(run)), (Targets{{"s"}, {"y"}}));
}

TEST(ElementGroupsTest, ReadsOnlyElement) {
  const ir::Shape d{ir::Dim::symbol("d")}, one{};
  ir::Stmt add;
  add.op = ir::OpKind::Add;
  EXPECT_TRUE(readsOnlyElement(add, 0, d, d));
  EXPECT_FALSE(readsOnlyElement(add, 1, d, one)); // a broadcast
  ir::Stmt lin;
  lin.op = ir::OpKind::Linear;
  EXPECT_FALSE(readsOnlyElement(lin, 0, d, d));
  ir::Stmt leaky;
  leaky.op = ir::OpKind::LeakyRelu;
  EXPECT_TRUE(readsOnlyElement(leaky, 0, d, d));
  ir::Stmt tr;
  tr.op = ir::OpKind::Transpose;
  EXPECT_FALSE(readsOnlyElement(tr, 0, d, d));
  ir::Stmt reshape;
  reshape.op = ir::OpKind::Reshape;
  EXPECT_TRUE(readsOnlyElement(reshape, 0, d, d));
}

TEST(ElementGroupsTest, ElementwiseOpKinds) {
  EXPECT_TRUE(ir::isElementwiseUnary(ir::OpKind::Copy));
  EXPECT_TRUE(ir::isElementwiseUnary(ir::OpKind::GeluGrad));
  EXPECT_FALSE(ir::isElementwiseUnary(ir::OpKind::Add));
  EXPECT_FALSE(ir::isElementwiseUnary(ir::OpKind::SumTo));
  EXPECT_TRUE(ir::isElementwiseBinary(ir::OpKind::Eq));
  EXPECT_FALSE(ir::isElementwiseBinary(ir::OpKind::Dot));
  EXPECT_FALSE(ir::isElementwiseBinary(ir::OpKind::Exp));
}

} // namespace
} // namespace hector::codegen
