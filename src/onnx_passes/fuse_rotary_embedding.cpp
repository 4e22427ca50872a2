// Opset 23: rotary position embedding as LLaMA-style code writes it,
//
//   x * cos + cat(-x[..., h:], x[..., :h]) * sin        (rotate_half)
//
// becomes one RotaryEmbedding node when x is [B, H, S, D] with D = 2h and
// either
// - cos and sin are constants of shape [..., S, D] (leading dims 1, S static)
//   whose two halves are equal (cos(cat(freqs, freqs)), as such code builds
//   them): the node reads the first halves as its caches, at positions
//   0..S-1; or
// - cos and sin are computed at run time as transformers computes them from
//   the positions: unsqueeze(cos(cat(f, f, -1)) [* scale] [.to(dtype)], 1)
//   with f [B, S, h] (or [1, S, h]), and the same for sin of the same f: the
//   node reads cos(f) [* scale] and sin(f) [* scale], expanded to x's batch,
//   as per-token caches, without position ids (a KV-cache step at any
//   position, dynamic S).
// Partial rotary (Phi, GPT-NeoX's rotary_pct): cat(rope(x[..., :r]),
// x[..., r:]) is then the node on the whole of x with rotary_embedding_dim r.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx_passes/match.h"
#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

using match::producer_of;

using match::last_axis_slice;

// cat(-x[..., h:], x[..., :h]) along the last axis of a [B, H, S, D] x with
// static D = 2h: x.
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
  if (d <= 0 || d % 2) return nullptr;
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

// cos(cat(f, f, -1)) [* c] [cast], unsqueezed at axis 1, computed at run time
// (Cos or Sin as `op`): how to compute its first half from f.
struct HalfChain {
  ir::Value* f = nullptr;       // [B, S, h]
  ir::Value* scale = nullptr;   // a constant factor, if any
  std::optional<int64_t> cast;  // Cast's `to`, if any
};

std::optional<HalfChain> run_time_half(ir::Value* v, const char* op, int64_t h) {
  ir::Node* unsq = producer_of(v, "Unsqueeze");
  if (!unsq) return std::nullopt;
  const auto axes = unsq->num_inputs() > 1 ? match::const_ints(unsq->input(1))
                                           : std::optional<std::vector<int64_t>>(unsq->attr_ints("axes"));
  if (!axes || axes->size() != 1 || (*axes)[0] != 1) return std::nullopt;
  HalfChain c;
  ir::Value* cur = unsq->input(0);
  if (ir::Node* cast = producer_of(cur, "Cast")) {
    c.cast = cast->attr_i("to", 0);
    cur = cast->input(0);
  }
  if (ir::Node* mul = producer_of(cur, "Mul")) {
    const int side = mul->input(0)->constant() ? 0 : mul->input(1)->constant() ? 1 : -1;
    if (side < 0) return std::nullopt;
    const ir::Tensor* k = mul->input(side)->constant();
    if (k->numel() != 1) return std::nullopt;
    c.scale = mul->input(side);
    cur = mul->input(1 - side);
  }
  ir::Node* trig = producer_of(cur, op);
  ir::Node* cat = trig ? producer_of(trig->input(0), "Concat") : nullptr;
  if (!cat || cat->num_inputs() != 2 || cat->input(0) != cat->input(1)) return std::nullopt;
  ir::Value* f = cat->input(0);
  if (f->type().rank() != 3) return std::nullopt;
  const int64_t axis = cat->attr_i("axis", 0);
  if (axis != -1 && axis != 2) return std::nullopt;
  if (f->type().static_dims()[2] != h) return std::nullopt;
  c.f = f;
  return c;
}

// Both absent, or constants of one equal value (cos and sin scaled alike).
bool same_scale(ir::Value* a, ir::Value* b) {
  if (!a || !b) return a == b;
  const ir::Tensor *ta = a->constant(), *tb = b->constant();
  return ta->dtype() == tb->dtype() && ta->to_doubles() == tb->to_doubles();
}

struct Match {
  ir::Value* x;
  std::vector<double> cos, sin;  // constant caches [S, h] (run_time empty)
  int64_t s, d;
  std::optional<HalfChain> cos_chain, sin_chain;  // run-time caches
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
      if (!x || !sin || direct->num_inputs() != 2) continue;
      const std::vector<int64_t> dims = x->type().static_dims();
      const int64_t s = dims[2], d = dims[3];
      const ir::DType dt = x->type().dtype;
      if (sin->constant()) {
        ir::Value* cos = constant_factor(direct, x);
        if (!cos || s <= 0) continue;
        auto c = half_cache(cos, s, d, dt), sn = half_cache(sin, s, d, dt);
        if (!c || !sn) continue;
        return Match{x, std::move(*c), std::move(*sn), s, d, std::nullopt, std::nullopt};
      }
      ir::Value* cos = direct->input(0) == x ? direct->input(1) : direct->input(1) == x ? direct->input(0) : nullptr;
      auto cc = cos ? run_time_half(cos, "Cos", d / 2) : std::nullopt;
      auto sc = run_time_half(sin, "Sin", d / 2);
      if (!cc || !sc || cc->f != sc->f || !same_scale(cc->scale, sc->scale) || cc->cast != sc->cast) continue;
      if (cos->type().dtype != dt || sin->type().dtype != dt) continue;
      return Match{x, {}, {}, s, d, cc, sc};
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
    if (m->cos_chain) {
      // Per-token caches [B, S, h]: the chains on f instead of cat(f, f).
      auto half = [&](const HalfChain& c, const char* op) {
        ir::Value* v = g.create_node(op, {c.f}, 1)->output(0);
        v->set_type(c.f->type());
        if (c.scale) {
          v = g.create_node("Mul", {v, c.scale}, 1)->output(0);
          v->set_type(c.f->type());
        }
        if (c.cast) {
          ir::ValueType t = c.f->type();
          t.dtype = static_cast<ir::DType>(*c.cast);
          v = g.create_node("Cast", {v}, 1, {{"to", *c.cast}})->output(0);
          v->set_type(t);
        }
        return v;
      };
      const auto [cos, sin] = match::caches_per_row(g, m->x, half(*m->cos_chain, "Cos"), half(*m->sin_chain, "Sin"));
      ir::Node* rope = g.create_node("RotaryEmbedding", {m->x, cos, sin}, 1);
      rope->output(0)->set_type(add->output(0)->type());
      g.set_insert_point(nullptr);
      replace_keeping_name(g, add->output(0), rope->output(0));
      continue;
    }
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
    replace_keeping_name(g, add->output(0), rope->output(0));
    // (the matched nodes, now unread, go with eliminate_dead_code)
  }
}

// cat(RotaryEmbedding(x[..., :r], ...), x[..., r:], -1) of a 4-D x with
// static last dim D > r: RotaryEmbedding(x, ...) with rotary_embedding_dim r.
void fold_partial_rotary(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* cat : order) {
    if (cat->op_type() != "Concat" || !cat->domain().empty() || cat->num_inputs() != 2) continue;
    const int64_t axis = cat->attr_i("axis", 0);
    ir::Node* rope = producer_of(cat->input(0), "RotaryEmbedding");
    if ((axis != -1 && axis != 3) || !rope || rope->attr_i("rotary_embedding_dim", 0) != 0) continue;
    if (cat->input(0)->uses().size() != 1 || is_graph_output(cat->input(0))) continue;
    const auto rot = last_axis_slice(rope->input(0)), pass = last_axis_slice(cat->input(1));
    if (!rot || !pass || rot->x != pass->x || rot->x->type().rank() != 4) continue;
    const int64_t d = rot->x->type().static_dims()[3];
    if (d <= 0 || rot->start != 0 || rot->end <= 0 || rot->end >= d || pass->start != rot->end || pass->end < d)
      continue;
    // the leading sizes of x[..., :r] (the per-token caches' batch) are x's
    ir::Value* part = rope->input(0);
    const std::vector<ir::Use> uses = part->uses();
    for (const ir::Use& u : uses) {
      const int64_t end = u.user ? u.user->attr_i("end", 4) : 4;
      if (u.user && u.user->op_type() == "Shape" && u.user->domain().empty() && u.user->attr_i("start", 0) >= 0 &&
          end >= 0 && end <= 3)
        u.user->replace_input(u.index, rot->x);
    }
    g.set_insert_point(cat);
    std::vector<ir::Value*> ins = rope->inputs();
    ins[0] = rot->x;
    ir::Node* whole = g.create_node("RotaryEmbedding", ins, 1, rope->attributes());
    g.set_insert_point(nullptr);
    whole->set_attr(ir::Attribute("rotary_embedding_dim", rot->end));
    whole->output(0)->set_type(cat->output(0)->type());
    replace_keeping_name(g, cat->output(0), whole->output(0));
  }
}

}  // namespace

void fuse_rotary_embedding(ir::Model& model, const PassContext& ctx) {
  if (ctx.options.opset_version < 23) return;
  run(*model.graph);
  fold_partial_rotary(*model.graph);
}

}  // namespace torch2onnx::onnx_passes
