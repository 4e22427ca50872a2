// Attention: aten::scaled_dot_product_attention (PyTorch 2.x; what
// nn.MultiheadAttention and nn.TransformerEncoderLayer record outside their
// fast paths) and PyTorch's fused transformer fast paths, recorded when
// nn.MultiheadAttention (need_weights=False) or nn.TransformerEncoderLayer run
// in eval mode under no_grad: aten::_native_multi_head_attention and
// aten::_transformer_encoder_layer_fwd. All exported as the standard ops they
// compute (MatMul, Softmax, LayerNormalization, ...).
#include <cmath>
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using helpers::linear;

struct Attention {
  ir::Value* out = nullptr;
  ir::Value* weights = nullptr;  // [B, H, T, S] attention probabilities
};

// [B, T, D] -> [B, H, T, dh]
ir::Value* split_heads(SymbolicContext& ctx, ir::Value* x, int64_t heads, int64_t dh) {
  ir::Value* r = helpers::reshape(ctx, x, {0, 0, heads, dh});
  return ctx.op("Transpose", {r}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
}

// A mask as PyTorch's masked softmax takes it (true = masked out), shaped to
// broadcast against the [B, H, T, S] scores.
ir::Value* attention_mask(SymbolicContext& ctx, size_t mask_idx, std::optional<int64_t> mask_type) {
  ir::Value* mask = ctx.in_as(mask_idx, ir::DType::Bool);  // non-bool masks are converted, as PyTorch does
  const int64_t rank = ctx.rank(mask_idx);
  if (mask_type && *mask_type == 1) {  // key padding mask [B, S] -> [B, 1, 1, S]
    if (rank != 2) ctx.fail("a key padding mask must be 2-D");
    return helpers::unsqueeze(ctx, mask, {1, 2});
  }
  return mask;  // [T, S] or already broadcastable to [B, H, T, S]
}

// A mask broadcast along the queries ([B, 1, 1, S], a key padding mask) is
// expanded to the queries' length: ONNX Runtime's Attention wants it there.
ir::Value* mask_for_queries(SymbolicContext& ctx, ir::Value* mask, ir::Value* q) {
  const int64_t r = mask->type().rank();
  const std::vector<int64_t> md = mask->type().static_dims(), qd = q->type().static_dims();
  if (r >= 2 && qd.size() == 4 && md[static_cast<size_t>(r - 2)] >= 0 && md[static_cast<size_t>(r - 2)] == qd[2])
    return mask;
  // [..., 1 or L, S] -> [..., L, S]
  ir::Value* mask_shape = ctx.op("Shape", {mask});
  std::vector<ir::Value*> shape{
      helpers::slice(ctx, mask_shape, {0}, {0}, {-2}, {1}),
      helpers::slice(ctx, ctx.op("Shape", {q}), {0}, {2}, {3}, {1}),
      helpers::slice(ctx, mask_shape, {0}, {-1}, {std::numeric_limits<int64_t>::max()}, {1})};
  return ctx.op("Expand", {mask, ctx.op("Concat", shape, {{"axis", int64_t{0}}})});
}

// Opset 23: softmax(q k^T * scale + mask) v as one Attention node, on
// [B, H, L, E] inputs. `allowed` is a bool mask (true = may attend),
// `bias` a float mask added to the scores (at most one of them). A row
// that may attend to nothing gives zeros, as PyTorch's safe softmax does.
ir::Value* fused_attention(SymbolicContext& ctx, ir::Value* q, ir::Value* k, ir::Value* v, ir::Value* allowed,
                           ir::Value* bias, bool is_causal, double scale, ir::DType dt) {
  // (whether a row may attend to any key is read from the mask before its expansion along the queries: the
  // expanded mask is read by the Attention node alone, so guard_attention_masks replaces it)
  std::vector<ir::Value*> ins{q, k, v};
  if (allowed) ins.push_back(mask_for_queries(ctx, allowed, q));
  if (bias) ins.push_back(mask_for_queries(ctx, bias, q));
  ir::Attributes attrs{{"is_causal", int64_t{is_causal}}};
  if (scale > 0) attrs.emplace_back("scale", scale);  // (none: ONNX's 1/sqrt(head size), at any size)
  ir::Value* y = ctx.op("Attention", ins, std::move(attrs));
  if (!allowed && !bias) return y;
  ir::Value* any_key;  // [..., L, 1]
  if (allowed) {
    any_key = helpers::reduce(ctx, "ReduceMax", allowed, {-1}, true);
  } else {
    ir::Value* best = helpers::reduce(ctx, "ReduceMax", bias, {-1}, true);
    any_key = ctx.op("Not", {helpers::equal(ctx, best, ctx.const_scalar(dt, -std::numeric_limits<double>::infinity()))});
  }
  return ctx.op("Where", {any_key, y, ctx.const_scalar(dt, 0.0)});
}

// aten::_native_multi_head_attention's computation; with `fused` (opset 23)
// the attention itself is one Attention node unless its weights are needed.
Attention multi_head_attention(SymbolicContext& ctx, ir::Value* q_in, ir::Value* k_in, ir::Value* v_in,
                               int64_t embed_dim, int64_t heads, ir::Value* qkv_w, ir::Value* qkv_b,
                               ir::Value* proj_w, ir::Value* proj_b, ir::Value* mask, ir::DType dt,
                               bool fused = false) {
  if (heads <= 0 || embed_dim % heads) ctx.fail("embed_dim must divide evenly by num_heads");
  const int64_t dh = embed_dim / heads;
  ir::Value *q, *k, *v;
  if (q_in == k_in && k_in == v_in) {
    // Self-attention: one projection, then split into q, k, v.
    auto parts = helpers::split(ctx, linear(ctx, q_in, qkv_w, qkv_b), {embed_dim, embed_dim, embed_dim}, 2);
    q = parts[0];
    k = parts[1];
    v = parts[2];
  } else {
    auto w = helpers::split(ctx, qkv_w, {embed_dim, embed_dim, embed_dim}, 0);
    auto b = helpers::split(ctx, qkv_b, {embed_dim, embed_dim, embed_dim}, 0);
    q = linear(ctx, q_in, w[0], b[0]);
    k = linear(ctx, k_in, w[1], b[1]);
    v = linear(ctx, v_in, w[2], b[2]);
  }
  if (fused) {
    ir::Value* allowed = mask ? ctx.op("Not", {mask}) : nullptr;
    ir::Value* y = fused_attention(ctx, split_heads(ctx, q, heads, dh), split_heads(ctx, k, heads, dh),
                                   split_heads(ctx, v, heads, dh), allowed, nullptr, false,
                                   1.0 / std::sqrt(static_cast<double>(dh)), dt);
    ir::Value* merged = ctx.op("Transpose", {y}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    return Attention{linear(ctx, helpers::reshape(ctx, merged, {0, 0, embed_dim}), proj_w, proj_b), nullptr};
  }
  // q is scaled before the product, in the input's dtype, as PyTorch does.
  q = ctx.op("Mul", {split_heads(ctx, q, heads, dh), ctx.const_scalar(dt, 1.0 / std::sqrt(static_cast<double>(dh)))});
  k = split_heads(ctx, k, heads, dh);
  v = split_heads(ctx, v, heads, dh);
  ir::Value* scores = ctx.op("MatMul", {q, ctx.op("Transpose", {k}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}})});
  ir::Value* probs;
  if (mask) {
    // Masked positions get -inf before the softmax and 0 after it (a fully
    // masked row is all zeros, not NaN, as in PyTorch's masked softmax).
    ir::Value* neg_inf = ctx.const_scalar(dt, -std::numeric_limits<double>::infinity());
    probs = ctx.op("Softmax", {ctx.op("Where", {mask, neg_inf, scores})}, {{"axis", int64_t{-1}}});
    probs = ctx.op("Where", {mask, ctx.const_scalar(dt, 0.0), probs});
  } else {
    probs = ctx.op("Softmax", {scores}, {{"axis", int64_t{-1}}});
  }
  ir::Value* ctx_heads = ctx.op("MatMul", {probs, v});  // [B, H, T, dh]
  ir::Value* merged = ctx.op("Transpose", {ctx_heads}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  merged = helpers::reshape(ctx, merged, {0, 0, embed_dim});
  return Attention{linear(ctx, merged, proj_w, proj_b), probs};
}

std::optional<int64_t> mask_type_arg(SymbolicContext& ctx, size_t idx) {
  return ctx.num_args() > idx ? ctx.opt_i(idx) : std::nullopt;
}

// aten::_native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
//     proj_weight, proj_bias, mask=None, need_weights=True, average_attn_weights=True, mask_type=None)
template <int Opset>
void native_multi_head_attention(SymbolicContext& ctx) {
  if (ctx.rank(0) != 3) ctx.fail("expected a 3-D query");
  const ir::DType dt = ctx.dtype(0);
  const int64_t embed_dim = ctx.i(3), heads = ctx.i(4);
  ir::Value* mask = ctx.none(9) ? nullptr : attention_mask(ctx, 9, mask_type_arg(ctx, 12));
  ir::Value* q = ctx.in(0);
  ir::Value* k = ctx.in(1);
  ir::Value* v = ctx.in(2);
  const bool need_weights = ctx.b(10);
  Attention a = multi_head_attention(ctx, q, k, v, embed_dim, heads, ctx.in(5), ctx.in(6), ctx.in(7), ctx.in(8), mask, dt,
                                     Opset >= 23 && !need_weights);
  ctx.out(a.out, 0);
  if (!need_weights) return;  // PyTorch returns an undefined tensor
  ir::Value* w = a.weights;
  if (ctx.b(11)) w = helpers::reduce(ctx, "ReduceMean", w, {1}, false);
  ctx.out(w, 1);
}

// aten::_transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
//     proj_bias, use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2,
//     ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None, mask_type=None)
template <int Opset>
void transformer_encoder_layer(SymbolicContext& ctx) {
  if (ctx.rank(0) != 3) ctx.fail("expected a 3-D (batched) input");
  const ir::DType dt = ctx.dtype(0);
  const int64_t embed_dim = ctx.i(1), heads = ctx.i(2);
  const bool use_gelu = ctx.b(7), norm_first = ctx.b(8);
  const double eps = ctx.f(9);
  auto norm = [&](ir::Value* x, size_t w, size_t b) {
    return helpers::layer_norm(ctx, x, 1, ctx.in(w), ctx.in(b), eps, dt, {embed_dim});
  };
  ir::Value* mask = ctx.none(18) ? nullptr : attention_mask(ctx, 18, mask_type_arg(ctx, 19));
  ir::Value* src = ctx.in(0);

  ir::Value* x = norm_first ? norm(src, 10, 11) : src;
  x = multi_head_attention(ctx, x, x, x, embed_dim, heads, ctx.in(3), ctx.in(4), ctx.in(5), ctx.in(6), mask, dt,
                           Opset >= 23).out;
  x = ctx.op("Add", {x, src});
  if (!norm_first) x = norm(x, 10, 11);
  ir::Value* residual = x;
  if (norm_first) x = norm(x, 12, 13);
  // Feed-forward: linear -> gelu (exact) or relu -> linear.
  ir::Value* h = linear(ctx, x, ctx.in(14), ctx.in(15));
  if (use_gelu) {
    ir::Value* erf = ctx.op("Erf", {ctx.op("Div", {h, ctx.const_scalar(dt, M_SQRT2)})});
    h = ctx.op("Mul", {ctx.op("Mul", {h, ctx.op("Add", {erf, ctx.const_scalar(dt, 1.0)})}), ctx.const_scalar(dt, 0.5)});
  } else {
    h = ctx.op("Relu", {h});
  }
  x = ctx.op("Add", {linear(ctx, h, ctx.in(16), ctx.in(17)), residual});
  if (!norm_first) x = norm(x, 12, 13);
  ctx.out(x);
}

// Softmax over the last axis where a row whose scores are all -inf (fully
// masked) gives zeros, not NaN: PyTorch's _safe_softmax, which
// scaled_dot_product_attention uses.
ir::Value* safe_softmax(SymbolicContext& ctx, ir::Value* scores, ir::DType dt) {
  ir::Value* probs = ctx.op("Softmax", {scores}, {{"axis", int64_t{-1}}});
  ir::Value* row_max = helpers::reduce(ctx, "ReduceMax", scores, {-1}, true);
  ir::Value* masked_row = helpers::equal(ctx, row_max, ctx.const_scalar(dt, -std::numeric_limits<double>::infinity()));
  return ctx.op("Where", {masked_row, ctx.const_scalar(dt, 0.0), probs});
}

// is_causal's mask [L, S]: query i sees keys 0..i (top-left aligned, as
// PyTorch's tril), from the run-time sizes.
ir::Value* causal_mask(SymbolicContext& ctx, ir::Value* q, ir::Value* k, int64_t q_rank, int64_t k_rank) {
  ir::Value* rows = helpers::arange(ctx, helpers::dim_size(ctx, q, q_rank - 2));
  ir::Value* cols = helpers::arange(ctx, helpers::dim_size(ctx, k, k_rank - 2));
  ir::Value* above = ctx.op("Greater", {helpers::unsqueeze(ctx, cols, {0}), helpers::unsqueeze(ctx, rows, {1})});
  return ctx.op("Not", {above});
}

// key/value [..., Hk, S, E] -> [..., Hk * groups, S, E], each head repeated
// `groups` times in place (repeat_interleave on dim -3), for enable_gqa.
ir::Value* repeat_heads(SymbolicContext& ctx, ir::Value* x, const std::vector<int64_t>& sizes, int64_t groups) {
  const int64_t rank = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> reps(static_cast<size_t>(rank + 1), 1);  // tile [..., Hk, 1, S, E] to [..., Hk, groups, S, E]
  reps[static_cast<size_t>(rank - 2)] = groups;
  ir::Value* tiled = ctx.op("Tile", {helpers::unsqueeze(ctx, x, {rank - 2}), ctx.const_ints(reps)});
  // Batch sizes (0: kept as they are) and S (-1) may change at run time.
  std::vector<int64_t> merged(sizes.begin(), sizes.end());
  for (int64_t d = 0; d < rank - 3; ++d) merged[static_cast<size_t>(d)] = 0;
  merged[static_cast<size_t>(rank - 3)] *= groups;
  merged[static_cast<size_t>(rank - 2)] = -1;
  return helpers::reshape(ctx, tiled, merged);
}

// aten::scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
//     is_causal=False, *, scale=None, enable_gqa=False)
void scaled_dot_product_attention(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  if (!ir::is_floating(dt)) ctx.fail("expected floating-point query, key and value");
  const int64_t q_rank = ctx.rank(0), k_rank = ctx.rank(1);
  if (q_rank < 2 || k_rank < 2 || ctx.rank(2) < 2) ctx.fail("query, key and value need at least 2 dimensions");
  const double dropout_p = ctx.none(4) ? 0.0 : ctx.f(4);
  const bool is_causal = !ctx.none(5) && ctx.b(5);
  const bool enable_gqa = ctx.num_args() > 7 && !ctx.none(7) && ctx.b(7);
  if (dropout_p < 0 || dropout_p > 1) ctx.fail("dropout_p must be between 0 and 1");
  if (is_causal && !ctx.none(3)) ctx.fail("an explicit attn_mask cannot be given with is_causal=True (as in PyTorch)");

  ir::Value* q = ctx.in(0);
  ir::Value* k = ctx.in(1);
  ir::Value* v = ctx.in(2);
  if (enable_gqa) {
    const auto& qs = ctx.static_sizes(0);
    const auto& ks = ctx.static_sizes(1);
    if (q_rank < 3 || k_rank < 3 || ctx.rank(2) != k_rank) ctx.fail("enable_gqa needs (..., heads, L, E) inputs");
    const int64_t hq = qs[q_rank - 3], hk = ks[k_rank - 3];
    if (hk <= 0 || hq % hk) ctx.fail("enable_gqa: the query's heads must be a multiple of the key's heads");
    if (hq != hk) {
      k = repeat_heads(ctx, k, ks, hq / hk);
      v = repeat_heads(ctx, v, ctx.static_sizes(2), hq / hk);
    }
  }

  // The scale is 1/sqrt(E) unless given; q and k are each scaled by its
  // square root before the product, as PyTorch's math kernel does.
  double scale = 0;
  if (auto given = ctx.num_args() > 6 ? ctx.opt_f(6) : std::nullopt) {
    scale = *given;
  } else {
    const int64_t e = ctx.static_dim(0, -1);
    if (e <= 0) ctx.fail("the query's last dimension is empty");
    scale = 1.0 / std::sqrt(static_cast<double>(e));
  }
  std::vector<int64_t> perm(static_cast<size_t>(k_rank));
  for (int64_t d = 0; d < k_rank; ++d) perm[static_cast<size_t>(d)] = d;
  std::swap(perm[static_cast<size_t>(k_rank - 1)], perm[static_cast<size_t>(k_rank - 2)]);
  ir::Value* kt = ctx.op("Transpose", {k}, {{"perm", perm}});
  ir::Value* scores;
  if (scale >= 0) {
    ir::Value* root = ctx.const_scalar(dt, std::sqrt(scale));
    scores = ctx.op("MatMul", {ctx.op("Mul", {q, root}), ctx.op("Mul", {kt, root})});
  } else {
    scores = ctx.op("Mul", {ctx.op("MatMul", {q, kt}), ctx.const_scalar(dt, scale)});
  }

  bool float_mask = false;
  ir::Value* masked = nullptr;  // bool, true = may attend
  if (is_causal) masked = causal_mask(ctx, q, k, q_rank, k_rank);
  if (!ctx.none(3)) {
    if (ctx.dtype(3) == ir::DType::Bool) {
      masked = ctx.in(3);
    } else {  // a float mask is added to the scores
      scores = ctx.op("Add", {scores, ctx.in_as(3, dt)});
      float_mask = true;
    }
  }
  if (masked) scores = ctx.op("Where", {masked, scores, ctx.const_scalar(dt, -std::numeric_limits<double>::infinity())});
  ir::Value* probs = masked || float_mask ? safe_softmax(ctx, scores, dt)
                                         : ctx.op("Softmax", {scores}, {{"axis", int64_t{-1}}});
  if (dropout_p > 0) {  // applied whatever the module's mode, as PyTorch does: random at run time
    if (dropout_p == 1) {
      probs = ctx.op("Mul", {probs, ctx.const_scalar(dt, 0.0)});
    } else {
      ir::Value* u = ctx.op("RandomUniformLike", {probs}, {{"dtype", static_cast<int64_t>(dt)}});
      ir::Value* keep = ctx.cast(ctx.op("Less", {u, ctx.const_scalar(dt, 1.0 - dropout_p)}), dt);
      probs = ctx.op("Mul", {probs, ctx.op("Mul", {keep, ctx.const_scalar(dt, 1.0 / (1.0 - dropout_p))})});
    }
  }
  ctx.out(ctx.op("MatMul", {probs, v}));
}

// Opset 23: one Attention node for [B, H, L, E] inputs without dropout
// (Attention has none); other forms as at opset 9.
void scaled_dot_product_attention_23(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  const double dropout_p = ctx.none(4) ? 0.0 : ctx.f(4);
  const bool is_causal = !ctx.none(5) && ctx.b(5);
  if (!ir::is_floating(dt) || ctx.rank(0) != 4 || ctx.rank(1) != 4 || ctx.rank(2) != 4 || dropout_p != 0 ||
      (is_causal && !ctx.none(3)))
    return scaled_dot_product_attention(ctx);
  // Head counts: with both known (the example's, the same for every input), what PyTorch accepts is checked here;
  // unknown (the example run stopped before this call: a mixture of experts' routing), the node shares the kv
  // heads among the query heads at run time as PyTorch does for every input it accepts (the same heads, one kv
  // head broadcast, or enable_gqa's groups of consecutive query heads).
  const auto hq = ctx.known_static_dim(0, 1), hk = ctx.known_static_dim(1, 1);
  const bool enable_gqa = ctx.num_args() > 7 && !ctx.none(7) && ctx.b(7);
  // (one kv head broadcast over the query heads, as multi-query attention calls sdpa without enable_gqa:
  // Attention's grouped-query sharing of that head)
  if (hq && hk && *hq != *hk && *hk != 1 && (!enable_gqa || *hk <= 0 || *hq % *hk))
    return scaled_dot_product_attention(ctx);
  double scale = 0;
  if (auto given = ctx.num_args() > 6 ? ctx.opt_f(6) : std::nullopt) {
    scale = *given;
    if (!(scale > 0)) return scaled_dot_product_attention(ctx);  // (ONNX Runtime takes positive scales only)
  } else {
    // (a dynamic or unknown head size: the Attention node's default scale, 1/sqrt(E) at run time)
    const auto e = ctx.known_static_dim(0, -1);
    if (e && *e <= 0) return scaled_dot_product_attention(ctx);
    scale = e ? 1.0 / std::sqrt(static_cast<double>(*e)) : 0.0;
  }
  ir::Value *allowed = nullptr, *bias = nullptr;
  if (!ctx.none(3)) {
    if (ctx.dtype(3) == ir::DType::Bool) allowed = ctx.in(3);
    else bias = ctx.in_as(3, dt);
  }
  ctx.out(fused_attention(ctx, ctx.in(0), ctx.in(1), ctx.in(2), allowed, bias, is_causal, scale, dt));
}

}  // namespace

void register_transformer(Registry& r) {
  r.add("aten::scaled_dot_product_attention", 9, scaled_dot_product_attention);
  r.add("aten::scaled_dot_product_attention", 23, scaled_dot_product_attention_23);
  r.add("aten::_native_multi_head_attention", 9, native_multi_head_attention<9>);
  r.add("aten::_native_multi_head_attention", 23, native_multi_head_attention<23>);
  r.add("aten::_transformer_encoder_layer_fwd", 9, transformer_encoder_layer<9>);
  r.add("aten::_transformer_encoder_layer_fwd", 23, transformer_encoder_layer<23>);
}

}  // namespace torch2onnx::symbolics
