#include "attn/tiled.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "checked.hpp"
#include "diagnostics.hpp"
#include "kernels.hpp"

namespace attn {

std::size_t tiled_workspace_bytes(const Shape& s, std::size_t elem) {
  (void)s;
  // Score tile plus per-row running state (m, l, t) and flags.
  return (kTileQ * kTileK + 3 * kTileQ) * elem + 2 * kTileQ * sizeof(std::size_t);
}

namespace {

// Online-softmax state of one query row while key tiles stream past.
template <class T>
struct RowState {
  T m;  // running maximum of the scores seen
  T l;  // running sum of exp(s - m)
  T t;  // running sum of exp(s - m) * (s - m), for the entropy
  bool nan;
  std::size_t allowed;
};

template <class T>
void tiled_kernel(const T* q, const T* k, const T* v, const AttentionOptions& o, T scale,
                  AttentionResult<T>* out) {
  const Shape& s = o.shape;
  const std::size_t group = s.heads / s.kv_heads;
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> tile(kTileQ * kTileK);  // scores of one (query tile, key tile) pair
  std::vector<RowState<T>> st(kTileQ);

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
            if (!detail::pointwise_allowed(o.mask, i, j, s.tk)) {
              sc[j - j0] = -inf;
              continue;
            }
            const T sj = scale * detail::dot(qi, kg + j * s.dk, s.dk);
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
          // 3. Accumulate this tile's exp(s - m), its entropy term and e * v.
          for (std::size_t j = a; j < b; ++j) {
            if (sc[j - j0] == -inf) continue;
            const T d = sc[j - j0] - rs.m;
            const T e = std::exp(d);
            rs.l += e;
            rs.t += e * d;
            detail::axpy(e, vg + j * s.dv, y, s.dv);
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
          detail::fully_masked_row<T>(o.fill, vg, s.tk, s.dv, nullptr, y, lse, ent);
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

}  // namespace

template <class T>
Status attention_tiled(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                       std::size_t v_len, const AttentionOptions& opts, AttentionResult<T>* out) {
  const Shape& s = opts.shape;
  Status st = validate(opts, q_len, k_len, v_len, s.tk, s.tq * s.tk, false);
  if (!st.ok()) return st;
  out->output.resize({s.heads, s.tq, s.dv});
  out->weights.resize({0, 0, 0});
  out->scores.resize({0, 0, 0});
  out->entropy.resize({s.heads, s.tq});
  out->lse.resize({s.heads, s.tq});
  out->diag = {};
  tiled_kernel(q, k, v, opts, static_cast<T>(effective_scale(opts)), out);
  out->diag.nan_rows = detail::count_nan_rows(*out, s.heads * s.tq);  // see diagnostics.hpp
  return Status::Ok();
}

template Status attention_tiled<float>(const float*, std::size_t, const float*, std::size_t,
                                       const float*, std::size_t, const AttentionOptions&,
                                       AttentionResult<float>*);
template Status attention_tiled<double>(const double*, std::size_t, const double*, std::size_t,
                                        const double*, std::size_t, const AttentionOptions&,
                                        AttentionResult<double>*);

}  // namespace attn
