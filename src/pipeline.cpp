// The export pipeline, stage by stage. Each line is one pass.
//
//   load (frontend/)  ->  torch passes (torch_passes/)  ->  conversion
//   (convert/ + symbolics/)  ->  ONNX passes (onnx_passes/)  ->  check and
//   serialize (serialize/)
#include "pipeline.h"

#include "convert/program.h"
#include "frontend/pt2/program.h"

#include <chrono>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "convert/torchscript.h"
#include "ir/printer.h"
#include "onnx_passes/passes.h"
#include "process_memory.h"
#include "serialize/check.h"
#include "torch_passes/cpp_meta_kernels.h"
#include "torch_passes/passes.h"

namespace torch2onnx {
namespace {

void release_free_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

using OnnxPass = void (*)(ir::Model&, const onnx_passes::PassContext&);

struct NamedPass {
  const char* name;
  OnnxPass run;
  bool optimization = false;  // left out with ExportOptions::optimize false
};

// ONNX-side passes, in order.
const NamedPass kOnnxPasses[] = {
    {"eliminate_dead_code", onnx_passes::eliminate_dead_code},
    {"note_input_readers", onnx_passes::note_input_readers},
    {"fold_constants", onnx_passes::fold_constants},
    {"fold_static_shapes", onnx_passes::fold_static_shapes},
    {"fuse_conv_batchnorm", onnx_passes::fuse_conv_batchnorm, true},
    {"infer_types_for_fusions", onnx_passes::infer_types_for_fusions, true},
    {"fuse_rotary_embedding", onnx_passes::fuse_rotary_embedding, true},
    {"fuse_interleaved_rotary", onnx_passes::fuse_interleaved_rotary, true},
    {"fuse_rms_normalization", onnx_passes::fuse_rms_normalization, true},
    {"fuse_eager_attention", onnx_passes::fuse_eager_attention, true},
    {"fuse_attention_cache", onnx_passes::fuse_attention_cache, true},
    {"guard_attention_masks", onnx_passes::guard_attention_masks},
    {"fuse_swish", onnx_passes::fuse_swish, true},
    {"remove_identities", onnx_passes::remove_identities},
    {"remove_neutral_arithmetic", onnx_passes::remove_neutral_arithmetic, true},
    {"read_shapes_at_source", onnx_passes::read_shapes_at_source, true},
    {"fuse_concats", onnx_passes::fuse_concats, true},
    {"fuse_unsqueezes", onnx_passes::fuse_unsqueezes, true},
    {"fuse_transposes", onnx_passes::fuse_transposes, true},
    {"fuse_shape_slices", onnx_passes::fuse_shape_slices, true},
    {"read_sizes_at_inputs", onnx_passes::read_sizes_at_inputs, true},
    {"fold_constants_after_sizes", onnx_passes::fold_constants, true},  // (sizes proved constant, and what reads them)
    {"deduplicate_constants", onnx_passes::deduplicate_constants},
    {"eliminate_common_subexpressions", onnx_passes::eliminate_common_subexpressions, true},
    {"eliminate_dead_code", onnx_passes::eliminate_dead_code},
    {"drop_unused_inputs", onnx_passes::drop_unused_inputs},
    {"constants_to_initializers", onnx_passes::constants_to_initializers},
    {"name_derived_initializers", onnx_passes::name_derived_initializers},
    {"outline_module_functions", onnx_passes::outline_module_functions},
};

// How long each stage took and the memory after it: printed under
// T2O_TIMING=1 (stderr), recorded for a report (note_stage).
class StageTimer {
 public:
  StageTimer() : last_(std::chrono::steady_clock::now()) {}
  void done(const char* stage) {
    note_stage(stage, last_);
    last_ = std::chrono::steady_clock::now();
  }

 private:
  std::chrono::steady_clock::time_point last_;
};

// The options with the frontend's default opset when none was asked for.
ExportOptions with_default_opset(const ExportOptions& o, int opset) {
  ExportOptions out = o;
  if (out.opset_version == 0) out.opset_version = opset;
  return out;
}

void validate(const ExportOptions& o) {
  if (o.opset_version < kMinOpset || o.opset_version > max_opset())
    throw Error(Error::Kind::Usage, "opset " + std::to_string(o.opset_version) + " is not supported: torch2onnx exports opsets " +
                                        std::to_string(kMinOpset) + " to " + std::to_string(max_opset()));
  if (!o.export_modules_as_functions.empty() && o.opset_version < 15)
    throw Error(Error::Kind::Usage, "export_modules_as_functions needs opset 15 or above (ONNX local functions), not " +
                                        std::to_string(o.opset_version));
}

void run_onnx_passes(ir::Model& model, const onnx_passes::PassContext& ctx, StageTimer& timer);

// Module path ("layer1.0") -> TorchScript class name, for export_modules_as_functions.
std::map<std::string, std::string> module_classes(const torch::jit::Module& module) {
  std::map<std::string, std::string> out;
  for (const auto& m : module.named_modules())
    if (m.value.type()->name()) out[m.name] = m.value.type()->name()->qualifiedName();
  return out;
}

}  // namespace

// Rounds of branch folding after the first (nn.TransformerEncoder's checks nest three deep).
constexpr int kMaxFoldRounds = 32;

torch_side::TorchGraph trace_to_torch_graph(torch::jit::Module module, const std::vector<c10::IValue>& args,
                                            const ExportOptions& options, const ExportHooks& hooks) {
  torch_side::TorchContext ctx{options, /*real_example_run=*/false, hooks.python_ops};
  StageTimer timer;
  // (LibTorch's C++ meta kernels for every example run below, in a Python process)
  torch_side::CppMetaKernels cpp_meta;
  timer.done("meta kernels");
  torch_side::TorchGraph tg = torch_side::inline_forward(module, args, ctx);
  timer.done("inline_forward");
  torch_side::inline_autograd_functions(tg, ctx);
  torch_side::lift_parameters(tg, module, ctx);
  torch_side::decompose_quantized(tg, ctx);
  torch_side::bind_inputs(tg, args, ctx);
  torch_side::fold_export_facts(tg, ctx);
  auto simplify = [&] {
    const bool simplified = torch_side::simplify_scripted(tg, ctx);
    const bool objects = torch_side::scalarize_objects(tg, ctx, /*strict=*/false);
    return torch_side::fold_dicts(tg, ctx) || simplified || objects;
  };
  // (the structural passes above need no example facts: they run until
  // nothing changes before the next, costlier, example run)
  auto simplify_all = [&] {
    bool any = false;
    for (int i = 0; i < kMaxFoldRounds && simplify(); ++i) any = true;
    return any;
  };
  // (a folded dict read can decide a branch, whose folding exposes more dict reads)
  for (int round = 0; round < kMaxFoldRounds && simplify(); ++round) {
  }
  torch_side::scalarize_objects(tg, ctx, /*strict=*/true);
  torch_side::lower_if_tuples(tg, ctx);
  torch_side::cleanup(tg, ctx);
  timer.done("torch passes");
  torch_side::example_run(tg, ctx);
  timer.done("example_run");
  if (torch_side::functionalize(tg, ctx)) torch_side::example_run(tg, ctx);  // rebuilt views need types too
  timer.done("functionalize");
  torch_side::fold_static_values(tg, ctx);
  torch_side::cleanup(tg, ctx);
  // Static values may have decided branch conditions (`if x.dim() == 3`,
  // `if why_not_fast_path:`): their branches are folded, and the code they
  // bring to the top level is run and folded in turn, until nothing changes.
  for (int round = 0; round < kMaxFoldRounds && simplify_all(); ++round) {
    torch_side::example_run(tg, ctx);
    torch_side::fold_static_values(tg, ctx);
    torch_side::cleanup(tg, ctx);
    timer.done(("fold round " + std::to_string(round + 1)).c_str());
  }
  timer.done("fold_static_values");
  torch_side::mark_dynamic_dims(tg, ctx);
  timer.done("mark_dynamic_dims");
  if (std::getenv("T2O_DUMP_TORCH_GRAPH")) std::cerr << "[t2o] torch graph after the torch passes:\n" << *tg.graph;
  return tg;
}

namespace {

ir::Model run_export(torch::jit::Module& module, const std::vector<c10::IValue>& args, const ExportOptions& requested,
                     const Registry& registry, const ExportHooks& hooks, bool consume) {
  const ExportOptions options = with_default_opset(requested, kDefaultOpset);
  validate(options);
  ir::Model model;
  StageTimer timer;
  onnx_passes::PassContext pass_ctx{options};
  if (!options.export_modules_as_functions.empty()) pass_ctx.module_classes = module_classes(module);
  if (options.progress) options.progress("tracing", 0.0);
  std::optional<torch_side::TorchGraph> tg = trace_to_torch_graph(module, args, options, hooks);
  if (consume) {
    // The graph holds what it needs of the module (its weights, as graph
    // inputs): the module, its code and compiled graphs go, and the heap
    // gives the freed pages back to the system.
    module = torch::jit::Module();
    release_free_memory();
  }
  timer.done("torch side");
  // The meta example run checks less than a real one (e.g. dtypes): if
  // PyTorch itself rejects the example inputs, that is the error to report.
  auto report_real_run_error = [&] {
    if (!tg) return;
    torch_side::TorchContext real{options, /*real_example_run=*/true, hooks.python_ops};
    torch_side::CppMetaKernels cpp_meta;  // (branches the example does not take run on meta)
    torch_side::example_run(*tg, real);
  };
  try {
    if (options.progress) options.progress("converting", 0.0);
    model = convert::convert(*tg, registry, options);
    timer.done("convert");
    {  // inputs that stay whatever folding leaves of their readers (drop_unused_inputs)
      std::vector<const ir::Value*> user;
      for (const ir::Value* v : model.graph->inputs())
        if (!v->is_initializer()) user.push_back(v);
      if (user.size() == tg->user_input_kept.size())
        for (size_t i = 0; i < user.size(); ++i)
          if (tg->user_input_kept[i]) pass_ctx.kept_inputs.insert(user[i]);
    }
    if (consume) {
      // The model's initializers now hold the only handles on the weights:
      // the torch graph goes too.
      tg.reset();
      release_free_memory();
    }
    run_onnx_passes(model, pass_ctx, timer);
  } catch (const UnsupportedOperatorError&) {
    throw;
  } catch (const Error&) {
    report_real_run_error();
    throw;
  }
  model.producer_version = version();
  if (options.verbose) ir::print_model(options.verbose_stream ? *options.verbose_stream : std::cout, model);
  return model;
}

}  // namespace

ir::Model export_ir(torch::jit::Module module, const std::vector<c10::IValue>& args, const ExportOptions& options,
                    const Registry& registry, const ExportHooks& hooks) {
  return run_export(module, args, options, registry, hooks, /*consume=*/false);
}

ir::Model export_ir_consuming(torch::jit::Module& module, const std::vector<c10::IValue>& args,
                              const ExportOptions& options, const Registry& registry, const ExportHooks& hooks) {
  return run_export(module, args, options, registry, hooks, /*consume=*/true);
}

ir::Model export_program_ir(const std::string& pt2_path, const ExportOptions& options, const Registry& registry) {
  validate(with_default_opset(options, default_program_opset()));  // (before the program is read)
  if (options.progress) options.progress("loading", 0.0);
  auto t0 = std::chrono::steady_clock::now();
  const frontend::pt2::Program program = frontend::pt2::read_program(pt2_path);
  note_stage("read_program", t0);
  return export_program_ir(program, options, registry);
}

ir::Model export_program_ir(const frontend::pt2::Program& program, const ExportOptions& requested,
                            const Registry& registry) {
  const ExportOptions options = with_default_opset(requested, default_program_opset());
  validate(options);
  StageTimer timer;
  if (options.progress) options.progress("converting", 0.0);
  ir::Model model = convert::convert_program(program, registry, options);
  timer.done("convert");
  onnx_passes::PassContext pass_ctx{options};
  pass_ctx.keep_unused_inputs = true;
  run_onnx_passes(model, pass_ctx, timer);
  model.producer_version = version();
  if (options.verbose) ir::print_model(options.verbose_stream ? *options.verbose_stream : std::cout, model);
  return model;
}

namespace {

void run_onnx_passes(ir::Model& model, const onnx_passes::PassContext& ctx, StageTimer& timer) {
#ifndef NDEBUG
  onnx_passes::lint(model, "conversion");
#endif
  const std::vector<std::string> names = onnx_passes::output_names(model);
  const size_t n_passes = sizeof(kOnnxPasses) / sizeof(kOnnxPasses[0]);
  for (size_t i = 0; i < n_passes; ++i) {
    const NamedPass& pass = kOnnxPasses[i];
    if (pass.optimization && !ctx.options.optimize) continue;
    if (ctx.options.progress) ctx.options.progress("optimizing", double(i) / double(n_passes));
    pass.run(model, ctx);
#ifndef NDEBUG
    onnx_passes::lint(model, pass.name);
#endif
    timer.done(pass.name);
  }
  onnx_passes::restore_output_names(model, names);
  if (ctx.options.progress) ctx.options.progress("checking", 0.0);
  serialize::check_and_infer(model);
  timer.done("check_and_infer");
}

}  // namespace

}  // namespace torch2onnx
