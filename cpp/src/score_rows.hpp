// The rows of one head as the score uses them, shared by score_breakdown (breakdown.cpp) and
// qk_map (geometry.cpp) so both show the very rows the kernels multiply (attn/variants.hpp):
// qkNorm, then RoPE at positions i' = i + (T_k − T_q) for queries and j for keys, then
// φ = elu + 1 under the linear normalizer (vgrad::transform_row, in the call's precision T).
#pragma once

#include <cstddef>
#include <vector>

#include "attn/types.hpp"
#include "attn/variant_grad.hpp"
#include "attn/variants.hpp"

namespace attn::detail {

class ScoreRows {
 public:
  // opts must have passed validate() (kv_heads divides heads, dk even under RoPE).
  explicit ScoreRows(const AttentionOptions& opts)
      : s_(opts.shape),
        v_(opts.variant),
        theta_(v_.position == Position::kRope ? vgrad::rope_thetas(s_.dk, v_.rope_base)
                                              : std::vector<double>{}) {}

  // The K/V head query head `head` reads (GQA: heads / kv_heads query heads share one).
  std::size_t kv_head(std::size_t head) const { return head / (s_.heads / s_.kv_heads); }

  // Query i's position on the key axis, i' = i + (T_k − T_q): the masks' alignment.
  double query_pos(std::size_t i) const {
    return static_cast<double>(i) + static_cast<double>(s_.tk) - static_cast<double>(s_.tq);
  }

  // out (d_k) = query i of head `head` of q (heads, T_q, d_k), as the score uses it.
  template <class T>
  void query(const T* q, std::size_t head, std::size_t i, T* out) const {
    transform(q + (head * s_.tq + i) * s_.dk, query_pos(i), out);
  }

  // out (d_k) = key j of K/V head `kvh` of k (kv_heads, T_k, d_k), as the score uses it.
  template <class T>
  void key(const T* k, std::size_t kvh, std::size_t j, T* out) const {
    transform(k + (kvh * s_.tk + j) * s_.dk, static_cast<double>(j), out);
  }

 private:
  template <class T>
  void transform(const T* row, double pos, T* out) const {
    for (std::size_t c = 0; c < s_.dk; ++c) out[c] = row[c];
    vgrad::transform_row(out, s_.dk, pos, v_, theta_.empty() ? nullptr : theta_.data());
  }

  Shape s_;
  Variant v_;
  std::vector<double> theta_;  // (d_k / 2) RoPE's frequencies, empty without RoPE
};

}  // namespace attn::detail
