// Bytes moved: the IO model of Dao et al. 2022 (FlashAttention, section 3.2 and Theorem 2) for
// the standard attention algorithm and the tiled one, as counts of float32 elements loaded
// from and stored to slow memory (HBM on a GPU; main memory here), for given shapes.
//
// Notation per query head: N_q = tq, N_k = tk, d_k, d_v; d = max(d_k, d_v). On-chip memory
// holds M = floor(sramBytes / 4) floats.
//
// Standard algorithm (the paper's Algorithm 0, the lesson's four lines; every head alone):
//   pass 1: read Q_h (N_q d_k) and K_g (N_k d_k), write S = scale Q K^T  (N_q N_k)
//   pass 2: read S, apply the mask, softmax row by row, write P         (2 N_q N_k)
//   pass 3: read P and V_g (N_k d_v), write O = P V                      (N_q N_k + ...)
//   elements = heads (N_q d_k + N_k d_k + N_k d_v + N_q d_v + 4 N_q N_k)
// The mask does not shrink it: S and P are dense matrices (masked cells are written too).
//
// Tiled algorithm, two loop orders, both with the block sizes of the paper's Algorithm 1:
// B_c = ceil(M / 4d) key rows, B_r = min(ceil(M / 4d), d) query rows per block.
//
// Query blocks outside (kQueryBlocksOuter: the loop order of the core's tiled kernel and of
// FlashAttention-2; the block sizes stay Algorithm 1's, a modelling choice of this model).
// For each query head and each query block i (r_i <= B_r rows):
//   read Q_i (r_i d_k) once; the running max m, sum l and output O_i stay on chip;
//   for each key block j (c_j <= B_c keys) that holds at least one key a row of block i may
//   see: read K_j (c_j d_k) and V_j (c_j d_v)  -- K and V are read once per query block;
//   write O_i (r_i d_v) and the row statistics m_i, l_i (2 r_i) once.
//   elements = heads (N_q d_k + N_q d_v + 2 N_q + sum_i keys_i (d_k + d_v)),
//   keys_i = N_k without a mask; causal (bottom-right aligned: query q sees keys
//   j <= q + N_k - N_q): keys_i = min(N_k, B_c ceil((last_i + N_k - N_q + 1) / B_c)), the key
//   blocks up to the one holding the last row's diagonal, 0 if that row sees no key.
// Without a mask that is heads (N_q (d_k + d_v + 2) + ceil(N_q / B_r) N_k (d_k + d_v)):
// about 8 N^2 d^2 / M for N_q = N_k = N, d_k = d_v = d while B_r = M / 4d < d, the paper's
// Theta(N^2 d^2 / M); from M = 4 d^2 on B_r stays d and the K/V reads stay 2 N^2.
//
// Key blocks outside (kKeyBlocksOuter: the paper's Algorithm 1, FlashAttention-1), per head:
//   write the initial O (N_q d_v), l and m (2 N_q) to slow memory (its line 2);
//   for each key block j: read K_j (c_j d_k) and V_j (c_j d_v) once; for each query block i
//   with at least one key of block j visible to one of its rows: read Q_i, O_i, l_i, m_i
//   (r_i (d_k + d_v + 2)), write O_i, l_i, m_i (r_i (d_v + 2)).
//   elements = heads (N_k (d_k + d_v) + N_q (d_v + 2) + rows (d_k + 2 d_v + 4)),
//   rows = sum_j (rows of the query blocks visited for key block j): ceil(N_k / B_c) N_q
//   without a mask; causal: the blocks whose last row sees the block's first key.
// Without a mask, about 4 N^2 d (3 d + 4) / M, i.e. 12 N^2 d^2 / M: B_c = M / 4d is not
// capped, so the traffic keeps falling as M grows.
//
// Footprint: bytes of the buffers the algorithm keeps in slow memory during the call:
//   standard: Q, K, V, O and the two (heads, N_q, N_k) matrices S and P;
//   tiled:    Q, K, V, O and the per-row statistics m, l (2 heads N_q).
// K and V count kvHeads heads (grouped-query attention shares them); their reads count
// once per query head, since each head streams its group's K and V.
// The tiled footprint is linear in N (both orders); its traffic is still quadratic in N.
#pragma once

#include <cstdint>

#include "attn/status.hpp"

namespace attn {

enum class TrafficKernel { kStandard, kTiled };
// The tiled algorithm's outer loop (see above).
enum class TrafficLoopOrder { kQueryBlocksOuter, kKeyBlocksOuter };

struct TrafficOptions {
  std::uint64_t tq = 0, tk = 0, dk = 0, dv = 0;
  std::uint64_t heads = 1, kv_heads = 1;
  bool causal = false;
  TrafficKernel kernel = TrafficKernel::kStandard;
  std::uint64_t sram_bytes = 0;  // on-chip memory; used (and required) by the tiled kernel
  TrafficLoopOrder loop_order = TrafficLoopOrder::kQueryBlocksOuter;  // tiled kernel only
};

struct Traffic {
  std::uint64_t footprint_bytes = 0;    // buffers kept in slow memory (see above)
  std::uint64_t slow_memory_bytes = 0;  // bytes loaded from + stored to slow memory
  std::uint64_t loaded_bytes = 0;       // the loads alone
  std::uint64_t stored_bytes = 0;       // the stores alone
  std::uint64_t block_rows = 0;         // B_r (tiled; 0 for standard)
  std::uint64_t block_cols = 0;         // B_c (tiled; 0 for standard)
};

// Validates (fields tq, tk, dk, dv, heads, kvHeads, sramBytes; counts that would not fit in
// 64 bits are refused with field 'tq') and fills *out.
Status traffic(const TrafficOptions& o, Traffic* out);

}  // namespace attn
