// Scaled dot-product attention: the naive kernel, which materialises the weights.
//
//   scores  = scale * Q K^T           (H, T_q, T_k)
//   weights = softmax(mask(scores))   row by row
//   output  = weights V               (H, T_q, d_v)
//
// The vocabulary (Shape, AttentionOptions, AttentionResult, ...) is attn/types.hpp, the checks
// and memory estimates attn/validate.hpp; both come with this header.
#pragma once

#include <cstddef>
#include <xtensor/xtensor.hpp>

#include "attn/status.hpp"
#include "attn/types.hpp"
#include "attn/validate.hpp"

namespace attn {

// q: (H, T_q, d_k), k: (H_kv, T_k, d_k), v: (H_kv, T_k, d_v), all row-major.
// The lengths are the element counts of the buffers (checked against the shape).
template <class T>
Status attention(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                 std::size_t v_len, const AttentionOptions& opts, AttentionResult<T>* out);

// The same with the algorithm named: Kernel::kNaive is the call above, Kernel::kTiled is
// attention_tiled (attn/tiled.hpp).
template <class T>
Status attention(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                 std::size_t v_len, const AttentionOptions& opts, Kernel kernel,
                 AttentionResult<T>* out);

// xtensor convenience form; shapes are read from the tensors, other fields from opts.
template <class T>
Status attention(const xt::xtensor<T, 3>& q, const xt::xtensor<T, 3>& k, const xt::xtensor<T, 3>& v,
                 AttentionOptions opts, AttentionResult<T>* out);

}  // namespace attn
