// The torch-side passes, in pipeline order (see src/pipeline.cpp).
#pragma once

#include <vector>

#include <ATen/core/ivalue.h>

#include "torch_passes/torch_graph.h"

namespace torch2onnx::torch_side {

// forward() of `module` as an inlined graph (module put in the requested training mode).
// (args: the example args, which pick among overloads of forward())
TorchGraph inline_forward(torch::jit::Module& module, const std::vector<c10::IValue>& args, const TorchContext& ctx);
// Traced torch.autograd.Functions (prim::PythonOp) become the ops they ran,
// unless ctx.keep_python_op keeps them for their `symbolic`.
void inline_autograd_functions(TorchGraph& tg, const TorchContext& ctx);
// Objects of TorchScript classes created in forward() (torchvision's
// ImageList): attribute reads become the values last assigned. An object
// that escapes is refused when `strict`, else left for a later round (after
// branches fold). Returns whether the graph changed.
bool scalarize_objects(TorchGraph& tg, const TorchContext& ctx, bool strict);
// self.<path> reads -> parameter inputs (state_dict order) and constants.
void lift_parameters(TorchGraph& tg, torch::jit::Module& module, const TorchContext& ctx);
// quantized:: kernels (packed weights, quantized tensors) -> dequantize, the
// float aten op, quantize_per_tensor; packed weights become integer constants.
void decompose_quantized(TorchGraph& tg, const TorchContext& ctx);
// Matches the example args against forward()'s inputs: tensors stay inputs,
// tuples/lists are flattened into one input per tensor, numbers and None
// become constants.
void bind_inputs(TorchGraph& tg, const std::vector<c10::IValue>& args, const TorchContext& ctx);
// Facts fixed for an export (CPU, no grad, no autocast, dense tensors,
// `x is x`, `tensor is None`) become constants, for the branches they decide.
void fold_export_facts(TorchGraph& tg, const TorchContext& ctx);
// Scripted graphs: exception branches removed, constant conditions folded,
// prints/warnings dropped. Returns whether the graph changed.
bool simplify_scripted(TorchGraph& tg, const TorchContext& ctx);
// Dicts built and read in one block with constant keys: reads become the
// stored values (torchvision's IntermediateLayerGetter). Returns whether the
// graph changed.
bool fold_dicts(TorchGraph& tg, const TorchContext& ctx);
// In-place ops: later reads of the mutated value read the op's result; writes
// into views rebuild their base (slice_scatter, ...). Needs the example run's
// info; returns true when it added nodes (which then need another run).
bool functionalize(TorchGraph& tg, const TorchContext& ctx);
// Tuple outputs of If nodes -> one output per element (None elements: constants).
void lower_if_tuples(TorchGraph& tg, const TorchContext& ctx);
// Removes nodes that compute nothing for export (detach, profiling) and dead code.
void cleanup(TorchGraph& tg, const TorchContext& ctx);
// Runs the graph once on the example inputs and records every value's
// dtype, shape and (for numbers) value.
void example_run(TorchGraph& tg, const TorchContext& ctx);
// Which sizes of each value vary with the dynamic axes: a second meta run
// with those axes resized, compared with the first (ExampleInfo::dynamic_dims).
void mark_dynamic_dims(TorchGraph& tg, const TorchContext& ctx);

// Values that depend neither on the inputs' data nor on their dynamic axes
// (sizes of static shapes and arithmetic on them) become the constants the
// example run computed.
void fold_static_values(TorchGraph& tg, const TorchContext& ctx);

}  // namespace torch2onnx::torch_side
