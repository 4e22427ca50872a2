// Rearranging elements: flip, roll, rot90, tril/triu, diagonal, unfold,
// as_strided, repeat_interleave, movedim, tensor_split,
// unsafe_split_with_sizes, broadcast_tensors, numpy_T/mT, atleast_Nd,
// narrow_copy, _shape_as_tensor, _reshape_from_tensor.
#include <algorithm>
#include <limits>
#include <optional>
#include <numeric>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();


using helpers::transpose;

Value* concat(SymbolicContext& ctx, const std::vector<Value*>& parts, int64_t axis) {
  std::vector<Value*> ps;
  for (Value* p : parts)
    if (p) ps.push_back(p);
  if (ps.size() == 1) return ps[0];
  return ctx.op("Concat", ps, {{"axis", axis}});
}

// Shape(v)[begin:end] as a 1-D value (nullptr when empty).
Value* shape_slice(SymbolicContext& ctx, Value* v, int64_t begin, int64_t end, int64_t rank) {
  if (end > rank) end = rank;
  if (begin >= end) return nullptr;
  return helpers::slice(ctx, ctx.op("Shape", {v}), {0}, {begin}, {end});
}

// Data of a tensor argument known at export time: a constant, or a
// parameter/buffer exported as an initializer.
std::optional<std::vector<int64_t>> known_ints(SymbolicContext& ctx, size_t idx) {
  const Arg& a = ctx.arg(idx);
  if (a.constant) return ctx.is(idx);
  if (a.kind != Arg::Kind::Tensor) return std::nullopt;
  if (const ir::Tensor* t = ctx.in(idx)->constant()) return t->to_int64s();
  return std::nullopt;
}

// ---------------------------------------------------------------- flip, roll, rot90

// Reverses x along `dims`: Slice with step -1 (opset 10+) or Gather of a reversed arange.
Value* flip_dims(SymbolicContext& ctx, Value* x, const std::vector<int64_t>& dims, bool use_slice) {
  if (dims.empty()) return x;
  if (use_slice) {
    const size_t n = dims.size();
    return helpers::slice(ctx, x, dims, std::vector<int64_t>(n, -1), std::vector<int64_t>(n, kMin),
                          std::vector<int64_t>(n, -1));
  }
  for (int64_t d : dims) {
    Value* n = helpers::dim_size(ctx, x, d);
    Value* rev = ctx.op("Sub", {ctx.op("Sub", {n, ctx.const_int(1)}), helpers::arange(ctx, n)});
    x = ctx.op("Gather", {x, rev}, {{"axis", d}});
  }
  return x;
}

// aten::flip(self, dims)
void flip(SymbolicContext& ctx, bool use_slice) {
  const int64_t rank = ctx.rank(0);
  if (rank == 0) {
    ctx.out(ctx.op("Identity", {ctx.in(0)}));
    return;
  }
  ctx.out(flip_dims(ctx, ctx.in(0), helpers::normalize_dims(ctx, ctx.is(1), rank), use_slice));
}
void fliplr(SymbolicContext& ctx, bool use_slice) {
  if (ctx.rank(0) < 2) ctx.fail("fliplr needs a tensor of at least 2 dims");
  ctx.out(flip_dims(ctx, ctx.in(0), {1}, use_slice));
}
void flipud(SymbolicContext& ctx, bool use_slice) {
  if (ctx.rank(0) < 1) ctx.fail("flipud needs a tensor of at least 1 dim");
  ctx.out(flip_dims(ctx, ctx.in(0), {0}, use_slice));
}

// aten::roll(self, shifts, dims=[]): each shift is two slices concatenated.
void roll(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  // Shifts computed at run time (Swin's shift = window // 2 of a dynamic size) roll at run time.
  const Arg& shift_arg = ctx.arg(1);
  const bool runtime_shifts = shift_arg.is_list() && !shift_arg.constant &&
                              std::any_of(shift_arg.elements.begin(), shift_arg.elements.end(),
                                          [](const Arg& e) { return !e.constant; });
  std::vector<int64_t> shifts =
      runtime_shifts ? std::vector<int64_t>(shift_arg.elements.size(), 0) : ctx.is(1);
  std::vector<int64_t> dims = ctx.num_args() > 2 ? ctx.is(2) : std::vector<int64_t>{};
  std::vector<int64_t> sizes = ctx.sizes(0);
  std::vector<bool> dynamic(sizes.size());
  for (int64_t d = 0; d < rank; ++d) dynamic[static_cast<size_t>(d)] = ctx.dim_is_dynamic(0, d);
  bool flat = dims.empty();
  if (flat) {
    if (shifts.size() != 1) ctx.fail("roll without dims takes a single shift");
    int64_t numel = 1;
    for (int64_t s : sizes) numel *= s;
    x = helpers::reshape(ctx, x, {-1});
    dims = {0};
    sizes = {numel};
    dynamic = {std::find(dynamic.begin(), dynamic.end(), true) != dynamic.end()};
  } else {
    if (shifts.size() != dims.size()) ctx.fail("roll needs as many shifts as dims");
    dims = helpers::normalize_dims(ctx, dims, rank);
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (runtime_shifts && ctx.opset() < 10) ctx.fail("a shift computed at run time needs opset 10 or later");
    if ((runtime_shifts || dynamic[static_cast<size_t>(dims[i])]) && ctx.opset() >= 10) {
      // A size or shift known at run time only: the shift mod n there (n = 0 rolls nothing).
      const int64_t d = dims[i];
      Value* n = helpers::reshape(ctx, helpers::dim_size(ctx, x, d), {1});
      Value* shift = runtime_shifts ? helpers::reshape(ctx, ctx.cast(ctx.elem(1, i), DType::Int64), {1})
                                    : ctx.const_ints({shifts[i]});
      Value* s = ctx.op("Mod", {shift, ctx.op("Max", {n, ctx.const_ints({1})})});
      Value* cut = ctx.op("Sub", {n, s});
      Value* axis = ctx.const_ints({d});
      Value* tail = helpers::slice_dynamic(ctx, x, cut, n, axis, nullptr);
      Value* head = helpers::slice_dynamic(ctx, x, ctx.const_ints({0}), cut, axis, nullptr);
      x = ctx.op("Concat", {tail, head}, {{"axis", d}});
      continue;
    }
    if (dynamic[static_cast<size_t>(dims[i])]) {  // (opset 9: fails, naming the dim)
      if (flat) ctx.static_sizes(0);
      else ctx.static_dim(0, dims[i]);
    }
    const int64_t d = dims[i], n = sizes[static_cast<size_t>(d)];
    if (n == 0) continue;
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    Value* tail = helpers::slice(ctx, x, {d}, {-s}, {kMax});
    Value* head = helpers::slice(ctx, x, {d}, {0}, {-s});
    x = ctx.op("Concat", {tail, head}, {{"axis", d}});
  }
  if (flat) x = ctx.op("Reshape", {x, ctx.op("Shape", {ctx.in(0)})});
  ctx.out(x == ctx.in(0) ? ctx.op("Identity", {x}) : x);
}

Value* swap(SymbolicContext& ctx, Value* x, int64_t rank, int64_t a, int64_t b) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
  return transpose(ctx, x, perm);
}

// aten::rot90(self, k=1, dims=[0, 1])
void rot90(SymbolicContext& ctx, bool use_slice) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  const int64_t k = ((ctx.num_args() > 1 ? ctx.i(1) : 1) % 4 + 4) % 4;
  std::vector<int64_t> dims = ctx.num_args() > 2 ? ctx.is(2) : std::vector<int64_t>{0, 1};
  if (dims.size() != 2) ctx.fail("rot90 needs exactly two dims");
  dims = helpers::normalize_dims(ctx, dims, rank);
  if (dims[0] == dims[1]) ctx.fail("rot90 needs two different dims");
  Value* y;
  switch (k) {
    case 1: y = swap(ctx, flip_dims(ctx, x, {dims[1]}, use_slice), rank, dims[0], dims[1]); break;
    case 2: y = flip_dims(ctx, x, dims, use_slice); break;
    case 3: y = swap(ctx, flip_dims(ctx, x, {dims[0]}, use_slice), rank, dims[0], dims[1]); break;
    default: y = ctx.op("Identity", {x}); break;
  }
  ctx.out(y);
}

// ---------------------------------------------------------------- tril / triu

// aten::tril / aten::triu(self, diagonal=0)
Value* diagonal_value(SymbolicContext& ctx) {
  if (ctx.num_args() < 2 || ctx.none(1)) return ctx.const_int(0);
  return ctx.scalar_value(1, DType::Int64);
}

// Before Trilu: keep where (column - row) is on the right side of k.
void tri_masked(SymbolicContext& ctx, bool upper) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  if (rank < 2) ctx.fail("tril/triu need a tensor of at least 2 dims");
  Value* rows = helpers::unsqueeze(ctx, helpers::arange(ctx, helpers::dim_size(ctx, x, rank - 2)), {1});
  Value* cols = helpers::unsqueeze(ctx, helpers::arange(ctx, helpers::dim_size(ctx, x, rank - 1)), {0});
  Value* d = ctx.op("Sub", {cols, rows});
  Value* k = diagonal_value(ctx);
  Value* keep = upper ? ctx.op("Not", {ctx.op("Less", {d, k})}) : ctx.op("Not", {ctx.op("Greater", {d, k})});
  const DType dt = ctx.dtype(0);
  // (ONNX Runtime's Where has no bool, int8 or int16 kernel)
  const DType work = dt == DType::Bool || dt == DType::Int8 || dt == DType::Int16 ? DType::Int32 : dt;
  ctx.out(ctx.cast(ctx.op("Where", {keep, ctx.cast(x, work), ctx.const_scalar(work, 0)}), dt));
}

void tri_trilu(SymbolicContext& ctx, bool upper) {
  if (ctx.rank(0) < 2) ctx.fail("tril/triu need a tensor of at least 2 dims");
  const DType dt = ctx.dtype(0);
  // ONNX Runtime's Trilu takes float, double, int64 and bool.
  const DType work = dt == DType::Float || dt == DType::Double || dt == DType::Int64 || dt == DType::Bool ? dt
                     : ir::is_floating(dt)                                                           ? DType::Float
                                                                                                     : DType::Int64;
  Value* y = ctx.op("Trilu", {ctx.cast(ctx.in(0), work), diagonal_value(ctx)}, {{"upper", int64_t{upper ? 1 : 0}}});
  ctx.out(ctx.cast(y, dt));
}

// ---------------------------------------------------------------- diagonal, unfold, im2col, as_strided

// aten::diagonal's arguments (self, offset=0, dim1=0, dim2=1), checked.
struct DiagonalArgs {
  int64_t rank, off, d1, d2;
};
DiagonalArgs diagonal_args(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  if (rank < 2) ctx.fail("diagonal needs a tensor of at least 2 dims");
  DiagonalArgs a{rank, ctx.num_args() > 1 ? ctx.i(1) : 0,
                 helpers::normalize_dim(ctx, ctx.num_args() > 2 ? ctx.i(2) : 0, rank),
                 helpers::normalize_dim(ctx, ctx.num_args() > 3 ? ctx.i(3) : 1, rank)};
  if (a.d1 == a.d2) ctx.fail("diagonal dimensions cannot be identical");
  return a;
}

// aten::diagonal(self, offset=0, dim1=0, dim2=1): the two dims go last and
// are flattened; the diagonal is a Gather of constant positions.
void diagonal(SymbolicContext& ctx) {
  const DiagonalArgs a = diagonal_args(ctx);
  const helpers::Diagonal diag = helpers::diagonal(ctx, ctx.in(0), ctx.static_sizes(0), a.off, a.d1, a.d2);
  ctx.out(ctx.op("Gather", {diag.flat, ctx.constant(ir::Tensor::from_int64s(diag.positions))}, {{"axis", a.rank - 2}}));
}

// Opset 10 (Slice takes run-time bounds): the diagonal from the run-time
// sizes, so dynamic axes stay dynamic. The two dims go last; where column -
// row is the offset an element is kept (others 0), a sum along the last dim
// takes one per row, and the rows that have one are sliced out:
// [max(0, -offset), max(start, min(n1, n2 - offset))).
void diagonal_10(SymbolicContext& ctx) {
  const auto [rank, off, d1, d2] = diagonal_args(ctx);
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < rank; ++k)
    if (k != d1 && k != d2) perm.push_back(k);
  perm.push_back(d1);
  perm.push_back(d2);
  Value* moved = transpose(ctx, ctx.in(0), perm);
  Value* n1 = helpers::dim_size(ctx, moved, rank - 2);
  Value* n2 = helpers::dim_size(ctx, moved, rank - 1);
  Value* rows = helpers::unsqueeze(ctx, helpers::arange(ctx, n1), {1});
  Value* cols = helpers::unsqueeze(ctx, helpers::arange(ctx, n2), {0});
  Value* on = helpers::equal(ctx, ctx.op("Sub", {cols, rows}), ctx.const_int(off));
  const DType dt = ctx.dtype(0);
  // (ONNX Runtime's Where has no bool, int8 or int16 kernel)
  const DType work = dt == DType::Bool || dt == DType::Int8 || dt == DType::Int16 ? DType::Int32 : dt;
  Value* kept = ctx.op("Where", {on, ctx.cast(moved, work), ctx.const_scalar(work, 0)});
  Value* sums = helpers::reduce(ctx, "ReduceSum", kept, {rank - 1}, false);
  Value* start = ctx.const_int(std::max<int64_t>(0, -off));
  Value* end = ctx.op("Sub", {n2, ctx.const_int(off)});
  end = ctx.op("Where", {ctx.op("Less", {n1, end}), n1, end});
  end = ctx.op("Where", {ctx.op("Less", {end, start}), start, end});
  Value* diag = helpers::slice_dynamic(ctx, sums, helpers::unsqueeze(ctx, start, {0}), helpers::unsqueeze(ctx, end, {0}),
                                       ctx.const_ints({rank - 2}), nullptr);
  ctx.out(ctx.cast(diag, dt));
}

// aten::unfold(self, dimension, size, step): windows along `dimension` become
// a new last dim (Gather of constant window positions).
void unfold(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  const int64_t size = ctx.i(2), step = ctx.i(3);
  if (rank == 0) {
    if (size != 1) ctx.fail("unfold of a 0-d tensor needs size 1");
    ctx.out(helpers::reshape(ctx, x, {1}));
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  const int64_t n = ctx.sizes(0)[static_cast<size_t>(dim)];
  if (step <= 0 || size > n) ctx.fail("unfold: bad size or step");
  Value* windows;
  if (ctx.dim_is_dynamic(0, dim) && ctx.opset() >= 11) {
    // window i starts at i * step, for i < (n - size) / step + 1 (n known at run time)
    Value* count = ctx.op("Add", {ctx.op("Div", {ctx.op("Sub", {helpers::dim_size(ctx, x, dim), ctx.const_int(size)}),
                                                 ctx.const_int(step)}),
                                  ctx.const_int(1)});
    Value* starts = ctx.op("Mul", {ctx.op("Range", {ctx.const_int(0), count, ctx.const_int(1)}), ctx.const_int(step)});
    std::vector<int64_t> offsets(static_cast<size_t>(size));
    std::iota(offsets.begin(), offsets.end(), 0);
    windows = ctx.op("Add", {helpers::unsqueeze(ctx, starts, {1}), ctx.constant(ir::Tensor::from_int64s(offsets, {1, size}))});
  } else {
    const int64_t count = (ctx.static_dim(0, dim) - size) / step + 1;
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < count; ++i)
      for (int64_t j = 0; j < size; ++j) idx.push_back(i * step + j);
    windows = ctx.constant(ir::Tensor::from_int64s(idx, {count, size}));
  }
  Value* y = ctx.op("Gather", {x, windows}, {{"axis", dim}});
  std::vector<int64_t> perm;
  for (int64_t d = 0; d <= rank; ++d)
    if (d != dim + 1) perm.push_back(d);
  perm.push_back(dim + 1);
  ctx.out(transpose(ctx, y, perm));
}

// aten::as_strided(self, size, stride, storage_offset=None): a Gather of the
// positions the view reads, computed at export time. The input is taken to
// be contiguous (its storage is its row-major data).
void as_strided(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  const std::vector<int64_t> size = ctx.is(1), stride = ctx.is(2);
  const int64_t offset = ctx.num_args() > 3 && !ctx.none(3) ? ctx.i(3) : 0;
  if (size.size() != stride.size()) ctx.fail("as_strided: size and stride differ in length");
  int64_t numel = 1;
  for (int64_t s : ctx.static_sizes(0)) numel *= s;
  int64_t total = 1;
  for (int64_t s : size) total *= s;
  std::vector<int64_t> pos(static_cast<size_t>(total), offset);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rem = flat, p = offset;
    for (size_t d = size.size(); d-- > 0;) {
      p += (rem % size[d]) * stride[d];
      rem /= size[d];
    }
    if (p < 0 || p >= numel) ctx.fail("as_strided reads outside the tensor's elements");
    pos[static_cast<size_t>(flat)] = p;
  }
  ctx.out(ctx.op("Gather", {helpers::reshape(ctx, x, {-1}), ctx.constant(ir::Tensor::from_int64s(pos, size))},
                 {{"axis", int64_t{0}}}));
}

// ---------------------------------------------------------------- repeat_interleave

// Positions 0..n-1 each repeated repeats[i] times, at export time.
std::vector<int64_t> repeated_positions(const std::vector<int64_t>& repeats) {
  std::vector<int64_t> pos;
  for (size_t i = 0; i < repeats.size(); ++i)
    for (int64_t r = 0; r < repeats[i]; ++r) pos.push_back(static_cast<int64_t>(i));
  return pos;
}

// The same at run time (opset 11): position t belongs to the number of
// cumulative repeats <= t.
Value* repeated_positions_value(SymbolicContext& ctx, Value* repeats) {
  Value* cum = ctx.op("CumSum", {repeats, ctx.const_int(0)});
  Value* total = helpers::reduce(ctx, "ReduceSum", repeats, {}, false);
  Value* t = helpers::unsqueeze(ctx, ctx.op("Range", {ctx.const_int(0), total, ctx.const_int(1)}), {1});  // [T, 1]
  Value* le = ctx.op("Not", {ctx.op("Greater", {helpers::unsqueeze(ctx, cum, {0}), t})});               // [T, n]
  return helpers::reduce(ctx, "ReduceSum", ctx.cast(le, DType::Int64), {1}, false);
}

// x with each slice along `dim` repeated r times (r a 0-d int64 value).
Value* repeat_each(SymbolicContext& ctx, Value* x, int64_t dim, int64_t rank, Value* r) {
  Value* xu = helpers::unsqueeze(ctx, x, {dim + 1});
  std::vector<Value*> reps;
  if (dim + 1 > 0) reps.push_back(ctx.const_ints(std::vector<int64_t>(static_cast<size_t>(dim + 1), 1)));
  reps.push_back(helpers::unsqueeze(ctx, r, {0}));
  if (rank - dim - 1 > 0) reps.push_back(ctx.const_ints(std::vector<int64_t>(static_cast<size_t>(rank - dim - 1), 1)));
  Value* tiled = ctx.op("Tile", {xu, concat(ctx, reps, 0)});
  std::vector<int64_t> shape(static_cast<size_t>(dim), 0);
  shape.push_back(-1);
  Value* tail = shape_slice(ctx, x, dim + 1, rank, rank);
  return ctx.op("Reshape", {tiled, concat(ctx, {ctx.const_ints(shape), tail}, 0)});
}

// aten::repeat_interleave.self_int(self, repeats, dim=None, *, output_size=None)
// aten::repeat_interleave.self_Tensor(self, repeats, dim=None, *, output_size=None)
// aten::repeat_interleave.Tensor(repeats, *, output_size=None)
void repeat_interleave(SymbolicContext& ctx, bool run_time_repeats) {
  if (ctx.num_args() <= 2) {
    // .Tensor: arange(n) repeated.
    if (auto reps = known_ints(ctx, 0)) {
      auto pos = repeated_positions(*reps);
      ctx.out(ctx.cast(ctx.constant(ir::Tensor::from_int64s(pos)), ctx.out_dtype()));
      return;
    }
    if (!run_time_repeats) ctx.fail("repeat_interleave with repeats computed at run time needs opset 11 or later");
    ctx.out(ctx.cast(repeated_positions_value(ctx, ctx.cast(ctx.in(0), DType::Int64)), ctx.out_dtype()));
    return;
  }
  Value* x = ctx.in(0);
  int64_t rank = ctx.rank(0);
  int64_t dim = 0;
  if (ctx.none(2)) {
    x = helpers::reshape(ctx, x, {-1});
    rank = 1;
  } else {
    dim = helpers::normalize_dim(ctx, ctx.i(2), rank == 0 ? 1 : rank);
    if (rank == 0) {
      x = helpers::reshape(ctx, x, {1});
      rank = 1;
    }
  }
  const Arg& rep = ctx.arg(1);
  if (rep.is_scalar()) {
    ctx.out(repeat_each(ctx, x, dim, rank, ctx.scalar_value(1, DType::Int64)));
    return;
  }
  int64_t rep_numel = 1;
  for (int64_t s : ctx.sizes(1)) rep_numel *= s;
  if (rep_numel == 1) {  // one repeat count for every slice
    Value* r = helpers::reshape(ctx, ctx.cast(ctx.in(1), DType::Int64), std::vector<int64_t>{});
    ctx.out(repeat_each(ctx, x, dim, rank, r));
    return;
  }
  Value* pos;
  if (auto reps = known_ints(ctx, 1)) {
    pos = ctx.constant(ir::Tensor::from_int64s(repeated_positions(*reps)));
  } else {
    if (!run_time_repeats) ctx.fail("repeat_interleave with repeats computed at run time needs opset 11 or later");
    pos = repeated_positions_value(ctx, helpers::reshape(ctx, ctx.cast(ctx.in(1), DType::Int64), {-1}));
  }
  ctx.out(ctx.op("Gather", {x, pos}, {{"axis", dim}}));
}

// ---------------------------------------------------------------- permutations

// aten::movedim(self, source, destination) (ints or int lists; moveaxis records movedim)
void movedim(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  if (rank == 0) {
    ctx.out(ctx.op("Identity", {ctx.in(0)}));
    return;
  }
  const auto src = helpers::normalize_dims(ctx, ctx.is(1), rank);
  const auto dst = helpers::normalize_dims(ctx, ctx.is(2), rank);
  if (src.size() != dst.size()) ctx.fail("movedim: source and destination differ in length");
  std::vector<int64_t> perm(static_cast<size_t>(rank), -1);
  std::vector<bool> used(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < src.size(); ++i) {
    if (perm[static_cast<size_t>(dst[i])] != -1 || used[static_cast<size_t>(src[i])])
      ctx.fail("movedim: repeated dim");
    perm[static_cast<size_t>(dst[i])] = src[i];
    used[static_cast<size_t>(src[i])] = true;
  }
  int64_t next = 0;
  for (auto& p : perm) {
    if (p != -1) continue;
    while (used[static_cast<size_t>(next)]) ++next;
    p = next++;
  }
  Value* y = transpose(ctx, ctx.in(0), perm);
  ctx.out(y == ctx.in(0) ? ctx.op("Identity", {y}) : y);
}

// aten::numpy_T(self): all dims reversed.
void numpy_T(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  std::vector<int64_t> perm;
  for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  Value* y = transpose(ctx, ctx.in(0), perm);
  ctx.out(y == ctx.in(0) ? ctx.op("Identity", {y}) : y);
}

// aten::mT(self): the last two dims swapped.
void mT(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  if (rank < 2) ctx.fail("mT needs a tensor of at least 2 dims");
  ctx.out(swap(ctx, ctx.in(0), rank, rank - 2, rank - 1));
}

// ---------------------------------------------------------------- splitting, broadcasting

std::vector<Value*> split_at(SymbolicContext& ctx, Value* x, int64_t dim, int64_t n, const std::vector<int64_t>& cuts) {
  std::vector<Value*> out;
  int64_t prev = 0;
  auto clamp = [n](int64_t i) { return std::min(std::max<int64_t>(i < 0 ? i + n : i, 0), n); };
  std::vector<int64_t> bounds = cuts;
  bounds.push_back(n);
  for (size_t k = 0; k < bounds.size(); ++k) {
    const int64_t start = clamp(prev);
    const int64_t end = k + 1 == bounds.size() ? n : std::max(clamp(bounds[k]), start);
    if (start == 0 && end == n)
      out.push_back(ctx.op("Identity", {x}));
    else
      out.push_back(helpers::slice(ctx, x, {dim}, {start}, {end}));
    prev = k + 1 == bounds.size() ? n : bounds[k];
  }
  return out;
}

// aten::tensor_split(self, sections | indices | tensor_indices_or_sections, dim=0) -> Tensor[]
void tensor_split(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.num_args() > 2 ? ctx.i(2) : 0, rank);
  const int64_t n = ctx.static_dim(0, dim);
  const Arg& a = ctx.arg(1);
  bool sections = a.kind == Arg::Kind::Int;
  if (a.kind == Arg::Kind::Tensor) sections = ctx.rank(1) == 0;
  std::vector<int64_t> cuts;
  std::vector<int64_t> given;
  if (a.kind == Arg::Kind::Tensor) {
    auto v = known_ints(ctx, 1);
    if (!v) ctx.fail("tensor_split with indices or sections computed at run time is not supported");
    given = *v;
  } else {
    given = ctx.is(1);
  }
  if (sections) {
    const int64_t s = given.at(0);
    if (s <= 0) ctx.fail("tensor_split needs a positive number of sections");
    const int64_t base = n / s, extra = n % s;
    int64_t pos = 0;
    for (int64_t i = 0; i + 1 < s; ++i) {
      pos += base + (i < extra ? 1 : 0);
      cuts.push_back(pos);
    }
  } else {
    cuts = given;
  }
  ctx.out_list(split_at(ctx, ctx.in(0), dim, n, cuts));
}

// aten::unsafe_split_with_sizes(self, split_sizes, dim=0) -> Tensor[]
void unsafe_split_with_sizes(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.num_args() > 2 ? ctx.i(2) : 0, rank);
  ctx.out_list(helpers::split(ctx, ctx.in(0), ctx.is(1), dim));
}

// aten::broadcast_tensors(tensors) -> Tensor[]
void broadcast_tensors(SymbolicContext& ctx) {
  std::vector<Value*> ts = ctx.list(0);
  if (ts.empty()) {
    ctx.out_list({});
    return;
  }
  // The common shape: a small tensor expanded by every input's shape.
  Value* probe = ctx.op("ConstantOfShape", {ctx.op("Shape", {ts[0]})},
                        {{"value", ir::Tensor::from_int64s({0}, {1}).converted(DType::Bool)}});
  for (size_t i = 1; i < ts.size(); ++i) probe = ctx.op("Expand", {probe, ctx.op("Shape", {ts[i]})});
  Value* shape = ctx.op("Shape", {probe});
  std::vector<Value*> outs;
  for (Value* t : ts) outs.push_back(ctx.op("Expand", {t, shape}));
  ctx.out_list(outs);
}

// aten::atleast_{1,2,3}d(self) / (.Sequence: Tensor[] -> Tensor[])
Value* at_least(SymbolicContext& ctx, Value* x, int64_t rank, int n) {
  if (rank >= n) return ctx.op("Identity", {x});
  if (rank == 0) return helpers::reshape(ctx, x, std::vector<int64_t>(static_cast<size_t>(n), 1));
  if (n == 2) return helpers::unsqueeze(ctx, x, {0});              // [a] -> [1, a]
  if (rank == 1) return helpers::unsqueeze(ctx, x, {0, 2});        // [a] -> [1, a, 1]
  return helpers::unsqueeze(ctx, x, {2});                          // [a, b] -> [a, b, 1]
}

void atleast(SymbolicContext& ctx, int n) {
  const Arg& a = ctx.arg(0);
  if (a.is_list()) {
    std::vector<Value*> xs = ctx.list(0);
    std::vector<Value*> outs;
    for (size_t k = 0; k < xs.size(); ++k) outs.push_back(at_least(ctx, xs[k], a.elements[k].rank(), n));
    ctx.out_list(outs);
    return;
  }
  ctx.out(at_least(ctx, ctx.in(0), ctx.rank(0), n));
}

// aten::narrow_copy(self, dim, start, length): narrow as a copy.
void narrow_copy(SymbolicContext& ctx) {
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0));
  Value* x = ctx.in(0);
  if (ctx.constant(2) && ctx.constant(3)) {
    int64_t start = ctx.i(2);
    if (start < 0) start += ctx.static_dim(0, dim);
    ctx.out(helpers::slice(ctx, x, {dim}, {start}, {start + ctx.i(3)}));
    return;
  }
  Value* start = helpers::unsqueeze(ctx, ctx.scalar_value(2, DType::Int64), {0});
  Value* end = ctx.op("Add", {start, helpers::unsqueeze(ctx, ctx.scalar_value(3, DType::Int64), {0})});
  ctx.out(helpers::slice_dynamic(ctx, x, start, end, ctx.const_ints({dim}), nullptr));
}

// aten::_shape_as_tensor(self) (torch.onnx.operators.shape_as_tensor)
void shape_as_tensor(SymbolicContext& ctx) { ctx.out(ctx.op("Shape", {ctx.in(0)})); }

// aten::_reshape_from_tensor(self, shape) (torch.onnx.operators.reshape_from_tensor_shape)
void reshape_from_tensor(SymbolicContext& ctx) {
  Value* y = ctx.op("Reshape", {ctx.in(0), ctx.cast(ctx.in(1), DType::Int64)});
  // ONNX shape inference cannot tell the rank when the shape is computed at
  // run time (and the checker wants it on graph outputs): it is the length of
  // the shape, fixed by the example.
  if (ctx.out_info().has_sizes && !y->type().has_shape) {
    y->type().has_shape = true;
    y->type().shape.assign(static_cast<size_t>(ctx.out_info().rank()), ir::Dim{});
  }
  ctx.out(y);
}

}  // namespace

void register_rearrange(Registry& r) {
  r.add("aten::flip", 9, [](SymbolicContext& c) { flip(c, false); });
  r.add("aten::flip", 10, [](SymbolicContext& c) { flip(c, true); });
  r.add("aten::fliplr", 9, [](SymbolicContext& c) { fliplr(c, false); });
  r.add("aten::fliplr", 10, [](SymbolicContext& c) { fliplr(c, true); });
  r.add("aten::flipud", 9, [](SymbolicContext& c) { flipud(c, false); });
  r.add("aten::flipud", 10, [](SymbolicContext& c) { flipud(c, true); });
  r.add("aten::rot90", 9, [](SymbolicContext& c) { rot90(c, false); });
  r.add("aten::rot90", 10, [](SymbolicContext& c) { rot90(c, true); });
  r.add("aten::roll", 9, roll);
  r.add("aten::tril", 9, [](SymbolicContext& c) { tri_masked(c, false); });
  r.add("aten::tril", 14, [](SymbolicContext& c) { tri_trilu(c, false); });
  r.add("aten::triu", 9, [](SymbolicContext& c) { tri_masked(c, true); });
  r.add("aten::triu", 14, [](SymbolicContext& c) { tri_trilu(c, true); });
  for (const char* op : {"aten::diagonal", "aten::diagonal_copy"}) {
    r.add(op, 9, diagonal);
    r.add(op, 10, diagonal_10);
  }
  r.add("aten::unfold", 9, unfold);
  r.add("aten::unfold_copy", 9, unfold);
  r.add("aten::as_strided", 9, as_strided);
  r.add("aten::as_strided_copy", 9, as_strided);
  r.add("aten::repeat_interleave", 9, [](SymbolicContext& c) { repeat_interleave(c, false); });
  r.add("aten::repeat_interleave", 11, [](SymbolicContext& c) { repeat_interleave(c, true); });
  r.add("aten::movedim", 9, movedim);
  r.add("aten::numpy_T", 9, numpy_T);
  r.add("aten::mT", 9, mT);
  r.add("aten::mH", 9, mT);  // (x.mH, x.adjoint()) real tensors: the conjugate is the tensor itself
  r.add("aten::tensor_split", 9, tensor_split);
  r.add("aten::unsafe_split_with_sizes", 9, unsafe_split_with_sizes);
  r.add("aten::broadcast_tensors", 9, broadcast_tensors);
  r.add("aten::atleast_1d", 9, [](SymbolicContext& c) { atleast(c, 1); });
  r.add("aten::atleast_2d", 9, [](SymbolicContext& c) { atleast(c, 2); });
  r.add("aten::atleast_3d", 9, [](SymbolicContext& c) { atleast(c, 3); });
  r.add("aten::narrow_copy", 9, narrow_copy);
  r.add("aten::_shape_as_tensor", 9, shape_as_tensor);
  r.add("aten::_reshape_from_tensor", 9, reshape_from_tensor);
}

}  // namespace torch2onnx::symbolics
