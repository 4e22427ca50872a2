// Building blocks shared by symbolic functions. ONNX moved several
// attributes to inputs over the opsets (Unsqueeze axes at 13, Slice at 10,
// Clip at 11, Pad at 11, ReduceSum at 13, Split at 13); these helpers are
// the one place that knows, so symbolic bodies stay free of opset checks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "torch2onnx/symbolic/context.h"

namespace torch2onnx::helpers {

// Normalizes a possibly negative dim against `rank`; throws when out of range.
int64_t normalize_dim(const SymbolicContext& ctx, int64_t dim, int64_t rank);

ir::Value* unsqueeze(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& axes);
ir::Value* squeeze(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& axes);
// A squeeze's dims that may or may not be 1 at run time (`varying`), settled
// where a .pt2 program's guards fixed the result's rank: all kept (cleared)
// or all squeezed (moved into `axes`, kept sorted); untouched otherwise.
void settle_squeeze_by_output_rank(const SymbolicContext& ctx, int64_t rank, std::vector<int64_t>& axes,
                                   std::vector<int64_t>& varying);
// ReduceSum/ReduceMean/ReduceMax/...; empty axes = all axes.
ir::Value* reduce(SymbolicContext& ctx, const std::string& op, ir::Value* v, const std::vector<int64_t>& axes,
                  bool keepdims);
// Slice with constant bounds.
ir::Value* slice(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& axes,
                 const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                 const std::vector<int64_t>& steps = {});
// Slice with 1-D int64 bound values (opset >= 10).
ir::Value* slice_dynamic(SymbolicContext& ctx, ir::Value* v, ir::Value* starts, ir::Value* ends, ir::Value* axes,
                         ir::Value* steps);
std::vector<ir::Value*> split(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& sizes, int64_t axis);
// Clip with optional bounds given as numbers of the value's dtype.
ir::Value* clip(SymbolicContext& ctx, ir::Value* v, std::optional<double> lo, std::optional<double> hi);
// Constant padding; `pads` in ONNX order (all begins, then all ends).
ir::Value* pad(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& pads, const std::string& mode,
               double value);
// x.shape[dim] as a 0-d int64 value (folded later when static).
ir::Value* dim_size(SymbolicContext& ctx, ir::Value* v, int64_t dim);
// Reshape to constant `shape` (may contain 0/-1 as in ONNX).
ir::Value* reshape(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& shape);
// PyTorch's result_type over the given arguments: tensors with dims win over
// 0-d tensors, which win over Python numbers, unless a lower-priority argument
// is of a higher category (bool < integer < floating).
ir::DType result_type(const SymbolicContext& ctx, const std::vector<size_t>& args);

// The given arguments as values of dtype `t` (constants created as `t`).
std::vector<ir::Value*> inputs_as(SymbolicContext& ctx, const std::vector<size_t>& args, ir::DType t);

// Passes input 0 through unchanged (no node).
void pass_through(SymbolicContext& ctx);

// a == b elementwise (bool). Equal takes floats only from opset 11; before,
// floats are equal when neither is below or above the other and a is not NaN.
ir::Value* equal(SymbolicContext& ctx, ir::Value* a, ir::Value* b);

// Rounds halves to even, as PyTorch and ONNX's Round (opset 11) do; before
// 11, from Floor.
ir::Value* round_half_even(SymbolicContext& ctx, ir::Value* x);

// [0, 1, ..., n-1] (int64) for a 0-d int64 value n: Range from opset 11,
// the indices of NonZero over n ones before.
ir::Value* arange(SymbolicContext& ctx, ir::Value* n);

// Layer normalization over the trailing `axes_count` axes: LayerNormalization
// from opset 17, its decomposition before. scale/bias may be nullptr.
ir::Value* layer_norm(SymbolicContext& ctx, ir::Value* x, int64_t axes_count, ir::Value* scale, ir::Value* bias,
                      double eps, ir::DType dtype, const std::vector<int64_t>& normalized_shape);

// x @ w^T + b (b may be nullptr): PyTorch's linear with a 2-D weight.
ir::Value* linear(SymbolicContext& ctx, ir::Value* x, ir::Value* w, ir::Value* b);

// Transpose by `perm`, or v itself when perm is the identity.
ir::Value* transpose(SymbolicContext& ctx, ir::Value* v, const std::vector<int64_t>& perm);

// The permutation that undoes `perm`.
std::vector<int64_t> inverse_perm(const std::vector<int64_t>& perm);

// The diagonal (offset `offset`) of dims d1 and d2 of x (static `sizes`), laid
// out for a Gather or Scatter: `perm` moves d1 and d2 last, `moved` is x so
// permuted, `flat` is `moved` with its last two dims flattened into one, and
// `positions` are the diagonal's indices along that flattened dim.
struct Diagonal {
  std::vector<int64_t> perm;
  ir::Value* moved = nullptr;
  ir::Value* flat = nullptr;
  std::vector<int64_t> positions;
};
Diagonal diagonal(SymbolicContext& ctx, ir::Value* x, const std::vector<int64_t>& sizes, int64_t offset, int64_t d1,
                  int64_t d2);

// An ONNX Loop built by a symbolic (iterative algorithms: factorizations,
// scans, series). `body` gets a context that emits into the loop body (values
// of the enclosing graph may be used directly), the iteration number (0-d
// int64) and the current carried values; it returns the carried values' next
// values (same dtypes as `carried`) followed by `num_scan` scan outputs,
// which the Loop stacks along a new axis 0. `trip_count` is a 0-d int64 value.
// Returns the final carried values followed by the stacked scan outputs.
using LoopBody = std::function<std::vector<ir::Value*>(SymbolicContext& body, ir::Value* iter,
                                                       const std::vector<ir::Value*>& carried)>;
std::vector<ir::Value*> loop(SymbolicContext& ctx, ir::Value* trip_count, const std::vector<ir::Value*>& carried,
                             const LoopBody& body, size_t num_scan = 0);

// PyTorch dims list -> ONNX axes list (normalized).
std::vector<int64_t> normalize_dims(const SymbolicContext& ctx, const std::vector<int64_t>& dims, int64_t rank);

}  // namespace torch2onnx::helpers
