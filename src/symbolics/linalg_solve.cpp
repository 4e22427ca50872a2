// Solves and matrix functions built on linalg_lu.cpp's building blocks
// (ONNX has no triangular solve, Cholesky or matrix exponential):
// triangular_solve / linalg_solve_triangular (substitution Loops),
// linalg_cholesky(_ex), cholesky_solve, cholesky_inverse (a left-looking
// Cholesky Loop, LAPACK potf2's order), linalg_matrix_power, linalg_matrix_exp
// (scaling and squaring of a degree-18 Taylor polynomial, with the scaling
// computed from the 1-norm at run time and the squarings in a Loop),
// linalg_multi_dot / chain_matmul, linalg_vander / vander, linalg_vecdot,
// linalg_tensorinv, linalg_tensorsolve. All from opset 9.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {


namespace linsolve {  // defined in linalg_lu.cpp
using ir::Value;
Value* sc(SymbolicContext& ctx, ir::DType t, double v);
Value* iota(SymbolicContext& ctx, int64_t n);
Value* eye(SymbolicContext& ctx, ir::DType t, int64_t rows, int64_t cols);
Value* mT(SymbolicContext& ctx, Value* v, int64_t rank);
Value* batch_zeros(SymbolicContext& ctx, Value* v, int64_t rank, int64_t drop, ir::DType t);
std::pair<Value*, Value*> broadcast_batch(SymbolicContext& ctx, Value* a, int64_t ra, Value* b, int64_t rb);
Value* tri_solve(SymbolicContext& ctx, Value* T, Value* B, int64_t R, int64_t n, bool lower, bool unit);
std::pair<Value*, Value*> solve_square(SymbolicContext& ctx, Value* A, Value* B, int64_t R, int64_t n, int64_t r);
std::pair<Value*, Value*> inverse(SymbolicContext& ctx, Value* A, int64_t R, int64_t n);
void require_float(SymbolicContext& ctx, size_t idx);
using ClosedBody = std::function<std::vector<Value*>(SymbolicContext& b, Value* it, const std::vector<Value*>& c,
                                                     const std::vector<Value*>& inv)>;
std::vector<Value*> loop_closed(SymbolicContext& ctx, Value* trip, const std::vector<Value*>& carried,
                                const std::vector<Value*>& inv, const ClosedBody& body, size_t num_scan);
}  // namespace linsolve

namespace {

using ir::Value;
using namespace linsolve;

// Solves op(A) X = B (A triangular, lower or upper; op transposes when
// `transpose`) with A and B batch-broadcast; returns X and the broadcast A.
std::pair<Value*, Value*> triangular(SymbolicContext& ctx, size_t a_i, size_t b_i, bool upper, bool transpose,
                                     bool unit) {
  require_float(ctx, a_i);
  require_float(ctx, b_i);
  const int64_t ra = ctx.rank(a_i), rb = ctx.rank(b_i), R = std::max(ra, rb);
  const int64_t n = ctx.static_dim(a_i, -1);
  auto [A, B] = broadcast_batch(ctx, ctx.in(a_i), ra, ctx.in(b_i), rb);
  Value* T = transpose ? mT(ctx, A, R) : A;
  return {tri_solve(ctx, T, B, R, n, transpose ? upper : !upper, unit), A};
}

// aten::triangular_solve(self=B, A, upper, transpose, unitriangular) -> (solution, cloned_coefficient)
void triangular_solve(SymbolicContext& ctx) {
  auto [X, A] = triangular(ctx, 1, 0, ctx.none(2) || ctx.b(2), !ctx.none(3) && ctx.b(3), !ctx.none(4) && ctx.b(4));
  ctx.out(X, 0);
  ctx.out(ctx.op("Identity", {A}), 1);
}

// aten::linalg_solve_triangular(A, B, *, upper, left, unitriangular)
void linalg_solve_triangular(SymbolicContext& ctx) {
  const bool upper = ctx.b(2), left = ctx.none(3) || ctx.b(3), unit = !ctx.none(4) && ctx.b(4);
  if (left) return ctx.out(triangular(ctx, 0, 1, upper, false, unit).first);
  // X A = B  <=>  A^T X^T = B^T
  require_float(ctx, 0);
  require_float(ctx, 1);
  const int64_t ra = ctx.rank(0), rb = ctx.rank(1), R = std::max(ra, rb);
  const int64_t n = ctx.static_dim(0, -1);
  auto [A, B] = broadcast_batch(ctx, ctx.in(0), ra, ctx.in(1), rb);
  ctx.out(mT(ctx, tri_solve(ctx, mT(ctx, A, R), mT(ctx, B, R), R, n, upper, unit), R));
}

// The lower Cholesky factor of A [..., n, n] (rank R; only its lower triangle
// is read), column by column: v = A[:, j] - L L[j, :]^T, L[j, j] = sqrt(v_j),
// L[i, j] = v_i / L[j, j] (i > j). info: 1 + the first j with v_j <= 0 or NaN
// (the leading minor of order j + 1 is not positive definite), else 0.
std::pair<Value*, Value*> cholesky_lower(SymbolicContext& ctx, Value* A, int64_t R, int64_t n) {
  const ir::DType t = A->dtype();
  Value* L0 = ctx.op("ConstantOfShape", {ctx.op("Shape", {A})}, {{"value", ir::Tensor::scalar(t, 0.0).reshaped({1})}});
  Value* info0 = batch_zeros(ctx, A, R, 2, ir::DType::Int64);
  const int64_t ax_row = R - 2, ax_col = R - 1;
  auto outs = loop_closed(
      ctx, ctx.const_int(n), {L0, info0}, {A},
      [&](SymbolicContext& b, Value* j, const std::vector<Value*>& c,
          const std::vector<Value*>& iv) -> std::vector<Value*> {
        Value *L = c[0], *info = c[1], *A = iv[0];
        Value* iota_n = iota(b, n);
        Value* lrow = helpers::unsqueeze(b, b.op("Gather", {L, j}, {{"axis", ax_row}}), {ax_col});  // [..., n, 1]
        Value* acol = b.op("Gather", {A, j}, {{"axis", ax_col}});                                   // [..., n]
        Value* v = b.op("Sub", {acol, helpers::squeeze(b, b.op("MatMul", {L, lrow}), {ax_col})});
        Value* d2 = helpers::unsqueeze(b, b.op("Gather", {v, j}, {{"axis", ax_row}}), {ax_row});  // [..., 1]
        Value* d = b.op("Sqrt", {d2});
        Value* below = b.op("Greater", {iota_n, j});
        Value* is_j = helpers::equal(b, iota_n, j);
        Value* col = b.op("Where", {below, b.op("Div", {v, d}), b.op("Where", {is_j, d, sc(b, t, 0.0)})});
        Value* L1 = b.op("Where", {is_j, helpers::unsqueeze(b, col, {ax_col}), L});  // column j
        Value* bad = helpers::squeeze(b, b.op("Not", {b.op("Greater", {d2, sc(b, t, 0.0)})}), {ax_row});
        Value* first = b.op("And", {helpers::equal(b, info, b.const_int(0)), bad});
        return {L1, b.op("Where", {first, b.op("Add", {j, b.const_int(1)}), info})};
      },
      0);
  return {outs[0], outs[1]};
}

// aten::linalg_cholesky(A, *, upper) and linalg_cholesky_ex(A, *, upper,
// check_errors) -> (L, info). upper: U = L^T from the upper triangle of A.
void linalg_cholesky(SymbolicContext& ctx) {
  require_float(ctx, 0);
  const int64_t R = ctx.rank(0);
  const bool upper = !ctx.none(1) && ctx.b(1);
  Value* A = upper ? mT(ctx, ctx.in(0), R) : ctx.in(0);
  auto [L, info] = cholesky_lower(ctx, A, R, ctx.static_dim(0, -1));
  ctx.out(upper ? mT(ctx, L, R) : L, 0);
  if (ctx.num_outputs() > 1) ctx.out(ctx.cast(info, ir::DType::Int32), 1);
}

// aten::cholesky_solve(self=B, L, upper): A = L L^T (or U^T U); two triangular solves.
void cholesky_solve(SymbolicContext& ctx) {
  require_float(ctx, 0);
  require_float(ctx, 1);
  const bool upper = !ctx.none(2) && ctx.b(2);
  const int64_t rb = ctx.rank(0), rl = ctx.rank(1), R = std::max(rb, rl);
  const int64_t n = ctx.static_dim(1, -1);
  auto [F, B] = broadcast_batch(ctx, ctx.in(1), rl, ctx.in(0), rb);
  Value* L = upper ? mT(ctx, F, R) : F;  // A = L L^T with L lower
  Value* Y = tri_solve(ctx, L, B, R, n, true, false);
  ctx.out(tri_solve(ctx, mT(ctx, L, R), Y, R, n, false, false));
}

// aten::cholesky_inverse(L, upper): (L L^T)^-1 = L^-T L^-1 (potri's formula).
void cholesky_inverse(SymbolicContext& ctx) {
  require_float(ctx, 0);
  const bool upper = !ctx.none(1) && ctx.b(1);
  const int64_t R = ctx.rank(0), n = ctx.static_dim(0, -1);
  Value* F = ctx.in(0);
  Value* L = upper ? mT(ctx, F, R) : F;
  Value* I = ctx.op("Expand", {eye(ctx, ctx.dtype(0), n, n), ctx.op("Shape", {F})});
  Value* Li = tri_solve(ctx, L, I, R, n, true, false);
  ctx.out(ctx.op("MatMul", {mT(ctx, Li, R), Li}));
}

// aten::linalg_matrix_power(A, n): PyTorch's order of products (binary
// powering from the least significant bit); negative n through the inverse.
void matrix_power(SymbolicContext& ctx) {
  const int64_t R = ctx.rank(0);
  if (R < 2) ctx.fail("matrix_power expects a matrix or a batch of matrices");
  int64_t p = ctx.i(1);
  const int64_t n = ctx.static_dim(0, -1);
  Value* a = ctx.in(0);
  if (p < 0) {
    require_float(ctx, 0);
    a = inverse(ctx, a, R, n).first;
    p = -p;
  }
  if (p == 0) return ctx.out(ctx.op("Expand", {eye(ctx, ctx.dtype(0), n, n), ctx.op("Shape", {a})}));
  if (p == 1) return ctx.out(a);
  if (p == 2) return ctx.out(ctx.op("MatMul", {a, a}));
  if (p == 3) return ctx.out(ctx.op("MatMul", {ctx.op("MatMul", {a, a}), a}));
  Value *z = nullptr, *result = nullptr;
  while (p > 0) {
    const int64_t bit = p % 2;
    p /= 2;
    z = z ? ctx.op("MatMul", {z, z}) : a;
    if (bit == 1) result = result ? ctx.op("MatMul", {result, z}) : z;
  }
  ctx.out(result);
}

// aten::linalg_matrix_exp(A): exp(A) = T18(A / 2^s)^(2^s), T18 the degree-18
// Taylor polynomial (evaluated Paterson-Stockmeyer style), s = max(0,
// ceil(log2(|A|_1 / theta))) per matrix, theta PyTorch's bound for degree 18
// (truncation below the unit roundoff); the s squarings are a Loop whose
// trip count is the largest s in the batch (a matrix stops at its own s).
void matrix_exp(SymbolicContext& ctx) {
  require_float(ctx, 0);
  const ir::DType t = ctx.dtype(0);
  const int64_t R = ctx.rank(0), n = ctx.static_dim(0, -1);
  Value* A = ctx.in(0);
  if (n == 1) return ctx.out(ctx.op("Exp", {A}));  // (PyTorch's shortcut)
  const double theta = t == ir::DType::Double ? 1.090863719290036 : 3.010066362817634;
  Value* norm = helpers::reduce(ctx, "ReduceMax", helpers::reduce(ctx, "ReduceSum", ctx.op("Abs", {A}), {R - 2}, false),
                                {R - 2}, false);  // [...]
  Value* s = ctx.op("Ceil", {ctx.op("Div", {ctx.op("Log", {ctx.op("Div", {norm, sc(ctx, t, theta)})}),
                                            sc(ctx, t, std::log(2.0))})});
  s = ctx.op("Where", {ctx.op("Greater", {norm, sc(ctx, t, theta)}), ctx.op("Min", {s, sc(ctx, t, 1100.0)}),
                       sc(ctx, t, 0.0)});
  Value* s_u = helpers::unsqueeze(ctx, s, {R - 2, R - 1});  // [..., 1, 1]
  Value* X = ctx.op("Mul", {A, ctx.op("Pow", {sc(ctx, t, 2.0), ctx.op("Neg", {s_u})})});
  // T18(X) = sum_i B_i (X^4)^i, B_i = sum_{j<4} X^j / (4i + j)!
  Value* I = eye(ctx, t, n, n);
  std::vector<Value*> pw{I, X};
  pw.push_back(ctx.op("MatMul", {X, X}));
  pw.push_back(ctx.op("MatMul", {pw[2], X}));
  Value* X4 = ctx.op("MatMul", {pw[3], X});
  auto block = [&](int64_t i) {
    Value* acc = nullptr;
    for (int64_t j = 0; j < 4 && 4 * i + j <= 18; ++j) {
      double f = 1.0;
      for (int64_t q = 2; q <= 4 * i + j; ++q) f *= static_cast<double>(q);
      Value* term = ctx.op("Mul", {pw[j], sc(ctx, t, 1.0 / f)});
      acc = acc ? ctx.op("Add", {acc, term}) : term;
    }
    return acc;
  };
  Value* T = block(4);
  for (int64_t i = 3; i >= 0; --i) T = ctx.op("Add", {ctx.op("MatMul", {T, X4}), block(i)});
  Value* trips = ctx.cast(R > 2 ? helpers::reduce(ctx, "ReduceMax", s, {}, false) : s, ir::DType::Int64);
  auto outs = loop_closed(ctx, trips, {T}, {s_u},
                          [&](SymbolicContext& b, Value* it, const std::vector<Value*>& c,
                              const std::vector<Value*>& iv) -> std::vector<Value*> {
                            Value* more = b.op("Less", {b.cast(it, t), iv[0]});
                            return {b.op("Where", {more, b.op("MatMul", {c[0], c[0]}), c[0]})};
                          },
                          0);
  ctx.out(outs[0]);
}

// Matrix chain product of 2-D values with static dims (rows of each, then the
// last one's columns), in the order of least multiplications.
Value* chain(SymbolicContext& ctx, const std::vector<Value*>& ms, const std::vector<int64_t>& d) {
  const size_t k = ms.size();
  std::vector<std::vector<double>> cost(k, std::vector<double>(k, 0.0));
  std::vector<std::vector<size_t>> split(k, std::vector<size_t>(k, 0));
  for (size_t len = 1; len < k; ++len)
    for (size_t i = 0; i + len < k; ++i) {
      const size_t j = i + len;
      cost[i][j] = std::numeric_limits<double>::infinity();
      for (size_t s = i; s < j; ++s) {
        const double c = cost[i][s] + cost[s + 1][j] + static_cast<double>(d[i]) * d[s + 1] * d[j + 1];
        if (c < cost[i][j]) {
          cost[i][j] = c;
          split[i][j] = s;
        }
      }
    }
  std::function<Value*(size_t, size_t)> build = [&](size_t i, size_t j) -> Value* {
    if (i == j) return ms[i];
    return ctx.op("MatMul", {build(i, split[i][j]), build(split[i][j] + 1, j)});
  };
  return build(0, k - 1);
}

// aten::linalg_multi_dot(tensors): the first may be 1-D (a row vector), the
// last 1-D (a column vector), the others 2-D. aten::chain_matmul(matrices): all 2-D.
void multi_dot(SymbolicContext& ctx) {
  const Arg& list = ctx.arg(0);
  std::vector<Value*> ms = ctx.list(0);
  const size_t k = ms.size();
  if (k == 0) ctx.fail("multi_dot needs at least one tensor");
  if (k == 1) {
    if (ctx.kind() == "aten::chain_matmul") return ctx.out(ctx.op("Identity", {ms[0]}));
    ctx.fail("multi_dot(): expected at least 2 tensors");
  }
  std::vector<int64_t> d;
  bool first_vec = false, last_vec = false;
  for (size_t i = 0; i < k; ++i) {
    const Arg& e = list.elements.at(i);
    if (!e.has_sizes) ctx.fail("multi_dot: the tensors' sizes are unknown");
    std::vector<int64_t> s = e.sizes;
    if (s.size() == 1 && (i == 0 || i + 1 == k)) {
      if (i == 0) {
        first_vec = true;
        ms[i] = helpers::unsqueeze(ctx, ms[i], {0});
        s = {1, s[0]};
      } else {
        last_vec = true;
        ms[i] = helpers::unsqueeze(ctx, ms[i], {1});
        s = {s[0], 1};
      }
    }
    if (s.size() != 2) ctx.fail("multi_dot: the tensors must be 2-D (the first and last may be 1-D)");
    if (i == 0) d.push_back(s[0]);
    d.push_back(s[1]);
  }
  Value* r = chain(ctx, ms, d);
  std::vector<int64_t> sq;
  if (first_vec) sq.push_back(0);
  if (last_vec) sq.push_back(1);
  ctx.out(sq.empty() ? r : helpers::squeeze(ctx, r, sq));
}

// The Vandermonde matrix [..., n, N] of x [..., n]: x^0 .. x^(N-1) (cumulative
// products, as PyTorch), decreasing powers unless `increasing`.
Value* vander_of(SymbolicContext& ctx, Value* x, int64_t rank, int64_t N, bool increasing, ir::DType t) {
  Value* xu = helpers::unsqueeze(ctx, ctx.cast(x, t), {rank});
  Value* one =
      ctx.op("ConstantOfShape", {ctx.op("Shape", {xu})}, {{"value", ir::Tensor::scalar(t, 1.0).reshaped({1})}});
  if (N == 0) return helpers::slice(ctx, one, {rank}, {0}, {0});
  std::vector<Value*> cols{one};
  for (int64_t k = 1; k < N; ++k) cols.push_back(k == 1 ? xu : ctx.op("Mul", {cols.back(), xu}));
  if (!increasing) std::reverse(cols.begin(), cols.end());
  return cols.size() == 1 ? cols[0] : ctx.op("Concat", cols, {{"axis", rank}});
}

ir::DType vander_type(SymbolicContext& ctx) {
  const ir::DType t = ctx.out_dtype();
  return t == ir::DType::Undefined ? ir::DType::Float : t;
}

// aten::linalg_vander(x, *, N=None)
void linalg_vander(SymbolicContext& ctx) {
  const int64_t r = ctx.rank(0);
  if (r < 1) ctx.fail("linalg_vander expects at least 1-D input");
  const int64_t N = ctx.none(1) ? ctx.static_dim(0, -1) : ctx.i(1);
  ctx.out(vander_of(ctx, ctx.in(0), r, N, true, vander_type(ctx)));
}

// aten::vander(x, N=None, increasing=False)
void vander(SymbolicContext& ctx) {
  if (ctx.rank(0) != 1) ctx.fail("vander expects a 1-D input");
  const int64_t N = ctx.none(1) ? ctx.static_dim(0, 0) : ctx.i(1);
  ctx.out(vander_of(ctx, ctx.in(0), 1, N, !ctx.none(2) && ctx.b(2), vander_type(ctx)));
}

// aten::linalg_vecdot(x, y, *, dim=-1): sum(x * y, dim) (real dtypes)
void vecdot(SymbolicContext& ctx) {
  const int64_t r = std::max(ctx.rank(0), ctx.rank(1));
  const int64_t dim = helpers::normalize_dim(ctx, ctx.none(2) ? -1 : ctx.i(2), r);
  ir::DType t = ctx.out_dtype();
  if (t == ir::DType::Undefined) t = ctx.dtype(0);
  Value* prod = ctx.op("Mul", {ctx.cast(ctx.in(0), t), ctx.cast(ctx.in(1), t)});
  ctx.out(helpers::reduce(ctx, "ReduceSum", prod, {dim}, false));
}

int64_t prod(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

// aten::linalg_tensorinv(A, ind): the inverse of A viewed as a
// prod(shape[:ind]) x prod(shape[ind:]) matrix, shaped shape[ind:] + shape[:ind].
void tensorinv(SymbolicContext& ctx) {
  require_float(ctx, 0);
  const auto& s = ctx.static_sizes(0);
  const int64_t ind = ctx.none(1) ? 2 : ctx.i(1);
  if (ind <= 0 || ind > static_cast<int64_t>(s.size())) ctx.fail("tensorinv: ind must be in 1..A.dim()");
  const int64_t p = prod(s, 0, ind), q = prod(s, ind, s.size());
  if (p != q) ctx.fail("tensorinv: the product of the first ind dims must equal that of the rest");
  Value* X = inverse(ctx, helpers::reshape(ctx, ctx.in(0), {p, p}), 2, p).first;
  std::vector<int64_t> out(s.begin() + ind, s.end());
  out.insert(out.end(), s.begin(), s.begin() + ind);
  ctx.out(helpers::reshape(ctx, X, out));
}

// aten::linalg_tensorsolve(A, B, dims=None): dims of A moved last, then A as a
// prod(B.shape) x prod(rest) matrix and B as a vector; the result has
// A.shape[B.dim():].
void tensorsolve(SymbolicContext& ctx) {
  require_float(ctx, 0);
  std::vector<int64_t> s = ctx.static_sizes(0);
  const int64_t ra = ctx.rank(0), rb = ctx.rank(1);
  Value* A = ctx.in(0);
  if (!ctx.none(2)) {
    std::vector<int64_t> dims = helpers::normalize_dims(ctx, ctx.is(2), ra), perm;
    for (int64_t d = 0; d < ra; ++d)
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
    perm.insert(perm.end(), dims.begin(), dims.end());
    A = helpers::transpose(ctx, A, perm);
    std::vector<int64_t> s2;
    for (int64_t d : perm) s2.push_back(s[d]);
    s = s2;
  }
  if (rb > ra) ctx.fail("tensorsolve: B has more dims than A");
  const int64_t p = prod(s, 0, rb), q = prod(s, rb, s.size());
  if (p != q) ctx.fail("tensorsolve: A is not square as a matrix");
  Value* b = helpers::reshape(ctx, ctx.in(1), {p, 1});
  Value* X = solve_square(ctx, helpers::reshape(ctx, A, {p, p}), b, 2, p, 1).first;
  ctx.out(helpers::reshape(ctx, X, std::vector<int64_t>(s.begin() + rb, s.end())));
}

}  // namespace

void register_linalg_solve(Registry& r) {
  r.add("aten::triangular_solve", 9, triangular_solve);
  r.add("aten::linalg_solve_triangular", 9, linalg_solve_triangular);
  r.add("aten::linalg_cholesky", 9, linalg_cholesky);
  r.add("aten::linalg_cholesky_ex", 9, linalg_cholesky);
  r.add("aten::cholesky_solve", 9, cholesky_solve);
  r.add("aten::cholesky_inverse", 9, cholesky_inverse);
  r.add("aten::linalg_matrix_power", 9, matrix_power);
  r.add("aten::linalg_matrix_exp", 9, matrix_exp);
  r.add("aten::linalg_multi_dot", 9, multi_dot);
  r.add("aten::chain_matmul", 9, multi_dot);
  r.add("aten::linalg_vander", 9, linalg_vander);
  r.add("aten::vander", 9, vander);
  r.add("aten::linalg_vecdot", 9, vecdot);
  r.add("aten::linalg_tensorinv", 9, tensorinv);
  r.add("aten::linalg_tensorsolve", 9, tensorsolve);
}

}  // namespace torch2onnx::symbolics
