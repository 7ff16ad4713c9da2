// attn_train_text's checkpoints: a deterministic .npz writer (numpy.savez's format, float32
// or float16 arrays, fixed timestamps and order) and the model's parameters as named arrays.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attn/tr/model.hpp"

namespace train_text {

struct NamedArray {
  std::string name;
  std::vector<std::size_t> shape;
  const float* data;
};

// half: the arrays are written as little-endian IEEE binary16 ('<f2'), each value rounded to
// the nearest (ties to even; attn::round_to_half) -- false if one overflows binary16's range.
// A zip of stored (uncompressed) entries "<name>.npy", in the given order, every timestamp
// 1980-01-01 00:00 (the DOS epoch): the bytes depend on the arrays alone. Sizes < 4 GiB (false
// for larger).
bool npz_bytes(const std::vector<NamedArray>& arrays, bool half, std::string* out);

// The model's parameters as named arrays (tr.weights()'s parts; offsets from ParamLayout):
// embed, pos, layers.{l}.wq/wk/wv/wo, ln_gain, ln_bias, unembed. They point into w.
std::vector<NamedArray> named_params(const attn::tr::ModelConfig& m, const attn::tr::ParamLayout& P,
                                     const float* w);

}  // namespace train_text
