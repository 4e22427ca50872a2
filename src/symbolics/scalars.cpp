// Scalars and no-ops: PyTorch numbers are 0-d tensors on the ONNX side
// (int64, double or bool), so NumToTensor/Int/Float/Bool/ScalarImplicit are
// (at most) casts; detach, clone, contiguous and friends pass their input
// through; to/type_as/_to_copy/_cast_* are casts to the dtype PyTorch produces.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// Input 0 as the node's output dtype (tensor or number).
void cast_to_output(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  ctx.out(t == ir::DType::Undefined ? ctx.in(0) : ctx.cast(ctx.in(0), t));
}

// A tensor (or number) turned into a Python number: it must hold one element.
ir::Value* one_element(SymbolicContext& ctx) {
  const Arg& a = ctx.arg(0);
  ir::Value* v = ctx.in(0);
  if (a.is_tensor() && a.has_sizes && !a.sizes.empty()) {
    int64_t n = 1;
    for (int64_t d : a.sizes) n *= d;
    if (n != 1) ctx.fail("only a tensor of one element can be converted to a Python number");
    v = helpers::reshape(ctx, v, {});
  }
  return v;
}

// aten::Int / aten::IntImplicit: float -> int truncates toward zero, as Cast does.
void to_int(SymbolicContext& ctx) { ctx.out(ctx.cast(one_element(ctx), ir::DType::Int64)); }
// aten::Float / aten::FloatImplicit
void to_float(SymbolicContext& ctx) { ctx.out(ctx.cast(one_element(ctx), ir::DType::Double)); }
// aten::Bool: non-zero is true.
void to_bool(SymbolicContext& ctx) { ctx.out(ctx.cast(one_element(ctx), ir::DType::Bool)); }
// aten::ScalarImplicit / aten::item: a number of the tensor's kind (int64, double or bool).
void to_scalar(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  ir::Value* v = one_element(ctx);
  ctx.out(t == ir::DType::Undefined ? v : ctx.cast(v, t));
}

// prim::dtype(a) -> int: the ScalarType code of the dtype (known from the example run).
void prim_dtype(SymbolicContext& ctx) {
  const ir::DType t = ctx.dtype(0);
  if (t == ir::DType::Undefined) ctx.fail("the dtype of the tensor is unknown");
  ctx.out(ctx.const_int(ir::scalar_type_from_dtype(t)));
}

// aten::set_(self, source): self becomes source (its values, shape and
// dtype); functionalized, the result is source.
void set_source(SymbolicContext& ctx) {
  if (ctx.num_args() != 2) ctx.fail("only set_(source) with a tensor source can be exported");
  ctx.out(ctx.in(1));
}

// prim::tolist(self, dim, elem_type) (scripted `x.tolist()` with a List[int]
// / List[float] / List[bool] annotation): a 1-D tensor gives a list of
// run-time length, an ONNX sequence of its elements as int64 / double / bool
// numbers (opset 11); a 0-d tensor gives a number.
void tolist(SymbolicContext& ctx) {
  const int64_t dim = ctx.i(1), elem = ctx.i(2);
  if (dim != ctx.rank(0)) ctx.fail("the tensor's rank (" + std::to_string(ctx.rank(0)) + ") differs from the annotation's");
  if (dim > 1) ctx.fail("only lists of numbers (a 0-d or 1-D tensor) can be exported, not nested lists");
  const ir::DType t = elem == 0 ? ir::DType::Int64 : elem == 1 ? ir::DType::Double : elem == 2 ? ir::DType::Bool
                                                                                              : ir::DType::Undefined;
  if (t == ir::DType::Undefined) ctx.fail("lists of complex numbers cannot be exported");
  ir::Value* x = ctx.cast(ctx.in(0), t);
  if (dim == 0) return ctx.out(x);
  if (ctx.opset() < 11) ctx.fail("a list of run-time length needs ONNX sequences (opset 11 or later)");
  ctx.out_sequence(ctx.op("SplitToSequence", {x}, {{"axis", int64_t{0}}, {"keepdims", int64_t{0}}}));
}

// aten::__range_length(int lo, int hi, int step) -> int: how many values
// range(lo, hi, step) has (a scripted loop's trip count):
// max(0, (hi - lo + step - sign(step)) / step), the division exact or
// truncated toward zero as ONNX's integer Div does; max(0, q) = (q + |q|) / 2.
void range_length(SymbolicContext& ctx) {
  auto in = helpers::inputs_as(ctx, {0, 1, 2}, ir::DType::Int64);
  ir::Value* step = in[2];
  ir::Value* span = ctx.op("Sub", {ctx.op("Add", {ctx.op("Sub", {in[1], in[0]}), step}), ctx.op("Sign", {step})});
  ir::Value* q = ctx.op("Div", {span, step});
  ctx.out(ctx.op("Div", {ctx.op("Add", {q, ctx.op("Abs", {q})}), ctx.const_scalar(ir::DType::Int64, 2)}));
}

// aten::__derive_index(int index, int start, int step) -> int: the loop
// variable of range(start, ..., step) at iteration `index`.
void derive_index(SymbolicContext& ctx) {
  auto in = helpers::inputs_as(ctx, {0, 1, 2}, ir::DType::Int64);
  ctx.out(ctx.op("Add", {in[1], ctx.op("Mul", {in[0], in[2]})}));
}

}  // namespace

void register_scalars(Registry& r) {
  r.add("prim::NumToTensor", 9, cast_to_output);
  r.add("aten::ScalarImplicit", 9, to_scalar);
  r.add("aten::item", 9, to_scalar);
  r.add("aten::Int", 9, to_int);
  r.add("aten::IntImplicit", 9, to_int);
  r.add("aten::Float", 9, to_float);
  r.add("aten::FloatImplicit", 9, to_float);
  r.add("aten::Bool", 9, to_bool);
  r.add("prim::dtype", 9, prim_dtype);
  r.add("aten::set_", 9, set_source);
  r.add("prim::tolist", 9, tolist);
  r.add("aten::__range_length", 9, range_length);
  r.add("aten::__derive_index", 9, derive_index);
  for (const char* op : {"aten::detach", "aten::clone", "aten::contiguous", "aten::alias", "aten::lift_fresh",
                         "aten::lift", "aten::lift_fresh_copy", "aten::detach_copy", "aten::alias_copy",
                         "aten::resolve_conj", "aten::resolve_neg", "aten::positive", "aten::cpu", "prim::data"})
    r.add(op, 9, helpers::pass_through);
  for (const char* op : {"aten::to", "aten::type_as", "aten::_to_copy", "aten::_cast_Byte", "aten::_cast_Char",
                         "aten::_cast_Short", "aten::_cast_Int", "aten::_cast_Long", "aten::_cast_Half",
                         "aten::_cast_Float", "aten::_cast_Double"})
    r.add(op, 9, cast_to_output);
}

}  // namespace torch2onnx::symbolics
