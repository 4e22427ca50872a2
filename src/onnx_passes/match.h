// Small helpers the pattern-matching passes (the opset-23 fusions) share.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace torch2onnx::onnx_passes::match {

// v's producer when it is the default-domain operator `op`.
inline ir::Node* producer_of(ir::Value* v, const char* op) {
  ir::Node* p = v ? v->producer() : nullptr;
  return p && p->op_type() == op && p->domain().empty() ? p : nullptr;
}

// The integers of a 0-d or 1-D int32/int64 constant.
inline std::optional<std::vector<int64_t>> const_ints(ir::Value* v) {
  const ir::Tensor* t = v ? v->constant() : nullptr;
  if (!t || t->dims().size() > 1 || (t->dtype() != ir::DType::Int64 && t->dtype() != ir::DType::Int32))
    return std::nullopt;
  return t->to_int64s();
}

// The value of a one-element constant.
inline std::optional<double> scalar_constant(ir::Value* v) {
  const ir::Tensor* t = v ? v->constant() : nullptr;
  if (!t || t->numel() != 1) return std::nullopt;
  return t->to_doubles()[0];
}

}  // namespace torch2onnx::onnx_passes::match
