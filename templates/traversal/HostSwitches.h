// HostSwitches.h: the environment switches that the generated host code of
// both targets reads (kernels.cu through TraversalCuda.h, kernels_cpu.cpp
// directly). Host only; each is read once per process.
#pragma once

#include <cstdint>
#include <cstdlib>

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
