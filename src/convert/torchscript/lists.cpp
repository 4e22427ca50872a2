#include "convert/torchscript/converter.h"

#include <limits>

#include "symbolic/helpers.h"

namespace torch2onnx::convert::torchscript {

ir::DType Converter::list_dtype(std::initializer_list<const TValue*> vs) {
  return known_list_dtype(vs).value_or(ir::DType::Float);
}

// The dtype of the tensors a loop body appends to its carried list `list`
// (none of which the example ran: `list(x)` in a branch it did not take):
// what the example shows of the appended value, or of the tensor it selects
// or slices from, or that tensor's ONNX value's dtype.
std::optional<ir::DType> Converter::appended_dtype(torch::jit::Block* body, const TValue* list) {
  for (Node* n : body->nodes()) {
    if (n->kind() != c10::aten::append || n->inputs().size() != 2 || n->input(0) != list) continue;
    const TValue* v = n->input(1);
    for (int hop = 0; hop < 2 && v; ++hop) {
      if (const ExampleInfo* info = info_of(v); info && info->kind == ExampleInfo::Kind::Tensor)
        return to_dtype(info->dtype);
      if (slots_.count(v)) {  // (converted already: its ONNX value's dtype)
        const Slot& s = get_slot(v);
        if (s.kind == Slot::Kind::Value && s.value && s.value->type().dtype != ir::DType::Undefined)
          return s.value->type().dtype;
      }
      const auto k = v->node()->kind();
      v = (k == c10::aten::select || k == c10::aten::slice || k == c10::aten::clone) ? v->node()->input(0) : nullptr;
    }
  }
  return std::nullopt;
}

std::optional<ir::DType> Converter::known_list_dtype(std::initializer_list<const TValue*> vs) {
  for (const TValue* v : vs) {
    const ExampleInfo* info = v ? info_of(v) : nullptr;
    if (!info) continue;
    for (const auto& e : info->elements) {
      if (e.kind == ExampleInfo::Kind::Tensor && e.dtype != at::ScalarType::Undefined) return to_dtype(e.dtype);
      if (e.kind == ExampleInfo::Kind::Int) return ir::DType::Int64;
      if (e.kind == ExampleInfo::Kind::Float) return ir::DType::Double;
      if (e.kind == ExampleInfo::Kind::Bool) return ir::DType::Bool;
    }
  }
  // (no element in the example: the list's TorchScript type, for numbers)
  for (const TValue* v : vs)
    if (auto dt = v ? number_list_dtype(v->type()) : std::nullopt) return dt;
  return std::nullopt;
}

std::optional<ir::DType> number_list_dtype(const c10::TypePtr& type) {
  if (type->kind() != c10::TypeKind::ListType) return std::nullopt;
  switch (type->expectRef<c10::ListType>().getElementType()->kind()) {
    case c10::TypeKind::IntType: return ir::DType::Int64;
    case c10::TypeKind::FloatType: return ir::DType::Double;
    case c10::TypeKind::BoolType: return ir::DType::Bool;
    default: return std::nullopt;
  }
}

void Converter::require_sequences(const Node* n, int opset, const char* why) {
  if (options_.opset_version < opset)
    throw Error(Error::Kind::Conversion,
                std::string(n->kind().toQualString()) + " in " + torch_side::describe_origin(*origins_.of(n)) +
                    ": a list whose length is only known at run time " + why + " (opset " + std::to_string(opset) +
                    " or later)");
}

ir::Value* Converter::to_sequence(const Slot& s, ir::DType dt, const TValue* v, const Node* n) {
  if (s.kind == Slot::Kind::Sequence) return s.value;
  require_sequences(n);
  std::vector<Slot> elems = s.kind == Slot::Kind::List ? s.elements : unpack(s, 0, const_cast<Node*>(n));
  std::vector<ir::Value*> values;
  for (const Slot& e : elems) values.push_back(element_value(e, dt));
  if (values.empty()) return empty_sequence(dt);
  ir::Value* seq = graph_->create_node("SequenceConstruct", values, 1)->output(0);
  seq->set_type(ir::ValueType::sequence(dt));
  (void)v;
  return seq;
}

ir::Value* Converter::empty_sequence(ir::DType dt) {
  ir::Value* seq = graph_->create_node("SequenceEmpty", {}, 1, {{"dtype", static_cast<int64_t>(dt)}})->output(0);
  seq->set_type(ir::ValueType::sequence(dt));
  return seq;
}

ir::Value* Converter::element_value(const Slot& e, ir::DType dt) {
  if (e.kind == Slot::Kind::Value) return dt == ir::DType::Undefined ? e.value : cast_value(e.value, dt);
  if (e.kind == Slot::Kind::Constant) {
    SymbolicContext ctx("list element", {arg_from_constant(e.constant, e.id)}, {}, graph_, options_.opset_version,
                        this);
    return ctx.in_as(0, dt);
  }
  throw Error(Error::Kind::Conversion, "lists of lists cannot be exported");
}

ir::Value* Converter::cast_value(ir::Value* v, ir::DType dt) {
  SymbolicContext ctx("cast", {}, {}, graph_, options_.opset_version, this);
  return ctx.cast(v, dt);
}

ir::Value* Converter::int64_constant(int64_t v) {
  ir::Value* c = graph_->create_node("Constant", {}, 1, {{"value", ir::Tensor::scalar_int(ir::DType::Int64, v)}})
                     ->output(0);
  c->set_type(ir::ValueType::tensor(ir::DType::Int64, {}));
  return c;
}

Slot Converter::value_slot(ir::Value* v) {
  return Slot{Slot::Kind::Value, {}, v, {}, next_id_++};
}

ir::Value* Converter::optional_element(ir::Value* v) {
  ir::Value* out = graph_->create_node("OptionalGetElement", {v}, 1)->output(0);
  ir::ValueType t = v->type();
  t.kind = ir::ValueType::Kind::Tensor;
  out->set_type(t);
  return out;
}

Slot Converter::sequence_slot(ir::Value* v) {
  return Slot{Slot::Kind::Sequence, {}, v, {}, next_id_++};
}

ir::Value* Converter::int_value(const TValue* v) {
  return single_value(v, ir::DType::Int64, "a list index");
}

std::vector<Slot> Converter::python_slice(const std::vector<Slot>& elems, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step, Node* n) {
  if (step == 0)
    throw Error(Error::Kind::Conversion, "list slice step cannot be zero (in " +
                                             torch_side::describe_origin(*origins_.of(n)) + ")");
  const int64_t len = static_cast<int64_t>(elems.size());
  auto clamp = [&](std::optional<int64_t> b, int64_t dflt) {
    if (!b) return dflt;
    int64_t v = *b < 0 ? *b + len : *b;
    return step > 0 ? std::clamp<int64_t>(v, 0, len) : std::clamp<int64_t>(v, -1, len - 1);
  };
  const int64_t from = clamp(start, step > 0 ? 0 : len - 1), to = clamp(end, step > 0 ? len : -1);
  std::vector<Slot> out;
  for (int64_t i = from; step > 0 ? i < to : i > to; i += step) out.push_back(elems[static_cast<size_t>(i)]);
  return out;
}

void Converter::convert_list_op(Node* n) {
  graph_->set_current_origin(origins_.of(n));
  const auto k = n->kind();
  Slot list = get_slot(n->input(0));
  const bool fixed = list.kind == Slot::Kind::List ||
                     (list.kind == Slot::Kind::Constant && (list.constant.isList() || list.constant.isTuple()));
  std::vector<Slot> elems = fixed ? unpack(list, 0, n) : std::vector<Slot>{};
  // (a list of run-time length already has its sequence's dtype)
  const ir::DType dt = list.kind == Slot::Kind::Sequence && list.value && list.value->type().dtype != ir::DType::Undefined
                           ? list.value->type().dtype
                           : list_dtype({n->input(0), n->outputs().empty() ? nullptr : n->output()});
  auto const_index = [&](size_t i) -> std::optional<int64_t> {
    const Slot& s = get_slot(n->input(i));
    if (s.kind == Slot::Kind::Constant && s.constant.isInt()) return s.constant.toInt();
    return std::nullopt;
  };
  if (k == c10::aten::list) {
    slot_of(n->output()) = list;
  } else if (k == c10::aten::__contains__) {
    slot_of(n->output()) = list_contains(n, list, elems, fixed, dt);
  } else if (k == c10::aten::add) {  // list + list
    Slot other = get_slot(n->input(1));
    const bool other_fixed = other.kind == Slot::Kind::List ||
                             (other.kind == Slot::Kind::Constant && (other.constant.isList() || other.constant.isTuple()));
    if (!other_fixed && fixed && other.kind == Slot::Kind::Sequence) {  // [a, b] + l: a, b inserted in front
      ir::Value* seq = other.value;
      for (size_t i = 0; i < elems.size(); ++i) {
        ir::Value* pos = int64_constant(static_cast<int64_t>(i));
        seq = graph_->create_node("SequenceInsert", {seq, element_value(elems[i], dt), pos}, 1)->output(0);
        seq->set_type(ir::ValueType::sequence(dt));
      }
      slot_of(n->output()) = sequence_slot(seq);
      return;
    }
    if (!other_fixed)
      throw Error(Error::Kind::Conversion, "concatenating a list of run-time length (in " +
                                               torch_side::describe_origin(*origins_.of(n)) + ") cannot be exported");
    std::vector<Slot> tail = unpack(other, 0, n);
    if (fixed) {
      elems.insert(elems.end(), tail.begin(), tail.end());
      slot_of(n->output()) = Slot{Slot::Kind::List, {}, nullptr, elems, next_id_++};
    } else {
      ir::Value* seq = to_sequence(list, dt, n->input(0), n);
      for (const Slot& e : tail) {
        seq = graph_->create_node("SequenceInsert", {seq, element_value(e, dt)}, 1)->output(0);
        seq->set_type(ir::ValueType::sequence(dt));
      }
      slot_of(n->output()) = sequence_slot(seq);
    }
  } else if (k == c10::aten::append) {
    if (fixed) {
      elems.push_back(get_slot(n->input(1)));
      slot_of(n->output()) = Slot{Slot::Kind::List, {}, nullptr, elems, next_id_++};
    } else {
      ir::Value* seq = graph_->create_node("SequenceInsert", {list.value, element_value(get_slot(n->input(1)), dt)},
                                           1)->output(0);
      seq->set_type(ir::ValueType::sequence(dt));
      slot_of(n->output()) = sequence_slot(seq);
    }
  } else if (k == c10::aten::len) {
    if (fixed) {
      slot_of(n->output()) = Slot{Slot::Kind::Constant, c10::IValue(static_cast<int64_t>(elems.size())), nullptr, {},
                                  next_id_++};
    } else {
      ir::Value* len = graph_->create_node("SequenceLength", {list.value}, 1)->output(0);
      len->set_type(ir::ValueType::tensor(ir::DType::Int64, {}));
      slot_of(n->output()) = value_slot(len);
    }
  } else if (k == c10::aten::__getitem__) {
    auto idx = const_index(1);
    if (fixed && idx) {
      int64_t i = *idx < 0 ? *idx + static_cast<int64_t>(elems.size()) : *idx;
      if (i < 0 || i >= static_cast<int64_t>(elems.size()))
        throw Error(Error::Kind::Conversion, "list index out of range in " +
                                                 torch_side::describe_origin(*origins_.of(n)));
      slot_of(n->output()) = elems[static_cast<size_t>(i)];
    } else {
      ir::Value* seq = to_sequence(list, dt, n->input(0), n);
      ir::Value* item = graph_->create_node("SequenceAt", {seq, int_value(n->input(1))}, 1)->output(0);
      item->type().dtype = dt;
      if (const ExampleInfo* info = info_of(n->output()); info && info->kind == ExampleInfo::Kind::Tensor)
        with_rank(item, static_cast<int64_t>(info->sizes.size()));
      slot_of(n->output()) = value_slot(item);
    }
  } else if (k == c10::aten::slice) {  // l[start:end:step]
    const auto elem = n->input(0)->type()->expectRef<c10::ListType>().getElementType()->kind();
    const bool numbers = elem == c10::TypeKind::IntType || elem == c10::TypeKind::FloatType;
    if (fixed && numbers && runtime_slice_of_numbers(n, elems, dt)) return;
    auto bound = [&](size_t i) -> std::optional<int64_t> {
      const Slot& s = get_slot(n->input(i));
      if (s.kind == Slot::Kind::Constant && s.constant.isNone()) return std::nullopt;
      if (auto v = const_index(i)) return v;
      throw Error(Error::Kind::Conversion, "a list slice bound computed at run time (in " +
                                               torch_side::describe_origin(*origins_.of(n)) + ") cannot be exported");
    };
    if (!fixed) {
      slot_of(n->output()) = sequence_slice(n, to_sequence(list, dt, n->input(0), n), bound(1), bound(2),
                                            bound(3).value_or(1), dt);
      return;
    }
    slot_of(n->output()) = Slot{Slot::Kind::List, {}, nullptr,
                                python_slice(elems, bound(1), bound(2), bound(3).value_or(1), n), next_id_++};
  } else if (k == torch_side::list_erase_symbol()) {  // del l[i], l.pop(i) (functionalize)
    auto idx = const_index(1);
    if (fixed && idx) {
      const int64_t i = *idx < 0 ? *idx + static_cast<int64_t>(elems.size()) : *idx;
      if (i < 0 || i >= static_cast<int64_t>(elems.size()))
        throw Error(Error::Kind::Conversion, "list index out of range in " +
                                                 torch_side::describe_origin(*origins_.of(n)));
      elems.erase(elems.begin() + i);
      slot_of(n->output()) = Slot{Slot::Kind::List, {}, nullptr, elems, next_id_++};
    } else {  // (SequenceErase: a negative position counts from the end; out of range fails, as in Python)
      ir::Value* out = graph_->create_node("SequenceErase", {to_sequence(list, dt, n->input(0), n),
                                                             int_value(n->input(1))}, 1)->output(0);
      out->set_type(ir::ValueType::sequence(dt));
      slot_of(n->output()) = sequence_slot(out);
    }
  } else if (k == c10::aten::_set_item) {
    auto idx = const_index(1);
    if (fixed && idx) {
      int64_t i = *idx < 0 ? *idx + static_cast<int64_t>(elems.size()) : *idx;
      elems.at(static_cast<size_t>(i)) = get_slot(n->input(2));
      slot_of(n->output()) = Slot{Slot::Kind::List, {}, nullptr, elems, next_id_++};
    } else {
      // erase then insert at the same (non-negative) position
      ir::Value* seq = to_sequence(list, dt, n->input(0), n);
      ir::Value* pos = int_value(n->input(1));
      ir::Value* len = graph_->create_node("SequenceLength", {seq}, 1)->output(0);
      ir::Value* zero = int64_constant(0);
      ir::Value* neg = graph_->create_node("Less", {pos, zero}, 1)->output(0);
      ir::Value* wrapped = graph_->create_node("Add", {pos, len}, 1)->output(0);
      pos = graph_->create_node("Where", {neg, wrapped, pos}, 1)->output(0);
      ir::Value* erased = graph_->create_node("SequenceErase", {seq, pos}, 1)->output(0);
      ir::Value* out = graph_->create_node("SequenceInsert", {erased, element_value(get_slot(n->input(2)), dt), pos}, 1)
                           ->output(0);
      out->set_type(ir::ValueType::sequence(dt));
      slot_of(n->output()) = sequence_slot(out);
    }
  }
}

// l[start:end:step] of a fixed-length list of numbers (x.shape[1:x.size(2)])
// with a bound computed at run time: the numbers as a 1-D tensor, Slice (whose
// clamping of the bounds is Python's), and the pieces as a sequence (a list of
// run-time length). False when every bound is a constant (python_slice's work).
bool Converter::runtime_slice_of_numbers(Node* n, const std::vector<Slot>& elems, ir::DType dt) {
  bool runtime = false;
  for (size_t i = 1; i < 4 && i < n->inputs().size(); ++i) {
    const Slot& b = get_slot(n->input(i));
    runtime = runtime || !(b.kind == Slot::Kind::Constant && (b.constant.isNone() || b.constant.isInt()));
  }
  if (!runtime || elems.empty()) return false;
  require_sequences(n, 11, "sliced at bounds known at run time makes");
  SymbolicContext ctx("aten::slice", {}, {}, graph_, options_.opset_version, this);
  std::vector<ir::Value*> parts;
  for (const Slot& e : elems) parts.push_back(helpers::reshape(ctx, element_value(e, dt), {1}));
  ir::Value* all = parts.size() == 1 ? parts[0] : ctx.op("Concat", parts, {{"axis", int64_t{0}}});
  const int64_t big = std::numeric_limits<int64_t>::max();
  auto bound = [&](size_t i, int64_t dflt) {
    const Slot& b = get_slot(n->input(i));
    if (b.kind == Slot::Kind::Constant && b.constant.isNone()) return ctx.const_ints({dflt});
    return helpers::reshape(ctx, int_value(n->input(i)), {1});
  };
  const Slot& step_slot = get_slot(n->input(3));
  if (step_slot.kind != Slot::Kind::Constant || !step_slot.constant.isInt() || step_slot.constant.toInt() == 0)
    throw Error(Error::Kind::Conversion, "a list slice step must be a nonzero constant (in " +
                                             torch_side::describe_origin(*origins_.of(n)) + ")");
  const int64_t step = step_slot.constant.toInt();
  ir::Value* start = bound(1, step > 0 ? 0 : -1);
  ir::Value* end = bound(2, step > 0 ? big : -big);
  ir::Value* piece = ctx.op("Slice", {all, start, end, ctx.const_ints({0}), ctx.const_ints({step})});
  ir::Value* seq = ctx.op("SplitToSequence", {piece}, {{"axis", int64_t{0}}, {"keepdims", int64_t{0}}});
  seq->set_type(ir::ValueType::sequence(dt));
  slot_of(n->output()) = sequence_slot(seq);
  return true;
}

// l[start:end] of a list of run-time length, for the constant bounds list
// edits make (pop, del, insert: l[:i], l[i+1:], l[:-1]): a prefix or suffix of
// constant length is its elements (SequenceAt), a list without a constant
// number of leading or trailing elements is the sequence with them erased.
// (A prefix or suffix longer than the list fails in ONNX Runtime: Python
// would clamp it.)
Slot Converter::sequence_slice(Node* n, ir::Value* seq, std::optional<int64_t> start, std::optional<int64_t> end,
                               int64_t step, ir::DType dt) {
  auto refuse = [&]() -> Slot {
    throw Error(Error::Kind::Conversion, "slicing a list of run-time length (in " +
                                             torch_side::describe_origin(*origins_.of(n)) +
                                             ") cannot be exported but for l[:k], l[k:], l[:-k] and l[-k:]");
  };
  constexpr int64_t kMaxUnrolled = 64;
  auto at = [&](int64_t i) {
    ir::Value* item = graph_->create_node("SequenceAt", {seq, int64_constant(i)}, 1)->output(0);
    item->type().dtype = dt;
    return value_slot(item);
  };
  auto erase = [&](int64_t pos, int64_t times) {
    ir::Value* s = seq;
    for (int64_t i = 0; i < times; ++i) {
      s = graph_->create_node("SequenceErase", {s, int64_constant(pos)}, 1)->output(0);
      s->set_type(ir::ValueType::sequence(dt));
    }
    return sequence_slot(s);
  };
  if (step != 1) return refuse();
  const int64_t from = start.value_or(0);
  if (from == 0 && !end) return sequence_slot(seq);
  if (from == 0 && end && *end >= 0 && *end <= kMaxUnrolled) {  // l[:k]
    std::vector<Slot> elems;
    for (int64_t i = 0; i < *end; ++i) elems.push_back(at(i));
    return Slot{Slot::Kind::List, {}, nullptr, elems, next_id_++};
  }
  if (from == 0 && end && *end < 0 && -*end <= kMaxUnrolled) return erase(-1, -*end);  // l[:-k]
  if (!end && from > 0 && from <= kMaxUnrolled) return erase(0, from);                 // l[k:]
  if (!end && from < 0 && -from <= kMaxUnrolled) {                                     // l[-k:]
    std::vector<Slot> elems;
    for (int64_t i = from; i < 0; ++i) elems.push_back(at(i));
    return Slot{Slot::Kind::List, {}, nullptr, elems, next_id_++};
  }
  return refuse();
}

// `x in l` of numbers: a constant when everything is, else whether some
// element equals x (the elements stacked into a 1-D tensor).
Slot Converter::list_contains(Node* n, const Slot& list, const std::vector<Slot>& elems, bool fixed, ir::DType dt) {
  const Slot& item = get_slot(n->input(1));
  const c10::TypePtr& elem_type = n->input(0)->type()->expectRef<c10::ListType>().getElementType();
  const auto kind = elem_type->kind();
  if (kind != c10::TypeKind::IntType && kind != c10::TypeKind::FloatType && kind != c10::TypeKind::BoolType &&
      kind != c10::TypeKind::NumberType)
    throw Error(Error::Kind::Conversion, "`in` on a list of " + elem_type->repr_str() + " (in " +
                                             torch_side::describe_origin(*origins_.of(n)) +
                                             ") cannot be exported: only lists of numbers");
  bool all_constant = fixed && item.kind == Slot::Kind::Constant;
  for (const Slot& e : elems) all_constant = all_constant && e.kind == Slot::Kind::Constant;
  if (all_constant) {
    bool found = false;
    for (const Slot& e : elems) found = found || c10::_fastEqualsForContainer(e.constant, item.constant);
    return Slot{Slot::Kind::Constant, c10::IValue(found), nullptr, {}, next_id_++};
  }
  if (fixed && elems.empty()) return Slot{Slot::Kind::Constant, c10::IValue(false), nullptr, {}, next_id_++};
  SymbolicContext ctx("aten::__contains__", {}, {}, graph_, options_.opset_version, this);
  ir::Value* all = nullptr;
  if (fixed) {
    std::vector<ir::Value*> parts;
    for (const Slot& e : elems) parts.push_back(helpers::reshape(ctx, element_value(e, dt), {1}));
    all = parts.size() == 1 ? parts[0] : ctx.op("Concat", parts, {{"axis", int64_t{0}}});
  } else {
    all = ctx.op("ConcatFromSequence", {to_sequence(list, dt, n->input(0), n)}, {{"axis", int64_t{0}}, {"new_axis", int64_t{1}}});
  }
  ir::Value* hits = ctx.cast(helpers::equal(ctx, all, element_value(item, dt)), ir::DType::Int64);
  ir::Value* count = helpers::reduce(ctx, "ReduceSum", hits, {}, /*keepdims=*/false);
  return value_slot(ctx.op("Greater", {count, ctx.const_scalar(ir::DType::Int64, 0)}));
}

void Converter::convert_sequence_concat(Node* n) {
  graph_->set_current_origin(origins_.of(n));
  const Slot& list = get_slot(n->input(0));
  const Slot& dim = get_slot(n->input(1));
  if (dim.kind != Slot::Kind::Constant) throw Error(Error::Kind::Conversion, "stack/cat needs a constant dim");
  const int64_t new_axis = n->kind() == c10::aten::stack ? 1 : 0;
  ir::Value* out = graph_->create_node("ConcatFromSequence", {list.value}, 1,
                                       {{"axis", dim.constant.toInt()}, {"new_axis", new_axis}})->output(0);
  out->type().dtype = example_dtype(n->output());
  slot_of(n->output()) = value_slot(out);
}

}  // namespace torch2onnx::convert::torchscript
