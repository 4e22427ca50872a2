// Tensor creation: arange, zeros/ones/full/empty (and _like, new_*), eye, linspace, scalar_tensor, tensor, meshgrid, one_hot, hann_window.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {

void register_creation(Registry& r) { (void)r; }

}  // namespace torch2onnx::symbolics
