// Initializers a pass has made unused, removed in batches (one sweep of the
// initializer list per kFreeBatch bytes) while the pass runs: folding Linear
// weights into their transposes, or Conv weights into BatchNorm-scaled ones,
// then holds one extra weight at a time, not all of them.
#pragma once

#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace torch2onnx::onnx_passes {

class DeadInitializers {
 public:
  explicit DeadInitializers(ir::Graph& g) : g_(g) {}
  ~DeadInitializers() { flush(); }
  void consider(ir::Value* v) {
    if (!v || v->graph() != &g_ || v->has_uses() || !v->initializer() || v->is_graph_input()) return;
    if (!seen_.insert(v).second) return;
    pending_.push_back(v);
    bytes_ += v->initializer()->nbytes();
    if (bytes_ >= kFreeBatch) flush();
  }
  void flush() {
    if (!pending_.empty()) g_.remove_initializers(pending_);
    pending_.clear();
    seen_.clear();
    bytes_ = 0;
  }

 private:
  static constexpr size_t kFreeBatch = size_t{4} << 20;
  ir::Graph& g_;
  std::vector<ir::Value*> pending_;
  std::unordered_set<const ir::Value*> seen_;
  size_t bytes_ = 0;
};

}  // namespace torch2onnx::onnx_passes
