// Rearranging elements: flip, roll, tril/triu, diagonal, unfold, im2col, as_strided, repeat_interleave, movedim, tensor_split, broadcast_tensors.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {

void register_rearrange(Registry& r) { (void)r; }

}  // namespace torch2onnx::symbolics
