// LU-based linear algebra (ONNX has no factorization, inverse or solve):
// linalg_lu_factor(_ex), _lu_with_info, linalg_lu, lu_unpack, linalg_lu_solve,
// lu_solve, linalg_solve(_ex), linalg_inv(_ex). Gaussian elimination with
// partial pivoting (LAPACK getrf: the first row of largest |a_ik| is the pivot,
// the multipliers are a_ik / pivot, the trailing rows are updated by
// a_ij - l_i u_j) as an ONNX Loop over the columns of the whole batch, row
// swaps by Where (exact), and triangular solves by forward/back substitution,
// also Loops. The building blocks (namespace linsolve) are shared with
// linalg_solve.cpp. Everything works from opset 9 (Loop, Where, ArgMax).
#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics::linsolve {

using ir::Value;

Value* sc(SymbolicContext& ctx, ir::DType t, double v) { return ctx.const_scalar(t, v); }

Value* iota(SymbolicContext& ctx, int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return ctx.const_ints(v);
}

// A constant bool [rows, cols] matrix: fn(i, j).
template <typename Fn>
Value* bool_mask(SymbolicContext& ctx, int64_t rows, int64_t cols, Fn fn) {
  std::vector<uint8_t> bytes;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) bytes.push_back(fn(i, j) ? 1 : 0);
  return ctx.constant(ir::Tensor::owned(ir::DType::Bool, {rows, cols}, std::move(bytes)));
}

// The [rows, cols] identity (ones on the main diagonal) of dtype t.
Value* eye(SymbolicContext& ctx, ir::DType t, int64_t rows, int64_t cols) {
  std::vector<double> v;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) v.push_back(i == j ? 1.0 : 0.0);
  if (t != ir::DType::Float && t != ir::DType::Double)
    return ctx.cast(ctx.constant(ir::Tensor::from_doubles(ir::DType::Double, v, {rows, cols})), t);
  return ctx.constant(ir::Tensor::from_doubles(t, v, {rows, cols}));
}

// Swaps the last two dims of a rank-`rank` value.
Value* mT(SymbolicContext& ctx, Value* v, int64_t rank) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return helpers::transpose(ctx, v, perm);
}

// Shape(v)[0 : rank - drop] (the batch shape), a 1-D int64 value.
Value* leading_shape(SymbolicContext& ctx, Value* v, int64_t rank, int64_t drop) {
  return helpers::slice(ctx, ctx.op("Shape", {v}), {0}, {0}, {rank - drop});
}

// Zeros of dtype t with the batch shape of v (its leading rank - drop dims).
Value* batch_zeros(SymbolicContext& ctx, Value* v, int64_t rank, int64_t drop, ir::DType t) {
  return ctx.op("ConstantOfShape", {leading_shape(ctx, v, rank, drop)},
                {{"value", ir::Tensor::scalar_int(t, 0).reshaped({1})}});
}

// Broadcasts the batch dims (all but the last two) of a and b against each
// other; both results have rank max(ra, rb).
std::pair<Value*, Value*> broadcast_batch(SymbolicContext& ctx, Value* a, int64_t ra, Value* b, int64_t rb) {
  Value* a2 = a;
  Value* b2 = b;
  if (rb > 2) a2 = ctx.op("Expand", {a, ctx.op("Concat", {leading_shape(ctx, b, rb, 2), ctx.const_ints({1, 1})},
                                                {{"axis", int64_t{0}}})});
  if (ra > 2) b2 = ctx.op("Expand", {b, ctx.op("Concat", {leading_shape(ctx, a, ra, 2), ctx.const_ints({1, 1})},
                                                {{"axis", int64_t{0}}})});
  return {a2, b2};
}

// helpers::loop whose body reads no value of the enclosing graph: the
// loop-invariant values `inv` are carried unchanged (so that removing an unused
// Loop leaves no dangling uses of outer values), and constants are made in the
// body. `body` gets (body ctx, iteration, carried, invariants) and returns the
// carried values' next values and the scan outputs; so does the result.
using ClosedBody = std::function<std::vector<Value*>(SymbolicContext& b, Value* it, const std::vector<Value*>& c,
                                                     const std::vector<Value*>& inv)>;
std::vector<Value*> loop_closed(SymbolicContext& ctx, Value* trip, const std::vector<Value*>& carried,
                                const std::vector<Value*>& inv, const ClosedBody& body, size_t num_scan) {
  const size_t nc = carried.size();
  std::vector<Value*> all = carried;
  all.insert(all.end(), inv.begin(), inv.end());
  auto outs = helpers::loop(
      ctx, trip, all,
      [&](SymbolicContext& b, Value* it, const std::vector<Value*>& c) -> std::vector<Value*> {
        std::vector<Value*> cc(c.begin(), c.begin() + nc), iv(c.begin() + nc, c.end());
        std::vector<Value*> r = body(b, it, cc, iv);
        std::vector<Value*> res(r.begin(), r.begin() + nc);
        res.insert(res.end(), iv.begin(), iv.end());
        res.insert(res.end(), r.begin() + nc, r.end());
        return res;
      },
      num_scan);
  std::vector<Value*> res(outs.begin(), outs.begin() + nc);
  res.insert(res.end(), outs.begin() + nc + inv.size(), outs.end());
  return res;
}

// Gaussian elimination with partial pivoting (LAPACK getf2 order) of M
// [..., m, w] (rank R) over its first kmax columns; the row operations also
// apply to the columns past kmax (an augmented right-hand side). Returns the
// eliminated M (L's multipliers below the diagonal, U on and above), info
// (int64, batch shape: 1 + the first column whose pivot is zero, else 0), the
// 0-based pivot rows [..., kmax] (int64) and perm [..., m] (int64: row j of
// the result comes from row perm[j] of M).
struct Lu {
  Value* m = nullptr;
  Value* info = nullptr;
  Value* pivots = nullptr;
  Value* perm = nullptr;
};

Lu eliminate(SymbolicContext& ctx, Value* M, int64_t R, int64_t m, int64_t w, int64_t kmax) {
  const ir::DType t = M->dtype();
  Value* info0 = batch_zeros(ctx, M, R, 2, ir::DType::Int64);
  Value* perm0 = ctx.op("Add", {helpers::unsqueeze(ctx, info0, {R - 2}), iota(ctx, m)});
  const int64_t ax_row = R - 2, ax_col = R - 1;
  auto outs = loop_closed(
      ctx, ctx.const_int(kmax), {M, info0, perm0}, {},
      [&](SymbolicContext& b, Value* k, const std::vector<Value*>& c,
          const std::vector<Value*>&) -> std::vector<Value*> {
        Value *Mc = c[0], *info = c[1], *perm = c[2];
        Value* iota_m = iota(b, m);
        Value* iota_w = iota(b, w);
        Value* zero = sc(b, t, 0.0);
        // the pivot: the first row i >= k of largest |M[i, k]|
        Value* colk = b.op("Gather", {Mc, k}, {{"axis", ax_col}});  // [..., m]
        Value* rows_ge = b.op("Not", {b.op("Less", {iota_m, k})});
        Value* masked = b.op("Where", {rows_ge, b.op("Abs", {colk}), sc(b, t, -1.0)});
        Value* p = b.op("ArgMax", {masked}, {{"axis", ax_row}, {"keepdims", int64_t{1}}});  // [..., 1]
        Value* is_p = helpers::equal(b, iota_m, p);                                          // [..., m]
        Value* is_k = helpers::equal(b, iota_m, k);                                          // [m]
        Value* is_p_r = helpers::unsqueeze(b, is_p, {ax_col});                               // [..., m, 1]
        Value* is_k_r = helpers::unsqueeze(b, is_k, {1});                                    // [m, 1]
        // swap rows k and p (exactly: the sum of one row and zeros)
        Value* row_k = helpers::unsqueeze(b, b.op("Gather", {Mc, k}, {{"axis", ax_row}}), {ax_row});
        Value* row_p = helpers::reduce(b, "ReduceSum", b.op("Where", {is_p_r, Mc, zero}), {ax_row}, true);
        Value* M1 = b.op("Where", {is_k_r, row_p, b.op("Where", {is_p_r, row_k, Mc})});
        Value* perm_k = helpers::unsqueeze(b, b.op("Gather", {perm, k}, {{"axis", ax_row}}), {ax_row});
        Value* perm_p = helpers::reduce(b, "ReduceSum", b.op("Where", {is_p, perm, b.const_int(0)}), {ax_row}, true);
        Value* perm1 = b.op("Where", {is_k, perm_p, b.op("Where", {is_p, perm_k, perm})});
        // multipliers l = M[:, k] / pivot (a zero pivot leaves the column, all zeros, as is)
        Value* col1 = b.op("Gather", {M1, k}, {{"axis", ax_col}});                           // [..., m]
        Value* piv = helpers::unsqueeze(b, b.op("Gather", {col1, k}, {{"axis", ax_row}}), {ax_row});  // [..., 1]
        Value* zero_piv = helpers::equal(b, piv, zero);
        Value* l = b.op("Div", {col1, b.op("Where", {zero_piv, sc(b, t, 1.0), piv})});
        Value* l_r = helpers::unsqueeze(b, l, {ax_col});  // [..., m, 1]
        Value* rows_gt = helpers::unsqueeze(b, b.op("Greater", {iota_m, k}), {1});  // [m, 1]
        Value* upd_mask = b.op("And", {rows_gt, b.op("Greater", {iota_w, k})});      // [m, w]
        Value* l_mask = b.op("And", {rows_gt, helpers::equal(b, iota_w, k)});        // [m, w]
        Value* upd = b.op("Sub", {M1, b.op("Mul", {l_r, row_p})});
        Value* M2 = b.op("Where", {upd_mask, upd, b.op("Where", {l_mask, l_r, M1})});
        Value* first_zero =
            b.op("And", {helpers::equal(b, info, b.const_int(0)), helpers::squeeze(b, zero_piv, {ax_row})});
        Value* info1 = b.op("Where", {first_zero, b.op("Add", {k, b.const_int(1)}), info});
        return {M2, info1, perm1, helpers::squeeze(b, p, {ax_row})};
      },
      1);
  Lu r;
  r.m = outs[0];
  r.info = outs[1];
  r.perm = outs[2];
  std::vector<int64_t> perm;  // the stacked pivots [kmax, ...] -> [..., kmax]
  for (int64_t d = 1; d <= R - 2; ++d) perm.push_back(d);
  perm.push_back(0);
  r.pivots = helpers::transpose(ctx, outs[3], perm);
  return r;
}

// Solves T X = B for triangular T [..., n, n] (rank R; only its lower or upper
// triangle is read; a unit diagonal when `unit`) and B [..., n, r] with the
// same batch shape: substitution row by row (forward for lower, backward for
// upper), x_i = (b_i - sum_{j solved} t_ij x_j) / t_ii.
Value* tri_solve(SymbolicContext& ctx, Value* T, Value* B, int64_t R, int64_t n, bool lower, bool unit) {
  const ir::DType t = B->dtype();
  Value* X0 = ctx.op("ConstantOfShape", {ctx.op("Shape", {B})}, {{"value", ir::Tensor::scalar(t, 0.0).reshaped({1})}});
  const int64_t ax_row = R - 2;
  auto outs = loop_closed(ctx, ctx.const_int(n), {X0}, {T, B},
                            [&](SymbolicContext& b, Value* it, const std::vector<Value*>& c,
                                const std::vector<Value*>& iv) -> std::vector<Value*> {
                              Value* X = c[0];
                              Value *T = iv[0], *B = iv[1];
                              Value* iota_n = iota(b, n);
                              Value* i = lower ? it : b.op("Sub", {b.const_int(n - 1), it});
                              Value* rowT = b.op("Gather", {T, i}, {{"axis", ax_row}});  // [..., n]
                              Value* solved = b.op(lower ? "Less" : "Greater", {iota_n, i});
                              Value* rowm = b.op("Where", {solved, rowT, sc(b, t, 0.0)});
                              Value* s = b.op("MatMul", {helpers::unsqueeze(b, rowm, {ax_row}), X});  // [..., 1, r]
                              Value* bi = helpers::unsqueeze(b, b.op("Gather", {B, i}, {{"axis", ax_row}}), {ax_row});
                              Value* xi = b.op("Sub", {bi, s});
                              if (!unit) {
                                Value* d = b.op("Gather", {rowT, i}, {{"axis", ax_row}});  // [...]
                                xi = b.op("Div", {xi, helpers::unsqueeze(b, d, {ax_row, ax_row + 1})});
                              }
                              Value* is_i = helpers::unsqueeze(b, helpers::equal(b, iota_n, i), {1});  // [n, 1]
                              return {b.op("Where", {is_i, xi, X})};
                            },
                            0);
  return outs[0];
}

// Solves A X = B for A [..., n, n] and B [..., n, r] of the same batch shape
// (rank R): elimination of [A | B] (getrf then the unit-lower solve of getrs,
// in the same column order), then back substitution with U. Returns X and info.
std::pair<Value*, Value*> solve_square(SymbolicContext& ctx, Value* A, Value* B, int64_t R, int64_t n, int64_t r) {
  Value* M = ctx.op("Concat", {A, B}, {{"axis", R - 1}});
  Lu lu = eliminate(ctx, M, R, n, n + r, n);
  Value* U = helpers::slice(ctx, lu.m, {R - 1}, {0}, {n});
  Value* Y = helpers::slice(ctx, lu.m, {R - 1}, {n}, {n + r});
  return {tri_solve(ctx, U, Y, R, n, false, false), lu.info};
}

// A^-1 for A [..., n, n] (rank R), and info.
std::pair<Value*, Value*> inverse(SymbolicContext& ctx, Value* A, int64_t R, int64_t n) {
  Value* I = ctx.op("Expand", {eye(ctx, A->dtype(), n, n), ctx.op("Shape", {A})});
  return solve_square(ctx, A, I, R, n, n);
}

// The permutation (row j of LU is row perm[j] of A) from LAPACK's 1-based
// pivots [..., k] (int32/int64, rank Rp): the row swaps applied in order.
Value* perm_from_pivots(SymbolicContext& ctx, Value* pivots, int64_t Rp, int64_t m, int64_t k) {
  Value* piv0 = ctx.op("Sub", {ctx.cast(pivots, ir::DType::Int64), ctx.const_int(1)});
  Value* perm0 = ctx.op("Add", {helpers::unsqueeze(ctx, batch_zeros(ctx, pivots, Rp, 1, ir::DType::Int64), {Rp - 1}),
                                iota(ctx, m)});
  const int64_t ax = Rp - 1;
  auto outs = loop_closed(ctx, ctx.const_int(k), {perm0}, {piv0},
                            [&](SymbolicContext& b, Value* i, const std::vector<Value*>& c,
                                const std::vector<Value*>& iv) -> std::vector<Value*> {
                              Value* perm = c[0];
                              Value* piv0 = iv[0];
                              Value* iota_m = iota(b, m);
                              Value* pi = helpers::unsqueeze(b, b.op("Gather", {piv0, i}, {{"axis", ax}}), {ax});
                              Value* is_i = helpers::equal(b, iota_m, i);
                              Value* is_p = helpers::equal(b, iota_m, pi);
                              Value* v_i = helpers::unsqueeze(b, b.op("Gather", {perm, i}, {{"axis", ax}}), {ax});
                              Value* v_p = helpers::reduce(b, "ReduceSum", b.op("Where", {is_p, perm, b.const_int(0)}),
                                                           {ax}, true);
                              return {b.op("Where", {is_i, v_p, b.op("Where", {is_p, v_i, perm})})};
                            },
                            0);
  return outs[0];
}

// The permutation matrix P [..., m, m] with A = P L U: P[r, j] = (perm[j] == r).
Value* perm_matrix(SymbolicContext& ctx, Value* perm, int64_t Rp, int64_t m, ir::DType t) {
  Value* rows = ctx.constant(ir::Tensor::from_int64s(
      [&] {
        std::vector<int64_t> v(static_cast<size_t>(m));
        std::iota(v.begin(), v.end(), 0);
        return v;
      }(),
      {m, 1}));
  return ctx.cast(helpers::equal(ctx, rows, helpers::unsqueeze(ctx, perm, {Rp - 1})), t);
}

void require_float(SymbolicContext& ctx, size_t idx) {
  const ir::DType t = ctx.dtype(idx);
  if (t != ir::DType::Float && t != ir::DType::Double)
    ctx.fail("only float32 and float64 matrices are supported (PyTorch's CPU LAPACK kernels)");
  if (ctx.rank(idx) < 2) ctx.fail("expected a matrix or a batch of matrices");
}

}  // namespace torch2onnx::symbolics::linsolve

namespace torch2onnx::symbolics {
namespace {

using ir::Value;
using namespace linsolve;

void require_pivot(SymbolicContext& ctx) {
  if (ctx.num_args() > 1 && !ctx.none(1) && !ctx.b(1))
    ctx.fail("LU without pivoting (pivot=False) is not supported (PyTorch's CPU kernel refuses it too)");
}

// aten::linalg_lu_factor(A, *, pivot) -> (LU, pivots); linalg_lu_factor_ex and
// _lu_with_info(self, pivot, check_errors) add info (int32).
void lu_factor(SymbolicContext& ctx) {
  require_float(ctx, 0);
  require_pivot(ctx);
  const int64_t R = ctx.rank(0);
  const int64_t m = ctx.static_dim(0, -2), n = ctx.static_dim(0, -1);
  Lu lu = eliminate(ctx, ctx.in(0), R, m, n, std::min(m, n));
  ctx.out(lu.m, 0);
  ctx.out(ctx.cast(ctx.op("Add", {lu.pivots, ctx.const_int(1)}), ir::DType::Int32), 1);
  if (ctx.num_outputs() > 2) ctx.out(ctx.cast(lu.info, ir::DType::Int32), 2);
}

// L (unit lower [..., m, k]) and U (upper [..., k, n]) from a packed LU [..., m, n].
std::pair<Value*, Value*> unpack_lu(SymbolicContext& ctx, Value* LU, int64_t R, int64_t m, int64_t n) {
  const int64_t k = std::min(m, n);
  const ir::DType t = LU->dtype();
  Value* L = helpers::slice(ctx, LU, {R - 1}, {0}, {k});
  L = ctx.op("Where", {bool_mask(ctx, m, k, [](int64_t i, int64_t j) { return i > j; }), L,
                       eye(ctx, t, m, k)});
  Value* U = helpers::slice(ctx, LU, {R - 2}, {0}, {k});
  U = ctx.op("Where", {bool_mask(ctx, k, n, [](int64_t i, int64_t j) { return i <= j; }), U, sc(ctx, t, 0.0)});
  return {L, U};
}

// aten::linalg_lu(A, *, pivot) -> (P, L, U)
void linalg_lu(SymbolicContext& ctx) {
  require_float(ctx, 0);
  require_pivot(ctx);
  const int64_t R = ctx.rank(0);
  const int64_t m = ctx.static_dim(0, -2), n = ctx.static_dim(0, -1);
  Lu lu = eliminate(ctx, ctx.in(0), R, m, n, std::min(m, n));
  auto [L, U] = unpack_lu(ctx, lu.m, R, m, n);
  ctx.out(perm_matrix(ctx, lu.perm, R - 1, m, ctx.dtype(0)), 0);
  ctx.out(L, 1);
  ctx.out(U, 2);
}

// aten::lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots) -> (P, L, U);
// what is not unpacked is an empty tensor, as in PyTorch.
void lu_unpack(SymbolicContext& ctx) {
  require_float(ctx, 0);
  const int64_t R = ctx.rank(0);
  const int64_t m = ctx.static_dim(0, -2), n = ctx.static_dim(0, -1);
  const ir::DType t = ctx.dtype(0);
  const bool data = ctx.none(2) || ctx.b(2), pivots = ctx.none(3) || ctx.b(3);
  Value* empty = ctx.constant(ir::Tensor::from_doubles(t, {}, {0}));
  if (pivots) {
    Value* perm = perm_from_pivots(ctx, ctx.in(1), ctx.rank(1), m, ctx.static_dim(1, -1));
    ctx.out(perm_matrix(ctx, perm, ctx.rank(1), m, t), 0);
  } else {
    ctx.out(empty, 0);
  }
  if (data) {
    auto [L, U] = unpack_lu(ctx, ctx.in(0), R, m, n);
    ctx.out(L, 1);
    ctx.out(U, 2);
  } else {
    ctx.out(empty, 1);
    ctx.out(ctx.op("Identity", {empty}), 2);
  }
}

// Solves A X = B (adjoint: A^T X = B) given A = P L U packed in LU [..., n, n].
Value* lu_solve_left(SymbolicContext& ctx, Value* LU, int64_t rl, Value* perm, Value* B, int64_t rb, int64_t n,
                     bool adjoint) {
  const ir::DType t = LU->dtype();
  Value* P = perm_matrix(ctx, perm, rl - 1, n, t);  // [..., n, n]
  if (!adjoint) {  // L U X = P^T B
    Value* Bp = ctx.op("MatMul", {mT(ctx, P, rl), B});
    const int64_t rbp = std::max(rl, rb);
    auto [LU2, B2] = broadcast_batch(ctx, LU, rl, Bp, rbp);
    Value* Y = tri_solve(ctx, LU2, B2, rbp, n, true, true);
    return tri_solve(ctx, LU2, Y, rbp, n, false, false);
  }
  // U^T L^T P^T X = B
  const int64_t r = std::max(rl, rb);
  auto [LU2, B2] = broadcast_batch(ctx, LU, rl, B, rb);
  Value* LUt = mT(ctx, LU2, r);
  Value* Y = tri_solve(ctx, LUt, B2, r, n, true, false);
  Value* Z = tri_solve(ctx, LUt, Y, r, n, false, true);
  return ctx.op("MatMul", {P, Z});
}

// aten::linalg_lu_solve(LU, pivots, B, *, left, adjoint) and the old
// aten::lu_solve(self=B, LU_data, LU_pivots).
void lu_solve_impl(SymbolicContext& ctx, size_t lu_i, size_t piv_i, size_t b_i, bool left, bool adjoint) {
  require_float(ctx, lu_i);
  require_float(ctx, b_i);
  const int64_t rl = ctx.rank(lu_i), rb = ctx.rank(b_i);
  const int64_t n = ctx.static_dim(lu_i, -1);
  Value* perm = perm_from_pivots(ctx, ctx.in(piv_i), ctx.rank(piv_i), n, ctx.static_dim(piv_i, -1));
  Value* LU = ctx.in(lu_i);
  Value* B = ctx.in(b_i);
  if (left) return ctx.out(lu_solve_left(ctx, LU, rl, perm, B, rb, n, adjoint));
  // X A = B  <=>  A^T X^T = B^T;  X A^T = B  <=>  A X^T = B^T
  Value* Xt = lu_solve_left(ctx, LU, rl, perm, mT(ctx, B, rb), rb, n, !adjoint);
  ctx.out(mT(ctx, Xt, std::max(rl, rb)));
}

void linalg_lu_solve(SymbolicContext& ctx) {
  lu_solve_impl(ctx, 0, 1, 2, ctx.none(3) || ctx.b(3), !ctx.none(4) && ctx.b(4));
}
void old_lu_solve(SymbolicContext& ctx) { lu_solve_impl(ctx, 1, 2, 0, true, false); }

// aten::linalg_solve(A, B, *, left) and linalg_solve_ex(A, B, *, left,
// check_errors) -> (result, info). B is a vector when it is 1-D or A's shape
// without the last dim (as PyTorch decides).
void linalg_solve(SymbolicContext& ctx) {
  require_float(ctx, 0);
  const int64_t ra = ctx.rank(0), rb = ctx.rank(1);
  const auto& sa = ctx.static_sizes(0);
  const auto& sb = ctx.static_sizes(1);
  const int64_t n = sa[ra - 1];
  const bool left = ctx.none(2) || ctx.b(2);
  const bool vec = rb == 1 || (rb == ra - 1 && std::equal(sb.begin(), sb.end(), sa.begin()));
  if (ctx.dtype(1) != ctx.dtype(0)) ctx.fail("linalg_solve: A and B must have the same dtype");
  Value* A = ctx.in(0);
  Value* B = ctx.in(1);
  int64_t rbm = rb;
  if (vec) {  // (PyTorch rejects a vector B with left=False)
    if (!left) ctx.fail("linalg_solve: B must be a matrix when left=False");
    B = helpers::unsqueeze(ctx, B, {rb});
    rbm = rb + 1;
  }
  if (rbm < 2) ctx.fail("linalg_solve: B must be a vector or a matrix");
  const int64_t r = vec ? 1 : (left ? sb[rb - 1] : sb[rb - 2]);  // B's columns (B^T's when !left)
  if (!left) {
    A = mT(ctx, A, ra);
    B = mT(ctx, B, rbm);
  }
  const int64_t R = std::max(ra, rbm);
  auto [A2, B2] = broadcast_batch(ctx, A, ra, B, rbm);
  auto [X, info] = solve_square(ctx, A2, B2, R, n, r);
  if (!left) X = mT(ctx, X, R);
  if (vec) X = helpers::squeeze(ctx, X, {R - 1});
  ctx.out(X, 0);
  if (ctx.num_outputs() > 1) {
    // info has A's batch shape: when B broadcast A, factor A alone for it
    std::vector<int64_t> a_batch(sa.begin(), sa.end() - 2);
    std::vector<int64_t> b_batch(sb.begin(), sb.end() - (vec ? 1 : 2));
    bool broadcast = b_batch.size() > a_batch.size();
    for (size_t i = 0; !broadcast && i < b_batch.size(); ++i)
      broadcast = b_batch[b_batch.size() - 1 - i] != 1 && a_batch[a_batch.size() - 1 - i] == 1;
    if (broadcast) info = eliminate(ctx, ctx.in(0), ra, n, n, n).info;
    ctx.out(ctx.cast(info, ir::DType::Int32), 1);
  }
}

// aten::linalg_inv(A) and linalg_inv_ex(A, *, check_errors) -> (inverse, info)
void linalg_inv(SymbolicContext& ctx) {
  require_float(ctx, 0);
  const int64_t R = ctx.rank(0);
  auto [X, info] = inverse(ctx, ctx.in(0), R, ctx.static_dim(0, -1));
  ctx.out(X, 0);
  if (ctx.num_outputs() > 1) ctx.out(ctx.cast(info, ir::DType::Int32), 1);
}

}  // namespace

void register_linalg_lu(Registry& r) {
  r.add("aten::linalg_lu_factor", 9, lu_factor);
  r.add("aten::linalg_lu_factor_ex", 9, lu_factor);
  r.add("aten::_lu_with_info", 9, lu_factor);
  r.add("aten::linalg_lu", 9, linalg_lu);
  r.add("aten::lu_unpack", 9, lu_unpack);
  r.add("aten::linalg_lu_solve", 9, linalg_lu_solve);
  r.add("aten::lu_solve", 9, old_lu_solve);
  r.add("aten::linalg_solve", 9, linalg_solve);
  r.add("aten::linalg_solve_ex", 9, linalg_solve);
  r.add("aten::linalg_inv", 9, linalg_inv);
  r.add("aten::linalg_inv_ex", 9, linalg_inv);
}

}  // namespace torch2onnx::symbolics
