// Pooling: max_pool / avg_pool (1d-3d, with ceil_mode, dilation,
// count_include_pad, divisor_override), max_pool with indices, adaptive
// average / max pooling (with indices), max_unpool. Unbatched inputs ([C, *spatial]) get a
// batch axis for the ONNX op.
#include <cmath>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

std::vector<int64_t> expand_to(std::vector<int64_t> v, size_t n, int64_t dflt) {
  if (v.empty()) v.assign(n, dflt);
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  return v;
}

bool all_ones(const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x != 1) return false;
  return true;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// The input's spatial dimensions: `nd` for a pooling op; the input is
// batched ([N, C, *]) or not ([C, *]).
struct PoolInput {
  size_t nd = 0;
  bool unbatched = false;
  std::vector<int64_t> spatial;  // example sizes of the spatial axes
};

PoolInput pool_input(SymbolicContext& ctx, size_t nd) {
  const auto& sizes = ctx.sizes(0);
  PoolInput p;
  p.nd = nd;
  if (sizes.size() == nd + 1)
    p.unbatched = true;
  else if (sizes.size() != nd + 2)
    ctx.fail("expected a " + std::to_string(nd + 1) + "-D or " + std::to_string(nd + 2) + "-D input, got " +
             std::to_string(sizes.size()) + "-D");
  p.spatial.assign(sizes.end() - static_cast<std::ptrdiff_t>(nd), sizes.end());
  return p;
}

// Lowerings that build the spatial sizes into the graph (windows, pads,
// divisors) need them static: a dynamic one fails the conversion.
void require_static_spatial(SymbolicContext& ctx, const PoolInput& in) {
  for (size_t i = 0; i < in.nd; ++i) ctx.static_dim(0, -static_cast<int64_t>(in.nd - i));
}

// Number of spatial dimensions from the operator name (max_pool2d -> 2).
size_t spatial_dims(const SymbolicContext& ctx) {
  const std::string& k = ctx.kind();
  for (size_t i = 0; i + 1 < k.size(); ++i)
    if (k[i] >= '1' && k[i] <= '3' && k[i + 1] == 'd') return static_cast<size_t>(k[i] - '0');
  ctx.fail("cannot tell the number of spatial dimensions");
}

struct PoolGeometry {
  std::vector<int64_t> kernel, stride, pads, dilation;
  std::vector<int64_t> out;  // PyTorch's output sizes
};

// ONNX's pooling output size (its shape inference): the window count, rounded
// up with ceil_mode.
int64_t onnx_pooled_size(int64_t L, int64_t k, int64_t pads, int64_t stride, int64_t dil, bool ceil_mode) {
  const int64_t num = L + pads - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  return (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
}

// PyTorch's pooling output size (pooling_output_shape): ONNX's, but with
// ceil_mode a last window that would start in the end padding is dropped.
int64_t pooled_size(int64_t L, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  int64_t out = onnx_pooled_size(L, k, 2 * pad, stride, dil, ceil_mode);
  if (ceil_mode && (out - 1) * stride >= L + pad) --out;
  return out;
}

PoolGeometry geometry(SymbolicContext& ctx, const PoolInput& in, size_t kernel_i, size_t stride_i, size_t pad_i,
                      std::optional<size_t> dil_i, bool ceil_mode) {
  const size_t nd = in.nd;
  PoolGeometry g;
  g.kernel = expand_to(ctx.is(kernel_i), nd, 1);
  g.stride = ctx.num_args() > stride_i && !ctx.none(stride_i) ? ctx.is(stride_i) : std::vector<int64_t>{};
  if (g.stride.empty()) g.stride = g.kernel;
  g.stride = expand_to(g.stride, nd, 1);
  std::vector<int64_t> p = expand_to(ctx.is(pad_i), nd, 0);
  g.pads = p;
  g.pads.insert(g.pads.end(), p.begin(), p.end());
  g.dilation = dil_i ? expand_to(ctx.is(*dil_i), nd, 1) : std::vector<int64_t>(nd, 1);
  if (g.kernel.size() != nd || g.stride.size() != nd || p.size() != nd || g.dilation.size() != nd)
    ctx.fail("pooling parameters do not match the input's " + std::to_string(nd) + " spatial dimensions");
  for (size_t i = 0; i < nd; ++i) {
    if (g.kernel[i] <= 0 || g.stride[i] <= 0 || g.dilation[i] <= 0 || p[i] < 0 || 2 * p[i] > g.kernel[i])
      ctx.fail("invalid pooling parameters");
    g.out.push_back(pooled_size(in.spatial[i], g.kernel[i], p[i], g.stride[i], g.dilation[i], ceil_mode));
    if (g.out.back() <= 0) ctx.fail("the pooling output would be empty");
  }
  return g;
}

// Opset 9 has no ceil_mode: the same windows come from extra end padding,
// computed from the (static) input size.
void ceil_to_pads(const PoolInput& in, PoolGeometry& g) {
  const size_t nd = g.kernel.size();
  for (size_t i = 0; i < nd; ++i) {
    const int64_t eff = g.dilation[i] * (g.kernel[i] - 1) + 1;
    const int64_t need = (g.out[i] - 1) * g.stride[i] + eff - (in.spatial[i] + g.pads[i] + g.pads[i + nd]);
    if (need > 0) g.pads[i + nd] += need;
  }
}

// Whether ONNX's ceil_mode would count a window PyTorch drops (one that
// starts in the end padding: ONNX's shape inference counts it, PyTorch and
// ONNX Runtime do not), with every spatial size static: then the windows are
// made by end padding instead (ceil_to_pads), so the shapes agree.
bool ceil_drops_window(SymbolicContext& ctx, const PoolInput& in, const PoolGeometry& g) {
  const size_t nd = in.nd;
  bool drops = false;
  for (size_t i = 0; i < nd; ++i) {
    if (!ctx.known_static_dim(0, -static_cast<int64_t>(nd - i))) return false;
    drops = drops || onnx_pooled_size(in.spatial[i], g.kernel[i], g.pads[i] + g.pads[i + nd], g.stride[i],
                                      g.dilation[i], true) != g.out[i];
  }
  return drops;
}

// ceil_attr: use the ceil_mode attribute (opset 10+; opset 9 pads instead).
ir::Attributes pool_attrs(const PoolGeometry& g, bool ceil_attr, bool with_dilations) {
  ir::Attributes a{{"kernel_shape", g.kernel}, {"pads", g.pads}, {"strides", g.stride}};
  if (ceil_attr) a.emplace_back("ceil_mode", int64_t{1});
  if (with_dilations) a.emplace_back("dilations", g.dilation);
  return a;
}

ir::Value* batched(SymbolicContext& ctx, const PoolInput& in, ir::Value* x) {
  return in.unbatched ? helpers::unsqueeze(ctx, x, {0}) : x;
}
ir::Value* unbatched(SymbolicContext& ctx, const PoolInput& in, ir::Value* y) {
  return in.unbatched ? helpers::squeeze(ctx, y, {0}) : y;
}

// ONNX MaxPool indices count over the whole [N, C, *] tensor, PyTorch's within
// each (N, C) plane: subtract each plane's first flat index. A 1x1 MaxPool's
// indices are every element's own flat index; its [:, :, 0, ..] corner holds
// the plane offsets.
ir::Value* plane_indices(SymbolicContext& ctx, ir::Value* x, ir::Value* onnx_indices, size_t nd) {
  PoolGeometry unit{std::vector<int64_t>(nd, 1), std::vector<int64_t>(nd, 1), std::vector<int64_t>(2 * nd, 0),
                    std::vector<int64_t>(nd, 1), {}};
  auto flat = ctx.op_n("MaxPool", {x}, 2, pool_attrs(unit, false, false));
  flat[1]->type().dtype = ir::DType::Int64;
  std::vector<int64_t> axes, zeros(nd, 0), ones(nd, 1);
  for (size_t i = 0; i < nd; ++i) axes.push_back(static_cast<int64_t>(2 + i));
  ir::Value* offset = helpers::slice(ctx, flat[1], axes, zeros, ones);
  onnx_indices->type().dtype = ir::DType::Int64;
  return ctx.op("Sub", {onnx_indices, offset});
}

// aten::max_pool{1,2,3}d(self, kernel_size, stride, padding, dilation, ceil_mode)
// aten::max_pool{1,2,3}d_with_indices(...) -> (values, indices within each plane)
//
// opset10: MaxPool has the ceil_mode and dilations attributes (from opset 10);
// opset 9 (and, with static sizes, any opset where ONNX would count a window PyTorch drops) emulates ceil_mode
// with extra end padding; opset 9 has no dilation.
void max_pool(SymbolicContext& ctx, bool opset10) {
  const PoolInput in = pool_input(ctx, spatial_dims(ctx));
  const size_t nd = in.nd;
  const bool ceil_mode = ctx.b(5);
  PoolGeometry g = geometry(ctx, in, 1, 2, 3, 4, ceil_mode);
  if (!opset10 && !all_ones(g.dilation)) ctx.fail("max pooling with dilation needs opset 10 or later");
  const bool emulate_ceil = ceil_mode && (!opset10 || ceil_drops_window(ctx, in, g));
  if (emulate_ceil) {
    require_static_spatial(ctx, in);
    ceil_to_pads(in, g);
  }
  ir::Value* x = batched(ctx, in, ctx.in(0));
  const bool dil = opset10 && !all_ones(g.dilation);
  const bool ceil_attr = ceil_mode && !emulate_ceil;
  if (ctx.num_outputs() == 1) {
    ctx.out(unbatched(ctx, in, ctx.op("MaxPool", {x}, pool_attrs(g, ceil_attr, dil))));
    return;
  }
  auto outs = ctx.op_n("MaxPool", {x}, 2, pool_attrs(g, ceil_attr, dil));
  ctx.out(unbatched(ctx, in, outs[0]), 0);
  ctx.out(unbatched(ctx, in, plane_indices(ctx, x, outs[1], nd)), 1);
}

// PyTorch's count_include_pad divisor along one axis for each output position:
// the window clipped to the padded input (ceil_mode windows may overhang it).
std::vector<int64_t> padded_window_sizes(int64_t L, int64_t k, int64_t pad, int64_t stride, int64_t out) {
  std::vector<int64_t> d;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * stride - pad;
    d.push_back(std::min(start + k, L + pad) - start);
  }
  return d;
}

// aten::avg_pool1d(self, kernel, stride, padding, ceil_mode, count_include_pad)
// aten::avg_pool{2,3}d(..., count_include_pad, divisor_override)
//
// ONNX AveragePool divides by the number of input elements (count_include_pad=0)
// or by the window clipped to the padded input (count_include_pad=1), as
// PyTorch does; opset 9 (and ceil_drops_window) emulates ceil_mode with extra end padding, which
// count_include_pad=1 would count. Where ONNX's divisor differs from PyTorch's
// (that padding, divisor_override), the average is rescaled by a constant
// computed from the static input size.
void avg_pool(SymbolicContext& ctx, bool opset10) {
  const PoolInput in = pool_input(ctx, spatial_dims(ctx));
  const size_t nd = in.nd;
  const bool ceil_mode = ctx.b(4);
  PoolGeometry g = geometry(ctx, in, 1, 2, 3, std::nullopt, ceil_mode);
  const bool count_include_pad = ctx.b(5);
  std::optional<int64_t> divisor = ctx.num_args() > 6 ? ctx.opt_i(6) : std::nullopt;
  const int64_t divisor_value = divisor.value_or(0);
  if (divisor && divisor_value == 0) ctx.fail("divisor_override must not be zero");
  const bool emulate_ceil = ceil_mode && (!opset10 || ceil_drops_window(ctx, in, g));

  // PyTorch's count_include_pad divisors per axis.
  std::vector<std::vector<int64_t>> torch_div(nd);
  bool torch_div_full = true;
  for (size_t i = 0; i < nd; ++i) {
    torch_div[i] = padded_window_sizes(in.spatial[i], g.kernel[i], g.pads[i], g.stride[i], g.out[i]);
    for (int64_t d : torch_div[i]) torch_div_full = torch_div_full && d == g.kernel[i];
  }
  if (emulate_ceil) {
    require_static_spatial(ctx, in);
    ceil_to_pads(in, g);
  }

  ir::Value* x = batched(ctx, in, ctx.in(0));
  const bool onnx_cip = count_include_pad || divisor;
  ir::Attributes attrs = pool_attrs(g, ceil_mode && !emulate_ceil, false);
  attrs.emplace_back("count_include_pad", int64_t{onnx_cip ? 1 : 0});
  ir::Value* y = ctx.op("AveragePool", {x}, std::move(attrs));

  if (onnx_cip && (divisor || (emulate_ceil && !torch_div_full))) {
    // (with ceil_mode, which windows are clipped depends on the input size)
    if (ceil_mode) require_static_spatial(ctx, in);
    // y * onnx_divisor / torch_divisor, per output position.
    const int64_t total = product(g.out);
    std::vector<double> scale(static_cast<size_t>(total));
    bool all_one = true;
    std::vector<int64_t> idx(nd, 0);
    for (int64_t flat = 0; flat < total; ++flat) {
      double onnx_d = 1, torch_d = 1;
      for (size_t i = 0; i < nd; ++i) {
        const double padded = static_cast<double>(torch_div[i][static_cast<size_t>(idx[i])]);
        onnx_d *= emulate_ceil ? static_cast<double>(g.kernel[i]) : padded;
        torch_d *= padded;
      }
      if (divisor) torch_d = static_cast<double>(divisor_value);
      scale[static_cast<size_t>(flat)] = onnx_d / torch_d;
      all_one = all_one && onnx_d == torch_d;
      for (size_t i = nd; i-- > 0;) {
        if (++idx[i] < g.out[i]) break;
        idx[i] = 0;
      }
    }
    bool uniform = true;
    for (double s : scale) uniform = uniform && s == scale[0];
    if (!all_one) {
      ir::Value* s = uniform ? ctx.const_scalar(ctx.dtype(0), scale[0])
                             : ctx.constant(ir::Tensor::from_doubles(ctx.dtype(0), scale, g.out));
      y = ctx.op("Mul", {y, s});
    }
  }
  ctx.out(unbatched(ctx, in, y));
}

// Adaptive pooling: output cell k of an axis of size L pools
// [floor(k L / O), ceil((k + 1) L / O)). Global when the output is 1, a
// regular pool when the input divides evenly, otherwise per-axis windows
// (pooling over a box is separable for both mean and max).
void adaptive_pool(SymbolicContext& ctx, bool is_max) {
  const PoolInput in = pool_input(ctx, spatial_dims(ctx));
  const size_t nd = in.nd;
  std::vector<int64_t> out_size;
  const Arg& os = ctx.arg(1);
  if (os.is_list() && os.elements.size() != nd)
    ctx.fail("output_size has " + std::to_string(os.elements.size()) + " values for " + std::to_string(nd) +
             " spatial dimensions");
  for (size_t i = 0; i < nd; ++i) {
    const Arg& e = os.is_list() ? os.elements[i] : os;
    if (e.is_none()) {
      out_size.push_back(in.spatial[i]);
      continue;
    }
    if (!e.constant || e.kind != Arg::Kind::Int)
      ctx.fail("output_size must be known at export time" +
               (e.constant ? std::string() : ", but it is computed at run time (from a dynamic dim's size, or from "
                                             "tensor data)"));
    if (e.i <= 0) ctx.fail("output_size must be positive");
    out_size.push_back(e.i);
  }
  const bool want_indices = is_max && ctx.num_outputs() > 1;
  ir::Value* x = batched(ctx, in, ctx.in(0));
  bool global = true;
  for (int64_t o : out_size) global = global && o == 1;
  if (global && !want_indices) {  // (any input size)
    ctx.out(unbatched(ctx, in, ctx.op(is_max ? "GlobalMaxPool" : "GlobalAveragePool", {x})));
    return;
  }
  require_static_spatial(ctx, in);

  bool even = true;
  std::vector<int64_t> kernel;
  for (size_t i = 0; i < nd; ++i) {
    even = even && in.spatial[i] % out_size[i] == 0;
    kernel.push_back(in.spatial[i] / std::max<int64_t>(out_size[i], 1));
  }
  if (even) {
    // Includes the global case (kernel = the whole input) and the identity (kernel 1).
    ir::Attributes a{{"kernel_shape", kernel}, {"pads", std::vector<int64_t>(2 * nd, 0)}, {"strides", kernel}};
    if (!is_max) {
      ir::Value* y = ctx.op("AveragePool", {x}, std::move(a));
      ctx.out(unbatched(ctx, in, y));
      return;
    }
    auto outs = ctx.op_n("MaxPool", {x}, 2, std::move(a));
    ctx.out(unbatched(ctx, in, outs[0]), 0);
    if (want_indices) ctx.out(unbatched(ctx, in, plane_indices(ctx, x, outs[1], nd)), 1);
    return;
  }

  auto window = [&](size_t i, int64_t k) {
    const int64_t L = in.spatial[i], O = out_size[i];
    return std::pair<int64_t, int64_t>{(k * L) / O, ((k + 1) * L + O - 1) / O};
  };
  ir::Value* y = x;
  for (size_t i = 0; i < nd; ++i) {
    const int64_t axis = static_cast<int64_t>(2 + i);
    if (in.spatial[i] == out_size[i]) continue;
    std::vector<ir::Value*> parts;
    for (int64_t k = 0; k < out_size[i]; ++k) {
      auto [start, end] = window(i, k);
      ir::Value* win = helpers::slice(ctx, y, {axis}, {start}, {end});
      parts.push_back(helpers::reduce(ctx, is_max ? "ReduceMax" : "ReduceMean", win, {axis}, true));
    }
    y = parts.size() == 1 ? parts[0] : ctx.op("Concat", parts, {{"axis", axis}});
  }
  ctx.out(unbatched(ctx, in, y), 0);
  if (!want_indices) return;

  // Indices: for each output cell, the first maximum of its box (ArgMax over
  // the flattened box), mapped to its flat index within the input plane by a
  // constant table of the box's plane indices.
  std::vector<int64_t> plane_strides(nd, 1);
  for (size_t i = nd - 1; i-- > 0;) plane_strides[i] = plane_strides[i + 1] * in.spatial[i + 1];
  const int64_t cells = product(out_size);
  std::vector<ir::Value*> cell_indices;
  std::vector<int64_t> idx(nd, 0);
  for (int64_t c = 0; c < cells; ++c) {
    std::vector<int64_t> axes, starts, ends;
    for (size_t i = 0; i < nd; ++i) {
      auto [s, e] = window(i, idx[i]);
      axes.push_back(static_cast<int64_t>(2 + i));
      starts.push_back(s);
      ends.push_back(e);
    }
    // The box's elements in row-major order -> plane indices.
    std::vector<int64_t> table{0};
    for (size_t i = 0; i < nd; ++i) {
      std::vector<int64_t> next;
      for (int64_t base : table)
        for (int64_t p = starts[i]; p < ends[i]; ++p) next.push_back(base + p * plane_strides[i]);
      table = std::move(next);
    }
    ir::Value* box = helpers::reshape(ctx, helpers::slice(ctx, x, axes, starts, ends), {0, 0, -1});
    ir::Value* local = ctx.op("ArgMax", {box}, {{"axis", int64_t{2}}, {"keepdims", int64_t{1}}});
    cell_indices.push_back(ctx.op("Gather", {ctx.const_ints(table), local}, {{"axis", int64_t{0}}}));
    for (size_t i = nd; i-- > 0;) {
      if (++idx[i] < out_size[i]) break;
      idx[i] = 0;
    }
  }
  ir::Value* all = cell_indices.size() == 1 ? cell_indices[0] : ctx.op("Concat", cell_indices, {{"axis", int64_t{2}}});
  std::vector<int64_t> shape{0, 0};
  shape.insert(shape.end(), out_size.begin(), out_size.end());
  ctx.out(unbatched(ctx, in, helpers::reshape(ctx, all, shape)), 1);
}

void adaptive_avg_pool(SymbolicContext& ctx) { adaptive_pool(ctx, false); }
void adaptive_max_pool(SymbolicContext& ctx) { adaptive_pool(ctx, true); }

// aten::max_unpool2d(self, indices, output_size) / max_unpool3d(self,
// indices, output_size, stride, padding): each value scattered to its flat
// index in its (n, c) plane of output_size, zeros elsewhere (Scatter at 9,
// ScatterElements from 11). (PyTorch's tracer and scripting fail on these
// operators; torch.export programs record them.)
void max_unpool(SymbolicContext& ctx, int64_t nd, const char* scatter) {
  const int64_t rank = ctx.rank(0);
  if (rank != nd + 1 && rank != nd + 2)
    ctx.fail("max_unpool" + std::to_string(nd) + "d takes a " + std::to_string(nd + 1) + "-D or " +
             std::to_string(nd + 2) + "-D input");
  const std::vector<int64_t> size = ctx.is(2);
  if (static_cast<int64_t>(size.size()) != nd) ctx.fail("output_size must have one entry per spatial dim");
  int64_t numel = 1;
  for (int64_t v : size) numel *= v;
  const bool batched = rank == nd + 2;
  ir::Value* x = ctx.in(0);
  ir::Value* idx = ctx.cast(ctx.in(1), ir::DType::Int64);
  if (!batched) {
    x = helpers::unsqueeze(ctx, x, {0});
    idx = helpers::unsqueeze(ctx, idx, {0});
  }
  ir::Value* lead = helpers::slice(ctx, ctx.op("Shape", {x}), {0}, {0}, {2});
  ir::Value* zeros = ctx.op("Expand", {ctx.const_scalar(ctx.dtype(0), 0.0),
                                       ctx.op("Concat", {lead, ctx.const_ints({numel})}, {{"axis", int64_t{0}}})});
  ir::Value* y = ctx.op(scatter, {zeros, helpers::reshape(ctx, idx, {0, 0, -1}), helpers::reshape(ctx, x, {0, 0, -1})},
                        {{"axis", int64_t{2}}});
  y = ctx.op("Reshape", {y, ctx.op("Concat", {lead, ctx.const_ints(size)}, {{"axis", int64_t{0}}})});
  ctx.out(batched ? y : helpers::squeeze(ctx, y, {0}));
}

}  // namespace

void register_pooling(Registry& r) {
  for (const char* op : {"aten::max_pool1d", "aten::max_pool2d", "aten::max_pool3d", "aten::max_pool1d_with_indices",
                         "aten::max_pool2d_with_indices", "aten::max_pool3d_with_indices"})
  {
    r.add(op, 9, [](SymbolicContext& ctx) { max_pool(ctx, false); });
    r.add(op, 10, [](SymbolicContext& ctx) { max_pool(ctx, true); });
  }
  for (const char* op : {"aten::avg_pool1d", "aten::avg_pool2d", "aten::avg_pool3d"}) {
    r.add(op, 9, [](SymbolicContext& ctx) { avg_pool(ctx, false); });
    r.add(op, 10, [](SymbolicContext& ctx) { avg_pool(ctx, true); });
  }
  for (const char* op : {"aten::adaptive_avg_pool1d", "aten::adaptive_avg_pool2d", "aten::adaptive_avg_pool3d"})
    r.add(op, 9, adaptive_avg_pool);
  for (const char* op : {"aten::adaptive_max_pool1d", "aten::adaptive_max_pool2d", "aten::adaptive_max_pool3d"})
    r.add(op, 9, adaptive_max_pool);
  r.add("aten::max_unpool2d", 9, [](SymbolicContext& ctx) { max_unpool(ctx, 2, "Scatter"); });
  r.add("aten::max_unpool2d", 11, [](SymbolicContext& ctx) { max_unpool(ctx, 2, "ScatterElements"); });
  r.add("aten::max_unpool3d", 9, [](SymbolicContext& ctx) { max_unpool(ctx, 3, "Scatter"); });
  r.add("aten::max_unpool3d", 11, [](SymbolicContext& ctx) { max_unpool(ctx, 3, "ScatterElements"); });
}

}  // namespace torch2onnx::symbolics
