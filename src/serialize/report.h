// The export report (`--report FILE.md`, Python report=True): a Markdown
// page on one export, written whether it succeeded or stopped on operators
// it cannot convert.
#pragma once

#include <string>
#include <vector>

#include "ir/model.h"
#include "process_memory.h"
#include "torch2onnx/options.h"

namespace torch2onnx::serialize {

struct ReportInputs {
  std::string source;                        // what was exported ("resnet.pt", a class name)
  std::string output;                        // the .onnx path ("" when exported to memory)
  const ir::Model* model = nullptr;          // null when the export failed
  std::vector<StageRecord> stages;           // in order
  std::vector<UnsupportedOperator> unsupported;
  std::string error;                         // the error that stopped the export, if any
  std::string graph_picture;                 // the picture's path, if one was drawn
  std::string graph_note;                    // why there is none, if so
};

std::string report_markdown(const ReportInputs& in, const ExportOptions& options);
// Writes it to options.report (through a temporary file).
void write_report(const ReportInputs& in, const ExportOptions& options);

}  // namespace torch2onnx::serialize
