// Opset 23: interleaved rotary position embedding as GPT-J writes it, on
// x [B, S, H, d] (heads not yet moved before the sequence),
//
//   rotate_every_two(x) = stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2)
//   cos' = repeat_interleave(cos[:, :, None, :], 2, 3)     (cos [B, S, d/2])
//   y = x * cos' + rotate_every_two(x) * sin'
//
// and, for a partial rotary, cat(y of x[..., :d], x[..., d:], -1), becomes
// RotaryEmbedding(interleaved=1) on the 3-D view [B, S, H*D] of the whole
// tensor with num_heads H (the node's layout for heads after the sequence),
// rotary_embedding_dim d when partial, the per-token caches cos / sin
// (expanded to x's batch), and the result viewed back as [B, S, H, D].
// As lowered: the stack is Concat of two Unsqueezes at the new last axis,
// the flatten a Reshape to [0, 0, 0, -1] (or x's static shape), the
// repeat_interleave Reshape(Tile(Unsqueeze(c, [2, 4]), [1, 1, 1, 1, 2])).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx_passes/match.h"
#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

using match::const_ints;
using match::producer_of;

bool is_last_axis(int64_t axis, int64_t rank) { return axis == -1 || axis == rank - 1; }

// Slice(x, [start], [end >= size], [last axis], [2]): x and start.
std::optional<std::pair<ir::Value*, int64_t>> every_other(ir::Value* v) {
  ir::Node* s = producer_of(v, "Slice");
  if (!s || s->num_inputs() != 5) return std::nullopt;
  ir::Value* x = s->input(0);
  const int64_t rank = x->type().rank();
  const auto starts = const_ints(s->input(1)), ends = const_ints(s->input(2)), axes = const_ints(s->input(3)),
             steps = const_ints(s->input(4));
  if (rank != 4 || !starts || !ends || !axes || !steps || starts->size() != 1 || ends->size() != 1 ||
      axes->size() != 1 || steps->size() != 1 || !is_last_axis((*axes)[0], rank) || (*steps)[0] != 2)
    return std::nullopt;
  const int64_t d = x->type().static_dims()[3];
  if (d <= 0 || (*ends)[0] < d) return std::nullopt;
  return std::make_pair(x, (*starts)[0]);
}

// Unsqueeze(v, [last axis of the result (rank 5)]): v.
ir::Value* unsqueezed_last(ir::Value* v) {
  ir::Node* u = producer_of(v, "Unsqueeze");
  const auto axes = u ? const_ints(u->input(1)) : std::nullopt;
  return axes && axes->size() == 1 && ((*axes)[0] == 4 || (*axes)[0] == -1) ? u->input(0) : nullptr;
}

// A Reshape of a rank-5 value back to x's shape: to [0, 0, 0, -1] or x's static sizes.
bool flattens_last_two(const ir::Node* r, const ir::Value* x) {
  const auto to = const_ints(r->input(1));
  if (!to || to->size() != 4 || r->attr_i("allowzero", 0) != 0) return false;
  if (*to == std::vector<int64_t>{0, 0, 0, -1}) return true;
  return x->type().fully_static() && *to == x->type().static_dims();
}

// rotate_every_two(x): x [B, S, H, d] with d static and even.
ir::Value* rotated_every_two(ir::Value* v) {
  ir::Node* flat = producer_of(v, "Reshape");
  ir::Node* cat = flat ? producer_of(flat->input(0), "Concat") : nullptr;
  if (!cat || cat->num_inputs() != 2 || !is_last_axis(cat->attr_i("axis", 0), 5)) return nullptr;
  ir::Node* neg = producer_of(unsqueezed_last(cat->input(0)), "Neg");
  if (!neg) return nullptr;
  const auto odd = every_other(neg->input(0)), even = every_other(unsqueezed_last(cat->input(1)));
  if (!odd.has_value() || !even.has_value()) return nullptr;
  ir::Value* x = odd.value().first;
  if (even.value().first != x || odd.value().second != 1 || even.value().second != 0) return nullptr;
  const int64_t d = x->type().static_dims()[3];
  return d % 2 == 0 && flattens_last_two(flat, x) ? x : nullptr;
}

// repeat_interleave(c[:, :, None, :], 2, 3) with c [B, S, d/2]: c.
ir::Value* interleaved_cache(ir::Value* v, int64_t half) {
  ir::Node* flat = producer_of(v, "Reshape");
  ir::Node* tile = flat ? producer_of(flat->input(0), "Tile") : nullptr;
  if (!tile || const_ints(tile->input(1)) != std::vector<int64_t>{1, 1, 1, 1, 2}) return nullptr;
  // Unsqueeze(c, [2, 4]), or the same in two steps
  ir::Node* u = producer_of(tile->input(0), "Unsqueeze");
  const auto axes = u ? const_ints(u->input(1)) : std::nullopt;
  ir::Value* c = nullptr;
  if (axes == std::vector<int64_t>{2, 4}) {
    c = u->input(0);
  } else if (axes == std::vector<int64_t>{4} || axes == std::vector<int64_t>{-1}) {
    ir::Node* inner = producer_of(u->input(0), "Unsqueeze");
    if (inner && const_ints(inner->input(1)) == std::vector<int64_t>{2}) c = inner->input(0);
  }
  if (!c || c->type().rank() != 3 || c->type().static_dims()[2] != half) return nullptr;
  const auto to = const_ints(flat->input(1));
  return to && *to == std::vector<int64_t>{0, 0, 0, -1} && flat->attr_i("allowzero", 0) == 0 ? c : nullptr;
}

struct Match {
  ir::Value* x;  // [B, S, H, d]
  ir::Value *cos, *sin;  // [B or 1, S, d/2]
};

std::optional<Match> match(ir::Node* add) {
  if (add->op_type() != "Add" || !add->domain().empty() || add->num_inputs() != 2) return std::nullopt;
  for (int order = 0; order < 2; ++order) {
    ir::Node* direct = producer_of(add->input(order), "Mul");
    ir::Node* rotated = producer_of(add->input(1 - order), "Mul");
    if (!direct || !rotated || direct->num_inputs() != 2 || rotated->num_inputs() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      ir::Value* x = rotated_every_two(rotated->input(side));
      if (!x) continue;
      const int64_t half = x->type().static_dims()[3] / 2;
      ir::Value* sin = interleaved_cache(rotated->input(1 - side), half);
      ir::Value* cos_rep = direct->input(0) == x ? direct->input(1) : direct->input(1) == x ? direct->input(0) : nullptr;
      ir::Value* cos = cos_rep ? interleaved_cache(cos_rep, half) : nullptr;
      const ir::DType dt = x->type().dtype;
      if (!sin || !cos || cos->type().dtype != dt || sin->type().dtype != dt) continue;
      return Match{x, cos, sin};
    }
  }
  return std::nullopt;
}

// x = whole[..., :d] of a 4-D whole with static last dim D > d, the result
// read only as cat(result, whole[..., d:], -1): that Concat and whole.
std::optional<std::pair<ir::Node*, ir::Value*>> partial_of(ir::Value* x, ir::Value* result) {
  const auto head = match::last_axis_slice(x);
  if (!head || result->uses().size() != 1 || is_graph_output(result)) return std::nullopt;
  ir::Node* cat = result->uses()[0].user;
  if (!cat || cat->op_type() != "Concat" || !cat->domain().empty() || cat->num_inputs() != 2 ||
      cat->input(0) != result || !is_last_axis(cat->attr_i("axis", 0), 4))
    return std::nullopt;
  const auto tail = match::last_axis_slice(cat->input(1));
  ir::Value* whole = head->x;
  if (!tail || tail->x != whole || whole->type().rank() != 4) return std::nullopt;
  const int64_t big = whole->type().static_dims()[3], d = x->type().static_dims()[3];
  if (big <= d || head->start != 0 || head->end != d || tail->start != d || tail->end < big) return std::nullopt;
  return std::make_pair(cat, whole);
}

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* add : order) {
    auto m = match(add);
    if (!m) continue;
    ir::Value* result = add->output(0);
    ir::Value* whole = m->x;
    ir::Node* replaced = add;
    int64_t rotary_dim = 0;
    if (auto p = partial_of(m->x, result)) {
      replaced = p->first;
      whole = p->second;
      rotary_dim = m->x->type().static_dims()[3];
    }
    const std::vector<int64_t> dims = whole->type().static_dims();
    if (dims[2] <= 0 || dims[3] <= 0) continue;  // (the heads and head size are the node's attributes)
    ir::Value* out = replaced->output(0);
    g.set_insert_point(replaced);
    auto ints = [&](std::vector<int64_t> v) {
      ir::Value* c = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s(v)}})->output(0);
      c->set_type(ir::ValueType::tensor(ir::DType::Int64, {static_cast<int64_t>(v.size())}));
      return c;
    };
    const auto [cos, sin] = match::caches_per_row(g, whole, m->cos, m->sin);
    ir::Value* flat = g.create_node("Reshape", {whole, ints({0, 0, -1})}, 1)->output(0);
    flat->set_type(ir::ValueType::tensor(whole->type().dtype));
    ir::Attributes attrs{{"interleaved", int64_t{1}}, {"num_heads", dims[2]}};
    if (rotary_dim) attrs.emplace_back("rotary_embedding_dim", rotary_dim);
    ir::Node* rope = g.create_node("RotaryEmbedding", {flat, cos, sin}, 1, std::move(attrs));
    rope->output(0)->set_type(ir::ValueType::tensor(whole->type().dtype));
    ir::Value* y = g.create_node("Reshape", {rope->output(0), ints({0, 0, dims[2], dims[3]})}, 1)->output(0);
    g.set_insert_point(nullptr);
    y->set_type(out->type());
    replace_keeping_name(g, out, y);
    // (the matched nodes, now unread, go with eliminate_dead_code)
  }
}

}  // namespace

void fuse_interleaved_rotary(ir::Model& model, const PassContext& ctx) {
  if (ctx.options.opset_version < 23) return;
  run(*model.graph);
}

}  // namespace torch2onnx::onnx_passes
