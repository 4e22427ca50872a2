// Padding: pad, constant_pad_nd, reflection/replication/circular padding.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {

void register_padding(Registry& r) { (void)r; }

}  // namespace torch2onnx::symbolics
