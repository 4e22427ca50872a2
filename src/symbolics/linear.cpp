// Matrix products: linear, addmm, matmul, mm, bmm, baddbmm, mv, dot.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// aten::linear(input, weight, bias=None): Gemm for 2-D floating inputs, else
// MatMul with the transposed weight (folded into the initializer).
void linear(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  ir::Value* w = ctx.in(1);
  ir::Value* b = ctx.opt_in(2);
  if (ctx.rank(0) == 2 && ctx.rank(1) == 2 && b && ir::is_floating(ctx.dtype(0))) {
    ctx.out(ctx.op("Gemm", {x, w, b}, {{"alpha", 1.0}, {"beta", 1.0}, {"transB", int64_t{1}}}));
    return;
  }
  ir::Value* wt = ctx.rank(1) == 2 ? ctx.op("Transpose", {w}, {{"perm", std::vector<int64_t>{1, 0}}}) : w;
  ir::Value* y = ctx.op("MatMul", {x, wt});
  if (b) y = ctx.op("Add", {y, b});
  ctx.out(y);
}

// A constant number argument equal to `v`.
bool is_const(const SymbolicContext& ctx, size_t idx, double v) {
  return ctx.num_args() > idx && !ctx.none(idx) && ctx.constant(idx) && ctx.f(idx) == v;
}

ir::Value* scaled(SymbolicContext& ctx, ir::Value* v, size_t idx, ir::DType t) {
  if (ctx.num_args() <= idx || ctx.none(idx) || is_const(ctx, idx, 1.0)) return v;
  return ctx.op("Mul", {v, ctx.scalar_value(idx, t)});
}

// beta * self + product; with beta = 0 PyTorch ignores self (even NaN or inf in it).
void add_scaled_self(SymbolicContext& ctx, ir::Value* prod, ir::DType t) {
  if (is_const(ctx, 3, 0.0)) {
    ctx.out(prod);  // self only broadcasts to the product's shape
    return;
  }
  ctx.out(ctx.op("Add", {scaled(ctx, ctx.in_as(0, t), 3, t), prod}));
}

// aten::addmm(self, mat1, mat2, beta=1, alpha=1) = beta * self + alpha * mat1 @ mat2
void addmm(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  if (ctx.constant(3) && ctx.constant(4) && ir::is_floating(t) && !is_const(ctx, 3, 0.0)) {
    ctx.out(ctx.op("Gemm", {ctx.in_as(1, t), ctx.in_as(2, t), ctx.in_as(0, t)},
                   {{"alpha", ctx.f(4)}, {"beta", ctx.f(3)}}));
    return;
  }
  add_scaled_self(ctx, scaled(ctx, ctx.op("MatMul", {ctx.in_as(1, t), ctx.in_as(2, t)}), 4, t), t);
}

// aten::baddbmm(self, batch1, batch2, beta=1, alpha=1), aten::addmv(self, mat, vec, beta, alpha)
void baddbmm(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  add_scaled_self(ctx, scaled(ctx, ctx.op("MatMul", {ctx.in_as(1, t), ctx.in_as(2, t)}), 4, t), t);
}

// aten::matmul / mm / bmm / mv / dot: ONNX MatMul has numpy semantics too.
void matmul(SymbolicContext& ctx) { ctx.out(ctx.op("MatMul", {ctx.in(0), ctx.in(1)})); }

// aten::addbmm(self, batch1, batch2, beta, alpha) = beta * self + alpha * sum_b batch1[b] @ batch2[b]
void addbmm(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  ir::Value* prod = ctx.op("MatMul", {ctx.in_as(1, t), ctx.in_as(2, t)});
  prod = scaled(ctx, helpers::reduce(ctx, "ReduceSum", prod, {0}, false), 4, t);
  add_scaled_self(ctx, prod, t);
}

}  // namespace

void register_linear(Registry& r) {
  r.add("aten::linear", 9, linear);
  r.add("aten::addmm", 9, addmm);
  r.add("aten::baddbmm", 9, baddbmm);
  for (const char* op : {"aten::matmul", "aten::mm", "aten::bmm", "aten::mv", "aten::dot"}) r.add(op, 9, matmul);
  r.add("aten::addmv", 9, baddbmm);
  r.add("aten::addbmm", 9, addbmm);
}

}  // namespace torch2onnx::symbolics
