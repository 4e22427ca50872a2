// Eval mode: y = BatchNormalization(Conv(x, W, B)) becomes Conv(x, W', B')
// with W' = W * s and B' = (B - mean) * s + beta, s = gamma / sqrt(var + eps),
// computed in double precision. Only when the Conv's result feeds nothing
// else and every parameter is a constant.
#include <algorithm>
#include <cmath>

#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

bool float_like(const ir::Tensor* t) {
  return t && (t->dtype() == ir::DType::Float || t->dtype() == ir::DType::Double);
}

template <typename T>
void scale_rows(const ir::Tensor& w, const std::vector<double>& s, uint8_t* dst) {
  const int64_t cout = w.dims().at(0);
  const int64_t per = cout ? w.numel() / cout : 0;
  const T* in = reinterpret_cast<const T*>(w.data());
  T* out = reinterpret_cast<T*>(dst);
  for (int64_t c = 0; c < cout; ++c) {
    const double f = s[static_cast<size_t>(c)];
    for (int64_t k = 0; k < per; ++k) out[c * per + k] = static_cast<T>(static_cast<double>(in[c * per + k]) * f);
  }
}

// W * s (one factor per output channel). In place when nothing else holds W
// (the CLI hands over the loaded module, so its weights are ours): memory
// then holds one copy of the weights, not two.
ir::Tensor scaled(const ir::Tensor& w, const std::vector<double>& s, bool sole_use) {
  uint8_t* in_place = sole_use ? w.writable_data() : nullptr;
  std::vector<uint8_t> bytes;
  if (!in_place) bytes.resize(w.nbytes());
  uint8_t* dst = in_place ? in_place : bytes.data();
  if (w.dtype() == ir::DType::Double)
    scale_rows<double>(w, s, dst);
  else
    scale_rows<float>(w, s, dst);
  return in_place ? w : ir::Tensor::owned(w.dtype(), w.dims(), std::move(bytes));
}

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* bn : order) {
    if (bn->op_type() != "BatchNormalization" || !bn->domain().empty() || bn->num_outputs() != 1) continue;
    if (bn->attr_i("training_mode", 0) != 0) continue;
    ir::Value* y = bn->input(0);
    ir::Node* conv = y ? y->producer() : nullptr;
    if (!conv || conv->op_type() != "Conv" || !conv->domain().empty() || y->uses().size() != 1) continue;
    const ir::Tensor* w = conv->input(1) ? conv->input(1)->constant() : nullptr;
    const ir::Tensor* b = conv->num_inputs() > 2 && conv->input(2) ? conv->input(2)->constant() : nullptr;
    if (conv->num_inputs() > 2 && conv->input(2) && !b) continue;
    const ir::Tensor* gamma = bn->input(1)->constant();
    const ir::Tensor* beta = bn->input(2)->constant();
    const ir::Tensor* mean = bn->input(3)->constant();
    const ir::Tensor* var = bn->input(4)->constant();
    if (!float_like(w) || !float_like(gamma) || !float_like(beta) || !float_like(mean) || !float_like(var)) continue;
    const int64_t cout = w->dims().at(0);
    if (gamma->numel() != cout || beta->numel() != cout || mean->numel() != cout || var->numel() != cout) continue;
    if (b && b->numel() != cout) continue;
    const double eps = bn->attr_f("epsilon", 1e-5);
    // ONNX stores epsilon as a 32-bit float: use the same value the runtime sees.
    const double eps32 = static_cast<double>(static_cast<float>(eps));
    std::vector<double> s(static_cast<size_t>(cout)), bias(static_cast<size_t>(cout));
    for (int64_t c = 0; c < cout; ++c) {
      s[c] = gamma->double_at(c) / std::sqrt(var->double_at(c) + eps32);
      bias[c] = ((b ? b->double_at(c) : 0.0) - mean->double_at(c)) * s[c] + beta->double_at(c);
    }
    ir::Value* old_w = conv->input(1);
    const bool sole_use = old_w->uses().size() == 1 && !old_w->is_graph_input() &&
                          std::find(g.outputs().begin(), g.outputs().end(), old_w) == g.outputs().end();
    ir::Value* new_w = g.add_initializer(conv->name() + ".W", scaled(*w, s, sole_use));
    ir::Value* new_b = g.add_initializer(conv->name() + ".B",
                                         ir::Tensor::from_doubles(w->dtype(), bias, {cout}));
    new_w->set_derived(true);
    new_b->set_derived(true);
    conv->replace_input(1, new_w);
    if (conv->num_inputs() > 2)
      conv->replace_input(2, new_b);
    else
      conv->add_input(new_b);
    bn->output(0)->replace_all_uses_with(conv->output(0));
    bn->destroy();
  }
}

}  // namespace

void fuse_conv_batchnorm(ir::Model& model, const PassContext& ctx) {
  if (ctx.options.training != TrainingMode::Eval || !ctx.options.do_constant_folding) return;
  run(*model.graph);
}

}  // namespace torch2onnx::onnx_passes
