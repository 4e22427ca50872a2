#include "convert/graph_interface.h"

#include <iostream>
#include "torch2onnx/warnings.h"

namespace torch2onnx::convert {
namespace {

ir::Value* value_named(ir::Graph* g, const std::string& name) {
  for (ir::Value* v : g->all_values())
    if (v->name() == name) return v;
  return nullptr;
}

bool is_graph_input(const ir::Graph* g, const ir::Value* v) {
  for (const ir::Value* in : g->inputs())
    if (in == v) return true;
  return false;
}

}  // namespace

ir::Model GraphInterface::new_model() const {
  ir::Model model;
  model.opset = options_.opset_version;
  model.ir_version = ir::ir_version_for_opset(model.opset);
  model.custom_opsets = options_.custom_opsets;
  model.graph->set_name("main_graph");
  return model;
}

std::string GraphInterface::input_name(size_t index, const std::string& fallback) const {
  return index < options_.input_names.size() ? options_.input_names[index] : fallback;
}

void GraphInterface::check_input_names(size_t inputs) const {
  if (options_.input_names.size() > inputs)
    throw Error(Error::Kind::Usage, "input_names has " + std::to_string(options_.input_names.size()) +
                                        " names but the model has " + std::to_string(inputs) +
                                        " inputs (including parameters)");
}

std::optional<std::string> GraphInterface::axis_name(const std::string& value, int64_t axis, int64_t rank) {
  auto it = options_.dynamic_axes.find(value);
  if (it == options_.dynamic_axes.end()) return std::nullopt;
  used_dynamic_axes_.insert(value);
  int64_t k = 0;
  for (const DynamicAxis& a : it->second) {
    ++k;
    if ((a.axis < 0 ? a.axis + rank : a.axis) == axis)
      return a.name.empty() ? value + "_dynamic_axes_" + std::to_string(k) : a.name;
  }
  return std::nullopt;
}

void GraphInterface::apply_dynamic_axes(const std::string& value, ir::ValueType& type, int64_t rank,
                                        bool default_name, bool input) {
  auto it = options_.dynamic_axes.find(value);
  if (it == options_.dynamic_axes.end()) return;
  used_dynamic_axes_.insert(value);
  if (default_name && !options_.strict_dynamic_axes) {
    // An output name torch2onnx chose ("output_1"): keys meant for another
    // exporter's names (torch.onnx numbers its outputs "5", "15" ...) may
    // land on it. torch.onnx ignores a key that names no value, with a
    // warning: the axes that do not fit are ignored the same way.
    for (const DynamicAxis& a : it->second) {
      const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
      if (axis < 0 || axis >= rank) {
        warn("dynamic_axes names '" + value + "', which is the default name of an output with " +
             std::to_string(rank) + " dim" + (rank == 1 ? "" : "s") + ", with axis " + std::to_string(a.axis) +
             ": the key is ignored (give output_names to name outputs)");
        return;
      }
    }
  }
  if (!type.has_shape) {
    type.has_shape = true;
    type.shape.assign(static_cast<size_t>(rank), ir::Dim{});
  }
  for (const DynamicAxis& a : it->second) {
    const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
    if (axis < 0 || axis >= rank)
      throw Error(Error::Kind::Usage, "dynamic_axes: axis " + std::to_string(a.axis) + " of '" + value +
                                          "' is out of range: it has " + std::to_string(rank) + " dimension" +
                                          (rank == 1 ? "" : "s"));
    std::string name = *axis_name(value, axis, rank);
    const ir::Dim& example = type.shape[static_cast<size_t>(axis)];
    if (input && example.is_static()) {
      const std::string where = "dim " + std::to_string(axis) + " of '" + value + "'";
      auto [seen, fresh] = input_dim_sizes_.emplace(name, std::make_pair(example.value, where));
      if (!fresh && seen->second.first != example.value) {
        std::string own = name + "_" + std::to_string(axis);
        for (int k = 2; input_dim_sizes_.count(own); ++k) own = name + "_" + std::to_string(axis) + "_" + std::to_string(k);
        warn("dynamic_axes names " + where + " '" + name + "', as " + seen->second.second +
             ", but the example gives them different sizes (" + std::to_string(example.value) + " and " +
             std::to_string(seen->second.first) + "): ONNX reads one name as one size, so " + where +
             " is named '" + own + "'");
        input_dim_sizes_.emplace(own, std::make_pair(example.value, where));
        name = own;
      }
    }
    type.shape[static_cast<size_t>(axis)] = ir::Dim::named(name);
  }
}

void GraphInterface::add_outputs(ir::Graph* g, const std::vector<Output>& outputs) {
  if (outputs.empty()) throw Error(Error::Kind::Conversion, "the model returns no tensors");
  if (options_.output_names.size() > outputs.size())
    throw Error(Error::Kind::Usage, "output_names has " + std::to_string(options_.output_names.size()) +
                                        " names but the model has " + std::to_string(outputs.size()) + " outputs");
  std::set<ir::Value*> seen;
  for (size_t i = 0; i < outputs.size(); ++i) {
    ir::Value* v = outputs[i].value;
    std::string name = i < options_.output_names.size() ? options_.output_names[i]
                       : outputs.size() == 1             ? std::string("output")
                                                         : "output_" + std::to_string(i);
    // A value that is an input, an initializer or already an output gets its own Identity.
    if (!v->producer() || seen.count(v)) {
      ir::Value* id = g->create_node("Identity", {v}, 1)->output(0);
      id->set_type(v->type());
      v = id;
    }
    seen.insert(v);
    int64_t rank = outputs[i].rank;
    if (outputs[i].complex_dtype != ir::DType::Undefined) {
      // ONNX has no complex arithmetic: the output is its real view [..., 2]
      if (v->type().has_shape && rank >= 0 && v->type().rank() == rank) v->type().shape.push_back(ir::Dim::of(2));
      if (rank >= 0) ++rank;
      std::cerr << "torch2onnx: note: output " << i << " (" << name << ") is "
                << ir::dtype_name(outputs[i].complex_dtype)
                << ": ONNX has no complex arithmetic, so it is exported as its real view [..., 2] of (real, "
                   "imaginary) pairs, what torch.view_as_real gives\n";
    }
    // Graph outputs need a shape (the checker requires one): at least the
    // rank PyTorch produced (inference fills in what it can). A rank decided
    // at run time (a squeeze) is declared as the example's, its dims unnamed
    // (ONNX Runtime notes a run whose rank differs, and returns it).
    if (v->type().rank_varies) {
      v->type().has_shape = false;
      v->type().shape.clear();
    }
    if (!v->type().has_shape && rank >= 0) {
      v->type().has_shape = true;
      v->type().shape.assign(static_cast<size_t>(rank), ir::Dim{});
    }
    if (v->name() != name) {
      if (ir::Value* holder = g->names().taken(name) ? value_named(g, name) : nullptr;
          holder && (holder->is_initializer() || is_graph_input(g, holder))) {
        // A default name yields to an input or a weight (a forward(output)
        // argument); a name the user gave cannot be both.
        if (i < options_.output_names.size())
          throw Error(Error::Kind::Usage, "output name '" + name + "' is already the name of a graph input or "
                                          "initializer: ONNX values need distinct names");
        name = g->unique_name(name);
        g->names().release(name);
      } else if (holder) {
        g->rename_unique(holder, name + "_renamed");
      } else if (g->names().taken(name)) {
        g->names().release(name);  // a node's name: nodes and values are named apart in ONNX
      }
      g->rename(v, name);
    }
    if (has_dynamic_axes(name)) {
      if (v->type().has_shape) rank = v->type().rank();
      if (rank < 0) throw Error(Error::Kind::Usage, "dynamic_axes: the rank of output '" + name + "' is unknown");
      apply_dynamic_axes(name, v->type(), rank, /*default_name=*/i >= options_.output_names.size());
    }
    g->add_output(v);
  }
  check_unused_dynamic_axes(g);
}

void GraphInterface::check_unused_dynamic_axes(const ir::Graph* g) const {
  for (const auto& [name, axes] : options_.dynamic_axes) {
    if (used_dynamic_axes_.count(name)) continue;
    std::string inputs, outputs;
    for (const ir::Value* v : g->inputs()) inputs += (inputs.empty() ? "" : ", ") + v->name();
    for (const ir::Value* v : g->outputs()) outputs += (outputs.empty() ? "" : ", ") + v->name();
    if (options_.strict_dynamic_axes)
      throw Error(Error::Kind::Usage, "dynamic_axes names '" + name + "', which is neither an input nor an output " +
                                          "of the exported model (inputs: " + inputs + "; outputs: " + outputs + ")");
    // (torch.onnx warns and ignores the key: code written for it passes
    // keys for the names it chooses, which torch2onnx's may not be)
    warn("dynamic_axes names '" + name + "', which is neither an input nor an output of the exported model (inputs: " +
         inputs + "; outputs: " + outputs + "): the key is ignored");
  }
}

}  // namespace torch2onnx::convert
