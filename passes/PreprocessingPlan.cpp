#include "passes/PreprocessingPlan.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace hector::passes {
namespace {

using intra::RowAccess;

std::string keyName(const std::vector<ir::Attr> &path) {
  std::string s;
  for (ir::Attr a : path)
    s += (s.empty() ? "" : "_") + std::string(ir::attrName(a));
  return s;
}

/// The plan under construction: entry name -> description + users.
class PlanBuilder {
public:
  void need(const std::string &entry, const nlohmann::json &description,
            const std::string &instance) {
    nlohmann::json &e = plan_[entry];
    if (e.is_null())
      e = description;
    nlohmann::json &users = e["needed_by"];
    if (users.is_null())
      users = nlohmann::json::array();
    if (std::find(users.begin(), users.end(), instance) == users.end())
      users.push_back(instance);
  }

  void sortedCoo(const std::vector<ir::Attr> &key, const std::string &inst) {
    const std::string k = keyName(key);
    need(k + "_sorted_coo",
         {{"kind", "sorted_coo"},
          {"sort_key", k},
          {"arrays", {"eid", "src", "dst", "etype"}},
          {"segment_pointers", k + "_ptr"}},
         inst);
    need(k + "_ptr",
         {{"kind", "segment_pointers"}, {"segments_of", k + "_sorted_coo"}},
         inst);
  }

  void sumChunks(const std::string &inst, bool weighted) {
    nlohmann::json arrays = {"sum_chunk_ptr", "sum_chunk_src", "sum_chunk_dst",
                             "sum_chunk_eid", "sum_chunk_etype_ptr"};
    if (weighted) { // where the entries' weights are stored and read
      arrays.push_back("sum_chunk_edge");
      arrays.push_back("sum_edge_entry");
    }
    need(weighted ? "weighted_sum_chunks" : "sum_chunks",
         {{"kind", "segment_chunks"},
          {"segments_by", {"etype", "dst"}},
          {"arrays", arrays}},
         inst);
  }

  /// A summed GEMM's divisor (rel_in_degree, the same on a segment) once
  /// a chunk, read at the chunk's row.
  void chunkDivisors(const std::string &inst) {
    need("sum_chunk_rel_in_degree",
         {{"kind", "chunk_value"},
          {"value", "rel_in_degree"},
          {"read_at", "sum_chunk_eid"}},
         inst);
  }

  /// A GEMM once a chunk: its rows are the chunks, its readers find an
  /// edge's row through sum_edge_chunk.
  void chunkRows(const std::string &inst) {
    need("chunk_rows",
         {{"kind", "segment_chunks"},
          {"segments_by", {"etype", "dst"}},
          {"arrays",
           {"sum_chunk_dst", "sum_chunk_etype_ptr", "sum_edge_chunk"}}},
         inst);
  }

  /// A GEMM's rows once more in the order of the row they gather
  /// (GemmInstance::gatherOrder).
  void gatherOrder(intra::GemmInstance::GatherOrder order,
                   const std::string &inst) {
    using Order = intra::GemmInstance::GatherOrder;
    const auto arrays = intra::GemmInstance::gatherOrderArrays(order);
    if (!arrays)
      return;
    const bool pairs = order == Order::PairsBySrc;
    need(pairs ? "pair_src_order" : "chunk_dst_order",
         {{"kind", "row_order"},
          {"rows_of", pairs ? "unique_pairs" : "chunk_rows"},
          {"sort_key", {pairs ? "src" : "dst", "etype"}},
          {"arrays", {arrays->rowIds, arrays->gather, arrays->rowType}}},
         inst);
  }

  void uniquePairs(const std::string &inst) {
    need("unique_pairs",
         {{"kind", "compact_map"},
          {"arrays", {"edge_to_pair", "pair_src", "pair_etype",
                      "pair_etype_ptr"}}},
         inst);
  }

  void csr(const std::string &inst) {
    need("csr_by_dst",
         {{"kind", "csr"},
          {"arrays", {"dst_ptr", "src", "eid", "etype"}},
          {"segment_pointers", "dst_ptr"}},
         inst);
  }

  void csc(const std::string &inst) {
    need("csc_by_src",
         {{"kind", "csr"},
          {"transpose_of", "csr_by_dst"},
          {"arrays", {"src_ptr", "dst", "eid", "etype"}},
          {"segment_pointers", "src_ptr"}},
         inst);
  }

  void ntypeSortedNodes(const std::string &inst) {
    need("ntype_sorted_nodes",
         {{"kind", "sorted_nodes"},
          {"sort_key", "ntype"},
          {"arrays", nlohmann::json::array({"node"})},
          {"segment_pointers", "ntype_ptr"}},
         inst);
    need("ntype_ptr",
         {{"kind", "segment_pointers"}, {"segments_of", "ntype_sorted_nodes"}},
         inst);
  }

  /// Reading a value: graph values are derived arrays; compact accesses
  /// go through the edge -> pair map.
  void reads(const intra::Program &program, const std::string &value,
             bool throughPair, const std::string &inst) {
    if (throughPair)
      uniquePairs(inst);
    const intra::ValueLayout *l = program.findLayout(value);
    if (l && l->decl.kind == ir::ValueKind::Graph)
      need(value,
           {{"kind", "graph_value"},
            {"rows", intra::rowSchemeName(l->rows)}},
           inst);
  }

  nlohmann::json take() { return std::move(plan_); }

private:
  nlohmann::json plan_ = nlohmann::json::object();
};

bool hasPair(const std::vector<ir::Attr> &path) {
  return std::find(path.begin(), path.end(), ir::Attr::Pair) != path.end();
}

void collectGemm(const intra::Program &program, const intra::GemmInstance &g,
                 PlanBuilder &plan) {
  const bool segmented = g.segmentBy && !g.segmentBy->empty();
  switch (g.rows) {
  case intra::RowDomain::Edges:
    if (g.perChunk)
      plan.chunkRows(g.name);
    else if (g.summedBySegment) {
      // rows: chunks of (etype, dst) segments
      plan.sumChunks(g.name, g.sumWeights.has_value());
      if (g.epilogue)
        plan.chunkDivisors(g.name);
    }
    else if (segmented)
      plan.sortedCoo(*g.segmentBy, g.name);
    break;
  case intra::RowDomain::Pairs:
    plan.uniquePairs(g.name); // pairs are numbered sorted by etype
    break;
  case intra::RowDomain::Nodes:
    if (segmented)
      plan.ntypeSortedNodes(g.name);
    break;
  case intra::RowDomain::EdgeTypes:
  case intra::RowDomain::NodeTypes:
    break;
  }
  plan.gatherOrder(g.gatherOrder(), g.name);
  std::vector<const RowAccess *> accesses = g.reads();
  for (const RowAccess *out : g.writes())
    accesses.push_back(out);
  for (const RowAccess *a : accesses)
    plan.reads(program, a->value, hasPair(a->path), g.name);
}

void collectStmts(const intra::Program &program, const intra::TravLoop &root,
                  const std::string &inst, PlanBuilder &plan) {
  intra::forEachTravStmt(root, [&](const intra::TravStmt &s) {
    auto visit = [&](const ir::Access &a) {
      plan.reads(program, a.value, hasPair(a.index.attrs), inst);
    };
    visit(s.stmt.target);
    for (const ir::Operand &op : s.stmt.operands)
      if (const auto *a = std::get_if<ir::Access>(&op))
        visit(*a);
  });
}

void collectTraversal(const intra::Program &program,
                      const intra::TraversalInstance &t, PlanBuilder &plan) {
  switch (t.access) {
  case intra::AccessScheme::CsrByDst:
    plan.csr(t.name);
    break;
  case intra::AccessScheme::CscBySrc:
    plan.csc(t.name);
    break;
  case intra::AccessScheme::CsrAndCsc:
    plan.csr(t.name);
    plan.csc(t.name);
    break;
  case intra::AccessScheme::UniquePairs:
    plan.uniquePairs(t.name);
    break;
  case intra::AccessScheme::None:
  case intra::AccessScheme::Coo:
    break;
  }
  collectStmts(program, *t.root, t.name, plan);
}

} // namespace

nlohmann::json collectPreprocessingPlan(const intra::Program &program) {
  PlanBuilder plan;
  for (const intra::Instance &inst : program.instances) {
    if (const auto *g = std::get_if<intra::GemmInstance>(&inst))
      collectGemm(program, *g, plan);
    else if (const auto *t = std::get_if<intra::TraversalInstance>(&inst))
      collectTraversal(program, *t, plan);
    else {
      // The interpreter builds its own indices from the COO; it needs only
      // the compact map and graph values.
      const auto &f = std::get<intra::FallbackInstance>(inst);
      collectStmts(program, *f.root, f.name, plan);
    }
  }
  nlohmann::json out;
  out["model"] = program.name;
  out["format"] = 1;
  out["arrays"] = plan.take();
  return out;
}

} // namespace hector::passes
