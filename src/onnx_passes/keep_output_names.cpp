// The graph's outputs keep the names the conversion gave them (output_names,
// or the defaults) whatever the passes do to the values behind them. A pass
// that replaces an output's value (constant folding, a Conv+BatchNorm
// fusion, an output that becomes an input or another output) hands its
// readers over, the graph output among them, but not its name: a model
// ending in Conv -> BatchNorm lost output_names=["out"] that way. Recorded
// before the passes and put back after them, so no pass has to remember:
// the value takes the name back when it is a node's result no other output
// names; otherwise the output becomes an Identity of it under the name.
#include <functional>
#include <map>
#include <stdexcept>

#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

// The live value of `g` (or of a subgraph: they share the names) named `name`.
ir::Value* holder(ir::Graph& g, const std::string& name) {
  for (ir::Value* v : g.all_values())
    if (v->name() == name) return v;
  for (const auto& n : g.nodes())
    for (ir::Graph* sub : n->subgraphs())
      if (ir::Value* v = holder(*sub, name)) return v;
  return nullptr;
}

// Makes `name` free for a value: a dead value's claim is released, a live
// value other than an output that owns it is renamed.
void free_name(ir::Graph& g, const std::string& name) {
  if (!g.names().taken(name)) return;
  if (ir::Value* v = holder(g, name)) g.rename_unique(v, name + "_renamed");
  else g.names().release(name);
}

}  // namespace

std::vector<std::string> output_names(const ir::Model& model) {
  std::vector<std::string> names;
  for (const ir::Value* v : model.graph->outputs()) names.push_back(v->name());
  return names;
}

void restore_output_names(ir::Model& model, const std::vector<std::string>& names) {
  ir::Graph& g = *model.graph;
  if (names.size() != g.outputs().size())
    throw std::logic_error("restore_output_names: the passes changed the number of graph outputs");
  // outputs whose value still has the name keep it
  std::map<const ir::Value*, size_t> named;
  for (size_t i = 0; i < names.size(); ++i)
    if (g.outputs()[i]->name() == names[i]) named.emplace(g.outputs()[i], i);
  for (size_t i = 0; i < names.size(); ++i) {
    ir::Value* v = g.outputs()[i];
    auto it = named.find(v);
    if (it != named.end() && it->second == i) continue;
    const bool renamable = v->producer() && !v->is_initializer() && it == named.end();
    if (renamable) {
      free_name(g, names[i]);
      g.rename(v, names[i]);
      named.emplace(v, i);
      continue;
    }
    // an input, a weight or a value another output names: Identity under the name
    ir::Node* id = g.create_node("Identity", {v}, 1);
    id->output(0)->set_type(v->type());
    g.set_output(i, id->output(0));
    free_name(g, names[i]);
    g.rename(id->output(0), names[i]);
    named.emplace(id->output(0), i);
  }
}

}  // namespace torch2onnx::onnx_passes
