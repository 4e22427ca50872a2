// Eval mode: y = BatchNormalization(Conv(x, W, B)) becomes Conv(x, W', B')
// with W' = W * s and B' = (B - mean) * s + beta, s = gamma / sqrt(var + eps)
// (one factor per output channel), computed in double precision; the same
// for ConvTranspose, whose weight is [Cin, Cout / group, k...]. Only when the Conv's result feeds nothing
// else and every parameter is a constant. W' is computed while it is
// written (ir::Tensor::computed), from W, which leaves the graph.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "onnx_passes/computed_elements.h"
#include "onnx_passes/dead_initializers.h"
#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

bool float_like(const ir::Tensor* t) {
  return t && (t->dtype() == ir::DType::Float || t->dtype() == ir::DType::Double);
}

// Elements [first, last) of W * s, where each row of `per` elements has its
// own factor; double precision, then rounded to T.
template <typename T>
void scale_elements(const T* in, T* out, const std::vector<double>& s, size_t per, size_t first, size_t last) {
  for (size_t e = first; e < last;) {
    const size_t row = e / per;
    const size_t end = std::min(last, (row + 1) * per);
    const double f = s[row];
    for (size_t k = e; k < end; ++k) out[k - first] = static_cast<T>(static_cast<double>(in[k]) * f);
    e = end;
  }
}

template <typename T>
void scaled_bytes(const ir::Tensor& w, const std::vector<double>& s, size_t per, size_t offset, size_t n,
                  uint8_t* dst) {
  const T* in = reinterpret_cast<const T*>(w.data());
  fill_elements<T>(offset, n, dst,
                   [&](size_t first, size_t last, T* out) { scale_elements<T>(in, out, s, per, first, last); });
}

// W * s, each run of `per` elements (a row) with its own factor s[row],
// computed as it is written to the file: no second copy of the weights, and
// nothing to allocate or fault in. The tensor holds W (and s) until then;
// releasing its pages releases W's.
ir::Tensor scaled(const ir::Tensor& w, std::vector<double> s, size_t per) {
  auto factors = std::make_shared<const std::vector<double>>(std::move(s));
  const bool dbl = w.dtype() == ir::DType::Double;
  return ir::Tensor::computed(w.dtype(), w.dims(), [w, factors, per, dbl](size_t offset, size_t n, uint8_t* dst) {
    if (dbl)
      scaled_bytes<double>(w, *factors, per, offset, n, dst);
    else
      scaled_bytes<float>(w, *factors, per, offset, n, dst);
  }, [w] { w.release_pages(); });
}

void run(ir::Graph& g) {
  DeadInitializers dead(g);
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* bn : order) {
    if (bn->op_type() != "BatchNormalization" || !bn->domain().empty() || bn->num_outputs() != 1) continue;
    if (bn->attr_i("training_mode", 0) != 0) continue;
    ir::Value* y = bn->input(0);
    ir::Node* conv = y ? y->producer() : nullptr;
    if (!conv || (conv->op_type() != "Conv" && conv->op_type() != "ConvTranspose") || !conv->domain().empty() ||
        y->uses().size() != 1)
      continue;
    const bool transposed = conv->op_type() == "ConvTranspose";
    const ir::Tensor* w = conv->input(1) ? conv->input(1)->constant() : nullptr;
    const ir::Tensor* b = conv->num_inputs() > 2 && conv->input(2) ? conv->input(2)->constant() : nullptr;
    if (conv->num_inputs() > 2 && conv->input(2) && !b) continue;
    const ir::Tensor* gamma = bn->input(1)->constant();
    const ir::Tensor* beta = bn->input(2)->constant();
    const ir::Tensor* mean = bn->input(3)->constant();
    const ir::Tensor* var = bn->input(4)->constant();
    if (!float_like(w) || !float_like(gamma) || !float_like(beta) || !float_like(mean) || !float_like(var)) continue;
    if (w->dims().size() < 2) continue;
    const int64_t group = transposed ? conv->attr_i("group", 1) : 1;
    const int64_t cout = transposed ? group * w->dims()[1] : w->dims()[0];
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
    // Rows of W that share a factor: an output channel's filter (Conv), or
    // one (input channel, output channel) kernel (ConvTranspose).
    std::vector<double> rows = s;
    if (transposed) {
      const int64_t cin = w->dims()[0], cout_g = w->dims()[1];
      if (group <= 0 || cin % group) continue;
      const int64_t cin_g = cin / group;
      rows.assign(static_cast<size_t>(cin * cout_g), 0.0);
      for (int64_t r = 0; r < cin * cout_g; ++r)
        rows[static_cast<size_t>(r)] = s[static_cast<size_t>((r / cout_g) / cin_g * cout_g + r % cout_g)];
    }
    const size_t per = rows.empty() ? 0 : static_cast<size_t>(w->numel()) / rows.size();
    ir::Value* old_w = conv->input(1);
    ir::Value* new_w = g.add_initializer(conv->name() + ".W", scaled(*w, std::move(rows), per));
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
    dead.consider(old_w);
  }
}

}  // namespace

void fuse_conv_batchnorm(ir::Model& model, const PassContext& ctx) {
  if (ctx.options.training != TrainingMode::Eval || !ctx.options.do_constant_folding) return;
  run(*model.graph);
}

}  // namespace torch2onnx::onnx_passes
