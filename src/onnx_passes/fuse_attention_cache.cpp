// Opset 23: a decoder's attention over a KV cache as transformers writes it,
//
//   k = cat(past_key, k_new, dim=2);  v = cat(past_value, v_new, dim=2)
//   k = repeat_kv(k, n); v = repeat_kv(v, n)        (grouped-query attention)
//   y = scaled_dot_product_attention(q, k, v, mask)
//
// where repeat_kv is x[:, :, None].expand(b, h, n, t, d).reshape(b, h * n, t, d),
// converts to an Attention node reading the concatenations; here that node
// takes k_new / v_new with past_key / past_value and returns the
// concatenations as its present_key / present_value outputs (the cache
// update inside the op, and no repeated K/V: Attention broadcasts kv heads
// over query heads itself). The returned cache (graph outputs, later readers)
// reads present_key / present_value.
//
// Conditions: 4-D Q/K/V, no past inputs yet, only Y read, is_causal 0 (with a
// past, the causal mask's alignment is ONNX Runtime's choice); the Concats
// along axis 2 of two inputs; the repeat is matched exactly: Unsqueeze at 2,
// Expand to [b, h, n, t, d] and Reshape to [b, h*n, t, d], where each size
// is proved to be the cache's own (a constant, or a Shape element of a value
// whose dim is the same static size, the same value's dim, or the same named
// dynamic dim).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onnx_passes/match.h"
#include "onnx_passes/passes.h"
#include "onnx_passes/sizes.h"

namespace torch2onnx::onnx_passes {
namespace {

using match::const_ints;
using match::producer_of;
using sizes::constant_size;
using sizes::dim_of;
using sizes::elements;
using sizes::Size;

// x = repeat_kv(base, n): base and n (n = 1, base = x, when it is not a repeat).
struct Repeat {
  ir::Value* base;
  int64_t n;
};

Repeat repeated(ir::Value* x) {
  const Repeat none{x, 1};
  ir::Node* reshape = producer_of(x, "Reshape");
  ir::Node* expand = reshape ? producer_of(reshape->input(0), "Expand") : nullptr;
  ir::Node* unsq = expand ? producer_of(expand->input(0), "Unsqueeze") : nullptr;
  if (!unsq || reshape->attr_i("allowzero", 0) != 0) return none;
  auto axes = const_ints(unsq->input(1));
  ir::Value* base = unsq->input(0);
  if (!axes || axes->size() != 1 || ((*axes)[0] != 2 && (*axes)[0] != -3) || base->type().rank() != 4) return none;
  const auto to5 = elements(expand->input(1)), to4 = elements(reshape->input(1));
  const auto h = dim_of(base, 1).value();
  if (!to5 || !to4 || to5->size() != 5 || to4->size() != 4 || !h || *h <= 0) return none;
  const auto n = (*to5)[2].value();
  if (!n || *n < 1) return none;
  // expand: [b, h, n, t, d] (a 1 keeps the cache's size)
  const int64_t base_axis[5] = {0, 1, -1, 2, 3};
  for (int k : {0, 1, 3, 4}) {
    const Size& r = (*to5)[static_cast<size_t>(k)];
    if (!(r == constant_size(1)) && !(r == dim_of(base, base_axis[k]))) return none;
  }
  // reshape: [b (or 0), h*n, t, d], one of them possibly -1 when the others are proved
  bool unknown = false;
  for (int k = 0; k < 4; ++k) {
    const Size& r = (*to4)[static_cast<size_t>(k)];
    bool ok = false;
    if (r == constant_size(-1) && !unknown) {
      unknown = ok = true;
    } else if (k == 0) {
      ok = r == constant_size(0) || r == dim_of(base, 0);
    } else if (k == 1) {
      ok = r == constant_size(*h * *n);
    } else {
      ok = r == dim_of(base, k);
    }
    if (!ok) return none;
  }
  return Repeat{base, *n};
}

// cat(past, new, dim=2) of 4-D values: (past, new).
std::optional<std::pair<ir::Value*, ir::Value*>> cache_concat(ir::Value* x) {
  ir::Node* cat = producer_of(x, "Concat");
  if (!cat || cat->num_inputs() != 2 || x->type().rank() != 4) return std::nullopt;
  const int64_t axis = cat->attr_i("axis", 0);
  if (axis != 2 && axis != -2) return std::nullopt;
  return std::make_pair(cat->input(0), cat->input(1));
}

bool only_first_output_read(const ir::Node* n) {
  for (size_t i = 1; i < n->outputs().size(); ++i)
    if (!n->output(i)->uses().empty()) return false;
  return true;
}

// Whether every output of n is read by graph outputs alone.
bool only_returned(const ir::Node* n) {
  for (const ir::Value* o : n->outputs())
    for (const ir::Use& u : o->uses())
      if (u.user) return false;
  return true;
}

// Uses of `from` in nodes after `at` (by `position`) and graph outputs read `to`. A node before `at` whose
// outputs are only returned (a sliding window's cache, x[:, :, -(window - 1):], written where the cache was
// concatenated) is computed again at the end from `to`, so that the concatenation is not kept for it.
void redirect_later_uses(ir::Graph& g, ir::Value* from, ir::Value* to, const ir::Node* at,
                         const std::map<const ir::Node*, size_t>& position) {
  const size_t here = position.at(at);
  const std::vector<ir::Use> uses = from->uses();
  bool output = false;
  for (const ir::Use& u : uses) {
    if (!u.user) {
      u.graph_output->set_output(u.index, to);
      output = true;
      continue;
    }
    auto p = position.find(u.user);
    if (p != position.end() && p->second > here) {
      u.user->replace_input(u.index, to);
    } else if (p != position.end() && only_returned(u.user) && u.user->subgraphs().empty()) {
      std::vector<ir::Value*> ins(u.user->inputs().begin(), u.user->inputs().end());
      ins[u.index] = to;
      ir::Node* again = g.create_node(u.user->op_type(), ins, u.user->num_outputs(), u.user->attributes(),
                                      u.user->domain());  // (at the end of the graph)
      again->set_origin(u.user->origin());
      for (size_t i = 0; i < u.user->num_outputs(); ++i) {
        again->output(i)->set_type(u.user->output(i)->type());
        replace_keeping_name(g, u.user->output(i), again->output(i));
      }
    }
  }
  if (output) {  // the returned cache keeps its name
    const std::string name = from->name();
    g.rename_unique(from, name + "_unfused");
    g.rename(to, name);
  }
}

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  std::map<const ir::Node*, size_t> position;
  for (const auto& n : g.nodes()) {
    position.emplace(n.get(), order.size());
    order.push_back(n.get());
  }
  for (ir::Node* att : order) {
    if (att->op_type() != "Attention" || !att->domain().empty() || att->num_inputs() < 3 || att->num_inputs() > 4)
      continue;
    if (att->attr_i("is_causal", 0) != 0 || !only_first_output_read(att)) continue;
    ir::Value* q = att->input(0);
    if (!q || q->type().rank() != 4) continue;
    const Repeat rk = repeated(att->input(1)), rv = repeated(att->input(2));
    if (rk.n != rv.n) continue;
    auto kc = cache_concat(rk.base), vc = cache_concat(rv.base);
    if (!kc || !vc) continue;
    const auto hq = dim_of(q, 1).value(), hkv = dim_of(rk.base, 1).value(), hv = dim_of(rv.base, 1).value();
    // (the node shares each of the repeated kv heads among hq / (hkv * n) query heads: the same kv head
    // for a query head as sharing the hkv unrepeated ones among hq / hkv)
    if (!hq || !hkv || !hv || *hkv != *hv || *hkv <= 0 || *hq % (*hkv * rk.n) != 0) continue;
    g.set_insert_point(att);
    ir::Node* fused = g.create_node(
        "Attention", {q, kc->second, vc->second, att->num_inputs() > 3 ? att->input(3) : nullptr, kc->first, vc->first},
        3);
    g.set_insert_point(nullptr);
    for (const ir::Attribute& a : att->attributes()) fused->set_attr(a);
    fused->output(0)->set_type(att->output(0)->type());
    fused->output(1)->set_type(rk.base->type());
    fused->output(2)->set_type(rv.base->type());
    position.emplace(fused, position.at(att));
    replace_keeping_name(g, att->output(0), fused->output(0));
    redirect_later_uses(g, rk.base, fused->output(1), att, position);
    redirect_later_uses(g, rv.base, fused->output(2), att, position);
    // (the old node, the repeats and the Concats, once unread, go with eliminate_dead_code)
  }
}

}  // namespace

void fuse_attention_cache(ir::Model& model, const PassContext& ctx) {
  if (ctx.options.opset_version < 23) return;
  run(*model.graph);
}

}  // namespace torch2onnx::onnx_passes
