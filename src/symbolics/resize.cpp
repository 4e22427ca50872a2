// Resizing: upsample_* (nearest, linear, bilinear, bicubic, trilinear), interpolate, grid_sampler.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {

void register_resize(Registry& r) { (void)r; }

}  // namespace torch2onnx::symbolics
