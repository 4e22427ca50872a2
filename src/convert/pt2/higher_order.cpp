// Higher-order operators of a program: torch.cond -> ONNX If, while_loop ->
// ONNX Loop, and the wrappers (no_grad / autocast regions, invoke_subgraph)
// inlined. Their bodies are graphs of the program with names of their own:
// each is converted in a scope of its own, its inputs bound to the
// operands' values (ONNX subgraphs read outer values directly).
#include <cstdint>
#include <limits>
#include <set>

#include "convert/pt2/converter.h"

namespace torch2onnx::convert::pt2 {
namespace {

const Graph& body_graph(const Node& n, size_t index) {
  size_t seen = 0;
  for (const NamedArgument& na : n.inputs)
    if (na.arg.graph && seen++ == index) return *na.arg.graph;
  throw Error(Error::Kind::Load, n.target + " in " + where(n) + " has no body graph " + std::to_string(index));
}

}  // namespace

bool is_higher_order(const Node& n) {
  static const std::set<std::string> ops{"higher_order::cond", "higher_order::while_loop",
                                         "higher_order::wrap_with_set_grad_enabled",
                                         "higher_order::wrap_with_autocast", "higher_order::invoke_subgraph"};
  return ops.count(n.op) != 0;
}

void ProgramConverter::convert_higher_order(const Node& n) {
  if (n.op == "higher_order::cond") return convert_cond(n);
  if (n.op == "higher_order::while_loop") return convert_while_loop(n);
  inline_body(n);
}

std::vector<std::string> ProgramConverter::output_names(const Node& n) const {
  std::vector<std::string> names;
  for (const Argument& o : n.outputs) {
    if (o.kind == "as_tensor" || o.kind == "as_tensors" || o.kind == "as_sym_int") {
      names.insert(names.end(), o.names.begin(), o.names.end());
    } else if (o.kind != "as_none") {
      fail(&n, "its output is of a kind (" + o.kind + ") the .pt2 frontend does not convert yet");
    }
  }
  return names;
}

std::vector<ir::Value*> ProgramConverter::convert_body(const Graph& body, const std::vector<Arg>& operands,
                                                       ir::Graph* g, const Node& n) {
  if (body.inputs.size() != operands.size())
    fail(&n, "its body takes " + std::to_string(body.inputs.size()) + " inputs, given " +
                 std::to_string(operands.size()));
  Scope inner{&body, scopes_++};
  Scope* outer = scope_;
  GraphScope in_g(graph_, g);
  for (size_t i = 0; i < operands.size(); ++i) {
    const Argument& in = body.inputs[i];
    const std::string name = in.names.empty() ? "" : in.names[0];
    ir::Value* v = operands[i].value;
    if (!v) {  // a number: a 0-d tensor of the body's graph
      SymbolicContext ctx(n.op, {operands[i]}, {}, g, options_.opset_version, this);
      v = ctx.in(0);
    }
    if (in.kind == "as_tensor") inner.tensors[name] = v;
    else if (in.kind == "as_sym_int" || in.kind == "as_sym_bool" || in.kind == "as_sym_float")
      inner.syms[name] = Sym{v, operands[i].example, operands[i].dtype};
    else if (in.kind != "as_none")
      fail(&n, "its body takes an input of a kind (" + in.kind + ") the .pt2 frontend does not convert yet");
  }
  scope_ = &inner;
  struct Restore {
    Scope*& s;
    Scope* saved;
    ~Restore() { s = saved; }
  } restore{scope_, outer};
  convert_nodes(body);
  std::vector<ir::Value*> outs;
  for (const Argument& o : body.outputs) {
    for (const std::string& name : o.names) {
      ir::Value* v = nullptr;
      refresh(name);
      if (auto t = inner.tensors.find(name); t != inner.tensors.end()) v = t->second;
      else if (auto s = inner.syms.find(name); s != inner.syms.end()) v = s->second.value;
      if (!v) fail(&n, "its body's output '" + name + "' is not computed");
      outs.push_back(v);
    }
  }
  return outs;
}

// The operands after the body graphs (tensors and numbers), flattened.
static std::vector<Arg> flat_operands(std::vector<Arg> args) {
  std::vector<Arg> out;
  for (Arg& a : args) {
    if (a.kind == Arg::Kind::List) {
      for (Arg& e : a.elements) out.push_back(std::move(e));
    } else {
      out.push_back(std::move(a));
    }
  }
  return out;
}

// torch.cond(pred, true_fn, false_fn, operands): an If, or the branch itself
// where the predicate is known at export time.
void ProgramConverter::convert_cond(const Node& n) {
  if (n.inputs.size() != 4) fail(&n, "expected (pred, true_fn, false_fn, operands)");
  const Arg pred = make_arg(n.inputs[0], n);
  const std::vector<Arg> operands = flat_operands({make_arg(n.inputs[3], n)});
  const std::vector<std::string> names = output_names(n);
  std::vector<ir::Value*> results;
  if (pred.constant) {
    results = convert_body(body_graph(n, pred.i != 0 || pred.b ? 0 : 1), operands, graph_, n);
  } else {
    SymbolicContext ctx(n.op, {pred}, {}, graph_, options_.opset_version, this);
    ir::Value* cond = ctx.in_as(0, ir::DType::Bool);
    std::shared_ptr<ir::Graph> branches[2];
    for (size_t b = 0; b < 2; ++b) {
      branches[b] = new_subgraph(graph_, b == 0 ? "then_branch" : "else_branch");
      for (ir::Value* v : convert_body(body_graph(n, b), operands, branches[b].get(), n))
        branches[b]->add_output(local(v, branches[b].get(), options_.opset_version));
      if (branches[b]->outputs().size() != names.size())
        fail(&n, "a branch returns " + std::to_string(branches[b]->outputs().size()) + " values where cond has " +
                     std::to_string(names.size()));
    }
    graph_->set_current_origin(origin_of(n));
    ir::Node* node = graph_->create_node("If", {cond}, names.size(),
                                         {{"else_branch", branches[1]}, {"then_branch", branches[0]}});
    for (size_t i = 0; i < names.size(); ++i) {
      if (scope_->graph->tensor_values.count(names[i])) node->output(i)->set_type(type_of(meta(names[i], &n), ""));
      results.push_back(node->output(i));
    }
  }
  bind_results(n, names, results);
}

// while_loop(cond_fn, body_fn, carried, additional): the condition once
// before the loop, then an ONNX Loop whose body runs body_fn and then
// cond_fn on its results (the condition of the next iteration).
void ProgramConverter::convert_while_loop(const Node& n) {
  if (n.inputs.size() != 4) fail(&n, "expected (cond_fn, body_fn, carried_inputs, additional_inputs)");
  const Graph& cond_g = body_graph(n, 0);
  const Graph& body_g = body_graph(n, 1);
  std::vector<Arg> carried = flat_operands({make_arg(n.inputs[2], n)});
  const std::vector<Arg> extra = flat_operands({make_arg(n.inputs[3], n)});
  const std::vector<std::string> names = output_names(n);
  if (names.size() != carried.size())
    fail(&n, "it carries " + std::to_string(carried.size()) + " values but returns " + std::to_string(names.size()));
  auto with_extra = [&](std::vector<Arg> args) {
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  auto as_bool = [&](ir::Value* v, ir::Graph* g) {
    SymbolicContext ctx(n.op, {}, {}, g, options_.opset_version, this);
    ir::Value* b = ctx.cast(v, ir::DType::Bool);
    return ctx.op("Reshape", {b, ctx.const_ints(std::vector<int64_t>{})});  // (a one-element tensor as ONNX's 0-d condition)
  };
  // Carried values as values of this graph (numbers included).
  std::vector<ir::Value*> inits;
  for (const Arg& a : carried) {
    SymbolicContext ctx(n.op, {a}, {}, graph_, options_.opset_version, this);
    inits.push_back(ctx.in(0));
  }
  ir::Value* first = as_bool(convert_body(cond_g, with_extra(carried), graph_, n).at(0), graph_);
  auto body = new_subgraph(graph_, "loop_body");
  body->add_input(body->unique_name("iteration"), ir::ValueType::tensor(ir::DType::Int64, {}));
  body->add_input(body->unique_name("condition"), ir::ValueType::tensor(ir::DType::Bool, {}));
  std::vector<Arg> inside;
  for (size_t k = 0; k < carried.size(); ++k) {
    // (its dims may change from one iteration to the next: the rank only)
    ir::ValueType t = ir::ValueType::tensor(inits[k]->dtype());
    const Argument& in = body_g.inputs.at(k);
    if (auto m = in.names.empty() ? body_g.tensor_values.end() : body_g.tensor_values.find(in.names[0]);
        m != body_g.tensor_values.end()) {
      t.has_shape = true;
      t.shape.assign(m->second.sizes.size(), ir::Dim{});
    } else {
      t.has_shape = true;  // a number
    }
    Arg a = carried[k];
    a.value = body->add_input(body->unique_name(names[k]), t);
    a.constant = false;
    a.id = -1;
    inside.push_back(a);
  }
  std::vector<ir::Value*> next = convert_body(body_g, with_extra(inside), body.get(), n);
  if (next.size() != carried.size())
    fail(&n, "its body returns " + std::to_string(next.size()) + " values for " + std::to_string(carried.size()) +
                 " carried ones");
  std::vector<Arg> next_args = inside;
  for (size_t k = 0; k < next.size(); ++k) next_args[k].value = next[k];
  ir::Value* again = as_bool(convert_body(cond_g, with_extra(next_args), body.get(), n).at(0), body.get());
  body->add_output(local(again, body.get(), options_.opset_version));
  for (size_t k = 0; k < next.size(); ++k) {
    ir::Value* v = next[k];
    if (v->dtype() != inits[k]->dtype()) {
      SymbolicContext ctx(n.op, {}, {}, body.get(), options_.opset_version, this);
      v = ctx.cast(v, inits[k]->dtype());
    }
    body->add_output(local(v, body.get(), options_.opset_version));
  }
  graph_->set_current_origin(origin_of(n));
  std::vector<ir::Value*> ins{nullptr, first};
  ins.insert(ins.end(), inits.begin(), inits.end());
  ir::Node* node = graph_->create_node("Loop", ins, carried.size(), {{"body", body}});
  for (size_t k = 0; k < names.size(); ++k) {
    ir::Value* out = node->output(k);
    if (scope_->graph->tensor_values.count(names[k])) {
      out->set_type(type_of(meta(names[k], &n), ""));
      set_tensor(names[k], out, n);
    } else {
      out->set_type(ir::ValueType::tensor(inits[k]->dtype(), {}));
      scope_->syms[names[k]] = Sym{out, std::nullopt, inits[k]->dtype()};
    }
  }
}

// no_grad / autocast regions and invoke_subgraph: the body, inlined.
void ProgramConverter::inline_body(const Node& n) {
  std::vector<Arg> operands;
  bool after_body = false;
  for (const NamedArgument& na : n.inputs) {
    if (na.arg.graph) {
      after_body = true;
    } else if (after_body && na.arg.kind != "as_string") {  // (invoke_subgraph's identifier)
      operands.push_back(make_arg(na, n));
    }
  }
  const std::vector<ir::Value*> results = convert_body(body_graph(n, 0), flat_operands(std::move(operands)), graph_, n);
  bind_results(n, output_names(n), results);
}

void ProgramConverter::bind_results(const Node& n, const std::vector<std::string>& names,
                                    const std::vector<ir::Value*>& results) {
  if (results.size() != names.size())
    fail(&n, "its body returns " + std::to_string(results.size()) + " values where the program has " +
                 std::to_string(names.size()));
  for (size_t i = 0; i < names.size(); ++i) {
    if (scope_->graph->tensor_values.count(names[i])) set_tensor(names[i], results[i], n);
    else scope_->syms[names[i]] = Sym{results[i], std::nullopt, results[i]->dtype()};
  }
}

}  // namespace torch2onnx::convert::pt2
