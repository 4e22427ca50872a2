// Moved to the public headers.
#pragma once
#include "torch2onnx/ir/tensor.h"
