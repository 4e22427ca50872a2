// Moved to the public headers.
#pragma once
#include "torch2onnx/symbolic/registry.h"
