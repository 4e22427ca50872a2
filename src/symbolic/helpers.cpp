#include "symbolic/helpers.h"

#include <algorithm>
#include <limits>

namespace torch2onnx::helpers {

int64_t normalize_dim(const SymbolicContext& ctx, int64_t dim, int64_t rank) {
  int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank)
    ctx.fail("dimension " + std::to_string(dim) + " is out of range for a tensor of rank " + std::to_string(rank));
  return d;
}

std::vector<int64_t> normalize_dims(const SymbolicContext& ctx, const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (int64_t d : dims) out.push_back(normalize_dim(ctx, d, rank));
  return out;
}

ir::Value* unsqueeze(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& axes) {
  if (ctx.opset() >= 13) return ctx.op("Unsqueeze", {v, ctx.const_ints(axes)});
  return ctx.op("Unsqueeze", {v}, {{"axes", axes}});
}

ir::Value* squeeze(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& axes) {
  if (axes.empty()) return ctx.op("Squeeze", {v});
  if (ctx.opset() >= 13) return ctx.op("Squeeze", {v, ctx.const_ints(axes)});
  return ctx.op("Squeeze", {v}, {{"axes", axes}});
}

void settle_squeeze_by_output_rank(const SymbolicContext& ctx, int64_t rank, std::vector<int64_t>& axes,
                                   std::vector<int64_t>& varying) {
  if (varying.empty() || !ctx.output_ranks_fixed() || ctx.out_info(0).rank() < 0) return;
  const int64_t gone = rank - ctx.out_info(0).rank();
  if (gone == static_cast<int64_t>(axes.size())) {
    varying.clear();  // (the program keeps them: its guards say they are not 1)
  } else if (gone == static_cast<int64_t>(axes.size() + varying.size())) {
    axes.insert(axes.end(), varying.begin(), varying.end());
    std::sort(axes.begin(), axes.end());
    varying.clear();
  }
}

ir::Value* reduce(SymbolicContext& ctx, const std::string& op, ir::Value* v, const std::vector<int64_t>& axes,
                  bool keepdims) {
  const int64_t kd = keepdims ? 1 : 0;
  // ReduceSum takes axes as an input from opset 13; the others from 18.
  if (ctx.opset() >= (op == "ReduceSum" ? 13 : 18)) {
    if (axes.empty()) return ctx.op(op, {v}, {{"keepdims", kd}});
    return ctx.op(op, {v, ctx.const_ints(axes)}, {{"keepdims", kd}});
  }
  if (axes.empty()) return ctx.op(op, {v}, {{"keepdims", kd}});
  return ctx.op(op, {v}, {{"axes", axes}, {"keepdims", kd}});
}

ir::Value* slice(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& axes,
                 const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                 const std::vector<int64_t>& steps) {
  bool unit_steps = true;
  for (int64_t s : steps) unit_steps = unit_steps && s == 1;
  if (ctx.opset() < 10) {
    if (!unit_steps) ctx.fail("slicing with a step other than 1 needs opset 10 or later");
    return ctx.op("Slice", {v}, {{"axes", axes}, {"starts", starts}, {"ends", ends}});
  }
  std::vector<ir::Value*> ins{v, ctx.const_ints(starts), ctx.const_ints(ends), ctx.const_ints(axes)};
  if (!unit_steps) ins.push_back(ctx.const_ints(steps));
  return ctx.op("Slice", ins);
}

ir::Value* slice_dynamic(SymbolicContext& ctx, ir::Value* v, ir::Value* starts, ir::Value* ends, ir::Value* axes,
                         ir::Value* steps) {
  if (ctx.opset() < 10) ctx.fail("slicing with bounds computed at run time needs opset 10 or later");
  std::vector<ir::Value*> ins{v, starts, ends, axes};
  if (steps) ins.push_back(steps);
  return ctx.op("Slice", ins);
}

std::vector<ir::Value*> split(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& sizes, int64_t axis) {
  if (sizes.size() == 1) return {ctx.op("Identity", {v})};
  const int64_t n = static_cast<int64_t>(sizes.size());
  const bool even = std::all_of(sizes.begin(), sizes.end(), [&](int64_t s) { return s == sizes[0]; });
  // Opset 18: equal parts need no sizes (num_outputs).
  if (ctx.opset() >= 18 && even) return ctx.op_n("Split", {v}, sizes.size(), {{"axis", axis}, {"num_outputs", n}});
  if (ctx.opset() >= 13) return ctx.op_n("Split", {v, ctx.const_ints(sizes)}, sizes.size(), {{"axis", axis}});
  return ctx.op_n("Split", {v}, sizes.size(), {{"axis", axis}, {"split", sizes}});
}

ir::Value* clip(SymbolicContext& ctx, ir::Value* v, std::optional<double> lo, std::optional<double> hi) {
  if (ctx.opset() < 11) {
    ir::Attributes attrs;
    if (lo) attrs.emplace_back("min", *lo);
    if (hi) attrs.emplace_back("max", *hi);
    return ctx.op("Clip", {v}, std::move(attrs));
  }
  ir::DType dt = v->dtype() == ir::DType::Undefined ? ir::DType::Float : v->dtype();
  std::vector<ir::Value*> ins{v, lo ? ctx.const_scalar(dt, *lo) : nullptr};
  if (hi) ins.push_back(ctx.const_scalar(dt, *hi));
  return ctx.op("Clip", ins);
}

ir::Value* pad(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& pads, const std::string& mode,
               double value) {
  if (ctx.opset() < 11) return ctx.op("Pad", {v}, {{"mode", mode}, {"pads", pads}, {"value", value}});
  std::vector<ir::Value*> ins{v, ctx.const_ints(pads)};
  if (mode == "constant") {
    ir::DType dt = v->dtype() == ir::DType::Undefined ? ir::DType::Float : v->dtype();
    ins.push_back(ctx.const_scalar(dt, value));
  }
  return ctx.op("Pad", ins, {{"mode", mode}});
}

ir::Value* dim_size(SymbolicContext& ctx, ir::Value* v, int64_t dim) {
  ir::Value* shape = ctx.op("Shape", {v});
  return ctx.op("Gather", {shape, ctx.const_int(dim)}, {{"axis", int64_t{0}}});
}

ir::Value* arange(SymbolicContext& ctx, ir::Value* n) {
  if (ctx.opset() >= 11) return ctx.op("Range", {ctx.const_int(0), n, ctx.const_int(1)});
  ir::Value* shape = unsqueeze(ctx, n, {0});
  ir::Value* ones = ctx.op("ConstantOfShape", {shape}, {{"value", ir::Tensor::from_int64s({1}, {1})}});
  return reshape(ctx, ctx.op("NonZero", {ones}), {-1});
}

ir::Value* equal(SymbolicContext& ctx, ir::Value* a, ir::Value* b) {
  ir::DType t = a->dtype();
  if (ctx.opset() >= 11 || t == ir::DType::Int32 || t == ir::DType::Int64 || t == ir::DType::Bool)
    return ctx.op("Equal", {a, b});
  if (!ir::is_floating(t)) {  // other integers: Equal-7 takes int32/int64
    return ctx.op("Equal", {ctx.cast(a, ir::DType::Int64), ctx.cast(b, ir::DType::Int64)});
  }
  ir::Value* ne = ctx.op("Or", {ctx.op("Less", {a, b}), ctx.op("Greater", {a, b})});
  ir::Value* nan = ctx.op("Or", {ctx.op("IsNaN", {a}), ctx.op("IsNaN", {b})});
  return ctx.op("Not", {ctx.op("Or", {ne, nan})});
}

ir::Value* round_half_even(SymbolicContext& ctx, ir::Value* x) {
  if (ctx.opset() >= 11) return ctx.op("Round", {x});
  // floor(x + 0.5), less one on a tie (x + 0.5 whole) that lands on an odd number
  const ir::DType t = x->dtype();
  ir::Value* f = ctx.op("Floor", {ctx.op("Add", {x, ctx.const_scalar(t, 0.5)})});
  ir::Value* tie = equal(ctx, ctx.op("Sub", {f, x}), ctx.const_scalar(t, 0.5));
  ir::Value* half = ctx.op("Mul", {f, ctx.const_scalar(t, 0.5)});
  ir::Value* odd = ctx.op("Not", {equal(ctx, ctx.op("Floor", {half}), half)});
  return ctx.op("Sub", {f, ctx.cast(ctx.op("And", {tie, odd}), t)});
}

ir::Value* layer_norm(SymbolicContext& ctx, ir::Value* x, int64_t axes_count, ir::Value* scale, ir::Value* bias,
                      double eps, ir::DType dtype, const std::vector<int64_t>& normalized_shape) {
  if (ctx.opset() >= 17) {
    if (!scale) {
      int64_t n = 1;
      for (int64_t d : normalized_shape) n *= d;
      scale = ctx.constant(ir::Tensor::from_doubles(dtype, std::vector<double>(static_cast<size_t>(n), 1.0),
                                                    normalized_shape));
    }
    std::vector<ir::Value*> ins{x, scale};
    if (bias) ins.push_back(bias);
    return ctx.op("LayerNormalization", ins, {{"axis", -axes_count}, {"epsilon", eps}});
  }
  std::vector<int64_t> axes;
  for (int64_t i = -axes_count; i < 0; ++i) axes.push_back(i);
  ir::Value* mean = reduce(ctx, "ReduceMean", x, axes, true);
  ir::Value* d = ctx.op("Sub", {x, mean});
  ir::Value* var = reduce(ctx, "ReduceMean", ctx.op("Mul", {d, d}), axes, true);
  ir::Value* y = ctx.op("Div", {d, ctx.op("Sqrt", {ctx.op("Add", {var, ctx.const_scalar(dtype, eps)})})});
  if (scale) y = ctx.op("Mul", {y, scale});
  if (bias) y = ctx.op("Add", {y, bias});
  return y;
}

ir::Value* linear(SymbolicContext& ctx, ir::Value* x, ir::Value* w, ir::Value* b) {
  ir::Value* y = ctx.op("MatMul", {x, ctx.op("Transpose", {w}, {{"perm", std::vector<int64_t>{1, 0}}})});
  return b ? ctx.op("Add", {y, b}) : y;
}

ir::Value* reshape(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& shape) {
  return ctx.op("Reshape", {v, ctx.const_ints(shape)});
}

ir::Value* transpose(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return ctx.op("Transpose", {v}, {{"perm", perm}});
  return v;
}

std::vector<int64_t> inverse_perm(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

Diagonal diagonal(SymbolicContext& ctx, ir::Value* x, const std::vector<int64_t>& sizes, int64_t offset, int64_t d1,
                  int64_t d2) {
  const int64_t rank = static_cast<int64_t>(sizes.size());
  const int64_t n1 = sizes[static_cast<size_t>(d1)], n2 = sizes[static_cast<size_t>(d2)];
  Diagonal d;
  for (int64_t k = 0; k < rank; ++k)
    if (k != d1 && k != d2) d.perm.push_back(k);
  d.perm.push_back(d1);
  d.perm.push_back(d2);
  d.moved = transpose(ctx, x, d.perm);
  std::vector<int64_t> flat(static_cast<size_t>(rank - 2), 0);
  flat.push_back(n1 * n2);
  d.flat = reshape(ctx, d.moved, flat);
  for (int64_t i = 0;; ++i) {
    const int64_t r = offset >= 0 ? i : i - offset, c = offset >= 0 ? i + offset : i;
    if (r >= n1 || c >= n2) break;
    d.positions.push_back(r * n2 + c);
  }
  return d;
}

namespace {

// c10's combine_categories: `higher` has priority, `lower` only wins on category.
ir::DType combine(ir::DType higher, ir::DType lower) {
  if (higher == ir::DType::Undefined) return lower;
  if (lower == ir::DType::Undefined) return higher;
  if (ir::is_floating(higher)) return higher;
  if (higher == ir::DType::Bool || ir::is_floating(lower)) return ir::promote_types(higher, lower);
  return higher;
}

}  // namespace

ir::DType result_type(const SymbolicContext& ctx, const std::vector<size_t>& args) {
  ir::DType dim = ir::DType::Undefined, zero = ir::DType::Undefined, wrapped = ir::DType::Undefined;
  for (size_t i : args) {
    const Arg& a = ctx.arg(i);
    if (a.is_none()) continue;
    if (a.kind == Arg::Kind::Int || a.kind == Arg::Kind::Float || a.kind == Arg::Kind::Bool) {
      ir::DType t = a.kind == Arg::Kind::Float ? ir::DType::Float
                    : a.kind == Arg::Kind::Int ? ir::DType::Int64
                                               : ir::DType::Bool;
      wrapped = wrapped == ir::DType::Undefined ? t : ir::promote_types(wrapped, t);
    } else if (a.rank() == 0) {
      zero = zero == ir::DType::Undefined ? a.dtype : ir::promote_types(zero, a.dtype);
    } else {
      dim = dim == ir::DType::Undefined ? a.dtype : ir::promote_types(dim, a.dtype);
    }
  }
  return combine(dim, combine(zero, wrapped));
}

std::vector<ir::Value*> inputs_as(SymbolicContext& ctx, const std::vector<size_t>& args, ir::DType t) {
  std::vector<ir::Value*> out;
  out.reserve(args.size());
  for (size_t i : args) out.push_back(ctx.in_as(i, t));
  return out;
}

void pass_through(SymbolicContext& ctx) { ctx.out(ctx.in(0)); }

std::vector<ir::Value*> loop(SymbolicContext& ctx, ir::Value* trip_count, const std::vector<ir::Value*>& carried,
                             const LoopBody& body_fn, size_t num_scan) {
  if (carried.empty() && ctx.opset() < 11) {  // Loop-1 wants a carried value: a dummy one
    std::vector<ir::Value*> outs = loop(
        ctx, trip_count, {ctx.const_int(0)},
        [&](SymbolicContext& b, ir::Value* it, const std::vector<ir::Value*>& c) {
          std::vector<ir::Value*> r{c[0]};
          for (ir::Value* v : body_fn(b, it, {})) r.push_back(v);
          return r;
        },
        num_scan);
    return {outs.begin() + 1, outs.end()};
  }
  ir::Graph& g = ctx.graph();
  auto body = std::make_shared<ir::Graph>(&g);
  body->set_name(g.unique_name("loop_body"));
  ir::Value* iter = body->add_input(body->unique_name("iteration"), ir::ValueType::tensor(ir::DType::Int64, {}));
  body->add_input(body->unique_name("condition"), ir::ValueType::tensor(ir::DType::Bool, {}));
  std::vector<ir::Value*> state;
  for (ir::Value* c : carried) {
    if (c->dtype() == ir::DType::Undefined) ctx.fail("internal: a loop-carried value of unknown dtype");
    ir::ValueType t = ir::ValueType::tensor(c->dtype());
    if (c->type().has_shape) {  // the rank stays; sizes may change from one iteration to the next
      t.has_shape = true;
      t.shape.assign(c->type().shape.size(), ir::Dim{});
    }
    state.push_back(body->add_input(body->unique_name("carried"), t));
  }
  SymbolicContext inner(ctx.kind(), {}, {}, body.get(), ctx.opset());
  std::vector<ir::Value*> next = body_fn(inner, iter, state);
  if (next.size() != carried.size() + num_scan)
    ctx.fail("internal: a loop body returned " + std::to_string(next.size()) + " values, expected " +
             std::to_string(carried.size() + num_scan));
  ir::Value* keep_going =
      body->create_node("Constant", {}, 1, {{"value", ir::Tensor::scalar_int(ir::DType::Bool, 1)}})->output(0);
  keep_going->set_type(ir::ValueType::tensor(ir::DType::Bool, {}));
  body->add_output(keep_going);
  for (size_t k = 0; k < next.size(); ++k) {
    ir::Value* v = next[k];
    if (k < carried.size()) v = inner.cast(v, carried[k]->dtype());
    if (!v->producer() || v->graph() != body.get()) {  // a body input or an outer value: through an Identity
      ir::Value* id = body->create_node("Identity", {v}, 1)->output(0);
      id->set_type(v->type());
      v = id;
    }
    body->add_output(v);
  }
  std::vector<ir::Value*> ins{trip_count, ctx.const_scalar(ir::DType::Bool, 1)};
  ins.insert(ins.end(), carried.begin(), carried.end());
  ir::Node* node = g.create_node("Loop", ins, next.size(), {{"body", body}});
  for (size_t k = 0; k < next.size(); ++k)
    node->output(k)->type().dtype = k < carried.size() ? carried[k]->dtype() : next[k]->dtype();
  return node->outputs();
}

}  // namespace torch2onnx::helpers
