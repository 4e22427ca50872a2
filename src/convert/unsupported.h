// Unsupported-operator reporting, shared by both frontends: every operator
// without a conversion, with its count and places, in one error.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "torch2onnx/options.h"

namespace torch2onnx::convert {

// Gathers the operators a frontend's walk over its graph finds unconvertible.
class UnsupportedCollector {
 public:
  // One occurrence of `op` at `where`; `lowest_opset`: where it would convert.
  void add(const std::string& op, const std::string& where, std::optional<int> lowest_opset);
  std::vector<UnsupportedOperator> take();

 private:
  std::map<std::string, UnsupportedOperator> found_;
};

// The message listing `ops` (one paragraph, then one line per operator).
std::string unsupported_message(const std::vector<UnsupportedOperator>& ops, int opset);

// Throws UnsupportedOperatorError listing `ops`, if there are any.
void throw_if_unsupported(std::vector<UnsupportedOperator> ops, int opset);

}  // namespace torch2onnx::convert
