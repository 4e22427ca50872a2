// Private to fft.cpp and stft.cpp: the one-dimensional transforms both build
// on (defined in fft.cpp). Complex values are pair tensors (complex_pairs.h).
// Transforms are unnormalized ("raw"); Fx::scale is the factor still owed.
#pragma once

#include <cstdint>
#include <vector>

#include "torch2onnx/symbolic/context.h"

namespace torch2onnx::symbolics::fourier {

// Below opset 17 a product with a constant DFT matrix; ONNX DFT with an axis
// attribute from 17, with an axis input from 20.
enum class Backend { Matrix, Dft17, Dft20 };

// A transform being built: its backend, real dtype, and the scale owed
// (ONNX DFT's inverse divides by n; a raw inverse multiplies it back).
struct Fx {
  SymbolicContext& ctx;
  Backend backend;
  ir::DType rt;
  double scale = 1.0;
};

// A transform for the node's first output (its real dtype).
Fx make(SymbolicContext& ctx, Backend b);
// n zeros (a Reshape shape that keeps n leading axes).
std::vector<int64_t> zeros_shape(int64_t n);
// Raw complex DFT of pair x (`rank` complex axes) along axis of length n.
ir::Value* c2c_axis(Fx& f, ir::Value* x, int64_t axis, int64_t rank, int64_t n, bool inverse);
// Raw one-sided DFT of real x along axis (length n): n/2 + 1 frequencies.
ir::Value* r2c_axis(Fx& f, ir::Value* x, int64_t axis, int64_t rank, int64_t n);
// Raw inverse of a one-sided spectrum (pair x, n/2 + 1 long along axis) to n real values.
ir::Value* c2r_axis(Fx& f, ir::Value* x, int64_t axis, int64_t rank, int64_t n);
// v times s and the scale owed.
ir::Value* scaled(Fx& f, ir::Value* v, double s);
// Argument 0 as a value of the transform: a pair tensor (complex input or one
// that needs to be) or the real tensor.
ir::Value* input_of(Fx& f, bool want_pair);

}  // namespace torch2onnx::symbolics::fourier
