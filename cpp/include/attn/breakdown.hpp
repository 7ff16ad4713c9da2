// Why one weight is what it is: the score of query i and key j of one head taken apart, formed
// the way the kernels form it (attn/variants.hpp), for the page's "score taken apart" panel.
// Reference: tests/oracle/gen_breakdown_fixtures.py (NumPy, every variant).
//
//   q~, k~     the rows as the score uses them: qkNorm, then RoPE at positions i' = i + (T_k − T_q)
//              and j, then φ = elu + 1 under the linear normalizer (transform_row)
//   products   q~ ⊙ k~                                         (d_k)
//   score      scale · Σ products + bias,  bias = −m_h·|i' − j| under ALiBi, else 0
//              (linear: no scale, its "score" is φ(q)·φ(k))
// and, to say why the weight is large or small, the query's score for every key formed the same
// way (row_scores) and the largest allowed one other than key j (next_best).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "attn/status.hpp"
#include "attn/types.hpp"

namespace attn {

struct BreakdownCell {
  std::size_t head = 0, query = 0, key = 0;
};

template <class T>
struct Breakdown {
  std::vector<T> q_raw, k_raw;     // (d_k) the rows as given (k: the K/V head of the query head)
  std::vector<T> q, k;             // (d_k) as the score uses them
  std::vector<T> products;         // (d_k) q ⊙ k
  double dot = 0;                  // Σ products, summed in double
  double scale = 1;                // the call's scale (1 under linear, which has none)
  double bias = 0;                 // ALiBi's −m_h·|i' − j|, else 0
  double score = 0;                // scale · dot + bias
  bool allowed = true;             // what the mask says of (query, key)
  std::vector<double> row_scores;  // (T_k) this query's score for every key, formed alike
  std::vector<std::uint8_t> row_allowed;                        // (T_k)
  double next_best = -std::numeric_limits<double>::infinity();  // best allowed score but key's
};

// q (heads, T_q, d_k), k (kv_heads, T_k, d_k); opts as for attention (shape, mask, scale,
// variant; dv and v are not read). Errors: the attention's own field errors, "cell" for a head,
// query or key out of range.
template <class T>
Status score_breakdown(const T* q, std::size_t q_len, const T* k, std::size_t k_len,
                       const AttentionOptions& opts, const BreakdownCell& cell, Breakdown<T>* out);

}  // namespace attn
