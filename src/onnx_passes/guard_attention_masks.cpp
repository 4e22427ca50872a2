// ONNX Runtime's Attention (opset 23 on) takes a float attn_mask entry equal
// to its dtype's lowest value for -inf: a query row whose entries are all
// `lowest` gives zeros there. PyTorch (scaled_dot_product_attention, and an
// eager softmax(q k^T * s + mask)) adds the value, as the ONNX spec does: such
// a row is a uniform softmax over its keys, the mean of the values. That is
// the row transformers' masks give a left-padded query (masked with
// torch.finfo(dtype).min), so an Attention node reading such a mask would
// differ from PyTorch there without a word.
//
// Every Attention's float mask has `lowest` replaced by lowest / 2: a row with
// any entry above it has the same probabilities (both are far below it), a
// row of `lowest` stays uniform over those keys (now in ONNX Runtime too),
// -inf stays -inf. A mask chosen between two one-element constants (Where(c,
// 0, lowest), transformers' form) gets its constants replaced, a constant mask
// its values; any other mask goes through Where(Equal(m, lowest), lowest / 2, m).
// Not an optimization: it runs with optimize=False too.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <optional>
#include <vector>

#include "onnx_passes/mask_values.h"
#include "onnx_passes/match.h"
#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

// A lower bound of m's values, read from how it was computed: a constant's
// least value; through selections, reshapes and Cast; a Where's or a Concat's
// least; a sum's bounds added. None: anything else (unbounded: it may hold
// -inf, or any value).
std::optional<double> lower_bound(ir::Value* m, int depth = 0) {
  if (depth > 16) return std::nullopt;
  if (const ir::Tensor* t = m->constant()) {
    double least = std::numeric_limits<double>::infinity();
    for (double x : t->to_doubles())
      if (!std::isnan(x)) least = std::min(least, x);
    return least;
  }
  ir::Node* n = m->producer();
  if (!n || !n->domain().empty()) return std::nullopt;
  const std::string& op = n->op_type();
  auto least_of = [&](size_t from, size_t to) -> std::optional<double> {
    double least = std::numeric_limits<double>::infinity();
    for (size_t i = from; i < to && i < n->num_inputs(); ++i) {
      auto b = n->input(i) ? lower_bound(n->input(i), depth + 1) : std::nullopt;
      if (!b) return std::nullopt;
      least = std::min(least, *b);
    }
    return least;
  };
  if (op == "Where") return least_of(1, 3);
  if (op == "Concat") return least_of(0, n->num_inputs());
  if (op == "Cast" && n->input(0)->dtype() == ir::DType::Bool) return 0.0;
  if (op == "Gather" || op == "GatherElements" || op == "GatherND" || op == "Expand" || op == "Reshape" ||
      op == "Unsqueeze" || op == "Squeeze" || op == "Slice" || op == "Transpose" || op == "Identity" ||
      op == "Flatten" || op == "Tile" || op == "Cast")
    return lower_bound(n->input(0), depth + 1);
  if (op == "Resize" && (!n->attr("mode") || n->attr("mode")->s != "cubic"))  // (nearest, linear: within the input's values)
    return lower_bound(n->input(0), depth + 1);
  if (op == "Add") {
    auto a = lower_bound(n->input(0), depth + 1), b = lower_bound(n->input(1), depth + 1);
    if (a && b) return *a + *b;
  }
  return std::nullopt;
}

ir::Value* constant(ir::Graph& g, ir::Tensor t, const ir::ValueType& type) {
  ir::Value* c = g.create_node("Constant", {}, 1, {{"value", std::move(t)}})->output(0);
  c->set_type(type);
  return c;
}

// t with `lowest` replaced by lowest / 2, or none when it holds no `lowest`.
std::optional<ir::Tensor> remapped(const ir::Tensor& t, double lowest) {
  std::vector<double> values = t.to_doubles();
  bool changed = false;
  for (double& x : values)
    if (x == lowest) {
      x = lowest / 2;
      changed = true;
    }
  if (!changed) return std::nullopt;
  return ir::Tensor::from_doubles(t.dtype(), values, t.dims());
}

// Whether a Where's branches are constants (at least one holding `lowest`)
// or values that hold no `lowest`: remapping the constants guards it.
bool where_branches_remap(ir::Node* w) {
  bool any = false;
  for (size_t i = 1; i < 3; ++i) {
    const bool holds = mask_may_hold_lowest(w->input(i));  // (exactly, for a constant)
    if (w->input(i)->constant()) any = any || holds;
    else if (holds) return false;
  }
  return any;
}

// The guarded source of a mask, built before `at`.
ir::Value* guarded_source(ir::Graph& g, ir::Value* mask, ir::Node* at) {
  const std::optional<double> lowest = dtype_lowest(mask->dtype());
  g.set_insert_point(at);
  ir::Value* out = mask;
  if (const ir::Tensor* t = mask->constant()) {
    if (auto r = remapped(*t, *lowest)) out = constant(g, std::move(*r), mask->type());
  } else if (ir::Node* w = match::producer_of(mask, "Where"); w && where_branches_remap(w)) {
    // each branch a constant (its `lowest` replaced) or a value that holds none (kept)
    ir::Value* branch[2] = {w->input(1), w->input(2)};
    for (ir::Value*& b : branch)
      if (const ir::Tensor* t = b->constant())
        if (auto r = remapped(*t, *lowest)) b = constant(g, std::move(*r), b->type());
    out = g.create_node("Where", {w->input(0), branch[0], branch[1]}, 1)->output(0);
    out->set_type(mask->type());
  } else {
    const ir::ValueType scalar = ir::ValueType::tensor(mask->dtype(), std::vector<int64_t>{});
    ir::Value* low = constant(g, ir::Tensor::from_doubles(mask->dtype(), {*lowest}, {}), scalar);
    ir::Value* half = constant(g, ir::Tensor::from_doubles(mask->dtype(), {*lowest / 2}, {}), scalar);
    ir::Value* is_lowest = g.create_node("Equal", {mask, low}, 1)->output(0);
    ir::ValueType bool_type = mask->type();
    bool_type.dtype = ir::DType::Bool;
    is_lowest->set_type(bool_type);
    out = g.create_node("Where", {is_lowest, half, mask}, 1)->output(0);
    out->set_type(mask->type());
  }
  g.set_insert_point(nullptr);
  return out;
}

// Ops whose output values are some of their first input's.
bool selects(const ir::Node* n) {
  static const char* const kOps[] = {"Expand", "Reshape", "Unsqueeze", "Squeeze", "Slice",
                                     "Transpose", "Identity", "Flatten", "Gather", "Tile"};
  for (const char* op : kOps)
    if (n->op_type() == op) return n->domain().empty() && n->num_outputs() == 1;
  return false;
}

// The guarded mask, built before `at`: the guard goes on the mask's source
// below the expansions, reshapes and selections on the way (the same source
// read by every layer, each layer expanding it to its queries, is guarded
// once); those are rebuilt on the guarded source.
ir::Value* guarded(ir::Graph& g, ir::Value* mask, ir::Node* at, std::map<ir::Value*, ir::Value*>& sources) {
  if (!mask_may_hold_lowest(mask)) return mask;  // (a bool mask: nothing to map)
  std::vector<ir::Node*> chain;
  ir::Value* source = mask;
  while (ir::Node* n = source->producer()) {
    if (!selects(n) || !n->input(0) || n->input(0)->dtype() != mask->dtype()) break;
    chain.push_back(n);
    source = n->input(0);
  }
  auto s = sources.find(source);
  ir::Value* safe = s != sources.end() ? s->second : sources.emplace(source, guarded_source(g, source, at)).first->second;
  if (safe == source) return mask;
  g.set_insert_point(at);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    ir::Node* n = *it;
    std::vector<ir::Value*> ins(n->inputs().begin(), n->inputs().end());
    ins[0] = safe;
    ir::Node* copy = g.create_node(n->op_type(), ins, 1, n->attributes());
    copy->set_origin(n->origin());
    copy->output(0)->set_type(n->output(0)->type());
    safe = copy->output(0);
  }
  g.set_insert_point(nullptr);
  return safe;
}

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  std::map<ir::Value*, ir::Value*> done, sources;  // a mask (a source) read by several nodes is guarded once
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) run(*sub);
    if (n->op_type() != "Attention" || !n->domain().empty() || n->num_inputs() < 4 || !n->input(3)) continue;
    ir::Value* mask = n->input(3);
    auto d = done.find(mask);
    ir::Value* safe = d != done.end() ? d->second : done.emplace(mask, guarded(g, mask, n, sources)).first->second;
    if (safe != mask) n->replace_input(3, safe);
  }
}

}  // namespace

std::optional<double> dtype_lowest(ir::DType t) {
  switch (t) {
    case ir::DType::Float16: return -65504.0;
    case ir::DType::BFloat16: return -3.3895313892515355e38;
    case ir::DType::Float: return static_cast<double>(std::numeric_limits<float>::lowest());
    case ir::DType::Double: return std::numeric_limits<double>::lowest();
    default: return std::nullopt;
  }
}

bool mask_may_hold_lowest(ir::Value* m) {
  const std::optional<double> lowest = dtype_lowest(m->dtype());
  if (!lowest) return false;
  if (const ir::Tensor* t = m->constant()) {  // (exactly)
    for (double x : t->to_doubles())
      if (x == *lowest) return true;
    return false;
  }
  const std::optional<double> least = lower_bound(m);
  return !least || *least <= *lowest / 2;  // (a sum above half of it cannot round to it)
}

bool mask_may_hold_minus_inf(ir::Value* m) {
  const std::optional<double> lowest = dtype_lowest(m->dtype());
  const std::optional<double> least = lower_bound(m);
  return !lowest || !least || *least < *lowest;  // (a sum below the dtype's range overflows to -inf)
}

void guard_attention_masks(ir::Model& model, const PassContext& ctx) {
  if (ctx.options.opset_version < 23) return;
  run(*model.graph);
}

}  // namespace torch2onnx::onnx_passes
