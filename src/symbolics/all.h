// Every family of built-in symbolic functions. Each file in symbolics/
// registers one family; register_all calls them all.
#pragma once

#include "symbolic/registry.h"

namespace torch2onnx::symbolics {

void register_activation(Registry& r);
void register_antialias(Registry& r);
void register_arithmetic(Registry& r);
void register_bessel(Registry& r);
void register_comparison(Registry& r);
void register_complex(Registry& r);
void register_complex_shape(Registry& r);
void register_conv(Registry& r);
void register_ctc(Registry& r);
void register_copy(Registry& r);
void register_creation(Registry& r);
void register_dropout(Registry& r);
void register_embedding(Registry& r);
void register_fft(Registry& r);
void register_fold(Registry& r);
void register_histogram(Registry& r);
void register_indexing(Registry& r);
void register_join_split(Registry& r);
void register_linalg(Registry& r);
void register_linalg_decomp(Registry& r);
void register_linalg_ldl(Registry& r);
void register_linalg_lu(Registry& r);
void register_linalg_solve(Registry& r);
void register_grouped_mm(Registry& r);
void register_onnx_ops(Registry& r);
void register_linear(Registry& r);
void register_loss(Registry& r);
void register_math(Registry& r);
void register_normalization(Registry& r);
void register_padding(Registry& r);
void register_polynomials(Registry& r);
void register_pooling(Registry& r);
void register_products(Registry& r);
void register_quantized(Registry& r);
void register_random(Registry& r);
void register_rearrange(Registry& r);
void register_reduction(Registry& r);
void register_resize(Registry& r);
void register_rnn(Registry& r);
void register_scalars(Registry& r);
void register_scan(Registry& r);
void register_sets(Registry& r);
void register_shape(Registry& r);
void register_slicing(Registry& r);
void register_softmax(Registry& r);
void register_sort(Registry& r);
void register_special(Registry& r);
void register_special_erf(Registry& r);
void register_statistics(Registry& r);
void register_stft(Registry& r);
void register_take_put(Registry& r);
void register_torchvision(Registry& r);
void register_transformer(Registry& r);
void register_unary(Registry& r);

// Symbolics one family lends another.
void nonzero_numpy(SymbolicContext& ctx);  // indexing; aten::where(condition) (comparison)

// quantized: a quantized value (ir::Quantization) as float32, and a float
// value quantized to `storage` (uint8/int8/int32) with the parameters of `q`
// (the operators on quantized tensors, convert/quantized_args).
ir::Value* dequantize_value(SymbolicContext& ctx, ir::Value* v);
ir::Value* quantize_value(SymbolicContext& ctx, ir::Value* x, const ir::Quantization& q, ir::DType storage,
                          int64_t rank);

inline void register_all(Registry& r) {
  r.set_family("activation");
  register_activation(r);
  r.set_family("antialias");
  register_antialias(r);
  r.set_family("arithmetic");
  register_arithmetic(r);
  r.set_family("bessel");
  register_bessel(r);
  r.set_family("comparison");
  register_comparison(r);
  r.set_family("complex");
  register_complex(r);
  r.set_family("complex_shape");
  register_complex_shape(r);
  r.set_family("conv");
  register_conv(r);
  r.set_family("ctc");
  register_ctc(r);
  r.set_family("copy");
  register_copy(r);
  r.set_family("creation");
  register_creation(r);
  r.set_family("dropout");
  register_dropout(r);
  r.set_family("embedding");
  register_embedding(r);
  r.set_family("fft");
  register_fft(r);
  r.set_family("fold");
  register_fold(r);
  r.set_family("histogram");
  register_histogram(r);
  r.set_family("indexing");
  register_indexing(r);
  r.set_family("join_split");
  register_join_split(r);
  r.set_family("linalg");
  register_linalg(r);
  r.set_family("linalg_decomp");
  register_linalg_decomp(r);
  r.set_family("linalg_ldl");
  register_linalg_ldl(r);
  r.set_family("linalg_lu");
  register_linalg_lu(r);
  r.set_family("linalg_solve");
  register_linalg_solve(r);
  r.set_family("linear");
  register_linear(r);
  r.set_family("grouped_mm");
  register_grouped_mm(r);
  r.set_family("onnx_ops");
  register_onnx_ops(r);
  r.set_family("loss");
  register_loss(r);
  r.set_family("math");
  register_math(r);
  r.set_family("normalization");
  register_normalization(r);
  r.set_family("padding");
  register_padding(r);
  r.set_family("polynomials");
  register_polynomials(r);
  r.set_family("pooling");
  register_pooling(r);
  r.set_family("products");
  register_products(r);
  r.set_family("quantized");
  register_quantized(r);
  r.set_family("random");
  register_random(r);
  r.set_family("rearrange");
  register_rearrange(r);
  r.set_family("reduction");
  register_reduction(r);
  r.set_family("resize");
  register_resize(r);
  r.set_family("rnn");
  register_rnn(r);
  r.set_family("scalars");
  register_scalars(r);
  r.set_family("scan");
  register_scan(r);
  r.set_family("sets");
  register_sets(r);
  r.set_family("shape");
  register_shape(r);
  r.set_family("slicing");
  register_slicing(r);
  r.set_family("softmax");
  register_softmax(r);
  r.set_family("sort");
  register_sort(r);
  r.set_family("special");
  register_special(r);
  r.set_family("special_erf");
  register_special_erf(r);
  r.set_family("statistics");
  register_statistics(r);
  r.set_family("stft");
  register_stft(r);
  r.set_family("take_put");
  register_take_put(r);
  r.set_family("torchvision");
  register_torchvision(r);
  r.set_family("transformer");
  register_transformer(r);
  r.set_family("unary");
  register_unary(r);
}

}  // namespace torch2onnx::symbolics
