// Control flow on the ONNX side, shared by both frontends: subgraphs of
// If/Loop, their outputs, optional values.
#pragma once

#include <cstdint>
#include <memory>

#include "ir/graph.h"

namespace torch2onnx::convert {

// A new subgraph of `parent` named `name` (made unique).
std::shared_ptr<ir::Graph> new_subgraph(ir::Graph* parent, const char* name);

// Makes `g` the graph new nodes go to (`current`), for the scope's lifetime.
class GraphScope {
 public:
  GraphScope(ir::Graph*& current, ir::Graph* g) : current_(current), saved_(current) { current_ = g; }
  ~GraphScope() { current_ = saved_; }
  GraphScope(const GraphScope&) = delete;
  GraphScope& operator=(const GraphScope&) = delete;

 private:
  ir::Graph*& current_;
  ir::Graph* saved_;
};

// `v` as a subgraph output of `g`, produced inside `g` (ONNX Runtime rejects
// outer values returned directly): an Identity, or for a sequence below
// opset 14 (Identity takes none) an insert and erase.
ir::Value* local(ir::Value* v, ir::Graph* g, int opset);

// Gives `v` `rank` unknown dims where its type has no shape (rank >= 0).
void with_rank(ir::Value* v, int64_t rank);

// A 0-d bool constant.
ir::Value* const_bool(ir::Graph* g, bool b);

// An empty tensor of `dtype` (of `rank` dims where known, else 1-D; a 0-d
// one holds a zero): it gives an If/Loop output one type on every path
// where PyTorch has None, and is never read.
ir::Value* placeholder(ir::Graph* g, ir::DType dtype, int64_t rank);

// `value` as an ONNX optional(tensor) graph value, None where `present` is
// false (If over `present`; opset 16 and up, else Error(Conversion)).
ir::Value* optional_value(ir::Graph* g, ir::Value* value, ir::Value* present, int opset);

}  // namespace torch2onnx::convert
