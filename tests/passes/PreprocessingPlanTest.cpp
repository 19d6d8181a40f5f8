// Tests of passes/PreprocessingPlan: which graph arrays each bundled model's
// instances need (and which they do not), compact maps for pair rows, CSC
// for outgoing loops, graph values, and byte-for-byte determinism.
#include "passes/PreprocessingPlan.h"

#include "passes/LowerToIntraOp.h"
#include "tests/passes/PassTestUtil.h"

#include <gtest/gtest.h>

#include <set>

namespace hector {
namespace {

using passtest::loadBundledModel;

nlohmann::json planFor(const ir::Module &m) {
  ir::DiagnosticEngine diags;
  std::optional<intra::Program> p = passes::lowerToIntraOp(m, {}, diags);
  EXPECT_TRUE(p.has_value());
  return p ? passes::collectPreprocessingPlan(*p) : nlohmann::json{};
}

std::set<std::string> entries(const nlohmann::json &plan) {
  std::set<std::string> names;
  for (const auto &[name, entry] : plan.at("arrays").items())
    names.insert(name);
  return names;
}

std::vector<std::string> users(const nlohmann::json &plan,
                               const std::string &entry) {
  return plan.at("arrays").at(entry).at("needed_by").get<std::vector<std::string>>();
}

struct ExpectedPlan {
  const char *model;
  std::set<std::string> arrays;
};

const ExpectedPlan kPlans[] = {
    // Segment GEMM over edges by etype (with the norm epilogue), node
    // traversal over incoming edges.
    {"rgcn", {"csr_by_dst", "etype_ptr", "etype_sorted_coo", "rel_in_degree"}},
    {"rgat", {"csr_by_dst", "etype_ptr", "etype_sorted_coo"}},
    // K/Q/V sliced by the src/dst node type of each edge, A by node type.
    {"hgt",
     {"csr_by_dst", "dst_ntype_ptr", "dst_ntype_sorted_coo", "etype_ptr",
      "etype_sorted_coo", "ntype_ptr", "ntype_sorted_nodes", "src_ntype_ptr",
      "src_ntype_sorted_coo"}},
    // The aggregation is the GEMM's atomic scatter, summed by (dst, etype)
    // segment (the plan lowers the model as written, without compact
    // materialization): no CSR at all, and the segments' chunks instead of
    // the etype-sorted edges.
    {"rgcn_pyg", {"rel_in_degree", "sum_chunks", "sum_chunk_rel_in_degree"}},
    {"rgat_pyg", {"csr_by_dst", "etype_ptr", "etype_sorted_coo"}},
    {"hgt_pyg",
     {"csr_by_dst", "etype_ptr", "etype_sorted_coo", "ntype_ptr",
      "ntype_sorted_nodes"}},
};

class PlanModelTest : public ::testing::TestWithParam<ExpectedPlan> {};

TEST_P(PlanModelTest, NeedsExactlyTheseArrays) {
  nlohmann::json plan = planFor(loadBundledModel(GetParam().model));
  EXPECT_EQ(plan.at("model"), GetParam().model);
  EXPECT_EQ(entries(plan), GetParam().arrays) << plan.dump(2);
  for (const auto &[name, entry] : plan.at("arrays").items())
    EXPECT_FALSE(entry.at("needed_by").empty()) << name;
}

TEST_P(PlanModelTest, Deterministic) {
  ir::Module m = loadBundledModel(GetParam().model);
  EXPECT_EQ(planFor(m).dump(2), planFor(m.clone()).dump(2));
}

INSTANTIATE_TEST_SUITE_P(Bundled, PlanModelTest, ::testing::ValuesIn(kPlans),
                         [](const auto &info) {
                           return std::string(info.param.model);
                         });

TEST(PreprocessingPlanTest, RgcnUsersAndSegmentPointers) {
  nlohmann::json plan = planFor(loadBundledModel("rgcn"));
  EXPECT_EQ(users(plan, "etype_sorted_coo"), std::vector<std::string>{"gemm_0"});
  EXPECT_EQ(users(plan, "etype_ptr"), std::vector<std::string>{"gemm_0"});
  EXPECT_EQ(users(plan, "rel_in_degree"), std::vector<std::string>{"gemm_0"});
  EXPECT_EQ(users(plan, "csr_by_dst"), std::vector<std::string>{"trav_2"});
  const nlohmann::json &coo = plan["arrays"]["etype_sorted_coo"];
  EXPECT_EQ(coo["segment_pointers"], "etype_ptr");
  EXPECT_EQ(coo["sort_key"], "etype");
  EXPECT_EQ(plan["arrays"]["etype_ptr"]["segments_of"], "etype_sorted_coo");
}

TEST(PreprocessingPlanTest, CompactRowsNeedUniquePairs) {
  ir::Module m = passtest::parseVerified(R"(module @compact {
  hyper d : int = 4
  input x : node[d]
  param W : etype[d, d]
  temp msg : pair[d]
  output h : node[d]
  foreach p in pairs {
    msg[p] = linear(x[p.src], W[p.etype])
  }
  foreach e in edges {
    h[e.dst] += copy(msg[e.pair])
  }
}
)",
                                         "compact.ir");
  nlohmann::json plan = planFor(m);
  // The pair GEMM gathers x[p.src]: it also names its rows by source.
  EXPECT_EQ(entries(plan),
            (std::set<std::string>{"pair_src_order", "unique_pairs"}));
  EXPECT_EQ(users(plan, "unique_pairs"),
            (std::vector<std::string>{"gemm_0", "trav_1"}));
  EXPECT_EQ(plan["arrays"]["unique_pairs"]["arrays"],
            nlohmann::json({"edge_to_pair", "pair_src", "pair_etype",
                            "pair_etype_ptr"}));
  EXPECT_EQ(users(plan, "pair_src_order"),
            (std::vector<std::string>{"gemm_0"}));
  EXPECT_EQ(plan["arrays"]["pair_src_order"]["arrays"],
            nlohmann::json({"pair_src_order", "pair_src_order_src",
                            "pair_src_order_etype"}));
}

// A pair GEMM that scatters its output (into its source's row) keeps its
// relation order: the template would write each row at its id, so the
// GEMM names no second order (GemmInstance::gatherOrder).
TEST(PreprocessingPlanTest, AScatteredPairGemmNamesNoGatherOrder) {
  ir::Module m = passtest::parseVerified(R"(module @scattered {
  hyper d : int = 4
  input x : node[d]
  param W : etype[d, d]
  output h : node[d]
  foreach p in pairs {
    h[p.src] += linear(x[p.src], W[p.etype])
  }
}
)",
                                         "scattered.ir");
  nlohmann::json plan = planFor(m);
  EXPECT_EQ(entries(plan), std::set<std::string>{"unique_pairs"});
}

TEST(PreprocessingPlanTest, SummedGemmsNeedTheSegmentChunks) {
  ir::Module m =
      passtest::parseVerified(passtest::summedMessagesModule(), "summed.ir");
  nlohmann::json plan = planFor(m);
  // The chunks replace the etype-sorted edge list of a GEMM over edges;
  // its divisor is read once a chunk.
  EXPECT_EQ(entries(plan),
            (std::set<std::string>{"rel_in_degree", "sum_chunks",
                                   "sum_chunk_rel_in_degree"}));
  EXPECT_EQ(users(plan, "sum_chunks"), std::vector<std::string>{"gemm_0"});
  EXPECT_EQ(plan["arrays"]["sum_chunks"]["arrays"],
            nlohmann::json({"sum_chunk_ptr", "sum_chunk_src", "sum_chunk_dst",
                            "sum_chunk_eid", "sum_chunk_etype_ptr"}));
  EXPECT_EQ(users(plan, "sum_chunk_rel_in_degree"),
            std::vector<std::string>{"gemm_0"});
  EXPECT_EQ(plan["arrays"]["sum_chunk_rel_in_degree"]["value"],
            "rel_in_degree");
}

TEST(PreprocessingPlanTest, OutgoingLoopsNeedTheTranspose) {
  ir::Module m = passtest::parseVerified(R"(module @out {
  hyper d : int = 4
  input m : edge[d]
  graph out_degree : node[]
  temp s : node[d]
  output o : node[d]
  foreach n in src_nodes {
    foreach e in n.outgoing {
      s[n] += copy(m[e])
    }
    o[n] = div(s[n], out_degree[n])
  }
}
)",
                                         "out.ir");
  nlohmann::json plan = planFor(m);
  EXPECT_EQ(entries(plan), (std::set<std::string>{"csc_by_src", "out_degree"}));
  EXPECT_EQ(plan["arrays"]["csc_by_src"]["transpose_of"], "csr_by_dst");
}

} // namespace
} // namespace hector
