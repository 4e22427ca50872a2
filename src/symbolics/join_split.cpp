// Joining and splitting: cat, stack, hstack/vstack/dstack/column_stack,
// chunk, split, split_with_sizes, unbind, hsplit/vsplit/dsplit.
// Splits produce a fixed-length list (its length from the example run).
#include <algorithm>
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"
#include "torch2onnx/warnings.h"

namespace torch2onnx::symbolics {
namespace {

// The elements of Tensor[] argument 0 with their example ranks.
struct Parts {
  std::vector<ir::Value*> values;
  std::vector<int64_t> ranks;
};

Parts parts_of(SymbolicContext& ctx) {
  const Arg& list = ctx.arg(0);
  Parts p;
  p.values = ctx.list(0);
  if (p.values.empty()) ctx.fail("joining an empty list of tensors");
  for (size_t i = 0; i < p.values.size(); ++i) {
    const int64_t r = list.elements[i].rank();
    if (r < 0) ctx.fail("the rank of element " + std::to_string(i) + " is unknown");
    p.ranks.push_back(r);
  }
  return p;
}

// Concat of values already of the output dtype (no node for a single one).
ir::Value* concat(SymbolicContext& ctx, const std::vector<ir::Value*>& vs, int64_t axis) {
  if (vs.size() == 1) return vs[0];
  return ctx.op("Concat", vs, {{"axis", axis}});
}

// Whether element e's 1-D length is the same for every input the export
// accepts (a size the converter cannot vouch for is taken as varying).
bool length_static(const Arg& e) {
  if (e.constant || e.static_shape) return true;
  return e.dynamic_dims.size() == 1 && !e.dynamic_dims[0];
}

// aten::cat(tensors, dim=0): inputs promoted to the output dtype. Legacy
// empty 1-D tensors (shape [0]) are skipped, as PyTorch does. (One whose
// length varies is skipped only when joining tensors of more dims, which it
// can only join empty; among 1-D tensors it is kept: Concat of its length,
// whatever that is at run time.)
void cat(SymbolicContext& ctx) {
  const Arg& list = ctx.arg(0);
  Parts p = parts_of(ctx);
  const ir::DType t = ctx.out_dtype();
  const bool joins_1d = ctx.out_info().rank() == 1;
  std::vector<ir::Value*> kept;
  int64_t rank = -1;
  for (size_t i = 0; i < p.values.size(); ++i) {
    const Arg& e = list.elements[i];
    if (e.sizes.size() == 1 && e.sizes[0] == 0 && (length_static(e) || !joins_1d)) continue;
    if (rank < 0) rank = p.ranks[i];
    kept.push_back(ctx.cast(p.values[i], t));
  }
  if (kept.empty()) {  // only empty tensors
    ctx.out(ctx.cast(p.values[0], t));
    return;
  }
  if (rank == 0) ctx.fail("zero-dimensional tensors cannot be concatenated (as in PyTorch)");
  ctx.out(concat(ctx, kept, helpers::normalize_dim(ctx, ctx.i(1), rank)));
}

// aten::stack(tensors, dim=0)
void stack(SymbolicContext& ctx) {
  Parts p = parts_of(ctx);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), p.ranks[0] + 1);
  const ir::DType t = ctx.out_dtype();
  std::vector<ir::Value*> expanded;
  for (ir::Value* v : p.values) expanded.push_back(helpers::unsqueeze(ctx, ctx.cast(v, t), {dim}));
  ctx.out(concat(ctx, expanded, dim));
}

// x with new dims of size 1 at `axes` (of the result), as atleast_Nd and
// column_stack add them.
ir::Value* with_unit_dims(SymbolicContext& ctx, ir::Value* x, const std::vector<int64_t>& axes) {
  return axes.empty() ? x : helpers::unsqueeze(ctx, x, axes);
}

// aten::hstack(tensors): cat along dim 1 (dim 0 when all are 1-D), 0-d as 1-D.
void hstack(SymbolicContext& ctx) {
  Parts p = parts_of(ctx);
  const ir::DType t = ctx.out_dtype();
  bool all_1d = true;
  std::vector<ir::Value*> vs;
  for (size_t i = 0; i < p.values.size(); ++i) {
    all_1d = all_1d && p.ranks[i] <= 1;
    std::vector<int64_t> axes = p.ranks[i] == 0 ? std::vector<int64_t>{0} : std::vector<int64_t>{};
    vs.push_back(ctx.cast(with_unit_dims(ctx, p.values[i], axes), t));
  }
  ctx.out(concat(ctx, vs, all_1d ? 0 : 1));
}

// aten::vstack(tensors) (row_stack): atleast_2d, then cat along dim 0.
void vstack(SymbolicContext& ctx) {
  Parts p = parts_of(ctx);
  const ir::DType t = ctx.out_dtype();
  std::vector<ir::Value*> vs;
  for (size_t i = 0; i < p.values.size(); ++i) {
    std::vector<int64_t> axes = p.ranks[i] == 0 ? std::vector<int64_t>{0, 1}
                                : p.ranks[i] == 1 ? std::vector<int64_t>{0}
                                                  : std::vector<int64_t>{};
    vs.push_back(ctx.cast(with_unit_dims(ctx, p.values[i], axes), t));
  }
  ctx.out(concat(ctx, vs, 0));
}

// aten::dstack(tensors): atleast_3d ([n] -> [1, n, 1], [m, n] -> [m, n, 1]), then cat along dim 2.
void dstack(SymbolicContext& ctx) {
  Parts p = parts_of(ctx);
  const ir::DType t = ctx.out_dtype();
  std::vector<ir::Value*> vs;
  for (size_t i = 0; i < p.values.size(); ++i) {
    std::vector<int64_t> axes = p.ranks[i] == 0   ? std::vector<int64_t>{0, 1, 2}
                                : p.ranks[i] == 1 ? std::vector<int64_t>{0, 2}
                                : p.ranks[i] == 2 ? std::vector<int64_t>{2}
                                                  : std::vector<int64_t>{};
    vs.push_back(ctx.cast(with_unit_dims(ctx, p.values[i], axes), t));
  }
  ctx.out(concat(ctx, vs, 2));
}

// aten::column_stack(tensors): 0-d and 1-D tensors become columns [n, 1]; cat along dim 1.
void column_stack(SymbolicContext& ctx) {
  Parts p = parts_of(ctx);
  const ir::DType t = ctx.out_dtype();
  std::vector<ir::Value*> vs;
  for (size_t i = 0; i < p.values.size(); ++i) {
    std::vector<int64_t> axes = p.ranks[i] == 0   ? std::vector<int64_t>{0, 1}
                                : p.ranks[i] == 1 ? std::vector<int64_t>{1}
                                                  : std::vector<int64_t>{};
    vs.push_back(ctx.cast(with_unit_dims(ctx, p.values[i], axes), t));
  }
  ctx.out(concat(ctx, vs, 1));
}

void split_into(SymbolicContext& ctx, const std::vector<int64_t>& sizes, int64_t dim) {
  ctx.out_list(helpers::split(ctx, ctx.in(0), sizes, dim));
}

int64_t dim_length(SymbolicContext& ctx, int64_t dim) { return ctx.static_dim(0, dim); }  // (the number of pieces)

// Pieces of at most `size` along dim (the last one shorter).
std::vector<int64_t> pieces_of(SymbolicContext& ctx, int64_t length, int64_t size) {
  if (size <= 0) ctx.fail("split_size must be positive");
  std::vector<int64_t> sizes;
  for (int64_t done = 0; done < length; done += size) sizes.push_back(std::min(size, length - done));
  if (sizes.empty()) sizes.push_back(0);
  return sizes;
}

// Sizes computed at run time in a list of fixed length (a traced model's
// per-level counts, as torchvision's RPN splits its anchors): one Slice per
// piece, between running sums of the sizes (opset 10 or later).
void split_runtime_sizes(SymbolicContext& ctx, int64_t dim) {
  const size_t n = ctx.arg(1).elements.size();
  ir::Value* axes = ctx.const_ints({dim});
  ir::Value* start = ctx.const_ints({0});
  std::vector<ir::Value*> pieces;
  for (size_t k = 0; k < n; ++k) {
    ir::Value* end = ctx.op("Add", {start, helpers::reshape(ctx, ctx.cast(ctx.elem(1, k), ir::DType::Int64), {1})});
    pieces.push_back(helpers::slice_dynamic(ctx, ctx.in(0), start, end, axes, nullptr));
    start = end;
  }
  ctx.out_list(pieces);
}

// aten::split(self, split_size: int | int[], dim=0), aten::split_with_sizes(self, sizes, dim)
void split(SymbolicContext& ctx) {
  const int64_t dim = helpers::normalize_dim(ctx, ctx.none(2) ? 0 : ctx.i(2), ctx.rank(0));
  const Arg& sizes = ctx.arg(1);
  if (sizes.is_list() && !sizes.constant &&
      std::any_of(sizes.elements.begin(), sizes.elements.end(), [](const Arg& e) { return !e.constant; })) {
    split_runtime_sizes(ctx, dim);
    return;
  }
  if (ctx.arg(1).is_list()) {
    split_into(ctx, ctx.is(1), dim);
    return;
  }
  if (!ctx.constant(1) && ctx.arg(1).kind == Arg::Kind::Int)
    ctx.fail("a split size computed at run time gives a list of run-time length, which needs ONNX sequences "
             "(opset 11 or later)");
  split_into(ctx, pieces_of(ctx, dim_length(ctx, dim), ctx.i(1)), dim);
}

// Opset 11: a split size computed at run time makes a sequence of pieces
// (SplitToSequence with a scalar split: pieces of that size, the last shorter).
void split_11(SymbolicContext& ctx) {
  if (ctx.constant(1) || ctx.arg(1).kind != Arg::Kind::Int) {
    split(ctx);
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.none(2) ? 0 : ctx.i(2), ctx.rank(0));
  ir::Value* size = ctx.scalar_value(1, ir::DType::Int64);
  ctx.out_sequence(ctx.op("SplitToSequence", {ctx.in(0), size}, {{"axis", dim}, {"keepdims", int64_t{1}}}));
}

int64_t chunk_dim(SymbolicContext& ctx) { return helpers::normalize_dim(ctx, ctx.none(2) ? 0 : ctx.i(2), ctx.rank(0)); }

// The example's pieces of aten::chunk(self, chunks, dim): ceil(length / chunks) each, the last shorter.
// (static: the sizes become constants; otherwise only their number is taken
// from the example, which a trace's outputs fix anyway)
std::vector<int64_t> chunk_pieces(SymbolicContext& ctx, int64_t dim, bool static_sizes = true) {
  const int64_t chunks = ctx.i(1);
  const int64_t length = static_sizes ? dim_length(ctx, dim) : ctx.sizes(0)[static_cast<size_t>(dim)];
  if (chunks <= 0) ctx.fail("chunks must be positive");
  return pieces_of(ctx, length, std::max<int64_t>((length + chunks - 1) / chunks, 1));
}

// aten::chunk(self, chunks, dim=0): pieces of ceil(length / chunks).
void chunk(SymbolicContext& ctx) {
  const int64_t dim = chunk_dim(ctx);
  split_into(ctx, chunk_pieces(ctx, dim), dim);
}

// Opset 11: a number of chunks computed at run time (a scripted int
// argument) gives a list of run-time length: SplitToSequence in pieces of
// ceil(length / chunks), the last shorter, as many as PyTorch makes.
void chunk_11(SymbolicContext& ctx) {
  if (ctx.constant(1)) return chunk(ctx);
  const int64_t dim = chunk_dim(ctx);
  ir::Value* chunks = ctx.scalar_value(1, ir::DType::Int64);
  ir::Value* len = helpers::dim_size(ctx, ctx.in(0), dim);
  ir::Value* size = ctx.op("Div", {ctx.op("Sub", {ctx.op("Add", {len, chunks}), ctx.const_int(1)}), chunks});
  size = ctx.op("Where", {ctx.op("Less", {size, ctx.const_int(1)}), ctx.const_int(1), size});
  ctx.out_sequence(ctx.op("SplitToSequence", {ctx.in(0), size}, {{"axis", dim}, {"keepdims", int64_t{1}}}));
}

// How many pieces a chunk along a dynamic axis makes varies with its length
// (chunk(3) of 4 is 2 pieces): a list of the example's count is right at
// every length only for 2 chunks (two pieces from length 2 on; of length 1
// the trace's own unpacking of two fails in PyTorch too) or in a .pt2
// program (its guards fixed the count).
bool chunk_count_may_vary(SymbolicContext& ctx, int64_t dim, int64_t chunks, size_t count) {
  if (!ctx.dim_is_dynamic(0, dim) || ctx.output_ranks_fixed()) return false;
  return !(chunks <= 2 && static_cast<int64_t>(count) == chunks);
}

// Opset 13 (Split takes its sizes as an input): the sizes come from the
// run-time length, ceil(length / chunks) each, the last the rest; on a
// static axis they fold back to a constant. Where the number of pieces may
// vary (chunk_count_may_vary) the graph keeps the example's number, as the
// trace's unpacking of the pieces does, and a length that makes another
// number (the rest outside 1..size) fails in ONNX Runtime (a split size of
// -1), as the unpacking fails in PyTorch: never pieces PyTorch would not make.
void chunk_13(SymbolicContext& ctx) {
  if (!ctx.constant(1)) return chunk_11(ctx);
  const int64_t dim = chunk_dim(ctx);
  const int64_t chunks = ctx.i(1);
  const size_t count = chunk_pieces(ctx, dim, false).size();
  if (count == 1 && !chunk_count_may_vary(ctx, dim, chunks, count)) {
    ctx.out_list({ctx.in(0)});
    return;
  }
  ir::Value* len = helpers::unsqueeze(ctx, helpers::dim_size(ctx, ctx.in(0), dim), {0});
  ir::Value* size = ctx.op("Div", {ctx.op("Add", {len, ctx.const_ints({chunks - 1})}), ctx.const_ints({chunks})});
  ir::Value* rest = ctx.op("Sub", {len, ctx.op("Mul", {size, ctx.const_ints({static_cast<int64_t>(count) - 1})})});
  if (chunk_count_may_vary(ctx, dim, chunks, count)) {
    warn("aten::chunk(" + std::to_string(chunks) + ") along dim " + std::to_string(dim) +
         ", which varies with the dynamic axes, keeps the example's " + std::to_string(count) +
         " pieces: the model fails in ONNX Runtime at lengths that make another number");
    ir::Value* ok = ctx.op("And", {ctx.op("Greater", {rest, ctx.const_ints({0})}),
                                   ctx.op("Not", {ctx.op("Greater", {rest, size})})});
    rest = ctx.op("Where", {ok, rest, ctx.const_ints({-1})});
  }
  std::vector<ir::Value*> sizes(count - 1, size);
  sizes.push_back(rest);
  ctx.out_list(ctx.op_n("Split", {ctx.in(0), ctx.op("Concat", sizes, {{"axis", int64_t{0}}})}, count, {{"axis", dim}}));
}

// Opset 18: Split's num_outputs makes pieces of ceil(length / n), the last
// the rest: PyTorch's chunks whenever there are as many pieces as chunks.
void chunk_18(SymbolicContext& ctx) {
  if (!ctx.constant(1)) return chunk_11(ctx);
  const int64_t dim = chunk_dim(ctx);
  const int64_t chunks = ctx.i(1);
  const size_t count = chunk_pieces(ctx, dim, false).size();
  if (chunks < 2 || static_cast<int64_t>(count) != chunks || chunk_count_may_vary(ctx, dim, chunks, count))
    return chunk_13(ctx);
  ctx.out_list(ctx.op_n("Split", {ctx.in(0)}, static_cast<size_t>(chunks), {{"axis", dim}, {"num_outputs", chunks}}));
}

// aten::unbind(self, dim=0)
// (one piece per element: the example's count, which a trace's unpacking of
// the pieces fixes too, e.g. torchvision's loop over the images of a batch
// or its boxes.unbind(1) of 4 coordinates after a run stopped at nonzero,
// unless the dim is known to vary)
void unbind(SymbolicContext& ctx) {
  const int64_t dim = helpers::normalize_dim(ctx, ctx.num_args() > 1 ? ctx.i(1) : 0, ctx.rank(0));
  if (ctx.dim_known_dynamic(0, dim) && ctx.opset() >= 11) {
    // As many pieces as the run has: a list of run-time length (a sequence).
    ctx.out_sequence(ctx.op("SplitToSequence", {ctx.in(0)}, {{"axis", dim}, {"keepdims", int64_t{0}}}));
    return;
  }
  const int64_t length = ctx.dim_known_dynamic(0, dim) ? ctx.static_dim(0, dim) : ctx.sizes(0)[static_cast<size_t>(dim)];
  if (length == 0) {
    ctx.out_list({});
    return;
  }
  auto parts = helpers::split(ctx, ctx.in(0), std::vector<int64_t>(static_cast<size_t>(length), 1), dim);
  for (auto& p : parts) p = helpers::squeeze(ctx, p, {dim});
  ctx.out_list(parts);
}

// hsplit/vsplit/dsplit(self, sections | indices) along `dim`: equal sections,
// or pieces between the indices, as Python slices x[:i0], x[i0:i1], ..., x[ik:].
void split_at(SymbolicContext& ctx, int64_t dim, const char* name) {
  const int64_t length = dim_length(ctx, dim);
  if (!ctx.arg(1).is_list()) {
    const int64_t sections = ctx.i(1);
    if (sections <= 0 || length % sections != 0)
      ctx.fail(std::string(name) + ": the size along dim " + std::to_string(dim) + " is not divisible by " +
               std::to_string(sections));
    split_into(ctx, std::vector<int64_t>(static_cast<size_t>(sections), length / sections), dim);
    return;
  }
  auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + length : i, int64_t{0}, length); };
  std::vector<int64_t> bounds{0};
  for (int64_t i : ctx.is(1)) bounds.push_back(clamp(i));
  bounds.push_back(length);
  ir::Value* x = ctx.in(0);
  std::vector<ir::Value*> pieces;
  for (size_t k = 0; k + 1 < bounds.size(); ++k)
    pieces.push_back(helpers::slice(ctx, x, {dim}, {bounds[k]}, {std::max(bounds[k], bounds[k + 1])}));
  ctx.out_list(pieces);
}

void hsplit(SymbolicContext& ctx) { split_at(ctx, ctx.rank(0) == 1 ? 0 : 1, "hsplit"); }
void vsplit(SymbolicContext& ctx) {
  if (ctx.rank(0) < 2) ctx.fail("vsplit needs a tensor of at least 2 dimensions");
  split_at(ctx, 0, "vsplit");
}
void dsplit(SymbolicContext& ctx) {
  if (ctx.rank(0) < 3) ctx.fail("dsplit needs a tensor of at least 3 dimensions");
  split_at(ctx, 2, "dsplit");
}

}  // namespace

void register_join_split(Registry& r) {
  // Aliases (concat, concatenate, row_stack) never reach graphs: TorchScript normalizes them.
  r.add("aten::cat", 9, cat);
  r.add("aten::stack", 9, stack);
  r.add("aten::hstack", 9, hstack);
  r.add("aten::vstack", 9, vstack);
  r.add("aten::dstack", 9, dstack);
  r.add("aten::column_stack", 9, column_stack);
  // The *_copy forms (functionalized graphs) are the same computations.
  for (const char* op : {"aten::split", "aten::split_with_sizes", "aten::unsafe_split", "aten::split_copy",
                         "aten::split_with_sizes_copy"})
    r.add(op, 9, split);
  for (const char* op : {"aten::split", "aten::unsafe_split", "aten::split_copy"}) r.add(op, 11, split_11);
  for (const char* op : {"aten::chunk", "aten::unsafe_chunk"}) {
    r.add(op, 9, chunk);
    r.add(op, 11, chunk_11);
    r.add(op, 13, chunk_13);
    r.add(op, 18, chunk_18);
  }
  for (const char* op : {"aten::unbind", "aten::unbind_copy"}) r.add(op, 9, unbind);
  r.add("aten::hsplit", 9, hsplit);
  r.add("aten::vsplit", 9, vsplit);
  r.add("aten::dsplit", 9, dsplit);
}

}  // namespace torch2onnx::symbolics
