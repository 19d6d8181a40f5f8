// HostSwitches.h: the environment switches that the generated host code of
// both targets reads (kernels.cu through TraversalCuda.h, kernels_cpu.cpp
// directly), and the helpers that every HECTOR_* switch is read with (the
// GEMM templates', the launch graphs', the runtime's). Host only.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace hector::trav {

/// A non-negative integer from the environment variable `name`, else
/// `fallback`.
inline int64_t envCount(const char *name, int64_t fallback) {
  if (const char *text = std::getenv(name)) {
    char *end = nullptr;
    const long long v = std::strtoll(text, &end, 10);
    if (end != text && *end == '\0' && v >= 0)
      return v;
  }
  return fallback;
}

/// Whether the environment variable `name` is set to exactly `value`. An
/// on/off switch compares with its one off value (HECTOR_GEMM_MMA=0), so
/// that any other value, or none, keeps the default.
inline bool envIs(const char *name, const char *value) {
  const char *text = std::getenv(name);
  return text && std::strcmp(text, value) == 0;
}

/// An on/off switch named by an environment variable, read once per
/// process, that a test may override for the rest of it, so that one
/// build can run both ways. It is on unless the variable is exactly its
/// off value (envIs). A namespace-scope switch is constant-initialised:
/// no static-initialisation order to mind.
class OverridableSwitch {
public:
  constexpr OverridableSwitch(const char *name, const char *offValue)
      : name_(name), offValue_(offValue) {}

  bool on() const {
    const int o = override_.load();
    return o < 0 ? byEnvironment() : o != 0;
  }
  /// Overrides the switch; returns whether it was on before, so a test
  /// can put it back.
  bool set(bool on) {
    const bool before = this->on();
    override_.store(on ? 1 : 0);
    return before;
  }
  /// What the environment says, without an override (read once; threads
  /// that race to read it first read the same value).
  bool byEnvironment() const {
    int e = environment_.load(std::memory_order_relaxed);
    if (e < 0) {
      e = envIs(name_, offValue_) ? 0 : 1;
      environment_.store(e, std::memory_order_relaxed);
    }
    return e != 0;
  }

private:
  const char *name_;
  const char *offValue_;
  std::atomic<int> override_{-1};            ///< -1: the environment decides
  mutable std::atomic<int> environment_{-1}; ///< -1: not read yet
};

/// Whether the generated host functions may run their traversal kernels'
/// kFixedHypers instantiation, which compiles the model's declared int
/// hypers in as constants, when a run's hypers are those.
/// HECTOR_FIXED_HYPERS=0 keeps the general instantiation: A/B runs on one
/// build (read once per process).
inline bool fixedHypersEnabled() {
  static const bool enabled = envCount("HECTOR_FIXED_HYPERS", 1) != 0;
  return enabled;
}

} // namespace hector::trav
