// The portable scalar kernels (internal header): the naive and tiled softmax forward for any
// element type, and the row helpers every other kernel shares (dot, axpy, the mask's pointwise
// test, the fully masked row's policy). They define the corner cases (NaN/Inf inputs, overflow,
// fully masked rows) the SIMD128 kernels must match. Callers (dispatch.hpp) have validated every
// argument and sized every output. docs/kernels.md maps every kernel.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <vector>

#include "attn/dropout.hpp"
#include "attn/softmax.hpp"
#include "attn/tile_sizes.hpp"
#include "attn/types.hpp"

namespace attn::detail {

// Dot product with four independent accumulators so the compiler can keep
// several multiply-adds in flight (a single running sum is a serial chain).
template <class T>
inline T dot(const T* a, const T* b, std::size_t n) {
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

// y += a * x over n values.
template <class T>
inline void axpy(T a, const T* x, T* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// Padding and custom mask for one (i, j) already inside key_range.
inline bool pointwise_allowed(const MaskSpec& m, std::size_t i, std::size_t j, std::size_t tk) {
  return (!m.key_padding || m.key_padding[j]) && (!m.mask || m.mask[i * tk + j]);
}

// Number of keys query i may attend to.
inline std::size_t allowed_count(const MaskSpec& m, std::size_t i, std::size_t tq, std::size_t tk) {
  const KeyRange r = key_range(m, i, tq, tk);
  if (!m.key_padding && !m.mask) return r.hi - r.lo;
  std::size_t n = 0;
  for (std::size_t j = r.lo; j < r.hi; ++j) n += pointwise_allowed(m, i, j, tk);
  return n;
}

// What a row with no allowed key becomes, per fill policy (both kernels agree):
//   neg_inf: NaN everywhere (exp(-inf - (-inf)) = NaN, as NumPy computes it);
//   finite:  every score is -1e9, so the weights are uniform 1/T_k and the
//            output is the mean of V; lse = -1e9 + ln T_k, entropy = ln T_k;
//   zero:    zero weights, zero output, lse = -inf, entropy 0.
// With dropout p > 0 (drow: the row's dropout_row prefix) the finite policy's uniform
// weights are dropped like any others: output = sum of kept u / (1 - p) * v_j.
template <class T>
void fully_masked_row(MaskFill fill, const T* v, std::size_t tk, std::size_t dv, T* w_row,
                      T* out_row, T* lse, T* entropy, double p = 0, std::uint64_t drow = 0) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  switch (fill) {
    case MaskFill::kNegInf:
      if (w_row) std::fill(w_row, w_row + tk, nan);
      std::fill(out_row, out_row + dv, nan);
      *lse = nan;
      *entropy = nan;
      break;
    case MaskFill::kFinite: {
      const T u = T(1) / static_cast<T>(tk);
      if (w_row) std::fill(w_row, w_row + tk, u);
      std::fill(out_row, out_row + dv, T(0));
      const T ud = p > 0 ? static_cast<T>(u / (1 - p)) : u;
      for (std::size_t j = 0; j < tk; ++j) {
        if (dropout_keep_row(drow, j, p)) axpy(ud, v + j * dv, out_row, dv);
      }
      *lse = static_cast<T>(kFiniteMaskValue + std::log(static_cast<double>(tk)));
      *entropy = static_cast<T>(std::log(static_cast<double>(tk)));
      break;
    }
    case MaskFill::kZero:
      if (w_row) std::fill(w_row, w_row + tk, T(0));
      std::fill(out_row, out_row + dv, T(0));
      *lse = -std::numeric_limits<T>::infinity();
      *entropy = 0;
      break;
  }
}

// The weight a fully masked row gives every key under its fill policy (fully_masked_row).
template <class T>
T fully_masked_weight(MaskFill fill, std::size_t tk) {
  switch (fill) {
    case MaskFill::kNegInf:
      return std::numeric_limits<T>::quiet_NaN();
    case MaskFill::kFinite:
      return T(1) / static_cast<T>(tk);
    case MaskFill::kZero:
      break;
  }
  return T(0);
}

// The naive kernel: for each head and query row,
//   1. scores s_j = scale * q_i . k_j for the allowed keys (all keys if scores are kept);
//   2. m = max_j s_j over allowed keys (NaN-propagating);
//   3. e_j = exp(s_j - m): subtracting m keeps every exponent <= 0, so nothing
//      overflows and the largest term is exactly 1; forbidden keys get exactly 0;
//   4. weights = e / sum(e); output_i = sum_j weights_j v_j over allowed keys only,
//      so a NaN or Inf in a forbidden key's value cannot leak into the row. With
//      dropout the output uses the dropped weights keep_ij * w_j / (1 - p) (attn/dropout.hpp);
//      the stored weights stay the softmax.
template <class T>
void naive_kernel_scalar(const T* q, const T* k, const T* v, const AttentionOptions& o, T scale,
                         AttentionResult<T>* out) {
  const Shape& s = o.shape;
  const std::size_t group = s.heads / s.kv_heads;
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const double p = o.dropout;
  const T keep_scale = static_cast<T>(1 / (1 - p));
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t g = h / group;
    const T* qh = q + h * s.tq * s.dk;  // (T_q, d_k)
    const T* kg = k + g * s.tk * s.dk;  // (T_k, d_k)
    const T* vg = v + g * s.tk * s.dv;  // (T_k, d_v)
    for (std::size_t i = 0; i < s.tq; ++i) {
      const std::size_t row = h * s.tq + i;
      const std::uint64_t drow = p > 0 ? dropout_row(o.dropout_seed, h, i) : 0;
      const T* qi = qh + i * s.dk;
      T* w = out->weights.data() + row * s.tk;
      T* y = out->output.data() + row * s.dv;
      T* lse = out->lse.data() + row;
      T* ent = out->entropy.data() + row;
      const KeyRange r = key_range(o.mask, i, s.tq, s.tk);
      bool inf_score = false;

      if (o.return_scores) {  // the unmasked scores, for the "mask effect" view
        T* sc = out->scores.data() + row * s.tk;
        for (std::size_t j = 0; j < s.tk; ++j) {
          sc[j] = scale * dot(qi, kg + j * s.dk, s.dk);
          inf_score |= std::isinf(sc[j]);
        }
      }
      // Pass 1: scores of allowed keys; forbidden ones are set to 0 weight later.
      std::size_t n_allowed = 0;
      T m = -inf;
      bool has_nan = false;
      std::fill(w, w + s.tk, T(0));
      for (std::size_t j = r.lo; j < r.hi; ++j) {
        if (!pointwise_allowed(o.mask, i, j, s.tk)) continue;
        const T sj = scale * dot(qi, kg + j * s.dk, s.dk);
        w[j] = sj;
        ++n_allowed;
        inf_score |= std::isinf(sj);
        has_nan |= std::isnan(sj);
        m = std::max(m, sj);
      }
      if (inf_score) ++out->diag.inf_score_rows;
      if (n_allowed == 0) {
        ++out->diag.fully_masked_rows;
        fully_masked_row(o.fill, vg, s.tk, s.dv, w, y, lse, ent, p, drow);
        if (o.fill == MaskFill::kNegInf) ++out->diag.nan_rows;
        continue;
      }
      if (has_nan) m = nan;
      // Pass 2: exponentiate relative to the maximum and sum.
      T l = 0;
      for (std::size_t j = r.lo; j < r.hi; ++j) {
        if (!pointwise_allowed(o.mask, i, j, s.tk)) continue;
        w[j] = std::exp(w[j] - m);
        l += w[j];
      }
      if (std::isnan(l)) {  // NaN input, +inf score, or all allowed scores -inf
        std::fill(w, w + s.tk, nan);
        std::fill(y, y + s.dv, nan);
        *lse = nan;
        *ent = nan;
        ++out->diag.nan_rows;
        continue;
      }
      // Pass 3: normalise, then average the values.
      const T inv = T(1) / l;
      std::fill(y, y + s.dv, T(0));
      for (std::size_t j = r.lo; j < r.hi; ++j) {
        if (!pointwise_allowed(o.mask, i, j, s.tk)) continue;
        w[j] *= inv;
        if (p <= 0) {
          axpy(w[j], vg + j * s.dv, y, s.dv);
        } else if (dropout_keep_row(drow, j, p)) {
          axpy(w[j] * keep_scale, vg + j * s.dv, y, s.dv);
        }
      }
      *lse = m + std::log(l);
      *ent = row_entropy(w, s.tk);
      for (std::size_t c = 0; c < s.dv; ++c) {
        if (std::isnan(y[c])) {
          ++out->diag.nan_rows;
          break;
        }
      }
    }
  }
}

// Online-softmax state of one query row while key tiles stream past.
template <class T>
struct RowState {
  T m;  // running maximum of the scores seen
  T l;  // running sum of exp(s - m)
  T t;  // running sum of exp(s - m) * (s - m), for the entropy
  bool nan;
  std::size_t allowed;
};

// The scalar tiled kernel: online softmax over kTileQ x kTileK tiles.
template <class T>
void tiled_kernel_scalar(const T* q, const T* k, const T* v, const AttentionOptions& o, T scale,
                         AttentionResult<T>* out) {
  const Shape& s = o.shape;
  const std::size_t group = s.heads / s.kv_heads;
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> tile(kTileQ * kTileK);  // scores of one (query tile, key tile) pair
  std::vector<RowState<T>> st(kTileQ);
  const double p = o.dropout;
  const T keep_scale = static_cast<T>(1 / (1 - p));

  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t g = h / group;
    const T* qh = q + h * s.tq * s.dk;  // (T_q, d_k)
    const T* kg = k + g * s.tk * s.dk;  // (T_k, d_k)
    const T* vg = v + g * s.tk * s.dv;  // (T_k, d_v)
    T* yh = out->output.data() + h * s.tq * s.dv;

    for (std::size_t i0 = 0; i0 < s.tq; i0 += kTileQ) {
      const std::size_t rows = std::min(kTileQ, s.tq - i0);
      // Keys any row of this query tile may see: tiles outside are skipped whole.
      std::size_t lo = s.tk, hi = 0;
      for (std::size_t r = 0; r < rows; ++r) {
        const KeyRange kr = key_range(o.mask, i0 + r, s.tq, s.tk);
        if (kr.lo < kr.hi) {
          lo = std::min(lo, kr.lo);
          hi = std::max(hi, kr.hi);
        }
        st[r] = {-inf, T(0), T(0), false, 0};
        std::fill(yh + (i0 + r) * s.dv, yh + (i0 + r + 1) * s.dv, T(0));
      }
      bool inf_score[kTileQ] = {};

      for (std::size_t j0 = lo - lo % kTileK; j0 < hi; j0 += kTileK) {
        const std::size_t j1 = std::min(j0 + kTileK, s.tk);
        for (std::size_t r = 0; r < rows; ++r) {
          const std::size_t i = i0 + r;
          const KeyRange kr = key_range(o.mask, i, s.tq, s.tk);
          const std::size_t a = std::max(j0, kr.lo), b = std::min(j1, kr.hi);
          if (a >= b) continue;  // this row sees nothing in this key tile
          RowState<T>& rs = st[r];
          T* sc = tile.data() + r * kTileK;  // sc[j - j0] for key j
          const T* qi = qh + i * s.dk;
          // 1. Scores of the tile; forbidden keys are marked -inf (exp gives exactly 0).
          T tile_max = -inf;
          for (std::size_t j = a; j < b; ++j) {
            if (!pointwise_allowed(o.mask, i, j, s.tk)) {
              sc[j - j0] = -inf;
              continue;
            }
            const T sj = scale * dot(qi, kg + j * s.dk, s.dk);
            sc[j - j0] = sj;
            ++rs.allowed;
            inf_score[r] |= std::isinf(sj);
            rs.nan |= std::isnan(sj);
            tile_max = std::max(tile_max, sj);
          }
          if (rs.nan || tile_max == -inf) continue;  // nothing finite to add
          // 2. Online rescaling: a larger maximum shrinks what was summed so far by
          //    alpha = exp(m_old - m_new), keeping every exponent <= 0.
          const T m_new = std::max(rs.m, tile_max);
          T* y = yh + i * s.dv;
          if (m_new > rs.m) {
            if (rs.l > 0) {
              const T alpha = std::exp(rs.m - m_new);
              rs.t = alpha * (rs.t + rs.l * (rs.m - m_new));
              rs.l *= alpha;
              for (std::size_t c = 0; c < s.dv; ++c) y[c] *= alpha;
            }
            rs.m = m_new;
          }
          // 3. Accumulate this tile's exp(s - m), its entropy term and e * v. Dropout
          //    thins only e * v (l and t are the softmax's); kept terms carry 1/(1-p).
          const std::uint64_t drow = p > 0 ? dropout_row(o.dropout_seed, h, i) : 0;
          for (std::size_t j = a; j < b; ++j) {
            if (sc[j - j0] == -inf) continue;
            const T d = sc[j - j0] - rs.m;
            const T e = std::exp(d);
            rs.l += e;
            rs.t += e * d;
            if (p <= 0) {
              axpy(e, vg + j * s.dv, y, s.dv);
            } else if (dropout_keep_row(drow, j, p)) {
              axpy(e * keep_scale, vg + j * s.dv, y, s.dv);
            }
          }
        }
      }
      // 4. Finish each row: normalise, and derive lse and entropy from (m, l, t):
      //    lse = m + ln l;  entropy = -sum a ln a = ln l - t / l.
      for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t i = i0 + r, row = h * s.tq + i;
        RowState<T>& rs = st[r];
        T* y = yh + i * s.dv;
        T* lse = out->lse.data() + row;
        T* ent = out->entropy.data() + row;
        if (inf_score[r]) ++out->diag.inf_score_rows;
        if (rs.allowed == 0) {
          ++out->diag.fully_masked_rows;
          fully_masked_row<T>(o.fill, vg, s.tk, s.dv, nullptr, y, lse, ent, p,
                              p > 0 ? dropout_row(o.dropout_seed, h, i) : 0);
          if (o.fill == MaskFill::kNegInf) ++out->diag.nan_rows;
          continue;
        }
        // NaN score, +inf score (inf - inf), or every allowed score -inf (as NumPy: NaN).
        if (rs.nan || !(rs.l > 0) || std::isnan(rs.l) || rs.m == inf) {
          std::fill(y, y + s.dv, nan);
          *lse = nan;
          *ent = nan;
          ++out->diag.nan_rows;
          continue;
        }
        const T inv = T(1) / rs.l;
        bool nan_out = false;
        for (std::size_t c = 0; c < s.dv; ++c) {
          y[c] *= inv;
          nan_out |= std::isnan(y[c]);
        }
        *lse = rs.m + std::log(rs.l);
        *ent = std::log(rs.l) - rs.t * inv;
        if (nan_out) ++out->diag.nan_rows;
      }
    }
  }
}

}  // namespace attn::detail
