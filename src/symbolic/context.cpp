#include "symbolic/context.h"

#include "serialize/infer_node.h"
#include "symbolic/helpers.h"

namespace torch2onnx {
namespace {

const char* kind_name(Arg::Kind k) {
  switch (k) {
    case Arg::Kind::None: return "None";
    case Arg::Kind::Tensor: return "a tensor";
    case Arg::Kind::Int: return "an int";
    case Arg::Kind::Float: return "a float";
    case Arg::Kind::Bool: return "a bool";
    case Arg::Kind::String: return "a string";
    case Arg::Kind::Device: return "a device";
    case Arg::Kind::List: return "a list";
    case Arg::Kind::Tuple: return "a tuple";
    case Arg::Kind::Other: return "a value of another type";
  }
  return "?";
}

// Output dtype of a freshly built node, where it follows from the op alone.
ir::DType infer_dtype(const std::string& type, const std::vector<ir::Value*>& inputs, const ir::Attributes& attrs) {
  auto attr_int = [&](const char* name) -> int64_t {
    for (const auto& a : attrs)
      if (a.name == name) return a.i;
    return -1;
  };
  if (type == "Cast" || type == "BitCast") return static_cast<ir::DType>(attr_int("to"));
  if (type == "Shape" || type == "Size" || type == "NonZero" || type == "ArgMax" || type == "ArgMin")
    return ir::DType::Int64;
  if (type == "Equal" || type == "Less" || type == "Greater" || type == "LessOrEqual" ||
      type == "GreaterOrEqual" || type == "Not" || type == "And" || type == "Or" || type == "Xor" ||
      type == "IsNaN" || type == "IsInf")
    return ir::DType::Bool;
  if (type == "Constant" || type == "ConstantOfShape") {
    for (const auto& a : attrs)
      if (a.name == "value" && a.t) return a.t->dtype();
    return ir::DType::Float;
  }
  if (type == "Where" && inputs.size() > 1 && inputs[1]) return inputs[1]->dtype();
  for (ir::Value* v : inputs)
    if (v) return v->dtype();
  return ir::DType::Undefined;
}

}  // namespace

SymbolicContext::SymbolicContext(std::string kind, std::vector<Arg> args, std::vector<OutputInfo> outputs,
                                 ir::Graph* graph, int64_t opset, ArgMaterializer* materializer)
    : kind_(std::move(kind)),
      args_(std::move(args)),
      outputs_info_(std::move(outputs)),
      results_(outputs_info_.size()),
      graph_(graph),
      opset_(opset),
      materializer_(materializer) {}

namespace {
// Why an argument may be computed at run time, for a refusal's message.
std::string run_time_why(bool dynamic_export) {
  return dynamic_export ? " (from a dynamic dim's size, or from tensor data)" : "";
}
}  // namespace

void SymbolicContext::fail(const std::string& message) const { throw SymbolicError(kind_ + ": " + message); }

const Arg& SymbolicContext::arg(size_t i) const {
  if (i >= args_.size())
    fail("expected at least " + std::to_string(i + 1) + " arguments, got " + std::to_string(args_.size()));
  return args_[i];
}

const Arg& SymbolicContext::checked(size_t idx, const char* what) const {
  const Arg& a = arg(idx);
  std::string label = "argument " + std::to_string(idx) + (a.name.empty() ? "" : " (" + a.name + ")");
  if (a.kind == Arg::Kind::None) fail(label + " must be " + what + ", got None");
  if (!a.constant)
    fail(label + " must be " + what + " known at export time, but it is computed at run time" +
         run_time_why(dynamic_export_));
  return a;
}

int64_t SymbolicContext::rank(size_t idx) const {
  const Arg& a = arg(idx);
  if (a.has_sizes) return static_cast<int64_t>(a.sizes.size());
  // (a value the example never computed, in a branch it did not take: the
  // rank its ONNX value has, from ONNX's inference where the converter did not set it)
  if (a.value && a.value->type().kind == ir::ValueType::Kind::Tensor &&
      serialize::infer_value_type(a.value, opset_))
    return a.value->type().rank();
  fail("the rank of argument " + std::to_string(idx) + " is unknown");
}

const std::vector<int64_t>& SymbolicContext::sizes(size_t idx) const {
  const Arg& a = arg(idx);
  if (a.has_sizes) return a.sizes;
  if (auto it = inferred_sizes_.find(idx); it != inferred_sizes_.end()) return it->second;
  // (never computed by the example: a shape that is the same for every input, if ONNX's inference finds one)
  if (a.value && a.value->type().kind == ir::ValueType::Kind::Tensor &&
      serialize::infer_value_type(a.value, opset_) && a.value->type().fully_static())
    return inferred_sizes_[idx] = a.value->type().static_dims();
  fail("the shape of argument " + std::to_string(idx) + " is unknown");
}

bool SymbolicContext::dynamic(const Arg& a, int64_t r, int64_t d) const {
  if (a.constant || a.static_shape) return false;
  if (static_cast<int64_t>(a.dynamic_dims.size()) == r) return a.dynamic_dims[static_cast<size_t>(d)];
  if (!dynamic_export_) return false;
  // (a size ONNX's inference cannot tell is taken as varying)
  if (!a.value || a.value->type().kind != ir::ValueType::Kind::Tensor || !serialize::infer_value_type(a.value, opset_))
    return true;
  const auto& shape = a.value->type().shape;
  // (a complex value is its (real, imag) pair: one more dim, last)
  return static_cast<int64_t>(shape.size()) < r || !shape[static_cast<size_t>(d)].is_static();
}

bool SymbolicContext::dim_is_dynamic(size_t idx, int64_t d) const {
  const int64_t r = rank(idx);
  if (d < 0) d += r;
  if (d < 0 || d >= r) fail("argument " + std::to_string(idx) + " has no dim " + std::to_string(d));
  return dynamic(arg(idx), r, d);
}

bool SymbolicContext::dim_known_dynamic(size_t idx, int64_t d) const {
  const Arg& a = arg(idx);
  const int64_t r = rank(idx);
  if (d < 0) d += r;
  return !a.constant && !a.static_shape && static_cast<int64_t>(a.dynamic_dims.size()) == r && d >= 0 && d < r &&
         a.dynamic_dims[static_cast<size_t>(d)];
}

void SymbolicContext::fail_dynamic(const std::string& what, int64_t d, int64_t example) const {
  fail("dim " + std::to_string(d) + " of " + what +
       " is dynamic (it varies with the export's dynamic axes), but this lowering needs its size at export time "
       "(the example has " + std::to_string(example) + "): export with that dim static" +
       (dynamic_note_ && !dynamic_note_->empty() ? " (" + *dynamic_note_ + ")" : std::string()));
}

int64_t SymbolicContext::static_dim(size_t idx, int64_t d) const {
  const int64_t r = rank(idx);
  const int64_t dd = d < 0 ? d + r : d;
  if (dim_is_dynamic(idx, dd)) {
    const Arg& a = arg(idx);
    fail_dynamic("argument " + std::to_string(idx) + (a.name.empty() ? "" : " (" + a.name + ")"), dd,
                 sizes(idx)[static_cast<size_t>(dd)]);
  }
  return sizes(idx)[static_cast<size_t>(dd)];
}

std::optional<int64_t> SymbolicContext::known_static_dim(size_t idx, int64_t d) const {
  const Arg& a = arg(idx);
  const int64_t r = rank(idx);
  if (d < 0) d += r;
  if (d < 0 || d >= r || dynamic(a, r, d)) return std::nullopt;
  if (a.has_sizes) return a.sizes[static_cast<size_t>(d)];
  if (a.value && a.value->type().kind == ir::ValueType::Kind::Tensor && serialize::infer_value_type(a.value, opset_) &&
      a.value->type().rank() == r && a.value->type().shape[static_cast<size_t>(d)].is_static())
    return a.value->type().shape[static_cast<size_t>(d)].value;
  return std::nullopt;
}

const std::vector<int64_t>& SymbolicContext::static_sizes(size_t idx) const {
  for (int64_t d = 0, r = rank(idx); d < r; ++d) static_dim(idx, d);
  return sizes(idx);
}

const std::vector<int64_t>& SymbolicContext::static_element_sizes(size_t idx, size_t k) const {
  const Arg& list = arg(idx);
  if (k >= list.elements.size() || !list.elements[k].has_sizes)
    fail("the sizes of element " + std::to_string(k) + " of argument " + std::to_string(idx) + " are unknown");
  const Arg& e = list.elements[k];
  const int64_t r = static_cast<int64_t>(e.sizes.size());
  for (int64_t d = 0; d < r; ++d)
    if (dynamic(e, r, d))
      fail_dynamic("element " + std::to_string(k) + " of argument " + std::to_string(idx), d,
                   e.sizes[static_cast<size_t>(d)]);
  return e.sizes;
}

const OutputInfo& SymbolicContext::out_info(size_t k) const {
  if (k >= outputs_info_.size()) fail("has no output " + std::to_string(k));
  return outputs_info_[k];
}

// ---------------------------------------------------------------- binder

int64_t SymbolicContext::i(size_t idx) const {
  const Arg& a = checked(idx, "an int");
  if (a.kind == Arg::Kind::Int || a.kind == Arg::Kind::Bool) return a.kind == Arg::Kind::Bool ? a.b : a.i;
  if (a.kind == Arg::Kind::Tensor && a.tensor && a.tensor->numel() == 1) return a.tensor->int_at(0);
  fail("argument " + std::to_string(idx) + " must be an int, got " + kind_name(a.kind));
}

double SymbolicContext::f(size_t idx) const {
  const Arg& a = checked(idx, "a number");
  if (a.kind == Arg::Kind::Float) return a.f;
  if (a.kind == Arg::Kind::Int) return static_cast<double>(a.i);
  if (a.kind == Arg::Kind::Bool) return a.b ? 1.0 : 0.0;
  if (a.kind == Arg::Kind::Tensor && a.tensor && a.tensor->numel() == 1) return a.tensor->double_at(0);
  fail("argument " + std::to_string(idx) + " must be a number, got " + kind_name(a.kind));
}

bool SymbolicContext::b(size_t idx) const {
  const Arg& a = checked(idx, "a bool");
  if (a.kind == Arg::Kind::Bool) return a.b;
  if (a.kind == Arg::Kind::Int) return a.i != 0;
  if (a.kind == Arg::Kind::Tensor && a.tensor && a.tensor->numel() == 1) return a.tensor->int_at(0) != 0;
  fail("argument " + std::to_string(idx) + " must be a bool, got " + kind_name(a.kind));
}

std::string SymbolicContext::s(size_t idx) const {
  const Arg& a = checked(idx, "a string");
  if (a.kind == Arg::Kind::String || a.kind == Arg::Kind::Device) return a.s;
  fail("argument " + std::to_string(idx) + " must be a string, got " + kind_name(a.kind));
}

std::vector<int64_t> SymbolicContext::is(size_t idx) const {
  const Arg& a = arg(idx);
  if (a.kind == Arg::Kind::Int && a.constant) return {a.i};
  if (a.is_list()) {
    std::vector<int64_t> out;
    out.reserve(a.elements.size());
    for (size_t k = 0; k < a.elements.size(); ++k) {
      const Arg& e = a.elements[k];
      if (!e.constant || (e.kind != Arg::Kind::Int && e.kind != Arg::Kind::Bool))
        fail("argument " + std::to_string(idx) + (a.name.empty() ? "" : " (" + a.name + ")") +
             " must be a list of ints known at export time; element " + std::to_string(k) +
             " is computed at run time" + run_time_why(dynamic_export_));
      out.push_back(e.kind == Arg::Kind::Bool ? e.b : e.i);
    }
    if (a.elements.empty() && a.value)
      fail("argument " + std::to_string(idx) + (a.name.empty() ? "" : " (" + a.name + ")") +
           " must be a list of ints known at export time, but it is computed at run time" +
               run_time_why(dynamic_export_));
    return out;
  }
  if (a.kind == Arg::Kind::Tensor && a.constant && a.tensor && a.tensor->rank() <= 1) return a.tensor->to_int64s();
  checked(idx, "an int list");
  fail("argument " + std::to_string(idx) + " must be an int list, got " + kind_name(a.kind));
}

std::vector<double> SymbolicContext::fs(size_t idx) const {
  const Arg& a = arg(idx);
  if ((a.kind == Arg::Kind::Float || a.kind == Arg::Kind::Int) && a.constant) return {f(idx)};
  if (a.is_list()) {
    std::vector<double> out;
    for (const Arg& e : a.elements) {
      if (!e.constant) fail("argument " + std::to_string(idx) + " must be a list of numbers known at export time");
      out.push_back(e.kind == Arg::Kind::Float ? e.f : static_cast<double>(e.i));
    }
    return out;
  }
  checked(idx, "a float list");
  fail("argument " + std::to_string(idx) + " must be a float list, got " + kind_name(a.kind));
}

std::optional<int64_t> SymbolicContext::opt_i(size_t idx) const {
  if (none(idx)) return std::nullopt;
  return i(idx);
}

std::optional<double> SymbolicContext::opt_f(size_t idx) const {
  if (none(idx)) return std::nullopt;
  return f(idx);
}

std::optional<std::vector<int64_t>> SymbolicContext::opt_is(size_t idx) const {
  if (none(idx)) return std::nullopt;
  return is(idx);
}

ir::Value* SymbolicContext::materialize(const Arg& a, ir::DType dtype) {
  if (a.value) return dtype == ir::DType::Undefined ? a.value : cast(a.value, dtype);
  if (!a.constant) fail("argument '" + a.name + "' has no value (internal error)");
  if (materializer_)
    if (ir::Value* v = materializer_->lookup(a, dtype, graph_)) return v;
  ir::Value* v = nullptr;
  switch (a.kind) {
    case Arg::Kind::Tensor: {
      v = constant(*a.tensor);
      if (dtype != ir::DType::Undefined) v = cast(v, dtype);
      break;
    }
    case Arg::Kind::Int:
      v = constant(ir::Tensor::scalar_int(dtype == ir::DType::Undefined ? ir::DType::Int64 : dtype, a.i));
      break;
    case Arg::Kind::Float:
      v = constant(ir::Tensor::scalar(dtype == ir::DType::Undefined ? ir::DType::Float : dtype, a.f));
      break;
    case Arg::Kind::Bool:
      v = constant(ir::Tensor::scalar_int(dtype == ir::DType::Undefined ? ir::DType::Bool : dtype, a.b));
      break;
    case Arg::Kind::List:
    case Arg::Kind::Tuple: {
      bool all_numbers = true;
      bool any_float = false;
      for (const Arg& e : a.elements) {
        if (!e.constant || !e.is_scalar()) all_numbers = false;
        if (e.kind == Arg::Kind::Float) any_float = true;
      }
      if (!all_numbers) fail("cannot use list argument '" + a.name + "' as a tensor");
      if (any_float || ir::is_floating(dtype)) {
        std::vector<double> vals;
        for (const Arg& e : a.elements) vals.push_back(e.kind == Arg::Kind::Float ? e.f : static_cast<double>(e.i));
        ir::DType dt = dtype == ir::DType::Undefined ? ir::DType::Float : dtype;
        v = constant(ir::Tensor::from_doubles(dt, vals, {static_cast<int64_t>(vals.size())}));
      } else {
        std::vector<int64_t> vals;
        for (const Arg& e : a.elements) vals.push_back(e.kind == Arg::Kind::Bool ? e.b : e.i);
        v = cast(const_ints(vals), dtype == ir::DType::Undefined ? ir::DType::Int64 : dtype);
      }
      break;
    }
    default: fail("cannot use argument '" + a.name + "' (" + kind_name(a.kind) + ") as a tensor");
  }
  if (materializer_) materializer_->remember(a, dtype, graph_, v);
  return v;
}

ir::Value* SymbolicContext::in(size_t idx) {
  const Arg& a = arg(idx);
  if (a.kind == Arg::Kind::None)
    fail("argument " + std::to_string(idx) + (a.name.empty() ? "" : " (" + a.name + ")") +
         " must be a tensor, got None");
  return materialize(a, ir::DType::Undefined);
}

ir::Value* SymbolicContext::opt_in(size_t idx) {
  if (none(idx)) return nullptr;
  return in(idx);
}

ir::Value* SymbolicContext::in_as(size_t idx, ir::DType t) {
  const Arg& a = arg(idx);
  if (a.kind == Arg::Kind::None) fail("argument " + std::to_string(idx) + " must be a tensor, got None");
  return materialize(a, t);
}

std::vector<ir::Value*> SymbolicContext::list(size_t idx) {
  const Arg& a = arg(idx);
  if (!a.is_list())
    fail("argument " + std::to_string(idx) + " must be a list of tensors, got " + kind_name(a.kind));
  if (a.elements.empty() && a.value)
    fail("argument " + std::to_string(idx) +
         " is a list whose length is only known at run time (not supported here)");
  std::vector<ir::Value*> out;
  out.reserve(a.elements.size());
  for (const Arg& e : a.elements) out.push_back(materialize(e, ir::DType::Undefined));
  return out;
}

std::vector<ir::Value*> SymbolicContext::opt_list(size_t idx) {
  const Arg& a = arg(idx);
  if (!a.is_list())
    fail("argument " + std::to_string(idx) + " must be a list of tensors, got " + kind_name(a.kind));
  if (a.elements.empty() && a.value)
    fail("argument " + std::to_string(idx) + " is a list whose length is only known at run time (not supported here)");
  std::vector<ir::Value*> out;
  for (const Arg& e : a.elements) out.push_back(e.is_none() ? nullptr : materialize(e, ir::DType::Undefined));
  return out;
}

ir::Value* SymbolicContext::elem(size_t idx, size_t k) {
  const Arg& a = arg(idx);
  if (!a.is_list() || k >= a.elements.size())
    fail("argument " + std::to_string(idx) + " has no element " + std::to_string(k));
  if (a.elements[k].is_none()) fail("element " + std::to_string(k) + " of argument " + std::to_string(idx) + " is None");
  return materialize(a.elements[k], ir::DType::Undefined);
}

ir::Value* SymbolicContext::ints_value(size_t idx) {
  const Arg& a = arg(idx);
  if (a.constant && (a.is_list() || a.kind == Arg::Kind::Int)) return const_ints(is(idx));
  if (a.value && a.value->type().kind == ir::ValueType::Kind::Sequence)  // a list of run-time length
    return cast(op("ConcatFromSequence", {a.value}, {{"axis", int64_t{0}}, {"new_axis", int64_t{1}}}), ir::DType::Int64);
  if (a.value) return cast(a.value, ir::DType::Int64);
  if (a.is_list()) {
    std::vector<ir::Value*> parts;
    for (const Arg& e : a.elements) {
      if (e.constant)
        parts.push_back(const_ints({e.kind == Arg::Kind::Bool ? static_cast<int64_t>(e.b) : e.i}));
      else
        parts.push_back(helpers::unsqueeze(*this, materialize(e, ir::DType::Int64), {0}));
    }
    if (parts.empty()) return const_ints({});  // () sizes: a 0-d result, or repeat/tile by nothing
    if (parts.size() == 1) return parts[0];
    return op("Concat", parts, {{"axis", int64_t{0}}});
  }
  fail("argument " + std::to_string(idx) + " must be an int list, got " + kind_name(a.kind));
}

ir::Value* SymbolicContext::scalar_value(size_t idx, ir::DType t) {
  const Arg& a = arg(idx);
  if (a.kind == Arg::Kind::None) fail("argument " + std::to_string(idx) + " must be a number, got None");
  return materialize(a, t);
}

// ---------------------------------------------------------------- results

void SymbolicContext::out(ir::Value* v, size_t k) {
  if (k >= results_.size()) fail("has no output " + std::to_string(k) + " (internal error)");
  results_[k].value = v;
  results_[k].set = true;
}

void SymbolicContext::out_list(std::vector<ir::Value*> vs, size_t k) {
  if (k >= results_.size()) fail("has no output " + std::to_string(k) + " (internal error)");
  results_[k].is_list = true;
  results_[k].elements = std::move(vs);
  results_[k].set = true;
}

void SymbolicContext::out_sequence(ir::Value* seq, size_t k) {
  if (k >= results_.size()) fail("has no output " + std::to_string(k) + " (internal error)");
  results_[k].is_sequence = true;
  results_[k].value = seq;
  results_[k].set = true;
}

// ---------------------------------------------------------------- builder

ir::Node* SymbolicContext::node(const std::string& type, const std::vector<ir::Value*>& inputs, size_t n,
                                ir::Attributes attrs, const std::string& domain) {
  ir::DType dt = domain.empty() ? infer_dtype(type, inputs, attrs) : ir::DType::Undefined;
  ir::Node* nd = graph_->create_node(type, inputs, n, std::move(attrs), domain);
  for (ir::Value* o : nd->outputs()) o->type().dtype = dt;
  return nd;
}

ir::Value* SymbolicContext::op(const std::string& type, const std::vector<ir::Value*>& inputs, ir::Attributes attrs) {
  return node(type, inputs, 1, std::move(attrs))->output(0);
}

std::vector<ir::Value*> SymbolicContext::op_n(const std::string& type, const std::vector<ir::Value*>& inputs,
                                              size_t n, ir::Attributes attrs) {
  return node(type, inputs, n, std::move(attrs))->outputs();
}

ir::Value* SymbolicContext::constant(ir::Tensor t) {
  ir::DType dt = t.dtype();
  std::vector<int64_t> dims = t.dims();
  ir::Value* v = graph_->create_node("Constant", {}, 1, {{"value", std::move(t)}})->output(0);
  v->set_type(ir::ValueType::tensor(dt, dims));
  return v;
}

ir::Value* SymbolicContext::const_ints(const std::vector<int64_t>& v) { return constant(ir::Tensor::from_int64s(v)); }

ir::Value* SymbolicContext::const_int(int64_t v) { return constant(ir::Tensor::from_int64s({v}, {})); }

ir::Value* SymbolicContext::const_scalar(ir::DType dt, double v) {
  if (ir::is_integral(dt) || dt == ir::DType::Bool) return constant(ir::Tensor::scalar_int(dt, static_cast<int64_t>(v)));
  return constant(ir::Tensor::scalar(dt, v));
}

ir::Value* SymbolicContext::cast(ir::Value* v, ir::DType to) {
  if (to == ir::DType::Undefined || v->dtype() == to) return v;
  if (const ir::Tensor* t = v->constant()) {
    // A small constant is converted here rather than through a Cast node.
    if (t->numel() <= 64 && t->dtype() != ir::DType::String) return constant(t->converted(to));
  }
  return op("Cast", {v}, {{"to", static_cast<int64_t>(to)}});
}

}  // namespace torch2onnx
