// Output shapes on the meta device for operators whose LibTorch C++ build
// (1.13, or 2.x for a few) has no meta kernel (Python registers them in torch._meta_registrations).
// Each function gets the node's inputs (meta tensors) and returns its outputs,
// or throws for inputs PyTorch would reject (the example run then runs for
// real and reports PyTorch's own message). The example run's
// T2O_CHECK_META=1 mode compares these against real runs.
#include "torch_passes/meta_shapes.h"

#include <ATen/ATen.h>

#include <functional>
#include <unordered_map>

namespace torch2onnx::torch_side {
namespace {

using Stack = std::vector<c10::IValue>;
using Outputs = std::vector<c10::IValue>;
using ShapeFn = std::function<Outputs(const Stack&)>;

at::Tensor meta_like(const at::Tensor& t, std::vector<int64_t> shape, c10::optional<at::ScalarType> dtype = {}) {
  return at::empty(shape, t.options().device(at::kMeta).dtype(dtype ? *dtype : t.scalar_type()));
}

void require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(what);
}

std::vector<int64_t> expand_list(std::vector<int64_t> v, size_t n, int64_t dflt) {
  if (v.empty()) v.assign(n, dflt);
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  require(v.size() == n, "pooling parameters do not match the input");
  return v;
}

// PyTorch's pooling output size (pooling_output_shape).
int64_t pooled(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  require(stride > 0 && k > 0 && pad * 2 <= k, "bad pooling parameters");
  int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  require(out > 0, "pooling output would be empty");
  return out;
}

// The output of a convolution (LibTorch has no C++ meta kernel for it).
// Inconsistent shapes throw, which sends the export to a real run and
// PyTorch's own message.
Outputs convolution(const at::Tensor& x, const at::Tensor& w, std::vector<int64_t> stride, std::vector<int64_t> padding,
                    std::vector<int64_t> dilation, bool transposed, std::vector<int64_t> output_padding,
                    int64_t groups) {
  const int64_t nd = w.dim() - 2;
  const bool batched = x.dim() == w.dim();
  require(nd >= 1 && (batched || x.dim() == w.dim() - 1) && groups >= 1, "bad convolution");
  const auto n = static_cast<size_t>(nd);
  stride = expand_list(stride, n, 1);
  padding = expand_list(padding, n, 0);
  dilation = expand_list(dilation, n, 1);
  output_padding = expand_list(output_padding, n, 0);
  const int64_t c_in = x.size(batched ? 1 : 0);
  const int64_t c_expected = transposed ? w.size(0) : w.size(1) * groups;
  require(c_in == c_expected && x.scalar_type() == w.scalar_type(), "bad convolution input");
  std::vector<int64_t> shape;
  if (batched) shape.push_back(x.size(0));
  shape.push_back(transposed ? w.size(1) * groups : w.size(0));
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x.size(x.dim() - nd + static_cast<int64_t>(i)), k = w.size(2 + static_cast<int64_t>(i));
    require(stride[i] > 0 && dilation[i] > 0, "bad convolution parameters");
    const int64_t out = transposed ? (in - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k - 1) + output_padding[i] + 1
                                   : (in + 2 * padding[i] - dilation[i] * (k - 1) - 1) / stride[i] + 1;
    require(out > 0, "convolution output would be empty");
    shape.push_back(out);
  }
  return {meta_like(x, shape)};
}

// max_pool*d(self, kernel, stride, padding, dilation, ceil_mode); avg_pool*d(self, kernel, stride, padding, ceil_mode, ...)
Outputs pool(const Stack& s, size_t nd, bool is_max, bool with_indices) {
  const at::Tensor& x = s[0].toTensor();
  require(x.dim() == static_cast<int64_t>(nd) + 1 || x.dim() == static_cast<int64_t>(nd) + 2, "bad pooling input rank");
  auto k = expand_list(s[1].toIntVector(), nd, 1);
  auto st = s[2].toIntVector();
  st = st.empty() ? k : expand_list(st, nd, 1);
  auto pad = expand_list(s[3].toIntVector(), nd, 0);
  std::vector<int64_t> dil(nd, 1);
  bool ceil_mode;
  if (is_max) {
    dil = expand_list(s[4].toIntVector(), nd, 1);
    ceil_mode = s[5].toBool();
  } else {
    ceil_mode = s[4].toBool();
  }
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end() - static_cast<int64_t>(nd));
  for (size_t i = 0; i < nd; ++i)
    shape.push_back(pooled(x.size(x.dim() - static_cast<int64_t>(nd) + static_cast<int64_t>(i)), k[i], pad[i], st[i],
                           dil[i], ceil_mode));
  Outputs out{meta_like(x, shape)};
  if (with_indices) out.push_back(meta_like(x, shape, at::kLong));
  return out;
}

// adaptive_*_pool*d(self, output_size)
Outputs adaptive(const Stack& s, size_t nd, bool with_indices) {
  const at::Tensor& x = s[0].toTensor();
  auto os = s[1].toIntVector();
  require(os.size() == nd && x.dim() >= static_cast<int64_t>(nd) + 1, "bad adaptive pooling arguments");
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end() - static_cast<int64_t>(nd));
  shape.insert(shape.end(), os.begin(), os.end());
  Outputs out{meta_like(x, shape)};
  if (with_indices) out.push_back(meta_like(x, shape, at::kLong));
  return out;
}

Outputs same_as_input(const Stack& s) { return {meta_like(s[0].toTensor(), s[0].toTensor().sizes().vec())}; }

// In-place ops return their (mutated) first argument.
Outputs in_place(const Stack& s) { return {s[0]}; }

std::unordered_map<std::string, ShapeFn> make_table() {
  std::unordered_map<std::string, ShapeFn> t;
  for (const char* op : {"aten::relu", "aten::leaky_relu", "aten::sigmoid", "aten::tanh", "aten::hardtanh",
                         "aten::relu6", "aten::elu", "aten::selu", "aten::celu", "aten::gelu", "aten::silu",
                         "aten::mish", "aten::hardswish", "aten::hardsigmoid", "aten::softplus", "aten::log_sigmoid",
                         "aten::prelu", "aten::threshold", "aten::hardshrink", "aten::softshrink", "aten::clone",
                         "aten::contiguous", "aten::roll"})
    t[op] = same_as_input;
  for (const char* op : {"aten::relu_", "aten::leaky_relu_", "aten::sigmoid_", "aten::tanh_", "aten::hardtanh_",
                         "aten::elu_", "aten::selu_", "aten::celu_", "aten::silu_", "aten::mish_",
                         "aten::hardswish_", "aten::hardsigmoid_", "aten::threshold_"})
    t[op] = in_place;
  // dropout(input, p, train): the identity at inference or with p = 0
  // (torchvision's Swin passes train=True with p = 0); otherwise a new tensor
  // of the input's shape.
  for (const char* op : {"aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout"})
    t[op] = [](const Stack& s) -> Outputs {
      if (!s[2].toBool() || s[1].toDouble() == 0.0) return {s[0]};
      return same_as_input(s);
    };
  // batch_norm(input, weight, bias, mean, var, training, momentum, eps, cudnn)
  t["aten::batch_norm"] = [](const Stack& s) -> Outputs {
    const at::Tensor& x = s[0].toTensor();
    require(x.dim() >= 2, "batch_norm needs a channel dimension");
    for (size_t i = 1; i <= 4; ++i)
      if (s[i].isTensor()) require(s[i].toTensor().numel() == x.size(1), "batch_norm: parameter size mismatch");
    return same_as_input(s);
  };
  t["aten::instance_norm"] = same_as_input;
  // layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable)
  t["aten::layer_norm"] = [](const Stack& s) -> Outputs {
    const at::Tensor& x = s[0].toTensor();
    auto ns = s[1].toIntVector();
    require(static_cast<int64_t>(ns.size()) <= x.dim(), "layer_norm: normalized_shape too long");
    for (size_t i = 0; i < ns.size(); ++i) require(x.size(x.dim() - ns.size() + i) == ns[i], "layer_norm: shape mismatch");
    return same_as_input(s);
  };
  t["aten::group_norm"] = same_as_input;
  // softmax(self, dim, dtype) / _softmax(self, dim, half_to_float)
  for (const char* op : {"aten::softmax", "aten::log_softmax"})
    t[op] = [](const Stack& s) -> Outputs {
      const at::Tensor& x = s[0].toTensor();
      c10::optional<at::ScalarType> dt;
      if (s.size() > 2 && s[2].isInt()) dt = static_cast<at::ScalarType>(s[2].toInt());
      return {meta_like(x, x.sizes().vec(), dt)};
    };
  for (const char* op : {"aten::_softmax", "aten::_log_softmax"}) t[op] = same_as_input;
  // embedding(weight, indices, ...) and index_select(self, dim, index)
  t["aten::embedding"] = [](const Stack& s) -> Outputs {
    const at::Tensor& w = s[0].toTensor();
    const at::Tensor& idx = s[1].toTensor();
    require(w.dim() == 2 && (idx.scalar_type() == at::kLong || idx.scalar_type() == at::kInt), "bad embedding");
    std::vector<int64_t> shape = idx.sizes().vec();
    shape.push_back(w.size(1));
    return {meta_like(w, shape)};
  };
  t["aten::index_select"] = [](const Stack& s) -> Outputs {
    const at::Tensor& x = s[0].toTensor();
    int64_t dim = s[1].toInt();
    const at::Tensor& idx = s[2].toTensor();
    require(idx.dim() <= 1, "index_select: index must be 1-D");
    std::vector<int64_t> shape = x.sizes().vec();
    if (shape.empty()) return {meta_like(x, {})};
    if (dim < 0) dim += x.dim();
    require(dim >= 0 && dim < x.dim(), "index_select: bad dim");
    shape[static_cast<size_t>(dim)] = idx.numel();
    return {meta_like(x, shape)};
  };
  // Fused transformer fast paths.
  t["aten::_transformer_encoder_layer_fwd"] = [](const Stack& s) -> Outputs {
    const at::Tensor& x = s[0].toTensor();
    require(x.dim() == 3 && x.size(2) == s[1].toInt(), "bad transformer encoder layer input");
    return same_as_input(s);
  };
  t["aten::_native_multi_head_attention"] = [](const Stack& s) -> Outputs {
    const at::Tensor& q = s[0].toTensor();
    const at::Tensor& k = s[1].toTensor();
    require(q.dim() == 3 && q.size(2) == s[3].toInt(), "bad multi-head attention query");
    Outputs out{meta_like(q, q.sizes().vec())};
    const bool need_weights = s.size() > 10 && s[10].toBool();
    const bool average = s.size() > 11 && s[11].toBool();
    if (!need_weights)
      out.push_back(at::Tensor());
    else if (average)
      out.push_back(meta_like(q, {q.size(0), q.size(1), k.size(1)}));
    else
      out.push_back(meta_like(q, {q.size(0), s[4].toInt(), q.size(1), k.size(1)}));
    return out;
  };
  // torch 2.x: its CPU kernel calls where.self_out, which has no meta kernel.
  // The output is the query's shape with the value's last dimension.
  t["aten::scaled_dot_product_attention"] = [](const Stack& s) -> Outputs {
    const at::Tensor& q = s[0].toTensor();
    const at::Tensor& v = s[2].toTensor();
    require(q.dim() >= 2 && v.dim() >= 2 && s[1].toTensor().dim() >= 2, "bad attention inputs");
    require(q.size(-1) == s[1].toTensor().size(-1), "query and key have different embedding sizes");
    std::vector<int64_t> shape = q.sizes().vec();
    shape.back() = v.size(-1);
    return {meta_like(q, shape)};
  };
  // _convolution/convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, ...)
  t["aten::_convolution"] = t["aten::convolution"] = [](const Stack& s) -> Outputs {
    require(s.size() >= 9, "bad convolution arguments");
    return convolution(s[0].toTensor(), s[1].toTensor(), s[3].toIntVector(), s[4].toIntVector(), s[5].toIntVector(),
                       s[6].toBool(), s[7].toIntVector(), s[8].toInt());
  };
  for (size_t nd = 1; nd <= 3; ++nd) {
    const std::string d = std::to_string(nd) + "d";
    // conv*d(input, weight, bias, stride, padding, dilation, groups); padding may be "valid" or "same"
    t["aten::conv" + d] = [](const Stack& s) -> Outputs {
      require(s.size() >= 7, "bad convolution arguments");
      if (s[4].isString() && s[4].toStringRef() != "valid") throw std::runtime_error("padding='same'");  // a real run
      const std::vector<int64_t> pad = s[4].isString() ? std::vector<int64_t>{0} : s[4].toIntVector();
      return convolution(s[0].toTensor(), s[1].toTensor(), s[3].toIntVector(), pad, s[5].toIntVector(), false, {},
                         s[6].toInt());
    };
    // conv_transpose*d(input, weight, bias, stride, padding, output_padding, groups, dilation)
    t["aten::conv_transpose" + d] = [](const Stack& s) -> Outputs {
      require(s.size() >= 8, "bad convolution arguments");
      return convolution(s[0].toTensor(), s[1].toTensor(), s[3].toIntVector(), s[4].toIntVector(), s[7].toIntVector(),
                         true, s[5].toIntVector(), s[6].toInt());
    };
    t["aten::max_pool" + d] = [nd](const Stack& s) { return pool(s, nd, true, false); };
    t["aten::max_pool" + d + "_with_indices"] = [nd](const Stack& s) { return pool(s, nd, true, true); };
    t["aten::avg_pool" + d] = [nd](const Stack& s) { return pool(s, nd, false, false); };
    t["aten::adaptive_avg_pool" + d] = [nd](const Stack& s) { return adaptive(s, nd, false); };
    t["aten::adaptive_max_pool" + d] = [nd](const Stack& s) { return adaptive(s, nd, true); };
  }
  return t;
}

}  // namespace

std::optional<std::vector<c10::IValue>> meta_outputs(const std::string& kind, const std::vector<c10::IValue>& stack) {
  static const auto table = make_table();
  auto it = table.find(kind);
  if (it == table.end()) return std::nullopt;
  return it->second(stack);
}

}  // namespace torch2onnx::torch_side
