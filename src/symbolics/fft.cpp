// Discrete Fourier transforms (torch.fft; stft and istft are in stft.cpp).
// Complex tensors are real tensors with a trailing (real, imag) axis (see
// complex.cpp), which is ONNX DFT's layout. One-dimensional transforms along
// an axis are ONNX DFT from opset 17 (axis an attribute; an input from opset
// 20); before 17, a product with a constant DFT matrix (static length along
// the axis: O(n^2), exact to rounding). Transforms here are unnormalized
// ("raw"); the norm ("backward", "ortho", "forward") is one final scale.
#include <algorithm>
#include <cmath>
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"
#include "symbolics/complex_pairs.h"
#include "symbolics/fft_common.h"

namespace torch2onnx::symbolics {
namespace fourier {
namespace {

const double kPi = 3.14159265358979323846;

// Below opset 17 a transform of length n is a product with a 2n x 2n
// constant: refused past 2048 (64 MB in float32) rather than exported huge.
void check_matrix(Fx& f, int64_t n) {
  if (f.backend == Backend::Matrix && n > 2048)
    f.ctx.fail("a DFT of length " + std::to_string(n) + " before opset 17 needs a " + std::to_string(2 * n) + "x" +
               std::to_string(2 * n) + " matrix: export at opset 17 or later (ONNX DFT)");
}

// cos/sin of 2 pi t k / n, with t k reduced mod n first (exact angles).
double angle_of(int64_t t, int64_t k, int64_t n) { return 2 * kPi * static_cast<double>((t * k) % n) / static_cast<double>(n); }

// The permutation moving `axis` of `rank` axes last (`extra` more axes kept after it).
std::vector<int64_t> axis_last(int64_t axis, int64_t rank, int64_t extra) {
  std::vector<int64_t> p;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) p.push_back(d);
  p.push_back(axis);
  for (int64_t e = 0; e < extra; ++e) p.push_back(rank + e);
  return p;
}

// x (axes permuted by p, axis last, `trailing` = 1 for a pair axis) times
// matrix m [rows, cols] over its last `trailing`+1 axes flattened; back to
// `out_last` trailing sizes and the original order.
ir::Value* matrix_along(Fx& f, ir::Value* x, int64_t axis, int64_t rank, int64_t trailing, ir::Tensor m,
                        const std::vector<int64_t>& out_last) {
  SymbolicContext& ctx = f.ctx;
  std::vector<int64_t> p = axis_last(axis, rank, trailing);
  ir::Value* xt = helpers::transpose(ctx, x, p);
  std::vector<int64_t> flat = zeros_shape(rank - 1);
  flat.push_back(-1);
  ir::Value* y = ctx.op("MatMul", {helpers::reshape(ctx, xt, flat), ctx.constant(std::move(m))});
  std::vector<int64_t> shape = zeros_shape(rank - 1);
  shape.insert(shape.end(), out_last.begin(), out_last.end());
  y = helpers::reshape(ctx, y, shape);
  std::vector<int64_t> q = axis_last(axis, rank, static_cast<int64_t>(out_last.size()) - 1);
  return helpers::transpose(ctx, y, helpers::inverse_perm(q));
}

// ONNX DFT of x (DFT's layout, `rank` signal axes then 1 or 2) along axis,
// through a leading batch axis of 1 (DFT-17 counts its axis with a batch).
ir::Value* dft(Fx& f, ir::Value* x, int64_t axis, bool inverse, bool onesided, int64_t n) {
  SymbolicContext& ctx = f.ctx;
  // ONNX Runtime's float32 DFT of a length that is not a power of two loses
  // ~1e-4 relative (n = 1000) where its float64 one is exact to 1e-13: such
  // float32 transforms run in float64, rounded once at the end.
  const bool widen = f.rt == ir::DType::Float && (n & (n - 1)) != 0;
  const ir::DType t = widen ? ir::DType::Double : f.rt;
  ir::Value* xb = helpers::unsqueeze(ctx, ctx.cast(x, t), {0});
  ir::Value* y;
  if (f.backend == Backend::Dft17)
    y = ctx.op("DFT", {xb}, {{"axis", axis + 1}, {"inverse", int64_t{inverse}}, {"onesided", int64_t{onesided}}});
  else
    y = ctx.op("DFT", {xb, ctx.const_int(n), ctx.const_int(axis + 1)},
               {{"inverse", int64_t{inverse}}, {"onesided", int64_t{onesided}}});
  y->type().dtype = t;
  if (inverse) f.scale *= static_cast<double>(n);
  return ctx.cast(helpers::squeeze(ctx, y, {0}), f.rt);
}

}  // namespace

std::vector<int64_t> zeros_shape(int64_t n) { return std::vector<int64_t>(static_cast<size_t>(n), 0); }

// Raw complex DFT of pair x (`rank` complex axes) along axis of length n:
// sum_t x_t e^(-+2 pi i t k / n).
ir::Value* c2c_axis(Fx& f, ir::Value* x, int64_t axis, int64_t rank, int64_t n, bool inverse) {
  if (n == 0) return x;
  check_matrix(f, n);
  if (f.backend != Backend::Matrix) return dft(f, x, axis, inverse, false, n);
  // rows (t, c_in), cols (k, c_out): W = cos -+ i sin
  std::vector<double> m(static_cast<size_t>(4 * n * n));
  const double sgn = inverse ? 1.0 : -1.0;
  for (int64_t t = 0; t < n; ++t)
    for (int64_t k = 0; k < n; ++k) {
      const double c = std::cos(angle_of(t, k, n)), s = sgn * std::sin(angle_of(t, k, n));
      auto at = [&](int64_t ci, int64_t co) -> double& { return m[static_cast<size_t>(((2 * t + ci) * 2 * n) + 2 * k + co)]; };
      at(0, 0) = c;   // re -> re
      at(1, 0) = -s;  // im -> re
      at(0, 1) = s;   // re -> im
      at(1, 1) = c;   // im -> im
    }
  return matrix_along(f, x, axis, rank, 1, ir::Tensor::from_doubles(f.rt, m, {2 * n, 2 * n}), {n, 2});
}

// Raw one-sided DFT of real x along axis (length n): n/2 + 1 frequencies.
ir::Value* r2c_axis(Fx& f, ir::Value* x, int64_t axis, int64_t rank, int64_t n) {
  const int64_t h = n / 2 + 1;
  check_matrix(f, n);
  if (f.backend != Backend::Matrix) return dft(f, helpers::unsqueeze(f.ctx, x, {-1}), axis, false, true, n);
  std::vector<double> m(static_cast<size_t>(n * 2 * h));
  for (int64_t t = 0; t < n; ++t)
    for (int64_t k = 0; k < h; ++k) {
      m[static_cast<size_t>(t * 2 * h + 2 * k)] = std::cos(angle_of(t, k, n));
      m[static_cast<size_t>(t * 2 * h + 2 * k + 1)] = -std::sin(angle_of(t, k, n));
    }
  return matrix_along(f, x, axis, rank, 0, ir::Tensor::from_doubles(f.rt, m, {n, 2 * h}), {h, 2});
}

// Raw inverse of a one-sided spectrum (pair x, n/2 + 1 long along axis) to n
// real values: the Hermitian sum, in which the imaginary parts of the 0 and
// n/2 terms drop out as in PyTorch.
ir::Value* c2r_axis(Fx& f, ir::Value* x, int64_t axis, int64_t rank, int64_t n) {
  SymbolicContext& ctx = f.ctx;
  const int64_t h = n / 2 + 1;
  check_matrix(f, n);
  if (f.backend == Backend::Matrix) {
    std::vector<double> m(static_cast<size_t>(2 * h * n));
    for (int64_t k = 0; k < h; ++k) {
      const double w = (k == 0 || 2 * k == n) ? 1.0 : 2.0;
      for (int64_t t = 0; t < n; ++t) {
        m[static_cast<size_t>((2 * k) * n + t)] = w * std::cos(angle_of(t, k, n));
        m[static_cast<size_t>((2 * k + 1) * n + t)] = -w * std::sin(angle_of(t, k, n));
      }
    }
    return matrix_along(f, x, axis, rank, 1, ir::Tensor::from_doubles(f.rt, m, {2 * h, n}), {n});
  }
  // the full spectrum: X_k for k < h, conj(X_(n-k)) above
  ir::Value* full = x;
  if (n - h > 0) {
    ir::Value* mirrored = helpers::slice(ctx, x, {axis}, {n - h}, {0}, {-1});
    full = ctx.op("Concat", {x, cplx::conj(ctx, mirrored, f.rt)}, {{"axis", axis}});
  }
  return cplx::part(ctx, dft(f, full, axis, true, false, n), 0, rank);
}

ir::Value* scaled(Fx& f, ir::Value* v, double s) {
  s *= f.scale;
  if (s == 1.0) return v;
  return f.ctx.op("Mul", {v, f.ctx.const_scalar(f.rt, s)});
}

// The input as a value of the transform: a pair tensor (complex input or
// one that needs to be) or the real tensor.
ir::Value* input_of(Fx& f, bool want_pair) {
  SymbolicContext& ctx = f.ctx;
  if (cplx::is_complex(ctx.dtype(0))) {
    if (!want_pair) ctx.fail(ctx.kind() + " needs a real input");
    return cplx::pair_in(ctx, 0, f.rt);
  }
  ir::Value* x = ctx.in_as(0, f.rt);
  return want_pair ? cplx::join(ctx, x, nullptr, f.rt, ctx.rank(0)) : x;
}

Fx make(SymbolicContext& ctx, Backend b) { return Fx{ctx, b, cplx::out_real(ctx, 0)}; }

}  // namespace fourier

namespace {

using fourier::Backend;
using fourier::c2c_axis;
using fourier::c2r_axis;
using fourier::Fx;
using fourier::input_of;
using fourier::make;
using fourier::r2c_axis;
using fourier::scaled;

// v with axis `axis` (of `rank` axes) cut or zero-padded from `have` to `want`.
ir::Value* resize_axis(SymbolicContext& ctx, ir::Value* v, int64_t axis, int64_t rank, int64_t have, int64_t want) {
  if (want < have) return helpers::slice(ctx, v, {axis}, {0}, {want});
  if (want > have) {
    std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
    pads[static_cast<size_t>(rank + axis)] = want - have;
    return helpers::pad(ctx, v, pads, "constant", 0.0);
  }
  return v;
}

enum class Norm { Backward, Ortho, Forward };

Norm norm_of(SymbolicContext& ctx, size_t idx) {
  if (ctx.none(idx)) return Norm::Backward;
  const std::string s = ctx.s(idx);
  if (s == "backward") return Norm::Backward;
  if (s == "ortho") return Norm::Ortho;
  if (s == "forward") return Norm::Forward;
  ctx.fail("unknown norm '" + s + "'");
}

// The scale for a transform of N points: forward-direction transforms (fft,
// rfft, hfft) scale by 1 (backward), 1/sqrt(N) (ortho), 1/N (forward);
// inverse-direction ones (ifft, irfft, ihfft) the other way round.
double norm_scale(Norm norm, bool inverse_direction, double points) {
  if (norm == Norm::Ortho) return 1.0 / std::sqrt(points);
  const bool divide = (norm == Norm::Forward) != inverse_direction;
  return divide ? 1.0 / points : 1.0;
}

enum class Kind { Fft, Ifft, Rfft, Irfft, Hfft, Ihfft };

bool inverse_direction(Kind k) { return k == Kind::Ifft || k == Kind::Irfft || k == Kind::Ihfft; }
bool real_output(Kind k) { return k == Kind::Irfft || k == Kind::Hfft; }
bool real_input(Kind k) { return k == Kind::Rfft || k == Kind::Ihfft; }

// A transform of `kind` over `dims` (normalized, distinct) with signal
// sizes `s` (-1: the input's; for irfft/hfft the last is the output length).
void transform(Fx& f, Kind kind, const std::vector<int64_t>& dims, std::vector<int64_t> s, Norm norm,
               bool onesided = true) {
  SymbolicContext& ctx = f.ctx;
  const int64_t r = ctx.rank(0);
  const std::vector<int64_t>& in = ctx.sizes(0);
  const size_t last = dims.size() - 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t have = ctx.static_dim(0, dims[i]);
    if (s[i] == -1) s[i] = (real_output(kind) && i == last) ? 2 * (have - 1) : have;
    if (s[i] < 1) ctx.fail("invalid number of data points (" + std::to_string(s[i]) + ") in " + ctx.kind());
  }
  double points = 1;
  for (int64_t n : s) points *= static_cast<double>(n);
  const double ns = norm_scale(norm, inverse_direction(kind), points);
  if (dims.empty()) ctx.fail("no dims to transform");

  if (kind == Kind::Fft || kind == Kind::Ifft || (real_input(kind) && !onesided)) {
    ir::Value* x = input_of(f, true);
    for (size_t i = 0; i < dims.size(); ++i) {
      x = resize_axis(ctx, x, dims[i], r + 1, in[static_cast<size_t>(dims[i])], s[i]);
      x = c2c_axis(f, x, dims[i], r, s[i], kind == Kind::Ifft || kind == Kind::Ihfft);
    }
    if (kind == Kind::Ihfft) x = cplx::conj(ctx, x, f.rt);  // (ihfft = conj(fft) / n of a real signal)
    return ctx.out(scaled(f, x, ns));
  }
  if (real_input(kind)) {  // rfftn, ihfftn: one-sided along the last dim, then full along the others
    ir::Value* x = input_of(f, false);
    for (size_t i = 0; i < dims.size(); ++i)
      x = resize_axis(ctx, x, dims[i], r, in[static_cast<size_t>(dims[i])], s[i]);
    x = r2c_axis(f, x, dims[last], r, s[last]);
    for (size_t i = 0; i < last; ++i) x = c2c_axis(f, x, dims[i], r, s[i], false);
    if (kind == Kind::Ihfft) x = cplx::conj(ctx, x, f.rt);  // ihfftn(x) = conj(rfftn(x)) for real x
    return ctx.out(scaled(f, x, ns));
  }
  // irfftn, hfftn: full inverse along the other dims, then to real along the last
  ir::Value* x = input_of(f, true);
  if (kind == Kind::Hfft) x = cplx::conj(ctx, x, f.rt);  // hfftn(x) = irfftn(conj(x)) unnormalized
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t want = i == last ? s[i] / 2 + 1 : s[i];
    x = resize_axis(ctx, x, dims[i], r + 1, in[static_cast<size_t>(dims[i])], want);
  }
  for (size_t i = 0; i < last; ++i) x = c2c_axis(f, x, dims[i], r, s[i], true);
  x = c2r_axis(f, x, dims[last], r, s[last]);
  ctx.out(scaled(f, x, ns));
}

// aten::fft_fft / ifft / rfft / irfft / hfft / ihfft(self, n, dim, norm)
void fft1(SymbolicContext& ctx, Backend b, Kind kind) {
  Fx f = make(ctx, b);
  const int64_t r = ctx.rank(0);
  if (r == 0) ctx.fail(ctx.kind() + " needs at least one dimension");
  const int64_t dim = helpers::normalize_dim(ctx, ctx.none(2) ? -1 : ctx.i(2), r);
  const int64_t n = ctx.none(1) ? -1 : ctx.i(1);
  transform(f, kind, {dim}, {n}, norm_of(ctx, 3));
}

// aten::fft_fft2 / fftn ...(self, s, dim, norm): dims and sizes as
// torch.fft resolves them (dim None: the last len(s) dims, or all).
void fftn(SymbolicContext& ctx, Backend b, Kind kind, bool two) {
  Fx f = make(ctx, b);
  const int64_t r = ctx.rank(0);
  std::optional<std::vector<int64_t>> s = ctx.opt_is(1);
  std::vector<int64_t> dims;
  if (!ctx.none(2)) {
    dims = helpers::normalize_dims(ctx, ctx.is(2), r);
  } else if (two) {
    dims = helpers::normalize_dims(ctx, {-2, -1}, r);
  } else if (s) {
    if (static_cast<int64_t>(s->size()) > r) ctx.fail("more sizes than dimensions");
    for (int64_t d = r - static_cast<int64_t>(s->size()); d < r; ++d) dims.push_back(d);
  } else {
    for (int64_t d = 0; d < r; ++d) dims.push_back(d);
  }
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) ctx.fail("dims must be unique");
  if (s && s->size() != dims.size()) ctx.fail("s and dim must have the same length");
  if (dims.empty()) {  // (no dims: fftn of a 0-d tensor is the tensor itself)
    if (real_output(kind) || real_input(kind)) ctx.fail(ctx.kind() + " needs at least one dimension");
    return ctx.out(input_of(f, true));
  }
  transform(f, kind, dims, s ? *s : std::vector<int64_t>(dims.size(), -1), norm_of(ctx, 3));
}

// aten::_fft_r2c(self, dim, normalization, onesided), _fft_c2r(self, dim,
// normalization, last_dim_size), _fft_c2c(self, dim, normalization, forward):
// torch.fft's kernels. normalization: 0 none, 1 1/sqrt(N), 2 1/N.
Norm internal_norm(SymbolicContext& ctx, bool inverse_direction) {
  const int64_t mode = ctx.i(2);
  if (mode == 1) return Norm::Ortho;
  if (mode == 0) return inverse_direction ? Norm::Forward : Norm::Backward;
  if (mode == 2) return inverse_direction ? Norm::Backward : Norm::Forward;
  ctx.fail("unknown normalization mode " + std::to_string(mode));
}
void fft_r2c(SymbolicContext& ctx, Backend b) {
  Fx f = make(ctx, b);
  std::vector<int64_t> dims = helpers::normalize_dims(ctx, ctx.is(1), ctx.rank(0));
  transform(f, Kind::Rfft, dims, std::vector<int64_t>(dims.size(), -1), internal_norm(ctx, false), ctx.b(3));
}
void fft_c2r(SymbolicContext& ctx, Backend b) {
  Fx f = make(ctx, b);
  std::vector<int64_t> dims = helpers::normalize_dims(ctx, ctx.is(1), ctx.rank(0));
  std::vector<int64_t> s(dims.size(), -1);
  s.back() = ctx.i(3);
  transform(f, Kind::Irfft, dims, s, internal_norm(ctx, true));
}
void fft_c2c(SymbolicContext& ctx, Backend b) {
  Fx f = make(ctx, b);
  std::vector<int64_t> dims = helpers::normalize_dims(ctx, ctx.is(1), ctx.rank(0));
  const bool forward = ctx.b(3);
  transform(f, forward ? Kind::Fft : Kind::Ifft, dims, std::vector<int64_t>(dims.size(), -1),
            internal_norm(ctx, !forward));
}

// aten::fft_fftshift / fft_ifftshift(self, dim=None): a roll by n/2 (-n/2)
// along each dim, two slices and a Concat each (static sizes).
void shift(SymbolicContext& ctx, bool inverse) {
  const bool complex = cplx::is_complex(ctx.dtype(0));
  ir::Value* x = complex ? cplx::pair_in(ctx, 0, cplx::out_real(ctx, 0)) : ctx.in(0);
  const int64_t r = ctx.rank(0);
  std::vector<int64_t> dims;
  if (!ctx.none(1)) dims = helpers::normalize_dims(ctx, ctx.is(1), r);
  else
    for (int64_t d = 0; d < r; ++d) dims.push_back(d);
  for (int64_t d : dims) {
    const int64_t n = ctx.static_dim(0, d);
    const int64_t k = inverse ? n - n / 2 : n / 2;  // elements moved to the front
    if (n == 0 || k % n == 0) continue;
    ir::Value* tail = helpers::slice(ctx, x, {d}, {n - k}, {n});
    ir::Value* head = helpers::slice(ctx, x, {d}, {0}, {n - k});
    x = ctx.op("Concat", {tail, head}, {{"axis", d}});
  }
  ctx.out(x);
}

// aten::fft_fftfreq / fft_rfftfreq(n, d, dtype, ...): the sample frequencies,
// a constant of the result's dtype.
void freq(SymbolicContext& ctx, bool onesided) {
  const int64_t n = ctx.i(0);
  const double d = ctx.none(1) ? 1.0 : ctx.f(1);
  std::vector<double> v;
  const int64_t count = onesided ? n / 2 + 1 : n;
  for (int64_t k = 0; k < count; ++k) {
    const int64_t j = (!onesided && k > (n - 1) / 2) ? k - n : k;
    v.push_back(static_cast<double>(j) / (static_cast<double>(n) * d));
  }
  ir::DType t = ctx.out_dtype(0) == ir::DType::Undefined ? ir::DType::Float : ctx.out_dtype(0);
  ctx.out(ctx.constant(ir::Tensor::from_doubles(t, v, {count})));
}

void add_all(Registry& r, int opset, Backend b) {
  using K = Kind;
  const std::pair<const char*, Kind> one[] = {{"fft", K::Fft},   {"ifft", K::Ifft},   {"rfft", K::Rfft},
                                              {"irfft", K::Irfft}, {"hfft", K::Hfft}, {"ihfft", K::Ihfft}};
  for (const auto& [name, kind] : one) {
    const std::string op = std::string("aten::fft_") + name;
    SymbolicFn fn1 = [b, kind = kind](SymbolicContext& ctx) { fft1(ctx, b, kind); };
    SymbolicFn fn2 = [b, kind = kind](SymbolicContext& ctx) { fftn(ctx, b, kind, true); };
    SymbolicFn fnn = [b, kind = kind](SymbolicContext& ctx) { fftn(ctx, b, kind, false); };
    // (the real table for real inputs and outputs: irfft of a real tensor, ...; the complex one otherwise)
    for (auto [suffix, fn] : {std::pair<const char*, SymbolicFn>{"", fn1}, {"2", fn2}, {"n", fnn}}) {
      r.add(op + suffix, opset, fn);
      r.add_complex(op + suffix, opset, fn);
    }
  }
  SymbolicFn r2c = [b](SymbolicContext& ctx) { fft_r2c(ctx, b); };
  SymbolicFn c2r = [b](SymbolicContext& ctx) { fft_c2r(ctx, b); };
  SymbolicFn c2c = [b](SymbolicContext& ctx) { fft_c2c(ctx, b); };
  r.add_complex("aten::_fft_r2c", opset, r2c);
  r.add_complex("aten::_fft_c2r", opset, c2r);
  r.add_complex("aten::_fft_c2c", opset, c2c);
}

}  // namespace

void register_fft(Registry& r) {
  add_all(r, 9, Backend::Matrix);
  add_all(r, 17, Backend::Dft17);
  add_all(r, 20, Backend::Dft20);
  for (bool complex : {false, true}) {
    auto add = [&](const char* op, SymbolicFn fn) { complex ? r.add_complex(op, 9, fn) : r.add(op, 9, fn); };
    add("aten::fft_fftshift", [](SymbolicContext& ctx) { shift(ctx, false); });
    add("aten::fft_ifftshift", [](SymbolicContext& ctx) { shift(ctx, true); });
  }
  r.add("aten::fft_fftfreq", 9, [](SymbolicContext& ctx) { freq(ctx, false); });
  r.add("aten::fft_rfftfreq", 9, [](SymbolicContext& ctx) { freq(ctx, true); });
}

}  // namespace torch2onnx::symbolics
