// templates/traversal/ZeroFillCuda.h: zeroFill zeroes exactly its spans
// (16-byte words and the 4-byte words around them), batches more spans
// than one launch takes, skips empty ones and rejects sizes that are not
// whole 4-byte words. The generated backward programs' zero-filled
// accumulators are also checked end to end by tests/python/test_generated.py
// (gradients against the interpreter).
#include "templates/traversal/ZeroFillCuda.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace {

using hector::trav::ZeroSpan;
using hector::trav::zeroFill;

bool haveDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

/// A device buffer of `words` 32-bit words, all bits set.
struct Ones {
  explicit Ones(size_t words) : words(words) {
    EXPECT_EQ(cudaMalloc(&ptr, words * 4), cudaSuccess);
    EXPECT_EQ(cudaMemset(ptr, 0xff, words * 4), cudaSuccess);
  }
  ~Ones() { cudaFree(ptr); }
  std::vector<uint32_t> read() const {
    std::vector<uint32_t> host(words);
    EXPECT_EQ(cudaMemcpy(host.data(), ptr, words * 4, cudaMemcpyDeviceToHost),
              cudaSuccess);
    return host;
  }
  ZeroSpan span(size_t firstWord, size_t count) const {
    return ZeroSpan{static_cast<char *>(ptr) + 4 * firstWord, 4 * count};
  }
  void *ptr = nullptr;
  size_t words;
};

/// Every word in [first, first + count) of one of `spans` is 0, every
/// other word still all ones.
void expectZeroedExactly(const Ones &buffer,
                         const std::vector<std::pair<size_t, size_t>> &spans) {
  std::vector<bool> zero(buffer.words, false);
  for (const auto &[first, count] : spans)
    for (size_t i = first; i < first + count; ++i)
      zero[i] = true;
  const std::vector<uint32_t> got = buffer.read();
  for (size_t i = 0; i < buffer.words; ++i)
    ASSERT_EQ(got[i], zero[i] ? 0u : 0xffffffffu) << "word " << i;
}

TEST(ZeroFill, ZeroesExactlyItsSpansAtAnyAlignment) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  Ones buffer(4096);
  // Spans that start on and off 16-byte boundaries, shorter than one
  // 16-byte word, ending inside one, and one large one.
  const std::vector<std::pair<size_t, size_t>> spans = {
      {0, 1}, {2, 3}, {9, 4}, {17, 7}, {33, 64}, {101, 2}, {200, 3000}};
  std::vector<ZeroSpan> list;
  for (const auto &[first, count] : spans)
    list.push_back(buffer.span(first, count));
  zeroFill(nullptr, list.data(), list.size());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expectZeroedExactly(buffer, spans);
}

TEST(ZeroFill, BatchesMoreSpansThanOneLaunchTakesAndSkipsEmptyOnes) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  Ones buffer(64 * 40);
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < 37; ++i)
    spans.push_back({64 * i + i % 5, 1 + (7 * i) % 50});
  std::vector<ZeroSpan> s;
  for (const auto &[first, count] : spans)
    s.push_back(buffer.span(first, count));
  // Empty spans (a buffer the call does not need) between them.
  const ZeroSpan none{buffer.ptr, 0};
  s.insert(s.begin() + 3, none);
  s.insert(s.begin() + 15, none);
  s.push_back(none);
  zeroFill(nullptr, s.data(), s.size());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expectZeroedExactly(buffer, spans);
  // Nothing at all to zero launches nothing and fails nothing.
  const ZeroSpan nothing[] = {none, none};
  zeroFill(nullptr, nothing);
  zeroFill(nullptr, nullptr, 0);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(ZeroFill, RejectsPartialWords) {
  int x = 0;
  const ZeroSpan partial[] = {ZeroSpan{&x, 6}};
  EXPECT_THROW(zeroFill(nullptr, partial), std::invalid_argument);
}

} // namespace
