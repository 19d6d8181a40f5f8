// The split heavy launch's partition (templates/traversal/HubSplit.h): the
// spans the blocks take, checked edge by edge on the host against what the
// CUDA kernels rely on.
#include "templates/traversal/HubSplit.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

namespace {

using hector::trav::EdgeSpan;
using hector::trav::RowRange;

/// A CSR over `degrees.size()` nodes whose heavy rows are the nodes with
/// the given degrees (as GraphArrays' dst_ptr, heavy_dst_rows and
/// heavy_dst_edge_ptr): light nodes of degree 3 between them, so that a
/// heavy row's CSR position differs from its heavy-edge offset.
struct HeavyCsr {
  std::vector<int64_t> ptr{0}, rows, edgePtr{0};
  explicit HeavyCsr(const std::vector<int64_t> &degrees) {
    for (int64_t d : degrees) {
      ptr.push_back(ptr.back() + 3); // a light node
      rows.push_back(static_cast<int64_t>(ptr.size()) - 1);
      ptr.push_back(ptr.back() + d);
      edgePtr.push_back(edgePtr.back() + d);
    }
  }
  int64_t heavyRows() const { return static_cast<int64_t>(rows.size()); }
};

/// What every block of a launch of `launched` blocks takes: checks that
/// each heavy row's edges are taken exactly once, every span is non-empty,
/// a block's rows come in ascending order, and every part of a row reports
/// the number of blocks that take part of it. Returns the largest part
/// count.
int64_t checkPartition(const HeavyCsr &g, int64_t pieceEdges,
                       int64_t launched) {
  const int64_t rows = g.heavyRows();
  const int64_t edges = g.edgePtr[rows];
  const int64_t blocks =
      hector::trav::hubBlocks(edges, pieceEdges, launched);
  EXPECT_GE(blocks, 1);
  EXPECT_LE(blocks, launched);
  std::vector<int> taken(static_cast<size_t>(g.ptr.back()), 0);
  std::map<int64_t, std::set<int64_t>> blocksOfRow;
  std::map<int64_t, std::set<int64_t>> reportedParts;
  for (int64_t b = 0; b < launched; ++b) {
    const RowRange range =
        hector::trav::hubRowsOfBlock(g.edgePtr.data(), rows, b, blocks);
    if (b >= blocks) {
      EXPECT_EQ(range.begin, range.end) << "block " << b << " is past "
                                        << blocks;
      continue;
    }
    EXPECT_LE(range.begin, range.end);
    for (int64_t k = range.begin; k < range.end; ++k) {
      const int64_t node = g.rows[static_cast<size_t>(k)];
      const EdgeSpan span = hector::trav::hubSpan(
          g.ptr.data(), node, g.edgePtr.data(), rows, k, b, blocks);
      EXPECT_LT(span.begin, span.end) << "block " << b << " row " << k;
      EXPECT_GE(span.begin, g.ptr[node]);
      EXPECT_LE(span.end, g.ptr[node + 1]);
      for (int64_t e = span.begin; e < span.end; ++e)
        ++taken[static_cast<size_t>(e)];
      blocksOfRow[k].insert(b);
      reportedParts[k].insert(span.parts);
    }
  }
  int64_t widest = 0;
  for (int64_t k = 0; k < rows; ++k) {
    const int64_t node = g.rows[static_cast<size_t>(k)];
    for (int64_t e = g.ptr[node]; e < g.ptr[node + 1]; ++e)
      EXPECT_EQ(taken[static_cast<size_t>(e)], 1)
          << "heavy row " << k << " edge " << e;
    EXPECT_EQ(reportedParts[k].size(), 1u) << "row " << k;
    if (reportedParts[k].empty())
      continue;
    const int64_t parts = *reportedParts[k].begin();
    EXPECT_EQ(parts, static_cast<int64_t>(blocksOfRow[k].size()));
    // The parts are consecutive blocks.
    EXPECT_EQ(*blocksOfRow[k].rbegin() - *blocksOfRow[k].begin() + 1, parts);
    widest = std::max(widest, parts);
  }
  return widest;
}

TEST(HubSplit, OneHubOverManyBlocks) {
  HeavyCsr g({473022});
  // 2048 edges per block at least: 230 blocks wanted, 132 launched.
  EXPECT_EQ(checkPartition(g, 2048, 132), 132);
}

TEST(HubSplit, SmallGraphStaysInOneBlock) {
  // 429 heavy edges, fewer than one piece: one block takes both rows.
  HeavyCsr g({300, 129});
  EXPECT_EQ(hector::trav::hubBlocks(429, 2048, 132), 1);
  EXPECT_EQ(checkPartition(g, 2048, 132), 1);
}

TEST(HubSplit, TheTestsSplitOfTwoSmallHubs) {
  // tests/python/test_generated.py's split-hubs case: 16 edges per block.
  HeavyCsr g({300, 129});
  EXPECT_EQ(hector::trav::hubBlocks(429, 16, 132), 26);
  EXPECT_GT(checkPartition(g, 16, 132), 1);
}

TEST(HubSplit, BlockStraddlingTwoRowsIsAPartOfBoth) {
  // 3 blocks over 2 rows of 150 edges: block 1 takes [100, 200).
  HeavyCsr g({150, 150});
  const int64_t blocks = hector::trav::hubBlocks(300, 100, 8);
  ASSERT_EQ(blocks, 3);
  const RowRange r = hector::trav::hubRowsOfBlock(g.edgePtr.data(), 2, 1, 3);
  EXPECT_EQ(r.begin, 0);
  EXPECT_EQ(r.end, 2);
  const EdgeSpan first =
      hector::trav::hubSpan(g.ptr.data(), g.rows[0], g.edgePtr.data(), 2, 0,
                            1, blocks);
  EXPECT_EQ(first.begin, g.ptr[g.rows[0]] + 100);
  EXPECT_EQ(first.end, g.ptr[g.rows[0] + 1]);
  EXPECT_EQ(first.parts, 2);
  const EdgeSpan second =
      hector::trav::hubSpan(g.ptr.data(), g.rows[1], g.edgePtr.data(), 2, 1,
                            1, blocks);
  EXPECT_EQ(second.begin, g.ptr[g.rows[1]]);
  EXPECT_EQ(second.end, g.ptr[g.rows[1]] + 50);
  EXPECT_EQ(second.parts, 2);
  EXPECT_EQ(checkPartition(g, 100, 8), 2);
}

TEST(HubSplit, RandomPowerLawRows) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<int64_t> degrees;
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      // 129 and up, heavy-tailed.
      const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
      degrees.push_back(129 + static_cast<int64_t>(50.0 / (u * u + 1e-4)));
    }
    HeavyCsr g(degrees);
    const int64_t piece = 1 + static_cast<int64_t>(rng() % 5000);
    const int64_t launched = 1 + static_cast<int64_t>(rng() % 300);
    SCOPED_TRACE(testing::Message() << "trial " << trial << ": " << n
                                    << " rows, piece " << piece << ", "
                                    << launched << " blocks");
    checkPartition(g, piece, launched);
  }
}

TEST(HubSplit, NoHeavyEdges) {
  HeavyCsr g({});
  EXPECT_EQ(hector::trav::hubBlocks(0, 2048, 132), 1);
  const RowRange r = hector::trav::hubRowsOfBlock(g.edgePtr.data(), 0, 0, 1);
  EXPECT_EQ(r.begin, r.end);
}

TEST(HubSplit, CountersKeepTheSlotsAligned) {
  EXPECT_EQ(hector::trav::hubCounterBytes(0), 0);
  EXPECT_EQ(hector::trav::hubCounterBytes(1), 16);
  EXPECT_EQ(hector::trav::hubCounterBytes(4), 16);
  EXPECT_EQ(hector::trav::hubCounterBytes(5), 32);
}

} // namespace
