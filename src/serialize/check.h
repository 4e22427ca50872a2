// The ONNX checker (full: with strict shape inference), and shape inference
// whose results go back into the IR as value types.
#pragma once

#include "ir/model.h"

namespace torch2onnx::serialize {

// Runs onnx::checker::check_model and strict, type-checking shape inference
// on the model (large weights stand in as typed inputs, so no weight is
// copied); throws Error(Check) with ONNX's message on failure. On success the
// inferred types are written back into the IR's values.
void check_and_infer(ir::Model& model);

// Shape inference only (lenient), results written back into the IR. Used by
// passes that fold shapes.
void infer_types(ir::Model& model);

}  // namespace torch2onnx::serialize
