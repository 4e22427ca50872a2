// Padding: constant_pad_nd, pad (constant / reflect / replicate / circular),
// reflection_pad*d, replication_pad*d, _pad_circular. Negative pads crop.
#include <algorithm>
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;

// What ONNX Pad accepts at the target opset.
struct PadSupport {
  bool float_only;       // Pad-2 (opsets 9, 10): float tensors, constant pads
  bool wrap = false;     // Pad-19: mode "wrap" (circular padding as one node)
};

// PyTorch pads (last dim first: left, right, top, bottom, ...) -> per-dim (begin, end).
std::vector<std::pair<int64_t, int64_t>> per_dim(const SymbolicContext& ctx, const std::vector<int64_t>& pads,
                                                 int64_t rank) {
  if (pads.size() % 2) ctx.fail("the padding list must have an even length, got " + std::to_string(pads.size()));
  const int64_t k = static_cast<int64_t>(pads.size()) / 2;
  if (k > rank)
    ctx.fail("padding " + std::to_string(k) + " dimensions of a tensor of rank " + std::to_string(rank));
  std::vector<std::pair<int64_t, int64_t>> out(static_cast<size_t>(rank), {0, 0});
  for (int64_t i = 0; i < k; ++i)
    out[static_cast<size_t>(rank - 1 - i)] = {pads[static_cast<size_t>(2 * i)], pads[static_cast<size_t>(2 * i + 1)]};
  return out;
}

// Crops the negative parts of `dims` (begin, end) with one Slice.
ir::Value* crop(SymbolicContext& ctx, ir::Value* x, const std::vector<std::pair<int64_t, int64_t>>& dims) {
  std::vector<int64_t> axes, starts, ends;
  for (size_t d = 0; d < dims.size(); ++d) {
    const auto [b, e] = dims[d];
    if (b >= 0 && e >= 0) continue;
    axes.push_back(static_cast<int64_t>(d));
    starts.push_back(b < 0 ? -b : 0);
    ends.push_back(e < 0 ? e : std::numeric_limits<int64_t>::max());
  }
  if (axes.empty()) return x;
  return helpers::slice(ctx, x, axes, starts, ends);
}

// The dtype ONNX Pad runs in for a tensor of dtype dt.
// (ONNX Runtime's Pad-2 kernel takes float and double; later ones no bool or 16-bit floats.)
DType pad_dtype(DType dt, const PadSupport& sup) {
  if (sup.float_only) return dt == DType::Double ? dt : DType::Float;
  if (dt == DType::Bool) return DType::UInt8;
  if (dt == DType::Float16 || dt == DType::BFloat16) return DType::Float;
  return dt;
}

// Pads with `mode` ("constant", "reflect", "edge") the positive parts, then crops the negative ones.
ir::Value* pad_constant_list(SymbolicContext& ctx, ir::Value* x, DType dt, const std::vector<int64_t>& pads,
                             const std::string& mode, double value, const PadSupport& sup) {
  const int64_t rank = ctx.rank(0);
  auto dims = per_dim(ctx, pads, rank);
  bool any_positive = false;
  std::vector<int64_t> onnx_pads(static_cast<size_t>(2 * rank), 0);
  for (int64_t d = 0; d < rank; ++d) {
    const auto [b, e] = dims[static_cast<size_t>(d)];
    onnx_pads[static_cast<size_t>(d)] = std::max<int64_t>(b, 0);
    onnx_pads[static_cast<size_t>(rank + d)] = std::max<int64_t>(e, 0);
    any_positive = any_positive || b > 0 || e > 0;
  }
  ir::Value* y = x;
  if (any_positive) {
    const DType work = pad_dtype(dt, sup);
    // The fill value as PyTorch stores it in the tensor's dtype.
    const double v = ir::Tensor::scalar(dt, value).converted(work).double_at(0);
    y = ctx.cast(helpers::pad(ctx, ctx.cast(x, work), onnx_pads, mode, v), dt);
  }
  return crop(ctx, y, dims);
}

// Pads computed at run time (opset 11+): PyTorch order -> ONNX order as a graph computation.
ir::Value* pad_dynamic(SymbolicContext& ctx, ir::Value* x, DType dt, size_t pads_idx, const std::string& mode,
                       double value, const PadSupport& sup) {
  const Arg& a = ctx.arg(pads_idx);
  const int64_t rank = ctx.rank(0);
  if (a.is_list() && a.elements.empty() && a.value) {
    // A list of run-time length L (a scripted List[int] input): zeros up to
    // 2 * rank (an odd L or L > 2 * rank fails at run time, as in PyTorch),
    // pairs from the first dim on, begins then ends.
    ir::Value* given = ctx.ints_value(pads_idx);
    ir::Value* missing = ctx.op("Sub", {ctx.const_ints({2 * rank}), ctx.op("Shape", {given})});
    ir::Value* zeros = ctx.op("ConstantOfShape", {missing}, {{"value", ir::Tensor::from_int64s({0}, {1})}});
    ir::Value* p = helpers::reshape(ctx, ctx.op("Concat", {given, zeros}, {{"axis", int64_t{0}}}), {rank, 2});
    p = helpers::slice(ctx, p, {0}, {-1}, {std::numeric_limits<int64_t>::min()}, {-1});
    p = helpers::reshape(ctx, ctx.op("Transpose", {p}, {{"perm", std::vector<int64_t>{1, 0}}}), {-1});
    const DType work = pad_dtype(dt, sup);
    std::vector<ir::Value*> ins{ctx.cast(x, work), p};
    if (mode == "constant") ins.push_back(ctx.constant(ir::Tensor::scalar(dt, value).converted(work)));
    return ctx.cast(ctx.op("Pad", ins, {{"mode", mode}}), dt);
  }
  if (!a.is_list() || a.elements.empty()) ctx.fail("a padding list of unknown length is not supported");
  const int64_t k = static_cast<int64_t>(a.elements.size()) / 2;
  if (a.elements.size() % 2 || k > rank) ctx.fail("bad padding list length " + std::to_string(a.elements.size()));
  ir::Value* p = helpers::reshape(ctx, ctx.ints_value(pads_idx), {k, 2});
  std::vector<int64_t> rev;
  for (int64_t i = k - 1; i >= 0; --i) rev.push_back(i);
  p = ctx.op("Gather", {p, ctx.const_ints(rev)}, {{"axis", int64_t{0}}});     // [k, 2], first dim first
  p = ctx.op("Transpose", {p}, {{"perm", std::vector<int64_t>{1, 0}}});      // [2, k]: begins, ends
  if (k < rank) {
    ir::Value* zeros = ctx.constant(ir::Tensor::from_int64s(std::vector<int64_t>(static_cast<size_t>(2 * (rank - k)), 0),
                                                            {2, rank - k}));
    p = ctx.op("Concat", {zeros, p}, {{"axis", int64_t{1}}});
  }
  p = helpers::reshape(ctx, p, {-1});
  const DType work = pad_dtype(dt, sup);
  std::vector<ir::Value*> ins{ctx.cast(x, work), p};
  if (mode == "constant") ins.push_back(ctx.constant(ir::Tensor::scalar(dt, value).converted(work)));
  return ctx.cast(ctx.op("Pad", ins, {{"mode", mode}}), dt);
}

// Circular padding: crop the negative parts, then wrap with slices of the cropped tensor.
ir::Value* pad_circular_list(SymbolicContext& ctx, ir::Value* x, const std::vector<int64_t>& pads) {
  const int64_t rank = ctx.rank(0);
  auto dims = per_dim(ctx, pads, rank);
  ir::Value* y = crop(ctx, x, dims);
  const auto& sizes = ctx.sizes(0);
  for (int64_t d = 0; d < rank; ++d) {
    const auto [b, e] = dims[static_cast<size_t>(d)];
    const int64_t lp = std::max<int64_t>(b, 0), rp = std::max<int64_t>(e, 0);
    if (!lp && !rp) continue;
    const int64_t size = sizes[static_cast<size_t>(d)] + std::min<int64_t>(b, 0) + std::min<int64_t>(e, 0);
    if (lp > size || rp > size)
      ctx.fail("circular padding larger than the dimension it wraps (" + std::to_string(size) + ")");
    std::vector<ir::Value*> parts;
    if (lp) parts.push_back(helpers::slice(ctx, y, {d}, {-lp}, {std::numeric_limits<int64_t>::max()}));
    parts.push_back(y);
    if (rp) parts.push_back(helpers::slice(ctx, y, {d}, {0}, {rp}));
    y = ctx.op("Concat", parts, {{"axis", d}});
  }
  return y;
}

// Shared entry: x = input 0, pads = argument pads_idx.
ir::Value* pad_any(SymbolicContext& ctx, size_t pads_idx, const std::string& mode, double value, const PadSupport& sup) {
  ir::Value* x = ctx.in(0);
  const DType dt = ctx.dtype(0);
  const Arg& pa = ctx.arg(pads_idx);
  const bool run_time_length = pa.is_list() && pa.elements.empty() && pa.value;
  bool constant_pads = pa.constant || (pa.is_list() && !run_time_length && std::all_of(pa.elements.begin(), pa.elements.end(),
                                                                   [](const Arg& e) { return e.constant; }));
  if (mode == "circular") {
    const std::vector<int64_t> pads = ctx.is(pads_idx);
    const bool cropping = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; });
    if (!sup.wrap || cropping) return pad_circular_list(ctx, x, pads);
    return pad_constant_list(ctx, x, dt, pads, "wrap", 0.0, sup);
  }
  if (constant_pads) return pad_constant_list(ctx, x, dt, ctx.is(pads_idx), mode, value, sup);
  if (sup.float_only) ctx.fail("padding computed at run time needs opset 11 or later");
  return pad_dynamic(ctx, x, dt, pads_idx, mode, value, sup);
}

// constant_pad_nd(self, pad, value=0)
void constant_pad_nd_with(SymbolicContext& ctx, const PadSupport& sup) {
  const double value = ctx.num_args() > 2 && !ctx.none(2) ? ctx.f(2) : 0.0;
  ctx.out(pad_any(ctx, 1, "constant", value, sup));
}

// pad(self, pad, mode="constant", value=None)
void pad_with(SymbolicContext& ctx, const PadSupport& sup) {
  const std::string mode = ctx.num_args() > 2 && !ctx.none(2) ? ctx.s(2) : "constant";
  const bool has_value = ctx.num_args() > 3 && !ctx.none(3);
  if (mode == "constant") {
    ctx.out(pad_any(ctx, 1, "constant", has_value ? ctx.f(3) : 0.0, sup));
    return;
  }
  if (has_value) ctx.fail("padding mode '" + mode + "' does not take a fill value");
  if (mode == "reflect") ctx.out(pad_any(ctx, 1, "reflect", 0.0, sup));
  else if (mode == "replicate") ctx.out(pad_any(ctx, 1, "edge", 0.0, sup));
  else if (mode == "circular") ctx.out(pad_any(ctx, 1, "circular", 0.0, sup));
  else ctx.fail("unknown padding mode '" + mode + "'");
}

constexpr PadSupport kPad2{true};
constexpr PadSupport kPad11{false};
constexpr PadSupport kPad19{false, true};

void constant_pad_nd9(SymbolicContext& ctx) { constant_pad_nd_with(ctx, kPad2); }
void constant_pad_nd11(SymbolicContext& ctx) { constant_pad_nd_with(ctx, kPad11); }
void pad9(SymbolicContext& ctx) { pad_with(ctx, kPad2); }
void pad11(SymbolicContext& ctx) { pad_with(ctx, kPad11); }
void pad19(SymbolicContext& ctx) { pad_with(ctx, kPad19); }
// reflection_pad{1,2,3}d(self, padding) / replication_pad{1,2,3}d(self, padding)
void reflection_pad9(SymbolicContext& ctx) { ctx.out(pad_any(ctx, 1, "reflect", 0.0, kPad2)); }
void reflection_pad11(SymbolicContext& ctx) { ctx.out(pad_any(ctx, 1, "reflect", 0.0, kPad11)); }
void replication_pad9(SymbolicContext& ctx) { ctx.out(pad_any(ctx, 1, "edge", 0.0, kPad2)); }
void replication_pad11(SymbolicContext& ctx) { ctx.out(pad_any(ctx, 1, "edge", 0.0, kPad11)); }
// _pad_circular(self, pad)
void pad_circular(SymbolicContext& ctx) { ctx.out(pad_any(ctx, 1, "circular", 0.0, kPad11)); }
void pad_circular19(SymbolicContext& ctx) { ctx.out(pad_any(ctx, 1, "circular", 0.0, kPad19)); }

}  // namespace

void register_padding(Registry& r) {
  r.add("aten::constant_pad_nd", 9, constant_pad_nd9);
  r.add("aten::constant_pad_nd", 11, constant_pad_nd11);
  r.add("aten::pad", 9, pad9);
  r.add("aten::pad", 11, pad11);
  r.add("aten::pad", 19, pad19);
  for (const char* d : {"1d", "2d", "3d"}) {
    r.add(std::string("aten::reflection_pad") + d, 9, reflection_pad9);
    r.add(std::string("aten::reflection_pad") + d, 11, reflection_pad11);
    r.add(std::string("aten::replication_pad") + d, 9, replication_pad9);
    r.add(std::string("aten::replication_pad") + d, 11, replication_pad11);
  }
  r.add("aten::_pad_circular", 9, pad_circular);
  r.add("aten::_pad_circular", 19, pad_circular19);
}

}  // namespace torch2onnx::symbolics
