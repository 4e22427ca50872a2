// Joining and splitting: cat, stack, chunk, split, split_with_sizes, unbind.
// Splits produce a fixed-length list (its length from the example run).
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// aten::cat(tensors, dim=0). Legacy empty 1-D tensors are skipped, as PyTorch does.
void cat(SymbolicContext& ctx) {
  const Arg& list = ctx.arg(0);
  std::vector<ir::Value*> parts = ctx.list(0);
  const ir::DType t = ctx.out_dtype();
  std::vector<ir::Value*> kept;
  int64_t rank = -1;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Arg& e = list.elements[i];
    if (e.has_sizes && e.sizes.size() == 1 && e.sizes[0] == 0 && parts.size() > 1) continue;
    if (e.has_sizes && rank < 0) rank = static_cast<int64_t>(e.sizes.size());
    kept.push_back(ctx.cast(parts[i], t));
  }
  if (kept.empty()) ctx.fail("cat of no tensors");
  if (rank < 0) ctx.fail("the rank of cat's inputs is unknown");
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  if (kept.size() == 1) {
    ctx.out(kept[0]);
    return;
  }
  ctx.out(ctx.op("Concat", kept, {{"axis", dim}}));
}

// aten::stack(tensors, dim=0)
void stack(SymbolicContext& ctx) {
  const Arg& list = ctx.arg(0);
  std::vector<ir::Value*> parts = ctx.list(0);
  if (parts.empty()) ctx.fail("stack of no tensors");
  const int64_t rank = list.elements[0].rank();
  if (rank < 0) ctx.fail("the rank of stack's inputs is unknown");
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank + 1);
  const ir::DType t = ctx.out_dtype();
  std::vector<ir::Value*> expanded;
  for (ir::Value* p : parts) expanded.push_back(helpers::unsqueeze(ctx, ctx.cast(p, t), {dim}));
  ctx.out(expanded.size() == 1 ? expanded[0] : ctx.op("Concat", expanded, {{"axis", dim}}));
}

void split_into(SymbolicContext& ctx, const std::vector<int64_t>& sizes, int64_t dim) {
  ctx.out_list(helpers::split(ctx, ctx.in(0), sizes, dim));
}

int64_t dim_length(SymbolicContext& ctx, int64_t dim) { return ctx.sizes(0)[static_cast<size_t>(dim)]; }

// aten::split(self, split_size: int | int[], dim=0), aten::split_with_sizes(self, sizes, dim)
void split(SymbolicContext& ctx) {
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(2), ctx.rank(0));
  if (ctx.arg(1).is_list()) {
    split_into(ctx, ctx.is(1), dim);
    return;
  }
  const int64_t size = ctx.i(1), length = dim_length(ctx, dim);
  if (size <= 0) ctx.fail("split_size must be positive");
  std::vector<int64_t> sizes;
  for (int64_t done = 0; done < length; done += size) sizes.push_back(std::min(size, length - done));
  if (sizes.empty()) sizes.push_back(0);
  split_into(ctx, sizes, dim);
}

// aten::chunk(self, chunks, dim=0): chunks of ceil(length / chunks).
void chunk(SymbolicContext& ctx) {
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(2), ctx.rank(0));
  const int64_t chunks = ctx.i(1), length = dim_length(ctx, dim);
  if (chunks <= 0) ctx.fail("chunks must be positive");
  const int64_t size = (length + chunks - 1) / chunks;
  std::vector<int64_t> sizes;
  for (int64_t done = 0; done < length; done += size) sizes.push_back(std::min(size, length - done));
  if (sizes.empty()) sizes.push_back(0);
  split_into(ctx, sizes, dim);
}

// aten::unbind(self, dim=0)
void unbind(SymbolicContext& ctx) {
  const int64_t dim = helpers::normalize_dim(ctx, ctx.num_args() > 1 ? ctx.i(1) : 0, ctx.rank(0));
  const int64_t length = dim_length(ctx, dim);
  auto parts = helpers::split(ctx, ctx.in(0), std::vector<int64_t>(static_cast<size_t>(length), 1), dim);
  for (auto& p : parts) p = helpers::squeeze(ctx, p, {dim});
  ctx.out_list(parts);
}

}  // namespace

void register_join_split(Registry& r) {
  r.add("aten::cat", 9, cat);
  r.add("aten::concat", 9, cat);
  r.add("aten::concatenate", 9, cat);
  r.add("aten::stack", 9, stack);
  r.add("aten::split", 9, split);
  r.add("aten::split_with_sizes", 9, split);
  r.add("aten::chunk", 9, chunk);
  r.add("aten::unsafe_chunk", 9, chunk);
  r.add("aten::unsafe_split", 9, split);
  r.add("aten::unbind", 9, unbind);
}

}  // namespace torch2onnx::symbolics
