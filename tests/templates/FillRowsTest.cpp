// templates/traversal/FillRows.h on the CPU: every row of the buffer
// becomes the shared row, and nothing past the rows is written. (The CUDA
// fillRows: FillRowsCudaTest.cu.)
#include "templates/traversal/FillRows.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

TEST(FillRows, CpuSetsEveryRowToTheSharedRow) {
  const std::vector<double> row = {1.5, -2.0, 0.25};
  std::vector<double> buffer(5 * 3 + 2, 9.0); // two guard elements
  hector::trav::fillRowsCpu(buffer.data(), 5, row.data(), 3);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(buffer[r * 3 + c], row[c]) << r << " " << c;
  EXPECT_EQ(buffer[15], 9.0);
  EXPECT_EQ(buffer[16], 9.0);
  // No rows: nothing written.
  hector::trav::fillRowsCpu(buffer.data() + 15, 0, row.data(), 3);
  EXPECT_EQ(buffer[15], 9.0);
}

// Which rows the GPU fill stores a 16-byte word a thread: float rows of
// whole words whose count divides the 256-thread block, both pointers
// 16-byte aligned; anything else an element a thread.
TEST(FillRows, WordsOnlyForAlignedFloatRowsThatDivideTheBlock) {
  using hector::trav::fillRowWords;
  EXPECT_EQ(fillRowWords(64, 4, true), 16); // RGAT-PyG's 64-wide bias
  EXPECT_EQ(fillRowWords(4, 4, true), 1);
  EXPECT_EQ(fillRowWords(1024, 4, true), 256);
  EXPECT_EQ(fillRowWords(2048, 4, true), 0); // 512 words: past a block
  EXPECT_EQ(fillRowWords(12, 4, true), 0);   // 3 words do not divide 256
  EXPECT_EQ(fillRowWords(66, 4, true), 0);   // not whole words
  EXPECT_EQ(fillRowWords(64, 4, false), 0);  // unaligned
  EXPECT_EQ(fillRowWords(64, 8, true), 0);   // double
  EXPECT_EQ(fillRowWords(0, 4, true), 0);
}

} // namespace
