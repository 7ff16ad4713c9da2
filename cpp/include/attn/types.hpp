// The attention vocabulary: shapes, options, results, diagnostics and gradients, shared by every
// entry point (attention.hpp, tiled.hpp, backward.hpp, multihead.hpp) and every kernel
// (cpp/src). This header includes no kernel and no entry point; docs/kernels.md maps the kernels.
//
// Heads: query head h reads K/V head h / (H / H_kv), so H_kv = H is multi-head attention,
// 1 < H_kv < H grouped-query attention and H_kv = 1 multi-query attention.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <xtensor/xtensor.hpp>

#include "attn/mask.hpp"
#include "attn/variants.hpp"

namespace attn {

// Working memory a single call may use unless the caller sets another cap.
inline constexpr std::size_t kDefaultMemoryCap = std::size_t{512} << 20;  // 512 MiB

struct Shape {
  std::size_t heads = 1;     // H, query heads
  std::size_t kv_heads = 1;  // H_kv, key/value heads; must divide H
  std::size_t tq = 1;        // T_q, query positions
  std::size_t tk = 1;        // T_k, key/value positions
  std::size_t dk = 1;        // d_k, query/key width
  std::size_t dv = 1;        // d_v, value width
};

struct AttentionOptions {
  Shape shape;
  MaskSpec mask;
  std::optional<double> scale;  // unset: 1/sqrt(d_k); else any finite positive number
  MaskFill fill = MaskFill::kNegInf;
  bool return_scores = false;  // naive kernel only: also keep the unmasked scaled scores
  // Inverted dropout on the weights (0 <= dropout < 1): a kept weight is scaled by
  // 1/(1-dropout). Which cells drop is a pure function of (dropout_seed, head, query,
  // key) (attn/dropout.hpp), so both kernels and the backward pass agree without a mask.
  // `weights` and `entropy` stay the softmax before dropout; `output` uses the dropped P.
  double dropout = 0.0;
  std::uint64_t dropout_seed = 0;
  std::size_t memory_cap = kDefaultMemoryCap;
  // The attention variants (attn/variants.hpp); the defaults run the original kernels.
  Variant variant;
  // Sum every row of the returned weights into row_sums (the page's check that each row is a
  // distribution). Off, row_sums comes back empty: the trainer, which never reads it, saves a
  // pass over every weight.
  bool row_sums = true;
};

// The scale actually used: opts.scale or 1/sqrt(d_k).
inline double effective_scale(const AttentionOptions& opts) {
  return opts.scale ? *opts.scale : 1.0 / std::sqrt(static_cast<double>(opts.shape.dk));
}

// Per-call diagnostics, shared by every kernel.
struct Diagnostics {
  std::size_t fully_masked_rows = 0;  // (head, query) rows whose mask allows no key
  std::size_t nan_rows = 0;           // rows whose weights or output hold a NaN
  std::size_t inf_score_rows = 0;     // rows where a score overflowed to +-inf (e.g. float32 QK^T)
};

template <class T>
struct AttentionResult {
  xt::xtensor<T, 3> output;    // (H, T_q, d_v)
  xt::xtensor<T, 3> weights;   // (H, T_q, T_k); empty for the tiled kernel
  xt::xtensor<T, 3> scores;    // (H, T_q, T_k) scaled, unmasked; only if return_scores
  xt::xtensor<T, 2> entropy;   // (H, T_q) nats; 0 for an all-zero row, NaN for a NaN row
  xt::xtensor<T, 2> lse;       // (H, T_q) log-sum-exp of the masked scaled scores; softmax1
                               // counts its e^0 sink term; NaN for sigmoid, relu and linear
  xt::xtensor<T, 2> row_sums;  // (H, T_q) sum_j of the returned weights (the tiled kernels
                               // accumulate it as they go)
  Diagnostics diag;
};

// Which algorithm an entry point runs: kNaive materialises the (H, T_q, T_k) weights, kTiled
// never does (online softmax forward, FlashAttention-2 backward).
enum class Kernel { kNaive, kTiled };

template <class T>
struct AttentionGrads {
  xt::xtensor<T, 3> dq;        // (H, T_q, d_k)
  xt::xtensor<T, 3> dk;        // (H_kv, T_k, d_k)
  xt::xtensor<T, 3> dv;        // (H_kv, T_k, d_v)
  AttentionResult<T> forward;  // output, lse, ... of the forward pass (run here if not given)
};

}  // namespace attn
