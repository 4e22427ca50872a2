// Shape manipulation: view/reshape, flatten/unflatten, squeeze/unsqueeze,
// transpose/permute, expand, repeat, size/numel, pixel (un)shuffle.
// Sizes read from tensors stay computations (Shape/Gather/...), folded to
// constants later only where the shape is static.
#include <limits>

#include "serialize/infer_node.h"
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// A target shape as a 1-D int64 value. PyTorch's 0 means an empty dimension,
// ONNX's means "copy": such shapes need Reshape's allowzero (opset 14).
ir::Value* reshape_to(SymbolicContext& ctx, ir::Value* x, size_t shape_idx) {
  const Arg& a = ctx.arg(shape_idx);
  bool has_zero = false;
  if (a.constant) {
    for (int64_t d : ctx.is(shape_idx)) has_zero = has_zero || d == 0;
  }
  // An empty list (a view to 0-d) arrives as a non-constant empty list.
  ir::Value* shape = a.is_list() && a.elements.empty() && !a.value ? ctx.const_ints({}) : nullptr;
  // One size computed at run time (a dynamic batch), the others positive
  // constants: -1 there, so the shape is a constant (Reshape infers it).
  if (!shape && !a.constant && !a.value && a.is_list()) {
    std::vector<int64_t> dims;
    size_t computed = 0;
    for (const Arg& e : a.elements) {
      const bool known = e.constant && e.kind == Arg::Kind::Int && e.i > 0;
      computed += known ? 0 : 1;
      dims.push_back(known ? e.i : -1);
    }
    if (computed == 1) shape = ctx.const_ints(dims);
  }
  if (!shape) shape = ctx.ints_value(shape_idx);
  if (has_zero) {
    if (ctx.opset() < 14) ctx.fail("reshaping to a size-0 dimension needs opset 14 or later");
    return ctx.op("Reshape", {x, shape}, {{"allowzero", int64_t{1}}});
  }
  return ctx.op("Reshape", {x, shape});
}

// aten::view.dtype(self, dtype): the same bits read as another dtype of the
// same width: BitCast (opset 26). bool as int8/uint8 is its 0/1 bytes, a Cast
// at any opset (ONNX Runtime has no BitCast kernel for bool). Other widths
// change the last dim's size (PyTorch allows it; BitCast does not).
void view_dtype(SymbolicContext& ctx) {
  const ir::DType from = ctx.dtype(0), to = ir::dtype_from_scalar_type(ctx.i(1));
  if (from == to) return ctx.out(ctx.in(0));
  const std::string what = std::string("viewing a ") + ir::dtype_name(from) + " tensor as " + ir::dtype_name(to);
  if (from == ir::DType::Undefined) ctx.fail(what + ": the tensor's dtype is not known at export");
  if (from == ir::DType::Bool && (to == ir::DType::Int8 || to == ir::DType::UInt8)) return ctx.out(ctx.cast(ctx.in(0), to));
  if (ir::dtype_size(from) != ir::dtype_size(to))
    ctx.fail(what + " changes the element width (" + std::to_string(ir::dtype_size(from)) + " to " +
             std::to_string(ir::dtype_size(to)) + " bytes): ONNX's BitCast keeps the shape, so only views of the same "
             "width export");
  if (from == ir::DType::Bool || to == ir::DType::Bool)
    ctx.fail(what + ": only a bool tensor viewed as int8/uint8 exports (ONNX Runtime has no BitCast for bool)");
  if (ctx.opset() < 26) ctx.fail(what + " (a bit cast) needs opset 26 or above (ONNX BitCast)");
  ctx.out(ctx.op("BitCast", {ctx.in(0)}, {{"to", static_cast<int64_t>(to)}}));
}

// aten::view / aten::reshape(self, shape); view.dtype(self, dtype) reinterprets bits.
void view(SymbolicContext& ctx) {
  if (ctx.arg(1).kind == Arg::Kind::Int) return view_dtype(ctx);
  ctx.out(reshape_to(ctx, ctx.in(0), 1));
}

// aten::ravel(self): flattened to 1-D.
void ravel(SymbolicContext& ctx) { ctx.out(helpers::reshape(ctx, ctx.in(0), {-1})); }

// aten::view_as / aten::reshape_as(self, other)
void view_as(SymbolicContext& ctx) { ctx.out(ctx.op("Reshape", {ctx.in(0), ctx.op("Shape", {ctx.in(1)})})); }

// Shape(x)[begin:end] (end = -1: to the end), as a 1-D value.
ir::Value* shape_slice(SymbolicContext& ctx, ir::Value* x, int64_t begin, int64_t end) {
  ir::Value* shape = ctx.op("Shape", {x});
  return helpers::slice(ctx, shape, {0}, {begin}, {end < 0 ? std::numeric_limits<int64_t>::max() : end});
}

// aten::flatten(self, start_dim=0, end_dim=-1)
void flatten(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  ir::Value* x = ctx.in(0);
  if (rank == 0) {
    ctx.out(helpers::reshape(ctx, x, {1}));
    return;
  }
  const int64_t s = helpers::normalize_dim(ctx, ctx.i(1), rank);
  const int64_t e = helpers::normalize_dim(ctx, ctx.i(2), rank);
  if (s > e) ctx.fail("flatten: start_dim comes after end_dim");
  if (s == e) {
    ctx.out(x);
    return;
  }
  if (s == 1 && e == rank - 1) {
    ctx.out(ctx.op("Flatten", {x}, {{"axis", int64_t{1}}}));
    return;
  }
  // Leading dims copied (0), the flattened run as -1, trailing dims read from the shape.
  std::vector<ir::Value*> parts;
  std::vector<int64_t> lead(static_cast<size_t>(s), 0);
  lead.push_back(-1);
  parts.push_back(ctx.const_ints(lead));
  if (e < rank - 1) parts.push_back(shape_slice(ctx, x, e + 1, -1));
  ir::Value* shape = parts.size() == 1 ? parts[0] : ctx.op("Concat", parts, {{"axis", int64_t{0}}});
  ctx.out(ctx.op("Reshape", {x, shape}));
}

// aten::unflatten(self, dim, sizes)
void unflatten(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  ir::Value* x = ctx.in(0);
  std::vector<ir::Value*> parts;
  if (dim > 0) parts.push_back(ctx.const_ints(std::vector<int64_t>(static_cast<size_t>(dim), 0)));
  parts.push_back(ctx.ints_value(2));
  if (dim < rank - 1) parts.push_back(shape_slice(ctx, x, dim + 1, -1));
  ir::Value* shape = parts.size() == 1 ? parts[0] : ctx.op("Concat", parts, {{"axis", int64_t{0}}});
  ctx.out(ctx.op("Reshape", {x, shape}));
}

// aten::squeeze(self[, dim]): only dims of size 1 go, others are left alone
// -- a rule PyTorch applies at run time. A static dim is decided now; one
// that varies (with the export's dynamic axes, or with input values) is
// tested at run time, its size in the example notwithstanding: the result's
// rank is then the run's (Shape, a mask of the dims that are 1, Compress,
// Reshape), as PyTorch's is.
// A .pt2 program fixed the result's rank with its guards: that decides.
ir::Value* dims_up_to(SymbolicContext& ctx, int64_t rank) {  // [0, 1, ..., rank - 1]
  std::vector<int64_t> iota(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) iota[static_cast<size_t>(i)] = i;
  return ctx.const_ints(iota);
}

// The index of dim `idx` (an int computed at run time) among `rank` dims, as
// a [1] tensor: Gather from [0, rank) (negative dims count from the end),
// which fails in ONNX Runtime where PyTorch raises (a dim out of range).
ir::Value* runtime_dim(SymbolicContext& ctx, size_t idx, int64_t rank) {
  ir::Value* d = helpers::reshape(ctx, ctx.scalar_value(idx, ir::DType::Int64), {1});
  return ctx.op("Gather", {dims_up_to(ctx, rank), d}, {{"axis", int64_t{0}}});
}

// x.squeeze(dim) with the dim computed at run time (a scripted int
// argument): which dim, and whether it is 1, are both the run's. The result's
// rank is the run's.
// self without the dims of size 1 that `candidate` (bool [rank], computed at
// run time or not) marks: Shape, Compress, Reshape; the result's rank is the
// run's. (Below opset 14 Reshape copies a 0 from self's dim at the same
// position: right whenever the tensor is not empty.)
void squeeze_at_run_time(SymbolicContext& ctx, ir::Value* self, ir::Value* shape, ir::Value* candidate) {
  ir::Value* goes = ctx.op("And", {ctx.op("Equal", {shape, ctx.const_ints({1})}), candidate});
  ir::Value* new_shape = ctx.op("Compress", {shape, ctx.op("Not", {goes})}, {{"axis", int64_t{0}}});
  ir::Attributes attrs;
  if (ctx.opset() >= 14) attrs.emplace_back("allowzero", int64_t{1});
  ir::Value* out = ctx.op("Reshape", {self, new_shape}, std::move(attrs));
  out->type().rank_varies = true;
  ctx.out(out);
}

void squeeze_runtime_dim(SymbolicContext& ctx, int64_t rank) {
  ir::Value* self = ctx.in(0);
  ir::Value* dim = runtime_dim(ctx, 1, rank);
  squeeze_at_run_time(ctx, self, ctx.op("Shape", {self}), ctx.op("Equal", {dims_up_to(ctx, rank), dim}));
}

void squeeze(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  if (rank == 0) {
    ctx.out(ctx.in(0));
    return;
  }
  if (ctx.num_args() > 1 && !ctx.none(1) && !ctx.constant(1) && ctx.arg(1).kind == Arg::Kind::Int) {
    squeeze_runtime_dim(ctx, rank);
    return;
  }
  std::vector<bool> candidate(static_cast<size_t>(rank), false);
  if (ctx.num_args() > 1 && !ctx.none(1)) {
    for (int64_t d : ctx.is(1)) candidate[static_cast<size_t>(helpers::normalize_dim(ctx, d, rank))] = true;
  } else {
    candidate.assign(static_cast<size_t>(rank), true);
  }
  const auto& sizes = ctx.sizes(0);
  // A dim varies when the export's dynamic axes make it vary, or when ONNX's
  // inference cannot show it static: a size computed from input values
  // (torch.zeros(n[0])), the same for every input shape.
  ir::Value* self = ctx.in(0);
  const bool inferred = !ctx.constant(0) && serialize::infer_value_type(self, ctx.opset()) &&
                        self->type().rank() == rank;
  auto varies = [&](int64_t i) {
    return ctx.dim_is_dynamic(0, i) || (inferred && !self->type().shape[static_cast<size_t>(i)].is_static());
  };
  std::vector<int64_t> axes, at_run_time;  // dims that are 1 for every input; dims tested at run time
  for (int64_t i = 0; i < rank; ++i) {
    if (!candidate[static_cast<size_t>(i)]) continue;
    if (varies(i))
      at_run_time.push_back(i);
    else if (sizes[static_cast<size_t>(i)] == 1)
      axes.push_back(i);
  }
  helpers::settle_squeeze_by_output_rank(ctx, rank, axes, at_run_time);
  if (at_run_time.empty()) {
    ctx.out(axes.empty() ? self : helpers::squeeze(ctx, self, axes));
    return;
  }
  // The new shape: Shape(self) without the candidate dims that are 1.
  std::vector<uint8_t> mask(static_cast<size_t>(rank), 0);
  for (int64_t i : axes) mask[static_cast<size_t>(i)] = 1;
  for (int64_t i : at_run_time) mask[static_cast<size_t>(i)] = 1;
  squeeze_at_run_time(ctx, self, ctx.op("Shape", {self}),
                      ctx.constant(ir::Tensor::owned(ir::DType::Bool, {rank}, std::move(mask))));
}

// aten::unsqueeze(self, dim)
// (a dim computed at run time, a scripted int argument: Unsqueeze takes its
// axes as an input from opset 13)
void unsqueeze(SymbolicContext& ctx) {
  if (!ctx.constant(1) && ctx.arg(1).kind == Arg::Kind::Int && ctx.opset() >= 13) {
    ctx.out(ctx.op("Unsqueeze", {ctx.in(0), runtime_dim(ctx, 1, ctx.rank(0) + 1)}));
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0) + 1);
  ctx.out(helpers::unsqueeze(ctx, ctx.in(0), {dim}));
}

// aten::transpose(self, dim0, dim1)
void transpose(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  if (rank < 2) {
    ctx.out(ctx.in(0));
    return;
  }
  const int64_t a = helpers::normalize_dim(ctx, ctx.i(1), rank);
  const int64_t b = helpers::normalize_dim(ctx, ctx.i(2), rank);
  if (a == b) {
    ctx.out(ctx.in(0));
    return;
  }
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
  ctx.out(ctx.op("Transpose", {ctx.in(0)}, {{"perm", perm}}));
}

// aten::t(self): transpose of a matrix; vectors and scalars are unchanged.
void t(SymbolicContext& ctx) {
  if (ctx.rank(0) < 2) {
    ctx.out(ctx.in(0));
    return;
  }
  ctx.out(ctx.op("Transpose", {ctx.in(0)}, {{"perm", std::vector<int64_t>{1, 0}}}));
}

// aten::permute(self, dims)
void permute(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  std::vector<int64_t> perm = helpers::normalize_dims(ctx, ctx.is(1), rank);
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  if (identity) {
    ctx.out(ctx.in(0));
    return;
  }
  ctx.out(ctx.op("Transpose", {ctx.in(0)}, {{"perm", perm}}));
}

// aten::expand(self, size, implicit=False): -1 keeps a size, which ONNX's
// bidirectional broadcast does with 1.
void expand(SymbolicContext& ctx) {
  const Arg& a = ctx.arg(1);
  ir::Value* shape;
  if (a.constant) {
    std::vector<int64_t> s = ctx.is(1);
    for (int64_t& d : s)
      if (d == -1) d = 1;
    shape = ctx.const_ints(s);
  } else {
    // sizes are >= 0, and |-1| = 1 (other negative sizes are PyTorch's error)
    shape = ctx.op("Abs", {ctx.ints_value(1)});
  }
  ctx.out(ctx.op("Expand", {ctx.in(0), shape}));
}

// aten::expand_as(self, other)
void expand_as(SymbolicContext& ctx) { ctx.out(ctx.op("Expand", {ctx.in(0), ctx.op("Shape", {ctx.in(1)})})); }

// Number of elements of an int list argument (constant or built at run time).
int64_t list_length(SymbolicContext& ctx, size_t idx) {
  const Arg& a = ctx.arg(idx);
  if (a.is_list() && (!a.elements.empty() || !a.value)) return static_cast<int64_t>(a.elements.size());
  if (a.constant) return static_cast<int64_t>(ctx.is(idx).size());
  const auto& s = a.sizes;  // a 1-D tensor of sizes
  if (a.has_sizes && s.size() == 1) return s[0];
  ctx.fail("the length of argument " + std::to_string(idx) + " is unknown");
}

// Tile x by `reps` (an int list argument) after giving x as many dims.
ir::Value* tile(SymbolicContext& ctx, ir::Value* x, int64_t rank, size_t reps_idx, int64_t n_reps) {
  if (n_reps > rank) {
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < n_reps - rank; ++i) axes.push_back(i);
    x = helpers::unsqueeze(ctx, x, axes);
  }
  ir::Value* reps = ctx.ints_value(reps_idx);
  if (n_reps < rank)  // torch.tile: missing leading repeats are 1
    reps = ctx.op("Concat", {ctx.const_ints(std::vector<int64_t>(static_cast<size_t>(rank - n_reps), 1)), reps},
                  {{"axis", int64_t{0}}});
  return ctx.op("Tile", {x, reps});
}

// aten::repeat(self, repeats): leading new dims first, then Tile.
void repeat(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0), n = list_length(ctx, 1);
  if (n < rank) ctx.fail("repeat needs at least as many repeats as dimensions");
  ctx.out(tile(ctx, ctx.in(0), rank, 1, n));
}

// aten::tile(self, dims): repeat, with fewer repeats than dims allowed.
void tile_(SymbolicContext& ctx) { ctx.out(tile(ctx, ctx.in(0), ctx.rank(0), 1, list_length(ctx, 1))); }

// aten::size(self[, dim]) -> int / int[]. The int[] is a list of per-dim
// values (so TorchScript can unpack and index it), or Shape when the rank is unknown.
void size(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  if (ctx.num_args() == 1) {
    if (!ctx.arg(0).has_sizes) {
      ctx.out(ctx.op("Shape", {x}));
      return;
    }
    std::vector<ir::Value*> dims;
    for (int64_t d = 0; d < ctx.rank(0); ++d) dims.push_back(helpers::dim_size(ctx, x, d));
    ctx.out_list(dims);
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0));
  ctx.out(helpers::dim_size(ctx, x, dim));
}

// aten::len(Tensor): the length of dim 0 (a 0-d tensor has none, as in PyTorch).
void len(SymbolicContext& ctx) {
  // (PyTorch raises on a 0-d tensor; a rank the example did not show is taken to be >= 1)
  if (ctx.arg(0).has_sizes && ctx.rank(0) == 0) ctx.fail("len() of a 0-d tensor");
  ctx.out(helpers::dim_size(ctx, ctx.in(0), 0));
}

// aten::numel(self)
void numel(SymbolicContext& ctx) { ctx.out(ctx.op("Size", {ctx.in(0)})); }

// aten::dim(self)
void dim(SymbolicContext& ctx) { ctx.out(ctx.const_int(ctx.rank(0))); }

// aten::pixel_shuffle(self, upscale_factor): DepthToSpace in CRD order.
void pixel_shuffle_11(SymbolicContext& ctx) {
  if (ctx.rank(0) != 4) ctx.fail("pixel_shuffle is exported for 4-D inputs");
  ctx.out(ctx.op("DepthToSpace", {ctx.in(0)}, {{"blocksize", ctx.i(1)}, {"mode", "CRD"}}));
}

void pixel_shuffle_9(SymbolicContext& ctx) {
  const auto& s = ctx.sizes(0);
  if (s.size() != 4) ctx.fail("pixel_shuffle is exported for 4-D inputs");
  // (C, H and W go into the Reshapes' constants: static; N is copied (0))
  const int64_t r = ctx.i(1), c = ctx.static_dim(0, 1) / (r * r), h = ctx.static_dim(0, 2), w = ctx.static_dim(0, 3);
  ir::Value* x = helpers::reshape(ctx, ctx.in(0), {0, c, r, r, h, w});
  x = ctx.op("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 1, 4, 2, 5, 3}}});
  ctx.out(helpers::reshape(ctx, x, {0, c, h * r, w * r}));
}

// aten::pixel_unshuffle(self, downscale_factor): [N, C, H, W] -> [N, C, H/r,
// r, W/r, r] -> [N, C, r, r, H/r, W/r] -> [N, C*r*r, H/r, W/r], the shapes
// computed from the run-time sizes (dynamic axes stay dynamic; static ones fold).
void pixel_unshuffle(SymbolicContext& ctx) {
  if (ctx.rank(0) != 4) ctx.fail("pixel_unshuffle is exported for 4-D inputs");
  const int64_t r = ctx.i(1);
  ir::Value* x = ctx.in(0);
  ir::Value* shape = ctx.op("Shape", {x});
  auto part = [&](int64_t i) { return helpers::slice(ctx, shape, {0}, {i}, {i + 1}); };
  ir::Value* block = ctx.const_ints({r});
  ir::Value* h = ctx.op("Div", {part(2), block});
  ir::Value* w = ctx.op("Div", {part(3), block});
  ir::Value* split = ctx.op("Concat", {part(0), part(1), h, block, w, block}, {{"axis", int64_t{0}}});
  x = ctx.op("Transpose", {ctx.op("Reshape", {x, split})}, {{"perm", std::vector<int64_t>{0, 1, 3, 5, 2, 4}}});
  ir::Value* channels = ctx.op("Mul", {part(1), ctx.const_ints({r * r})});
  ctx.out(ctx.op("Reshape", {x, ctx.op("Concat", {part(0), channels, h, w}, {{"axis", int64_t{0}}})}));
}

// aten::channel_shuffle(self, groups) (nn.ChannelShuffle): [N, C, *] ->
// [N, g, C/g, rest] -> [N, C/g, g, rest] -> self's shape.
void channel_shuffle(SymbolicContext& ctx) {
  const auto& s = ctx.sizes(0);
  if (s.size() < 3) ctx.fail("channel_shuffle takes an input of at least 3 dims");
  const int64_t g = ctx.i(1);
  if (g <= 0 || ctx.static_dim(0, 1) % g != 0) ctx.fail("channel_shuffle: the number of channels must be divisible by groups");
  ir::Value* x = helpers::reshape(ctx, ctx.in(0), {0, g, s[1] / g, -1});
  x = ctx.op("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  ctx.out(ctx.op("Reshape", {x, ctx.op("Shape", {ctx.in(0)})}));
}

}  // namespace

void register_shape(Registry& r) {
  // The *_copy forms (functionalized graphs) are the same computations.
  for (const char* op : {"aten::view", "aten::view_copy", "aten::reshape", "aten::_reshape_alias"})
    r.add(op, 9, view);
  r.add("aten::ravel", 9, ravel);
  r.add("aten::view_as", 9, view_as);
  r.add("aten::reshape_as", 9, view_as);
  r.add("aten::flatten", 9, flatten);
  r.add("aten::unflatten", 9, unflatten);
  for (const char* op : {"aten::squeeze", "aten::squeeze_copy"}) r.add(op, 9, squeeze);
  for (const char* op : {"aten::unsqueeze", "aten::unsqueeze_copy"}) r.add(op, 9, unsqueeze);
  // (swapaxes / swapdims arrive as transpose: convert::canonical_kind)
  for (const char* op : {"aten::transpose", "aten::transpose_copy"}) r.add(op, 9, transpose);
  for (const char* op : {"aten::t", "aten::t_copy"}) r.add(op, 9, t);
  for (const char* op : {"aten::permute", "aten::permute_copy"}) r.add(op, 9, permute);
  for (const char* op : {"aten::expand", "aten::expand_copy", "aten::broadcast_to"}) r.add(op, 9, expand);
  r.add("aten::expand_as", 9, expand_as);
  r.add("aten::repeat", 9, repeat);
  r.add("aten::tile", 9, tile_);
  r.add("aten::size", 9, size);
  r.add("aten::len", 9, len);  // of a tensor; len of a list is the converter's
  r.add("aten::numel", 9, numel);
  r.add("aten::dim", 9, dim);
  r.add("aten::pixel_shuffle", 9, pixel_shuffle_9);
  r.add("aten::pixel_shuffle", 11, pixel_shuffle_11);
  r.add("aten::pixel_unshuffle", 9, pixel_unshuffle);
  for (const char* op : {"aten::channel_shuffle", "aten::native_channel_shuffle"}) r.add(op, 9, channel_shuffle);
}

}  // namespace torch2onnx::symbolics
