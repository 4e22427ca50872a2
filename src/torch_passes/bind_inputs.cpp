// Matches the example args with forward()'s inputs. Tensors stay graph
// inputs; every tensor in a tuple, list or dict (however nested) becomes one
// input (in order); numbers, strings and None are baked in as constants.
#include <torch/csrc/jit/ir/constants.h>

#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {
namespace {

using torch::jit::Graph;
using torch::jit::Value;

std::string describe(const c10::IValue& v) {
  if (v.isTensor()) {
    const auto& t = v.toTensor();
    std::string s = "a " + std::string(c10::toString(t.scalar_type())) + " tensor of shape [";
    for (size_t i = 0; i < t.sizes().size(); ++i) s += (i ? ", " : "") + std::to_string(t.sizes()[i]);
    return s + "]";
  }
  if (v.isTuple()) return "a tuple of " + std::to_string(v.toTupleRef().elements().size());
  if (v.isList()) return "a list of " + std::to_string(v.toListRef().size());
  if (v.isNone()) return "None";
  return "a value of type " + v.type()->repr_str();
}

// Whether `v` is or holds a tensor (in tuples, lists, dicts, however nested).
bool holds_tensor(const c10::IValue& v) {
  if (v.isTensor()) return true;
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements())
      if (holds_tensor(e)) return true;
  } else if (v.isList()) {
    for (const auto& e : v.toListRef())
      if (holds_tensor(e)) return true;
  } else if (v.isGenericDict()) {
    for (const auto& kv : v.toGenericDict())
      if (holds_tensor(kv.key()) || holds_tensor(kv.value())) return true;
  }
  return false;
}

bool is_optional_tensor(const c10::TypePtr& type) {
  return type->kind() == c10::TypeKind::OptionalType &&
         type->expectRef<c10::OptionalType>().getElementType()->kind() == c10::TypeKind::TensorType;
}

struct Binder {
  TorchGraph& tg;
  Graph& graph;
  size_t insert_at = 0;  // where the next flat input goes
  // The graph's first node before binding: the nodes that rebuild arguments
  // (tuples, lists, number conversions) go before it, in the order they are
  // made, so a nested tuple's parts come before the tuple.
  torch::jit::Node* anchor = graph.block()->nodes().front();
  int opset = 0;

  [[noreturn]] void mismatch(const std::string& name, const c10::TypePtr& expected, const c10::IValue& got) {
    throw Error(Error::Kind::Args, "example arg '" + name + "' does not fit the model: forward() expects " +
                                       expected->repr_str() + ", got " + describe(got));
  }

  using Form = TorchGraph::InputForm;

  Value* new_tensor_input(const std::string& name, const at::Tensor& t, Form form = Form::Tensor) {
    Value* in = graph.insertInput(insert_at++, name);
    // An optional input keeps its Optional type from opset 15 (ONNX's
    // optional type): its `is None` tests stay run-time tests (the caller
    // may leave it unfed). Below, a tensor input that always stays.
    in->setType(form == Form::Optional && opset >= 15
                    ? static_cast<c10::TypePtr>(c10::OptionalType::create(c10::TensorType::get()))
                    : c10::TensorType::get());
    tg.user_inputs.push_back(in);
    tg.user_input_names.push_back(name);
    tg.user_input_forms.push_back(form);
    tg.user_input_kept.push_back(form != Form::Tensor);
    // A copy, so in-place ops in the example run never touch the caller's tensor.
    tg.example_inputs.push_back(t.detach().clone());
    return in;
  }

  // `in` (an Optional[Tensor] graph input), or `dflt` where it is None: a
  // tensor the graph reads in its place.
  Value* or_default(Value* in, const at::Tensor& dflt) {
    torch::jit::WithInsertPoint at_start(*graph.block()->nodes().begin());
    Value* is_none = graph.insert(c10::aten::__is__, {in, graph.insertConstant(c10::IValue())});
    torch::jit::Node* choose = graph.insertNode(graph.create(c10::prim::If, {is_none}, 1));
    choose->output()->setType(c10::TensorType::get());
    {
      torch::jit::WithInsertPoint in_then(choose->addBlock());
      choose->blocks()[0]->registerOutput(graph.insertConstant(dflt.detach().clone()));
    }
    {
      torch::jit::WithInsertPoint in_else(choose->addBlock());
      choose->blocks()[1]->registerOutput(graph.insertUncheckedCast(in, c10::TensorType::get()));
    }
    return choose->output();
  }

  // The 1-D tensor of a list of numbers or of 0-d tensors; none for anything else.
  static std::optional<at::Tensor> number_list(const c10::IValue& arg, at::ScalarType st) {
    std::vector<at::Tensor> parts;
    for (const c10::IValue& e : arg.toListRef()) {
      if (e.isInt() || e.isDouble()) {
        parts.push_back(at::scalar_tensor(e.toScalar(), st));
      } else if (e.isTensor() && e.toTensor().dim() == 0 && !e.toTensor().is_quantized() &&
                 !e.toTensor().is_complex() && e.toTensor().scalar_type() != at::kBool) {
        parts.push_back(e.toTensor().detach().to(st));
      } else {
        return std::nullopt;
      }
    }
    return parts.empty() ? at::empty({0}, at::TensorOptions().dtype(st)) : at::stack(parts);
  }

  Value* number_list_input(const std::string& name, const at::Tensor& numbers, bool ints) {
    Value* in = new_tensor_input(name, numbers, Form::NumberList);
    torch::jit::WithInsertPoint guard(anchor);
    torch::jit::Node* n = graph.insertNode(
        graph.create(c10::prim::tolist, {in, graph.insertConstant(int64_t{1}), graph.insertConstant(int64_t{ints ? 0 : 1})}, 1));
    n->output()->setType(ints ? c10::ListType::ofInts() : c10::ListType::ofFloats());
    return n->output();
  }

  // A quantized tensor is three inputs, as torch.onnx has it: its integers,
  // its scale (float64, 0-d) and its zero point (int64, 0-d).
  Value* quantized_input(const std::string& name, const at::Tensor& t) {
    if (t.qscheme() != at::kPerTensorAffine)
      throw Error(Error::Kind::Args, "example arg '" + name + "' is a quantized tensor with scheme " +
                                         c10::toString(t.qscheme()) + ": only per-tensor quantized inputs can be exported");
    Value* ints = new_tensor_input(name + "_value", t.int_repr());
    Value* scale = new_tensor_input(name + "_scale", at::scalar_tensor(t.q_scale(), at::kDouble));
    Value* zero_point = new_tensor_input(name + "_zero_point", at::scalar_tensor(t.q_zero_point(), at::kLong));
    torch::jit::WithInsertPoint guard(anchor);
    Value* s = graph.insert(c10::aten::Float, {scale});
    Value* z = graph.insert(c10::aten::Int, {zero_point});
    return graph.insert(c10::aten::_make_per_tensor_quantized_tensor, {ints, s, z});
  }

  // Returns the value that stands for `arg` inside the graph.
  Value* bind(const c10::TypePtr& type, const c10::IValue& arg, const std::string& name) {
    const auto kind = type->kind();
    // A scripted forward()'s Optional[Tensor] parameter given a tensor (its
    // default one too): an optional graph input, as torch.onnx makes it,
    // None where the caller leaves it unfed (a tensor default is read in its
    // place instead: bind_inputs, Binder::or_default).
    if (arg.isTensor() && !arg.toTensor().is_quantized() && is_optional_tensor(type))
      return new_tensor_input(name, arg.toTensor(), Form::Optional);
    if (kind == c10::TypeKind::OptionalType && !arg.isNone())  // Optional[Tuple[Tensor, Tensor]] given a tuple
      return bind(type->expectRef<c10::OptionalType>().getElementType(), arg, name);
    if (kind == c10::TypeKind::UnionType) {  // Union[Tensor, List[Tensor]]: as the member the example is
      const c10::TypePtr actual = arg.type();
      for (const c10::TypePtr& member : type->expectRef<c10::UnionType>().containedTypes())
        if (actual->isSubtypeOf(*member)) return bind(member, arg, name);
      mismatch(name, type, arg);
    }
    if (arg.isTensor()) {
      if (kind != c10::TypeKind::TensorType && kind != c10::TypeKind::AnyType && !is_optional_tensor(type))
        mismatch(name, type, arg);
      if (arg.toTensor().is_quantized()) return quantized_input(name, arg.toTensor());
      return new_tensor_input(name, arg.toTensor());
    }
    if (arg.isTuple()) {
      const auto& elems = arg.toTupleRef().elements();
      if (kind != c10::TypeKind::TupleType) mismatch(name, type, arg);
      const auto& types = type->expectRef<c10::TupleType>().elements();
      if (types.size() != elems.size())
        throw Error(Error::Kind::Args, "example arg '" + name + "' is a tuple of " + std::to_string(elems.size()) +
                                           " but forward() expects " + type->repr_str());
      std::vector<Value*> parts;
      for (size_t i = 0; i < elems.size(); ++i)
        parts.push_back(bind(types[i], elems[i], name + "." + std::to_string(i)));
      torch::jit::WithInsertPoint guard(anchor);
      return graph.insertNode(graph.createTuple(parts))->output();
    }
    // A scripted forward()'s List[int] / List[float] parameter given numbers
    // (or 0-d tensors): an input, as torch.onnx makes it (a sequence whose
    // length and values the caller gives), read through prim::tolist.
    if (arg.isList() && kind == c10::TypeKind::ListType && opset >= 11) {
      const auto elem = type->expectRef<c10::ListType>().getElementType()->kind();
      if (elem == c10::TypeKind::IntType || elem == c10::TypeKind::FloatType)
        if (auto numbers = number_list(arg, elem == c10::TypeKind::IntType ? at::kLong : at::kDouble))
          return number_list_input(name, *numbers, elem == c10::TypeKind::IntType);
    }
    if (arg.isList() && kind == c10::TypeKind::ListType) {
      // A list of tensors, of tuples of tensors (a KV cache as optimum passes
      // it: [(k0, v0), (k1, v1)]), of lists ...: every tensor in it is an
      // input, in order; numbers in a list of numbers stay constants below.
      const c10::TypePtr elem = type->expectRef<c10::ListType>().getElementType();
      if (holds_tensor(arg)) {
        std::vector<Value*> parts;
        const auto list = arg.toListRef();
        for (size_t i = 0; i < list.size(); ++i) parts.push_back(bind(elem, list[i], name + "." + std::to_string(i)));
        torch::jit::WithInsertPoint guard(anchor);
        return graph.insertNode(graph.createList(elem, parts))->output();
      }
    }
    if (arg.isGenericDict() && kind == c10::TypeKind::DictType && holds_tensor(arg)) {
      // A dict of tensors: its values are inputs (in insertion order), its keys constants.
      const auto& dt = type->expectRef<c10::DictType>();
      std::vector<Value*> keys, values;
      for (const auto& kv : arg.toGenericDict()) {
        if (holds_tensor(kv.key()))
          throw Error(Error::Kind::Args, "example arg '" + name + "' is a dict with tensor keys, which cannot be exported");
        const c10::IValue key = kv.key();
        std::string key_name = key.isString() ? key.toStringRef() : key.isInt() ? std::to_string(key.toInt()) : "key";
        values.push_back(bind(dt.getValueType(), kv.value(), name + "." + key_name));
        torch::jit::WithInsertPoint guard(anchor);
        auto c = torch::jit::tryInsertConstant(graph, key);
        if (!c) throw Error(Error::Kind::Args, "example arg '" + name + "' has a dict key that cannot be exported");
        keys.push_back(*c);
      }
      torch::jit::WithInsertPoint guard(anchor);
      return graph.insertNode(graph.createDict(dt.getKeyType(), dt.getValueType(), keys, values))->output();
    }
    // A number where the (scripted) signature takes int/float/bool: a 0-d
    // tensor input, converted back to the number the graph computes with.
    if ((arg.isInt() || arg.isDouble() || arg.isBool()) &&
        (kind == c10::TypeKind::IntType || kind == c10::TypeKind::FloatType || kind == c10::TypeKind::BoolType ||
         kind == c10::TypeKind::NumberType)) {
      at::Tensor t = arg.isInt()      ? at::scalar_tensor(arg.toInt(), at::kLong)
                     : arg.isDouble() ? at::scalar_tensor(arg.toDouble(), at::kDouble)
                                      : at::scalar_tensor(arg.toBool(), at::kBool);
      Value* in = new_tensor_input(name, t);
      c10::Symbol conv = kind == c10::TypeKind::IntType    ? c10::aten::Int
                         : kind == c10::TypeKind::BoolType ? c10::aten::Bool
                                                           : c10::aten::Float;
      if (kind == c10::TypeKind::NumberType) conv = arg.isInt() ? c10::aten::Int : arg.isBool() ? c10::aten::Bool : c10::aten::Float;
      torch::jit::WithInsertPoint guard(anchor);
      torch::jit::Node* n = graph.insertNode(graph.create(conv, {in}, 1));
      n->output()->setType(conv == c10::aten::Int ? c10::IntType::get()
                           : conv == c10::aten::Bool ? static_cast<c10::TypePtr>(c10::BoolType::get())
                                                     : c10::FloatType::get());
      return n->output();
    }
    // Numbers, strings, None, lists of numbers below opset 11: constants. A
    // tensor the caller passed never becomes one.
    if (kind == c10::TypeKind::TensorType && !arg.isNone()) mismatch(name, type, arg);
    if (holds_tensor(arg)) mismatch(name, type, arg);
    torch::jit::WithInsertPoint guard(anchor);
    auto c = torch::jit::tryInsertConstant(graph, arg);
    if (!c) throw Error(Error::Kind::Args, "example arg '" + name + "' (" + describe(arg) + ") cannot be exported");
    return *c;
  }
};

// Whether a list of tensors is used as an ONNX sequence would be in
// torch.onnx: indexed, measured, extended or iterated (not only unpacked or
// handed whole to an operator that takes a tensor list). Lists of numbers
// (x.size()) are not: torch.onnx folds those.
bool used_as_sequence(const Value* list) {
  const auto* lt = list->type()->cast<c10::ListType>().get();
  if (!lt || lt->getElementType()->kind() != c10::TypeKind::TensorType) return false;
  for (const torch::jit::Use& u : list->uses()) {
    const c10::Symbol k = u.user->kind();
    if (k == c10::aten::len || k == c10::aten::__getitem__ || k == c10::aten::append || k == c10::aten::insert ||
        k == c10::aten::pop || k == c10::aten::add || k == c10::aten::add_ || k == c10::aten::slice ||
        k == c10::aten::_set_item || k == c10::aten::Delete || k == c10::aten::__contains__ || k == c10::prim::Loop ||
        k == c10::aten::list)
      return true;
  }
  return false;
}

// Inputs read into such a list (an element of it, or split into it: x.unbind())
// stay graph inputs, as in torch.onnx, even where the result folds
// (`torch.ones(len(x.unbind()))` for a static x).
void keep_inputs_in_sequences(TorchGraph& tg) {
  for (size_t i = 0; i < tg.user_inputs.size() && i < tg.user_input_kept.size(); ++i)
    for (const torch::jit::Use& u : tg.user_inputs[i]->uses()) {
      const c10::Symbol k = u.user->kind();
      if ((k == c10::aten::append || k == c10::aten::insert || k == c10::aten::_set_item) && u.offset > 0 &&
          used_as_sequence(u.user->input(0)))  // l.append(x)
        tg.user_input_kept[i] = true;
      for (const Value* out : u.user->outputs())  // [x, y], x.unbind()
        if (used_as_sequence(out)) tg.user_input_kept[i] = true;
    }
}

}  // namespace

void bind_inputs(TorchGraph& tg, const std::vector<c10::IValue>& args_in, const TorchContext& ctx) {
  Graph& graph = *tg.graph;
  const size_t n_user = graph.inputs().size() - tg.params.size();
  std::vector<c10::IValue> args = args_in;
  if (args.size() > n_user)
    throw Error(Error::Kind::Args, "forward() takes " + std::to_string(n_user) + " input" + (n_user == 1 ? "" : "s") +
                                       " but " + std::to_string(args.size()) + " example args were given");
  for (size_t i = args.size(); i < n_user; ++i) {
    if (i < tg.input_defaults.size() && tg.input_defaults[i]) {
      args.push_back(*tg.input_defaults[i]);
    } else {
      std::string name = i < tg.input_arg_names.size() ? tg.input_arg_names[i] : "#" + std::to_string(i);
      throw Error(Error::Kind::Args, "forward() takes " + std::to_string(n_user) + " input" +
                                         (n_user == 1 ? "" : "s") + " but " + std::to_string(args_in.size()) +
                                         " example args were given (no value for '" + name + "')");
    }
  }

  // Original inputs, bound one by one; the flat inputs are inserted before them.
  std::vector<Value*> originals(graph.inputs().begin(), graph.inputs().begin() + static_cast<std::ptrdiff_t>(n_user));
  Binder binder{tg, graph};
  binder.opset = ctx.options.opset_version;
  for (size_t i = 0; i < n_user; ++i) {
    Value* orig = originals[i];
    std::string name = i < tg.input_arg_names.size() ? tg.input_arg_names[i] : orig->debugName();
    // An Optional[Tensor] parameter with a tensor default, given a tensor:
    // an optional input (opset 15+) that, left unfed, is that default, as a
    // PyTorch caller who leaves the argument out gets it (never None: the
    // `is None` path PyTorch does not take there).
    const auto* dflt = i < tg.input_defaults.size() && tg.input_defaults[i] ? &*tg.input_defaults[i] : nullptr;
    if (dflt && dflt->isTensor() && !dflt->toTensor().is_quantized() && binder.opset >= 15 &&
        is_optional_tensor(orig->type()) &&
        args[i].isTensor() && !args[i].toTensor().is_quantized()) {
      Value* in = binder.new_tensor_input(name, args[i].toTensor(), TorchGraph::InputForm::Optional);
      orig->replaceAllUsesWith(binder.or_default(in, dflt->toTensor()));
      continue;
    }
    Value* bound = binder.bind(orig->type(), args[i], name);
    orig->replaceAllUsesWith(bound);
  }
  for (Value* orig : originals) {
    for (size_t k = 0; k < graph.inputs().size(); ++k) {
      if (graph.inputs()[k] == orig) {
        graph.eraseInput(k);
        break;
      }
    }
  }
  keep_inputs_in_sequences(tg);
}

}  // namespace torch2onnx::torch_side
