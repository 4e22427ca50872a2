#include "convert/pt2/converter.h"

#include <cctype>
#include <set>

#include "convert/core.h"
#include "convert/dispatch.h"
#include "convert/program.h"
#include "convert/unsupported.h"

namespace torch2onnx::convert::pt2 {
namespace {

bool is_symbol(const std::string& e) {
  if (e.empty() || !(std::isalpha(static_cast<unsigned char>(e[0])) || e[0] == '_')) return false;
  for (char c : e)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace

ir::Model ProgramConverter::run() {
  throw_if_unsupported(unsupported_operators(p_, registry_, options_.opset_version, options_.operator_export_type),
                       options_.opset_version);
  ir::Model model = interface_.new_model();
  graph_ = model.graph.get();
  Scope top{&p_.graph, scopes_++};
  scope_ = &top;
  make_inputs();
  convert_nodes(p_.graph);
  graph_->set_current_origin(nullptr);
  make_outputs();
  scope_ = nullptr;
  note_dropped_checks(model);
  return model;
}

bool ProgramConverter::ranks_fixed(const Program& p) {
  for (const auto& [expr, range] : p.range_constraints)
    if (!range.min || *range.min < 2) return false;
  return true;
}

// What ONNX cannot check at run time, noted in the model's metadata: the
// range of each dynamic dim (torch.export's range constraints) and how many
// run-time asserts of the program were dropped.
void ProgramConverter::note_dropped_checks(ir::Model& model) const {
  std::string ranges;
  std::set<std::string> noted;  // (symbols that share a name and a range: once)
  for (const auto& [expr, name] : symbol_names_) {
    auto it = p_.range_constraints.find(expr);
    if (it == p_.range_constraints.end()) continue;
    const std::string entry = name + " in [" + (it->second.min ? std::to_string(*it->second.min) : "-inf") + ", " +
                              (it->second.max ? std::to_string(*it->second.max) : "inf") + "]";
    if (noted.insert(entry).second) ranges += (ranges.empty() ? "" : "; ") + entry;
  }
  if (!ranges.empty()) model.metadata.emplace_back("torch2onnx.dynamic_dim_ranges", ranges);
  if (dropped_asserts_)
    model.metadata.emplace_back("torch2onnx.dropped_run_time_asserts",
                                std::to_string(dropped_asserts_) + " (ONNX has no assertion operator)");
}

void ProgramConverter::convert_nodes(const Graph& g) {
  const size_t total = g.nodes.size();
  size_t done = 0;
  const bool top = &g == &p_.graph;
  for (const Node& n : g.nodes) {
    convert_node(n);
    if (top && options_.progress && ++done % 256 == 0) options_.progress("converting", double(done) / double(total));
  }
}

[[noreturn]] void ProgramConverter::fail(const Node* n, const std::string& why) const {
  throw Error(Error::Kind::Conversion,
              n ? "cannot convert " + n->target + " in " + where(*n) + ": " + why : "cannot convert the program: " + why);
}

std::shared_ptr<const ir::Origin> ProgramConverter::origin_of(const Node& n) {
  auto o = std::make_shared<ir::Origin>();
  o->torch_kind = n.op.empty() ? n.target : n.op;
  o->module_path = module_path(n);
  o->source = user_source(n);
  o->user_source = o->source;
  o->source_stack = n.stack_trace;
  return o;
}

// The name of dim `axis` of graph input `input`: dynamic_axes' name for it,
// else one per symbol ("x_dim_0", from the first input that has it).
std::string ProgramConverter::dim_name(const std::string& input, size_t axis, int64_t rank, const std::string& expr) {
  if (auto given = interface_.axis_name(input, static_cast<int64_t>(axis), rank)) {
    if (expr.empty())
      throw Error(Error::Kind::Usage, "dynamic_axes names dim " + std::to_string(axis) + " of '" + input +
                                          "', which the program has as a static size: export the program with "
                                          "that dim dynamic (dynamic_shapes)");
    // (a dim the program derives from others, e.g. past + sequence, takes
    // the name too; only a plain symbol names the symbol everywhere)
    if (is_symbol(expr)) symbol_names_.emplace(expr, *given);
    return *given;
  }
  if (!is_symbol(expr)) return "";
  auto [it, fresh] = symbol_names_.emplace(expr, input + "_dim_" + std::to_string(axis));
  (void)fresh;
  return it->second;
}

ir::ValueType ProgramConverter::type_of(const TensorMeta& m, const std::string& graph_name) {
  ir::ValueType t = ir::ValueType::tensor(m.dtype);
  t.has_shape = true;
  const int64_t rank = static_cast<int64_t>(m.sizes.size());
  for (size_t k = 0; k < m.sizes.size(); ++k) {
    const SymInt& s = m.sizes[k];
    if (s.value && !(graph_name.size() && interface_.axis_name(graph_name, static_cast<int64_t>(k), rank))) {
      t.shape.push_back(ir::Dim::of(*s.value));
      continue;
    }
    const std::string expr = s.value ? "" : readable_expr(s.expr);
    const std::string name = graph_name.empty() ? symbol_name(s.expr) : dim_name(graph_name, k, rank, expr);
    t.shape.push_back(name.empty() ? ir::Dim{} : ir::Dim::named(name));
  }
  return t;
}

std::string ProgramConverter::symbol_name(const std::string& expr) const {
  auto it = symbol_names_.find(readable_expr(expr));
  return it == symbol_names_.end() ? "" : it->second;
}

const TensorMeta& ProgramConverter::meta(const std::string& name, const Node* n) const {
  auto it = scope_->graph->tensor_values.find(name);
  if (it == scope_->graph->tensor_values.end()) fail(n, "the program has no metadata for tensor '" + name + "'");
  return it->second;
}

void ProgramConverter::make_inputs() {
  size_t flat = 0, total = 0;
  for (const InputSpec& s : p_.input_specs) total += s.kind == InputSpec::Kind::UserInput;
  interface_.check_input_names(total);
  for (const InputSpec& s : p_.input_specs) {
    switch (s.kind) {
      case InputSpec::Kind::UserInput: {
        const std::string name = interface_.input_name(flat++, s.arg);
        const TensorMeta& m = meta(s.arg, nullptr);
        if (m.dtype == ir::DType::Undefined) fail(nullptr, "input '" + s.arg + "' is of type " + m.dtype_name);
        ir::ValueType type = type_of(m, name);
        interface_.apply_dynamic_axes(name, type, static_cast<int64_t>(m.sizes.size()), /*default_name=*/false, /*input=*/true);
        scope_->tensors[s.arg] = graph_->add_input(name, type);
        break;
      }
      case InputSpec::Kind::Parameter:
      case InputSpec::Kind::Buffer:
      case InputSpec::Kind::Constant:
        scope_->tensors[s.arg] = graph_->add_initializer(s.target, stored_tensor(s.target));
        break;
      case InputSpec::Kind::ConstantValue:  // (specialized: the program's nodes hold the value itself)
        break;
      default:
        fail(nullptr, "input '" + s.arg + "' is a " +
                          (s.kind == InputSpec::Kind::CustomObject ? "custom object" : "token") +
                          ", which the .pt2 frontend does not convert yet");
    }
  }
}

void ProgramConverter::set_tensor(const std::string& name, ir::Value* v, const Node& n) {
  const TensorMeta& m = meta(name, &n);
  OutputInfo info;
  info.dtype = m.dtype;
  check_dtype(n.op.empty() ? n.target : n.op, where(n), v, info);
  scope_->tensors[name] = v;
}

void ProgramConverter::convert_node(const Node& n) {
  graph_->set_current_origin(origin_of(n));
  if (converted_by_frontend(n)) return convert_structural(n);
  if (is_higher_order(n)) return convert_higher_order(n);
  const std::vector<OutputSlot> results = node_results(n);
  // A write into a view, or into a tensor with views: written back through
  // the views (one that changes nothing, dropout_ in eval, needs nothing).
  const auto writes = std::move(aliased_writes_);
  aliased_writes_.clear();
  for (const auto& [written, base] : writes) {
    auto before = scope_->tensors.find(written);
    const bool set = !results.empty() && results[0].set;
    if (set && before != scope_->tensors.end() && results[0].value == before->second) continue;
    if (!set || !is_in_place(n.op) || n.inputs.empty() || n.inputs[0].arg.kind != "as_tensor" ||
        n.inputs[0].arg.names.at(0) != written)
      fail(&n, "it writes into " + (base != written ? "a view of " + base : "'" + written + "', which has views") +
                   " other than as an in-place operator's first argument, which the .pt2 frontend does not convert "
                   "yet: save the functional program instead (ep = ep.run_decompositions({}) before torch.export.save)");
    write_back(written, results[0].value, n);
  }
  set_outputs(n, results);
}

std::vector<OutputSlot> ProgramConverter::node_results(const Node& n) {
  Call call;
  call.kind = canonical_kind(n.op);
  call.overload = n.overload == "default" ? "" : n.overload;
  call.where = where(n);
  call.args = schema_args(n);
  for (const Argument& o : n.outputs) call.outs.push_back(output_info(o, n));
  return convert_call(std::move(call), registry_, options_, graph_, this, [&](SymbolicContext& ctx) {
    ctx.set_dynamic_export(true);  // (tensor arguments say which of their sizes are symbolic)
    ctx.set_output_ranks_fixed(output_ranks_fixed_);
  });
}

void ProgramConverter::set_outputs(const Node& n, const std::vector<OutputSlot>& results) {
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const Argument& o = n.outputs[i];
    if (o.kind == "as_none") continue;
    if (i >= results.size() || !results[i].set) {
      if (o.kind == "as_tensor" && !o.names.empty()) scope_->unset.insert(o.names[0]);
      continue;
    }
    const OutputSlot& r = results[i];
    if (o.kind == "as_tensor") {
      set_tensor(o.names.at(0), r.value, n);
      // an in-place op's first argument now holds its result: later reads of it read that
      if (i == 0 && is_in_place(n.op) && !n.inputs.empty() && n.inputs[0].arg.kind == "as_tensor")
        scope_->tensors[n.inputs[0].arg.names.at(0)] = r.value;
    } else if (o.kind == "as_tensors") {
      if (!r.is_list || r.elements.size() != o.names.size())
        fail(&n, "its symbolic returned " + std::to_string(r.elements.size()) + " tensors where PyTorch has " +
                     std::to_string(o.names.size()));
      for (size_t e = 0; e < o.names.size(); ++e)
        if (!o.names[e].empty()) set_tensor(o.names[e], r.elements[e], n);
    } else if ((o.kind == "as_sym_int" || o.kind == "as_sym_float" || o.kind == "as_sym_bool") && !o.names.empty()) {
      // a number computed at run time (a 0-d value of the number's dtype: int64, double, bool)
      const ir::DType dt = o.kind == "as_sym_int" ? ir::DType::Int64 : o.kind == "as_sym_float" ? ir::DType::Double
                                                                                             : ir::DType::Bool;
      ir::Value* v = r.value;
      if (v->dtype() != dt) {
        v = graph_->create_node("Cast", {v}, 1, {{"to", static_cast<int64_t>(dt)}})->output(0);  // (DType: ONNX's codes)
        ir::ValueType t = r.value->type();
        t.dtype = dt;
        v->set_type(t);
      }
      scope_->syms[o.names[0]] = Sym{v, std::nullopt, dt};
    } else {
      fail(&n, "its output is of a kind (" + o.kind + ") the .pt2 frontend does not convert yet");
    }
  }
}

// The user outputs (mutated buffers are not outputs, as torch.onnx has it),
// with the program's shapes (symbols named as the inputs name them).
void ProgramConverter::make_outputs() {
  std::vector<GraphInterface::Output> outputs;
  for (const OutputSpec& s : p_.output_specs) {
    if (s.kind != OutputSpec::Kind::UserOutput) continue;
    if (s.arg.empty()) {  // a number the program computed at export time: a 0-d constant, as TorchScript's
      if (s.value.kind == "as_none") continue;  // (None outputs are left out, as torch.onnx leaves them)
      const auto number = constant_number(s.value);
      if (!number)
        fail(nullptr, "an output is a constant of a kind (" + s.value.kind + ") the .pt2 frontend does not convert yet");
      const ir::DType dt = number->dtype;
      ir::Tensor t = dt == ir::DType::Double ? ir::Tensor::from_doubles(dt, {number->f}, {})
                                             : ir::Tensor::scalar_int(dt, number->i);
      ir::Value* c = graph_->create_node("Constant", {}, 1, {{"value", std::move(t)}})->output(0);
      c->set_type(ir::ValueType::tensor(dt, std::vector<int64_t>{}));
      outputs.push_back({c, 0, ir::DType::Undefined});
      continue;
    }
    ir::Value* v = nullptr;
    refresh(s.arg);
    if (auto t = scope_->tensors.find(s.arg); t != scope_->tensors.end()) v = t->second;
    else if (auto y = scope_->syms.find(s.arg); y != scope_->syms.end()) v = y->second.value;
    if (!v)
      fail(nullptr, "output '" + s.arg + "' is not computed" +
                        (scope_->unset.count(s.arg) ? " (its symbolic left it out)" : ""));
    ir::DType complex_dtype = ir::DType::Undefined;
    if (auto m = p_.graph.tensor_values.find(s.arg); m != p_.graph.tensor_values.end()) {
      if (!v->producer()) v = graph_->create_node("Identity", {v}, 1)->output(0);  // (an input keeps its type)
      ir::ValueType t = type_of(m->second, "");
      t.dtype = v->dtype() == ir::DType::Undefined ? m->second.dtype : v->dtype();
      v->set_type(t);
      if (m->second.dtype == ir::DType::Complex64 || m->second.dtype == ir::DType::Complex128)
        complex_dtype = m->second.dtype;
    }
    outputs.push_back({v, v->type().has_shape ? v->type().rank() : -1, complex_dtype});
  }
  interface_.add_outputs(graph_, outputs);
}

}  // namespace torch2onnx::convert::pt2

namespace torch2onnx::convert {

ir::Model convert_program(const frontend::pt2::Program& program, const Registry& registry,
                          const ExportOptions& options) {
  return pt2::ProgramConverter(program, registry, options).run();
}

}  // namespace torch2onnx::convert
