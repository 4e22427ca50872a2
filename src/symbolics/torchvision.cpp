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

// The (batch index, box) halves of torchvision's rois[K, 5] in dtype dt.
std::pair<Value*, Value*> split_rois(SymbolicContext& ctx, DType dt) {
  Value* rois = ctx.cast(ctx.in(1), dt);
  Value* batch = typed(ctx.cast(helpers::squeeze(ctx, helpers::slice(ctx, rois, {1}, {0}, {1}), {1}), DType::Int64),
                       DType::Int64);
  return {batch, helpers::slice(ctx, rois, {1}, {1}, {5})};
}

// Position-sensitive pooling's channel count check: output channel c, bin
// (i, j) reads input channel (c * ph + i) * pw + j.
int64_t ps_channels(SymbolicContext& ctx, int64_t ph, int64_t pw) {
  if (ctx.rank(0) != 4) ctx.fail("position-sensitive RoI pooling takes a 4-D input");
  const int64_t c = ctx.static_dim(0, 1);  // (the output's channels go into Reshape constants)
  if (ph <= 0 || pw <= 0 || c % (ph * pw) != 0)
    ctx.fail("the input's channels must be a multiple of pooled_height * pooled_width");
  return c / (ph * pw);
}

// The second output of ps_roi_align/ps_roi_pool: the input channel each
// output element read, int32 [K, C / (ph * pw), ph, pw] (for the backward pass).
void channel_mapping(SymbolicContext& ctx, int64_t c_out, int64_t ph, int64_t pw) {
  std::vector<double> index;
  for (int64_t k = 0; k < c_out * ph * pw; ++k) index.push_back(static_cast<double>(k));
  Value* map = ctx.constant(ir::Tensor::from_doubles(DType::Int32, index, {1, c_out, ph, pw}));
  Value* k = helpers::slice(ctx, ctx.op("Shape", {ctx.in(1)}), {0}, {0}, {1});
  Value* shape = ctx.op("Concat", {k, ctx.const_ints({c_out, ph, pw})}, {{"axis", int64_t{0}}});
  ctx.out(typed(ctx.op("Expand", {map, shape}), DType::Int32), 1);
}

// torchvision::ps_roi_align(input[N, C, H, W], rois[K, 5], spatial_scale,
// pooled_height, pooled_width, sampling_ratio) -> (output, channel_mapping).
// Each bin is RoI Align's average of bilinear samples, with torchvision's
// half-pixel offset and no minimum box size: RoiAlign's half_pixel mode (opset
// 16) over all C channels gives [K, C, ph, pw]; viewed as [K, C/(ph*pw),
// ph*pw, ph*pw], output bin p takes channel sub-index p, the diagonal of the
// last two axes, gathered from their flattening at positions p * (ph*pw + 1).
void ps_roi_align(SymbolicContext& ctx) {
  const int64_t ph = ctx.i(3), pw = ctx.i(4), sampling = ctx.i(5), bins = ph * pw;
  const int64_t c_out = ps_channels(ctx, ph, pw);
  const DType dt = ctx.dtype(0) == DType::Double ? DType::Double : DType::Float;
  auto [batch, boxes] = split_rois(ctx, dt);
  Value* all = typed(ctx.op("RoiAlign", {ctx.cast(ctx.in(0), dt), boxes, batch},
                            {{"mode", std::string("avg")},
                             {"output_height", ph},
                             {"output_width", pw},
                             {"sampling_ratio", sampling < 0 ? int64_t{0} : sampling},
                             {"spatial_scale", ctx.f(2)},
                             {"coordinate_transformation_mode", std::string("half_pixel")}}),
                     dt);
  std::vector<int64_t> diagonal;
  for (int64_t p = 0; p < bins; ++p) diagonal.push_back(p * (bins + 1));
  Value* flat = helpers::reshape(ctx, all, {0, c_out, bins * bins});
  Value* out = ctx.op("Gather", {flat, ctx.const_ints(diagonal)}, {{"axis", int64_t{2}}});
  ctx.out(ctx.cast(typed(helpers::reshape(ctx, out, {0, c_out, ph, pw}), dt), ctx.dtype(0)));
  channel_mapping(ctx, c_out, ph, pw);
}

// x rounded half away from zero (C's round), as torchvision rounds box corners.
Value* round_away(SymbolicContext& ctx, Value* x, DType dt) {
  Value* mag = ctx.op("Floor", {ctx.op("Add", {ctx.op("Abs", {x}), ctx.const_scalar(dt, 0.5)})});
  return ctx.op("Mul", {ctx.op("Sign", {x}), mag});
}

// Bin bounds along one axis for position-sensitive RoI pooling, as
// torchvision computes them: corners rounded, the box at least 1 long, bin b
// of n covering [floor(b * len / n), ceil((b + 1) * len / n)) from the start,
// clipped to [0, extent - 1] (torchvision's CPU kernel never reaches the last
// row or column). lo/hi: [K, 1] corners; returns [K, n] start and end.
std::pair<Value*, Value*> pool_bins(SymbolicContext& ctx, Value* lo, Value* hi, int64_t n, int64_t extent, DType dt) {
  Value* start = round_away(ctx, lo, dt);
  Value* length = ctx.op("Max", {ctx.op("Sub", {round_away(ctx, hi, dt), start}), ctx.const_scalar(dt, 1)});
  Value* size = ctx.op("Div", {length, ctx.const_scalar(dt, static_cast<double>(n))});
  std::vector<double> steps;
  for (int64_t b = 0; b <= n; ++b) steps.push_back(static_cast<double>(b));
  Value* edges = ctx.op("Mul", {size, ctx.constant(ir::Tensor::from_doubles(dt, steps, {n + 1}))});  // [K, n + 1]
  Value* lo_edge = ctx.op("Floor", {helpers::slice(ctx, edges, {1}, {0}, {n})});
  Value* hi_edge = ctx.op("Ceil", {helpers::slice(ctx, edges, {1}, {1}, {n + 1})});
  auto clipped = [&](Value* e) {
    Value* v = ctx.op("Add", {e, start});
    Value* last = ctx.const_scalar(dt, static_cast<double>(extent - 1));
    return ctx.op("Min", {ctx.op("Max", {v, ctx.const_scalar(dt, 0)}), last});
  };
  return {clipped(lo_edge), clipped(hi_edge)};
}

// [K, n, extent] bool: position x of axis lies in bin b of box k.
Value* in_bins(SymbolicContext& ctx, Value* lo, Value* hi, int64_t extent, DType dt) {
  std::vector<double> pos;
  for (int64_t x = 0; x < extent; ++x) pos.push_back(static_cast<double>(x));
  Value* p = ctx.constant(ir::Tensor::from_doubles(dt, pos, {1, 1, extent}));
  Value* l = helpers::unsqueeze(ctx, lo, {2}), *h = helpers::unsqueeze(ctx, hi, {2});
  return ctx.op("And", {ctx.op("Not", {ctx.op("Less", {p, l})}), ctx.op("Less", {p, h})});
}

// torchvision::ps_roi_pool(input[N, C, H, W], rois[K, 5], spatial_scale,
// pooled_height, pooled_width) -> (output, channel_mapping): the AVERAGE of
// each bin's pixels (0 for an empty bin), output channel c of bin (i, j)
// reading input channel (c * ph + i) * pw + j. Each box's image [K, C, H, W]
// is viewed as [K, c_out, ph, pw, H, W]; rows outside bin i are zeroed with
// Where (no 0 * inf) and summed over H, then columns outside bin j over W, so
// each output sums exactly its bin's pixels, divided by the bin's area.
void ps_roi_pool(SymbolicContext& ctx) {
  const int64_t ph = ctx.i(3), pw = ctx.i(4);
  const int64_t c_out = ps_channels(ctx, ph, pw);
  // (the bins are tabled over the positions of H and W: constants)
  const int64_t h = ctx.static_dim(0, 2), w = ctx.static_dim(0, 3);
  const DType dt = ctx.dtype(0) == DType::Double ? DType::Double : DType::Float;
  auto [batch, boxes] = split_rois(ctx, dt);
  boxes = ctx.op("Mul", {boxes, ctx.const_scalar(dt, ctx.f(2))});
  auto corner = [&](int64_t k) { return helpers::slice(ctx, boxes, {1}, {k}, {k + 1}); };  // [K, 1]
  auto [y0, y1] = pool_bins(ctx, corner(1), corner(3), ph, h, dt);
  auto [x0, x1] = pool_bins(ctx, corner(0), corner(2), pw, w, dt);
  Value* zero = ctx.const_scalar(dt, 0);
  Value* x = ctx.op("Gather", {ctx.cast(ctx.in(0), dt), batch}, {{"axis", int64_t{0}}});
  x = helpers::reshape(ctx, x, {0, c_out, ph, pw, h, w});
  // rows: [K, ph, H] -> [K, 1, ph, 1, H, 1]
  Value* rows = helpers::unsqueeze(ctx, in_bins(ctx, y0, y1, h, dt), {1, 3, 5});
  Value* sum = helpers::reduce(ctx, "ReduceSum", ctx.op("Where", {rows, x, zero}), {4}, false);  // [K, c, ph, pw, W]
  // columns: [K, pw, W] -> [K, 1, 1, pw, W]
  Value* cols = helpers::unsqueeze(ctx, in_bins(ctx, x0, x1, w, dt), {1, 2});
  sum = helpers::reduce(ctx, "ReduceSum", ctx.op("Where", {cols, sum, zero}), {4}, false);  // [K, c, ph, pw]
  // areas: [K, ph, 1] * [K, 1, pw] -> [K, 1, ph, pw]
  Value* area = ctx.op("Mul", {helpers::unsqueeze(ctx, ctx.op("Sub", {y1, y0}), {2}),
                               helpers::unsqueeze(ctx, ctx.op("Sub", {x1, x0}), {1})});
  area = helpers::unsqueeze(ctx, area, {1});
  Value* empty = ctx.op("Not", {ctx.op("Greater", {area, zero})});
  Value* safe = ctx.op("Where", {empty, ctx.const_scalar(dt, 1), area});
  Value* out = ctx.op("Where", {empty, zero, ctx.op("Div", {sum, safe})});
  ctx.out(ctx.cast(typed(out, dt), ctx.dtype(0)));
  channel_mapping(ctx, c_out, ph, pw);
}

}  // namespace

void register_torchvision(Registry& r) {
  r.add("torchvision::nms", 10, nms);
  r.add("torchvision::roi_align", 10, [](SymbolicContext& c) { roi_align(c, false); });
  r.add("torchvision::roi_align", 16, [](SymbolicContext& c) { roi_align(c, true); });
  r.add("torchvision::roi_pool", 9, roi_pool);
  r.add("torchvision::deform_conv2d", 19, deform_conv2d);
  r.add("torchvision::ps_roi_align", 16, ps_roi_align);
  r.add("torchvision::ps_roi_pool", 9, ps_roi_pool);
}

}  // namespace torch2onnx::symbolics
