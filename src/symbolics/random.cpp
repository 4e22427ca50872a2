// Random tensors: rand/randn (and _like), randint, normal, bernoulli, multinomial, randperm, uniform and the
// in-place distribution fills, rrelu.
//
// Not exported: _standard_gamma and _sample_dirichlet (gamma sampling needs
// rejection loops ONNX has no operator for) and poisson.
#include <cmath>
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;

// The dtype PyTorch produced, else the dtype= argument, else `dflt`.
DType result_dtype(const SymbolicContext& ctx, std::optional<size_t> dtype_idx, DType dflt) {
  if (ctx.num_outputs() > 0 && ctx.out_dtype() != DType::Undefined) return ctx.out_dtype();
  if (dtype_idx && !ctx.none(*dtype_idx) && ctx.arg(*dtype_idx).kind == Arg::Kind::Int)
    return ir::dtype_from_scalar_type(ctx.i(*dtype_idx));
  return dflt;
}

// Random samples are drawn as float or double (what ONNX Runtime's generators produce).
DType generator_dtype(DType dt) {
  return dt == DType::Double ? dt : DType::Float;
}

ir::Value* typed(ir::Value* v, DType dt) {
  v->type().dtype = dt;
  return v;
}

// Uniform [lo, hi) samples of dtype dt (a generator dtype) shaped like `like`.
ir::Value* uniform_like(SymbolicContext& ctx, ir::Value* like, DType dt, double lo = 0.0, double hi = 1.0) {
  return typed(ctx.op("RandomUniformLike", {like},
                      {{"dtype", static_cast<int64_t>(dt)}, {"low", lo}, {"high", hi}}),
               dt);
}

ir::Value* normal_like(SymbolicContext& ctx, ir::Value* like, DType dt, double mean = 0.0, double scale = 1.0) {
  return typed(ctx.op("RandomNormalLike", {like},
                      {{"dtype", static_cast<int64_t>(dt)}, {"mean", mean}, {"scale", scale}}),
               dt);
}

// Samples of the int list argument `size_idx` as shape: RandomUniform /
// RandomNormal for a constant shape, the *Like forms of a ConstantOfShape
// otherwise.
ir::Value* sized(SymbolicContext& ctx, size_t size_idx, DType dt, bool normal, double a, double b) {
  if (ctx.constant(size_idx)) {
    std::vector<int64_t> shape = ctx.is(size_idx);
    ir::Attributes attrs{{"dtype", static_cast<int64_t>(dt)}, {"shape", shape}};
    if (normal) {
      attrs.emplace_back("mean", a);
      attrs.emplace_back("scale", b);
    } else {
      attrs.emplace_back("low", a);
      attrs.emplace_back("high", b);
    }
    return typed(ctx.op(normal ? "RandomNormal" : "RandomUniform", {}, std::move(attrs)), dt);
  }
  ir::Value* like = ctx.op("ConstantOfShape", {ctx.ints_value(size_idx)});
  like->type().dtype = DType::Float;
  return normal ? normal_like(ctx, like, dt, a, b) : uniform_like(ctx, like, dt, a, b);
}

// Index of the dtype argument of a factory with a size list at 0 and optional
// generator / names arguments after it: (size, [generator], [names], dtype, ...).
size_t factory_dtype_idx(const SymbolicContext& ctx, size_t first_kwarg, size_t plain_args) {
  return first_kwarg + (ctx.num_args() - plain_args);
}

// ---------------------------------------------------------------- rand / randn

// rand(size, dtype, layout, device, pin) and the generator / names overloads.
void rand_impl(SymbolicContext& ctx, bool normal) {
  const DType dt = result_dtype(ctx, factory_dtype_idx(ctx, 1, 5), DType::Float);
  if (!ir::is_floating(dt)) ctx.fail("random numbers need a floating dtype");
  const DType g = generator_dtype(dt);
  ctx.out(ctx.cast(sized(ctx, 0, g, normal, 0.0, 1.0), dt));
}
void rand(SymbolicContext& ctx) { rand_impl(ctx, false); }
void randn(SymbolicContext& ctx) { rand_impl(ctx, true); }

// rand_like(self, dtype, layout, device, pin, memory_format)
void rand_like_impl(SymbolicContext& ctx, bool normal) {
  const DType dt = result_dtype(ctx, 1, ctx.dtype(0));
  if (!ir::is_floating(dt)) ctx.fail("random numbers need a floating dtype");
  const DType g = generator_dtype(dt);
  ir::Value* x = ctx.in(0);
  ctx.out(ctx.cast(normal ? normal_like(ctx, x, g) : uniform_like(ctx, x, g), dt));
}
void rand_like(SymbolicContext& ctx) { rand_like_impl(ctx, false); }
void randn_like(SymbolicContext& ctx) { rand_like_impl(ctx, true); }

// Integers uniform in [low, high) from uniform doubles `u` in [0, 1).
ir::Value* integers(SymbolicContext& ctx, ir::Value* u, std::optional<size_t> low_idx, size_t high_idx, DType dt) {
  ir::Value* lo = low_idx ? ctx.scalar_value(*low_idx, DType::Double) : ctx.const_scalar(DType::Double, 0.0);
  ir::Value* hi = ctx.scalar_value(high_idx, DType::Double);
  ir::Value* v = ctx.op("Floor", {ctx.op("Add", {ctx.op("Mul", {u, ctx.op("Sub", {hi, lo})}), lo})});
  // Rounding must not reach `high`.
  v = ctx.op("Min", {v, ctx.op("Sub", {hi, ctx.const_scalar(DType::Double, 1.0)})});
  return ctx.cast(v, dt);
}

// randint(high, size, dtype=long, ...), randint.generator(high, size, generator, dtype, ...),
// randint.low(low, high, size, dtype, ...), randint.low_generator(low, high, size, generator, dtype, ...)
void randint(SymbolicContext& ctx) {
  const bool has_low = !ctx.arg(1).is_list();
  const size_t size_idx = has_low ? 2 : 1;
  const size_t plain = has_low ? 7 : 6;
  const DType dt = result_dtype(ctx, factory_dtype_idx(ctx, size_idx + 1, plain), DType::Int64);
  ir::Value* u = sized(ctx, size_idx, DType::Double, false, 0.0, 1.0);
  ctx.out(integers(ctx, u, has_low ? std::optional<size_t>(0) : std::nullopt, has_low ? 1 : 0, dt));
}

// randint_like(self, high, dtype, layout, device, pin, memory_format) /
// randint_like.low_dtype(self, low, high, dtype, ...)
void randint_like(SymbolicContext& ctx) {
  const bool has_low = ctx.num_args() >= 8;
  const DType dt = result_dtype(ctx, has_low ? 3 : 2, ctx.dtype(0));
  ir::Value* u = uniform_like(ctx, ctx.in(0), DType::Double);
  ctx.out(integers(ctx, u, has_low ? std::optional<size_t>(1) : std::nullopt, has_low ? 2 : 1, dt));
}

// randperm(n, dtype=long, layout, device, pin) / randperm.generator(n, generator, dtype, ...):
// the order of n uniform samples.
using TopK = std::vector<ir::Value*> (*)(SymbolicContext&, ir::Value* x, int64_t k, ir::Value* k_value);

// TopK (largest, sorted) along the last axis; opset 9 takes k as an attribute.
std::vector<ir::Value*> topk1(SymbolicContext& ctx, ir::Value* x, int64_t k, ir::Value*) {
  if (k < 0) ctx.fail("a sample count computed at run time needs opset 10");
  return ctx.op_n("TopK", {x}, 2, {{"axis", int64_t{-1}}, {"k", k}});
}
std::vector<ir::Value*> topk10(SymbolicContext& ctx, ir::Value* x, int64_t k, ir::Value* k_value) {
  ir::Value* kv = k >= 0 ? ctx.const_ints({k}) : k_value;
  return ctx.op_n("TopK", {x, kv}, 2, {{"axis", int64_t{-1}}});
}

void randperm_with(SymbolicContext& ctx, TopK topk) {
  const DType dt = result_dtype(ctx, ctx.num_args() >= 6 ? 2 : 1, DType::Int64);
  ir::Value* u;
  int64_t k = -1;
  ir::Value* kv = nullptr;
  if (ctx.constant(0)) {
    k = ctx.i(0);
    u = typed(ctx.op("RandomUniform", {}, {{"dtype", static_cast<int64_t>(DType::Float)}, {"shape", std::vector<int64_t>{k}}}),
              DType::Float);
  } else {
    kv = helpers::unsqueeze(ctx, ctx.scalar_value(0, DType::Int64), {0});
    ir::Value* like = ctx.op("ConstantOfShape", {kv});
    like->type().dtype = DType::Float;
    u = uniform_like(ctx, like, DType::Float);
  }
  auto outs = topk(ctx, u, k, kv);
  outs[1]->type().dtype = DType::Int64;
  ctx.out(ctx.cast(outs[1], dt));
}
void randperm9(SymbolicContext& ctx) { randperm_with(ctx, topk1); }
void randperm10(SymbolicContext& ctx) { randperm_with(ctx, topk10); }

// ---------------------------------------------------------------- normal / uniform and in-place fills

bool tensor_arg(const SymbolicContext& ctx, size_t i) { return ctx.arg(i).is_tensor(); }

// normal.Tensor_float(mean, std=1, gen), normal.float_Tensor(mean, std, gen),
// normal.Tensor_Tensor(mean, std, gen), normal.float_float(mean, std, size, gen, dtype, ...)
void normal(SymbolicContext& ctx) {
  if (ctx.num_args() >= 4 && !tensor_arg(ctx, 0) && !tensor_arg(ctx, 1)) {
    const DType dt = result_dtype(ctx, 4, DType::Float);
    const DType g = generator_dtype(dt);
    if (ctx.constant(0) && ctx.constant(1)) {
      ctx.out(ctx.cast(sized(ctx, 2, g, true, ctx.f(0), ctx.f(1)), dt));
      return;
    }
    ir::Value* eps = sized(ctx, 2, g, true, 0.0, 1.0);
    ir::Value* y = ctx.op("Add", {ctx.op("Mul", {eps, ctx.scalar_value(1, g)}), ctx.scalar_value(0, g)});
    ctx.out(ctx.cast(y, dt));
    return;
  }
  const DType dt = ctx.out_dtype() != DType::Undefined ? ctx.out_dtype()
                   : tensor_arg(ctx, 0)                 ? ctx.dtype(0)
                                                        : ctx.dtype(1);
  const DType g = generator_dtype(dt);
  ir::Value* mean = ctx.cast(ctx.in_as(0, dt), g);
  ir::Value* std = ctx.cast(ctx.in_as(1, dt), g);
  // The samples take the broadcast shape of mean and std.
  ir::Value* like = tensor_arg(ctx, 0) && tensor_arg(ctx, 1) ? ctx.op("Add", {mean, std})
                    : tensor_arg(ctx, 0)                     ? mean
                                                             : std;
  ir::Value* eps = normal_like(ctx, like, g);
  ctx.out(ctx.cast(ctx.op("Add", {ctx.op("Mul", {eps, std}), mean}), dt));
}

// normal_(self, mean=0, std=1, gen)
void normal_inplace(SymbolicContext& ctx) {
  const DType dt = ctx.dtype(0);
  const double mean = ctx.num_args() > 1 ? ctx.f(1) : 0.0, std = ctx.num_args() > 2 ? ctx.f(2) : 1.0;
  ctx.out(ctx.cast(normal_like(ctx, ctx.in(0), generator_dtype(dt), mean, std), dt));
}

// uniform(self, from=0, to=1, gen); uniform_ uses it.
void uniform(SymbolicContext& ctx) {
  const DType dt = ctx.dtype(0);
  const double lo = ctx.num_args() > 1 ? ctx.f(1) : 0.0, hi = ctx.num_args() > 2 ? ctx.f(2) : 1.0;
  ctx.out(ctx.cast(uniform_like(ctx, ctx.in(0), generator_dtype(dt), lo, hi), dt));
}

// exponential(self, lambd=1, gen): -log(1 - u) / lambd; exponential_ uses it.
void exponential(SymbolicContext& ctx) {
  const DType dt = ctx.dtype(0);
  const double lambd = ctx.num_args() > 1 ? ctx.f(1) : 1.0;
  const DType g = generator_dtype(dt);
  ir::Value* u = uniform_like(ctx, ctx.in(0), g);
  ir::Value* y = ctx.op("Log", {ctx.op("Sub", {ctx.const_scalar(g, 1.0), u})});
  y = ctx.op("Mul", {y, ctx.const_scalar(g, -1.0 / lambd)});
  ctx.out(ctx.cast(y, dt));
}

// log_normal_(self, mean=1, std=2, gen): exp of normal samples.
void log_normal_inplace(SymbolicContext& ctx) {
  const DType dt = ctx.dtype(0);
  const double mean = ctx.num_args() > 1 ? ctx.f(1) : 1.0, std = ctx.num_args() > 2 ? ctx.f(2) : 2.0;
  ctx.out(ctx.cast(ctx.op("Exp", {normal_like(ctx, ctx.in(0), generator_dtype(dt), mean, std)}), dt));
}

// cauchy_(self, median=0, sigma=1, gen): median + sigma * tan(pi (u - 1/2)).
void cauchy_inplace(SymbolicContext& ctx) {
  const DType dt = ctx.dtype(0);
  const DType g = generator_dtype(dt);
  const double median = ctx.num_args() > 1 ? ctx.f(1) : 0.0, sigma = ctx.num_args() > 2 ? ctx.f(2) : 1.0;
  ir::Value* u = uniform_like(ctx, ctx.in(0), g, -0.5, 0.5);
  ir::Value* y = ctx.op("Tan", {ctx.op("Mul", {u, ctx.const_scalar(g, M_PI)})});
  y = ctx.op("Add", {ctx.op("Mul", {y, ctx.const_scalar(g, sigma)}), ctx.const_scalar(g, median)});
  ctx.out(ctx.cast(y, dt));
}

// geometric_(self, p, gen): ceil(log(u) / log(1 - p)), u in (0, 1].
void geometric_inplace(SymbolicContext& ctx) {
  const DType dt = ctx.dtype(0);
  const double p = ctx.f(1);
  if (!(p > 0 && p < 1)) ctx.fail("geometric_ needs 0 < p < 1");
  ir::Value* u = uniform_like(ctx, ctx.in(0), DType::Double);
  u = ctx.op("Sub", {ctx.const_scalar(DType::Double, 1.0), u});
  ir::Value* y = ctx.op("Ceil", {ctx.op("Div", {ctx.op("Log", {u}), ctx.const_scalar(DType::Double, std::log1p(-p))})});
  y = ctx.op("Max", {y, ctx.const_scalar(DType::Double, 1.0)});
  ctx.out(ctx.cast(y, dt));
}

// random_(self, gen) / random_.to(self, to, gen) / random_.from(self, from, to?, gen):
// integers uniform in [from, to); without bounds [0, 2^mantissa] for floating
// types and [0, max] for integer ones.
void random_inplace(SymbolicContext& ctx) {
  const DType dt = ctx.dtype(0);
  auto type_top = [&]() -> double {
    switch (dt) {
      case DType::Float: return 16777217.0;              // 2^24 + 1
      case DType::Double: return 9007199254740993.0;     // 2^53 + 1
      case DType::Float16: return 2049.0;                // 2^11 + 1
      case DType::BFloat16: return 257.0;                // 2^8 + 1
      case DType::Bool: return 2.0;
      case DType::UInt8: return 256.0;
      case DType::Int8: return 128.0;
      case DType::Int16: return 32768.0;
      case DType::Int32: return 2147483648.0;
      default: return 9223372036854774784.0;  // 2^63 - 1024, the last double below 2^63
    }
  };
  double lo = 0.0, hi;
  const size_t n = ctx.num_args();
  if (n >= 4) {  // from(self, from, to?, gen)
    lo = ctx.f(1);
    hi = ctx.none(2) ? type_top() : ctx.f(2);
  } else if (n == 3) {  // to(self, to, gen)
    hi = ctx.f(1);
  } else {
    hi = type_top();
  }
  if (hi <= lo) ctx.fail("random_ needs from < to");
  ir::Value* u = uniform_like(ctx, ctx.in(0), DType::Double);
  ir::Value* v = ctx.op("Floor", {ctx.op("Add", {ctx.op("Mul", {u, ctx.const_scalar(DType::Double, hi - lo)}),
                                                 ctx.const_scalar(DType::Double, lo)})});
  v = ctx.op("Min", {v, ctx.const_scalar(DType::Double, hi - 1)});
  ctx.out(ctx.cast(v, dt));
}

// ---------------------------------------------------------------- bernoulli / multinomial

// 1 where a uniform sample is below p, in the dtype of self.
ir::Value* bernoulli_decomposed(SymbolicContext& ctx, ir::Value* p_value) {
  const DType dt = ctx.dtype(0);
  ir::Value* u = uniform_like(ctx, ctx.in(0), DType::Double);
  return ctx.cast(ctx.op("Less", {u, ctx.cast(p_value, DType::Double)}), dt);
}

ir::Value* bernoulli_p(SymbolicContext& ctx) {
  // bernoulli.p(self, float p, gen) / bernoulli.Tensor(self, Tensor p, gen)
  if (ctx.arg(1).is_tensor()) return bernoulli_decomposed(ctx, ctx.in(1));
  return bernoulli_decomposed(ctx, ctx.const_scalar(DType::Double, ctx.f(1)));
}

bool bernoulli_has_p(const SymbolicContext& ctx) { return ctx.num_args() >= 3 && !ctx.none(1); }

// bernoulli(self, gen): self holds the probabilities. (Not ONNX Bernoulli
// (opset 15): ONNX Runtime 1.30's kernel inverts its draws, 1 for p = 0 and
// 0 for p = 1.)
void bernoulli(SymbolicContext& ctx) {
  ctx.out(bernoulli_has_p(ctx) ? bernoulli_p(ctx) : bernoulli_decomposed(ctx, ctx.in(0)));
}

// multinomial(self, num_samples, replacement=False, gen): int64 class indices.
// With replacement: ONNX Multinomial on log-probabilities. Without: the top
// num_samples of log(p) + Gumbel noise, which samples without replacement.
void multinomial_with(SymbolicContext& ctx, TopK topk) {
  const int64_t k = ctx.i(1);
  const bool replacement = ctx.num_args() > 2 && ctx.b(2);
  const int64_t rank = ctx.rank(0);
  if (rank != 1 && rank != 2) ctx.fail("multinomial needs a 1-D or 2-D probability tensor");
  ir::Value* p = ctx.in(0);
  if (rank == 1) p = helpers::unsqueeze(ctx, p, {0});
  ir::Value* out;
  if (replacement) {
    ir::Value* logp = ctx.op("Log", {ctx.cast(p, DType::Float)});
    out = typed(ctx.op("Multinomial", {logp}, {{"dtype", static_cast<int64_t>(DType::Int64)}, {"sample_size", k}}),
                DType::Int64);
  } else {
    const int64_t classes = ctx.sizes(0).back();
    if (k > classes) ctx.fail("cannot draw more samples than there are categories without replacement");
    ir::Value* logp = ctx.op("Log", {ctx.cast(p, DType::Float)});
    ir::Value* u = uniform_like(ctx, logp, DType::Float);
    ir::Value* gumbel = ctx.op("Neg", {ctx.op("Log", {ctx.op("Neg", {ctx.op("Log", {u})})})});
    auto outs = topk(ctx, ctx.op("Add", {logp, gumbel}), k, nullptr);
    out = typed(outs[1], DType::Int64);
  }
  if (rank == 1) out = helpers::squeeze(ctx, out, {0});
  ctx.out(out);
}
void multinomial9(SymbolicContext& ctx) { multinomial_with(ctx, topk1); }
void multinomial10(SymbolicContext& ctx) { multinomial_with(ctx, topk10); }

// ---------------------------------------------------------------- rrelu

// rrelu(self, lower=1/8, upper=1/3, training=False, gen): in evaluation a
// leaky relu with the mean slope; in training a uniform random slope per element.
void rrelu(SymbolicContext& ctx) {
  const double lower = ctx.num_args() > 1 ? ctx.f(1) : 0.125;
  const double upper = ctx.num_args() > 2 ? ctx.f(2) : 1.0 / 3.0;
  const bool training = ctx.num_args() > 3 && ctx.b(3);
  ir::Value* x = ctx.in(0);
  const DType dt = ctx.dtype(0);
  if (!training) {
    const double slope = (lower + upper) / 2.0;
    if (dt == DType::Float) {
      ctx.out(ctx.op("LeakyRelu", {x}, {{"alpha", slope}}));
    } else {  // ONNX Runtime's LeakyRelu is float-only
      ir::Value* neg = ctx.op("Less", {x, ctx.const_scalar(dt, 0.0)});
      ctx.out(ctx.op("Where", {neg, ctx.op("Mul", {x, ctx.const_scalar(dt, slope)}), x}));
    }
    return;
  }
  ir::Value* slope = ctx.cast(uniform_like(ctx, x, generator_dtype(dt), lower, upper), dt);
  ir::Value* keep = ctx.op("Less", {x, ctx.const_scalar(dt, 0.0)});
  ctx.out(ctx.op("Where", {keep, ctx.op("Mul", {x, slope}), x}));
}

}  // namespace

void register_random(Registry& r) {
  r.add("aten::rand", 9, rand);
  r.add("aten::randn", 9, randn);
  r.add("aten::rand_like", 9, rand_like);
  r.add("aten::randn_like", 9, randn_like);
  r.add("aten::randint", 9, randint);
  r.add("aten::randint_like", 9, randint_like);
  r.add("aten::randperm", 9, randperm9);
  r.add("aten::randperm", 10, randperm10);
  r.add("aten::normal", 9, normal);
  r.add("aten::normal_", 9, normal_inplace);
  r.add("aten::uniform", 9, uniform);
  r.add("aten::exponential", 9, exponential);
  r.add("aten::log_normal_", 9, log_normal_inplace);
  r.add("aten::cauchy_", 9, cauchy_inplace);
  r.add("aten::geometric_", 9, geometric_inplace);
  r.add("aten::random_", 9, random_inplace);
  r.add("aten::bernoulli", 9, bernoulli);
  r.add("aten::multinomial", 9, multinomial9);
  r.add("aten::multinomial", 10, multinomial10);
  r.add("aten::rrelu", 9, rrelu);
}

}  // namespace torch2onnx::symbolics
