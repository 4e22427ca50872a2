#include "convert/torchscript/converter.h"

#include "serialize/infer_node.h"

namespace torch2onnx::convert::torchscript {

ir::Value* Converter::single_value(const TValue* v, ir::DType dtype, const char* what) {
  const Slot& s = get_slot(v);
  if (s.kind == Slot::Kind::List)
    throw Error(Error::Kind::Conversion, std::string(what) + " is a list; lists cannot cross control flow here");
  Arg a = arg_from_slot(s, v->type(), info_of(v));
  if (a.kind == Arg::Kind::None) throw Error(Error::Kind::Conversion, std::string(what) + " is None");
  SymbolicContext ctx("control flow", {a}, {}, graph_, options_.opset_version, this);
  return ctx.in_as(0, dtype);
}

std::pair<ir::DType, int64_t> Converter::tensor_type_of(std::initializer_list<const TValue*> vs) {
  for (const TValue* v : vs) {
    const ExampleInfo* info = v ? info_of(v) : nullptr;
    if (info && info->kind == ExampleInfo::Kind::Tensor)
      return {to_dtype(info->dtype), static_cast<int64_t>(info->sizes.size())};
  }
  return {ir::DType::Undefined, -1};
}

bool Converter::is_none_slot(const TValue* v) {
  const Slot& s = get_slot(v);
  return s.kind == Slot::Kind::Constant && s.constant.isNone();
}

ir::Value* Converter::value_or_placeholder(const TValue* v, std::pair<ir::DType, int64_t> type, const char* what) {
  if (!is_none_slot(v) || type.first == ir::DType::Undefined) return single_value(v, type.first, what);
  return placeholder(graph_, type.first, type.second);
}

// For an Optional that is None on one path, a value of the same type to
// carry where it is None (never read there: its is-present flag says so):
// `other`, the value on the other path, when it is a tensor defined in
// `enclosing` or around it, so that both paths' types agree and the dims'
// names reach the output (torch.onnx types the None like the other path).
ir::Value* Converter::stand_in(const TValue* other, ir::Graph* enclosing, ir::DType dt) {
  if (!other || is_none_slot(other) || !slots_.count(other)) return nullptr;
  const Slot& s = get_slot(other);
  if (s.kind != Slot::Kind::Value || !s.value || s.value->type().kind != ir::ValueType::Kind::Tensor ||
      s.value->type().dtype != dt)
    return nullptr;
  for (ir::Graph* g = enclosing; g; g = g->parent())
    if (g == s.value->graph()) return s.value;
  return nullptr;
}

bool Converter::convert_optional_test(Node* n) {
  if (!is_optional_test(n)) return false;
  const Slot& a = get_slot(n->input(0));
  const bool is = n->kind() == c10::aten::__is__;
  if (!a.present) {
    const bool none = is_none_slot(n->input(0));
    slot_of(n->output()) = Slot{Slot::Kind::Constant, c10::IValue(is == none), nullptr, {}, next_id_++};
    return true;
  }
  graph_->set_current_origin(origins_.of(n));
  ir::Value* out = a.present;
  if (is) {
    out = graph_->create_node("Not", {a.present}, 1)->output(0);
    out->set_type(ir::ValueType::tensor(ir::DType::Bool, {}));
  }
  slot_of(n->output()) = value_slot(out);
  return true;
}

std::shared_ptr<ir::Graph> Converter::branch(torch::jit::Block* b, const char* name) {
  auto g = new_subgraph(graph_, name);
  GraphScope scope(graph_, g.get());
  for (Node* inner : b->nodes()) convert_node(inner);
  return g;
}

void Converter::branch_outputs(ir::Graph* g, torch::jit::Block* b, Node* n) {
  GraphScope scope(graph_, g);
  for (size_t i = 0; i < b->outputs().size(); ++i) {
    if (is_list_type(n->output(i)->type())) {
      require_sequences(n, 13, "out of a branch needs If with sequences");
      // (a branch's run-time-length list already has its sequence's dtype: both paths take it)
      ir::DType dt = ir::DType::Undefined;
      for (torch::jit::Block* either : n->blocks())
        if (const Slot& s = get_slot(either->outputs()[i]); dt == ir::DType::Undefined &&
                                                              s.kind == Slot::Kind::Sequence && s.value)
          dt = s.value->type().dtype;
      if (dt == ir::DType::Undefined)
        dt = list_dtype({n->output(i), n->blocks()[0]->outputs()[i], n->blocks()[1]->outputs()[i]});
      // (a list the branch leaves unset, returned early on the other path: never read, an empty sequence)
      g->add_output(local(b->outputs()[i]->node()->kind() == c10::prim::Uninitialized
                              ? empty_sequence(dt)
                              : to_sequence(get_slot(b->outputs()[i]), dt, b->outputs()[i], n),
                          g));
      continue;
    }
    const auto type = if_output_type(n, i);
    ir::Value* v = nullptr;
    if (is_none_slot(b->outputs()[i])) {
      torch::jit::Block* other = n->blocks()[b == n->blocks()[0] ? 1 : 0];
      v = stand_in(other->outputs()[i], g->parent(), type.first);
    }
    if (!v) v = value_or_placeholder(b->outputs()[i], type, "an If output");
    g->add_output(local(v, g));
  }
}

void Converter::convert_if(Node* n) {
  const Slot& cs = get_slot(n->input());
  if (cs.kind == Slot::Kind::Constant) {  // a branch known at export time
    torch::jit::Block* b = n->blocks()[cs.constant.toBool() ? 0 : 1];
    for (Node* inner : b->nodes()) convert_node(inner);
    for (size_t i = 0; i < n->outputs().size(); ++i) slot_of(n->output(i)) = get_slot(b->outputs()[i]);
    return;
  }
  ir::Value* cond = single_value(n->input(), ir::DType::Bool, "an If condition");
  auto then_g = branch(n->blocks()[0], "then_branch");
  auto else_g = branch(n->blocks()[1], "else_branch");
  branch_outputs(then_g.get(), n->blocks()[0], n);
  branch_outputs(else_g.get(), n->blocks()[1], n);
  // An Optional output that a branch leaves None gets a bool output after
  // the others: whether it holds a value.
  std::vector<size_t> flagged;
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    if (n->output(i)->type()->kind() != c10::TypeKind::OptionalType || is_list_type(n->output(i)->type())) continue;
    const TValue* outs[2] = {n->blocks()[0]->outputs()[i], n->blocks()[1]->outputs()[i]};
    const bool varies = is_none_slot(outs[0]) != is_none_slot(outs[1]) || get_slot(outs[0]).present ||
                        get_slot(outs[1]).present;
    if (!varies) continue;
    for (size_t b = 0; b < 2; ++b) {
      ir::Graph* g = b == 0 ? then_g.get() : else_g.get();
      GraphScope scope(graph_, g);
      g->add_output(local(presence(outs[b]), g));
    }
    flagged.push_back(i);
  }
  graph_->set_current_origin(origins_.of(n));
  ir::Node* node = graph_->create_node("If", {cond}, n->outputs().size() + flagged.size(),
                                       {{"else_branch", else_g}, {"then_branch", then_g}});
  for (size_t f = 0; f < flagged.size(); ++f)
    node->output(n->outputs().size() + f)->set_type(ir::ValueType::tensor(ir::DType::Bool, {}));
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    if (is_list_type(n->output(i)->type())) {  // (the branches' sequences' type)
      node->output(i)->set_type(then_g->outputs()[i]->type());
      slot_of(n->output(i)) = sequence_slot(node->output(i));
      continue;
    }
    const auto type = if_output_type(n, i);
    node->output(i)->type().dtype = type.first;
    // (computed on no path of the example: unset there, or a branch it did not take)
    if (const ExampleInfo* info = info_of(n->output(i)); !info || info->kind != ExampleInfo::Kind::Tensor)
      with_rank(node->output(i), type.second);
    slot_of(n->output(i)) = Slot{Slot::Kind::Value, {}, node->output(i), {}, next_id_++};
  }
  for (size_t f = 0; f < flagged.size(); ++f) {
    slot_of(n->output(flagged[f])).present = node->output(n->outputs().size() + f);
    with_rank(node->output(flagged[f]), if_output_type(n, flagged[f]).second);
  }
}

std::pair<ir::DType, int64_t> Converter::if_output_type(Node* n, size_t i) {
  auto type = tensor_type_of({n->output(i), n->blocks()[0]->outputs()[i], n->blocks()[1]->outputs()[i]});
  if (type.first == ir::DType::Undefined) type.first = example_dtype(n->output(i));
  // Computed on no path of the example: what the branches' nodes say (ONNX's inference where they do not).
  for (size_t b = 0; b < 2 && (type.first == ir::DType::Undefined || type.second < 0); ++b) {
    const Slot& s = get_slot(n->blocks()[b]->outputs()[i]);
    if (s.kind != Slot::Kind::Value || !s.value || s.value->type().kind != ir::ValueType::Kind::Tensor) continue;
    if (s.value->type().rank() < 0) serialize::infer_value_type(s.value, options_.opset_version);
    if (type.first == ir::DType::Undefined) type.first = s.value->type().dtype;
    if (type.second < 0 && s.value->type().dtype == type.first) type.second = s.value->type().rank();
  }
  return type;
}

std::pair<ir::DType, int64_t> Converter::carried_type(Node* n, size_t k) {
  auto type = tensor_type_of({n->output(k), n->blocks()[0]->outputs()[1 + k], n->input(2 + k)});
  ir::DType dt = example_dtype(n->output(k));
  if (dt != ir::DType::Undefined) type.first = dt;
  return type;
}

// Whether v is defined outside node n (not in one of its blocks).
bool Converter::defined_outside(const TValue* v, const Node* n) {
  for (const torch::jit::Block* b = v->node()->owningBlock(); b; b = b->owningNode() ? b->owningNode()->owningBlock() : nullptr)
    if (b->owningNode() == n) return false;
  return true;
}

void Converter::convert_loop(Node* n) {
  torch::jit::Block* body_block = n->blocks()[0];
  const size_t carried = n->inputs().size() - 2;
  ir::Value* trips = single_value(n->input(0), ir::DType::Int64, "a loop trip count");
  ir::Value* cond = single_value(n->input(1), ir::DType::Bool, "a loop condition");
  std::vector<ir::Value*> inits;
  std::vector<ir::DType> types;
  std::vector<bool> is_list(carried);
  for (size_t k = 0; k < carried; ++k) {
    is_list[k] = is_list_type(n->input(2 + k)->type());
    if (is_list[k]) {  // a list growing in the loop: an ONNX sequence
      require_sequences(n, 13, "carried through a loop needs Loop with sequences");
      ir::DType dt = known_list_dtype({n->output(k), body_block->inputs()[1 + k], body_block->outputs()[1 + k],
                                       n->input(2 + k)})
                         .value_or(appended_dtype(body_block, body_block->inputs()[1 + k]).value_or(ir::DType::Float));
      types.push_back(dt);
      inits.push_back(to_sequence(get_slot(n->input(2 + k)), dt, n->input(2 + k), n));
      continue;
    }
    // One dtype per loop-carried value: the one it ends with in the example.
    ir::DType dt = example_dtype(n->output(k));
    if (dt == ir::DType::Undefined) dt = example_dtype(n->input(2 + k));
    if (dt == ir::DType::Undefined) dt = carried_type(n, k).first;  // None in the example: the body's tensor
    types.push_back(dt);
    // (a value a loop sets before it is read, e.g. the result of an early return, starts as a placeholder;
    // None at first, what the body sets it to when that is defined before the loop)
    ir::Value* init = is_none_slot(n->input(2 + k)) && defined_outside(body_block->outputs()[1 + k], n)
                          ? stand_in(body_block->outputs()[1 + k], graph_, dt)
                          : nullptr;
    inits.push_back(init ? init : value_or_placeholder(n->input(2 + k), carried_type(n, k), "a loop-carried value"));
  }
  // An Optional carried value also carries whether it holds a value (after the others).
  std::vector<size_t> flagged;
  for (size_t k = 0; k < carried; ++k)
    if (!is_list[k] && n->output(k)->type()->kind() == c10::TypeKind::OptionalType) flagged.push_back(k);
  for (size_t k : flagged) inits.push_back(presence(n->input(2 + k)));
  auto body = new_subgraph(graph_, "loop_body");
  std::vector<int64_t> unseen_rank(carried, -1);
  {
    GraphScope scope(graph_, body.get());
    ir::Value* iter = body->add_input(body->unique_name("iteration"), ir::ValueType::tensor(ir::DType::Int64, {}));
    body->add_input(body->unique_name("condition"), ir::ValueType::tensor(ir::DType::Bool, {}));
    slot_of(body_block->inputs()[0]) = Slot{Slot::Kind::Value, {}, iter, {}, next_id_++};
    for (size_t k = 0; k < carried; ++k) {
      ir::Value* in = body->add_input(body->unique_name(body_block->inputs()[1 + k]->debugName()),
                                      is_list[k] ? ir::ValueType::sequence(types[k]) : ir::ValueType::tensor(types[k]));
      // A loop the example never ran: the carried value's rank is its initial value's.
      if (!is_list[k] && !info_of(body_block->inputs()[1 + k]) && !is_none_slot(n->input(2 + k)) &&
          serialize::infer_value_type(inits[k], options_.opset_version)) {
        with_rank(in, inits[k]->type().rank());
        unseen_rank[k] = inits[k]->type().rank();
      }
      slot_of(body_block->inputs()[1 + k]) = is_list[k] ? sequence_slot(in) : value_slot(in);
    }
    for (size_t k : flagged)
      slot_of(body_block->inputs()[1 + k]).present =
          body->add_input(body->unique_name("present"), ir::ValueType::tensor(ir::DType::Bool, {}));
    for (Node* inner : body_block->nodes()) convert_node(inner);
    body->add_output(local(single_value(body_block->outputs()[0], ir::DType::Bool, "a loop condition"), body.get()));
    for (size_t k = 0; k < carried; ++k) {
      const TValue* out = body_block->outputs()[1 + k];
      ir::Value* v = nullptr;
      if (is_list[k]) v = to_sequence(get_slot(out), types[k], out, n);
      else if (is_none_slot(out)) v = stand_in(body_block->inputs()[1 + k], body.get(), types[k]);  // (the value carried in)
      if (!v) v = value_or_placeholder(out, carried_type(n, k), "a loop-carried value");
      body->add_output(local(v, body.get()));
    }
    for (size_t k : flagged) body->add_output(local(presence(body_block->outputs()[1 + k]), body.get()));
  }
  graph_->set_current_origin(origins_.of(n));
  std::vector<ir::Value*> ins{trips, cond};
  ins.insert(ins.end(), inits.begin(), inits.end());
  ir::Node* node = graph_->create_node("Loop", ins, carried + flagged.size(), {{"body", body}});
  for (size_t f = 0; f < flagged.size(); ++f) node->output(carried + f)->set_type(ir::ValueType::tensor(ir::DType::Bool, {}));
  for (size_t k = 0; k < carried; ++k) {
    if (is_list[k]) {
      node->output(k)->set_type(ir::ValueType::sequence(types[k]));
      slot_of(n->output(k)) = sequence_slot(node->output(k));
    } else {
      node->output(k)->type().dtype = types[k];
      with_rank(node->output(k), unseen_rank[k]);
      slot_of(n->output(k)) = value_slot(node->output(k));
    }
  }
  for (size_t f = 0; f < flagged.size(); ++f) {
    slot_of(n->output(flagged[f])).present = node->output(carried + f);
    with_rank(node->output(flagged[f]), carried_type(n, flagged[f]).second);
  }
}

bool Converter::convert_unseen_dtype(Node* n) {
  if (n->kind() != c10::prim::dtype || info_of(n->input(0))) return false;
  const Slot& s = get_slot(n->input(0));
  if (s.kind != Slot::Kind::Value || !s.value || s.value->quantization() ||
      s.value->type().dtype == ir::DType::Undefined)
    return false;
  const int64_t code = ir::scalar_type_from_dtype(s.value->type().dtype);
  slot_of(n->output()) = Slot{Slot::Kind::Constant, c10::IValue(code), nullptr, {}, next_id_++};
  return true;
}

ir::Value* Converter::presence(const TValue* v) {
  const Slot& s = get_slot(v);
  return s.present ? s.present : const_bool(!is_none_slot(v));
}

}  // namespace torch2onnx::convert::torchscript
