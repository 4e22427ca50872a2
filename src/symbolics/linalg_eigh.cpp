// Symmetric eigendecomposition by Jacobi rotations in parallel (round-robin)
// order: n/2 disjoint rotations per step, gathered into pair order, applied
// elementwise and scattered back (O(n^2) per step, n - 1 steps a sweep), in
// an ONNX Loop that stops once the off-diagonal part is below n * eps *
// ||A||_F (A scaled by max|A| first) or after 40 sweeps. Jacobi is
// backward stable and converges quadratically (a 64x64 float64 matrix takes
// about 8 sweeps). Eigenvalues ascending (as PyTorch); eigenvector signs are
// as the rotations leave them (unique only up to sign). linalg_svd.cpp reuses
// the sweeps for the one-sided SVD.
// Registered: linalg_eigh, _linalg_eigh, linalg_eigvalsh.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
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



// A Loop whose body also returns its continue condition (0-d bool):
// helpers::loop with a condition, for convergence-checked iterations.
using CondBody = std::function<std::pair<std::vector<Value*>, Value*>(SymbolicContext&, Value*,
                                                                       const std::vector<Value*>&)>;
std::vector<Value*> loop_while(SymbolicContext& ctx, int64_t max_trips, const std::vector<Value*>& carried,
                               const CondBody& body_fn) {
  ir::Graph& g = ctx.graph();
  auto body = std::make_shared<ir::Graph>(&g);
  body->set_name(g.unique_name("jacobi_body"));
  Value* iter = body->add_input(body->unique_name("iteration"), ir::ValueType::tensor(DType::Int64, {}));
  body->add_input(body->unique_name("condition"), ir::ValueType::tensor(DType::Bool, {}));
  std::vector<Value*> state;
  for (Value* c : carried) {
    ir::ValueType t = ir::ValueType::tensor(c->dtype());
    if (c->type().has_shape) {
      t.has_shape = true;
      t.shape.assign(c->type().shape.size(), ir::Dim{});
    }
    state.push_back(body->add_input(body->unique_name("carried"), t));
  }
  SymbolicContext inner(ctx.kind(), {}, {}, body.get(), ctx.opset());
  auto [next, cond] = body_fn(inner, iter, state);
  std::vector<Value*> outs{inner.cast(cond, DType::Bool)};
  for (size_t k = 0; k < next.size(); ++k) outs.push_back(inner.cast(next[k], carried[k]->dtype()));
  for (Value* v : outs) {
    if (!v->producer() || v->graph() != body.get()) {
      Value* id = body->create_node("Identity", {v}, 1)->output(0);
      id->set_type(v->type());
      v = id;
    }
    body->add_output(v);
  }
  std::vector<Value*> ins{ctx.const_int(max_trips), ctx.const_scalar(DType::Bool, 1)};
  ins.insert(ins.end(), carried.begin(), carried.end());
  ir::Node* node = g.create_node("Loop", ins, carried.size(), {{"body", body}});
  for (size_t k = 0; k < carried.size(); ++k) node->output(k)->type().dtype = carried[k]->dtype();
  return node->outputs();
}


// The round-robin schedule for N (even) indices: N - 1 steps of N/2 disjoint
// pairs covering every pair once; order[s] lists p0, q0, p1, q1, ... and
// inverse[s] its inverse permutation.
void round_robin(int64_t N, std::vector<int64_t>& order, std::vector<int64_t>& inverse) {
  const int64_t steps = N - 1;
  order.assign(static_cast<size_t>(steps * N), 0);
  inverse.assign(static_cast<size_t>(steps * N), 0);
  for (int64_t s = 0; s < steps; ++s) {
    std::vector<std::pair<int64_t, int64_t>> pairs{{s, N - 1}};
    for (int64_t i = 1; i < N / 2; ++i) {
      int64_t p = (s + i) % steps, q = (s - i + steps) % steps;
      pairs.emplace_back(std::min(p, q), std::max(p, q));
    }
    for (size_t j = 0; j < pairs.size(); ++j) {
      order[static_cast<size_t>(s * N) + 2 * j] = pairs[j].first;
      order[static_cast<size_t>(s * N) + 2 * j + 1] = pairs[j].second;
    }
    for (int64_t i = 0; i < N; ++i) inverse[static_cast<size_t>(s * N + order[static_cast<size_t>(s * N + i)])] = i;
  }
}

}  // namespace

// The rotation (c, s) that zeroes a_pq of the symmetric 2x2 [[a_pp, a_pq],
// [a_pq, a_qq]] by J^T A J, J = [[c, s], [-s, c]] (Golub & Van Loan,
// sym.schur2: t = sign(th) / (|th| + sqrt(1 + th^2)), the smaller angle).
std::pair<Value*, Value*> jacobi_rotation(SymbolicContext& b, Value* app, Value* aqq, Value* apq, DType t) {
  Value* zero = sc(b, t, 0.0);
  Value* one = sc(b, t, 1.0);
  Value* z = helpers::equal(b, apq, zero);
  Value* safe = b.op("Where", {z, one, apq});
  Value* th = b.op("Div", {b.op("Sub", {aqq, app}), b.op("Mul", {sc(b, t, 2.0), safe})});
  Value* sgn = b.op("Where", {b.op("Less", {th, zero}), sc(b, t, -1.0), one});
  Value* tt = b.op("Div", {sgn, b.op("Add", {b.op("Abs", {th}), b.op("Sqrt", {b.op("Add", {one, b.op("Mul", {th, th})})})})});
  tt = b.op("Where", {z, zero, tt});
  Value* c = b.op("Div", {one, b.op("Sqrt", {b.op("Add", {one, b.op("Mul", {tt, tt})})})});
  return {c, b.op("Mul", {tt, c})};
}

// Columns (2j, 2j+1) of X [..., r, N] (already in pair order) <- (c x0 - s x1, s x0 + c x1).
Value* rotate_pairs(SymbolicContext& b, Value* X, Value* c, Value* s, const std::vector<int64_t>& batch, int64_t r,
                    int64_t N) {
  const int64_t R = static_cast<int64_t>(batch.size()) + 2;
  Value* xr = helpers::reshape(b, X, cat(batch, {r, N / 2, 2}));
  Value* x0 = b.op("Gather", {xr, b.const_int(0)}, {{"axis", R}});
  Value* x1 = b.op("Gather", {xr, b.const_int(1)}, {{"axis", R}});
  Value* cc = helpers::unsqueeze(b, c, {R - 2});
  Value* ss = helpers::unsqueeze(b, s, {R - 2});
  Value* y0 = b.op("Sub", {b.op("Mul", {cc, x0}), b.op("Mul", {ss, x1})});
  Value* y1 = b.op("Add", {b.op("Mul", {ss, x0}), b.op("Mul", {cc, x1})});
  Value* y = b.op("Concat", {helpers::unsqueeze(b, y0, {R}), helpers::unsqueeze(b, y1, {R})}, {{"axis", R}});
  return helpers::reshape(b, y, cat(batch, {r, N}));
}

// Sweeps of the parallel Jacobi schedule. `step` gets the body context, the
// step's pair order and inverse permutation (1-D [N]) and the carried values,
// returns the next values and the per-batch "not converged" measure (> 0: go on).
std::vector<Value*> jacobi_sweeps(SymbolicContext& ctx, int64_t N, int64_t max_sweeps,
                                  const std::vector<Value*>& carried, const JacobiStep& step) {
  std::vector<int64_t> order, inverse;
  round_robin(N, order, inverse);
  const int64_t steps = N - 1;
  return loop_while(ctx, max_sweeps * steps, carried,
                    [&](SymbolicContext& b, Value* it, const std::vector<Value*>& c) -> std::pair<std::vector<Value*>, Value*> {
                      Value* order_tab = b.constant(ir::Tensor::from_int64s(order, {steps, N}));
                      Value* inv_tab = b.constant(ir::Tensor::from_int64s(inverse, {steps, N}));
                      Value* st = b.const_int(steps);
                      Value* s = b.op("Sub", {it, b.op("Mul", {b.op("Div", {it, st}), st})});
                      Value* ord = b.op("Gather", {order_tab, s}, {{"axis", int64_t{0}}});
                      Value* inv = b.op("Gather", {inv_tab, s}, {{"axis", int64_t{0}}});
                      auto [next, measure] = step(b, ord, inv, c);
                      Value* worst = helpers::reduce(b, "ReduceMax", measure, {}, false);
                      return {next, b.op("Greater", {worst, sc(b, measure->dtype(), 0.0)})};
                    });
}

Eigh eigh(SymbolicContext& ctx, Value* a, const std::vector<int64_t>& sizes, DType t, bool want_v) {
  const int64_t R = static_cast<int64_t>(sizes.size());
  const int64_t n = sizes[R - 1];
  const std::vector<int64_t> batch(sizes.begin(), sizes.end() - 2);
  Eigh res;
  if (n == 1) {
    res.w = helpers::squeeze(ctx, a, {R - 1});
    if (want_v) res.v = filled(ctx, t, sizes, 1.0);
    return res;
  }
  Value* scale = matrix_scale(ctx, a, R, t);
  Value* as = ctx.op("Div", {a, per_matrix(ctx, scale, R)});
  const int64_t N = n + n % 2;  // odd n: a zero row and column that no rotation touches
  if (N != n) {
    std::vector<int64_t> pads(static_cast<size_t>(2 * R), 0);
    pads[static_cast<size_t>(2 * R - 2)] = 1;
    pads[static_cast<size_t>(2 * R - 1)] = 1;
    as = helpers::pad(ctx, as, pads, "constant", 0.0);
  }
  const std::vector<int64_t> mat = cat(batch, {N, N});
  std::vector<double> pm(static_cast<size_t>(N * N), 0.0), om(static_cast<size_t>(N * N), 1.0);
  for (int64_t i = 0; i < N; i += 2) pm[static_cast<size_t>(i * N + i + 1)] = 1.0;
  for (int64_t i = 0; i < N; ++i) om[static_cast<size_t>(i * N + i)] = 0.0;
  Value* I = eye(ctx, t, N, N);
  const double tol = static_cast<double>(N) * eps_of(t);
  Value* thr = ctx.op("Mul", {helpers::reduce(ctx, "ReduceSumSquare", as, {R - 2, R - 1}, false), sc(ctx, t, tol * tol)});
  std::vector<Value*> carried{as, thr};
  if (want_v) carried.push_back(ctx.op("Expand", {I, ctx.const_ints(mat)}));
  auto outs = jacobi_sweeps(
      ctx, N, 40, carried,
      [&](SymbolicContext& b, Value* ord, Value* inv, const std::vector<Value*>& c) -> std::pair<std::vector<Value*>, Value*> {
        Value* I = eye(b, t, N, N);
        Value* pair_mask = b.constant(ir::Tensor::from_doubles(t, pm, {N, N}));
        Value* off_mask = b.constant(ir::Tensor::from_doubles(t, om, {N, N}));
        Value* thr = c[1];
        Value* M = b.op("Gather", {b.op("Gather", {c[0], ord}, {{"axis", R - 2}}), ord}, {{"axis", R - 1}});
        Value* d = helpers::reshape(b, helpers::reduce(b, "ReduceSum", b.op("Mul", {M, I}), {R - 1}, false),
                                    cat(batch, {N / 2, 2}));
        Value* o = helpers::reshape(b, helpers::reduce(b, "ReduceSum", b.op("Mul", {M, pair_mask}), {R - 1}, false),
                                    cat(batch, {N / 2, 2}));
        Value* app = b.op("Gather", {d, b.const_int(0)}, {{"axis", R - 1}});
        Value* aqq = b.op("Gather", {d, b.const_int(1)}, {{"axis", R - 1}});
        Value* apq = b.op("Gather", {o, b.const_int(0)}, {{"axis", R - 1}});
        auto [cs, sn] = jacobi_rotation(b, app, aqq, apq, t);
        Value* M1 = rotate_pairs(b, M, cs, sn, batch, N, N);                                          // A J
        Value* M2 = transpose_last(b, rotate_pairs(b, transpose_last(b, M1, R), cs, sn, batch, N, N), R);  // J^T A J
        Value* A2 = b.op("Gather", {b.op("Gather", {M2, inv}, {{"axis", R - 2}}), inv}, {{"axis", R - 1}});
        std::vector<Value*> next{A2, thr};
        if (want_v) {
          Value* vp = b.op("Gather", {c[2], ord}, {{"axis", R - 1}});
          next.push_back(b.op("Gather", {rotate_pairs(b, vp, cs, sn, batch, N, N), inv}, {{"axis", R - 1}}));
        }
        Value* off = helpers::reduce(b, "ReduceSum", b.op("Mul", {b.op("Mul", {A2, A2}), off_mask}), {R - 2, R - 1}, false);
        return {next, b.op("Sub", {off, thr})};
      });
  Value* w = helpers::reduce(ctx, "ReduceSum", ctx.op("Mul", {outs[0], I}), {R - 1}, false);
  Value* v = want_v ? outs[2] : nullptr;
  if (N != n) {
    w = helpers::slice(ctx, w, {R - 2}, {0}, {n});
    if (v) v = helpers::slice(ctx, v, {R - 2, R - 1}, {0, 0}, {n, n});
  }
  Value* P = sort_permutation(ctx, w, R - 1, n, false, t);
  res.w = ctx.op("Mul", {helpers::squeeze(ctx, ctx.op("MatMul", {P, helpers::unsqueeze(ctx, w, {R - 1})}), {R - 1}),
                         helpers::unsqueeze(ctx, scale, {R - 2})});
  if (v) res.v = ctx.op("MatMul", {v, transpose_last(ctx, P, R)});
  return res;
}

// The one-hot permutation P [..., n, n] (dtype t) that sorts x [..., n] (rank
// Rx): (P x)[r] is the r-th smallest (largest if descending); ties keep index
// order. Built from pairwise comparisons (n <= ~64), exact, no TopK.
Value* sort_permutation(SymbolicContext& c, Value* x, int64_t Rx, int64_t n, bool descending, DType t) {
  Value* xi = helpers::unsqueeze(c, x, {Rx});      // [..., n, 1]: i
  Value* xj = helpers::unsqueeze(c, x, {Rx - 1});  // [..., 1, n]: j
  Value* ahead = c.op(descending ? "Greater" : "Less", {xj, xi});
  Value* behind = c.op(descending ? "Less" : "Greater", {xj, xi});
  std::vector<double> lower(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j) lower[static_cast<size_t>(i * n + j)] = 1.0;
  Value* jlt = c.constant(ir::Tensor::from_doubles(DType::Bool, lower, {n, n}));
  Value* tie = c.op("Not", {c.op("Or", {ahead, behind})});
  Value* before = c.op("Or", {ahead, c.op("And", {tie, jlt})});
  Value* rank = helpers::reduce(c, "ReduceSum", c.cast(before, DType::Int64), {Rx}, false);  // [..., n]
  Value* r = c.constant(ir::Tensor::from_int64s(iota(n), {n, 1}));
  return c.cast(c.op("Equal", {helpers::unsqueeze(c, rank, {Rx - 1}), r}), t);
}


// The symmetric matrix PyTorch's eigh reads: the lower (UPLO='L') or upper
// triangle of a, mirrored.
Value* symmetric_from(SymbolicContext& c, Value* a, int64_t R, int64_t n, bool lower) {
  std::vector<uint8_t> keep;  // the triangle read, diagonal included
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) keep.push_back((lower ? i >= j : i <= j) ? 1 : 0);
  Value* mask = c.constant(ir::Tensor::owned(DType::Bool, {n, n}, std::move(keep)));
  return c.op("Where", {mask, a, transpose_last(c, a, R)});
}

namespace {

Eigh eigh_of_input(SymbolicContext& ctx, bool want_v) {
  const DType t = float_type(ctx, 0);
  const auto& sizes = matrix_sizes(ctx, 0);
  const int64_t R = static_cast<int64_t>(sizes.size());
  const int64_t n = sizes[R - 1];
  if (sizes[R - 2] != n) ctx.fail("eigh needs square matrices");
  const std::string uplo = ctx.none(1) ? "L" : ctx.s(1);
  if (uplo != "L" && uplo != "U" && uplo != "l" && uplo != "u") ctx.fail("UPLO must be 'L' or 'U'");
  Value* a = symmetric_from(ctx, ctx.in(0), R, n, uplo == "L" || uplo == "l");
  return eigh(ctx, a, sizes, t, want_v);
}

// aten::linalg_eigh(self, UPLO='L') -> (eigenvalues ascending, eigenvectors as columns)
void linalg_eigh(SymbolicContext& ctx) {
  Eigh e = eigh_of_input(ctx, true);
  ctx.out(e.w, 0);
  ctx.out(e.v, 1);
}

// aten::_linalg_eigh(A, UPLO='L', compute_v=True) (what torch.export records)
void linalg_eigh_internal(SymbolicContext& ctx) {
  const bool compute_v = ctx.none(2) ? true : ctx.b(2);
  Eigh e = eigh_of_input(ctx, compute_v);
  ctx.out(e.w, 0);
  ctx.out(compute_v ? e.v : filled(ctx, ctx.dtype(0), {0}, 0.0), 1);
}

// aten::linalg_eigvalsh(self, UPLO='L')
void linalg_eigvalsh(SymbolicContext& ctx) { ctx.out(eigh_of_input(ctx, false).w); }

}  // namespace


}  // namespace decomp

void register_linalg_eigh(Registry& r) {
  r.add("aten::linalg_eigh", 9, decomp::linalg_eigh);
  r.add("aten::_linalg_eigh", 9, decomp::linalg_eigh_internal);
  r.add("aten::linalg_eigvalsh", 9, decomp::linalg_eigvalsh);
}

}  // namespace torch2onnx::symbolics
