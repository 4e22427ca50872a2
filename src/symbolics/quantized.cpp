// Quantization: quantize_per_tensor / quantize_per_channel / dequantize as
// QuantizeLinear / DequantizeLinear (opset 10; per-channel axis from 13), and
// fake quantization as a QuantizeLinear + DequantizeLinear pair, clamped to
// [quant_min, quant_max] when that range is narrower than int8/uint8.
//
// A quantized tensor is its stored integers (uint8, int8, int32) on the ONNX
// side, the value carrying its scale and zero point (ir::Quantization): the
// symbolics that make one set them, dequantize and q_scale read them. Other
// operators on quantized tensors see them dequantized (convert/quantized_args).
#include <cmath>
#include <optional>
#include <string>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// c10::ScalarType codes of the quantized dtypes.
constexpr int64_t kQInt8 = 12, kQUInt8 = 13, kQInt32 = 14;

// The ONNX storage dtype of a PyTorch quantized dtype.
ir::DType storage_dtype(SymbolicContext& ctx, int64_t scalar_type) {
  if (scalar_type == kQUInt8) return ir::DType::UInt8;
  if (scalar_type == kQInt8) return ir::DType::Int8;
  if (scalar_type == kQInt32) return ir::DType::Int32;
  ctx.fail("dtype must be torch.quint8, torch.qint8 or torch.qint32");
}

// The ONNX dtype holding [qmin, qmax].
ir::DType range_dtype(SymbolicContext& ctx, int64_t qmin, int64_t qmax) {
  if (qmin > qmax) ctx.fail("quant_min must not exceed quant_max");
  if (qmin >= 0 && qmax <= 255) return ir::DType::UInt8;
  if (qmin >= -128 && qmax <= 127) return ir::DType::Int8;
  ctx.fail("(quant_min, quant_max) = (" + std::to_string(qmin) + ", " + std::to_string(qmax) +
           ") does not fit in int8 or uint8, the only types of ONNX QuantizeLinear");
}

// A per-tensor scale as a float32 scalar.
ir::Value* scalar_scale(SymbolicContext& ctx, size_t idx) {
  ir::Value* s = ctx.in_as(idx, ir::DType::Float);
  if (ctx.arg(idx).is_tensor() && ctx.rank(idx) > 0) s = helpers::reshape(ctx, s, {});
  return s;
}

// A per-tensor zero point as a scalar of dtype q.
ir::Value* scalar_zero_point(SymbolicContext& ctx, size_t idx, ir::DType q) {
  const Arg& a = ctx.arg(idx);
  ir::Value* z = ctx.in_as(idx, q);  // zero points hold whole numbers, also in float tensors
  if (a.is_tensor() && ctx.rank(idx) > 0) z = helpers::reshape(ctx, z, {});
  return z;
}

// Shapes a per-channel parameter (1-D along `axis`) to broadcast against a tensor of `rank`.
ir::Value* along_axis(SymbolicContext& ctx, ir::Value* p, int64_t axis, int64_t rank) {
  if (axis == rank - 1) return p;
  std::vector<int64_t> shape(static_cast<size_t>(rank - axis), 1);
  shape[0] = -1;
  return helpers::reshape(ctx, p, shape);
}

ir::Value* quantize(SymbolicContext& ctx, ir::Value* x, ir::Value* s, ir::Value* z, ir::DType q,
                    std::optional<int64_t> axis = std::nullopt, int64_t rank = 0) {
  ir::Value* v;
  if (q == ir::DType::Int32) {
    // QuantizeLinear writes int8/uint8 only: round(x / s) + z, saturated, as int32.
    ir::Value* sb = axis ? along_axis(ctx, s, *axis, rank) : s;
    ir::Value* zb = ctx.cast(axis ? along_axis(ctx, z, *axis, rank) : z, ir::DType::Float);
    ir::Value* r = ctx.op("Add", {helpers::round_half_even(ctx, ctx.op("Div", {x, sb})), zb});
    r = helpers::clip(ctx, r, -2147483648.0, 2147483520.0);  // (the largest float32 below 2^31)
    v = ctx.cast(r, ir::DType::Int32);
  } else {
    ir::Attributes attrs;
    if (axis) attrs.emplace_back("axis", *axis);
    v = ctx.op("QuantizeLinear", {x, s, z}, attrs);
    v->type().dtype = q;
  }
  v->set_quantization(ir::Quantization{s, z, axis ? *axis : -1});
  return v;
}

ir::Value* dequantize_linear(SymbolicContext& ctx, ir::Value* v, ir::Value* s, ir::Value* z,
                             std::optional<int64_t> axis = std::nullopt) {
  ir::Attributes attrs;
  if (axis) attrs.emplace_back("axis", *axis);
  ir::Value* r = ctx.op("DequantizeLinear", {v, s, z}, attrs);
  r->type().dtype = ir::DType::Float;
  return r;
}

const ir::Quantization& quantization_of(SymbolicContext& ctx, size_t idx) {
  if (!ctx.arg(idx).is_tensor() || !ctx.in(idx)->quantization())
    ctx.fail("argument " + std::to_string(idx) + " is not a quantized tensor");
  return *ctx.in(idx)->quantization();
}

// aten::quantize_per_tensor(self, scale, zero_point, dtype) (numbers or tensors)
void quantize_per_tensor(SymbolicContext& ctx) {
  const ir::DType q = storage_dtype(ctx, ctx.i(3));
  ir::Value* x = ctx.in_as(0, ir::DType::Float);
  ctx.out(quantize(ctx, x, scalar_scale(ctx, 1), scalar_zero_point(ctx, 2, q), q));
}

// aten::quantize_per_channel(self, scales, zero_points, axis, dtype)
void quantize_per_channel(SymbolicContext& ctx) {
  const ir::DType q = storage_dtype(ctx, ctx.i(4));
  const int64_t rank = ctx.rank(0);
  const int64_t axis = helpers::normalize_dim(ctx, ctx.i(3), rank);
  ir::Value* x = ctx.in_as(0, ir::DType::Float);
  ir::Value* s = ctx.in_as(1, ir::DType::Float);
  ir::Value* z = ctx.in_as(2, q);
  if (q != ir::DType::Int32 && ctx.opset() < 13) ctx.fail("per-channel QuantizeLinear needs opset 13 or above");
  ctx.out(quantize(ctx, x, s, z, q, axis, rank));
}

// aten::dequantize(self): DequantizeLinear with the tensor's quantization.
void dequantize(SymbolicContext& ctx) {
  if (ctx.arg(0).is_list()) ctx.fail("dequantizing a list of tensors is not supported");
  if (!ctx.in(0)->quantization()) {  // dequantize of a float tensor returns it
    helpers::pass_through(ctx);
    return;
  }
  ctx.out(dequantize_value(ctx, ctx.in(0)));
}

// aten::_make_per_tensor_quantized_tensor(self, scale, zero_point): the
// integers in `self` as a quantized tensor.
void make_per_tensor_quantized(SymbolicContext& ctx) {
  const ir::DType q = ctx.dtype(0);
  ir::Value* v = ctx.op("Identity", {ctx.in(0)});
  v->set_quantization(ir::Quantization{scalar_scale(ctx, 1), scalar_zero_point(ctx, 2, q), -1});
  ctx.out(v);
}

// aten::_make_per_channel_quantized_tensor(self, scale, zero_point, axis)
void make_per_channel_quantized(SymbolicContext& ctx) {
  const ir::DType q = ctx.dtype(0);
  const int64_t axis = helpers::normalize_dim(ctx, ctx.i(3), ctx.rank(0));
  ir::Value* v = ctx.op("Identity", {ctx.in(0)});
  v->set_quantization(ir::Quantization{ctx.in_as(1, ir::DType::Float), ctx.in_as(2, q), axis});
  ctx.out(v);
}

// aten::int_repr(self): the stored integers.
void int_repr(SymbolicContext& ctx) {
  quantization_of(ctx, 0);
  ctx.out(ctx.op("Identity", {ctx.in(0)}));
}

// aten::q_scale / q_zero_point (per tensor), q_per_channel_scales /
// q_per_channel_zero_points: the tensor's scale (float64) or zero point (int64).
void quantization_parameter(SymbolicContext& ctx, bool per_channel, bool scale) {
  const ir::Quantization& q = quantization_of(ctx, 0);
  if (q.per_channel() != per_channel)
    ctx.fail(ctx.kind().substr(ctx.kind().find("::") + 2) + " of a " + (per_channel ? "per-tensor" : "per-channel") +
             " quantized tensor");
  ctx.out(scale ? ctx.cast(q.scale, ir::DType::Double) : ctx.cast(q.zero_point, ir::DType::Int64));
}

// Clamps a dequantized value to [(qmin - zp) * scale, (qmax - zp) * scale]
// (per channel: bounds shaped to broadcast along `axis`).
ir::Value* clamp_range(SymbolicContext& ctx, ir::Value* y, size_t scale_idx, size_t zp_idx, int64_t qmin,
                       int64_t qmax, ir::DType q, std::optional<int64_t> axis, int64_t rank) {
  const int64_t lo_q = q == ir::DType::UInt8 ? 0 : -128;
  const int64_t hi_q = q == ir::DType::UInt8 ? 255 : 127;
  if (qmin == lo_q && qmax == hi_q) return y;
  const Arg& sa = ctx.arg(scale_idx);
  const Arg& za = ctx.arg(zp_idx);
  if (!axis && sa.is_scalar() && sa.constant && za.is_scalar() && za.constant) {
    const double s = static_cast<float>(ctx.f(scale_idx));
    const double z = static_cast<double>(ctx.i(zp_idx));
    ir::Value* r = y;
    if (qmax < hi_q) r = ctx.op("Min", {r, ctx.const_scalar(ir::DType::Float, (static_cast<double>(qmax) - z) * s)});
    if (qmin > lo_q) r = ctx.op("Max", {r, ctx.const_scalar(ir::DType::Float, (static_cast<double>(qmin) - z) * s)});
    return r;
  }
  ir::Value* s = ctx.in_as(scale_idx, ir::DType::Float);
  ir::Value* z = ctx.in_as(zp_idx, ir::DType::Float);
  if (axis) {
    std::vector<int64_t> shape(static_cast<size_t>(rank - *axis), 1);
    shape[0] = -1;
    s = helpers::reshape(ctx, s, shape);
    z = helpers::reshape(ctx, z, shape);
  }
  auto bound = [&](int64_t qv) {
    return ctx.op("Mul", {ctx.op("Sub", {ctx.const_scalar(ir::DType::Float, static_cast<double>(qv)), z}), s});
  };
  ir::Value* r = y;
  if (qmax < hi_q) r = ctx.op("Min", {r, bound(qmax)});
  if (qmin > lo_q) r = ctx.op("Max", {r, bound(qmin)});
  return r;
}

// aten::fake_quantize_per_tensor_affine(self, scale, zero_point, quant_min, quant_max)
void fake_quantize_per_tensor(SymbolicContext& ctx) {
  const int64_t qmin = ctx.i(3), qmax = ctx.i(4);
  const ir::DType q = range_dtype(ctx, qmin, qmax);
  const ir::DType t = ctx.dtype(0);
  ir::Value* x = ctx.in_as(0, ir::DType::Float);
  ir::Value* s = scalar_scale(ctx, 1);
  ir::Value* z = scalar_zero_point(ctx, 2, q);
  ir::Value* y = dequantize_linear(ctx, quantize(ctx, x, s, z, q), s, z);
  y = clamp_range(ctx, y, 1, 2, qmin, qmax, q, std::nullopt, ctx.rank(0));
  ctx.out(ctx.cast(y, t));
}

// aten::fake_quantize_per_channel_affine(self, scale, zero_point, axis, quant_min, quant_max)
void fake_quantize_per_channel(SymbolicContext& ctx) {
  const int64_t qmin = ctx.i(4), qmax = ctx.i(5);
  const ir::DType q = range_dtype(ctx, qmin, qmax);
  const ir::DType t = ctx.dtype(0);
  const int64_t rank = ctx.rank(0);
  const int64_t axis = helpers::normalize_dim(ctx, ctx.i(3), rank);
  ir::Value* x = ctx.in_as(0, ir::DType::Float);
  ir::Value* s = ctx.in_as(1, ir::DType::Float);
  ir::Value* z = ctx.in_as(2, q);
  ir::Value* y = dequantize_linear(ctx, quantize(ctx, x, s, z, q, axis), s, z, axis);
  y = clamp_range(ctx, y, 1, 2, qmin, qmax, q, axis, rank);
  ctx.out(ctx.cast(y, t));
}

// quantized::add_scalar(qa, b) / mul_scalar(qa, b) / relu6(qx, inplace): the
// float computation; the converter dequantizes qa and quantizes the result
// with the scale and zero point PyTorch's kernel chose (convert/quantized_args).
void add_scalar(SymbolicContext& ctx) { ctx.out(ctx.op("Add", {ctx.in(0), ctx.in_as(1, ir::DType::Float)})); }
void mul_scalar(SymbolicContext& ctx) { ctx.out(ctx.op("Mul", {ctx.in(0), ctx.in_as(1, ir::DType::Float)})); }
void relu6(SymbolicContext& ctx) { ctx.out(helpers::clip(ctx, ctx.in(0), 0.0, 6.0)); }

}  // namespace

ir::Value* dequantize_value(SymbolicContext& ctx, ir::Value* v) {
  const ir::Quantization& q = *v->quantization();
  if (!q.per_channel()) return dequantize_linear(ctx, v, q.scale, q.zero_point);
  // Before 13 DequantizeLinear has no axis. (Arithmetic instead would fold
  // the weights to float, and ONNX Runtime's optimizer then requantizes them
  // with opset 11 operators, whatever the model's opset.)
  if (ctx.opset() < 13)
    ctx.fail("per-channel quantized tensors (e.g. weights quantized per output channel, fbgemm's default) need "
             "opset 13 or above (DequantizeLinear's axis)");
  return dequantize_linear(ctx, v, q.scale, q.zero_point, q.axis);
}

ir::Value* quantize_value(SymbolicContext& ctx, ir::Value* x, const ir::Quantization& q, ir::DType storage,
                          int64_t rank) {
  if (q.per_channel() && storage != ir::DType::Int32 && ctx.opset() < 13)
    ctx.fail("per-channel QuantizeLinear needs opset 13 or above");
  return quantize(ctx, x, q.scale, q.zero_point, storage, q.per_channel() ? std::optional<int64_t>(q.axis) : std::nullopt,
                  rank);
}

void register_quantized(Registry& r) {
  r.add("aten::quantize_per_tensor", 10, quantize_per_tensor);
  r.add("aten::quantize_per_channel", 10, quantize_per_channel);  // (int32 by arithmetic; int8/uint8 from 13)
  r.add("aten::dequantize", 10, dequantize);
  r.add("aten::_make_per_tensor_quantized_tensor", 10, make_per_tensor_quantized);
  r.add("aten::_make_per_channel_quantized_tensor", 10, make_per_channel_quantized);
  r.add("aten::int_repr", 10, int_repr);
  r.add("aten::q_scale", 10, [](SymbolicContext& ctx) { quantization_parameter(ctx, false, true); });
  r.add("aten::q_zero_point", 10, [](SymbolicContext& ctx) { quantization_parameter(ctx, false, false); });
  r.add("aten::q_per_channel_scales", 10, [](SymbolicContext& ctx) { quantization_parameter(ctx, true, true); });
  r.add("aten::q_per_channel_zero_points", 10, [](SymbolicContext& ctx) { quantization_parameter(ctx, true, false); });
  r.add("quantized::add_scalar", 10, add_scalar);
  r.add("quantized::mul_scalar", 10, mul_scalar);
  r.add("quantized::relu6", 10, relu6);
  r.add("aten::fake_quantize_per_tensor_affine", 10, fake_quantize_per_tensor);
  r.add("aten::fake_quantize_per_channel_affine", 13, fake_quantize_per_channel);
}

}  // namespace torch2onnx::symbolics
