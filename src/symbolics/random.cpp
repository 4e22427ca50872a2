// Random tensors: rand/randn (and _like), normal, bernoulli, multinomial, rrelu, dirichlet/gamma samples.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {

void register_random(Registry& r) { (void)r; }

}  // namespace torch2onnx::symbolics
