#include "onnx_passes/evaluate.h"

#include <ATen/ATen.h>

#include <functional>
#include <unordered_map>

#include "onnx_passes/transposed.h"

namespace torch2onnx::onnx_passes {
namespace {

using Inputs = std::vector<const ir::Tensor*>;
using Outputs = std::vector<ir::Tensor>;
using Kernel = std::function<std::optional<Outputs>(const ir::Node&, const Inputs&, int64_t)>;

at::ScalarType to_aten(ir::DType t) {
  switch (t) {
    case ir::DType::Float: return at::kFloat;
    case ir::DType::Double: return at::kDouble;
    case ir::DType::Float16: return at::kHalf;
    case ir::DType::BFloat16: return at::kBFloat16;
    case ir::DType::Int64: return at::kLong;
    case ir::DType::Int32: return at::kInt;
    case ir::DType::Int16: return at::kShort;
    case ir::DType::Int8: return at::kChar;
    case ir::DType::UInt8: return at::kByte;
    case ir::DType::Bool: return at::kBool;
    default: return at::ScalarType::Undefined;
  }
}

ir::DType from_aten(at::ScalarType t) { return ir::dtype_from_scalar_type(static_cast<int64_t>(t)); }

// Zero-copy view of IR data as an ATen tensor (read-only use). The view
// holds the IR tensor's bytes alive: a result that aliases them (Cast to the
// same dtype, Expand to the same shape) stays valid when the input goes.
at::Tensor view(const ir::Tensor& t) {
  at::ScalarType st = to_aten(t.dtype());
  if (st == at::ScalarType::Undefined) throw std::runtime_error("unsupported dtype");
  if (t.numel() == 0) return at::empty(t.dims(), at::TensorOptions().dtype(st));
  return at::from_blob(
      const_cast<uint8_t*>(t.data()), t.dims(), [keep = t](void*) {}, at::TensorOptions().dtype(st));
}

ir::Tensor to_ir(at::Tensor t) {
  t = t.contiguous();
  ir::DType dt = from_aten(t.scalar_type());
  auto holder = std::make_shared<at::Tensor>(t);
  return ir::Tensor::borrowed(dt, t.sizes().vec(), t.numel() ? t.data_ptr() : nullptr, t.nbytes(),
                              std::shared_ptr<const void>(holder, holder.get()));
}

int64_t norm_axis(int64_t a, int64_t rank) { return a < 0 ? a + rank : a; }

// Axes from the attribute (older opsets) or the given input (newer ones).
std::optional<std::vector<int64_t>> axes_of(const ir::Node& n, const Inputs& in, size_t input_index) {
  if (n.has_attr("axes")) return n.attr_ints("axes");
  if (in.size() > input_index && in[input_index]) return in[input_index]->to_int64s();
  return std::nullopt;
}

Outputs one(at::Tensor t) { return {to_ir(std::move(t))}; }

// A shape-only stand-in for x (meta device: no data), for working out the
// dims of a reshape-like op.
at::Tensor meta(const ir::Tensor& x) {
  at::ScalarType st = to_aten(x.dtype());
  if (st == at::ScalarType::Undefined) throw std::runtime_error("unsupported dtype");
  return at::empty(x.dims(), at::TensorOptions().dtype(st).device(at::kMeta));
}

// Reshape-like results share x's bytes (no copy; a computed x stays computed).
Outputs same_bytes(const ir::Tensor& x, const at::Tensor& shaped) { return {x.reshaped(shaped.sizes().vec())}; }

// Transposes of tensors at least this large are computed as they are written.
constexpr size_t kLazyTransposeBytes = 64 * 1024;

std::unordered_map<std::string, Kernel> make_kernels() {
  std::unordered_map<std::string, Kernel> k;
  auto unary = [&k](const char* name, at::Tensor (*fn)(const at::Tensor&)) {
    k[name] = [fn](const ir::Node&, const Inputs& in, int64_t) -> std::optional<Outputs> { return one(fn(view(*in[0]))); };
  };
  unary("Neg", [](const at::Tensor& x) { return at::neg(x); });
  unary("Abs", [](const at::Tensor& x) { return at::abs(x); });
  unary("Sqrt", [](const at::Tensor& x) { return at::sqrt(x); });
  unary("Reciprocal", [](const at::Tensor& x) { return at::reciprocal(x); });
  unary("Exp", [](const at::Tensor& x) { return at::exp(x); });
  unary("Log", [](const at::Tensor& x) { return at::log(x); });
  unary("Floor", [](const at::Tensor& x) { return at::floor(x); });
  unary("Ceil", [](const at::Tensor& x) { return at::ceil(x); });
  unary("Round", [](const at::Tensor& x) { return at::round(x); });  // halves to even, as ONNX
  unary("Not", [](const at::Tensor& x) { return at::logical_not(x); });
  unary("Identity", [](const at::Tensor& x) { return x.clone(); });
  unary("Sign", [](const at::Tensor& x) { return at::sign(x); });

  auto binary = [&k](const char* name, at::Tensor (*fn)(const at::Tensor&, const at::Tensor&)) {
    k[name] = [fn](const ir::Node&, const Inputs& in, int64_t) -> std::optional<Outputs> {
      return one(fn(view(*in[0]), view(*in[1])));
    };
  };
  binary("Add", [](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); });
  binary("Sub", [](const at::Tensor& a, const at::Tensor& b) { return at::sub(a, b); });
  binary("Mul", [](const at::Tensor& a, const at::Tensor& b) { return at::mul(a, b); });
  binary("Div", [](const at::Tensor& a, const at::Tensor& b) {
    // Integer division truncates in ONNX.
    if (at::isIntegralType(a.scalar_type(), true)) return at::div(a, b, "trunc");
    return at::div(a, b);
  });
  binary("Pow", [](const at::Tensor& a, const at::Tensor& b) { return at::pow(a, b).to(a.scalar_type()); });
  binary("Equal", [](const at::Tensor& a, const at::Tensor& b) { return at::eq(a, b); });
  binary("Less", [](const at::Tensor& a, const at::Tensor& b) { return at::lt(a, b); });
  binary("Greater", [](const at::Tensor& a, const at::Tensor& b) { return at::gt(a, b); });
  binary("LessOrEqual", [](const at::Tensor& a, const at::Tensor& b) { return at::le(a, b); });
  binary("GreaterOrEqual", [](const at::Tensor& a, const at::Tensor& b) { return at::ge(a, b); });
  binary("And", [](const at::Tensor& a, const at::Tensor& b) { return at::logical_and(a, b); });
  binary("Or", [](const at::Tensor& a, const at::Tensor& b) { return at::logical_or(a, b); });
  binary("Xor", [](const at::Tensor& a, const at::Tensor& b) { return at::logical_xor(a, b); });
  binary("MatMul", [](const at::Tensor& a, const at::Tensor& b) { return at::matmul(a, b); });

  k["Mod"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    at::Tensor a = view(*in[0]), b = view(*in[1]);
    return one(n.attr_i("fmod", 0) ? at::fmod(a, b) : at::remainder(a, b));
  };
  auto variadic = [&k](const char* name, at::Tensor (*fn)(const at::Tensor&, const at::Tensor&)) {
    k[name] = [fn](const ir::Node&, const Inputs& in, int64_t) -> std::optional<Outputs> {
      at::Tensor acc = view(*in[0]);
      for (size_t i = 1; i < in.size(); ++i) acc = fn(acc, view(*in[i]));
      return one(acc.clone());
    };
  };
  variadic("Max", [](const at::Tensor& a, const at::Tensor& b) { return at::maximum(a, b); });
  variadic("Min", [](const at::Tensor& a, const at::Tensor& b) { return at::minimum(a, b); });
  variadic("Sum", [](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); });

  k["Cast"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    at::ScalarType to = to_aten(static_cast<ir::DType>(n.attr_i("to", 0)));
    if (to == at::ScalarType::Undefined) return std::nullopt;
    return one(view(*in[0]).to(to));
  };
  k["Reshape"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    at::Tensor x = meta(*in[0]);
    std::vector<int64_t> shape = in[1]->to_int64s();
    const bool allowzero = n.attr_i("allowzero", 0) != 0;
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] == 0 && !allowzero) {
        if (i >= static_cast<size_t>(x.dim())) return std::nullopt;
        shape[i] = x.size(static_cast<int64_t>(i));
      }
    return same_bytes(*in[0], x.reshape(shape));
  };
  k["Flatten"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    at::Tensor x = meta(*in[0]);
    int64_t axis = norm_axis(n.attr_i("axis", 1), x.dim());
    int64_t outer = 1, inner = 1;  // (each a product of its own dims: an empty tensor's [0, 3, 4] is [0, 12])
    for (int64_t i = 0; i < x.dim(); ++i) (i < axis ? outer : inner) *= x.size(i);
    return same_bytes(*in[0], x.reshape({outer, inner}));
  };
  k["Transpose"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    std::vector<int64_t> perm = n.attr_ints("perm");
    if (perm.empty())
      for (int64_t i = in[0]->rank() - 1; i >= 0; --i) perm.push_back(i);
    if (in[0]->nbytes() >= kLazyTransposeBytes) return Outputs{transposed(*in[0], perm)};
    at::Tensor x = view(*in[0]);
    return one(x.permute(perm).contiguous());
  };
  k["Unsqueeze"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    auto axes = axes_of(n, in, 1);
    if (!axes) return std::nullopt;
    at::Tensor x = meta(*in[0]);
    const int64_t out_rank = x.dim() + static_cast<int64_t>(axes->size());
    std::vector<int64_t> sorted;
    for (int64_t a : *axes) sorted.push_back(norm_axis(a, out_rank));
    std::sort(sorted.begin(), sorted.end());
    for (int64_t a : sorted) x = x.unsqueeze(a);
    return same_bytes(*in[0], x);
  };
  k["Squeeze"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    at::Tensor x = meta(*in[0]);
    auto axes = axes_of(n, in, 1);
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < x.dim(); ++i) {
      bool drop = false;
      if (axes) {
        for (int64_t a : *axes) drop = drop || norm_axis(a, x.dim()) == i;
      } else {
        drop = x.size(i) == 1;
      }
      if (!drop) keep.push_back(x.size(i));
    }
    return same_bytes(*in[0], x.reshape(keep));
  };
  k["Concat"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    std::vector<at::Tensor> parts;
    for (const ir::Tensor* t : in) parts.push_back(view(*t));
    int64_t axis = norm_axis(n.attr_i("axis", 0), parts.at(0).dim());
    return one(at::cat(parts, axis));
  };
  k["Gather"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    at::Tensor x = view(*in[0]);
    int64_t axis = norm_axis(n.attr_i("axis", 0), x.dim());
    at::Tensor idx = view(*in[1]).to(at::kLong);
    idx = at::where(idx < 0, idx + x.size(axis), idx);
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + axis);
    for (int64_t d : idx.sizes()) shape.push_back(d);
    for (int64_t i = axis + 1; i < x.dim(); ++i) shape.push_back(x.size(i));
    return one(at::index_select(x, axis, idx.flatten()).reshape(shape));
  };
  k["Slice"] = [](const ir::Node& n, const Inputs& in, int64_t opset) -> std::optional<Outputs> {
    at::Tensor x = view(*in[0]);
    std::vector<int64_t> starts, ends, axes, steps;
    if (opset < 10) {
      starts = n.attr_ints("starts");
      ends = n.attr_ints("ends");
      axes = n.attr_ints("axes");
    } else {
      starts = in[1]->to_int64s();
      ends = in[2]->to_int64s();
      if (in.size() > 3 && in[3]) axes = in[3]->to_int64s();
      if (in.size() > 4 && in[4]) steps = in[4]->to_int64s();
    }
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t axis = norm_axis(axes[i], x.dim());
      const int64_t dim = x.size(axis), step = steps[i];
      if (step == 0) return std::nullopt;
      int64_t s = starts[i], e = ends[i];
      s = s < 0 ? s + dim : s;
      e = e < 0 ? e + dim : e;
      std::vector<int64_t> idx;
      if (step > 0) {
        s = std::clamp<int64_t>(s, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        for (int64_t j = s; j < e; j += step) idx.push_back(j);
      } else {
        s = std::clamp<int64_t>(s, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        for (int64_t j = s; j > e; j += step) idx.push_back(j);
      }
      x = at::index_select(x, axis, at::tensor(idx, at::kLong));
    }
    return one(x);
  };
  // ScatterElements(data, indices, updates, axis) without a reduction (masks
  // built by slice assignment of constants: Swin's shifted windows).
  k["ScatterElements"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    if (n.has_attr("reduction") && n.attr("reduction")->s != "none") return std::nullopt;
    at::Tensor x = view(*in[0]);
    const int64_t axis = norm_axis(n.attr_i("axis", 0), x.dim());
    at::Tensor idx = view(*in[1]).to(at::kLong);
    idx = at::where(idx < 0, idx + x.size(axis), idx);
    return one(x.clone().scatter_(axis, idx, view(*in[2]).to(x.scalar_type())));
  };
  // ScatterND(data, indices, updates) without a reduction.
  k["ScatterND"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    if (n.has_attr("reduction") && n.attr("reduction")->s != "none") return std::nullopt;
    at::Tensor x = view(*in[0]).clone();
    at::Tensor idx = view(*in[1]).to(at::kLong);
    const int64_t k_dims = idx.size(-1);
    if (k_dims > x.dim()) return std::nullopt;
    c10::List<c10::optional<at::Tensor>> index;  // (c10::optional: LibTorch 1.13's type)
    for (int64_t d = 0; d < k_dims; ++d) {
      at::Tensor i = idx.select(-1, d);
      index.push_back(at::where(i < 0, i + x.size(d), i));
    }
    x.index_put_(index, view(*in[2]).to(x.scalar_type()));
    return one(x);
  };
  k["Shape"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    std::vector<int64_t> dims = in[0]->dims();
    const int64_t r = static_cast<int64_t>(dims.size());
    int64_t s = std::clamp<int64_t>(norm_axis(n.attr_i("start", 0), r), 0, r);
    int64_t e = n.has_attr("end") ? std::clamp<int64_t>(norm_axis(n.attr_i("end", r), r), 0, r) : r;
    std::vector<int64_t> out(dims.begin() + s, dims.begin() + std::max(s, e));
    return Outputs{ir::Tensor::from_int64s(out)};
  };
  k["Size"] = [](const ir::Node&, const Inputs& in, int64_t) -> std::optional<Outputs> {
    return Outputs{ir::Tensor::from_int64s({in[0]->numel()}, {})};
  };
  k["Where"] = [](const ir::Node&, const Inputs& in, int64_t) -> std::optional<Outputs> {
    return one(at::where(view(*in[0]), view(*in[1]), view(*in[2])));
  };
  k["Expand"] = [](const ir::Node&, const Inputs& in, int64_t) -> std::optional<Outputs> {
    at::Tensor x = view(*in[0]);
    std::vector<int64_t> shape = in[1]->to_int64s();
    auto target = at::infer_size(x.sizes(), shape);
    return one(x.expand(target).contiguous());
  };
  k["ConstantOfShape"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    std::vector<int64_t> shape = in[0]->to_int64s();
    const ir::Attribute* v = n.attr("value");
    if (v && v->t) return one(view(*v->t).reshape({}).expand(shape).contiguous());
    return one(at::zeros(shape, at::kFloat));
  };
  k["Range"] = [](const ir::Node&, const Inputs& in, int64_t) -> std::optional<Outputs> {
    at::Tensor s = view(*in[0]), l = view(*in[1]), d = view(*in[2]);
    if (s.is_floating_point()) {
      double start = s.item<double>(), limit = l.item<double>(), delta = d.item<double>();
      int64_t count = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
      return one((at::arange(count, at::kDouble) * delta + start).to(s.scalar_type()));
    }
    int64_t start = s.item<int64_t>(), limit = l.item<int64_t>(), delta = d.item<int64_t>();
    if (delta == 0) return std::nullopt;
    int64_t count = std::max<int64_t>(0, (limit - start + delta + (delta > 0 ? -1 : 1)) / delta);
    return one((at::arange(count, at::kLong) * delta + start).to(s.scalar_type()));
  };
  auto reduce = [&k](const char* name, int kind) {
    k[name] = [kind](const ir::Node& n, const Inputs& in, int64_t opset) -> std::optional<Outputs> {
      at::Tensor x = view(*in[0]);
      std::optional<std::vector<int64_t>> axes;
      if (n.has_attr("axes")) axes = n.attr_ints("axes");
      else if (in.size() > 1 && in[1]) axes = in[1]->to_int64s();
      (void)opset;
      const bool keep = n.attr_i("keepdims", 1) != 0;
      std::vector<int64_t> dims;
      if (axes && !axes->empty()) {
        for (int64_t a : *axes) dims.push_back(norm_axis(a, x.dim()));
      } else {
        if (n.attr_i("noop_with_empty_axes", 0)) return one(x.clone());
        for (int64_t i = 0; i < x.dim(); ++i) dims.push_back(i);
      }
      at::Tensor r = x;
      std::sort(dims.rbegin(), dims.rend());
      for (int64_t d : dims) {
        switch (kind) {
          case 0: r = r.sum(d, keep, r.scalar_type()); break;
          case 1: r = r.prod(d, keep, r.scalar_type()); break;
          case 2: r = std::get<0>(r.max(d, keep)); break;
          case 3: r = std::get<0>(r.min(d, keep)); break;
          default: r = r.mean(d, keep); break;
        }
      }
      return one(r.contiguous());
    };
  };
  reduce("ReduceSum", 0);
  reduce("ReduceProd", 1);
  reduce("ReduceMax", 2);
  reduce("ReduceMin", 3);
  reduce("ReduceMean", 4);
  k["Tile"] = [](const ir::Node&, const Inputs& in, int64_t) -> std::optional<Outputs> {
    return one(view(*in[0]).repeat(in[1]->to_int64s()));
  };
  k["Split"] = [](const ir::Node& n, const Inputs& in, int64_t) -> std::optional<Outputs> {
    at::Tensor x = view(*in[0]);
    int64_t axis = norm_axis(n.attr_i("axis", 0), x.dim());
    std::vector<int64_t> sizes = n.has_attr("split") ? n.attr_ints("split")
                                 : in.size() > 1 && in[1] ? in[1]->to_int64s()
                                                          : std::vector<int64_t>{};
    if (sizes.empty()) {
      const int64_t parts = static_cast<int64_t>(n.num_outputs());
      if (x.size(axis) % parts) return std::nullopt;
      sizes.assign(static_cast<size_t>(parts), x.size(axis) / parts);
    }
    Outputs out;
    for (const at::Tensor& p : x.split_with_sizes(sizes, axis)) out.push_back(to_ir(p.clone()));
    return out;
  };
  k["Clip"] = [](const ir::Node& n, const Inputs& in, int64_t opset) -> std::optional<Outputs> {
    at::Tensor x = view(*in[0]);
    if (opset < 11) {
      c10::optional<at::Scalar> lo, hi;
      if (n.has_attr("min")) lo = n.attr_f("min", 0);
      if (n.has_attr("max")) hi = n.attr_f("max", 0);
      return one(at::clamp(x, lo, hi));
    }
    c10::optional<at::Tensor> lo, hi;
    if (in.size() > 1 && in[1]) lo = view(*in[1]);
    if (in.size() > 2 && in[2]) hi = view(*in[2]);
    return one(at::clamp(x, lo, hi));
  };
  k["NonZero"] = [](const ir::Node&, const Inputs& in, int64_t) -> std::optional<Outputs> {
    return one(at::nonzero(view(*in[0])).t().contiguous());
  };
  return k;
}

const std::unordered_map<std::string, Kernel>& kernels() {
  static const auto k = make_kernels();
  return k;
}

}  // namespace

bool can_evaluate(const ir::Node& node) {
  return node.domain().empty() && kernels().count(node.op_type()) != 0;
}

std::optional<std::vector<ir::Tensor>> evaluate(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                                                int64_t opset) {
  auto it = kernels().find(node.op_type());
  if (it == kernels().end() || !node.domain().empty()) return std::nullopt;
  try {
    auto out = it->second(node, inputs, opset);
    if (out && out->size() != node.num_outputs()) return std::nullopt;
    return out;
  } catch (const std::exception&) {
    return std::nullopt;  // leave the node for the runtime to compute
  }
}

}  // namespace torch2onnx::onnx_passes
