// Products and diagonal builders: kron, block_diag, cartesian_prod,
// combinations, inner, vdot, addr, bilinear, dist, pdist, diag, diag_embed,
// diagflat, tril_indices / triu_indices.
//
// Several lowerings use the example run's static sizes where the result's
// structure depends on them (block_diag's block offsets, combinations' and
// pdist's index pairs, the diagonal positions of diag/diag_embed/diagflat):
// those index tables are computed at export time from the sizes, the data
// stays run-time.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

ir::Value* sc(SymbolicContext& ctx, DType t, double v) { return ctx.const_scalar(t, v); }

DType out_t(SymbolicContext& ctx) {
  DType t = ctx.out_dtype();
  return t == DType::Undefined ? DType::Float : t;
}

// A constant of zeros of dtype t.
Value* zeros(SymbolicContext& ctx, DType t, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return ctx.constant(ir::Tensor::from_doubles(t, std::vector<double>(static_cast<size_t>(n), 0.0), dims));
}

// The dtype Mul/MatMul compute in for a tensor of dtype t: ONNX Runtime's
// arithmetic kernels cover float, double, int32 and int64; narrower integers
// go through int32 (the product wraps the same way once cast back).
DType arith_t(SymbolicContext& ctx, DType t) {
  if (t == DType::Bool) ctx.fail("boolean inputs are not supported");
  if (t == DType::Int8 || t == DType::UInt8 || t == DType::Int16) return DType::Int32;
  return t;
}

// Reshape v to the run-time shape `shape`; when the result is empty for
// every input the export accepts, the zeros of that shape (Reshape reads a 0
// in the shape as "copy this input dim", which cannot express every empty
// shape before opset 14). The result's sizes come from the tensors among
// arguments 0 and 1; where those vary, an empty example decides nothing:
// Reshape with allowzero (opset 14) is right at every size.
Value* reshape_to(SymbolicContext& ctx, Value* v, Value* shape, DType t) {
  const OutputInfo& o = ctx.out_info(0);
  bool empty = false;
  if (o.has_sizes)
    for (int64_t d : o.sizes) empty = empty || d == 0;
  bool dynamic = false;
  for (size_t i = 0; i < 2 && i < ctx.num_args(); ++i) {
    const Arg& a = ctx.arg(i);
    if (!a.is_tensor() || !a.has_sizes) continue;
    for (int64_t d = 0; d < a.rank(); ++d) dynamic = dynamic || ctx.dim_is_dynamic(i, d);
  }
  if (!dynamic && empty)
    return ctx.op("ConstantOfShape", {shape}, {{"value", ir::Tensor::from_doubles(t, {0.0}, {1})}});
  if (dynamic && ctx.opset() >= 14) return ctx.op("Reshape", {v, shape}, {{"allowzero", int64_t{1}}});
  if (dynamic && empty)
    ctx.fail("an empty result along a dynamic axis needs opset 14 or later (Reshape's allowzero; the sizes "
             "vary with the export's dynamic axes)");
  return ctx.op("Reshape", {v, shape});
}

// Shape(v)[:-1] as a 1-D int64 value.
Value* leading_shape(SymbolicContext& ctx, Value* v) {
  return helpers::slice(ctx, ctx.op("Shape", {v}), {0}, {0}, {-1});
}

// The vector p-norm of x over `axis` (as torch.linalg.vector_norm): p = 0
// counts non-zeros, +-inf take the max/min magnitude.
Value* p_norm(SymbolicContext& ctx, Value* x, DType t, double p, int64_t axis, bool keep) {
  if (p == 1.0) return helpers::reduce(ctx, "ReduceL1", x, {axis}, keep);
  if (p == 2.0) return helpers::reduce(ctx, "ReduceL2", x, {axis}, keep);
  if (std::isinf(p))
    return helpers::reduce(ctx, p > 0 ? "ReduceMax" : "ReduceMin", ctx.op("Abs", {x}), {axis}, keep);
  if (p == 0.0) {
    Value* nz = ctx.op("Not", {helpers::equal(ctx, x, sc(ctx, t, 0.0))});
    return helpers::reduce(ctx, "ReduceSum", ctx.cast(nz, t), {axis}, keep);
  }
  Value* s = helpers::reduce(ctx, "ReduceSum", ctx.op("Pow", {ctx.op("Abs", {x}), sc(ctx, t, p)}), {axis}, keep);
  return ctx.op("Pow", {s, sc(ctx, t, 1.0 / p)});
}

// aten::kron(self, other): with both padded to rank r, the product of
// a[i1, 1, i2, 1, ...] and b[1, j1, 1, j2, ...], reshaped to [a1*b1, a2*b2, ...].
void kron(SymbolicContext& ctx) {
  const DType t = out_t(ctx), ct = arith_t(ctx, t);
  Value* a = ctx.cast(ctx.in_as(0, t), ct);
  Value* b = ctx.cast(ctx.in_as(1, t), ct);
  const int64_t ra = ctx.rank(0), rb = ctx.rank(1), r = std::max(ra, rb);
  if (r == 0) return ctx.out(ctx.cast(ctx.op("Mul", {a, b}), t));
  auto pad_rank = [&](Value* v, int64_t rv) {
    std::vector<int64_t> axes;
    for (int64_t k = 0; k < r - rv; ++k) axes.push_back(k);
    return axes.empty() ? v : helpers::unsqueeze(ctx, v, axes);
  };
  a = pad_rank(a, ra);
  b = pad_rank(b, rb);
  std::vector<int64_t> axes_a, axes_b;
  for (int64_t k = 0; k < r; ++k) {
    axes_a.push_back(2 * k + 1);
    axes_b.push_back(2 * k);
  }
  Value* p = ctx.op("Mul", {helpers::unsqueeze(ctx, a, axes_a), helpers::unsqueeze(ctx, b, axes_b)});
  Value* shape = ctx.op("Mul", {ctx.op("Shape", {a}), ctx.op("Shape", {b})});
  ctx.out(ctx.cast(reshape_to(ctx, p, shape, ct), t));
}

// aten::block_diag(tensors): each block (0-d -> 1x1, 1-D -> 1xn) padded with
// zero columns to the full width, the rows concatenated.
void block_diag(SymbolicContext& ctx) {
  const DType t = out_t(ctx);
  const size_t n = ctx.list(0).size();
  if (n == 0) ctx.fail("block_diag of no tensors is not supported");
  std::vector<Value*> blocks;
  std::vector<int64_t> rows, cols;
  for (size_t k = 0; k < n; ++k) {
    Value* v = ctx.cast(ctx.elem(0, k), t);
    const std::vector<int64_t>& s = ctx.static_element_sizes(0, k);
    if (s.size() > 2) ctx.fail("block_diag takes tensors of at most 2 dimensions");
    int64_t r = 1, c = 1;
    if (s.size() == 1) c = s[0];
    if (s.size() == 2) r = s[0], c = s[1];
    if (s.size() < 2) v = helpers::reshape(ctx, v, {r, c});
    blocks.push_back(v);
    rows.push_back(r);
    cols.push_back(c);
  }
  int64_t width = 0;
  for (int64_t c : cols) width += c;
  std::vector<Value*> bands;
  int64_t left = 0;
  for (size_t k = 0; k < n; ++k) {
    const int64_t right = width - left - cols[k];
    std::vector<Value*> parts;
    if (left > 0) parts.push_back(zeros(ctx, t, {rows[k], left}));
    parts.push_back(blocks[k]);
    if (right > 0) parts.push_back(zeros(ctx, t, {rows[k], right}));
    bands.push_back(parts.size() == 1 ? parts[0] : ctx.op("Concat", parts, {{"axis", int64_t{1}}}));
    left += cols[k];
  }
  ctx.out(bands.size() == 1 ? bands[0] : ctx.op("Concat", bands, {{"axis", int64_t{0}}}));
}

// aten::cartesian_prod(tensors): each 1-D input viewed along its own axis,
// expanded to the grid shape (meshgrid 'ij'), flattened into a column.
void cartesian_prod(SymbolicContext& ctx) {
  const DType t = out_t(ctx);
  const size_t n = ctx.list(0).size();
  if (n == 0) ctx.fail("cartesian_prod of no tensors is not supported");
  std::vector<Value*> xs;
  for (size_t k = 0; k < n; ++k) xs.push_back(ctx.cast(ctx.elem(0, k), t));
  if (n == 1) return ctx.out(xs[0]);
  std::vector<Value*> shapes;
  for (Value* x : xs) shapes.push_back(ctx.op("Shape", {x}));
  Value* grid = ctx.op("Concat", shapes, {{"axis", int64_t{0}}});
  // broadcast to the grid by a Where on an all-true mask of its shape (ONNX
  // Runtime's Expand does not broadcast a size-1 dim to 0)
  Value* all = ctx.op("ConstantOfShape", {grid}, {{"value", ir::Tensor::from_doubles(DType::Bool, {1.0}, {1})}});
  std::vector<Value*> cols;
  for (size_t k = 0; k < n; ++k) {
    std::vector<int64_t> view(n, 1);
    view[k] = -1;
    Value* v = helpers::reshape(ctx, xs[k], view);
    Value* e = ctx.op("Where", {all, v, v});
    cols.push_back(helpers::reshape(ctx, e, {-1, 1}));
  }
  ctx.out(ctx.op("Concat", cols, {{"axis", int64_t{1}}}));
}

// aten::combinations(self, r, with_replacement): the index tuples in
// lexicographic order (as itertools), from the example's static length,
// gathered from the run-time values.
void combinations(SymbolicContext& ctx) {
  if (ctx.rank(0) != 1) ctx.fail("combinations takes a 1-D tensor");
  const int64_t n = ctx.static_dim(0, 0), r = ctx.i(1);
  const bool repl = ctx.b(2);
  if (r < 0) ctx.fail("combinations needs r >= 0");
  Value* x = ctx.in(0);
  if (r == 0) return ctx.out(ctx.op("Gather", {x, ctx.const_ints({})}, {{"axis", int64_t{0}}}));
  std::vector<int64_t> flat;
  std::vector<int64_t> idx(static_cast<size_t>(r));
  // first tuple
  bool any = true;
  for (int64_t k = 0; k < r; ++k) idx[k] = repl ? 0 : k;
  if (n == 0 || (!repl && r > n)) any = false;
  int64_t count = 0;
  while (any) {
    flat.insert(flat.end(), idx.begin(), idx.end());
    ++count;
    if (static_cast<int64_t>(flat.size()) > 50000000) ctx.fail("combinations: too many tuples to export");
    // advance: the rightmost position that can still grow
    int64_t k = r - 1;
    while (k >= 0 && idx[k] == (repl ? n - 1 : n - r + k)) --k;
    if (k < 0) break;
    ++idx[k];
    for (int64_t j = k + 1; j < r; ++j) idx[j] = repl ? idx[k] : idx[j - 1] + 1;
  }
  Value* ind = ctx.constant(ir::Tensor::from_int64s(flat, {count, r}));
  ctx.out(ctx.op("Gather", {x, ind}, {{"axis", int64_t{0}}}));
}

// aten::inner(self, other): the sum over the last dims, as a MatMul of the
// inputs flattened to [A, k] and [B, k], reshaped to a.shape[:-1] + b.shape[:-1].
void inner(SymbolicContext& ctx) {
  const DType t = out_t(ctx), ct = arith_t(ctx, t);
  Value* a = ctx.cast(ctx.in_as(0, t), ct);
  Value* b = ctx.cast(ctx.in_as(1, t), ct);
  const int64_t ra = ctx.rank(0), rb = ctx.rank(1);
  if (ra == 0 || rb == 0) return ctx.out(ctx.cast(ctx.op("Mul", {a, b}), t));
  Value* fa = ctx.op("Flatten", {a}, {{"axis", ra - 1}});
  Value* fb = ctx.op("Flatten", {b}, {{"axis", rb - 1}});
  Value* m = ctx.op("MatMul", {fa, helpers::transpose(ctx, fb, {1, 0})});
  Value* shape = ctx.op("Concat", {leading_shape(ctx, a), leading_shape(ctx, b)}, {{"axis", int64_t{0}}});
  ctx.out(ctx.cast(reshape_to(ctx, m, shape, ct), t));
}

// aten::vdot(self, other) for real inputs: sum(self * other).
void vdot(SymbolicContext& ctx) {
  const DType t = out_t(ctx), ct = arith_t(ctx, t);
  if (t == DType::Complex64 || t == DType::Complex128) ctx.fail("vdot of complex tensors is not supported");
  Value* p = ctx.op("Mul", {ctx.cast(ctx.in_as(0, t), ct), ctx.cast(ctx.in_as(1, t), ct)});
  ctx.out(ctx.cast(helpers::reduce(ctx, "ReduceSum", p, {0}, false), t));
}

// aten::addr(self, vec1, vec2, beta, alpha) = beta * self + alpha * outer(vec1, vec2);
// with beta == 0 self is ignored (its NaNs do not propagate), as in PyTorch.
void addr(SymbolicContext& ctx) {
  const DType t = out_t(ctx), ct = arith_t(ctx, t);
  Value* v1 = ctx.cast(ctx.in_as(1, t), ct);
  Value* v2 = ctx.cast(ctx.in_as(2, t), ct);
  Value* o = ctx.op("Mul", {helpers::unsqueeze(ctx, v1, {1}), helpers::unsqueeze(ctx, v2, {0})});
  if (!(ctx.constant(4) && ctx.f(4) == 1.0)) o = ctx.op("Mul", {o, ctx.cast(ctx.scalar_value(4, t), ct)});
  // (self broadcasts to outer's [n, m], so the result has that shape either way)
  if (ctx.constant(3) && ctx.f(3) == 0.0) return ctx.out(ctx.cast(o, t));
  Value* m = ctx.cast(ctx.in_as(0, t), ct);
  if (!(ctx.constant(3) && ctx.f(3) == 1.0)) m = ctx.op("Mul", {m, ctx.cast(ctx.scalar_value(3, t), ct)});
  ctx.out(ctx.cast(ctx.op("Add", {m, o}), t));
}

// aten::bilinear(x1, x2, W, b): y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o],
// as (x1 @ W viewed [I, O*J]) times x2 summed over j.
void bilinear(SymbolicContext& ctx) {
  const DType t = out_t(ctx);
  const std::vector<int64_t>& ws = ctx.static_sizes(2);
  if (ws.size() != 3) ctx.fail("bilinear needs a 3-D weight");
  const int64_t O = ws[0], I = ws[1], J = ws[2];
  const int64_t r1 = ctx.rank(0), r2 = ctx.rank(1);
  if (r1 < 1 || r2 < 1) ctx.fail("bilinear needs inputs of at least 1 dimension");
  Value* x1 = ctx.in_as(0, t);
  Value* f1 = ctx.op("Flatten", {x1}, {{"axis", r1 - 1}});                   // [N, I]
  Value* f2 = ctx.op("Flatten", {ctx.in_as(1, t)}, {{"axis", r2 - 1}});      // [N, J]
  Value* w = helpers::reshape(ctx, helpers::transpose(ctx, ctx.in_as(2, t), {1, 0, 2}), {I, O * J});
  Value* xw = helpers::reshape(ctx, ctx.op("MatMul", {f1, w}), {-1, O, J});  // [N, O, J]
  Value* y = helpers::reduce(ctx, "ReduceSum", ctx.op("Mul", {xw, helpers::unsqueeze(ctx, f2, {1})}), {2}, false);
  if (Value* b = ctx.opt_in(3)) y = ctx.op("Add", {y, ctx.cast(b, t)});
  Value* shape = ctx.op("Concat", {leading_shape(ctx, x1), ctx.const_ints({O})}, {{"axis", int64_t{0}}});
  ctx.out(reshape_to(ctx, y, shape, t));
}

// aten::dist(self, other, p) = the p-norm of (self - other) flattened.
void dist(SymbolicContext& ctx) {
  const DType t = out_t(ctx);
  Value* d = helpers::reshape(ctx, ctx.op("Sub", {ctx.in_as(0, t), ctx.in_as(1, t)}), {-1});
  ctx.out(p_norm(ctx, d, t, ctx.f(2), 0, false));
}

// aten::pdist(self, p): the p-norms of row i - row j for i < j, in row-major
// order, with the pairs tabled from the example's static row count.
void pdist(SymbolicContext& ctx) {
  const DType t = out_t(ctx);
  if (ctx.rank(0) != 2) ctx.fail("pdist takes a 2-D tensor");
  const int64_t n = ctx.static_dim(0, 0);
  const double p = ctx.f(1);
  if (p < 0) ctx.fail("pdist needs p >= 0");
  std::vector<int64_t> ii, jj;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) ii.push_back(i), jj.push_back(j);
  Value* x = ctx.in_as(0, t);
  Value* a = ctx.op("Gather", {x, ctx.const_ints(ii)}, {{"axis", int64_t{0}}});
  Value* b = ctx.op("Gather", {x, ctx.const_ints(jj)}, {{"axis", int64_t{0}}});
  ctx.out(p_norm(ctx, ctx.op("Sub", {a, b}), t, p, 1, false));
}

// The [m, m] index table placing n values on diagonal `offset` of an m x m
// matrix (m = n + |offset|); other cells index n (a zero appended to the values).
Value* diag_table(SymbolicContext& ctx, int64_t n, int64_t offset, int64_t* m_out) {
  const int64_t m = n + std::abs(offset);
  std::vector<int64_t> idx(static_cast<size_t>(m * m), n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = offset >= 0 ? i : i - offset, c = offset >= 0 ? i + offset : i;
    idx[static_cast<size_t>(r * m + c)] = i;
  }
  *m_out = m;
  return ctx.constant(ir::Tensor::from_int64s(idx, {m, m}));
}

// A 1-D vector (static length n) laid on diagonal `offset` of a square matrix.
Value* diag_matrix(SymbolicContext& ctx, Value* v, int64_t n, int64_t offset, DType t) {
  int64_t m = 0;
  Value* table = diag_table(ctx, n, offset, &m);
  Value* vz = ctx.op("Concat", {v, zeros(ctx, t, {1})}, {{"axis", int64_t{0}}});
  return ctx.op("Gather", {vz, table}, {{"axis", int64_t{0}}});
}

// aten::diag(self, diagonal): 1-D -> the square matrix with self on that
// diagonal; 2-D -> that diagonal (Gather of its flat positions).
void diag(SymbolicContext& ctx) {
  const DType t = out_t(ctx);
  const int64_t offset = ctx.none(1) ? 0 : ctx.i(1);
  Value* x = ctx.cast(ctx.in(0), t);
  const int64_t r = ctx.rank(0);
  if (r == 1) return ctx.out(diag_matrix(ctx, x, ctx.static_dim(0, 0), offset, t));
  if (r != 2) ctx.fail("diag takes a 1-D or 2-D tensor");
  helpers::Diagonal d = helpers::diagonal(ctx, x, ctx.static_sizes(0), offset, 0, 1);
  ctx.out(ctx.op("Gather", {d.flat, ctx.const_ints(d.positions)}, {{"axis", int64_t{0}}}));
}

// aten::diagflat(self, offset): diag of self flattened.
void diagflat(SymbolicContext& ctx) {
  const DType t = out_t(ctx);
  int64_t n = 1;
  for (int64_t s : ctx.static_sizes(0)) n *= s;
  Value* v = helpers::reshape(ctx, ctx.cast(ctx.in(0), t), {-1});
  ctx.out(diag_matrix(ctx, v, n, ctx.none(1) ? 0 : ctx.i(1), t));
}

// aten::diag_embed(self, offset, dim1, dim2): the last dim's values placed on
// diagonal `offset` of new dims (dim1, dim2): a Gather through the index
// table appends the two dims last, a Transpose moves them.
void diag_embed(SymbolicContext& ctx) {
  const DType t = out_t(ctx);
  const int64_t r = ctx.rank(0);
  if (r < 1) ctx.fail("diag_embed takes a tensor of at least 1 dimension");
  const int64_t offset = ctx.i(1), R = r + 1;
  const int64_t d1 = helpers::normalize_dim(ctx, ctx.i(2), R), d2 = helpers::normalize_dim(ctx, ctx.i(3), R);
  if (d1 == d2) ctx.fail("diag_embed needs two different dims");
  const int64_t n = ctx.static_dim(0, -1);
  Value* x = ctx.cast(ctx.in(0), t);
  Value* m;
  if (n == 0 && offset == 0) {
    // [..., 0] -> [..., 0, 0]
    m = helpers::slice(ctx, helpers::unsqueeze(ctx, x, {r}), {r}, {0}, {0});
  } else {
    Value* zshape = ctx.op("Concat", {leading_shape(ctx, x), ctx.const_ints({1})}, {{"axis", int64_t{0}}});
    Value* zcol = ctx.op("ConstantOfShape", {zshape}, {{"value", ir::Tensor::from_doubles(t, {0.0}, {1})}});
    Value* xz = ctx.op("Concat", {x, zcol}, {{"axis", r - 1}});
    int64_t mm = 0;
    Value* table = diag_table(ctx, n, offset, &mm);
    m = ctx.op("Gather", {xz, table}, {{"axis", r - 1}});  // [..., m, m]
  }
  std::vector<int64_t> perm;
  int64_t next = 0;
  for (int64_t p = 0; p < R; ++p) perm.push_back(p == d1 ? R - 2 : p == d2 ? R - 1 : next++);
  ctx.out(helpers::transpose(ctx, m, perm));
}

// aten::tril_indices / triu_indices(row, col, offset): the coordinates of the
// lower / upper triangle in row-major order, a constant of the given sizes.
void tri_indices(SymbolicContext& ctx, bool lower) {
  const DType t = ctx.out_dtype() == DType::Undefined ? DType::Int64 : ctx.out_dtype();
  const int64_t rows = ctx.i(0), cols = ctx.i(1), offset = ctx.none(2) ? 0 : ctx.i(2);
  if (rows < 0 || cols < 0) ctx.fail("tril_indices/triu_indices need non-negative sizes");
  std::vector<int64_t> rs, cs;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      if (lower ? j - i <= offset : j - i >= offset) rs.push_back(i), cs.push_back(j);
  const int64_t k = static_cast<int64_t>(rs.size());
  rs.insert(rs.end(), cs.begin(), cs.end());
  ctx.out(ctx.cast(ctx.constant(ir::Tensor::from_int64s(rs, {2, k})), t));
}

}  // namespace

void register_products(Registry& r) {
  r.add("aten::kron", 9, kron);
  r.add("aten::block_diag", 9, block_diag);
  r.add("aten::cartesian_prod", 9, cartesian_prod);
  r.add("aten::combinations", 9, combinations);
  r.add("aten::inner", 9, inner);
  r.add("aten::vdot", 9, vdot);
  r.add("aten::addr", 9, addr);
  r.add("aten::bilinear", 9, bilinear);
  r.add("aten::dist", 9, dist);
  r.add("aten::pdist", 9, pdist);
  r.add("aten::diag", 9, diag);
  r.add("aten::diagflat", 9, diagflat);
  r.add("aten::diag_embed", 9, diag_embed);
  r.add("aten::tril_indices", 9, [](SymbolicContext& ctx) { tri_indices(ctx, true); });
  r.add("aten::triu_indices", 9, [](SymbolicContext& ctx) { tri_indices(ctx, false); });
}

}  // namespace torch2onnx::symbolics
