// The ONNX-side passes, in pipeline order (see src/pipeline.cpp). Each is a
// function of (model, context).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/model.h"
#include "torch2onnx/options.h"

namespace torch2onnx::onnx_passes {

struct PassContext {
  const ExportOptions& options;
  // Module path ("layer1.0") -> qualified class ("torchvision.models.resnet.BasicBlock"),
  // for outline_module_functions.
  std::map<std::string, std::string> module_classes = {};
  // .pt2 programs keep every user input, read or not (as torch.onnx's dynamo
  // exporter does: the ONNX inputs are the program's).
  bool keep_unused_inputs = false;
  // Graph input -> the PyTorch operators (origins) whose nodes read it right
  // after conversion (note_input_readers), for drop_unused_inputs.
  mutable std::map<const ir::Value*, std::vector<const ir::Origin*>> input_readers = {};
  // Graph inputs that stay though nothing reads them: a scripted forward()'s
  // Optional[Tensor] parameters given a tensor (torch.onnx keeps its test).
  std::set<const ir::Value*> kept_inputs = {};
};

// Whether v is one of its graph's outputs.
inline bool is_graph_output(const ir::Value* v) {
  for (const ir::Use& u : v->uses())
    if (!u.user) return true;
  return false;
}

// A fusion's result `to` takes `from`'s readers and its name (a graph output
// keeps its name; `from` becomes "<name>_unfused" until dead code goes).
inline void replace_keeping_name(ir::Graph& g, ir::Value* from, ir::Value* to) {
  const std::string name = from->name();
  g.rename_unique(from, name + "_unfused");
  g.rename(to, name);
  from->replace_all_uses_with(to);
}

// `to` takes `from`'s readers, and its name where `from` is a graph output.
inline void replace_value(ir::Graph& g, ir::Value* from, ir::Value* to) {
  if (is_graph_output(from)) replace_keeping_name(g, from, to);
  else from->replace_all_uses_with(to);
}

// The graph outputs' names before the passes, and put back after them
// (keep_output_names.cpp): a pass that replaces an output's value need not
// keep its name.
std::vector<std::string> output_names(const ir::Model& model);
void restore_output_names(ir::Model& model, const std::vector<std::string>& names);
// Nodes whose outputs nobody reads; initializers nobody reads.
void eliminate_dead_code(ir::Model& model, const PassContext& ctx);
// Records which PyTorch operators read each graph input (before folding).
void note_input_readers(ir::Model& model, const PassContext& ctx);
// Graph inputs nothing reads are removed (as torch.onnx does), but for one
// read by an operator that was not folded away (x.view_as(y) keeps y).
void drop_unused_inputs(ir::Model& model, const PassContext& ctx);
// Nodes whose inputs are all constants become constants.
void fold_constants(ir::Model& model, const PassContext& ctx);
// Shape/Size of values whose shape is fully static (after inference) become constants.
void fold_static_shapes(ir::Model& model, const PassContext& ctx);
// Eval mode: BatchNormalization right after a Conv is folded into its weights.
void fuse_conv_batchnorm(ir::Model& model, const PassContext& ctx);
// Opset 23, before the fusions: value types from ONNX shape inference (infer_types.cpp).
void infer_types_for_fusions(ir::Model& model, const PassContext& ctx);
// Opset 23: x * cos + rotate_half(x) * sin with constant caches -> RotaryEmbedding.
void fuse_rotary_embedding(ir::Model& model, const PassContext& ctx);
// Opset 23: GPT-J's x * cos' + rotate_every_two(x) * sin' (x [B, S, H, d]) -> RotaryEmbedding(interleaved).
void fuse_interleaved_rotary(ir::Model& model, const PassContext& ctx);
// Opset 23: x * rsqrt(mean(x^2, -1) + eps) [* scale] -> RMSNormalization.
void fuse_rms_normalization(ir::Model& model, const PassContext& ctx);
// Opset 24: x * Sigmoid(x) -> Swish (fuse_swish.cpp; at the opsets
// swish_runs_at(): those ONNX Runtime has a Swish kernel for).
void fuse_swish(ir::Model& model, const PassContext& ctx);
bool swish_runs_at(int64_t opset);
// Opset 23: softmax(q @ k^T * s [+ mask]) @ v written out (eager attention) -> Attention.
void fuse_eager_attention(ir::Model& model, const PassContext& ctx);
// Opset 23: an Attention node reading its keys / values through the KV cache's
// Concat (and repeat_kv's Expand) takes the cache as past_key / past_value.
void fuse_attention_cache(ir::Model& model, const PassContext& ctx);
// Opset 23: every Attention's float mask maps its dtype's lowest value to
// half of it (ONNX Runtime takes `lowest` for -inf; PyTorch adds it).
void guard_attention_masks(ir::Model& model, const PassContext& ctx);
// Identity nodes are bypassed.
void remove_identities(ir::Model& model, const PassContext& ctx);
// x + 0, x - 0 (integers), x * 1, x / 1 -> x (remove_neutral_arithmetic.cpp).
void remove_neutral_arithmetic(ir::Model& model, const PassContext& ctx);
// Shape / Size of a Cast (or another element-wise unary op) read from its input.
void read_shapes_at_source(ir::Model& model, const PassContext& ctx);
// Shape computations the size analysis proves read where the graph takes the
// sizes in (an input's named dim, a constant, a first read), opset 15+.
void read_sizes_at_inputs(ir::Model& model, const PassContext& ctx);
// Concat of Concat (same axis, the inner read once) -> one Concat.
void fuse_concats(ir::Model& model, const PassContext& ctx);
// Transpose of Transpose (the inner read once) -> one Transpose; identity perms -> nothing.
void fuse_transposes(ir::Model& model, const PassContext& ctx);
// Unsqueeze of Unsqueeze (known axes, the inner read once) -> one Unsqueeze.
void fuse_unsqueezes(ir::Model& model, const PassContext& ctx);
// Opset 15+: Unsqueeze(Gather(Shape(x), i), 0) -> Shape(x, i, i+1); adjacent Shape slices in a Concat merge.
void fuse_shape_slices(ir::Model& model, const PassContext& ctx);
// Initializers and Constant nodes with the same content are merged.
void deduplicate_constants(ir::Model& model, const PassContext& ctx);
// A node with the same op, inputs and attributes as an earlier one reads the
// earlier one's outputs instead (eliminate_common_subexpressions.cpp).
void eliminate_common_subexpressions(ir::Model& model, const PassContext& ctx);
// The main graph's Constant nodes become initializers (unless
// keep_initializers_as_inputs would list them as inputs).
void constants_to_initializers(ir::Model& model, const PassContext& ctx);
// Initializers computed by passes are named after what reads them:
// "<node name>.<input name in the ONNX schema>" ("/rnn/LSTM.W").
void name_derived_initializers(ir::Model& model, const PassContext& ctx);
// export_modules_as_functions: the nodes of each call of a selected
// submodule become one node calling an ONNX local function (innermost
// modules first, so functions nest).
void outline_module_functions(ir::Model& model, const PassContext& ctx);
// Checks the IR's invariants (use lists, topological order, unique names);
// throws Error(Internal). Run after every pass in debug builds.
void lint(const ir::Model& model, const char* after_pass);

}  // namespace torch2onnx::onnx_passes
