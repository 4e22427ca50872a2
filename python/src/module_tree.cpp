// torch2onnx._C.module_tree(nn.Module): the ScriptModule hierarchy that
// torch.jit.trace builds before it traces (torch.jit._trace.make_module), made
// in C++: per module a class with its parameters, buffers, `training`, the
// script objects it holds and its children; no methods until the trace adds
// forward(). torch.jit.trace makes the same tree through
// torch.jit._recursive.create_script_module, which infers a concrete type per
// module in Python: most of a trace's time on a ResNet (issue 39).
#include "module_tree.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/csrc/utils/pybind.h>

#include <unordered_map>
#include <unordered_set>

namespace py = pybind11;

namespace torch2onnx::python {
namespace {

struct Builder {
  std::shared_ptr<torch::jit::CompilationUnit> cu = std::make_shared<torch::jit::CompilationUnit>();
  py::object qualified_name = py::module_::import("torch._jit_internal").attr("_qualified_name");
  py::object script_module_class = py::module_::import("torch.jit").attr("ScriptModule");
  py::object export_modifier = py::module_::import("torch._jit_internal").attr("FunctionModifiers").attr("EXPORT");
  std::unordered_map<PyObject*, bool> exports_of_class;

  // Whether the module's class (or a base) has a @torch.jit.export method
  // (what torch.jit._jit_internal.module_has_exports finds by reading every
  // attribute of the instance: slow), once per class.
  bool has_exports(py::handle mod) {
    py::handle cls = py::type::handle_of(mod);
    auto it = exports_of_class.find(cls.ptr());
    if (it != exports_of_class.end()) return it->second;
    bool found = false;
    for (py::handle base : cls.attr("__mro__")) {
      for (py::handle value : base.attr("__dict__").attr("values")()) {  // (a mappingproxy)
        py::object fn = py::reinterpret_borrow<py::object>(value);
        if (py::hasattr(fn, "__func__")) fn = fn.attr("__func__");  // (static and class methods)
        if (py::hasattr(fn, "_torchscript_modifier") && py::object(fn.attr("_torchscript_modifier")).is(export_modifier)) found = true;
      }
    }
    exports_of_class.emplace(cls.ptr(), found);
    return found;
  }

  // nullopt: a module torch.jit.trace treats otherwise (exported methods,
  // backward hooks, a tensor held twice): the caller traces with torch.jit.trace.
  std::optional<torch::jit::Module> build(py::handle mod) {
    if (py::isinstance(mod, script_module_class)) return py::cast<torch::jit::Module>(mod.attr("_c"));
    if (has_exports(mod)) return std::nullopt;
    if (py::len(mod.attr("_backward_hooks")) != 0) return std::nullopt;
    const std::string name = py::cast<std::string>(qualified_name(py::type::handle_of(mod)));
    torch::jit::Module m(c10::QualifiedName(name), cu, /*shouldMangle=*/true);
    m.register_attribute("training", c10::BoolType::get(), py::cast<bool>(mod.attr("training")));
    py::dict params = mod.attr("_parameters"), buffers = mod.attr("_buffers");
    std::unordered_set<const c10::TensorImpl*> seen;
    for (const py::dict& tensors : {params, buffers}) {
      const bool buffer = tensors.is(buffers);
      for (auto item : tensors) {
        if (item.second.is_none()) continue;
        if (!THPVariable_Check(item.second.ptr())) return std::nullopt;
        at::Tensor t = THPVariable_Unpack(item.second.ptr());
        if (!seen.insert(t.unsafeGetTensorImpl()).second) return std::nullopt;
        m.register_parameter(py::cast<std::string>(item.first), t, buffer);
      }
    }
    for (auto item : py::cast<py::dict>(mod.attr("__dict__"))) {
      if (!py::isinstance<torch::jit::Object>(item.second) || params.contains(item.first) || buffers.contains(item.first))
        continue;
      auto obj = py::cast<torch::jit::Object>(item.second);
      m.register_attribute(py::cast<std::string>(item.first), obj.type(), obj._ivalue());
    }
    for (auto item : py::cast<py::dict>(mod.attr("_modules"))) {
      if (item.second.is_none()) continue;
      auto child = build(item.second);
      if (!child) return std::nullopt;
      m.register_module(py::cast<std::string>(item.first), *child);
    }
    return m;
  }
};

}  // namespace

void bind_module_tree(py::module_& m) {
  m.def(
      "module_tree",
      [](py::handle module) -> py::object {
        Builder b;
        auto tree = b.build(module);
        return tree ? py::cast(*tree) : py::object(py::none());
      },
      py::arg("module"),
      "The torch._C.ScriptModule tree torch.jit.trace makes for `module` before tracing it (no methods yet), or "
      "None where torch.jit.trace must make it (exported methods, backward hooks, a tensor held twice by a module)");
}

}  // namespace torch2onnx::python
