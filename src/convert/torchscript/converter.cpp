#include "convert/torchscript/converter.h"

#include <functional>
#include <iostream>
#include <iterator>

#include "convert/core.h"
#include "convert/dispatch.h"
#include "convert/torchscript.h"
#include "convert/unsupported.h"
#include "torch2onnx/warnings.h"

namespace torch2onnx::convert::torchscript {

ir::Model Converter::run() {
  ir::Model model = interface_.new_model();
  graph_ = model.graph.get();
  make_inputs();
  auto nodes = tg_.graph->nodes();
  const auto total = std::distance(nodes.begin(), nodes.end());
  int64_t done = 0;
  for (Node* n : nodes) {
    convert_node(n);
    if (options_.progress && ++done % 256 == 0) options_.progress("converting", double(done) / double(total));
  }
  graph_->set_current_origin(nullptr);
  make_outputs();
  return model;
}

ir::ValueType Converter::input_type(const at::Tensor& t) {
  return ir::ValueType::tensor(to_dtype(t.scalar_type()), t.sizes().vec());
}

void Converter::make_inputs() {
  size_t used_params = 0;
  for (const auto& p : tg_.params) used_params += p.value->hasUses() ? 1 : 0;
  const size_t total = tg_.user_inputs.size() + used_params;
  interface_.check_input_names(total);
  size_t flat = 0;
  for (size_t i = 0; i < tg_.user_inputs.size(); ++i, ++flat) {
    std::string base = tg_.user_input_names[i];
    const std::string name = interface_.input_name(flat, base);
    ir::ValueType type = input_type(tg_.example_inputs[i]);
    interface_.apply_dynamic_axes(name, type, tg_.example_inputs[i].dim(), /*default_name=*/false, /*input=*/true);
    const bool optional = tg_.user_inputs[i]->type()->kind() == c10::TypeKind::OptionalType;
    const bool numbers = i < tg_.user_input_forms.size() &&
                         tg_.user_input_forms[i] == torch_side::TorchGraph::InputForm::NumberList;
    if (optional) type.kind = ir::ValueType::Kind::Optional;
    if (numbers) {
      // A List[int] / List[float]: a sequence of 0-d tensors (as torch.onnx
      // has it); prim::tolist reads it as it is, anything else as the 1-D tensor.
      // (bind_inputs makes these from opset 11, ONNX's first with sequences)
      ir::Value* seq = graph_->add_input(name, ir::ValueType::sequence(type.dtype));
      ir::Value* flat = graph_->create_node("ConcatFromSequence", {seq}, 1,
                                            {{"axis", int64_t{0}}, {"new_axis", int64_t{1}}})->output(0);
      flat->set_type(ir::ValueType::tensor(type.dtype));
      slot_of(tg_.user_inputs[i]) = value_slot(flat);
      number_lists_[flat] = seq;
      continue;
    }
    ir::Value* v = graph_->add_input(name, type);
    Slot& s = slot_of(tg_.user_inputs[i]) = Slot{Slot::Kind::Value, {}, v, {}, next_id_++};
    if (optional) {  // `is None` reads whether it holds a tensor; its readers get the tensor (optional_element)
      s.present = graph_->create_node("OptionalHasElement", {v}, 1)->output(0);
      s.present->set_type(ir::ValueType::tensor(ir::DType::Bool, {}));
    }
  }
  for (const auto& p : tg_.params) {
    if (!p.value->hasUses()) continue;
    std::string name = interface_.input_name(flat++, p.name);
    ir::Value* v = nullptr;
    if (options_.export_params) {
      v = graph_->add_initializer(name, borrow(p.tensor));
    } else {
      v = graph_->add_input(name, input_type(p.tensor));
    }
    slot_of(p.value) = Slot{Slot::Kind::Value, {}, v, {}, next_id_++};
  }
}

Slot& Converter::slot_of(const TValue* v) {
  return slots_[v];
}

const Slot& Converter::get_slot(const TValue* v) {
  auto it = slots_.find(v);
  if (it == slots_.end() || it->second.kind == Slot::Kind::Empty)
    throw Error(Error::Kind::Internal, "conversion: value %" + v->debugName() + " has no ONNX counterpart");
  return it->second;
}

void Converter::convert_structural(Node* n) {
  const auto k = n->kind();
  if (k == c10::prim::Constant) {
    auto iv = torch::jit::toIValue(n->output());
    if (iv && iv->isTensor() && iv->toTensor().is_quantized()) {
      const std::string name = n->output()->hasDebugName() ? n->output()->debugName() : std::string();
      slot_of(n->output()) = Slot{Slot::Kind::Value, {}, quantized_constant(iv->toTensor(), name), {}, next_id_++};
      return;
    }
    slot_of(n->output()) = Slot{Slot::Kind::Constant, iv ? *iv : c10::IValue(), nullptr, {}, next_id_++};
  } else if (k == c10::prim::ListConstruct || k == c10::prim::TupleConstruct) {
    Slot s{Slot::Kind::List, {}, nullptr, {}, next_id_++};
    for (TValue* in : n->inputs()) s.elements.push_back(get_slot(in));
    slot_of(n->output()) = std::move(s);
  } else if (k == c10::prim::DictConstruct) {
    // Keys are dropped: a dict output becomes its values, in order.
    Slot s{Slot::Kind::List, {}, nullptr, {}, next_id_++};
    for (size_t i = 1; i < n->inputs().size(); i += 2) s.elements.push_back(get_slot(n->input(i)));
    slot_of(n->output()) = std::move(s);
  } else if (k == c10::prim::ListUnpack || k == c10::prim::TupleUnpack) {
    Slot s = get_slot(n->input());
    std::vector<Slot> elems = unpack(s, n->outputs().size(), n);
    for (size_t i = 0; i < elems.size(); ++i) slot_of(n->output(i)) = elems[i];
  } else if (k == c10::prim::TupleIndex) {
    Slot s = get_slot(n->input(0));
    const Slot& idx = get_slot(n->input(1));
    if (idx.kind != Slot::Kind::Constant) throw Error(Error::Kind::Conversion, "tuple index must be a constant");
    auto elems = unpack(s, 0, n);
    int64_t i = idx.constant.toInt();
    if (i < 0) i += static_cast<int64_t>(elems.size());
    slot_of(n->output()) = elems.at(static_cast<size_t>(i));
  } else if (k == c10::prim::unchecked_cast) {
    const Slot& s = get_slot(n->input());
    slot_of(n->output()) = s.kind == Slot::Kind::Value && s.value && s.value->type().kind == ir::ValueType::Kind::Optional
                               ? value_slot(optional_element(s.value))
                               : s;
  } else if (k == c10::prim::Uninitialized) {  // read on no path: None until a branch or loop sets it
    slot_of(n->output()) = Slot{Slot::Kind::Constant, c10::IValue(), nullptr, {}, next_id_++};
  }
}

std::vector<Slot> Converter::unpack(const Slot& s, size_t expected, Node* n) {
  std::vector<Slot> out;
  if (s.kind == Slot::Kind::List) {
    out = s.elements;
  } else if (s.kind == Slot::Kind::Constant && (s.constant.isList() || s.constant.isTuple())) {
    std::vector<c10::IValue> items = s.constant.isList() ? s.constant.toListRef().vec()
                                                        : s.constant.toTupleRef().elements().vec();
    for (auto& iv : items) out.push_back(Slot{Slot::Kind::Constant, iv, nullptr, {}, next_id_++});
  } else if (s.kind == Slot::Kind::Sequence && s.value && expected > 0) {
    // A list of run-time length unpacked into a fixed number of values (a
    // trace's unpacking of chunk(x, x.size(0)), a scripted `a, b = l`):
    // its elements, read where the list has exactly that many and out of
    // range (an error in ONNX Runtime, as ListUnpack raises in PyTorch)
    // where it has not: never the first few of a longer list.
    warn(std::string(n->kind().toQualString()) + " in " + torch_side::describe_origin(*origins_.of(n)) + " takes " +
         std::to_string(expected) +
         " values from a list whose length is only known at run time: the model fails in ONNX Runtime "
         "where the list has another length (as the unpacking fails in PyTorch)");
    ir::Value* len = graph_->create_node("SequenceLength", {s.value}, 1)->output(0);
    len->set_type(ir::ValueType::tensor(ir::DType::Int64, {}));
    ir::Value* right = graph_->create_node("Equal", {len, int64_constant(static_cast<int64_t>(expected))}, 1)->output(0);
    right->set_type(ir::ValueType::tensor(ir::DType::Bool, {}));
    for (size_t i = 0; i < expected; ++i) {
      ir::Value* idx = graph_->create_node("Where", {right, int64_constant(static_cast<int64_t>(i)), len}, 1)->output(0);
      idx->set_type(ir::ValueType::tensor(ir::DType::Int64, {}));
      ir::Value* item = graph_->create_node("SequenceAt", {s.value, idx}, 1)->output(0);
      item->type().dtype = s.value->type().dtype;
      if (const ExampleInfo* info = info_of(n->output(i)); info && info->kind == ExampleInfo::Kind::Tensor)
        with_rank(item, static_cast<int64_t>(info->sizes.size()));
      out.push_back(value_slot(item));
    }
  } else {
    throw Error(Error::Kind::Conversion, std::string(n->kind().toQualString()) + " in " +
                                             torch_side::describe_origin(*origins_.of(n)) +
                                             ": unpacking a list whose length is only known at run time");
  }
  if (expected && out.size() != expected)
    throw Error(Error::Kind::Internal, "unpacking " + std::to_string(out.size()) + " elements into " +
                                           std::to_string(expected) + " values");
  return out;
}

void Converter::convert_node(Node* n) {
  if (n->kind() == c10::prim::If) {
    convert_if(n);
    return;
  }
  if (n->kind() == c10::prim::Loop) {
    convert_loop(n);
    return;
  }
  if ((n->kind() == c10::aten::stack || n->kind() == c10::aten::cat) && n->inputs().size() == 2 &&
      get_slot(n->input(0)).kind == Slot::Kind::Sequence) {
    convert_sequence_concat(n);
    return;
  }
  if (is_list_op(n)) {
    convert_list_op(n);
    return;
  }
  if (n->kind() == c10::prim::tolist && get_slot(n->input(0)).kind == Slot::Kind::Value) {
    if (auto it = number_lists_.find(get_slot(n->input(0)).value); it != number_lists_.end()) {
      slot_of(n->output()) = sequence_slot(it->second);  // a List[int] / List[float] input, read as it is
      return;
    }
  }
  if (convert_optional_test(n) || convert_unseen_dtype(n)) return;
  if (is_structural(n->kind())) {
    convert_structural(n);
    return;
  }
  auto origin = origins_.of(n);
  const c10::FunctionSchema* schema = n->maybeSchema();
  Call call;
  call.kind = canonical_kind(n->kind().toQualString());
  call.overload = schema ? schema->overload_name() : std::string();
  call.where = torch_side::describe_origin(*origin);
  call.args.reserve(n->inputs().size());
  for (size_t i = 0; i < n->inputs().size(); ++i) {
    std::string name = schema && i < schema->arguments().size() ? schema->arguments()[i].name() : std::string();
    call.args.push_back(make_arg(n->input(i), name));
  }
  for (const TValue* o : n->outputs()) call.outs.push_back(make_output_info(o));
  const std::string kind = call.kind;
  graph_->set_current_origin(origin);
  const auto results = convert_call(std::move(call), registry_, options_, graph_, this, [&](SymbolicContext& ctx) {
    ctx.set_source_node(n);
    ctx.set_dynamic_export(!options_.dynamic_axes.empty());
    ctx.set_dynamic_note(&tg_.dynamic_run_stopped);
  });
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    const OutputSlot& r = results[i];
    if (!r.set) {
      if (n->output(i)->hasUses())
        throw Error(Error::Kind::Internal, "the symbolic for " + kind + " did not produce output " + std::to_string(i));
      continue;
    }
    if (r.is_sequence) {
      r.value->set_type(ir::ValueType::sequence(list_dtype({n->output(i)})));
      slot_of(n->output(i)) = sequence_slot(r.value);
    } else if (r.is_list) {
      Slot s{Slot::Kind::List, {}, nullptr, {}, next_id_++};
      for (ir::Value* e : r.elements) s.elements.push_back(Slot{Slot::Kind::Value, {}, e, {}, next_id_++});
      slot_of(n->output(i)) = std::move(s);
    } else {
      slot_of(n->output(i)) = Slot{Slot::Kind::Value, {}, r.value, {}, next_id_++};
    }
  }
}

void Converter::flatten_output(const Slot& s, std::vector<ir::Value*>& out) {
  switch (s.kind) {
    case Slot::Kind::Value:
    case Slot::Kind::Sequence:  // a list of run-time length: an ONNX sequence output
      out.push_back(s.present ? optional_value(graph_, s.value, s.present, options_.opset_version) : s.value);
      if (const ir::Quantization* q = s.value->quantization()) {  // as torch.onnx: integers, scale, zero point
        if (q->per_channel())
          throw Error(Error::Kind::Conversion, "a per-channel quantized tensor cannot be a graph output "
                                               "(dequantize it first)");
        out.push_back(q->scale);
        out.push_back(q->zero_point);
      }
      break;
    case Slot::Kind::List:
      for (const Slot& e : s.elements) flatten_output(e, out);
      break;
    case Slot::Kind::Constant: {
      const c10::IValue& iv = s.constant;
      if (iv.isNone()) break;
      if (iv.isList() || iv.isTuple()) {
        for (const Slot& e : unpack(s, 0, nullptr)) flatten_output(e, out);
        break;
      }
      if (iv.isGenericDict()) {  // its values, in order (as a DictConstruct; scripted detectors' empty losses)
        for (const auto& kv : iv.toGenericDict())
          flatten_output(Slot{Slot::Kind::Constant, kv.value(), nullptr, {}, next_id_++}, out);
        break;
      }
      SymbolicContext ctx("output", {arg_from_constant(iv, -1)}, {}, graph_, options_.opset_version, nullptr);
      out.push_back(ctx.in(0));
      break;
    }
    case Slot::Kind::Empty: break;
  }
}

void Converter::flatten_info(const ExampleInfo* info, std::vector<const ExampleInfo*>& out) {
  if (info && (info->kind == ExampleInfo::Kind::List || info->kind == ExampleInfo::Kind::Tuple)) {
    for (const auto& e : info->elements) flatten_info(&e, out);
  } else if (!info || info->kind != ExampleInfo::Kind::None) {
    out.push_back(info);
    if (info && info->kind == ExampleInfo::Kind::Tensor && c10::isQIntType(info->dtype))
      out.insert(out.end(), 2, nullptr);  // its scale and zero point
  }
}

void Converter::make_outputs() {
  std::vector<ir::Value*> flat;
  std::vector<const ExampleInfo*> flat_info;
  for (const TValue* o : tg_.graph->outputs()) {
    const size_t before = flat.size();
    flatten_output(get_slot(o), flat);
    std::vector<const ExampleInfo*> infos;
    flatten_info(info_of(o), infos);
    // (an output the example left None, or whose structure it did not show: no example facts)
    if (infos.size() != flat.size() - before) infos.assign(flat.size() - before, nullptr);
    flat_info.insert(flat_info.end(), infos.begin(), infos.end());
  }
  if (flat.empty()) {
    // Only empty lists (a scripted model whose lists stay empty, e.g. appends
    // under a condition that never holds): each an empty sequence, as
    // torch.onnx returns them, rather than a model without outputs.
    std::function<void(const Slot&, const c10::TypePtr&, const TValue*)> empty_lists =
        [&](const Slot& s, const c10::TypePtr& type, const TValue* v) {
          if (type->kind() == c10::TypeKind::TupleType && s.kind == Slot::Kind::List &&
              s.elements.size() == type->containedTypes().size()) {
            for (size_t i = 0; i < s.elements.size(); ++i) empty_lists(s.elements[i], type->containedTypes()[i], nullptr);
            return;
          }
          const bool empty = (s.kind == Slot::Kind::List && s.elements.empty()) ||
                             (s.kind == Slot::Kind::Constant && s.constant.isList() && s.constant.toListRef().empty());
          if (!empty || type->kind() != c10::TypeKind::ListType || options_.opset_version < 11) return;
          const ir::DType dt = number_list_dtype(type).value_or(v ? list_dtype({v}) : ir::DType::Float);
          flat.push_back(empty_sequence(dt));
          flat_info.push_back(nullptr);
        };
    for (const TValue* o : tg_.graph->outputs()) empty_lists(get_slot(o), o->type(), o);
  }
  std::vector<GraphInterface::Output> outputs;
  for (size_t i = 0; i < flat.size(); ++i) {
    int64_t rank = -1;  // the rank PyTorch produced, where the example showed it
    ir::DType complex_dtype = ir::DType::Undefined;
    if (const ExampleInfo* info = flat_info[i]) {
      if (info->kind == ExampleInfo::Kind::Tensor) rank = static_cast<int64_t>(info->sizes.size());
      if (info->kind == ExampleInfo::Kind::Tensor && c10::isComplexType(info->dtype))
        complex_dtype = info->dtype == at::kComplexDouble ? ir::DType::Complex128 : ir::DType::Complex64;
      if (info->kind == ExampleInfo::Kind::Int || info->kind == ExampleInfo::Kind::Float ||
          info->kind == ExampleInfo::Kind::Bool)
        rank = 0;  // numbers are 0-d
    }
    outputs.push_back({flat[i], rank, complex_dtype});
  }
  interface_.add_outputs(graph_, outputs);
}

namespace {

void collect_unsupported(torch::jit::Block* b, const Registry& registry, int opset, OperatorExportType mode,
                         torch_side::OriginTable& origins, UnsupportedCollector& out) {
  for (Node* n : b->nodes()) {
    for (torch::jit::Block* sub : n->blocks()) collect_unsupported(sub, registry, opset, mode, origins, out);
    if (handled_by_converter(n)) continue;
    const bool marked = n->hasAttribute(torch_side::kUnconvertibleAttr);
    const std::string kind = marked ? n->s(torch_side::kUnconvertibleAttr) : canonical_kind(n->kind().toQualString());
    if (!marked && (resolve(registry, kind, opset) || kept_by_mode(kind, mode))) continue;
    auto first = first_opset(registry, kind);
    out.add(kind, torch_side::describe_origin(*origins.of(n)),
            first && *first > opset ? first : std::nullopt);
  }
}

}  // namespace
}  // namespace torch2onnx::convert::torchscript

namespace torch2onnx::convert {

std::vector<UnsupportedOperator> find_unsupported(const torch_side::TorchGraph& tg, const Registry& registry,
                                                  int opset, OperatorExportType mode) {
  UnsupportedCollector found;
  torch_side::OriginTable origins(tg.root_class);
  torchscript::collect_unsupported(tg.graph->block(), registry, opset, mode, origins, found);
  return found.take();
}

ir::Model convert(torch_side::TorchGraph& tg, const Registry& registry, const ExportOptions& options) {
  throw_if_unsupported(find_unsupported(tg, registry, options.opset_version, options.operator_export_type),
                       options.opset_version);
  return torchscript::Converter(tg, registry, options).run();
}

}  // namespace torch2onnx::convert
