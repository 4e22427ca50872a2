// Set membership: isin. (unique, unique_consecutive and their dim forms are
// in sort.cpp.)
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

// aten::isin.Tensor_Tensor / .Tensor_Scalar / .Scalar_Tensor(elements,
// test_elements, *, assume_unique=False, invert=False): each element is
// compared (==, so NaN is never in a set) with every test element, flattened,
// in the two arguments' promoted dtype; the matches are summed (an empty set
// gives 0: false). assume_unique only selects PyTorch's algorithm, never the
// result. O(numel(elements) * numel(test_elements)) comparisons.
void isin(SymbolicContext& ctx) {
  const DType rt = helpers::result_type(ctx, {0, 1});
  // Equal takes int32/int64/bool before opset 13 and floats from 11
  // (helpers::equal covers 9 and 10): other types widen exactly.
  const DType c = ir::is_floating(rt) ? (rt == DType::Double ? DType::Double : DType::Float)
                                      : (rt == DType::Int32 ? DType::Int32 : DType::Int64);
  auto in = helpers::inputs_as(ctx, {0, 1}, c);
  const int64_t rank = ctx.arg(0).is_tensor() ? ctx.rank(0) : 0;
  Value* e = helpers::unsqueeze(ctx, in[0], {rank});  // (..., 1)
  Value* s = helpers::reshape(ctx, in[1], {-1});      // (M)
  Value* eq = helpers::equal(ctx, e, s);
  // (helpers::equal's opset 9-10 float form is true for x == NaN when only the right side is NaN)
  if (ir::is_floating(c)) eq = ctx.op("And", {eq, ctx.op("Not", {ctx.op("IsNaN", {s})})});
  Value* hits = ctx.cast(eq, DType::Int64);
  Value* any = ctx.op("Greater", {helpers::reduce(ctx, "ReduceSum", hits, {rank}, false), ctx.const_int(0)});
  const bool invert = !ctx.none(3) && ctx.b(3);
  ctx.out(invert ? ctx.op("Not", {any}) : any);
}

}  // namespace

void register_sets(Registry& r) { r.add("aten::isin", 9, isin); }

}  // namespace torch2onnx::symbolics
