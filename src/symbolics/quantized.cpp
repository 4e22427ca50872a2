// Quantization: quantize_per_tensor / quantize_per_channel / dequantize as
// QuantizeLinear / DequantizeLinear (opset 10; per-channel axis from 13), and
// fake quantization as a QuantizeLinear + DequantizeLinear pair, clamped to
// [quant_min, quant_max] when that range is narrower than int8/uint8.
//
// A quantized tensor exists only inside the graph (uint8/int8 on the ONNX
// side); dequantize finds its scale and zero point on the QuantizeLinear that
// made it.
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
  if (scalar_type == kQInt32) ctx.fail("torch.qint32 has no ONNX QuantizeLinear form (int8 and uint8 only)");
  ctx.fail("dtype must be torch.quint8 or torch.qint8");
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

ir::Value* quantize(SymbolicContext& ctx, ir::Value* x, ir::Value* s, ir::Value* z, ir::DType q,
                    std::optional<int64_t> axis = std::nullopt) {
  ir::Attributes attrs;
  if (axis) attrs.emplace_back("axis", *axis);
  ir::Value* v = ctx.op("QuantizeLinear", {x, s, z}, attrs);
  v->type().dtype = q;
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

// aten::quantize_per_tensor(self, scale, zero_point, dtype) (numbers or tensors)
void quantize_per_tensor(SymbolicContext& ctx) {
  const ir::DType q = storage_dtype(ctx, ctx.i(3));
  ir::Value* x = ctx.in_as(0, ir::DType::Float);
  ctx.out(quantize(ctx, x, scalar_scale(ctx, 1), scalar_zero_point(ctx, 2, q), q));
}

// aten::quantize_per_channel(self, scales, zero_points, axis, dtype)
void quantize_per_channel(SymbolicContext& ctx) {
  const ir::DType q = storage_dtype(ctx, ctx.i(4));
  const int64_t axis = helpers::normalize_dim(ctx, ctx.i(3), ctx.rank(0));
  ir::Value* x = ctx.in_as(0, ir::DType::Float);
  ir::Value* s = ctx.in_as(1, ir::DType::Float);
  ir::Value* z = ctx.in_as(2, q);
  ctx.out(quantize(ctx, x, s, z, q, axis));
}

// aten::dequantize(self): DequantizeLinear with the parameters of the
// QuantizeLinear the tensor comes from (through layout-only ops for a
// per-tensor quantization).
void dequantize(SymbolicContext& ctx) {
  if (ctx.arg(0).is_list()) ctx.fail("dequantizing a list of tensors is not supported");
  ir::Value* x = ctx.in(0);
  ir::Value* v = x;
  bool moved = false;
  while (true) {
    ir::Node* p = v->producer();
    if (!p) break;
    const std::string& op = p->op_type();
    if (op == "QuantizeLinear") {
      ir::Value* s = p->input(1);
      if (p->has_attr("axis")) {  // per channel
        if (moved) ctx.fail("a per-channel quantized tensor must be dequantized before its layout changes");
        ctx.out(dequantize_linear(ctx, x, s, p->input(2), p->attr_i("axis", 1)));
      } else {
        ctx.out(dequantize_linear(ctx, x, s, p->input(2)));
      }
      return;
    }
    static const char* const kLayout[] = {"Identity", "Reshape", "Transpose", "Squeeze", "Unsqueeze",
                                          "Flatten",  "Slice",   "Expand",    "Gather"};
    bool layout = false;
    for (const char* k : kLayout) layout = layout || op == k;
    if (!layout) break;
    v = p->input(0);
    moved = true;
  }
  ctx.fail("cannot find the quantization parameters of this tensor: only tensors quantized in the model "
           "(quantize_per_tensor / quantize_per_channel) can be dequantized");
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

}  // namespace

void register_quantized(Registry& r) {
  r.add("aten::quantize_per_tensor", 10, quantize_per_tensor);
  r.add("aten::quantize_per_channel", 13, quantize_per_channel);
  r.add("aten::dequantize", 10, dequantize);
  r.add("aten::fake_quantize_per_tensor_affine", 10, fake_quantize_per_tensor);
  r.add("aten::fake_quantize_per_channel_affine", 13, fake_quantize_per_channel);
}

}  // namespace torch2onnx::symbolics
