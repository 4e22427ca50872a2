// A permutation of a constant's axes, computed as the writer streams it (like
// BatchNorm-scaled weights): folding Transpose(W) (every Linear weight of a
// model exported with MatMul) keeps no transposed copy in memory.
#pragma once

#include <vector>

#include "ir/tensor.h"

namespace torch2onnx::onnx_passes {

// x with its axes permuted (`perm` holds x.rank() distinct axes): output axis
// i is input axis perm[i]. The result reads x on demand and holds it until
// then; releasing its pages releases x's.
ir::Tensor transposed(const ir::Tensor& x, const std::vector<int64_t>& perm);

}  // namespace torch2onnx::onnx_passes
