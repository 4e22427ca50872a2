// Activation functions.
#include <cmath>
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

ir::Value* scalar_like(SymbolicContext& ctx, double v) { return ctx.const_scalar(ctx.dtype(0), v); }

void unary(SymbolicContext& ctx, const char* op) { ctx.out(ctx.op(op, {ctx.in(0)})); }

void relu(SymbolicContext& ctx) { unary(ctx, "Relu"); }
void sigmoid(SymbolicContext& ctx) { unary(ctx, "Sigmoid"); }
void tanh_(SymbolicContext& ctx) { unary(ctx, "Tanh"); }
void selu(SymbolicContext& ctx) { unary(ctx, "Selu"); }

// aten::leaky_relu(self, negative_slope=0.01)
void leaky_relu(SymbolicContext& ctx) {
  double slope = ctx.num_args() > 1 ? ctx.f(1) : 0.01;
  ctx.out(ctx.op("LeakyRelu", {ctx.in(0)}, {{"alpha", slope}}));
}

// aten::hardtanh(self, min_val=-1, max_val=1)
void hardtanh(SymbolicContext& ctx) {
  ctx.out(helpers::clip(ctx, ctx.in(0), ctx.f(1), ctx.f(2)));
}

void relu6(SymbolicContext& ctx) { ctx.out(helpers::clip(ctx, ctx.in(0), 0.0, 6.0)); }

// aten::gelu(self, approximate="none"|"tanh")
void gelu(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  const std::string approx = ctx.num_args() > 1 && !ctx.none(1) ? ctx.s(1) : "none";
  ir::Value* inner;
  if (approx == "tanh") {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    ir::Value* x3 = ctx.op("Mul", {ctx.op("Mul", {x, x}), x});
    ir::Value* t = ctx.op("Add", {x, ctx.op("Mul", {x3, scalar_like(ctx, 0.044715)})});
    t = ctx.op("Mul", {t, scalar_like(ctx, std::sqrt(2.0 / M_PI))});
    inner = ctx.op("Tanh", {t});
  } else {
    inner = ctx.op("Erf", {ctx.op("Div", {x, scalar_like(ctx, M_SQRT2)})});
  }
  ir::Value* y = ctx.op("Mul", {x, ctx.op("Add", {inner, scalar_like(ctx, 1.0)})});
  ctx.out(ctx.op("Mul", {y, scalar_like(ctx, 0.5)}));
}

// Opset 20: one Gelu node, exact or with the tanh approximation.
void gelu_20(SymbolicContext& ctx) {
  const std::string approx = ctx.num_args() > 1 && !ctx.none(1) ? ctx.s(1) : "none";
  if (approx != "none" && approx != "tanh") ctx.fail("unknown approximate='" + approx + "' (none or tanh)");
  ctx.out(ctx.op("Gelu", {ctx.in(0)}, {{"approximate", approx}}));
}

// aten::elu(self, alpha, scale, input_scale)
void elu(SymbolicContext& ctx) {
  const double alpha = ctx.f(1), scale = ctx.num_args() > 2 ? ctx.f(2) : 1.0,
               input_scale = ctx.num_args() > 3 ? ctx.f(3) : 1.0;
  ir::Value* x = ctx.in(0);
  if (input_scale != 1.0) x = ctx.op("Mul", {x, scalar_like(ctx, input_scale)});
  ir::Value* y = ctx.op("Elu", {x}, {{"alpha", alpha}});
  if (input_scale != 1.0) {
    // Elu scales only the negative part's input: elu(x*s) differs for x > 0.
    y = ctx.op("Where", {ctx.op("Greater", {ctx.in(0), scalar_like(ctx, 0.0)}), ctx.in(0), y});
  }
  if (scale != 1.0) y = ctx.op("Mul", {y, scalar_like(ctx, scale)});
  ctx.out(y);
}

void celu_decomposed(SymbolicContext& ctx);
// aten::celu(self, alpha): ONNX Celu takes float only; other dtypes (double) decomposed.
void celu(SymbolicContext& ctx) {
  if (ctx.dtype(0) != ir::DType::Float) return celu_decomposed(ctx);
  ctx.out(ctx.op("Celu", {ctx.in(0)}, {{"alpha", ctx.f(1)}}));
}
void celu_decomposed(SymbolicContext& ctx) {
  const double alpha = ctx.f(1);
  ir::Value* x = ctx.in(0);
  ir::Value* neg = ctx.op("Sub", {ctx.op("Exp", {ctx.op("Div", {x, scalar_like(ctx, alpha)})}), scalar_like(ctx, 1.0)});
  neg = ctx.op("Min", {ctx.op("Mul", {neg, scalar_like(ctx, alpha)}), scalar_like(ctx, 0.0)});
  ctx.out(ctx.op("Add", {ctx.op("Relu", {x}), neg}));
}

void silu(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  ctx.out(ctx.op("Mul", {x, ctx.op("Sigmoid", {x})}));
}

void mish(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  ctx.out(ctx.op("Mul", {x, ctx.op("Tanh", {ctx.op("Softplus", {x})})}));
}

// Opset 18: one Mish node.
void mish_18(SymbolicContext& ctx) { ctx.out(ctx.op("Mish", {ctx.in(0)})); }

// aten::softplus(self, beta, threshold): linear where beta*x > threshold.
void softplus(SymbolicContext& ctx) {
  const double beta = ctx.f(1), threshold = ctx.f(2);
  ir::Value* x = ctx.in(0);
  ir::Value* bx = beta == 1.0 ? x : ctx.op("Mul", {x, scalar_like(ctx, beta)});
  ir::Value* sp = ctx.op("Softplus", {bx});
  if (beta != 1.0) sp = ctx.op("Div", {sp, scalar_like(ctx, beta)});
  ctx.out(ctx.op("Where", {ctx.op("Greater", {bx, scalar_like(ctx, threshold)}), x, sp}));
}

void hardsigmoid(SymbolicContext& ctx) {
  ctx.out(ctx.op("HardSigmoid", {ctx.in(0)}, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}}));
}

void hardswish(SymbolicContext& ctx) { ctx.out(ctx.op("HardSwish", {ctx.in(0)})); }
void hardswish_decomposed(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  ctx.out(ctx.op("Mul", {x, ctx.op("HardSigmoid", {x}, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}})}));
}

// aten::prelu(self, weight): the per-channel weight broadcasts over dim 1. A
// 0-d input keeps its rank (the single weight becomes 0-d too).
void prelu(SymbolicContext& ctx) {
  ir::Value* w = ctx.in(1);
  const int64_t rank = ctx.rank(0);
  const auto& ws = ctx.sizes(1);
  if (rank > 2 && ws.size() == 1 && ws[0] > 1) {
    std::vector<int64_t> shape(static_cast<size_t>(rank - 1), 1);
    shape[0] = ws[0];
    w = helpers::reshape(ctx, w, shape);
  } else if (rank < static_cast<int64_t>(ws.size())) {  // [1] weight, 0-d input
    w = helpers::reshape(ctx, w, std::vector<int64_t>(static_cast<size_t>(rank), 1));
  }
  ctx.out(ctx.op("PRelu", {ctx.in(0), w}));
}

// aten::threshold(self, threshold, value): x if x > threshold else value
void threshold(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  ctx.out(ctx.op("Where", {ctx.op("Greater", {x, scalar_like(ctx, ctx.f(1))}), x, scalar_like(ctx, ctx.f(2))}));
}

// aten::glu(self, dim): a * sigmoid(b) for the two halves along dim.
void glu(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  const int64_t n = ctx.sizes(0)[static_cast<size_t>(dim)];
  if (n % 2) ctx.fail("glu needs an even size along dim " + std::to_string(dim));
  ir::Value* x = ctx.in(0);
  // A dynamic dim below opset 18 (where Split's num_outputs halves it): the
  // halves from its run-time size (Slice, opset 10), never the example's.
  if (ctx.opset() < 18 && ctx.dim_is_dynamic(0, dim)) {
    if (ctx.opset() < 10) ctx.static_dim(0, dim);
    ir::Value* n_dim = helpers::unsqueeze(ctx, helpers::dim_size(ctx, x, dim), {0});
    ir::Value* half = ctx.op("Div", {n_dim, ctx.const_ints({2})});
    ir::Value* axes = ctx.const_ints({dim});
    ir::Value* end = ctx.const_ints({std::numeric_limits<int64_t>::max()});
    ir::Value* a = helpers::slice_dynamic(ctx, x, ctx.const_ints({0}), half, axes, nullptr);
    ir::Value* b = helpers::slice_dynamic(ctx, x, half, end, axes, nullptr);
    ctx.out(ctx.op("Mul", {a, ctx.op("Sigmoid", {b})}));
    return;
  }
  auto halves = helpers::split(ctx, x, {n / 2, n / 2}, dim);
  ctx.out(ctx.op("Mul", {halves[0], ctx.op("Sigmoid", {halves[1]})}));
}

// log(sigmoid(x)) = -softplus(-x), stable for large |x|.
void log_sigmoid(SymbolicContext& ctx) {
  ctx.out(ctx.op("Neg", {ctx.op("Softplus", {ctx.op("Neg", {ctx.in(0)})})}));
}

// aten::hardshrink(self, lambd): x where |x| > lambd else 0
void hardshrink(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  ir::Value* keep = ctx.op("Greater", {ctx.op("Abs", {x}), scalar_like(ctx, ctx.f(1))});
  ctx.out(ctx.op("Where", {keep, x, scalar_like(ctx, 0.0)}));
}

// aten::softshrink(self, lambd): x - lambd if x > lambd, x + lambd if x < -lambd, else 0
void softshrink(SymbolicContext& ctx) {
  const double l = ctx.f(1);
  ir::Value* x = ctx.in(0);
  ir::Value* lo = ctx.op("Where", {ctx.op("Less", {x, scalar_like(ctx, -l)}), ctx.op("Add", {x, scalar_like(ctx, l)}),
                                   scalar_like(ctx, 0.0)});
  ctx.out(ctx.op("Where", {ctx.op("Greater", {x, scalar_like(ctx, l)}), ctx.op("Sub", {x, scalar_like(ctx, l)}), lo}));
}

}  // namespace

void register_activation(Registry& r) {
  r.add("aten::relu", 9, relu);
  r.add("aten::sigmoid", 9, sigmoid);
  r.add("aten::tanh", 9, tanh_);
  r.add("aten::selu", 9, selu);
  r.add("aten::leaky_relu", 9, leaky_relu);
  r.add("aten::hardtanh", 9, hardtanh);
  r.add("aten::relu6", 9, relu6);
  r.add("aten::gelu", 9, gelu);
  r.add("aten::gelu", 20, gelu_20);
  r.add("aten::elu", 9, elu);
  r.add("aten::celu", 9, celu_decomposed);
  r.add("aten::celu", 12, celu);
  r.add("aten::silu", 9, silu);
  r.add("aten::mish", 9, mish);
  r.add("aten::mish", 18, mish_18);
  r.add("aten::softplus", 9, softplus);
  r.add("aten::hardsigmoid", 9, hardsigmoid);
  r.add("aten::hardswish", 9, hardswish_decomposed);
  r.add("aten::hardswish", 14, hardswish);
  r.add("aten::prelu", 9, prelu);
  r.add("aten::threshold", 9, threshold);
  r.add("aten::glu", 9, glu);
  r.add("aten::log_sigmoid", 9, log_sigmoid);
  r.add("aten::hardshrink", 9, hardshrink);
  r.add("aten::softshrink", 9, softshrink);
}

}  // namespace torch2onnx::symbolics
