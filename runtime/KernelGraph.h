// From the tensors of Graph::kernelArrays() to the rt::GraphArrays struct
// the generated kernels take: the one place where a generated torch op
// checks the graph it was handed before launching a kernel on it.
#pragma once

#include "runtime/GraphArrays.h"

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace hector::runtime {

/// Validates `arrays` (the Tensor[] a generated op takes, in rt::GraphArray
/// order, as Graph::kernelArrays() returns it) and returns the struct of
/// their data pointers and sizes. Checked: there are rt::kNumGraphArrays
/// arrays; each is a defined, contiguous, 1-d tensor of the right dtype
/// (float32 for in_degree, out_degree, rel_in_degree; int64 otherwise); all
/// are on one device; every length agrees with the sizes N = len(ntype),
/// E = len(src), P = len(pair_src), R = len(etype_ptr) - 1 and
/// T = len(ntype_ptr) - 1. The contents (sortedness, id ranges) are not
/// checked. Throws ArgumentTypeError (dtype, undefined tensor) or
/// ArgumentValueError (count, shape, layout, device) with a message that
/// starts with `argName` and names the array ("graph: array 'dst_ptr' has 5
/// entries, expected 31 (num_nodes + 1)"). The struct does not own the
/// data: `arrays` must outlive its use.
rt::GraphArrays graphArraysFromTensors(const std::vector<at::Tensor> &arrays,
                                       const std::string &argName);

} // namespace hector::runtime
