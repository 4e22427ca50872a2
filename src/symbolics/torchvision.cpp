// torchvision's detection operators (registered by `import torchvision`, so
// they reach the exporter from Python, or from C++ where torchvision's
// library is loaded): nms, roi_align, roi_pool, deform_conv2d. torchvision registers
// torch.onnx symbolics for them in Python; these are ours.
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

Value* typed(Value* v, DType dt) {
  v->type().dtype = dt;
  return v;
}

// torchvision::nms(dets[N, 4], scores[N], float iou_threshold) -> int64[K]:
// the kept boxes' indices by decreasing score. NonMaxSuppression works on
// one batch and one class ([1, N, 4] boxes, [1, 1, N] scores) in float32;
// its corner format takes any diagonal pair, so (x1, y1, x2, y2) boxes need
// no reordering. Its default of 0 boxes per class is replaced by "all".
void nms(SymbolicContext& ctx) {
  Value* boxes = helpers::unsqueeze(ctx, ctx.cast(ctx.in(0), DType::Float), {0});
  Value* scores = helpers::unsqueeze(ctx, ctx.cast(ctx.in(1), DType::Float), {0, 1});
  Value* max_per_class = ctx.const_ints({std::numeric_limits<int64_t>::max()});
  Value* iou = helpers::reshape(ctx, ctx.scalar_value(2, DType::Float), {1});
  Value* selected = typed(ctx.op("NonMaxSuppression", {boxes, scores, max_per_class, iou}), DType::Int64);
  // selected: [K, 3] rows of (batch, class, box)
  ctx.out(typed(ctx.op("Gather", {selected, ctx.const_int(2)}, {{"axis", int64_t{1}}}), DType::Int64));
}

// torchvision::roi_align(input, rois[K, 5], spatial_scale, pooled_height,
// pooled_width, sampling_ratio, aligned): rois hold (batch index, x1, y1, x2,
// y2). RoiAlign takes the boxes and batch indices apart; its sampling_ratio 0
// is torchvision's -1 (adaptive). aligned=True shifts the box by half a pixel
// and drops the minimum box size of 1: RoiAlign's "half_pixel" mode, from
// opset 16; aligned=False is "output_half_pixel" (the only mode before 16).
void roi_align(SymbolicContext& ctx, bool has_modes) {
  const bool aligned = ctx.num_args() > 6 && ctx.b(6);
  if (aligned && !has_modes)
    ctx.fail("roi_align with aligned=True needs RoiAlign's half_pixel mode (opset 16 or later)");
  const int64_t sampling = ctx.i(5);
  const DType dt = ctx.dtype(0) == DType::Double ? DType::Double : DType::Float;
  Value* x = ctx.cast(ctx.in(0), dt);
  Value* rois = ctx.cast(ctx.in(1), dt);
  Value* batch = typed(ctx.cast(helpers::squeeze(ctx, helpers::slice(ctx, rois, {1}, {0}, {1}), {1}), DType::Int64),
                       DType::Int64);
  Value* boxes = helpers::slice(ctx, rois, {1}, {1}, {5});
  ir::Attributes attrs{{"mode", std::string("avg")},
                       {"output_height", ctx.i(3)},
                       {"output_width", ctx.i(4)},
                       {"sampling_ratio", sampling < 0 ? int64_t{0} : sampling},
                       {"spatial_scale", ctx.f(2)}};
  if (has_modes)
    attrs.emplace_back("coordinate_transformation_mode", std::string(aligned ? "half_pixel" : "output_half_pixel"));
  Value* out = typed(ctx.op("RoiAlign", {x, boxes, batch}, attrs), dt);
  ctx.out(ctx.cast(out, ctx.dtype(0)));
}

// torchvision::roi_pool(input, rois[K, 5], spatial_scale, pooled_height,
// pooled_width) -> (output, argmax): MaxRoiPool takes the same rois. The
// argmax (for the backward pass) has no ONNX counterpart and is left out.
void roi_pool(SymbolicContext& ctx) {
  const DType dt = ctx.dtype(0) == DType::Double ? DType::Double : DType::Float;
  Value* x = ctx.cast(ctx.in(0), dt);
  Value* rois = ctx.cast(ctx.in(1), dt);
  Value* out = typed(ctx.op("MaxRoiPool", {x, rois},
                            {{"pooled_shape", std::vector<int64_t>{ctx.i(3), ctx.i(4)}}, {"spatial_scale", ctx.f(2)}}),
                     dt);
  ctx.out(ctx.cast(out, ctx.dtype(0)));
}

// torchvision::deform_conv2d(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w,
//     dilation_h, dilation_w, groups, offset_groups, use_mask) -> DeformConv-19. Both lay the
// offsets out as (dy, dx) pairs per offset group and kernel position.
void deform_conv2d(SymbolicContext& ctx) {
  if (ctx.rank(0) != 4) ctx.fail("deform_conv2d takes a 4-D input");
  const DType dt = ctx.dtype(0);
  const auto& w = ctx.sizes(1);
  std::vector<Value*> ins{ctx.in(0), ctx.in_as(1, dt), ctx.in_as(2, dt)};
  ins.push_back(ctx.none(4) ? nullptr : ctx.in_as(4, dt));
  if (ctx.b(13)) ins.push_back(ctx.in_as(3, dt));
  while (!ins.back()) ins.pop_back();
  ctx.out(ctx.op("DeformConv", ins,
                 {{"kernel_shape", std::vector<int64_t>{w.at(2), w.at(3)}},
                  {"strides", std::vector<int64_t>{ctx.i(5), ctx.i(6)}},
                  {"pads", std::vector<int64_t>{ctx.i(7), ctx.i(8), ctx.i(7), ctx.i(8)}},
                  {"dilations", std::vector<int64_t>{ctx.i(9), ctx.i(10)}},
                  {"group", ctx.i(11)},
                  {"offset_group", ctx.i(12)}}));
}

}  // namespace

void register_torchvision(Registry& r) {
  r.add("torchvision::nms", 10, nms);
  r.add("torchvision::roi_align", 10, [](SymbolicContext& c) { roi_align(c, false); });
  r.add("torchvision::roi_align", 16, [](SymbolicContext& c) { roi_align(c, true); });
  r.add("torchvision::roi_pool", 9, roi_pool);
  r.add("torchvision::deform_conv2d", 19, deform_conv2d);
}

}  // namespace torch2onnx::symbolics
