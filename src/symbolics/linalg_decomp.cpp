// Matrix factorizations (ONNX has none), computed by ONNX Loops over static
// sizes, in the input's dtype, from opset 9:
// - Householder QR exactly as LAPACK's geqrf/dlarfg (beta = -sign(alpha) *
//   ||x||, tau = (beta - alpha) / beta, v[0] = 1; tau = 0 when the column
//   below the diagonal is zero), so Q and R equal PyTorch's up to rounding:
//   linalg_qr, geqrf, linalg_householder_product (orgqr), ormqr.
// Symmetric eigendecomposition (Jacobi): linalg_eigh.cpp; SVD and what builds
// on it: linalg_svd.cpp (both registered from register_linalg_decomp).
#include "symbolics/linalg_decomp.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {

void register_linalg_eigh(Registry& r);  // linalg_eigh.cpp
void register_linalg_svd(Registry& r);   // linalg_svd.cpp

namespace decomp {

using ir::DType;
using ir::Value;

// ---- the shared pieces declared in linalg_decomp.h

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

std::vector<int64_t> cat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// v[..., s] -> [..., 1, 1] for broadcasting a per-matrix scalar.
Value* per_matrix(SymbolicContext& c, Value* s, int64_t R) { return helpers::unsqueeze(c, s, {R - 2, R - 1}); }

DType float_type(SymbolicContext& ctx, size_t idx) {
  const DType t = ctx.dtype(idx);
  if (t != DType::Float && t != DType::Double) ctx.fail("only float32 and float64 matrices are supported");
  return t;
}

const std::vector<int64_t>& matrix_sizes(SymbolicContext& ctx, size_t idx) {
  const auto& s = ctx.static_sizes(idx);
  if (s.size() < 2) ctx.fail("the input must have at least 2 dimensions");
  for (int64_t d : s)
    if (d == 0) ctx.fail("empty matrices are not supported");
  return s;
}

namespace {

Value* sc(SymbolicContext& c, DType t, double v) { return c.const_scalar(t, v); }


}  // namespace

// The largest |a| of each matrix (1 where the matrix is zero): inputs are
// scaled by it so that squares and norms cannot overflow.
Value* matrix_scale(SymbolicContext& c, Value* a, int64_t R, DType t) {
  Value* m = helpers::reduce(c, "ReduceMax", c.op("Abs", {a}), {R - 2, R - 1}, false);
  return c.op("Where", {helpers::equal(c, m, sc(c, t, 0.0)), sc(c, t, 1.0), m});
}

double eps_of(DType t) { return t == DType::Double ? 2.220446049250313e-16 : 1.1920928955078125e-07; }

Value* transpose_last(SymbolicContext& c, Value* v, int64_t R) {
  auto perm = iota(R);
  std::swap(perm[static_cast<size_t>(R - 2)], perm[static_cast<size_t>(R - 1)]);
  return helpers::transpose(c, v, perm);
}

Value* eye(SymbolicContext& c, DType t, int64_t m, int64_t n) {
  std::vector<double> d(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < std::min(m, n); ++i) d[static_cast<size_t>(i * n + i)] = 1.0;
  return c.constant(ir::Tensor::from_doubles(t, d, {m, n}));
}

Value* filled(SymbolicContext& c, DType t, const std::vector<int64_t>& dims, double value) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return c.constant(ir::Tensor::from_doubles(t, std::vector<double>(static_cast<size_t>(count), value), dims));
}

// ---------------------------------------------------------------- QR

QR householder_qr(SymbolicContext& ctx, Value* a, const std::vector<int64_t>& sizes, DType t, bool want_q) {
  const int64_t R = static_cast<int64_t>(sizes.size());
  const int64_t m = sizes[R - 2], n = sizes[R - 1], kmin = std::min(m, n);
  const std::vector<int64_t> batch(sizes.begin(), sizes.end() - 2);
  QR res;
  Value* tau0 = filled(ctx, t, cat(batch, {kmin}), 0.0);
  Value* q0 = want_q ? ctx.op("Expand", {eye(ctx, t, m, m), ctx.const_ints(cat(batch, {m, m}))}) : nullptr;
  if (kmin == 0) return {a, tau0, q0};
  std::vector<Value*> carried{a, tau0};
  if (want_q) carried.push_back(q0);
  auto outs = helpers::loop(
      ctx, ctx.const_int(kmin), carried,
      [&](SymbolicContext& b, Value* k, const std::vector<Value*>& c) -> std::vector<Value*> {
        // (loop bodies build their own constants and read outer values only
        // as carried state: a Loop whose outputs go unused is then removed cleanly)
        Value* rows = b.const_ints(iota(m));
        Value* cols = b.const_ints(iota(n));
        Value* kidx = b.const_ints(iota(kmin));
        Value *A = c[0], *tau_v = c[1];
        Value* zero = sc(b, t, 0.0);
        Value* col = b.op("Gather", {A, k}, {{"axis", R - 1}});  // [..., m]
        Value* gt = b.op("Greater", {rows, k});
        Value* lt = b.op("Less", {rows, k});
        Value* is_k = b.op("Equal", {rows, k});
        Value* x = b.op("Where", {gt, col, zero});                 // below the diagonal
        Value* alpha = b.op("Gather", {col, k}, {{"axis", R - 2}});  // [...]
        // dlarfg with a scaled norm: norm = hypot(alpha, ||x||)
        Value* s = helpers::reduce(b, "ReduceMax", b.op("Abs", {b.op("Where", {lt, zero, col})}), {R - 2}, false);
        s = b.op("Where", {helpers::equal(b, s, zero), sc(b, t, 1.0), s});
        Value* xs = b.op("Div", {x, helpers::unsqueeze(b, s, {R - 2})});
        Value* as = b.op("Div", {alpha, s});
        Value* xn2 = helpers::reduce(b, "ReduceSumSquare", xs, {R - 2}, false);
        Value* norm = b.op("Mul", {s, b.op("Sqrt", {b.op("Add", {b.op("Mul", {as, as}), xn2})})});
        Value* beta = b.op("Where", {b.op("Less", {alpha, zero}), norm, b.op("Neg", {norm})});
        Value* trivial = helpers::equal(b, xn2, zero);  // H = I
        Value* tau = b.op("Where", {trivial, zero, b.op("Div", {b.op("Sub", {beta, alpha}), beta})});
        Value* denom = b.op("Where", {trivial, sc(b, t, 1.0), b.op("Sub", {alpha, beta})});
        Value* vbelow = b.op("Div", {x, helpers::unsqueeze(b, denom, {R - 2})});
        Value* v = b.op("Where", {is_k, sc(b, t, 1.0), vbelow});  // [..., m]
        Value* beta_f = b.op("Where", {trivial, alpha, beta});
        Value* tau4 = per_matrix(b, tau, R);
        Value* vcol = helpers::unsqueeze(b, v, {R - 1});  // [..., m, 1]
        Value* vrow = helpers::unsqueeze(b, v, {R - 2});  // [..., 1, m]
        // trailing columns: A -= tau v (v^T A)
        Value* w = b.op("MatMul", {vrow, A});
        w = b.op("Where", {b.op("Greater", {cols, k}), w, zero});
        Value* A2 = b.op("Sub", {A, b.op("Mul", {tau4, b.op("Mul", {vcol, w})})});
        // column k: R above and on the diagonal, the reflector below
        Value* newcol = b.op("Where", {lt, col, b.op("Where", {is_k, helpers::unsqueeze(b, beta_f, {R - 2}), vbelow})});
        Value* A3 = b.op("Where", {b.op("Equal", {cols, k}), helpers::unsqueeze(b, newcol, {R - 1}), A2});
        Value* tau_next =
            b.op("Where", {b.op("Equal", {kidx, k}), helpers::unsqueeze(b, tau, {R - 2}), tau_v});
        std::vector<Value*> next{A3, tau_next};
        if (want_q) {  // Q = Q H_k = Q - tau (Q v) v^T
          Value* Q = c[2];
          Value* qv = b.op("MatMul", {Q, vcol});
          next.push_back(b.op("Sub", {Q, b.op("Mul", {tau4, b.op("Mul", {qv, vrow})})}));
        }
        return next;
      });
  res.packed = outs[0];
  res.tau = outs[1];
  if (want_q) res.q = outs[2];
  return res;
}

namespace {

// C <- H_i C (left) or C H_i (right) for i = 0..k-1 (or k-1..0 when
// `reverse`), H_i = I - tau_i v_i v_i^T with v_i read from column i of the
// packed `a` ([..., mv, >= k]; v_i[i] = 1, zero above).
Value* apply_reflectors(SymbolicContext& ctx, Value* a, Value* tau, int64_t R, int64_t mv, int64_t k, Value* c,
                        bool left, bool reverse, DType t) {
  if (k == 0) return c;
  auto outs = helpers::loop(
      ctx, ctx.const_int(k), {c, a, tau}, [&](SymbolicContext& b, Value* it, const std::vector<Value*>& cc) -> std::vector<Value*> {
        Value* rows = b.const_ints(iota(mv));
        Value *a = cc[1], *tau = cc[2];
        Value* i = reverse ? b.op("Sub", {b.const_int(k - 1), it}) : it;
        Value* col = b.op("Gather", {a, i}, {{"axis", R - 1}});
        Value* v = b.op("Where", {b.op("Less", {rows, i}), sc(b, t, 0.0),
                                  b.op("Where", {b.op("Equal", {rows, i}), sc(b, t, 1.0), col})});
        Value* ti = per_matrix(b, b.op("Gather", {tau, i}, {{"axis", R - 2}}), R);
        Value* vcol = helpers::unsqueeze(b, v, {R - 1});
        Value* vrow = helpers::unsqueeze(b, v, {R - 2});
        Value* C = cc[0];
        Value* upd = left ? b.op("Mul", {vcol, b.op("MatMul", {vrow, C})}) : b.op("Mul", {b.op("MatMul", {C, vcol}), vrow});
        return {b.op("Sub", {C, b.op("Mul", {ti, upd})}), a, tau};
      });
  return outs[0];
}

// The upper triangle (j >= i) of [..., r, n] (a constant mask).
Value* triu(SymbolicContext& c, Value* a, int64_t r, int64_t n, DType t) {
  std::vector<double> mask(static_cast<size_t>(r * n));
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < n; ++j) mask[static_cast<size_t>(i * n + j)] = j >= i ? 1.0 : 0.0;
  Value* m = c.constant(ir::Tensor::from_doubles(DType::Bool, mask, {r, n}));
  return c.op("Where", {m, a, sc(c, t, 0.0)});
}


// aten::linalg_qr(A, mode='reduced'|'complete'|'r') -> (Q, R)
void linalg_qr(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  const auto& sizes = matrix_sizes(ctx, 0);
  const std::string mode = ctx.none(1) ? "reduced" : ctx.s(1);
  if (mode != "reduced" && mode != "complete" && mode != "r") ctx.fail("qr mode must be reduced, complete or r");
  const int64_t R = static_cast<int64_t>(sizes.size());
  const int64_t m = sizes[R - 2], n = sizes[R - 1], k = std::min(m, n);
  QR qr = householder_qr(ctx, ctx.in(0), sizes, t, mode != "r");
  const bool complete = mode == "complete";
  Value* r = triu(ctx, qr.packed, m, n, t);
  if (!complete && m > k) r = helpers::slice(ctx, r, {R - 2}, {0}, {k});
  if (mode == "r") {
    ctx.out(filled(ctx, t, {0}, 0.0), 0);
  } else {
    Value* q = qr.q;
    if (!complete && m > k) q = helpers::slice(ctx, q, {R - 1}, {0}, {k});
    ctx.out(q, 0);
  }
  ctx.out(r, 1);
}

// aten::geqrf(self) -> (a, tau): the packed form LAPACK's geqrf returns.
void geqrf(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  QR qr = householder_qr(ctx, ctx.in(0), matrix_sizes(ctx, 0), t, false);
  ctx.out(qr.packed, 0);
  ctx.out(qr.tau, 1);
}

// aten::linalg_householder_product(input, tau) (torch.orgqr records it too): the first n
// columns of H_0 ... H_{k-1}, applied backwards to the m x n identity.
void householder_product(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  const auto& sizes = matrix_sizes(ctx, 0);
  const int64_t R = static_cast<int64_t>(sizes.size());
  const int64_t m = sizes[R - 2], n = sizes[R - 1];
  const int64_t k = ctx.static_dim(1, -1);
  if (ctx.rank(1) != static_cast<int64_t>(sizes.size()) - 1 || k > n) ctx.fail("tau must be [..., k] with k <= n");
  const std::vector<int64_t> batch(sizes.begin(), sizes.end() - 2);
  Value* c0 = ctx.op("Expand", {eye(ctx, t, m, n), ctx.const_ints(cat(batch, {m, n}))});
  ctx.out(apply_reflectors(ctx, ctx.in(0), ctx.in_as(1, t), R, m, k, c0, true, true, t));
}

// aten::ormqr(self, tau, other, left=True, transpose=False): Q C, Q^T C, C Q
// or C Q^T with Q = H_0 ... H_{k-1} from geqrf's packed reflectors.
void ormqr(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  const auto& sizes = matrix_sizes(ctx, 0);
  const auto& csizes = matrix_sizes(ctx, 2);
  const int64_t R = static_cast<int64_t>(sizes.size());
  if (static_cast<int64_t>(csizes.size()) != R || !std::equal(sizes.begin(), sizes.end() - 2, csizes.begin()))
    ctx.fail("ormqr: the input and other must have the same batch dimensions");
  const bool left = ctx.none(3) ? true : ctx.b(3);
  const bool trans = ctx.none(4) ? false : ctx.b(4);
  const int64_t k = ctx.static_dim(1, -1);
  const int64_t mv = sizes[R - 2];
  if (mv != (left ? csizes[R - 2] : csizes[R - 1])) ctx.fail("ormqr: the reflectors do not match other's size");
  // Q C = H_0 (... (H_{k-1} C)); Q^T C = H_{k-1} (... (H_0 C)); C Q = ((C H_0) ...) H_{k-1}; C Q^T backwards.
  const bool reverse = left != trans;
  ctx.out(apply_reflectors(ctx, ctx.in(0), ctx.in_as(1, t), R, mv, k, ctx.in_as(2, t), left, reverse, t));
}

}  // namespace

}  // namespace decomp

void register_linalg_decomp(Registry& r) {
  r.add("aten::linalg_qr", 9, decomp::linalg_qr);
  r.add("aten::geqrf", 9, decomp::geqrf);
  r.add("aten::linalg_householder_product", 9, decomp::householder_product);
  r.add("aten::orgqr", 9, decomp::householder_product);  // (torch.export records it; TorchScript: householder_product)
  r.add("aten::ormqr", 9, decomp::ormqr);
  register_linalg_eigh(r);
  register_linalg_svd(r);
}

}  // namespace torch2onnx::symbolics
