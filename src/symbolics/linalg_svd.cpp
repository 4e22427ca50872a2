// The singular value decomposition by one-sided (Hestenes) Jacobi, and what
// builds on it. Columns of W = A (or A^T when wide), scaled by max|A|, are
// rotated pairwise in the parallel round-robin order until every pair is
// orthogonal to n * eps relative to the columns' norms (a Loop with a
// condition); then S = column norms (sorted descending), V = the accumulated
// rotations and U = the Householder QR of the sorted W (R is then diagonal up
// to rounding, so U[:, j] = A v_j / s_j, completed to an orthonormal basis
// where s_j = 0 or full_matrices asks for it).
// Signs: U[:, j] = A v_j / s_j with v_j as the rotations leave it (singular
// vectors are unique up to sign only; PyTorch's LAPACK may differ).
// Registered: linalg_svd, _linalg_svd, svd, linalg_svdvals, linalg_pinv,
// pinverse, linalg_matrix_rank, linalg_cond, nuclear_norm, linalg_lstsq.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "symbolic/helpers.h"
#include "symbolics/all.h"
#include "symbolics/linalg_decomp.h"

namespace torch2onnx::symbolics {
namespace decomp {

using ir::DType;
using ir::Value;

namespace {

Value* sc(SymbolicContext& c, DType t, double v) { return c.const_scalar(t, v); }


}  // namespace

SVD svd(SymbolicContext& ctx, Value* a, const std::vector<int64_t>& sizes, DType t, bool compute_uv,
        bool full_matrices) {
  const int64_t R = static_cast<int64_t>(sizes.size());
  const int64_t m = sizes[R - 2], n = sizes[R - 1];
  const std::vector<int64_t> batch(sizes.begin(), sizes.end() - 2);
  const bool wide = m < n;  // A^T = U' S V'^T: U = V', Vh = U'^T
  const int64_t mm = std::max(m, n), nn = std::min(m, n);
  Value* w = wide ? transpose_last(ctx, a, R) : a;
  Value* scale = matrix_scale(ctx, w, R, t);
  w = ctx.op("Div", {w, per_matrix(ctx, scale, R)});
  const int64_t N = nn + nn % 2;  // odd: a zero column no rotation changes
  if (N != nn) {
    std::vector<int64_t> pads(static_cast<size_t>(2 * R), 0);
    pads[static_cast<size_t>(2 * R - 1)] = 1;
    w = helpers::pad(ctx, w, pads, "constant", 0.0);
  }
  std::vector<double> om(static_cast<size_t>(N * N), 1.0);
  for (int64_t i = 0; i < N; ++i) om[static_cast<size_t>(i * N + i)] = 0.0;
  Value* I = eye(ctx, t, N, N);
  const double tol = static_cast<double>(N) * eps_of(t);
  std::vector<Value*> carried{w};
  if (compute_uv) carried.push_back(ctx.op("Expand", {I, ctx.const_ints(cat(batch, {N, N}))}));
  auto outs = jacobi_sweeps(
      ctx, N, 40, carried,
      [&](SymbolicContext& b, Value* ord, Value* inv, const std::vector<Value*>& c) -> std::pair<std::vector<Value*>, Value*> {
        Value* I = eye(b, t, N, N);  // (bodies capture no outer values: see householder_qr)
        Value* off_mask = b.constant(ir::Tensor::from_doubles(t, om, {N, N}));
        Value* wp = b.op("Gather", {c[0], ord}, {{"axis", R - 1}});
        Value* wr = helpers::reshape(b, wp, cat(batch, {mm, N / 2, 2}));
        Value* w0 = b.op("Gather", {wr, b.const_int(0)}, {{"axis", R}});
        Value* w1 = b.op("Gather", {wr, b.const_int(1)}, {{"axis", R}});
        Value* alpha = helpers::reduce(b, "ReduceSumSquare", w0, {R - 2}, false);
        Value* beta = helpers::reduce(b, "ReduceSumSquare", w1, {R - 2}, false);
        Value* gamma = helpers::reduce(b, "ReduceSum", b.op("Mul", {w0, w1}), {R - 2}, false);
        auto [cs, sn] = jacobi_rotation(b, alpha, beta, gamma, t);
        Value* w2 = b.op("Gather", {rotate_pairs(b, wp, cs, sn, batch, mm, N), inv}, {{"axis", R - 1}});
        std::vector<Value*> next{w2};
        if (compute_uv) {
          Value* vp = b.op("Gather", {c[1], ord}, {{"axis", R - 1}});
          next.push_back(b.op("Gather", {rotate_pairs(b, vp, cs, sn, batch, N, N), inv}, {{"axis", R - 1}}));
        }
        // go on while some pair of columns has G_ij^2 > tol^2 G_ii G_jj (G = W^T W)
        Value* g = b.op("MatMul", {transpose_last(b, w2, R), w2});
        Value* dg = helpers::reduce(b, "ReduceSum", b.op("Mul", {g, I}), {R - 1}, false);
        Value* thr = b.op("Mul", {b.op("Mul", {helpers::unsqueeze(b, dg, {R - 1}), helpers::unsqueeze(b, dg, {R - 2})}),
                                  sc(b, t, tol * tol)});
        Value* bad = b.op("Sub", {b.op("Mul", {b.op("Mul", {g, g}), off_mask}), thr});
        return {next, helpers::reduce(b, "ReduceMax", bad, {R - 2, R - 1}, false)};
      });
  Value* W = outs[0];
  if (N != nn) W = helpers::slice(ctx, W, {R - 1}, {0}, {nn});
  Value* sig = ctx.op("Sqrt", {helpers::reduce(ctx, "ReduceSumSquare", W, {R - 2}, false)});  // [..., nn]
  Value* P = sort_permutation(ctx, sig, R - 1, nn, true, t);
  SVD res;
  res.s = ctx.op("Mul", {helpers::squeeze(ctx, ctx.op("MatMul", {P, helpers::unsqueeze(ctx, sig, {R - 1})}), {R - 1}),
                         helpers::unsqueeze(ctx, scale, {R - 2})});
  if (!compute_uv) return res;
  Value* V = outs[1];
  if (N != nn) V = helpers::slice(ctx, V, {R - 2, R - 1}, {0, 0}, {nn, nn});
  Value* Pt = transpose_last(ctx, P, R);
  Value* ws = ctx.op("MatMul", {W, Pt});
  Value* vs = ctx.op("MatMul", {V, Pt});
  QR qr = householder_qr(ctx, ws, cat(batch, {mm, nn}), t, true);
  std::vector<double> dmask(static_cast<size_t>(mm * nn), 0.0);
  for (int64_t i = 0; i < nn; ++i) dmask[static_cast<size_t>(i * nn + i)] = 1.0;
  Value* diag = helpers::reduce(
      ctx, "ReduceSum",
      ctx.op("Where", {ctx.constant(ir::Tensor::from_doubles(DType::Bool, dmask, {mm, nn})), qr.packed, sc(ctx, t, 0.0)}),
      {R - 2}, false);
  Value* sign = ctx.op("Where", {ctx.op("Less", {diag, sc(ctx, t, 0.0)}), sc(ctx, t, -1.0), sc(ctx, t, 1.0)});
  Value* q = qr.q;
  if (full_matrices && mm > nn)
    sign = ctx.op("Concat", {sign, filled(ctx, t, cat(batch, {mm - nn}), 1.0)}, {{"axis", R - 2}});
  else if (mm > nn)
    q = helpers::slice(ctx, q, {R - 1}, {0}, {nn});
  Value* uw = ctx.op("Mul", {q, helpers::unsqueeze(ctx, sign, {R - 2})});
  if (!wide) {
    res.u = uw;
    res.vh = transpose_last(ctx, vs, R);
  } else {
    res.u = vs;
    res.vh = transpose_last(ctx, uw, R);
  }
  return res;
}

Value* singular_values(SymbolicContext& ctx, Value* a, const std::vector<int64_t>& sizes, DType t) {
  return svd(ctx, a, sizes, t, false, false).s;
}

Value* matrix_norm_svd(SymbolicContext& ctx, Value* x, const std::vector<int64_t>& sizes, DType t, const std::string& ord,
                       int64_t d0, int64_t d1, bool keepdim) {
  const int64_t R = static_cast<int64_t>(sizes.size());
  if (ord != "nuc" && ord != "2" && ord != "-2") ctx.fail("matrix_norm_svd: ord must be 'nuc', '2' or '-2'");
  if (d0 < 0 || d1 < 0 || d0 >= R || d1 >= R || d0 == d1) ctx.fail("the matrix norm needs two distinct dims");
  std::vector<int64_t> perm, moved;
  for (int64_t i = 0; i < R; ++i)
    if (i != d0 && i != d1) perm.push_back(i);
  perm.push_back(d0);
  perm.push_back(d1);
  for (int64_t d : perm) moved.push_back(sizes[static_cast<size_t>(d)]);
  for (int64_t d : moved)
    if (d == 0) ctx.fail("empty matrices are not supported");
  Value* s = singular_values(ctx, helpers::transpose(ctx, x, perm), moved, t);  // [..., k]
  const int64_t k = std::min(moved[static_cast<size_t>(R - 2)], moved[static_cast<size_t>(R - 1)]);
  Value* r = ord == "nuc" ? helpers::reduce(ctx, "ReduceSum", s, {R - 2}, false)
                          : ctx.op("Gather", {s, ctx.const_int(ord == "2" ? 0 : k - 1)}, {{"axis", R - 2}});
  if (keepdim) r = helpers::unsqueeze(ctx, r, {std::min(d0, d1), std::max(d0, d1)});
  return r;
}

namespace {


void check_driver(SymbolicContext& ctx, size_t idx) {
  if (ctx.none(idx)) return;
  const std::string d = ctx.s(idx);
  if (d != "gesvd" && d != "gesvdj" && d != "gesvda") ctx.fail("unknown svd driver '" + d + "'");
}

// aten::linalg_svd(A, full_matrices=True, *, driver=None) -> (U, S, Vh)
void linalg_svd(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  check_driver(ctx, 2);
  SVD r = svd(ctx, ctx.in(0), matrix_sizes(ctx, 0), t, true, ctx.none(1) ? true : ctx.b(1));
  ctx.out(r.u, 0);
  ctx.out(r.s, 1);
  ctx.out(r.vh, 2);
}

// aten::_linalg_svd(A, full_matrices=False, compute_uv=True, *, driver=None)
void linalg_svd_internal(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  check_driver(ctx, 3);
  const bool uv = ctx.none(2) ? true : ctx.b(2);
  SVD r = svd(ctx, ctx.in(0), matrix_sizes(ctx, 0), t, uv, ctx.none(1) ? false : ctx.b(1));
  ctx.out(uv ? r.u : filled(ctx, t, {0}, 0.0), 0);
  ctx.out(r.s, 1);
  ctx.out(uv ? r.vh : filled(ctx, t, {0}, 0.0), 2);
}

// aten::svd(self, some=True, compute_uv=True) -> (U, S, V) with V = Vh^T;
// without compute_uv, U and V are zeros of the full shapes (as PyTorch).
void svd_legacy(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  const auto& sizes = matrix_sizes(ctx, 0);
  const int64_t R = static_cast<int64_t>(sizes.size());
  const bool some = ctx.none(1) ? true : ctx.b(1);
  const bool uv = ctx.none(2) ? true : ctx.b(2);
  SVD r = svd(ctx, ctx.in(0), sizes, t, uv, !some);
  if (!uv) {
    const std::vector<int64_t> batch(sizes.begin(), sizes.end() - 2);
    ctx.out(filled(ctx, t, cat(batch, {sizes[R - 2], sizes[R - 2]}), 0.0), 0);
    ctx.out(r.s, 1);
    ctx.out(filled(ctx, t, cat(batch, {sizes[R - 1], sizes[R - 1]}), 0.0), 2);
    return;
  }
  ctx.out(r.u, 0);
  ctx.out(r.s, 1);
  ctx.out(transpose_last(ctx, r.vh, R), 2);
}

// aten::linalg_svdvals(A, *, driver=None)
void linalg_svdvals(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  check_driver(ctx, 1);
  ctx.out(singular_values(ctx, ctx.in(0), matrix_sizes(ctx, 0), t));
}

// A tolerance argument: none, a constant number, or a tensor (per matrix).
Value* tol_arg(SymbolicContext& ctx, size_t idx, DType t) {
  if (ctx.none(idx)) return nullptr;
  return ctx.in_as(idx, t);
}

// max(atol, rtol * s_max) as PyTorch's linalg pinv/matrix_rank take them
// (rtol defaults to eps * max(m, n), or to 0 where atol > 0 is given); [...].
Value* threshold(SymbolicContext& ctx, Value* atol, Value* rtol, Value* smax, int64_t m, int64_t n, DType t) {
  Value* zero = sc(ctx, t, 0.0);
  Value* def = sc(ctx, t, eps_of(t) * static_cast<double>(std::max(m, n)));
  if (!rtol) rtol = atol ? ctx.op("Where", {ctx.op("Greater", {atol, zero}), zero, def}) : def;
  if (!atol) atol = zero;
  return ctx.op("Max", {atol, ctx.op("Mul", {rtol, smax})});
}

struct Spectrum {
  Value* s;      // singular values (hermitian: eigenvalues) [..., k]
  Value* abs_s;  // |s|
  Value* smax;   // [...]
  Value* left;   // pinv = right diag(1/s) left^T:  [..., m, k]
  Value* right;  // [..., n, k]
};

Spectrum spectrum(SymbolicContext& ctx, Value* a, const std::vector<int64_t>& sizes, DType t, bool hermitian, bool vectors) {
  const int64_t R = static_cast<int64_t>(sizes.size());
  Spectrum sp{};
  if (hermitian) {
    if (sizes[R - 2] != sizes[R - 1]) ctx.fail("hermitian=True needs square matrices");
    Eigh e = eigh(ctx, symmetric_from(ctx, a, R, sizes[R - 1], true), sizes, t, vectors);  // reads the lower triangle
    sp.s = e.w;
    sp.abs_s = ctx.op("Abs", {e.w});
    sp.left = e.v;
    sp.right = e.v;
  } else {
    SVD r = svd(ctx, a, sizes, t, vectors, false);
    sp.s = r.s;
    sp.abs_s = r.s;
    sp.left = r.u;
    if (vectors) sp.right = transpose_last(ctx, r.vh, R);
  }
  sp.smax = helpers::reduce(ctx, "ReduceMax", sp.abs_s, {R - 2}, false);
  return sp;
}

// right diag(1/s where |s| > tol, else 0) left^T
Value* pinv_from(SymbolicContext& ctx, const Spectrum& sp, Value* tol, int64_t R, DType t) {
  Value* keep = ctx.op("Greater", {sp.abs_s, helpers::unsqueeze(ctx, tol, {R - 2})});
  Value* safe = ctx.op("Where", {keep, sp.s, sc(ctx, t, 1.0)});
  Value* inv = ctx.op("Where", {keep, ctx.op("Div", {sc(ctx, t, 1.0), safe}), sc(ctx, t, 0.0)});
  Value* scaled = ctx.op("Mul", {sp.right, helpers::unsqueeze(ctx, inv, {R - 2})});
  return ctx.op("MatMul", {scaled, transpose_last(ctx, sp.left, R)});
}

// aten::linalg_pinv(self, rcond, hermitian) / .atol_rtol_float / .atol_rtol_tensor / .rcond_tensor
void linalg_pinv(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  const auto& sizes = matrix_sizes(ctx, 0);
  const int64_t R = static_cast<int64_t>(sizes.size());
  Value *atol = nullptr, *rtol = nullptr;
  bool hermitian = false;
  if (ctx.num_args() >= 4) {
    atol = tol_arg(ctx, 1, t);
    rtol = tol_arg(ctx, 2, t);
    hermitian = ctx.none(3) ? false : ctx.b(3);
  } else {  // rcond: rtol = rcond, atol = 0
    rtol = ctx.none(1) ? nullptr : ctx.in_as(1, t);
    atol = sc(ctx, t, 0.0);
    hermitian = ctx.none(2) ? false : ctx.b(2);
  }
  Spectrum sp = spectrum(ctx, ctx.in(0), sizes, t, hermitian, true);
  Value* tol = threshold(ctx, atol, rtol, sp.smax, sizes[R - 2], sizes[R - 1], t);
  ctx.out(pinv_from(ctx, sp, tol, R, t));
}

// aten::pinverse(self, rcond=1e-15)
void pinverse(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  const auto& sizes = matrix_sizes(ctx, 0);
  const int64_t R = static_cast<int64_t>(sizes.size());
  Spectrum sp = spectrum(ctx, ctx.in(0), sizes, t, false, true);
  Value* rtol = sc(ctx, t, ctx.none(1) ? 1e-15 : ctx.f(1));
  Value* tol = threshold(ctx, sc(ctx, t, 0.0), rtol, sp.smax, sizes[R - 2], sizes[R - 1], t);
  ctx.out(pinv_from(ctx, sp, tol, R, t));
}

// aten::linalg_matrix_rank(self, tol, hermitian) / .tol_tensor / .atol_rtol_float / .atol_rtol_tensor
void matrix_rank(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  const auto& sizes = matrix_sizes(ctx, 0);
  const int64_t R = static_cast<int64_t>(sizes.size());
  Value *atol = nullptr, *rtol = nullptr;
  bool hermitian = false;
  if (ctx.num_args() >= 4) {
    atol = tol_arg(ctx, 1, t);
    rtol = tol_arg(ctx, 2, t);
    hermitian = ctx.none(3) ? false : ctx.b(3);
  } else {  // tol: atol = tol, rtol = 0
    atol = ctx.in_as(1, t);
    rtol = sc(ctx, t, 0.0);
    hermitian = ctx.none(2) ? false : ctx.b(2);
  }
  Spectrum sp = spectrum(ctx, ctx.in(0), sizes, t, hermitian, false);
  Value* tol = threshold(ctx, atol, rtol, sp.smax, sizes[R - 2], sizes[R - 1], t);
  Value* keep = ctx.op("Greater", {sp.abs_s, helpers::unsqueeze(ctx, tol, {R - 2})});
  ctx.out(helpers::reduce(ctx, "ReduceSum", ctx.cast(keep, DType::Int64), {R - 2}, false));
}

// aten::linalg_cond(self, p=None) / .p_str(self, p): p None/2/-2 from the
// singular values; 'fro', 'nuc', +-1, +-inf as ||A|| ||A^-1|| with A^-1 =
// V diag(1/s) U^T (square matrices; inf when singular, as PyTorch).
void linalg_cond(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  const auto& sizes = matrix_sizes(ctx, 0);
  const int64_t R = static_cast<int64_t>(sizes.size());
  const int64_t k = std::min(sizes[R - 2], sizes[R - 1]);
  std::string ps;
  double p = 2.0;
  if (!ctx.none(1)) {
    if (ctx.arg(1).kind == Arg::Kind::String) ps = ctx.s(1);
    else p = ctx.f(1);
  }
  auto first_last = [&](Value* s) {
    Value* s0 = ctx.op("Gather", {s, ctx.const_int(0)}, {{"axis", R - 2}});
    Value* s1 = ctx.op("Gather", {s, ctx.const_int(k - 1)}, {{"axis", R - 2}});
    return std::make_pair(s0, s1);
  };
  if (ps.empty() && std::fabs(p) == 2.0) {
    auto [s0, s1] = first_last(singular_values(ctx, ctx.in(0), sizes, t));
    ctx.out(p > 0 ? ctx.op("Div", {s0, s1}) : ctx.op("Div", {s1, s0}));
    return;
  }
  if (!ps.empty() && ps != "fro" && ps != "nuc") ctx.fail("cond: p must be 'fro', 'nuc' or a number");
  if (ps.empty() && std::fabs(p) != 1.0 && !std::isinf(p)) ctx.fail("cond: p must be one of 2, -2, 1, -1, inf, -inf");
  if (sizes[R - 2] != sizes[R - 1]) ctx.fail("cond with this p needs square matrices");
  Value* a = ctx.in(0);
  SVD r = svd(ctx, a, sizes, t, ps != "nuc", false);
  Value* one = sc(ctx, t, 1.0);
  Value* singular = helpers::equal(ctx, helpers::reduce(ctx, "ReduceMin", r.s, {R - 2}, false), sc(ctx, t, 0.0));
  Value* inv_s = ctx.op("Div", {one, ctx.op("Where", {ctx.op("Greater", {r.s, sc(ctx, t, 0.0)}), r.s, one})});
  Value* value = nullptr;
  if (ps == "nuc") {
    value = ctx.op("Mul", {helpers::reduce(ctx, "ReduceSum", r.s, {R - 2}, false),
                           helpers::reduce(ctx, "ReduceSum", inv_s, {R - 2}, false)});
  } else {
    Value* ainv = ctx.op("MatMul", {ctx.op("Mul", {transpose_last(ctx, r.vh, R), helpers::unsqueeze(ctx, inv_s, {R - 2})}),
                                    transpose_last(ctx, r.u, R)});
    auto norm = [&](Value* x) -> Value* {
      if (ps == "fro") return helpers::reduce(ctx, "ReduceL2", x, {R - 2, R - 1}, false);
      // ord +-1: over columns of the column sums; +-inf: over rows of the row sums
      const int64_t sum_axis = std::isinf(p) ? R - 1 : R - 2;
      Value* s = helpers::reduce(ctx, "ReduceSum", ctx.op("Abs", {x}), {sum_axis}, false);
      return helpers::reduce(ctx, p > 0 ? "ReduceMax" : "ReduceMin", s, {R - 2}, false);
    };
    value = ctx.op("Mul", {norm(a), norm(ainv)});
  }
  ctx.out(ctx.op("Where", {singular, sc(ctx, t, std::numeric_limits<double>::infinity()), value}));
}

// aten::nuclear_norm(self, keepdim=False) (2-D) / .dim(self, dim, keepdim):
// the sum of the singular values over the two dims.
void nuclear_norm(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  const auto& sizes = ctx.static_sizes(0);
  const int64_t R = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> dims{0, 1};
  bool keep = false;
  if (ctx.num_args() >= 3) {
    dims = helpers::normalize_dims(ctx, ctx.is(1), R);
    keep = ctx.b(2);
  } else {
    if (R != 2) ctx.fail("nuclear_norm without dim needs a 2-D input");
    keep = ctx.none(1) ? false : ctx.b(1);
  }
  if (dims.size() != 2) ctx.fail("nuclear_norm needs two dims");
  ctx.out(matrix_norm_svd(ctx, ctx.in(0), sizes, t, "nuc", dims[0], dims[1], keep));
}

// aten::linalg_lstsq(self, b, rcond=None, *, driver=None) for the CPU default
// driver 'gelsy' (solution = the minimum-norm least-squares solution
// pinv(A) B with rtol = rcond or eps * max(m, n); rank; empty residuals and
// singular_values, as gelsy gives them) and 'gels' (full rank assumed;
// residuals ||A x - b||^2 per column when m > n).
void linalg_lstsq(SymbolicContext& ctx) {
  const DType t = float_type(ctx, 0);
  const auto& sizes = matrix_sizes(ctx, 0);
  const int64_t R = static_cast<int64_t>(sizes.size());
  const int64_t m = sizes[R - 2], n = sizes[R - 1];
  if (ctx.rank(1) != R) ctx.fail("lstsq: B must be [..., m, k] with A's batch dimensions");
  const std::string driver = ctx.none(3) ? "gelsy" : ctx.s(3);
  if (driver != "gelsy" && driver != "gels")
    ctx.fail("lstsq driver '" + driver + "' returns residuals only when every matrix has full rank (known at run time); "
             "use driver=None, 'gelsy' or 'gels'");
  Value* a = ctx.in(0);
  Value* bm = ctx.in_as(1, t);
  Spectrum sp = spectrum(ctx, a, sizes, t, false, true);
  Value* rtol = ctx.none(2) ? nullptr : sc(ctx, t, std::max(ctx.f(2), 0.0));
  if (driver == "gels") rtol = sc(ctx, t, 0.0);
  Value* tol = threshold(ctx, sc(ctx, t, 0.0), rtol, sp.smax, m, n, t);
  Value* x = ctx.op("MatMul", {pinv_from(ctx, sp, tol, R, t), bm});
  ctx.out(x, 0);
  Value* empty = filled(ctx, t, {0}, 0.0);
  if (driver == "gels") {
    if (m > n) {
      Value* res = ctx.op("Sub", {ctx.op("MatMul", {a, x}), bm});
      ctx.out(helpers::reduce(ctx, "ReduceSumSquare", res, {R - 2}, false), 1);
    } else {
      ctx.out(empty, 1);
    }
    ctx.out(ctx.constant(ir::Tensor::from_int64s({}, {0})), 2);
  } else {
    ctx.out(empty, 1);
    Value* keep = ctx.op("Greater", {sp.abs_s, helpers::unsqueeze(ctx, tol, {R - 2})});
    ctx.out(helpers::reduce(ctx, "ReduceSum", ctx.cast(keep, DType::Int64), {R - 2}, false), 2);
  }
  ctx.out(empty, 3);
}

}  // namespace
}  // namespace decomp

void register_linalg_svd(Registry& r) {
  r.add("aten::linalg_svd", 9, decomp::linalg_svd);
  r.add("aten::_linalg_svd", 9, decomp::linalg_svd_internal);
  r.add("aten::svd", 9, decomp::svd_legacy);
  r.add("aten::linalg_svdvals", 9, decomp::linalg_svdvals);
  r.add("aten::linalg_pinv", 9, decomp::linalg_pinv);
  r.add("aten::pinverse", 9, decomp::pinverse);
  r.add("aten::linalg_matrix_rank", 9, decomp::matrix_rank);
  r.add("aten::linalg_cond", 9, decomp::linalg_cond);
  r.add("aten::nuclear_norm", 9, decomp::nuclear_norm);
  r.add("aten::linalg_lstsq", 9, decomp::linalg_lstsq);
}

}  // namespace torch2onnx::symbolics
