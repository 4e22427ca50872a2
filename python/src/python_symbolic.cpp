#include "python_symbolic.h"

#include <torch/csrc/jit/python/python_ir.h>

#include "torch2onnx/ir/graph.h"
#include "torch2onnx/symbolic/context.h"

namespace py = pybind11;

namespace torch2onnx::python {
namespace {

// A value inside a Python symbolic function: an argument of the PyTorch node
// (materialized as an ONNX value only when used), or an output of g.op.
struct PyValue {
  SymbolicContext* ctx = nullptr;
  int64_t arg = -1;            // argument index, or -1
  ir::Value* value = nullptr;  // a built value

  const Arg* argument() const { return arg >= 0 ? &ctx->arg(static_cast<size_t>(arg)) : nullptr; }

  ir::Value* materialize() const {
    if (value) return value;
    if (argument()->is_none()) throw py::value_error("None has no ONNX value");
    return ctx->in(static_cast<size_t>(arg));
  }
  bool is_none() const { return !value && argument()->is_none(); }
  bool is_constant() const { return value ? value->constant() != nullptr : argument()->constant; }

  static py::object number(const ir::Tensor& t, int64_t i) {
    if (ir::is_floating(t.dtype())) return py::float_(t.double_at(i));
    if (t.dtype() == ir::DType::Bool) return py::bool_(t.int_at(i) != 0);
    return py::int_(t.int_at(i));
  }
  static py::object scalar_arg(const Arg& e) {
    switch (e.kind) {
      case Arg::Kind::Int: return py::int_(e.i);
      case Arg::Kind::Float: return py::float_(e.f);
      case Arg::Kind::Bool: return py::bool_(e.b);
      case Arg::Kind::String:
      case Arg::Kind::Device: return py::str(e.s);
      case Arg::Kind::None: return py::none();
      default: throw py::value_error("argument '" + e.name + "' is not a constant number");
    }
  }

  // The Python value of a constant: a number, a string, a list, or None.
  py::object as_python() const {
    if (value) {
      const ir::Tensor* t = value->constant();
      if (!t) throw py::value_error("the value is computed at run time, not a constant");
      if (t->dims().empty()) return number(*t, 0);
      py::list l;
      for (int64_t i = 0; i < t->numel(); ++i) l.append(number(*t, i));
      return l;
    }
    const Arg& a = *argument();
    if (a.is_none()) return py::none();
    if (!a.constant)
      throw py::value_error("argument " + std::to_string(arg) + (a.name.empty() ? "" : " ('" + a.name + "')") +
                            " is computed at run time, not a constant");
    if (a.is_list()) {
      py::list l;
      for (const Arg& e : a.elements) l.append(scalar_arg(e));
      return l;
    }
    if (a.is_tensor() && a.tensor) {
      if (a.tensor->dims().empty()) return number(*a.tensor, 0);
      py::list l;
      for (int64_t i = 0; i < a.tensor->numel(); ++i) l.append(number(*a.tensor, i));
      return l;
    }
    return scalar_arg(a);
  }

  ir::DType dtype() const { return value ? value->dtype() : argument()->dtype; }
  py::object sizes() const {
    if (value) {
      if (!value->type().has_shape) return py::none();
      py::list l;
      for (const auto& d : value->type().shape) l.append(d.is_static() ? py::object(py::int_(d.value)) : py::none());
      return l;
    }
    const Arg& a = *argument();
    if (!a.has_sizes) return py::none();
    return py::cast(a.sizes);
  }
  py::object rank() const {
    if (value) return value->type().has_shape ? py::object(py::int_(value->type().rank())) : py::none();
    return argument()->has_sizes ? py::object(py::int_(argument()->rank())) : py::none();
  }
  std::string repr() const {
    if (value) return "<Value " + value->name() + ">";
    const Arg& a = *argument();
    return "<Value argument " + std::to_string(arg) + (a.name.empty() ? "" : " '" + a.name + "'") + ">";
  }
};

// What `value.type()` gives in torch.onnx symbolics (sizes(), scalarType(), dim()).
struct PyValueType {
  PyValue v;
};

std::pair<std::string, std::string> split_op_name(const std::string& name) {
  auto sep = name.find("::");
  if (sep == std::string::npos) return {"", name};
  std::string domain = name.substr(0, sep);
  if (domain == "onnx" || domain == "ai.onnx") domain.clear();
  return {domain, name.substr(sep + 2)};
}

ir::Tensor tensor_from(const at::Tensor& t_in) {
  at::Tensor t = t_in.detach().contiguous().cpu();
  ir::DType dt = ir::dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type()));
  if (dt == ir::DType::Undefined) throw py::type_error("tensors of this dtype cannot be ONNX constants");
  auto holder = std::make_shared<at::Tensor>(t);
  return ir::Tensor::borrowed(dt, t.sizes().vec(), t.data_ptr(), t.nbytes(),
                              std::shared_ptr<const void>(holder, holder.get()));
}

// g.op's keyword attributes: "alpha_f", "axes_i", "value_t", ... (the suffix
// gives the type; without one it comes from the Python value).
ir::Attribute attribute_from(const std::string& key, py::handle v) {
  py::object value = py::reinterpret_borrow<py::object>(v);
  if (py::isinstance<PyValue>(value)) value = value.cast<PyValue&>().as_python();
  std::string name = key, kind;
  auto us = key.rfind('_');
  if (us != std::string::npos) {
    std::string suffix = key.substr(us + 1);
    if (suffix == "i" || suffix == "f" || suffix == "s" || suffix == "t" || suffix == "is" || suffix == "fs" ||
        suffix == "ss") {
      name = key.substr(0, us);
      kind = suffix;
    }
  }
  if (kind.empty()) {
    if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value)) kind = "i";
    else if (py::isinstance<py::float_>(value)) kind = "f";
    else if (py::isinstance<py::str>(value)) kind = "s";
    else if (THPVariable_Check(value.ptr())) kind = "t";
    else if (py::isinstance<py::sequence>(value)) {
      py::sequence seq = value.cast<py::sequence>();
      kind = seq.size() && py::isinstance<py::float_>(seq[0]) ? "fs"
             : seq.size() && py::isinstance<py::str>(seq[0])  ? "ss"
                                                              : "is";
    } else {
      throw py::type_error("attribute '" + key + "': cannot store a " +
                           std::string(py::str(py::type::handle_of(value).attr("__name__"))) + " as an ONNX attribute");
    }
  }
  try {
    if (kind == "i") return ir::Attribute(name, value.cast<int64_t>());
    if (kind == "f") return ir::Attribute(name, value.cast<double>());
    if (kind == "s") return ir::Attribute(name, value.cast<std::string>());
    if (kind == "t") {
      if (!THPVariable_Check(value.ptr())) throw py::type_error("attribute '" + key + "' must be a torch.Tensor");
      return ir::Attribute(name, tensor_from(THPVariable_Unpack(value.ptr())));
    }
    if (kind == "is") return ir::Attribute(name, value.cast<std::vector<int64_t>>());
    if (kind == "fs") return ir::Attribute(name, value.cast<std::vector<double>>());
    return ir::Attribute(name, value.cast<std::vector<std::string>>());
  } catch (const py::cast_error&) {
    throw py::type_error("attribute '" + key + "': " + std::string(py::str(py::repr(value))) +
                         " is not of the type its suffix '_" + kind + "' says");
  }
}

// What torch.onnx's symbolic functions receive as `g`.
struct PyGraphContext {
  SymbolicContext* ctx;

  ir::Value* input_value(py::handle h) {
    if (h.is_none()) return nullptr;
    if (py::isinstance<PyValue>(h)) return h.cast<PyValue&>().materialize();
    if (THPVariable_Check(h.ptr())) return ctx->constant(tensor_from(THPVariable_Unpack(h.ptr())));
    if (py::isinstance<py::bool_>(h)) return ctx->constant(ir::Tensor::scalar_int(ir::DType::Bool, h.cast<bool>()));
    if (py::isinstance<py::int_>(h)) return ctx->const_int(h.cast<int64_t>());
    if (py::isinstance<py::float_>(h)) return ctx->const_scalar(ir::DType::Float, h.cast<double>());
    throw py::type_error("g.op inputs must be values, tensors, numbers or None, not " +
                         std::string(py::str(py::type::handle_of(h).attr("__name__"))));
  }

  py::object op(const std::string& name, py::args inputs, py::kwargs kwargs) {
    size_t outputs = 1;
    ir::Attributes attrs;
    for (auto item : kwargs) {
      std::string key = item.first.cast<std::string>();
      if (key == "outputs") {
        outputs = item.second.cast<size_t>();
        continue;
      }
      attrs.push_back(attribute_from(key, item.second));
    }
    std::vector<ir::Value*> ins;
    for (auto h : inputs) ins.push_back(input_value(h));
    auto [domain, type] = split_op_name(name);
    ir::Node* n = ctx->node(type, ins, outputs, std::move(attrs), domain);
    if (outputs == 1) return py::cast(PyValue{ctx, -1, n->output(0)});
    py::tuple t(outputs);
    for (size_t i = 0; i < outputs; ++i) t[i] = py::cast(PyValue{ctx, -1, n->output(i)});
    return t;
  }
};

// Stores what a symbolic returned as the node's outputs.
void set_outputs(SymbolicContext& ctx, const py::object& result) {
  auto value_of = [](py::handle h) {
    if (!py::isinstance<PyValue>(h))
      throw SymbolicError("a symbolic function must return the values g.op made, not " +
                          std::string(py::str(py::type::handle_of(h).attr("__name__"))));
    return h.cast<PyValue&>().materialize();
  };
  auto set = [&](py::handle h, size_t k) {
    if (h.is_none()) return;
    ir::Value* v = value_of(h);
    // Custom-domain ops have no ONNX type inference: type them as PyTorch did.
    if (v->dtype() == ir::DType::Undefined && k < ctx.num_outputs()) {
      const OutputInfo& info = ctx.out_info(k);
      if (info.dtype != ir::DType::Undefined)
        v->set_type(info.has_sizes ? ir::ValueType::tensor(info.dtype, info.sizes) : ir::ValueType::tensor(info.dtype));
    }
    ctx.out(v, k);
  };
  const bool many = py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result);
  if (many && ctx.num_outputs() == 1 && ctx.out_info(0).kind == Arg::Kind::List) {
    // A Tensor[] output (aten::split ...): the values are its elements.
    std::vector<ir::Value*> elems;
    for (auto h : result) elems.push_back(value_of(h));
    ctx.out_list(std::move(elems), 0);
    return;
  }
  if (many) {
    size_t k = 0;
    for (auto h : result) set(h, k++);
  } else {
    set(result, 0);
  }
}

std::string python_error_text(py::error_already_set& e) {
  std::string type = e.type() ? std::string(py::str(e.type().attr("__name__"))) : "Error";
  std::string value = e.value() ? std::string(py::str(e.value())) : "";
  return type + ": " + value;
}

py::object call_symbolic(SymbolicContext& ctx, const py::object& fn, const py::list& args, const char* what) {
  try {
    return fn(py::cast(PyGraphContext{&ctx}), *args);
  } catch (py::error_already_set& e) {
    std::string text = python_error_text(e);
    e.restore();
    PyErr_Clear();
    throw SymbolicError(std::string(what) + " raised " + text);
  } catch (const py::builtin_exception& e) {
    throw SymbolicError(std::string(what) + " failed: " + e.what());
  }
}

const torch::jit::ConcretePythonOp* python_op(const SymbolicContext& ctx) {
  auto* n = static_cast<const torch::jit::Node*>(ctx.source_node());
  if (!n || n->kind() != c10::prim::PythonOp) return nullptr;
  return static_cast<const torch::jit::ConcretePythonOp*>(n);
}

// The autograd Function class of a PythonOp (its pyobj is the bound `apply`).
py::object function_class(const torch::jit::ConcretePythonOp& op) {
  py::handle obj(const_cast<PyObject*>(op.pyobj.get()));
  if (py::hasattr(obj, "__self__")) return obj.attr("__self__");
  return py::reinterpret_borrow<py::object>(obj);
}

}  // namespace

namespace {

// Whether Python objects may still be touched: not once the interpreter is
// finalizing or gone (C++ statics such as the symbolic registry are
// destroyed after Py_Finalize; taking the GIL then blocks forever).
bool interpreter_alive() {
  if (!Py_IsInitialized()) return false;
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsFinalizing();
#else
  return !_Py_IsFinalizing();
#endif
}

}  // namespace

SymbolicFn python_symbolic(py::function fn) {
  auto holder = std::shared_ptr<py::function>(new py::function(std::move(fn)), [](py::function* f) {
    if (!interpreter_alive()) {
      f->release();  // the interpreter is gone, and its objects with it
      delete f;
      return;
    }
    py::gil_scoped_acquire gil;
    delete f;
  });
  return [holder](SymbolicContext& ctx) {
    py::gil_scoped_acquire gil;
    py::list args;
    for (size_t i = 0; i < ctx.num_args(); ++i) args.append(py::cast(PyValue{&ctx, static_cast<int64_t>(i), nullptr}));
    std::string what = "the Python symbolic function of " + ctx.kind();
    set_outputs(ctx, call_symbolic(ctx, *holder, args, what.c_str()));
  };
}

bool has_symbolic(const torch::jit::Node& n) {
  if (n.kind() != c10::prim::PythonOp) return false;
  py::gil_scoped_acquire gil;
  return py::hasattr(function_class(static_cast<const torch::jit::ConcretePythonOp&>(n)), "symbolic");
}

std::string function_name(const torch::jit::Node& n) {
  if (n.kind() != c10::prim::PythonOp) return n.kind().toQualString();
  py::gil_scoped_acquire gil;
  return static_cast<const torch::jit::ConcretePythonOp&>(n).name();
}

void python_op_symbolic(SymbolicContext& ctx) {
  const torch::jit::ConcretePythonOp* op = python_op(ctx);
  if (!op) ctx.fail("not a Python autograd Function call");
  py::gil_scoped_acquire gil;
  py::object cls = function_class(*op);
  if (!py::hasattr(cls, "symbolic"))
    ctx.fail("the autograd Function " + op->name() +
             " has no static symbolic(g, ...) method and its traced body was not recorded");
  // The arguments in call order: 'd' a tensor input, 'c' a constant.
  py::list args;
  size_t tensor = 0, scalar = 0;
  for (char c : op->cconv) {
    if (c == 'd') {
      args.append(py::cast(PyValue{&ctx, static_cast<int64_t>(tensor++), nullptr}));
    } else {
      args.append(py::handle(const_cast<PyObject*>(op->scalar_args.at(scalar++).get())));
    }
  }
  std::string what = op->name() + ".symbolic";
  set_outputs(ctx, call_symbolic(ctx, cls.attr("symbolic"), args, what.c_str()));
}

void bind_symbolic_api(py::module_& m) {
  py::class_<PyValue>(m, "Value", "A value in a symbolic function: an input of the node, or an output of g.op")
      .def("is_none", &PyValue::is_none)
      .def("is_constant", &PyValue::is_constant)
      .def("value", &PyValue::as_python, "The Python value of a constant: a number, str, list, or None")
      .def("dtype", [](const PyValue& v) { return std::string(ir::dtype_name(v.dtype())); }, "ONNX dtype name")
      .def("scalar_type", [](const PyValue& v) { return std::string(ir::dtype_torch_name(v.dtype())); })
      .def("sizes", &PyValue::sizes, "The sizes PyTorch saw (None for unknown dims), or None")
      .def("rank", &PyValue::rank)
      .def("type", [](const PyValue& v) { return PyValueType{v}; })
      .def(
          "setType",
          [](PyValue& v, const PyValueType& t) {
            if (!v.value) throw py::value_error("setType applies to values made by g.op");
            py::object sizes = t.v.sizes();
            ir::ValueType type = ir::ValueType::tensor(t.v.dtype());
            if (!sizes.is_none()) {
              type.has_shape = true;
              for (auto d : sizes) type.shape.push_back(d.is_none() ? ir::Dim{} : ir::Dim::of(d.cast<int64_t>()));
            }
            v.value->set_type(type);
            return v;
          },
          "Gives a value made by g.op the dtype and shape of another (for custom-domain ops)")
      .def("debugName", [](const PyValue& v) { return v.value ? v.value->name() : v.argument()->name; })
      .def("__repr__", &PyValue::repr);

  py::class_<PyValueType>(m, "ValueType", "What value.type() gives: sizes(), scalarType(), dim()")
      .def("sizes", [](const PyValueType& t) { return t.v.sizes(); })
      .def("varyingSizes", [](const PyValueType& t) { return t.v.sizes(); })
      .def("dim", [](const PyValueType& t) { return t.v.rank(); })
      .def("scalarType", [](const PyValueType& t) -> py::object {
        if (t.v.dtype() == ir::DType::Undefined) return py::none();
        return py::str(ir::dtype_torch_name(t.v.dtype()));
      })
      .def("isCompleteTensor", [](const PyValueType& t) {
        py::object s = t.v.sizes();
        if (s.is_none() || t.v.dtype() == ir::DType::Undefined) return false;
        for (auto d : s) if (d.is_none()) return false;
        return true;
      })
      .def("kind", [](const PyValueType&) { return "TensorType"; });

  py::class_<PyGraphContext>(m, "GraphContext", "The graph a symbolic function builds (torch.onnx's `g`)")
      .def("op", &PyGraphContext::op, "g.op(\"Relu\", x), g.op(\"domain::Foo\", x, alpha_f=1.0, outputs=2)")
      .def_property_readonly("opset", [](const PyGraphContext& g) { return g.ctx->opset(); })
      .def_property_readonly("kind", [](const PyGraphContext& g) { return g.ctx->kind(); });
}

}  // namespace torch2onnx::python
