// PyTorch's fused transformer fast paths, recorded when nn.MultiheadAttention
// (need_weights=False) or nn.TransformerEncoderLayer run in eval mode under
// no_grad: aten::_native_multi_head_attention and
// aten::_transformer_encoder_layer_fwd, exported as the standard ops they
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

// aten::_native_multi_head_attention's computation.
Attention multi_head_attention(SymbolicContext& ctx, ir::Value* q_in, ir::Value* k_in, ir::Value* v_in,
                               int64_t embed_dim, int64_t heads, ir::Value* qkv_w, ir::Value* qkv_b,
                               ir::Value* proj_w, ir::Value* proj_b, ir::Value* mask, ir::DType dt) {
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
void native_multi_head_attention(SymbolicContext& ctx) {
  if (ctx.rank(0) != 3) ctx.fail("expected a 3-D query");
  const ir::DType dt = ctx.dtype(0);
  const int64_t embed_dim = ctx.i(3), heads = ctx.i(4);
  ir::Value* mask = ctx.none(9) ? nullptr : attention_mask(ctx, 9, mask_type_arg(ctx, 12));
  ir::Value* q = ctx.in(0);
  ir::Value* k = ctx.in(1);
  ir::Value* v = ctx.in(2);
  Attention a = multi_head_attention(ctx, q, k, v, embed_dim, heads, ctx.in(5), ctx.in(6), ctx.in(7), ctx.in(8), mask, dt);
  ctx.out(a.out, 0);
  const bool need_weights = ctx.b(10);
  if (!need_weights) return;  // PyTorch returns an undefined tensor
  ir::Value* w = a.weights;
  if (ctx.b(11)) w = helpers::reduce(ctx, "ReduceMean", w, {1}, false);
  ctx.out(w, 1);
}

// aten::_transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
//     proj_bias, use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2,
//     ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None, mask_type=None)
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
  x = multi_head_attention(ctx, x, x, x, embed_dim, heads, ctx.in(3), ctx.in(4), ctx.in(5), ctx.in(6), mask, dt).out;
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

}  // namespace

void register_transformer(Registry& r) {
  r.add("aten::_native_multi_head_attention", 9, native_multi_head_attention);
  r.add("aten::_transformer_encoder_layer_fwd", 9, transformer_encoder_layer);
}

}  // namespace torch2onnx::symbolics
