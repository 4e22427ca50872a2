// Matrix factorizations as ONNX Loops (ONNX has none): Householder QR with
// LAPACK's conventions, symmetric eigendecomposition by parallel-ordered
// Jacobi rotations, SVD by one-sided (Hestenes) Jacobi. All work on batched
// [..., m, n] values whose sizes are static (`sizes`), in dtype t (float or
// double), from opset 9. linalg.cpp's matrix norms may call singular_values().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "torch2onnx/symbolic/context.h"

namespace torch2onnx::symbolics::decomp {

// geqrf: `packed` holds R on and above the diagonal and the Householder
// vectors (v[0] = 1 implied) below it; `tau` [..., min(m, n)]; `q` the full
// m x m Q = H_0 ... H_{k-1} (nullptr unless want_q).
struct QR {
  ir::Value* packed = nullptr;
  ir::Value* tau = nullptr;
  ir::Value* q = nullptr;
};
QR householder_qr(SymbolicContext& ctx, ir::Value* a, const std::vector<int64_t>& sizes, ir::DType t, bool want_q);

// Eigenvalues ascending and eigenvectors (columns; nullptr unless want_v) of a
// symmetric [..., n, n] matrix (both triangles used).
struct Eigh {
  ir::Value* w = nullptr;
  ir::Value* v = nullptr;
};
Eigh eigh(SymbolicContext& ctx, ir::Value* a, const std::vector<int64_t>& sizes, ir::DType t, bool want_v);

// A = U diag(S) Vh, S descending. U: [..., m, m] (full) or [..., m, k]; Vh:
// [..., n, n] or [..., k, n]; nullptr unless compute_uv.
struct SVD {
  ir::Value* u = nullptr;
  ir::Value* s = nullptr;
  ir::Value* vh = nullptr;
};
SVD svd(SymbolicContext& ctx, ir::Value* a, const std::vector<int64_t>& sizes, ir::DType t, bool compute_uv,
        bool full_matrices);

// The singular values [..., min(m, n)] of a [..., m, n], descending (for the
// nuclear norm: ReduceSum over the last axis; spectral norms: the first/last).
ir::Value* singular_values(SymbolicContext& ctx, ir::Value* a, const std::vector<int64_t>& sizes, ir::DType t);

// The matrix norm of x (float/double, static `sizes`) over dims d0, d1
// (normalized, distinct) from its singular values: ord "nuc" (their sum), "2"
// (the largest) or "-2" (the smallest); keepdim keeps both dims as size 1.
// For linalg.cpp's linalg_norm / linalg_matrix_norm:
//   decomp::matrix_norm_svd(ctx, x, ctx.sizes(0), t, "nuc", d0, d1, keep)
ir::Value* matrix_norm_svd(SymbolicContext& ctx, ir::Value* x, const std::vector<int64_t>& sizes, ir::DType t,
                           const std::string& ord, int64_t d0, int64_t d1, bool keepdim);

// ---- small shared pieces
std::vector<int64_t> iota(int64_t n);  // 0, 1, ..., n-1
std::vector<int64_t> cat(std::vector<int64_t> a, const std::vector<int64_t>& b);
// v[..., s] -> [..., 1, 1] for broadcasting a per-matrix scalar (R: the matrices' rank).
ir::Value* per_matrix(SymbolicContext& c, ir::Value* s, int64_t R);
// The input's dtype, float32 or float64 (anything else refused).
ir::DType float_type(SymbolicContext& ctx, size_t idx);
// The input's static sizes: at least 2 dims, none empty (refused otherwise).
const std::vector<int64_t>& matrix_sizes(SymbolicContext& ctx, size_t idx);
ir::Value* transpose_last(SymbolicContext& ctx, ir::Value* v, int64_t rank);
ir::Value* eye(SymbolicContext& ctx, ir::DType t, int64_t m, int64_t n);
// A constant of `dims` filled with `value`.
ir::Value* filled(SymbolicContext& ctx, ir::DType t, const std::vector<int64_t>& dims, double value);
double eps_of(ir::DType t);
// The largest |a| of each [..., m, n] matrix ([...]), 1 for a zero matrix.
ir::Value* matrix_scale(SymbolicContext& ctx, ir::Value* a, int64_t rank, ir::DType t);
ir::Value* sort_permutation(SymbolicContext& ctx, ir::Value* x, int64_t rank_x, int64_t n, bool descending,
                            ir::DType t);
// The symmetric matrix of the lower (or upper) triangle of a [..., n, n], mirrored.
ir::Value* symmetric_from(SymbolicContext& ctx, ir::Value* a, int64_t rank, int64_t n, bool lower);
// Jacobi pieces shared by eigh and the one-sided SVD.
std::pair<ir::Value*, ir::Value*> jacobi_rotation(SymbolicContext& b, ir::Value* app, ir::Value* aqq,
                                                  ir::Value* apq, ir::DType t);
ir::Value* rotate_pairs(SymbolicContext& b, ir::Value* x, ir::Value* c, ir::Value* s,
                        const std::vector<int64_t>& batch, int64_t r, int64_t N);
using JacobiStep = std::function<std::pair<std::vector<ir::Value*>, ir::Value*>(
    SymbolicContext&, ir::Value* order, ir::Value* inverse, const std::vector<ir::Value*>& carried)>;
std::vector<ir::Value*> jacobi_sweeps(SymbolicContext& ctx, int64_t N, int64_t max_sweeps,
                                      const std::vector<ir::Value*>& carried, const JacobiStep& step);

}  // namespace torch2onnx::symbolics::decomp
