// The scalar backward kernels (internal header; attention_backward validates and sizes, and
// dispatch.hpp picks one): the naive backward from the stored weights, the tiled one, and the
// variants' (naive, tiled, linear prefix sums). The SIMD128 backward is
// simd_backward.cpp.
//
// The tiled one is FlashAttention-2's backward, single-threaded: the (T_q, T_k) weights are
// never stored.
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

#include "attn/dropout.hpp"
#include "attn/tile_sizes.hpp"
#include "attn/types.hpp"
#include "attn/variant_grad.hpp"
#include "kernels.hpp"
#include "variant_kernels.hpp"

namespace attn::detail {

// The naive backward, row by row from the stored softmax P = fwd.weights:
//   1. fully masked rows (no allowed key): their scores are constants (or absent), so
//      they pass gradient to V only, through the weights their policy defines
//      (finite: uniform 1/T_k; zero: 0; neg_inf: NaN, which poisons dV like PyTorch);
//   2. dV_j += Pd_ij dO_i with Pd = P * keep / (1 - p), the P the forward multiplied V by;
//      dP_ij = keep / (1 - p) * dO_i . V_j and D_i = sum_j P_ij dP_ij;
//   3. dS_ij = P_ij (dP_ij - D_i) (the softmax Jacobian), then dQ_i += scale dS_ij K_j
//      and dK_j += scale dS_ij Q_i. Forbidden cells have P = 0 and get no gradient.
template <class T>
void backward_naive(const T* q, const T* k, const T* v, const T* d_out, const AttentionOptions& o,
                    T scale, const AttentionResult<T>& fwd, AttentionGrads<T>* g) {
  const Shape& s = o.shape;
  const std::size_t group = s.heads / s.kv_heads;
  const double p = o.dropout;
  const T keep_scale = static_cast<T>(1 / (1 - p));
  std::vector<T> dp(s.tk);  // dP of one row
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t kv = h / group;
    const T* kg = k + kv * s.tk * s.dk;  // (T_k, d_k)
    const T* vg = v + kv * s.tk * s.dv;  // (T_k, d_v)
    T* dkg = g->dk.data() + kv * s.tk * s.dk;
    T* dvg = g->dv.data() + kv * s.tk * s.dv;
    for (std::size_t i = 0; i < s.tq; ++i) {
      const std::size_t row = h * s.tq + i;
      const T* P = fwd.weights.data() + row * s.tk;
      const T* qi = q + row * s.dk;
      const T* doi = d_out + row * s.dv;
      T* dqi = g->dq.data() + row * s.dk;
      const std::uint64_t drow = p > 0 ? dropout_row(o.dropout_seed, h, i) : 0;
      auto keep = [&](std::size_t j) {
        return p <= 0 ? T(1) : (dropout_keep_row(drow, j, p) ? keep_scale : T(0));
      };
      // 1.
      if (allowed_count(o.mask, i, s.tq, s.tk) == 0) {
        for (std::size_t j = 0; j < s.tk; ++j) {
          axpy(P[j] * keep(j), doi, dvg + j * s.dv, s.dv);
        }
        continue;
      }
      // 2.
      const KeyRange r = key_range(o.mask, i, s.tq, s.tk);
      T D = 0;
      for (std::size_t j = r.lo; j < r.hi; ++j) {
        if (!pointwise_allowed(o.mask, i, j, s.tk)) continue;
        const T kj = keep(j);
        axpy(P[j] * kj, doi, dvg + j * s.dv, s.dv);
        dp[j] = kj * dot(doi, vg + j * s.dv, s.dv);
        D += P[j] * dp[j];
      }
      // 3.
      for (std::size_t j = r.lo; j < r.hi; ++j) {
        if (!pointwise_allowed(o.mask, i, j, s.tk)) continue;
        const T ds = scale * (P[j] * (dp[j] - D));
        axpy(ds, kg + j * s.dk, dqi, s.dk);
        axpy(ds, qi, dkg + j * s.dk, s.dk);
      }
    }
  }
}

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

// ---- The variants' backward (attn/variant_grad.hpp has the rules; only reached when
// opts.variant.needs_variant_kernel(), so the default options keep the kernels above).
//
// Every variant kernel below works on the transformed rows q~ = T(q), k~ = T(k) (qkNorm ->
// RoPE -> phi, the forward's own prepare_qk) and accumulates dL/dq~, dL/dk~ in g->dq, g->dk;
// variant_inputs_backward then takes them back through T, row by row, in place.

template <class T>
void variant_inputs_backward(const T* q, const T* k, const AttentionOptions& o,
                             AttentionGrads<T>* g) {
  const Shape& s = o.shape;
  const Variant& var = o.variant;
  if (!var.transforms_qk()) return;
  const std::vector<double> theta = var.position == Position::kRope
                                        ? vgrad::rope_thetas(s.dk, var.rope_base)
                                        : std::vector<double>{};
  const double* th = theta.empty() ? nullptr : theta.data();
  const double off = static_cast<double>(s.tk) - static_cast<double>(s.tq);  // i' = i + off
  for (std::size_t r = 0; r < s.heads * s.tq; ++r) {
    vgrad::transform_row_backward(q + r * s.dk, g->dq.data() + r * s.dk, s.dk,
                                  static_cast<double>(r % s.tq) + off, var, th);
  }
  for (std::size_t r = 0; r < s.kv_heads * s.tk; ++r) {
    vgrad::transform_row_backward(k + r * s.dk, g->dk.data() + r * s.dk, s.dk,
                                  static_cast<double>(r % s.tk), var, th);
  }
}

// The naive variant backward, per head h and query row i, from the forward's stored weights w:
//   1. a fully masked row passes its weights to V only (softmax's fill policy: uniform under
//      finite, NaN under neg_inf as PyTorch; every other normalizer's row is zero);
//   2. dV_j += w_j keep_j dO_i and dW_j = keep_j dO_i . V_j over the allowed keys;
//   3. dS = the normalizer's row backward (linear: Z = sum_allowed phi(q).phi(k) + 1e-6
//      recomputed in the forward's order), times scale except for linear;
//   4. dq~_i += dS_j k~_j, dk~_j += dS_j q~_i; finally T's backward (variant_inputs_backward).
template <class T>
void backward_naive_variant(const T* q, const T* k, const T* v, const T* d_out,
                            const AttentionOptions& o, T scale, const AttentionResult<T>& fwd,
                            AttentionGrads<T>* g) {
  const Shape& s = o.shape;
  const Variant& var = o.variant;
  const std::size_t group = s.heads / s.kv_heads;
  const bool linear = var.normalizer == Normalizer::kLinear;
  const double p = o.dropout;
  const T keep_scale = static_cast<T>(1 / (1 - p));
  std::vector<T> qt, kt;
  const T *qq = q, *kk = k;
  if (var.transforms_qk()) {
    prepare_qk(q, k, o, &qt, &kt);
    qq = qt.data(), kk = kt.data();
  }
  std::vector<T> dw(s.tk);  // dW, then dS, of one row
  std::vector<unsigned char> allowed(s.tk);
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t kv = h / group;
    const T* kg = kk + kv * s.tk * s.dk;  // (T_k, d_k), transformed
    const T* vg = v + kv * s.tk * s.dv;   // (T_k, d_v)
    T* dkg = g->dk.data() + kv * s.tk * s.dk;
    T* dvg = g->dv.data() + kv * s.tk * s.dv;
    for (std::size_t i = 0; i < s.tq; ++i) {
      const std::size_t row = h * s.tq + i;
      const T* w = fwd.weights.data() + row * s.tk;
      const T* qi = qq + row * s.dk;
      const T* doi = d_out + row * s.dv;
      T* dqi = g->dq.data() + row * s.dk;
      const std::uint64_t drow = p > 0 ? dropout_row(o.dropout_seed, h, i) : 0;
      auto keep = [&](std::size_t j) {
        return p <= 0 ? T(1) : (dropout_keep_row(drow, j, p) ? keep_scale : T(0));
      };
      std::size_t n_allowed = 0;
      for (std::size_t j = 0; j < s.tk; ++j) {
        allowed[j] = is_allowed(o.mask, i, j, s.tq, s.tk);
        n_allowed += allowed[j];
      }
      // 1.
      if (n_allowed == 0) {
        if (var.normalizer != Normalizer::kSoftmax) continue;
        for (std::size_t j = 0; j < s.tk; ++j) axpy(w[j] * keep(j), doi, dvg + j * s.dv, s.dv);
        continue;
      }
      // 2.
      for (std::size_t j = 0; j < s.tk; ++j) {
        dw[j] = 0;
        if (!allowed[j]) continue;
        const T kj = keep(j);
        axpy(w[j] * kj, doi, dvg + j * s.dv, s.dv);
        dw[j] = kj * dot(doi, vg + j * s.dv, s.dv);
      }
      // 3.
      T z = 0;
      if (linear) {
        for (std::size_t j = 0; j < s.tk; ++j) {
          if (allowed[j]) z += dot(qi, kg + j * s.dk, s.dk);
        }
        z += static_cast<T>(kLinearEps);
      }
      vgrad::normalizer_row_backward(var.normalizer, w, dw.data(), allowed.data(), s.tk, s.tk, z,
                                     dw.data());
      const T sc = linear ? T(1) : scale;
      // 4.
      for (std::size_t j = 0; j < s.tk; ++j) {
        if (!allowed[j] || dw[j] == T(0)) continue;
        const T ds = sc * dw[j];
        axpy(ds, kg + j * s.dk, dqi, s.dk);
        axpy(ds, qi, dkg + j * s.dk, s.dk);
      }
    }
  }
  variant_inputs_backward(q, k, o, g);
}

// The tiled variant backward (softmax, softmax1, sigmoid, relu; every position and qkNorm),
// one query row at a time, the keys streaming past as in the forward's tiled variant kernel:
// no (T_q, T_k) buffer and no tile buffer either. Per row:
//   1. a fully masked row: softmax passes its fill policy's weights to V (as the tiled softmax
//      backward); the other normalizers' rows are zero and take no part;
//   2. D_i = dO_i . O_i (softmax, softmax1: the forward's output, dropout included; softmax1's
//      sink has value 0, so this is still sum_j w_j dW_j);
//   3. per allowed key: s = the forward's score (scale q~.k~ + ALiBi), w = e^(s - lse)
//      (softmax, softmax1: lse counts the sink), sigma(s + b) or max(s, 0) / T_k; dV, dW and dS
//      as in the naive kernel; dq~_i, dk~_j accumulate at once.
template <class T>
void backward_tiled_variant(const T* q, const T* k, const T* v, const T* d_out,
                            const AttentionOptions& o, T scale, const AttentionResult<T>& fwd,
                            AttentionGrads<T>* g) {
  const Shape& s = o.shape;
  const Variant& var = o.variant;
  const std::size_t group = s.heads / s.kv_heads;
  const double p = o.dropout;
  const T keep_scale = static_cast<T>(1 / (1 - p));
  const bool online =
      var.normalizer == Normalizer::kSoftmax || var.normalizer == Normalizer::kSoftmax1;
  const bool sig = var.normalizer == Normalizer::kSigmoid;
  const T bias = static_cast<T>(effective_sigmoid_bias(var, s.tk));
  const T inv_tk = T(1) / static_cast<T>(s.tk);
  const std::vector<double> slopes =
      var.position == Position::kAlibi ? alibi_slopes(s.heads) : std::vector<double>{};
  std::vector<T> qt, kt;
  const T *qq = q, *kk = k;
  if (var.transforms_qk()) {
    prepare_qk(q, k, o, &qt, &kt);
    qq = qt.data(), kk = kt.data();
  }
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t kv = h / group;
    const T* kg = kk + kv * s.tk * s.dk;
    const T* vg = v + kv * s.tk * s.dv;
    T* dkg = g->dk.data() + kv * s.tk * s.dk;
    T* dvg = g->dv.data() + kv * s.tk * s.dv;
    for (std::size_t i = 0; i < s.tq; ++i) {
      const std::size_t row = h * s.tq + i;
      const T* qi = qq + row * s.dk;
      const T* doi = d_out + row * s.dv;
      T* dqi = g->dq.data() + row * s.dk;
      const std::uint64_t drow = p > 0 ? dropout_row(o.dropout_seed, h, i) : 0;
      auto keep = [&](std::size_t j) {
        return p <= 0 ? T(1) : (dropout_keep_row(drow, j, p) ? keep_scale : T(0));
      };
      // 1.
      if (allowed_count(o.mask, i, s.tq, s.tk) == 0) {
        if (var.normalizer != Normalizer::kSoftmax) continue;
        const T w = fully_masked_weight<T>(o.fill, s.tk);
        for (std::size_t j = 0; j < s.tk; ++j) axpy(w * keep(j), doi, dvg + j * s.dv, s.dv);
        continue;
      }
      // 2.
      const T D = online ? dot(doi, fwd.output.data() + row * s.dv, s.dv) : T(0);
      const T lse = fwd.lse.data()[row];
      const Scorer<T> score{
          qi,
          kg,
          s.dk,
          scale,
          false,
          slopes.empty() ? 0.0 : slopes[h],
          static_cast<double>(i) + static_cast<double>(s.tk) - static_cast<double>(s.tq)};
      // 3.
      const KeyRange kr = key_range(o.mask, i, s.tq, s.tk);
      for (std::size_t j = kr.lo; j < kr.hi; ++j) {
        if (!pointwise_allowed(o.mask, i, j, s.tk)) continue;
        const T sj = score(j);
        const T w = online ? std::exp(sj - lse)
                    : sig  ? sigmoid(sj + bias)
                           : (std::isnan(sj) ? sj : std::max(sj, T(0)) * inv_tk);
        const T kj = keep(j);
        axpy(w * kj, doi, dvg + j * s.dv, s.dv);
        const T dw = kj * dot(doi, vg + j * s.dv, s.dv);
        const T ds = online ? w * (dw - D)
                     : sig  ? dw * (w * (T(1) - w))
                            : (sj > 0 ? dw * inv_tk : (std::isnan(sj) ? sj : T(0)));
        if (ds == T(0)) continue;
        axpy(scale * ds, kg + j * s.dk, dqi, s.dk);
        axpy(scale * ds, qi, dkg + j * s.dk, s.dk);
      }
    }
  }
  variant_inputs_backward(q, k, o, g);
}

// The backward of linear attention's causal prefix-sum form (no mask or causal; the forward's
// linear_prefix_kernel), O(T d_k d_v) per head and no T x T matrix. With f_i = phi(q~_i),
// g_j = phi(k~_j), J_i = {j <= i'} (all keys without the mask), S_i = sum_{J_i} g_j v_j^T,
// z_i = sum_{J_i} g_j, den_i = f_i . z_i + 1e-6 and y_i = f_i^T S_i / den_i:
//   1. forward sweep (i ascending, S and z as prefix sums): with a_i = dO_i / den_i and
//      b_i = -(dO_i . y_i) / den_i,  dL/df_i = S_i a_i + z_i b_i;
//   2. reverse sweep (j descending, G = sum_{i : j in J_i} f_i a_i^T and u = sum f_i b_i as
//      suffix sums over the rows that see key j):  dL/dg_j = G v_j + u,  dV_j += G^T g_j.
// Rows with i' < 0 see no key: their output is the constant 0 and they take no part.
// Then phi', RoPE and qkNorm backward (variant_inputs_backward).
template <class T>
void backward_linear_prefix(const T* q, const T* k, const T* v, const T* d_out,
                            const AttentionOptions& o, const AttentionResult<T>& fwd,
                            AttentionGrads<T>* g) {
  const Shape& s = o.shape;
  const std::size_t group = s.heads / s.kv_heads;
  std::vector<T> qt, kt;
  prepare_qk(q, k, o, &qt, &kt);  // phi (after qkNorm and RoPE)
  std::vector<T> state(s.dk * s.dv), z(s.dk), b(s.tq), den(s.tq);
  const long off = static_cast<long>(s.tk) - static_cast<long>(s.tq);
  auto keys_seen = [&](std::size_t i) {  // |J_i|
    return o.mask.causal ? static_cast<std::size_t>(std::clamp(static_cast<long>(i) + off + 1, 0L,
                                                               static_cast<long>(s.tk)))
                         : s.tk;
  };
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t kv = h / group;
    const T* kg = kt.data() + kv * s.tk * s.dk;
    const T* vg = v + kv * s.tk * s.dv;
    T* dkg = g->dk.data() + kv * s.tk * s.dk;
    T* dvg = g->dv.data() + kv * s.tk * s.dv;
    // 1.
    std::fill(state.begin(), state.end(), T(0));
    std::fill(z.begin(), z.end(), T(0));
    std::size_t next = 0;
    for (std::size_t i = 0; i < s.tq; ++i) {
      const std::size_t row = h * s.tq + i, hi = keys_seen(i);
      for (; next < hi; ++next) {
        const T* kj = kg + next * s.dk;
        const T* vj = vg + next * s.dv;
        for (std::size_t a = 0; a < s.dk; ++a) {
          z[a] += kj[a];
          axpy(kj[a], vj, state.data() + a * s.dv, s.dv);
        }
      }
      den[i] = 0;
      if (hi == 0) continue;
      const T* fi = qt.data() + row * s.dk;
      const T* doi = d_out + row * s.dv;
      den[i] = dot(fi, z.data(), s.dk) + static_cast<T>(kLinearEps);
      b[i] = -dot(doi, fwd.output.data() + row * s.dv, s.dv) / den[i];
      T* dfi = g->dq.data() + row * s.dk;
      for (std::size_t a = 0; a < s.dk; ++a) {
        dfi[a] = dot(state.data() + a * s.dv, doi, s.dv) / den[i] + z[a] * b[i];
      }
    }
    // 2. state is G (d_k x d_v) now, z is u.
    std::fill(state.begin(), state.end(), T(0));
    std::fill(z.begin(), z.end(), T(0));
    std::size_t rows_in = s.tq;  // rows [rows_in, T_q) are in G and u
    for (std::size_t j = s.tk; j-- > 0;) {
      // Row i sees key j when j < |J_i|; |J_i| grows with i, so add rows from the bottom.
      while (rows_in > 0 && keys_seen(rows_in - 1) > j) {
        const std::size_t i = --rows_in, row = h * s.tq + i;
        const T* fi = qt.data() + row * s.dk;
        const T* doi = d_out + row * s.dv;
        for (std::size_t a = 0; a < s.dk; ++a) {
          axpy(fi[a] / den[i], doi, state.data() + a * s.dv, s.dv);
          z[a] += fi[a] * b[i];
        }
      }
      if (rows_in == s.tq) continue;  // no row sees key j
      const T* gj = kg + j * s.dk;
      const T* vj = vg + j * s.dv;
      T* dgj = dkg + j * s.dk;
      T* dvj = dvg + j * s.dv;
      for (std::size_t a = 0; a < s.dk; ++a) {
        dgj[a] += dot(state.data() + a * s.dv, vj, s.dv) + z[a];
        axpy(gj[a], state.data() + a * s.dv, dvj, s.dv);
      }
    }
  }
  variant_inputs_backward(q, k, o, g);
}

}  // namespace attn::detail
