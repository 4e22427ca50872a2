#include "ir/model.h"

namespace torch2onnx::ir {

int64_t ir_version_for_opset(int64_t opset) {
  // onnx/helper.py VERSION_TABLE: (release, ir_version, ai.onnx opset)
  if (opset <= 8) return 3;
  if (opset == 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;   // opsets 15-18 (ONNX 1.10-1.13)
  if (opset <= 20) return 9;   // ONNX 1.14-1.15
  if (opset <= 22) return 10;  // ONNX 1.16-1.17
  if (opset == 23) return 11;  // ONNX 1.18
  if (opset == 24) return 12;  // ONNX 1.19
  if (opset <= 27) return 13;  // ONNX 1.20-1.22
  return 14;                   // opset 28 (ONNX 1.23)
}

}  // namespace torch2onnx::ir
