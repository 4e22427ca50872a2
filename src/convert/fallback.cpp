// The operator's tensor arguments become the node's inputs (Tensor[]
// arguments one input per element, run-time numbers 0-d inputs); constant
// numbers, strings and number lists become attributes named after the schema
// argument; None arguments are left out. The outputs keep the dtypes and
// shapes PyTorch computed (no ONNX schema infers them).
#include "convert/fallback.h"

#include "torch2onnx/symbolic/context.h"

namespace torch2onnx::convert {
namespace {

bool all_elements(const Arg& a, Arg::Kind kind) {
  if (a.elements.empty()) return false;
  for (const Arg& e : a.elements)
    if (e.kind != kind || !e.constant) return false;
  return true;
}

void keep_as_node(SymbolicContext& ctx, const std::string& type, const std::string& domain, ir::Attributes attrs) {
  std::vector<ir::Value*> inputs;
  for (size_t i = 0; i < ctx.num_args(); ++i) {
    const Arg& a = ctx.arg(i);
    const std::string name = a.name.empty() ? "arg" + std::to_string(i) : a.name;
    switch (a.kind) {
      case Arg::Kind::None:
      case Arg::Kind::Device: break;
      case Arg::Kind::Tensor: inputs.push_back(ctx.in(i)); break;
      case Arg::Kind::Int:
      case Arg::Kind::Float:
      case Arg::Kind::Bool:
        if (!a.constant) {
          inputs.push_back(ctx.scalar_value(i, a.dtype == ir::DType::Undefined ? ir::DType::Int64 : a.dtype));
        } else if (a.kind == Arg::Kind::Float) {
          attrs.emplace_back(name, a.f);
        } else {
          attrs.emplace_back(name, a.kind == Arg::Kind::Bool ? int64_t{a.b} : a.i);
        }
        break;
      case Arg::Kind::String:
        if (!a.constant) ctx.fail("argument '" + name + "' is a string computed at run time");
        attrs.emplace_back(name, a.s);
        break;
      case Arg::Kind::List:
      case Arg::Kind::Tuple:
        if (all_elements(a, Arg::Kind::Int) || all_elements(a, Arg::Kind::Bool)) {
          attrs.emplace_back(name, ctx.is(i));
        } else if (all_elements(a, Arg::Kind::Float)) {
          attrs.emplace_back(name, ctx.fs(i));
        } else {
          for (size_t k = 0; k < a.elements.size(); ++k)
            if (!a.elements[k].is_none()) inputs.push_back(ctx.elem(i, k));
        }
        break;
      case Arg::Kind::Other: ctx.fail("argument '" + name + "' (" + a.type_str + ") cannot be an ONNX input"); break;
    }
  }
  ir::Node* node = ctx.node(type, inputs, ctx.num_outputs(), std::move(attrs), domain);
  for (size_t k = 0; k < ctx.num_outputs(); ++k) {
    const OutputInfo& info = ctx.out_info(k);
    if (info.kind != Arg::Kind::Tensor)
      ctx.fail("output " + std::to_string(k) + " is not a tensor: it cannot be the output of one ONNX node");
    node->output(k)->set_type(info.has_sizes ? ir::ValueType::tensor(info.dtype, info.sizes)
                                             : ir::ValueType::tensor(info.dtype));
    ctx.out(node->output(k), k);
  }
}

}  // namespace

SymbolicFn aten_node(const std::string& op, const std::string& overload) {
  return [op, overload](SymbolicContext& ctx) {
    keep_as_node(ctx, "ATen", "org.pytorch.aten", {{"operator", op}, {"overload_name", overload}});
  };
}

SymbolicFn passthrough_node(const std::string& ns, const std::string& name) {
  return [ns, name](SymbolicContext& ctx) { keep_as_node(ctx, name, ns, {}); };
}

}  // namespace torch2onnx::convert
