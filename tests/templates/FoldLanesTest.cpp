// The lanes that fold each element of a worker-split loop's accumulators
// (templates/traversal/Traversal.h foldLanes, foldSum, foldMax): a power of
// two within a warp and the worker count, as many as the elements leave
// room for without another round; on the host the shuffles are identities.
// The shuffles themselves run in the generated kernels, which
// tests/python/test_generated.py checks against the interpreter on the GPU.
#include "templates/traversal/Traversal.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using hector::trav::foldLanes;
using hector::trav::kWarpSize;
using hector::trav::workersFor;

TEST(FoldLanes, WhatTheGeneratedKernelsGet) {
  // A warp group's attention score: 32 one-lane workers, one element.
  EXPECT_EQ(foldLanes(1, 32, 32), 32);
  // A block group's: 1024 one-lane workers; a warp folds them.
  EXPECT_EQ(foldLanes(1, 1024, 1024), 32);
  // A 64-wide row: 4 workers in a warp (one lane per element, as before),
  // 128 workers in a block (16 lanes per element, 8 workers each).
  EXPECT_EQ(foldLanes(64, 4, 32), 1);
  EXPECT_EQ(foldLanes(64, 128, 1024), 16);
  // Two heads over 16 workers of two lanes.
  EXPECT_EQ(foldLanes(2, 16, 32), 16);
  // The CPU's one-thread group, and a single worker.
  EXPECT_EQ(foldLanes(1, 1, 1), 1);
  EXPECT_EQ(foldLanes(5, 1, 32), 1);
}

TEST(FoldLanes, StaysWithinAWarpTheWorkersAndOneRound) {
  for (int64_t groupSize : {1, 32, 1024})
    for (int64_t size : {1, 2, 3, 7, 8, 16, 31, 32, 33, 64, 100, 256, 2000}) {
      const int64_t workers = workersFor(size, groupSize);
      const int64_t p = foldLanes(size, workers, groupSize);
      SCOPED_TRACE(testing::Message() << "group " << groupSize << ", size "
                                      << size << ", " << workers
                                      << " workers: " << p << " lanes");
      EXPECT_GE(p, 1);
      EXPECT_EQ(p & (p - 1), 0) << "not a power of two";
      EXPECT_LE(p, kWarpSize);
      EXPECT_LE(p, workers);
      // No more element rounds than one lane per element takes.
      const int64_t rounds = (size + groupSize / p - 1) / (groupSize / p);
      EXPECT_EQ(rounds, (size + groupSize - 1) / groupSize);
      // As many as those limits allow.
      if (p < kWarpSize && p < workers) {
        EXPECT_GT(2 * p * size, groupSize);
      }
    }
}

TEST(FoldLanes, HostFoldsAreTheValue) {
  EXPECT_EQ(hector::trav::foldSum(2.5f, 32), 2.5f);
  EXPECT_EQ(hector::trav::foldMax(-1.0, 16), -1.0);
}

// splitsSum: whether a contraction's terms are split over a group's lanes
// (each lane a stride of the terms, then groupSum) rather than each lane
// taking whole elements.
using hector::trav::splitsSum;

TEST(SplitsSum, FewElementsOfManyTermsSplit) {
  // One head's attention gradient: 1 element of 64 terms. A warp: 2 terms
  // a lane and 5 shuffles against 64 terms on one lane.
  EXPECT_TRUE(splitsSum<32>(1, 64));
  // An 8-lane group: 8 terms and 3 shuffles against 64.
  EXPECT_TRUE(splitsSum<8>(1, 64));
  // Two heads of 32 in a warp: 2 x (1 + 5) against 32.
  EXPECT_TRUE(splitsSum<32>(2, 32));
}

TEST(SplitsSum, ManyElementsOrFewTermsDoNot) {
  // 64 elements of one term each: every lane already busy.
  EXPECT_FALSE(splitsSum<32>(64, 1));
  // 8 heads of 8 on 8 lanes: 8 a lane either way, plus shuffles.
  EXPECT_FALSE(splitsSum<8>(8, 8));
  // Nothing to sum, or no element.
  EXPECT_FALSE(splitsSum<32>(1, 0));
  EXPECT_FALSE(splitsSum<32>(0, 64));
}

TEST(SplitsSum, NeverOnTheCpuOrInABlockGroup) {
  EXPECT_FALSE(splitsSum<1>(1, 64));
  EXPECT_FALSE(splitsSum<1024>(1, 4096));
}

TEST(SplitsSum, GroupSumIsTheValueOnTheHost) {
  EXPECT_EQ((hector::trav::groupSum<32, float>(2.5f)), 2.5f);
  EXPECT_EQ((hector::trav::groupSum<1, double>(-1.0)), -1.0);
}

} // namespace
