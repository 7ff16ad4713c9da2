// The tiled attention backward (internal header; attention_backward validates and sizes).
//
// FlashAttention-2's backward, single-threaded: the (T_q, T_k) weights are never stored.
// For each (query tile, key tile) pair the scores are recomputed from Q and K and turned
// into weights with the forward's per-row log-sum-exp, P = exp(S - lse), so no running
// maximum is needed: the forward already found it. With one thread nothing races, so
// the loop runs query tiles outside (dQ rows stay hot) and dK, dV accumulate straight
// into the outputs; FA2 puts key tiles outside only to avoid atomics between blocks.
// Working memory: two kTileQ x kTileK tiles and per-row state, independent of T.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "attn/backward.hpp"
#include "attn/dropout.hpp"
#include "attn/tiled.hpp"
#include "checked.hpp"
#include "kernels.hpp"

namespace attn::detail {

template <class T>
void backward_tiled_scalar(const T* q, const T* k, const T* v, const T* d_out,
                           const AttentionOptions& o, T scale, const AttentionResult<T>& fwd,
                           AttentionGrads<T>* g) {
  const Shape& s = o.shape;
  const std::size_t group = s.heads / s.kv_heads;
  const double p = o.dropout;
  const T keep_scale = static_cast<T>(1 / (1 - p));
  std::vector<T> pt(kTileQ * kTileK), dst(kTileQ * kTileK);  // P and dS of one tile pair
  T D[kTileQ];
  std::uint64_t drow[kTileQ];
  bool full[kTileQ];
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t kv = h / group;
    const T* kg = k + kv * s.tk * s.dk;  // (T_k, d_k)
    const T* vg = v + kv * s.tk * s.dv;  // (T_k, d_v)
    T* dkg = g->dk.data() + kv * s.tk * s.dk;
    T* dvg = g->dv.data() + kv * s.tk * s.dv;
    for (std::size_t i0 = 0; i0 < s.tq; i0 += kTileQ) {
      const std::size_t rows = std::min(kTileQ, s.tq - i0), row0 = h * s.tq + i0;
      // 1. Per row: D_i = rowsum(dO_i * O_i) (= sum_j P_ij dP_ij, dropout included, since
      //    O is the dropped output); the dropout prefix; fully masked rows, whose scores
      //    are constants, pass their policy's weights to dV here and take no further part.
      std::size_t lo = s.tk, hi = 0;
      for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t i = i0 + r, row = row0 + r;
        const T* doi = d_out + row * s.dv;
        D[r] = dot(doi, fwd.output.data() + row * s.dv, s.dv);
        drow[r] = p > 0 ? dropout_row(o.dropout_seed, h, i) : 0;
        full[r] = allowed_count(o.mask, i, s.tq, s.tk) == 0;
        if (full[r]) {
          const T w = fully_masked_weight<T>(o.fill, s.tk);
          for (std::size_t j = 0; j < s.tk; ++j) {
            const T kj = p <= 0 ? T(1) : (dropout_keep_row(drow[r], j, p) ? keep_scale : T(0));
            axpy(w * kj, doi, dvg + j * s.dv, s.dv);
          }
          continue;
        }
        const KeyRange kr = key_range(o.mask, i, s.tq, s.tk);
        lo = std::min(lo, kr.lo);
        hi = std::max(hi, kr.hi);
      }
      for (std::size_t j0 = lo - lo % kTileK; j0 < hi; j0 += kTileK) {
        const std::size_t J = std::min(kTileK, s.tk - j0);
        // 2. Recompute P for the tile: P_rj = exp(scale q_i . k_j - lse_i) on allowed
        //    cells, exactly 0 elsewhere (masked, or outside the row's range).
        for (std::size_t r = 0; r < rows; ++r) {
          const std::size_t i = i0 + r, row = row0 + r;
          T* pr = pt.data() + r * kTileK;
          std::fill(pr, pr + J, T(0));
          if (full[r]) continue;
          const KeyRange kr = key_range(o.mask, i, s.tq, s.tk);
          const std::size_t a = std::max(j0, kr.lo), b = std::min(j0 + J, kr.hi);
          const T lse = fwd.lse.data()[row];
          const T* qi = q + row * s.dk;
          for (std::size_t j = a; j < b; ++j) {
            if (!pointwise_allowed(o.mask, i, j, s.tk)) continue;
            pr[j - j0] = std::exp(scale * dot(qi, kg + j * s.dk, s.dk) - lse);
          }
        }
        // 3. dV_j += sum_r Pd_rj dO_r (Pd: the dropped P the forward used);
        //    dP_rj = keep * dO_r . V_j, and dS_rj = scale * P_rj (dP_rj - D_r).
        for (std::size_t r = 0; r < rows; ++r) {
          const std::size_t row = row0 + r;
          const T* pr = pt.data() + r * kTileK;
          T* ds = dst.data() + r * kTileK;
          const T* doi = d_out + row * s.dv;
          for (std::size_t jj = 0; jj < J; ++jj) {
            ds[jj] = 0;
            if (pr[jj] == T(0)) continue;  // masked, or underflowed: no gradient either way
            const T kj =
                p <= 0 ? T(1) : (dropout_keep_row(drow[r], j0 + jj, p) ? keep_scale : T(0));
            axpy(pr[jj] * kj, doi, dvg + (j0 + jj) * s.dv, s.dv);
            const T dp = kj * dot(doi, vg + (j0 + jj) * s.dv, s.dv);
            ds[jj] = scale * (pr[jj] * (dp - D[r]));
          }
        }
        // 4. dQ_r += sum_j dS_rj K_j and dK_j += sum_r dS_rj Q_r.
        for (std::size_t r = 0; r < rows; ++r) {
          const std::size_t row = row0 + r;
          const T* ds = dst.data() + r * kTileK;
          const T* qi = q + row * s.dk;
          T* dqi = g->dq.data() + row * s.dk;
          for (std::size_t jj = 0; jj < J; ++jj) {
            if (ds[jj] == T(0)) continue;
            axpy(ds[jj], kg + (j0 + jj) * s.dk, dqi, s.dk);
            axpy(ds[jj], qi, dkg + (j0 + jj) * s.dk, s.dk);
          }
        }
      }
    }
  }
}

template <class T>
void backward_tiled(const T* q, const T* k, const T* v, const T* d_out, const AttentionOptions& o,
                    T scale, const AttentionResult<T>& fwd, AttentionGrads<T>* g) {
  if constexpr (std::is_same_v<T, float> && kSimdKernels) {
    if (tiled_backward_simd(q, k, v, d_out, o, scale, fwd, g, false)) return;
  }
  backward_tiled_scalar(q, k, v, d_out, o, scale, fwd, g);
}

}  // namespace attn::detail
