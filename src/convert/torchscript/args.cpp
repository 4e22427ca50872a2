#include "convert/torchscript/converter.h"

#include "frontend/mapped_archive.h"
#include "symbolic/helpers.h"

namespace torch2onnx::convert::torchscript {

ir::DType to_dtype(at::ScalarType st) {
  return st == at::ScalarType::Undefined ? ir::DType::Undefined
                                         : ir::dtype_from_scalar_type(static_cast<int64_t>(st));
}

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

Arg::Kind Converter::kind_of_ivalue(const c10::IValue& iv) {
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

Arg::Kind Converter::kind_of_type(const c10::TypePtr& t) {
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

void Converter::apply_example(Arg& a, const ExampleInfo* info) {
  if (!info) return;
  switch (info->kind) {
    case ExampleInfo::Kind::Tensor:
      a.dtype = to_dtype(info->dtype);
      a.has_sizes = info->dtype != at::ScalarType::Undefined;
      a.sizes = info->sizes;
      a.static_shape = info->shape_static;
      if (info->dynamic_dims.size() == info->sizes.size()) a.dynamic_dims = info->dynamic_dims;
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

Arg Converter::arg_from_constant(const c10::IValue& iv, int64_t id) {
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

Arg Converter::arg_from_slot(const Slot& s, const c10::TypePtr& type, const ExampleInfo* info) {
  if (s.kind == Slot::Kind::Constant) return arg_from_constant(s.constant, s.id);
  Arg a;
  a.id = s.id;
  a.kind = type ? kind_of_type(type) : Arg::Kind::Other;
  if (s.kind == Slot::Kind::Value) {
    a.value = s.value && s.value->type().kind == ir::ValueType::Kind::Optional ? optional_element(s.value) : s.value;
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

const ExampleInfo* Converter::info_of(const TValue* v) const {
  auto it = tg_.info.find(v);
  return it == tg_.info.end() ? nullptr : &it->second;
}

Arg Converter::make_arg(const TValue* v, const std::string& name) {
  Arg a = arg_from_slot(get_slot(v), v->type(), info_of(v));
  a.name = name;
  a.type_str = v->type()->repr_str();
  return a;
}

OutputInfo Converter::make_output_info(const TValue* v) {
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

ir::Value* Converter::quantized_constant(const at::Tensor& t, const std::string& name) {
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

ir::DType Converter::example_dtype(const TValue* v) {
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

}  // namespace torch2onnx::convert::torchscript
