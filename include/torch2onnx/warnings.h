// Warnings of an export: what converts but may not do what the caller
// expects (a run-time rule kept at the example's answer, a dynamic_axes key
// that names nothing). By default each is printed to stderr as
// "torch2onnx: warning: <message>"; while a WarningCollector lives on the
// exporting thread they go to it instead (the Python package turns them into
// Python warnings, as torch.onnx's are, so callers filter or catch them).
#pragma once

#include <string>
#include <vector>

namespace torch2onnx {

void warn(const std::string& message);

class WarningCollector {
 public:
  WarningCollector();
  ~WarningCollector();
  WarningCollector(const WarningCollector&) = delete;
  WarningCollector& operator=(const WarningCollector&) = delete;
  // The messages so far, in order; the collector starts empty again.
  std::vector<std::string> take();

 private:
  friend void warn(const std::string& message);
  std::vector<std::string> messages_;
  WarningCollector* outer_;
};

}  // namespace torch2onnx
