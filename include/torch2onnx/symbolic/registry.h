// The registry of symbolic functions: for each PyTorch operator
// ("aten::relu"), declarations each valid from an opset on. Dispatch picks the
// highest declaration not above the target opset.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "torch2onnx/symbolic/context.h"

namespace torch2onnx {

using SymbolicFn = std::function<void(SymbolicContext&)>;

class Registry {
 public:
  Registry() = default;
  // A registry whose lookups fall back to `base` (user symbolics over the built-ins).
  explicit Registry(const Registry* base) : base_(base) {}

  // Declares `fn` for `op` from opset `since` on (replacing an earlier
  // declaration with the same `since`).
  void add(const std::string& op, int since, SymbolicFn fn);
  // Removes the declaration of `op` at `since`; true if there was one.
  bool remove(const std::string& op, int since);
  // The declaration in force for `op` at `opset`, or nullptr. Own
  // declarations win over the base's at and above their opset.
  const SymbolicFn* find(const std::string& op, int opset) const;
  // The opset of the declaration in force (for tests and listings).
  std::optional<int> resolved_since(const std::string& op, int opset) const;
  // The lowest opset at which `op` has a declaration.
  std::optional<int> first_opset(const std::string& op) const;
  bool contains(const std::string& op) const { return table_.count(op) != 0; }
  // Every operator with its declared opsets, sorted by name.
  std::vector<std::pair<std::string, std::vector<int>>> list() const;

  // Complex tensors (ir::DType::Complex64/128) travel through the ONNX graph
  // as real tensors with a trailing (real, imag) axis of 2, ONNX DFT's layout.
  // A node with any complex tensor argument or output converts with a
  // declaration of this second table, never with the real one (whose
  // symbolic would misread the pair axis): see convert::resolve.
  void add_complex(const std::string& op, int since, SymbolicFn fn);
  // The complex declaration in force for `op` at `opset`, or nullptr.
  const SymbolicFn* find_complex(const std::string& op, int opset) const;

  // The family (symbolics/<family>.cpp) declarations are attributed to.
  void set_family(std::string family) { family_ = std::move(family); }
  std::string family_of(const std::string& op) const;

 private:
  std::map<std::string, std::map<int, SymbolicFn>> table_;
  std::map<std::string, std::map<int, SymbolicFn>> complex_table_;  // add_complex
  std::map<std::string, std::string> families_;
  std::map<std::string, std::string> complex_families_;  // of operators declared by add_complex
  std::string family_;
  const Registry* base_ = nullptr;
};

// The built-in symbolics (registered once, on first use).
const Registry& builtin_registry();

// Symbolics registered by users (C++ register_symbolic, Python
// register_custom_op_symbolic), over the built-ins: what exports use.
Registry& user_registry();

// Opsets torch2onnx exports to: 9 to max_opset(), what the build's ONNX
// library defines (src/symbolic/opsets.cpp, the one file the build tells;
// changing it recompiles that file alone).
constexpr int kMinOpset = 9;
int max_opset();
// torch.onnx's defaults: 17 for TorchScript (dynamo=False), 20 for
// torch.export programs (dynamo=True), within what the build exports.
constexpr int kDefaultOpset = 17;
int default_program_opset();

}  // namespace torch2onnx
