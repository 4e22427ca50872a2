// ONNX's own type and shape inference for one node: the types of values
// the example run never computed (in a branch it did not take), on demand.
#pragma once

#include <cstdint>

#include "torch2onnx/ir/graph.h"

namespace torch2onnx::serialize {

// Gives `v` the type ONNX's inference finds for it (its producer's inputs
// first, as deep as needed), where `v` has no shape yet. Returns whether `v`
// has a shape afterwards. Never throws: what inference cannot tell stays unknown.
bool infer_value_type(ir::Value* v, int64_t opset);

}  // namespace torch2onnx::serialize
