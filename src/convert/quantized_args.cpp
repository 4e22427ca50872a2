#include "convert/quantized_args.h"

#include <set>

#include "symbolics/all.h"

namespace torch2onnx::convert {
namespace {

// Symbolics that take quantized tensors as they are.
bool reads_quantized(const std::string& kind) {
  static const std::set<std::string> kinds = {
      "aten::dequantize",           "aten::int_repr",
      "aten::q_scale",              "aten::q_zero_point",
      "aten::q_per_channel_scales", "aten::q_per_channel_zero_points",
  };
  return kinds.count(kind) != 0;
}

bool quantized(const Arg& a) { return a.kind == Arg::Kind::Tensor && a.value && a.value->quantization(); }

}  // namespace

QuantizedCall::QuantizedCall(const std::string& kind, std::vector<Arg>& args, std::vector<OutputInfo>& outs,
                             ir::Graph* graph, int64_t opset)
    : graph_(graph), opset_(opset) {
  if (reads_quantized(kind)) return;
  SymbolicContext ctx("quantized arguments", {}, {}, graph, opset);
  auto dequantize = [&](Arg& a) {
    if (!quantized(a)) return;
    if (!first_) {
      first_ = a.value->quantization();
      first_example_ = a.qparams;
    }
    a.value = symbolics::dequantize_value(ctx, a.value);
    a.dtype = ir::DType::Float;
    a.qparams.reset();
    active_ = true;
  };
  for (Arg& a : args) {
    dequantize(a);
    for (Arg& e : a.elements) dequantize(e);
  }
  if (!active_) return;
  original_ = outs;
  for (OutputInfo& o : outs) {
    if (!o.quantized) continue;
    o.dtype = ir::DType::Float;
    o.quantized = false;
    o.qparams.reset();
  }
}

ir::Value* QuantizedCall::result(size_t k, ir::Value* v) {
  const OutputInfo& o = original_.at(k);
  if (!o.quantized || v->quantization()) return v;
  SymbolicContext ctx("quantized result", {}, {}, graph_, opset_);
  ir::Quantization q = *first_;
  if (o.qparams && o.qparams != first_example_) {  // fixed by the operator (sigmoid: 1/256, 0)
    q.scale = ctx.const_scalar(ir::DType::Float, static_cast<float>(o.qparams->first));
    q.zero_point = ctx.const_scalar(o.dtype, static_cast<double>(o.qparams->second));
    q.axis = -1;
  }
  return symbolics::quantize_value(ctx, ctx.cast(v, ir::DType::Float), q, o.dtype, o.rank());
}

}  // namespace torch2onnx::convert
