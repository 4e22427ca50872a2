// Loss functions: nll_loss (NegativeLogLikelihoodLoss) and cross_entropy_loss
// (SoftmaxCrossEntropyLoss) from opset 12, the elementwise losses (bce, kl_div,
// mse, l1, smooth_l1, huber, soft_margin, margin_ranking, hinge_embedding,
// cosine_embedding, poisson_nll, triplet_margin, multi_margin,
// multilabel_margin) from opset 9.
// Reductions follow at::Reduction: 0 none, 1 mean, 2 sum.
#include <cmath>
#include <string>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

ir::Value* sc(SymbolicContext& ctx, ir::DType t, double v) { return ctx.const_scalar(t, v); }

ir::DType out_t(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  return t == ir::DType::Undefined ? ir::DType::Float : t;
}

int64_t reduction_arg(SymbolicContext& ctx, size_t idx) {
  const int64_t r = ctx.i(idx);
  if (r < 0 || r > 2) ctx.fail("unknown reduction " + std::to_string(r));
  return r;
}

const char* reduction_name(int64_t r) { return r == 0 ? "none" : r == 1 ? "mean" : "sum"; }

// Applies the reduction to a per-element loss of rank `rank`.
ir::Value* reduce_loss(SymbolicContext& ctx, ir::Value* v, int64_t reduction, int64_t rank) {
  if (reduction == 0 || rank == 0) return v;
  return helpers::reduce(ctx, reduction == 1 ? "ReduceMean" : "ReduceSum", v, {}, false);
}

// x == v.
ir::Value* equals(SymbolicContext& ctx, ir::Value* x, ir::DType t, double v) {
  if (x->dtype() == ir::DType::Undefined) x->type().dtype = t;
  return helpers::equal(ctx, x, sc(ctx, t, v));
}

// log(1 + exp(v)). ONNX Runtime's Softplus is float-only: other dtypes use
// the stable max(v, 0) + log(1 + exp(-|v|)).
ir::Value* softplus(SymbolicContext& ctx, ir::Value* v, ir::DType t) {
  if (t == ir::DType::Float) return ctx.op("Softplus", {v});
  ir::Value* e = ctx.op("Exp", {ctx.op("Neg", {ctx.op("Abs", {v})})});
  return ctx.op("Add", {ctx.op("Relu", {v}), ctx.op("Log", {ctx.op("Add", {e, sc(ctx, t, 1.0)})})});
}

// Rank of the broadcast of arguments a and b.
int64_t rank2(SymbolicContext& ctx, size_t a, size_t b) { return std::max(ctx.rank(a), ctx.rank(b)); }

// ---------------------------------------------------------------- nll / cross entropy

// nll_loss / nll_loss2d / nll_loss_nd(self, target, weight=None, reduction=1, ignore_index=-100)
void nll_loss(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* target = ctx.in_as(1, ir::DType::Int64);
  const bool unbatched = ctx.rank(0) == 1;
  if (unbatched) {
    x = helpers::unsqueeze(ctx, x, {0});
    target = helpers::unsqueeze(ctx, target, {0});
  }
  const int64_t reduction = reduction_arg(ctx, 3);
  std::vector<ir::Value*> ins{x, target};
  if (ir::Value* w = ctx.opt_in(2)) ins.push_back(ctx.cast(w, t));
  ir::Value* r = ctx.op("NegativeLogLikelihoodLoss", ins,
                        {{"reduction", reduction_name(reduction)}, {"ignore_index", ctx.i(4)}});
  if (unbatched && reduction == 0) r = helpers::squeeze(ctx, r, {0});
  ctx.out(r);
}

// log_softmax along axis 1 at any opset.
ir::Value* log_softmax1(SymbolicContext& ctx, ir::Value* x, int64_t axis) {
  return ctx.op("Sub", {x, helpers::reduce(ctx, "ReduceLogSumExp", x, {axis}, true)});
}

// The class weights shaped to broadcast along axis 1 of a rank-`rank` tensor.
ir::Value* class_weights(SymbolicContext& ctx, ir::Value* w, int64_t rank, int64_t class_dim) {
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(class_dim)] = -1;
  return helpers::reshape(ctx, w, shape);
}

// cross_entropy_loss(self, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0)
void cross_entropy_loss(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  const int64_t rank = ctx.rank(0);
  const int64_t reduction = reduction_arg(ctx, 3);
  const int64_t ignore = ctx.i(4);
  const double eps = ctx.num_args() > 5 ? ctx.f(5) : 0.0;
  ir::Value* w = ctx.opt_in(2);
  if (w) w = ctx.cast(w, t);
  const int64_t class_dim = rank == 1 ? 0 : 1;
  ir::Value* n_classes = ctx.cast(helpers::dim_size(ctx, x, class_dim), t);

  if (ir::is_floating(ctx.dtype(1))) {
    // Class probabilities: -sum(w * target * log_softmax(x)) over the class dim.
    ir::Value* p = ctx.in_as(1, t);
    if (eps > 0.0)
      p = ctx.op("Add", {ctx.op("Mul", {p, sc(ctx, t, 1.0 - eps)}), ctx.op("Div", {sc(ctx, t, eps), n_classes})});
    ir::Value* prod = ctx.op("Mul", {log_softmax1(ctx, x, class_dim), p});
    if (w) prod = ctx.op("Mul", {prod, class_weights(ctx, w, rank, class_dim)});
    ir::Value* per = ctx.op("Neg", {helpers::reduce(ctx, "ReduceSum", prod, {class_dim}, false)});
    ctx.out(reduce_loss(ctx, per, reduction, rank - 1));
    return;
  }

  ir::Value* target = ctx.in_as(1, ir::DType::Int64);
  if (rank == 1) {
    x = helpers::unsqueeze(ctx, x, {0});
    target = helpers::unsqueeze(ctx, target, {0});
  }
  std::vector<ir::Value*> ins{x, target};
  if (w) ins.push_back(w);
  auto outs = ctx.op_n("SoftmaxCrossEntropyLoss", ins, 2,
                       {{"reduction", reduction_name(reduction)}, {"ignore_index", ignore}});
  outs[1]->type().dtype = t;
  ir::Value* nll = outs[0];
  if (rank == 1 && reduction == 0) nll = helpers::squeeze(ctx, nll, {0});
  if (eps <= 0.0) {
    ctx.out(nll);
    return;
  }
  // Label smoothing: (1 - eps) * nll + eps / C * smooth, smooth = -sum_c(w_c * log p_c)
  // per element, 0 where ignored, reduced like nll (mean: over the weights of the
  // targets that are not ignored).
  const int64_t brank = std::max<int64_t>(rank, 2);
  ir::Value* lp = outs[1];
  if (w) lp = ctx.op("Mul", {lp, class_weights(ctx, w, brank, 1)});
  ir::Value* smooth = ctx.op("Neg", {helpers::reduce(ctx, "ReduceSum", lp, {1}, false)});
  ir::Value* ignored = ctx.op("Equal", {target, ctx.const_scalar(ir::DType::Int64, static_cast<double>(ignore))});
  smooth = ctx.op("Where", {ignored, sc(ctx, t, 0.0), smooth});
  ir::Value* ret = smooth;
  if (reduction == 0) {
    if (rank == 1) ret = helpers::squeeze(ctx, ret, {0});
  } else {
    ret = helpers::reduce(ctx, "ReduceSum", smooth, {}, false);
    if (reduction == 1) {
      ir::Value* denom;
      if (w) {
        ir::Value* safe = ctx.op("Where", {ignored, ctx.const_scalar(ir::DType::Int64, 0), target});
        ir::Value* wt = ctx.op("Gather", {w, safe}, {{"axis", int64_t{0}}});
        denom = helpers::reduce(ctx, "ReduceSum", ctx.op("Where", {ignored, sc(ctx, t, 0.0), wt}), {}, false);
      } else {
        denom = helpers::reduce(ctx, "ReduceSum", ctx.cast(ctx.op("Not", {ignored}), t), {}, false);
      }
      ret = ctx.op("Div", {ret, denom});
    }
  }
  ir::Value* a = ctx.op("Mul", {nll, sc(ctx, t, 1.0 - eps)});
  ir::Value* b = ctx.op("Mul", {ret, ctx.op("Div", {sc(ctx, t, eps), n_classes})});
  ctx.out(ctx.op("Add", {a, b}));
}

// ---------------------------------------------------------------- binary

// binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=1):
// (1 - y) x - (1 + (pw - 1) y) log_sigmoid(x), times weight.
void bce_with_logits(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* y = ctx.in_as(1, t);
  ir::Value* log_sig = ctx.op("Neg", {softplus(ctx, ctx.op("Neg", {x}), t)});
  ir::Value* lw = log_sig;
  if (!ctx.none(3)) {
    ir::Value* pw = ctx.in_as(3, t);
    ir::Value* f = ctx.op("Add", {ctx.op("Mul", {ctx.op("Sub", {pw, sc(ctx, t, 1.0)}), y}), sc(ctx, t, 1.0)});
    lw = ctx.op("Mul", {f, log_sig});
  }
  ir::Value* loss = ctx.op("Sub", {ctx.op("Mul", {ctx.op("Sub", {sc(ctx, t, 1.0), y}), x}), lw});
  if (!ctx.none(2)) loss = ctx.op("Mul", {loss, ctx.in_as(2, t)});
  ctx.out(reduce_loss(ctx, loss, reduction_arg(ctx, 4), rank2(ctx, 0, 1)));
}

// binary_cross_entropy(self, target, weight=None, reduction=1):
// (y - 1) max(log(1 - x), -100) - y max(log(x), -100), times weight.
void bce(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* y = ctx.in_as(1, t);
  auto clamped_log = [&](ir::Value* v) { return ctx.op("Max", {ctx.op("Log", {v}), sc(ctx, t, -100.0)}); };
  ir::Value* a = ctx.op("Mul", {ctx.op("Sub", {y, sc(ctx, t, 1.0)}), clamped_log(ctx.op("Sub", {sc(ctx, t, 1.0), x}))});
  ir::Value* loss = ctx.op("Sub", {a, ctx.op("Mul", {y, clamped_log(x)})});
  if (!ctx.none(2)) loss = ctx.op("Mul", {loss, ctx.in_as(2, t)});
  ctx.out(reduce_loss(ctx, loss, reduction_arg(ctx, 3), rank2(ctx, 0, 1)));
}

// kl_div(self, target, reduction=1, *, log_target=False)
void kl_div(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* y = ctx.in_as(1, t);
  const bool log_target = ctx.num_args() > 3 && ctx.b(3);
  ir::Value* loss;
  if (log_target) {
    loss = ctx.op("Mul", {ctx.op("Exp", {y}), ctx.op("Sub", {y, x})});
  } else {  // xlogy(y, y) - y * x
    ir::Value* ylogy = ctx.op("Mul", {y, ctx.op("Log", {y})});
    ylogy = ctx.op("Where", {equals(ctx, y, t, 0.0), sc(ctx, t, 0.0), ylogy});
    ylogy = ctx.op("Where", {ctx.op("IsNaN", {y}), sc(ctx, t, std::nan("")), ylogy});
    loss = ctx.op("Sub", {ylogy, ctx.op("Mul", {y, x})});
  }
  ctx.out(reduce_loss(ctx, loss, reduction_arg(ctx, 2), rank2(ctx, 0, 1)));
}

// ---------------------------------------------------------------- regression

// |x - y| for the pointwise regression losses.
ir::Value* abs_diff(SymbolicContext& ctx, ir::DType t) {
  return ctx.op("Abs", {ctx.op("Sub", {ctx.in_as(0, t), ctx.in_as(1, t)})});
}

void finish(SymbolicContext& ctx, ir::Value* loss, size_t reduction_idx) {
  ctx.out(reduce_loss(ctx, loss, reduction_arg(ctx, reduction_idx), rank2(ctx, 0, 1)));
}

// mse_loss(self, target, reduction=1)
void mse_loss(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* d = ctx.op("Sub", {ctx.in_as(0, t), ctx.in_as(1, t)});
  finish(ctx, ctx.op("Mul", {d, d}), 2);
}

// l1_loss(self, target, reduction=1)
void l1_loss(SymbolicContext& ctx) { finish(ctx, abs_diff(ctx, out_t(ctx)), 2); }

// smooth_l1_loss(self, target, reduction=1, beta=1): z < beta ? z^2 / (2 beta) : z - beta / 2
void smooth_l1_loss(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  const double beta = ctx.num_args() > 3 ? ctx.f(3) : 1.0;
  ir::Value* z = abs_diff(ctx, t);
  if (beta == 0.0) {
    finish(ctx, z, 2);
    return;
  }
  ir::Value* quad = ctx.op("Div", {ctx.op("Mul", {ctx.op("Mul", {z, z}), sc(ctx, t, 0.5)}), sc(ctx, t, beta)});
  ir::Value* lin = ctx.op("Sub", {z, sc(ctx, t, 0.5 * beta)});
  finish(ctx, ctx.op("Where", {ctx.op("Less", {z, sc(ctx, t, beta)}), quad, lin}), 2);
}

// huber_loss(self, target, reduction=1, delta=1): z < delta ? z^2 / 2 : delta (z - delta / 2)
void huber_loss(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  const double delta = ctx.num_args() > 3 ? ctx.f(3) : 1.0;
  ir::Value* z = abs_diff(ctx, t);
  ir::Value* quad = ctx.op("Mul", {ctx.op("Mul", {z, z}), sc(ctx, t, 0.5)});
  ir::Value* lin = ctx.op("Mul", {ctx.op("Sub", {z, sc(ctx, t, 0.5 * delta)}), sc(ctx, t, delta)});
  finish(ctx, ctx.op("Where", {ctx.op("Less", {z, sc(ctx, t, delta)}), quad, lin}), 2);
}

// soft_margin_loss(self, target, reduction=1): log(1 + exp(-y x))
void soft_margin_loss(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* yx = ctx.op("Mul", {ctx.in_as(0, t), ctx.in_as(1, t)});
  finish(ctx, softplus(ctx, ctx.op("Neg", {yx}), t), 2);
}

// ---------------------------------------------------------------- margins and embeddings

// margin_ranking_loss(input1, input2, target, margin=0, reduction=1): max(0, -y (x1 - x2) + margin)
void margin_ranking_loss(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* d = ctx.op("Sub", {ctx.in_as(0, t), ctx.in_as(1, t)});
  ir::Value* v = ctx.op("Add", {ctx.op("Neg", {ctx.op("Mul", {ctx.in_as(2, t), d})}), sc(ctx, t, ctx.f(3))});
  const int64_t r = std::max({ctx.rank(0), ctx.rank(1), ctx.rank(2)});
  ctx.out(reduce_loss(ctx, ctx.op("Relu", {v}), reduction_arg(ctx, 4), r));
}

// hinge_embedding_loss(self, target, margin=1, reduction=1):
// (y != 1 ? max(0, margin - x) : 0) + (y != -1 ? x : 0)
void hinge_embedding_loss(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* y = ctx.in_as(1, t);
  ir::Value* zero = sc(ctx, t, 0.0);
  ir::Value* m = ctx.op("Relu", {ctx.op("Sub", {sc(ctx, t, ctx.f(2)), x})});
  ir::Value* a = ctx.op("Where", {equals(ctx, y, t, 1.0), zero, m});
  ir::Value* b = ctx.op("Where", {equals(ctx, y, t, -1.0), zero, x});
  finish(ctx, ctx.op("Add", {a, b}), 3);
}

// cosine_embedding_loss(input1, input2, target, margin=0, reduction=1):
// cos = x1.x2 / sqrt((|x1|^2 + 1e-12)(|x2|^2 + 1e-12)) along dim target.dim();
// 1 - cos where y == 1, max(0, cos - margin) where y == -1.
void cosine_embedding_loss(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* a = ctx.in_as(0, t);
  ir::Value* b = ctx.in_as(1, t);
  ir::Value* y = ctx.in_as(2, t);
  const int64_t d = ctx.rank(2);
  auto dot = [&](ir::Value* u, ir::Value* v) {
    return helpers::reduce(ctx, "ReduceSum", ctx.op("Mul", {u, v}), {d}, false);
  };
  ir::Value* m1 = ctx.op("Add", {dot(a, a), sc(ctx, t, 1e-12)});
  ir::Value* m2 = ctx.op("Add", {dot(b, b), sc(ctx, t, 1e-12)});
  ir::Value* cos = ctx.op("Div", {dot(a, b), ctx.op("Sqrt", {ctx.op("Mul", {m1, m2})})});
  ir::Value* zero = sc(ctx, t, 0.0);
  ir::Value* pos = ctx.op("Where", {equals(ctx, y, t, 1.0), ctx.op("Sub", {sc(ctx, t, 1.0), cos}), zero});
  ir::Value* neg = ctx.op("Relu", {ctx.op("Sub", {cos, sc(ctx, t, ctx.f(3))})});
  neg = ctx.op("Where", {equals(ctx, y, t, -1.0), neg, zero});
  ctx.out(reduce_loss(ctx, ctx.op("Add", {pos, neg}), reduction_arg(ctx, 4), d));
}

// poisson_nll_loss(input, target, log_input, full, eps, reduction)
void poisson_nll_loss(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* y = ctx.in_as(1, t);
  ir::Value* loss;
  if (ctx.b(2)) {
    loss = ctx.op("Sub", {ctx.op("Exp", {x}), ctx.op("Mul", {y, x})});
  } else {
    ir::Value* l = ctx.op("Log", {ctx.op("Add", {x, sc(ctx, t, ctx.f(4))})});
    loss = ctx.op("Sub", {x, ctx.op("Mul", {y, l})});
  }
  if (ctx.b(3)) {  // Stirling's term y log y - y + log(2 pi y) / 2, where y > 1
    ir::Value* st = ctx.op("Sub", {ctx.op("Mul", {y, ctx.op("Log", {y})}), y});
    ir::Value* l2 = ctx.op("Log", {ctx.op("Mul", {y, sc(ctx, t, 2.0 * M_PI)})});
    st = ctx.op("Add", {st, ctx.op("Mul", {l2, sc(ctx, t, 0.5)})});
    st = ctx.op("Where", {ctx.op("Greater", {y, sc(ctx, t, 1.0)}), st, sc(ctx, t, 0.0)});
    loss = ctx.op("Add", {loss, st});
  }
  ctx.out(reduce_loss(ctx, loss, reduction_arg(ctx, 5), rank2(ctx, 0, 1)));
}

// ||a - b + eps||_p over the last dim (pairwise_distance).
ir::Value* pdist(SymbolicContext& ctx, ir::Value* a, ir::Value* b, ir::DType t, double p, double eps, int64_t rank) {
  ir::Value* d = ctx.op("Add", {ctx.op("Sub", {a, b}), sc(ctx, t, eps)});
  const std::vector<int64_t> axes{rank - 1};
  if (p == 1.0) return helpers::reduce(ctx, "ReduceL1", d, axes, false);
  if (p == 2.0) return helpers::reduce(ctx, "ReduceL2", d, axes, false);
  if (std::isinf(p)) return helpers::reduce(ctx, p > 0 ? "ReduceMax" : "ReduceMin", ctx.op("Abs", {d}), axes, false);
  if (p == 0.0) ctx.fail("p = 0 is not supported");
  ir::Value* s = helpers::reduce(ctx, "ReduceSum", ctx.op("Pow", {ctx.op("Abs", {d}), sc(ctx, t, p)}), axes, false);
  return ctx.op("Pow", {s, sc(ctx, t, 1.0 / p)});
}

// triplet_margin_loss(anchor, positive, negative, margin=1, p=2, eps=1e-6, swap=False, reduction=1)
void triplet_margin_loss(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* a = ctx.in_as(0, t);
  ir::Value* pos = ctx.in_as(1, t);
  ir::Value* neg = ctx.in_as(2, t);
  const double p = ctx.f(4), eps = ctx.f(5);
  const int64_t rank = std::max({ctx.rank(0), ctx.rank(1), ctx.rank(2)});
  if (rank == 0) ctx.fail("the inputs must have at least one dimension");
  ir::Value* dp = pdist(ctx, a, pos, t, p, eps, rank);
  ir::Value* dn = pdist(ctx, a, neg, t, p, eps, rank);
  if (ctx.b(6)) dn = ctx.op("Min", {dn, pdist(ctx, pos, neg, t, p, eps, rank)});
  ir::Value* v = ctx.op("Relu", {ctx.op("Sub", {ctx.op("Add", {dp, sc(ctx, t, ctx.f(3))}), dn})});
  ctx.out(reduce_loss(ctx, v, reduction_arg(ctx, 7), rank - 1));
}

// multi_margin_loss(self, target, p=1, margin=1, weight=None, reduction=1):
// sum over classes c != y of w_y max(0, margin - x_y + x_c)^p, divided by C.
void multi_margin_loss(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* y = ctx.in_as(1, ir::DType::Int64);
  const int64_t rank = ctx.rank(0);
  if (rank != 1 && rank != 2) ctx.fail("the input must be 1-D or 2-D");
  const double p = ctx.f(2);
  if (p != 1.0 && p != 2.0) ctx.fail("only p = 1 and p = 2 are supported (as in PyTorch)");
  const int64_t classes = ctx.static_dim(0, -1);
  if (rank == 1) x = helpers::unsqueeze(ctx, x, {0});
  y = helpers::reshape(ctx, y, {-1, 1});  // [N, 1]
  std::vector<int64_t> ids;
  for (int64_t c = 0; c < classes; ++c) ids.push_back(c);
  ir::Value* is_y = ctx.op("Equal", {y, ctx.const_ints(ids)});  // [N, C]
  ir::Value* onehot = ctx.cast(is_y, t);
  ir::Value* xy = helpers::reduce(ctx, "ReduceSum", ctx.op("Mul", {x, onehot}), {1}, true);
  ir::Value* z = ctx.op("Relu", {ctx.op("Add", {ctx.op("Sub", {sc(ctx, t, ctx.f(3)), xy}), x})});
  if (p == 2.0) z = ctx.op("Mul", {z, z});
  z = ctx.op("Where", {is_y, sc(ctx, t, 0.0), z});
  if (!ctx.none(4)) {
    ir::Value* wy = ctx.op("Gather", {ctx.in_as(4, t), y}, {{"axis", int64_t{0}}});  // [N, 1]
    z = ctx.op("Mul", {z, wy});
  }
  ir::Value* per = helpers::reduce(ctx, "ReduceSum", z, {1}, false);
  per = ctx.op("Div", {per, sc(ctx, t, static_cast<double>(classes))});
  const int64_t reduction = reduction_arg(ctx, 5);
  if (reduction == 0) {
    if (ctx.out_info().rank() == 0) per = helpers::reshape(ctx, per, {});  // 1-D input, 0-d target
    ctx.out(per);
    return;
  }
  ctx.out(reduce_loss(ctx, per, reduction, 1));
}

// multilabel_margin_loss(self, target, reduction=1): target lists class
// indices, ended by the first -1; each sample sums max(0, 1 - (x_j - x_d)) over
// listed j and unlisted d, divided by C.
void multilabel_margin_loss(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* y = ctx.in_as(1, ir::DType::Int64);
  const int64_t rank = ctx.rank(0);
  if (rank != 1 && rank != 2) ctx.fail("the input must be 1-D or 2-D");
  const int64_t classes = ctx.static_dim(0, -1);
  if (rank == 1) {
    x = helpers::unsqueeze(ctx, x, {0});
    y = helpers::unsqueeze(ctx, y, {0});
  }
  // valid[n, p]: no -1 in y[n, :p+1] (a running count through an upper
  // triangular MatMul, so no CumSum is needed).
  std::vector<double> upper(static_cast<size_t>(classes * classes), 0.0);
  for (int64_t q = 0; q < classes; ++q)
    for (int64_t p = q; p < classes; ++p) upper[static_cast<size_t>(q * classes + p)] = 1.0;
  ir::Value* neg = ctx.cast(ctx.op("Less", {y, ctx.const_scalar(ir::DType::Int64, 0)}), t);
  ir::Value* seen = ctx.op("MatMul", {neg, ctx.constant(ir::Tensor::from_doubles(t, upper, {classes, classes}))});
  ir::Value* valid = ctx.cast(ctx.op("Less", {seen, sc(ctx, t, 0.5)}), t);  // [N, P]
  std::vector<int64_t> ids;
  for (int64_t c = 0; c < classes; ++c) ids.push_back(c);
  ir::Value* hit = ctx.cast(ctx.op("Equal", {helpers::unsqueeze(ctx, y, {2}), ctx.const_ints(ids)}), t);  // [N, P, C]
  hit = ctx.op("Mul", {hit, helpers::unsqueeze(ctx, valid, {2})});
  ir::Value* count = helpers::reduce(ctx, "ReduceSum", hit, {1}, false);  // [N, C]: times class c is listed
  ir::Value* unlisted = ctx.cast(ctx.op("Not", {ctx.op("Greater", {count, sc(ctx, t, 0.0)})}), t);
  ir::Value* z = ctx.op("Sub", {helpers::unsqueeze(ctx, x, {1}), helpers::unsqueeze(ctx, x, {2})});  // x_d - x_j
  z = ctx.op("Relu", {ctx.op("Add", {z, sc(ctx, t, 1.0)})});  // [N, j, d]
  z = ctx.op("Mul", {z, helpers::unsqueeze(ctx, count, {2})});
  z = ctx.op("Mul", {z, helpers::unsqueeze(ctx, unlisted, {1})});
  ir::Value* per = helpers::reduce(ctx, "ReduceSum", z, {1, 2}, false);
  per = ctx.op("Div", {per, sc(ctx, t, static_cast<double>(classes))});
  const int64_t reduction = reduction_arg(ctx, 2);
  if (reduction == 0) {
    if (ctx.out_info().rank() == 0) per = helpers::reshape(ctx, per, {});
    ctx.out(per);
    return;
  }
  ctx.out(reduce_loss(ctx, per, reduction, 1));
}

}  // namespace

void register_loss(Registry& r) {
  r.add("aten::nll_loss", 12, nll_loss);
  r.add("aten::nll_loss2d", 12, nll_loss);
  r.add("aten::nll_loss_nd", 12, nll_loss);
  r.add("aten::cross_entropy_loss", 12, cross_entropy_loss);
  r.add("aten::binary_cross_entropy_with_logits", 9, bce_with_logits);
  r.add("aten::binary_cross_entropy", 9, bce);
  r.add("aten::kl_div", 9, kl_div);
  r.add("aten::mse_loss", 9, mse_loss);
  r.add("aten::l1_loss", 9, l1_loss);
  r.add("aten::smooth_l1_loss", 9, smooth_l1_loss);
  r.add("aten::huber_loss", 9, huber_loss);
  r.add("aten::soft_margin_loss", 9, soft_margin_loss);
  r.add("aten::margin_ranking_loss", 9, margin_ranking_loss);
  r.add("aten::hinge_embedding_loss", 9, hinge_embedding_loss);
  r.add("aten::cosine_embedding_loss", 9, cosine_embedding_loss);
  r.add("aten::poisson_nll_loss", 9, poisson_nll_loss);
  r.add("aten::triplet_margin_loss", 9, triplet_margin_loss);
  r.add("aten::multi_margin_loss", 9, multi_margin_loss);
  r.add("aten::multilabel_margin_loss", 9, multilabel_margin_loss);
}

}  // namespace torch2onnx::symbolics
