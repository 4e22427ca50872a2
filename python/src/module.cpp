// torch2onnx._C: the Python extension over the C++ core. Exports run in C++
// with the GIL released; only Python symbolics (register_custom_op_symbolic,
// autograd Functions' `symbolic`) call back into Python.
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/python/script_init.h>
#include <torch/csrc/utils/pybind.h>

#include <set>
#include <sstream>

#include "api_internal.h"
#include "frontend/pt2/program.h"
#include "module_tree.h"
#include "python_symbolic.h"
#include "serialize/writer.h"
#include "symbolic/registry.h"
#include "torch2onnx/find_mismatch.h"
#include "torch2onnx/torch2onnx.h"
#include "torch2onnx/warnings.h"

namespace py = pybind11;
using namespace torch2onnx;

namespace torch2onnx::convert::torchscript {
ir::DType to_dtype(at::ScalarType st);  // (convert/torchscript/args.cpp)
ir::Tensor borrow(const at::Tensor& t);
}

namespace {

py::object& errors_module() {
  static py::object* m = new py::object(py::module_::import("torch2onnx.errors"));
  return *m;
}

// Raises the torch2onnx.errors class for the C++ error's kind.
[[noreturn]] void raise(const Error& e) {
  const char* cls = "OnnxExporterError";
  switch (e.kind()) {
    case Error::Kind::Usage: cls = "ExportUsageError"; break;
    case Error::Kind::Unsupported: cls = "UnsupportedOperatorError"; break;
    case Error::Kind::Check: cls = "CheckerError"; break;
    case Error::Kind::Args: cls = "ExampleInputError"; break;
    case Error::Kind::Load: cls = "LoadError"; break;
    case Error::Kind::Io: cls = "ExportIOError"; break;
    default: break;
  }
  py::object exc = errors_module().attr(cls)(e.what());
  if (auto* u = dynamic_cast<const UnsupportedOperatorError*>(&e)) {
    py::list ops;
    for (const auto& op : u->operators()) ops.append(op.op);
    exc.attr("operators") = ops;
  }
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw py::error_already_set();
}

// The options the Python package passes (python/torch2onnx/utils.py's
// _options and its callers); a key none of them reads is an error, never
// ignored. ("inline_autograd" is python_hooks'.)
ExportOptions options_from(const py::dict& d) {
  ExportOptions o;
  o.strict_dynamic_axes = false;  // torch.onnx's rule: keys that name nothing are ignored, with a warning
  std::set<std::string> known = {"inline_autograd"};
  auto has = [&](const char* k) {
    known.insert(k);
    return d.contains(k) && !py::object(d[k]).is_none();
  };
  if (has("opset_version")) o.opset_version = d["opset_version"].cast<int>();
  if (has("export_params")) o.export_params = d["export_params"].cast<bool>();
  if (has("verbose")) o.verbose = d["verbose"].cast<bool>();
  if (has("training")) o.training = static_cast<TrainingMode>(d["training"].cast<int>());
  if (has("input_names")) o.input_names = d["input_names"].cast<std::vector<std::string>>();
  if (has("output_names")) o.output_names = d["output_names"].cast<std::vector<std::string>>();
  if (has("operator_export_type"))
    o.operator_export_type = static_cast<OperatorExportType>(d["operator_export_type"].cast<int>());
  if (has("do_constant_folding")) o.do_constant_folding = d["do_constant_folding"].cast<bool>();
  if (has("optimize")) o.optimize = d["optimize"].cast<bool>();
  if (has("keep_initializers_as_inputs")) o.keep_initializers_as_inputs = d["keep_initializers_as_inputs"].cast<bool>();
  if (has("custom_opsets")) o.custom_opsets = d["custom_opsets"].cast<std::map<std::string, int64_t>>();
  if (has("keep_doc_strings")) o.keep_doc_strings = d["keep_doc_strings"].cast<bool>();
  if (has("graph_picture")) o.graph_picture = d["graph_picture"].cast<std::string>();
  if (has("report")) o.report = d["report"].cast<std::string>();
  if (has("external_data")) o.external_data = d["external_data"].cast<bool>();
  if (has("modules_as_functions"))
    o.export_modules_as_functions = d["modules_as_functions"].cast<std::vector<std::string>>();
  if (has("dynamic_axes")) {
    for (auto item : d["dynamic_axes"].cast<py::dict>()) {
      auto& axes = o.dynamic_axes[item.first.cast<std::string>()];
      py::object spec = py::reinterpret_borrow<py::object>(item.second);
      if (py::isinstance<py::dict>(spec)) {
        for (auto a : spec.cast<py::dict>()) axes.push_back(DynamicAxis{a.first.cast<int64_t>(), a.second.cast<std::string>()});
      } else {
        for (auto a : spec) axes.push_back(DynamicAxis{a.cast<int64_t>(), ""});
      }
    }
  }
  for (auto item : d) {
    const std::string key = py::str(item.first);
    if (!known.count(key)) {
      std::string names;
      for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
      throw py::value_error("unknown export option '" + key + "' (the options: " + names + ")");
    }
  }
  return o;
}

// One example argument as TorchScript sees it: tensors, None, bool, int,
// float, str, and tuples, lists and str-keyed dicts of them (lists and dicts
// typed by their unified element type). LibTorch's own
// toTypeInferredIValue cannot be used: in torch 2.14 wheels it calls a
// function libtorch_python does not export.
c10::IValue ivalue_from(py::handle obj);

c10::TypePtr unified_type(const std::vector<c10::IValue>& values, const char* what) {
  c10::TypePtr t;
  for (const auto& v : values) {
    c10::TypePtr vt = v.type();
    if (!t) {
      t = vt;
    } else if (auto u = c10::unifyTypes(t, vt)) {
      t = *u;
    } else {
      throw py::type_error(std::string("the elements of a ") + what + " argument have different types (" +
                           t->repr_str() + ", " + vt->repr_str() + ")");
    }
  }
  return t;
}

c10::IValue ivalue_from(py::handle obj) {
  if (THPVariable_Check(obj.ptr())) return THPVariable_Unpack(obj.ptr());
  if (obj.is_none()) return {};
  if (py::isinstance<py::bool_>(obj)) return obj.cast<bool>();
  if (py::isinstance<py::int_>(obj)) return obj.cast<int64_t>();
  if (py::isinstance<py::float_>(obj)) return obj.cast<double>();
  if (py::isinstance<py::str>(obj)) return obj.cast<std::string>();
  if (py::isinstance<py::tuple>(obj)) {
    std::vector<c10::IValue> elems;
    for (auto e : obj) elems.push_back(ivalue_from(e));
    return c10::ivalue::Tuple::create(std::move(elems));
  }
  if (py::isinstance<py::list>(obj)) {
    std::vector<c10::IValue> elems;
    for (auto e : obj) elems.push_back(ivalue_from(e));
    if (elems.empty()) return c10::List<at::Tensor>();  // an empty list is List[Tensor], as TorchScript types it
    c10::impl::GenericList list(unified_type(elems, "list"));
    for (auto& e : elems) list.push_back(std::move(e));
    return list;
  }
  if (py::isinstance<py::dict>(obj)) {
    std::vector<c10::IValue> keys, values;
    for (auto item : obj.cast<py::dict>()) {
      keys.push_back(ivalue_from(item.first));
      values.push_back(ivalue_from(item.second));
    }
    if (keys.empty()) return c10::impl::GenericDict(c10::StringType::get(), c10::TensorType::get());
    c10::impl::GenericDict dict(unified_type(keys, "dict's key"), unified_type(values, "dict"));
    for (size_t i = 0; i < keys.size(); ++i) dict.insert(keys[i], values[i]);
    return dict;
  }
  throw py::type_error("cannot pass an object of type " + std::string(py::str(py::type::handle_of(obj).attr("__name__"))) +
                       " to the model as an example argument");
}

std::vector<c10::IValue> ivalues_from(const py::tuple& args) {
  std::vector<c10::IValue> out;
  for (auto a : args) out.push_back(ivalue_from(a));
  return out;
}

// autograd Functions with a `symbolic` stay one node; inline_autograd=False keeps all.
ExportHooks python_hooks(const py::dict& options) {
  bool inline_autograd = !options.contains("inline_autograd") || options["inline_autograd"].cast<bool>();
  ExportHooks h;
  if (inline_autograd)
    h.python_ops.keep = [](const torch::jit::Node& n) { return python::has_symbolic(n); };
  else
    h.python_ops.keep = [](const torch::jit::Node&) { return true; };
  h.python_ops.missing_symbolic = [](const torch::jit::Node& n) {
    return python::has_symbolic(n) ? std::string() : python::function_name(n);
  };
  return h;
}

void python_warnings(const std::vector<std::string>& messages) {
  for (const std::string& m : messages)
    if (PyErr_WarnEx(PyExc_UserWarning, ("torch2onnx: " + m).c_str(), 1) < 0) throw py::error_already_set();
}

// export_program_in_memory(lazy=True)'s model: converted, serialized when asked.
struct ConvertedModel {
  std::shared_ptr<ir::Model> model;
  ExportOptions options;
};

// Runs `fn` without the GIL, turning torch2onnx errors into Python exceptions.
// A Python error left set by a failure the core handled (a Python meta kernel
// that raised in an example run on the meta device, which then ran for real:
// PyTorch 1.13's repeat_interleave) is not this call's: it is cleared, or
// Python would report "returned a result with an exception set".
// The export's warnings (torch2onnx::warn) become Python UserWarnings, as
// torch.onnx's are: callers filter, catch or turn them into errors.
template <typename Fn>
auto without_gil(Fn&& fn) {
  WarningCollector warnings;
  try {
    auto result = [&] {
      py::gil_scoped_release release;
      return fn();
    }();
    if (PyErr_Occurred()) PyErr_Clear();
    python_warnings(warnings.take());
    return result;
  } catch (const Error& e) {
    python_warnings(warnings.take());
    raise(e);
  }
}

// A ScriptFunction as a module whose forward() is the function.
torch::jit::Module module_from_function(const torch::jit::StrongFunctionPtr& f) {
  auto* fn = dynamic_cast<torch::jit::GraphFunction*>(f.function_);
  if (!fn) throw py::type_error("the ScriptFunction has no TorchScript graph");
  return api::module_from_graph(fn->graph()->copy(), "ScriptFunction_" + fn->name());
}

// A find_mismatch tree as nested dicts (torch2onnx._mismatch.ProgramGraphInfo reads them).
py::dict part_dict(const GraphPart& p) {
  py::dict d;
  d["id"] = p.id;
  d["node_kinds"] = p.node_kinds;
  d["label"] = p.label;
  d["mismatch"] = p.mismatch;
  d["export_error"] = p.export_error;
  d["upper"] = p.upper ? py::object(part_dict(*p.upper)) : py::object(py::none());
  d["lower"] = p.lower ? py::object(part_dict(*p.lower)) : py::object(py::none());
  return d;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch2onnx's C++ core";
  // The built-in symbolic of autograd Functions that have a `symbolic`.
  user_registry().add("prim::PythonOp", kMinOpset, python::python_op_symbolic);
  python::bind_symbolic_api(m);
  python::bind_module_tree(m);

  m.def("version", &version);

  m.def(
      "export",
      [](const torch::jit::Module& module, py::tuple args, py::object path, py::dict options,
         py::object stream) -> py::object {
        ExportOptions o = options_from(options);
        std::vector<c10::IValue> ivalues = ivalues_from(args);
        std::ostringstream verbose;
        o.verbose_stream = &verbose;
        std::string file = path.is_none() ? std::string() : path.cast<std::string>();
        ExportHooks hooks = python_hooks(options);
        std::vector<size_t> unused;
        o.unused_input = [&unused](size_t index, const std::string&) { unused.push_back(index); };
        // A file-like object takes the bytes piece by piece (weights straight from their tensors), not one
        // copy of the whole model in a std::string and another in a Python bytes.
        py::object write = stream.is_none() ? py::object() : py::object(stream.attr("write"));
        auto sink = [&write](const uint8_t* p, size_t n) {
          constexpr size_t kPiece = size_t{64} << 20;
          py::gil_scoped_acquire gil;
          for (size_t off = 0; off < n; off += kPiece) {
            const size_t k = std::min(kPiece, n - off);
            write(py::memoryview::from_memory(p + off, static_cast<py::ssize_t>(k)));
          }
        };
        std::string bytes = without_gil([&] {
          if (!file.empty()) {
            api::export_to_file(module, ivalues, file, o, hooks);
            return std::string();
          }
          if (write) {
            api::export_to_sink(module, ivalues, o, hooks, sink);
            return std::string();
          }
          return api::export_to_bytes(module, ivalues, o, hooks);
        });
        if (o.verbose) py::print(verbose.str(), py::arg("end") = "", py::arg("flush") = true);
        py::object data = file.empty() && !write ? py::object(py::bytes(bytes)) : py::object(py::none());
        return py::make_tuple(data, unused);
      },
      py::arg("module"), py::arg("args"), py::arg("path"), py::arg("options"), py::arg("stream") = py::none(),
      "Exports module.forward(*args); writes `path`, or `stream` (a binary file-like object: its write() is "
      "called with the bytes in pieces), or returns the bytes when both are None. Returns (bytes or None, "
      "indices of the example inputs the model does not read)");

  m.def(
      "export_program",
      [](const std::string& program, py::object path, py::dict options) -> py::object {
        ExportOptions o = options_from(options);
        std::string file = path.is_none() ? std::string() : path.cast<std::string>();
        std::string bytes = without_gil([&] {
          if (!file.empty()) {
            export_program(program, file, o);
            return std::string();
          }
          return api::export_program_to_bytes(program, o);
        });
        return file.empty() ? py::object(py::bytes(bytes)) : py::object(py::none());
      },
      py::arg("program"), py::arg("path"), py::arg("options"),
      "Exports the .pt2 program at `program` (a path, /proc/self/fd/N included); writes `path` (or returns the "
      "bytes when path is None)");

  m.def(
      "export_program_in_memory",
      [](py::bytes program_json, py::dict tensors, py::object path, py::dict options, bool lazy) -> py::object {
        ExportOptions o = options_from(options);
        frontend::pt2::Program program =
            frontend::pt2::parse_program(std::string(program_json), "the captured program");
        program.archive_path = "<the captured program>";
        for (auto item : tensors) {
          const std::string name = item.first.cast<std::string>();
          if (!THPVariable_Check(item.second.ptr()))
            throw Error(Error::Kind::Usage, "the program's '" + name + "' is not a tensor");
          at::Tensor t = THPVariable_Unpack(item.second.ptr());
          const ir::DType dt = convert::torchscript::to_dtype(t.scalar_type());
          // (the caller takes the archive path for these: _dynamo._in_memory)
          if (t.is_meta() || !t.device().is_cpu() || t.is_quantized() || t.is_sparse() || t.is_complex() ||
              dt == ir::DType::Undefined)
            throw Error(Error::Kind::Usage, "the program's '" + name + "' cannot be handed over in memory");
          program.in_memory.emplace(name, convert::torchscript::borrow(t));  // (contiguous: a copy if not)
        }
        std::string file = path.is_none() ? std::string() : path.cast<std::string>();
        if (file.empty() && lazy && o.report.empty() && o.graph_picture.empty()) {
          auto converted = std::make_shared<ConvertedModel>();
          converted->options = o;
          converted->model = std::make_shared<ir::Model>(without_gil([&] { return api::convert_program(program, o); }));
          return py::cast(converted);
        }
        std::string bytes = without_gil([&] {
          if (!file.empty()) {
            api::export_program_to_file(program, file, o);
            return std::string();
          }
          return api::export_program_to_bytes(program, o);
        });
        return file.empty() ? py::object(py::bytes(bytes)) : py::object(py::none());
      },
      py::arg("program_json"), py::arg("tensors"), py::arg("path"), py::arg("options"), py::arg("lazy") = false,
      "Exports a program given as torch.export's JSON with its weights and constants as tensors (read in place, "
      "not copied); writes `path`, or returns the bytes when path is None, or with `lazy` (and no report or "
      "graph picture asked for) a ConvertedModel: converted and checked, serialized when asked");

  py::class_<ConvertedModel, std::shared_ptr<ConvertedModel>>(
      m, "ConvertedModel",
      "A model converted and checked but not serialized: the ONNX passes' result, holding the program's "
      "tensors it reads (not copies).")
      .def(
          "to_bytes",
          [](const ConvertedModel& c) {
            std::string bytes = without_gil([&] { return api::model_to_bytes(*c.model, c.options); });
            return py::bytes(bytes);
          },
          "The serialized ModelProto (an error where the weights need external data)")
      .def(
          "write",
          [](const ConvertedModel& c, const std::string& path, bool external_data, py::object threshold) {
            ExportOptions o = c.options;
            o.external_data = external_data;
            std::optional<size_t> t;
            if (!threshold.is_none()) t = threshold.cast<size_t>();
            without_gil([&] {
              api::model_to_file(*c.model, path, o, t);
              return 0;
            });
          },
          py::arg("path"), py::arg("external_data") = false, py::arg("external_threshold") = py::none(),
          "Writes the model to `path` (its weights, each of at least external_threshold bytes, to `<path>.data` "
          "with external_data, or where they pass protobuf's 2 GiB)")
      .def_property_readonly(
          "initializer_bytes", [](const ConvertedModel& c) { return serialize::initializer_bytes(*c.model); },
          "The weights' bytes");

  m.def(
      "find_mismatch_program",
      [](const std::string& program, py::tuple args, py::dict options, double rtol) {
        ExportOptions o = options_from(options);
        std::vector<c10::IValue> ivalues = ivalues_from(args);
        MismatchTree tree = without_gil([&] { return find_mismatch_program(program, o, rtol, ivalues); });
        return part_dict(tree.root);
      },
      py::arg("program"), py::arg("args"), py::arg("options"), py::arg("rtol"),
      "find_mismatch of the .pt2 program at `program` on `args` (its stored sample inputs when empty): "
      "the tree as nested dicts");

  m.def(
      "export_to_pretty_string",
      [](const torch::jit::Module& module, py::tuple args, py::dict options) {
        ExportOptions o = options_from(options);
        std::vector<c10::IValue> ivalues = ivalues_from(args);
        ExportHooks hooks = python_hooks(options);
        return without_gil([&] { return api::export_to_pretty_string(module, ivalues, o, hooks); });
      },
      py::arg("module"), py::arg("args"), py::arg("options"));

  m.def(
      "unconvertible_ops",
      [](const torch::jit::Module& module, py::tuple args, int opset) {
        std::vector<c10::IValue> ivalues = ivalues_from(args);
        std::shared_ptr<torch::jit::Graph> graph;
        const ExportHooks hooks = python_hooks(py::dict());  // with the GIL: it makes a Python dict
        std::vector<UnsupportedOperator> ops =
            without_gil([&] { return api::unconvertible_ops(module, ivalues, opset, hooks, &graph); });
        std::vector<std::string> names;
        for (const auto& u : ops) names.push_back(u.op);
        return py::make_tuple(graph, names);
      },
      py::arg("module"), py::arg("args"), py::arg("opset_version"));

  m.def(
      "module_from_function",
      [](const torch::jit::StrongFunctionPtr& f) { return module_from_function(f); },
      "A ScriptFunction as a ScriptModule whose forward() is the function");

  // Symbolics registered from Python hold Python functions in the C++
  // registry, a static destroyed after the interpreter: they leave the
  // registry at interpreter exit, while Python still runs (issue 15: the
  // process hung at exit otherwise).
  static std::set<std::pair<std::string, int>> from_python;
  m.def(
      "register_symbolic",
      [](const std::string& op, int opset, py::function fn) {
        try {
          register_symbolic(op, opset, python::python_symbolic(std::move(fn)));
          from_python.emplace(op, opset);
        } catch (const Error& e) {
          raise(e);
        }
      },
      py::arg("op"), py::arg("opset"), py::arg("fn"));
  m.def("unregister_symbolic", [](const std::string& op, int opset) {
    from_python.erase({op, opset});
    return unregister_symbolic(op, opset);
  });
  py::module_::import("atexit").attr("register")(py::cpp_function([] {
    for (const auto& [op, opset] : from_python) unregister_symbolic(op, opset);
    from_python.clear();
  }));
  m.def("registered_opsets", [](const std::string& op) {
    for (const auto& [name, since] : user_registry().list())
      if (name == op) return since;
    return std::vector<int>{};
  });
  m.attr("MIN_OPSET") = kMinOpset;
  m.attr("MAX_OPSET") = max_opset();
  m.attr("DEFAULT_OPSET") = kDefaultOpset;
  m.attr("DEFAULT_PROGRAM_OPSET") = default_program_opset();
}
