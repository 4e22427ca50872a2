// The export pipeline, stage by stage. Each line is one pass.
//
//   load (frontend/)  ->  torch passes (torch_passes/)  ->  conversion
//   (convert/ + symbolics/)  ->  ONNX passes (onnx_passes/)  ->  check and
//   serialize (serialize/)
#include "pipeline.h"

#include <iostream>

#include "convert/converter.h"
#include "ir/printer.h"
#include "onnx_passes/passes.h"
#include "serialize/check.h"
#include "torch_passes/passes.h"

namespace torch2onnx {
namespace {

using OnnxPass = void (*)(ir::Model&, const onnx_passes::PassContext&);

struct NamedPass {
  const char* name;
  OnnxPass run;
};

// ONNX-side passes, in order.
const NamedPass kOnnxPasses[] = {
    {"eliminate_dead_code", onnx_passes::eliminate_dead_code},
    {"fold_constants", onnx_passes::fold_constants},
    {"fold_static_shapes", onnx_passes::fold_static_shapes},
    {"fuse_conv_batchnorm", onnx_passes::fuse_conv_batchnorm},
    {"remove_identities", onnx_passes::remove_identities},
    {"deduplicate_constants", onnx_passes::deduplicate_constants},
    {"eliminate_dead_code", onnx_passes::eliminate_dead_code},
};

void validate(const ExportOptions& o) {
  if (o.opset_version < kMinOpset || o.opset_version > kMaxOpset)
    throw Error(Error::Kind::Usage, "opset " + std::to_string(o.opset_version) + " is not supported: torch2onnx exports opsets " +
                                        std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset));
}

}  // namespace

torch_side::TorchGraph trace_to_torch_graph(torch::jit::Module module, const std::vector<c10::IValue>& args,
                                            const ExportOptions& options) {
  torch_side::TorchContext ctx{options};
  torch_side::TorchGraph tg = torch_side::inline_forward(module, ctx);
  torch_side::lift_parameters(tg, module, ctx);
  torch_side::bind_inputs(tg, args, ctx);
  torch_side::functionalize(tg, ctx);
  torch_side::cleanup(tg, ctx);
  torch_side::example_run(tg, ctx);
  torch_side::fold_static_values(tg, ctx);
  torch_side::cleanup(tg, ctx);
  return tg;
}

ir::Model export_ir(torch::jit::Module module, const std::vector<c10::IValue>& args, const ExportOptions& options,
                    const Registry& registry) {
  validate(options);
  ir::Model model;
  {
    torch_side::TorchGraph tg = trace_to_torch_graph(std::move(module), args, options);
    model = convert::convert(tg, registry, options);
  }  // the torch graph (and, if we held the last reference, the module) is gone here
  model.producer_version = version();

  onnx_passes::PassContext ctx{options};
#ifndef NDEBUG
  onnx_passes::lint(model, "conversion");
#endif
  for (const NamedPass& pass : kOnnxPasses) {
    pass.run(model, ctx);
#ifndef NDEBUG
    onnx_passes::lint(model, pass.name);
#endif
  }
  serialize::check_and_infer(model);

  if (options.verbose) ir::print_model(options.verbose_stream ? *options.verbose_stream : std::cout, model);
  return model;
}

}  // namespace torch2onnx
