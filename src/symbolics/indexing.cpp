// Indexing: index, index_put, index_add/copy/fill, masked_fill/scatter/select, gather, scatter, scatter_add, take, nonzero.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {

void register_indexing(Registry& r) { (void)r; }

}  // namespace torch2onnx::symbolics
