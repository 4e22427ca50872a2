// LDL^T factorization of symmetric indefinite matrices and its solve (ONNX has
// neither): aten::linalg_ldl_factor(_ex) and linalg_ldl_solve, computed as
// LAPACK's sytf2/sytrs (lower) do it, so LD and the pivots are PyTorch's:
// Bunch-Kaufman diagonal pivoting (alpha = (1 + sqrt 17) / 8) with 1x1 and 2x2
// blocks, the symmetric row/column interchange applied to the trailing matrix
// only (L = P1 L1 P2 L2 ..., the LAPACK representation), pivots 1-based and
// negative for a 2x2 block. The step size depends on each matrix's values, so
// an outer Loop runs over the matrices of the batch and, inside, a Loop of n
// trips advances k by 1 or 2 (the trips past the end do nothing). All from
// opset 9; float32/float64 (real matrices: hermitian=True is the same thing).
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "symbolic/helpers.h"
#include "symbolics/all.h"
#include "symbolics/linalg_decomp.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

// One matrix's pieces: 0-d element access and masks over iota.
struct Mat {
  SymbolicContext& b;
  DType t;
  int64_t n;
  Value* iota;

  Value* sc(double v) const { return b.const_scalar(t, v); }
  Value* at(Value* v, Value* i) const { return b.op("Gather", {v, i}, {{"axis", int64_t{0}}}); }
  Value* col(Value* m, Value* j) const { return b.op("Gather", {m, j}, {{"axis", int64_t{1}}}); }
  Value* is(Value* i) const { return helpers::equal(b, iota, i); }
  Value* as_col(Value* v) const { return helpers::unsqueeze(b, v, {1}); }  // [n] -> [n, 1]
  Value* as_row(Value* v) const { return helpers::unsqueeze(b, v, {0}); }  // [n] -> [1, n]
  Value* outer(Value* x, Value* y) const { return b.op("Mul", {as_col(x), as_row(y)}); }
  Value* where(Value* c, Value* x, Value* y) const { return b.op("Where", {c, x, y}); }
  // the permutation of 0..n-1 exchanging i and j
  Value* swap(Value* i, Value* j) const { return where(is(i), j, where(is(j), i, iota)); }
  Value* ge(Value* x, Value* y) const { return b.op("Not", {b.op("Less", {x, y})}); }
  // int64 min/max (ONNX Min/Max take integers from opset 12 only)
  Value* imin(Value* x, int64_t y) const { return where(b.op("Less", {x, b.const_int(y)}), x, b.const_int(y)); }
  Value* imax(Value* x, int64_t y) const { return where(b.op("Greater", {x, b.const_int(y)}), x, b.const_int(y)); }
};

struct Factor {
  Value* ld;    // [n, n]
  Value* piv;   // [n] int64, LAPACK's
  Value* info;  // 0-d int64
};

// sytf2 (lower) of one symmetric matrix a [n, n].
Factor sytf2(SymbolicContext& ctx, Value* a, int64_t n, DType t) {
  const double alpha = t == DType::Float ? static_cast<double>((1.0f + std::sqrt(17.0f)) / 8.0f)
                                         : (1.0 + std::sqrt(17.0)) / 8.0;
  Value* W0 = decomp::symmetric_from(ctx, a, 2, n, true);
  Value* LD0 = decomp::filled(ctx, t, {n, n}, 0.0);
  Value* piv0 = ctx.op("ConstantOfShape", {ctx.const_ints({n})},
                       {{"value", ir::Tensor::scalar_int(DType::Int64, 0).reshaped({1})}});
  auto outs = helpers::loop(
      ctx, ctx.const_int(n), {W0, LD0, piv0, ctx.const_int(0), ctx.const_int(0)},
      [&](SymbolicContext& b, Value*, const std::vector<Value*>& c) -> std::vector<Value*> {
        Mat M{b, t, n, b.const_ints(decomp::iota(n))};
        Value *W = c[0], *LD = c[1], *piv = c[2], *info = c[3], *k = c[4];
        Value* one = b.const_int(1);
        Value* active = b.op("Less", {k, b.const_int(n)});
        Value* kc = M.imin(k, n - 1);
        // the pivot choice
        Value* colk = M.col(W, kc);
        Value* akk = b.op("Abs", {M.at(colk, kc)});
        Value* below = b.op("Greater", {M.iota, kc});
        Value* colabs = M.where(below, b.op("Abs", {colk}), M.sc(-1.0));
        Value* imax = b.op("ArgMax", {colabs}, {{"axis", int64_t{0}}, {"keepdims", int64_t{0}}});
        Value* colmax = b.op("Max", {helpers::reduce(b, "ReduceMax", colabs, {0}, false), M.sc(0.0)});
        Value* rowi = M.at(W, imax);  // row imax (= column imax)
        Value* in_row = b.op("And", {M.ge(M.iota, kc), b.op("Not", {M.is(imax)})});
        Value* rowmax = helpers::reduce(b, "ReduceMax", M.where(in_row, b.op("Abs", {rowi}), M.sc(0.0)), {0}, false);
        Value* aii = b.op("Abs", {M.at(rowi, imax)});
        Value* zero = b.op("Or", {helpers::equal(b, b.op("Max", {akk, colmax}), M.sc(0.0)), b.op("IsNaN", {akk})});
        Value* a_colmax = b.op("Mul", {M.sc(alpha), colmax});
        Value* rowmax_safe = M.where(helpers::equal(b, rowmax, M.sc(0.0)), M.sc(1.0), rowmax);
        Value* c1 = M.ge(akk, a_colmax);
        Value* c2 = M.ge(akk, b.op("Mul", {a_colmax, b.op("Div", {colmax, rowmax_safe})}));
        Value* c3 = M.ge(aii, b.op("Mul", {M.sc(alpha), rowmax}));
        Value* stay = b.op("Or", {zero, b.op("Or", {c1, c2})});
        Value* two = b.op("And", {b.op("Not", {stay}), b.op("Not", {c3})});
        Value* kp = M.where(stay, kc, imax);
        Value* k1 = M.imin(b.op("Add", {kc, one}), n - 1);
        Value* kk = M.where(two, k1, kc);
        // interchange rows and columns kk and kp of the trailing matrix
        Value* perm = M.swap(kk, kp);
        Value* W1 = b.op("Gather", {b.op("Gather", {W, perm}, {{"axis", int64_t{0}}}), perm}, {{"axis", int64_t{1}}});
        Value* ck = M.col(W1, kc);
        Value* ck1 = M.col(W1, k1);
        Value* d = M.at(ck, kc);
        // a 1x1 pivot: A(k+1:, k+1:) += x (-x / d)^T; L's column x / d
        Value* x = M.where(below, ck, M.sc(0.0));
        Value* r = M.where(zero, M.sc(0.0), b.op("Div", {M.sc(1.0), d}));
        Value* W_one = b.op("Add", {W1, M.outer(x, b.op("Mul", {b.op("Neg", {r}), x}))});
        Value* ld_k_one = M.where(M.is(kc), d, b.op("Mul", {x, r}));
        Value* LD_one = M.where(M.as_row(M.is(kc)), M.as_col(ld_k_one), LD);
        // a 2x2 pivot on rows/columns k, k+1
        Value* d21 = M.at(ck, k1);
        Value* d1k1 = M.at(ck1, k1);
        Value* d11 = b.op("Div", {d1k1, d21});
        Value* d22 = b.op("Div", {d, d21});
        Value* tt = b.op("Div", {M.sc(1.0), b.op("Sub", {b.op("Mul", {d11, d22}), M.sc(1.0)})});
        Value* d21b = b.op("Div", {tt, d21});
        Value* beyond = b.op("Greater", {M.iota, k1});
        Value* wk = M.where(beyond, b.op("Mul", {d21b, b.op("Sub", {b.op("Mul", {d11, ck}), ck1})}), M.sc(0.0));
        Value* wkp1 = M.where(beyond, b.op("Mul", {d21b, b.op("Sub", {b.op("Mul", {d22, ck1}), ck})}), M.sc(0.0));
        Value* W_two = b.op("Sub", {b.op("Sub", {W1, M.outer(M.where(beyond, ck, M.sc(0.0)), wk)}),
                                    M.outer(M.where(beyond, ck1, M.sc(0.0)), wkp1)});
        Value* ld_k_two = M.where(M.is(kc), d, M.where(M.is(k1), d21, wk));
        Value* ld_k1_two = M.where(M.is(k1), d1k1, wkp1);
        Value* LD_two = M.where(M.as_row(M.is(k1)), M.as_col(ld_k1_two),
                                M.where(M.as_row(M.is(kc)), M.as_col(ld_k_two), LD));
        // this step's results, where k is still inside the matrix
        Value* W_next = decomp::symmetric_from(b, M.where(active, M.where(two, W_two, W_one), W), 2, n, true);
        Value* LD_next = M.where(active, M.where(two, LD_two, LD_one), LD);
        Value* kp1 = b.op("Add", {kp, one});
        Value* piv_one = M.where(M.is(kc), kp1, piv);
        Value* piv_two = M.where(b.op("Or", {M.is(kc), M.is(k1)}), b.op("Neg", {kp1}), piv);
        Value* piv_next = M.where(active, M.where(two, piv_two, piv_one), piv);
        Value* first_zero = b.op("And", {active, b.op("And", {zero, helpers::equal(b, info, b.const_int(0))})});
        Value* info_next = M.where(first_zero, b.op("Add", {kc, one}), info);
        Value* k_next = M.where(active, b.op("Add", {k, M.where(two, b.const_int(2), one)}), k);
        return {W_next, LD_next, piv_next, info_next, k_next};
      });
  return {outs[1], outs[2], outs[3]};
}

// sytrs (lower): solves A X = B for one matrix given its sytf2 factors.
Value* sytrs(SymbolicContext& ctx, Value* ld, Value* piv, Value* B, int64_t n, DType t) {
  // L D Y = B, k = 0, 1, ...
  auto fwd = helpers::loop(
      ctx, ctx.const_int(n), {B, ctx.const_int(0)},
      [&](SymbolicContext& b, Value*, const std::vector<Value*>& c) -> std::vector<Value*> {
        Mat M{b, t, n, b.const_ints(decomp::iota(n))};
        Value *X = c[0], *k = c[1];
        Value* one = b.const_int(1);
        Value* active = b.op("Less", {k, b.const_int(n)});
        Value* kc = M.imin(k, n - 1);
        Value* k1 = M.imin(b.op("Add", {kc, one}), n - 1);
        Value* pk = M.at(piv, kc);
        Value* two = b.op("Less", {pk, b.const_int(0)});
        Value* kp = b.op("Sub", {b.op("Abs", {pk}), one});
        Value* X1 = b.op("Gather", {X, M.swap(M.where(two, k1, kc), kp)}, {{"axis", int64_t{0}}});
        Value* ck = M.col(ld, kc);
        Value* ck1 = M.col(ld, k1);
        Value* xk = M.at(X1, kc);   // [r]
        Value* xk1 = M.at(X1, k1);  // [r]
        Value* row_k = M.as_col(M.is(kc));
        Value* row_k1 = M.as_col(M.is(k1));
        // 1x1: B(k+1:) -= l x_k; x_k /= d
        Value* below = b.op("Greater", {M.iota, kc});
        Value* X_a = b.op("Sub", {X1, M.outer(M.where(below, ck, M.sc(0.0)), xk)});
        Value* inv_d = b.op("Div", {M.sc(1.0), M.at(ck, kc)});
        Value* X_one = M.where(row_k, M.as_row(b.op("Mul", {xk, inv_d})), X_a);
        // 2x2: B(k+2:) -= l_k x_k + l_k1 x_k1, then the 2x2 system
        Value* beyond = b.op("Greater", {M.iota, k1});
        Value* X_b = b.op("Sub", {b.op("Sub", {X1, M.outer(M.where(beyond, ck, M.sc(0.0)), xk)}),
                                  M.outer(M.where(beyond, ck1, M.sc(0.0)), xk1)});
        Value* akm1k = M.at(ck, k1);
        Value* akm1 = b.op("Div", {M.at(ck, kc), akm1k});
        Value* ak = b.op("Div", {M.at(ck1, k1), akm1k});
        Value* denom = b.op("Sub", {b.op("Mul", {akm1, ak}), M.sc(1.0)});
        Value* bkm1 = b.op("Div", {xk, akm1k});
        Value* bk = b.op("Div", {xk1, akm1k});
        Value* new_k = b.op("Div", {b.op("Sub", {b.op("Mul", {ak, bkm1}), bk}), denom});
        Value* new_k1 = b.op("Div", {b.op("Sub", {b.op("Mul", {akm1, bk}), bkm1}), denom});
        Value* X_two = M.where(row_k, M.as_row(new_k), M.where(row_k1, M.as_row(new_k1), X_b));
        Value* X_next = M.where(active, M.where(two, X_two, X_one), X);
        Value* k_next = M.where(active, b.op("Add", {k, M.where(two, b.const_int(2), one)}), k);
        return {X_next, k_next};
      });
  // L^T X = Y, k = n-1, n-2, ... (k is the second row of a 2x2 block)
  auto bwd = helpers::loop(
      ctx, ctx.const_int(n), {fwd[0], ctx.const_int(n - 1)},
      [&](SymbolicContext& b, Value*, const std::vector<Value*>& c) -> std::vector<Value*> {
        Mat M{b, t, n, b.const_ints(decomp::iota(n))};
        Value *X = c[0], *k = c[1];
        Value* one = b.const_int(1);
        Value* zero_i = b.const_int(0);
        Value* active = M.ge(k, zero_i);
        Value* kc = M.imax(k, 0);
        Value* km = M.imax(b.op("Sub", {kc, one}), 0);
        Value* pk = M.at(piv, kc);
        Value* two = b.op("Less", {pk, zero_i});
        Value* below = b.op("Greater", {M.iota, kc});
        auto minus_dot = [&](Value* j) {  // x_j - sum_{i > k} l_ij x_i, as a [1, r] row
          Value* l = M.as_row(M.where(below, M.col(ld, j), M.sc(0.0)));
          return b.op("Sub", {M.as_row(M.at(X, j)), b.op("MatMul", {l, X})});
        };
        Value* X_one = M.where(M.as_col(M.is(kc)), minus_dot(kc), X);
        Value* X_two = M.where(M.as_col(M.is(km)), minus_dot(km), X_one);
        Value* kp = b.op("Sub", {b.op("Abs", {pk}), one});
        Value* X_sw = b.op("Gather", {M.where(two, X_two, X_one), M.swap(kc, kp)}, {{"axis", int64_t{0}}});
        Value* X_next = M.where(active, X_sw, X);
        Value* k_next = M.where(active, b.op("Sub", {k, M.where(two, b.const_int(2), one)}), k);
        return {X_next, k_next};
      });
  return bwd[0];
}

int64_t product(const std::vector<int64_t>& v, size_t end) {
  return std::accumulate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(end), int64_t{1},
                         std::multiplies<int64_t>());
}

// aten::linalg_ldl_factor(A, *, hermitian) -> (LD, pivots) and
// linalg_ldl_factor_ex(A, *, hermitian, check_errors) -> (LD, pivots, info).
void ldl_factor(SymbolicContext& ctx) {
  const DType t = decomp::float_type(ctx, 0);
  const std::vector<int64_t> sizes = decomp::matrix_sizes(ctx, 0);
  const size_t R = sizes.size();
  const int64_t n = sizes[R - 1];
  if (sizes[R - 2] != n) ctx.fail("ldl_factor: A must be square");
  const int64_t batch = product(sizes, R - 2);
  Value* A3 = ctx.op("Reshape", {ctx.in(0), ctx.const_ints({batch, n, n})});
  auto outs = helpers::loop(
      ctx, ctx.const_int(batch), {},
      [&](SymbolicContext& b, Value* it, const std::vector<Value*>&) -> std::vector<Value*> {
        Factor f = sytf2(b, b.op("Gather", {A3, it}, {{"axis", int64_t{0}}}), n, t);
        return {f.ld, f.piv, f.info};
      },
      3);
  std::vector<int64_t> batch_dims(sizes.begin(), sizes.end() - 2);
  ctx.out(ctx.op("Reshape", {outs[0], ctx.const_ints(sizes)}), 0);
  ctx.out(ctx.cast(ctx.op("Reshape", {outs[1], ctx.const_ints(decomp::cat(batch_dims, {n}))}), DType::Int32), 1);
  if (ctx.num_outputs() > 2)
    ctx.out(ctx.cast(ctx.op("Reshape", {outs[2], ctx.const_ints(batch_dims)}), DType::Int32), 2);
}

// aten::linalg_ldl_solve(LD, pivots, B, *, hermitian): the batch dims of LD,
// pivots and B broadcast.
void ldl_solve(SymbolicContext& ctx) {
  const DType t = decomp::float_type(ctx, 0);
  if (ctx.dtype(2) != t) ctx.fail("ldl_solve: LD and B must have the same dtype");
  const std::vector<int64_t> sl = decomp::matrix_sizes(ctx, 0);
  const std::vector<int64_t> sb = decomp::matrix_sizes(ctx, 2);
  const std::vector<int64_t>& sp = ctx.static_sizes(1);
  const int64_t n = sl.back(), r = sb.back();
  if (sl[sl.size() - 2] != n || sb[sb.size() - 2] != n || sp.empty() || sp.back() != n)
    ctx.fail("ldl_solve: LD must be [..., n, n], pivots [..., n] and B [..., n, k]");
  // the broadcast batch shape
  std::vector<std::vector<int64_t>> batches{{sl.begin(), sl.end() - 2}, {sp.begin(), sp.end() - 1},
                                            {sb.begin(), sb.end() - 2}};
  size_t rank = 0;
  for (const auto& v : batches) rank = std::max(rank, v.size());
  std::vector<int64_t> batch(rank, 1);
  for (const auto& v : batches)
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t& d = batch[rank - v.size() + i];
      if (v[i] != 1 && d != 1 && v[i] != d) ctx.fail("ldl_solve: the batch dims of LD, pivots and B do not broadcast");
      if (v[i] != 1) d = v[i];
    }
  const int64_t count = product(batch, rank);
  auto flat = [&](size_t idx, std::vector<int64_t> tail) {
    Value* e = ctx.op("Expand", {ctx.in(idx), ctx.const_ints(decomp::cat(batch, tail))});
    return ctx.op("Reshape", {e, ctx.const_ints(decomp::cat({count}, tail))});
  };
  Value* LD3 = flat(0, {n, n});
  Value* P2 = ctx.cast(flat(1, {n}), DType::Int64);
  Value* B3 = flat(2, {n, r});
  auto outs = helpers::loop(
      ctx, ctx.const_int(count), {},
      [&](SymbolicContext& b, Value* it, const std::vector<Value*>&) -> std::vector<Value*> {
        auto pick = [&](Value* v) { return b.op("Gather", {v, it}, {{"axis", int64_t{0}}}); };
        return {sytrs(b, pick(LD3), pick(P2), pick(B3), n, t)};
      },
      1);
  ctx.out(ctx.op("Reshape", {outs[0], ctx.const_ints(decomp::cat(batch, {n, r}))}));
}

}  // namespace

void register_linalg_ldl(Registry& r) {
  r.add("aten::linalg_ldl_factor", 9, ldl_factor);
  r.add("aten::linalg_ldl_factor_ex", 9, ldl_factor);
  r.add("aten::linalg_ldl_solve", 9, ldl_solve);
}

}  // namespace torch2onnx::symbolics
