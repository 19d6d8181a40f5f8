// templates/LaunchGraphCache.h: a key's first call runs eagerly, its second
// captures and replays, later ones replay; other keys, ineligible calls,
// HECTOR_LAUNCH_GRAPHS=0 and calls on a capturing stream run eagerly; a
// capture that fails leaves its key eager for good; a body that throws is
// not remembered. Every case checks what the launches computed, not only
// the counters. The generated ops go through it end to end in
// tests/python (every CUDA case, with and without HECTOR_LAUNCH_GRAPHS).
#include "templates/LaunchGraphCache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace {

using hector::templates::LaunchGraphCache;
using hector::templates::LaunchGraphStats;
using hector::templates::LaunchKey;

bool haveDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

__global__ void addKernel(int *counter, int amount) { *counter += amount; }

/// One device int, zero to start with.
struct Counter {
  Counter() {
    EXPECT_EQ(cudaMalloc(&ptr, sizeof(int)), cudaSuccess);
    EXPECT_EQ(cudaMemset(ptr, 0, sizeof(int)), cudaSuccess);
  }
  ~Counter() { cudaFree(ptr); }
  int read() const {
    int v = -1;
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(&v, ptr, sizeof(int), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return v;
  }
  int *ptr = nullptr;
};

/// A non-blocking stream for one test.
struct Stream {
  Stream() {
    EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
              cudaSuccess);
  }
  ~Stream() { cudaStreamDestroy(s); }
  cudaStream_t s = nullptr;
};

/// A key of the kernel's arguments, as the generated code makes one.
LaunchKey keyOf(const int *counter, int amount) {
  LaunchKey key;
  key.add(counter);
  key.add(amount);
  return key;
}

/// Runs the two-launch body `counter += amount; counter += 1` through
/// `cache` on `stream`.
void addThroughCache(LaunchGraphCache &cache, const Counter &c, int amount,
                     cudaStream_t stream, bool eligible = true) {
  cache.run(keyOf(c.ptr, amount), eligible, stream, [&](cudaStream_t s) {
    addKernel<<<1, 1, 0, s>>>(c.ptr, amount);
    addKernel<<<1, 1, 0, s>>>(c.ptr, 1);
    if (cudaGetLastError() != cudaSuccess)
      throw std::runtime_error("launch failed");
  });
}

void expectStats(const LaunchGraphCache &cache, int64_t eager, int64_t captured,
                 int64_t replayed, int64_t failed) {
  const LaunchGraphStats s = cache.stats();
  EXPECT_EQ(s.eager, eager);
  EXPECT_EQ(s.captured, captured);
  EXPECT_EQ(s.replayed, replayed);
  EXPECT_EQ(s.failed, failed);
}

/// Sets an environment variable for one test.
struct ScopedEnv {
  ScopedEnv(const char *name, const char *value) : name(name) {
    setenv(name, value, 1);
  }
  ~ScopedEnv() { unsetenv(name); }
  const char *name;
};

TEST(LaunchKey, EqualPartsGiveEqualBytesAndTheEnvironmentCounts) {
  const int a = 0, b = 0;
  EXPECT_EQ(keyOf(&a, 3).bytes(), keyOf(&a, 3).bytes());
  EXPECT_NE(keyOf(&a, 3).bytes(), keyOf(&a, 4).bytes());
  EXPECT_NE(keyOf(&a, 3).bytes(), keyOf(&b, 3).bytes());
  LaunchKey before;
  before.addEnvironment();
  ScopedEnv env("HECTOR_LAUNCH_KEY_TEST", "7");
  LaunchKey after;
  after.addEnvironment();
  EXPECT_NE(before.bytes(), after.bytes());
  EXPECT_NE(after.bytes().find("HECTOR_LAUNCH_KEY_TEST=7"), std::string::npos);
}

TEST(LaunchGraphCache, SecondCallCapturesAndLaterCallsReplay) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  LaunchGraphCache cache;
  Counter c;
  for (int call = 1; call <= 4; ++call) {
    addThroughCache(cache, c, 10, nullptr); // the legacy default stream
    EXPECT_EQ(c.read(), 11 * call) << "call " << call;
  }
  expectStats(cache, /*eager=*/1, /*captured=*/1, /*replayed=*/3, 0);
}

TEST(LaunchGraphCache, OtherKeysRunEagerlyAndTheOldestIsDropped) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  Stream owned;
  const cudaStream_t stream = owned.s;
  LaunchGraphCache cache;
  Counter c;
  int expected = 0;
  // Amount 1 twice: captured. Then kKeys other amounts, once each, push it
  // out: its next call is eager again.
  for (int amount : {1, 1}) {
    addThroughCache(cache, c, amount, stream);
    expected += amount + 1;
  }
  for (int i = 0; i < static_cast<int>(LaunchGraphCache::kKeys); ++i) {
    addThroughCache(cache, c, 100 + i, stream);
    expected += 100 + i + 1;
  }
  addThroughCache(cache, c, 1, stream);
  expected += 2;
  EXPECT_EQ(c.read(), expected);
  expectStats(cache, /*eager=*/2 + LaunchGraphCache::kKeys, /*captured=*/1,
              /*replayed=*/1, 0);
}

TEST(LaunchGraphCache, IneligibleCallsAndTheSwitchRunEagerly) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  LaunchGraphCache cache;
  Counter c;
  for (int i = 0; i < 3; ++i)
    addThroughCache(cache, c, 5, nullptr, /*eligible=*/false);
  {
    ScopedEnv off("HECTOR_LAUNCH_GRAPHS", "0");
    for (int i = 0; i < 3; ++i)
      addThroughCache(cache, c, 5, nullptr);
  }
  EXPECT_EQ(c.read(), 6 * 6);
  expectStats(cache, /*eager=*/6, 0, 0, 0);
}

TEST(LaunchGraphCache, CallsOnACapturingStreamGoIntoThatCapture) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  Stream owned;
  const cudaStream_t stream = owned.s;
  LaunchGraphCache cache;
  Counter c;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  for (int i = 0; i < 3; ++i)
    addThroughCache(cache, c, 2, stream);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  EXPECT_EQ(c.read(), 0); // captured, not run
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  EXPECT_EQ(c.read(), 9);
  expectStats(cache, /*eager=*/3, 0, 0, 0);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST(LaunchGraphCache, AFailedCaptureLeavesItsKeyEager) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  LaunchGraphCache cache;
  Counter c;
  // A stream synchronisation is not allowed in a capture: the second call's
  // capture fails, and that call and the later ones run eagerly.
  auto body = [&](cudaStream_t s) {
    addKernel<<<1, 1, 0, s>>>(c.ptr, 3);
    if (cudaStreamSynchronize(s) != cudaSuccess)
      throw std::runtime_error("cudaStreamSynchronize");
  };
  for (int i = 0; i < 4; ++i)
    cache.run(keyOf(c.ptr, 3), true, nullptr, body);
  EXPECT_EQ(c.read(), 12);
  expectStats(cache, /*eager=*/4, 0, 0, /*failed=*/1);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(LaunchGraphCache, ABodyThatThrowsIsNotRemembered) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  LaunchGraphCache cache;
  Counter c;
  auto bad = [&](cudaStream_t) { throw std::invalid_argument("bad sizes"); };
  for (int i = 0; i < 3; ++i)
    EXPECT_THROW(cache.run(keyOf(c.ptr, 1), true, nullptr, bad),
                 std::invalid_argument);
  // The same key, now with a good body: eager first, as for a new key.
  addThroughCache(cache, c, 1, nullptr);
  EXPECT_EQ(c.read(), 2);
  expectStats(cache, /*eager=*/1, 0, 0, 0);
}

} // namespace
