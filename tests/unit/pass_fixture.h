// What the ONNX-pass unit tests share: typed values, a model at an opset, the options and
// pass context, int64 constants, initializers, one-output nodes of a given type, the PyTorch
// operator new nodes come from, and counting the nodes of an operator.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx_passes/passes.h"

namespace torch2onnx {

// A tensor type of `dt` with these dims (Dim::of(n), Dim::named("seq"), Dim{} unknown).
inline ir::ValueType typed(std::vector<ir::Dim> dims, ir::DType dt = ir::DType::Float) {
  ir::ValueType t = ir::ValueType::tensor(dt);
  t.has_shape = true;
  t.shape = std::move(dims);
  return t;
}

struct PassFixture {
  ir::Model m;
  ir::Graph& g = *m.graph;
  ExportOptions o;
  onnx_passes::PassContext ctx{o};
  explicit PassFixture(int opset = 23) {
    m.opset = opset;
    o.opset_version = opset;
  }
  // A 1-D int64 Constant (0-d with `scalar`).
  ir::Value* ints(std::vector<int64_t> v, bool scalar = false) {
    ir::Tensor t = scalar ? ir::Tensor::scalar_int(ir::DType::Int64, v[0]) : ir::Tensor::from_int64s(v);
    ir::Value* c = g.create_node("Constant", {}, 1, {{"value", std::move(t)}})->output(0);
    c->set_type(scalar ? ir::ValueType::tensor(ir::DType::Int64, std::vector<int64_t>{})
                       : ir::ValueType::tensor(ir::DType::Int64, {static_cast<int64_t>(v.size())}));
    return c;
  }
  // An initializer `name` of `dt` holding `v` with `dims`.
  ir::Value* weights(const std::string& name, const std::vector<double>& v, std::vector<int64_t> dims,
                     ir::DType dt = ir::DType::Float) {
    return g.add_initializer(name, ir::Tensor::from_doubles(dt, v, std::move(dims)));
  }
  // Nodes created from now on come from the PyTorch operator `kind` in module `module_path`
  // (returned; an empty `kind`: from none).
  std::shared_ptr<const ir::Origin> from(const std::string& kind, const std::string& module_path = "") {
    std::shared_ptr<ir::Origin> origin;
    if (!kind.empty()) {
      origin = std::make_shared<ir::Origin>();
      origin->torch_kind = kind;
      origin->module_path = module_path;
    }
    g.set_current_origin(origin);
    return origin;
  }
  // A node of `type` with one output of type `t`.
  ir::Value* op(const char* type, std::vector<ir::Value*> in, ir::ValueType t = {}, ir::Attributes attrs = {}) {
    ir::Value* v = g.create_node(type, std::move(in), 1, std::move(attrs))->output(0);
    v->set_type(std::move(t));
    return v;
  }
  size_t count(const std::string& op) const {
    size_t n = 0;
    for (const auto& node : g.nodes()) n += node->op_type() == op;
    return n;
  }
};

}  // namespace torch2onnx
