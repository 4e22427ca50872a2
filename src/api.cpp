// The public C++ API (include/torch2onnx/torch2onnx.h) on top of the pipeline.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "api_internal.h"
#include "convert/torchscript.h"
#include "frontend/load.h"
#include "frontend/pt2/program.h"
#include "ir/printer.h"
#include "pipeline.h"
#include "process_memory.h"
#include "serialize/to_proto.h"
#include "serialize/graph_picture.h"
#include "serialize/report.h"
#include "serialize/writer.h"
#include "torch2onnx/torch2onnx.h"

namespace torch2onnx {
namespace {

// Exports restore the module's training flags afterwards, as torch.onnx does.
class TrainingGuard {
 public:
  explicit TrainingGuard(const torch::jit::Module& m) : module_(m) { save(module_); }
  ~TrainingGuard() {
    for (auto& [obj, training] : saved_) torch::jit::Module(obj).train(training);
  }

 private:
  void save(const torch::jit::Module& m) {
    saved_.emplace_back(m._ivalue(), m.is_training());
  }
  torch::jit::Module module_;
  std::vector<std::pair<c10::intrusive_ptr<c10::ivalue::Object>, bool>> saved_;
};

serialize::WriteOptions write_options(const ExportOptions& o) {
  serialize::WriteOptions w;
  w.keep_initializers_as_inputs = o.keep_initializers_as_inputs;
  w.keep_doc_strings = o.keep_doc_strings;
  w.external_data = o.external_data;
  return w;
}

double weights_gib(const ir::Model& model) {
  return static_cast<double>(serialize::initializer_bytes(model)) / (1024.0 * 1024.0 * 1024.0);
}

}  // namespace

const char* version() { return TORCH2ONNX_VERSION; }

namespace api {

namespace {

// The report of one export (options.report), collected while it lives:
// the stages as they finish; written once the model is out (done), or with
// what stopped the export (run).
class Report {
 public:
  Report(const ExportOptions& options, std::string source, std::string output)
      : options_(options), stages_(options.report.empty() ? nullptr : &in_.stages) {
    in_.source = std::move(source);
    in_.output = std::move(output);
  }
  bool active() const { return !options_.report.empty(); }
  serialize::ReportInputs& inputs() { return in_; }

  void done(const ir::Model& model) {
    if (!active()) return;
    in_.model = &model;
    serialize::write_report(in_, options_);
  }

  // Runs the export; if it fails, the report says why (and which operators
  // could not be converted), then the error goes on.
  template <typename F>
  auto run(F&& export_fn) -> decltype(export_fn()) {
    try {
      return export_fn();
    } catch (const UnsupportedOperatorError& e) {
      in_.unsupported = e.operators();
      failed(e.what());
      throw;
    } catch (const Error& e) {
      failed(e.what());
      throw;
    }
  }

 private:
  void failed(const std::string& error) {
    if (!active()) return;
    in_.model = nullptr;
    in_.error = error;
    try {
      serialize::write_report(in_, options_);
    } catch (const Error&) {  // (the export's own error is the one to report)
    }
  }

  const ExportOptions& options_;
  serialize::ReportInputs in_;
  ReportStages stages_;
};

std::string class_name(const torch::jit::Module& m) {
  return m.type()->name() ? m.type()->name()->name() : std::string("module");
}

// The graph picture (options.graph_picture; for a report without one, FILE.svg
// next to the report, when Graphviz is there).
void write_picture(const ir::Model& model, const ExportOptions& options, Report* report) {
  std::string path = options.graph_picture;
  const bool for_report = path.empty() && report && report->active();
  if (for_report) path = options.report.substr(0, options.report.rfind('.')) + ".svg";
  if (path.empty()) return;
  auto t0 = std::chrono::steady_clock::now();
  try {
    serialize::write_graph_picture(model, path);
  } catch (const Error& e) {
    if (!for_report) throw;
    report->inputs().graph_note = std::string("No picture: ") + e.what() + ".";
    return;
  }
  note_stage("graph picture", t0);
  if (report) report->inputs().graph_picture = path;
}

// The model serialized by `serialize(write options)` into memory or a
// stream, with its picture and report; an Io error when the weights need
// external data.
template <typename Serialize>
void serialize_in_one_piece(const ir::Model& model, const ExportOptions& options, Report& report,
                            Serialize&& serialize) {
  if (options.external_data || serialize::exceeds_protobuf_limit(model))
    throw Error(Error::Kind::Io, "the model's weights (" + std::to_string(weights_gib(model)) +
                                     " GiB) go to external data, which needs a file: export to a path, not to "
                                     "memory or a file-like object");
  write_picture(model, options, &report);
  auto t0 = std::chrono::steady_clock::now();
  serialize(write_options(options));
  note_stage("serialize", t0);
  report.done(model);
}

std::string to_bytes(const ir::Model& model, const ExportOptions& options, Report& report) {
  std::string bytes;
  serialize_in_one_piece(model, options, report,
                         [&](const serialize::WriteOptions& w) { bytes = serialize::serialize_model(model, w); });
  return bytes;
}

void write_file(ir::Model& model, const std::string& path, const ExportOptions& options,
                const std::function<void()>& before_commit = {}, Report* report = nullptr,
                std::optional<size_t> external_threshold = std::nullopt) {
  write_picture(model, options, report);  // (first: a failure leaves no model behind either)
  auto t0 = std::chrono::steady_clock::now();
  serialize::WriteOptions w = write_options(options);
  if (external_threshold) w.external_threshold = *external_threshold;
  w.before_commit = before_commit;
  if (options.progress) {
    options.progress("writing", 0.0);
    w.progress = [&options](double f) { options.progress("writing", f); };
  }
  if (!w.external_data && serialize::exceeds_protobuf_limit(model)) {
    std::cerr << "torch2onnx: note: the weights (" << weights_gib(model)
              << " GiB) exceed protobuf's 2 GiB limit for one file; writing them to '" << path
              << ".data' next to the model (ONNX external data)\n";
    w.external_data = true;
  }
  serialize::write_model(model, path, w);
  note_stage("write", t0);
  if (report) report->done(model);
}

}  // namespace

void export_to_file(const torch::jit::Module& module, const std::vector<c10::IValue>& args, const std::string& path,
                    const ExportOptions& options, const ExportHooks& hooks) {
  TrainingGuard guard(module);
  Report report(options, class_name(module), path);
  report.run([&] {
    ir::Model model = export_ir(module, args, options, user_registry(), hooks);
    write_file(model, path, options, {}, &report);
  });
}

namespace {

void export_consuming(torch::jit::Module&& module, const std::vector<c10::IValue>& args, const std::string& path,
                      const ExportOptions& options, const ExportHooks& hooks,
                      const std::function<void()>& before_commit, Report& report) {
  report.run([&] {
    ir::Model model = export_ir_consuming(module, args, options, user_registry(), hooks);
    write_file(model, path, options, before_commit, &report);
  });
}

}  // namespace

void export_to_file(torch::jit::Module&& module, const std::vector<c10::IValue>& args, const std::string& path,
                    const ExportOptions& options, const ExportHooks& hooks,
                    const std::function<void()>& before_commit) {
  Report report(options, class_name(module), path);
  export_consuming(std::move(module), args, path, options, hooks, before_commit, report);
}

torch::jit::Module module_from_graph(std::shared_ptr<torch::jit::Graph> graph, const std::string& class_name) {
  auto cu = std::make_shared<torch::jit::CompilationUnit>();
  auto cls = c10::ClassType::create("__torch__.torch2onnx." + class_name, cu, /*is_module=*/true);
  cu->register_type(cls);
  torch::jit::Module m(cu, cls);
  graph->insertInput(0, "self")->setType(cls);
  cls->addMethod(cu->create_function(c10::QualifiedName(*cls->name(), "forward"), std::move(graph)));
  return m;
}

std::string export_to_bytes(const torch::jit::Module& module, const std::vector<c10::IValue>& args,
                            const ExportOptions& options, const ExportHooks& hooks) {
  TrainingGuard guard(module);
  Report report(options, class_name(module), "");
  return report.run([&] {
    ir::Model model = export_ir(module, args, options, user_registry(), hooks);
    return to_bytes(model, options, report);
  });
}

void export_to_sink(const torch::jit::Module& module, const std::vector<c10::IValue>& args, const ExportOptions& options,
                    const ExportHooks& hooks, const std::function<void(const uint8_t*, size_t)>& sink) {
  TrainingGuard guard(module);
  Report report(options, class_name(module), "");
  report.run([&] {
    ir::Model model = export_ir(module, args, options, user_registry(), hooks);
    serialize_in_one_piece(model, options, report,
                           [&](const serialize::WriteOptions& w) { serialize::serialize_model_to(model, w, sink); });
  });
}

std::string export_to_pretty_string(const torch::jit::Module& module, const std::vector<c10::IValue>& args,
                                    const ExportOptions& options, const ExportHooks& hooks) {
  TrainingGuard guard(module);
  ExportOptions quiet = options;
  quiet.verbose = false;
  ir::Model model = export_ir(module, args, quiet, user_registry(), hooks);
  std::ostringstream out;
  ir::print_model(out, model);
  return out.str();
}

std::vector<UnsupportedOperator> unconvertible_ops(const torch::jit::Module& module,
                                                   const std::vector<c10::IValue>& args, int opset,
                                                   const ExportHooks& hooks,
                                                   std::shared_ptr<torch::jit::Graph>* graph) {
  if (opset < kMinOpset || opset > max_opset())
    throw Error(Error::Kind::Usage, "opset " + std::to_string(opset) + " is not supported: torch2onnx exports opsets " +
                                        std::to_string(kMinOpset) + " to " + std::to_string(max_opset()));
  TrainingGuard guard(module);
  ExportOptions options;
  options.opset_version = opset;
  torch_side::TorchGraph tg = trace_to_torch_graph(module, args, options, hooks);
  if (graph) *graph = tg.graph;
  return convert::find_unsupported(tg, user_registry(), opset);
}

void export_program_to_file(const std::string& program, const std::string& path, const ExportOptions& options) {
  Report report(options, program, path);
  report.run([&] {
    ir::Model model = export_program_ir(program, options, user_registry());
    write_file(model, path, options, {}, &report);
  });
}

void export_program_to_file(const frontend::pt2::Program& program, const std::string& path,
                            const ExportOptions& options) {
  Report report(options, program.archive_path, path);
  report.run([&] {
    ir::Model model = export_program_ir(program, options, user_registry());
    write_file(model, path, options, {}, &report);
  });
}

std::string export_program_to_bytes(const std::string& program, const ExportOptions& options) {
  Report report(options, program, "");
  return report.run([&] {
    ir::Model model = export_program_ir(program, options, user_registry());
    return to_bytes(model, options, report);
  });
}

std::string export_program_to_bytes(const frontend::pt2::Program& program, const ExportOptions& options) {
  Report report(options, program.archive_path, "");
  return report.run([&] {
    ir::Model model = export_program_ir(program, options, user_registry());
    return to_bytes(model, options, report);
  });
}

ir::Model convert_program(const frontend::pt2::Program& program, const ExportOptions& options) {
  if (!options.report.empty() || !options.graph_picture.empty())
    throw Error(Error::Kind::Internal, "convert_program: a report or a picture is written with the model");
  return export_program_ir(program, options, user_registry());
}

std::string model_to_bytes(const ir::Model& model, const ExportOptions& options) {
  Report report(options, "", "");
  return to_bytes(model, options, report);
}

void model_to_file(ir::Model& model, const std::string& path, const ExportOptions& options,
                   std::optional<size_t> external_threshold) {
  write_file(model, path, options, {}, nullptr, external_threshold);
}

}  // namespace api

void export_model(const torch::jit::Module& module, const std::vector<c10::IValue>& args, const std::string& path,
                  const ExportOptions& options) {
  api::export_to_file(module, args, path, options, {});
}

namespace {

// frontend::load_archive, timed under T2O_TIMING.
torch::jit::Module load_timed(const std::string& path, bool for_one_export,
                              std::unique_ptr<frontend::RecordCheck>* records = nullptr) {
  auto t0 = std::chrono::steady_clock::now();
  torch::jit::Module m = frontend::load_archive(path, for_one_export, records);
  note_stage("load_archive", t0);
  return m;
}

}  // namespace

void export_archive(const std::string& archive, const std::vector<c10::IValue>& args, const std::string& path,
                    const ExportOptions& options) {
  if (options.progress) options.progress("loading", 0.0);
  // The weights' CRC-32 check runs beside the export; the model keeps its
  // temporary name until it passes.
  std::unique_ptr<frontend::RecordCheck> records;
  api::Report report(options, archive, path);
  torch::jit::Module module = report.run([&] { return load_timed(archive, /*for_one_export=*/true, &records); });
  api::export_consuming(
      std::move(module), args, path, options, {},
      [&records] {
        auto t0 = std::chrono::steady_clock::now();
        records->wait();
        note_stage("record CRC wait", t0);
      },
      report);
}

void export_program(const std::string& program, const std::string& path, const ExportOptions& options) {
  api::export_program_to_file(program, path, options);
}

onnx::ModelProto export_to_model_proto(const torch::jit::Module& module, const std::vector<c10::IValue>& args,
                                       const ExportOptions& options) {
  TrainingGuard guard(module);
  ir::Model model = export_ir(module, args, options);
  if (serialize::exceeds_protobuf_limit(model))
    throw Error(Error::Kind::Io, "the model's weights (" + std::to_string(weights_gib(model)) +
                                     " GiB) exceed protobuf's 2 GiB limit for one ModelProto; use export_model "
                                     "with external_data instead");
  serialize::ProtoOptions po;
  po.keep_initializers_as_inputs = options.keep_initializers_as_inputs;
  po.keep_doc_strings = options.keep_doc_strings;
  onnx::ModelProto mp;
  serialize::to_model_proto(model, mp, po);
  return mp;
}

std::string export_to_pretty_string(const torch::jit::Module& module, const std::vector<c10::IValue>& args,
                                    const ExportOptions& options) {
  return api::export_to_pretty_string(module, args, options, {});
}

std::vector<UnsupportedOperator> unconvertible_ops(const torch::jit::Module& module,
                                                   const std::vector<c10::IValue>& args, int opset) {
  return api::unconvertible_ops(module, args, opset, {});
}

void register_symbolic(const std::string& op, int opset, SymbolicFn fn) {
  if (op.find("::") == std::string::npos)
    throw Error(Error::Kind::Usage, "register_symbolic: '" + op + "' must be qualified, like 'custom_ops::foo'");
  if (opset < kMinOpset || opset > max_opset())
    throw Error(Error::Kind::Usage, "register_symbolic: opset " + std::to_string(opset) + " is outside " +
                                        std::to_string(kMinOpset) + ".." + std::to_string(max_opset()));
  user_registry().add(op, opset, std::move(fn));
}

bool unregister_symbolic(const std::string& op, int opset) { return user_registry().remove(op, opset); }

torch::jit::Module load_archive(const std::string& path) { return load_timed(path, /*for_one_export=*/false); }

std::vector<c10::IValue> load_example_args(const std::string& path) {
  return frontend::args_from_value(frontend::load_saved_value(path));
}

}  // namespace torch2onnx
