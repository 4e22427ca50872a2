// ONNX operators placed in a model with torch.onnx.ops (PyTorch 2.8+; issue
// 41): torch.export records them as onnx::Attention.opset23,
// onnx::RotaryEmbedding.opset23, onnx_symbolic::_symbolic and
// onnx_symbolic::_symbolic_multi_out; torch.jit.trace as onnx::Attention and
// onnx::RotaryEmbedding (it cannot trace the symbolic ones: "unsupported input
// list type: Tensor?"). Each becomes the ONNX node it names, its attributes,
// dtypes, domain and version carried as given.
//
// Arguments are read by name: a .pt2 read where the operators are not
// registered (the command line) lists only what the call passed.
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

// The index of the argument named `name`, or (where no argument has a name)
// the one at `position` of the operator's schema.
std::optional<size_t> find(const SymbolicContext& ctx, const char* name, size_t position) {
  bool named = false;
  for (size_t k = 0; k < ctx.num_args(); ++k) {
    if (ctx.arg(k).name == name) return k;
    named = named || !ctx.arg(k).name.empty();
  }
  if (!named && position < ctx.num_args()) return position;
  return std::nullopt;
}

size_t required(const SymbolicContext& ctx, const char* name, size_t position) {
  auto k = find(ctx, name, position);
  if (!k) ctx.fail(std::string("has no argument '") + name + "'");
  return *k;
}

Value* opt_tensor(SymbolicContext& ctx, const char* name, size_t position) {
  auto k = find(ctx, name, position);
  return k ? ctx.opt_in(*k) : nullptr;
}

std::optional<int64_t> opt_int(const SymbolicContext& ctx, const char* name, size_t position) {
  auto k = find(ctx, name, position);
  return k ? ctx.opt_i(*k) : std::nullopt;
}

std::optional<double> opt_float(const SymbolicContext& ctx, const char* name, size_t position) {
  auto k = find(ctx, name, position);
  return k ? ctx.opt_f(*k) : std::nullopt;
}

// Shape(v)[start:end] as a 1-D int64 value.
Value* dims(SymbolicContext& ctx, Value* v, int64_t start, int64_t end) {
  return helpers::slice(ctx, ctx.op("Shape", {v}), {0}, {start}, {end});
}

// torch.onnx.ops.attention's causal mask (its reference and sdpa's): query i
// sees keys j <= i of the [q_len, total_len] scores, aligned to the top left.
Value* causal_mask(SymbolicContext& ctx, Value* q4, Value* k4) {
  Value* rows = helpers::unsqueeze(ctx, helpers::arange(ctx, helpers::dim_size(ctx, q4, 2)), {1});
  Value* cols = helpers::unsqueeze(ctx, helpers::arange(ctx, helpers::dim_size(ctx, k4, 2)), {0});
  return ctx.op("LessOrEqual", {cols, rows});
}

struct AttentionArgs {
  Value *q, *k, *v, *mask, *past_k, *past_v;
  bool is_causal;
  int64_t q_heads, kv_heads, qk_mode;
  std::optional<double> scale;
  double softcap;
  std::optional<int64_t> softmax_precision;
};

// Attention input `x` as [B, H, S, E] (3-D [B, S, H*E] inputs split by their
// `heads`), after `past` (a cache, or nullptr) along the sequence.
Value* as_4d(SymbolicContext& ctx, const AttentionArgs& a, Value* x, int64_t heads, Value* past) {
  if (ctx.rank(0) == 3) {
    if (a.q_heads <= 0 || a.kv_heads <= 0) ctx.fail("has 3-D inputs without q_num_heads and kv_num_heads");
    x = helpers::transpose(ctx, helpers::reshape(ctx, x, {0, 0, heads, -1}), {0, 2, 1, 3});
  }
  return past ? ctx.op("Concat", {past, x}, {{"axis", int64_t{2}}}) : x;
}

// Attention computed as torch.onnx.ops.attention's reference (and ONNX's
// function body) does, in plain operators: where ONNX Runtime's Attention
// kernel computes otherwise (it soft-caps the scores before adding the mask;
// ONNX and PyTorch after).
void attention_decomposed(SymbolicContext& ctx, const AttentionArgs& a) {
  const DType dt = ctx.dtype(0);
  const bool three_d = ctx.rank(0) == 3;
  Value* q = as_4d(ctx, a, a.q, a.q_heads, nullptr);
  Value* present_k = as_4d(ctx, a, a.k, a.kv_heads, a.past_k);
  Value* present_v = as_4d(ctx, a, a.v, a.kv_heads, a.past_v);
  Value* k = present_k;
  Value* v = present_v;
  const int64_t hq = three_d ? a.q_heads : ctx.static_dim(0, 1);
  const int64_t hk = three_d ? a.kv_heads : ctx.static_dim(1, 1);
  if (hq != hk) {  // (grouped-query: each key / value head repeated for its queries' heads)
    if (hk <= 0 || hq % hk != 0) ctx.fail("has " + std::to_string(hq) + " query heads for " + std::to_string(hk) +
                                          " key / value heads");
    auto repeat = [&](Value* x) {
      Value* grown = ctx.op("Expand", {helpers::unsqueeze(ctx, x, {2}), ctx.const_ints({1, 1, hq / hk, 1, 1})});
      Value* shape = ctx.op("Concat", {dims(ctx, x, 0, 1), ctx.const_ints({hq}), dims(ctx, x, 2, 4)},
                            {{"axis", int64_t{0}}});
      return ctx.op("Reshape", {grown, shape});
    };
    k = repeat(k);
    v = repeat(v);
  }
  Value* scale = nullptr;
  if (a.scale) {
    scale = ctx.const_scalar(dt, std::sqrt(*a.scale));
  } else {  // 1/sqrt(E), its square root scaling q and k
    Value* e = ctx.cast(helpers::dim_size(ctx, q, 3), dt);
    scale = ctx.op("Sqrt", {ctx.op("Reciprocal", {ctx.op("Sqrt", {e})})});
  }
  Value* qk = ctx.op("MatMul", {ctx.op("Mul", {q, scale}),
                                helpers::transpose(ctx, ctx.op("Mul", {k, scale}), {0, 1, 3, 2})});
  Value* scores = qk;
  auto add_mask = [&](Value* mask) {
    if (mask->dtype() == DType::Bool) {  // (True: the key takes part)
      scores = ctx.op("Where", {mask, scores, ctx.const_scalar(dt, -std::numeric_limits<double>::infinity())});
    } else {
      scores = ctx.op("Add", {scores, mask});
    }
  };
  if (a.is_causal) add_mask(causal_mask(ctx, q, k));
  if (a.mask) add_mask(a.mask);
  Value* qk_out = a.qk_mode == 1 ? scores : qk;
  if (a.softcap != 0.0) {
    Value* c = ctx.const_scalar(dt, a.softcap);
    scores = ctx.op("Mul", {ctx.op("Tanh", {ctx.op("Div", {scores, c})}), c});
  }
  if (a.qk_mode == 2) qk_out = scores;
  Value* probs = nullptr;
  if (a.softmax_precision) {
    const DType p = static_cast<DType>(*a.softmax_precision);
    probs = ctx.cast(ctx.op("Softmax", {ctx.cast(scores, p)}, {{"axis", int64_t{-1}}}), dt);
  } else {
    probs = ctx.op("Softmax", {scores}, {{"axis", int64_t{-1}}});
  }
  if (a.qk_mode == 3) qk_out = probs;
  Value* y = ctx.op("MatMul", {probs, v});
  if (three_d) y = helpers::reshape(ctx, helpers::transpose(ctx, y, {0, 2, 1, 3}), {0, 0, -1});
  Value* outs[] = {y, present_k, present_v, qk_out};
  for (size_t i = 0; i < ctx.num_outputs() && i < 4; ++i) ctx.out(outs[i], i);
}

// onnx::Attention.opset23(Q, K, V, attn_mask=None, past_key=None, past_value=None, *, is_causal=False,
// kv_num_heads=0, q_num_heads=0, qk_matmul_output_mode=0, scale=None, softcap=0., softmax_precision=None)
// -> (Y, present_key, present_value, qk_matmul_output)
void attention(SymbolicContext& ctx) {
  AttentionArgs a;
  const size_t iq = required(ctx, "Q", 0), ik = required(ctx, "K", 1), iv = required(ctx, "V", 2);
  if (iq != 0 || ik != 1 || iv != 2) ctx.fail("has its arguments out of the schema's order");
  a.q = ctx.in(0);
  a.k = ctx.in(1);
  a.v = ctx.in(2);
  a.mask = opt_tensor(ctx, "attn_mask", 3);
  a.past_k = opt_tensor(ctx, "past_key", 4);
  a.past_v = opt_tensor(ctx, "past_value", 5);
  a.is_causal = opt_int(ctx, "is_causal", 6).value_or(0) != 0;
  a.kv_heads = opt_int(ctx, "kv_num_heads", 7).value_or(0);
  a.q_heads = opt_int(ctx, "q_num_heads", 8).value_or(0);
  a.qk_mode = opt_int(ctx, "qk_matmul_output_mode", 9).value_or(0);
  a.scale = opt_float(ctx, "scale", 10);
  a.softcap = opt_float(ctx, "softcap", 11).value_or(0.0);
  a.softmax_precision = opt_int(ctx, "softmax_precision", 12);
  if (a.is_causal && a.mask) ctx.fail("has both is_causal and attn_mask (PyTorch refuses them together)");
  // ONNX Runtime's kernel soft-caps before the mask: the node where a mask
  // meets a softcap would compute otherwise than PyTorch (and ONNX).
  if (a.softcap != 0.0 && (a.mask || a.is_causal)) return attention_decomposed(ctx, a);
  Value* mask = a.mask;
  bool is_causal = a.is_causal;
  if (is_causal) {
    // PyTorch's causal mask is aligned to the top left of the scores; ONNX
    // Runtime's to the bottom right where queries and keys differ in
    // length (a cache): the mask given explicitly where they may.
    const bool three_d = ctx.rank(0) == 3;
    const int64_t seq = three_d ? 1 : 2;
    const auto lq = ctx.known_static_dim(0, seq), lk = ctx.known_static_dim(1, seq);
    if (a.past_k || !lq || !lk || *lq != *lk) {
      mask = causal_mask(ctx, as_4d(ctx, a, a.q, a.q_heads, nullptr), as_4d(ctx, a, a.k, a.kv_heads, a.past_k));
      is_causal = false;
    }
  }
  std::vector<Value*> ins = {a.q, a.k, a.v, mask, a.past_k, a.past_v};
  while (!ins.empty() && !ins.back()) ins.pop_back();
  ir::Attributes attrs;
  attrs.emplace_back("is_causal", is_causal ? int64_t{1} : int64_t{0});
  if (a.kv_heads) attrs.emplace_back("kv_num_heads", a.kv_heads);
  if (a.q_heads) attrs.emplace_back("q_num_heads", a.q_heads);
  if (a.qk_mode) attrs.emplace_back("qk_matmul_output_mode", a.qk_mode);
  if (a.scale) attrs.emplace_back("scale", *a.scale);
  if (a.softcap != 0.0) attrs.emplace_back("softcap", a.softcap);
  if (a.softmax_precision) attrs.emplace_back("softmax_precision", *a.softmax_precision);
  const size_t n = std::max<size_t>(1, std::min<size_t>(ctx.num_outputs(), 4));
  ir::Node* node = ctx.node("Attention", ins, n, std::move(attrs));
  for (size_t k = 0; k < n; ++k) {
    node->output(k)->type().dtype = ctx.out_dtype(k);
    ctx.out(node->output(k), k);
  }
}

// onnx::RotaryEmbedding.opset23(x, cos_cache, sin_cache, position_ids=None, *, interleaved=False,
// num_heads=0, rotary_embedding_dim=0)
void rotary_embedding(SymbolicContext& ctx) {
  std::vector<Value*> ins = {ctx.in(required(ctx, "x", 0)), ctx.in(required(ctx, "cos_cache", 1)),
                             ctx.in(required(ctx, "sin_cache", 2)), opt_tensor(ctx, "position_ids", 3)};
  if (!ins.back()) ins.pop_back();
  ir::Attributes attrs;
  if (opt_int(ctx, "interleaved", 4).value_or(0) != 0) attrs.emplace_back("interleaved", int64_t{1});
  for (auto [name, position] : {std::pair{"num_heads", 5}, {"rotary_embedding_dim", 6}})
    if (auto v = opt_int(ctx, name, position); v && *v != 0) attrs.emplace_back(name, *v);
  ctx.out(ctx.op("RotaryEmbedding", ins, std::move(attrs)));
}

// torch.onnx.ops' encoding of an attribute dict (EncodedAttrs): names, types
// ("i", "f", "s", "is", "fs", "ss") and [start, end) positions into the lists
// of ints, floats and strings.
ir::Attributes decoded_attributes(SymbolicContext& ctx) {
  const size_t keys = required(ctx, "attr_keys", 5), types = required(ctx, "attr_types", 6),
               pos = required(ctx, "attr_pos", 7);
  const std::vector<int64_t> ints = ctx.is(required(ctx, "attr_ints", 8));
  const std::vector<double> floats = ctx.fs(required(ctx, "attr_floats", 9));
  std::vector<std::string> strs;
  for (const Arg& e : ctx.arg(required(ctx, "attr_strs", 10)).elements) strs.push_back(e.s);
  const Arg& key_list = ctx.arg(keys);
  const Arg& type_list = ctx.arg(types);
  const Arg& pos_list = ctx.arg(pos);
  if (type_list.elements.size() != key_list.elements.size() || pos_list.elements.size() != key_list.elements.size())
    ctx.fail("has attr_keys, attr_types and attr_pos of different lengths");
  ir::Attributes attrs;
  for (size_t k = 0; k < key_list.elements.size(); ++k) {
    const std::string& name = key_list.elements[k].s;
    const std::string& type = type_list.elements[k].s;
    const Arg& p = pos_list.elements[k];
    if (p.elements.size() != 2) ctx.fail("has attr_pos entry " + std::to_string(k) + " that is not [start, end]");
    const size_t start = static_cast<size_t>(p.elements[0].i), end = static_cast<size_t>(p.elements[1].i);
    // (one value for "i", "f", "s"; the slice for "is", "fs", "ss")
    auto take = [&](const auto& list, const char* what) {
      if (start > end || end > list.size()) ctx.fail("has attribute '" + name + "' outside its list");
      using T = typename std::decay_t<decltype(list)>::value_type;
      std::vector<T> v(list.begin() + static_cast<long>(start), list.begin() + static_cast<long>(end));
      if (type.size() == 1) {
        if (v.size() != 1)
          ctx.fail("has " + std::string(what) + " attribute '" + name + "' of " + std::to_string(v.size()) + " values");
        attrs.emplace_back(name, v[0]);
      } else {
        attrs.emplace_back(name, v);
      }
    };
    if (type == "i" || type == "is") take(ints, "int");
    else if (type == "f" || type == "fs") take(floats, "float");
    else if (type == "s" || type == "ss") take(strs, "string");
    else ctx.fail("has attribute '" + name + "' of unknown type '" + type + "'");
  }
  return attrs;
}

DType onnx_dtype(SymbolicContext& ctx, int64_t code) {
  const DType dt = static_cast<DType>(code);
  if (code < 1 || code > 16 || code == 8 || dt == DType::Complex64 || dt == DType::Complex128)
    ctx.fail("has ONNX dtype " + std::to_string(code) + ", which torch2onnx cannot type");
  return dt;
}

// onnx_symbolic::_symbolic(inputs, op_type, onnx_dtype, *, shape, attr_keys, attr_types, attr_pos,
// attr_ints, attr_floats, attr_strs, metadata_props_keys, metadata_props_values, domain='', version=None)
// and _symbolic_multi_out (onnx_dtypes, shapes: one per output, a Tensor[] result).
void symbolic_op(SymbolicContext& ctx, bool multi) {
  std::vector<Value*> ins = ctx.opt_list(required(ctx, "inputs", 0));
  while (!ins.empty() && !ins.back()) ins.pop_back();  // (a missing optional input in between stays "")
  const std::string op_type = ctx.s(required(ctx, "op_type", 1));
  std::string domain;
  if (auto k = find(ctx, "domain", 13); k && !ctx.none(*k)) domain = ctx.s(*k);
  if (domain == "ai.onnx") domain.clear();
  const std::optional<int64_t> version = opt_int(ctx, "version", 14);
  if (version) {
    if (domain.empty() && *version > ctx.opset())
      ctx.fail("asks for " + op_type + " of opset " + std::to_string(*version) + " in a model of opset " +
               std::to_string(ctx.opset()));
    if (!domain.empty()) ctx.graph().note_domain_version(domain, *version);
  }
  std::vector<DType> dtypes;
  const size_t dtype_arg = required(ctx, multi ? "onnx_dtypes" : "onnx_dtype", 2);
  if (multi) {
    for (int64_t code : ctx.is(dtype_arg)) dtypes.push_back(onnx_dtype(ctx, code));
  } else {
    dtypes.push_back(onnx_dtype(ctx, ctx.i(dtype_arg)));
  }
  ir::Node* node = ctx.node(op_type, ins, dtypes.size(), decoded_attributes(ctx), domain);
  std::vector<Value*> outs;
  for (size_t k = 0; k < dtypes.size(); ++k) {
    node->output(k)->type().dtype = dtypes[k];
    outs.push_back(node->output(k));
  }
  if (multi) {
    ctx.out_list(outs);
  } else {
    ctx.out(outs[0]);
  }
}

}  // namespace

void register_onnx_ops(Registry& r) {
  // (below 23 the unsupported-operator error says "supported from opset 23"; a build whose ONNX stops
  // before 23 has none)
  if (max_opset() >= 23) {
    r.add("onnx::Attention", 23, attention);
    r.add("onnx::RotaryEmbedding", 23, rotary_embedding);
  }
  r.add("onnx_symbolic::_symbolic", kMinOpset, [](SymbolicContext& ctx) { symbolic_op(ctx, false); });
  r.add("onnx_symbolic::_symbolic_multi_out", kMinOpset, [](SymbolicContext& ctx) { symbolic_op(ctx, true); });
}

}  // namespace torch2onnx::symbolics
