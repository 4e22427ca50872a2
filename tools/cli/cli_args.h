// Command line parsing for the torch2onnx tool (no LibTorch here).
#pragma once

#include <string>
#include <vector>

#include "torch2onnx/options.h"

namespace torch2onnx::cli {

struct Command {
  std::string name;                 // export | ops | check | help | version
  std::string model;                // archive path
  std::string output;               // -o
  std::string args_file;            // --args
  std::vector<std::string> inputs;  // --input (repeated)
  bool opset_given = false;
  bool markdown = false;             // ops --markdown
  std::string onnx;                  // verify MODEL OUT.onnx: the ONNX model
  bool verify = false;               // export --verify
  double rtol = 1e-4, atol = 0.0;    // verify tolerances
  ExportOptions options;
};

// Throws Error(Usage) with a message naming the problem.
Command parse(const std::vector<std::string>& argv);

const char* usage_text();

// `check MODEL.pt2` (check_pt2.cpp): the program's inputs, outputs and
// operators; exit status 1 when an operator has no symbolic.
int run_check_pt2(const Command& c);

}  // namespace torch2onnx::cli
