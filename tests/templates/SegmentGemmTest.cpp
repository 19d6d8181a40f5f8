// The segment-MM GEMM template against a naive reference loop, over a table
// of cases covering every SegmentGemmArgs field. CPU always; CUDA when built
// with it and a GPU is present (skipped otherwise).
#include "templates/gemm/SegmentGemm.h"
#ifdef HECTOR_TEMPLATES_CUDA
#include "templates/gemm/SegmentGemmCuda.h"
#include <cuda_runtime.h>
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace hector::templates {
namespace {

using Mode = SegmentGemmArgs::Mode;

enum class Seg { None, Ptr, RowType };
enum class Scatter { None, Permute, Collide };

/// One row of the test table.
struct Case {
  std::string name;
  Mode mode = Mode::Linear;
  int64_t M, K, N, H = 1, S = 1;
  Seg seg = Seg::None;
  bool gather = false;
  Scatter scatter = Scatter::None;
  bool accumulate = false;
  bool transposeW = false;
  EpilogueOp epilogue = EpilogueOp::None;
  bool scalePerHead = false;
  bool scaleGather = false;
  bool gatherB = false;
  bool emptySegments = false; ///< Ptr: some segments get no rows
};

/// gtest prints a case by its name (not as bytes).
void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

std::vector<Case> cases() {
  std::vector<Case> t;
  auto add = [&](Case c) { t.push_back(std::move(c)); };
  add({"plain", Mode::Linear, 37, 5, 7});
  add({"wide", Mode::Linear, 130, 64, 64});
  add({"emptyM", Mode::Linear, 0, 8, 8});
  add({"emptyK", Mode::Linear, 9, 0, 5});
  add({"gather", Mode::Linear, 37, 5, 7, 1, 1, Seg::None, true});
  {
    Case c{"scatterPermute", Mode::Linear, 37, 5, 7};
    c.scatter = Scatter::Permute;
    add(c);
  }
  {
    Case c{"scatterCollideAtomic", Mode::Linear, 300, 9, 70};
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    add(c);
  }
  {
    Case c{"accumulate", Mode::Linear, 37, 5, 7};
    c.accumulate = true;
    add(c);
  }
  {
    Case c{"transposed", Mode::Linear, 100, 33, 65};
    c.transposeW = true;
    add(c);
  }
  {
    Case c{"heads2", Mode::Linear, 37, 5, 7, 2};
    c.transposeW = true;
    c.gather = true;
    add(c);
  }
  {
    Case c{"epilogueMulRow", Mode::Linear, 37, 5, 7};
    c.epilogue = EpilogueOp::Mul;
    add(c);
  }
  {
    Case c{"epilogueDivRowGathered", Mode::Linear, 37, 5, 7};
    c.epilogue = EpilogueOp::Div;
    c.scaleGather = true;
    add(c);
  }
  {
    Case c{"epilogueMulHead", Mode::Linear, 37, 5, 7, 2};
    c.epilogue = EpilogueOp::Mul;
    c.scalePerHead = true;
    add(c);
  }
  {
    Case c{"epilogueDivHeadScatter", Mode::Linear, 50, 6, 66, 2};
    c.epilogue = EpilogueOp::Div;
    c.scalePerHead = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    add(c);
  }
  add({"segmentPtr", Mode::Linear, 200, 17, 19, 1, 4, Seg::Ptr});
  {
    Case c{"segmentPtrEmpty", Mode::Linear, 150, 16, 64, 2, 7, Seg::Ptr};
    c.emptySegments = true;
    c.gather = true;
    c.scatter = Scatter::Permute;
    add(c);
  }
  add({"rowType", Mode::Linear, 200, 17, 19, 1, 5, Seg::RowType, true});
  {
    Case c{"rowTypeAllFields", Mode::Linear, 181, 12, 50, 2, 3, Seg::RowType};
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.transposeW = true;
    c.epilogue = EpilogueOp::Mul;
    c.scalePerHead = true;
    add(c);
  }
  add({"outerPlain", Mode::Outer, 37, 5, 7});
  {
    Case c{"outerSegPtrEmpty", Mode::Outer, 300, 33, 40, 2, 6, Seg::Ptr};
    c.emptySegments = true;
    c.gather = true;
    c.gatherB = true;
    add(c);
  }
  {
    Case c{"outerRowTypeTransposed", Mode::Outer, 120, 9, 11, 1, 4,
           Seg::RowType};
    c.transposeW = true;
    c.gatherB = true;
    add(c);
  }
  {
    Case c{"outerAccumulateAtomic", Mode::Outer, 5000, 16, 16, 1, 2,
           Seg::Ptr};
    c.accumulate = true;
    c.gather = true;
    add(c);
  }
  add({"outerEmptyM", Mode::Outer, 0, 4, 4, 1, 3, Seg::Ptr});
  // Shapes that take the vectorized (float4) paths: K, N multiples of 4,
  // at most 64, with several row tiles and segment boundaries inside tiles.
  {
    Case c{"vecLinearSegPtr", Mode::Linear, 1000, 64, 64, 1, 5, Seg::Ptr};
    c.emptySegments = true;
    add(c);
  }
  {
    Case c{"vecLinearRowTypeAll", Mode::Linear, 777, 64, 60, 2, 3,
           Seg::RowType};
    c.gather = true;
    c.scatter = Scatter::Collide;
    c.accumulate = true;
    c.transposeW = true;
    c.epilogue = EpilogueOp::Div;
    c.scalePerHead = true;
    c.scaleGather = true;
    add(c);
  }
  {
    Case c{"vecLinearNarrowAccumulate", Mode::Linear, 531, 20, 28, 1, 1};
    c.accumulate = true;
    c.scatter = Scatter::Permute;
    c.epilogue = EpilogueOp::Mul;
    add(c);
  }
  {
    Case c{"vecOuterAtomic", Mode::Outer, 20000, 64, 64, 1, 3, Seg::Ptr};
    c.accumulate = true;
    c.gather = true;
    c.gatherB = true;
    add(c);
  }
  {
    Case c{"vecOuterPlain", Mode::Outer, 3000, 64, 64};
    add(c);
  }
  {
    Case c{"vecOuterRowTypeTransposed", Mode::Outer, 1500, 36, 52, 2, 4,
           Seg::RowType};
    c.transposeW = true;
    c.gather = true;
    add(c);
  }
  {
    Case c{"vecOuterSegPtrEmptyAccumulate", Mode::Outer, 900, 32, 64, 1, 6,
           Seg::Ptr};
    c.emptySegments = true;
    c.accumulate = true;
    add(c);
  }
  return t;
}

/// The data of one case: inputs, index lists, and the expected output.
struct Problem {
  Case c;
  int64_t xRows = 0, yRows = 0, scaleRows = 0, bRows = 0;
  std::vector<float> X, W, B, scale, Y0, expected;
  std::vector<int64_t> gather, gatherB, scatter, scaleGather, segPtr, rowType;
  bool atomic = false;
};

float randomNonZero(std::mt19937 &rng) {
  std::uniform_real_distribution<float> mag(0.25f, 1.f);
  std::bernoulli_distribution sign(0.5);
  return sign(rng) ? mag(rng) : -mag(rng);
}

std::vector<float> randomVector(std::mt19937 &rng, int64_t n) {
  std::vector<float> v(n);
  for (float &x : v)
    x = randomNonZero(rng);
  return v;
}

std::vector<int64_t> randomIndices(std::mt19937 &rng, int64_t n,
                                   int64_t range) {
  std::uniform_int_distribution<int64_t> d(0, range - 1);
  std::vector<int64_t> v(n);
  for (int64_t &x : v)
    x = d(rng);
  return v;
}

Problem makeProblem(const Case &c) {
  std::mt19937 rng(1234 + c.M * 7 + c.K * 13 + c.N);
  Problem p;
  p.c = c;
  const int64_t M = c.M, K = c.K, N = c.N, H = c.H, S = c.S;
  p.xRows = c.gather ? M + 11 : M;
  if (c.gather)
    p.gather = randomIndices(rng, M, p.xRows);
  p.X = randomVector(rng, p.xRows * H * K);
  if (c.seg == Seg::Ptr) {
    // Random boundaries; with emptySegments, segments 0, 2 and S-1 are empty.
    std::vector<int64_t> cuts = randomIndices(rng, S - 1, M + 1);
    std::sort(cuts.begin(), cuts.end());
    p.segPtr = {0};
    for (int64_t s = 0; s + 1 < S; ++s)
      p.segPtr.push_back(cuts[s]);
    p.segPtr.push_back(M);
    if (c.emptySegments) {
      p.segPtr[1] = 0;
      p.segPtr[3] = p.segPtr[2];
      p.segPtr[S - 1] = M;
    }
  } else if (c.seg == Seg::RowType) {
    p.rowType = randomIndices(rng, M, S);
  }
  if (c.mode == Mode::Linear) {
    p.W = randomVector(rng, S * H * K * N);
    p.yRows = M;
    if (c.scatter == Scatter::Permute) {
      p.yRows = M + 5;
      std::vector<int64_t> perm(p.yRows);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      p.scatter.assign(perm.begin(), perm.begin() + M);
    } else if (c.scatter == Scatter::Collide) {
      p.yRows = std::max<int64_t>(1, M / 4);
      p.scatter = randomIndices(rng, M, p.yRows);
      p.atomic = true;
    }
    p.Y0 = randomVector(rng, p.yRows * H * N);
    if (c.epilogue != EpilogueOp::None) {
      p.scaleRows = c.scaleGather ? M + 3 : M;
      if (c.scaleGather)
        p.scaleGather = randomIndices(rng, M, p.scaleRows);
      p.scale = randomVector(rng, p.scaleRows * (c.scalePerHead ? H : 1));
    }
  } else {
    p.bRows = c.gatherB ? M + 4 : M;
    if (c.gatherB)
      p.gatherB = randomIndices(rng, M, p.bRows);
    p.B = randomVector(rng, p.bRows * H * N);
    p.Y0 = randomVector(rng, S * H * K * N); // the initial dW
    p.atomic = c.accumulate;
  }

  // The naive reference, in double.
  std::vector<double> out(p.Y0.begin(), p.Y0.end());
  auto sliceOf = [&](int64_t r) -> int64_t {
    if (c.seg == Seg::RowType)
      return p.rowType[r];
    if (c.seg == Seg::Ptr) {
      int64_t s = 0;
      while (!(p.segPtr[s] <= r && r < p.segPtr[s + 1]))
        ++s;
      return s;
    }
    return 0;
  };
  if (c.mode == Mode::Linear) {
    std::vector<bool> written(p.yRows, false);
    for (int64_t r = 0; r < M; ++r) {
      const int64_t s = sliceOf(r), src = c.gather ? p.gather[r] : r;
      const int64_t dst = p.scatter.empty() ? r : p.scatter[r];
      for (int64_t h = 0; h < H; ++h)
        for (int64_t n = 0; n < N; ++n) {
          double v = 0;
          for (int64_t k = 0; k < K; ++k) {
            const int64_t wi = c.transposeW ? n * K + k : k * N + n;
            v += double(p.X[(src * H + h) * K + k]) *
                 p.W[(s * H + h) * K * N + wi];
          }
          if (c.epilogue != EpilogueOp::None) {
            const int64_t sr = c.scaleGather ? p.scaleGather[r] : r;
            const double sc = p.scale[c.scalePerHead ? sr * H + h : sr];
            v = c.epilogue == EpilogueOp::Mul ? v * sc : v / sc;
          }
          double &o = out[(dst * H + h) * N + n];
          o = c.accumulate ? o + v : v;
        }
      written[dst] = true;
    }
  } else {
    if (!c.accumulate)
      std::fill(out.begin(), out.end(), 0.0);
    for (int64_t r = 0; r < M; ++r) {
      const int64_t s = sliceOf(r);
      const int64_t ra = c.gather ? p.gather[r] : r;
      const int64_t rb = c.gatherB ? p.gatherB[r] : r;
      for (int64_t h = 0; h < H; ++h)
        for (int64_t k = 0; k < K; ++k)
          for (int64_t n = 0; n < N; ++n) {
            const int64_t wi = c.transposeW ? n * K + k : k * N + n;
            out[(s * H + h) * K * N + wi] +=
                double(p.X[(ra * H + h) * K + k]) * p.B[(rb * H + h) * N + n];
          }
    }
  }
  p.expected.assign(out.begin(), out.end());
  return p;
}

/// Fills the args with pointers into `p` (host) or into the device copies.
template <typename Ptr>
SegmentGemmArgs makeArgs(const Problem &p, Ptr ptr, float *out) {
  const Case &c = p.c;
  SegmentGemmArgs a;
  a.mode = c.mode;
  a.M = c.M;
  a.K = c.K;
  a.N = c.N;
  a.H = c.H;
  a.numSlices = c.S;
  a.X = ptr(p.X);
  a.gather = ptr(p.gather);
  a.transposeW = c.transposeW;
  a.segmentPtr = ptr(p.segPtr);
  a.rowType = ptr(p.rowType);
  a.accumulate = c.accumulate;
  a.atomic = p.atomic;
  if (c.mode == Mode::Linear) {
    a.W = ptr(p.W);
    a.Y = out;
    a.scatter = ptr(p.scatter);
    a.epilogue = c.epilogue;
    a.scale = ptr(p.scale);
    a.scaleGather = ptr(p.scaleGather);
    a.scalePerHead = c.scalePerHead;
  } else {
    a.B = ptr(p.B);
    a.gatherB = ptr(p.gatherB);
    a.dW = out;
  }
  return a;
}

void expectClose(const std::vector<float> &got, const std::vector<float> &want,
                 const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  // Relative to the output's scale: sums of K random products can cancel.
  double maxAbs = 1e-30;
  for (float w : want)
    maxAbs = std::max(maxAbs, double(std::fabs(w)));
  double worst = 0;
  size_t worstAt = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - want[i]) / maxAbs;
    if (err > worst) {
      worst = err;
      worstAt = i;
    }
  }
  EXPECT_LE(worst, 1e-5) << what << ": element " << worstAt << " got "
                         << got[worstAt] << " want " << want[worstAt];
}

class SegmentGemm : public ::testing::TestWithParam<Case> {};

TEST_P(SegmentGemm, Cpu) {
  const Problem p = makeProblem(GetParam());
  std::vector<float> out = p.Y0;
  auto host = [](const auto &v) { return v.empty() ? nullptr : v.data(); };
  segmentGemmCpu(makeArgs(p, host, out.data()));
  expectClose(out, p.expected, "cpu");
}

#ifdef HECTOR_TEMPLATES_CUDA
bool haveGpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

/// Device copies of a problem's arrays, freed on destruction.
class DeviceArrays {
public:
  ~DeviceArrays() {
    for (void *p : owned_)
      cudaFree(p);
  }
  template <typename T> T *copy(const std::vector<T> &v) {
    if (v.empty())
      return nullptr;
    void *d = nullptr;
    if (cudaMalloc(&d, v.size() * sizeof(T)) != cudaSuccess)
      throw std::runtime_error("cudaMalloc failed");
    owned_.push_back(d);
    if (cudaMemcpy(d, v.data(), v.size() * sizeof(T),
                   cudaMemcpyHostToDevice) != cudaSuccess)
      throw std::runtime_error("cudaMemcpy failed");
    return static_cast<T *>(d);
  }

private:
  std::vector<void *> owned_;
};

TEST_P(SegmentGemm, Cuda) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  const Problem p = makeProblem(GetParam());
  DeviceArrays dev;
  float *out = dev.copy(p.Y0);
  auto device = [&](const auto &v) { return dev.copy(v); };
  ASSERT_EQ(launchSegmentGemm(makeArgs(p, device, out), nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> got(p.Y0.size());
  if (!got.empty()) {
    ASSERT_EQ(cudaMemcpy(got.data(), out, got.size() * sizeof(float),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
  }
  expectClose(got, p.expected, "cuda");
}

TEST(SegmentGemmCudaArgs, RejectsInconsistentArgs) {
  SegmentGemmArgs a;
  a.M = 4;
  a.K = a.N = 2;
  a.atomic = true; // without accumulate
  EXPECT_EQ(launchSegmentGemm(a, nullptr), cudaErrorInvalidValue);
}
#endif

TEST(SegmentGemmArgsCheck, ReportsInconsistencies) {
  SegmentGemmArgs a;
  a.M = 4;
  a.K = a.N = 2;
  float buf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  a.X = a.W = buf;
  a.Y = buf;
  EXPECT_EQ(checkSegmentGemmArgs(a), "");
  a.atomic = true;
  EXPECT_NE(checkSegmentGemmArgs(a), "");
  EXPECT_THROW(segmentGemmCpu(a), std::invalid_argument);
  a.atomic = false;
  a.epilogue = EpilogueOp::Mul; // no scale
  EXPECT_NE(checkSegmentGemmArgs(a), "");
  a.epilogue = EpilogueOp::None;
  int64_t idx[5] = {0, 1, 2, 3, 4};
  a.segmentPtr = idx;
  a.rowType = idx;
  EXPECT_NE(checkSegmentGemmArgs(a), "");
}

INSTANTIATE_TEST_SUITE_P(Table, SegmentGemm, ::testing::ValuesIn(cases()),
                         [](const auto &info) { return info.param.name; });

} // namespace
} // namespace hector::templates
