// Dispatch, shared by both frontends: which symbolic converts an operator at
// an opset, running it with errors that name the operator and its place, and
// checking what it produced.
#pragma once

#include <optional>
#include <string>

#include "symbolic/registry.h"
#include "torch2onnx/symbolic/context.h"

namespace torch2onnx::convert {

// The symbolic for `kind` at `opset` (the highest declaration not above it).
// An in-place op ("aten::relu_") converts as its out-of-place form: the
// frontends make its result stand for the tensor it wrote to. The function
// returned picks, when run, the registry's complex declaration for a node on
// complex tensors (Registry::add_complex) and fails clearly without one.
const SymbolicFn* resolve(const Registry& registry, const std::string& kind, int opset);

// Whether `kind` is an in-place operator ("aten::relu_", not "aten::__and__").
bool is_in_place(const std::string& kind);

bool is_complex(ir::DType t);
// Whether `kind` (or, in place, its out-of-place form) has a complex
// declaration at `opset` (Registry::add_complex).
bool has_complex_declaration(const Registry& registry, const std::string& kind, int opset);

// The lowest opset with a symbolic for `kind` (in-place ops as above).
std::optional<int> first_opset(const Registry& registry, const std::string& kind);

// Runs `fn` on `ctx`. A SymbolicError becomes Error(Conversion) "cannot
// convert <kind> in <where>: ...", any other exception but Error an
// Error(Internal) naming the operator.
void run_symbolic(const SymbolicFn& fn, SymbolicContext& ctx, const std::string& kind, const std::string& where);

// A symbolic must produce the dtype PyTorch computes: fills in an unknown
// dtype, throws Error(Internal) on a different one.
void check_dtype(const std::string& kind, const std::string& where, ir::Value* v, const OutputInfo& info);

}  // namespace torch2onnx::convert
