// Losses: nll_loss, cross_entropy, binary_cross_entropy_with_logits, kl_div.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {

void register_loss(Registry& r) { (void)r; }

}  // namespace torch2onnx::symbolics
