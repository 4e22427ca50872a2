// Quantization: quantize_per_tensor, dequantize, fake_quantize.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {

void register_quantized(Registry& r) { (void)r; }

}  // namespace torch2onnx::symbolics
