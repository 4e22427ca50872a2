// Matching attention written out (fuse_eager_attention.cpp): the scores
// q @ k^T [* s] under additive terms, with the heads apart ([B, H, L, S]) or
// merged into the batch ([B*H, L, S], BLOOM's baddbmm path).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "onnx_passes/sizes.h"

namespace torch2onnx::onnx_passes::eager_attention {

inline bool read_once(const ir::Value* v) { return v->uses().size() == 1 && v->uses()[0].user; }

inline bool attention_dtype(ir::DType t) { return t == ir::DType::Float || t == ir::DType::Float16; }

// The scores' inputs, unmerged: q [B, H, L, d], k [B, Hk, S, d], and the scale.
struct Scores {
  ir::Value *q = nullptr, *k = nullptr;
  double scale = 1;
  int nodes = 2;  // the nodes of the chain: the product and k's Transpose, and the scales (and merges)
};

// An additive term of the mask: a value, or Where(cond, 0, fill) for a
// Where(cond, scores, fill) with fill -inf or the dtype's lowest (scores +
// lowest is lowest for any score short of 1e31: the same value).
struct Term {
  ir::Value* value = nullptr;
  ir::Value* cond = nullptr;
  ir::Value* fill = nullptr;
  // a term of scores whose heads are merged into the batch ([B*H, L, S]): split back ([B, H, L, S]) as the
  // scores are (heads > 0), or a [1, L, S] term unsqueezed (heads < 0)
  int64_t heads = 0;
  sizes::Size batch;  // (heads > 0: the scores' B)
};

// Where the scores start under the terms: a 4-D product, or the view of a merged one.
using Base = std::optional<Scores> (*)(ir::Value*, ir::DType, std::vector<Term>&);
std::optional<Scores> plain_scores(ir::Value* x, ir::DType dt, std::vector<Term>& terms);
std::optional<Scores> merged_scores(ir::Value* x, ir::DType dt, std::vector<Term>& terms);

// The scores (`base`) under additive terms ((s + m1) + m2, Where(c, s,
// lowest)), each step read once; the terms innermost first.
std::optional<Scores> collect(ir::Value* s, ir::DType dt, std::vector<Term>& terms, Base base, int depth = 0);

// x4 [B, H, T, D] (H static) when x3 is x4 reshaped to [B*H, T, D] (one of them possibly -1), read once.
ir::Value* unmerged(ir::Value* x3);

}  // namespace torch2onnx::onnx_passes::eager_attention
