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
  std::size_t t = 1;         // sequence length T (self-attention: T_q = T_k = T)
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
  xt::xtensor<T, 3> q, k, v;  // (H, T, d_k), (H_kv, T, d_k), (H_kv, T, d_v) after split_heads
  AttentionResult<T> attn;    // per-head outputs (H, T, d_v), weights (H, T, T), ...
  xt::xtensor<T, 2> merged;   // (T, H * d_v) = merge_heads(attn.output)
  xt::xtensor<T, 2> output;   // (T, d_model) = merged W_o
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

// Resolves the defaults (kv_heads, dk, dv) and checks every shape; errors name the field.
Status resolve_mha(MhaOptions* o);

// Bytes multi_head_attention counts against o.memory_cap for options already resolved by
// resolve_mha: the projections (unsplit and split Q, K, V, merged, output) plus
// estimate_bytes of the attention call. The inputs themselves are not counted. Saturates at
// SIZE_MAX when the count overflows.
std::size_t estimate_mha_bytes(const MhaOptions& resolved, std::size_t elem_size = sizeof(float));

// x: (T, d_model), wq: (d_model, H*d_k), wk: (d_model, H_kv*d_k),
// wv: (d_model, H_kv*d_v), wo: (H*d_v, d_model); all row-major with the given lengths.
template <class T>
Status multi_head_attention(const T* x, std::size_t x_len, const T* wq, std::size_t wq_len,
                            const T* wk, std::size_t wk_len, const T* wv, std::size_t wv_len,
                            const T* wo, std::size_t wo_len, MhaOptions opts, MhaResult<T>* out);

}  // namespace attn
