// The message an UnsupportedOperatorError carries, shared by both frontends.
#pragma once

#include <string>
#include <vector>

#include "torch2onnx/options.h"

namespace torch2onnx::convert {

// The message listing `ops` (one paragraph, then one line per operator).
std::string unsupported_message(const std::vector<UnsupportedOperator>& ops, int opset);

}  // namespace torch2onnx::convert
