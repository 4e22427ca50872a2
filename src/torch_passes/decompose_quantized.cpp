// Quantized models (torch.ao.quantization's convert, eager or FX) compute with
// quantized:: kernels on quantized tensors, their weights packed into backend
// objects (Conv2dPackedParamsBase, LinearPackedParamsBase). ONNX writes
// quantization in QDQ form: DequantizeLinear -> the float operator ->
// QuantizeLinear, weights stored as integers with their scales. This pass
// rewrites each quantized:: kernel into that form with aten operators, which
// the example run still runs and the existing symbolics convert:
//
//   quantized::conv2d_relu(qx, packed, scale, zero_point)
//     -> quantize_per_tensor(relu(conv2d(dequantize(qx), dequantize(W), dequantize(B), ...)),
//                            scale, zero_point, qx.dtype)
//
// W: the packed weight, a quantized tensor constant (its integers are what the
// ONNX model stores). B: the float bias quantized to int32 at q_scale(qx) * the weight's scale, the
// form of torch.onnx and of ONNX's QLinearConv (ONNX Runtime fuses the
// pattern into QLinearConv / QGemm).
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/ir/constants.h>

#include <algorithm>
#include <functional>
#include <map>

#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {
namespace {

using torch::jit::Graph;
using torch::jit::NamedValue;
using torch::jit::Node;
using torch::jit::Value;

// Calls a quantized:: operator on a packed-params object.
std::vector<c10::IValue> call(const std::string& op, const c10::IValue& packed) {
  auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(op.c_str(), "");
  torch::jit::Stack stack{packed};
  handle.callBoxed(&stack);
  return stack;
}

NamedValue scalar_type(at::ScalarType t) { return NamedValue(static_cast<int64_t>(t)); }

Value* constant(Graph& g, const at::Tensor& t) { return g.insertConstant(t.detach().contiguous()); }

// The float bias, quantized to int32 at input scale * weight scale and back.
Value* bias_value(Graph& g, const c10::IValue& bias, Value* qx, const at::Tensor& w) {
  if (bias.isNone()) return g.insertConstant(c10::IValue());
  Value* b = constant(g, bias.toTensor().to(at::kFloat));
  Value* in_scale = g.insert(c10::aten::q_scale, {qx});
  Value* bq;
  if (w.qscheme() == at::kPerTensorAffine) {
    Value* s = g.insert(c10::aten::mul, {in_scale, w.q_scale()});
    bq = g.insert(c10::aten::quantize_per_tensor, {b, s, int64_t{0}, scalar_type(at::kQInt32)});
  } else {
    // (a transposed conv's weight has its channels per group only: the bias stays float)
    if (w.q_per_channel_scales().numel() != bias.toTensor().numel()) return b;
    Value* s = g.insert(c10::aten::mul, {constant(g, w.q_per_channel_scales()), in_scale});
    Value* z = constant(g, at::zeros({w.q_per_channel_scales().numel()}, at::kLong));
    bq = g.insert(c10::aten::quantize_per_channel, {b, s, z, int64_t{0}, scalar_type(at::kQInt32)});
  }
  return g.insert(c10::aten::dequantize, {bq});
}

// Quantizes `y` with `scale` and `zero_point`, to the dtype of the quantized tensor `like`.
Value* requantize(Graph& g, Value* y, Value* scale, Value* zero_point, Value* like) {
  Value* dtype = g.insert(c10::prim::dtype, {like});
  return g.insert(c10::aten::quantize_per_tensor, {y, scale, zero_point, dtype});
}

Value* dequantize(Graph& g, Value* q) { return g.insert(c10::aten::dequantize, {q}); }

struct ConvForm {
  int dims;
  bool transposed;
  bool relu;
};

const std::map<std::string, ConvForm>& conv_forms() {
  static const std::map<std::string, ConvForm> m = {
      {"quantized::conv1d", {1, false, false}},           {"quantized::conv1d_relu", {1, false, true}},
      {"quantized::conv2d", {2, false, false}},           {"quantized::conv2d_relu", {2, false, true}},
      {"quantized::conv3d", {3, false, false}},           {"quantized::conv3d_relu", {3, false, true}},
      {"quantized::conv_transpose1d", {1, true, false}},  {"quantized::conv_transpose2d", {2, true, false}},
      {"quantized::conv_transpose3d", {3, true, false}},
  };
  return m;
}

// The packed object a node reads (a constant, as lift_parameters leaves it).
c10::IValue packed_object(Node* n, size_t idx) {
  Value* v = n->input(idx);
  if (v->node()->kind() == c10::prim::Constant)
    if (auto iv = torch::jit::toIValue(v); iv && iv->isObject()) return *iv;
  throw Error(Error::Kind::Conversion, std::string(n->kind().toQualString()) +
                                           ": its packed weights must be a module attribute (they are computed in the graph)");
}

// A packed 1-D conv keeps its parameters as 2-D ones with a leading 1.
c10::IValue params(const std::string& prefix, const char* what, const c10::IValue& packed, int dims) {
  c10::IValue r = call("quantized::" + prefix + "_" + what, packed)[0];
  if (dims != 1 || !r.isIntList()) return r;
  auto v = r.toIntVector();
  return c10::IValue(std::vector<int64_t>(v.end() - 1, v.end()));
}

// A transposed conv. PyTorch's quantized kernels take an output padding as
// large as the stride (aten's and ONNX's do not): the rows it adds past the
// input's reach hold the bias alone, so they are padded on after the conv.
Value* transposed_conv(Graph& g, int dims, Value* x, Value* w, Value* b, const std::vector<int64_t>& stride,
                       NamedValue padding, std::vector<int64_t> output_padding, NamedValue groups,
                       const std::vector<int64_t>& dilation) {
  const c10::Symbol sym = dims == 1   ? c10::aten::conv_transpose1d
                          : dims == 2 ? c10::aten::conv_transpose2d
                                      : c10::aten::conv_transpose3d;
  std::vector<int64_t> extra(output_padding.size(), 0);
  bool any = false;
  for (size_t i = 0; i < output_padding.size(); ++i) {
    if (output_padding[i] < std::max(stride[i], dilation[i])) continue;
    extra[i] = output_padding[i];
    output_padding[i] = 0;
    any = true;
  }
  if (!any) return g.insert(sym, {x, w, b, stride, padding, output_padding, groups, dilation});
  Value* y = g.insert(sym, {x, w, g.insertConstant(c10::IValue()), stride, padding, output_padding, groups, dilation});
  std::vector<int64_t> pads;  // constant_pad_nd: the last dim first, (before, after) each
  for (size_t i = extra.size(); i-- > 0;) pads.insert(pads.end(), {0, extra[i]});
  y = g.insert(c10::aten::constant_pad_nd, {y, pads, 0.0});
  if (b->type()->kind() == c10::TypeKind::NoneType) return y;
  std::vector<int64_t> shape(static_cast<size_t>(dims) + 1, 1);
  shape[0] = -1;
  return g.insert(c10::aten::add, {y, g.insert(c10::aten::reshape, {b, shape})});
}

// The weight, named after the module whose packed params hold it
// ("conv._packed_params" -> "conv.weight").
Value* weight_constant(Graph& g, Node* n, const at::Tensor& w) {
  Value* c = constant(g, w);
  std::string path = n->input(1)->hasDebugName() ? n->input(1)->debugName() : "";
  for (size_t p; (p = path.find("._packed_params")) != std::string::npos;) path.erase(p, 15);
  if (path.rfind("_packed_params", 0) == 0) path.clear();  // the packed params of the top module
  c->setDebugName(path.empty() ? std::string("weight") : path + ".weight");
  return c;
}

Value* decompose_conv(Graph& g, Node* n, const std::string& kind, const ConvForm& f) {
  const c10::IValue packed = packed_object(n, 1);
  const std::string prefix = f.dims == 3 ? "conv3d" : "conv2d";
  const std::string op = kind.substr(std::string("quantized::").size());
  const std::string base = f.relu ? op.substr(0, op.size() - 5) : op;  // without "_relu"
  auto wb = call("quantized::" + base + "_unpack", packed);
  const at::Tensor w = wb[0].toTensor();
  Value* qx = n->input(0);
  Value* x = dequantize(g, qx);
  Value* wv = dequantize(g, weight_constant(g, n, w));
  Value* b = bias_value(g, wb[1], qx, w);
  // (qx, packed, scale, zero_point), or the older form with stride, padding,
  // dilation and groups as inputs before scale and zero point
  const bool explicit_params = n->inputs().size() == 8;
  auto param = [&](const char* what, size_t idx) -> NamedValue {
    if (explicit_params) return NamedValue(n->input(idx));
    return NamedValue(params(prefix, what, packed, f.dims));
  };
  const size_t s_idx = explicit_params ? 6 : 2;
  Value* y;
  if (f.transposed) {
    y = transposed_conv(g, f.dims, x, wv, b, params(prefix, "stride", packed, f.dims).toIntVector(),
                        param("padding", 3), params(prefix, "output_padding", packed, f.dims).toIntVector(),
                        param("groups", 5), params(prefix, "dilation", packed, f.dims).toIntVector());
  } else {
    const c10::Symbol sym = f.dims == 1 ? c10::aten::conv1d : f.dims == 2 ? c10::aten::conv2d : c10::aten::conv3d;
    y = g.insert(sym, {x, wv, b, param("stride", 2), param("padding", 3), param("dilation", 4), param("groups", 5)});
  }
  if (f.relu) y = g.insert(c10::aten::relu, {y});
  return requantize(g, y, n->input(s_idx), n->input(s_idx + 1), qx);
}

Value* decompose_linear(Graph& g, Node* n, bool relu) {
  auto wb = call("quantized::linear_unpack", packed_object(n, 1));
  const at::Tensor w = wb[0].toTensor();
  Value* qx = n->input(0);
  Value* b = bias_value(g, wb[1], qx, w);
  Value* y = g.insert(c10::aten::linear, {dequantize(g, qx), dequantize(g, weight_constant(g, n, w)), b});
  if (relu) y = g.insert(c10::aten::relu, {y});
  return requantize(g, y, n->input(2), n->input(3), qx);
}

// quantized:: kernels without packed weights: the float operator on the
// dequantized inputs, its result quantized with the output scale and zero
// point the node takes.
using FloatOp = std::function<Value*(Graph&, Node*, const std::vector<Value*>& dq)>;

struct FloatForm {
  size_t quantized_inputs;  // the first ones
  size_t scale_index;       // output scale; the zero point follows
  FloatOp op;
};

Value* in(Node* n, size_t i) { return n->input(i); }

const std::map<std::string, FloatForm>& float_forms() {
  static const std::map<std::string, FloatForm> m = {
      {"quantized::add", {2, 2, [](Graph& g, Node*, const auto& d) { return g.insert(c10::aten::add, {d[0], d[1]}); }}},
      {"quantized::add_relu",
       {2, 2, [](Graph& g, Node*, const auto& d) { return g.insert(c10::aten::relu, {g.insert(c10::aten::add, {d[0], d[1]})}); }}},
      {"quantized::mul", {2, 2, [](Graph& g, Node*, const auto& d) { return g.insert(c10::aten::mul, {d[0], d[1]}); }}},
      {"quantized::matmul", {2, 2, [](Graph& g, Node*, const auto& d) { return g.insert(c10::aten::matmul, {d[0], d[1]}); }}},
      {"quantized::hardswish", {1, 1, [](Graph& g, Node*, const auto& d) { return g.insert(c10::aten::hardswish, {d[0]}); }}},
      {"quantized::sigmoid", {1, 1, [](Graph& g, Node*, const auto& d) { return g.insert(c10::aten::sigmoid, {d[0]}); }}},
      {"quantized::leaky_relu",
       {1, 3, [](Graph& g, Node* n, const auto& d) { return g.insert(c10::aten::leaky_relu, {d[0], in(n, 1)}); }}},
      {"quantized::softmax",
       {1, 2, [](Graph& g, Node* n, const auto& d) { return g.insert(c10::aten::softmax, {d[0], in(n, 1), c10::IValue()}); }}},
      {"quantized::celu",
       {1, 1, [](Graph& g, Node* n, const auto& d) { return g.insert(c10::aten::celu, {d[0], in(n, 3)}); }}},
      {"quantized::elu",
       {1, 1, [](Graph& g, Node* n, const auto& d) {
          return g.insert(c10::aten::elu, {d[0], in(n, 3), in(n, 4), in(n, 5)});
        }}},
      {"quantized::layer_norm",
       {1, 5, [](Graph& g, Node* n, const auto& d) {
          return g.insert(c10::aten::layer_norm, {d[0], in(n, 1), in(n, 2), in(n, 3), in(n, 4), false});
        }}},
      {"quantized::group_norm",
       {1, 5, [](Graph& g, Node* n, const auto& d) {
          return g.insert(c10::aten::group_norm, {d[0], in(n, 1), in(n, 2), in(n, 3), in(n, 4), false});
        }}},
      {"quantized::instance_norm",
       {1, 4, [](Graph& g, Node* n, const auto& d) {
          return g.insert(c10::aten::instance_norm, {d[0], in(n, 1), in(n, 2), c10::IValue(), c10::IValue(), true, 0.0,
                                                     in(n, 3), false});
        }}},
  };
  return m;
}

bool is_batch_norm(const std::string& kind) {
  return kind == "quantized::batch_norm" || kind == "quantized::batch_norm1d" || kind == "quantized::batch_norm2d" ||
         kind == "quantized::batch_norm3d";
}

Value* decompose_batch_norm(Graph& g, Node* n) {
  Value* y = g.insert(c10::aten::batch_norm, {dequantize(g, n->input(0)), n->input(1), n->input(2), n->input(3),
                                              n->input(4), false, 0.0, n->input(5), false});
  return requantize(g, y, n->input(6), n->input(7), n->input(0));
}

// quantized::cat(qx[], dim, scale?, zero_point?): None keeps the first input's.
Value* decompose_cat(Graph& g, Node* n, bool relu) {
  Node* list = n->input(0)->node();
  if (list->kind() != c10::prim::ListConstruct)
    throw Error(Error::Kind::Conversion, "quantized::cat: its inputs must be a list built in the graph");
  std::vector<Value*> parts;
  for (Value* v : list->inputs()) parts.push_back(dequantize(g, v));
  Value* joined = g.insertNode(g.createList(c10::TensorType::get(), parts))->output();
  Value* y = g.insert(c10::aten::cat, {joined, n->input(1)});
  if (relu) y = g.insert(c10::aten::relu, {y});
  Value* first = list->input(0);
  Value* scale = n->input(2)->type()->kind() == c10::TypeKind::NoneType ? g.insert(c10::aten::q_scale, {first})
                                                                          : n->input(2);
  Value* zp = n->input(3)->type()->kind() == c10::TypeKind::NoneType ? g.insert(c10::aten::q_zero_point, {first})
                                                                       : n->input(3);
  return requantize(g, y, scale, zp, first);
}

// The decomposed form of `n`, or nullptr when it is not a kernel this pass knows.
Value* decompose(Graph& g, Node* n) {
  const std::string kind = n->kind().toQualString();
  if (kind.rfind("quantized::", 0) != 0) return nullptr;
  if (auto it = conv_forms().find(kind); it != conv_forms().end()) return decompose_conv(g, n, kind, it->second);
  if (kind == "quantized::linear" || kind == "quantized::linear_relu")
    return decompose_linear(g, n, kind == "quantized::linear_relu");
  if (is_batch_norm(kind)) return decompose_batch_norm(g, n);
  if (kind == "quantized::cat" || kind == "quantized::cat_relu") return decompose_cat(g, n, kind == "quantized::cat_relu");
  if (auto it = float_forms().find(kind); it != float_forms().end()) {
    const FloatForm& f = it->second;
    std::vector<Value*> dq;
    for (size_t i = 0; i < f.quantized_inputs; ++i) dq.push_back(dequantize(g, n->input(i)));
    Value* y = f.op(g, n, dq);
    return requantize(g, y, n->input(f.scale_index), n->input(f.scale_index + 1), n->input(0));
  }
  return nullptr;
}

void run(Graph& g, torch::jit::Block* b) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    Node* n = *it++;
    for (torch::jit::Block* sub : n->blocks()) run(g, sub);
    torch::jit::WithInsertPoint guard(n);
    Node* before = n->prev();
    Value* repl = decompose(g, n);
    if (!repl) continue;
    // the new nodes are where the kernel was: its module and source line
    for (Node* m = before->next(); m != n; m = m->next()) {
      m->setSourceRange(n->sourceRange());
      m->setScope(n->scope());
      if (n->callstack()) m->setCallStack(*n->callstack());
    }
    repl->copyMetadata(n->output());  // (its type and name)
    n->output()->replaceAllUsesWith(repl);
    n->destroy();
  }
}

}  // namespace

void decompose_quantized(TorchGraph& tg, const TorchContext&) { run(*tg.graph, tg.graph->block()); }

}  // namespace torch2onnx::torch_side
