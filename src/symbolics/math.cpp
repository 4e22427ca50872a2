// Miscellaneous math: addcmul, lerp, cross, outer, tensordot, einsum, distances, isinf/isfinite/nan_to_num, aminmax, conj.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {

void register_math(Registry& r) { (void)r; }

}  // namespace torch2onnx::symbolics
