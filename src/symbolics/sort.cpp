// Sorting and selection: sort, argsort, topk, unique, bucketize.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {

void register_sort(Registry& r) { (void)r; }

}  // namespace torch2onnx::symbolics
