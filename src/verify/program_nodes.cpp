// The .pt2 runner's nodes (verify/program_runner.h): each operator called
// through LibTorch's dispatcher with the arguments its schema names, sizes
// computed on the values, higher-order operators running their bodies.
#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <cmath>

#include "torch2onnx/options.h"
#include "verify/program_runner.h"

namespace torch2onnx::verify_detail {
namespace {

using namespace frontend::pt2;
using Env = ProgramValues;

[[noreturn]] void fail(const Node& n, const std::string& what) {
  throw Error(Error::Kind::Check,
              "running the program in LibTorch: " + (n.op.empty() ? n.target : n.op) + " in " + where(n) + ": " + what);
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
      if (k == "as_scalar_type") return static_cast<int64_t>(torch_dtype(schema_dtype(v), "a dtype argument"));
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
    if (type->kind() != c10::TypeKind::TensorType || !(v.isInt() || v.isDouble() || v.isBool() || v.isComplexDouble()))
      return v;
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
      fail(n, "this LibTorch has no operator " + n.op + (overload.empty() ? "" : "." + overload) +
                  (n.op.rfind("aten::", 0) == 0 ? std::string()
                                                : " (preload the library that registers it: LD_PRELOAD=.../torchvision/"
                                                  "_C.so for torchvision's, your extension's for your own)"));
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
    if (t == "_operator.not_" || t == "torch.sym_not") return !truth(a.at(0));
    if (t == "_operator.pos") return a.at(0);
    if (t == "math.trunc" || t == "torch.sym_int") return static_cast<int64_t>(std::trunc(num(a.at(0))));
    if (t == "torch.sym_float") return num(a.at(0));
    if (t == "torch.sym_sqrt") return std::sqrt(num(a.at(0)));
    if (t == "torch.sym_ite") return truth(a.at(0)) ? a.at(1) : a.at(2);
    if (a.size() != 2) fail(n, "an operation on sizes this runner does not compute");
    const bool floating = a[0].isDouble() || a[1].isDouble();
    const double x = num(a[0]), y = num(a[1]);
    if (t == "_operator.and_" || t == "_operator.or_") {
      if (a[0].isBool() && a[1].isBool())
        return t == "_operator.and_" ? a[0].toBool() && a[1].toBool() : a[0].toBool() || a[1].toBool();
      return t == "_operator.and_" ? integer(a[0]) & integer(a[1]) : integer(a[0]) | integer(a[1]);
    }
    if (t == "_operator.ne") return x != y;
    if (t == "torch.sym_max" || t == "torch.sym_min") {
      const bool first = t == "torch.sym_max" ? x >= y : x <= y;
      return first ? a[0] : a[1];
    }
    if (t == "_operator.lshift" || t == "_operator.rshift") {
      const int64_t by = integer(a[1]);
      if (by < 0 || by > 62) fail(n, "a shift of sizes by " + std::to_string(by) + " bits");
      return t == "_operator.lshift" ? integer(a[0]) * (int64_t{1} << by) : integer(a[0]) >> by;
    }
    if (t == "_operator.pow") {
      if (!floating && integer(a[1]) >= 0) {  // (by squaring: as many steps as the exponent has bits)
        int64_t r = 1, b = integer(a[0]);
        for (int64_t e = integer(a[1]); e; e >>= 1, b *= b)
          if (e & 1) r *= b;
        return r;
      }
      return std::pow(x, y);
    }
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

void run_program_graph(const Graph& g, ProgramValues& env, ProgramValues* record) {
  Interpreter(&g, record).run_graph(g, env);
}

at::ScalarType torch_dtype(ir::DType dt, const std::string& what) {
  if (dt == ir::DType::Undefined) throw Error(Error::Kind::Check, what + " has a dtype LibTorch cannot be given here");
  return static_cast<at::ScalarType>(ir::scalar_type_from_dtype(dt));
}

}  // namespace torch2onnx::verify_detail
