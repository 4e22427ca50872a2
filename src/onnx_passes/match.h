// Small helpers the pattern-matching passes (the opset-23 fusions) share:
// matching, and building the per-token rotary caches.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
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

// Slice(x, [start], [end], [last axis of a 4-D x], [1]): x and (start, end).
struct LastAxisSlice {
  ir::Value* x = nullptr;
  int64_t start = 0, end = 0;
};

inline std::optional<LastAxisSlice> last_axis_slice(ir::Value* v) {
  ir::Node* s = producer_of(v, "Slice");
  if (!s || s->num_inputs() < 4) return std::nullopt;
  const auto starts = const_ints(s->input(1)), ends = const_ints(s->input(2)), axes = const_ints(s->input(3));
  if (!starts || !ends || !axes || starts->size() != 1 || ends->size() != 1 || axes->size() != 1) return std::nullopt;
  if ((*axes)[0] != -1 && (*axes)[0] != 3) return std::nullopt;
  if (s->num_inputs() > 4 && s->input(4)) {
    const auto steps = const_ints(s->input(4));
    if (!steps || steps->size() != 1 || (*steps)[0] != 1) return std::nullopt;
  }
  return LastAxisSlice{s->input(0), (*starts)[0], (*ends)[0]};
}

// Shape(x, start, end) at g's insert point, typed.
inline ir::Value* shape_slice(ir::Graph& g, ir::Value* x, int64_t start, int64_t end) {
  ir::Value* s = g.create_node("Shape", {x}, 1, {{"start", start}, {"end", end}})->output(0);
  s->set_type(ir::ValueType::tensor(ir::DType::Int64, {end - start}));
  return s;
}

// Per-token rotary caches [B or 1, S, h] (cos and sin) expanded to the batch
// of x (dim 0) as RotaryEmbedding wants them without position ids: positions
// shared by the batch give caches of batch 1. Built at g's insert point.
inline std::pair<ir::Value*, ir::Value*> caches_per_row(ir::Graph& g, ir::Value* x, ir::Value* cos, ir::Value* sin) {
  ir::Value* batch = shape_slice(g, x, 0, 1);
  ir::Value* ones = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s({1, 1})}})->output(0);
  ones->set_type(ir::ValueType::tensor(ir::DType::Int64, {2}));
  ir::Value* to = g.create_node("Concat", {batch, ones}, 1, {{"axis", int64_t{0}}})->output(0);
  to->set_type(ir::ValueType::tensor(ir::DType::Int64, {3}));
  auto per_row = [&](ir::Value* c) {
    ir::Value* e = g.create_node("Expand", {c, to}, 1)->output(0);
    e->set_type(ir::ValueType::tensor(c->type().dtype));
    return e;
  };
  return {per_row(cos), per_row(sin)};
}

}  // namespace torch2onnx::onnx_passes::match
