// Recurrent layers: aten::lstm / gru / rnn_tanh / rnn_relu -> one ONNX
// LSTM / GRU / RNN node per layer (both directions in one node). PyTorch's
// gate order differs from ONNX's; the weights are reordered with Slice and
// Concat, which constant folding turns into new initializers.
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

// aten::lstm(input, hx[], params[], has_biases, num_layers, dropout, train, bidirectional, batch_first)
// aten::gru / rnn_tanh / rnn_relu(input, hx, params[], has_biases, num_layers, dropout, train, bidirectional, batch_first)
void rnn(SymbolicContext& ctx, Cell cell) {
  // The .data overloads (packed sequences) have batch_sizes where .input has hx (LSTM) or params.
  const bool packed = cell == Cell::LSTM ? ctx.arg(1).is_tensor() : ctx.arg(2).is_tensor();
  if (packed) ctx.fail("packed sequences are not supported; pass a padded tensor");
  const bool has_biases = ctx.b(3);
  const int64_t layers = ctx.i(4);
  const bool train = ctx.b(6);
  const bool bidirectional = ctx.b(7);
  const bool batch_first = ctx.b(8);
  if (train && ctx.f(5) > 0 && layers > 1) ctx.fail("dropout between layers in training mode cannot be exported");
  const int64_t dirs = bidirectional ? 2 : 1;
  const int64_t per = has_biases ? 4 : 2;
  std::vector<ir::Value*> params = ctx.list(2);
  const Arg& params_arg = ctx.arg(2);
  if (static_cast<int64_t>(params.size()) != layers * dirs * per)
    ctx.fail("LSTM projections (proj_size) are not supported");
  const int64_t hidden = params_arg.elements.at(1).sizes.at(1);  // weight_hh: [gates*H, H]

  std::vector<ir::Value*> hx = cell == Cell::LSTM ? ctx.list(1) : std::vector<ir::Value*>{ctx.in(1)};
  const bool unbatched = ctx.rank(0) == 2;
  ir::Value* x = ctx.in(0);
  if (unbatched) {
    x = helpers::unsqueeze(ctx, x, {1});
    for (auto& h : hx) h = helpers::unsqueeze(ctx, h, {1});
  } else if (batch_first) {
    x = ctx.op("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  }

  const char* op = cell == Cell::LSTM ? "LSTM" : cell == Cell::GRU ? "GRU" : "RNN";
  std::vector<ir::Value*> h_last, c_last;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<ir::Value*> W, R, B;
    for (int64_t d = 0; d < dirs; ++d) {
      const size_t base = static_cast<size_t>((l * dirs + d) * per);
      W.push_back(reorder(ctx, params[base], cell, hidden));
      R.push_back(reorder(ctx, params[base + 1], cell, hidden));
      if (has_biases) {
        ir::Value* b = ctx.op("Concat", {reorder(ctx, params[base + 2], cell, hidden),
                                         reorder(ctx, params[base + 3], cell, hidden)},
                              {{"axis", int64_t{0}}});
        B.push_back(b);
      }
    }
    std::vector<ir::Value*> ins{x, stack_dirs(ctx, W), stack_dirs(ctx, R), has_biases ? stack_dirs(ctx, B) : nullptr,
                                nullptr};
    for (ir::Value* h : hx) ins.push_back(helpers::slice(ctx, h, {0}, {l * dirs}, {(l + 1) * dirs}));
    ir::Attributes attrs{{"hidden_size", hidden},
                         {"direction", bidirectional ? "bidirectional" : "forward"}};
    if (cell == Cell::GRU) attrs.emplace_back("linear_before_reset", int64_t{1});
    if (cell == Cell::RNNTanh || cell == Cell::RNNRelu) {
      std::string act = cell == Cell::RNNTanh ? "Tanh" : "Relu";
      attrs.emplace_back("activations", std::vector<std::string>(static_cast<size_t>(dirs), act));
    }
    auto outs = ctx.op_n(op, ins, cell == Cell::LSTM ? 3 : 2, std::move(attrs));
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
    ir::Value* r = v.size() == 1 ? v[0] : ctx.op("Concat", v, {{"axis", int64_t{0}}});
    return unbatched ? helpers::squeeze(ctx, r, {1}) : r;
  };
  if (unbatched)
    x = helpers::squeeze(ctx, x, {1});
  else if (batch_first)
    x = ctx.op("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  ctx.out(x, 0);
  ctx.out(join(h_last), 1);
  if (cell == Cell::LSTM) ctx.out(join(c_last), 2);
}

void lstm(SymbolicContext& ctx) { rnn(ctx, Cell::LSTM); }
void gru(SymbolicContext& ctx) { rnn(ctx, Cell::GRU); }
void rnn_tanh(SymbolicContext& ctx) { rnn(ctx, Cell::RNNTanh); }
void rnn_relu(SymbolicContext& ctx) { rnn(ctx, Cell::RNNRelu); }

}  // namespace

void register_rnn(Registry& r) {
  r.add("aten::lstm", 9, lstm);
  r.add("aten::gru", 9, gru);
  r.add("aten::rnn_tanh", 9, rnn_tanh);
  r.add("aten::rnn_relu", 9, rnn_relu);
}

}  // namespace torch2onnx::symbolics
