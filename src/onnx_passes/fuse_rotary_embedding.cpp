// Opset 23: rotary position embedding as LLaMA-style code writes it,
//
//   x * cos + cat(-x[..., h:], x[..., :h]) * sin        (rotate_half)
//
// becomes one RotaryEmbedding node when x is [B, H, S, D] with static S and
// D = 2h, and cos and sin are constants of shape [..., S, D] (leading dims 1)
// whose two halves are equal (cos(cat(freqs, freqs)), as such code builds
// them). The node reads the first halves as its caches, at positions 0..S-1.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

ir::Node* producer_of(ir::Value* v, const char* op) {
  ir::Node* p = v ? v->producer() : nullptr;
  return p && p->op_type() == op && p->domain().empty() ? p : nullptr;
}

std::optional<std::vector<int64_t>> const_ints(const ir::Node* n, size_t i) {
  if (i >= n->num_inputs() || !n->input(i)) return std::nullopt;
  const ir::Tensor* t = n->input(i)->constant();
  if (!t) return std::nullopt;
  return t->to_int64s();
}

// Slice(x, [start], [end], [last axis], [1]) of a 4-D x: x and (start, end).
struct LastAxisSlice {
  ir::Value* x = nullptr;
  int64_t start = 0, end = 0;
};

std::optional<LastAxisSlice> last_axis_slice(ir::Value* v) {
  ir::Node* s = producer_of(v, "Slice");
  if (!s || s->num_inputs() < 4) return std::nullopt;
  auto starts = const_ints(s, 1), ends = const_ints(s, 2), axes = const_ints(s, 3);
  if (!starts || !ends || !axes || starts->size() != 1 || ends->size() != 1 || axes->size() != 1) return std::nullopt;
  if ((*axes)[0] != -1 && (*axes)[0] != 3) return std::nullopt;
  if (s->num_inputs() > 4 && s->input(4)) {
    auto steps = const_ints(s, 4);
    if (!steps || steps->size() != 1 || (*steps)[0] != 1) return std::nullopt;
  }
  return LastAxisSlice{s->input(0), (*starts)[0], (*ends)[0]};
}

// cat(-x[..., h:], x[..., :h]) along the last axis of a [B, H, S, D] x with
// static S and D = 2h: x.
ir::Value* rotated_half_of(ir::Value* v) {
  ir::Node* cat = producer_of(v, "Concat");
  if (!cat || cat->num_inputs() != 2) return nullptr;
  ir::Node* neg = producer_of(cat->input(0), "Neg");
  if (!neg) return nullptr;
  ir::Node* hi_slice = producer_of(neg->input(0), "Slice");
  ir::Value* x = hi_slice ? hi_slice->input(0) : nullptr;
  if (!x || x->type().rank() != 4) return nullptr;
  const std::vector<int64_t> dims = x->type().static_dims();
  const int64_t d = dims[3], h = d / 2;
  if (dims[2] <= 0 || d <= 0 || d % 2) return nullptr;
  const int64_t axis = cat->attr_i("axis", 0);
  if (axis != -1 && axis != 3) return nullptr;
  const auto hi = last_axis_slice(neg->input(0)), lo = last_axis_slice(cat->input(1));
  if (!hi || !lo || hi->x != x || lo->x != x || hi->start != h || hi->end < d || lo->start != 0 || lo->end != h)
    return nullptr;
  return x;
}

// A constant [..., S, D] (leading dims 1) whose halves along D are equal: its
// first halves as [S, D/2] values.
std::optional<std::vector<double>> half_cache(ir::Value* v, int64_t s, int64_t d, ir::DType dt) {
  const ir::Tensor* t = v ? v->constant() : nullptr;
  if (!t || t->dtype() != dt || t->rank() < 2 || t->rank() > 4) return std::nullopt;
  const auto& dims = t->dims();
  if (dims[dims.size() - 1] != d || dims[dims.size() - 2] != s) return std::nullopt;
  for (size_t k = 0; k + 2 < dims.size(); ++k)
    if (dims[k] != 1) return std::nullopt;
  const std::vector<double> all = t->to_doubles();
  const int64_t h = d / 2;
  std::vector<double> half;
  half.reserve(static_cast<size_t>(s * h));
  for (int64_t i = 0; i < s; ++i)
    for (int64_t j = 0; j < h; ++j) {
      const double a = all[static_cast<size_t>(i * d + j)], b = all[static_cast<size_t>(i * d + j + h)];
      if (a != b) return std::nullopt;
      half.push_back(a);
    }
  return half;
}

// Mul(x, c) or Mul(c, x) with c a constant: c (nullptr if not that form).
ir::Value* constant_factor(ir::Node* mul, ir::Value* x) {
  if (!mul || mul->num_inputs() != 2) return nullptr;
  if (mul->input(0) == x && mul->input(1)->constant()) return mul->input(1);
  if (mul->input(1) == x && mul->input(0)->constant()) return mul->input(0);
  return nullptr;
}

struct Match {
  ir::Value* x;
  std::vector<double> cos, sin;
  int64_t s, d;
};

std::optional<Match> match(ir::Node* add) {
  if (add->op_type() != "Add" || !add->domain().empty() || add->num_inputs() != 2) return std::nullopt;
  for (int order = 0; order < 2; ++order) {
    ir::Node* direct = producer_of(add->input(order), "Mul");
    ir::Node* rotated = producer_of(add->input(1 - order), "Mul");
    if (!direct || !rotated) continue;
    for (int side = 0; side < 2; ++side) {
      ir::Value* x = rotated_half_of(rotated->input(side));
      ir::Value* sin = rotated->input(1 - side);
      if (!x || !sin || !sin->constant()) continue;
      const std::vector<int64_t> dims = x->type().static_dims();
      const int64_t s = dims[2], d = dims[3];
      ir::Value* cos = constant_factor(direct, x);
      if (!cos) continue;
      const ir::DType dt = x->type().dtype;
      auto c = half_cache(cos, s, d, dt), sn = half_cache(sin, s, d, dt);
      if (!c || !sn) continue;
      return Match{x, std::move(*c), std::move(*sn), s, d};
    }
  }
  return std::nullopt;
}

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* add : order) {
    auto m = match(add);
    if (!m) continue;
    const ir::DType dt = m->x->type().dtype;
    const int64_t h = m->d / 2;
    g.set_insert_point(add);
    ir::Value* cos = g.add_initializer(add->name() + ".cos_cache", ir::Tensor::from_doubles(dt, m->cos, {m->s, h}));
    ir::Value* sin = g.add_initializer(add->name() + ".sin_cache", ir::Tensor::from_doubles(dt, m->sin, {m->s, h}));
    cos->set_derived(true);
    sin->set_derived(true);
    // position_ids [B, S]: 0..S-1 for every batch row.
    std::vector<int64_t> positions(static_cast<size_t>(m->s));
    for (int64_t i = 0; i < m->s; ++i) positions[static_cast<size_t>(i)] = i;
    ir::Value* row = g.add_initializer(add->name() + ".positions", ir::Tensor::from_int64s(positions, {1, m->s}));
    row->set_derived(true);
    ir::Value* shape = g.create_node("Shape", {m->x}, 1, {{"start", int64_t{0}}, {"end", int64_t{1}}})->output(0);
    ir::Value* seq = g.add_initializer(add->name() + ".seq_len", ir::Tensor::from_int64s({m->s}));
    seq->set_derived(true);
    ir::Value* bs = g.create_node("Concat", {shape, seq}, 1, {{"axis", int64_t{0}}})->output(0);
    ir::Value* ids = g.create_node("Expand", {row, bs}, 1)->output(0);
    ir::Node* rope = g.create_node("RotaryEmbedding", {m->x, cos, sin, ids}, 1);
    g.set_insert_point(nullptr);
    // The result keeps the Add's name (a graph output keeps its name).
    const std::string name = add->output(0)->name();
    g.rename_unique(add->output(0), name + "_unfused");
    g.rename(rope->output(0), name);
    add->output(0)->replace_all_uses_with(rope->output(0));
    // (the matched nodes, now unread, go with eliminate_dead_code)
  }
}

}  // namespace

void fuse_rotary_embedding(ir::Model& model, const PassContext& ctx) {
  if (ctx.options.opset_version < 23) return;
  run(*model.graph);
}

}  // namespace torch2onnx::onnx_passes
