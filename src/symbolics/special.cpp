// (family being written)
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {

void register_special(Registry& r) { (void)r; }

}  // namespace torch2onnx::symbolics
