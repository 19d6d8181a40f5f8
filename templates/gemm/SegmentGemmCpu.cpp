// The CPU implementation of the segment-MM GEMM template: straightforward
// loops, OpenMP over independent outputs, so that it is deterministic when
// not atomic. One template over the scalar type T, accumulating in T, behind
// the float and double overloads of SegmentGemm.h.
#include "templates/gemm/SegmentGemm.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace hector::templates {
namespace {

template <typename T> std::string checkArgs(const SegmentGemmArgsT<T> &a) {
  // No slices (a graph without relations) is fine when there are no rows.
  if (a.M < 0 || a.K < 0 || a.N < 0 || a.H < 1 || a.numSlices < 0 ||
      (a.numSlices == 0 && a.M > 0))
    return "sizes must be M, K, N >= 0, H >= 1, numSlices >= 1 (0 only "
           "when M = 0)";
  if (a.segmentPtr && a.rowType)
    return "segmentPtr and rowType are exclusive";
  // As with sumPtr, an empty array may have no address.
  if (a.M > 0 &&
      ((a.gatherOrderRowIds == nullptr) != (a.gatherOrderGather == nullptr) ||
       (a.gatherOrderRowIds == nullptr) != (a.gatherOrderRowType == nullptr)))
    return "gatherOrderRowIds, gatherOrderGather and gatherOrderRowType go "
           "together";
  if (a.gatherOrderRowIds &&
      (a.mode != SegmentGemmMode::Linear || !a.segmentPtr || !a.gather ||
       a.rowIds || a.scatter || a.scaleGather))
    return "a gather order (gatherOrderRowIds) needs linear mode with "
           "segmentPtr and gather, and no rowIds, scatter or scaleGather";
  if (a.atomic && !a.accumulate)
    return "atomic needs accumulate";
  // Without rows there are no entries either, and an empty entry array may
  // have no address (a graph without edges has no chunks).
  if (a.M > 0 && (a.sumPtr == nullptr) != (a.sumRows == nullptr))
    return "sumPtr and sumRows go together";
  if (a.sumPtr && a.gather)
    return "sumPtr (summed rows) and gather are exclusive";
  if (a.sumPtr && a.mode != SegmentGemmMode::Linear)
    return "summed rows (sumPtr) only in linear mode";
  if (a.sumWeights && !a.sumPtr)
    return "sumWeights weigh summed rows: they need sumPtr";
  if (a.sumWeightIds && !a.sumWeights)
    return "sumWeightIds pick rows of sumWeights: they need sumWeights";
  if ((a.xSharedByHeads || a.wHeadsInColumns) &&
      a.mode != SegmentGemmMode::Linear)
    return "xSharedByHeads and wHeadsInColumns only in linear mode";
  if (a.wHeadsInColumns && a.transposeW)
    return "wHeadsInColumns needs transposeW off";
  if (a.inputOp != InputOp::None &&
      (a.mode != SegmentGemmMode::Linear || a.sumPtr))
    return "an input op (inputOp) only in linear mode without summed rows";
  if (a.M == 0 || a.N == 0)
    return "";
  if (!a.X && a.K > 0)
    return "X is missing";
  if (a.mode == SegmentGemmMode::Linear) {
    if (!a.W && a.K > 0)
      return "W is missing";
    if (a.yParts < 1 || a.yParts > kMaxYParts)
      return "yParts must be 1 to " + std::to_string(kMaxYParts);
    if (a.yParts == 1 && !a.Y)
      return "Y is missing";
    if (a.yParts > 1) {
      if (a.H != 1 || a.N % a.yParts != 0)
        return "output parts need H = 1 and N a multiple of yParts";
      for (int p = 0; p < a.yParts; ++p)
        if (!a.yPart[p])
          return "output part " + std::to_string(p) + " is missing";
    }
    if (a.yParts > 1 && a.accumulate)
      return "output parts need accumulate off";
    if ((a.epilogue == EpilogueOp::None) != (a.scale == nullptr))
      return "scale must be given exactly when there is an epilogue";
    if ((a.mixRows == nullptr) != (a.mixGate == nullptr))
      return "a gated mix needs both mixRows and mixGate";
    if (a.mixRows && (a.accumulate || a.yParts != 1 ||
                      a.epilogue != EpilogueOp::None || a.rowDotY || a.sumPtr))
      return "a gated mix needs accumulate off, one output buffer, and no "
             "epilogue scale, row dot or summed rows";
    if (a.rowDotY || a.rowDotW || a.rowDotN != 0) {
      if (!a.rowDotY || !a.rowDotW || a.rowDotN < 1)
        return "a row dot needs rowDotY, rowDotW and rowDotN >= 1";
      if (a.accumulate || a.yParts != 1)
        return "a row dot needs accumulate off and one output buffer";
    }
  } else {
    if (a.bias || a.yParts != 1)
      return "no bias or output parts in outer mode";
    if (a.mixRows || a.mixGate)
      return "no gated mix in outer mode";
    if (a.rowDotY || a.rowDotW || a.rowDotN != 0)
      return "no row dot in outer mode";
    if (!a.B && a.K > 0)
      return "B is missing (outer mode)";
    if (!a.dW && a.K > 0)
      return "dW is missing (outer mode)";
    if (a.epilogue != EpilogueOp::None)
      return "no epilogue in outer mode";
  }
  return "";
}

// Row id of logical row r (SegmentGemm.h).
template <typename T>
inline int64_t rowIdOf(const SegmentGemmArgsT<T> &a, int64_t r) {
  return a.rowIds ? a.rowIds[r] : r;
}

// Slice of logical row r with row id `id`: rowType is indexed by the id,
// segments are over r (a binary search in segmentPtr).
template <typename T>
int64_t sliceOf(const SegmentGemmArgsT<T> &a, int64_t r, int64_t id) {
  if (a.rowType)
    return a.rowType[id];
  if (a.segmentPtr) {
    const int64_t *end = a.segmentPtr + a.numSlices + 1;
    return (std::upper_bound(a.segmentPtr, end, r) - a.segmentPtr) - 1;
  }
  return 0;
}

template <typename T> void linearCpu(const SegmentGemmArgsT<T> &a) {
  const int64_t K = a.K, N = a.N, H = a.H;
  // Deterministic atomic calls run the rows in order on one thread (and
  // then need no atomics).
  const bool ordered = a.atomic && a.deterministic;
  const bool atomic = a.atomic && !ordered;
#pragma omp parallel if (!ordered)
  {
    std::vector<T> acc(N), summed(a.sumPtr ? K : 0),
        transformed(a.inputOp != InputOp::None ? K : 0);
#pragma omp for schedule(static)
    for (int64_t r = 0; r < a.M; ++r) {
      const int64_t id = rowIdOf(a, r);
      const int64_t s = sliceOf(a, r, id);
      const int64_t src = a.gather ? a.gather[id] : id;
      const int64_t dst = a.scatter ? a.scatter[id] : id;
      const int64_t sr = a.scaleGather ? a.scaleGather[id] : id;
      for (int64_t h = 0; h < H; ++h) {
        if (a.sumPtr) {
          std::fill(summed.begin(), summed.end(), T(0));
          for (int64_t j = a.sumPtr[id]; j < a.sumPtr[id + 1]; ++j) {
            const T *xj = a.X + inputOffset(a, a.sumRows[j], h);
            // Times 1 is exact: unweighted sums are what they were.
            const T w =
                a.sumWeights ? a.sumWeights[sumWeightRow(a, j) * H + h] : T(1);
#pragma omp simd
            for (int64_t k = 0; k < K; ++k)
              summed[k] += w * xj[k];
          }
        }
        const T *x = a.sumPtr ? summed.data() : a.X + inputOffset(a, src, h);
        if (a.inputOp != InputOp::None) {
          for (int64_t k = 0; k < K; ++k)
            transformed[k] = applyInputOp(a.inputOp, x[k]);
          x = transformed.data();
        }
        const T *w = weightOf(a, s, h);
        const int64_t ldw = weightRowStride(a);
        std::fill(acc.begin(), acc.end(), T(0));
        if (a.transposeW) {
          for (int64_t n = 0; n < N; ++n) {
            T sum = 0;
#pragma omp simd reduction(+ : sum)
            for (int64_t k = 0; k < K; ++k)
              sum += x[k] * w[n * K + k];
            acc[n] = sum;
          }
        } else {
          for (int64_t k = 0; k < K; ++k) {
            const T xv = x[k];
#pragma omp simd
            for (int64_t n = 0; n < N; ++n)
              acc[n] += xv * w[k * ldw + n];
          }
        }
        if (a.bias)
          for (int64_t n = 0; n < N; ++n)
            acc[n] += biasAt(a, s, h, n);
        if (a.epilogue != EpilogueOp::None) {
          const T sc = a.scale[a.scalePerHead ? sr * H + h : sr];
          for (int64_t n = 0; n < N; ++n)
            acc[n] = a.epilogue == EpilogueOp::Mul ? acc[n] * sc : acc[n] / sc;
        }
        if (a.mixRows) {
          const T g = mixGateAt(a, s);
          const T *mix = a.mixRows + dst * H * N + h * N;
          for (int64_t n = 0; n < N; ++n)
            acc[n] = g * acc[n] + (T(1) - g) * mix[n];
        }
        if (a.yParts > 1) {
          for (int64_t n = 0; n < N; ++n)
            *outputAt(a, dst, h, n) = acc[n];
          continue;
        }
        T *y = a.Y + dst * H * N + h * N;
        if (atomic) {
          for (int64_t n = 0; n < N; ++n) {
#pragma omp atomic
            y[n] += acc[n];
          }
        } else if (a.accumulate) {
          for (int64_t n = 0; n < N; ++n)
            y[n] += acc[n];
        } else {
          std::copy(acc.begin(), acc.end(), y);
        }
      }
    }
  }
}

// Each (slice, head, k) output row of dW is owned by one iteration, which
// sums its rows in order: deterministic, no atomics needed.
template <typename T> void outerCpu(const SegmentGemmArgsT<T> &a) {
  const int64_t K = a.K, N = a.N, H = a.H, S = a.numSlices;
  // rowsOf[s]: the ids of the rows of slice s, in logical row order.
  std::vector<std::vector<int64_t>> rowsOf(S);
  for (int64_t r = 0; r < a.M; ++r) {
    const int64_t id = rowIdOf(a, r);
    rowsOf[sliceOf(a, r, id)].push_back(id);
  }
#pragma omp parallel
  {
    std::vector<T> acc(N);
#pragma omp for schedule(dynamic, 4)
    for (int64_t shk = 0; shk < S * H * K; ++shk) {
      const int64_t s = shk / (H * K), h = (shk / K) % H, k = shk % K;
      std::fill(acc.begin(), acc.end(), T(0));
      for (int64_t id : rowsOf[s]) {
        const int64_t ra = a.gather ? a.gather[id] : id;
        const int64_t rb = a.gatherB ? a.gatherB[id] : id;
        const T av = a.X[ra * H * K + h * K + k];
        const T *b = a.B + rb * H * N + h * N;
#pragma omp simd
        for (int64_t n = 0; n < N; ++n)
          acc[n] += av * b[n];
      }
      T *w = a.dW + (s * H + h) * K * N;
      for (int64_t n = 0; n < N; ++n) {
        T &out = a.transposeW ? w[n * K + k] : w[k * N + n];
        out = a.accumulate ? out + acc[n] : acc[n];
      }
    }
  }
}

template <typename T> void runCpu(const SegmentGemmArgsT<T> &args) {
  const std::string error = checkArgs(args);
  if (!error.empty())
    throw std::invalid_argument("segmentGemmCpu: " + error);
  if (args.N == 0)
    return;
  if (args.mode == SegmentGemmMode::Linear) {
    if (args.M == 0)
      return;
    if (!args.rowDotY) {
      linearCpu(args);
      return;
    }
    linearCpu(withoutRowDot(args));
    linearCpu(rowDotCall(args));
  } else if (args.K > 0) {
    outerCpu(args);
  }
}

} // namespace

std::string checkSegmentGemmArgs(const SegmentGemmArgsT<float> &args) {
  return checkArgs(args);
}
std::string checkSegmentGemmArgs(const SegmentGemmArgsT<double> &args) {
  return checkArgs(args);
}

void segmentGemmCpu(const SegmentGemmArgsT<float> &args) { runCpu(args); }
void segmentGemmCpu(const SegmentGemmArgsT<double> &args) { runCpu(args); }

} // namespace hector::templates
