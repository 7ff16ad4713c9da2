// The trainer's attention for the variants (attn/variants.hpp), forward and backward over the
// whole batch, causal, T_q = T_k = t (so i' = i). Private to the training core.
//
// Per query head bh = b*H + h (K/V head b*H_kv + h / (H / H_kv)), query i, key j <= i:
//
//   q^ = q / max(|q|_2, 1e-12)  (qkNorm; k likewise)        q' = RoPE_i(q^)  k' = RoPE_j(k^)
//   s_ij = scale * q'_i . k'_j  - m_h (i - j)  (ALiBi, m_h Press et al.'s slope of head h of H)
//   w_ij = softmax / softmax1 / sigma(s_ij + b) / max(s_ij, 0) / t        over j <= i
//   linear: a_ij = phi(q'_i) . phi(k'_j), phi = elu + 1, w_ij = a_ij / (sum_j a_ij + 1e-6)
//   O_i  = sum_j w~_ij v_j,  w~ = w * keep / (1 - p)   (dropout: attn/dropout.hpp's cells)
//
// Backward, row by row (the chain rule of each line above, in reverse):
//   dv_j += w~_ij dO_i;   dP_ij = (dO_i . v_j) keep_ij / (1 - p)
//   softmax, softmax1:  dS_ij = w_ij (dP_ij - sum_k w_ik dP_ik)   (softmax1's sink has v = 0)
//   sigmoid:            dS_ij = dP_ij w_ij (1 - w_ij)
//   relu:               dS_ij = dP_ij / t  where s_ij > 0 (0 at the kink, as autograd)
//   linear:             dA_ij = (dP_ij - sum_k w_ik dP_ik) / Z_i,  Z_i = sum_j a_ij + 1e-6
//   dq'_i += scale sum_j dS_ij k'_j,  dk'_j += scale dS_ij q'_i   (linear: through phi' = 1 or e^x)
//   RoPE^T (rotation by -angle), then qkNorm: dq = (dq^ - q^ (q^ . dq^)) / |q| (|q| > 1e-12, else
//   dq^ / 1e-12).
//
// Kernels: naive keeps the (B*H, t, t) weights (and each row's Z for linear) and its backward
// reads them; tiled keeps neither and recomputes each row's weights in the backward (O(t)
// scratch per row). The row code is shared, so both give the same bits. Every loop runs in a
// fixed order: results are deterministic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/tr/variant_cache.hpp"
#include "attn/types.hpp"
#include "attn/variants.hpp"

namespace attn::tr::varattn {

using attn::tr::VariantCache;

struct VariantCall {
  std::size_t batch = 1, heads = 1, kv_heads = 1, t = 1, dh = 1;
  double scale = 1;  // unused by linear
  Normalizer normalizer = Normalizer::kSoftmax;
  Position position = Position::kNone;
  bool qk_norm = false;
  double sigmoid_bias = 0;  // the effective bias: sigmoidBias, or -ln context
  // relu's divisor and sigmoid's default bias use the model's context length (seqLen), not the
  // call's t: a causal model must give a position the same output whatever follows it, so a
  // prefix (decoding, a shorter sequence) computes what the full sequence computes there.
  std::size_t context = 1;
  double dropout = 0;
  std::uint64_t dropout_seed = 0;
  bool keep_weights = false;  // naive kernel: weights kept for the backward and for callers
};

// The model builds a VariantCall from its config (model.cpp); VariantCache (what one layer's
// forward keeps for its backward) is attn/tr/variant_cache.hpp.

// q: (B*H, t, dh), k, v: (B*Hkv, t, dh). Writes out->output (B*H, t, dh) and, with keep_weights,
// out->weights (B*H, t, t) (the weights before dropout; keys j > i are 0).
template <class T>
void variant_forward(const VariantCall& vc, const T* q, const T* k, const T* v,
                     VariantCache<T>* cache, AttentionResult<T>* out);

// d_out: (B*H, t, dh). Writes grads->dq, dk, dv (overwriting). `fwd` is the forward's result
// (its weights are read when keep_weights). score_grad (H,), if set: mean |dL/ds_ij| per head
// over the causal cells (dL/da_ij for linear).
template <class T>
void variant_backward(const VariantCall& vc, const T* q, const T* k, const T* v, const T* d_out,
                      const VariantCache<T>& cache, const AttentionResult<T>& fwd,
                      AttentionGrads<T>* grads, double* score_grad);

}  // namespace attn::tr::varattn
