// The lanes of one group of a flat row loop (templates/traversal/
// Traversal.h rowGroupLanes): what a worker of a warp would take for the
// row (workersFor), so narrow rows get a lane each and wide ones up to a
// warp. The launches that use it (TraversalCuda.h launchShape's
// groupLanes) run in tests/python/test_generated.py on the GPU.
#include "templates/traversal/Traversal.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using hector::trav::kElementsPerWorkerLane;
using hector::trav::kWarpSize;
using hector::trav::rowGroupLanes;

TEST(RowGroupLanes, WhatTheGeneratedKernelsGet) {
  // One scalar per head: a lane per row, 32 rows per warp.
  EXPECT_EQ(rowGroupLanes(1), 1);
  // Two heads: still one lane (8 elements per lane by default).
  EXPECT_EQ(rowGroupLanes(2), 1);
  // A 64-wide message row: 8 lanes, 4 rows per warp.
  EXPECT_EQ(rowGroupLanes(64), 64 / kElementsPerWorkerLane);
  // Rows wider than a warp's lanes take the whole warp.
  EXPECT_EQ(rowGroupLanes(4096), kWarpSize);
}

TEST(RowGroupLanes, APowerOfTwoThatCoversTheRow) {
  for (int64_t widest = 1; widest <= 2048; ++widest) {
    const int lanes = rowGroupLanes(widest);
    EXPECT_GE(lanes, 1) << widest;
    EXPECT_LE(lanes, kWarpSize) << widest;
    EXPECT_EQ(lanes & (lanes - 1), 0) << widest;
    // Enough lanes for the row at the elements a lane takes, or a warp.
    EXPECT_TRUE(lanes == kWarpSize ||
                lanes * kElementsPerWorkerLane >= widest)
        << widest;
    // And no more than that needs.
    if (lanes > 1) {
      EXPECT_LT((lanes / 2) * kElementsPerWorkerLane, widest) << widest;
    }
  }
}

} // namespace
