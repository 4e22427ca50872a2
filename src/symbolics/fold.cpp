// Sliding windows as columns: im2col (nn.Unfold, F.unfold) and col2im
// (nn.Fold, F.fold: Col2Im from opset 18, a ConvTranspose before).
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
  for (int64_t d = rank - 3; d < rank; ++d) ctx.static_dim(0, d);  // (window positions are constants)
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
  // (ONNX Runtime's Col2Im has a float32 kernel only)
  Value* y = ctx.op("Col2Im", {ctx.cast(x, ir::DType::Float), ctx.const_ints(size), ctx.const_ints(k)},
                    {{"dilations", dil}, {"pads", std::vector<int64_t>{pad[0], pad[1], pad[0], pad[1]}}, {"strides", st}});
  if (!batched) y = helpers::squeeze(ctx, y, {0});
  ctx.out(ctx.cast(y, ctx.dtype(0)));
}

// col2im before opset 18: the adjoint of im2col is a grouped ConvTranspose
// whose kernel puts column row (c, a, b) at window offset (a, b) of channel
// c: out[c, i*s + a*d, j*s + b*d] += col[c*kh*kw + a*kw + b, i*ow + j]. It
// runs unpadded; the padded image is then padded at its end to its full size
// (windows need not reach the last rows) and the padding sliced off.
void col2im_9(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  if (rank != 2 && rank != 3) ctx.fail("col2im takes a 2-D or 3-D input");
  const auto size = pair(ctx, 1), k = pair(ctx, 2), dil = pair(ctx, 3), pad = pair(ctx, 4), st = pair(ctx, 5);
  const bool batched = rank == 3;
  const auto& s = ctx.sizes(0);
  ctx.static_dim(0, rank - 2), ctx.static_dim(0, rank - 1);  // (window positions are constants)
  const int64_t kk = k[0] * k[1], rows = s[static_cast<size_t>(rank - 2)], L = s[static_cast<size_t>(rank - 1)];
  if (rows % kk != 0) ctx.fail("col2im: the input's dim -2 must be divisible by the kernel's size");
  const int64_t c = rows / kk, H = size[0] + 2 * pad[0], W = size[1] + 2 * pad[1];
  const int64_t oh = (H - dil[0] * (k[0] - 1) - 1) / st[0] + 1, ow = (W - dil[1] * (k[1] - 1) - 1) / st[1] + 1;
  if (oh <= 0 || ow <= 0 || oh * ow != L)
    ctx.fail("col2im: the input's last dim (" + std::to_string(L) + ") is not the number of windows (" +
             std::to_string(std::max<int64_t>(oh, 0) * std::max<int64_t>(ow, 0)) + ")");
  if (!batched) x = helpers::unsqueeze(ctx, x, {0});
  x = helpers::reshape(ctx, x, {0, rows, oh, ow});
  std::vector<double> w(static_cast<size_t>(rows * kk), 0.0);  // [C*kk, 1, kh, kw]
  for (int64_t r = 0; r < rows; ++r) w[static_cast<size_t>(r * kk + r % kk)] = 1.0;
  // (ONNX Runtime's ConvTranspose computes in float32: other dtypes go through it)
  const ir::DType t = ctx.dtype(0);
  x = ctx.cast(x, ir::DType::Float);
  Value* kernel = ctx.constant(ir::Tensor::from_doubles(ir::DType::Float, w, {rows, 1, k[0], k[1]}));
  Value* y = ctx.op("ConvTranspose", {x, kernel},
                    {{"dilations", dil}, {"group", c}, {"kernel_shape", k}, {"strides", st}});
  const int64_t full_h = st[0] * (oh - 1) + dil[0] * (k[0] - 1) + 1, full_w = st[1] * (ow - 1) + dil[1] * (k[1] - 1) + 1;
  if (full_h < H || full_w < W) y = helpers::pad(ctx, y, {0, 0, 0, 0, 0, 0, H - full_h, W - full_w}, "constant", 0);
  if (pad[0] || pad[1]) y = helpers::slice(ctx, y, {2, 3}, {pad[0], pad[1]}, {pad[0] + size[0], pad[1] + size[1]});
  if (!batched) y = helpers::squeeze(ctx, y, {0});
  ctx.out(ctx.cast(y, t));
}

}  // namespace

void register_fold(Registry& r) {
  r.add("aten::im2col", 9, im2col);
  r.add("aten::col2im", 9, col2im_9);
  r.add("aten::col2im", 18, col2im_18);
}

}  // namespace torch2onnx::symbolics
