// The torch2onnx command line tool.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "cli_args.h"
#include "frontend/load.h"
#include "symbolic/registry.h"
#include "torch2onnx/torch2onnx.h"

namespace {

using torch2onnx::Error;

int run_ops(const torch2onnx::cli::Command& c) {
  const auto& reg = torch2onnx::builtin_registry();
  for (const auto& [name, since] : reg.list()) {
    if (c.opset_given && since.front() > c.options.opset_version) continue;
    std::cout << name << "  " << since.front() << "-" << torch2onnx::kMaxOpset << "\n";
  }
  return 0;
}

int run_export(const torch2onnx::cli::Command& c) {
  std::vector<c10::IValue> args;
  if (!c.args_file.empty()) {
    args = torch2onnx::load_example_args(c.args_file);
  } else {
    for (const auto& spec : c.inputs) args.emplace_back(torch2onnx::frontend::input_from_spec(spec));
  }
  torch2onnx::export_model(torch2onnx::load_archive(c.model), args, c.output, c.options);
  return 0;
}

// T2O_TIMING=1: the process's peak RSS at exit (for bench/).
void report_peak_rss() {
  if (!std::getenv("T2O_TIMING")) return;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) std::cerr << "[t2o] peak RSS: " << std::stod(line.substr(6)) / 1024.0 << " MB\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::atexit(report_peak_rss);
  std::vector<std::string> av(argv + 1, argv + argc);
  try {
    auto c = torch2onnx::cli::parse(av);
    if (c.name == "help") {
      std::cout << torch2onnx::cli::usage_text();
      return 0;
    }
    if (c.name == "version") {
      std::cout << "torch2onnx " << torch2onnx::version() << "\n";
      return 0;
    }
    if (c.name == "ops") return run_ops(c);
    return run_export(c);
  } catch (const Error& e) {
    std::cerr << "torch2onnx: error: " << e.what() << "\n";
    return e.kind() == Error::Kind::Usage ? 2 : 1;
  } catch (const std::exception& e) {
    std::cerr << "torch2onnx: internal error: " << e.what() << "\n";
    return 1;
  }
}
