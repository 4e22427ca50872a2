// Convolutions: aten::_convolution (what tracing records), conv1d/2d/3d,
// conv_transpose1d/2d/3d, convolution and _convolution_mode (padding="same"/"valid")
// -> Conv / ConvTranspose; conv_tbc -> Conv between Transposes.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

struct ConvArgs {
  size_t input = 0, weight = 1, bias = 2;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  std::string padding_mode;  // "same" / "valid" for conv*d(padding=str)
};

std::vector<int64_t> expand_to(std::vector<int64_t> v, size_t n, const SymbolicContext& ctx, const char* what) {
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  if (v.size() != n) ctx.fail(std::string(what) + " has " + std::to_string(v.size()) + " values for " +
                              std::to_string(n) + " spatial dimensions");
  return v;
}

void emit_conv(SymbolicContext& ctx, ConvArgs a) {
  const auto& wsizes = ctx.sizes(a.weight);
  if (wsizes.size() < 3) ctx.fail("the weight must have at least 3 dimensions");
  for (size_t d = 2; d < wsizes.size(); ++d) ctx.static_dim(a.weight, static_cast<int64_t>(d));  // (kernel_shape)
  const size_t nd = wsizes.size() - 2;
  std::vector<int64_t> kernel(wsizes.begin() + 2, wsizes.end());
  a.stride = expand_to(a.stride, nd, ctx, "stride");
  a.dilation = expand_to(a.dilation, nd, ctx, "dilation");
  std::vector<int64_t> pads;
  if (a.padding_mode == "valid") {
    pads.assign(2 * nd, 0);
  } else if (a.padding_mode == "same") {
    // PyTorch puts the odd extra padding at the end.
    pads.assign(2 * nd, 0);
    for (size_t i = 0; i < nd; ++i) {
      int64_t total = a.dilation[i] * (kernel[i] - 1);
      pads[i] = total / 2;
      pads[i + nd] = total - total / 2;
    }
  } else {
    a.padding = expand_to(a.padding, nd, ctx, "padding");
    pads = a.padding;
    pads.insert(pads.end(), a.padding.begin(), a.padding.end());
  }
  // An unbatched input (conv2d on [C, H, W]) gets a batch axis of 1 for the ONNX op.
  const int64_t in_rank = ctx.rank(a.input);
  const bool unbatched = in_rank == static_cast<int64_t>(nd) + 1;
  if (!unbatched && in_rank != static_cast<int64_t>(nd) + 2)
    ctx.fail("expected a " + std::to_string(nd + 1) + "-D or " + std::to_string(nd + 2) + "-D input, got " +
             std::to_string(in_rank) + "-D");
  ir::Value* x = ctx.in(a.input);
  if (unbatched) x = helpers::unsqueeze(ctx, x, {0});
  std::vector<ir::Value*> ins{x, ctx.in_as(a.weight, ctx.dtype(a.input))};
  if (!ctx.none(a.bias)) ins.push_back(ctx.in_as(a.bias, ctx.dtype(a.input)));
  ir::Attributes attrs{{"dilations", a.dilation}, {"group", a.groups}, {"kernel_shape", kernel}, {"pads", pads},
                       {"strides", a.stride}};
  if (a.transposed) {
    std::vector<int64_t> op = a.output_padding.empty() ? std::vector<int64_t>(nd, 0)
                                                       : expand_to(a.output_padding, nd, ctx, "output_padding");
    bool any = false;
    for (int64_t p : op) any = any || p != 0;
    if (any) attrs.emplace_back("output_padding", op);
  }
  ir::Value* y = ctx.op(a.transposed ? "ConvTranspose" : "Conv", ins, std::move(attrs));
  ctx.out(unbatched ? helpers::squeeze(ctx, y, {0}) : y);
}

// aten::_convolution(input, weight, bias, stride, padding, dilation, transposed,
//                    output_padding, groups, benchmark, deterministic, cudnn_enabled[, allow_tf32])
void convolution_internal(SymbolicContext& ctx) {
  ConvArgs a;
  a.stride = ctx.is(3);
  a.padding = ctx.is(4);
  a.dilation = ctx.is(5);
  a.transposed = ctx.b(6);
  a.output_padding = ctx.is(7);
  a.groups = ctx.i(8);
  emit_conv(ctx, a);
}

// aten::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
void convolution(SymbolicContext& ctx) { convolution_internal(ctx); }

// aten::conv{1,2,3}d(input, weight, bias, stride, padding, dilation, groups); padding may be "same"/"valid".
void conv_nd(SymbolicContext& ctx) {
  ConvArgs a;
  a.stride = ctx.is(3);
  if (ctx.arg(4).kind == Arg::Kind::String)
    a.padding_mode = ctx.s(4);
  else
    a.padding = ctx.is(4);
  a.dilation = ctx.is(5);
  a.groups = ctx.i(6);
  emit_conv(ctx, a);
}

// aten::_convolution_mode(input, weight, bias, stride, str padding, dilation, groups): what tracing
// records for conv*d(padding="same"/"valid").
void convolution_mode(SymbolicContext& ctx) {
  ConvArgs a;
  a.stride = ctx.is(3);
  a.padding_mode = ctx.s(4);
  if (a.padding_mode != "same" && a.padding_mode != "valid") ctx.fail("unknown padding mode '" + a.padding_mode + "'");
  a.dilation = ctx.is(5);
  a.groups = ctx.i(6);
  emit_conv(ctx, a);
}

// aten::conv_tbc(self, weight, bias, pad): a 1-D convolution on a [time, batch, in] input with a
// [width, in, out] weight, giving [time', batch, out].
void conv_tbc(SymbolicContext& ctx) {
  if (ctx.rank(0) != 3 || ctx.rank(1) != 3) ctx.fail("conv_tbc needs a 3-D input and a 3-D weight");
  const int64_t pad = ctx.num_args() > 3 ? ctx.i(3) : 0;
  const int64_t width = ctx.static_dim(1, 0);
  const ir::DType dt = ctx.dtype(0);
  ir::Value* x = ctx.op("Transpose", {ctx.in(0)}, {{"perm", std::vector<int64_t>{1, 2, 0}}});
  ir::Value* w = ctx.op("Transpose", {ctx.in_as(1, dt)}, {{"perm", std::vector<int64_t>{2, 1, 0}}});
  ir::Value* y = ctx.op("Conv", {x, w, ctx.in_as(2, dt)},
                        {{"dilations", std::vector<int64_t>{1}}, {"group", int64_t{1}},
                         {"kernel_shape", std::vector<int64_t>{width}}, {"pads", std::vector<int64_t>{pad, pad}},
                         {"strides", std::vector<int64_t>{1}}});
  ctx.out(ctx.op("Transpose", {y}, {{"perm", std::vector<int64_t>{2, 0, 1}}}));
}

// aten::conv_transpose{1,2,3}d(input, weight, bias, stride, padding, output_padding, groups, dilation)
void conv_transpose_nd(SymbolicContext& ctx) {
  ConvArgs a;
  a.transposed = true;
  a.stride = ctx.is(3);
  a.padding = ctx.is(4);
  a.output_padding = ctx.is(5);
  a.groups = ctx.i(6);
  a.dilation = ctx.is(7);
  emit_conv(ctx, a);
}

}  // namespace

void register_conv(Registry& r) {
  r.add("aten::_convolution", 9, convolution_internal);
  r.add("aten::convolution", 9, convolution);
  r.add("aten::_convolution_mode", 9, convolution_mode);
  r.add("aten::conv_tbc", 9, conv_tbc);
  for (const char* op : {"aten::conv1d", "aten::conv2d", "aten::conv3d"}) r.add(op, 9, conv_nd);
  for (const char* op : {"aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d"})
    r.add(op, 9, conv_transpose_nd);
}

}  // namespace torch2onnx::symbolics
