// DeviceQueries.h: the CUDA runtime queries that the launch helpers of
// both templates (TraversalCuda.h, SegmentGemm.cu) make before a launch,
// each answered once per process and remembered. Their answers do not
// change while a process runs, and asked on every launch they cost a
// small graph's training step about 40 host calls of 0.5 to 2.5 us each
// (docs/perf-notes.md section 25).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

namespace hector::templates {
namespace detail {

/// Answers of a query by key, safe to share between threads. A failed
/// query is not remembered (the next call asks again).
template <typename Key, typename Value> class QueryMemo {
public:
  template <typename Query>
  cudaError_t get(const Key &key, Value *out, Query query) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = answers_.find(key);
      if (it != answers_.end()) {
        *out = it->second;
        return cudaSuccess;
      }
    }
    Value v{};
    if (const cudaError_t err = query(&v))
      return err;
    std::lock_guard<std::mutex> lock(mutex_);
    answers_.emplace(key, v);
    *out = v;
    return cudaSuccess;
  }

private:
  std::mutex mutex_;
  std::map<Key, Value> answers_;
};

} // namespace detail

/// cudaDeviceGetAttribute(`attr`) of the current device.
inline cudaError_t deviceAttribute(cudaDeviceAttr attr, int *value) {
  static detail::QueryMemo<std::pair<int, int>, int> memo;
  int device = 0;
  if (const cudaError_t err = cudaGetDevice(&device))
    return err;
  return memo.get({device, static_cast<int>(attr)}, value, [&](int *v) {
    return cudaDeviceGetAttribute(v, attr, device);
  });
}

/// cudaOccupancyMaxActiveBlocksPerMultiprocessor on the current device for
/// `kernel` in blocks of `threads` threads with `sharedBytes` of dynamic
/// shared memory. Above 48 KiB, call allowDynamicShared first (as for
/// the uncached query).
inline cudaError_t blocksPerMultiprocessor(const void *kernel, int threads,
                                           size_t sharedBytes, int *perSm) {
  static detail::QueryMemo<std::tuple<int, const void *, int, size_t>, int>
      memo;
  int device = 0;
  if (const cudaError_t err = cudaGetDevice(&device))
    return err;
  return memo.get({device, kernel, threads, sharedBytes}, perSm, [&](int *v) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(v, kernel, threads,
                                                         sharedBytes);
  });
}

/// The multiprocessors of the current device times
/// blocksPerMultiprocessor: the blocks resident at once (0 when not even
/// one fits).
inline cudaError_t residentBlocksOnDevice(const void *kernel, int threads,
                                          size_t sharedBytes,
                                          long long *blocks) {
  int sms = 0, perSm = 0;
  if (const cudaError_t err =
          deviceAttribute(cudaDevAttrMultiProcessorCount, &sms))
    return err;
  if (const cudaError_t err =
          blocksPerMultiprocessor(kernel, threads, sharedBytes, &perSm))
    return err;
  *blocks = static_cast<long long>(sms) * perSm;
  return cudaSuccess;
}

/// Lets `kernel` take `bytes` of dynamic shared memory on the current
/// device (cudaFuncAttributeMaxDynamicSharedMemorySize), calling the
/// runtime only when a launch needs more than it allowed before.
inline cudaError_t allowDynamicShared(const void *kernel, size_t bytes) {
  static std::mutex mutex;
  static std::map<std::pair<int, const void *>, size_t> allowed;
  int device = 0;
  if (const cudaError_t err = cudaGetDevice(&device))
    return err;
  std::lock_guard<std::mutex> lock(mutex);
  size_t &limit = allowed[{device, kernel}];
  if (bytes <= limit)
    return cudaSuccess;
  if (const cudaError_t err = cudaFuncSetAttribute(
          kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
          static_cast<int>(bytes)))
    return err;
  limit = bytes;
  return cudaSuccess;
}

} // namespace hector::templates
