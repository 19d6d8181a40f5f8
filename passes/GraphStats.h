// The sizes of a graph that the cost-driven passes (linear operator
// reordering, compact materialization) and the FLOP report need. Passes see
// sizes, never the graph itself: they run ahead of time.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace hector::passes {

struct GraphStats {
  int64_t numNodes = 0;
  int64_t numEdges = 0;
  int64_t numPairs = 0; ///< unique (src node, edge type) pairs
  int64_t numEtypes = 0;
  int64_t numNtypes = 0;
  /// (destination, edge type) segments: the rows of a GEMM that runs once
  /// a segment's chunk (intra GemmInstance::perChunk). 0: unknown.
  int64_t numDstSegments = 0;
  /// Whether the cost model counts an edge statement `linear(x[e.dst],
  /// W[e.etype])` (or linear_t) once a (destination, relation) segment
  /// instead of once an edge: true where the lowering runs it per chunk,
  /// which it does only for a value nothing keeps (an inference program;
  /// passes/WeightedSegmentSums.h sets it there). Needs numDstSegments.
  bool dstProductsPerSegment = false;
  /// Values of the int hyper-parameters; unnamed ones take their defaults.
  std::map<std::string, int64_t> hypers;

  /// The am-shaped graph of the Hector paper (1.9M nodes, 7 types, 5.7M
  /// edges, 108 relations, compaction ratio 0.57), the default the compiler
  /// optimises for when no graph is named.
  static GraphStats amShape() {
    GraphStats s;
    s.numNodes = 1885136;
    s.numNtypes = 7;
    s.numEdges = 5668682;
    s.numEtypes = 108;
    s.numPairs = 3231149; // 0.57 * edges
    // The chunks of its (destination, relation) segments (at most 32
    // edges each) that docs/perf-notes.md section 56 counted: 1.83M.
    s.numDstSegments = 1830000;
    return s;
  }
};

} // namespace hector::passes
