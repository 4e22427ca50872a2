// Matrix products: linear, addmm, matmul, mm, bmm, baddbmm, mv, dot.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// aten::linear(input, weight, bias=None): Gemm for 2-D inputs, else
// MatMul with the transposed weight (folded into the initializer).
void linear(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  ir::Value* w = ctx.in(1);
  ir::Value* b = ctx.opt_in(2);
  if (ctx.rank(0) == 2 && b) {
    ctx.out(ctx.op("Gemm", {x, w, b}, {{"alpha", 1.0}, {"beta", 1.0}, {"transB", int64_t{1}}}));
    return;
  }
  ir::Value* wt = ctx.rank(1) == 2 ? ctx.op("Transpose", {w}, {{"perm", std::vector<int64_t>{1, 0}}}) : w;
  ir::Value* y = ctx.op("MatMul", {x, wt});
  if (b) y = ctx.op("Add", {y, b});
  ctx.out(y);
}

ir::Value* scaled(SymbolicContext& ctx, ir::Value* v, size_t idx, ir::DType t) {
  if (ctx.num_args() <= idx || ctx.none(idx) || (ctx.constant(idx) && ctx.f(idx) == 1.0)) return v;
  return ctx.op("Mul", {v, ctx.scalar_value(idx, t)});
}

// aten::addmm(self, mat1, mat2, beta=1, alpha=1) = beta * self + alpha * mat1 @ mat2
void addmm(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  if (ctx.constant(3) && ctx.constant(4) && ir::is_floating(t) && ctx.rank(1) == 2 && ctx.rank(2) == 2) {
    ctx.out(ctx.op("Gemm", {ctx.in(1), ctx.in(2), ctx.in_as(0, t)}, {{"alpha", ctx.f(4)}, {"beta", ctx.f(3)}}));
    return;
  }
  ir::Value* prod = scaled(ctx, ctx.op("MatMul", {ctx.in(1), ctx.in(2)}), 4, t);
  ctx.out(ctx.op("Add", {scaled(ctx, ctx.in_as(0, t), 3, t), prod}));
}

// aten::baddbmm(self, batch1, batch2, beta=1, alpha=1)
void baddbmm(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  ir::Value* prod = scaled(ctx, ctx.op("MatMul", {ctx.in(1), ctx.in(2)}), 4, t);
  if (ctx.constant(3) && ctx.f(3) == 0.0) {
    ctx.out(prod);  // beta = 0: self is ignored (even NaN)
    return;
  }
  ctx.out(ctx.op("Add", {scaled(ctx, ctx.in_as(0, t), 3, t), prod}));
}

// aten::matmul / mm / bmm / mv / dot: ONNX MatMul has numpy semantics too.
void matmul(SymbolicContext& ctx) { ctx.out(ctx.op("MatMul", {ctx.in(0), ctx.in(1)})); }

// aten::addmv(self, mat, vec, beta, alpha), aten::addbmm(self, b1, b2, beta, alpha)
void addmv(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  ir::Value* prod = scaled(ctx, ctx.op("MatMul", {ctx.in(1), ctx.in(2)}), 4, t);
  ctx.out(ctx.op("Add", {scaled(ctx, ctx.in_as(0, t), 3, t), prod}));
}

void addbmm(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  ir::Value* prod = ctx.op("MatMul", {ctx.in(1), ctx.in(2)});
  prod = scaled(ctx, helpers::reduce(ctx, "ReduceSum", prod, {0}, false), 4, t);
  ctx.out(ctx.op("Add", {scaled(ctx, ctx.in_as(0, t), 3, t), prod}));
}

}  // namespace

void register_linear(Registry& r) {
  r.add("aten::linear", 9, linear);
  r.add("aten::addmm", 9, addmm);
  r.add("aten::baddbmm", 9, baddbmm);
  for (const char* op : {"aten::matmul", "aten::mm", "aten::bmm", "aten::mv", "aten::dot"}) r.add(op, 9, matmul);
  r.add("aten::addmv", 9, addmv);
  r.add("aten::addbmm", 9, addbmm);
}

}  // namespace torch2onnx::symbolics
