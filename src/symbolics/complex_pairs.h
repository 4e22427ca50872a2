// Private to the complex-tensor families (complex.cpp, complex_shape.cpp,
// fft.cpp, stft.cpp): complex tensors travel as real pair tensors with a
// trailing (real, imag) axis of 2, ONNX DFT's layout. These helpers are
// defined in complex.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "torch2onnx/symbolic/context.h"

namespace torch2onnx::symbolics::cplx {

struct Cx {
  ir::Value* re = nullptr;
  ir::Value* im = nullptr;  // nullptr: a real value
};
bool is_complex(ir::DType t);
// The real dtype of a complex dtype (floats stay, others become float).
ir::DType real_of(ir::DType t);
ir::DType out_real(SymbolicContext& ctx, size_t k);
// The real dtype of the node's complex values: its complex output's, else its
// first complex argument's (float if none).
ir::DType rt_of(SymbolicContext& ctx);
// The pair tensor of complex argument i (constants made pairs), of real dtype rt.
ir::Value* pair_in(SymbolicContext& ctx, size_t i, ir::DType rt);
// Component k (0 real, 1 imag) of a pair tensor of `rank` complex axes.
// (Ranks are passed so that axes are never negative: opsets 9 and 10 refuse those.)
ir::Value* part(SymbolicContext& ctx, ir::Value* pair, int64_t k, int64_t rank);
Cx split(SymbolicContext& ctx, ir::Value* pair, int64_t rank);
// Argument i as parts (im nullptr for a real tensor or number).
Cx parts(SymbolicContext& ctx, size_t i, ir::DType rt);
ir::Value* zeros_like(SymbolicContext& ctx, ir::Value* v, ir::DType rt);
// The pair tensor of re + i im (im nullptr: 0), re and im broadcast to `rank` axes.
ir::Value* join(SymbolicContext& ctx, ir::Value* re, ir::Value* im, ir::DType rt, int64_t rank);
ir::Value* conj(SymbolicContext& ctx, ir::Value* pair, ir::DType rt);

}  // namespace torch2onnx::symbolics::cplx
