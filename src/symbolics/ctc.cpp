// Connectionist temporal classification loss (F.ctc_loss, nn.CTCLoss): the
// forward (alpha) recursion in log space, a Loop over time on the whole
// batch at once (GatherElements and CumSum: opset 11).
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

constexpr double kInf = std::numeric_limits<double>::infinity();

// log(sum(exp(v))) over values of one shape; -inf when all are -inf.
Value* logsumexp(SymbolicContext& c, const std::vector<Value*>& vs, DType t) {
  Value* m = vs.size() == 1 ? vs[0] : c.op("Max", vs);
  Value* neg_inf = c.const_scalar(t, -kInf);
  Value* all_neg_inf = helpers::equal(c, m, neg_inf);
  Value* safe_m = c.op("Where", {all_neg_inf, c.const_scalar(t, 0.0), m});
  std::vector<Value*> exps;
  for (Value* v : vs) exps.push_back(c.op("Exp", {c.op("Sub", {v, safe_m})}));
  Value* s = exps.size() == 1 ? exps[0] : c.op("Sum", exps);
  return c.op("Where", {all_neg_inf, neg_inf, c.op("Add", {safe_m, c.op("Log", {s})})});
}

// Elementwise max/min of int64 values (Max/Min take integers only from opset 12).
Value* imax(SymbolicContext& c, Value* a, Value* b) { return c.op("Where", {c.op("Less", {a, b}), b, a}); }
Value* imin(SymbolicContext& c, Value* a, Value* b) { return c.op("Where", {c.op("Less", {a, b}), a, b}); }

// x ([N, E]) shifted right by k along axis 1, -inf coming in.
Value* shift_right(SymbolicContext& c, Value* x, int64_t k, int64_t E, DType t) {
  if (k >= E) return c.op("Where", {helpers::equal(c, x, x), c.const_scalar(t, -kInf), c.const_scalar(t, -kInf)});
  Value* head = c.op("Expand", {c.const_scalar(t, -kInf),
                                c.op("Concat", {helpers::slice(c, c.op("Shape", {x}), {0}, {0}, {1}), c.const_ints({k})},
                                     {{"axis", int64_t{0}}})});
  return c.op("Concat", {head, helpers::slice(c, x, {1}, {0}, {-k})}, {{"axis", int64_t{1}}});
}

Value* lengths(SymbolicContext& ctx, size_t i) {
  Value* v = ctx.arg(i).is_list() ? ctx.ints_value(i) : ctx.cast(ctx.in(i), DType::Int64);
  return helpers::reshape(ctx, v, {-1});
}

// aten::ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0,
// reduction=Mean, zero_infinity=False), lengths as int lists or tensors;
// log_probs [T, N, C] (or [T, C]), targets [N, S] padded or 1-D concatenated.
void ctc_loss(SymbolicContext& ctx) {
  Value* lp = ctx.in(0);
  const DType t = ctx.dtype(0) == DType::Double ? DType::Double : DType::Float;
  lp = ctx.cast(lp, t);
  const bool batched = ctx.rank(0) == 3;
  if (!batched && ctx.rank(0) != 2) ctx.fail("ctc_loss takes log_probs of shape [T, N, C] or [T, C]");
  if (!batched) lp = helpers::unsqueeze(ctx, lp, {1});
  const int64_t blank = ctx.i(4);
  const int64_t reduction = ctx.i(5);  // 0 none, 1 mean, 2 sum
  const bool zero_infinity = ctx.b(6);
  Value* in_len = lengths(ctx, 2);
  Value* tg_len = lengths(ctx, 3);
  Value* targets = ctx.cast(ctx.in(1), DType::Int64);
  // targets as [N, S] (padded): the concatenated form read at each sequence's offset, clamped
  const int64_t trank = ctx.rank(1);
  int64_t S = 0;
  if (trank == 1 && batched) {
    S = ctx.static_dim(1, 0);
    Value* offsets = ctx.op("Sub", {ctx.op("CumSum", {tg_len, ctx.const_int(0)}), tg_len});
    Value* pos = ctx.op("Add", {helpers::unsqueeze(ctx, offsets, {1}), helpers::unsqueeze(ctx, ctx.const_ints([&] {
                                  std::vector<int64_t> r;
                                  for (int64_t j = 0; j < S; ++j) r.push_back(j);
                                  return r;
                                }()), {0})});
    pos = imin(ctx, pos, ctx.const_int(S > 0 ? S - 1 : 0));
    targets = S > 0 ? ctx.op("Gather", {targets, pos}, {{"axis", int64_t{0}}}) : helpers::reshape(ctx, pos, {-1, 0});
  } else {
    if (!batched) targets = helpers::unsqueeze(ctx, targets, {0});
    S = ctx.static_dim(1, -1);
  }
  // the extended labels [N, 2S+1]: blank, l1, blank, l2, ..., blank
  const int64_t E = 2 * S + 1;
  Value* n_shape = helpers::slice(ctx, ctx.op("Shape", {targets}), {0}, {0}, {1});
  Value* blanks = ctx.op("Expand", {ctx.const_int(blank), ctx.op("Concat", {n_shape, ctx.const_ints({S, 1})}, {{"axis", int64_t{0}}})});
  Value* end_blank = ctx.op("Expand", {ctx.const_int(blank), ctx.op("Concat", {n_shape, ctx.const_ints({1})},
                                                                      {{"axis", int64_t{0}}})});  // [N, 1]
  Value* ext = end_blank;
  if (S > 0) {
    Value* pairs = ctx.op("Concat", {blanks, helpers::unsqueeze(ctx, targets, {2})}, {{"axis", int64_t{2}}});  // [N, S, 2]
    ext = ctx.op("Concat", {helpers::reshape(ctx, pairs, {0, 2 * S}), end_blank}, {{"axis", int64_t{1}}});
  }
  // may come from l'[s-2]: s >= 2, l'[s] not blank and different from l'[s-2]
  Value* skip_ok;
  if (S == 0) {
    skip_ok = ctx.op("Not", {helpers::equal(ctx, ext, ext)});
  } else {
    Value* prev2 = ctx.op("Concat", {ctx.op("Expand", {ctx.const_int(blank), ctx.op("Concat", {n_shape, ctx.const_ints({2})},
                                                                                      {{"axis", int64_t{0}}})}),
                                     helpers::slice(ctx, ext, {1}, {0}, {-2})},
                          {{"axis", int64_t{1}}});
    skip_ok = ctx.op("And", {ctx.op("Not", {helpers::equal(ctx, ext, ctx.const_int(blank))}),
                             ctx.op("Not", {helpers::equal(ctx, ext, prev2)})});
  }
  // log_probs of the extended labels at every time: [T, N, E]
  Value* T_shape = helpers::slice(ctx, ctx.op("Shape", {lp}), {0}, {0}, {1});
  Value* ext_t = ctx.op("Expand", {helpers::unsqueeze(ctx, ext, {0}),
                                   ctx.op("Concat", {T_shape, ctx.op("Shape", {ext})}, {{"axis", int64_t{0}}})});
  Value* lpe = ctx.op("GatherElements", {lp, ext_t}, {{"axis", int64_t{2}}});
  // alpha at t = 0: the first blank and the first label
  Value* lp0 = ctx.op("Gather", {lpe, ctx.const_int(0)}, {{"axis", int64_t{0}}});  // [N, E]
  std::vector<int64_t> first(static_cast<size_t>(E), 0);
  first[0] = 1;
  if (E > 1) first[1] = 1;
  Value* is_first = ctx.cast(ctx.constant(ir::Tensor::from_int64s(first, {1, E})), DType::Bool);
  Value* alpha0 = ctx.op("Where", {is_first, lp0, ctx.const_scalar(t, -kInf)});
  Value* steps = ctx.op("Sub", {helpers::reshape(ctx, T_shape, std::vector<int64_t>{}), ctx.const_int(1)});
  Value* active_len = helpers::unsqueeze(ctx, in_len, {1});  // [N, 1]
  auto outs = helpers::loop(ctx, steps, {alpha0}, [&](SymbolicContext& c, Value* i, const std::vector<Value*>& v) {
    Value* step = c.op("Add", {i, c.const_int(1)});
    Value* a = v[0];
    Value* a2 = c.op("Where", {skip_ok, shift_right(c, a, 2, E, t), c.const_scalar(t, -kInf)});
    Value* next = c.op("Add", {logsumexp(c, {a, shift_right(c, a, 1, E, t), a2}, t),
                               c.op("Gather", {lpe, step}, {{"axis", int64_t{0}}})});
    // sequences shorter than T keep their last alpha
    return std::vector<Value*>{c.op("Where", {c.op("Less", {step, active_len}), next, a})};
  });
  Value* alpha = outs[0];  // [N, E]
  // -log(alpha[2L] + alpha[2L - 1]) with L each sequence's target length
  Value* last = helpers::unsqueeze(ctx, ctx.op("Mul", {tg_len, ctx.const_int(2)}), {1});
  Value* a_last = ctx.op("GatherElements", {alpha, last}, {{"axis", int64_t{1}}});
  Value* before = imax(ctx, ctx.op("Sub", {last, ctx.const_int(1)}), ctx.const_int(0));
  Value* a_before = ctx.op("Where", {ctx.op("Greater", {last, ctx.const_int(0)}),
                                     ctx.op("GatherElements", {alpha, before}, {{"axis", int64_t{1}}}),
                                     ctx.const_scalar(t, -kInf)});
  Value* loss = helpers::squeeze(ctx, ctx.op("Neg", {logsumexp(ctx, {a_last, a_before}, t)}), {1});  // [N]
  if (zero_infinity)
    loss = ctx.op("Where", {helpers::equal(ctx, loss, ctx.const_scalar(t, kInf)), ctx.const_scalar(t, 0.0), loss});
  if (reduction == 1) {
    Value* denom = ctx.cast(imax(ctx, tg_len, ctx.const_int(1)), t);
    loss = helpers::reduce(ctx, "ReduceMean", ctx.op("Div", {loss, denom}), {0}, false);
  } else if (reduction == 2) {
    loss = helpers::reduce(ctx, "ReduceSum", loss, {0}, false);
  } else if (!batched) {
    loss = helpers::squeeze(ctx, loss, {0});
  }
  ctx.out(ctx.cast(loss, ctx.dtype(0)));
}

}  // namespace

void register_ctc(Registry& r) { r.add("aten::ctc_loss", 11, ctc_loss); }

}  // namespace torch2onnx::symbolics
