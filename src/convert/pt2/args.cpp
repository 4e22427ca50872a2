#include "convert/pt2/converter.h"

#include <cstring>
#include <memory>

#include <ATen/core/dispatch/Dispatcher.h>

#include "convert/core.h"

namespace torch2onnx::convert::pt2 {

Arg ProgramConverter::tensor_arg(const std::string& name, const Node* n) {
  Arg a;
  a.kind = Arg::Kind::Tensor;
  a.id = id_of(name);
  refresh(name);
  auto it = scope_->tensors.find(name);
  if (it == scope_->tensors.end()) fail(n, "tensor '" + name + "' is read before it is computed");
  a.value = it->second;
  const TensorMeta& m = meta(name, n);
  a.dtype = m.dtype;
  a.has_sizes = true;
  for (const SymInt& s : m.sizes) {
    a.sizes.push_back(s.value ? *s.value : s.hint ? *s.hint : 1);
    a.dynamic_dims.push_back(!s.value);  // a symbolic size varies with the program's dynamic dims
  }
  return a;
}

int64_t ProgramConverter::id_of(const std::string& name) {
  auto [it, fresh] = ids_.emplace(std::make_pair(scope_->id, name), static_cast<int64_t>(ids_.size()));
  (void)fresh;
  return it->second;
}

Arg ProgramConverter::constant_int(int64_t v, ir::DType dt) {
  Arg a;
  a.kind = dt == ir::DType::Bool ? Arg::Kind::Bool : Arg::Kind::Int;
  a.constant = true;
  a.i = v;
  a.b = v != 0;
  a.dtype = dt;
  a.has_sizes = true;
  a.id = -1;
  return a;
}

Arg ProgramConverter::sym_arg(const std::string& name, const Node* n) {
  auto it = scope_->syms.find(name);
  if (it == scope_->syms.end()) fail(n, "symbolic value '" + name + "' is read before it is computed");
  Arg a;
  a.kind = it->second.dtype == ir::DType::Bool ? Arg::Kind::Bool
           : it->second.dtype == ir::DType::Double ? Arg::Kind::Float : Arg::Kind::Int;
  a.value = it->second.value;
  a.dtype = it->second.dtype;
  a.has_sizes = true;
  a.example = it->second.hint;
  a.id = id_of(name);
  return a;
}

Arg ProgramConverter::make_arg(const NamedArgument& na, const Node& n) {
  const Argument& x = na.arg;
  const std::string& k = x.kind;
  Arg a;
  if (k == "as_none") {
    a.kind = Arg::Kind::None;
    a.constant = true;
  } else if (k == "as_tensor") {
    a = tensor_arg(x.names.at(0), &n);
  } else if (k == "as_optional_tensor") {
    if (x.names.at(0).empty()) {
      a.kind = Arg::Kind::None;
      a.constant = true;
    } else {
      a = tensor_arg(x.names[0], &n);
    }
  } else if (k == "as_tensors" || k == "as_optional_tensors") {
    a.kind = Arg::Kind::List;
    for (const std::string& t : x.names) {
      Arg e;
      if (t.empty()) {
        e.kind = Arg::Kind::None;
        e.constant = true;
      } else {
        e = tensor_arg(t, &n);
      }
      a.elements.push_back(std::move(e));
    }
  } else if (k == "as_int") {
    a = constant_int(x.ints.at(0));
  } else if (k == "as_layout") {
    a = constant_int(c10_layout(x.ints.at(0)));
  } else if (k == "as_memory_format") {
    a = constant_int(c10_memory_format(x.ints.at(0)));
  } else if (k == "as_scalar_type") {
    a = constant_int(ir::scalar_type_from_dtype(pt2_dtype(x.ints.at(0), n)));
  } else if (k == "as_bool") {
    a = constant_int(x.ints.at(0), ir::DType::Bool);
  } else if (k == "as_float") {
    a.kind = Arg::Kind::Float;
    a.constant = true;
    a.f = x.floats.at(0);
    a.dtype = ir::DType::Double;
    a.has_sizes = true;
  } else if (k == "as_complex") {
    // a Python complex number: a 0-d complex128 constant, as TorchScript has it
    // (the complex symbolics take it as a (real, imag) pair)
    a.kind = Arg::Kind::Tensor;
    a.constant = true;
    const double parts[2] = {x.floats.at(0), x.floats.at(1)};
    std::vector<uint8_t> bytes(sizeof parts);
    std::memcpy(bytes.data(), parts, sizeof parts);
    a.tensor = std::make_shared<const ir::Tensor>(ir::Tensor::owned(ir::DType::Complex128, {}, std::move(bytes)));
    a.dtype = ir::DType::Complex128;
    a.has_sizes = true;
  } else if (k == "as_ints" || k == "as_bools") {
    a.kind = Arg::Kind::List;
    a.constant = true;
    for (int64_t v : x.ints) a.elements.push_back(constant_int(v, k == "as_bools" ? ir::DType::Bool : ir::DType::Int64));
  } else if (k == "as_floats") {
    a.kind = Arg::Kind::List;
    a.constant = true;
    for (double v : x.floats) {
      Arg e;
      e.kind = Arg::Kind::Float;
      e.constant = true;
      e.f = v;
      e.dtype = ir::DType::Double;
      e.has_sizes = true;
      a.elements.push_back(e);
    }
  } else if (k == "as_string") {
    a.kind = Arg::Kind::String;
    a.constant = true;
    a.s = x.strings.at(0);
  } else if (k == "as_strings") {
    a.kind = Arg::Kind::List;
    a.constant = true;
    for (const std::string& v : x.strings) {
      Arg e;
      e.kind = Arg::Kind::String;
      e.constant = true;
      e.s = v;
      a.elements.push_back(std::move(e));
    }
  } else if (k == "as_int_lists") {
    a.kind = Arg::Kind::List;
    a.constant = true;
    for (const std::vector<int64_t>& list : x.int_lists) {
      Arg e;
      e.kind = Arg::Kind::List;
      e.constant = true;
      for (int64_t v : list) e.elements.push_back(constant_int(v));
      a.elements.push_back(std::move(e));
    }
  } else if (k == "as_device") {
    a.kind = Arg::Kind::Device;
    a.constant = true;
    a.s = x.strings.at(0);
  } else if (k == "as_sym_int" || k == "as_sym_bool" || k == "as_sym_float") {
    if (!x.names.empty()) a = sym_arg(x.names[0], &n);
    else if (k == "as_sym_float") {
      a.kind = Arg::Kind::Float;
      a.constant = true;
      a.f = x.floats.at(0);
      a.dtype = ir::DType::Double;
      a.has_sizes = true;
    } else {
      a = constant_int(x.ints.at(0), k == "as_sym_bool" ? ir::DType::Bool : ir::DType::Int64);
    }
  } else if (k == "as_sym_ints") {
    a.kind = Arg::Kind::List;
    a.constant = true;
    for (size_t i = 0; i < x.ints.size(); ++i) {
      if (!x.names[i].empty()) {
        a.elements.push_back(sym_arg(x.names[i], &n));
        a.constant = false;
      } else {
        a.elements.push_back(constant_int(x.ints[i]));
      }
    }
  } else {
    fail(&n, "its argument '" + na.name + "' is of a kind (" + k + ") the .pt2 frontend does not convert yet");
  }
  a.name = na.name;
  if (a.type_str.empty()) a.type_str = k.substr(3);
  return a;
}

ir::DType ProgramConverter::pt2_dtype(int64_t code, const Node& n) const {
  std::string name;
  const ir::DType dt = schema_dtype(code, &name);
  if (dt == ir::DType::Undefined) fail(&n, "dtype " + name + " has no ONNX counterpart");
  return dt;
}

OutputInfo ProgramConverter::output_info(const Argument& out, const Node& n) const {
  OutputInfo o;
  if (out.kind == "as_tensor") {
    const TensorMeta& m = meta(out.names.at(0), &n);
    o.kind = Arg::Kind::Tensor;
    o.dtype = m.dtype;
    o.has_sizes = true;
    for (const SymInt& s : m.sizes) o.sizes.push_back(s.value ? *s.value : s.hint ? *s.hint : 1);
  } else if (out.kind == "as_tensors") {
    o.kind = Arg::Kind::List;
    o.list_length = static_cast<int64_t>(out.names.size());
  } else if (out.kind == "as_sym_int") {
    o.kind = Arg::Kind::Int;
    o.dtype = ir::DType::Int64;
  } else if (out.kind == "as_sym_float") {  // (item() of a float tensor: a Python float)
    o.kind = Arg::Kind::Float;
    o.dtype = ir::DType::Double;
  } else if (out.kind == "as_sym_bool") {
    o.kind = Arg::Kind::Bool;
    o.dtype = ir::DType::Bool;
  } else if (out.kind == "as_none") {
    o.kind = Arg::Kind::None;
  } else {
    o.kind = Arg::Kind::Other;
  }
  return o;
}

Arg ProgramConverter::arg_from_default(const c10::IValue& v, const Node& n, const std::string& name) {
  Arg a;
  a.constant = true;
  if (v.isNone()) {
    a.kind = Arg::Kind::None;
  } else if (v.isBool()) {
    a = constant_int(v.toBool(), ir::DType::Bool);
  } else if (v.isInt()) {
    a = constant_int(v.toInt());
  } else if (v.isDouble()) {
    a.kind = Arg::Kind::Float;
    a.f = v.toDouble();
    a.dtype = ir::DType::Double;
    a.has_sizes = true;
  } else if (v.isString()) {
    a.kind = Arg::Kind::String;
    a.s = v.toStringRef();
  } else if (v.isDevice()) {
    a.kind = Arg::Kind::Device;
    a.s = v.toDevice().str();
  } else if (v.isList()) {
    a.kind = Arg::Kind::List;
    for (const c10::IValue& e : v.toListRef()) a.elements.push_back(arg_from_default(e, n, name));
  } else {
    fail(&n, "the default of its argument '" + name + "' (" + v.tagKind() + ") cannot be converted");
  }
  return a;
}

namespace {

// A size or stride as the example had it (a symbolic one by its hint).
std::optional<std::vector<int64_t>> example_ints(const std::vector<SymInt>& v) {
  std::vector<int64_t> out;
  for (const SymInt& s : v) {
    if (s.value) out.push_back(*s.value);
    else if (s.hint) out.push_back(*s.hint);
    else return std::nullopt;
  }
  return out;
}

// Whether a tensor of these sizes and strides can be viewed with `shape`
// (ATen's computeStride, which decides whether reshape copies).
bool viewable(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
              const std::vector<int64_t>& shape) {
  if (sizes.empty()) return true;
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 0) return true;
  auto view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = strides.back(), tensor_numel = 1, view_numel = 1;
  for (auto d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[static_cast<size_t>(d)];
    if (d == 0 || (sizes[static_cast<size_t>(d - 1)] != 1 &&
                   strides[static_cast<size_t>(d - 1)] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[static_cast<size_t>(view_d)] == 1))
        view_numel *= shape[static_cast<size_t>(view_d--)];
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = strides[static_cast<size_t>(d - 1)];
        tensor_numel = view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

}  // namespace

// reshape, flatten and contiguous return a view where they can and a copy
// where they must: which one, the example's strides tell (a write into a
// copy stays in the copy).
bool ProgramConverter::copies(const Node& n, const std::string& op) const {
  if (op != "aten::reshape" && op != "aten::reshape_as" && op != "aten::flatten" && op != "aten::contiguous")
    return false;
  if (n.inputs.empty() || n.inputs[0].arg.kind != "as_tensor" || n.outputs.empty() ||
      n.outputs[0].kind != "as_tensor")
    return false;
  const TensorMeta& in = meta(n.inputs[0].arg.names.at(0), &n);
  const TensorMeta& out = meta(n.outputs[0].names.at(0), &n);
  auto sizes = example_ints(in.sizes), strides = example_ints(in.strides), shape = example_ints(out.sizes);
  if (!sizes || !strides || !shape || strides->size() != sizes->size()) return false;
  if (op == "aten::contiguous") {
    int64_t expected = 1;
    for (auto d = static_cast<int64_t>(sizes->size()) - 1; d >= 0; --d) {
      const auto i = static_cast<size_t>(d);
      if ((*sizes)[i] != 1 && (*strides)[i] != expected) return true;
      expected *= (*sizes)[i];
    }
    return false;
  }
  return !viewable(*sizes, *strides, *shape);
}

void ProgramConverter::track_aliases(const Node& n, const c10::FunctionSchema& schema) {
  const bool copy = copies(n, canonical_kind(n.op));
  auto tensor_input = [&](const std::string& param) -> std::string {
    for (const NamedArgument& na : n.inputs)
      if (na.name == param && na.arg.kind == "as_tensor") return na.arg.names.at(0);
    return "";
  };
  for (const c10::Argument& param : schema.arguments()) {
    const c10::AliasInfo* alias = param.alias_info();
    if (!alias || !alias->isWrite()) continue;
    const std::string written = tensor_input(param.name());
    if (written.empty()) continue;
    const std::string base = root_of(written);
    if (base != written || scope_->viewed.count(base)) aliased_writes_.emplace_back(written, base);
  }
  for (size_t r = 0; r < schema.returns().size() && r < n.outputs.size(); ++r) {
    const c10::AliasInfo* alias = schema.returns()[r].alias_info();
    if (alias && alias->beforeSets().empty() && !alias->containedTypes().empty())  // (split: Tensor(a)[])
      alias = &alias->containedTypes()[0];
    const bool list = n.outputs[r].kind == "as_tensors";
    if (!alias || alias->isWrite() || copy || (n.outputs[r].kind != "as_tensor" && !list)) continue;
    for (const c10::Argument& param : schema.arguments()) {
      const c10::AliasInfo* a = param.alias_info();
      if (!a || a->beforeSets() != alias->beforeSets()) continue;
      const std::string input = tensor_input(param.name());
      if (input.empty()) continue;
      const std::string base = root_of(input);
      const uint64_t version = scope_->versions[base];
      for (size_t e = 0; e < n.outputs[r].names.size(); ++e) {
        const std::string& out = n.outputs[r].names[e];
        if (out.empty()) continue;
        scope_->view_of[out] = base;
        scope_->views[out] = Scope::View{input, &n, list ? static_cast<int>(e) : -1, version};
      }
      scope_->viewed.insert(base);
      break;
    }
  }
}

std::string ProgramConverter::root_of(const std::string& name) const {
  auto it = scope_->view_of.find(name);
  return it == scope_->view_of.end() ? name : it->second;
}

std::vector<Arg> ProgramConverter::schema_args(const Node& n) {
  const std::string overload = n.overload == "default" ? "" : n.overload;
  auto handle = c10::Dispatcher::singleton().findSchema(c10::OperatorName(n.op, overload));
  std::vector<Arg> args;
  if (!handle) {  // an operator this LibTorch does not know: as the program has it
    for (const NamedArgument& na : n.inputs) args.push_back(make_arg(na, n));
    return args;
  }
  const c10::FunctionSchema& schema = handle->schema();
  track_aliases(n, schema);
  std::vector<bool> used(n.inputs.size(), false);
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const c10::Argument& param = schema.arguments()[i];
    size_t found = n.inputs.size();
    for (size_t k = 0; k < n.inputs.size() && found == n.inputs.size(); ++k)
      if (!used[k] && n.inputs[k].name == param.name()) found = k;
    if (found < n.inputs.size()) {
      used[found] = true;
      args.push_back(make_arg(n.inputs[found], n));
    } else if (param.default_value()) {
      args.push_back(arg_from_default(*param.default_value(), n, param.name()));
      args.back().name = param.name();
    } else if (param.type()->kind() == c10::TypeKind::OptionalType) {
      args.push_back(arg_from_default(c10::IValue(), n, param.name()));
      args.back().name = param.name();
    } else {
      fail(&n, "its argument '" + param.name() + "' is missing (this LibTorch's schema: " + c10::toString(schema) + ")");
    }
  }
  for (size_t k = 0; k < n.inputs.size(); ++k)
    if (!used[k]) fail(&n, "its argument '" + n.inputs[k].name + "' is not in this LibTorch's schema of " + n.op);
  return args;
}

}  // namespace torch2onnx::convert::pt2
