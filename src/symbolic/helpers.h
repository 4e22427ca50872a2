// Moved to the public headers.
#pragma once
#include "torch2onnx/symbolic/helpers.h"
