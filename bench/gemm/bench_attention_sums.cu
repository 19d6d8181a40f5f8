// bench_attention_sums: RGAT's forward (models/rgat_pyg.hgnn: PyG's
// RGATConv, across-relation additive self-attention, one head) computed
// aggregate-then-transform, to measure that design against hector.bench's
// DRAM floor before the compiler lowers the model to it (as
// bench_summed_rows did for RGCN). For an edge u -> v of relation r the
// model's score is leaky_relu((x_v W_r) q + (x_u W_r) k); both terms are
// linear in x, so with the per-relation columns wq_r = W_r q and
// wk_r = W_r k (host, once) the forward is seven launches and no message
// row reaches memory:
//
//   a_src[p] = x[p.src] . wk[p.etype]   per (source, relation) pair
//   a_dst[c] = x[c.dst] . wq[c.etype]   per chunk c of a (dst, relation)
//                                       segment (both GEMMs with N = 1)
//   h_v = bias; m_v = -inf; S_v = 0
//   per chunk c into v, a group of lanes each: s_j = leaky_relu(a_dst[c]
//     + a_src[pair of entry j]) per entry; m_v = max of v's s_j (an
//     atomic max per chunk)
//   per chunk: w_j = exp(s_j - m_v) in place; S_v = sum of v's w_j (an
//     atomic add per chunk)
//   h_v += (sum_j w_j x[src_j]) W_r / S_v   per chunk: weighted summed
//          rows (SegmentGemmArgs::sumWeights), the epilogue dividing by
//          S_v, atomic adds into the destination
//
// Entries j are the edges in chunk order ((etype, dst), at most `cap` a
// chunk, bench_graph::chunk); entryPair[j] is the pair of entry j's edge,
// an array the graph would have to add ([E], like sum_chunk_src). The
// output is checked against a double reference of the model's own
// definition on sampled destinations.
//
// Output: each launch's time (CUDA events, median of 20 after 5 warm-ups),
// the forward's, and the forward over the floor (hector.bench's rgat
// inference floor: graph arrays as int64, x, the weights and the output,
// over the device-to-device copy bandwidth).
//
// Usage: bench_attention_sums GRAPH_FILE [cap=64 [lanes]] (lanes a chunk
// in the softmax kernels: 1 to 32; default from the mean chunk size).
#include "bench/gemm/BenchGraph.h"
#include "templates/gemm/SegmentGemmCuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <tuple>
#include <vector>

using bench_graph::chunk;
using bench_graph::Chunks;
using bench_graph::copyBandwidth;
using bench_graph::countingSort;
using bench_graph::edgesInChunkOrder;
using bench_graph::Graph;
using bench_graph::Pairs;
using bench_graph::pairsOf;
using bench_graph::readGraph;
using bench_graph::toDevice;
using hector::templates::EpilogueOp;
using hector::templates::launchSegmentGemm;
using hector::templates::SegmentGemmArgs;

namespace {

constexpr int64_t kDim = 64;
constexpr float kSlope = 0.2f;

/// *addr = max(*addr, v) for floats, with integer atomics: a non-negative
/// float orders as its int bits, a negative one inversely as its unsigned
/// bits (*addr starts at -inf).
__device__ void atomicMaxFloat(float *addr, float v) {
  if (v >= 0.f)
    atomicMax(reinterpret_cast<int *>(addr), __float_as_int(v));
  else
    atomicMin(reinterpret_cast<unsigned *>(addr), __float_as_uint(v));
}

/// The sum (or, kMax, the maximum) of v over each aligned group of G
/// lanes, on every lane of the group.
template <int G, bool kMax> __device__ float groupReduce(float v) {
  for (int off = G / 2; off > 0; off /= 2) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = kMax ? fmaxf(v, o) : v + o;
  }
  return v;
}

constexpr int kSoftmaxThreads = 256;

/// A group of G lanes per chunk c into destination v, a lane per entry j:
/// s_j = leaky_relu(a_dst[c] + a_src[pair of j]) into `score`, and the
/// chunk's largest s_j into rowMax[v]. G follows the entries a chunk has:
/// a warp a chunk wasted most of its lanes on am's and wikikg2's chunks of
/// 2 to 3 entries (session 28 call c).
template <int G>
__global__ void scoreEntries(int64_t C, const int64_t *sumPtr,
                             const int64_t *entryPair, const int64_t *chunkDst,
                             const float *dstScore, const float *srcScore,
                             float *score, float *rowMax) {
  const int64_t c = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / G;
  const int lane = threadIdx.x % G;
  // Groups past the end still shuffle with their warp.
  const bool live = c < C;
  const int64_t j0 = live ? sumPtr[c] : 0, j1 = live ? sumPtr[c + 1] : 0;
  const float ad = live ? dstScore[c] : 0.f;
  float m = -INFINITY;
  for (int64_t j = j0 + lane; j < j1; j += G) {
    float s = ad + srcScore[entryPair[j]];
    s = s > 0.f ? s : s * kSlope;
    score[j] = s;
    m = fmaxf(m, s);
  }
  m = groupReduce<G, true>(m);
  if (lane == 0 && j0 < j1)
    atomicMaxFloat(rowMax + chunkDst[c], m);
}

/// A group of G lanes per chunk c into v: w_j = exp(s_j - m_v) in place of
/// s_j, and their sum added to rowSum[v].
template <int G>
__global__ void
exponentiateEntries(int64_t C, const int64_t *sumPtr, const int64_t *chunkDst,
                    const float *rowMax, float *weight, float *rowSum) {
  const int64_t c = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / G;
  const int lane = threadIdx.x % G;
  const bool live = c < C;
  const int64_t j0 = live ? sumPtr[c] : 0, j1 = live ? sumPtr[c + 1] : 0;
  const float m = j0 < j1 ? rowMax[chunkDst[c]] : 0.f;
  float sum = 0.f;
  for (int64_t j = j0 + lane; j < j1; j += G) {
    const float w = expf(weight[j] - m);
    weight[j] = w;
    sum += w;
  }
  sum = groupReduce<G, false>(sum);
  if (lane == 0 && j0 < j1)
    atomicAdd(rowSum + chunkDst[c], sum);
}

/// Both softmax kernels with groups of G lanes a chunk.
template <int G>
void launchSoftmaxAs(int64_t C, const int64_t *sumPtr, const int64_t *entryPair,
                     const int64_t *chunkDst, const float *dstScore,
                     const float *srcScore, float *weight, float *rowMax,
                     float *rowSum) {
  const unsigned blocks =
      unsigned((C * G + kSoftmaxThreads - 1) / kSoftmaxThreads);
  scoreEntries<G><<<blocks, kSoftmaxThreads>>>(
      C, sumPtr, entryPair, chunkDst, dstScore, srcScore, weight, rowMax);
  exponentiateEntries<G><<<blocks, kSoftmaxThreads>>>(C, sumPtr, chunkDst,
                                                      rowMax, weight, rowSum);
}

/// Every row of `out` ([rows, kDim]) set to `row` (16-byte words), and
/// fill[i] = value for i < rows (the softmax's running maximum).
__global__ void initRows(int64_t rows, const float4 *row, float4 *out,
                         float *fill, float value) {
  constexpr int kWords = kDim / 4;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * kWords)
    return;
  out[i] = row[i % kWords];
  if (i < rows)
    fill[i] = value;
}

unsigned blocksFor(int64_t n, int threads) {
  return unsigned((n + threads - 1) / threads);
}

/// The model's output rows of the sampled destinations, in double, from
/// its definition: per edge outj = x_u W_r, outi = x_v W_r, score
/// leaky_relu(outi q + outj k), softmax over v's edges, h_v = sum alpha
/// outj + bias.
std::vector<double> reference(const Graph &g, const std::vector<float> &x,
                              const std::vector<float> &w,
                              const std::vector<float> &q,
                              const std::vector<float> &k,
                              const std::vector<float> &bias,
                              const std::vector<int64_t> &sample) {
  const int64_t D = kDim;
  std::vector<int64_t> byDst(g.E), dstPtr(g.N + 1, 0);
  for (int64_t e = 0; e < g.E; ++e)
    byDst[e] = e;
  byDst = countingSort(byDst, g.dst, g.N);
  for (int64_t e = 0; e < g.E; ++e)
    ++dstPtr[g.dst[e] + 1];
  for (int64_t v = 0; v < g.N; ++v)
    dstPtr[v + 1] += dstPtr[v];
  auto project = [&](int64_t node, int64_t r, std::vector<double> &out) {
    for (int64_t n = 0; n < D; ++n) {
      double s = 0;
      for (int64_t i = 0; i < D; ++i)
        s += double(x[node * D + i]) * w[(r * D + i) * D + n];
      out[n] = s;
    }
  };
  std::vector<double> ref(sample.size() * D), outi(D), outj(D);
  for (size_t t = 0; t < sample.size(); ++t) {
    const int64_t v = sample[t];
    const int64_t deg = dstPtr[v + 1] - dstPtr[v];
    std::vector<double> score(deg), msg(deg * D);
    for (int64_t i = 0; i < deg; ++i) {
      const int64_t e = byDst[dstPtr[v] + i], r = g.etype[e];
      project(v, r, outi);
      project(g.src[e], r, outj);
      double s = 0;
      for (int64_t n = 0; n < D; ++n)
        s += outi[n] * q[n] + outj[n] * k[n];
      score[i] = s > 0 ? s : s * kSlope;
      std::copy(outj.begin(), outj.end(), msg.begin() + i * D);
    }
    const double m = deg ? *std::max_element(score.begin(), score.end()) : 0.0;
    double sum = 0;
    for (double &s : score)
      sum += (s = std::exp(s - m));
    for (int64_t n = 0; n < D; ++n) {
      double h = bias[n];
      for (int64_t i = 0; i < deg; ++i)
        h += score[i] / sum * msg[i * D + n];
      ref[t * D + n] = h;
    }
  }
  return ref;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s GRAPH_FILE [cap [lanes]]\n", argv[0]);
    return 2;
  }
  const Graph g = readGraph(argv[1]);
  const int64_t cap = argc > 2 ? std::atoll(argv[2]) : 64;
  const int64_t D = kDim;
  const Chunks c = chunk(g, edgesInChunkOrder(g, 0), cap);
  const Pairs pairs = pairsOf(g);
  const int64_t C = int64_t(c.dst.size()), P = int64_t(pairs.src.size());
  std::vector<int64_t> entryPair(g.E);
  for (int64_t j = 0; j < g.E; ++j)
    entryPair[j] = pairs.ofEdge[c.edge[j]];

  // Weights as PyG initialises them (glorot-like scales), x normal.
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  const float wStd = 1.f / std::sqrt(float(D));
  std::vector<float> x(size_t(g.N) * D), w(size_t(g.R) * D * D), q(D), k(D),
      bias(D);
  for (float &v : x)
    v = normal(rng);
  for (auto *v : {&w, &q, &k, &bias})
    for (float &e : *v)
      e = normal(rng) * wStd;
  // wq_r = W_r q and wk_r = W_r k: [R, D, 1] weight slices.
  std::vector<float> wq(size_t(g.R) * D), wk(size_t(g.R) * D);
  for (int64_t r = 0; r < g.R; ++r)
    for (int64_t i = 0; i < D; ++i) {
      double sq = 0, sk = 0;
      for (int64_t n = 0; n < D; ++n) {
        sq += double(w[(r * D + i) * D + n]) * q[n];
        sk += double(w[(r * D + i) * D + n]) * k[n];
      }
      wq[r * D + i] = float(sq);
      wk[r * D + i] = float(sk);
    }

  float *dX = toDevice(x), *dW = toDevice(w), *dWq = toDevice(wq),
        *dWk = toDevice(wk), *dBias = toDevice(bias);
  int64_t *dPairSrc = toDevice(pairs.src), *dPairRel = toDevice(pairs.relPtr),
          *dSumPtr = toDevice(c.sumPtr), *dSumRows = toDevice(c.sumRows),
          *dChunkDst = toDevice(c.dst), *dChunkRel = toDevice(c.relPtr),
          *dEntryPair = toDevice(entryPair);
  float *dSrcScore, *dDstScore, *dWeight, *dRowMax, *dRowSum, *dOut;
  CHECK_CUDA(cudaMalloc(&dSrcScore, std::max<int64_t>(P, 1) * 4));
  CHECK_CUDA(cudaMalloc(&dDstScore, std::max<int64_t>(C, 1) * 4));
  CHECK_CUDA(cudaMalloc(&dWeight, std::max<int64_t>(g.E, 1) * 4));
  CHECK_CUDA(cudaMalloc(&dRowMax, g.N * 4));
  CHECK_CUDA(cudaMalloc(&dRowSum, g.N * 4));
  CHECK_CUDA(cudaMalloc(&dOut, g.N * D * 4));

  const SegmentGemmArgs srcScore = bench_graph::gatheredDotCall(
      dX, D, P, dPairSrc, dWk, g.R, dPairRel, dSrcScore); // a_src per pair
  const SegmentGemmArgs dstScore = bench_graph::gatheredDotCall(
      dX, D, C, dChunkDst, dWq, g.R, dChunkRel, dDstScore); // a_dst per chunk
  SegmentGemmArgs sum; // h += (sum_j w_j x_j) W_r / S_v
  sum.M = C;
  sum.K = sum.N = D;
  sum.X = dX;
  sum.sumPtr = dSumPtr;
  sum.sumRows = dSumRows;
  sum.sumWeights = dWeight;
  sum.W = dW;
  sum.numSlices = g.R;
  sum.segmentPtr = dChunkRel;
  sum.Y = dOut;
  sum.scatter = dChunkDst;
  sum.epilogue = EpilogueOp::Div;
  sum.scale = dRowSum;
  sum.scaleGather = dChunkDst;
  sum.accumulate = sum.atomic = true;
  sum.tf32 = true;

  const int kThreads = 256;
  // Lanes a chunk: the largest power of two up to its mean entry count
  // (the best of 1 to 8 lanes on am, mag and wikikg2 at cap 64: 2, 8 and 2,
  // session 28 call d).
  const double meanEntries = C ? double(g.E) / double(C) : 1.0;
  int lanes = 1;
  while (lanes < 32 && 2 * lanes <= meanEntries)
    lanes *= 2;
  if (argc > 3)
    lanes = std::atoi(argv[3]);
  auto launchScores = [&] {
    CHECK_CUDA(launchSegmentGemm(srcScore, nullptr));
    CHECK_CUDA(launchSegmentGemm(dstScore, nullptr));
  };
  auto launchInit = [&] {
    initRows<<<blocksFor(g.N * D / 4, kThreads), kThreads>>>(
        g.N, reinterpret_cast<const float4 *>(dBias),
        reinterpret_cast<float4 *>(dOut), dRowMax, -INFINITY);
    CHECK_CUDA(cudaMemsetAsync(dRowSum, 0, g.N * 4));
  };
  auto launchSoftmax = [&] {
    if (C == 0)
      return;
    const auto args =
        std::make_tuple(C, dSumPtr, dEntryPair, dChunkDst, dDstScore, dSrcScore,
                        dWeight, dRowMax, dRowSum);
    switch (lanes) {
    case 1:
      std::apply(launchSoftmaxAs<1>, args);
      break;
    case 2:
      std::apply(launchSoftmaxAs<2>, args);
      break;
    case 4:
      std::apply(launchSoftmaxAs<4>, args);
      break;
    case 8:
      std::apply(launchSoftmaxAs<8>, args);
      break;
    case 16:
      std::apply(launchSoftmaxAs<16>, args);
      break;
    default:
      std::apply(launchSoftmaxAs<32>, args);
      break;
    }
  };
  auto launchSum = [&] { CHECK_CUDA(launchSegmentGemm(sum, nullptr)); };
  auto forward = [&] {
    launchScores();
    launchInit();
    launchSoftmax();
    launchSum();
    CHECK_CUDA(cudaGetLastError());
  };

  // hector.bench.problem.floor_bytes, inference, rgat (one head).
  const double floorBytes =
      3.0 * g.E * 8 + 2.0 * g.N * D * 4 + (g.R * D * D + 2 * D + D) * 4.0;
  const double bw = copyBandwidth();
  const double floorMs = floorBytes / bw * 1e3;
  std::printf("graph N=%lld E=%lld R=%lld pairs %lld chunks %lld (cap %lld)"
              "  copy bandwidth %.0f GB/s  floor %.3f ms\n",
              (long long)g.N, (long long)g.E, (long long)g.R, (long long)P,
              (long long)C, (long long)cap, bw / 1e9, floorMs);

  forward();
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> out(size_t(g.N) * D);
  CHECK_CUDA(
      cudaMemcpy(out.data(), dOut, out.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<int64_t> sample;
  {
    std::vector<char> taken(g.N, 0);
    std::uniform_int_distribution<int64_t> pick(0, g.N - 1);
    for (int i = 0; i < 2048; ++i) {
      const int64_t v = pick(rng);
      if (!taken[v]) {
        taken[v] = 1;
        sample.push_back(v);
      }
    }
  }
  const std::vector<double> ref = reference(g, x, w, q, k, bias, sample);
  double err = 0, scale = 1e-30;
  for (size_t t = 0; t < sample.size(); ++t)
    for (int64_t n = 0; n < D; ++n) {
      err = std::max(err, std::fabs(out[sample[t] * D + n] - ref[t * D + n]));
      scale = std::max(scale, std::fabs(ref[t * D + n]));
    }

  const float tScores = timeMs(launchScores);
  const float tInit = timeMs(launchInit);
  const float tSoftmax = timeMs(launchSoftmax);
  // Alone, the summed call adds into whatever the output holds.
  const float tSum = timeMs(launchSum);
  const float tForward = timeMs(forward);
  std::printf("scores %.3f ms  init %.3f ms  softmax (%d lanes a chunk) "
              "%.3f ms  weighted sum %.3f ms  forward %.3f ms  floor x%.2f"
              "  rel err %.2e\n",
              tScores, tInit, lanes, tSoftmax, tSum, tForward,
              tForward / floorMs, err / scale);
  return 0;
}
