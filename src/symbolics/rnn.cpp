// Recurrent layers: aten::lstm / gru / rnn_tanh / rnn_relu -> one ONNX
// LSTM / GRU / RNN node per layer (both directions in one node). PyTorch's
// gate order differs from ONNX's; the weights are reordered with Slice and
// Concat, which constant folding turns into new initializers.
//
// Packed sequences: _pack_padded_sequence keeps the padded tensor (made
// time-major) as the packed data, and computes PyTorch's batch_sizes from the
// lengths (code reads them: nn.LSTM takes the batch size from
// batch_sizes[0]); the .data overloads of the RNNs turn batch_sizes back into
// lengths for ONNX's sequence_lens, and _pad_packed_sequence masks the steps
// past each length with padding_value. The data is only right when it goes
// straight from packing through RNNs to unpacking, which is how
// PackedSequence is used.
//
// The cells (lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell) are one step
// of plain arithmetic.
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

enum class Cell { LSTM, GRU, RNNTanh, RNNRelu };

// ONNX gate order in terms of PyTorch's: LSTM iofc from ifgo, GRU zrh from rzn.
std::vector<int64_t> gate_order(Cell c) {
  switch (c) {
    case Cell::LSTM: return {0, 3, 1, 2};
    case Cell::GRU: return {1, 0, 2};
    default: return {0};
  }
}

ir::Value* reorder(SymbolicContext& ctx, ir::Value* w, Cell cell, int64_t hidden) {
  const auto order = gate_order(cell);
  if (order.size() == 1) return w;
  std::vector<ir::Value*> blocks;
  for (int64_t g : order) blocks.push_back(helpers::slice(ctx, w, {0}, {g * hidden}, {(g + 1) * hidden}));
  return ctx.op("Concat", blocks, {{"axis", int64_t{0}}});
}

ir::Value* stack_dirs(SymbolicContext& ctx, const std::vector<ir::Value*>& per_dir) {
  std::vector<ir::Value*> parts;
  for (ir::Value* v : per_dir) parts.push_back(helpers::unsqueeze(ctx, v, {0}));
  return parts.size() == 1 ? parts[0] : ctx.op("Concat", parts, {{"axis", int64_t{0}}});
}

const char* cell_name(Cell c) {
  switch (c) {
    case Cell::LSTM: return "LSTM";
    case Cell::GRU: return "GRU";
    default: return "RNN";
  }
}

// Argument positions of aten::lstm / gru / rnn_* in their .input and .data overloads.
struct RnnArgs {
  size_t input = 0, hx = 1, params = 2, has_biases = 3, num_layers = 4, dropout = 5, train = 6, bidirectional = 7;
  std::optional<size_t> batch_first = 8;
  std::optional<size_t> batch_sizes;  // .data: PyTorch's batch_sizes
};

// PyTorch's batch_sizes of sorted (longest first) lengths: batch_sizes[t] =
// the number of sequences longer than t, for t < the longest length.
ir::Value* batch_sizes_of(SymbolicContext& ctx, ir::Value* lengths) {
  ir::Value* longest = helpers::reduce(ctx, "ReduceMax", lengths, {0}, false);
  ir::Value* t = helpers::unsqueeze(ctx, helpers::arange(ctx, longest), {1});                 // [T, 1]
  ir::Value* longer = ctx.op("Greater", {helpers::unsqueeze(ctx, lengths, {0}), t});        // [T, B]
  return helpers::reduce(ctx, "ReduceSum", ctx.cast(longer, ir::DType::Int64), {1}, false);  // [T]
}

// The lengths back from batch_sizes: lengths[b] = the number of steps with
// more than b sequences, for b < the batch size (dim 1 of the time-major data).
ir::Value* lengths_of(SymbolicContext& ctx, ir::Value* batch_sizes, ir::Value* data) {
  ir::Value* sizes = ctx.cast(batch_sizes, ir::DType::Int64);
  ir::Value* b = helpers::unsqueeze(ctx, helpers::arange(ctx, helpers::dim_size(ctx, data, 1)), {0});  // [1, B]
  ir::Value* more = ctx.op("Greater", {helpers::unsqueeze(ctx, sizes, {1}), b});                      // [T, B]
  return helpers::reduce(ctx, "ReduceSum", ctx.cast(more, ir::DType::Int64), {0}, false);             // [B]
}

// aten::lstm.input(input, hx[], params[], has_biases, num_layers, dropout, train, bidirectional, batch_first)
// aten::lstm.data(data, batch_sizes, hx[], params[], has_biases, num_layers, dropout, train, bidirectional)
// aten::gru / rnn_tanh / rnn_relu: the same with one hx tensor.
void rnn(SymbolicContext& ctx, Cell cell) {
  // The .data overloads have batch_sizes (a tensor) where .input has hx (LSTM: a list) or params (a list).
  const bool packed = cell == Cell::LSTM ? ctx.arg(1).is_tensor() : ctx.arg(2).is_tensor();
  RnnArgs a;
  if (packed) {
    a = RnnArgs{0, 2, 3, 4, 5, 6, 7, 8, std::nullopt, size_t{1}};
  }
  const bool has_biases = ctx.b(a.has_biases);
  const int64_t layers = ctx.i(a.num_layers);
  const bool train = ctx.b(a.train);
  const bool bidirectional = ctx.b(a.bidirectional);
  const bool batch_first = a.batch_first && ctx.b(*a.batch_first);
  if (train && ctx.f(a.dropout) > 0 && layers > 1)
    ctx.fail("dropout between layers in training mode cannot be exported");
  const int64_t dirs = bidirectional ? 2 : 1;
  const int64_t per = has_biases ? 4 : 2;
  const Arg& params_arg = ctx.arg(a.params);
  if (!params_arg.is_list()) ctx.fail("the parameters must be a list of tensors");
  const int64_t nparams = static_cast<int64_t>(params_arg.elements.size());
  if (cell == Cell::LSTM && nparams == layers * dirs * (per + 1))
    ctx.fail("LSTM with projections (proj_size > 0) cannot be exported: ONNX LSTM has no projection");
  if (nparams != layers * dirs * per)
    ctx.fail("expected " + std::to_string(layers * dirs * per) + " parameter tensors, got " + std::to_string(nparams));
  std::vector<ir::Value*> params = ctx.list(a.params);
  const auto& whh = params_arg.elements.at(1);
  if (!whh.has_sizes || whh.sizes.size() != 2) ctx.fail("the shape of weight_hh is unknown");
  const int64_t hidden = whh.sizes[1];  // weight_hh: [gates*H, H]
  const ir::DType dt = ctx.dtype(a.input);

  std::vector<ir::Value*> hx = cell == Cell::LSTM ? ctx.list(a.hx) : std::vector<ir::Value*>{ctx.in(a.hx)};
  ir::Value* x = ctx.in(a.input);
  ir::Value* seq_lens = nullptr;
  if (packed) {
    // [T, B, F] padded data (see _pack_padded_sequence).
    seq_lens = ctx.cast(lengths_of(ctx, ctx.in(*a.batch_sizes), x), ir::DType::Int32);
  } else {
    // (nn.LSTM & co. add the batch axis of unbatched inputs before calling the op.)
    if (ctx.rank(a.input) != 3) ctx.fail("expected a 3-D input");
    if (batch_first) x = ctx.op("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  }

  std::vector<ir::Value*> h_last, c_last;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<ir::Value*> W, R, B;
    for (int64_t d = 0; d < dirs; ++d) {
      const size_t base = static_cast<size_t>((l * dirs + d) * per);
      W.push_back(reorder(ctx, ctx.cast(params[base], dt), cell, hidden));
      R.push_back(reorder(ctx, ctx.cast(params[base + 1], dt), cell, hidden));
      if (has_biases) {
        ir::Value* b = ctx.op("Concat", {reorder(ctx, ctx.cast(params[base + 2], dt), cell, hidden),
                                         reorder(ctx, ctx.cast(params[base + 3], dt), cell, hidden)},
                              {{"axis", int64_t{0}}});
        B.push_back(b);
      }
    }
    std::vector<ir::Value*> ins{x, stack_dirs(ctx, W), stack_dirs(ctx, R), has_biases ? stack_dirs(ctx, B) : nullptr,
                                seq_lens};
    for (ir::Value* h : hx) ins.push_back(helpers::slice(ctx, ctx.cast(h, dt), {0}, {l * dirs}, {(l + 1) * dirs}));
    ir::Attributes attrs{{"hidden_size", hidden}, {"direction", bidirectional ? "bidirectional" : "forward"}};
    if (cell == Cell::GRU) attrs.emplace_back("linear_before_reset", int64_t{1});
    if (cell == Cell::RNNTanh || cell == Cell::RNNRelu) {
      std::string act = cell == Cell::RNNTanh ? "Tanh" : "Relu";
      attrs.emplace_back("activations", std::vector<std::string>(static_cast<size_t>(dirs), act));
    }
    auto outs = ctx.op_n(cell_name(cell), ins, cell == Cell::LSTM ? 3 : 2, std::move(attrs));
    // Y: [seq, dirs, batch, H] -> [seq, batch, dirs*H]
    if (dirs == 1) {
      x = helpers::squeeze(ctx, outs[0], {1});
    } else {
      x = ctx.op("Transpose", {outs[0]}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
      x = helpers::reshape(ctx, x, {0, 0, -1});
    }
    h_last.push_back(outs[1]);
    if (cell == Cell::LSTM) c_last.push_back(outs[2]);
  }
  auto join = [&](const std::vector<ir::Value*>& v) {
    return v.size() == 1 ? v[0] : ctx.op("Concat", v, {{"axis", int64_t{0}}});
  };
  if (batch_first) x = ctx.op("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  ctx.out(x, 0);
  ctx.out(join(h_last), 1);
  if (cell == Cell::LSTM) ctx.out(join(c_last), 2);
}

void lstm(SymbolicContext& ctx) { rnn(ctx, Cell::LSTM); }
void gru(SymbolicContext& ctx) { rnn(ctx, Cell::GRU); }
void rnn_tanh(SymbolicContext& ctx) { rnn(ctx, Cell::RNNTanh); }
void rnn_relu(SymbolicContext& ctx) { rnn(ctx, Cell::RNNRelu); }

// aten::_pack_padded_sequence(input, lengths, batch_first) -> (data, batch_sizes):
// here (the padded input made time-major [T, B, *], PyTorch's batch_sizes).
void pack_padded_sequence(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  if (rank < 2) ctx.fail("the input must have at least 2 dimensions");
  if (ctx.b(2)) {
    std::vector<int64_t> perm{1, 0};
    for (int64_t i = 2; i < rank; ++i) perm.push_back(i);
    x = ctx.op("Transpose", {x}, {{"perm", perm}});
  }
  ctx.out(x, 0);
  ir::Value* batch_sizes = batch_sizes_of(ctx, ctx.cast(ctx.in(1), ir::DType::Int64));
  ctx.out(ctx.cast(batch_sizes, ctx.out_dtype(1) == ir::DType::Undefined ? ir::DType::Int64 : ctx.out_dtype(1)), 1);
}

// Positions 0..n-1 as a 1-D int64 value, n a 1-element int64 value.
ir::Value* positions(SymbolicContext& ctx, ir::Value* n) { return helpers::arange(ctx, helpers::squeeze(ctx, n, {0})); }

// aten::_pad_packed_sequence(data, batch_sizes, batch_first, padding_value, total_length)
//   -> (padded, lengths): data is the time-major padded output of an RNN's .data
// overload (see _pack_padded_sequence). PyTorch pads to total_length steps
// (which pad_packed_sequence sets to the longest length, batch_sizes.size(0),
// when not given); steps past each sequence's length hold padding_value.
void pad_packed_sequence(SymbolicContext& ctx) {
  ir::Value* y = ctx.in(0);
  const ir::DType dt = ctx.dtype(0);
  const int64_t rank = ctx.out_info(0).has_sizes ? ctx.out_info(0).rank() : 3;
  ir::Value* lengths = lengths_of(ctx, ctx.in(1), y);
  const bool batch_first = ctx.b(2);
  const double padding_value = ctx.f(3);
  // Steps: total_length when known (else the padded data's own length). Data
  // with fewer steps is padded first (with zeros, masked below), then cut.
  if (ctx.constant(4) && ctx.i(4) > 0) {
    const int64_t total = ctx.i(4);
    ir::Value* shape = ctx.op("Shape", {y});
    ir::Value* rest = helpers::slice(ctx, shape, {0}, {1}, {std::numeric_limits<int64_t>::max()});
    ir::Value* zshape = ctx.op("Concat", {ctx.const_ints({total}), rest}, {{"axis", int64_t{0}}});
    ir::Value* zeros = ctx.op("ConstantOfShape", {zshape}, {{"value", ir::Tensor::from_doubles(dt, {0.0}, {1})}});
    y = helpers::slice(ctx, ctx.op("Concat", {y, zeros}, {{"axis", int64_t{0}}}), {0}, {0}, {total});
  } else if (!ctx.none(4) && !ctx.constant(4) && ctx.opset() >= 10) {
    // The longest length, computed (batch_sizes.size(0)): the padded data may have more steps.
    ir::Value* total = helpers::unsqueeze(ctx, ctx.scalar_value(4, ir::DType::Int64), {0});
    y = helpers::slice_dynamic(ctx, y, ctx.const_ints({0}), total, ctx.const_ints({0}), nullptr);
  }
  // mask[t, b] = t < lengths[b]
  ir::Value* steps = helpers::slice(ctx, ctx.op("Shape", {y}), {0}, {0}, {1});
  ir::Value* t = helpers::unsqueeze(ctx, positions(ctx, steps), {1});              // [T, 1]
  ir::Value* mask = ctx.op("Less", {t, helpers::unsqueeze(ctx, lengths, {0})});  // [T, B]
  std::vector<int64_t> trailing;
  for (int64_t i = 2; i < rank; ++i) trailing.push_back(i);
  if (!trailing.empty()) mask = helpers::unsqueeze(ctx, mask, trailing);
  y = ctx.op("Where", {mask, y, ctx.const_scalar(dt, padding_value)});
  if (batch_first) {
    std::vector<int64_t> perm{1, 0};
    for (int64_t i = 2; i < rank; ++i) perm.push_back(i);
    y = ctx.op("Transpose", {y}, {{"perm", perm}});
  }
  ctx.out(y, 0);
  ctx.out(ctx.cast(lengths, ctx.out_dtype(1) == ir::DType::Undefined ? ir::DType::Int64 : ctx.out_dtype(1)), 1);
}

// ---- cells: input [B, I], hx [B, H] (nn.*Cell add the batch axis of unbatched inputs)

// x W^T + b
ir::Value* affine(SymbolicContext& ctx, ir::Value* x, size_t w, size_t b, ir::DType dt) {
  ir::Value* wt = ctx.op("Transpose", {ctx.in_as(w, dt)}, {{"perm", std::vector<int64_t>{1, 0}}});
  ir::Value* y = ctx.op("MatMul", {x, wt});
  if (ctx.num_args() > b && !ctx.none(b)) y = ctx.op("Add", {y, ctx.in_as(b, dt)});
  return y;
}

std::vector<ir::Value*> chunks(SymbolicContext& ctx, ir::Value* v, int64_t n, int64_t hidden, int64_t rank) {
  return helpers::split(ctx, v, std::vector<int64_t>(static_cast<size_t>(n), hidden), rank - 1);
}

int64_t cell_hidden(SymbolicContext& ctx, size_t w_hh) {
  const auto& s = ctx.sizes(w_hh);
  if (s.size() != 2) ctx.fail("weight_hh must be 2-D");
  return s[1];
}

// aten::lstm_cell(input, hx[h, c], w_ih, w_hh, b_ih, b_hh) -> (h', c')
void lstm_cell(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  const int64_t hidden = cell_hidden(ctx, 3), rank = ctx.rank(0);
  std::vector<ir::Value*> hc = ctx.list(1);
  if (hc.size() != 2) ctx.fail("hx must hold (h, c)");
  ir::Value* gates = ctx.op("Add", {affine(ctx, ctx.in(0), 2, 4, dt), affine(ctx, ctx.cast(hc[0], dt), 3, 5, dt)});
  auto g = chunks(ctx, gates, 4, hidden, rank);  // i, f, g, o
  ir::Value* c = ctx.op("Add", {ctx.op("Mul", {ctx.op("Sigmoid", {g[1]}), ctx.cast(hc[1], dt)}),
                                ctx.op("Mul", {ctx.op("Sigmoid", {g[0]}), ctx.op("Tanh", {g[2]})})});
  ctx.out(ctx.op("Mul", {ctx.op("Sigmoid", {g[3]}), ctx.op("Tanh", {c})}), 0);
  ctx.out(c, 1);
}

// aten::gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh) -> h'
void gru_cell(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  const int64_t hidden = cell_hidden(ctx, 3), rank = ctx.rank(0);
  ir::Value* h = ctx.in_as(1, dt);
  auto gi = chunks(ctx, affine(ctx, ctx.in(0), 2, 4, dt), 3, hidden, rank);  // r, z, n
  auto gh = chunks(ctx, affine(ctx, h, 3, 5, dt), 3, hidden, rank);
  ir::Value* r = ctx.op("Sigmoid", {ctx.op("Add", {gi[0], gh[0]})});
  ir::Value* z = ctx.op("Sigmoid", {ctx.op("Add", {gi[1], gh[1]})});
  ir::Value* n = ctx.op("Tanh", {ctx.op("Add", {gi[2], ctx.op("Mul", {r, gh[2]})})});
  // (1 - z) n + z h = n + z (h - n)
  ctx.out(ctx.op("Add", {n, ctx.op("Mul", {z, ctx.op("Sub", {h, n})})}));
}

// aten::rnn_tanh_cell / rnn_relu_cell(input, hx, w_ih, w_hh, b_ih, b_hh) -> h'
void simple_cell(SymbolicContext& ctx, const char* act) {
  const ir::DType dt = ctx.dtype(0);
  ir::Value* pre = ctx.op("Add", {affine(ctx, ctx.in(0), 2, 4, dt), affine(ctx, ctx.in_as(1, dt), 3, 5, dt)});
  ctx.out(ctx.op(act, {pre}));
}
void rnn_tanh_cell(SymbolicContext& ctx) { simple_cell(ctx, "Tanh"); }
void rnn_relu_cell(SymbolicContext& ctx) { simple_cell(ctx, "Relu"); }

}  // namespace

void register_rnn(Registry& r) {
  r.add("aten::lstm", 9, lstm);
  r.add("aten::gru", 9, gru);
  r.add("aten::rnn_tanh", 9, rnn_tanh);
  r.add("aten::rnn_relu", 9, rnn_relu);
  r.add("aten::_pack_padded_sequence", 9, pack_padded_sequence);
  r.add("aten::_pad_packed_sequence", 9, pad_packed_sequence);
  r.add("aten::lstm_cell", 9, lstm_cell);
  r.add("aten::gru_cell", 9, gru_cell);
  r.add("aten::rnn_tanh_cell", 9, rnn_tanh_cell);
  r.add("aten::rnn_relu_cell", 9, rnn_relu_cell);
}

}  // namespace torch2onnx::symbolics
