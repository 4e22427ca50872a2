#include "convert/program.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "convert/constant_memo.h"
#include "convert/unsupported.h"
#include "frontend/zip.h"
#include "symbolic/helpers.h"

namespace torch2onnx::convert {
namespace {

namespace pt2 = frontend::pt2;

bool is_symbol(const std::string& e) {
  if (e.empty() || !(std::isalpha(static_cast<unsigned char>(e[0])) || e[0] == '_')) return false;
  for (char c : e)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// The c10 codes of the schema's memory formats (ContiguousFormat = 1 -> 0, PreserveFormat = 4 -> 1).
int64_t c10_memory_format(int64_t schema) { return schema == 1 ? 0 : schema == 4 ? 1 : schema; }

// The c10 codes of the schema's layouts (Strided = 7 -> 0, SparseCoo = 1 -> 1, _mkldnn = 6 -> 3, ...).
int64_t c10_layout(int64_t schema) {
  switch (schema) {
    case 7: return 0;
    case 1: return 1;
    case 2: return 2;
    case 3: return 4;
    case 4: return 5;
    case 5: return 6;
    case 6: return 3;
    default: return -1;
  }
}

// "module.path (file.py:12)": where a node came from, as errors name it.
std::string where(const pt2::Node& n) {
  const std::string path = pt2::module_path(n), src = pt2::user_source(n);
  return (path.empty() ? "<top module>" : path) + (src.empty() ? "" : " (" + src + ")");
}

// Operators on sizes (SymInts) the converter computes itself: the ONNX
// operator of the plain binary ones, "" for those with their own code.
const std::map<std::string, std::string>& size_operators() {
  static const std::map<std::string, std::string> ops{
      {"_operator.add", "Add"},       {"_operator.sub", "Sub"},         {"_operator.mul", "Mul"},
      {"_operator.eq", "Equal"},      {"_operator.lt", "Less"},         {"_operator.gt", "Greater"},
      {"_operator.le", "LessOrEqual"}, {"_operator.ge", "GreaterOrEqual"}, {"_operator.floordiv", ""},
      {"_operator.mod", ""},          {"_operator.truediv", ""},        {"_operator.neg", ""},
      {"_operator.not_", ""},         {"_operator.getitem", ""}};
  return ops;
}

// Run-time checks of what the program promised: dropped (ONNX cannot raise).
bool is_assert(const std::string& op) {
  return op == "aten::_assert_scalar" || op == "aten::sym_constrain_range_for_size" ||
         op == "aten::_assert_tensor_metadata" || op == "aten::sym_constrain_range";
}

bool in_place(const std::string& op) { return op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_'; }

// Operator aliases (TorchScript normalizes them away; programs keep them).
std::string canonical(const std::string& op) {
  static const std::map<std::string, std::string> aliases{
      {"aten::swapaxes", "aten::transpose"}, {"aten::swapdims", "aten::transpose"},
      {"aten::moveaxis", "aten::movedim"},   {"aten::absolute", "aten::abs"},
      {"aten::arccos", "aten::acos"},        {"aten::arcsin", "aten::asin"},
      {"aten::arctan", "aten::atan"},        {"aten::arccosh", "aten::acosh"},
      {"aten::arcsinh", "aten::asinh"},      {"aten::arctanh", "aten::atanh"},
      {"aten::arctan2", "aten::atan2"},      {"aten::clip", "aten::clamp"},
      {"aten::greater", "aten::gt"},         {"aten::greater_equal", "aten::ge"},
      {"aten::less", "aten::lt"},            {"aten::less_equal", "aten::le"},
      {"aten::not_equal", "aten::ne"},       {"aten::multiply", "aten::mul"},
      {"aten::divide", "aten::div"},         {"aten::true_divide", "aten::div"},
      {"aten::subtract", "aten::sub"},       {"aten::negative", "aten::neg"},
      {"aten::fix", "aten::trunc"},          {"aten::concat", "aten::cat"},
      {"aten::concatenate", "aten::cat"},    {"aten::special_expit", "aten::sigmoid"},
      {"aten::ger", "aten::outer"},          {"aten::row_stack", "aten::vstack"}};
  if (auto it = aliases.find(op); it != aliases.end()) return it->second;
  if (in_place(op))
    if (auto it = aliases.find(op.substr(0, op.size() - 1)); it != aliases.end()) return it->second + "_";
  return op;
}

// The symbolic for `op`; an in-place op ("aten::relu_") converts as its
// out-of-place form (its result then stands for the tensor it wrote to).
const SymbolicFn* resolve(const Registry& registry, const std::string& op, int opset) {
  if (const SymbolicFn* fn = registry.find(canonical(op), opset)) return fn;
  return in_place(op) ? registry.find(canonical(op.substr(0, op.size() - 1)), opset) : nullptr;
}

void collect_unsupported(const pt2::Graph& g, const Registry& registry, int opset,
                         std::map<std::string, UnsupportedOperator>& found) {
  for (const pt2::Node& n : g.nodes) {
    for (const pt2::NamedArgument& in : n.inputs)  // (higher-order operators' bodies)
      if (in.arg.graph) collect_unsupported(*in.arg.graph, registry, opset, found);
    if (converted_by_frontend(n)) continue;
    const std::string op = n.op.empty() ? n.target : n.op;
    if (!n.op.empty() && n.op.rfind("higher_order::", 0) != 0 && resolve(registry, op, opset)) continue;
    UnsupportedOperator& u = found[op];
    u.op = op;
    ++u.count;
    const std::string w = where(n);
    if (std::find(u.locations.begin(), u.locations.end(), w) == u.locations.end()) u.locations.push_back(w);
    if (!n.op.empty())
      u.lowest_opset = registry.first_opset(in_place(op) && !registry.contains(op) ? op.substr(0, op.size() - 1) : op);
  }
}

class ProgramConverter : public ConstantMemo {
 public:
  ProgramConverter(const pt2::Program& p, const Registry& registry, const ExportOptions& options)
      : p_(p), registry_(registry), options_(options) {}

  ir::Model run() {
    ir::Model model;
    model.opset = options_.opset_version;
    model.ir_version = ir::ir_version_for_opset(model.opset);
    model.custom_opsets = options_.custom_opsets;
    graph_ = model.graph.get();
    graph_->set_name("main_graph");
    find_unsupported();
    make_inputs();
    const size_t total = p_.graph.nodes.size();
    size_t done = 0;
    for (const pt2::Node& n : p_.graph.nodes) {
      convert_node(n);
      if (options_.progress && ++done % 256 == 0) options_.progress("converting", double(done) / double(total));
    }
    graph_->set_current_origin(nullptr);
    make_outputs();
    return model;
  }

 private:
  // ---- what each name of the program is on the ONNX side
  struct Sym {  // a SymInt / SymBool / SymFloat computed at run time
    ir::Value* value = nullptr;
    std::optional<double> hint;
    ir::DType dtype = ir::DType::Int64;
  };

  [[noreturn]] void fail(const pt2::Node* n, const std::string& why) const {
    throw Error(Error::Kind::Conversion,
                n ? "cannot convert " + n->target + " in " + where(*n) + ": " + why : "cannot convert the program: " + why);
  }

  std::shared_ptr<const ir::Origin> origin_of(const pt2::Node& n) {
    auto o = std::make_shared<ir::Origin>();
    o->torch_kind = n.op.empty() ? n.target : n.op;
    o->module_path = pt2::module_path(n);
    o->source = pt2::user_source(n);
    o->user_source = o->source;
    o->source_stack = n.stack_trace;
    return o;
  }

  void find_unsupported() {
    auto ops = unsupported_operators(p_, registry_, options_.opset_version);
    if (ops.empty()) return;
    const std::string message = unsupported_message(ops, options_.opset_version);
    throw UnsupportedOperatorError(message, std::move(ops));
  }

  // ---- graph inputs: user inputs, then weights as initializers
  std::string dim_name(const std::string& input, size_t axis, const std::string& expr) {
    if (auto it = options_.dynamic_axes.find(input); it != options_.dynamic_axes.end()) {
      used_axes_.insert(input);
      for (const DynamicAxis& a : it->second)
        if (a.axis == static_cast<int64_t>(axis)) {
          if (is_symbol(expr)) symbol_names_.emplace(expr, a.name);
          return a.name;
        }
    }
    if (!is_symbol(expr)) return "";
    auto [it, fresh] = symbol_names_.emplace(expr, input + "_dim_" + std::to_string(axis));
    (void)fresh;
    return it->second;
  }

  ir::ValueType type_of(const pt2::TensorMeta& m, const std::string& graph_name) {
    ir::ValueType t = ir::ValueType::tensor(m.dtype);
    t.has_shape = true;
    for (size_t k = 0; k < m.sizes.size(); ++k) {
      const pt2::SymInt& s = m.sizes[k];
      if (s.value) {
        t.shape.push_back(ir::Dim::of(*s.value));
        continue;
      }
      const std::string name = graph_name.empty() ? symbol_name(s.expr) : dim_name(graph_name, k, pt2::readable_expr(s.expr));
      t.shape.push_back(name.empty() ? ir::Dim{} : ir::Dim::named(name));
    }
    return t;
  }

  std::string symbol_name(const std::string& expr) const {
    auto it = symbol_names_.find(pt2::readable_expr(expr));
    return it == symbol_names_.end() ? "" : it->second;
  }

  const pt2::TensorMeta& meta(const std::string& name, const pt2::Node* n) const {
    auto it = p_.graph.tensor_values.find(name);
    if (it == p_.graph.tensor_values.end()) fail(n, "the program has no metadata for tensor '" + name + "'");
    return it->second;
  }

  void make_inputs() {
    size_t user = 0;
    for (const pt2::InputSpec& s : p_.input_specs) {
      switch (s.kind) {
        case pt2::InputSpec::Kind::UserInput: {
          const std::string name = user < options_.input_names.size() ? options_.input_names[user] : s.arg;
          ++user;
          const pt2::TensorMeta& m = meta(s.arg, nullptr);
          if (m.dtype == ir::DType::Undefined) fail(nullptr, "input '" + s.arg + "' is of type " + m.dtype_name);
          tensors_[s.arg] = graph_->add_input(name, type_of(m, name));
          break;
        }
        case pt2::InputSpec::Kind::Parameter:
        case pt2::InputSpec::Kind::Buffer:
        case pt2::InputSpec::Kind::Constant:
          tensors_[s.arg] = graph_->add_initializer(s.target, stored_tensor(s.target));
          break;
        default:
          fail(nullptr, "input '" + s.arg + "' is a " +
                            (s.kind == pt2::InputSpec::Kind::CustomObject ? "custom object" : "token") +
                            ", which the .pt2 frontend does not convert yet");
      }
    }
    for (const auto& [name, axes] : options_.dynamic_axes) {
      (void)axes;
      if (!used_axes_.count(name) && !is_output_name(name))
        throw Error(Error::Kind::Usage, "dynamic_axes names '" + name + "', which is neither an input nor an output");
    }
  }

  bool is_output_name(const std::string& name) const {
    size_t k = 0;
    for (const pt2::OutputSpec& s : p_.output_specs)
      if (s.kind == pt2::OutputSpec::Kind::UserOutput) {
        if ((k < options_.output_names.size() ? options_.output_names[k] : default_output_name(k)) == name) return true;
        ++k;
      }
    return false;
  }

  std::string default_output_name(size_t k) const {
    size_t n = 0;
    for (const pt2::OutputSpec& s : p_.output_specs) n += s.kind == pt2::OutputSpec::Kind::UserOutput;
    return n == 1 ? "output" : "output_" + std::to_string(k);
  }

  ir::Tensor stored_tensor(const std::string& target) {
    const pt2::StoredTensor* t = nullptr;
    if (auto it = p_.weights.find(target); it != p_.weights.end()) t = &it->second;
    else if (auto c = p_.constants.find(target); c != p_.constants.end()) t = &c->second;
    if (!t) fail(nullptr, "the archive holds no data for '" + target + "'");
    if (t->pickled)
      fail(nullptr, "'" + target + "' is stored pickled (torch.save), which only Python can read");
    if (t->meta.dtype == ir::DType::Undefined) fail(nullptr, "'" + target + "' is of type " + t->meta.dtype_name);
    std::vector<int64_t> dims;
    int64_t numel = 1;
    for (const pt2::SymInt& s : t->meta.sizes) {
      if (!s.value || *s.value < 0) fail(nullptr, "'" + target + "' has a size that is not a number");
      dims.push_back(*s.value);
      numel *= *s.value;
    }
    if (!zip_) zip_ = frontend::ZipFile::open(p_.archive_path);
    if (!zip_) fail(nullptr, "cannot open '" + p_.archive_path + "' again");
    for (const frontend::ZipEntry& e : zip_->entries()) {
      if (e.name != t->entry) continue;
      std::string why = zip_->size_problem(e);
      auto bytes = why.empty() ? zip_->contents(e, &why) : std::nullopt;
      if (!bytes) fail(nullptr, "cannot read '" + target + "': " + why);
      return ir::Tensor::owned(t->meta.dtype, dims, gather(*bytes, t->meta, dims, numel, target));
    }
    fail(nullptr, "the archive has no entry " + t->entry);
  }

  // The tensor's elements, in order, from its storage's bytes (strides and
  // offset as stored: a view shares its base's storage).
  std::vector<uint8_t> gather(std::vector<uint8_t>& storage, const pt2::TensorMeta& m, const std::vector<int64_t>& dims,
                              int64_t numel, const std::string& target) const {
    const size_t elem = ir::dtype_size(m.dtype);
    std::vector<int64_t> strides(dims.size());
    int64_t contiguous = 1;
    bool is_contiguous = true;
    for (size_t k = dims.size(); k-- > 0;) {
      if (m.strides.size() == dims.size()) {
        if (!m.strides[k].value) fail(nullptr, "'" + target + "' has a stride that is not a number");
        strides[k] = *m.strides[k].value;
      } else {
        strides[k] = contiguous;
      }
      is_contiguous = is_contiguous && (dims[k] == 1 || strides[k] == contiguous);
      contiguous *= dims[k];
    }
    const int64_t offset = m.storage_offset.value.value_or(0);
    const uint64_t storage_elems = storage.size() / elem;
    // The last element's position bounds every other one (strides are not negative in PyTorch).
    int64_t last = offset;
    for (size_t k = 0; k < dims.size(); ++k) {
      if (strides[k] < 0) fail(nullptr, "'" + target + "' has a negative stride");
      if (dims[k] > 0) last += (dims[k] - 1) * strides[k];
    }
    if (offset < 0 || (numel > 0 && static_cast<uint64_t>(last) >= storage_elems))
      fail(nullptr, "'" + target + "' reaches past its storage (" + std::to_string(storage_elems) + " elements)");
    if (is_contiguous && offset == 0) {
      storage.resize(static_cast<size_t>(numel) * elem);
      return std::move(storage);
    }
    std::vector<uint8_t> out(static_cast<size_t>(numel) * elem);
    std::vector<int64_t> index(dims.size(), 0);
    for (int64_t i = 0; i < numel; ++i) {
      int64_t src = offset;
      for (size_t k = 0; k < dims.size(); ++k) src += index[k] * strides[k];
      std::memcpy(out.data() + static_cast<size_t>(i) * elem, storage.data() + static_cast<size_t>(src) * elem, elem);
      for (size_t k = dims.size(); k-- > 0;) {  // next index, row-major
        if (++index[k] < dims[k]) break;
        index[k] = 0;
      }
    }
    return out;
  }

  // ---- nodes
  Arg tensor_arg(const std::string& name, const pt2::Node* n) {
    Arg a;
    a.kind = Arg::Kind::Tensor;
    a.id = id_of(name);
    auto it = tensors_.find(name);
    if (it == tensors_.end()) fail(n, "tensor '" + name + "' is read before it is computed");
    a.value = it->second;
    const pt2::TensorMeta& m = meta(name, n);
    a.dtype = m.dtype;
    a.has_sizes = true;
    for (const pt2::SymInt& s : m.sizes) a.sizes.push_back(s.value ? *s.value : s.hint ? *s.hint : 1);
    return a;
  }

  int64_t id_of(const std::string& name) {
    auto [it, fresh] = ids_.emplace(name, static_cast<int64_t>(ids_.size()));
    (void)fresh;
    return it->second;
  }

  Arg constant_int(int64_t v, ir::DType dt = ir::DType::Int64) {
    Arg a;
    a.kind = dt == ir::DType::Bool ? Arg::Kind::Bool : Arg::Kind::Int;
    a.constant = true;
    a.i = v;
    a.b = v != 0;
    a.dtype = dt;
    a.has_sizes = true;
    a.id = -1;
    return a;
  }

  Arg sym_arg(const std::string& name, const pt2::Node* n) {
    auto it = syms_.find(name);
    if (it == syms_.end()) fail(n, "symbolic value '" + name + "' is read before it is computed");
    Arg a;
    a.kind = it->second.dtype == ir::DType::Bool ? Arg::Kind::Bool
             : it->second.dtype == ir::DType::Double ? Arg::Kind::Float : Arg::Kind::Int;
    a.value = it->second.value;
    a.dtype = it->second.dtype;
    a.has_sizes = true;
    a.example = it->second.hint;
    a.id = id_of(name);
    return a;
  }

  Arg make_arg(const pt2::NamedArgument& na, const pt2::Node& n) {
    const pt2::Argument& x = na.arg;
    const std::string& k = x.kind;
    Arg a;
    if (k == "as_none") {
      a.kind = Arg::Kind::None;
      a.constant = true;
    } else if (k == "as_tensor") {
      a = tensor_arg(x.names.at(0), &n);
    } else if (k == "as_optional_tensor") {
      if (x.names.at(0).empty()) {
        a.kind = Arg::Kind::None;
        a.constant = true;
      } else {
        a = tensor_arg(x.names[0], &n);
      }
    } else if (k == "as_tensors" || k == "as_optional_tensors") {
      a.kind = Arg::Kind::List;
      for (const std::string& t : x.names) {
        Arg e;
        if (t.empty()) {
          e.kind = Arg::Kind::None;
          e.constant = true;
        } else {
          e = tensor_arg(t, &n);
        }
        a.elements.push_back(std::move(e));
      }
    } else if (k == "as_int") {
      a = constant_int(x.ints.at(0));
    } else if (k == "as_layout") {
      a = constant_int(c10_layout(x.ints.at(0)));
    } else if (k == "as_memory_format") {
      a = constant_int(c10_memory_format(x.ints.at(0)));
    } else if (k == "as_scalar_type") {
      a = constant_int(ir::scalar_type_from_dtype(pt2_dtype(x.ints.at(0), n)));
    } else if (k == "as_bool") {
      a = constant_int(x.ints.at(0), ir::DType::Bool);
    } else if (k == "as_float") {
      a.kind = Arg::Kind::Float;
      a.constant = true;
      a.f = x.floats.at(0);
      a.dtype = ir::DType::Double;
      a.has_sizes = true;
    } else if (k == "as_ints" || k == "as_bools") {
      a.kind = Arg::Kind::List;
      a.constant = true;
      for (int64_t v : x.ints) a.elements.push_back(constant_int(v, k == "as_bools" ? ir::DType::Bool : ir::DType::Int64));
    } else if (k == "as_floats") {
      a.kind = Arg::Kind::List;
      a.constant = true;
      for (double v : x.floats) {
        Arg e;
        e.kind = Arg::Kind::Float;
        e.constant = true;
        e.f = v;
        e.dtype = ir::DType::Double;
        e.has_sizes = true;
        a.elements.push_back(e);
      }
    } else if (k == "as_string") {
      a.kind = Arg::Kind::String;
      a.constant = true;
      a.s = x.strings.at(0);
    } else if (k == "as_device") {
      a.kind = Arg::Kind::Device;
      a.constant = true;
      a.s = x.strings.at(0);
    } else if (k == "as_sym_int" || k == "as_sym_bool" || k == "as_sym_float") {
      if (!x.names.empty()) a = sym_arg(x.names[0], &n);
      else if (k == "as_sym_float") {
        a.kind = Arg::Kind::Float;
        a.constant = true;
        a.f = x.floats.at(0);
        a.dtype = ir::DType::Double;
        a.has_sizes = true;
      } else {
        a = constant_int(x.ints.at(0), k == "as_sym_bool" ? ir::DType::Bool : ir::DType::Int64);
      }
    } else if (k == "as_sym_ints") {
      a.kind = Arg::Kind::List;
      a.constant = true;
      for (size_t i = 0; i < x.ints.size(); ++i) {
        if (!x.names[i].empty()) {
          a.elements.push_back(sym_arg(x.names[i], &n));
          a.constant = false;
        } else {
          a.elements.push_back(constant_int(x.ints[i]));
        }
      }
    } else {
      fail(&n, "its argument '" + na.name + "' is of a kind (" + k + ") the .pt2 frontend does not convert yet");
    }
    a.name = na.name;
    if (a.type_str.empty()) a.type_str = k.substr(3);
    return a;
  }

  ir::DType pt2_dtype(int64_t code, const pt2::Node& n) const {
    std::string name;
    const ir::DType dt = pt2::schema_dtype(code, &name);
    if (dt == ir::DType::Undefined) fail(&n, "dtype " + name + " has no ONNX counterpart");
    return dt;
  }

  OutputInfo output_info(const pt2::Argument& out, const pt2::Node& n) const {
    OutputInfo o;
    if (out.kind == "as_tensor") {
      const pt2::TensorMeta& m = meta(out.names.at(0), &n);
      o.kind = Arg::Kind::Tensor;
      o.dtype = m.dtype;
      o.has_sizes = true;
      for (const pt2::SymInt& s : m.sizes) o.sizes.push_back(s.value ? *s.value : s.hint ? *s.hint : 1);
    } else if (out.kind == "as_tensors") {
      o.kind = Arg::Kind::List;
      o.list_length = static_cast<int64_t>(out.names.size());
    } else if (out.kind == "as_sym_int") {
      o.kind = Arg::Kind::Int;
      o.dtype = ir::DType::Int64;
    } else if (out.kind == "as_none") {
      o.kind = Arg::Kind::None;
    } else {
      o.kind = Arg::Kind::Other;
    }
    return o;
  }

  void set_tensor(const std::string& name, ir::Value* v, const pt2::Node& n) {
    const pt2::TensorMeta& m = meta(name, &n);
    if (v->dtype() == ir::DType::Undefined) v->type().dtype = m.dtype;
    if (v->dtype() != m.dtype && m.dtype != ir::DType::Undefined)
      throw Error(Error::Kind::Internal, "converting " + n.op + " in " + where(n) + " produced " +
                                             ir::dtype_name(v->dtype()) + " where PyTorch computes " +
                                             ir::dtype_name(m.dtype) + " (a bug in its symbolic)");
    tensors_[name] = v;
  }

  // A default value of the operator's schema as an Arg.
  Arg arg_from_default(const c10::IValue& v, const pt2::Node& n, const std::string& name) {
    Arg a;
    a.constant = true;
    if (v.isNone()) {
      a.kind = Arg::Kind::None;
    } else if (v.isBool()) {
      a = constant_int(v.toBool(), ir::DType::Bool);
    } else if (v.isInt()) {
      a = constant_int(v.toInt());
    } else if (v.isDouble()) {
      a.kind = Arg::Kind::Float;
      a.f = v.toDouble();
      a.dtype = ir::DType::Double;
      a.has_sizes = true;
    } else if (v.isString()) {
      a.kind = Arg::Kind::String;
      a.s = v.toStringRef();
    } else if (v.isDevice()) {
      a.kind = Arg::Kind::Device;
      a.s = v.toDevice().str();
    } else if (v.isList()) {
      a.kind = Arg::Kind::List;
      for (const c10::IValue& e : v.toListRef()) a.elements.push_back(arg_from_default(e, n, name));
    } else {
      fail(&n, "the default of its argument '" + name + "' (" + v.tagKind() + ") cannot be converted");
    }
    return a;
  }

  // Writes through views: the program (torch.export's training IR) keeps
  // in-place ops, and one that writes into a view of a tensor (`z[:, :3].fill_(1)`)
  // or into a tensor with views also changes them, which converting it as
  // its out-of-place form would not. Such writes are refused (functional
  // programs, ep.run_decompositions(), have none); plain in-place ops on
  // tensors nothing views (relu_) convert.
  void track_aliases(const pt2::Node& n, const c10::FunctionSchema& schema) {
    auto tensor_input = [&](const std::string& param) -> std::string {
      for (const pt2::NamedArgument& na : n.inputs)
        if (na.name == param && na.arg.kind == "as_tensor") return na.arg.names.at(0);
      return "";
    };
    for (const c10::Argument& param : schema.arguments()) {
      const c10::AliasInfo* alias = param.alias_info();
      if (!alias || !alias->isWrite()) continue;
      const std::string written = tensor_input(param.name());
      if (written.empty()) continue;
      const std::string base = root_of(written);
      if (base != written || viewed_.count(base)) aliased_writes_.emplace_back(written, base);
    }
    for (size_t r = 0; r < schema.returns().size() && r < n.outputs.size(); ++r) {
      const c10::AliasInfo* alias = schema.returns()[r].alias_info();
      if (!alias || alias->isWrite() || n.outputs[r].kind != "as_tensor") continue;
      for (const c10::Argument& param : schema.arguments()) {
        const c10::AliasInfo* a = param.alias_info();
        if (!a || a->beforeSets() != alias->beforeSets()) continue;
        const std::string input = tensor_input(param.name());
        if (input.empty()) continue;
        const std::string base = root_of(input);
        view_of_[n.outputs[r].names.at(0)] = base;
        viewed_.insert(base);
      }
    }
  }

  std::string root_of(const std::string& name) const {
    auto it = view_of_.find(name);
    return it == view_of_.end() ? name : it->second;
  }

  // The node's arguments in the order of the operator's schema: the program
  // leaves out arguments at their default value; LibTorch's schema has them.
  std::vector<Arg> schema_args(const pt2::Node& n) {
    const std::string overload = n.overload == "default" ? "" : n.overload;
    auto handle = c10::Dispatcher::singleton().findSchema(c10::OperatorName(n.op, overload));
    std::vector<Arg> args;
    if (!handle) {  // an operator this LibTorch does not know: as the program has it
      for (const pt2::NamedArgument& na : n.inputs) args.push_back(make_arg(na, n));
      return args;
    }
    const c10::FunctionSchema& schema = handle->schema();
    track_aliases(n, schema);
    std::vector<bool> used(n.inputs.size(), false);
    for (size_t i = 0; i < schema.arguments().size(); ++i) {
      const c10::Argument& param = schema.arguments()[i];
      size_t found = n.inputs.size();
      for (size_t k = 0; k < n.inputs.size() && found == n.inputs.size(); ++k)
        if (!used[k] && n.inputs[k].name == param.name()) found = k;
      if (found < n.inputs.size()) {
        used[found] = true;
        args.push_back(make_arg(n.inputs[found], n));
      } else if (param.default_value()) {
        args.push_back(arg_from_default(*param.default_value(), n, param.name()));
        args.back().name = param.name();
      } else if (param.type()->kind() == c10::TypeKind::OptionalType) {
        args.push_back(arg_from_default(c10::IValue(), n, param.name()));
        args.back().name = param.name();
      } else {
        fail(&n, "its argument '" + param.name() + "' is missing (this LibTorch's schema: " + c10::toString(schema) + ")");
      }
    }
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (!used[k]) fail(&n, "its argument '" + n.inputs[k].name + "' is not in this LibTorch's schema of " + n.op);
    return args;
  }

  void convert_node(const pt2::Node& n) {
    graph_->set_current_origin(origin_of(n));
    if (converted_by_frontend(n)) return convert_structural(n);
    const SymbolicFn* fn = resolve(registry_, n.op, options_.opset_version);
    if (!fn) fail(&n, "no symbolic");  // (find_unsupported reported these first)
    std::vector<Arg> args = schema_args(n);
    std::vector<OutputInfo> outs;
    for (const pt2::Argument& o : n.outputs) outs.push_back(output_info(o, n));
    SymbolicContext ctx(canonical(n.op), std::move(args), outs, graph_, options_.opset_version, this);
    try {
      (*fn)(ctx);
    } catch (const SymbolicError& e) {
      fail(&n, e.what());
    }
    const auto& results = ctx.results();
    // A write into a view (or into a viewed tensor) that changes nothing (dropout_ in eval) is harmless.
    for (const auto& [written, base] : aliased_writes_) {
      const bool unchanged = !results.empty() && results[0].set && tensors_.count(written) &&
                             results[0].value == tensors_[written];
      if (!unchanged)
        fail(&n, "it writes into " + (base != written ? "a view of " + base : "'" + written + "', which has views") +
                     ", which the .pt2 frontend does not convert yet: save the functional program instead "
                     "(ep = ep.run_decompositions() before torch.export.save)");
    }
    aliased_writes_.clear();
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const pt2::Argument& o = n.outputs[i];
      if (o.kind == "as_none") continue;
      if (i >= results.size() || !results[i].set) {
        if (o.kind == "as_tensor" && !o.names.empty()) unset_.insert(o.names[0]);
        continue;
      }
      const OutputSlot& r = results[i];
      if (o.kind == "as_tensor") {
        set_tensor(o.names.at(0), r.value, n);
        // an in-place op's first argument now holds its result: later reads of it read that
        if (i == 0 && in_place(n.op) && !n.inputs.empty() && n.inputs[0].arg.kind == "as_tensor")
          tensors_[n.inputs[0].arg.names.at(0)] = r.value;
      } else if (o.kind == "as_tensors") {
        if (!r.is_list || r.elements.size() != o.names.size())
          fail(&n, "its symbolic returned " + std::to_string(r.elements.size()) + " tensors where PyTorch has " +
                       std::to_string(o.names.size()));
        for (size_t e = 0; e < o.names.size(); ++e)
          if (!o.names[e].empty()) set_tensor(o.names[e], r.elements[e], n);
      } else if (o.kind == "as_sym_int" && !o.names.empty()) {
        syms_[o.names[0]] = Sym{r.value, std::nullopt, ir::DType::Int64};
      } else {
        fail(&n, "its output is of a kind (" + o.kind + ") the .pt2 frontend does not convert yet");
      }
    }
  }

  void convert_structural(const pt2::Node& n) {
    if (is_assert(n.op)) return;
    std::vector<Arg> args;
    for (const pt2::NamedArgument& na : n.inputs) args.push_back(make_arg(na, n));
    if (n.target == "_operator.getitem") {
      const Arg& list = args.at(0);
      if (list.kind != Arg::Kind::List || !args.at(1).constant) fail(&n, "getitem of something other than a list");
      int64_t i = args[1].i;
      if (i < 0) i += static_cast<int64_t>(list.elements.size());
      if (i < 0 || i >= static_cast<int64_t>(list.elements.size())) fail(&n, "index out of range");
      if (n.outputs.at(0).kind == "as_tensor") tensors_[n.outputs[0].names.at(0)] = list.elements[i].value;
      return;
    }
    const std::string out = n.outputs.empty() || n.outputs[0].names.empty() ? "" : n.outputs[0].names[0];
    if (out.empty()) fail(&n, "its result has no name");
    const std::string target = n.op.empty() ? n.target : n.op;
    std::vector<OutputInfo> none;
    SymbolicContext ctx(target, std::move(args), none, graph_, options_.opset_version, this);
    ir::Value* v = nullptr;
    ir::DType dt = ir::DType::Int64;
    if (n.op == "aten::sym_size") {
      v = helpers::dim_size(ctx, ctx.in(0), helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0)));
    } else if (n.op == "aten::sym_numel") {
      v = ctx.op("Size", {ctx.in(0)});
    } else {
      const std::string& t = n.target;
      auto it = size_operators().find(t);
      const bool binary = it != size_operators().end() && !it->second.empty();
      const bool comparison = binary && (it->second == "Equal" || it->second.find("Less") == 0 ||
                                         it->second.find("Greater") == 0);
      const bool floating = ctx.arg(0).kind == Arg::Kind::Float || (ctx.num_args() > 1 && ctx.arg(1).kind == Arg::Kind::Float);
      const ir::DType work = floating || t == "_operator.truediv" ? ir::DType::Double : ir::DType::Int64;
      if (binary) {
        const std::string op = comparison && options_.opset_version < 12 && it->second.find("OrEqual") != std::string::npos
                                   ? "" : it->second;
        if (op.empty()) fail(&n, "needs opset 12 (LessOrEqual / GreaterOrEqual)");
        v = ctx.op(op, {ctx.in_as(0, work), ctx.in_as(1, work)});
        dt = comparison ? ir::DType::Bool : work;
      } else if (t == "_operator.floordiv" || t == "_operator.mod") {
        // floor(a / b) on doubles (exact for sizes), then a - b * q for mod
        ir::Value* a = ctx.in_as(0, ir::DType::Double);
        ir::Value* b = ctx.in_as(1, ir::DType::Double);
        ir::Value* q = ctx.op("Floor", {ctx.op("Div", {a, b})});
        if (t == "_operator.mod") q = ctx.op("Sub", {a, ctx.op("Mul", {b, q})});
        v = ctx.cast(q, work);
        v->type().dtype = work;
        dt = work;
      } else if (t == "_operator.truediv") {
        v = ctx.op("Div", {ctx.in_as(0, ir::DType::Double), ctx.in_as(1, ir::DType::Double)});
        dt = ir::DType::Double;
      } else if (t == "_operator.neg") {
        v = ctx.op("Neg", {ctx.in_as(0, work)});
        dt = work;
      } else if (t == "_operator.not_") {
        v = ctx.op("Not", {ctx.in_as(0, ir::DType::Bool)});
        dt = ir::DType::Bool;
      } else {
        fail(&n, "this operation on sizes is not converted yet");
      }
    }
    v->type().dtype = dt;
    if (!v->type().has_shape) v->set_type(ir::ValueType::tensor(dt, {}));
    std::optional<double> hint;
    if (auto s = p_.graph.sym_int_values.find(out); s != p_.graph.sym_int_values.end()) {
      if (s->second.value) hint = static_cast<double>(*s->second.value);
      else if (s->second.hint) hint = static_cast<double>(*s->second.hint);
    }
    syms_[out] = Sym{v, hint, dt};
  }

  // ---- graph outputs: the user outputs (mutated buffers are not outputs, as torch.onnx has it)
  void make_outputs() {
    size_t k = 0;
    std::set<ir::Value*> seen;
    for (const pt2::OutputSpec& s : p_.output_specs) {
      if (s.kind != pt2::OutputSpec::Kind::UserOutput) continue;
      const std::string name = k < options_.output_names.size() ? options_.output_names[k] : default_output_name(k);
      ++k;
      ir::Value* v = nullptr;
      if (auto t = tensors_.find(s.arg); t != tensors_.end()) v = t->second;
      else if (auto y = syms_.find(s.arg); y != syms_.end()) v = y->second.value;
      if (!v) fail(nullptr, "output '" + s.arg + "' is not computed" + (unset_.count(s.arg) ? " (its symbolic left it out)" : ""));
      if (!v->producer() || seen.count(v)) {
        ir::Value* id = graph_->create_node("Identity", {v}, 1)->output(0);
        id->set_type(v->type());
        v = id;
      }
      seen.insert(v);
      if (auto m = p_.graph.tensor_values.find(s.arg); m != p_.graph.tensor_values.end()) {
        ir::ValueType t = type_of(m->second, "");
        t.dtype = v->dtype();
        v->set_type(t);
      }
      if (graph_->names().taken(name) && v->name() != name) {
        if (k <= options_.output_names.size())
          throw Error(Error::Kind::Usage, "output name '" + name + "' is already the name of another value");
        graph_->rename(v, graph_->unique_name(name));
      } else {
        graph_->rename(v, name);
      }
      if (auto it = options_.dynamic_axes.find(name); it != options_.dynamic_axes.end())
        for (const DynamicAxis& a : it->second)
          if (a.axis >= 0 && a.axis < static_cast<int64_t>(v->type().shape.size()))
            v->type().shape[static_cast<size_t>(a.axis)] = ir::Dim::named(a.name);
      graph_->add_output(v);
    }
    if (k == 0) fail(nullptr, "the program returns no tensors");
  }

  const pt2::Program& p_;
  const Registry& registry_;
  const ExportOptions& options_;
  ir::Graph* graph_ = nullptr;
  std::map<std::string, ir::Value*> tensors_;
  std::map<std::string, Sym> syms_;
  std::set<std::string> unset_;
  std::map<std::string, std::string> view_of_;  // a view's name -> the tensor it views (its root)
  std::set<std::string> viewed_;                // tensors with views
  std::vector<std::pair<std::string, std::string>> aliased_writes_;  // the node being converted: (written, root)
  std::map<std::string, int64_t> ids_;
  std::map<std::string, std::string> symbol_names_;
  std::set<std::string> used_axes_;
  std::shared_ptr<const frontend::ZipFile> zip_;
};

}  // namespace

bool converted_by_frontend(const pt2::Node& n) {
  return n.op == "aten::sym_size" || n.op == "aten::sym_numel" || is_assert(n.op) || size_operators().count(n.target);
}

std::vector<UnsupportedOperator> unsupported_operators(const pt2::Program& program, const Registry& registry,
                                                       int opset) {
  std::map<std::string, UnsupportedOperator> found;
  collect_unsupported(program.graph, registry, opset, found);
  std::vector<UnsupportedOperator> out;
  for (auto& [k, u] : found) out.push_back(std::move(u));
  return out;
}

ir::Model convert_program(const pt2::Program& program, const Registry& registry, const ExportOptions& options) {
  return ProgramConverter(program, registry, options).run();
}

}  // namespace torch2onnx::convert
