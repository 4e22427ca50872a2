// ProgramRunner (verify/program_runner.h): a .pt2 program's nodes run one by
// one in LibTorch.
#include "verify/program_runner.h"

#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <cmath>
#include <cstring>
#include <set>

#include "frontend/zip.h"
#include "torch2onnx/options.h"
#include "verify/values.h"

namespace torch2onnx::verify_detail {
namespace {

using namespace frontend::pt2;
using Env = std::map<std::string, c10::IValue>;

[[noreturn]] void fail(const Node& n, const std::string& what) {
  throw Error(Error::Kind::Check,
              "running the program in LibTorch: " + (n.op.empty() ? n.target : n.op) + " in " + where(n) + ": " + what);
}

at::ScalarType at_type(ir::DType dt, const std::string& what) {
  if (dt == ir::DType::Undefined) throw Error(Error::Kind::Check, what + " has a dtype LibTorch cannot be given here");
  return static_cast<at::ScalarType>(ir::scalar_type_from_dtype(dt));
}

std::vector<c10::IValue> as_values(const c10::IValue& v) {
  if (v.isList()) return v.toListRef().vec();
  if (v.isTuple()) return v.toTupleRef().elements().vec();
  return {v};
}

// A list of `values` typed as a schema's `type` (int[], Tensor?[] ...) asks.
c10::IValue typed_list(const std::vector<c10::IValue>& values, c10::TypePtr type, const std::string& kind) {
  if (type)
    if (auto o = type->cast<c10::OptionalType>()) type = o->getElementType();
  c10::TypePtr elem = type && type->cast<c10::ListType>() ? type->cast<c10::ListType>()->getElementType() : nullptr;
  c10::TypeKind k = elem ? elem->kind()
                    : kind == "as_ints" || kind == "as_sym_ints" ? c10::TypeKind::IntType
                    : kind == "as_floats" || kind == "as_sym_floats" ? c10::TypeKind::FloatType
                    : kind == "as_bools" || kind == "as_sym_bools" ? c10::TypeKind::BoolType
                    : kind == "as_strings" ? c10::TypeKind::StringType
                    : kind == "as_optional_tensors" ? c10::TypeKind::OptionalType
                                                    : c10::TypeKind::TensorType;
  switch (k) {
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: {
      c10::List<int64_t> l;
      for (const auto& v : values) l.push_back(v.isBool() ? v.toBool() : v.toInt());
      return l;
    }
    case c10::TypeKind::FloatType:
    case c10::TypeKind::SymFloatType: {
      c10::List<double> l;
      for (const auto& v : values) l.push_back(v.isDouble() ? v.toDouble() : static_cast<double>(v.toInt()));
      return l;
    }
#if T2O_TORCH_MAJOR >= 2
    case c10::TypeKind::SymBoolType:
#endif
    case c10::TypeKind::BoolType: {
      c10::List<bool> l;
      for (const auto& v : values) l.push_back(v.isBool() ? v.toBool() : v.toInt() != 0);
      return l;
    }
    case c10::TypeKind::StringType: {
      c10::List<std::string> l;
      for (const auto& v : values) l.push_back(v.toStringRef());
      return l;
    }
    case c10::TypeKind::TensorType: {
      c10::List<at::Tensor> l;
      for (const auto& v : values) l.push_back(v.toTensor());
      return l;
    }
    case c10::TypeKind::OptionalType: {
      c10::List<c10::optional<at::Tensor>> l;  // (c10::optional: LibTorch 1.13's type)
      for (const auto& v : values)
        l.push_back(v.isNone() ? c10::optional<at::Tensor>() : c10::optional<at::Tensor>(v.toTensor()));
      return l;
    }
    default: {
      c10::impl::GenericList l(elem ? elem : c10::AnyType::get());
      for (const auto& v : values) l.push_back(v);
      return l;
    }
  }
}

class Interpreter {
 public:
  // `record`: each value of the top graph as it is computed (copies: later
  // writes into a tensor do not change what was recorded).
  explicit Interpreter(const Graph* top = nullptr, ProgramValues* record = nullptr) : top_(top), record_(record) {}

  void run_graph(const Graph& g, Env& env) const {
    for (const Node& n : g.nodes) {
      run_node(n, env);
      if (record_ && &g == top_)
        for (const std::string& name : output_names(n))
          if (auto it = env.find(name); !name.empty() && it != env.end())
            (*record_)[name] = it->second.isTensor() ? c10::IValue(it->second.toTensor().clone()) : it->second;
    }
  }

 private:
  const Graph* top_;
  ProgramValues* record_;

  static const c10::IValue& get(const Env& env, const std::string& name, const Node& n) {
    auto it = env.find(name);
    if (it == env.end()) fail(n, "'" + name + "' is read before it is computed");
    return it->second;
  }

  // An argument's value; `type` (the schema's, may be null) types lists.
  static c10::IValue value(const Argument& a, const Env& env, const Node& n, const c10::TypePtr& type = nullptr) {
    const std::string& k = a.kind;
    if (k == "as_none") return c10::IValue();
    if (k == "as_tensor" || k == "as_optional_tensor")
      return a.names.at(0).empty() ? c10::IValue() : get(env, a.names[0], n);
    if (k == "as_int" || k == "as_scalar_type" || k == "as_layout" || k == "as_memory_format" || k == "as_bool" ||
        k == "as_sym_int" || k == "as_sym_bool") {
      if (!a.names.empty() && !a.names[0].empty()) return get(env, a.names[0], n);
      const int64_t v = a.ints.at(0);
      if (k == "as_scalar_type") return static_cast<int64_t>(at_type(schema_dtype(v), "a dtype argument"));
      if (k == "as_layout") return c10_layout(v);
      if (k == "as_memory_format") return c10_memory_format(v);
      if (k == "as_bool" || k == "as_sym_bool") return v != 0;
      return v;
    }
    if (k == "as_float" || k == "as_sym_float") {
      if (!a.names.empty() && !a.names[0].empty()) return get(env, a.names[0], n);
      return a.floats.at(0);
    }
    if (k == "as_complex") return c10::complex<double>(a.floats.at(0), a.floats.at(1));
    if (k == "as_string") return a.strings.at(0);
    if (k == "as_device") return c10::Device(a.strings.at(0));
    std::vector<c10::IValue> elems;
    if (k == "as_tensors" || k == "as_optional_tensors") {
      for (const std::string& t : a.names) elems.push_back(t.empty() ? c10::IValue() : get(env, t, n));
    } else if (k == "as_ints" || k == "as_bools" || k == "as_sym_ints" || k == "as_sym_bools") {
      for (size_t i = 0; i < a.ints.size(); ++i)
        elems.push_back(i < a.names.size() && !a.names[i].empty() ? get(env, a.names[i], n) : c10::IValue(a.ints[i]));
    } else if (k == "as_floats" || k == "as_sym_floats") {
      for (size_t i = 0; i < a.floats.size(); ++i)
        elems.push_back(i < a.names.size() && !a.names[i].empty() ? get(env, a.names[i], n) : c10::IValue(a.floats[i]));
    } else if (k == "as_strings") {
      for (const std::string& s : a.strings) elems.emplace_back(s);
    } else {
      fail(n, "an argument of a kind (" + k + ") this runner does not read");
    }
    return typed_list(elems, type, k);
  }

  // A number (a SymInt) where the schema takes a Tensor: a wrapped number,
  // as Python's argument parser makes it (it does not promote the other operand).
  static c10::IValue tensor_if_asked(c10::IValue v, c10::TypePtr type) {
    if (auto o = type->cast<c10::OptionalType>()) type = o->getElementType();
    if (type->kind() != c10::TypeKind::TensorType || !(v.isInt() || v.isDouble() || v.isBool())) return v;
    at::Tensor t = at::scalar_to_tensor(v.toScalar());
    t.unsafeGetTensorImpl()->set_wrapped_number(true);
    return t;
  }

  static bool truth(const c10::IValue& v) {
    if (v.isTensor()) return v.toTensor().item<bool>();
    if (v.isBool()) return v.toBool();
    if (v.isInt()) return v.toInt() != 0;
    return v.toDouble() != 0;
  }

  static std::vector<std::string> output_names(const Node& n) {
    std::vector<std::string> names;
    for (const Argument& o : n.outputs)
      if (o.kind != "as_none") names.insert(names.end(), o.names.begin(), o.names.end());
    return names;
  }

  void run_node(const Node& n, Env& env) const {
    if (n.op.rfind("higher_order::", 0) == 0) return run_higher_order(n, env);
    if (n.op.empty()) return bind(n, env, {size_operation(n, env)});
    if (n.op == "aten::sym_size" || n.op == "aten::sym_stride" || n.op == "aten::sym_numel" ||
        n.op == "aten::sym_storage_offset") {
      const at::Tensor t = value(n.inputs.at(0).arg, env, n).toTensor();
      const int64_t dim = n.inputs.size() > 1 ? at::maybe_wrap_dim(value(n.inputs[1].arg, env, n).toInt(), t.dim()) : 0;
      const int64_t r = n.op == "aten::sym_size" ? t.size(dim) : n.op == "aten::sym_stride" ? t.stride(dim)
                        : n.op == "aten::sym_numel" ? t.numel() : t.storage_offset();
      return bind(n, env, {r});
    }
    const std::string overload = n.overload == "default" ? "" : n.overload;
    auto handle = c10::Dispatcher::singleton().findSchema(c10::OperatorName(n.op, overload));
    if (!handle) {
      if (n.op.rfind("aten::_assert", 0) == 0 || n.op.rfind("aten::sym_constrain_range", 0) == 0) return;
      fail(n, "this LibTorch has no operator " + n.op + (overload.empty() ? "" : "." + overload));
    }
    const c10::FunctionSchema& schema = handle->schema();
    torch::jit::Stack stack;
    std::vector<bool> used(n.inputs.size(), false);
    for (const c10::Argument& param : schema.arguments()) {
      size_t found = n.inputs.size();
      for (size_t k = 0; k < n.inputs.size() && found == n.inputs.size(); ++k)
        if (!used[k] && n.inputs[k].name == param.name()) found = k;
      if (found < n.inputs.size()) {
        used[found] = true;
        stack.push_back(tensor_if_asked(value(n.inputs[found].arg, env, n, param.type()), param.type()));
      } else if (param.default_value()) {
        stack.push_back(*param.default_value());
      } else if (param.type()->kind() == c10::TypeKind::OptionalType) {
        stack.emplace_back();
      } else {
        fail(n, "its argument '" + param.name() + "' is missing (this LibTorch's schema: " + c10::toString(schema) + ")");
      }
    }
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (!used[k]) fail(n, "its argument '" + n.inputs[k].name + "' is not in this LibTorch's schema");
    try {
      handle->callBoxed(stack);
    } catch (const c10::Error& e) {
      fail(n, e.what_without_backtrace());
    }
    for (size_t i = 0; i < n.outputs.size() && i < stack.size(); ++i) {
      const Argument& o = n.outputs[i];
      if (o.kind == "as_none" || o.names.empty()) continue;
      if (o.kind == "as_tensors" || o.kind == "as_optional_tensors") {
        const auto elems = as_values(stack[i]);
        for (size_t e = 0; e < o.names.size() && e < elems.size(); ++e)
          if (!o.names[e].empty()) env[o.names[e]] = elems[e];
      } else {
        env[o.names[0]] = stack[i];
      }
    }
  }

  // `results` bound to the node's output names, in order.
  static void bind(const Node& n, Env& env, const std::vector<c10::IValue>& results) {
    const auto names = output_names(n);
    if (names.size() != results.size())
      fail(n, "it gives " + std::to_string(results.size()) + " values where the program names " +
                  std::to_string(names.size()));
    for (size_t i = 0; i < names.size(); ++i)
      if (!names[i].empty()) env[names[i]] = results[i];
  }

  // Python's operator module on sizes (SymInts) and getitem of a list.
  static c10::IValue size_operation(const Node& n, const Env& env) {
    std::vector<c10::IValue> a;
    for (const NamedArgument& na : n.inputs) a.push_back(value(na.arg, env, n));
    const std::string& t = n.target;
    if (t == "_operator.getitem") {
      const auto elems = as_values(a.at(0));
      int64_t i = a.at(1).toInt();
      if (i < 0) i += static_cast<int64_t>(elems.size());
      if (i < 0 || i >= static_cast<int64_t>(elems.size())) fail(n, "index out of range");
      return elems[static_cast<size_t>(i)];
    }
    auto num = [&](const c10::IValue& v) {
      return v.isDouble() ? v.toDouble() : v.isBool() ? double(v.toBool()) : double(v.toInt());
    };
    auto integer = [&](const c10::IValue& v) { return v.isBool() ? int64_t(v.toBool()) : v.toInt(); };
    if (t == "_operator.neg") return a.at(0).isDouble() ? c10::IValue(-a[0].toDouble()) : c10::IValue(-integer(a[0]));
    if (t == "_operator.not_") return !truth(a.at(0));
    if (a.size() != 2) fail(n, "an operation on sizes this runner does not compute");
    const bool floating = a[0].isDouble() || a[1].isDouble();
    const double x = num(a[0]), y = num(a[1]);
    if (t == "_operator.eq") return x == y;
    if (t == "_operator.lt") return x < y;
    if (t == "_operator.gt") return x > y;
    if (t == "_operator.le") return x <= y;
    if (t == "_operator.ge") return x >= y;
    if (t == "_operator.truediv") return x / y;
    if (floating) {
      if (t == "_operator.add") return x + y;
      if (t == "_operator.sub") return x - y;
      if (t == "_operator.mul") return x * y;
      if (t == "_operator.floordiv") return std::floor(x / y);
      if (t == "_operator.mod") return x - y * std::floor(x / y);
    } else {
      const int64_t i = integer(a[0]), j = integer(a[1]);
      if (t == "_operator.add") return i + j;
      if (t == "_operator.sub") return i - j;
      if (t == "_operator.mul") return i * j;
      if ((t == "_operator.floordiv" || t == "_operator.mod") && j == 0) fail(n, "division by zero");
      const int64_t q = i / j - ((i % j != 0) && ((i < 0) != (j < 0)) ? 1 : 0);  // Python's floor division
      if (t == "_operator.floordiv") return q;
      if (t == "_operator.mod") return i - j * q;
    }
    fail(n, "an operation on sizes this runner does not compute");
  }

  static const Graph& body(const Node& n, size_t index) {
    size_t seen = 0;
    for (const NamedArgument& na : n.inputs)
      if (na.arg.graph && seen++ == index) return *na.arg.graph;
    fail(n, "it has no body graph " + std::to_string(index));
  }

  std::vector<c10::IValue> run_body(const Graph& g, const std::vector<c10::IValue>& operands, const Node& n) const {
    if (g.inputs.size() != operands.size())
      fail(n, "its body takes " + std::to_string(g.inputs.size()) + " inputs, given " + std::to_string(operands.size()));
    Env inner;
    for (size_t i = 0; i < operands.size(); ++i)
      if (!g.inputs[i].names.empty()) inner[g.inputs[i].names[0]] = operands[i];
    run_graph(g, inner);
    std::vector<c10::IValue> outs;
    for (const Argument& o : g.outputs)
      for (const std::string& name : o.names) outs.push_back(get(inner, name, n));
    return outs;
  }

  void run_higher_order(const Node& n, Env& env) const {
    auto flat = [&](const NamedArgument& na) {
      const c10::IValue v = value(na.arg, env, n);
      return v.isList() ? as_values(v) : std::vector<c10::IValue>{v};
    };
    at::AutoGradMode grad(false);
    if (n.op == "higher_order::cond") {
      if (n.inputs.size() != 4) fail(n, "expected (pred, true_fn, false_fn, operands)");
      return bind(n, env, run_body(body(n, truth(value(n.inputs[0].arg, env, n)) ? 0 : 1), flat(n.inputs[3]), n));
    }
    if (n.op == "higher_order::while_loop") {
      if (n.inputs.size() != 4) fail(n, "expected (cond_fn, body_fn, carried_inputs, additional_inputs)");
      std::vector<c10::IValue> carried = flat(n.inputs[2]);
      const std::vector<c10::IValue> extra = flat(n.inputs[3]);
      auto with_extra = [&] {
        std::vector<c10::IValue> all = carried;
        all.insert(all.end(), extra.begin(), extra.end());
        return all;
      };
      while (truth(run_body(body(n, 0), with_extra(), n).at(0))) carried = run_body(body(n, 1), with_extra(), n);
      return bind(n, env, carried);
    }
    if (n.op == "higher_order::wrap_with_set_grad_enabled" || n.op == "higher_order::wrap_with_autocast" ||
        n.op == "higher_order::invoke_subgraph") {
      std::vector<c10::IValue> operands;
      bool after_body = false;
      for (const NamedArgument& na : n.inputs) {
        if (na.arg.graph) after_body = true;
        else if (after_body && na.arg.kind != "as_string")
          for (auto& v : flat(na)) operands.push_back(std::move(v));
      }
      return bind(n, env, run_body(body(n, 0), operands, n));
    }
    fail(n, "a higher-order operator this runner does not run");
  }
};

}  // namespace

at::Tensor stored_tensor(const Program& p, const StoredTensor& t, const std::string& name) {
  auto zip = frontend::ZipFile::open(p.archive_path);
  if (!zip) throw Error(Error::Kind::Load, "cannot open '" + p.archive_path + "'");
  for (const frontend::ZipEntry& e : zip->entries()) {
    if (e.name != t.entry) continue;
    std::string why = zip->size_problem(e);
    auto bytes = why.empty() ? zip->contents(e, &why) : std::nullopt;
    if (!bytes) throw Error(Error::Kind::Load, "cannot read '" + name + "': " + why);
    if (t.pickled) {
      const std::vector<char> data(bytes->begin(), bytes->end());
      const c10::IValue v = torch::jit::pickle_load(data);
      if (!v.isTensor()) throw Error(Error::Kind::Load, "'" + name + "' is not stored as a tensor");
      return v.toTensor();
    }
    const at::ScalarType type = at_type(t.meta.dtype, "'" + name + "'");
    std::vector<int64_t> sizes, strides;
    for (const SymInt& s : t.meta.sizes) sizes.push_back(s.value.value_or(-1));
    for (const SymInt& s : t.meta.strides) strides.push_back(s.value.value_or(-1));
    if (strides.size() != sizes.size()) {  // (none given: row-major)
      strides.assign(sizes.size(), 1);
      for (size_t k = sizes.size(); k-- > 1;) strides[k - 1] = strides[k] * std::max<int64_t>(sizes[k], 1);
    }
    const int64_t offset = t.meta.storage_offset.value.value_or(0);
    int64_t last = offset;  // the farthest element read
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (sizes[k] < 0 || strides[k] < 0) throw Error(Error::Kind::Load, "'" + name + "' has sizes that are not numbers");
      if (sizes[k] == 0) last = -1;
      if (last >= 0) last += (sizes[k] - 1) * strides[k];
    }
    const int64_t elems = static_cast<int64_t>(bytes->size() / c10::elementSize(type));
    if (offset < 0 || last >= elems) throw Error(Error::Kind::Load, "'" + name + "' reaches past its storage");
    at::Tensor storage = at::empty({elems}, at::TensorOptions().dtype(type));
    if (elems) std::memcpy(storage.data_ptr(), bytes->data(), static_cast<size_t>(elems) * c10::elementSize(type));
    return storage.as_strided(sizes, strides, offset);
  }
  throw Error(Error::Kind::Load, "the archive has no entry " + t.entry);
}

ProgramRunner::ProgramRunner(const std::string& pt2_path) : p_(read_program(pt2_path)) { load_weights(); }

ProgramRunner::ProgramRunner(Program program) : p_(std::move(program)) { load_weights(); }

void ProgramRunner::load_weights() {
  for (const InputSpec& s : p_.input_specs) {
    if (s.kind == InputSpec::Kind::UserInput) continue;
    if (s.kind != InputSpec::Kind::Parameter && s.kind != InputSpec::Kind::Buffer && s.kind != InputSpec::Kind::Constant)
      throw Error(Error::Kind::Check, "input '" + s.arg + "' is a custom object or token, which the runner does not run");
    const StoredTensor* t = nullptr;
    if (auto w = p_.weights.find(s.target); w != p_.weights.end()) t = &w->second;
    else if (auto c = p_.constants.find(s.target); c != p_.constants.end()) t = &c->second;
    if (!t) throw Error(Error::Kind::Load, "the archive holds no data for '" + s.target + "'");
    weights_[s.arg] = stored_tensor(p_, *t, s.target);
  }
}

std::vector<std::string> program_input_names(const Program& p) {
  std::vector<std::string> names;
  for (const InputSpec& s : p.input_specs)
    if (s.kind == InputSpec::Kind::UserInput) names.push_back(s.arg);
  return names;
}

namespace {

std::vector<c10::IValue> sample_inputs(const Program& p) {
  auto zip = frontend::ZipFile::open(p.archive_path);
  const std::string suffix = "data/sample_inputs/" + p.model_name + ".pt";
  for (const frontend::ZipEntry& e : zip ? zip->entries() : std::vector<frontend::ZipEntry>{}) {
    if (e.name.size() < suffix.size() || e.name.compare(e.name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::string why = zip->size_problem(e);
    auto bytes = why.empty() ? zip->contents(e, &why) : std::nullopt;
    if (!bytes) throw Error(Error::Kind::Load, "cannot read the program's sample inputs: " + why);
    c10::IValue stored;
    try {
      stored = torch::jit::pickle_load(std::vector<char>(bytes->begin(), bytes->end()));
    } catch (const c10::Error& err) {
      throw Error(Error::Kind::Load, std::string("cannot read the program's sample inputs (") + e.name + "): " +
                                         err.what_without_backtrace());
    }
    std::vector<c10::IValue> tensors;
    flatten(stored, false, tensors);
    return tensors;
  }
  throw Error(Error::Kind::Usage, "'" + p.archive_path + "' holds no sample inputs (" + suffix +
                                      ", which torch.export.save writes): give the inputs (--args / --input)");
}

}  // namespace

std::vector<c10::IValue> program_inputs(const Program& p, const std::vector<c10::IValue>& given) {
  std::vector<c10::IValue> inputs;
  if (given.empty()) inputs = sample_inputs(p);
  else flatten(c10::ivalue::Tuple::create(given), false, inputs);
  if (std::string why = program_misfit(p, inputs); !why.empty())
    throw Error(Error::Kind::Usage, std::string(given.empty() ? "the program's sample inputs" : "the example inputs") +
                                        " do not fit the program: " + why);
  return inputs;
}

std::string ProgramRunner::misfit(const std::vector<c10::IValue>& inputs) const { return program_misfit(p_, inputs); }

std::string program_misfit(const Program& p_, const std::vector<c10::IValue>& inputs) {
  const auto names = program_input_names(p_);
  if (inputs.size() != names.size())
    return "the program takes " + std::to_string(names.size()) + " inputs, given " + std::to_string(inputs.size());
  std::map<std::string, int64_t> bound;
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string which = "input " + std::to_string(k) + " (" + names[k] + ")";
    if (!inputs[k].isTensor()) return which + " is not a tensor";
    const at::Tensor& t = inputs[k].toTensor();
    auto m = p_.graph.tensor_values.find(names[k]);
    if (m == p_.graph.tensor_values.end()) return which + " has no metadata in the program";
    if (m->second.dtype != ir::DType::Undefined &&
        static_cast<at::ScalarType>(ir::scalar_type_from_dtype(m->second.dtype)) != t.scalar_type())
      return which + " is " + c10::toString(t.scalar_type()) + ", the program takes " + ir::dtype_name(m->second.dtype);
    if (static_cast<size_t>(t.dim()) != m->second.sizes.size())
      return which + " has " + std::to_string(t.dim()) + " dims, the program takes " +
             std::to_string(m->second.sizes.size());
    for (size_t d = 0; d < m->second.sizes.size(); ++d) {
      const SymInt& s = m->second.sizes[d];
      const int64_t n = t.size(static_cast<int64_t>(d));
      const std::string dim = which + " dim " + std::to_string(d);
      if (s.value) {
        if (*s.value != n) return dim + " is " + std::to_string(n) + ", the program fixes it at " + std::to_string(*s.value);
        continue;
      }
      const std::string sym = readable_expr(s.expr);
      auto range = p_.range_constraints.find(sym);
      if (range == p_.range_constraints.end()) continue;  // (an expression of symbols)
      if (auto [it, fresh] = bound.emplace(sym, n); !fresh && it->second != n)
        return dim + " is " + std::to_string(n) + " but " + sym + " is " + std::to_string(it->second) + " elsewhere";
      if ((range->second.min && n < *range->second.min) || (range->second.max && n > *range->second.max))
        return dim + " (" + sym + " = " + std::to_string(n) + ") is outside the program's range [" +
               (range->second.min ? std::to_string(*range->second.min) : "-inf") + ", " +
               (range->second.max ? std::to_string(*range->second.max) : "inf") + "]";
    }
  }
  return "";
}

std::vector<c10::IValue> ProgramRunner::run(const std::vector<c10::IValue>& inputs, ProgramValues* values) const {
  const auto names = program_input_names(p_);
  if (inputs.size() != names.size())
    throw Error(Error::Kind::Usage, "the program takes " + std::to_string(names.size()) + " inputs, given " +
                                        std::to_string(inputs.size()));
  std::set<std::string> written;  // buffers the program writes into: fresh copies each run
  for (const OutputSpec& o : p_.output_specs)
    if (o.kind == OutputSpec::Kind::BufferMutation)
      for (const InputSpec& s : p_.input_specs)
        if (s.target == o.target) written.insert(s.arg);
  Env env;
  for (const auto& [name, w] : weights_) env[name] = written.count(name) ? w.clone() : w;
  for (size_t k = 0; k < names.size(); ++k)
    env[names[k]] = inputs[k].isTensor() ? c10::IValue(inputs[k].toTensor().clone()) : inputs[k];
  if (values) {  // the inputs and weights as they are before the run
    *values = env;
    for (const std::string& name : names)
      if (env[name].isTensor()) (*values)[name] = env[name].toTensor().clone();
    for (const std::string& name : written) (*values)[name] = env[name].toTensor().clone();
  }
  {
    at::NoGradGuard no_grad;
    Interpreter(&p_.graph, values).run_graph(p_.graph, env);
  }
  std::vector<c10::IValue> outs;
  for (const OutputSpec& s : p_.output_specs) {
    if (s.kind != OutputSpec::Kind::UserOutput) continue;
    auto it = env.find(s.arg);
    if (it == env.end()) throw Error(Error::Kind::Check, "running the program: output '" + s.arg + "' is not computed");
    outs.push_back(it->second);
  }
  return outs;
}

}  // namespace torch2onnx::verify_detail
