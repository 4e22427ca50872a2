#include "ir/model.h"

namespace torch2onnx::ir {

int64_t ir_version_for_opset(int64_t opset) {
  // onnx/helper.py VERSION_TABLE: (release, ir_version, ai.onnx opset)
  if (opset <= 8) return 3;
  if (opset == 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  return 8;  // opsets 15-17 (ONNX 1.10-1.12)
}

}  // namespace torch2onnx::ir
