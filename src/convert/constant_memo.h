// What both frontends' converters give the symbolics as their
// ArgMaterializer: one Constant per (argument, dtype, graph).
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

#include "torch2onnx/symbolic/context.h"

namespace torch2onnx::convert {

class ConstantMemo : public ArgMaterializer {
 public:
  ir::Value* lookup(const Arg& a, ir::DType dtype, ir::Graph* g) override {
    if (a.id < 0) return nullptr;
    auto it = memo_.find({a.id, static_cast<int>(dtype), g});
    return it == memo_.end() ? nullptr : it->second;
  }
  void remember(const Arg& a, ir::DType dtype, ir::Graph* g, ir::Value* v) override {
    if (a.id >= 0) memo_[{a.id, static_cast<int>(dtype), g}] = v;
  }

 private:
  std::map<std::tuple<int64_t, int, ir::Graph*>, ir::Value*> memo_;
};

}  // namespace torch2onnx::convert
