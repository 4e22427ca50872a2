// Indexing: index, index_put, index_add/copy/fill, masked_fill/scatter/select,
// gather, scatter, scatter_add, scatter_reduce, take, nonzero,
// select_scatter, slice_scatter.
//
// Where ONNX has no accumulating scatter (ScatterElements/ScatterND gained
// `reduction` at opset 16), sums over duplicate indices are computed with a
// one-hot comparison (Equal of the index against an arange) followed by a
// reduction or a MatMul: exact, and valid from opset 9.
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();


bool constant_nonnegative(Value* v) {
  const ir::Tensor* t = v->constant();
  if (!t) return false;
  for (int64_t i : t->to_int64s())
    if (i < 0) return false;
  return true;
}

// Whether every element of the integer value v is >= 0 whatever the inputs:
// constants, sizes, positions (NonZero, ArgMax, Range from >= 0 by >= 0) and
// what moves, picks or adds such values.
bool known_nonnegative(Value* v, int depth = 0) {
  if (!v || depth > 12) return false;
  if (v->constant()) return constant_nonnegative(v);
  const ir::Node* n = v->producer();
  if (!n || !n->domain().empty()) return false;
  const std::string& op = n->op_type();
  if (op == "Shape" || op == "Size" || op == "NonZero" || op == "ArgMax" || op == "ArgMin") return true;
  if (op == "Range") return known_nonnegative(n->input(0), depth + 1) && known_nonnegative(n->input(2), depth + 1);
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Expand" || op == "Transpose" ||
      op == "Flatten" || op == "Identity" || op == "Gather" || op == "Slice" ||
      (op == "Cast" && ir::is_integral(v->type().dtype)))
    return known_nonnegative(n->input(0), depth + 1);
  if (op == "Add" || op == "Mul" || op == "Concat" || op == "Min") {
    for (Value* in : n->inputs())
      if (!known_nonnegative(in, depth + 1)) return false;
    return true;
  }
  return false;
}

// An int64 index with negative entries counted from `size` (0-d int64).
Value* wrap_negative(SymbolicContext& ctx, Value* idx, Value* size) {
  if (known_nonnegative(idx)) return idx;
  Value* neg = ctx.op("Less", {idx, ctx.const_int(0)});
  return ctx.op("Where", {neg, ctx.op("Add", {idx, size}), idx});
}

Value* shape_of(SymbolicContext& ctx, Value* v) { return ctx.op("Shape", {v}); }

// Where for data of any dtype (ONNX Runtime's Where has no bool, int8 or int16 kernel).
Value* where(SymbolicContext& ctx, Value* cond, Value* a, Value* b, DType dt) {
  if (dt == DType::Bool || dt == DType::Int8 || dt == DType::Int16)
    return ctx.cast(ctx.op("Where", {cond, ctx.cast(a, DType::Int32), ctx.cast(b, DType::Int32)}), dt);
  return ctx.op("Where", {cond, a, b});
}

// A dtype ONNX Runtime's reductions and MatMul accept, to compute `t` values in.
DType compute_dtype(DType t) {
  if (t == DType::Float || t == DType::Double || t == DType::Int32 || t == DType::Int64) return t;
  return ir::is_floating(t) ? DType::Float : DType::Int32;
}

// Shape(v)[begin:end] as a 1-D value.
Value* shape_slice(SymbolicContext& ctx, Value* v, int64_t begin, int64_t end = kMax) {
  return helpers::slice(ctx, shape_of(ctx, v), {0}, {begin}, {end});
}

// Concat of the non-null parts (nullptr when there are none).
Value* concat(SymbolicContext& ctx, const std::vector<Value*>& parts, int64_t axis) {
  std::vector<Value*> ps;
  for (Value* p : parts)
    if (p) ps.push_back(p);
  if (ps.empty()) return nullptr;
  if (ps.size() == 1) return ps[0];
  return ctx.op("Concat", ps, {{"axis", axis}});
}

using helpers::inverse_perm;
using helpers::transpose;

// A 1-D (or 0-d) index along `dim` reshaped to broadcast against a rank-`rank` tensor.
Value* along(SymbolicContext& ctx, Value* idx1d, int64_t dim, int64_t rank) {
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(dim)] = -1;
  return helpers::reshape(ctx, idx1d, shape);
}


// ---------------------------------------------------------------- advanced indexing

// The indices of aten::index / index_put as one int64 index (or nullptr) per
// dim of self: bool/uint8 masks become one index per masked dim (NonZero).
struct Indices {
  std::vector<Value*> per_dim;
  std::vector<int64_t> ranks;        // rank of each index (for broadcasting)
  std::vector<bool> from_mask;       // known non-negative
  std::vector<int64_t> adv;          // dims with an index
  bool single_mask = false;          // exactly one bool mask and nothing else
  int64_t mask_pos = -1, mask_rank = 0;
  Value* mask = nullptr;
};

Indices collect_indices(SymbolicContext& ctx, size_t arg, int64_t rank) {
  const Arg& a = ctx.arg(arg);
  std::vector<Value*> vals = ctx.opt_list(arg);
  Indices ix;
  int masks = 0, ints = 0;
  for (size_t k = 0; k < vals.size(); ++k) {
    Value* v = vals[k];
    if (!v) {
      ix.per_dim.push_back(nullptr);
      ix.ranks.push_back(0);
      ix.from_mask.push_back(false);
      continue;
    }
    const Arg& e = a.elements[k];
    if (e.dtype == DType::Bool || e.dtype == DType::UInt8) {
      const int64_t mr = e.rank();
      if (mr <= 0) ctx.fail("indexing with a 0-d boolean mask is not supported");
      ++masks;
      ix.mask_pos = static_cast<int64_t>(ix.per_dim.size());
      ix.mask_rank = mr;
      ix.mask = ctx.cast(v, DType::Bool);
      Value* nz = ctx.op("NonZero", {v});  // [mr, N]
      for (int64_t j = 0; j < mr; ++j) {
        ix.per_dim.push_back(ctx.op("Gather", {nz, ctx.const_int(j)}, {{"axis", int64_t{0}}}));
        ix.ranks.push_back(1);
        ix.from_mask.push_back(true);
      }
    } else {
      if (!ir::is_integral(e.dtype) && e.dtype != DType::Undefined)
        ctx.fail("tensors used as indices must be long, int, byte or bool tensors");
      ++ints;
      ix.per_dim.push_back(ctx.cast(v, DType::Int64));
      ix.ranks.push_back(e.rank() < 0 ? 1 : e.rank());
      ix.from_mask.push_back(false);
    }
  }
  if (static_cast<int64_t>(ix.per_dim.size()) > rank)
    ctx.fail("too many indices for a tensor of rank " + std::to_string(rank));
  ix.per_dim.resize(static_cast<size_t>(rank), nullptr);
  ix.ranks.resize(static_cast<size_t>(rank), 0);
  ix.from_mask.resize(static_cast<size_t>(rank), false);
  for (int64_t d = 0; d < rank; ++d)
    if (ix.per_dim[static_cast<size_t>(d)]) ix.adv.push_back(d);
  ix.single_mask = masks == 1 && ints == 0;
  return ix;
}

// Negative indices wrapped (masks give non-negative ones).
void wrap_all(SymbolicContext& ctx, Indices& ix, Value* x) {
  for (int64_t d : ix.adv) {
    const auto k = static_cast<size_t>(d);
    if (!ix.from_mask[k]) ix.per_dim[k] = wrap_negative(ctx, ix.per_dim[k], helpers::dim_size(ctx, x, d));
  }
}

bool adjacent(const Indices& ix) {
  return ix.adv.back() - ix.adv.front() + 1 == static_cast<int64_t>(ix.adv.size());
}

// Advanced dims first, the others after in order.
std::vector<int64_t> adv_first_perm(const Indices& ix, int64_t rank) {
  std::vector<int64_t> perm = ix.adv;
  for (int64_t d = 0; d < rank; ++d)
    if (!ix.per_dim[static_cast<size_t>(d)]) perm.push_back(d);
  return perm;
}

// sum_j idx_j * prod(sizes of later advanced dims): an index into the
// flattened advanced dims (broadcast shape of the indices).
Value* flat_index(SymbolicContext& ctx, const Indices& ix, Value* x) {
  Value* f = ix.per_dim[static_cast<size_t>(ix.adv[0])];
  for (size_t j = 1; j < ix.adv.size(); ++j) {
    const int64_t d = ix.adv[j];
    f = ctx.op("Add", {ctx.op("Mul", {f, helpers::dim_size(ctx, x, d)}), ix.per_dim[static_cast<size_t>(d)]});
  }
  return f;
}

int64_t index_rank(const Indices& ix) {
  int64_t nb = 0;
  for (int64_t d : ix.adv) nb = std::max(nb, ix.ranks[static_cast<size_t>(d)]);
  return nb;
}

// aten::index(self, Tensor?[] indices)
void index(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  Indices ix = collect_indices(ctx, 1, rank);
  if (ix.adv.empty()) {
    ctx.out(x);
    return;
  }
  if (ix.adv.size() == 1) {  // (Gather counts negative indices from the end itself from opset 11)
    if (ctx.opset() < 11) wrap_all(ctx, ix, x);
    const int64_t d = ix.adv[0];
    ctx.out(ctx.op("Gather", {x, ix.per_dim[static_cast<size_t>(d)]}, {{"axis", d}}));
    return;
  }
  wrap_all(ctx, ix, x);
  // Several advanced indices: gather from x with its advanced dims moved to
  // the front and flattened into one.
  const auto m = static_cast<int64_t>(ix.adv.size());
  const std::vector<int64_t> perm = adv_first_perm(ix, rank);
  Value* xp = transpose(ctx, x, perm);
  Value* f = flat_index(ctx, ix, x);
  Value* shape = concat(ctx, {ctx.const_ints({-1}), m < rank ? shape_slice(ctx, xp, m) : nullptr}, 0);
  Value* y = ctx.op("Gather", {ctx.op("Reshape", {xp, shape}), f}, {{"axis", int64_t{0}}});  // [B..., rest...]
  const int64_t d0 = ix.adv[0];
  if (adjacent(ix) && d0 > 0) {
    // PyTorch puts the index dims where the (adjacent) indexed dims were.
    const int64_t nb = index_rank(ix), out_rank = nb + rank - m;
    std::vector<int64_t> p;
    for (int64_t i = 0; i < d0; ++i) p.push_back(nb + i);
    for (int64_t i = 0; i < nb; ++i) p.push_back(i);
    for (int64_t i = nb + d0; i < out_rank; ++i) p.push_back(i);
    y = transpose(ctx, y, p);
  }
  ctx.out(y);
}

// The prepared pieces of an index_put: x with the advanced dims first
// (xp, perm), the indices and the values laid out as [B..., rest...].
struct PutPlan {
  std::vector<int64_t> perm;
  Value* xp = nullptr;
  Value* values = nullptr;  // [B..., rest...], dtype of x
  int64_t m = 0, nb = 0;
};

PutPlan plan_put(SymbolicContext& ctx, Indices& ix, Value* x, int64_t rank) {
  PutPlan p;
  p.m = static_cast<int64_t>(ix.adv.size());
  p.nb = index_rank(ix);
  p.perm = adv_first_perm(ix, rank);
  p.xp = transpose(ctx, x, p.perm);
  // The broadcast shape of the indices (none for 0-d indices: ONNX's data
  // propagation rejects a Concat of the empty shape of a 0-d tensor).
  Value* bshape = nullptr;
  if (p.nb == 0) {
  } else if (ix.adv.size() == 1) {
    bshape = shape_of(ctx, ix.per_dim[static_cast<size_t>(ix.adv[0])]);
  } else {
    Value* sum = ix.per_dim[static_cast<size_t>(ix.adv[0])];
    for (size_t j = 1; j < ix.adv.size(); ++j) sum = ctx.op("Add", {sum, ix.per_dim[static_cast<size_t>(ix.adv[j])]});
    bshape = shape_of(ctx, sum);
  }
  // Values: drop leading size-1 dims beyond the indexing result's rank, as PyTorch does.
  Value* v = ctx.in_as(2, ctx.dtype(0));
  const int64_t result_rank = p.nb + rank - p.m;
  const auto& vs = ctx.sizes(2);
  const int64_t extra = static_cast<int64_t>(vs.size()) - result_rank;
  if (extra > 0) {
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < extra; ++i) {
      if (vs[static_cast<size_t>(i)] != 1) ctx.fail("the values do not broadcast to the indexing result");
      axes.push_back(i);
    }
    v = helpers::squeeze(ctx, v, axes);
  }
  const int64_t d0 = ix.adv[0];
  if (adjacent(ix) && d0 > 0) {
    // Values are laid out as x[indices] is: [pre..., B..., post...].
    Value* target = concat(ctx, {shape_slice(ctx, x, 0, d0), bshape,
                                 d0 + p.m < rank ? shape_slice(ctx, x, d0 + p.m) : nullptr}, 0);
    if (target) v = ctx.op("Expand", {v, target});
    std::vector<int64_t> q;
    for (int64_t i = 0; i < p.nb; ++i) q.push_back(d0 + i);
    for (int64_t i = 0; i < d0; ++i) q.push_back(i);
    for (int64_t i = d0 + p.nb; i < result_rank; ++i) q.push_back(i);
    v = transpose(ctx, v, q);
  } else {
    Value* target = concat(ctx, {bshape, p.m < rank ? shape_slice(ctx, p.xp, p.m) : nullptr}, 0);
    if (target) v = ctx.op("Expand", {v, target});
  }
  p.values = v;
  return p;
}

// [P, N] one-hot of a flat index f (any shape, N elements) against arange(P).
Value* one_hot_rows(SymbolicContext& ctx, Value* f, Value* p) {
  Value* rows = helpers::unsqueeze(ctx, helpers::arange(ctx, p), {1});
  Value* cols = helpers::unsqueeze(ctx, helpers::reshape(ctx, f, {-1}), {0});
  return ctx.op("Equal", {rows, cols});
}

// x[indices] (+)= values through a one-hot MatMul over the flattened advanced dims.
Value* put_one_hot(SymbolicContext& ctx, Indices& ix, PutPlan& p, Value* x, bool accumulate) {
  const DType dt = ctx.dtype(0), mdt = compute_dtype(dt);
  Value* f = flat_index(ctx, ix, x);
  Value* total = helpers::dim_size(ctx, x, ix.adv[0]);
  for (size_t j = 1; j < ix.adv.size(); ++j) total = ctx.op("Mul", {total, helpers::dim_size(ctx, x, ix.adv[j])});
  Value* onehot = one_hot_rows(ctx, f, total);                                      // [P, N]
  Value* vals = ctx.op("Flatten", {ctx.cast(p.values, mdt)}, {{"axis", p.nb}});     // [N, R]
  Value* xflat = ctx.cast(ctx.op("Flatten", {p.xp}, {{"axis", p.m}}), mdt);         // [P, R]
  Value* put = ctx.op("MatMul", {ctx.cast(onehot, mdt), vals});                      // [P, R]
  Value* y;
  if (accumulate) {
    y = ctx.op("Add", {xflat, put});
  } else {
    Value* hit = helpers::reduce(ctx, "ReduceMax", ctx.cast(onehot, DType::Int32), {1}, true);
    y = ctx.op("Where", {ctx.cast(hit, DType::Bool), put, xflat});
  }
  y = ctx.cast(ctx.op("Reshape", {y, shape_of(ctx, p.xp)}), dt);
  return transpose(ctx, y, inverse_perm(p.perm));
}

// x[mask] = scalar: a Where, at every opset.
bool put_masked_scalar(SymbolicContext& ctx, Indices& ix, Value* x, int64_t rank) {
  if (!ix.single_mask) return false;
  const auto& vs = ctx.sizes(2);
  // (one value for every input the export accepts: a size the example has at 1 may vary, as
  // x[x > 0] * 2 does in a .pt2 program, whose data-dependent size has no example)
  for (size_t d = 0; d < vs.size(); ++d)
    if (ctx.known_static_dim(2, static_cast<int64_t>(d)).value_or(0) != 1) return false;
  Value* mask = ix.mask;
  const int64_t trailing = rank - ix.mask_pos - ix.mask_rank;
  if (trailing > 0) {
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < trailing; ++i) axes.push_back(ix.mask_rank + i);
    mask = helpers::unsqueeze(ctx, mask, axes);
  }
  Value* v = ctx.in_as(2, ctx.dtype(0));
  if (!vs.empty()) v = helpers::reshape(ctx, v, std::vector<int64_t>{});
  ctx.out(where(ctx, mask, v, x, ctx.dtype(0)));
  return true;
}

// aten::index_put(self, indices, values, accumulate=False), opsets 9-10: one-hot.
void index_put_9(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  const bool accumulate = ctx.num_args() > 3 && ctx.b(3);
  Indices ix = collect_indices(ctx, 1, rank);
  if (ix.adv.empty()) ctx.fail("index_put without any index tensor is not supported");
  if (!accumulate && put_masked_scalar(ctx, ix, x, rank)) return;
  wrap_all(ctx, ix, x);
  PutPlan p = plan_put(ctx, ix, x, rank);
  ctx.out(put_one_hot(ctx, ix, p, x, accumulate));
}

// The indices stacked as [B..., m] for ScatterND.
Value* stacked_indices(SymbolicContext& ctx, Indices& ix, PutPlan& p) {
  Value* bshape = nullptr;
  if (ix.adv.size() > 1 && p.nb > 0) {
    Value* sum = ix.per_dim[static_cast<size_t>(ix.adv[0])];
    for (size_t j = 1; j < ix.adv.size(); ++j) sum = ctx.op("Add", {sum, ix.per_dim[static_cast<size_t>(ix.adv[j])]});
    bshape = shape_of(ctx, sum);
  }
  std::vector<Value*> parts;
  for (int64_t d : ix.adv) {
    Value* i = ix.per_dim[static_cast<size_t>(d)];
    if (bshape) i = ctx.op("Expand", {i, bshape});
    parts.push_back(helpers::unsqueeze(ctx, i, {p.nb}));
  }
  return concat(ctx, parts, p.nb);
}

// Opsets 11+: ScatterND (accumulation: one-hot before 16, ScatterND's reduction from 16).
void index_put_scatter(SymbolicContext& ctx, bool reduction) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  const bool accumulate = ctx.num_args() > 3 && ctx.b(3);
  Indices ix = collect_indices(ctx, 1, rank);
  if (ix.adv.empty()) ctx.fail("index_put without any index tensor is not supported");
  if (!accumulate && put_masked_scalar(ctx, ix, x, rank)) return;
  wrap_all(ctx, ix, x);
  PutPlan p = plan_put(ctx, ix, x, rank);
  if (accumulate && !reduction) {
    ctx.out(put_one_hot(ctx, ix, p, x, true));
    return;
  }
  Value* idx = stacked_indices(ctx, ix, p);
  ir::Attributes attrs;
  if (accumulate) attrs.emplace_back("reduction", "add");
  Value* y = ctx.op("ScatterND", {p.xp, idx, p.values}, attrs);
  ctx.out(transpose(ctx, y, inverse_perm(p.perm)));
}

void index_put_11(SymbolicContext& ctx) { index_put_scatter(ctx, false); }
void index_put_16(SymbolicContext& ctx) { index_put_scatter(ctx, true); }

// ---------------------------------------------------------------- along one dim

// An index argument as 1-D int64 with negatives wrapped against self's `dim`.
Value* index_1d(SymbolicContext& ctx, size_t arg, Value* x, int64_t dim) {
  Value* idx = ctx.cast(ctx.in(arg), DType::Int64);
  if (ctx.rank(arg) == 0) idx = helpers::reshape(ctx, idx, {1});
  return wrap_negative(ctx, idx, helpers::dim_size(ctx, x, dim));
}

// A 0-d source (allowed with a 0-d index) as a tensor of self's rank.
Value* source_of_rank(SymbolicContext& ctx, Value* src, int64_t rank) {
  if (ctx.rank(3) == rank) return src;
  if (ctx.rank(3) != 0) ctx.fail("the source must have as many dims as self");
  return helpers::reshape(ctx, src, std::vector<int64_t>(static_cast<size_t>(rank), 1));
}

// The index_* operators take a 0-d self as one element along dim 0 (or -1):
// self as 1-D and its rank, and the result back to self's rank.
std::pair<Value*, int64_t> self_as_1d(SymbolicContext& ctx) {
  if (ctx.rank(0) > 0) return {ctx.in(0), ctx.rank(0)};
  return {helpers::reshape(ctx, ctx.in(0), {1}), 1};
}
void out_like_self(SymbolicContext& ctx, Value* v) {
  ctx.out(ctx.rank(0) == 0 ? helpers::reshape(ctx, v, std::vector<int64_t>{}) : v);
}

// aten::index_copy(self, dim, index, source): Scatter(Elements) of the slices.
void index_copy(SymbolicContext& ctx, const char* scatter) {
  auto [x, rank] = self_as_1d(ctx);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  Value* idx = index_1d(ctx, 2, x, dim);
  Value* src = ctx.in_as(3, ctx.dtype(0));
  src = source_of_rank(ctx, src, rank);
  Value* idx_e = ctx.op("Expand", {along(ctx, idx, dim, rank), shape_of(ctx, src)});
  out_like_self(ctx, ctx.op(scatter, {x, idx_e, src}, {{"axis", dim}}));
}
void index_copy_9(SymbolicContext& ctx) { index_copy(ctx, "Scatter"); }
void index_copy_11(SymbolicContext& ctx) { index_copy(ctx, "ScatterElements"); }

// The first position of an index that is provably consecutive (k, k+1, ...):
// a Range with step 1 (arange(past, past + n), a static cache's
// cache_position) or a constant of consecutive integers; nullptr otherwise.
Value* consecutive_start(SymbolicContext& ctx, Value* idx) {
  if (const ir::Tensor* t = idx->constant()) {
    if (t->dims().size() != 1 || t->numel() == 0 || !ir::is_integral(t->dtype())) return nullptr;
    const std::vector<int64_t> v = t->to_int64s();
    for (size_t k = 1; k < v.size(); ++k)
      if (v[k] != v[0] + static_cast<int64_t>(k)) return nullptr;
    return ctx.const_int(v[0]);
  }
  ir::Node* range = idx->producer();
  if (range && range->op_type() == "Cast" && range->domain().empty()) range = range->input(0)->producer();
  if (!range || range->op_type() != "Range" || !range->domain().empty() || !ir::is_integral(range->input(0)->dtype()))
    return nullptr;
  const ir::Tensor* step = range->input(2)->constant();
  if (!step || step->numel() != 1 || step->to_int64s()[0] != 1) return nullptr;
  return helpers::reshape(ctx, ctx.cast(range->input(0), DType::Int64), {});
}

// Opset 24: index_copy along a dim past the first with a consecutive index
// (a static KV cache's update at cache_position) is one TensorScatter at the
// index's first entry. PyTorch refuses entries outside [0, size); the write
// position is taken modulo the dim's size and the mode is circular, so that
// such an input cannot make the node write outside the cache. Any other
// index: ScatterElements, as below 24.
void index_copy_24(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  if (rank < 2 || ctx.rank(2) != 1 || ctx.rank(3) != rank) return index_copy_11(ctx);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  Value* start = dim >= 1 ? consecutive_start(ctx, ctx.in(2)) : nullptr;
  if (!start) return index_copy_11(ctx);
  Value* x = ctx.in(0);
  // (the divisor at least 1: an empty dim takes an empty index, and Mod by 0 is an error)
  Value* size = ctx.op("Max", {helpers::dim_size(ctx, x, dim), ctx.const_int(1)});
  Value* first = helpers::reshape(ctx, ctx.op("Mod", {start, size}, {{"fmod", int64_t{0}}}), {1});
  Value* batch = helpers::reshape(ctx, helpers::dim_size(ctx, x, 0), {1});
  Value* write_indices = ctx.op("Expand", {first, batch});
  ctx.out(ctx.op("TensorScatter", {x, ctx.in_as(3, ctx.dtype(0)), write_indices},
                 {{"axis", dim}, {"mode", std::string("circular")}}));
}

// source moved so `dim` is last, one-hot MatMul against arange(size of dim): the sums per target slice.
Value* index_sums(SymbolicContext& ctx, Value* x, int64_t dim, int64_t rank, Value* idx, Value* src) {
  const DType mdt = compute_dtype(ctx.dtype(0));
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim) perm.push_back(d);
  perm.push_back(dim);
  Value* src_t = transpose(ctx, ctx.cast(src, mdt), perm);  // [..., N]
  // [N, S]: onehot[n][s] = idx[n] == s
  Value* cols = helpers::unsqueeze(ctx, helpers::arange(ctx, helpers::dim_size(ctx, x, dim)), {0});
  Value* rows = helpers::unsqueeze(ctx, idx, {1});
  Value* oh = ctx.cast(ctx.op("Equal", {rows, cols}), mdt);
  return transpose(ctx, ctx.op("MatMul", {src_t, oh}), inverse_perm(perm));  // in compute_dtype
}

// index_add's source with self's shape but len(index) along dim. PyTorch
// 1.13 adds each source slice to its self slice with broadcasting (a source
// [1, 4, 3] into self [5, 4, 3] along dim 1; a [5, 1] source into [5, 4, 3]
// along dim 0); 2.x requires the shapes to match, where this is a no-op.
Value* source_like_self(SymbolicContext& ctx, Value* src, Value* x, int64_t dim, int64_t rank) {
  const int64_t src_rank = ctx.rank(3);
  if (src_rank == 0) return source_of_rank(ctx, src, rank);
  if (src_rank != rank) {
    if (dim != 0 || src_rank > rank) ctx.fail("the source must have as many dims as self");
    // The slices' missing leading dims: units right after dim 0.
    Value* src_shape = ctx.op("Shape", {src});
    std::vector<Value*> parts{helpers::slice(ctx, src_shape, {0}, {0}, {1}),
                              ctx.const_ints(std::vector<int64_t>(static_cast<size_t>(rank - src_rank), 1)),
                              helpers::slice(ctx, src_shape, {0}, {1}, {src_rank})};
    src = ctx.op("Reshape", {src, ctx.op("Concat", parts, {{"axis", int64_t{0}}})});
  }
  Value* x_shape = ctx.op("Shape", {x});
  std::vector<Value*> target;
  if (dim > 0) target.push_back(helpers::slice(ctx, x_shape, {0}, {0}, {dim}));
  target.push_back(helpers::slice(ctx, ctx.op("Shape", {src}), {0}, {dim}, {dim + 1}));
  if (dim + 1 < rank) target.push_back(helpers::slice(ctx, x_shape, {0}, {dim + 1}, {rank}));
  return ctx.op("Expand", {src, target.size() == 1 ? target[0] : ctx.op("Concat", target, {{"axis", int64_t{0}}})});
}

// aten::index_add(self, dim, index, source, *, alpha=1)
Value* scaled_source(SymbolicContext& ctx) {
  Value* src = ctx.in_as(3, ctx.dtype(0));
  if (ctx.num_args() > 4 && !ctx.none(4)) {
    const double alpha = ctx.f(4);
    if (alpha != 1.0) src = ctx.op("Mul", {src, ctx.const_scalar(ctx.dtype(0), alpha)});
  }
  return src;
}

void index_add_9(SymbolicContext& ctx) {
  auto [x, rank] = self_as_1d(ctx);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  Value* idx = index_1d(ctx, 2, x, dim);
  Value* src = source_like_self(ctx, scaled_source(ctx), x, dim, rank);
  Value* sums = index_sums(ctx, x, dim, rank, idx, src);
  out_like_self(ctx, ctx.cast(ctx.op("Add", {ctx.cast(x, compute_dtype(ctx.dtype(0))), sums}), ctx.dtype(0)));
}

void index_add_16(SymbolicContext& ctx) {
  auto [x, rank] = self_as_1d(ctx);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  Value* idx = index_1d(ctx, 2, x, dim);
  Value* src = source_like_self(ctx, scaled_source(ctx), x, dim, rank);
  Value* idx_e = ctx.op("Expand", {along(ctx, idx, dim, rank), shape_of(ctx, src)});
  out_like_self(ctx, ctx.op("ScatterElements", {x, idx_e, src}, {{"axis", dim}, {"reduction", "add"}}));
}

// aten::index_fill(self, dim, index, value): Where over the slices hit by index.
void index_fill(SymbolicContext& ctx) {
  auto [x, rank] = self_as_1d(ctx);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  Value* idx = index_1d(ctx, 2, x, dim);
  Value* pos = helpers::unsqueeze(ctx, helpers::arange(ctx, helpers::dim_size(ctx, x, dim)), {1});  // [S, 1]
  Value* eq = ctx.cast(ctx.op("Equal", {pos, helpers::unsqueeze(ctx, idx, {0})}), DType::Int32);
  Value* hit = ctx.cast(helpers::reduce(ctx, "ReduceMax", eq, {1}, false), DType::Bool);  // [S]
  Value* v = ctx.in_as(3, ctx.dtype(0));
  if (ctx.rank(3) > 0) v = helpers::reshape(ctx, v, std::vector<int64_t>{});
  out_like_self(ctx, where(ctx, along(ctx, hit, dim, rank), v, x, ctx.dtype(0)));
}

// ---------------------------------------------------------------- masks

// aten::masked_fill(self, mask, value)
void masked_fill(SymbolicContext& ctx) {
  Value* v = ctx.in_as(2, ctx.dtype(0));
  ctx.out(where(ctx, ctx.cast(ctx.in(1), DType::Bool), v, ctx.in(0), ctx.dtype(0)));
}

// self and mask broadcast against each other (ONNX Expand broadcasts both
// ways); no Expand when their shapes are equal for every input the export accepts.
std::pair<Value*, Value*> broadcast_mask(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  Value* mask = ctx.cast(ctx.in(1), DType::Bool);
  bool same = ctx.sizes(0) == ctx.sizes(1);
  for (int64_t d = 0; same && d < ctx.rank(0); ++d) same = !ctx.dim_is_dynamic(0, d) && !ctx.dim_is_dynamic(1, d);
  if (!same) {
    x = ctx.op("Expand", {x, shape_of(ctx, mask)});
    mask = ctx.op("Expand", {mask, shape_of(ctx, x)});
  }
  return {x, mask};
}

// aten::masked_select(self, mask): the selected elements, row-major.
void masked_select(SymbolicContext& ctx) {
  auto [x, mask] = broadcast_mask(ctx);
  Value* pos = helpers::reshape(ctx, ctx.op("NonZero", {helpers::reshape(ctx, mask, {-1})}), {-1});
  ctx.out(ctx.op("Gather", {helpers::reshape(ctx, x, {-1}), pos}, {{"axis", int64_t{0}}}));
}

// aten::masked_scatter(self, mask, source): the first count(mask) elements of
// source, in order, into the masked places.
void masked_scatter(SymbolicContext& ctx) {
  auto [x, mask] = broadcast_mask(ctx);
  Value* idx = ctx.op("Transpose", {ctx.op("NonZero", {mask})}, {{"perm", std::vector<int64_t>{1, 0}}});  // [N, r]
  Value* n = shape_slice(ctx, idx, 0, 1);
  Value* src = helpers::reshape(ctx, ctx.in_as(2, ctx.dtype(0)), {-1});
  src = helpers::slice_dynamic(ctx, src, ctx.const_ints({0}), n, ctx.const_ints({0}), nullptr);
  ctx.out(ctx.op("ScatterND", {x, idx, src}));
}

// ---------------------------------------------------------------- gather / scatter

// aten::gather(self, dim, index, *, sparse_grad=False)
void gather_11(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  if (rank == 0) {
    ctx.out(ctx.op("Identity", {x}));
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  Value* idx = wrap_negative(ctx, ctx.cast(ctx.in(2), DType::Int64), helpers::dim_size(ctx, x, dim));
  ctx.out(ctx.op("GatherElements", {x, idx}, {{"axis", dim}}));
}

// x cut to the index's sizes in the dims other than `dim` (PyTorch allows a smaller index there).
Value* cut_to_index(SymbolicContext& ctx, Value* v, const std::vector<int64_t>& vsizes,
                    const std::vector<int64_t>& isizes, int64_t dim, size_t v_arg, size_t i_arg, Value* index) {
  bool dynamic = false;
  for (size_t d = 0; d < isizes.size(); ++d)
    if (static_cast<int64_t>(d) != dim && d < vsizes.size())
      dynamic = dynamic || ctx.dim_is_dynamic(v_arg, static_cast<int64_t>(d)) ||
                ctx.dim_is_dynamic(i_arg, static_cast<int64_t>(d));
  if (dynamic && ctx.opset() >= 10) {
    // (sizes known at run time: slice every other dim to the index's size; Slice clamps longer ends)
    std::vector<int64_t> axes;
    for (size_t d = 0; d < isizes.size() && d < vsizes.size(); ++d)
      if (static_cast<int64_t>(d) != dim) axes.push_back(static_cast<int64_t>(d));
    if (axes.empty()) return v;
    Value* ax = ctx.const_ints(axes);
    Value* ends = ctx.op("Gather", {ctx.op("Shape", {index}), ax}, {{"axis", int64_t{0}}});
    return helpers::slice_dynamic(ctx, v, ctx.const_ints(std::vector<int64_t>(axes.size(), 0)), ends, ax, nullptr);
  }
  std::vector<int64_t> axes, starts, ends;
  for (size_t d = 0; d < isizes.size(); ++d) {
    if (static_cast<int64_t>(d) == dim || d >= vsizes.size() || isizes[d] >= vsizes[d]) continue;
    axes.push_back(static_cast<int64_t>(d));
    starts.push_back(0);
    ends.push_back(isizes[d]);
  }
  return axes.empty() ? v : helpers::slice(ctx, v, axes, starts, ends);
}

// [..., S at dim+1, ...] one-hot of index (shape of index with S inserted after dim).
Value* index_one_hot(SymbolicContext& ctx, Value* idx, int64_t dim, int64_t rank, Value* depth) {
  std::vector<int64_t> shape(static_cast<size_t>(rank + 1), 1);
  shape[static_cast<size_t>(dim + 1)] = -1;
  Value* pos = helpers::reshape(ctx, helpers::arange(ctx, depth), shape);
  return ctx.op("Equal", {helpers::unsqueeze(ctx, idx, {dim + 1}), pos});
}

// Before opset 11: Where over a one-hot of the index, summed over `dim`.
void gather_9(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  if (rank == 0) {
    ctx.out(ctx.op("Identity", {x}));
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  Value* idx = wrap_negative(ctx, ctx.cast(ctx.in(2), DType::Int64), helpers::dim_size(ctx, x, dim));
  Value* xs = cut_to_index(ctx, x, ctx.sizes(0), ctx.sizes(2), dim, 0, 2, idx);
  Value* oh = index_one_hot(ctx, idx, dim, rank, helpers::dim_size(ctx, x, dim));  // [.., N(dim), S, ..]
  Value* xu = helpers::unsqueeze(ctx, xs, {dim});                                      // [.., 1, S, ..]
  const DType dt = ctx.dtype(0), wdt = compute_dtype(dt);
  Value* picked = ctx.op("Where", {oh, ctx.cast(xu, wdt), ctx.const_scalar(wdt, 0)});
  ctx.out(ctx.cast(helpers::reduce(ctx, "ReduceSum", picked, {dim + 1}, false), dt));
}

enum class Reduce { None, Sum, Prod, Mean, Max, Min };

Reduce parse_reduce(SymbolicContext& ctx, const std::string& s) {
  if (s == "add" || s == "sum") return Reduce::Sum;
  if (s == "multiply" || s == "prod") return Reduce::Prod;
  if (s == "mean") return Reduce::Mean;
  if (s == "amax") return Reduce::Max;
  if (s == "amin") return Reduce::Min;
  ctx.fail("unknown reduction '" + s + "'");
}

// The arguments of scatter/scatter_add/scatter_reduce: self, dim, index, src
// (a tensor cut to the index's shape, or a scalar expanded to it).
struct ScatterArgs {
  Value* x;
  int64_t rank, dim;
  Value* idx;
  Value* src;
};

ScatterArgs scatter_args(SymbolicContext& ctx) {
  ScatterArgs a;
  a.x = ctx.in(0);
  a.rank = ctx.rank(0);
  if (a.rank == 0) ctx.fail("scatter into a 0-d tensor is not supported");
  a.dim = helpers::normalize_dim(ctx, ctx.i(1), a.rank);
  Value* idx = ctx.cast(ctx.in(2), DType::Int64);
  a.idx = wrap_negative(ctx, idx, helpers::dim_size(ctx, a.x, a.dim));
  const DType dt = ctx.dtype(0);
  if (ctx.arg(3).is_scalar() || ctx.rank(3) == 0) {
    Value* v = ctx.in_as(3, dt);
    a.src = ctx.op("Expand", {v, shape_of(ctx, a.idx)});
  } else {
    a.src = cut_to_index(ctx, ctx.in_as(3, dt), ctx.sizes(3), ctx.sizes(2), -1, 3, 2, a.idx);
  }
  return a;
}

Value* neutral(SymbolicContext& ctx, DType dt, Reduce r) {
  if (r == Reduce::Prod) return ctx.const_scalar(dt, 1);
  if (r == Reduce::Max || r == Reduce::Min) {
    const bool hi = r == Reduce::Min;
    if (ir::is_floating(dt))
      return ctx.const_scalar(dt, hi ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity());
    int64_t v;
    switch (dt) {
      case DType::Int64: v = hi ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min(); break;
      case DType::Int32: v = hi ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min(); break;
      case DType::Int16: v = hi ? std::numeric_limits<int16_t>::max() : std::numeric_limits<int16_t>::min(); break;
      case DType::Int8: v = hi ? 127 : -128; break;
      case DType::UInt8: v = hi ? 255 : 0; break;
      default: v = hi ? 1 : 0; break;
    }
    return ctx.constant(ir::Tensor::scalar_int(dt, v));
  }
  return ctx.const_scalar(dt, 0);
}

// Scatter with a reduction through a one-hot of the index: the per-target
// reduction of the scattered values, how many values hit each target, and
// the combination with self (include_self, or only where nothing was scattered).
Value* scatter_one_hot(SymbolicContext& ctx, const ScatterArgs& a, Reduce r, bool include_self) {
  const DType dt = ctx.dtype(0);
  const auto& xs = ctx.sizes(0);
  const auto& is = ctx.sizes(2);
  Value* oh = index_one_hot(ctx, a.idx, a.dim, a.rank, helpers::dim_size(ctx, a.x, a.dim));  // [.., N, S, ..]
  Value* srcu = helpers::unsqueeze(ctx, a.src, {a.dim + 1});                                   // [.., N, 1, ..]
  const bool is_bool = dt == DType::Bool;
  const DType rdt = compute_dtype(dt);
  Value* picked = ctx.op("Where", {oh, ctx.cast(srcu, rdt), neutral(ctx, rdt, r)});
  const char* red = r == Reduce::Prod ? "ReduceProd" : r == Reduce::Max ? "ReduceMax" : r == Reduce::Min ? "ReduceMin" : "ReduceSum";
  Value* agg = helpers::reduce(ctx, red, picked, {a.dim}, false);  // [.., S, ..] over the index's other dims
  Value* count = helpers::reduce(ctx, "ReduceSum", ctx.cast(oh, DType::Int64), {a.dim}, false);
  // Pad to self's sizes where the index is smaller: by the example's
  // differences when those sizes are static, else by the run's (opset 11:
  // Pad takes its pads as an input).
  bool dynamic = false;
  for (int64_t d = 0; d < a.rank; ++d)
    if (d != a.dim) dynamic = dynamic || ctx.dim_is_dynamic(0, d) || ctx.dim_is_dynamic(2, d);
  if (dynamic && ctx.opset() < 11)
    for (int64_t d = 0; d < a.rank; ++d)
      if (d != a.dim) ctx.static_dim(0, d), ctx.static_dim(2, d);
  if (dynamic) {
    std::vector<int64_t> other(static_cast<size_t>(a.rank), 1);  // (no padding along dim)
    other[static_cast<size_t>(a.dim)] = 0;
    Value* extra = ctx.op("Mul", {ctx.op("Sub", {shape_of(ctx, a.x), shape_of(ctx, a.idx)}), ctx.const_ints(other)});
    Value* pads = ctx.op("Concat", {ctx.const_ints(std::vector<int64_t>(static_cast<size_t>(a.rank), 0)), extra},
                         {{"axis", int64_t{0}}});
    count = ctx.op("Pad", {count, pads}, {{"mode", std::string("constant")}});
    agg = ctx.op("Pad", {agg, pads, neutral(ctx, rdt, r)}, {{"mode", std::string("constant")}});
  }
  std::vector<int64_t> pads(static_cast<size_t>(2 * a.rank), 0);
  bool pad = false;
  for (int64_t d = 0; d < a.rank && !dynamic; ++d) {
    if (d == a.dim) continue;
    const int64_t extra = xs[static_cast<size_t>(d)] - is[static_cast<size_t>(d)];
    if (extra > 0) {
      pads[static_cast<size_t>(a.rank + d)] = extra;
      pad = true;
    }
  }
  if (pad) {  // (agg padded with the reduction's neutral value: Max(x, agg) leaves x where nothing was scattered)
    count = helpers::pad(ctx, count, pads, "constant", 0);
    if (ctx.opset() >= 11) {
      agg = ctx.op("Pad", {agg, ctx.const_ints(pads), neutral(ctx, rdt, r)}, {{"mode", std::string("constant")}});
    } else {
      const double inf = std::numeric_limits<double>::infinity();
      agg = helpers::pad(ctx, agg, pads, "constant",
                         r == Reduce::Prod ? 1.0 : r == Reduce::Max ? -inf : r == Reduce::Min ? inf : 0.0);
    }
  }
  Value* hit = ctx.op("Greater", {count, ctx.const_int(0)});
  Value* x = ctx.cast(a.x, rdt);
  Value* y = nullptr;
  switch (r) {
    case Reduce::Sum:
      y = include_self ? ctx.op("Add", {x, agg}) : agg;
      break;
    case Reduce::Prod:
      y = include_self ? ctx.op("Mul", {x, agg}) : agg;
      break;
    case Reduce::Max:
      y = include_self ? ctx.op("Max", {x, agg}) : agg;
      break;
    case Reduce::Min:
      y = include_self ? ctx.op("Min", {x, agg}) : agg;
      break;
    case Reduce::Mean: {
      if (!ir::is_floating(dt)) ctx.fail("scatter_reduce 'mean' is only supported for floating-point tensors");
      Value* n = ctx.cast(count, dt);
      Value* s = agg;
      if (include_self) {
        s = ctx.op("Add", {x, agg});
        n = ctx.op("Add", {n, ctx.const_scalar(dt, 1)});
      }
      y = ctx.op("Div", {s, ctx.op("Max", {n, ctx.const_scalar(dt, 1)})});
      break;
    }
    case Reduce::None: break;
  }
  if (!include_self || r == Reduce::Mean) y = ctx.op("Where", {hit, y, x});
  return ctx.cast(is_bool ? ctx.op("Greater", {y, ctx.const_scalar(rdt, 0)}) : y, dt);
}

// aten::scatter(self, dim, index, src|value[, reduce])
void scatter(SymbolicContext& ctx, const char* op, bool has_reduction) {
  ScatterArgs a = scatter_args(ctx);
  if (ctx.num_args() > 4 && !ctx.none(4)) {
    const Reduce r = parse_reduce(ctx, ctx.s(4));
    if (has_reduction) {
      ctx.out(ctx.op("ScatterElements", {a.x, a.idx, a.src},
                     {{"axis", a.dim}, {"reduction", r == Reduce::Sum ? "add" : "mul"}}));
    } else {
      ctx.out(scatter_one_hot(ctx, a, r, true));
    }
    return;
  }
  ctx.out(ctx.op(op, {a.x, a.idx, a.src}, {{"axis", a.dim}}));
}
void scatter_9(SymbolicContext& ctx) { scatter(ctx, "Scatter", false); }
void scatter_11(SymbolicContext& ctx) { scatter(ctx, "ScatterElements", false); }
void scatter_16(SymbolicContext& ctx) { scatter(ctx, "ScatterElements", true); }

// aten::scatter_add(self, dim, index, src)
void scatter_add_9(SymbolicContext& ctx) { ctx.out(scatter_one_hot(ctx, scatter_args(ctx), Reduce::Sum, true)); }
void scatter_add_16(SymbolicContext& ctx) {
  ScatterArgs a = scatter_args(ctx);
  ctx.out(ctx.op("ScatterElements", {a.x, a.idx, a.src}, {{"axis", a.dim}, {"reduction", "add"}}));
}

// aten::scatter_reduce.two(self, dim, index, src, reduce, *, include_self=True)
void scatter_reduce(SymbolicContext& ctx, bool has_reduction) {
  ScatterArgs a = scatter_args(ctx);
  const Reduce r = parse_reduce(ctx, ctx.s(4));
  const bool include_self = ctx.num_args() <= 5 || ctx.none(5) || ctx.b(5);
  if (has_reduction && include_self && (r == Reduce::Sum || r == Reduce::Prod)) {
    ctx.out(ctx.op("ScatterElements", {a.x, a.idx, a.src},
                   {{"axis", a.dim}, {"reduction", r == Reduce::Sum ? "add" : "mul"}}));
    return;
  }
  ctx.out(scatter_one_hot(ctx, a, r, include_self));
}
void scatter_reduce_9(SymbolicContext& ctx) { scatter_reduce(ctx, false); }
void scatter_reduce_16(SymbolicContext& ctx) { scatter_reduce(ctx, true); }

// aten::take(self, index): Gather from the flattened tensor.
void take(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  Value* idx = wrap_negative(ctx, ctx.cast(ctx.in(1), DType::Int64), ctx.op("Size", {x}));
  ctx.out(ctx.op("Gather", {helpers::reshape(ctx, x, {-1}), idx}, {{"axis", int64_t{0}}}));
}

// aten::nonzero(self) -> [N, rank]
void nonzero(SymbolicContext& ctx) {
  if (ctx.rank(0) == 0) ctx.fail("nonzero of a 0-d tensor is not supported");
  Value* nz = ctx.op("NonZero", {ctx.in(0)});
  ctx.out(ctx.op("Transpose", {nz}, {{"perm", std::vector<int64_t>{1, 0}}}));
}

// aten::select_scatter(self, src, dim, index): src written at position `index` of dim.
void select_scatter(SymbolicContext& ctx, const char* op) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(2), rank);
  Value* src = helpers::unsqueeze(ctx, ctx.in_as(1, ctx.dtype(0)), {dim});
  std::vector<int64_t> ones(static_cast<size_t>(rank), 1);
  Value* index;
  if (ctx.constant(3)) {
    int64_t i = ctx.i(3);
    const int64_t n = i < 0 ? ctx.static_dim(0, dim) : ctx.sizes(0)[static_cast<size_t>(dim)];
    if (i < 0) i += n;
    if (i < 0 || (i >= n && !ctx.dim_is_dynamic(0, dim))) ctx.fail("select_scatter index out of range");
    index = ctx.constant(ir::Tensor::from_int64s({i}, ones));
  } else {
    index = wrap_negative(ctx, ctx.scalar_value(3, DType::Int64), helpers::dim_size(ctx, x, dim));
    index = helpers::reshape(ctx, index, ones);
  }
  Value* idx = ctx.op("Expand", {index, shape_of(ctx, src)});
  ctx.out(ctx.op(op, {x, idx, src}, {{"axis", dim}}));
}
void select_scatter_9(SymbolicContext& ctx) { select_scatter(ctx, "Scatter"); }
void select_scatter_11(SymbolicContext& ctx) { select_scatter(ctx, "ScatterElements"); }

// aten::slice_scatter(self, src, dim=0, start=None, end=None, step=1): src
// written at start, start + step, ... (as many positions as src has along dim,
// which is the length of the slice; `end` adds nothing).
void slice_scatter(SymbolicContext& ctx, const char* op) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.num_args() > 2 ? ctx.i(2) : 0, rank);
  const int64_t step = ctx.num_args() > 5 && !ctx.none(5) ? ctx.i(5) : 1;
  if (step <= 0) ctx.fail("slice_scatter step must be positive");
  Value* src = ctx.in_as(1, ctx.dtype(0));
  const bool const_start = ctx.num_args() <= 3 || ctx.none(3) || ctx.constant(3);
  const int64_t start_c = const_start && ctx.num_args() > 3 && !ctx.none(3) ? ctx.i(3) : 0;
  // Constant positions where they are the same for every input (src's length
  // along dim static; a negative start needs self's length static too).
  // (sizes known at export time: src in a branch the example did not take has none)
  const std::optional<int64_t> src_len = const_start ? ctx.known_static_dim(1, dim) : std::nullopt;
  const std::optional<int64_t> self_len = ctx.known_static_dim(0, dim);
  const bool static_pos = src_len && (start_c >= 0 || self_len);
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(dim)] = -1;
  Value* pos;
  if (static_pos) {
    const int64_t len = *src_len;
    if (len == 0) {
      ctx.out(ctx.op("Identity", {x}));
      return;
    }
    // (a start >= 0 with src not empty is inside self, whatever self's length)
    int64_t start = start_c;
    if (start < 0) start += *self_len;
    if (self_len) start = std::min(std::max<int64_t>(start, 0), *self_len);
    std::vector<int64_t> p;
    for (int64_t i = 0; i < len; ++i) p.push_back(start + i * step);
    pos = ctx.constant(ir::Tensor::from_int64s(p));
  } else {
    // A start or lengths known at run time: the start wrapped and clamped to [0, n] like a slice's.
    Value* n = helpers::dim_size(ctx, x, dim);
    Value* start = wrap_negative(ctx, const_start ? ctx.const_int(start_c) : ctx.scalar_value(3, DType::Int64), n);
    start = ctx.op("Where", {ctx.op("Less", {start, ctx.const_int(0)}), ctx.const_int(0), start});
    start = ctx.op("Where", {ctx.op("Greater", {start, n}), n, start});
    Value* steps = helpers::arange(ctx, helpers::dim_size(ctx, src, dim));
    if (step != 1) steps = ctx.op("Mul", {steps, ctx.const_int(step)});
    pos = ctx.op("Add", {start, steps});
  }
  Value* idx = ctx.op("Expand", {helpers::reshape(ctx, pos, shape), shape_of(ctx, src)});
  ctx.out(ctx.op(op, {x, idx, src}, {{"axis", dim}}));
}
void slice_scatter_9(SymbolicContext& ctx) { slice_scatter(ctx, "Scatter"); }
void slice_scatter_11(SymbolicContext& ctx) { slice_scatter(ctx, "ScatterElements"); }

// aten::diagonal_scatter(self, src, offset=0, dim1=0, dim2=1): src written on
// the diagonal; like diagonal, the two dims go last and are flattened.
void diagonal_scatter(SymbolicContext& ctx, const char* op) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  if (rank < 2) ctx.fail("diagonal_scatter needs a tensor of at least 2 dims");
  const int64_t off = ctx.num_args() > 2 ? ctx.i(2) : 0;
  const int64_t d1 = helpers::normalize_dim(ctx, ctx.num_args() > 3 ? ctx.i(3) : 0, rank);
  const int64_t d2 = helpers::normalize_dim(ctx, ctx.num_args() > 4 ? ctx.i(4) : 1, rank);
  if (d1 == d2) ctx.fail("diagonal dimensions cannot be identical");
  const helpers::Diagonal diag = helpers::diagonal(ctx, x, ctx.static_sizes(0), off, d1, d2);
  if (diag.positions.empty()) {
    ctx.out(ctx.op("Identity", {x}));
    return;
  }
  Value* src = ctx.in_as(1, ctx.dtype(0));
  std::vector<int64_t> pshape(static_cast<size_t>(rank - 1), 1);
  pshape.back() = static_cast<int64_t>(diag.positions.size());
  Value* idx = ctx.op("Expand", {ctx.constant(ir::Tensor::from_int64s(diag.positions, pshape)), shape_of(ctx, src)});
  Value* y = ctx.op(op, {diag.flat, idx, src}, {{"axis", rank - 2}});
  y = ctx.op("Reshape", {y, shape_of(ctx, diag.moved)});
  ctx.out(helpers::transpose(ctx, y, helpers::inverse_perm(diag.perm)));
}
void diagonal_scatter_9(SymbolicContext& ctx) { diagonal_scatter(ctx, "Scatter"); }
void diagonal_scatter_11(SymbolicContext& ctx) { diagonal_scatter(ctx, "ScatterElements"); }

}  // namespace

// aten::nonzero_numpy(self) -> Tensor[] (one [N] index per dim); where(condition) too.
void nonzero_numpy(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  if (rank == 0) ctx.fail("nonzero of a 0-d tensor is not supported");
  Value* nz = ctx.op("NonZero", {ctx.in(0)});
  std::vector<Value*> outs;
  for (int64_t d = 0; d < rank; ++d) outs.push_back(ctx.op("Gather", {nz, ctx.const_int(d)}, {{"axis", int64_t{0}}}));
  ctx.out_list(outs);
}

void register_indexing(Registry& r) {
  r.add("aten::index", 9, index);
  r.add("aten::index_put", 9, index_put_9);
  r.add("aten::index_put", 11, index_put_11);
  r.add("aten::index_put", 16, index_put_16);
  r.add("aten::_index_put_impl_", 9, index_put_9);
  r.add("aten::_index_put_impl_", 11, index_put_11);
  r.add("aten::_index_put_impl_", 16, index_put_16);
  r.add("aten::index_copy", 9, index_copy_9);
  r.add("aten::index_copy", 11, index_copy_11);
  r.add("aten::index_copy", 24, index_copy_24);
  r.add("aten::index_add", 9, index_add_9);
  r.add("aten::index_add", 16, index_add_16);
  r.add("aten::index_fill", 9, index_fill);
  r.add("aten::masked_fill", 9, masked_fill);
  r.add("aten::masked_select", 9, masked_select);
  r.add("aten::masked_scatter", 11, masked_scatter);
  r.add("aten::gather", 9, gather_9);
  r.add("aten::gather", 11, gather_11);
  r.add("aten::scatter", 9, scatter_9);
  r.add("aten::scatter", 11, scatter_11);
  r.add("aten::scatter", 16, scatter_16);
  r.add("aten::scatter_add", 9, scatter_add_9);
  r.add("aten::scatter_add", 16, scatter_add_16);
  r.add("aten::scatter_reduce", 9, scatter_reduce_9);
  r.add("aten::scatter_reduce", 16, scatter_reduce_16);
  r.add("aten::take", 9, take);
  r.add("aten::nonzero", 9, nonzero);
  r.add("aten::argwhere", 9, nonzero);
  r.add("aten::nonzero_numpy", 9, nonzero_numpy);
  r.add("aten::select_scatter", 9, select_scatter_9);
  r.add("aten::select_scatter", 11, select_scatter_11);
  r.add("aten::slice_scatter", 9, slice_scatter_9);
  r.add("aten::slice_scatter", 11, slice_scatter_11);
  r.add("aten::diagonal_scatter", 9, diagonal_scatter_9);
  r.add("aten::diagonal_scatter", 11, diagonal_scatter_11);
}

}  // namespace torch2onnx::symbolics
