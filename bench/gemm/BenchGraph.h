// What the graph benchmarks of the GEMM template (bench_summed_rows,
// bench_attention_sums) share: the graph file dump_graph.py writes, edge
// orders by stable counting sorts, the chunks of the (destination,
// relation) segments that summed rows sum, host-to-device copies and the
// copy bandwidth that hector.bench's floors divide by.
#pragma once

#include "bench/gemm/BenchTiming.h"
#include "templates/gemm/SegmentGemm.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace bench_graph {

struct Graph {
  int64_t N = 0, E = 0, R = 0;
  std::vector<int64_t> src, dst, etype;
};

/// The graph of a dump_graph.py file (int64 N, E, R, then src[E], dst[E],
/// etype[E]); exits with a message when the file is short or missing.
inline Graph readGraph(const char *path) {
  Graph g;
  FILE *f = std::fopen(path, "rb");
  if (!f) {
    std::perror(path);
    std::exit(1);
  }
  int64_t head[3];
  bool ok = std::fread(head, 8, 3, f) == 3;
  g.N = head[0];
  g.E = head[1];
  g.R = head[2];
  for (auto *v : {&g.src, &g.dst, &g.etype}) {
    v->resize(g.E);
    ok = ok && std::fread(v->data(), 8, g.E, f) == size_t(g.E);
  }
  std::fclose(f);
  if (!ok) {
    std::fprintf(stderr, "%s: short graph file\n", path);
    std::exit(1);
  }
  return g;
}

/// `in` (edge ids) stably sorted by key[e] in [0, range).
inline std::vector<int64_t> countingSort(const std::vector<int64_t> &in,
                                         const std::vector<int64_t> &key,
                                         int64_t range) {
  std::vector<int64_t> start(range + 1, 0), out(in.size());
  for (int64_t e : in)
    ++start[key[e] + 1];
  for (int64_t i = 0; i < range; ++i)
    start[i + 1] += start[i];
  for (int64_t e : in)
    out[start[key[e]]++] = e;
  return out;
}

/// Edge ids sorted by (dst / block, etype, dst) (block 0: by (etype,
/// dst)), ties in id order.
inline std::vector<int64_t> edgesInChunkOrder(const Graph &g, int64_t block) {
  std::vector<int64_t> ids(g.E);
  for (int64_t e = 0; e < g.E; ++e)
    ids[e] = e;
  ids = countingSort(countingSort(ids, g.dst, g.N), g.etype, g.R);
  if (block == 0)
    return ids;
  std::vector<int64_t> dstBlock(g.E);
  for (int64_t e = 0; e < g.E; ++e)
    dstBlock[e] = g.dst[e] / block;
  return countingSort(ids, dstBlock, (g.N + block - 1) / block);
}

/// A summed-rows call's lists on the host: chunks of at most `cap` edges
/// of each (etype, dst) segment of `order`. Entry j of chunk c (sumPtr[c]
/// <= j < sumPtr[c+1]) is edge edge[j], whose source is sumRows[j].
struct Chunks {
  std::vector<int64_t> sumPtr{0}, sumRows, edge, dst, segSize, relPtr, rowType;
  int64_t segments = 0;
};

inline Chunks chunk(const Graph &g, const std::vector<int64_t> &order,
                    int64_t cap) {
  Chunks c;
  c.sumRows.reserve(g.E);
  c.edge.reserve(g.E);
  c.relPtr.assign(g.R + 1, 0);
  for (int64_t i = 0; i < g.E;) {
    const int64_t r = g.etype[order[i]], v = g.dst[order[i]];
    int64_t j = i;
    while (j < g.E && g.etype[order[j]] == r && g.dst[order[j]] == v)
      ++j;
    ++c.segments;
    for (int64_t a = i; a < j; a += cap) {
      const int64_t b = std::min(j, a + cap);
      for (int64_t k = a; k < b; ++k) {
        c.sumRows.push_back(g.src[order[k]]);
        c.edge.push_back(order[k]);
      }
      c.sumPtr.push_back(int64_t(c.sumRows.size()));
      c.dst.push_back(v);
      c.segSize.push_back(j - i);
      c.rowType.push_back(r);
      ++c.relPtr[r + 1];
    }
    i = j;
  }
  for (int64_t r = 0; r < g.R; ++r)
    c.relPtr[r + 1] += c.relPtr[r];
  return c;
}

/// Each edge's (source, relation) pair, pairs numbered in (etype, src)
/// order as the runtime numbers them; each pair's source, and the pairs
/// of relation r at [relPtr[r], relPtr[r+1]).
struct Pairs {
  std::vector<int64_t> ofEdge, src, relPtr;
};

inline Pairs pairsOf(const Graph &g) {
  Pairs p;
  std::vector<int64_t> ids(g.E);
  for (int64_t e = 0; e < g.E; ++e)
    ids[e] = e;
  ids = countingSort(countingSort(ids, g.src, g.N), g.etype, g.R);
  p.ofEdge.assign(g.E, -1);
  p.relPtr.assign(g.R + 1, 0);
  for (int64_t i = 0; i < g.E; ++i) {
    const int64_t e = ids[i];
    if (i == 0 || g.etype[ids[i - 1]] != g.etype[e] ||
        g.src[ids[i - 1]] != g.src[e]) {
      p.src.push_back(g.src[e]);
      ++p.relPtr[g.etype[e] + 1];
    }
    p.ofEdge[e] = int64_t(p.src.size()) - 1;
  }
  for (int64_t r = 0; r < g.R; ++r)
    p.relPtr[r + 1] += p.relPtr[r];
  return p;
}

/// The TF32 call out[i] = x[gather[i]] . w[s] (rows of D floats; w holds
/// one column of D weights a slice, rows [slicePtr[s], slicePtr[s+1]) use
/// slice s): an RGAT score, one scalar a row, from device pointers.
inline hector::templates::SegmentGemmArgs
gatheredDotCall(const float *x, int64_t D, int64_t rows, const int64_t *gather,
                const float *w, int64_t slices, const int64_t *slicePtr,
                float *out) {
  hector::templates::SegmentGemmArgs a;
  a.M = rows;
  a.K = D;
  a.N = 1;
  a.X = x;
  a.gather = gather;
  a.W = w;
  a.numSlices = slices;
  a.segmentPtr = slicePtr;
  a.Y = out;
  a.tf32 = true;
  return a;
}

/// A device copy of `v` (at least one element allocated).
template <typename T> T *toDevice(const std::vector<T> &v) {
  T *d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, std::max<size_t>(1, v.size()) * sizeof(T)));
  CHECK_CUDA(
      cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

/// Device-to-device copy bandwidth (bytes read + written per second) of a
/// 1 GiB buffer, as hector.bench.timing.copy_bandwidth measures it.
inline double copyBandwidth() {
  const size_t bytes = size_t(1) << 30;
  void *a = nullptr, *b = nullptr;
  CHECK_CUDA(cudaMalloc(&a, bytes));
  CHECK_CUDA(cudaMalloc(&b, bytes));
  CHECK_CUDA(cudaMemset(a, 0, bytes));
  const float ms = timeMs(
      [&] { CHECK_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDefault)); });
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  return 2.0 * double(bytes) / (ms * 1e-3);
}

} // namespace bench_graph
