// bench_summed_rows: an RGCN forward (PyG's RGCNConv, aggr = "mean") as two
// calls of the GEMM template, to measure aggregate-then-transform with
// summed rows (SegmentGemmArgs::sumPtr) against the DRAM floor of
// hector.bench before the compiler lowers models to it:
//
//   out  = x root + bias                          (linear, bias)
//   out += sum_r mean_{u in N_r(v)} x_u W_r        (summed rows, atomic)
//
// The second call's rows are chunks of the graph's (destination, relation)
// segments, at most `cap` edges a chunk (the chunks of a segment add into
// the same output row). Each chunk's input is the sum of its edges' source
// rows, its epilogue divides by its segment's size, and its output is
// added atomically to its destination. Chunks are sorted by relation then
// destination (one weight slice for a long run of rows: segmentPtr), or,
// with a destination block B, by (destination / B, relation, destination)
// (rowType): the output rows a block of destinations adds into then stay
// in L2 while its relations' chunks run, instead of being read and
// written back from DRAM once per relation.
//
// A third call computes the summed call's sum with entry weights instead
// of the epilogue's division (SegmentGemmArgs::sumWeights: each entry times
// 1 / its segment's size, the same mean), as an attention layer's
// aggregate-then-transform would with its scores: its time against the
// unweighted call's is what the weights' loads cost. Beside it, once a
// graph, the other GEMM such a layer needs (RGAT's source score): one
// scalar a (source, relation) pair, x_u . (W_r k), a call over the pairs
// with N = 1. A fourth time is the summed call with its divisor read as
// the generated RGCN reads it: a per-edge array (rel_in_degree) at each
// chunk's first edge (scaleGather = sum_chunk_eid).
//
// Input: a graph file from dump_graph.py (int64 N, E, R, then src[E],
// dst[E], etype[E]). Output: per cap and TF32 setting, the calls' times
// (CUDA events, median of 20 after 5 warm-ups), the forward's time over
// the floor (hector.bench's inference floor: graph arrays as int64, x, the
// weights and the output, over the device-to-device copy bandwidth), and
// the largest error of the output (and of the weighted forward's) against
// a double reference on sampled destination rows.
//
// Usage: bench_summed_rows GRAPH_FILE [dim=64 [cap block [diag]]] (with cap
// and block: that configuration only, TF32; with diag, also `diagnose`).
#include "bench/gemm/BenchGraph.h"
#include "templates/gemm/SegmentGemmCuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using bench_graph::chunk;
using bench_graph::Chunks;
using bench_graph::copyBandwidth;
using bench_graph::edgesInChunkOrder;
using bench_graph::Graph;
using bench_graph::readGraph;
using bench_graph::toDevice;
using hector::templates::EpilogueOp;
using hector::templates::launchSegmentGemm;
using hector::templates::SegmentGemmArgs;

/// The summed call's time with one of its costs taken away (the outputs
/// are wrong; only the times count): plain stores instead of atomic adds;
/// each entry's source row replaced by a row near the entry's position
/// (sumRows[j] = j mod N: the same bytes, read in order); each chunk's
/// output row replaced by the chunk's number mod N (outputs in order).
/// What each saves against the call as it is says where its time goes.
void diagnose(const SegmentGemmArgs &sum, const Chunks &c, const Graph &g) {
  const float tSum =
      timeMs([&] { CHECK_CUDA(launchSegmentGemm(sum, nullptr)); });
  SegmentGemmArgs plain = sum;
  plain.atomic = false;
  plain.accumulate = false;
  const float tPlain =
      timeMs([&] { CHECK_CUDA(launchSegmentGemm(plain, nullptr)); });
  std::vector<int64_t> inOrder(c.sumRows.size()), outInOrder(c.dst.size());
  for (size_t j = 0; j < inOrder.size(); ++j)
    inOrder[j] = int64_t(j) % g.N;
  for (size_t j = 0; j < outInOrder.size(); ++j)
    outInOrder[j] = int64_t(j) % g.N;
  int64_t *dInOrder = toDevice(inOrder), *dOutInOrder = toDevice(outInOrder);
  SegmentGemmArgs seqIn = sum;
  seqIn.sumRows = dInOrder;
  const float tSeqIn =
      timeMs([&] { CHECK_CUDA(launchSegmentGemm(seqIn, nullptr)); });
  SegmentGemmArgs seqOut = sum;
  seqOut.scatter = dOutInOrder;
  const float tSeqOut =
      timeMs([&] { CHECK_CUDA(launchSegmentGemm(seqOut, nullptr)); });
  SegmentGemmArgs both = seqIn;
  both.scatter = dOutInOrder;
  const float tBoth =
      timeMs([&] { CHECK_CUDA(launchSegmentGemm(both, nullptr)); });
  SegmentGemmArgs bothPlain = both;
  bothPlain.atomic = bothPlain.accumulate = false;
  const float tBothPlain =
      timeMs([&] { CHECK_CUDA(launchSegmentGemm(bothPlain, nullptr)); });
  std::printf("diag entries %lld chunks %lld  summed %.3f ms  plain stores "
              "%.3f  sources in order %.3f  outputs in order %.3f  both "
              "%.3f  both, plain stores %.3f\n",
              (long long)c.sumRows.size(), (long long)c.dst.size(), tSum,
              tPlain, tSeqIn, tSeqOut, tBoth, tBothPlain);
  for (void *p : {(void *)dInOrder, (void *)dOutInOrder})
    CHECK_CUDA(cudaFree(p));
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s GRAPH_FILE [dim [cap block]]\n", argv[0]);
    return 2;
  }
  const Graph g = readGraph(argv[1]);
  const int64_t D = argc > 2 ? std::atoll(argv[2]) : 64;
  const std::vector<int64_t> order = edgesInChunkOrder(g, 0);

  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  const float wStd = 1.f / std::sqrt(float(D));
  std::vector<float> x(size_t(g.N) * D), w(size_t(g.R) * D * D), root(D * D),
      bias(D);
  for (float &v : x)
    v = normal(rng);
  for (auto *v : {&w, &root, &bias})
    for (float &e : *v)
      e = normal(rng) * wStd;
  float *dX = toDevice(x), *dW = toDevice(w), *dRoot = toDevice(root),
        *dBias = toDevice(bias), *dOut = nullptr;
  CHECK_CUDA(cudaMalloc(&dOut, size_t(g.N) * D * sizeof(float)));

  // hector.bench.problem.floor_bytes, inference, rgcn.
  const double floorBytes =
      3.0 * g.E * 8 + 2.0 * g.N * D * 4 + (g.R * D * D + D * D + D) * 4.0;
  const double bw = copyBandwidth();
  const double floorMs = floorBytes / bw * 1e3;
  std::printf("graph N=%lld E=%lld R=%lld dim=%lld  copy bandwidth %.0f GB/s"
              "  floor %.3f ms\n",
              (long long)g.N, (long long)g.E, (long long)g.R, (long long)D,
              bw / 1e9, floorMs);

  // Sampled destination rows for the reference check.
  std::vector<char> sampled(g.N, 0);
  std::vector<int64_t> sample;
  std::uniform_int_distribution<int64_t> pick(0, g.N - 1);
  for (int i = 0; i < 4096; ++i) {
    const int64_t v = pick(rng);
    if (!sampled[v]) {
      sampled[v] = 1;
      sample.push_back(v);
    }
  }
  // The reference on the sample: out_v = x_v root + bias + sum over v's
  // segments of (mean of its sources) W_r, in double.
  std::vector<double> ref(sample.size() * D, 0.0);
  std::vector<int64_t> slot(g.N, -1);
  for (size_t i = 0; i < sample.size(); ++i)
    slot[sample[i]] = int64_t(i);
  for (size_t i = 0; i < sample.size(); ++i)
    for (int64_t n = 0; n < D; ++n) {
      double s = bias[n];
      for (int64_t k = 0; k < D; ++k)
        s += double(x[sample[i] * D + k]) * root[k * D + n];
      ref[i * D + n] = s;
    }
  for (int64_t i = 0; i < g.E;) {
    const int64_t r = g.etype[order[i]], v = g.dst[order[i]];
    int64_t j = i;
    while (j < g.E && g.etype[order[j]] == r && g.dst[order[j]] == v)
      ++j;
    if (slot[v] >= 0) {
      std::vector<double> mean(D, 0.0);
      for (int64_t e = i; e < j; ++e)
        for (int64_t k = 0; k < D; ++k)
          mean[k] += x[g.src[order[e]] * D + k];
      for (int64_t n = 0; n < D; ++n) {
        double s = 0;
        for (int64_t k = 0; k < D; ++k)
          s += mean[k] / double(j - i) * w[(r * D + k) * D + n];
        ref[slot[v] * D + n] += s;
      }
    }
    i = j;
  }
  double refScale = 1e-30;
  for (double v : ref)
    refScale = std::max(refScale, std::fabs(v));

  {
    // RGAT's source score per (source, relation) pair: one weight column
    // a relation.
    const bench_graph::Pairs pairs = bench_graph::pairsOf(g);
    std::vector<float> scoreW(size_t(g.R) * D);
    for (float &v : scoreW)
      v = normal(rng) * wStd;
    int64_t *dPairSrc = toDevice(pairs.src), *dPairRel = toDevice(pairs.relPtr);
    float *dScoreW = toDevice(scoreW), *dScore = nullptr;
    CHECK_CUDA(cudaMalloc(&dScore, pairs.src.size() * sizeof(float)));
    const SegmentGemmArgs score =
        bench_graph::gatheredDotCall(dX, D, int64_t(pairs.src.size()), dPairSrc,
                                     dScoreW, g.R, dPairRel, dScore);
    const float tScore =
        timeMs([&] { CHECK_CUDA(launchSegmentGemm(score, nullptr)); });
    std::printf("pairs %lld  source score (one scalar a pair) %.3f ms\n",
                (long long)pairs.src.size(), tScore);
    for (void *p :
         {(void *)dPairSrc, (void *)dPairRel, (void *)dScoreW, (void *)dScore})
      CHECK_CUDA(cudaFree(p));
  }

  std::vector<float> out(size_t(g.N) * D);
  struct Config {
    int64_t cap, block;
    bool tf32;
  };
  const int64_t kNoCap = int64_t(1) << 40;
  std::vector<Config> configs;
  for (int64_t block : {int64_t(0), int64_t(1) << 17})
    for (int64_t cap : {int64_t(16), int64_t(32), int64_t(64), kNoCap})
      configs.push_back({cap, block, true});
  configs.push_back({64, int64_t(1) << 17, false});
  configs.push_back({32, 0, false});
  if (argc > 4)
    configs = {{std::atoll(argv[3]), std::atoll(argv[4]), true}};
  const bool diag = argc > 5 && std::string(argv[5]) == "diag";
  for (const Config &cfg : configs) {
    const int64_t cap = cfg.cap, block = cfg.block;
    const Chunks c = chunk(g, block ? edgesInChunkOrder(g, block) : order, cap);
    std::vector<float> segSize(c.segSize.begin(), c.segSize.end());
    // Each entry's weight: 1 / its segment's size (the mean as weights).
    std::vector<float> entryWeight(c.sumRows.size());
    for (size_t r = 0; r + 1 < c.sumPtr.size(); ++r)
      for (int64_t j = c.sumPtr[r]; j < c.sumPtr[r + 1]; ++j)
        entryWeight[j] = 1.f / segSize[r];
    int64_t *dPtr = toDevice(c.sumPtr), *dRows = toDevice(c.sumRows),
            *dDst = toDevice(c.dst), *dRel = toDevice(c.relPtr),
            *dType = toDevice(c.rowType);
    float *dSize = toDevice(segSize), *dWeight = toDevice(entryWeight);
    // The divisor as the generated RGCN reads it: a per-edge array (the
    // graph's rel_in_degree) at each chunk's first edge (sum_chunk_eid),
    // a dependent lookup a row instead of one per-chunk load.
    std::vector<float> edgeScale(g.E);
    std::vector<int64_t> firstEdge(c.dst.size());
    for (size_t r = 0; r + 1 < c.sumPtr.size(); ++r) {
      firstEdge[r] = c.edge[c.sumPtr[r]];
      for (int64_t j = c.sumPtr[r]; j < c.sumPtr[r + 1]; ++j)
        edgeScale[c.edge[j]] = segSize[r];
    }
    float *dEdgeScale = toDevice(edgeScale);
    int64_t *dFirstEdge = toDevice(firstEdge);
    {
      const bool tf32 = cfg.tf32;
      SegmentGemmArgs rootCall;
      rootCall.M = g.N;
      rootCall.K = rootCall.N = D;
      rootCall.X = dX;
      rootCall.W = dRoot;
      rootCall.Y = dOut;
      rootCall.bias = dBias;
      rootCall.tf32 = tf32;

      SegmentGemmArgs sum;
      sum.M = int64_t(c.dst.size());
      sum.K = sum.N = D;
      sum.X = dX;
      sum.sumPtr = dPtr;
      sum.sumRows = dRows;
      sum.W = dW;
      sum.numSlices = g.R;
      if (block)
        sum.rowType = dType;
      else
        sum.segmentPtr = dRel;
      sum.Y = dOut;
      sum.scatter = dDst;
      sum.epilogue = EpilogueOp::Div;
      sum.scale = dSize;
      sum.accumulate = sum.atomic = true;
      sum.tf32 = tf32;

      SegmentGemmArgs byEdge = sum;
      byEdge.scale = dEdgeScale;
      byEdge.scaleGather = dFirstEdge;

      SegmentGemmArgs weighted = sum;
      weighted.epilogue = EpilogueOp::None;
      weighted.scale = nullptr;
      weighted.sumWeights = dWeight;

      auto forward = [&] {
        CHECK_CUDA(launchSegmentGemm(rootCall, nullptr));
        CHECK_CUDA(launchSegmentGemm(sum, nullptr));
      };
      auto errorOf = [&](auto run) {
        run();
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaMemcpy(out.data(), dOut, out.size() * sizeof(float),
                              cudaMemcpyDeviceToHost));
        double e = 0;
        for (size_t i = 0; i < sample.size(); ++i)
          for (int64_t n = 0; n < D; ++n)
            e = std::max(e, std::fabs(out[sample[i] * D + n] - ref[i * D + n]));
        return e;
      };
      const double weightedErr = errorOf([&] {
        CHECK_CUDA(launchSegmentGemm(rootCall, nullptr));
        CHECK_CUDA(launchSegmentGemm(weighted, nullptr));
      });
      const double err = errorOf(forward);
      const float tFwd = timeMs(forward);
      const float tRoot =
          timeMs([&] { CHECK_CUDA(launchSegmentGemm(rootCall, nullptr)); });
      // The summed call alone, accumulating into whatever out holds.
      const float tSum =
          timeMs([&] { CHECK_CUDA(launchSegmentGemm(sum, nullptr)); });
      const float tWeighted =
          timeMs([&] { CHECK_CUDA(launchSegmentGemm(weighted, nullptr)); });
      const double byEdgeErr = errorOf([&] {
        CHECK_CUDA(launchSegmentGemm(rootCall, nullptr));
        CHECK_CUDA(launchSegmentGemm(byEdge, nullptr));
      });
      const float tByEdge =
          timeMs([&] { CHECK_CUDA(launchSegmentGemm(byEdge, nullptr)); });
      if (diag)
        diagnose(sum, c, g);
      std::printf("cap %-6lld block %-6lld tf32 %d  segments %lld chunks %lld"
                  "  root %.3f ms  summed %.3f ms  forward %.3f ms"
                  "  floor x%.2f  rel err %.2e  weighted %.3f ms"
                  "  rel err %.2e  summed, divisor by edge id %.3f ms"
                  "  rel err %.2e\n",
                  (long long)std::min<int64_t>(cap, 999999), (long long)block,
                  int(tf32), (long long)c.segments, (long long)c.dst.size(),
                  tRoot, tSum, tFwd, tFwd / floorMs, err / refScale, tWeighted,
                  weightedErr / refScale, tByEdge, byEdgeErr / refScale);
      std::fflush(stdout);
    }
    for (void *p : {(void *)dPtr, (void *)dRows, (void *)dDst, (void *)dRel,
                    (void *)dType, (void *)dSize, (void *)dWeight,
                    (void *)dEdgeScale, (void *)dFirstEdge})
      CHECK_CUDA(cudaFree(p));
  }
  return 0;
}
