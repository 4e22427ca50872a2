// Scans and cumulative operators beyond CumSum: logcumsumexp (a Loop over
// the scanned axis, helpers::loop).
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::Value;

// log(exp(a) + exp(b)), -inf when both are -inf.
Value* logaddexp(SymbolicContext& ctx, Value* a, Value* b, ir::DType t) {
  Value* m = ctx.op("Max", {a, b});
  Value* d = ctx.op("Neg", {ctx.op("Abs", {ctx.op("Sub", {a, b})})});
  Value* sum = ctx.op("Add", {m, ctx.op("Log", {ctx.op("Add", {ctx.const_scalar(t, 1.0), ctx.op("Exp", {d})})})});
  Value* both_neg_inf = helpers::equal(ctx, m, ctx.const_scalar(t, -std::numeric_limits<double>::infinity()));
  return ctx.op("Where", {both_neg_inf, m, sum});
}

// aten::logcumsumexp(self, dim): a Loop over dim carrying the running value.
void logcumsumexp(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  if (rank == 0) return ctx.out(x);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  const ir::DType t = ctx.dtype(0);
  Value* first = ctx.op("Gather", {x, ctx.const_int(0)}, {{"axis", dim}});
  auto outs = helpers::loop(ctx, helpers::dim_size(ctx, x, dim), {first},
                            [&](SymbolicContext& b, Value* i, const std::vector<Value*>& c) -> std::vector<Value*> {
                              Value* xi = b.op("Gather", {x, i}, {{"axis", dim}});
                              Value* next = b.op("Where", {helpers::equal(b, i, b.const_int(0)), xi,
                                                           logaddexp(b, c[0], xi, t)});
                              return {next, next};
                            },
                            1);
  // the stacked scan output has the scanned axis first
  std::vector<int64_t> perm;
  for (int64_t k = 1; k <= dim; ++k) perm.push_back(k);
  perm.push_back(0);
  for (int64_t k = dim + 1; k < rank; ++k) perm.push_back(k);
  ctx.out(helpers::transpose(ctx, outs[1], perm));
}

}  // namespace

void register_scan(Registry& r) { r.add("aten::logcumsumexp", 9, logcumsumexp); }

}  // namespace torch2onnx::symbolics
