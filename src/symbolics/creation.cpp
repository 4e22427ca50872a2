// Tensor creation: arange, zeros/ones/full/empty (and _like, new_*), eye, linspace, scalar_tensor, tensor, meshgrid, one_hot, hann_window.
#include <algorithm>
#include <cmath>
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

// The LibTorch release the build links (CMake: major * 100 + minor): arange's
// count with an integer dtype changed in 2.14 (2.13 and 1.13 truncate the
// bounds first, 2.14 counts on them as given: arange(0.5, 80, 1.5, int64) has
// 80 elements in 2.13, 53 in 2.14).
#ifndef T2O_TORCH_VERSION_NUM
#error "T2O_TORCH_VERSION_NUM is set by CMakeLists.txt for this file"
#endif

namespace torch2onnx::symbolics {
namespace {

using ir::DType;

// ---------------------------------------------------------------- shared pieces

// The dtype PyTorch produced; the explicit dtype= argument or `dflt` when the
// example run has no answer.
DType result_dtype(const SymbolicContext& ctx, std::optional<size_t> dtype_idx, DType dflt) {
  if (ctx.num_outputs() > 0 && ctx.out_dtype() != DType::Undefined) return ctx.out_dtype();
  if (dtype_idx && !ctx.none(*dtype_idx)) return ir::dtype_from_scalar_type(ctx.i(*dtype_idx));
  return dflt;
}

// layout= must be strided (0) when given.
void check_layout(const SymbolicContext& ctx, size_t idx) {
  if (!ctx.none(idx) && ctx.constant(idx) && ctx.arg(idx).kind == Arg::Kind::Int && ctx.i(idx) != 0)
    ctx.fail("only strided tensors can be exported (layout argument " + std::to_string(idx) + ")");
}

bool is_float_arg(const Arg& a) {
  if (a.constant) {
    if (a.kind == Arg::Kind::Float) return true;
    if (a.kind == Arg::Kind::Tensor) return ir::is_floating(a.dtype);
    return false;
  }
  return ir::is_floating(a.dtype);
}

// A constant number argument as a 0-d tensor of dtype dt (integers exact).
ir::Tensor number_tensor(const SymbolicContext& ctx, size_t idx, DType dt) {
  const Arg& a = ctx.arg(idx);
  if (a.kind == Arg::Kind::Int)
    return ir::is_floating(dt) ? ir::Tensor::scalar(dt, static_cast<double>(a.i)) : ir::Tensor::scalar_int(dt, a.i);
  if (a.kind == Arg::Kind::Bool) return ir::Tensor::scalar_int(dt, a.b ? 1 : 0);
  if (a.kind == Arg::Kind::Tensor && a.tensor && a.tensor->numel() == 1) return a.tensor->converted(dt).reshaped({});
  return ir::Tensor::scalar(dt, ctx.f(idx));
}

int64_t int_of(const SymbolicContext& ctx, size_t idx) {
  const Arg& a = ctx.arg(idx);
  if (a.kind == Arg::Kind::Int) return a.i;
  if (a.kind == Arg::Kind::Bool) return a.b;
  if (a.kind == Arg::Kind::Tensor && a.tensor && a.tensor->numel() == 1 && !ir::is_floating(a.tensor->dtype()))
    return a.tensor->int_at(0);
  return static_cast<int64_t>(ctx.f(idx));  // truncation, as Scalar::to<int64_t>
}

bool constant_of_shape_supports(DType dt) { return dt != DType::BFloat16 && dt != DType::Undefined; }

// A tensor of shape `shape` (1-D int64 value) filled with argument `fill_idx`
// (a number, constant or computed at run time, or a 0-d tensor) as dtype dt.
ir::Value* filled(SymbolicContext& ctx, ir::Value* shape, size_t fill_idx, DType dt) {
  if (ctx.constant(fill_idx) && constant_of_shape_supports(dt))
    return ctx.op("ConstantOfShape", {shape}, {{"value", number_tensor(ctx, fill_idx, dt).reshaped({1})}});
  return ctx.op("Expand", {ctx.in_as(fill_idx, dt), shape});
}

ir::Value* filled_with(SymbolicContext& ctx, ir::Value* shape, double v, DType dt) {
  if (constant_of_shape_supports(dt))
    return ctx.op("ConstantOfShape", {shape}, {{"value", ir::Tensor::scalar(dt, v).reshaped({1})}});
  return ctx.op("Expand", {ctx.const_scalar(dt, v), shape});
}

// ---------------------------------------------------------------- zeros / ones / full / empty

// zeros(size, dtype, layout, device, pin_memory), ones(...), empty(size, dtype, layout, device, pin, memory_format)
void fill_sized(SymbolicContext& ctx, double v) {
  check_layout(ctx, 2);
  ctx.out(filled_with(ctx, ctx.ints_value(0), v, result_dtype(ctx, 1, DType::Float)));
}
void zeros(SymbolicContext& ctx) { fill_sized(ctx, 0.0); }
void ones(SymbolicContext& ctx) { fill_sized(ctx, 1.0); }

// empty.memory_format(size, dtype, ...) / empty.names(size, names, dtype, ...): values are unspecified; zeros.
void empty(SymbolicContext& ctx) {
  const bool named = ctx.num_args() > 1 && ctx.arg(1).is_list();
  if (named) ctx.fail("named tensors cannot be exported");
  ctx.out(filled_with(ctx, ctx.ints_value(0), 0.0, result_dtype(ctx, 1, DType::Float)));
}

// full(size, fill_value, dtype, layout, device, pin_memory)
void full(SymbolicContext& ctx) {
  check_layout(ctx, 3);
  ctx.out(filled(ctx, ctx.ints_value(0), 1, result_dtype(ctx, 2, DType::Float)));
}

// zeros_like(self, dtype, layout, device, pin_memory, memory_format) and ones_like / empty_like
void fill_like(SymbolicContext& ctx, double v) {
  check_layout(ctx, 2);
  ctx.out(filled_with(ctx, ctx.op("Shape", {ctx.in(0)}), v, result_dtype(ctx, 1, ctx.dtype(0))));
}
void zeros_like(SymbolicContext& ctx) { fill_like(ctx, 0.0); }
void ones_like(SymbolicContext& ctx) { fill_like(ctx, 1.0); }

// full_like(self, fill_value, dtype, layout, device, pin_memory, memory_format)
void full_like(SymbolicContext& ctx) {
  check_layout(ctx, 3);
  ctx.out(filled(ctx, ctx.op("Shape", {ctx.in(0)}), 1, result_dtype(ctx, 2, ctx.dtype(0))));
}

// new_zeros(self, size, dtype, layout, device, pin_memory), new_ones, new_empty
void new_fill(SymbolicContext& ctx, double v) {
  check_layout(ctx, 3);
  ctx.out(filled_with(ctx, ctx.ints_value(1), v, result_dtype(ctx, 2, ctx.dtype(0))));
}
void new_zeros(SymbolicContext& ctx) { new_fill(ctx, 0.0); }
void new_ones(SymbolicContext& ctx) { new_fill(ctx, 1.0); }

// new_full(self, size, fill_value, dtype, layout, device, pin_memory)
void new_full(SymbolicContext& ctx) {
  check_layout(ctx, 4);
  ctx.out(filled(ctx, ctx.ints_value(1), 2, result_dtype(ctx, 3, ctx.dtype(0))));
}

// fill.Scalar(self, value) / fill.Tensor(self, value); fill_ uses it.
void fill(SymbolicContext& ctx) { ctx.out(filled(ctx, ctx.op("Shape", {ctx.in(0)}), 1, ctx.dtype(0))); }

// zero(self); zero_ uses it.
void zero(SymbolicContext& ctx) { ctx.out(filled_with(ctx, ctx.op("Shape", {ctx.in(0)}), 0.0, ctx.dtype(0))); }

// ---------------------------------------------------------------- arange

// 0, 1, ..., n-1 (int64) for a 0-d int64 count n >= 0.
using IndexRange = ir::Value* (*)(SymbolicContext&, ir::Value*);

// Opset 11: Range.
ir::Value* index_range_range(SymbolicContext& ctx, ir::Value* n) {
  return ctx.op("Range", {ctx.const_int(0), n, ctx.const_int(1)});
}

// Before opset 11: the positions of n ones.
ir::Value* index_range_nonzero(SymbolicContext& ctx, ir::Value* n) {
  ir::Value* ones = ctx.op("ConstantOfShape", {helpers::unsqueeze(ctx, n, {0})},
                           {{"value", ir::Tensor::scalar_int(DType::Int64, 1).reshaped({1})}});
  return helpers::squeeze(ctx, ctx.op("NonZero", {ones}), {0});
}

// PyTorch's arange on constant bounds, as its CPU kernel computes it.
ir::Tensor arange_constant(const SymbolicContext& ctx, size_t s, std::optional<size_t> e, std::optional<size_t> st,
                           DType dt) {
  const double sd = e ? ctx.f(s) : 0.0, ed = e ? ctx.f(*e) : ctx.f(s), std_ = st ? ctx.f(*st) : 1.0;
  if (ir::is_integral(dt)) {
    const int64_t xs = e ? int_of(ctx, s) : 0, xst = st ? int_of(ctx, *st) : 1;
    if (xst == 0) ctx.fail("arange: step must be nonzero");
    // (PyTorch 2.14 counts on the bounds as given; earlier releases truncated them first for int64 results)
#if T2O_TORCH_VERSION_NUM < 214
    const int64_t xe = e ? int_of(ctx, *e) : int_of(ctx, s);
    const double size_d = dt == DType::Int64 ? std::ceil(static_cast<double>(xe - xs) / static_cast<double>(xst))
                                             : std::ceil((ed - sd) / std_);
#else
    const double size_d = std::ceil((ed - sd) / std_);
#endif
    const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(size_d));
    std::vector<int64_t> vals(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) vals[static_cast<size_t>(i)] = xs + xst * i;
    return ir::Tensor::from_int64s(vals, {n}).converted(dt);
  }
  if (std_ == 0) ctx.fail("arange: step must be nonzero");
  const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((ed - sd) / std_)));
  std::vector<double> vals(static_cast<size_t>(n));
  const bool half = dt == DType::Float16 || dt == DType::BFloat16;
  for (int64_t i = 0; i < n; ++i)
    vals[static_cast<size_t>(i)] = half ? static_cast<double>(static_cast<float>(sd) + static_cast<float>(std_) *
                                                                                           static_cast<float>(i))
                                        : sd + std_ * static_cast<double>(i);
  return ir::Tensor::from_doubles(dt, vals, {n});
}

// arange with start/end/step argument indices (start absent: 0; step absent: 1).
// dtype_idx absent (the out= forms): the dtype is the out tensor's, which the example run gives.
void arange_impl(SymbolicContext& ctx, std::optional<size_t> start, size_t end, std::optional<size_t> step,
                 std::optional<size_t> dtype_idx, IndexRange index_range) {
  if (dtype_idx) check_layout(ctx, *dtype_idx + 1);
  bool any_float = is_float_arg(ctx.arg(end));
  if (start) any_float = any_float || is_float_arg(ctx.arg(*start));
  if (step) any_float = any_float || is_float_arg(ctx.arg(*step));
  const DType dt = result_dtype(ctx, dtype_idx, any_float ? DType::Float : DType::Int64);
  if (dt == DType::Bool) ctx.fail("arange cannot produce bool tensors");
  const bool all_constant = ctx.constant(end) && (!start || ctx.constant(*start)) && (!step || ctx.constant(*step));
  if (all_constant) {
    ctx.out(ctx.constant(start ? arange_constant(ctx, *start, end, step, dt) : arange_constant(ctx, end, {}, step, dt)));
    return;
  }
  // Integer bounds (position ids, a mask's columns: sizes computed at run
  // time): Range itself, whose count max(ceil((end - start) / step), 0) and
  // values start + i * step are PyTorch's exactly for integers.
  if (!any_float && ctx.opset() >= 11) {
    auto int_arg = [&](std::optional<size_t> idx, int64_t dflt) {
      return idx ? ctx.scalar_value(*idx, DType::Int64) : ctx.const_int(dflt);
    };
    ir::Value* st = int_arg(step, 1);
    if (step && ctx.constant(*step) && ctx.i(*step) == 0) ctx.fail("arange: step must be nonzero");
    ctx.out(ctx.cast(ctx.op("Range", {int_arg(start, 0), ctx.scalar_value(end, DType::Int64), st}), dt));
    return;
  }
  // Values start + i * step in the kernel's accumulation type: double for
  // floating results, int64 (truncated bounds) for integer ones.
  const DType acc = ir::is_floating(dt) ? DType::Double : DType::Int64;
  auto get = [&](std::optional<size_t> idx, double dflt) {
    return idx ? ctx.scalar_value(*idx, acc) : ctx.const_scalar(acc, dflt);
  };
  ir::Value* s = get(start, 0.0);
  ir::Value* e = ctx.scalar_value(end, acc);
  ir::Value* st = get(step, 1.0);
  // Count: ceil((end - start) / step) in double, on the bounds as given (PyTorch 2.14; releases before
  // truncated them first for int64 results), the values from the truncated start and step.
  ir::Value* num;
  ir::Value* den;
#if T2O_TORCH_VERSION_NUM < 214
  if (dt == DType::Int64 || acc == DType::Double) {
#else
  if (acc == DType::Double) {
#endif
    num = ctx.cast(ctx.op("Sub", {e, s}), DType::Double);
    den = ctx.cast(st, DType::Double);
  } else {
    auto dbl = [&](std::optional<size_t> idx, double dflt) {
      return idx ? ctx.scalar_value(*idx, DType::Double) : ctx.const_scalar(DType::Double, dflt);
    };
    num = ctx.op("Sub", {ctx.scalar_value(end, DType::Double), dbl(start, 0.0)});
    den = dbl(step, 1.0);
  }
  ir::Value* count = ctx.op("Ceil", {ctx.op("Div", {num, den})});
  count = ctx.op("Max", {count, ctx.const_scalar(DType::Double, 0.0)});
  count = ctx.cast(count, DType::Int64);
  ir::Value* idx = ctx.cast(index_range(ctx, count), acc);
  ir::Value* vals = ctx.op("Add", {s, ctx.op("Mul", {idx, st})});
  ctx.out(ctx.cast(vals, dt));
}

// arange(end, dtype, layout, device, pin) / arange.start(start, end, dtype, ...) /
// arange.start_step(start, end, step, dtype, ...); arange.out(end, *, out) /
// arange.start_out(start, end, step, *, out) (functionalized: the result replaces out).
void arange_with(SymbolicContext& ctx, IndexRange index_range) {
  switch (ctx.num_args()) {
    case 2: return arange_impl(ctx, std::nullopt, 0, std::nullopt, std::nullopt, index_range);
    case 4: return arange_impl(ctx, 0, 1, 2, std::nullopt, index_range);
    case 5: return arange_impl(ctx, std::nullopt, 0, std::nullopt, 1, index_range);
    case 6: return arange_impl(ctx, 0, 1, std::nullopt, 2, index_range);
    case 7: return arange_impl(ctx, 0, 1, 2, 3, index_range);
    default: ctx.fail("unsupported overload with " + std::to_string(ctx.num_args()) + " arguments");
  }
}
void arange9(SymbolicContext& ctx) { arange_with(ctx, index_range_nonzero); }
void arange11(SymbolicContext& ctx) { arange_with(ctx, index_range_range); }

// _dim_arange(like, dim): arange(like.size(dim)) as int64.
void dim_arange_with(SymbolicContext& ctx, IndexRange index_range) {
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0));
  ctx.out(index_range(ctx, helpers::dim_size(ctx, ctx.in(0), dim)));
}
void dim_arange9(SymbolicContext& ctx) { dim_arange_with(ctx, index_range_nonzero); }
void dim_arange11(SymbolicContext& ctx) { dim_arange_with(ctx, index_range_range); }

// ---------------------------------------------------------------- eye / linspace / scalar_tensor

// A 1-D int64 value of the int arguments `idxs` (constants or run-time ints).
ir::Value* int_args_value(SymbolicContext& ctx, const std::vector<size_t>& idxs) {
  bool all_constant = true;
  for (size_t i : idxs) all_constant = all_constant && ctx.constant(i);
  if (all_constant) {
    std::vector<int64_t> v;
    for (size_t i : idxs) v.push_back(ctx.i(i));
    return ctx.const_ints(v);
  }
  std::vector<ir::Value*> parts;
  for (size_t i : idxs) parts.push_back(helpers::unsqueeze(ctx, ctx.scalar_value(i, DType::Int64), {0}));
  return ctx.op("Concat", parts, {{"axis", int64_t{0}}});
}

// eye(n, dtype, layout, device, pin) / eye.m(n, m, dtype, ...)
void eye(SymbolicContext& ctx) {
  const bool has_m = ctx.num_args() >= 6;
  const size_t dtype_idx = has_m ? 2 : 1;
  check_layout(ctx, dtype_idx + 1);
  const DType dt = result_dtype(ctx, dtype_idx, DType::Float);
  ir::Value* shape = int_args_value(ctx, has_m ? std::vector<size_t>{0, 1} : std::vector<size_t>{0, 0});
  // EyeLike in ONNX Runtime covers float, double, int32, int64 and uint64.
  const bool direct = dt == DType::Float || dt == DType::Double || dt == DType::Int32 || dt == DType::Int64 ||
                      dt == DType::UInt64;
  const DType via = direct ? dt : DType::Float;
  ir::Value* z = filled_with(ctx, shape, 0.0, via);
  ir::Value* y = ctx.op("EyeLike", {z}, {{"dtype", static_cast<int64_t>(via)}});
  y->type().dtype = via;
  ctx.out(ctx.cast(y, dt));
}

// linspace(start, end, steps, dtype, layout, device, pin), as the CPU kernel
// computes it: the first half from start, the second half back from end.
void linspace(SymbolicContext& ctx) {
  check_layout(ctx, 4);
  const int64_t steps = ctx.i(2);
  if (steps < 0) ctx.fail("linspace: number of steps must be non-negative");
  const DType dt = result_dtype(ctx, 3, DType::Float);
  // Integer results step in double; floating ones in their own type.
  const DType step_t = ir::is_floating(dt) ? (dt == DType::Double ? DType::Double : DType::Float) : DType::Double;
  if (steps <= 1) {
    if (steps == 0) {
      ctx.out(ctx.constant(ir::Tensor::from_doubles(dt, {}, {0})));
      return;
    }
    ctx.out(helpers::unsqueeze(ctx, ctx.cast(ctx.scalar_value(0, dt), dt), {0}));
    return;
  }
  const int64_t halfway = steps / 2;
  if (ctx.constant(0) && ctx.constant(1)) {
    std::vector<double> vals(static_cast<size_t>(steps));
    const ir::Tensor s0 = number_tensor(ctx, 0, dt), e0 = number_tensor(ctx, 1, dt);
    if (step_t == DType::Float) {
      const float s = static_cast<float>(s0.double_at(0)), e = static_cast<float>(e0.double_at(0));
      const float step = (e - s) / static_cast<float>(steps - 1);
      for (int64_t i = 0; i < steps; ++i)
        vals[static_cast<size_t>(i)] = i < halfway ? s + step * static_cast<float>(i)
                                                   : e - step * static_cast<float>(steps - i - 1);
    } else {
      const double s = s0.double_at(0), e = e0.double_at(0);
      const double step = (e - s) / static_cast<double>(steps - 1);
      for (int64_t i = 0; i < steps; ++i)
        vals[static_cast<size_t>(i)] = i < halfway ? s + step * static_cast<double>(i)
                                                   : e - step * static_cast<double>(steps - i - 1);
    }
    ctx.out(ctx.constant(ir::Tensor::from_doubles(dt, vals, {steps})));
    return;
  }
  // start and end are converted to the result type first (integers truncate).
  ir::Value* s = ctx.cast(ctx.cast(ctx.scalar_value(0, DType::Double), dt), step_t);
  ir::Value* e = ctx.cast(ctx.cast(ctx.scalar_value(1, DType::Double), dt), step_t);
  ir::Value* step = ctx.op("Div", {ctx.op("Sub", {e, s}), ctx.const_scalar(step_t, static_cast<double>(steps - 1))});
  std::vector<double> fwd(static_cast<size_t>(steps)), back(static_cast<size_t>(steps));
  std::vector<int64_t> first(static_cast<size_t>(steps));
  for (int64_t i = 0; i < steps; ++i) {
    fwd[static_cast<size_t>(i)] = static_cast<double>(i);
    back[static_cast<size_t>(i)] = static_cast<double>(steps - i - 1);
    first[static_cast<size_t>(i)] = i < halfway;
  }
  ir::Value* lo = ctx.op("Add", {s, ctx.op("Mul", {step, ctx.constant(ir::Tensor::from_doubles(step_t, fwd, {steps}))})});
  ir::Value* hi = ctx.op("Sub", {e, ctx.op("Mul", {step, ctx.constant(ir::Tensor::from_doubles(step_t, back, {steps}))})});
  ir::Value* mask = ctx.constant(ir::Tensor::from_int64s(first, {steps}).converted(DType::Bool));
  ctx.out(ctx.cast(ctx.op("Where", {mask, lo, hi}), dt));
}

// Opset 11: a number of steps computed at run time (a scripted int
// argument): the same halves as PyTorch's kernel (start + step * i below
// steps / 2, end - step * (steps - 1 - i) from there), indices from Range;
// steps 1 gives [start].
void linspace_11(SymbolicContext& ctx) {
  if (ctx.constant(2)) return linspace(ctx);
  check_layout(ctx, 4);
  const DType dt = result_dtype(ctx, 3, DType::Float);
  const DType step_t = ir::is_floating(dt) ? (dt == DType::Double ? DType::Double : DType::Float) : DType::Double;
  ir::Value* n = ctx.scalar_value(2, DType::Int64);
  auto at_least_1 = [&](ir::Value* v) {
    ir::Value* one = ctx.const_int(1);
    return ctx.op("Where", {ctx.op("Less", {v, one}), one, v});
  };
  ir::Value* idx = ctx.op("Range", {ctx.const_int(0), n, ctx.const_int(1)});
  ir::Value* s = ctx.cast(ctx.cast(ctx.scalar_value(0, DType::Double), dt), step_t);
  ir::Value* e = ctx.cast(ctx.cast(ctx.scalar_value(1, DType::Double), dt), step_t);
  ir::Value* last = ctx.op("Sub", {n, ctx.const_int(1)});
  ir::Value* step = ctx.op("Div", {ctx.op("Sub", {e, s}), ctx.cast(at_least_1(last), step_t)});
  ir::Value* lo = ctx.op("Add", {s, ctx.op("Mul", {step, ctx.cast(idx, step_t)})});
  ir::Value* hi = ctx.op("Sub", {e, ctx.op("Mul", {step, ctx.cast(ctx.op("Sub", {last, idx}), step_t)})});
  ir::Value* first = ctx.op("Less", {idx, at_least_1(ctx.op("Div", {n, ctx.const_int(2)}))});
  ctx.out(ctx.cast(ctx.op("Where", {first, lo, hi}), dt));
}

// scalar_tensor(s, dtype, layout, device, pin)
void scalar_tensor(SymbolicContext& ctx) {
  check_layout(ctx, 2);
  const DType dt = result_dtype(ctx, 1, DType::Float);
  if (ctx.constant(0)) {
    ctx.out(ctx.constant(number_tensor(ctx, 0, dt)));
    return;
  }
  ctx.out(ctx.cast(ctx.scalar_value(0, dt), dt));
}

// ---------------------------------------------------------------- tensor / as_tensor

// Constant (possibly nested) list data: values and shape.
bool nested_constant(const Arg& a, std::vector<double>& vals, std::vector<int64_t>& ints, std::vector<int64_t>& shape,
                     size_t depth, bool& any_float) {
  if (a.is_list()) {
    if (shape.size() <= depth) shape.push_back(static_cast<int64_t>(a.elements.size()));
    else if (shape[depth] != static_cast<int64_t>(a.elements.size())) return false;
    for (const Arg& e : a.elements)
      if (!nested_constant(e, vals, ints, shape, depth + 1, any_float)) return false;
    return true;
  }
  if (!a.constant) return false;
  if (a.kind == Arg::Kind::Float) {
    any_float = true;
    vals.push_back(a.f);
    ints.push_back(static_cast<int64_t>(a.f));
  } else if (a.kind == Arg::Kind::Int || a.kind == Arg::Kind::Bool) {
    const int64_t v = a.kind == Arg::Kind::Bool ? a.b : a.i;
    vals.push_back(static_cast<double>(v));
    ints.push_back(v);
  } else {
    return false;
  }
  return shape.size() == depth;
}

// tensor(t[] data, dtype, device, requires_grad), tensor.int/float/bool(t, ...),
// as_tensor.list(t[] data, dtype, device), as_tensor.int/float/bool(t, dtype, device)
void tensor_from_data(SymbolicContext& ctx) {
  const Arg& data = ctx.arg(0);
  const DType dt = result_dtype(ctx, 1, data.kind == Arg::Kind::Float ? DType::Float : DType::Int64);
  if (data.is_tensor()) {  // as_tensor(Tensor data, dtype, device)
    ctx.out(ctx.cast(ctx.in(0), dt));
    return;
  }
  if (!data.is_list()) {  // a single number
    if (ctx.constant(0)) ctx.out(ctx.constant(number_tensor(ctx, 0, dt)));
    else ctx.out(ctx.cast(ctx.scalar_value(0, dt), dt));
    return;
  }
  std::vector<double> vals;
  std::vector<int64_t> ints, shape;
  bool any_float = false;
  if (nested_constant(data, vals, ints, shape, 0, any_float)) {
    if (shape.size() > 1 && std::find(shape.begin(), shape.end(), 0) != shape.end())
      ctx.fail("empty nested lists are not supported");
    if (ir::is_floating(dt) || any_float)
      ctx.out(ctx.constant(ir::Tensor::from_doubles(DType::Double, vals, shape).converted(dt)));
    else
      ctx.out(ctx.constant(ir::Tensor::from_int64s(ints, shape).converted(dt)));
    return;
  }
  // A flat list with elements computed at run time (numbers or 0-d tensors).
  std::vector<ir::Value*> parts;
  for (size_t k = 0; k < data.elements.size(); ++k) {
    const Arg& e = data.elements[k];
    if (e.is_list()) ctx.fail("nested lists with values computed at run time are not supported");
    if (e.is_tensor() && e.rank() > 0) ctx.fail("list elements must be numbers");
    parts.push_back(helpers::unsqueeze(ctx, ctx.cast(ctx.elem(0, k), dt), {0}));
  }
  if (parts.empty()) ctx.fail("an empty list computed at run time");
  ctx.out(parts.size() == 1 ? parts[0] : ctx.op("Concat", parts, {{"axis", int64_t{0}}}));
}

// ---------------------------------------------------------------- hann_window

// hann_window(N, dtype, layout, device, pin) / hann_window.periodic(N, periodic, dtype, ...)
struct HannArgs {
  bool periodic = true;
  size_t dtype_idx = 1;
};
HannArgs hann_args(const SymbolicContext& ctx) {
  HannArgs h;
  if (ctx.num_args() >= 6) {
    h.periodic = ctx.b(1);
    h.dtype_idx = 2;
  }
  return h;
}

// 0.5 - 0.5 cos(2 pi n / (N - 1)) over N (+1 when periodic, dropping the last).
void hann_window9(SymbolicContext& ctx) {
  const HannArgs h = hann_args(ctx);
  check_layout(ctx, h.dtype_idx + 1);
  const DType dt = result_dtype(ctx, h.dtype_idx, DType::Float);
  if (!ctx.constant(0)) ctx.fail("a window length computed at run time needs opset 17 (HannWindow)");
  const int64_t n = ctx.i(0);
  if (n < 0) ctx.fail("window length must be non-negative");
  if (n <= 1) {
    ctx.out(ctx.constant(ir::Tensor::from_doubles(dt, std::vector<double>(static_cast<size_t>(n), 1.0), {n})));
    return;
  }
  const int64_t len = h.periodic ? n + 1 : n;
  std::vector<double> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = static_cast<double>(i);
  const DType ct = dt == DType::Double ? DType::Double : DType::Float;
  ir::Value* x = ctx.constant(ir::Tensor::from_doubles(ct, idx, {n}));
  x = ctx.op("Mul", {x, ctx.const_scalar(ct, 2.0 * M_PI / static_cast<double>(len - 1))});
  x = ctx.op("Mul", {ctx.op("Cos", {x}), ctx.const_scalar(ct, -0.5)});
  ctx.out(ctx.cast(ctx.op("Add", {x, ctx.const_scalar(ct, 0.5)}), dt));
}

void hann_window17(SymbolicContext& ctx) {
  const HannArgs h = hann_args(ctx);
  check_layout(ctx, h.dtype_idx + 1);
  const DType dt = result_dtype(ctx, h.dtype_idx, DType::Float);
  ir::Value* n = ctx.scalar_value(0, DType::Int64);
  ir::Value* w = ctx.op("HannWindow", {n}, {{"periodic", int64_t{h.periodic ? 1 : 0}},
                                            {"output_datatype", static_cast<int64_t>(dt)}});
  w->type().dtype = dt;
  ctx.out(w);
}

// ---------------------------------------------------------------- meshgrid / one_hot

// meshgrid(tensors) / meshgrid.indexing(tensors, indexing="ij"|"xy")
void meshgrid(SymbolicContext& ctx) {
  const std::string indexing = ctx.num_args() > 1 && !ctx.none(1) ? ctx.s(1) : "ij";
  if (indexing != "ij" && indexing != "xy") ctx.fail("indexing must be 'ij' or 'xy', got '" + indexing + "'");
  std::vector<ir::Value*> ts = ctx.list(0);
  const size_t n = ts.size();
  if (n == 0) ctx.fail("meshgrid needs at least one tensor");
  // Position of input i among the output dims.
  std::vector<size_t> pos(n);
  for (size_t i = 0; i < n; ++i) pos[i] = i;
  if (indexing == "xy" && n >= 2) std::swap(pos[0], pos[1]);
  std::vector<ir::Value*> flat(n), lens(n);
  for (size_t i = 0; i < n; ++i) {
    flat[i] = helpers::reshape(ctx, ts[i], {-1});
    lens[i] = ctx.op("Shape", {flat[i]});
  }
  std::vector<ir::Value*> dims(n);
  for (size_t i = 0; i < n; ++i) dims[pos[i]] = lens[i];
  ir::Value* shape = n == 1 ? dims[0] : ctx.op("Concat", dims, {{"axis", int64_t{0}}});
  std::vector<ir::Value*> outs;
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> view(n, 1);
    view[pos[i]] = -1;
    outs.push_back(ctx.op("Expand", {helpers::reshape(ctx, flat[i], view), shape}));
  }
  ctx.out_list(outs);
}

// one_hot(self, num_classes=-1): int64, a new last axis.
void one_hot(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  const bool given = ctx.num_args() > 1 && !ctx.none(1);
  auto inferred = [&] {  // num_classes = max(self) + 1
    ir::Value* mx = helpers::reduce(ctx, "ReduceMax", ctx.cast(x, DType::Int64), {}, false);
    return ctx.op("Add", {helpers::reshape(ctx, mx, {1}), ctx.const_ints({1})});
  };
  ir::Value* depth;
  if (given && !ctx.constant(1)) {  // computed at run time (a scripted int argument): -1 still infers
    ir::Value* n = helpers::reshape(ctx, ctx.scalar_value(1, DType::Int64), {1});
    depth = ctx.op("Where", {ctx.op("Less", {n, ctx.const_ints({0})}), inferred(), n});
  } else if (!given || ctx.i(1) < 0) {
    depth = inferred();
  } else {
    depth = ctx.const_ints({ctx.i(1)});
  }
  ir::Value* values = ctx.const_ints({0, 1});
  ir::Value* y = ctx.op("OneHot", {ctx.cast(x, DType::Int64), depth, values}, {{"axis", int64_t{-1}}});
  y->type().dtype = DType::Int64;
  ctx.out(y);
}

}  // namespace

void register_creation(Registry& r) {
  r.add("aten::zeros", 9, zeros);
  r.add("aten::ones", 9, ones);
  r.add("aten::empty", 9, empty);
  r.add("aten::full", 9, full);
  r.add("aten::zeros_like", 9, zeros_like);
  r.add("aten::ones_like", 9, ones_like);
  r.add("aten::empty_like", 9, zeros_like);
  r.add("aten::full_like", 9, full_like);
  r.add("aten::new_zeros", 9, new_zeros);
  r.add("aten::new_ones", 9, new_ones);
  r.add("aten::new_empty", 9, new_zeros);
  r.add("aten::new_full", 9, new_full);
  r.add("aten::fill", 9, fill);
  r.add("aten::zero", 9, zero);
  r.add("aten::arange", 9, arange9);
  r.add("aten::arange", 11, arange11);
  r.add("aten::_dim_arange", 9, dim_arange9);
  r.add("aten::_dim_arange", 11, dim_arange11);
  r.add("aten::eye", 9, eye);
  r.add("aten::linspace", 9, linspace);
  r.add("aten::linspace", 11, linspace_11);
  r.add("aten::scalar_tensor", 9, scalar_tensor);
  r.add("aten::tensor", 9, tensor_from_data);
  r.add("aten::as_tensor", 9, tensor_from_data);
  r.add("aten::hann_window", 9, hann_window9);
  r.add("aten::hann_window", 17, hann_window17);
  r.add("aten::meshgrid", 9, meshgrid);
  r.add("aten::one_hot", 9, one_hot);
}

}  // namespace torch2onnx::symbolics
