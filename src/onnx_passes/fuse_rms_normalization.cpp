// Opset 23: root-mean-square normalization as transformers writes it
// (LlamaRMSNorm, T5LayerNorm, GemmaRMSNorm, Qwen3's q/k norms ...),
//
//   xf = x.to(float32)                                   (optional)
//   n  = xf * rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
//   y  = scale * n.to(x.dtype)                           (cast optional)
//
// becomes one RMSNormalization(x, scale) over the last axis. Accepted forms:
// Pow(xf, 2) or Mul(xf, xf); ReduceMean over the last axis keeping it; the
// epsilon a one-element constant on either side of the Add; Reciprocal(Sqrt)
// or Div(1, Sqrt) times xf, or Div(xf, Sqrt). The scale is read by the last
// Mul (either side) and must be of shape [D] (or [1, ..., D]) with D x's last
// (static) dim; without such a Mul the scale is ones. The computation is in
// float32 (xf float32: RMSNormalization's stash_type 1): an fp16 / bf16 x
// upcast then cast back is the node's own upcast. Every intermediate value
// must be read only inside the pattern.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx_passes/match.h"
#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

using match::producer_of;
using match::scalar_constant;

// Read only by `user` (and not a graph output).
bool only_read_by(ir::Value* v, const ir::Node* user) {
  if (is_graph_output(v)) return false;
  for (const ir::Use& u : v->uses())
    if (u.user != user) return false;
  return true;
}

// The other input of a two-input node, given one of them.
ir::Value* other_input(const ir::Node* n, const ir::Value* one) {
  if (n->num_inputs() != 2) return nullptr;
  if (n->input(0) == one) return n->input(1);
  if (n->input(1) == one) return n->input(0);
  return nullptr;
}

bool is_float32(const ir::Value* v) { return v->type().dtype == ir::DType::Float; }

bool is_half(ir::DType dt) { return dt == ir::DType::Float16 || dt == ir::DType::BFloat16; }

// ReduceMean over the last axis of a value of rank `rank`, keeping it.
bool reduces_last_axis(const ir::Node* mean, int64_t rank, int64_t opset) {
  if (mean->attr_i("keepdims", 1) != 1) return false;
  std::vector<int64_t> axes;
  if (opset >= 18) {
    if (mean->num_inputs() < 2 || !mean->input(1) || !mean->input(1)->constant()) return false;
    axes = mean->input(1)->constant()->to_int64s();
  } else {
    axes = mean->attr_ints("axes");
  }
  return axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

struct Match {
  ir::Value* x = nullptr;      // RMSNormalization's X
  ir::Value* scale = nullptr;  // nullptr: ones
  double epsilon = 0;
  std::vector<ir::Node*> nodes;  // the pattern's nodes, the last one first
};

// n = xf * rsqrt(mean(xf^2) + eps): the Mul (or Div) producing n, matched.
std::optional<Match> match_normalized(ir::Node* n, int64_t opset) {
  Match m;
  ir::Value* xf = nullptr;
  ir::Node* sqrt = nullptr;
  if (n->op_type() == "Div" && n->domain().empty() && n->num_inputs() == 2) {
    if (ir::Node* s = producer_of(n->input(1), "Sqrt")) {
      xf = n->input(0);
      sqrt = s;
      m.nodes = {n};
    }
  } else if (n->op_type() == "Mul" && n->domain().empty() && n->num_inputs() == 2) {
    for (int side = 0; side < 2 && !sqrt; ++side) {
      ir::Value* r = n->input(side);
      ir::Node* inv = producer_of(r, "Reciprocal");
      ir::Node* s = nullptr;
      if (inv) {
        s = producer_of(inv->input(0), "Sqrt");
      } else if (ir::Node* div = producer_of(r, "Div")) {
        const auto one = scalar_constant(div->input(0));
        if (one && *one == 1.0) {
          inv = div;
          s = producer_of(div->input(1), "Sqrt");
        }
      }
      if (!s || !only_read_by(r, n)) continue;
      xf = n->input(1 - side);
      sqrt = s;
      m.nodes = {n, inv};
    }
  }
  if (!sqrt || !xf || !is_float32(xf) || !only_read_by(sqrt->output(0), m.nodes.back())) return std::nullopt;
  ir::Node* add = producer_of(sqrt->input(0), "Add");
  if (!add || add->num_inputs() != 2 || !only_read_by(add->output(0), sqrt)) return std::nullopt;
  ir::Node* mean = nullptr;
  for (int side = 0; side < 2 && !mean; ++side) {
    const auto eps = scalar_constant(add->input(1 - side));
    ir::Node* r = producer_of(add->input(side), "ReduceMean");
    if (!eps || !r || *eps < 0) continue;
    m.epsilon = *eps;
    mean = r;
  }
  const int64_t rank = xf->type().rank();
  if (!mean || rank < 1 || !reduces_last_axis(mean, rank, opset) || !only_read_by(mean->output(0), add))
    return std::nullopt;
  ir::Node* square = mean->input(0) ? mean->input(0)->producer() : nullptr;
  if (!square || !square->domain().empty() || square->num_inputs() != 2 || !only_read_by(square->output(0), mean))
    return std::nullopt;
  if (square->op_type() == "Pow") {
    const auto two = scalar_constant(square->input(1));
    if (square->input(0) != xf || !two || *two != 2.0) return std::nullopt;
  } else if (square->op_type() != "Mul" || square->input(0) != xf || square->input(1) != xf) {
    return std::nullopt;
  }
  m.nodes.insert(m.nodes.end(), {sqrt, add, mean, square});
  m.x = xf;
  return m;
}

// The scale of `mul` = Mul(scale, v) (either side): shape [D] or [1, ..., D]
// with D the normalized (last) dim, of rank at most x's.
ir::Value* scale_of(const ir::Node* mul, const ir::Value* v, const ir::Value* x) {
  ir::Value* s = other_input(mul, v);
  if (!s || !s->type().has_shape) return nullptr;
  const std::vector<int64_t> sd = s->type().static_dims(), xd = x->type().static_dims();
  if (sd.empty() || sd.size() > xd.size() || xd.back() <= 0 || sd.back() != xd.back()) return nullptr;
  for (size_t k = 0; k + 1 < sd.size(); ++k)
    if (sd[k] != 1) return nullptr;
  return s;
}

std::optional<Match> match(ir::Node* n, int64_t opset) {
  auto m = match_normalized(n, opset);
  if (!m) return std::nullopt;
  ir::Value* out = n->output(0);
  // n.to(x.dtype) where xf = x.to(float32) and x is fp16 / bf16: the node's own upcast
  if (out->uses().size() == 1 && !is_graph_output(out)) {
    ir::Node* back = out->uses()[0].user;
    ir::Node* up = producer_of(m->x, "Cast");
    if (back && back->op_type() == "Cast" && back->domain().empty() && up && is_half(up->input(0)->type().dtype) &&
        back->attr_i("to", 0) == static_cast<int64_t>(up->input(0)->type().dtype)) {
      m->nodes.insert(m->nodes.begin(), back);
      m->x = up->input(0);
      out = back->output(0);
    }
  }
  if (out->uses().size() == 1 && !is_graph_output(out)) {
    ir::Node* mul = out->uses()[0].user;
    if (mul && mul->op_type() == "Mul" && mul->domain().empty()) {
      ir::Value* s = scale_of(mul, out, m->x);
      if (s && s->type().dtype == out->type().dtype && (s->producer() == nullptr || s->constant())) {
        m->scale = s;
        m->nodes.insert(m->nodes.begin(), mul);
      }
    }
  }
  return m;
}

void run(ir::Graph& g, int64_t opset) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  std::vector<ir::Node*> dead;
  for (ir::Node* n : order) {
    if (std::find(dead.begin(), dead.end(), n) != dead.end()) continue;
    auto m = match(n, opset);
    if (!m) continue;
    ir::Node* last = m->nodes.front();
    ir::Value* y = last->output(0);
    const int64_t d = m->x->type().static_dims().back();
    ir::Value* scale = m->scale;
    if (!scale) {
      if (d <= 0) continue;
      scale = g.add_initializer(last->name() + ".scale",
                                ir::Tensor::from_doubles(y->type().dtype, std::vector<double>(static_cast<size_t>(d), 1.0),
                                                         {d}));
      scale->set_derived(true);
    }
    g.set_insert_point(last);
    ir::Node* rms = g.create_node("RMSNormalization", {m->x, scale}, 1,
                                  {{"axis", int64_t{-1}}, {"epsilon", m->epsilon}, {"stash_type", int64_t{1}}});
    g.set_insert_point(nullptr);
    rms->output(0)->set_type(y->type());
    replace_keeping_name(g, y, rms->output(0));
    for (ir::Node* p : m->nodes) dead.push_back(p);
    // (the matched nodes, now unread, go with eliminate_dead_code)
  }
}

}  // namespace

void fuse_rms_normalization(ir::Model& model, const PassContext& ctx) {
  if (ctx.options.opset_version < 23) return;
  run(*model.graph, model.opset);
}

}  // namespace torch2onnx::onnx_passes
