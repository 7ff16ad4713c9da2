// Exact tiled attention (online softmax, FlashAttention-style).
//
// Same maths and options as attn::attention, but the (T_q, T_k) matrix is never
// built: keys are visited in tiles while each query row keeps a running maximum m,
// a running sum l of exp(s - m) and the unnormalised output; when a new tile
// raises the maximum the old partial sums are rescaled by exp(m_old - m_new).
// Working memory beyond inputs and outputs: O(tile * (tile + d_k + d_v)) per call
// (attn/tile_sizes.hpp; tiled_workspace_bytes in attn/validate.hpp).
#pragma once

#include <cstddef>

#include "attn/attention.hpp"  // the vocabulary and attention(), for callers of both kernels
#include "attn/tile_sizes.hpp"

namespace attn {

// Fills out->output, out->lse, out->entropy and out->diag; out->weights stays empty.
template <class T>
Status attention_tiled(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                       std::size_t v_len, const AttentionOptions& opts, AttentionResult<T>* out);

}  // namespace attn
