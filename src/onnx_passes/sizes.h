// Sizes proved equal without running the model: a dim of a value, or the
// elements of a 1-D shape computation, each as a constant plus atoms (named
// dynamic dims, and dims nothing more is known of). Two Sizes that compare
// equal are equal whatever the inputs. What the opset-23 attention fusions
// check before they drop a repeat or a mask's expansion.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace torch2onnx::onnx_passes::sizes {

struct Size {
  int64_t constant = 0;
  // sorted: "p:" a named dynamic dim, "v:" a value's dim, "max0(...)" max(0, a size); "-" before one: its
  // negation (a sum cancels an atom and its negation)
  std::vector<std::string> atoms;
  bool operator==(const Size& o) const { return constant == o.constant && atoms == o.atoms; }
  bool operator!=(const Size& o) const { return !(*this == o); }
  std::optional<int64_t> value() const { return atoms.empty() ? std::optional<int64_t>(constant) : std::nullopt; }
};

Size constant_size(int64_t v);
Size sum(Size a, const Size& b);
Size negated(Size a);
std::string to_string(const Size& a);
Size max0(const Size& a);  // max(0, a)
// Whether a is never negative: a non-negative constant plus sizes (no negated term).
bool non_negative(const Size& a);
// Ops whose output 0 has their first input's shape (unary element-wise ops,
// the normalizations, RotaryEmbedding, Softmax).
bool keeps_shape(const ir::Node* n);
// Element-wise ops that broadcast their inputs multidirectionally (their
// result's dims: the operands' broadcast).
bool broadcasts(const ir::Node* n);

// The value and axis a Size names when it is exactly one dim nothing more is
// known of ("v:" atom: that value's own dim), else none.
struct ValueDim {
  ir::Value* value;
  int64_t axis;
};
std::optional<ValueDim> value_dim(const Size& a);

// Dim `axis` of x: static, named, through shape-keeping ops, Slice / Split
// off their axes, Transpose, Reshape, Concat (a sum along its axis),
// Expand and broadcasting element-wise ops; else an atom of x's own.
Size dim_of(const ir::Value* x, int64_t axis, int depth = 0);

// The elements of a 1-D int64 shape computation (Shape, Gather / Slice of it,
// Unsqueeze, Concat, constants, Add, and the Abs(s) or Where(Equal(s, -1), 1,
// s) around sizes), or none if it is something else.
std::optional<std::vector<Size>> elements(ir::Value* v, int depth = 0);

}  // namespace torch2onnx::onnx_passes::sizes
