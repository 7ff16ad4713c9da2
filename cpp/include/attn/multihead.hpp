// Multi-head attention: project, split into heads, attend, merge, project out.
#pragma once

#include <cstddef>
#include <xtensor/xtensor.hpp>

#include "attn/attention.hpp"

namespace attn {

// (T, H * d) -> (H, T, d): column block h of each row becomes head h.
template <class T>
Status split_heads(const xt::xtensor<T, 2>& x, std::size_t heads, xt::xtensor<T, 3>* out);

// (H, T, d) -> (T, H * d): the inverse of split_heads.
template <class T>
xt::xtensor<T, 2> merge_heads(const xt::xtensor<T, 3>& y);

struct MhaOptions {
  std::size_t t = 1;  // query positions T_q: rows of x (self-attention: T_q = T_k = T)
  std::size_t tk =
      0;  // key/value positions: rows of x_kv (cross-attention); 0 means t (self-attention)
  std::size_t d_model = 1;   // width of x
  std::size_t heads = 1;     // H
  std::size_t kv_heads = 0;  // H_kv; 0 means H
  std::size_t dk = 0;        // per-head query/key width; 0 means d_model / H (must divide)
  std::size_t dv = 0;        // per-head value width; 0 means dk
  MaskSpec mask;
  std::optional<double> scale;
  MaskFill fill = MaskFill::kNegInf;
  bool tiled = false;          // use the tiled kernel (no weights returned)
  bool return_scores = false;  // naive only: keep the scaled, unmasked scores
  std::size_t memory_cap = kDefaultMemoryCap;
  Variant variant;  // passed through to the attention call (attn/variants.hpp)
};

template <class T>
struct MhaResult {
  // After split_heads: q (H, T_q, d_k), k (H_kv, T_k, d_k), v (H_kv, T_k, d_v); T_k = T_q = T
  // in self-attention.
  xt::xtensor<T, 3> q, k, v;
  AttentionResult<T> attn;   // per-head outputs (H, T_q, d_v), weights (H, T_q, T_k), ...
  xt::xtensor<T, 2> merged;  // (T_q, H * d_v) = merge_heads(attn.output)
  xt::xtensor<T, 2> output;  // (T_q, d_model) = merged W_o
};

// Step 4 of multi-head attention on its own: merge the per-head outputs y (H, T, d_v) into
// merged (T, H*d_v) and mix them with wo (H*d_v, d_model) into output (T, d_model). The page
// calls it when only the mask or the scale changed: Q, K and V stay, so it reruns attention on
// them and this, the same sums bit for bit as multi_head_attention.
struct MergeOptions {
  std::size_t t = 1;
  std::size_t heads = 1;
  std::size_t dv = 1;
  std::size_t d_model = 1;
  std::size_t memory_cap = kDefaultMemoryCap;  // bytes of the two results
};
template <class T>
Status merge_and_project(const T* y, std::size_t y_len, const T* wo, std::size_t wo_len,
                         const MergeOptions& opts, xt::xtensor<T, 2>* merged,
                         xt::xtensor<T, 2>* output);

// Resolves the defaults (tk, kv_heads, dk, dv) and checks every shape; errors name the field.
// keyPadding has tk entries, an explicit mask t*tk (T_q rows of T_k).
Status resolve_mha(MhaOptions* o);

// Bytes multi_head_attention counts against o.memory_cap for options already resolved by
// resolve_mha: the projections (unsplit and split Q, K, V, merged, output) plus
// estimate_bytes of the attention call. The inputs themselves are not counted. Saturates at
// SIZE_MAX when the count overflows.
std::size_t estimate_mha_bytes(const MhaOptions& resolved, std::size_t elem_size = sizeof(float));

// Self-attention. x: (T, d_model), wq: (d_model, H*d_k), wk: (d_model, H_kv*d_k),
// wv: (d_model, H_kv*d_v), wo: (H*d_v, d_model); all row-major with the given lengths.
// opts.tk must be 0 or t (cross-attention is the overload below).
template <class T>
Status multi_head_attention(const T* x, std::size_t x_len, const T* wq, std::size_t wq_len,
                            const T* wk, std::size_t wk_len, const T* wv, std::size_t wv_len,
                            const T* wo, std::size_t wo_len, MhaOptions opts, MhaResult<T>* out);

// Cross-attention (an encoder-decoder's): queries from x (T_q = opts.t rows, d_model), keys and
// values from x_kv (T_k = opts.tk rows, d_model): Q = x W_Q, K = x_kv W_K, V = x_kv W_V, then
// attention with shape {H, H_kv, T_q, T_k, d_k, d_v} and merge and W_o over the T_q rows. The
// masks align query i with key i' = i + (T_k - T_q) (attn/mask.hpp). With x_kv = x and
// tk = t it is the self-attention above, bit for bit.
template <class T>
Status multi_head_attention(const T* x, std::size_t x_len, const T* x_kv, std::size_t x_kv_len,
                            const T* wq, std::size_t wq_len, const T* wk, std::size_t wk_len,
                            const T* wv, std::size_t wv_len, const T* wo, std::size_t wo_len,
                            MhaOptions opts, MhaResult<T>* out);

}  // namespace attn
