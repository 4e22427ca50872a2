#include "convert/converter.h"

#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "convert/constant_memo.h"
#include "convert/fallback.h"
#include "convert/quantized_args.h"
#include "frontend/mapped_archive.h"
#include "serialize/infer_node.h"
#include "symbolic/helpers.h"
#include "torch_passes/origin.h"

namespace torch2onnx::convert {
namespace {

using torch::jit::Node;
using torch_side::ExampleInfo;
using torch_side::TorchGraph;
using TValue = torch::jit::Value;

bool is_structural(c10::Symbol k) {
  return k == c10::prim::Constant || k == c10::prim::ListConstruct || k == c10::prim::TupleConstruct ||
         k == c10::prim::ListUnpack || k == c10::prim::TupleUnpack || k == c10::prim::TupleIndex ||
         k == c10::prim::unchecked_cast || k == c10::prim::DictConstruct || k == c10::prim::If ||
         k == c10::prim::Loop || k == c10::prim::Uninitialized;
}

bool is_list_type(const c10::TypePtr& t) { return t->kind() == c10::TypeKind::ListType; }

// List operators the converter handles itself (lists are converter
// plumbing: fixed-length lists stay static, others become ONNX sequences).
bool is_list_op(const Node* n) {
  const auto k = n->kind();
  if (n->inputs().empty() || !is_list_type(n->input(0)->type())) return false;
  return k == c10::aten::append || k == c10::aten::len || k == c10::aten::__getitem__ || k == c10::aten::_set_item ||
         k == c10::aten::list || k == c10::aten::slice || (k == c10::aten::add && n->inputs().size() == 2);
}

// (stack/cat of a sequence is handled by the converter too, but they have
// symbolics for fixed lists, so they are never reported as unsupported.)
// `x is None` / `x is not None` on an Optional the graph did not fold: the
// converter knows on which paths it is None.
bool is_optional_test(const Node* n) {
  return (n->kind() == c10::aten::__is__ || n->kind() == c10::aten::__isnot__) && n->inputs().size() == 2 &&
         n->input(0)->type()->kind() == c10::TypeKind::OptionalType &&
         n->input(1)->type()->kind() == c10::TypeKind::NoneType;
}

bool handled_by_converter(const Node* n) { return is_structural(n->kind()) || is_list_op(n) || is_optional_test(n); }

// The symbolic for `kind` at `opset`; an in-place op ("relu_") falls back to
// its out-of-place form, which functionalization made equivalent.
const SymbolicFn* resolve(const Registry& registry, const std::string& kind, int opset) {
  if (const SymbolicFn* fn = registry.find(kind, opset)) return fn;
  if (kind.size() > 1 && kind.back() == '_' && kind[kind.size() - 2] != '_')
    return registry.find(kind.substr(0, kind.size() - 1), opset);
  return nullptr;
}

std::optional<int> first_opset(const Registry& registry, const std::string& kind) {
  if (auto o = registry.first_opset(kind)) return o;
  if (kind.size() > 1 && kind.back() == '_' && kind[kind.size() - 2] != '_')
    return registry.first_opset(kind.substr(0, kind.size() - 1));
  return std::nullopt;
}

// True when operator_export_type keeps `kind` as a node where it has no conversion.
bool kept_by_mode(const std::string& kind, OperatorExportType mode) {
  if (mode == OperatorExportType::OnnxFallthrough) return true;
  return kind.rfind("aten::", 0) == 0 &&
         (mode == OperatorExportType::OnnxAten || mode == OperatorExportType::OnnxAtenFallback);
}

void collect_unsupported(torch::jit::Block* b, const Registry& registry, int opset, OperatorExportType mode,
                         torch_side::OriginTable& origins, std::map<std::string, UnsupportedOperator>& out) {
  for (Node* n : b->nodes()) {
    for (torch::jit::Block* sub : n->blocks()) collect_unsupported(sub, registry, opset, mode, origins, out);
    if (handled_by_converter(n)) continue;
    const bool marked = n->hasAttribute(torch_side::kUnconvertibleAttr);
    const std::string kind = marked ? n->s(torch_side::kUnconvertibleAttr) : n->kind().toQualString();
    if (!marked && (resolve(registry, kind, opset) || kept_by_mode(kind, mode))) continue;
    auto& u = out[kind];
    u.op = kind;
    ++u.count;
    std::string where = torch_side::describe_origin(*origins.of(n));
    if (std::find(u.locations.begin(), u.locations.end(), where) == u.locations.end()) u.locations.push_back(where);
    auto first = first_opset(registry, kind);
    if (first && *first > opset) u.lowest_opset = *first;
  }
}

ir::DType to_dtype(at::ScalarType st) {
  return st == at::ScalarType::Undefined ? ir::DType::Undefined
                                         : ir::dtype_from_scalar_type(static_cast<int64_t>(st));
}

// Borrows a tensor's memory for the IR (no copy unless it is not contiguous);
// weights mapped from an archive loaded for this export alone can let their
// pages go once read (ir::Tensor::release_pages).
ir::Tensor borrow(const at::Tensor& t_in) {
  at::Tensor t = t_in.detach();
  if (!t.is_contiguous()) t = t.contiguous();
  if (t.device().type() != c10::DeviceType::CPU) t = t.cpu();
  ir::DType dt = to_dtype(t.scalar_type());
  if (dt == ir::DType::Undefined || t.is_quantized())
    throw Error(Error::Kind::Conversion,
                std::string("tensors of type ") + c10::toString(t.scalar_type()) + " cannot be exported to ONNX");
  auto holder = std::make_shared<at::Tensor>(t);
  return ir::Tensor::borrowed(dt, t.sizes().vec(), t.data_ptr(), t.nbytes(),
                              std::shared_ptr<const void>(holder, holder.get()), frontend::page_release(t));
}

// What a PyTorch value became on the ONNX side.
struct Slot {
  // Value: one ONNX value. List: a fixed-length list or tuple (elements).
  // Sequence: a list whose length is only known at run time (an ONNX
  // sequence in `value`).
  enum class Kind { Empty, Constant, Value, List, Sequence };
  Kind kind = Kind::Empty;
  c10::IValue constant;
  ir::Value* value = nullptr;
  std::vector<Slot> elements;
  int64_t id = -1;
  // An Optional that is None on some paths: a bool value, true when `value`
  // holds the tensor (`is None` tests read it); null otherwise.
  ir::Value* present = nullptr;
};

class Converter : public ConstantMemo {
 public:
  Converter(TorchGraph& tg, const Registry& registry, const ExportOptions& options)
      : tg_(tg), registry_(registry), options_(options), origins_(tg.root_class) {}

  ir::Model run() {
    ir::Model model;
    model.opset = options_.opset_version;
    model.ir_version = ir::ir_version_for_opset(model.opset);
    model.custom_opsets = options_.custom_opsets;
    graph_ = model.graph.get();
    graph_->set_name("main_graph");
    make_inputs();
    auto nodes = tg_.graph->nodes();
    const auto total = std::distance(nodes.begin(), nodes.end());
    int64_t done = 0;
    for (Node* n : nodes) {
      convert_node(n);
      if (options_.progress && ++done % 256 == 0) options_.progress("converting", double(done) / double(total));
    }
    graph_->set_current_origin(nullptr);
    make_outputs();
    return model;
  }

 private:
  ir::ValueType input_type(const at::Tensor& t) { return ir::ValueType::tensor(to_dtype(t.scalar_type()), t.sizes().vec()); }

  // dynamic_axes: the named dims of graph input/output `name` (of `rank` dims).
  void apply_dynamic_axes(const std::string& name, ir::ValueType& type, int64_t rank) {
    auto it = options_.dynamic_axes.find(name);
    if (it == options_.dynamic_axes.end()) return;
    used_dynamic_axes_.insert(name);
    if (!type.has_shape) {
      type.has_shape = true;
      type.shape.assign(static_cast<size_t>(rank), ir::Dim{});
    }
    int64_t k = 0;
    for (const DynamicAxis& a : it->second) {
      ++k;
      const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
      if (axis < 0 || axis >= rank)
        throw Error(Error::Kind::Usage, "dynamic_axes: axis " + std::to_string(a.axis) + " of '" + name +
                                            "' is out of range: it has " + std::to_string(rank) + " dimension" +
                                            (rank == 1 ? "" : "s"));
      type.shape[static_cast<size_t>(axis)] =
          ir::Dim::named(a.name.empty() ? name + "_dynamic_axes_" + std::to_string(k) : a.name);
    }
  }

  // Every dynamic_axes entry must name an input or an output.
  void check_dynamic_axes_used() {
    for (const auto& [name, axes] : options_.dynamic_axes) {
      if (used_dynamic_axes_.count(name)) continue;
      std::string inputs, outputs;
      for (const ir::Value* v : graph_->inputs()) inputs += (inputs.empty() ? "" : ", ") + v->name();
      for (const ir::Value* v : graph_->outputs()) outputs += (outputs.empty() ? "" : ", ") + v->name();
      throw Error(Error::Kind::Usage, "dynamic_axes names '" + name + "', which is neither an input nor an output " +
                                          "of the exported model (inputs: " + inputs + "; outputs: " + outputs + ")");
    }
  }

  std::string input_name(size_t flat_index, const std::string& fallback) {
    if (flat_index < options_.input_names.size()) return options_.input_names[flat_index];
    return fallback;
  }

  void make_inputs() {
    size_t used_params = 0;
    for (const auto& p : tg_.params) used_params += p.value->hasUses() ? 1 : 0;
    const size_t total = tg_.user_inputs.size() + used_params;
    if (options_.input_names.size() > total)
      throw Error(Error::Kind::Usage, "input_names has " + std::to_string(options_.input_names.size()) +
                                          " names but the model has " + std::to_string(total) +
                                          " inputs (including parameters)");
    size_t flat = 0;
    for (size_t i = 0; i < tg_.user_inputs.size(); ++i, ++flat) {
      std::string base = tg_.user_input_names[i];
      const std::string name = input_name(flat, base);
      ir::ValueType type = input_type(tg_.example_inputs[i]);
      apply_dynamic_axes(name, type, tg_.example_inputs[i].dim());
      ir::Value* v = graph_->add_input(name, type);
      slot_of(tg_.user_inputs[i]) = Slot{Slot::Kind::Value, {}, v, {}, next_id_++};
    }
    for (const auto& p : tg_.params) {
      if (!p.value->hasUses()) continue;
      std::string name = input_name(flat++, p.name);
      ir::Value* v = nullptr;
      if (options_.export_params) {
        v = graph_->add_initializer(name, borrow(p.tensor));
      } else {
        v = graph_->add_input(name, input_type(p.tensor));
      }
      slot_of(p.value) = Slot{Slot::Kind::Value, {}, v, {}, next_id_++};
    }
  }

  Slot& slot_of(const TValue* v) { return slots_[v]; }

  const Slot& get_slot(const TValue* v) {
    auto it = slots_.find(v);
    if (it == slots_.end() || it->second.kind == Slot::Kind::Empty)
      throw Error(Error::Kind::Internal, "conversion: value %" + v->debugName() + " has no ONNX counterpart");
    return it->second;
  }

  static Arg::Kind kind_of_ivalue(const c10::IValue& iv) {
    if (iv.isNone()) return Arg::Kind::None;
    if (iv.isTensor()) return Arg::Kind::Tensor;
    if (iv.isInt()) return Arg::Kind::Int;
    if (iv.isDouble()) return Arg::Kind::Float;
    if (iv.isBool()) return Arg::Kind::Bool;
    if (iv.isString()) return Arg::Kind::String;
    if (iv.isDevice()) return Arg::Kind::Device;
    if (iv.isList()) return Arg::Kind::List;
    if (iv.isTuple()) return Arg::Kind::Tuple;
    return Arg::Kind::Other;
  }

  static Arg::Kind kind_of_type(const c10::TypePtr& t) {
    switch (t->kind()) {
      case c10::TypeKind::TensorType: return Arg::Kind::Tensor;
      case c10::TypeKind::IntType: return Arg::Kind::Int;
      case c10::TypeKind::FloatType: return Arg::Kind::Float;
      case c10::TypeKind::BoolType: return Arg::Kind::Bool;
      case c10::TypeKind::NumberType: return Arg::Kind::Float;
      case c10::TypeKind::StringType: return Arg::Kind::String;
      case c10::TypeKind::DeviceObjType: return Arg::Kind::Device;
      case c10::TypeKind::ListType: return Arg::Kind::List;
      case c10::TypeKind::TupleType: return Arg::Kind::Tuple;
      case c10::TypeKind::NoneType: return Arg::Kind::None;
      case c10::TypeKind::OptionalType:
        return kind_of_type(t->expectRef<c10::OptionalType>().getElementType());
      default: return Arg::Kind::Other;
    }
  }

  static void apply_example(Arg& a, const ExampleInfo* info) {
    if (!info) return;
    switch (info->kind) {
      case ExampleInfo::Kind::Tensor:
        a.dtype = to_dtype(info->dtype);
        a.has_sizes = info->dtype != at::ScalarType::Undefined;
        a.sizes = info->sizes;
        a.qparams = info->qparams;
        break;
      case ExampleInfo::Kind::Int:
        a.dtype = ir::DType::Int64;
        a.example = static_cast<double>(info->scalar.toInt());
        a.has_sizes = true;
        break;
      case ExampleInfo::Kind::Float:
        a.dtype = ir::DType::Double;
        a.example = info->scalar.toDouble();
        a.has_sizes = true;
        break;
      case ExampleInfo::Kind::Bool:
        a.dtype = ir::DType::Bool;
        a.example = info->scalar.toBool() ? 1.0 : 0.0;
        a.has_sizes = true;
        break;
      default: break;
    }
  }

  Arg arg_from_constant(const c10::IValue& iv, int64_t id) {
    Arg a;
    a.kind = kind_of_ivalue(iv);
    a.constant = true;
    a.id = id;
    switch (a.kind) {
      case Arg::Kind::Int: a.i = iv.toInt(); a.dtype = ir::DType::Int64; a.has_sizes = true; break;
      case Arg::Kind::Float: a.f = iv.toDouble(); a.dtype = ir::DType::Double; a.has_sizes = true; break;
      case Arg::Kind::Bool: a.b = iv.toBool(); a.dtype = ir::DType::Bool; a.has_sizes = true; break;
      case Arg::Kind::String: a.s = iv.toStringRef(); break;
      case Arg::Kind::Device: a.s = iv.toDevice().str(); break;
      case Arg::Kind::Tensor: {
        const at::Tensor& t = iv.toTensor();
        a.tensor = std::make_shared<ir::Tensor>(borrow(t));
        a.dtype = a.tensor->dtype();
        a.has_sizes = true;
        a.sizes = t.sizes().vec();
        break;
      }
      case Arg::Kind::List:
        for (const auto& e : iv.toListRef()) a.elements.push_back(arg_from_constant(e, -1));
        break;
      case Arg::Kind::Tuple:
        for (const auto& e : iv.toTupleRef().elements()) a.elements.push_back(arg_from_constant(e, -1));
        break;
      default: break;
    }
    return a;
  }

  Arg arg_from_slot(const Slot& s, const c10::TypePtr& type, const ExampleInfo* info) {
    if (s.kind == Slot::Kind::Constant) return arg_from_constant(s.constant, s.id);
    Arg a;
    a.id = s.id;
    a.kind = type ? kind_of_type(type) : Arg::Kind::Other;
    if (s.kind == Slot::Kind::Value) {
      a.value = s.value;
      if (a.kind == Arg::Kind::Other || a.kind == Arg::Kind::None) a.kind = Arg::Kind::Tensor;
      apply_example(a, info);
      // A value the example never computed (an Optional the example left
      // None, read in a branch it did not take): the dtype its ONNX value has.
      if (a.dtype == ir::DType::Undefined && a.kind == Arg::Kind::Tensor) a.dtype = s.value->type().dtype;
      return a;
    }
    if (s.kind == Slot::Kind::Sequence) {  // a list of run-time length: value only, no elements
      a.kind = Arg::Kind::List;
      a.value = s.value;
      return a;
    }
    // A list or tuple with fixed elements.
    if (a.kind != Arg::Kind::Tuple) a.kind = Arg::Kind::List;
    c10::TypePtr elem_type;
    if (type && type->kind() == c10::TypeKind::ListType) elem_type = type->expectRef<c10::ListType>().getElementType();
    const auto* tuple_type = type && type->kind() == c10::TypeKind::TupleType ? &type->expectRef<c10::TupleType>() : nullptr;
    for (size_t i = 0; i < s.elements.size(); ++i) {
      const ExampleInfo* ei = info && i < info->elements.size() ? &info->elements[i] : nullptr;
      c10::TypePtr et = tuple_type && i < tuple_type->elements().size() ? tuple_type->elements()[i] : elem_type;
      a.elements.push_back(arg_from_slot(s.elements[i], et, ei));
    }
    a.constant = !a.elements.empty();
    for (const Arg& e : a.elements) a.constant = a.constant && e.constant;
    return a;
  }

  const ExampleInfo* info_of(const TValue* v) const {
    auto it = tg_.info.find(v);
    return it == tg_.info.end() ? nullptr : &it->second;
  }

  Arg make_arg(const TValue* v, const std::string& name) {
    Arg a = arg_from_slot(get_slot(v), v->type(), info_of(v));
    a.name = name;
    a.type_str = v->type()->repr_str();
    return a;
  }

  OutputInfo make_output_info(const TValue* v) {
    OutputInfo o;
    o.kind = kind_of_type(v->type());
    if (const ExampleInfo* info = info_of(v)) {
      if (info->kind == ExampleInfo::Kind::Tensor) {
        o.kind = Arg::Kind::Tensor;
        o.dtype = to_dtype(info->dtype);
        o.has_sizes = info->dtype != at::ScalarType::Undefined;
        o.sizes = info->sizes;
        o.quantized = c10::isQIntType(info->dtype);
        o.qparams = info->qparams;
      } else if (info->kind == ExampleInfo::Kind::Int) {
        o.dtype = ir::DType::Int64;
        o.has_sizes = true;
      } else if (info->kind == ExampleInfo::Kind::Float) {
        o.dtype = ir::DType::Double;
        o.has_sizes = true;
      } else if (info->kind == ExampleInfo::Kind::Bool) {
        o.dtype = ir::DType::Bool;
        o.has_sizes = true;
      } else if (info->kind == ExampleInfo::Kind::List || info->kind == ExampleInfo::Kind::Tuple) {
        o.list_length = static_cast<int64_t>(info->elements.size());
        if (!info->elements.empty() && info->elements[0].kind == ExampleInfo::Kind::Tensor) {
          o.dtype = to_dtype(info->elements[0].dtype);
          o.quantized = c10::isQIntType(info->elements[0].dtype);  // (chunk, split of a quantized tensor)
          o.qparams = info->elements[0].qparams;
        }
      }
    }
    return o;
  }

  // A quantized tensor constant (a quantized model's weights): its integers,
  // carrying their scale and zero point. Named ones (decompose_quantized
  // names weights after their module: "conv.weight") become initializers of
  // that name, with "<name>_scale" and "<name>_zero_point".
  ir::Value* quantized_constant(const at::Tensor& t, const std::string& name) {
    SymbolicContext ctx("quantized constant", {}, {}, graph_, options_.opset_version, this);
    const bool named = !name.empty() && !graph_->parent();
    auto make = [&](ir::Tensor data, const std::string& suffix) {
      return named ? graph_->add_initializer(name + suffix, std::move(data))
                   : ctx.constant(std::move(data));
    };
    const at::Tensor ints = t.int_repr();
    ir::Value* v = make(borrow(ints), "");
    ir::Quantization q;
    if (t.qscheme() == at::kPerTensorAffine) {
      q.scale = make(ir::Tensor::scalar(ir::DType::Float, static_cast<float>(t.q_scale())), "_scale");
      q.zero_point = make(borrow(at::scalar_tensor(t.q_zero_point(), ints.scalar_type())), "_zero_point");
    } else if (t.qscheme() == at::kPerChannelAffine) {
      q.scale = make(borrow(t.q_per_channel_scales().to(at::kFloat)), "_scale");
      q.zero_point = make(borrow(t.q_per_channel_zero_points().to(ints.scalar_type())), "_zero_point");
      q.axis = t.q_per_channel_axis();
    } else {
      throw Error(Error::Kind::Conversion, std::string("quantized tensors with scheme ") +
                                               c10::toString(t.qscheme()) + " have no ONNX form");
    }
    v->set_quantization(q);
    return v;
  }

  void convert_structural(Node* n) {
    const auto k = n->kind();
    if (k == c10::prim::Constant) {
      auto iv = torch::jit::toIValue(n->output());
      if (iv && iv->isTensor() && iv->toTensor().is_quantized()) {
        const std::string name = n->output()->hasDebugName() ? n->output()->debugName() : std::string();
        slot_of(n->output()) = Slot{Slot::Kind::Value, {}, quantized_constant(iv->toTensor(), name), {}, next_id_++};
        return;
      }
      slot_of(n->output()) = Slot{Slot::Kind::Constant, iv ? *iv : c10::IValue(), nullptr, {}, next_id_++};
    } else if (k == c10::prim::ListConstruct || k == c10::prim::TupleConstruct) {
      Slot s{Slot::Kind::List, {}, nullptr, {}, next_id_++};
      for (TValue* in : n->inputs()) s.elements.push_back(get_slot(in));
      slot_of(n->output()) = std::move(s);
    } else if (k == c10::prim::DictConstruct) {
      // Keys are dropped: a dict output becomes its values, in order.
      Slot s{Slot::Kind::List, {}, nullptr, {}, next_id_++};
      for (size_t i = 1; i < n->inputs().size(); i += 2) s.elements.push_back(get_slot(n->input(i)));
      slot_of(n->output()) = std::move(s);
    } else if (k == c10::prim::ListUnpack || k == c10::prim::TupleUnpack) {
      Slot s = get_slot(n->input());
      std::vector<Slot> elems = unpack(s, n->outputs().size(), n);
      for (size_t i = 0; i < elems.size(); ++i) slot_of(n->output(i)) = elems[i];
    } else if (k == c10::prim::TupleIndex) {
      Slot s = get_slot(n->input(0));
      const Slot& idx = get_slot(n->input(1));
      if (idx.kind != Slot::Kind::Constant) throw Error(Error::Kind::Conversion, "tuple index must be a constant");
      auto elems = unpack(s, 0, n);
      int64_t i = idx.constant.toInt();
      if (i < 0) i += static_cast<int64_t>(elems.size());
      slot_of(n->output()) = elems.at(static_cast<size_t>(i));
    } else if (k == c10::prim::unchecked_cast) {
      slot_of(n->output()) = get_slot(n->input());
    } else if (k == c10::prim::Uninitialized) {  // read on no path: None until a branch or loop sets it
      slot_of(n->output()) = Slot{Slot::Kind::Constant, c10::IValue(), nullptr, {}, next_id_++};
    }
  }

  std::vector<Slot> unpack(const Slot& s, size_t expected, Node* n) {
    std::vector<Slot> out;
    if (s.kind == Slot::Kind::List) {
      out = s.elements;
    } else if (s.kind == Slot::Kind::Constant && (s.constant.isList() || s.constant.isTuple())) {
      std::vector<c10::IValue> items = s.constant.isList() ? s.constant.toListRef().vec()
                                                          : s.constant.toTupleRef().elements().vec();
      for (auto& iv : items) out.push_back(Slot{Slot::Kind::Constant, iv, nullptr, {}, next_id_++});
    } else {
      throw Error(Error::Kind::Conversion, std::string(n->kind().toQualString()) + " in " +
                                               torch_side::describe_origin(*origins_.of(n)) +
                                               ": unpacking a list whose length is only known at run time");
    }
    if (expected && out.size() != expected)
      throw Error(Error::Kind::Internal, "unpacking " + std::to_string(out.size()) + " elements into " +
                                             std::to_string(expected) + " values");
    return out;
  }

  // Makes `g` the graph new nodes go to, for the scope's lifetime.
  class GraphScope {
   public:
    GraphScope(Converter& c, ir::Graph* g) : c_(c), saved_(c.graph_) { c_.graph_ = g; }
    ~GraphScope() { c_.graph_ = saved_; }

   private:
    Converter& c_;
    ir::Graph* saved_;
  };

  ir::DType example_dtype(const TValue* v) {
    const ExampleInfo* info = info_of(v);
    if (!info) return ir::DType::Undefined;
    switch (info->kind) {
      case ExampleInfo::Kind::Tensor: return to_dtype(info->dtype);
      case ExampleInfo::Kind::Int: return ir::DType::Int64;
      case ExampleInfo::Kind::Float: return ir::DType::Double;
      case ExampleInfo::Kind::Bool: return ir::DType::Bool;
      default: return ir::DType::Undefined;
    }
  }

  // A PyTorch value as one ONNX value of the current graph (constants
  // materialized there), cast to `dtype` when given.
  ir::Value* single_value(const TValue* v, ir::DType dtype, const char* what) {
    const Slot& s = get_slot(v);
    if (s.kind == Slot::Kind::List)
      throw Error(Error::Kind::Conversion, std::string(what) + " is a list; lists cannot cross control flow here");
    Arg a = arg_from_slot(s, v->type(), info_of(v));
    if (a.kind == Arg::Kind::None) throw Error(Error::Kind::Conversion, std::string(what) + " is None");
    SymbolicContext ctx("control flow", {a}, {}, graph_, options_.opset_version, this);
    return ctx.in_as(0, dtype);
  }

  // The dtype and rank a control-flow value has where it holds a tensor:
  // from the example run of any of `vs` (the If/Loop output, the branch or
  // body values that set it).
  std::pair<ir::DType, int64_t> tensor_type_of(std::initializer_list<const TValue*> vs) {
    for (const TValue* v : vs) {
      const ExampleInfo* info = v ? info_of(v) : nullptr;
      if (info && info->kind == ExampleInfo::Kind::Tensor)
        return {to_dtype(info->dtype), static_cast<int64_t>(info->sizes.size())};
    }
    return {ir::DType::Undefined, -1};
  }

  bool is_none_slot(const TValue* v) {
    const Slot& s = get_slot(v);
    return s.kind == Slot::Kind::Constant && s.constant.isNone();
  }

  // `v` as one value; where it is None (an Optional on this path, or a value
  // not set yet), an empty tensor of `type` stands in: never read, it only
  // gives If/Loop outputs one type on every path.
  ir::Value* value_or_placeholder(const TValue* v, std::pair<ir::DType, int64_t> type, const char* what) {
    if (!is_none_slot(v) || type.first == ir::DType::Undefined) return single_value(v, type.first, what);
    // (empty: of the rank where known, one-dimensional where not; a 0-d one holds a zero)
    std::vector<int64_t> dims(static_cast<size_t>(type.second < 0 ? 1 : type.second), 0);
    std::vector<double> values(dims.empty() ? 1 : 0, 0.0);
    ir::Value* p =
        graph_->create_node("Constant", {}, 1, {{"value", ir::Tensor::from_doubles(type.first, values, dims)}})->output(0);
    p->type().dtype = type.first;
    return p;
  }

  ir::Value* const_bool(bool b) {
    ir::Value* v =
        graph_->create_node("Constant", {}, 1, {{"value", ir::Tensor::scalar_int(ir::DType::Bool, b ? 1 : 0)}})->output(0);
    v->set_type(ir::ValueType::tensor(ir::DType::Bool, {}));
    return v;
  }

  // `x is None` / `x is not None` on an Optional that an If left None on some path.
  // Elsewhere an Optional is None on every path (a None slot) or on none (a value).
  bool convert_optional_test(Node* n) {
    if (!is_optional_test(n)) return false;
    const Slot& a = get_slot(n->input(0));
    const bool is = n->kind() == c10::aten::__is__;
    if (!a.present) {
      const bool none = is_none_slot(n->input(0));
      slot_of(n->output()) = Slot{Slot::Kind::Constant, c10::IValue(is == none), nullptr, {}, next_id_++};
      return true;
    }
    graph_->set_current_origin(origins_.of(n));
    ir::Value* out = a.present;
    if (is) {
      out = graph_->create_node("Not", {a.present}, 1)->output(0);
      out->set_type(ir::ValueType::tensor(ir::DType::Bool, {}));
    }
    slot_of(n->output()) = value_slot(out);
    return true;
  }

  // A subgraph output produced inside the subgraph (ONNX Runtime rejects
  // outer values returned directly): an Identity. Identity takes sequences
  // only from opset 14; before that, inserting an element at position 0 and
  // erasing it again is the identity.
  ir::Value* local(ir::Value* v, ir::Graph* g) {
    if (v->producer() && v->graph() == g) return v;
    if (v->type().kind == ir::ValueType::Kind::Sequence && options_.opset_version < 14) {
      ir::DType dt = v->type().dtype == ir::DType::Undefined ? ir::DType::Float : v->type().dtype;
      ir::Value* dummy = g->create_node("Constant", {}, 1, {{"value", ir::Tensor::scalar_int(dt, 0)}})->output(0);
      ir::Value* zero = g->create_node("Constant", {}, 1, {{"value", ir::Tensor::scalar_int(ir::DType::Int64, 0)}})->output(0);
      ir::Value* with = g->create_node("SequenceInsert", {v, dummy, zero}, 1)->output(0);
      ir::Value* back = g->create_node("SequenceErase", {with, zero}, 1)->output(0);
      back->set_type(v->type());
      return back;
    }
    ir::Value* id = g->create_node("Identity", {v}, 1)->output(0);
    id->set_type(v->type());
    return id;
  }

  std::shared_ptr<ir::Graph> branch(torch::jit::Block* b, const char* name) {
    auto g = std::make_shared<ir::Graph>(graph_);
    g->set_name(graph_->unique_name(name));
    GraphScope scope(*this, g.get());
    for (Node* inner : b->nodes()) convert_node(inner);
    return g;
  }

  // Once both branches are converted (a None on one path takes its type from the other).
  void branch_outputs(ir::Graph* g, torch::jit::Block* b, Node* n) {
    GraphScope scope(*this, g);
    for (size_t i = 0; i < b->outputs().size(); ++i) {
      if (is_list_type(n->output(i)->type())) {
        require_sequences(n, 13, "out of a branch needs If with sequences");
        ir::DType dt = list_dtype({n->output(i), b->outputs()[i]});
        g->add_output(local(to_sequence(get_slot(b->outputs()[i]), dt, b->outputs()[i], n), g));
        continue;
      }
      g->add_output(local(value_or_placeholder(b->outputs()[i], if_output_type(n, i), "an If output"), g));
    }
  }

  // ---- lists

  // The element dtype of a list, from what the example run saw of any of `vs`.
  ir::DType list_dtype(std::initializer_list<const TValue*> vs) {
    for (const TValue* v : vs) {
      const ExampleInfo* info = v ? info_of(v) : nullptr;
      if (!info) continue;
      for (const auto& e : info->elements) {
        if (e.kind == ExampleInfo::Kind::Tensor && e.dtype != at::ScalarType::Undefined) return to_dtype(e.dtype);
        if (e.kind == ExampleInfo::Kind::Int) return ir::DType::Int64;
        if (e.kind == ExampleInfo::Kind::Float) return ir::DType::Double;
        if (e.kind == ExampleInfo::Kind::Bool) return ir::DType::Bool;
      }
    }
    return ir::DType::Float;
  }

  void require_sequences(const Node* n, int opset = 11, const char* why = "needs ONNX sequences") {
    if (options_.opset_version < opset)
      throw Error(Error::Kind::Conversion,
                  std::string(n->kind().toQualString()) + " in " + torch_side::describe_origin(*origins_.of(n)) +
                      ": a list whose length is only known at run time " + why + " (opset " + std::to_string(opset) +
                      " or later)");
  }

  // A list slot as an ONNX sequence value in the current graph.
  ir::Value* to_sequence(const Slot& s, ir::DType dt, const TValue* v, const Node* n) {
    if (s.kind == Slot::Kind::Sequence) return s.value;
    require_sequences(n);
    std::vector<Slot> elems = s.kind == Slot::Kind::List ? s.elements : unpack(s, 0, const_cast<Node*>(n));
    std::vector<ir::Value*> values;
    for (const Slot& e : elems) values.push_back(element_value(e, dt));
    ir::Value* seq = values.empty()
                         ? graph_->create_node("SequenceEmpty", {}, 1, {{"dtype", static_cast<int64_t>(dt)}})->output(0)
                         : graph_->create_node("SequenceConstruct", values, 1)->output(0);
    seq->set_type(ir::ValueType::sequence(dt));
    (void)v;
    return seq;
  }

  // One element of a list (a tensor, or a number as a 0-d tensor) as a value.
  ir::Value* element_value(const Slot& e, ir::DType dt) {
    if (e.kind == Slot::Kind::Value) return dt == ir::DType::Undefined ? e.value : cast_value(e.value, dt);
    if (e.kind == Slot::Kind::Constant) {
      SymbolicContext ctx("list element", {arg_from_constant(e.constant, e.id)}, {}, graph_, options_.opset_version,
                          this);
      return ctx.in_as(0, dt);
    }
    throw Error(Error::Kind::Conversion, "lists of lists cannot be exported");
  }

  ir::Value* cast_value(ir::Value* v, ir::DType dt) {
    SymbolicContext ctx("cast", {}, {}, graph_, options_.opset_version, this);
    return ctx.cast(v, dt);
  }

  Slot value_slot(ir::Value* v) { return Slot{Slot::Kind::Value, {}, v, {}, next_id_++}; }
  Slot sequence_slot(ir::Value* v) { return Slot{Slot::Kind::Sequence, {}, v, {}, next_id_++}; }

  ir::Value* int_value(const TValue* v) { return single_value(v, ir::DType::Int64, "a list index"); }

  // elems[start:end:step] with Python's rules for omitted and negative bounds.
  std::vector<Slot> python_slice(const std::vector<Slot>& elems, std::optional<int64_t> start,
                                 std::optional<int64_t> end, int64_t step, Node* n) {
    if (step == 0)
      throw Error(Error::Kind::Conversion, "list slice step cannot be zero (in " +
                                               torch_side::describe_origin(*origins_.of(n)) + ")");
    const int64_t len = static_cast<int64_t>(elems.size());
    auto clamp = [&](std::optional<int64_t> b, int64_t dflt) {
      if (!b) return dflt;
      int64_t v = *b < 0 ? *b + len : *b;
      return step > 0 ? std::clamp<int64_t>(v, 0, len) : std::clamp<int64_t>(v, -1, len - 1);
    };
    const int64_t from = clamp(start, step > 0 ? 0 : len - 1), to = clamp(end, step > 0 ? len : -1);
    std::vector<Slot> out;
    for (int64_t i = from; step > 0 ? i < to : i > to; i += step) out.push_back(elems[static_cast<size_t>(i)]);
    return out;
  }

  void convert_list_op(Node* n) {
    graph_->set_current_origin(origins_.of(n));
    const auto k = n->kind();
    Slot list = get_slot(n->input(0));
    const bool fixed = list.kind == Slot::Kind::List ||
                       (list.kind == Slot::Kind::Constant && (list.constant.isList() || list.constant.isTuple()));
    std::vector<Slot> elems = fixed ? unpack(list, 0, n) : std::vector<Slot>{};
    const ir::DType dt = list_dtype({n->input(0), n->outputs().empty() ? nullptr : n->output()});
    auto const_index = [&](size_t i) -> std::optional<int64_t> {
      const Slot& s = get_slot(n->input(i));
      if (s.kind == Slot::Kind::Constant && s.constant.isInt()) return s.constant.toInt();
      return std::nullopt;
    };
    if (k == c10::aten::list) {
      slot_of(n->output()) = list;
    } else if (k == c10::aten::add) {  // list + list
      Slot other = get_slot(n->input(1));
      const bool other_fixed = other.kind == Slot::Kind::List ||
                               (other.kind == Slot::Kind::Constant && (other.constant.isList() || other.constant.isTuple()));
      if (!other_fixed)
        throw Error(Error::Kind::Conversion, "concatenating a list of run-time length (in " +
                                                 torch_side::describe_origin(*origins_.of(n)) + ") cannot be exported");
      std::vector<Slot> tail = unpack(other, 0, n);
      if (fixed) {
        elems.insert(elems.end(), tail.begin(), tail.end());
        slot_of(n->output()) = Slot{Slot::Kind::List, {}, nullptr, elems, next_id_++};
      } else {
        ir::Value* seq = to_sequence(list, dt, n->input(0), n);
        for (const Slot& e : tail) {
          seq = graph_->create_node("SequenceInsert", {seq, element_value(e, dt)}, 1)->output(0);
          seq->set_type(ir::ValueType::sequence(dt));
        }
        slot_of(n->output()) = sequence_slot(seq);
      }
    } else if (k == c10::aten::append) {
      if (fixed) {
        elems.push_back(get_slot(n->input(1)));
        slot_of(n->output()) = Slot{Slot::Kind::List, {}, nullptr, elems, next_id_++};
      } else {
        ir::Value* seq = graph_->create_node("SequenceInsert", {list.value, element_value(get_slot(n->input(1)), dt)},
                                             1)->output(0);
        seq->set_type(ir::ValueType::sequence(dt));
        slot_of(n->output()) = sequence_slot(seq);
      }
    } else if (k == c10::aten::len) {
      if (fixed) {
        slot_of(n->output()) = Slot{Slot::Kind::Constant, c10::IValue(static_cast<int64_t>(elems.size())), nullptr, {},
                                    next_id_++};
      } else {
        ir::Value* len = graph_->create_node("SequenceLength", {list.value}, 1)->output(0);
        len->set_type(ir::ValueType::tensor(ir::DType::Int64, {}));
        slot_of(n->output()) = value_slot(len);
      }
    } else if (k == c10::aten::__getitem__) {
      auto idx = const_index(1);
      if (fixed && idx) {
        int64_t i = *idx < 0 ? *idx + static_cast<int64_t>(elems.size()) : *idx;
        if (i < 0 || i >= static_cast<int64_t>(elems.size()))
          throw Error(Error::Kind::Conversion, "list index out of range in " +
                                                   torch_side::describe_origin(*origins_.of(n)));
        slot_of(n->output()) = elems[static_cast<size_t>(i)];
      } else {
        ir::Value* seq = to_sequence(list, dt, n->input(0), n);
        ir::Value* item = graph_->create_node("SequenceAt", {seq, int_value(n->input(1))}, 1)->output(0);
        item->type().dtype = dt;
        slot_of(n->output()) = value_slot(item);
      }
    } else if (k == c10::aten::slice) {  // l[start:end:step]
      if (!fixed)
        throw Error(Error::Kind::Conversion, "slicing a list of run-time length (in " +
                                                 torch_side::describe_origin(*origins_.of(n)) + ") cannot be exported");
      auto bound = [&](size_t i) -> std::optional<int64_t> {
        const Slot& s = get_slot(n->input(i));
        if (s.kind == Slot::Kind::Constant && s.constant.isNone()) return std::nullopt;
        if (auto v = const_index(i)) return v;
        throw Error(Error::Kind::Conversion, "a list slice bound computed at run time (in " +
                                                 torch_side::describe_origin(*origins_.of(n)) + ") cannot be exported");
      };
      slot_of(n->output()) = Slot{Slot::Kind::List, {}, nullptr,
                                  python_slice(elems, bound(1), bound(2), bound(3).value_or(1), n), next_id_++};
    } else if (k == c10::aten::_set_item) {
      auto idx = const_index(1);
      if (fixed && idx) {
        int64_t i = *idx < 0 ? *idx + static_cast<int64_t>(elems.size()) : *idx;
        elems.at(static_cast<size_t>(i)) = get_slot(n->input(2));
        slot_of(n->output()) = Slot{Slot::Kind::List, {}, nullptr, elems, next_id_++};
      } else {
        // erase then insert at the same (non-negative) position
        ir::Value* seq = to_sequence(list, dt, n->input(0), n);
        ir::Value* pos = int_value(n->input(1));
        ir::Value* len = graph_->create_node("SequenceLength", {seq}, 1)->output(0);
        ir::Value* zero = cast_value(graph_->create_node("Constant", {}, 1, {{"value", ir::Tensor::scalar_int(ir::DType::Int64, 0)}})->output(0), ir::DType::Int64);
        ir::Value* neg = graph_->create_node("Less", {pos, zero}, 1)->output(0);
        ir::Value* wrapped = graph_->create_node("Add", {pos, len}, 1)->output(0);
        pos = graph_->create_node("Where", {neg, wrapped, pos}, 1)->output(0);
        ir::Value* erased = graph_->create_node("SequenceErase", {seq, pos}, 1)->output(0);
        ir::Value* out = graph_->create_node("SequenceInsert", {erased, element_value(get_slot(n->input(2)), dt), pos}, 1)
                             ->output(0);
        out->set_type(ir::ValueType::sequence(dt));
        slot_of(n->output()) = sequence_slot(out);
      }
    }
  }

  // stack/cat of a list whose length is only known at run time.
  void convert_sequence_concat(Node* n) {
    graph_->set_current_origin(origins_.of(n));
    const Slot& list = get_slot(n->input(0));
    const Slot& dim = get_slot(n->input(1));
    if (dim.kind != Slot::Kind::Constant) throw Error(Error::Kind::Conversion, "stack/cat needs a constant dim");
    const int64_t new_axis = n->kind() == c10::aten::stack ? 1 : 0;
    ir::Value* out = graph_->create_node("ConcatFromSequence", {list.value}, 1,
                                         {{"axis", dim.constant.toInt()}, {"new_axis", new_axis}})->output(0);
    out->type().dtype = example_dtype(n->output());
    slot_of(n->output()) = value_slot(out);
  }

  // prim::If(cond) with two blocks -> ONNX If with then/else subgraphs.
  void convert_if(Node* n) {
    const Slot& cs = get_slot(n->input());
    if (cs.kind == Slot::Kind::Constant) {  // a branch known at export time
      torch::jit::Block* b = n->blocks()[cs.constant.toBool() ? 0 : 1];
      for (Node* inner : b->nodes()) convert_node(inner);
      for (size_t i = 0; i < n->outputs().size(); ++i) slot_of(n->output(i)) = get_slot(b->outputs()[i]);
      return;
    }
    ir::Value* cond = single_value(n->input(), ir::DType::Bool, "an If condition");
    auto then_g = branch(n->blocks()[0], "then_branch");
    auto else_g = branch(n->blocks()[1], "else_branch");
    branch_outputs(then_g.get(), n->blocks()[0], n);
    branch_outputs(else_g.get(), n->blocks()[1], n);
    // An Optional output that a branch leaves None gets a bool output after
    // the others: whether it holds a value.
    std::vector<size_t> flagged;
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      if (n->output(i)->type()->kind() != c10::TypeKind::OptionalType || is_list_type(n->output(i)->type())) continue;
      const TValue* outs[2] = {n->blocks()[0]->outputs()[i], n->blocks()[1]->outputs()[i]};
      const bool varies = is_none_slot(outs[0]) != is_none_slot(outs[1]) || get_slot(outs[0]).present ||
                          get_slot(outs[1]).present;
      if (!varies) continue;
      for (size_t b = 0; b < 2; ++b) {
        ir::Graph* g = b == 0 ? then_g.get() : else_g.get();
        GraphScope scope(*this, g);
        g->add_output(local(presence(outs[b]), g));
      }
      flagged.push_back(i);
    }
    graph_->set_current_origin(origins_.of(n));
    ir::Node* node = graph_->create_node("If", {cond}, n->outputs().size() + flagged.size(),
                                         {{"else_branch", else_g}, {"then_branch", then_g}});
    for (size_t f = 0; f < flagged.size(); ++f)
      node->output(n->outputs().size() + f)->set_type(ir::ValueType::tensor(ir::DType::Bool, {}));
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      if (is_list_type(n->output(i)->type())) {
        node->output(i)->set_type(ir::ValueType::sequence(list_dtype({n->output(i)})));
        slot_of(n->output(i)) = sequence_slot(node->output(i));
        continue;
      }
      node->output(i)->type().dtype = if_output_type(n, i).first;
      slot_of(n->output(i)) = Slot{Slot::Kind::Value, {}, node->output(i), {}, next_id_++};
    }
    for (size_t f = 0; f < flagged.size(); ++f) {
      slot_of(n->output(flagged[f])).present = node->output(n->outputs().size() + f);
      with_rank(node->output(flagged[f]), if_output_type(n, flagged[f]).second);
    }
  }

  // An Optional's rank where the example (or the converted value) shows it:
  // the element type of an optional graph output.
  static void with_rank(ir::Value* v, int64_t rank) {
    if (rank < 0 || v->type().has_shape) return;
    v->type().has_shape = true;
    v->type().shape.assign(static_cast<size_t>(rank), ir::Dim{});
  }

  // The type of If output i: a tensor's from either branch where the example
  // left it None; otherwise the example's (numbers too).
  std::pair<ir::DType, int64_t> if_output_type(Node* n, size_t i) {
    auto type = tensor_type_of({n->output(i), n->blocks()[0]->outputs()[i], n->blocks()[1]->outputs()[i]});
    if (type.first == ir::DType::Undefined) type.first = example_dtype(n->output(i));
    for (size_t b = 0; b < 2 && type.first == ir::DType::Undefined; ++b)  // computed on no path of the example
      if (const Slot& s = get_slot(n->blocks()[b]->outputs()[i]); s.kind == Slot::Kind::Value && s.value)
        type = {s.value->type().dtype, s.value->type().rank()};
    return type;
  }

  // The tensor type of loop-carried value k (its dtype is the one it ends with).
  std::pair<ir::DType, int64_t> carried_type(Node* n, size_t k) {
    auto type = tensor_type_of({n->output(k), n->blocks()[0]->outputs()[1 + k], n->input(2 + k)});
    ir::DType dt = example_dtype(n->output(k));
    if (dt != ir::DType::Undefined) type.first = dt;
    return type;
  }

  // prim::Loop(max_trip_count, cond, carried...) with body (i, carried...) ->
  // (cond, carried...)  ->  ONNX Loop(M, cond, carried...) with the same body.
  void convert_loop(Node* n) {
    torch::jit::Block* body_block = n->blocks()[0];
    const size_t carried = n->inputs().size() - 2;
    ir::Value* trips = single_value(n->input(0), ir::DType::Int64, "a loop trip count");
    ir::Value* cond = single_value(n->input(1), ir::DType::Bool, "a loop condition");
    std::vector<ir::Value*> inits;
    std::vector<ir::DType> types;
    std::vector<bool> is_list(carried);
    for (size_t k = 0; k < carried; ++k) {
      is_list[k] = is_list_type(n->input(2 + k)->type());
      if (is_list[k]) {  // a list growing in the loop: an ONNX sequence
        require_sequences(n, 13, "carried through a loop needs Loop with sequences");
        ir::DType dt = list_dtype({n->output(k), body_block->inputs()[1 + k], body_block->outputs()[1 + k], n->input(2 + k)});
        types.push_back(dt);
        inits.push_back(to_sequence(get_slot(n->input(2 + k)), dt, n->input(2 + k), n));
        continue;
      }
      // One dtype per loop-carried value: the one it ends with in the example.
      ir::DType dt = example_dtype(n->output(k));
      if (dt == ir::DType::Undefined) dt = example_dtype(n->input(2 + k));
      if (dt == ir::DType::Undefined) dt = carried_type(n, k).first;  // None in the example: the body's tensor
      types.push_back(dt);
      // (a value a loop sets before it is read, e.g. the result of an early return, starts as a placeholder)
      inits.push_back(value_or_placeholder(n->input(2 + k), carried_type(n, k), "a loop-carried value"));
    }
    // An Optional carried value also carries whether it holds a value (after the others).
    std::vector<size_t> flagged;
    for (size_t k = 0; k < carried; ++k)
      if (!is_list[k] && n->output(k)->type()->kind() == c10::TypeKind::OptionalType) flagged.push_back(k);
    for (size_t k : flagged) inits.push_back(presence(n->input(2 + k)));
    auto body = std::make_shared<ir::Graph>(graph_);
    body->set_name(graph_->unique_name("loop_body"));
    std::vector<int64_t> unseen_rank(carried, -1);
    {
      GraphScope scope(*this, body.get());
      ir::Value* iter = body->add_input(body->unique_name("iteration"), ir::ValueType::tensor(ir::DType::Int64, {}));
      body->add_input(body->unique_name("condition"), ir::ValueType::tensor(ir::DType::Bool, {}));
      slot_of(body_block->inputs()[0]) = Slot{Slot::Kind::Value, {}, iter, {}, next_id_++};
      for (size_t k = 0; k < carried; ++k) {
        ir::Value* in = body->add_input(body->unique_name(body_block->inputs()[1 + k]->debugName()),
                                        is_list[k] ? ir::ValueType::sequence(types[k]) : ir::ValueType::tensor(types[k]));
        // A loop the example never ran: the carried value's rank is its initial value's.
        if (!is_list[k] && !info_of(body_block->inputs()[1 + k]) && !is_none_slot(n->input(2 + k)) &&
            serialize::infer_value_type(inits[k], options_.opset_version)) {
          with_rank(in, inits[k]->type().rank());
          unseen_rank[k] = inits[k]->type().rank();
        }
        slot_of(body_block->inputs()[1 + k]) = is_list[k] ? sequence_slot(in) : value_slot(in);
      }
      for (size_t k : flagged)
        slot_of(body_block->inputs()[1 + k]).present =
            body->add_input(body->unique_name("present"), ir::ValueType::tensor(ir::DType::Bool, {}));
      for (Node* inner : body_block->nodes()) convert_node(inner);
      body->add_output(local(single_value(body_block->outputs()[0], ir::DType::Bool, "a loop condition"), body.get()));
      for (size_t k = 0; k < carried; ++k) {
        const TValue* out = body_block->outputs()[1 + k];
        ir::Value* v = is_list[k] ? to_sequence(get_slot(out), types[k], out, n)
                                  : value_or_placeholder(out, carried_type(n, k), "a loop-carried value");
        body->add_output(local(v, body.get()));
      }
      for (size_t k : flagged) body->add_output(local(presence(body_block->outputs()[1 + k]), body.get()));
    }
    graph_->set_current_origin(origins_.of(n));
    std::vector<ir::Value*> ins{trips, cond};
    ins.insert(ins.end(), inits.begin(), inits.end());
    ir::Node* node = graph_->create_node("Loop", ins, carried + flagged.size(), {{"body", body}});
    for (size_t f = 0; f < flagged.size(); ++f) node->output(carried + f)->set_type(ir::ValueType::tensor(ir::DType::Bool, {}));
    for (size_t k = 0; k < carried; ++k) {
      if (is_list[k]) {
        node->output(k)->set_type(ir::ValueType::sequence(types[k]));
        slot_of(n->output(k)) = sequence_slot(node->output(k));
      } else {
        node->output(k)->type().dtype = types[k];
        with_rank(node->output(k), unseen_rank[k]);
        slot_of(n->output(k)) = value_slot(node->output(k));
      }
    }
    for (size_t f = 0; f < flagged.size(); ++f) {
      slot_of(n->output(flagged[f])).present = node->output(carried + f);
      with_rank(node->output(flagged[f]), carried_type(n, flagged[f]).second);
    }
  }

  // prim::dtype of a tensor the example never computed (in a branch it did
  // not take): the dtype of its ONNX value, known at export time as the
  // example's would be (`x[mask] = True` makes a tensor of x's dtype).
  bool convert_unseen_dtype(Node* n) {
    if (n->kind() != c10::prim::dtype || info_of(n->input(0))) return false;
    const Slot& s = get_slot(n->input(0));
    if (s.kind != Slot::Kind::Value || !s.value || s.value->quantization() ||
        s.value->type().dtype == ir::DType::Undefined)
      return false;
    const int64_t code = ir::scalar_type_from_dtype(s.value->type().dtype);
    slot_of(n->output()) = Slot{Slot::Kind::Constant, c10::IValue(code), nullptr, {}, next_id_++};
    return true;
  }

  // Whether the Optional `v` holds a value, as a bool value of the current graph.
  ir::Value* presence(const TValue* v) {
    const Slot& s = get_slot(v);
    return s.present ? s.present : const_bool(!is_none_slot(v));
  }

  void convert_node(Node* n) {
    if (n->kind() == c10::prim::If) {
      convert_if(n);
      return;
    }
    if (n->kind() == c10::prim::Loop) {
      convert_loop(n);
      return;
    }
    if ((n->kind() == c10::aten::stack || n->kind() == c10::aten::cat) && n->inputs().size() == 2 &&
        get_slot(n->input(0)).kind == Slot::Kind::Sequence) {
      convert_sequence_concat(n);
      return;
    }
    if (is_list_op(n)) {
      convert_list_op(n);
      return;
    }
    if (convert_optional_test(n) || convert_unseen_dtype(n)) return;
    if (is_structural(n->kind())) {
      convert_structural(n);
      return;
    }
    const std::string kind = n->kind().toQualString();
    auto origin = origins_.of(n);
    const SymbolicFn* fn = resolve(registry_, kind, options_.opset_version);

    std::vector<Arg> args;
    args.reserve(n->inputs().size());
    const c10::FunctionSchema* schema = n->maybeSchema();
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      std::string name = schema && i < schema->arguments().size() ? schema->arguments()[i].name() : std::string();
      args.push_back(make_arg(n->input(i), name));
    }
    std::vector<OutputInfo> outs;
    for (const TValue* o : n->outputs()) outs.push_back(make_output_info(o));
    SymbolicFn fallback = fallback_for(n, kind, fn != nullptr, args, outs);
    if (fallback) fn = &fallback;
    if (!fn) throw Error(Error::Kind::Internal, "no symbolic for " + kind + " (should have been reported earlier)");

    graph_->set_current_origin(origin);
    std::optional<QuantizedCall> quantized;
    if (!fallback) quantized.emplace(kind, args, outs, graph_, options_.opset_version);
    if (quantized && !quantized->active()) quantized.reset();
    SymbolicContext ctx(kind, std::move(args), std::move(outs), graph_, options_.opset_version, this);
    ctx.set_source_node(n);
    try {
      (*fn)(ctx);
    } catch (const SymbolicError& e) {
      throw Error(Error::Kind::Conversion,
                  "cannot convert " + kind + " in " + torch_side::describe_origin(*origin) + ": " + e.what());
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(Error::Kind::Internal, "internal error converting " + kind + " in " +
                                             torch_side::describe_origin(*origin) + ": " + e.what());
    }
    const auto& results = ctx.results();
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      const OutputSlot& r = results[i];
      if (!r.set) {
        if (n->output(i)->hasUses())
          throw Error(Error::Kind::Internal, "the symbolic for " + kind + " did not produce output " + std::to_string(i));
        continue;
      }
      if (r.is_sequence) {
        r.value->set_type(ir::ValueType::sequence(list_dtype({n->output(i)})));
        slot_of(n->output(i)) = sequence_slot(r.value);
      } else if (r.is_list) {
        Slot s{Slot::Kind::List, {}, nullptr, {}, next_id_++};
        for (ir::Value* e : r.elements)
          s.elements.push_back(Slot{Slot::Kind::Value, {}, quantized ? quantized->result(i, e) : e, {}, next_id_++});
        slot_of(n->output(i)) = std::move(s);
      } else {
        ir::Value* v = r.value;
        if (quantized) v = quantized->result(i, v);
        check_dtype(kind, *origin, v, quantized ? quantized->original(i) : ctx.out_info(i));
        slot_of(n->output(i)) = Slot{Slot::Kind::Value, {}, v, {}, next_id_++};
      }
    }
  }

  // operator_export_type: the node kept whole (ATen or its own namespace)
  // instead of, or where there is no, conversion. Empty: the symbolic.
  // Complex tensors (ONNX has none) are left to the operator's runtime too.
  SymbolicFn fallback_for(Node* n, const std::string& kind, bool has_symbolic, const std::vector<Arg>& args,
                          const std::vector<OutputInfo>& outs) {
    const bool aten = kind.rfind("aten::", 0) == 0;
    bool tensor_outputs = true, complex = false;
    auto is_complex = [](ir::DType t) { return t == ir::DType::Complex64 || t == ir::DType::Complex128; };
    for (const OutputInfo& o : outs) {
      tensor_outputs = tensor_outputs && o.kind == Arg::Kind::Tensor;
      complex = complex || is_complex(o.dtype);
    }
    for (const Arg& a : args) complex = complex || (a.kind == Arg::Kind::Tensor && is_complex(a.dtype));
    if (complex && options_.operator_export_type != OperatorExportType::Onnx) has_symbolic = false;
    const auto mode = options_.operator_export_type;
    // ONNX_ATEN: every aten op as ATen, but those returning lists (one ONNX node cannot) where they convert.
    const bool as_aten = aten && ((mode == OperatorExportType::OnnxAten && (tensor_outputs || !has_symbolic)) ||
                                  (mode == OperatorExportType::OnnxAtenFallback && !has_symbolic));
    if (as_aten) {
      const c10::FunctionSchema* schema = n->maybeSchema();
      return convert::aten_node(kind.substr(6), schema ? schema->overload_name() : std::string());
    }
    if (mode == OperatorExportType::OnnxFallthrough && !has_symbolic) {
      const size_t sep = kind.find("::");
      return convert::passthrough_node(kind.substr(0, sep), kind.substr(sep + 2));
    }
    return {};
  }

  // A symbolic must produce the dtype PyTorch computes.
  void check_dtype(const std::string& kind, const ir::Origin& origin, ir::Value* v, const OutputInfo& info) {
    if (info.kind != Arg::Kind::Tensor || info.dtype == ir::DType::Undefined) return;
    if (v->dtype() == ir::DType::Undefined) {
      v->type().dtype = info.dtype;
      return;
    }
    if (v->dtype() != info.dtype)
      throw Error(Error::Kind::Internal, "converting " + kind + " in " + torch_side::describe_origin(origin) +
                                             " produced " + ir::dtype_name(v->dtype()) + " where PyTorch computes " +
                                             ir::dtype_name(info.dtype) + " (a bug in its symbolic)");
  }

  void flatten_output(const Slot& s, std::vector<ir::Value*>& out) {
    switch (s.kind) {
      case Slot::Kind::Value:
      case Slot::Kind::Sequence:  // a list of run-time length: an ONNX sequence output
        out.push_back(s.present ? optional_output(s) : s.value);
        if (const ir::Quantization* q = s.value->quantization()) {  // as torch.onnx: integers, scale, zero point
          if (q->per_channel())
            throw Error(Error::Kind::Conversion, "a per-channel quantized tensor cannot be a graph output "
                                                 "(dequantize it first)");
          out.push_back(q->scale);
          out.push_back(q->zero_point);
        }
        break;
      case Slot::Kind::List:
        for (const Slot& e : s.elements) flatten_output(e, out);
        break;
      case Slot::Kind::Constant: {
        const c10::IValue& iv = s.constant;
        if (iv.isNone()) break;
        if (iv.isList() || iv.isTuple()) {
          for (const Slot& e : unpack(s, 0, nullptr)) flatten_output(e, out);
          break;
        }
        SymbolicContext ctx("output", {arg_from_constant(iv, -1)}, {}, graph_, options_.opset_version, nullptr);
        out.push_back(ctx.in(0));
        break;
      }
      case Slot::Kind::Empty: break;
    }
  }

  // An Optional output that is None on some paths: an ONNX optional(tensor),
  // empty where PyTorch returns None (as torch.onnx 2.x does from opset 15;
  // its If-13 with optional outputs is rejected by ONNX Runtime, so 16 here).
  ir::Value* optional_output(const Slot& s) {
    if (options_.opset_version < 16)
      throw Error(Error::Kind::Conversion,
                  "an output is an Optional that is None on some paths: ONNX has optional values in If "
                  "from opset 16 (export with opset_version >= 16, or return a tensor on every path)");
    ir::ValueType element = s.value->type();
    element.kind = ir::ValueType::Kind::Tensor;
    const ir::ValueType type = ir::ValueType::optional(element);
    auto then_g = std::make_shared<ir::Graph>(graph_);
    then_g->set_name(graph_->unique_name("then_branch"));
    ir::Value* some = then_g->create_node("Optional", {s.value}, 1)->output(0);
    some->set_type(type);
    then_g->add_output(some);
    auto else_g = std::make_shared<ir::Graph>(graph_);
    else_g->set_name(graph_->unique_name("else_branch"));
    ir::ValueType none_type = element;  // its rank, dims unknown (the value may be a placeholder)
    for (ir::Dim& d : none_type.shape) d = ir::Dim{};
    ir::Value* none = else_g->create_node("Optional", {}, 1, {{"type", none_type}})->output(0);
    none->set_type(type);
    else_g->add_output(none);
    ir::Value* out = graph_->create_node("If", {s.present}, 1, {{"else_branch", else_g}, {"then_branch", then_g}})->output(0);
    out->set_type(type);
    return out;
  }

  void flatten_info(const ExampleInfo* info, std::vector<const ExampleInfo*>& out) {
    if (info && (info->kind == ExampleInfo::Kind::List || info->kind == ExampleInfo::Kind::Tuple)) {
      for (const auto& e : info->elements) flatten_info(&e, out);
    } else if (!info || info->kind != ExampleInfo::Kind::None) {
      out.push_back(info);
      if (info && info->kind == ExampleInfo::Kind::Tensor && c10::isQIntType(info->dtype))
        out.insert(out.end(), 2, nullptr);  // its scale and zero point
    }
  }

  void make_outputs() {
    std::vector<ir::Value*> flat;
    std::vector<const ExampleInfo*> flat_info;
    for (const TValue* o : tg_.graph->outputs()) {
      const size_t before = flat.size();
      flatten_output(get_slot(o), flat);
      std::vector<const ExampleInfo*> infos;
      flatten_info(info_of(o), infos);
      // (an output the example left None, or whose structure it did not show: no example facts)
      if (infos.size() != flat.size() - before) infos.assign(flat.size() - before, nullptr);
      flat_info.insert(flat_info.end(), infos.begin(), infos.end());
    }
    if (flat.empty()) throw Error(Error::Kind::Conversion, "the model returns no tensors");
    if (options_.output_names.size() > flat.size())
      throw Error(Error::Kind::Usage, "output_names has " + std::to_string(options_.output_names.size()) +
                                          " names but the model has " + std::to_string(flat.size()) + " outputs");
    std::set<ir::Value*> seen;
    for (size_t i = 0; i < flat.size(); ++i) {
      ir::Value* v = flat[i];
      std::string name = i < options_.output_names.size() ? options_.output_names[i]
                         : flat.size() == 1                ? std::string("output")
                                                           : "output_" + std::to_string(i);
      // A value that is an input, an initializer or already an output gets its own Identity.
      if (!v->producer() || seen.count(v)) {
        ir::Value* id = graph_->create_node("Identity", {v}, 1)->output(0);
        id->set_type(v->type());
        v = id;
      }
      seen.insert(v);
      // Graph outputs need a shape: at least the rank PyTorch produced
      // (inference fills in what it can).
      if (!v->type().has_shape && i < flat_info.size() && flat_info[i]) {
        const auto k = flat_info[i]->kind;
        if (k == ExampleInfo::Kind::Tensor) {
          v->type().has_shape = true;
          v->type().shape.assign(flat_info[i]->sizes.size(), ir::Dim{});
        } else if (k == ExampleInfo::Kind::Int || k == ExampleInfo::Kind::Float || k == ExampleInfo::Kind::Bool) {
          v->type().has_shape = true;  // numbers are 0-d
          v->type().shape.clear();
        }
      }
      if (v->name() != name) {
        if (ir::Value* holder = graph_->names().taken(name) ? value_named(name) : nullptr;
            holder && (holder->is_initializer() || is_graph_input(holder))) {
          // A default name yields to an input or a weight (a forward(output)
          // argument); a name the user gave cannot be both.
          if (i < options_.output_names.size())
            throw Error(Error::Kind::Usage, "output name '" + name + "' is already the name of a graph input or "
                                            "initializer: ONNX values need distinct names");
          name = graph_->unique_name(name);
          graph_->names().release(name);
        } else if (holder) {
          graph_->rename_unique(holder, name + "_renamed");
        } else if (graph_->names().taken(name)) {
          graph_->names().release(name);  // a node's name: nodes and values are named apart in ONNX
        }
        graph_->rename(v, name);
      }
      if (options_.dynamic_axes.count(name)) {
        const int64_t rank = v->type().has_shape ? v->type().rank()
                             : i < flat_info.size() && flat_info[i] ? static_cast<int64_t>(flat_info[i]->sizes.size())
                                                                    : -1;
        if (rank < 0) throw Error(Error::Kind::Usage, "dynamic_axes: the rank of output '" + name + "' is unknown");
        apply_dynamic_axes(name, v->type(), rank);
      }
      graph_->add_output(v);
    }
    check_dynamic_axes_used();
  }

  // The value named `name`, if any.
  ir::Value* value_named(const std::string& name) {
    for (ir::Value* v : graph_->all_values())
      if (v->name() == name) return v;
    return nullptr;
  }

  bool is_graph_input(const ir::Value* v) {
    for (const ir::Value* in : graph_->inputs())
      if (in == v) return true;
    return false;
  }

  TorchGraph& tg_;
  const Registry& registry_;
  const ExportOptions& options_;
  torch_side::OriginTable origins_;
  ir::Graph* graph_ = nullptr;
  std::unordered_map<const TValue*, Slot> slots_;
  std::set<std::string> used_dynamic_axes_;
  int64_t next_id_ = 0;
};

}  // namespace

std::vector<UnsupportedOperator> find_unsupported(const TorchGraph& tg, const Registry& registry, int opset,
                                                  OperatorExportType mode) {
  std::map<std::string, UnsupportedOperator> found;
  torch_side::OriginTable origins(tg.root_class);
  collect_unsupported(tg.graph->block(), registry, opset, mode, origins, found);
  std::vector<UnsupportedOperator> out;
  for (auto& [k, u] : found) out.push_back(std::move(u));
  return out;
}

std::string unsupported_message(const std::vector<UnsupportedOperator>& ops, int opset) {
  std::ostringstream m;
  const auto& first = ops.front();
  m << "Unsupported operator " << first.op << " at opset " << opset << ", in " << first.locations.front() << ". ";
  int64_t total = 0;
  for (const auto& u : ops) total += u.count;
  m << "The model has " << ops.size() << " operator" << (ops.size() == 1 ? "" : "s") << " (" << total
    << " occurrence" << (total == 1 ? "" : "s") << ") that torch2onnx cannot convert at opset " << opset << ":";
  for (const auto& u : ops) {
    m << "\n  " << u.op << " x" << u.count;
    if (u.lowest_opset) m << " (supported from opset " << *u.lowest_opset << ")";
    m << ": ";
    for (size_t i = 0; i < u.locations.size() && i < 5; ++i) m << (i ? "; " : "") << u.locations[i];
    if (u.locations.size() > 5) m << "; and " << (u.locations.size() - 5) << " more places";
  }
  return m.str();
}

ir::Model convert(TorchGraph& tg, const Registry& registry, const ExportOptions& options) {
  auto unsupported = find_unsupported(tg, registry, options.opset_version, options.operator_export_type);
  if (!unsupported.empty()) {
    std::string message = unsupported_message(unsupported, options.opset_version);
    throw UnsupportedOperatorError(message, std::move(unsupported));
  }
  return Converter(tg, registry, options).run();
}

}  // namespace torch2onnx::convert
