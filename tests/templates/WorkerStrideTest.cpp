// The padding between the workers' copies of a worker-split loop's
// accumulators (templates/traversal/Traversal.h workerStride): every lane of
// a warp must reach its own shared-memory bank on each accumulator update,
// and the fold that reads one element of every copy must too.
#include "templates/traversal/Traversal.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

namespace {

using hector::trav::kSharedBanks;
using hector::trav::workerStride;

/// The banks the lanes of warp `warp` reach when each updates element
/// sublane + lanes * k of its worker's copy (as the generated worker
/// loops do: Traversal.h HECTOR_FOR_ELEMENTS with the worker's lanes).
std::set<int64_t> updateBanks(int64_t stride, int64_t lanes, int64_t warp,
                              int64_t k) {
  std::set<int64_t> banks;
  for (int64_t l = 0; l < 32; ++l) {
    const int64_t lane = warp * 32 + l;
    const int64_t worker = lane / lanes, sublane = lane % lanes;
    banks.insert((worker * stride + sublane + lanes * k) % kSharedBanks);
  }
  return banks;
}

TEST(WorkerStride, UpdatesOfAWarpReachDistinctBanks) {
  for (int64_t groupSize : {32, 1024})
    for (int64_t lanes = 1; lanes < 32; lanes *= 2)
      for (int64_t size : {1, 2, 3, 8, 31, 32, 33, 64, 100, 128, 256}) {
        const int64_t workers = groupSize / lanes;
        const int64_t stride = workerStride(size, workers, groupSize);
        SCOPED_TRACE(testing::Message() << "size " << size << ", " << workers
                                        << " workers of " << lanes
                                        << " lanes, stride " << stride);
        EXPECT_GE(stride, size);
        EXPECT_LT(stride - size, kSharedBanks);
        // Every element a lane updates (k up to the row's end), in the
        // first and last warp of the group.
        for (int64_t warp : {int64_t{0}, groupSize / 32 - 1})
          for (int64_t k = 0; lanes * k < size; ++k)
            EXPECT_EQ(updateBanks(stride, lanes, warp, k).size(), 32u);
      }
}

TEST(WorkerStride, TheFoldReadsConsecutiveWords) {
  // The fold has lane i read element i of worker w's copy, at
  // w * stride + i: consecutive words, whatever the stride.
  const int64_t stride = workerStride(64, 16, 32);
  std::set<int64_t> banks;
  for (int64_t i = 0; i < 32; ++i)
    banks.insert((3 * stride + i) % kSharedBanks);
  EXPECT_EQ(banks.size(), 32u);
}

TEST(WorkerStride, NoPaddingWithoutWorkersSharingAWarp) {
  EXPECT_EQ(workerStride(64, 1, 32), 64);    // one worker: the whole warp
  EXPECT_EQ(workerStride(64, 1, 1), 64);     // the CPU: one thread
  EXPECT_EQ(workerStride(64, 32, 1024), 64); // 32-lane workers of a block
  EXPECT_EQ(workerStride(1, 32, 32), 1);     // one-lane workers, one scalar
}

TEST(WorkerStride, PadsTheUsualRows) {
  // 64-wide rows, 16 workers of 2 lanes (a warp) and 128 workers of 8
  // lanes (a 1024-thread block): the paddings of the bundled models.
  EXPECT_EQ(workerStride(64, 16, 32), 66);
  EXPECT_EQ(workerStride(64, 128, 1024), 72);
}

} // namespace
