// Shape and movement ops on complex tensors (pair tensors with a trailing
// (real, imag) axis, see complex.cpp): size, transpose, permute,
// reshape/view, flatten, (un)squeeze, select, slice, cat, stack, flip, and
// the identities (clone, contiguous, detach, resolve_conj, ...). The pair
// axis stays last; every op works on the complex axes in front of it.
#include <limits>
#include <utility>
#include <vector>

#include "symbolic/helpers.h"
#include "symbolics/all.h"
#include "symbolics/complex_pairs.h"

namespace torch2onnx::symbolics {
namespace {
using cplx::join;
using cplx::out_real;
using cplx::pair_in;
using cplx::rt_of;

// Identity on a complex tensor (clone, contiguous, resolve_conj, resolve_neg, detach, alias, ...).
void identity(SymbolicContext& ctx) { ctx.out(pair_in(ctx, 0, rt_of(ctx))); }

// ---- shape ops on complex tensors: the pair axis stays last.

// aten::size(self[, dim]) of a complex tensor: its dims, not the pair axis.
void size(SymbolicContext& ctx) {
  ir::Value* p = pair_in(ctx, 0, rt_of(ctx));
  if (ctx.num_args() == 1) {
    std::vector<ir::Value*> dims;
    for (int64_t d = 0; d < ctx.rank(0); ++d) dims.push_back(helpers::dim_size(ctx, p, d));
    ctx.out_list(dims);
    return;
  }
  ctx.out(helpers::dim_size(ctx, p, helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0))));
}

// aten::transpose(self, dim0, dim1)
void transpose(SymbolicContext& ctx) {
  const int64_t r = ctx.rank(0);
  std::vector<int64_t> perm;
  for (int64_t d = 0; d <= r; ++d) perm.push_back(d);
  if (r > 0) std::swap(perm[helpers::normalize_dim(ctx, ctx.i(1), r)], perm[helpers::normalize_dim(ctx, ctx.i(2), r)]);
  ctx.out(helpers::transpose(ctx, pair_in(ctx, 0, rt_of(ctx)), perm));
}

// aten::permute(self, dims)
void permute(SymbolicContext& ctx) {
  const int64_t r = ctx.rank(0);
  std::vector<int64_t> perm = helpers::normalize_dims(ctx, ctx.is(1), r);
  perm.push_back(r);
  ctx.out(helpers::transpose(ctx, pair_in(ctx, 0, rt_of(ctx)), perm));
}

// aten::reshape / view(self, shape): the shape and the pair axis
// (a -1 in it still stands for the remaining size).
void reshape(SymbolicContext& ctx) {
  ir::Value* shape = ctx.op("Concat", {ctx.ints_value(1), ctx.const_ints({2})}, {{"axis", int64_t{0}}});
  ctx.out(ctx.op("Reshape", {pair_in(ctx, 0, rt_of(ctx)), shape}));
}

// aten::flatten(self, start_dim, end_dim): the example's result sizes.
void flatten(SymbolicContext& ctx) {
  if (!ctx.out_info(0).has_sizes) ctx.fail("flattening a complex tensor needs the example's sizes");
  const int64_t r = ctx.rank(0);
  bool dynamic = false;
  for (int64_t d = 0; d < r; ++d) dynamic = dynamic || ctx.dim_is_dynamic(0, d);
  if (dynamic) {  // the kept sizes at run time, -1 for the flattened run
    const int64_t start = helpers::normalize_dim(ctx, ctx.i(1), r), end = helpers::normalize_dim(ctx, ctx.i(2), r);
    ir::Value* x = pair_in(ctx, 0, rt_of(ctx));
    ir::Value* s = ctx.op("Shape", {x});
    std::vector<ir::Value*> parts;
    if (start > 0) parts.push_back(helpers::slice(ctx, s, {0}, {0}, {start}));
    parts.push_back(ctx.const_ints({-1}));
    parts.push_back(helpers::slice(ctx, s, {0}, {end + 1}, {r + 1}));
    ctx.out(ctx.op("Reshape", {x, ctx.op("Concat", parts, {{"axis", int64_t{0}}})}));
    return;
  }
  std::vector<int64_t> shape = ctx.out_info(0).sizes;
  shape.push_back(2);
  ctx.out(ctx.op("Reshape", {pair_in(ctx, 0, rt_of(ctx)), ctx.const_ints(shape)}));
}

// aten::unsqueeze(self, dim)
void unsqueeze(SymbolicContext& ctx) {
  const int64_t d = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0) + 1);
  ctx.out(helpers::unsqueeze(ctx, pair_in(ctx, 0, rt_of(ctx)), {d}));
}

// aten::squeeze(self[, dim(s)]): the dims of size 1, a rule PyTorch applies
// at run time: a static dim is decided now; a dynamic one is refused (whatever
// its size in the example), unless a .pt2 program's guards fixed the result's rank.
void squeeze(SymbolicContext& ctx) {
  const int64_t r = ctx.rank(0);
  const auto& sizes = ctx.sizes(0);
  std::vector<int64_t> dims;
  if (ctx.num_args() > 1 && !ctx.none(1)) dims = helpers::normalize_dims(ctx, ctx.is(1), r);
  else
    for (int64_t d = 0; d < r; ++d) dims.push_back(d);
  std::vector<int64_t> axes, dynamic;
  for (int64_t d : dims) {
    if (ctx.dim_is_dynamic(0, d))
      dynamic.push_back(d);
    else if (sizes[static_cast<size_t>(d)] == 1)
      axes.push_back(d);
  }
  helpers::settle_squeeze_by_output_rank(ctx, r, axes, dynamic);
  if (!dynamic.empty()) ctx.static_dim(0, dynamic[0]);  // (fails: the dim need not stay as it is)
  ir::Value* p = pair_in(ctx, 0, rt_of(ctx));
  ctx.out(axes.empty() ? p : helpers::squeeze(ctx, p, axes));
}

// aten::select(self, dim, index)
void select(SymbolicContext& ctx) {
  const int64_t d = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0));
  ctx.out(ctx.op("Gather", {pair_in(ctx, 0, rt_of(ctx)), ctx.const_int(ctx.i(2))}, {{"axis", d}}));
}

// aten::slice(self, dim, start, end, step) with constant bounds
void slice(SymbolicContext& ctx) {
  const int64_t d = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0));
  const int64_t start = ctx.none(2) ? 0 : ctx.i(2);
  const int64_t end = ctx.none(3) ? std::numeric_limits<int64_t>::max() : ctx.i(3);
  const int64_t step = ctx.num_args() > 4 && !ctx.none(4) ? ctx.i(4) : 1;
  ctx.out(helpers::slice(ctx, pair_in(ctx, 0, rt_of(ctx)), {d}, {start}, {end}, {step}));
}

// aten::cat / aten::stack(tensors, dim) of complex tensors (real ones join with imag 0)
void cat_stack(SymbolicContext& ctx, bool stack) {
  const ir::DType rt = out_real(ctx, 0);
  const Arg& list = ctx.arg(0);
  std::vector<ir::Value*> pairs;
  for (size_t k = 0; k < list.elements.size(); ++k) {
    const Arg& e = list.elements[k];
    ir::Value* v = ctx.elem(0, k);
    if (cplx::is_complex(e.dtype)) {
      if (cplx::is_complex(v->dtype())) ctx.fail("complex tensors that are graph inputs cannot be exported");
      pairs.push_back(ctx.cast(v, rt));
    } else {
      pairs.push_back(join(ctx, ctx.cast(v, rt), nullptr, rt, static_cast<int64_t>(e.sizes.size())));
    }
  }
  if (pairs.empty() || !ctx.out_info(0).has_sizes) ctx.fail("cat/stack of complex tensors needs a known list");
  const int64_t d = helpers::normalize_dim(ctx, ctx.i(1), ctx.out_info(0).rank());
  if (stack)
    for (auto& p : pairs) p = helpers::unsqueeze(ctx, p, {d});
  ctx.out(pairs.size() == 1 ? pairs[0] : ctx.op("Concat", pairs, {{"axis", d}}));
}
void cat(SymbolicContext& ctx) { cat_stack(ctx, false); }
void stack(SymbolicContext& ctx) { cat_stack(ctx, true); }

// aten::flip(self, dims): reversed slices (opset 10).
void flip(SymbolicContext& ctx) {
  std::vector<int64_t> dims = helpers::normalize_dims(ctx, ctx.is(1), ctx.rank(0));
  const int64_t lo = std::numeric_limits<int64_t>::min();
  ctx.out(helpers::slice(ctx, pair_in(ctx, 0, rt_of(ctx)), dims, std::vector<int64_t>(dims.size(), -1),
                         std::vector<int64_t>(dims.size(), lo), std::vector<int64_t>(dims.size(), -1)));
}

}  // namespace

void register_complex_shape(Registry& r) {
  for (const char* op : {"aten::resolve_conj", "aten::resolve_neg", "aten::clone", "aten::contiguous",
                         "aten::detach", "aten::alias", "aten::lift_fresh_copy"})
    r.add_complex(op, 9, identity);
  r.add_complex("aten::size", 9, size);
  r.add_complex("aten::transpose", 9, transpose);
  r.add_complex("aten::permute", 9, permute);
  for (const char* op : {"aten::reshape", "aten::view"}) r.add_complex(op, 9, reshape);
  r.add_complex("aten::flatten", 9, flatten);
  r.add_complex("aten::unsqueeze", 9, unsqueeze);
  r.add_complex("aten::squeeze", 9, squeeze);
  r.add_complex("aten::select", 9, select);
  r.add_complex("aten::slice", 9, slice);
  r.add_complex("aten::cat", 9, cat);
  r.add_complex("aten::stack", 9, stack);
  r.add_complex("aten::flip", 10, flip);
}

}  // namespace torch2onnx::symbolics
