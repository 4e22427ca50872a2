#include "torch2onnx/warnings.h"

#include <iostream>
#include <utility>

namespace torch2onnx {
namespace {
thread_local WarningCollector* active = nullptr;
}  // namespace

void warn(const std::string& message) {
  if (active) {
    active->messages_.push_back(message);
    return;
  }
  std::cerr << "torch2onnx: warning: " << message << "\n";
}

WarningCollector::WarningCollector() : outer_(active) { active = this; }

WarningCollector::~WarningCollector() {
  active = outer_;
  // (messages not taken, as when the export failed, are not lost)
  for (const std::string& m : messages_) warn(m);
}

std::vector<std::string> WarningCollector::take() { return std::exchange(messages_, {}); }

}  // namespace torch2onnx
