#include "convert/unsupported.h"

#include <algorithm>
#include <sstream>

namespace torch2onnx::convert {

void UnsupportedCollector::add(const std::string& op, const std::string& where, std::optional<int> lowest_opset) {
  UnsupportedOperator& u = found_[op];
  u.op = op;
  ++u.count;
  if (std::find(u.locations.begin(), u.locations.end(), where) == u.locations.end()) u.locations.push_back(where);
  if (lowest_opset) u.lowest_opset = lowest_opset;
}

std::vector<UnsupportedOperator> UnsupportedCollector::take() {
  std::vector<UnsupportedOperator> out;
  for (auto& [k, u] : found_) out.push_back(std::move(u));
  found_.clear();
  return out;
}

std::string unsupported_message(const std::vector<UnsupportedOperator>& ops, int opset) {
  std::ostringstream m;
  const auto& first = ops.front();
  m << "Unsupported operator " << first.op << " at opset " << opset << ", in " << first.locations.front() << ". ";
  int64_t total = 0;
  for (const auto& u : ops) total += u.count;
  m << "The model has " << ops.size() << " operator" << (ops.size() == 1 ? "" : "s") << " (" << total
    << " occurrence" << (total == 1 ? "" : "s") << ") that torch2onnx cannot convert at opset " << opset << ":";
  for (const auto& u : ops) {
    m << "\n  " << u.op << " x" << u.count;
    if (u.lowest_opset) m << " (supported from opset " << *u.lowest_opset << ")";
    m << ": ";
    for (size_t i = 0; i < u.locations.size() && i < 5; ++i) m << (i ? "; " : "") << u.locations[i];
    if (u.locations.size() > 5) m << "; and " << (u.locations.size() - 5) << " more places";
  }
  return m.str();
}

void throw_if_unsupported(std::vector<UnsupportedOperator> ops, int opset) {
  if (ops.empty()) return;
  const std::string message = unsupported_message(ops, opset);
  throw UnsupportedOperatorError(message, std::move(ops));
}

}  // namespace torch2onnx::convert
