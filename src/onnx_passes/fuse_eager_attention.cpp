// Opset 23: attention written out, as transformers' eager paths write it
// (GPT-J's _attn, eager_attention_forward, T5's position-biased attention),
//
//   y = softmax(q @ k.transpose(-1, -2) * s [+ mask], dim=-1) @ v
//
// (the scale a Mul or Div by a one-element constant on the scores or on q,
// or none), becomes one Attention node: Attention(q, k, v[, mask], scale=s).
// fuse_attention_cache then takes a cache concatenated into k and v, as for
// scaled_dot_product_attention's node.
//
// Conditions: 4-D q, k, v of float or float16 with the same batch (proved),
// static head counts where k's and v's are q's or 1 (the matmuls' broadcast:
// Attention shares the one kv head), every intermediate value read by the
// chain alone (the weights are not wanted elsewhere), the softmax over the
// last axis, a positive scale. A mask of rank 2 to 4 of the scores' dtype
// whose leading dims are 1 or the scores' own; ONNX Runtime wants its last
// two dims to be the queries' and keys' lengths: unless proved, it is
// expanded to them. An eager softmax over a row that is all -inf gives NaN
// where Attention gives zeros: unless the mask provably holds no -inf (a
// choice between finite constants, as transformers' masks), a NaN is put
// back there (y + 0 * max(mask row)). guard_attention_masks handles the
// rows of torch.finfo.min.
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onnx_passes/eager_attention.h"
#include "onnx_passes/mask_values.h"
#include "onnx_passes/match.h"
#include "onnx_passes/passes.h"
#include "onnx_passes/sizes.h"

namespace torch2onnx::onnx_passes {
namespace {

using match::const_ints;
using match::producer_of;
using match::scalar_constant;
using sizes::constant_size;
using sizes::dim_of;
using sizes::elements;
using sizes::sum;
using sizes::Size;
using namespace eager_attention;

ir::Value* shape_part(ir::Graph& g, ir::Value* x, int64_t start, int64_t end) {
  ir::Value* s = g.create_node("Shape", {x}, 1, {{"start", start}, {"end", end}})->output(0);
  s->set_type(ir::ValueType::tensor(ir::DType::Int64));
  return s;
}

// x's dim `axis` as a [1] tensor: a constant when static, read from a graph
// input that carries its named dim (a read every layer's expansion shares,
// so that common subexpressions merge them), else Shape(x).
ir::Value* length_of(ir::Graph& g, ir::Value* x, int64_t axis) {
  const Size d = dim_of(x, axis);
  if (auto c = d.value()) {
    ir::Value* v = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s({*c})}})->output(0);
    v->set_type(ir::ValueType::tensor(ir::DType::Int64, {1}));
    return v;
  }
  if (!g.parent() && d.constant == 0 && d.atoms.size() == 1 && d.atoms[0].rfind("p:", 0) == 0) {
    const std::string name = d.atoms[0].substr(2);
    for (ir::Value* in : g.inputs()) {
      const ir::ValueType& t = in->type();
      if (t.kind != ir::ValueType::Kind::Tensor || !t.has_shape) continue;
      for (size_t a = 0; a < t.shape.size(); ++a)
        if (t.shape[a].is_symbolic() && t.shape[a].param == name)
          return shape_part(g, in, static_cast<int64_t>(a), static_cast<int64_t>(a) + 1);
    }
  }
  return shape_part(g, x, axis, axis + 1);
}

// mask expanded to [..., q length, k length] (its own leading dims).
ir::Value* expanded_mask(ir::Graph& g, ir::Value* mask, ir::Value* q, ir::Value* k) {
  const int64_t r = mask->type().rank();
  std::vector<ir::Value*> parts;
  if (r > 2) parts.push_back(shape_part(g, mask, 0, r - 2));
  parts.push_back(length_of(g, q, 2));
  parts.push_back(length_of(g, k, 2));
  ir::Value* to = g.create_node("Concat", parts, 1, {{"axis", int64_t{0}}})->output(0);
  to->set_type(ir::ValueType::tensor(ir::DType::Int64, {r}));
  ir::Value* out = g.create_node("Expand", {mask, to}, 1)->output(0);
  ir::ValueType t = ir::ValueType::tensor(mask->dtype());
  t.has_shape = true;
  t.shape.assign(static_cast<size_t>(r), ir::Dim{});
  out->set_type(t);
  return out;
}

// y + 0 * max(mask row): NaN where the row is all -inf, y elsewhere.
ir::Value* nan_where_all_minus_inf(ir::Graph& g, ir::Value* y, ir::Value* mask) {
  const ir::DType dt = y->dtype();
  ir::Value* axes = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s({-1})}})->output(0);
  axes->set_type(ir::ValueType::tensor(ir::DType::Int64, {1}));
  ir::Value* best = g.create_node("ReduceMax", {mask, axes}, 1, {{"keepdims", int64_t{1}}})->output(0);
  best->set_type(ir::ValueType::tensor(dt));
  ir::Value* zero = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_doubles(dt, {0.0}, {})}})->output(0);
  zero->set_type(ir::ValueType::tensor(dt, std::vector<int64_t>{}));
  ir::Value* nothing = g.create_node("Mul", {best, zero}, 1)->output(0);
  nothing->set_type(ir::ValueType::tensor(dt));
  ir::Value* out = g.create_node("Add", {y, nothing}, 1)->output(0);
  out->set_type(y->type());
  return out;
}

ir::ValueType of_rank(ir::DType dt, int64_t rank) {
  ir::ValueType t = ir::ValueType::tensor(dt);
  t.has_shape = true;
  t.shape.assign(static_cast<size_t>(rank), ir::Dim{});
  return t;
}

// A proved size as a type's dim: static, a named dynamic dim, or unknown.
ir::Dim as_dim(const Size& d) {
  if (auto v = d.value()) return ir::Dim::of(*v);
  if (d.constant == 0 && d.atoms.size() == 1 && d.atoms[0].rfind("p:", 0) == 0) return ir::Dim::named(d.atoms[0].substr(2));
  return ir::Dim{};
}

// The terms' sum, built at g's insert point (the nodes made go to `made`).
ir::Value* mask_of(ir::Graph& g, const std::vector<Term>& terms, ir::DType dt, std::vector<ir::Node*>& made) {
  ir::Value* total = nullptr;
  for (const Term& t : terms) {
    ir::Value* m = t.value;
    if (m && t.heads < 0) {  // [1, L, S] -> [1, 1, L, S]
      ir::Node* axes = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s({0})}});
      axes->output(0)->set_type(ir::ValueType::tensor(ir::DType::Int64, {1}));
      ir::Node* u = g.create_node("Unsqueeze", {m, axes->output(0)}, 1);
      u->output(0)->set_type(of_rank(dt, 4));
      made.insert(made.end(), {axes, u});
      m = u->output(0);
    } else if (m && t.heads > 0) {  // [B*H, L, S] -> [B, H, L, S]
      ir::Node* lead = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s({-1, t.heads})}});
      lead->output(0)->set_type(ir::ValueType::tensor(ir::DType::Int64, {2}));
      ir::Node* rest = g.create_node("Shape", {m}, 1, {{"start", int64_t{1}}, {"end", int64_t{3}}});
      rest->output(0)->set_type(ir::ValueType::tensor(ir::DType::Int64, {2}));
      ir::Node* to = g.create_node("Concat", {lead->output(0), rest->output(0)}, 1, {{"axis", int64_t{0}}});
      to->output(0)->set_type(ir::ValueType::tensor(ir::DType::Int64, {4}));
      ir::Node* r = g.create_node("Reshape", {m, to->output(0)}, 1);
      ir::ValueType type = of_rank(dt, 4);  // (what is proved of its dims, for the checks that follow)
      type.shape = {as_dim(t.batch), ir::Dim::of(t.heads), as_dim(dim_of(m, 1)), as_dim(dim_of(m, 2))};
      r->output(0)->set_type(type);
      made.insert(made.end(), {lead, rest, to, r});
      m = r->output(0);
    }
    if (!m) {
      ir::Node* zero = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_doubles(dt, {0.0}, {})}});
      zero->output(0)->set_type(ir::ValueType::tensor(dt, std::vector<int64_t>{}));
      ir::Node* w = g.create_node("Where", {t.cond, zero->output(0), t.fill}, 1);
      w->output(0)->set_type(of_rank(dt, std::max<int64_t>(t.cond->type().rank(), 0)));
      made.insert(made.end(), {zero, w});
      m = w->output(0);
    }
    if (total) {
      ir::Node* add = g.create_node("Add", {total, m}, 1);
      add->output(0)->set_type(of_rank(dt, std::max(total->type().rank(), m->type().rank())));
      made.push_back(add);
      m = add->output(0);
    }
    total = m;
  }
  return total;
}

// Whether x is a KV cache's concatenation along the sequence (directly or
// through repeat_kv's Unsqueeze / Expand / Reshape): fuse_attention_cache will
// make the node take the cache.
bool cache_concat(ir::Value* x) {
  if (ir::Node* r = producer_of(x, "Reshape"))
    if (ir::Node* e = producer_of(r->input(0), "Expand"))
      if (ir::Node* u = producer_of(e->input(0), "Unsqueeze")) x = u->input(0);
  ir::Node* cat = producer_of(x, "Concat");
  if (!cat || cat->num_inputs() != 2) return false;
  const int64_t axis = cat->attr_i("axis", 0);
  return axis == 2 || axis == -2;
}

// The nodes among `made` that stay nodes (not constants).
size_t computing(const std::vector<ir::Node*>& made) {
  size_t n = 0;
  for (const ir::Node* m : made) n += m->op_type() != "Constant";
  return n;
}

bool fuse(ir::Graph& g, ir::Node* mm) {
  if (mm->op_type() != "MatMul" || !mm->domain().empty() || mm->num_inputs() != 2) return false;
  ir::Value *probs = mm->input(0), *v = mm->input(1);
  // heads merged into the batch (3-D): the probabilities' and the values' merges undone
  const bool merged = probs->type().rank() == 3;
  ir::Node* merge = merged ? producer_of(probs, "Reshape") : nullptr;
  if (merged) {
    probs = unmerged(probs);
    v = unmerged(v);
    if (!probs || !v) return false;
  }
  ir::Node* sm = producer_of(probs, "Softmax");
  if (!sm || !read_once(probs)) return false;
  ir::Value* s = sm->input(0);
  const int64_t axis = sm->attr_i("axis", -1);
  if (s->type().rank() != 4 || (axis != -1 && axis != 3) || !read_once(s)) return false;
  const ir::DType dt = s->dtype();
  std::vector<Term> terms;
  const std::optional<Scores> sc = collect(s, dt, terms, merged ? merged_scores : plain_scores);
  if (!sc || !(sc->scale > 0) || !std::isfinite(sc->scale)) return false;
  ir::Value *q = sc->q, *k = sc->k;
  if (!attention_dtype(dt) || q->dtype() != dt || k->dtype() != dt || v->dtype() != dt ||
      mm->output(0)->dtype() != dt)
    return false;
  if (q->type().rank() != 4 || k->type().rank() != 4 || v->type().rank() != 4) return false;
  const Size batch = dim_of(q, 0);
  if (dim_of(k, 0) != batch || dim_of(v, 0) != batch || dim_of(k, 2) != dim_of(v, 2)) return false;
  const auto hq = dim_of(q, 1).value(), hk = dim_of(k, 1).value(), hv = dim_of(v, 1).value();
  if (!hq || !hk || !hv || *hk != *hv || *hq <= 0 || (*hk != *hq && *hk != 1)) return false;
  if (merged && *hk != *hq) return false;  // (the merged batch holds every head)
  for (const Term& t : terms) {
    const ir::Value* m = t.value ? t.value : t.cond;
    if ((t.value && m->dtype() != dt) || m->type().rank() < 0 || m->type().rank() > 4) return false;
  }
  // merged: the output merges its heads back, with the probabilities' merge when it reads [B*H, L, -1]
  ir::Value* merge_to = nullptr;
  if (merged) {
    const auto t = elements(merge->input(1));
    if (t && t->size() == 3 && (*t)[2] == constant_size(-1) && (*t)[0] != constant_size(-1) &&
        (*t)[1] != constant_size(-1))
      merge_to = merge->input(1);
  }
  const std::shared_ptr<const ir::Origin> was = g.current_origin();
  g.set_current_origin(mm->origin());
  g.set_insert_point(mm);
  std::vector<ir::Node*> made;
  ir::Value* mask = terms.empty() ? nullptr : mask_of(g, terms, dt, made);
  bool ok = true, expand = false;
  if (mask) {
    const int64_t r = mask->type().rank();
    ok = r >= 2;
    const Size lead[2] = {batch, constant_size(*hq)};
    for (int64_t a = 0; ok && a < r - 2; ++a) {  // (aligned with the scores' dim a + 4 - r)
      const Size d = dim_of(mask, a);
      ok = d == constant_size(1) || d == lead[a + 4 - r];
    }
    expand = dim_of(mask, r - 2) != dim_of(q, 2) || dim_of(mask, r - 1) != dim_of(k, 2);
  }
  // The node is worth it where it takes a KV cache (one node per layer with the cache inside), else when the
  // graph does not grow: an expanded mask, a guarded one (guard_attention_masks) or the NaN of an all -inf row
  // cost nodes per layer that the decomposed form does not have.
  const bool minus_inf = mask && mask_may_hold_minus_inf(mask);
  if (ok && !(cache_concat(k) && cache_concat(v))) {
    const size_t removed = 2 + static_cast<size_t>(sc->nodes) + terms.size() + (merged ? 2 : 0);
    const bool guarded = mask && mask_may_hold_lowest(mask) && !mask->constant() && !producer_of(mask, "Where");
    const size_t added = 1 + computing(made) + (expand ? 3 : 0) + (guarded ? 2 : 0) + (minus_inf ? 3 : 0) +
                         (merged ? (merge_to ? 1 : 3) : 0);
    ok = added <= removed;
  }
  if (!ok) {
    for (auto it = made.rbegin(); it != made.rend(); ++it) (*it)->destroy();
    g.set_insert_point(nullptr);
    g.set_current_origin(was);
    return false;
  }
  if (mask && expand) mask = expanded_mask(g, mask, q, k);
  std::vector<ir::Value*> ins{q, k, v};
  if (mask) ins.push_back(mask);
  ir::Node* att = g.create_node("Attention", ins, 1, {{"is_causal", int64_t{0}}, {"scale", sc->scale}});
  ir::Value* y = att->output(0);
  y->set_type(merged ? of_rank(dt, 4) : mm->output(0)->type());
  if (minus_inf) y = nan_where_all_minus_inf(g, y, mask);
  if (merged) {
    if (!merge_to) {
      ir::Value* lead = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s({-1})}})->output(0);
      lead->set_type(ir::ValueType::tensor(ir::DType::Int64, {1}));
      merge_to = g.create_node("Concat", {lead, shape_part(g, y, 2, 4)}, 1, {{"axis", int64_t{0}}})->output(0);
      merge_to->set_type(ir::ValueType::tensor(ir::DType::Int64, {3}));
    }
    y = g.create_node("Reshape", {y, merge_to}, 1)->output(0);
    y->set_type(mm->output(0)->type());
  }
  g.set_insert_point(nullptr);
  g.set_current_origin(was);
  replace_keeping_name(g, mm->output(0), y);
  return true;  // (the softmax chain, unread, goes with eliminate_dead_code)
}

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) run(*sub);
    fuse(g, n);
  }
}

}  // namespace

void fuse_eager_attention(ir::Model& model, const PassContext& ctx) {
  if (ctx.options.opset_version < 23) return;
  run(*model.graph);
}

}  // namespace torch2onnx::onnx_passes
