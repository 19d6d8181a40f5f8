// Activations.h: the elementwise activations that more than one template
// applies, written once so that a GEMM that applies one as it reads its
// input (SegmentGemmArgs::inputOp) or in its epilogue (mixGate) computes
// the same bits as a traversal statement (hector::trav::gelu, sigmoid):
// the lowering moves an op between them without changing results.
#pragma once

#include <cmath>
#include <type_traits>

#if defined(__CUDACC__)
#define HECTOR_ACTIVATION_HD __host__ __device__ __forceinline__
#else
#define HECTOR_ACTIVATION_HD inline
#endif

namespace hector::activations {

/// Exact (erf) GELU, torch.nn.functional.gelu's default:
/// x Phi(x) = x (1 + erf(x / sqrt 2)) / 2.
template <typename T> HECTOR_ACTIVATION_HD T gelu(T x) {
  static_assert(std::is_floating_point_v<T>, "float or double");
  constexpr T kRsqrt2 = T(0.70710678118654752440);
  if constexpr (std::is_same_v<T, float>)
    return 0.5f * x * (1.f + ::erff(x * kRsqrt2));
  else
    return T(0.5) * x * (T(1) + ::erf(x * kRsqrt2));
}

/// The logistic sigmoid 1 / (1 + e^-x).
template <typename T> HECTOR_ACTIVATION_HD T sigmoid(T x) {
  static_assert(std::is_floating_point_v<T>, "float or double");
  if constexpr (std::is_same_v<T, float>)
    return 1.f / (1.f + ::expf(-x));
  else
    return T(1) / (T(1) + ::exp(-x));
}

} // namespace hector::activations
