// LaunchGraphCache.h: a generated program's launches replayed from a CUDA
// graph when a call would make exactly the launches of an earlier call.
//
// Why: on small graphs a training step waits on the host, and most of a
// generated op's host time is its launches: RGAT-PyG's backward makes ten,
// its forward five and six stream-ordered allocation calls, at 3 to 5 us
// each on an H100 host (docs/perf-notes.md section 85). A CUDA graph
// launch replaces them with one call.
//
// When: a program's launches are a function of its arguments' bytes: the
// graph's counts and array addresses, the buffers' addresses, the hypers,
// the stream, the device and the HECTOR_* switches that the launch helpers
// read (a LaunchKey holds them all). In a training loop PyTorch's caching
// allocator hands a step the addresses the step before had, so the key
// repeats. A key seen once runs eagerly and is remembered; the second call
// with it captures the launches into a graph, and every later one replays
// it. A key that never repeats costs only its building and one lookup.
//
// Not used (the launches run eagerly, as before):
//   - when the caller says the program is not eligible (the generated code
//     passes large graphs, whose heavy and warp launches run side by side on
//     two streams: there the launches are a small part of the time);
//   - when `stream` is being captured already (hector/replay.py, a caller's
//     own graph): the launches then go into that capture;
//   - with HECTOR_LAUNCH_GRAPHS=0 in the environment (A/B runs, debugging);
//   - for a key whose capture failed (an unsupported call): eager for good.
#pragma once

#include "templates/CudaHost.h"
#include "templates/traversal/HostSwitches.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <list>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

extern char **environ;

namespace hector::templates {

/// The bytes that decide a program's launches: its arguments, added part by
/// part. Two keys with equal bytes make equal launches.
class LaunchKey {
public:
  /// Appends `v`'s bytes. A part must have no padding bytes (their values
  /// are arbitrary, so equal values could give unequal keys); floating-point
  /// parts are allowed, as equal bytes are an equal value.
  template <typename T> void add(const T &v) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "a launch key part is copied byte for byte");
    static_assert(std::has_unique_object_representations_v<T> ||
                      std::is_floating_point_v<T>,
                  "a launch key part must have no padding bytes");
    bytes_.append(reinterpret_cast<const char *>(&v), sizeof(T));
  }

  /// Appends every HECTOR_* environment variable (name and value): the
  /// launch helpers read some of them on each launch (HostSwitches.h,
  /// TraversalCuda.h, SegmentGemmMma.cu), and tests change them between
  /// calls.
  void addEnvironment() {
    for (char **e = environ; e && *e; ++e)
      if (std::strncmp(*e, "HECTOR_", 7) == 0) {
        bytes_.append(*e);
        bytes_.push_back('\0');
      }
  }

  const std::string &bytes() const { return bytes_; }

private:
  std::string bytes_;
};

/// What a LaunchGraphCache did with its calls, for tests and diagnostics.
struct LaunchGraphStats {
  int64_t eager = 0;    ///< calls that launched their kernels one by one
  int64_t captured = 0; ///< graphs captured (and replayed once)
  int64_t replayed = 0; ///< calls replayed from a graph, captures included
  int64_t failed = 0;   ///< captures that failed (the key stays eager)
};

/// Whether launch graphs are on: HECTOR_LAUNCH_GRAPHS is unset or not "0"
/// (read on every call, as the other switches are).
inline bool launchGraphsEnabled() {
  return !trav::envIs("HECTOR_LAUNCH_GRAPHS", "0");
}

/// The launch graphs of one generated program (one per host function and
/// scalar type): the few keys it met last, each with its graph once it has
/// one. Safe to share between threads.
class LaunchGraphCache {
public:
  /// Keys remembered; the least recently used one is dropped beyond this
  /// (with its graph). A training loop needs one per op and direction.
  static constexpr size_t kKeys = 4;

  LaunchGraphCache() = default;
  LaunchGraphCache(const LaunchGraphCache &) = delete;
  LaunchGraphCache &operator=(const LaunchGraphCache &) = delete;

  /// Runs `body(s)`, which makes the program's launches on the stream `s` it
  /// is given, for a call on `stream` whose launches `key` decides: eagerly
  /// on `stream`, or as a replay of the graph of an earlier call with the
  /// same key (the file comment says when). `eligible` false: eagerly.
  /// Errors of an eager body propagate; the key is then not remembered.
  template <typename Body>
  void run(LaunchKey key, bool eligible, cudaStream_t stream, Body &&body) {
    if (!eligible || !launchGraphsEnabled() || cuda_host::capturing(stream)) {
      runEagerly(body, stream);
      return;
    }
    int device = 0;
    cuda_host::check(cudaGetDevice(&device), "cudaGetDevice");
    key.add(device);
    key.add(stream);
    key.addEnvironment();

    std::unique_lock<std::mutex> lock(mutex_);
    auto it = find(key.bytes());
    if (it == entries_.end() || it->failed) {
      lock.unlock();
      runEagerly(body, stream);
      lock.lock();
      if (find(key.bytes()) == entries_.end())
        remember(key.bytes());
      return;
    }
    entries_.splice(entries_.begin(), entries_, it); // most recent first
    if (!it->exec) {
      it->exec = capture(body);
      if (!it->exec) {
        it->failed = true;
        ++failed_;
        lock.unlock();
        runEagerly(body, stream);
        return;
      }
      ++captured_;
    }
    cuda_host::check(cudaGraphLaunch(it->exec, stream), "cudaGraphLaunch");
    ++replayed_;
  }

  LaunchGraphStats stats() const {
    LaunchGraphStats s;
    s.eager = eager_;
    s.captured = captured_;
    s.replayed = replayed_;
    s.failed = failed_;
    return s;
  }

  ~LaunchGraphCache() {
    for (Entry &e : entries_)
      if (e.exec)
        cudaGraphExecDestroy(e.exec);
  }

private:
  struct Entry {
    std::string key;
    cudaGraphExec_t exec = nullptr;
    bool failed = false;
  };

  template <typename Body> void runEagerly(Body &body, cudaStream_t stream) {
    body(stream);
    ++eager_;
  }

  std::list<Entry>::iterator find(const std::string &key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->key == key)
        return it;
    return entries_.end();
  }

  void remember(const std::string &key) {
    entries_.push_front(Entry{key, nullptr, false});
    while (entries_.size() > kKeys) {
      // A graph still running is freed when it finishes
      // (cudaGraphExecDestroy).
      if (entries_.back().exec)
        cudaGraphExecDestroy(entries_.back().exec);
      entries_.pop_back();
    }
  }

  /// The body's launches captured on a stream of their own (a capture must
  /// not be on the legacy default stream, which `stream` may be) and
  /// instantiated; nullptr when any step fails, with the error cleared.
  /// Thread-local capture mode: other threads may allocate meanwhile.
  template <typename Body> static cudaGraphExec_t capture(Body &body) {
    cudaStream_t side = nullptr;
    if (cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) !=
        cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    bool ok = cudaStreamBeginCapture(side, cudaStreamCaptureModeThreadLocal) ==
              cudaSuccess;
    if (ok) {
      try {
        body(side);
      } catch (...) {
        ok = false;
      }
      // Ended even after a failure, so that the stream leaves capture mode.
      ok = cudaStreamEndCapture(side, &graph) == cudaSuccess && ok && graph;
      if (ok)
        ok = cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
      if (graph)
        cudaGraphDestroy(graph);
    }
    cudaStreamDestroy(side);
    if (!ok) {
      if (exec)
        cudaGraphExecDestroy(exec);
      cudaGetLastError(); // the failed capture's error, not the caller's
      return nullptr;
    }
    return exec;
  }

  std::mutex mutex_;
  std::list<Entry> entries_; ///< most recently used first
  std::atomic<int64_t> eager_{0}, captured_{0}, replayed_{0}, failed_{0};
};

} // namespace hector::templates
