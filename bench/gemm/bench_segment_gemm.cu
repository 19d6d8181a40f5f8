// bench_segment_gemm: the segment-MM GEMM template alone against cuBLAS
// (cublasSgemm, fp32, no TF32) on one segment: Y[M,N] = X[M,64] W[64,N]
// (linear mode) and dW[64,N] = X^T B (outer mode, atomic row split).
// Each template call is also timed with rowIds = 0..M-1 (the cost of the
// row-id lookup alone) and rowIds = a random permutation (rows visited in a
// random order, as edges sorted by etype are); both give the same Y and dW.
// The linear call is timed again with W transposed ([N, K], nn.Linear's
// layout, against cublasSgemm with op T). Then the same linear and outer
// calls in double (SegmentGemmArgsT<double>,
// the general kernels) against cublasDgemm. Last, TF32 with a bias (RGCN's
// root GEMM, `x root + bias`): the template's fused epilogue against
// cublasSgemm in TF32 math without a bias and cublasLt in TF32 with its
// bias epilogue, to tell whether the root GEMM's 40% of DRAM bandwidth
// (docs/perf-notes.md sections 57 and 69) is the template's or the shape's.
// CUDA events, 5 warm-up runs, median of 20. Usage: bench_segment_gemm [M] [N]
// [root] (default 2^20 rows, N = 64; `root`: the TF32 + bias case alone);
// HECTOR_GEMM_MMA=0 times the CUDA-core kernels instead of the tensor-core
// ones, HECTOR_GEMM_DENSE=0 the tiled kernel instead of the dense-rows one.
#include "bench/gemm/BenchTiming.h"
#include "templates/gemm/SegmentGemmCuda.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

using hector::templates::SegmentGemmArgs;
using hector::templates::SegmentGemmArgsT;
using hector::templates::launchSegmentGemm;

#define CHECK_CUBLAS(x)                                                        \
  do {                                                                         \
    cublasStatus_t s_ = (x);                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                         \
      std::fprintf(stderr, "%s:%d: %s: cublas status %d\n", __FILE__,         \
                   __LINE__, #x, int(s_));                                     \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// Largest |a - b| over the largest |b|, of two device arrays of n T.
template <typename T>
static double maxRelDiff(const T *dA, const T *dB, size_t n) {
  std::vector<T> a(n), b(n);
  CHECK_CUDA(cudaMemcpy(a.data(), dA, n * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(b.data(), dB, n * sizeof(T), cudaMemcpyDeviceToHost));
  double scale = 1e-30, worst = 0;
  for (size_t i = 0; i < n; ++i)
    scale = std::max(scale, double(std::fabs(b[i])));
  for (size_t i = 0; i < n; ++i)
    worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])) / scale);
  return worst;
}

// The linear and outer calls of main() in double against cublasDgemm.
static void benchDouble(int M, int K, int N, cublasHandle_t handle) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<double> hX(size_t(M) * K), hW(K * N), hB(size_t(M) * N);
  for (double &v : hX) v = d(rng);
  for (double &v : hW) v = d(rng);
  for (double &v : hB) v = d(rng);
  double *X, *W, *B, *Y1, *Y2, *dW1, *dW2;
  CHECK_CUDA(cudaMalloc(&X, hX.size() * 8));
  CHECK_CUDA(cudaMalloc(&W, hW.size() * 8));
  CHECK_CUDA(cudaMalloc(&B, hB.size() * 8));
  CHECK_CUDA(cudaMalloc(&Y1, size_t(M) * N * 8));
  CHECK_CUDA(cudaMalloc(&Y2, size_t(M) * N * 8));
  CHECK_CUDA(cudaMalloc(&dW1, K * N * 8));
  CHECK_CUDA(cudaMalloc(&dW2, K * N * 8));
  CHECK_CUDA(cudaMemcpy(X, hX.data(), hX.size() * 8, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(W, hW.data(), hW.size() * 8, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(B, hB.data(), hB.size() * 8, cudaMemcpyHostToDevice));
  const double one = 1.0, zero = 0.0;

  SegmentGemmArgsT<double> lin;
  lin.M = M; lin.K = K; lin.N = N;
  lin.X = X; lin.W = W; lin.Y = Y1;
  const float tLin =
      timeMs([&] { CHECK_CUDA(launchSegmentGemm(lin, nullptr)); });
  const float tLinBlas = timeMs([&] {
    CHECK_CUBLAS(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one,
                             W, N, X, K, &zero, Y2, N));
  });
  CHECK_CUDA(cudaDeviceSynchronize());
  const double linDiff = maxRelDiff(Y1, Y2, size_t(M) * N);

  SegmentGemmArgsT<double> outer;
  outer.mode = SegmentGemmArgs::Mode::Outer;
  outer.M = M; outer.K = K; outer.N = N;
  outer.X = X; outer.B = B; outer.dW = dW1;
  outer.accumulate = outer.atomic = true;
  const float tOuter = timeMs([&] {
    CHECK_CUDA(cudaMemsetAsync(dW1, 0, K * N * 8));
    CHECK_CUDA(launchSegmentGemm(outer, nullptr));
  });
  const float tOuterBlas = timeMs([&] {
    CHECK_CUBLAS(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, N, K, M, &one,
                             B, N, X, K, &zero, dW2, N));
  });
  CHECK_CUDA(cudaDeviceSynchronize());
  const double outerDiff = maxRelDiff(dW1, dW2, K * N);

  const double linBytes = double(M) * (K + N) * 8;
  std::printf("double linear  template %.4f ms (%.0f GB/s)  cublasDgemm %.4f ms"
              "  ratio %.2f  max rel diff %.2e\n",
              tLin, linBytes / tLin / 1e6, tLinBlas, tLin / tLinBlas, linDiff);
  std::printf("double outer   template %.4f ms  cublasDgemm %.4f ms  ratio %.2f"
              "  max rel diff %.2e\n",
              tOuter, tOuterBlas, tOuter / tOuterBlas, outerDiff);
  for (double *p : {X, W, B, Y1, Y2, dW1, dW2})
    CHECK_CUDA(cudaFree(p));
}

// Y = X W + bias in TF32 (X [M, K], W [K, N], bias [N], row-major): the
// template's fused bias against cublasSgemm's TF32 math (no bias) and
// cublasLt's TF32 compute with its bias epilogue, into Y1 and Y2.
static void benchTf32Bias(int M, int K, int N, const float *X, const float *W,
                          float *Y1, float *Y2, cublasHandle_t handle) {
  std::vector<float> hBias(N);
  for (int n = 0; n < N; ++n)
    hBias[n] = 0.01f * float(n % 17) - 0.05f;
  float *bias = nullptr;
  CHECK_CUDA(cudaMalloc(&bias, size_t(N) * 4));
  CHECK_CUDA(
      cudaMemcpy(bias, hBias.data(), size_t(N) * 4, cudaMemcpyHostToDevice));
  SegmentGemmArgs lin;
  lin.M = M;
  lin.K = K;
  lin.N = N;
  lin.X = X;
  lin.W = W;
  lin.Y = Y1;
  lin.tf32 = true;
  lin.bias = bias;
  const float tTemplate =
      timeMs([&] { CHECK_CUDA(launchSegmentGemm(lin, nullptr)); });

  const float one = 1.f, zero = 0.f;
  CHECK_CUBLAS(cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH));
  const float tBlas = timeMs([&] {
    CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, W,
                             N, X, K, &zero, Y2, N));
  });
  CHECK_CUBLAS(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));

  // Column-major Y^T [N, M] = W^T [N, K] X^T [K, M] + bias (a bias per row
  // of Y^T, which is what CUBLASLT_EPILOGUE_BIAS adds).
  cublasLtHandle_t lt;
  CHECK_CUBLAS(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op;
  CHECK_CUBLAS(
      cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F));
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                              &epilogue, sizeof(epilogue)));
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(
      op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  cublasLtMatrixLayout_t wl, xl, yl;
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&wl, CUDA_R_32F, N, K, N));
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&xl, CUDA_R_32F, K, M, K));
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&yl, CUDA_R_32F, N, M, N));
  cublasLtMatmulPreference_t pref;
  CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  size_t workspaceBytes = size_t(32) << 20;
  void *workspace = nullptr;
  CHECK_CUDA(cudaMalloc(&workspace, workspaceBytes));
  CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspaceBytes,
      sizeof(workspaceBytes)));
  cublasLtMatmulHeuristicResult_t best = {};
  int found = 0;
  CHECK_CUBLAS(cublasLtMatmulAlgoGetHeuristic(lt, op, wl, xl, yl, yl, pref, 1,
                                              &best, &found));
  float tLt = -1.f;
  double ltDiff = -1.0;
  if (found > 0) {
    tLt = timeMs([&] {
      CHECK_CUBLAS(cublasLtMatmul(lt, op, &one, W, wl, X, xl, &zero, Y2, yl, Y2,
                                  yl, &best.algo, workspace, workspaceBytes,
                                  nullptr));
    });
    CHECK_CUDA(cudaDeviceSynchronize());
    ltDiff = maxRelDiff(Y1, Y2, size_t(M) * N);
  }
  const double bytes = double(M) * (K + N) * 4;
  std::printf("tf32 + bias  template %.4f ms (%.0f GB/s)  cublasLt %.4f ms "
              "(%.0f GB/s)  max rel diff %.2e  cublas tf32 without bias "
              "%.4f ms (%.0f GB/s)\n",
              tTemplate, bytes / tTemplate / 1e6, tLt,
              tLt > 0 ? bytes / tLt / 1e6 : 0.0, ltDiff, tBlas,
              bytes / tBlas / 1e6);
  CHECK_CUBLAS(cublasLtMatmulPreferenceDestroy(pref));
  for (cublasLtMatrixLayout_t l : {wl, xl, yl})
    CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(l));
  CHECK_CUBLAS(cublasLtMatmulDescDestroy(op));
  CHECK_CUBLAS(cublasLtDestroy(lt));
  CHECK_CUDA(cudaFree(workspace));
  CHECK_CUDA(cudaFree(bias));
}

int main(int argc, char **argv) {
  const int M = argc > 1 ? std::atoi(argv[1]) : 1 << 20;
  const int K = 64, N = argc > 2 ? std::atoi(argv[2]) : 64;
  // `root`: the TF32 + bias case alone, without the others' inputs (their
  // host-side random fill and the double calls took most of a run's 15 s
  // at am's rows, session 37 call a).
  const bool rootOnly = argc > 3 && std::strcmp(argv[3], "root") == 0;
  if (M < 1 || N < 1 || (argc > 3 && !rootOnly) || argc > 4) {
    std::fprintf(stderr,
                 "usage: bench_segment_gemm [M >= 1] [N >= 1] [root]\n");
    return 2;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, M=%d K=%d N=%d\n", prop.name, M, K, N);

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> hX(size_t(M) * K), hW(K * N),
      hB(rootOnly ? 0 : size_t(M) * N);
  for (float &v : hX) v = d(rng);
  for (float &v : hW) v = d(rng);
  for (float &v : hB) v = d(rng);
  float *X, *W, *Y1, *Y2;
  CHECK_CUDA(cudaMalloc(&X, hX.size() * 4));
  CHECK_CUDA(cudaMalloc(&W, hW.size() * 4));
  CHECK_CUDA(cudaMalloc(&Y1, size_t(M) * N * 4));
  CHECK_CUDA(cudaMalloc(&Y2, size_t(M) * N * 4));
  CHECK_CUDA(cudaMemcpy(X, hX.data(), hX.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(W, hW.data(), hW.size() * 4, cudaMemcpyHostToDevice));
  if (rootOnly) {
    cublasHandle_t handle;
    CHECK_CUBLAS(cublasCreate(&handle));
    benchTf32Bias(M, K, N, X, W, Y1, Y2, handle);
    CHECK_CUBLAS(cublasDestroy(handle));
    for (float *p : {X, W, Y1, Y2})
      CHECK_CUDA(cudaFree(p));
    return 0;
  }

  float *B, *dW1, *dW2;
  CHECK_CUDA(cudaMalloc(&B, hB.size() * 4));
  CHECK_CUDA(cudaMalloc(&dW1, K * N * 4));
  CHECK_CUDA(cudaMalloc(&dW2, K * N * 4));
  CHECK_CUDA(cudaMemcpy(B, hB.data(), hB.size() * 4, cudaMemcpyHostToDevice));

  // Row ids: the identity, and a random permutation.
  std::vector<int64_t> hIota(M), hPerm(M);
  std::iota(hIota.begin(), hIota.end(), 0);
  hPerm = hIota;
  std::shuffle(hPerm.begin(), hPerm.end(), rng);
  int64_t *iotaIds, *permIds;
  CHECK_CUDA(cudaMalloc(&iotaIds, size_t(M) * 8));
  CHECK_CUDA(cudaMalloc(&permIds, size_t(M) * 8));
  CHECK_CUDA(cudaMemcpy(iotaIds, hIota.data(), size_t(M) * 8,
                        cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(permIds, hPerm.data(), size_t(M) * 8,
                        cudaMemcpyHostToDevice));

  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH)); // no TF32
  const float one = 1.f, zero = 0.f;

  // Linear: Y = X W.
  SegmentGemmArgs lin;
  lin.M = M; lin.K = K; lin.N = N;
  lin.X = X; lin.W = W; lin.Y = Y1;
  const float tLin = timeMs([&] { CHECK_CUDA(launchSegmentGemm(lin, nullptr)); });
  // Row-major Y = X W is column-major Y^T = W^T X^T.
  const float tLinBlas = timeMs([&] {
    CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one,
                             W, N, X, K, &zero, Y2, N));
  });
  CHECK_CUDA(cudaDeviceSynchronize());
  const double linDiff = maxRelDiff(Y1, Y2, size_t(M) * N);
  // With row ids (into Y1 again; checked against cuBLAS's Y2).
  SegmentGemmArgs linIds = lin;
  linIds.rowIds = iotaIds;
  CHECK_CUDA(cudaMemset(Y1, 0, size_t(M) * N * 4));
  const float tLinIota =
      timeMs([&] { CHECK_CUDA(launchSegmentGemm(linIds, nullptr)); });
  const double linIotaDiff = maxRelDiff(Y1, Y2, size_t(M) * N);
  linIds.rowIds = permIds;
  CHECK_CUDA(cudaMemset(Y1, 0, size_t(M) * N * 4));
  const float tLinPerm =
      timeMs([&] { CHECK_CUDA(launchSegmentGemm(linIds, nullptr)); });
  const double linPermDiff = maxRelDiff(Y1, Y2, size_t(M) * N);
  // TF32 allowed (SegmentGemmArgs::tf32): one tensor-core product a term.
  SegmentGemmArgs linTf32 = lin;
  linTf32.tf32 = true;
  CHECK_CUDA(cudaMemset(Y1, 0, size_t(M) * N * 4));
  const float tLinTf32 =
      timeMs([&] { CHECK_CUDA(launchSegmentGemm(linTf32, nullptr)); });
  const double linTf32Diff = maxRelDiff(Y1, Y2, size_t(M) * N);

  // Transposed weight ([N, K], nn.Linear's layout, as HGT's projections
  // take it): W read as an [N, K] matrix. Row-major Y = X W^T is
  // column-major Y^T = W X^T with W column-major [K, N] transposed.
  SegmentGemmArgs linT = lin;
  linT.transposeW = true;
  CHECK_CUDA(cudaMemset(Y1, 0, size_t(M) * N * 4));
  const float tLinT =
      timeMs([&] { CHECK_CUDA(launchSegmentGemm(linT, nullptr)); });
  const float tLinTBlas = timeMs([&] {
    CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one,
                             W, K, X, K, &zero, Y2, N));
  });
  CHECK_CUDA(cudaDeviceSynchronize());
  const double linTDiff = maxRelDiff(Y1, Y2, size_t(M) * N);

  // Outer: dW = X^T B (zeroed, then atomically accumulated).
  SegmentGemmArgs outer;
  outer.mode = SegmentGemmArgs::Mode::Outer;
  outer.M = M; outer.K = K; outer.N = N;
  outer.X = X; outer.B = B; outer.dW = dW1;
  outer.accumulate = outer.atomic = true;
  const float tOuter = timeMs([&] {
    CHECK_CUDA(cudaMemsetAsync(dW1, 0, K * N * 4));
    CHECK_CUDA(launchSegmentGemm(outer, nullptr));
  });
  // Row-major dW[K,N] = X^T B is column-major dW^T = B^T X.
  const float tOuterBlas = timeMs([&] {
    CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, N, K, M, &one,
                             B, N, X, K, &zero, dW2, N));
  });
  CHECK_CUDA(cudaDeviceSynchronize());
  const double outerDiff = maxRelDiff(dW1, dW2, K * N);
  SegmentGemmArgs outerIds = outer;
  outerIds.rowIds = iotaIds;
  const float tOuterIota = timeMs([&] {
    CHECK_CUDA(cudaMemsetAsync(dW1, 0, K * N * 4));
    CHECK_CUDA(launchSegmentGemm(outerIds, nullptr));
  });
  const double outerIotaDiff = maxRelDiff(dW1, dW2, K * N);
  outerIds.rowIds = permIds;
  const float tOuterPerm = timeMs([&] {
    CHECK_CUDA(cudaMemsetAsync(dW1, 0, K * N * 4));
    CHECK_CUDA(launchSegmentGemm(outerIds, nullptr));
  });
  const double outerPermDiff = maxRelDiff(dW1, dW2, K * N);

  const double linBytes = double(M) * (K + N) * 4;
  std::printf("linear  template %.4f ms (%.0f GB/s)  cublas %.4f ms  "
              "ratio template/cublas %.2f  max rel diff %.2e\n",
              tLin, linBytes / tLin / 1e6, tLinBlas, tLin / tLinBlas, linDiff);
  std::printf("linear  tf32 %.4f ms (%.0f GB/s)  max rel diff %.2e\n",
              tLinTf32, linBytes / tLinTf32 / 1e6, linTf32Diff);
  std::printf("linear  transposed W %.4f ms (%.0f GB/s)  cublas %.4f ms  "
              "ratio template/cublas %.2f  max rel diff %.2e\n",
              tLinT, linBytes / tLinT / 1e6, tLinTBlas, tLinT / tLinTBlas,
              linTDiff);
  std::printf("outer   template %.4f ms  cublas %.4f ms  "
              "ratio template/cublas %.2f  max rel diff %.2e\n",
              tOuter, tOuterBlas, tOuter / tOuterBlas, outerDiff);
  std::printf("linear  rowIds=iota %.4f ms  rowIds=perm %.4f ms  "
              "max rel diff %.2e %.2e\n",
              tLinIota, tLinPerm, linIotaDiff, linPermDiff);
  std::printf("outer   rowIds=iota %.4f ms  rowIds=perm %.4f ms  "
              "max rel diff %.2e %.2e\n",
              tOuterIota, tOuterPerm, outerIotaDiff, outerPermDiff);

  benchTf32Bias(M, K, N, X, W, Y1, Y2, handle);
  for (float *p : {X, W, B, Y1, Y2, dW1, dW2})
    CHECK_CUDA(cudaFree(p));
  CHECK_CUDA(cudaFree(iotaIds));
  CHECK_CUDA(cudaFree(permIds));
  benchDouble(M, K, N, handle);
  CHECK_CUBLAS(cublasDestroy(handle));
  return 0;
}
