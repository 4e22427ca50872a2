// The exported graph as text, in the style torch.onnx prints with verbose=True:
// every value with dtype and shape, every node with its attributes and the
// module scope it came from.
#pragma once

#include <ostream>
#include <string>

#include "ir/model.h"

namespace torch2onnx::ir {

void print_model(std::ostream& out, const Model& model);
std::string type_string(const ValueType& t);  // "Float(1, 3, 224, 224)"

}  // namespace torch2onnx::ir
