// Matching attention written out (eager_attention.h).
#include "onnx_passes/eager_attention.h"

#include <cmath>
#include <limits>

#include "onnx_passes/mask_values.h"
#include "onnx_passes/match.h"

namespace torch2onnx::onnx_passes::eager_attention {

using match::producer_of;
using match::scalar_constant;
using sizes::constant_size;
using sizes::dim_of;
using sizes::elements;
using sizes::Size;
using sizes::sum;

namespace {

// x * c, c * x or x / c with c a one-element constant of rank <= x's: (x, the factor).
std::optional<std::pair<ir::Value*, double>> scaled(ir::Value* v) {
  ir::Node* n = v->producer();
  if (!n || !n->domain().empty() || n->num_inputs() != 2) return std::nullopt;
  auto factor = [&](int k) -> std::optional<double> {
    const ir::Tensor* t = n->input(k)->constant();
    const int64_t other = n->input(1 - k)->type().rank();
    if (!t || t->numel() != 1 || other < 0 || static_cast<int64_t>(t->dims().size()) > other) return std::nullopt;
    return scalar_constant(n->input(k));
  };
  if (n->op_type() == "Mul") {
    for (int k = 0; k < 2; ++k)
      if (auto c = factor(k)) return std::make_pair(n->input(1 - k), *c);
  } else if (n->op_type() == "Div") {
    if (auto c = factor(1); c && *c != 0) return std::make_pair(n->input(0), 1.0 / *c);
  }
  return std::nullopt;
}

// q @ k^T [* s] with k^T = Transpose(k, perm), q possibly scaled itself:
// every step read once; q and k as the product reads them.
std::optional<Scores> product(ir::Value* x, const std::vector<int64_t>& perm) {
  Scores s;
  if (auto m = scaled(x)) {
    if (!read_once(m->first)) return std::nullopt;
    s.scale = m->second;
    s.nodes += 1;
    x = m->first;
  }
  ir::Node* qk = producer_of(x, "MatMul");
  if (!qk) return std::nullopt;
  ir::Node* kt = producer_of(qk->input(1), "Transpose");
  if (!kt || !read_once(qk->input(1)) || kt->attr_ints("perm") != perm) return std::nullopt;
  s.k = kt->input(0);
  s.q = qk->input(0);
  if (auto m = scaled(s.q); m && read_once(s.q)) {
    s.q = m->first;
    s.scale *= m->second;
    s.nodes += 1;
  }
  return s;
}

bool masking_fill(ir::Value* fill, ir::DType dt) {
  const ir::Tensor* t = fill->constant();
  auto c = scalar_constant(fill);
  if (!t || !c || t->dtype() != dt || t->dims().size() > 0) return false;
  const std::optional<double> lowest = dtype_lowest(dt);
  return (lowest && *c == *lowest) || (std::isinf(*c) && *c < 0);
}

// Heads merged into the batch, as BLOOM's baddbmm path computes attention:
//   q3 = q.reshape(B*H, L, d), k3 = k.reshape(B*H, S, d), v3 = v.reshape(B*H, S, dv)
//   s = (alibi3 + (q3 @ k3^T) * a).view(B, H, L, S) + mask
//   y3 = softmax(s).view(B*H, L, S) @ v3
// -> Attention(q, k, v, alibi3.view(B, H, 1, S) + mask, scale=a).reshape(B*H, L, dv).


Size times(const Size& x, int64_t n) {
  Size out = constant_size(0);
  for (int64_t k = 0; k < n; ++k) out = sum(out, x);
  return out;
}

// q3 @ k3^T [* s] of merged heads: the scores of the unmerged q and k.
std::optional<Scores> merged_product(ir::Value* x, ir::DType, std::vector<Term>&) {
  std::optional<Scores> s = product(x, {0, 2, 1});
  if (!s || !(s->q = unmerged(s->q)) || !(s->k = unmerged(s->k))) return std::nullopt;
  s->nodes += 2;  // (the two reshapes)
  return s;
}

}  // namespace

std::optional<Scores> collect(ir::Value* s, ir::DType dt, std::vector<Term>& terms, Base base, int depth) {
  if (auto sc = base(s, dt, terms)) return sc;
  ir::Node* n = s->producer();
  if (!n || !n->domain().empty() || depth > 4) return std::nullopt;
  if (n->op_type() == "Add" && n->num_inputs() == 2) {
    for (int k = 0; k < 2; ++k) {
      const size_t mark = terms.size();
      if (!read_once(n->input(k))) continue;
      if (auto sc = collect(n->input(k), dt, terms, base, depth + 1)) {
        terms.push_back(Term{n->input(1 - k), nullptr, nullptr, 0, Size{}});
        return sc;
      }
      terms.resize(mark);
    }
  } else if (n->op_type() == "Where" && masking_fill(n->input(2), dt) && read_once(n->input(1)) &&
             n->input(0)->dtype() == ir::DType::Bool) {
    if (auto sc = collect(n->input(1), dt, terms, base, depth + 1)) {
      terms.push_back(Term{nullptr, n->input(0), n->input(2), 0, Size{}});
      return sc;
    }
  }
  return std::nullopt;
}

std::optional<Scores> plain_scores(ir::Value* x, ir::DType, std::vector<Term>&) { return product(x, {0, 1, 3, 2}); }

// x4 [B, H, T, D] from x3 = x4.reshape(B*H, T, D).
ir::Value* unmerged(ir::Value* x3) {
  ir::Node* r = producer_of(x3, "Reshape");
  if (!r || r->attr_i("allowzero", 0) != 0 || !read_once(x3) || x3->type().rank() != 3) return nullptr;
  ir::Value* x4 = r->input(0);
  const auto t = elements(r->input(1));
  const auto h = x4->type().rank() == 4 ? dim_of(x4, 1).value() : std::nullopt;
  if (!t || t->size() != 3 || !h || *h <= 0 || *h > 1024) return nullptr;
  const Size want[3] = {times(dim_of(x4, 0), *h), dim_of(x4, 2), dim_of(x4, 3)};
  int unknown = 0;
  for (int k = 0; k < 3; ++k) {
    if ((*t)[static_cast<size_t>(k)] == constant_size(-1)) ++unknown;
    else if ((*t)[static_cast<size_t>(k)] != want[k]) return nullptr;
  }
  return unknown <= 1 ? x4 : nullptr;
}

// s = x3.view(B, H, L, S) of merged-head scores under 3-D terms: the scores, the terms split as they are.
std::optional<Scores> merged_scores(ir::Value* x, ir::DType dt, std::vector<Term>& terms) {
  ir::Node* r = producer_of(x, "Reshape");
  if (!r || r->attr_i("allowzero", 0) != 0) return std::nullopt;
  ir::Value* x3 = r->input(0);
  if (x3->type().rank() != 3 || !read_once(x3)) return std::nullopt;
  std::vector<Term> inner;
  std::optional<Scores> sc = collect(x3, dt, inner, merged_product);
  const auto t = elements(r->input(1));
  if (!sc || !t || t->size() != 4) return std::nullopt;
  const auto h = dim_of(sc->q, 1).value();
  if (!h) return std::nullopt;
  const Size want[4] = {dim_of(sc->q, 0), constant_size(*h), dim_of(sc->q, 2), dim_of(sc->k, 2)};
  int unknown = 0;
  for (int k = 0; k < 4; ++k) {
    if ((*t)[static_cast<size_t>(k)] == constant_size(-1)) ++unknown;
    else if ((*t)[static_cast<size_t>(k)] != want[k]) return std::nullopt;
  }
  if (unknown > 1) return std::nullopt;
  const Size merged = times(want[0], *h);
  for (Term& term : inner) {
    if (!term.value || term.value->type().rank() != 3) return std::nullopt;
    const Size d0 = dim_of(term.value, 0);
    if (d0 == constant_size(1)) term.heads = -1;
    else if (d0 == merged) term.heads = *h, term.batch = want[0];
    else return std::nullopt;
    terms.push_back(term);
  }
  sc->nodes += 1;  // (the view)
  return sc;
}

}  // namespace torch2onnx::onnx_passes::eager_attention
