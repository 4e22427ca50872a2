// Short-time Fourier transforms: aten::stft and aten::istft, on the
// one-dimensional transforms of fft.cpp (ONNX DFT from opset 17, a DFT matrix
// before). Complex values are pair tensors with a trailing (real, imag) axis.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "symbolic/helpers.h"
#include "symbolics/all.h"
#include "symbolics/complex_pairs.h"
#include "symbolics/fft_common.h"

namespace torch2onnx::symbolics {
namespace {

using fourier::Backend;
using fourier::c2c_axis;
using fourier::c2r_axis;
using fourier::Fx;
using fourier::input_of;
using fourier::make;
using fourier::r2c_axis;
using fourier::scaled;
using fourier::zeros_shape;

// The window of an stft/istft as n_fft values (zero-padded on both sides
// from win_length, as PyTorch centers it), or nullptr for a rectangular one.
ir::Value* window_of(Fx& f, size_t idx, int64_t n_fft, int64_t win_length) {
  SymbolicContext& ctx = f.ctx;
  if (win_length > n_fft || win_length <= 0) ctx.fail("win_length must be in (0, n_fft]");
  ir::Value* w = ctx.none(idx) ? nullptr : ctx.in_as(idx, f.rt);
  if (!w) {
    if (win_length == n_fft) return nullptr;
    w = ctx.constant(ir::Tensor::from_doubles(f.rt, std::vector<double>(static_cast<size_t>(win_length), 1.0),
                                              {win_length}));
  } else if (ctx.sizes(idx).size() != 1 || ctx.sizes(idx)[0] != win_length) {
    ctx.fail("the window must be 1-D of win_length");
  }
  const int64_t left = (n_fft - win_length) / 2;
  if (win_length == n_fft) return w;
  return helpers::pad(ctx, w, {left, n_fft - win_length - left}, "constant", 0.0);
}

// aten::stft(self, n_fft, hop_length, win_length, window, normalized,
// onesided, return_complex[, align_to_window]) and stft.center (center,
// pad_mode after window): frames (a Gather of constant indices) times the
// window, one-sided (or full) DFT along them, [.., freq, frames] (+ pair).
void stft(SymbolicContext& ctx, Backend b) {
  Fx f = make(ctx, b);
  const bool with_center = ctx.num_args() >= 11;
  const size_t o = with_center ? 2 : 0;  // (center, pad_mode shift the later arguments)
  if (cplx::is_complex(ctx.dtype(0))) ctx.fail("stft of a complex signal is not supported");
  const int64_t r = ctx.rank(0);
  if (r != 1 && r != 2) ctx.fail("stft needs a 1-D or 2-D (batched) signal");
  const int64_t n_fft = ctx.i(1);
  const int64_t hop = ctx.none(2) ? n_fft / 4 : ctx.i(2);
  const int64_t win_length = ctx.none(3) ? n_fft : ctx.i(3);
  const bool normalized = !ctx.none(5 + o) && ctx.b(5 + o);
  const bool onesided = ctx.none(6 + o) ? true : ctx.b(6 + o);
  if (ctx.num_args() > 8 + o && !ctx.none(8 + o) && ctx.b(8 + o)) ctx.fail("align_to_window=True is not supported");
  if (hop <= 0) ctx.fail("hop_length must be positive");
  ir::Value* x = ctx.in_as(0, f.rt);
  int64_t length = ctx.static_dim(0, -1);
  if (with_center && ctx.b(5)) {
    const std::string mode = ctx.s(6);
    const std::string onnx_mode = mode == "reflect" ? "reflect" : mode == "replicate" ? "edge" : mode == "constant" ? "constant" : "";
    if (onnx_mode.empty()) ctx.fail("stft pad_mode '" + mode + "' is not supported");
    std::vector<int64_t> pads(static_cast<size_t>(2 * r), 0);
    pads[static_cast<size_t>(r - 1)] = pads[static_cast<size_t>(2 * r - 1)] = n_fft / 2;
    x = helpers::pad(ctx, x, pads, onnx_mode, 0.0);
    length += 2 * (n_fft / 2);
  }
  if (n_fft <= 0 || n_fft > length) ctx.fail("n_fft must be in (0, signal length]");
  const int64_t frames = 1 + (length - n_fft) / hop;
  std::vector<int64_t> idx;
  for (int64_t k = 0; k < frames; ++k)
    for (int64_t t = 0; t < n_fft; ++t) idx.push_back(k * hop + t);
  ir::Value* fr = ctx.op("Gather", {x, ctx.constant(ir::Tensor::from_int64s(idx, {frames, n_fft}))},
                         {{"axis", r - 1}});  // [.., frames, n_fft]
  if (ir::Value* w = window_of(f, 4, n_fft, win_length)) fr = ctx.op("Mul", {fr, w});
  const int64_t fr_rank = r + 1;
  ir::Value* y = onesided ? r2c_axis(f, fr, fr_rank - 1, fr_rank, n_fft)
                          : c2c_axis(f, cplx::join(ctx, fr, nullptr, f.rt, fr_rank), fr_rank - 1, fr_rank, n_fft, false);
  y = scaled(f, y, normalized ? 1.0 / std::sqrt(static_cast<double>(n_fft)) : 1.0);
  std::vector<int64_t> perm;  // [.., frames, freq, 2] -> [.., freq, frames, 2]
  for (int64_t d = 0; d < fr_rank - 2; ++d) perm.push_back(d);
  perm.insert(perm.end(), {fr_rank - 1, fr_rank - 2, fr_rank});
  ctx.out(helpers::transpose(ctx, y, perm));
}

// Overlap-add of frames [.., frames, n_fft] (`lead` leading axes) with hop:
// [.., (frames - 1) hop + n_fft]. With g = gcd(n_fft, hop), each frame is
// n_fft/g blocks of g; block j of frame k lands on output block k hop/g + j:
// column j of the blocks, spread hop/g apart (zeros between) and shifted by j
// blocks, summed over j. Slices, pads and adds (any dtype, opset 9).
ir::Value* overlap_add(SymbolicContext& ctx, ir::Value* frames_v, int64_t lead, int64_t frames, int64_t n_fft,
                       int64_t hop) {
  const int64_t g = std::gcd(n_fft, hop), blocks = n_fft / g, stride = hop / g;
  const int64_t out_blocks = (frames - 1) * stride + blocks;
  std::vector<int64_t> shape = zeros_shape(lead);
  shape.insert(shape.end(), {frames, blocks, g});
  ir::Value* x = helpers::reshape(ctx, frames_v, shape);  // [.., frames, blocks, g]
  const int64_t rank = lead + 3;
  ir::Value* sum = nullptr;
  for (int64_t j = 0; j < blocks; ++j) {
    ir::Value* col = helpers::slice(ctx, x, {lead + 1}, {j}, {j + 1});  // [.., frames, 1, g]
    if (stride > 1) {  // [.., frames, stride, g]: the block then zeros
      std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
      pads[static_cast<size_t>(rank + lead + 1)] = stride - 1;
      col = helpers::pad(ctx, col, pads, "constant", 0.0);
    }
    std::vector<int64_t> flat = zeros_shape(lead);
    flat.insert(flat.end(), {frames * stride, g});
    col = helpers::reshape(ctx, col, flat);  // [.., frames stride, g]: frame k's block at k stride
    const int64_t have = frames * stride;
    int64_t after = out_blocks - j - have;  // (negative: the last frame's trailing zeros run past the end)
    if (after < 0) col = helpers::slice(ctx, col, {lead}, {0}, {have + after}), after = 0;
    std::vector<int64_t> pads(static_cast<size_t>(2 * (lead + 2)), 0);
    pads[static_cast<size_t>(lead)] = j;
    pads[static_cast<size_t>(lead + 2 + lead)] = after;
    col = helpers::pad(ctx, col, pads, "constant", 0.0);
    sum = sum ? ctx.op("Add", {sum, col}) : col;
  }
  std::vector<int64_t> out = zeros_shape(lead);
  out.push_back(out_blocks * g);
  return helpers::reshape(ctx, sum, out);
}

// aten::istft(self, n_fft, hop_length, win_length, window, center,
// normalized, onesided, length, return_complex): per frame the inverse DFT
// times the window, overlap-added and divided by the overlap-added squared
// window, trimmed by n_fft/2 on each side when centered.
void istft(SymbolicContext& ctx, Backend b) {
  Fx f = make(ctx, b);
  if (!ctx.none(9) && ctx.b(9)) ctx.fail("istft with return_complex=True is not supported");
  const int64_t r = ctx.rank(0);
  if (r != 2 && r != 3) ctx.fail("istft needs a 2-D or 3-D (batched) spectrum");
  const int64_t n_fft = ctx.i(1);
  const int64_t hop = ctx.none(2) ? n_fft / 4 : ctx.i(2);
  const int64_t win_length = ctx.none(3) ? n_fft : ctx.i(3);
  const bool center = ctx.none(5) ? true : ctx.b(5);
  const bool normalized = !ctx.none(6) && ctx.b(6);
  const int64_t bins = ctx.static_dim(0, -2), frames = ctx.static_dim(0, -1);
  const bool onesided = ctx.none(7) ? bins != n_fft : ctx.b(7);
  if (hop <= 0 || frames == 0) ctx.fail("istft needs a positive hop_length and at least one frame");
  if (bins != (onesided ? n_fft / 2 + 1 : n_fft)) ctx.fail("istft: the number of frequencies does not match n_fft");
  ir::Value* x = input_of(f, true);
  std::vector<int64_t> perm;  // [.., freq, frames, 2] -> [.., frames, freq, 2]
  for (int64_t d = 0; d < r - 2; ++d) perm.push_back(d);
  perm.insert(perm.end(), {r - 1, r - 2, r});
  x = helpers::transpose(ctx, x, perm);
  ir::Value* fr = onesided ? c2r_axis(f, x, r - 1, r, n_fft)
                           : cplx::part(ctx, c2c_axis(f, x, r - 1, r, n_fft, true), 0, r);  // [.., frames, n_fft]
  const double s = (normalized ? std::sqrt(static_cast<double>(n_fft)) : 1.0) / static_cast<double>(n_fft);
  fr = scaled(f, fr, s);
  f.scale = 1.0;
  ir::Value* w = window_of(f, 4, n_fft, win_length);
  if (!w) w = ctx.constant(ir::Tensor::from_doubles(f.rt, std::vector<double>(static_cast<size_t>(n_fft), 1.0), {n_fft}));
  fr = ctx.op("Mul", {fr, w});
  const int64_t lead = r - 2;
  ir::Value* y = overlap_add(ctx, fr, lead, frames, n_fft, hop);
  ir::Value* w2 = ctx.op("Expand", {ctx.op("Mul", {w, w}), ctx.const_ints({frames, n_fft})});
  ir::Value* env = overlap_add(ctx, w2, 0, frames, n_fft, hop);
  const int64_t full = (frames - 1) * hop + n_fft;
  const int64_t start = center ? n_fft / 2 : 0;
  int64_t end = center ? full - n_fft / 2 : full;
  if (!ctx.none(8)) end = start + ctx.i(8);
  const int64_t stop = std::min(end, full);
  y = helpers::slice(ctx, y, {lead}, {start}, {stop});
  env = helpers::slice(ctx, env, {0}, {start}, {stop});
  y = ctx.op("Div", {y, env});
  if (end > full) {  // (a longer length: zeros after the signal)
    std::vector<int64_t> pads(static_cast<size_t>(2 * (lead + 1)), 0);
    pads.back() = end - full;
    y = helpers::pad(ctx, y, pads, "constant", 0.0);
  }
  ctx.out(y);
}

}  // namespace

void register_stft(Registry& r) {
  for (const auto& [opset, b] : {std::pair{9, Backend::Matrix}, {17, Backend::Dft17}, {20, Backend::Dft20}}) {
    SymbolicFn st = [b = b](SymbolicContext& ctx) { stft(ctx, b); };
    SymbolicFn ist = [b = b](SymbolicContext& ctx) { istft(ctx, b); };
    r.add("aten::stft", opset, st);  // (return_complex=False: a real result)
    r.add_complex("aten::stft", opset, st);
    r.add_complex("aten::istft", opset, ist);
  }
}

}  // namespace torch2onnx::symbolics
