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

} // namespace
