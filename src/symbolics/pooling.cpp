// Pooling: max_pool / avg_pool (1d-3d, with ceil_mode, dilation,
// count_include_pad, divisor_override), max_pool with indices, adaptive
// average / max pooling.
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

struct PoolGeometry {
  std::vector<int64_t> kernel, stride, pads, dilation;
};

PoolGeometry geometry(SymbolicContext& ctx, size_t nd, size_t kernel_i, size_t stride_i, size_t pad_i,
                      std::optional<size_t> dil_i) {
  PoolGeometry g;
  g.kernel = expand_to(ctx.is(kernel_i), nd, 1);
  g.stride = ctx.is(stride_i);
  if (g.stride.empty()) g.stride = g.kernel;
  g.stride = expand_to(g.stride, nd, 1);
  std::vector<int64_t> p = expand_to(ctx.is(pad_i), nd, 0);
  g.pads = p;
  g.pads.insert(g.pads.end(), p.begin(), p.end());
  g.dilation = dil_i ? expand_to(ctx.is(*dil_i), nd, 1) : std::vector<int64_t>(nd, 1);
  if (g.kernel.size() != nd || g.stride.size() != nd || p.size() != nd || g.dilation.size() != nd)
    ctx.fail("pooling parameters do not match the input's " + std::to_string(nd) + " spatial dimensions");
  return g;
}

// Opset 9 has no ceil_mode: the same windows come from extra end padding,
// computed from the (static) input size. PyTorch drops a last window that
// would start in the end padding.
void ceil_to_pads(SymbolicContext& ctx, PoolGeometry& g, size_t input) {
  const auto& sizes = ctx.sizes(input);
  const size_t nd = g.kernel.size();
  for (size_t i = 0; i < nd; ++i) {
    const int64_t L = sizes[sizes.size() - nd + i];
    const int64_t eff = g.dilation[i] * (g.kernel[i] - 1) + 1;
    const int64_t span = L + g.pads[i] + g.pads[i + nd] - eff;
    int64_t out = (span + g.stride[i] - 1) / g.stride[i] + 1;
    if ((out - 1) * g.stride[i] >= L + g.pads[i]) --out;
    const int64_t need = (out - 1) * g.stride[i] + eff - (L + g.pads[i] + g.pads[i + nd]);
    if (need > 0) g.pads[i + nd] += need;
  }
}

ir::Attributes pool_attrs(const SymbolicContext& ctx, const PoolGeometry& g, bool ceil_mode, bool with_dilations) {
  ir::Attributes a{{"kernel_shape", g.kernel}, {"pads", g.pads}, {"strides", g.stride}};
  if (ctx.opset() >= 10 && ceil_mode) a.emplace_back("ceil_mode", int64_t{1});
  if (with_dilations) a.emplace_back("dilations", g.dilation);
  return a;
}

bool all_ones(const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x != 1) return false;
  return true;
}

// aten::max_pool{1,2,3}d(self, kernel_size, stride, padding, dilation, ceil_mode)
void max_pool(SymbolicContext& ctx) {
  const size_t nd = static_cast<size_t>(ctx.rank(0)) - 2;
  PoolGeometry g = geometry(ctx, nd, 1, 2, 3, 4);
  const bool ceil_mode = ctx.b(5);
  if (ctx.opset() < 10) {
    if (!all_ones(g.dilation)) ctx.fail("max pooling with dilation needs opset 10 or later");
    if (ceil_mode) ceil_to_pads(ctx, g, 0);
  }
  ir::Value* x = ctx.in(0);
  const bool dil = ctx.opset() >= 10 && !all_ones(g.dilation);
  if (ctx.num_outputs() == 1) {
    ctx.out(ctx.op("MaxPool", {x}, pool_attrs(ctx, g, ceil_mode, dil)));
    return;
  }
  // max_pool*d_with_indices: ONNX indices count over the whole tensor,
  // PyTorch's within each (N, C) plane. The plane offsets come from a 1x1
  // MaxPool, whose indices are every element's own flat index.
  auto outs = ctx.op_n("MaxPool", {x}, 2, pool_attrs(ctx, g, ceil_mode, dil));
  PoolGeometry unit{std::vector<int64_t>(nd, 1), std::vector<int64_t>(nd, 1), std::vector<int64_t>(2 * nd, 0),
                    std::vector<int64_t>(nd, 1)};
  auto flat = ctx.op_n("MaxPool", {x}, 2, pool_attrs(ctx, unit, false, false));
  flat[1]->type().dtype = ir::DType::Int64;
  std::vector<int64_t> axes, zeros(nd, 0), ones(nd, 1);
  for (size_t i = 0; i < nd; ++i) axes.push_back(static_cast<int64_t>(2 + i));
  ir::Value* offset = helpers::slice(ctx, flat[1], axes, zeros, ones);
  outs[1]->type().dtype = ir::DType::Int64;
  ctx.out(outs[0], 0);
  ctx.out(ctx.op("Sub", {outs[1], offset}), 1);
}

// aten::avg_pool1d(self, kernel, stride, padding, ceil_mode, count_include_pad)
// aten::avg_pool{2,3}d(..., count_include_pad, divisor_override)
void avg_pool(SymbolicContext& ctx) {
  const size_t nd = static_cast<size_t>(ctx.rank(0)) - 2;
  PoolGeometry g = geometry(ctx, nd, 1, 2, 3, std::nullopt);
  const bool ceil_mode = ctx.b(4);
  const bool count_include_pad = ctx.b(5);
  std::optional<int64_t> divisor = ctx.num_args() > 6 ? ctx.opt_i(6) : std::nullopt;
  if (ctx.opset() < 10 && ceil_mode) {
    if (count_include_pad && !all_ones(g.kernel))
      ctx.fail("average pooling with ceil_mode=True and count_include_pad=True needs opset 10 or later");
    ceil_to_pads(ctx, g, 0);
  }
  ir::Attributes attrs = pool_attrs(ctx, g, ceil_mode, false);
  attrs.emplace_back("count_include_pad", int64_t{count_include_pad || divisor ? 1 : 0});
  ir::Value* y = ctx.op("AveragePool", {ctx.in(0)}, std::move(attrs));
  if (divisor) {
    double window = 1;
    for (int64_t k : g.kernel) window *= static_cast<double>(k);
    y = ctx.op("Mul", {y, ctx.const_scalar(ctx.dtype(0), window / static_cast<double>(*divisor))});
  }
  ctx.out(y);
}

// Adaptive pooling: global when the output is 1, a regular pool when the
// input divides evenly, otherwise per-dimension windows (pooling over a box
// is separable for both mean and max).
void adaptive_pool(SymbolicContext& ctx, bool is_max) {
  const auto& sizes = ctx.sizes(0);
  const size_t rank = sizes.size();
  std::vector<int64_t> out_size;
  const Arg& os = ctx.arg(1);
  const size_t nd = os.is_list() ? os.elements.size() : 1;
  if (rank < nd) ctx.fail("output_size has more dimensions than the input");
  for (size_t i = 0; i < nd; ++i) {
    const Arg& e = os.is_list() ? os.elements[i] : os;
    out_size.push_back(e.is_none() ? sizes[rank - nd + i] : (e.constant ? e.i : -2));
    if (out_size.back() == -2) ctx.fail("output_size must be known at export time");
  }
  ir::Value* x = ctx.in(0);
  if (ctx.num_outputs() > 1 && is_max) ctx.fail("the indices of adaptive max pooling cannot be exported");
  bool global = true;
  for (int64_t o : out_size) global = global && o == 1;
  if (global && rank == nd + 2) {
    ctx.out(ctx.op(is_max ? "GlobalMaxPool" : "GlobalAveragePool", {x}));
    return;
  }
  bool even = rank == nd + 2;
  std::vector<int64_t> kernel;
  for (size_t i = 0; i < nd; ++i) {
    const int64_t L = sizes[rank - nd + i];
    even = even && out_size[i] > 0 && L % out_size[i] == 0;
    kernel.push_back(out_size[i] > 0 ? L / out_size[i] : 0);
  }
  if (even && all_ones(kernel)) {
    ctx.out(x);  // output size == input size
    return;
  }
  if (even) {
    ir::Attributes a{{"kernel_shape", kernel}, {"pads", std::vector<int64_t>(2 * nd, 0)}, {"strides", kernel}};
    ctx.out(ctx.op(is_max ? "MaxPool" : "AveragePool", {x}, std::move(a)));
    return;
  }
  for (size_t i = 0; i < nd; ++i) {
    const int64_t axis = static_cast<int64_t>(rank - nd + i);
    const int64_t L = sizes[static_cast<size_t>(axis)], O = out_size[i];
    if (L == O) continue;
    std::vector<ir::Value*> parts;
    for (int64_t k = 0; k < O; ++k) {
      const int64_t start = (k * L) / O;
      const int64_t end = ((k + 1) * L + O - 1) / O;
      ir::Value* win = helpers::slice(ctx, x, {axis}, {start}, {end});
      parts.push_back(helpers::reduce(ctx, is_max ? "ReduceMax" : "ReduceMean", win, {axis}, true));
    }
    x = parts.size() == 1 ? parts[0] : ctx.op("Concat", parts, {{"axis", axis}});
  }
  ctx.out(x);
}

void adaptive_avg_pool(SymbolicContext& ctx) { adaptive_pool(ctx, false); }
void adaptive_max_pool(SymbolicContext& ctx) { adaptive_pool(ctx, true); }

}  // namespace

void register_pooling(Registry& r) {
  for (const char* op : {"aten::max_pool1d", "aten::max_pool2d", "aten::max_pool3d", "aten::max_pool1d_with_indices",
                         "aten::max_pool2d_with_indices", "aten::max_pool3d_with_indices"})
    r.add(op, 9, max_pool);
  for (const char* op : {"aten::avg_pool1d", "aten::avg_pool2d", "aten::avg_pool3d"}) r.add(op, 9, avg_pool);
  for (const char* op : {"aten::adaptive_avg_pool1d", "aten::adaptive_avg_pool2d", "aten::adaptive_avg_pool3d"})
    r.add(op, 9, adaptive_avg_pool);
  for (const char* op : {"aten::adaptive_max_pool1d", "aten::adaptive_max_pool2d", "aten::adaptive_max_pool3d"})
    r.add(op, 9, adaptive_max_pool);
}

}  // namespace torch2onnx::symbolics
