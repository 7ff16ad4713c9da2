// Gradients of scaled dot-product attention (the contract; cpp/src/backward.cpp
// implements it).
//
// Given an upstream gradient dO = dL/d(output), the backward pass returns
// dQ, dK, dV, the gradients of L = sum(output * dO):
//
//   dV_kv  = sum over the query heads h sharing kv:  P_h^T dO_h         (T_k, d_v)
//   dP     = dO V^T                                                     (T_q, T_k)
//   D_i    = rowsum(dO_i * O_i) = sum_j P_ij dP_ij   (one number per query row)
//   dS     = P * (dP - D)           softmax's Jacobian a_i (delta_ij - a_j), row by row
//   dQ     = scale * dS K;   dK_kv = scale * sum over sharing heads dS_h^T Q_h
//
// With dropout, P above is the dropped and rescaled matrix in the P.V product and
// the dS formula uses the kept mask (see dropout_keep). Forbidden cells (mask) get no
// gradient; under MaskFill::kFinite a fully masked row's scores are constants, so its
// weights (uniform) pass gradient to V only. Under kZero such a row contributes nothing;
// under kNegInf its output is NaN and so are the gradients it touches (like PyTorch).
//
// The naive kernel uses the forward's stored weights; the tiled kernel never builds a
// (T_q, T_k) buffer: it recomputes scores tile by tile from Q, K and the forward's
// per-row log-sum-exp (FlashAttention-2's backward).
//
// Variants (opts.variant): normalizer (softmax1, sigmoid with sigmoid_bias, relu, linear),
// position (rope, alibi) and qk_norm, with both kernels where the forward has both (tiled
// linear: the prefix-sum form's backward); the per-row rules are attn/variant_grad.hpp's.
// The forward-only options are errors naming their field: max_shift false ("maxShift"),
// mask_mode after ("maskMode"), precision float16 ("precision"). The default options run
// the kernels above, bit for bit as before.
#pragma once

#include <cstddef>

#include "attn/attention.hpp"  // the vocabulary (AttentionGrads, Kernel) and the forward

namespace attn {

// q: (H, T_q, d_k), k: (H_kv, T_k, d_k), v: (H_kv, T_k, d_v), d_out: (H, T_q, d_v),
// all row-major with the given element counts. `forward` may be null (the forward pass
// is run first, with `kernel`); when given it must be the result of the same call
// (naive: weights kept; tiled: output and lse). Validates everything before allocating.
// When `forward` is given, out->forward is left untouched (so `forward` may point at it);
// pass a typed null, e.g. static_cast<const AttentionResult<float>*>(nullptr), since a
// bare nullptr does not deduce T. The gradients are zero-initialised and overwritten.
// Errors: the forward's fields, "dOut" (length), "dropout", "forward" (wrong sizes),
// "maxShift", "maskMode", "precision" (forward-only options), "memory"
// (estimate_backward_bytes over opts.memory_cap).
template <class T>
Status attention_backward(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                          std::size_t v_len, const T* d_out, std::size_t d_out_len,
                          const AttentionOptions& opts, Kernel kernel,
                          const AttentionResult<T>* forward, AttentionGrads<T>* out);

// The same with the forward pass run here (out->forward holds it afterwards).
template <class T>
Status attention_backward(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                          std::size_t v_len, const T* d_out, std::size_t d_out_len,
                          const AttentionOptions& opts, Kernel kernel, AttentionGrads<T>* out) {
  return attention_backward(q, q_len, k, k_len, v, v_len, d_out, d_out_len, opts, kernel,
                            static_cast<const AttentionResult<T>*>(nullptr), out);
}

}  // namespace attn
