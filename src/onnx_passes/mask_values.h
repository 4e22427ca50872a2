// What an attention mask's values may be, read from how it was computed
// (guard_attention_masks.cpp): a constant's values, a Where between
// constants, and selections / reshapes of those; anything else computed may
// hold any value.
#pragma once

#include <optional>

#include "ir/graph.h"

namespace torch2onnx::onnx_passes {

// A float dtype's lowest value (torch.finfo(dtype).min); none for other dtypes.
std::optional<double> dtype_lowest(ir::DType t);
// Whether m may hold its dtype's lowest value (torch.finfo.min: ONNX Runtime's
// Attention takes it for -inf). False for non-float masks.
bool mask_may_hold_lowest(ir::Value* m);
// Whether m may hold -inf.
bool mask_may_hold_minus_inf(ir::Value* m);

}  // namespace torch2onnx::onnx_passes
