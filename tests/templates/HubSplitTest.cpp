// The split heavy launch's partition (templates/traversal/HubSplit.h): the
// spans the blocks take, checked edge by edge on the host against what the
// CUDA kernels rely on.
#include "templates/traversal/HubSplit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

namespace {

using hector::trav::EdgeSpan;
using hector::trav::HubItem;
using hector::trav::HubWork;

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

/// What every block of a launch of `launched` blocks takes, the whole
/// rows going off the queue in the order of `order` (a permutation of the
/// participating blocks: each in turn, while the queue lasts, takes one
/// row): checks that each heavy row's edges are taken exactly once, every
/// piece is non-empty, no block takes two pieces of one row, no row has
/// more pieces than blocks, a block takes at most two pieces and all of
/// them before any whole row, a block takes no more items than items()
/// allows, and every part of a row reports the number of blocks that share
/// it. Returns the largest part count.
int64_t checkPartition(const HeavyCsr &g, int64_t pieceEdges, int64_t launched,
                       uint64_t seed = 1) {
  const int64_t rows = g.heavyRows();
  const int64_t edges = g.edgePtr[rows];
  const int64_t blocks =
      hector::trav::hubBlocks(edges, rows, pieceEdges, launched);
  EXPECT_GE(blocks, 1);
  EXPECT_LE(blocks, launched);
  std::vector<int> taken(static_cast<size_t>(g.ptr.back()), 0);
  std::map<int64_t, std::vector<int64_t>> blocksOfRow;
  std::map<int64_t, std::set<int64_t>> reportedParts;
  std::vector<HubWork> work;
  std::vector<std::set<int64_t>> rowsOfBlock(static_cast<size_t>(blocks));
  auto take = [&](int64_t b, int64_t it, const HubItem &item) {
    EXPECT_EQ(item.parts > 1 || item.end >= 0,
              it < work[static_cast<size_t>(b)].pieces)
        << "block " << b << " item " << it;
    EXPECT_TRUE(rowsOfBlock[static_cast<size_t>(b)].insert(item.row).second)
        << "block " << b << " takes row " << item.row << " twice";
    const int64_t node = g.rows[static_cast<size_t>(item.row)];
    const EdgeSpan span = hector::trav::hubSpan(g.ptr.data(), node, item);
    EXPECT_LT(span.begin, span.end) << "block " << b << " item " << it;
    EXPECT_GE(span.begin, g.ptr[node]);
    EXPECT_LE(span.end, g.ptr[node + 1]);
    for (int64_t e = span.begin; e < span.end; ++e)
      ++taken[static_cast<size_t>(e)];
    blocksOfRow[item.row].push_back(b);
    reportedParts[item.row].insert(span.parts);
  };
  for (int64_t b = 0; b < launched; ++b) {
    const HubWork w =
        hector::trav::hubWork(g.edgePtr.data(), rows, b, blocks);
    if (b >= blocks) {
      EXPECT_EQ(w.items(), 0) << "block " << b << " is past " << blocks;
      continue;
    }
    EXPECT_LE(w.pieces, 2) << "block " << b;
    work.push_back(w);
    for (int64_t it = 0; it < w.pieces; ++it)
      take(b, it, hector::trav::hubPiece(w, g.edgePtr.data(), it));
  }
  // The queue: blocks in a shuffled order take one whole row each, round
  // after round, until a take comes back empty.
  std::vector<int64_t> order(static_cast<size_t>(blocks));
  for (int64_t b = 0; b < blocks; ++b)
    order[static_cast<size_t>(b)] = b;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  std::vector<int64_t> items(static_cast<size_t>(blocks));
  for (int64_t b = 0; b < blocks; ++b)
    items[static_cast<size_t>(b)] = work[static_cast<size_t>(b)].pieces;
  for (int64_t queue = 0, done = 0; done < blocks;) {
    for (int64_t b : order) {
      int64_t &it = items[static_cast<size_t>(b)];
      if (it < 0)
        continue;
      const HubWork &w = work[static_cast<size_t>(b)];
      const HubItem item = hector::trav::hubWholeRow(w, queue++);
      if (item.row < 0) {
        it = -1;
        ++done;
        continue;
      }
      EXPECT_LT(it, w.items()) << "block " << b;
      take(b, it++, item);
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
    EXPECT_LE(parts, blocks);
    widest = std::max(widest, parts);
  }
  return widest;
}

/// Heavy rows as GraphArrays orders them: largest first.
std::vector<int64_t> byDegree(std::vector<int64_t> degrees) {
  std::sort(degrees.rbegin(), degrees.rend());
  return degrees;
}

TEST(HubSplit, OneHubOverManyBlocks) {
  HeavyCsr g({473022});
  // 2048 edges per block at least: 230 blocks wanted, 132 launched; the
  // hub is cut into 132 pieces of 3,583 or 3,584 edges.
  EXPECT_EQ(checkPartition(g, 2048, 132), 132);
  const HubWork w = hector::trav::hubWork(g.edgePtr.data(), 1, 5, 132);
  EXPECT_EQ(w.pieceEdges, 3584);
  EXPECT_EQ(w.bigRows, 1);
  EXPECT_EQ(w.pieces, 1);
  EXPECT_EQ(w.items(), w.pieces); // no whole rows
}

TEST(HubSplit, SmallGraphGetsABlockPerRow) {
  // 429 heavy edges, fewer than one piece: still a block per row (C =
  // 215, so the 300-edge row is cut in two and the other stays whole).
  HeavyCsr g({300, 129});
  EXPECT_EQ(hector::trav::hubBlocks(429, 2, 2048, 132), 2);
  EXPECT_EQ(checkPartition(g, 2048, 132), 2);
  // Many small heavy rows: a block each, up to what is launched.
  HeavyCsr many(std::vector<int64_t>(50, 200));
  EXPECT_EQ(hector::trav::hubBlocks(10000, 50, 2048, 132), 50);
  EXPECT_EQ(hector::trav::hubBlocks(10000, 50, 2048, 40), 40);
  EXPECT_EQ(checkPartition(many, 2048, 132), 1);
}

TEST(HubSplit, TheTestsSplitOfTwoSmallHubs) {
  // tests/python/test_generated.py's split-hubs case: 16 edges per block
  // give 26 blocks and pieces of at most 17 edges; both hubs are cut.
  HeavyCsr g({300, 129});
  EXPECT_EQ(hector::trav::hubBlocks(429, 2, 16, 132), 26);
  const HubWork w = hector::trav::hubWork(g.edgePtr.data(), 2, 0, 26);
  EXPECT_EQ(w.pieceEdges, 17);
  EXPECT_EQ(w.bigRows, 2);
  EXPECT_EQ(checkPartition(g, 16, 132), 18); // ceil(300 / 17)
}

TEST(HubSplit, PiecesOfARowGoToConsecutiveBlocks) {
  // 4 blocks, 1000 edges: C = 250; the 600-edge row is cut into 3 pieces
  // (blocks 0 to 2), the 300-edge one into 2 (blocks 3 and 0, the next
  // round); the 100-edge row goes whole to the first block to take it off
  // the queue, and the next take finds the queue empty.
  HeavyCsr g({600, 300, 100});
  const int64_t blocks = hector::trav::hubBlocks(1000, 3, 100, 4);
  ASSERT_EQ(blocks, 4);
  std::vector<HubItem> items;
  for (int64_t b = 0; b < blocks; ++b) {
    const HubWork w = hector::trav::hubWork(g.edgePtr.data(), 3, b, blocks);
    EXPECT_EQ(w.bigRows, 2);
    EXPECT_EQ(w.pieces, b == 0 ? 2 : 1);
    EXPECT_EQ(w.items(), w.pieces + 1); // and at most the one whole row
  }
  const HubWork w0 = hector::trav::hubWork(g.edgePtr.data(), 3, 0, blocks);
  const HubItem first = hector::trav::hubPiece(w0, g.edgePtr.data(), 0);
  EXPECT_EQ(first.row, 0);
  EXPECT_EQ(first.begin, 0);
  EXPECT_EQ(first.end, 200);
  EXPECT_EQ(first.parts, 3);
  const HubItem second = hector::trav::hubPiece(w0, g.edgePtr.data(), 1);
  EXPECT_EQ(second.row, 1);
  EXPECT_EQ(second.begin, 150);
  EXPECT_EQ(second.end, 300);
  EXPECT_EQ(second.parts, 2);
  const HubItem whole = hector::trav::hubWholeRow(w0, 0);
  EXPECT_EQ(whole.row, 2);
  EXPECT_LT(whole.end, 0);
  EXPECT_EQ(whole.parts, 1);
  EXPECT_LT(hector::trav::hubWholeRow(w0, 1).row, 0);
  EXPECT_EQ(checkPartition(g, 100, 4), 3);
}

TEST(HubSplit, RandomPowerLawRows) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<int64_t> degrees;
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      // 129 and up, heavy-tailed.
      const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
      degrees.push_back(129 + static_cast<int64_t>(50.0 / (u * u + 1e-4)));
    }
    HeavyCsr g(byDegree(degrees));
    const int64_t piece = 1 + static_cast<int64_t>(rng() % 5000);
    const int64_t launched = 1 + static_cast<int64_t>(rng() % 300);
    SCOPED_TRACE(testing::Message() << "trial " << trial << ": " << n
                                    << " rows, piece " << piece << ", "
                                    << launched << " blocks");
    checkPartition(g, piece, launched, static_cast<uint64_t>(trial));
  }
}

TEST(HubSplit, NoHeavyEdges) {
  HeavyCsr g({});
  EXPECT_EQ(hector::trav::hubBlocks(0, 0, 2048, 132), 1);
  const HubWork w = hector::trav::hubWork(g.edgePtr.data(), 0, 0, 1);
  EXPECT_EQ(w.items(), 0);
}

TEST(HubSplit, CountersKeepTheSlotsAligned) {
  // One counter per row and the whole-row queue's.
  EXPECT_EQ(hector::trav::hubCounterBytes(0), 16);
  EXPECT_EQ(hector::trav::hubCounterBytes(3), 16);
  EXPECT_EQ(hector::trav::hubCounterBytes(4), 32);
  EXPECT_EQ(hector::trav::hubCounterBytes(7), 32);
  EXPECT_EQ(hector::trav::hubCounterBytes(8), 48);
}

} // namespace
