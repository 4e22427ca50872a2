// Every family of built-in symbolic functions. Each file in symbolics/
// registers one family; register_all calls them all.
#pragma once

#include "symbolic/registry.h"

namespace torch2onnx::symbolics {

void register_activation(Registry& r);
void register_arithmetic(Registry& r);
void register_comparison(Registry& r);
void register_conv(Registry& r);
void register_dropout(Registry& r);
void register_embedding(Registry& r);
void register_join_split(Registry& r);
void register_linear(Registry& r);
void register_normalization(Registry& r);
void register_pooling(Registry& r);
void register_reduction(Registry& r);
void register_rnn(Registry& r);
void register_scalars(Registry& r);
void register_shape(Registry& r);
void register_slicing(Registry& r);
void register_softmax(Registry& r);
void register_unary(Registry& r);

inline void register_all(Registry& r) {
  register_activation(r);
  register_arithmetic(r);
  register_comparison(r);
  register_conv(r);
  register_dropout(r);
  register_embedding(r);
  register_join_split(r);
  register_linear(r);
  register_normalization(r);
  register_pooling(r);
  register_reduction(r);
  register_rnn(r);
  register_scalars(r);
  register_shape(r);
  register_slicing(r);
  register_softmax(r);
  register_unary(r);
}

}  // namespace torch2onnx::symbolics
