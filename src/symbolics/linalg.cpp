// Linear algebra: det, logdet, matrix and vector norms.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {

void register_linalg(Registry& r) { (void)r; }

}  // namespace torch2onnx::symbolics
