// Histograms: histc, histogram (bin count or bin edges), histogramdd and
// bincount. Bin indices follow PyTorch's CPU kernel step by step in the
// input's dtype (linear interpolation, with its +-1 local search against the
// edges for histogram, a search of the edges for given edges); counting is a
// one-hot comparison with the bin numbers summed over the elements (opset 9,
// O(elements * bins) memory) or ScatterElements with reduction "add"
// (opset 16, O(elements)).
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

enum class Count { OneHot, Scatter };

Value* sc(SymbolicContext& ctx, DType t, double v) { return ctx.const_scalar(t, v); }

// a >= b and a <= b for floats, false when either is NaN (GreaterOrEqual is opset 12).
Value* either_nan(SymbolicContext& ctx, Value* a, Value* b) {
  return ctx.op("Or", {ctx.op("IsNaN", {a}), ctx.op("IsNaN", {b})});
}
Value* ge(SymbolicContext& ctx, Value* a, Value* b) {
  return ctx.op("Not", {ctx.op("Or", {ctx.op("Less", {a, b}), either_nan(ctx, a, b)})});
}
Value* le(SymbolicContext& ctx, Value* a, Value* b) {
  return ctx.op("Not", {ctx.op("Or", {ctx.op("Greater", {a, b}), either_nan(ctx, a, b)})});
}

// Min/Max of int64 values (ONNX's Min/Max take integers from opset 12 only).
Value* imin(SymbolicContext& ctx, Value* a, Value* b) { return ctx.op("Where", {ctx.op("Less", {a, b}), a, b}); }
Value* imax(SymbolicContext& ctx, Value* a, Value* b) { return ctx.op("Where", {ctx.op("Greater", {a, b}), a, b}); }

// Sums per bin: out[b] = sum of w[i] (1 when w is null) over the i with
// valid[i] and idx[i] == b, for b < nbins (0-d int64). idx: 1-D int64.
// Accumulates in `acc` (int64 for plain counts).
Value* bin_sums(SymbolicContext& ctx, Count how, Value* idx, Value* valid, Value* w, Value* nbins, DType acc) {
  Value* one = sc(ctx, acc, 1.0);
  Value* zero = sc(ctx, acc, 0.0);
  Value* upd = ctx.op("Where", {valid, w ? w : one, zero});
  if (how == Count::Scatter) {
    Value* zeros = ctx.op("Expand", {zero, helpers::unsqueeze(ctx, nbins, {0})});
    Value* safe = ctx.op("Where", {valid, idx, ctx.const_int(0)});
    // ScatterElements needs updates shaped as the indices
    upd = ctx.op("Expand", {upd, ctx.op("Shape", {safe})});
    return ctx.op("ScatterElements", {zeros, safe, upd}, {{"axis", int64_t{0}}, {"reduction", std::string("add")}});
  }
  Value* bins = helpers::arange(ctx, nbins);
  Value* hit = helpers::equal(ctx, helpers::unsqueeze(ctx, idx, {1}), helpers::unsqueeze(ctx, bins, {0}));  // (N, B)
  upd = helpers::unsqueeze(ctx, ctx.op("Expand", {upd, ctx.op("Shape", {idx})}), {1});
  return helpers::reduce(ctx, "ReduceSum", ctx.op("Where", {hit, upd, zero}), {0}, false);
}

// One dim of a histogram over the 1-D values x (dtype t): the bin edges and
// each value's bin (int64) and whether it is counted.
struct Binned {
  Value* edges = nullptr;
  Value* pos = nullptr;
  Value* valid = nullptr;
};

// The outer edges PyTorch picks: `range` when given, else the data's min and
// max (0 and 1 for no data); equal edges widened by `widen` on each side
// (histogram: 0.5; histc: 1).
std::pair<Value*, Value*> outer_edges(SymbolicContext& ctx, Value* x, DType t, const std::vector<double>* range,
                                      double widen) {
  if (range) {
    double lo = (*range)[0], hi = (*range)[1];
    if (lo > hi) ctx.fail("histogram: the range's max must not be below its min");
    if (lo == hi) lo -= widen, hi += widen;
    return {sc(ctx, t, lo), sc(ctx, t, hi)};
  }
  const double inf = std::numeric_limits<double>::infinity();
  Value* flat = helpers::reshape(ctx, x, {-1});
  Value* lo = helpers::reduce(ctx, "ReduceMin", ctx.op("Concat", {flat, helpers::reshape(ctx, sc(ctx, t, inf), {1})}, {{"axis", int64_t{0}}}), {0}, false);
  Value* hi = helpers::reduce(ctx, "ReduceMax", ctx.op("Concat", {flat, helpers::reshape(ctx, sc(ctx, t, -inf), {1})}, {{"axis", int64_t{0}}}), {0}, false);
  Value* empty = helpers::equal(ctx, ctx.op("Size", {flat}), ctx.const_int(0));
  lo = ctx.op("Where", {empty, sc(ctx, t, 0.0), lo});
  hi = ctx.op("Where", {empty, sc(ctx, t, 1.0), hi});
  Value* same = helpers::equal(ctx, lo, hi);
  lo = ctx.op("Where", {same, ctx.op("Sub", {lo, sc(ctx, t, widen)}), lo});
  hi = ctx.op("Where", {same, ctx.op("Add", {hi, sc(ctx, t, widen)}), hi});
  return {lo, hi};
}

// linspace(lo, hi, bins + 1) as PyTorch's CPU kernel writes it element by
// element: lo + step * k for the first half, hi - step * (bins - k) after.
Value* linspace_edges(SymbolicContext& ctx, Value* lo, Value* hi, int64_t bins, DType t) {
  const int64_t steps = bins + 1, half = steps / 2;
  Value* step = ctx.op("Div", {ctx.op("Sub", {hi, lo}), sc(ctx, t, static_cast<double>(bins))});
  std::vector<double> first, second;
  for (int64_t k = 0; k < steps; ++k) (k < half ? first : second).push_back(static_cast<double>(k < half ? k : steps - k - 1));
  std::vector<Value*> parts;
  if (!first.empty())
    parts.push_back(ctx.op("Add", {lo, ctx.op("Mul", {step, ctx.constant(ir::Tensor::from_doubles(t, first, {static_cast<int64_t>(first.size())}))})}));
  parts.push_back(ctx.op("Sub", {hi, ctx.op("Mul", {step, ctx.constant(ir::Tensor::from_doubles(t, second, {static_cast<int64_t>(second.size())}))})}));
  return parts.size() == 1 ? parts[0] : ctx.op("Concat", parts, {{"axis", int64_t{0}}});
}

// PyTorch's linear interpolation: pos = int((x - left) * bins / (right - left)),
// for the x in [left, right] (NaN never), then, with local_search, the
// upper bound of x among edges[max(0, pos-1) : min(pos+2, bins+1)] minus 1
// (correcting the rounding); the right edge falls in the last bin.
Binned linear_bins(SymbolicContext& ctx, Value* x, Value* lo, Value* hi, Value* edges, int64_t bins, DType t,
                   bool local_search) {
  Binned r;
  r.edges = edges;
  r.valid = ctx.op("And", {ge(ctx, x, lo), le(ctx, x, hi)});
  Value* f = ctx.op("Div", {ctx.op("Mul", {ctx.op("Sub", {x, lo}), sc(ctx, t, static_cast<double>(bins))}),
                            ctx.op("Sub", {hi, lo})});
  f = ctx.op("Where", {r.valid, f, sc(ctx, t, 0.0)});
  Value* pos = ctx.cast(ctx.op("Floor", {f}), DType::Int64);  // f >= 0: trunc is floor
  if (local_search) {
    const int64_t n_edges = bins + 1;
    Value* pmin = imax(ctx, ctx.op("Sub", {pos, ctx.const_int(1)}), ctx.const_int(0));
    Value* pmax = imin(ctx, ctx.op("Add", {pos, ctx.const_int(2)}), ctx.const_int(n_edges));
    Value* found = ctx.op("Sub", {pmin, ctx.const_int(1)});
    for (int64_t j = 0; j < 3; ++j) {
      Value* k = ctx.op("Add", {pmin, ctx.const_int(j)});
      Value* e = ctx.op("Gather", {edges, imin(ctx, k, ctx.const_int(n_edges - 1))}, {{"axis", int64_t{0}}});
      Value* in = ctx.op("And", {ctx.op("Less", {k, pmax}), le(ctx, e, x)});
      found = ctx.op("Add", {found, ctx.cast(in, DType::Int64)});
    }
    pos = found;
  }
  r.pos = imin(ctx, pos, ctx.const_int(bins - 1));
  return r;
}

// Given edges (1-D, sorted): the upper bound of x among them minus 1, for x
// in [edges[0], edges[-1]]; the right edge falls in the last bin.
Binned searched_bins(SymbolicContext& ctx, Value* x, Value* edges) {
  Binned r;
  r.edges = edges;
  Value* first = ctx.op("Gather", {edges, ctx.const_int(0)}, {{"axis", int64_t{0}}});
  Value* last = ctx.op("Gather", {edges, ctx.const_int(-1)}, {{"axis", int64_t{0}}});
  r.valid = ctx.op("And", {ge(ctx, x, first), le(ctx, x, last)});
  Value* below = ctx.cast(le(ctx, helpers::unsqueeze(ctx, edges, {0}), helpers::unsqueeze(ctx, x, {1})), DType::Int64);
  Value* pos = ctx.op("Sub", {helpers::reduce(ctx, "ReduceSum", below, {1}, false), ctx.const_int(1)});
  Value* nb = ctx.op("Sub", {helpers::dim_size(ctx, edges, 0), ctx.const_int(2)});  // the last bin
  r.pos = imin(ctx, imax(ctx, pos, ctx.const_int(0)), nb);
  return r;
}

DType hist_dtype(SymbolicContext& ctx) {
  const DType t = ctx.dtype(0);
  if (!ir::is_floating(t)) ctx.fail("histogram: PyTorch bins floating-point inputs only");
  // PyTorch bins half-precision values with half arithmetic rounded op by op,
  // which ONNX Runtime's float16 kernels do not reproduce bin for bin.
  if (t != DType::Float && t != DType::Double)
    ctx.fail("histograms of float16/bfloat16 are not exported: bin a float32 copy (x.float())");
  return t;
}

// aten::histc(self, bins=100, min=0, max=0): min == max takes the data's
// range; values outside [min, max] and NaN are not counted.
template <Count how>
void histc(SymbolicContext& ctx) {
  const DType t = hist_dtype(ctx);
  const int64_t bins = ctx.none(1) ? 100 : ctx.i(1);
  if (bins <= 0) ctx.fail("histc: bins must be positive");
  const double mn = ctx.none(2) ? 0.0 : ctx.f(2), mx = ctx.none(3) ? 0.0 : ctx.f(3);
  Value* x = helpers::reshape(ctx, ctx.in(0), {-1});
  std::vector<double> range{mn, mx};
  auto [lo, hi] = outer_edges(ctx, x, t, mn == mx ? nullptr : &range, 1.0);
  Binned b = linear_bins(ctx, x, lo, hi, nullptr, bins, t, false);
  Value* n = bin_sums(ctx, how, b.pos, b.valid, nullptr, ctx.const_int(bins), DType::Int64);
  ctx.out(ctx.cast(n, t));
}

// The density normalization: hist / sum(hist) / each bin's width (product over dims).
Value* density(SymbolicContext& ctx, Value* hist, const std::vector<Value*>& edges) {
  hist = ctx.op("Div", {hist, helpers::reduce(ctx, "ReduceSum", hist, {}, false)});
  const int64_t d = static_cast<int64_t>(edges.size());
  for (int64_t k = 0; k < d; ++k) {
    Value* e = edges[static_cast<size_t>(k)];
    Value* w = ctx.op("Sub", {helpers::slice(ctx, e, {0}, {1}, {std::numeric_limits<int64_t>::max()}),
                              helpers::slice(ctx, e, {0}, {0}, {-1})});
    std::vector<int64_t> shape(static_cast<size_t>(d), 1);
    shape[static_cast<size_t>(k)] = -1;
    hist = ctx.op("Div", {hist, helpers::reshape(ctx, w, shape)});
  }
  return hist;
}

// histogramdd over points (N, D): per dim either a bin count (with the
// optional range, 2 numbers per dim) or given edges; the flat bin number
// is row-major over the dims. Returns (hist, edges per dim).
template <Count how>
std::pair<Value*, std::vector<Value*>> histdd(SymbolicContext& ctx, Value* pts, int64_t d,
                                              const std::vector<int64_t>& counts,
                                              const std::vector<Value*>& given_edges,
                                              const std::optional<std::vector<double>>& range, Value* weight,
                                              bool dens, DType t) {
  std::vector<Binned> dims;
  std::vector<int64_t> nb;
  for (int64_t k = 0; k < d; ++k) {
    Value* col = ctx.op("Gather", {pts, ctx.const_int(k)}, {{"axis", int64_t{1}}});
    if (!given_edges.empty()) {
      Value* e = ctx.cast(given_edges[static_cast<size_t>(k)], t);
      dims.push_back(searched_bins(ctx, col, e));
      nb.push_back(-1);
    } else {
      const int64_t bins = counts[static_cast<size_t>(k)];
      if (bins <= 0) ctx.fail("histogram: bins must be positive");
      std::vector<double> rk;
      if (range) rk = {(*range)[static_cast<size_t>(2 * k)], (*range)[static_cast<size_t>(2 * k + 1)]};
      auto [lo, hi] = outer_edges(ctx, col, t, range ? &rk : nullptr, 0.5);
      Value* edges = linspace_edges(ctx, lo, hi, bins, t);
      // the kernel reads the outer edges back from the edges tensor: lo and hi exactly
      dims.push_back(linear_bins(ctx, col, lo, hi, edges, bins, t, true));
      nb.push_back(bins);
    }
  }
  // flat index and the output shape
  Value* flat = nullptr;
  Value* valid = nullptr;
  std::vector<Value*> sizes;
  for (int64_t k = 0; k < d; ++k) {
    const Binned& b = dims[static_cast<size_t>(k)];
    Value* n = nb[static_cast<size_t>(k)] >= 0 ? ctx.const_int(nb[static_cast<size_t>(k)])
                                              : ctx.op("Sub", {helpers::dim_size(ctx, b.edges, 0), ctx.const_int(1)});
    sizes.push_back(helpers::reshape(ctx, n, {1}));
    flat = flat ? ctx.op("Add", {ctx.op("Mul", {flat, n}), b.pos}) : b.pos;
    valid = valid ? ctx.op("And", {valid, b.valid}) : b.valid;
  }
  Value* shape = sizes.size() == 1 ? sizes[0] : ctx.op("Concat", sizes, {{"axis", int64_t{0}}});
  Value* total = helpers::reduce(ctx, "ReduceProd", shape, {0}, false);
  Value* w = weight ? helpers::reshape(ctx, ctx.cast(weight, t), {-1}) : nullptr;
  Value* hist = bin_sums(ctx, how, flat, valid, w, total, w ? t : DType::Int64);
  hist = ctx.op("Reshape", {ctx.cast(hist, t), shape});
  std::vector<Value*> edges;
  for (const Binned& b : dims) edges.push_back(b.edges);
  if (dens) hist = density(ctx, hist, edges);
  return {hist, edges};
}

// aten::histogram.bin_ct(self, bins=100, *, range=None, weight=None, density=False)
// aten::histogram.bins_tensor(self, bins, *, weight=None, density=False) -> (hist, bin_edges)
template <Count how>
void histogram(SymbolicContext& ctx) {
  const DType t = hist_dtype(ctx);
  Value* pts = helpers::reshape(ctx, ctx.in(0), {-1, 1});
  const bool given = ctx.arg(1).is_tensor();
  const size_t wi = given ? 2 : 3, di = given ? 3 : 4;
  std::optional<std::vector<double>> range;
  if (!given && !ctx.none(2)) range = ctx.fs(2);
  if (range && range->size() != 2) ctx.fail("histogram: range must have 2 numbers");
  std::vector<Value*> edges_in;
  if (given) edges_in.push_back(ctx.in(1));
  std::vector<int64_t> counts{given ? 0 : (ctx.none(1) ? 100 : ctx.i(1))};
  auto [hist, edges] = histdd<how>(ctx, pts, 1, counts, edges_in, range, ctx.opt_in(wi), !ctx.none(di) && ctx.b(di), t);
  ctx.out(hist, 0);
  ctx.out(edges[0], 1);
}

// aten::histogramdd(self, bins: int[] | int | Tensor[], range=None, weight=None, density=False)
//   -> (hist, bin_edges[]): self is (..., D) points.
template <Count how>
void histogramdd(SymbolicContext& ctx) {
  const DType t = hist_dtype(ctx);
  const int64_t rank = ctx.rank(0);
  if (rank < 1) ctx.fail("histogramdd: input must have at least one dimension");
  const int64_t d = ctx.static_dim(0, -1);
  if (d < 1) ctx.fail("histogramdd: the points need at least one coordinate");
  Value* pts = helpers::reshape(ctx, ctx.in(0), {-1, d});
  const Arg& bins = ctx.arg(1);
  std::vector<Value*> edges_in;
  std::vector<int64_t> counts;
  if (bins.is_list() && !bins.elements.empty() && bins.elements[0].is_tensor()) {
    edges_in = ctx.list(1);
  } else {
    counts = ctx.is(1);
    if (counts.size() == 1) counts.assign(static_cast<size_t>(d), counts[0]);
  }
  if (!edges_in.empty() ? static_cast<int64_t>(edges_in.size()) != d : static_cast<int64_t>(counts.size()) != d)
    ctx.fail("histogramdd: bins must give one entry per coordinate");
  std::optional<std::vector<double>> range;
  if (!ctx.none(2)) range = ctx.fs(2);
  if (range && static_cast<int64_t>(range->size()) != 2 * d) ctx.fail("histogramdd: range needs 2 numbers per coordinate");
  auto [hist, edges] = histdd<how>(ctx, pts, d, counts, edges_in, range, ctx.opt_in(3), !ctx.none(4) && ctx.b(4), t);
  ctx.out(hist, 0);
  ctx.out_list(edges, 1);
}

// aten::bincount(self, weights=None, minlength=0): counts (or weight sums)
// of each value of the 1-D non-negative integer input, max(max + 1,
// minlength) bins (a length known at run time).
template <Count how>
void bincount(SymbolicContext& ctx) {
  if (ctx.rank(0) != 1) ctx.fail("bincount: input must be 1-D");
  Value* x = ctx.cast(ctx.in(0), DType::Int64);
  const int64_t minlength = ctx.none(2) ? 0 : ctx.i(2);
  Value* mx = helpers::reduce(ctx, "ReduceMax", ctx.op("Concat", {x, ctx.const_ints({-1})}, {{"axis", int64_t{0}}}),
                              {0}, false);
  Value* n = imax(ctx, ctx.op("Add", {mx, ctx.const_int(1)}), ctx.const_int(minlength));
  Value* valid = ctx.op("Not", {ctx.op("Less", {x, ctx.const_int(0)})});
  const DType out = ctx.out_dtype();
  Value* w = nullptr;
  DType acc = DType::Int64;
  if (!ctx.none(1)) {
    acc = ir::is_floating(out) ? (out == DType::Double ? DType::Double : DType::Float) : DType::Double;
    w = ctx.cast(ctx.in(1), acc);
  }
  ctx.out(ctx.cast(bin_sums(ctx, how, x, valid, w, n, acc), out));
}

}  // namespace

void register_histogram(Registry& r) {
  r.add("aten::histc", 9, histc<Count::OneHot>);
  r.add("aten::histc", 16, histc<Count::Scatter>);
  r.add("aten::histogram", 9, histogram<Count::OneHot>);
  r.add("aten::histogram", 16, histogram<Count::Scatter>);
  r.add("aten::histogramdd", 9, histogramdd<Count::OneHot>);
  r.add("aten::histogramdd", 16, histogramdd<Count::Scatter>);
  r.add("aten::bincount", 9, bincount<Count::OneHot>);
  r.add("aten::bincount", 16, bincount<Count::Scatter>);
}

}  // namespace torch2onnx::symbolics
