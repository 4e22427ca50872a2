// Scalars and no-ops: PyTorch numbers are 0-d tensors on the ONNX side, so
// NumToTensor/Int/Float are (at most) casts; detach, clone, contiguous and
// friends pass their input through; to/type_as are casts.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// Result of the PyTorch op's dtype (tensor or number) from input 0.
void cast_to_output(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  ctx.out(t == ir::DType::Undefined ? ctx.in(0) : ctx.cast(ctx.in(0), t));
}

void to_int(SymbolicContext& ctx) { ctx.out(ctx.cast(ctx.in(0), ir::DType::Int64)); }
void to_float(SymbolicContext& ctx) { ctx.out(ctx.cast(ctx.in(0), ir::DType::Double)); }
void to_bool(SymbolicContext& ctx) { ctx.out(ctx.cast(ctx.in(0), ir::DType::Bool)); }

}  // namespace

void register_scalars(Registry& r) {
  r.add("prim::NumToTensor", 9, cast_to_output);
  r.add("aten::ScalarImplicit", 9, helpers::pass_through);
  r.add("aten::item", 9, helpers::pass_through);
  r.add("aten::Int", 9, to_int);
  r.add("aten::Float", 9, to_float);
  r.add("aten::Bool", 9, to_bool);
  for (const char* op : {"aten::detach", "aten::clone", "aten::contiguous", "aten::alias", "aten::lift_fresh",
                         "aten::lift", "aten::lift_fresh_copy", "aten::detach_copy", "aten::alias_copy",
                         "aten::resolve_conj", "aten::resolve_neg", "aten::positive"})
    r.add(op, 9, helpers::pass_through);
  for (const char* op : {"aten::to", "aten::type_as", "aten::_to_copy", "aten::float", "aten::double",
                         "aten::half", "aten::long", "aten::int", "aten::bool", "aten::byte", "aten::char",
                         "aten::short"})
    r.add(op, 9, cast_to_output);
}

}  // namespace torch2onnx::symbolics
