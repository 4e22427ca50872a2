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
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onnx_passes/match.h"
#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

using match::const_ints;
using match::producer_of;

// A size as a sum: a constant plus atoms, each a named dynamic dim ("p:"
// name) or a dim nothing more is known of ("v:" value, axis). Two sizes with
// the same constant and atoms are equal whatever the inputs.
struct Size {
  int64_t constant = 0;
  std::vector<std::string> atoms;  // sorted
  bool operator==(const Size& o) const { return constant == o.constant && atoms == o.atoms; }
  std::optional<int64_t> value() const { return atoms.empty() ? std::optional<int64_t>(constant) : std::nullopt; }
};

Size constant_size(int64_t v) { return Size{v, {}}; }

Size sum(Size a, const Size& b) {
  a.constant += b.constant;
  a.atoms.insert(a.atoms.end(), b.atoms.begin(), b.atoms.end());
  std::sort(a.atoms.begin(), a.atoms.end());
  return a;
}

// Ops whose output has their first input's shape.
bool keeps_shape(const ir::Node* n) {
  static const char* const kOps[] = {"RotaryEmbedding", "RMSNormalization", "LayerNormalization", "Identity",
                                     "Cast",            "Neg",              "Relu",               "Sigmoid", "Tanh"};
  for (const char* op : kOps)
    if (n->op_type() == op) return n->domain().empty();
  return false;
}

// Dim `axis` of x as a Size: static, named, a Concat's sum along its axis, a
// Transpose's input dim, or an atom.
std::optional<std::vector<Size>> elements(ir::Value* v, int depth = 0);

Size dim_of(const ir::Value* x, int64_t axis, int depth = 0) {
  const ir::ValueType& t = x->type();
  const int64_t rank = t.rank_varies ? -1 : t.rank();
  Size atom{0, {"v:" + std::to_string(reinterpret_cast<uintptr_t>(x)) + ":" + std::to_string(axis)}};
  if (axis < 0 || (rank >= 0 && axis >= rank)) return atom;
  if (rank >= 0) {
    const ir::Dim& d = t.shape[static_cast<size_t>(axis)];
    if (d.is_static()) return constant_size(d.value);
    // (ONNX shape inference's "unk__N" names say nothing about equality)
    if (d.is_symbolic() && d.param.rfind("unk__", 0) != 0) return Size{0, {"p:" + d.param}};
  }
  const ir::Node* n = x->producer();
  if (!n || depth > 16 || !n->domain().empty()) return atom;
  if (keeps_shape(n) && n->input(0)) return dim_of(n->input(0), axis, depth + 1);
  // Slice / Split keep the sizes of the axes they do not cut
  if ((n->op_type() == "Slice" || n->op_type() == "Split") && n->input(0) && rank >= 0) {
    std::optional<std::vector<int64_t>> cut;
    if (n->op_type() == "Split")
      cut = std::vector<int64_t>{n->attr_i("axis", 0)};
    else if (n->num_inputs() > 3 && n->input(3))
      cut = const_ints(n->input(3));
    if (!cut) return atom;
    for (int64_t c : *cut)
      if (c == axis || c + rank == axis) return atom;
    return dim_of(n->input(0), axis, depth + 1);
  }
  if (n->op_type() == "Transpose") {
    const std::vector<int64_t> perm = n->attr_ints("perm");
    if (axis >= static_cast<int64_t>(perm.size())) return atom;
    return dim_of(n->input(0), perm[static_cast<size_t>(axis)], depth + 1);
  }
  if (n->op_type() == "Reshape" && n->attr_i("allowzero", 0) == 0) {
    const auto to = elements(n->input(1));
    if (!to || axis >= static_cast<int64_t>(to->size())) return atom;
    const Size& e = (*to)[static_cast<size_t>(axis)];
    if (e == constant_size(0)) return dim_of(n->input(0), axis, depth + 1);
    if (!(e == constant_size(-1))) return e;
    // the -1: the input's sizes over the other ones, once the sizes they share cancel
    const int64_t in_rank = n->input(0)->type().rank_varies ? -1 : n->input(0)->type().rank();
    if (in_rank < 0) return atom;
    std::vector<Size> in;
    for (int64_t k = 0; k < in_rank; ++k) in.push_back(dim_of(n->input(0), k, depth + 1));
    int64_t num = 1, den = 1;
    for (size_t k = 0; k < to->size(); ++k) {
      if (static_cast<int64_t>(k) == axis) continue;
      Size o = (*to)[k];
      if (o == constant_size(0)) o = k < in.size() ? in[k] : atom;
      auto same = std::find(in.begin(), in.end(), o);
      if (same != in.end()) {
        in.erase(same);
      } else if (auto v = o.value(); v && *v > 0) {
        den *= *v;
      } else {
        return atom;
      }
    }
    for (const Size& i : in) {
      auto v = i.value();
      if (!v) return atom;
      num *= *v;
    }
    return den > 0 && num % den == 0 ? constant_size(num / den) : atom;
  }
  if (n->op_type() == "Concat" && rank >= 0) {
    int64_t a = n->attr_i("axis", 0);
    if (a < 0) a += rank;
    if (a != axis) return dim_of(n->input(0), axis, depth + 1);  // (the inputs agree off the axis)
    Size s;
    for (const ir::Value* in : n->inputs()) {
      if (!in) return atom;
      s = sum(s, dim_of(in, axis, depth + 1));
    }
    return s;
  }
  return atom;
}

// The elements of a 1-D int64 shape computation (Shape, Gather/Slice of it,
// Unsqueeze, Concat, constants, and the Abs(s) that expand's lowering puts
// around its sizes, or the Where(Equal(s, -1), 1, s) of other writers), or
// none if it is something else.
std::optional<std::vector<Size>> elements(ir::Value* v, int depth) {
  if (!v || depth > 12) return std::nullopt;
  if (auto c = const_ints(v)) {
    std::vector<Size> out;
    for (int64_t x : *c) out.push_back(constant_size(x));
    return out;
  }
  ir::Node* n = v->producer();
  if (!n || !n->domain().empty()) return std::nullopt;
  const std::string& op = n->op_type();
  if (op == "Shape") {
    ir::Value* x = n->input(0);
    const int64_t rank = x ? x->type().rank() : -1;
    if (rank < 0 || x->type().rank_varies) return std::nullopt;
    auto clamp = [&](int64_t k) { return std::max<int64_t>(0, std::min(rank, k < 0 ? k + rank : k)); };
    const int64_t start = clamp(n->attr_i("start", 0)), end = clamp(n->attr_i("end", rank));
    std::vector<Size> out;
    for (int64_t k = start; k < end; ++k) out.push_back(dim_of(x, k));
    return out;
  }
  if (op == "Concat") {
    if (n->attr_i("axis", 0) != 0) return std::nullopt;
    std::vector<Size> out;
    for (ir::Value* in : n->inputs()) {
      auto e = elements(in, depth + 1);
      if (!e) return std::nullopt;
      out.insert(out.end(), e->begin(), e->end());
    }
    return out;
  }
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Identity" ||
      (op == "Cast" && n->attr_i("to", 0) == static_cast<int64_t>(ir::DType::Int64))) {
    auto e = elements(n->input(0), depth + 1);  // (a 0-d or [1] value: its one element)
    if (!e || (op != "Identity" && op != "Cast" && e->size() != 1)) return std::nullopt;
    return e;
  }
  if (op == "Gather") {
    auto e = elements(n->input(0), depth + 1);
    auto idx = const_ints(n->input(1));
    if (!e || !idx || n->attr_i("axis", 0) != 0) return std::nullopt;
    std::vector<Size> out;
    const int64_t size = static_cast<int64_t>(e->size());
    for (int64_t i : *idx) {
      if (i < 0) i += size;
      if (i < 0 || i >= size) return std::nullopt;
      out.push_back((*e)[static_cast<size_t>(i)]);
    }
    return out;
  }
  if (op == "Slice") {
    auto e = elements(n->input(0), depth + 1);
    auto starts = const_ints(n->input(1)), ends = const_ints(n->input(2));
    if (!e || !starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
    if (n->num_inputs() > 3 && n->input(3)) {
      auto axes = const_ints(n->input(3));
      if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
    }
    if (n->num_inputs() > 4 && n->input(4)) {
      auto steps = const_ints(n->input(4));
      if (!steps || steps->size() != 1 || (*steps)[0] != 1) return std::nullopt;
    }
    const int64_t size = static_cast<int64_t>(e->size());
    auto clamp = [&](int64_t k) { return std::max<int64_t>(0, std::min(size, k < 0 ? k + size : k)); };
    const int64_t s = clamp((*starts)[0]), t = clamp((*ends)[0]);
    return std::vector<Size>(e->begin() + s, e->begin() + std::max(s, t));
  }
  if (op == "Where") {
    // Where(Equal(s, -1), 1, s): a size is never -1, so s (a constant -1 becomes 1).
    ir::Node* eq = producer_of(n->input(0), "Equal");
    auto minus_one = eq ? const_ints(eq->input(1)) : std::nullopt;
    auto one = const_ints(n->input(1));
    if (!eq || eq->input(0) != n->input(2) || !minus_one || minus_one->size() != 1 || (*minus_one)[0] != -1 ||
        !one || one->size() != 1 || (*one)[0] != 1)
      return std::nullopt;
    auto e = elements(n->input(2), depth + 1);
    if (!e) return std::nullopt;
    for (Size& r : *e)
      if (r == constant_size(-1)) r = constant_size(1);
    return e;
  }
  if (op == "Abs") {  // (expand's lowering: |-1| = 1, sizes unchanged)
    auto e = elements(n->input(0), depth + 1);
    if (!e) return std::nullopt;
    for (Size& r : *e) {
      if (r == constant_size(-1)) r = constant_size(1);
      else if (r.value() && *r.value() < 0) return std::nullopt;
    }
    return e;
  }
  if (op == "Add") {
    auto a = elements(n->input(0), depth + 1), b = elements(n->input(1), depth + 1);
    if (!a || !b || a->size() != 1 || b->size() != 1) return std::nullopt;
    return std::vector<Size>{sum((*a)[0], (*b)[0])};
  }
  return std::nullopt;
}

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

// Uses of `from` in nodes after `at` (by `position`) and graph outputs read `to`.
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
    if (p != position.end() && p->second > here) u.user->replace_input(u.index, to);
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
