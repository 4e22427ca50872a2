// Sliding windows as columns: im2col (nn.Unfold, F.unfold) and col2im
// (nn.Fold, F.fold; Col2Im from opset 18).
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::Value;

// A 2-D parameter given as one value or two.
std::vector<int64_t> pair(SymbolicContext& ctx, size_t idx) {
  std::vector<int64_t> v = ctx.is(idx);
  if (v.size() == 1) v.push_back(v[0]);
  if (v.size() != 2) ctx.fail("expected two values for argument " + std::to_string(idx));
  return v;
}

// aten::im2col(self, kernel_size, dilation, padding, stride) (nn.Unfold):
// [N, C, H, W] -> [N, C*kh*kw, L] through two Gathers of window positions.
void im2col(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  if (rank != 3 && rank != 4) ctx.fail("im2col takes a 3-D or 4-D input");
  const auto k = pair(ctx, 1), dil = pair(ctx, 2), pad = pair(ctx, 3), st = pair(ctx, 4);
  const bool batched = rank == 4;
  if (!batched) x = helpers::unsqueeze(ctx, x, {0});
  const auto& s = ctx.sizes(0);
  const int64_t c = s[static_cast<size_t>(rank - 3)], h = s[static_cast<size_t>(rank - 2)] + 2 * pad[0],
                w = s[static_cast<size_t>(rank - 1)] + 2 * pad[1];
  const int64_t oh = (h - dil[0] * (k[0] - 1) - 1) / st[0] + 1, ow = (w - dil[1] * (k[1] - 1) - 1) / st[1] + 1;
  if (oh <= 0 || ow <= 0) ctx.fail("im2col: the kernel does not fit the padded input");
  if (pad[0] || pad[1]) x = helpers::pad(ctx, x, {0, 0, pad[0], pad[1], 0, 0, pad[0], pad[1]}, "constant", 0);
  std::vector<int64_t> rows, cols;
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t a = 0; a < k[0]; ++a) rows.push_back(i * st[0] + a * dil[0]);
  for (int64_t j = 0; j < ow; ++j)
    for (int64_t b = 0; b < k[1]; ++b) cols.push_back(j * st[1] + b * dil[1]);
  x = ctx.op("Gather", {x, ctx.constant(ir::Tensor::from_int64s(rows, {oh, k[0]}))}, {{"axis", int64_t{2}}});
  x = ctx.op("Gather", {x, ctx.constant(ir::Tensor::from_int64s(cols, {ow, k[1]}))}, {{"axis", int64_t{4}}});
  // [N, C, oh, kh, ow, kw] -> [N, C, kh, kw, oh, ow]
  x = ctx.op("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 1, 3, 5, 2, 4}}});
  x = helpers::reshape(ctx, x, {0, c * k[0] * k[1], oh * ow});
  if (!batched) x = helpers::squeeze(ctx, x, {0});
  ctx.out(x);
}

// aten::col2im(self, output_size, kernel_size, dilation, padding, stride)
// (nn.Fold): [N, C*kh*kw, L] -> [N, C, H, W], overlapping windows summed.
void col2im_18(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  if (rank != 2 && rank != 3) ctx.fail("col2im takes a 2-D or 3-D input");
  const auto size = pair(ctx, 1), k = pair(ctx, 2), dil = pair(ctx, 3), pad = pair(ctx, 4), st = pair(ctx, 5);
  const bool batched = rank == 3;
  if (!batched) x = helpers::unsqueeze(ctx, x, {0});
  Value* y = ctx.op("Col2Im", {x, ctx.const_ints(size), ctx.const_ints(k)},
                    {{"dilations", dil}, {"pads", std::vector<int64_t>{pad[0], pad[1], pad[0], pad[1]}}, {"strides", st}});
  if (!batched) y = helpers::squeeze(ctx, y, {0});
  ctx.out(y);
}

}  // namespace

void register_fold(Registry& r) {
  r.add("aten::im2col", 9, im2col);
  r.add("aten::col2im", 18, col2im_18);
}

}  // namespace torch2onnx::symbolics
