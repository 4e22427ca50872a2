#include "serialize/to_proto.h"

#include <unordered_set>

#include "torch2onnx/options.h"

namespace torch2onnx::serialize {

void attribute_to_proto(const ir::Attribute& a, onnx::AttributeProto& p, const ProtoOptions& options) {
  p.set_name(a.name);
  switch (a.kind) {
    case ir::AttrKind::Float:
      p.set_type(onnx::AttributeProto::FLOAT);
      p.set_f(static_cast<float>(a.f));
      break;
    case ir::AttrKind::Int:
      p.set_type(onnx::AttributeProto::INT);
      p.set_i(a.i);
      break;
    case ir::AttrKind::String:
      p.set_type(onnx::AttributeProto::STRING);
      p.set_s(a.s);
      break;
    case ir::AttrKind::Tensor:
      p.set_type(onnx::AttributeProto::TENSOR);
      tensor_to_proto(*a.t, "", *p.mutable_t(), true);
      break;
    case ir::AttrKind::Graph: {
      p.set_type(onnx::AttributeProto::GRAPH);
      ProtoOptions sub = options;
      // (a subgraph's initializers are its own constants: never left out,
      // nor turned into inputs, which a Loop or If body cannot take)
      sub.initializers = ProtoOptions::Initializers::Full;
      sub.keep_initializers_as_inputs = false;
      graph_to_proto(*a.g, *p.mutable_g(), sub);
      break;
    }
    case ir::AttrKind::Floats:
      p.set_type(onnx::AttributeProto::FLOATS);
      for (double f : a.floats) p.add_floats(static_cast<float>(f));
      break;
    case ir::AttrKind::Ints:
      p.set_type(onnx::AttributeProto::INTS);
      for (int64_t i : a.ints) p.add_ints(i);
      break;
    case ir::AttrKind::Strings:
      p.set_type(onnx::AttributeProto::STRINGS);
      for (const auto& s : a.strings) p.add_strings(s);
      break;
    case ir::AttrKind::Type:
      p.set_type(onnx::AttributeProto::TYPE_PROTO);
      type_to_proto(a.type, *p.mutable_tp());
      break;
  }
}

namespace {

void value_info(const ir::Value* v, onnx::ValueInfoProto& p) {
  p.set_name(v->name());
  type_to_proto(v->type(), *p.mutable_type());
}

void collect_domains(const ir::Graph& g, std::map<std::string, int64_t>& out) {
  for (const auto& n : g.nodes()) {
    if (!n->domain().empty() && n->domain() != "ai.onnx") out.emplace(n->domain(), 1);
    for (ir::Graph* sub : n->subgraphs()) collect_domains(*sub, out);
  }
}

}  // namespace

void type_to_proto(const ir::ValueType& t, onnx::TypeProto& out) {
  if (t.dtype == ir::DType::Undefined) return;  // unknown: left to shape inference (subgraphs only)
  onnx::TypeProto_Tensor* tt = t.kind == ir::ValueType::Kind::Sequence
                                   ? out.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()
                                   : t.kind == ir::ValueType::Kind::Optional
                                         ? out.mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()
                                         : out.mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(t.dtype));
  if (t.has_shape && t.kind != ir::ValueType::Kind::Sequence) {
    auto* shape = tt->mutable_shape();
    for (const ir::Dim& d : t.shape) {
      auto* dim = shape->add_dim();
      if (d.is_static())
        dim->set_dim_value(d.value);
      else if (d.is_symbolic())
        dim->set_dim_param(d.param);
    }
  }
}

ir::ValueType type_from_proto(const onnx::TypeProto& tp, const ir::ValueType& previous) {
  ir::ValueType t = previous;
  const onnx::TypeProto_Tensor* tt = nullptr;
  if (tp.has_tensor_type()) {
    tt = &tp.tensor_type();
    t.kind = ir::ValueType::Kind::Tensor;
  } else if (tp.has_sequence_type() && tp.sequence_type().elem_type().has_tensor_type()) {
    tt = &tp.sequence_type().elem_type().tensor_type();
    t.kind = ir::ValueType::Kind::Sequence;
  } else if (tp.has_optional_type() && tp.optional_type().elem_type().has_tensor_type()) {
    tt = &tp.optional_type().elem_type().tensor_type();
    t.kind = ir::ValueType::Kind::Optional;
  }
  if (!tt) return t;
  if (tt->elem_type() != 0) t.dtype = static_cast<ir::DType>(tt->elem_type());
  if (tt->has_shape() && t.kind != ir::ValueType::Kind::Sequence) {
    t.has_shape = true;
    t.shape.clear();
    for (const auto& d : tt->shape().dim()) {
      if (d.has_dim_value())
        t.shape.push_back(ir::Dim::of(d.dim_value()));
      else if (d.has_dim_param())
        t.shape.push_back(ir::Dim::named(d.dim_param()));
      else
        t.shape.push_back(ir::Dim{});
    }
  }
  return t;
}

void tensor_to_proto(const ir::Tensor& t, const std::string& name, onnx::TensorProto& out, bool with_data) {
  for (int64_t d : t.dims()) out.add_dims(d);
  out.set_data_type(static_cast<int32_t>(t.dtype()));
  if (!name.empty()) out.set_name(name);
  if (with_data) out.set_raw_data(t.data(), t.nbytes());
}

void graph_to_proto(const ir::Graph& g, onnx::GraphProto& out, const ProtoOptions& options) {
  out.set_name(g.name());
  std::unordered_set<const ir::Value*> listed_inputs;
  for (const ir::Value* v : g.inputs()) {
    value_info(v, *out.add_input());
    listed_inputs.insert(v);
  }
  for (const ir::Value* v : g.initializers()) {
    const ir::Tensor& t = *v->initializer();
    const bool large = t.nbytes() > options.inline_limit;
    switch (options.initializers) {
      case ProtoOptions::Initializers::Full: tensor_to_proto(t, v->name(), *out.add_initializer(), true); break;
      case ProtoOptions::Initializers::Omit: break;
      case ProtoOptions::Initializers::InputsIfLarge:
        if (large) {
          if (!listed_inputs.count(v)) {
            value_info(v, *out.add_input());
            listed_inputs.insert(v);
          }
          continue;
        }
        tensor_to_proto(t, v->name(), *out.add_initializer(), true);
        break;
    }
    if (options.keep_initializers_as_inputs && !listed_inputs.count(v)) {
      value_info(v, *out.add_input());
      listed_inputs.insert(v);
    }
  }
  for (const auto& n : g.nodes()) {
    onnx::NodeProto* p = out.add_node();
    for (const ir::Value* in : n->inputs()) p->add_input(in ? in->name() : std::string());
    for (const ir::Value* o : n->outputs()) p->add_output(o->name());
    p->set_name(n->name());
    p->set_op_type(n->op_type());
    if (!n->domain().empty()) p->set_domain(n->domain());
    for (const ir::Attribute& a : n->attributes()) attribute_to_proto(a, *p->add_attribute(), options);
    if (options.keep_doc_strings) {
      if (!n->doc_string().empty())
        p->set_doc_string(n->doc_string());
      else if (n->origin() && !n->origin()->source_stack.empty())
        p->set_doc_string(n->origin()->source_stack);
      else if (n->origin() && !n->origin()->source.empty())
        p->set_doc_string(n->origin()->source);
    }
  }
  for (const ir::Value* v : g.outputs()) value_info(v, *out.add_output());
  if (options.value_info) {
    std::unordered_set<const ir::Value*> outputs(g.outputs().begin(), g.outputs().end());
    for (const auto& n : g.nodes()) {
      for (const ir::Value* o : n->outputs()) {
        if (outputs.count(o) || o->dtype() == ir::DType::Undefined) continue;
        value_info(o, *out.add_value_info());
      }
    }
  }
}

std::map<std::string, int64_t> used_domains(const ir::Model& model) {
  std::map<std::string, int64_t> out;
  collect_domains(*model.graph, out);
  for (const ir::Function& f : model.functions) collect_domains(*f.body, out);
  for (const auto& [d, v] : model.graph->domain_versions()) out[d] = v;
  for (const auto& [d, v] : model.custom_opsets)
    if (!d.empty() && d != "ai.onnx") out[d] = v;
  return out;
}

void to_model_proto(const ir::Model& model, onnx::ModelProto& out, const ProtoOptions& options) {
  out.set_ir_version(model.ir_version);
  out.set_producer_name(model.producer_name);
  out.set_producer_version(model.producer_version);
  if (!model.doc_string.empty()) out.set_doc_string(model.doc_string);
  auto* opset = out.add_opset_import();
  opset->set_domain("");
  opset->set_version(model.opset);
  for (const auto& [domain, version] : used_domains(model)) {
    auto* o = out.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
  }
  for (const auto& [k, v] : model.metadata) {
    auto* m = out.add_metadata_props();
    m->set_key(k);
    m->set_value(v);
  }
  graph_to_proto(*model.graph, *out.mutable_graph(), options);
  const std::map<std::string, int64_t> versions = used_domains(model);
  for (const ir::Function& f : model.functions) {
    onnx::FunctionProto* fp = out.add_functions();
    fp->set_name(f.name);
    fp->set_domain(f.domain);
    for (const ir::Value* v : f.body->inputs()) fp->add_input(v->name());
    for (const ir::Value* v : f.body->outputs()) fp->add_output(v->name());
    ProtoOptions body_options = options;
    body_options.value_info = false;
    body_options.keep_initializers_as_inputs = false;
    onnx::GraphProto body;
    graph_to_proto(*f.body, body, body_options);
    fp->mutable_node()->Swap(body.mutable_node());
    auto* o = fp->add_opset_import();
    o->set_domain("");
    o->set_version(model.opset);
    std::map<std::string, int64_t> inner;
    collect_domains(*f.body, inner);
    for (const auto& [domain, unused] : inner) {
      auto* d = fp->add_opset_import();
      d->set_domain(domain);
      d->set_version(versions.count(domain) ? versions.at(domain) : 1);
    }
  }
}

}  // namespace torch2onnx::serialize
