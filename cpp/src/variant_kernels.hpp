// Kernels of the attention variants (attn/variants.hpp); internal header.
// Callers have validated every argument (attn::validate) and sized every output. The default
// options never reach this file: they run the original kernels in kernels.hpp bit for bit.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "attn/dropout.hpp"
#include "attn/softmax.hpp"
#include "attn/tile_sizes.hpp"
#include "attn/types.hpp"
#include "attn/variant_grad.hpp"
#include "attn/variants.hpp"
#include "kernels.hpp"

namespace attn::detail {

// The rows of x (heads * n rows of d values) through vgrad::transform_row, in the order the
// definitions give: qkNorm (x / max(|x|_2, 1e-12)), RoPE (the pair (2p, 2p+1) of the row at
// position pos = r + offset rotated by pos * base^(-2p/d)), and linear's phi (elu + 1,
// Katharopoulos et al. 2020).
template <class T>
void transform_rows(T* x, std::size_t heads, std::size_t n, std::size_t d, long offset,
                    const Variant& v) {
  const std::vector<double> theta =
      v.position == Position::kRope ? vgrad::rope_thetas(d, v.rope_base) : std::vector<double>{};
  for (std::size_t r = 0; r < heads * n; ++r) {
    const double pos = static_cast<double>(static_cast<long>(r % n) + offset);
    vgrad::transform_row(x + r * d, d, pos, v, theta.empty() ? nullptr : theta.data());
  }
}

// Working copies of q (positions i' = i + T_k - T_q) and k (positions j), transformed.
template <class T>
void prepare_qk(const T* q, const T* k, const AttentionOptions& o, std::vector<T>* qt,
                std::vector<T>* kt) {
  const Shape& s = o.shape;
  qt->assign(q, q + s.heads * s.tq * s.dk);
  kt->assign(k, k + s.kv_heads * s.tk * s.dk);
  transform_rows(qt->data(), s.heads, s.tq, s.dk, static_cast<long>(s.tk) - static_cast<long>(s.tq),
                 o.variant);
  transform_rows(kt->data(), s.kv_heads, s.tk, s.dk, 0, o.variant);
}

// The score fed to the normalizer: linear's phi(q).phi(k) (scale not applied), else
// scale * q.k plus ALiBi's -m_h |i' - j| (slope 0 when ALiBi is off).
template <class T>
struct Scorer {
  const T* qi;
  const T* kg;
  std::size_t dk;
  T scale;
  bool linear;
  double slope;  // m_h, or 0
  double ipos;   // i'
  T operator()(std::size_t j) const {
    const T d = dot(qi, kg + j * dk, dk);
    if (linear) return d;
    T s = scale * d;
    if (slope != 0) s += static_cast<T>(-slope * std::abs(ipos - static_cast<double>(j)));
    return s;
  }
};

using vgrad::sigmoid;

// A row that no key may reach ('before'): softmax keeps its fill policy (kernels.hpp), except
// that maxShift false turns neg_inf's and finite's rows into 0/0 = NaN (exp(-1e9) is 0 too);
// every other normalizer gives a zero row (softmax1: lse = ln e^0 = 0, the sink alone).
template <class T>
void variant_fully_masked_row(const AttentionOptions& o, const T* vg, T* w, T* y, T* lse, T* ent,
                              T* rs, std::uint64_t drow) {
  const Shape& s = o.shape;
  const Variant& var = o.variant;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  if (var.normalizer == Normalizer::kSoftmax) {
    if (var.max_shift || o.fill == MaskFill::kZero) {
      fully_masked_row(o.fill, vg, s.tk, s.dv, w, y, lse, ent, o.dropout, drow);
      *rs = o.fill == MaskFill::kNegInf ? nan : o.fill == MaskFill::kFinite ? T(1) : T(0);
    } else {
      if (w) std::fill(w, w + s.tk, nan);
      std::fill(y, y + s.dv, nan);
      *lse = -std::numeric_limits<T>::infinity();  // ln sum e^s with every e^s = 0
      *ent = nan;
      *rs = nan;
    }
    return;
  }
  if (w) std::fill(w, w + s.tk, T(0));
  std::fill(y, y + s.dv, T(0));
  *lse = var.normalizer == Normalizer::kSoftmax1 ? T(0) : nan;
  *ent = 0;
  *rs = 0;
}

// The naive variant kernel, per head h and query row i:
//   0. (once) working copies of q and k through qkNorm -> RoPE -> phi;
//   1. scores over the row's domain: the allowed keys ('before') or all T_k keys ('after');
//   2. the normalizer over the domain (softmax/softmax1 shift by the maximum unless maxShift
//      is false; sigmoid, relu are pointwise; linear divides by its row sum + 1e-6);
//   3. 'after' zeroes the forbidden weights; every forbidden weight is exactly 0 either way;
//   4. output = sum over allowed keys of w_j v_j (a forbidden key's value never leaks in);
//      rowSums, entropy (-sum w ln w) and lse (softmax, softmax1; else NaN) of the weights.
template <class T>
void naive_variant_kernel(const T* q, const T* k, const T* v, const AttentionOptions& o, T scale,
                          AttentionResult<T>* out) {
  const Shape& s = o.shape;
  const Variant& var = o.variant;
  const std::size_t group = s.heads / s.kv_heads;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const bool linear = var.normalizer == Normalizer::kLinear;
  const bool after = var.mask_mode == MaskMode::kAfter;
  std::vector<T> qt, kt;
  if (var.transforms_qk()) {
    prepare_qk(q, k, o, &qt, &kt);
    q = qt.data(), k = kt.data();
  }
  const std::vector<double> slopes =
      var.position == Position::kAlibi ? alibi_slopes(s.heads) : std::vector<double>{};
  const T bias = static_cast<T>(effective_sigmoid_bias(var, s.tk));
  const double p = o.dropout;
  const T keep_scale = static_cast<T>(1 / (1 - p));
  std::vector<unsigned char> allowed(s.tk);
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t g = h / group;
    const T* kg = k + g * s.tk * s.dk;  // (T_k, d_k)
    const T* vg = v + g * s.tk * s.dv;  // (T_k, d_v)
    for (std::size_t i = 0; i < s.tq; ++i) {
      const std::size_t row = h * s.tq + i;
      const std::uint64_t drow = p > 0 ? dropout_row(o.dropout_seed, h, i) : 0;
      T* w = out->weights.data() + row * s.tk;
      T* y = out->output.data() + row * s.dv;
      T* lse = out->lse.data() + row;
      T* ent = out->entropy.data() + row;
      T* rs = out->row_sums.data() + row;
      const Scorer<T> score{
          q + row * s.dk,
          kg,
          s.dk,
          scale,
          linear,
          slopes.empty() ? 0.0 : slopes[h],
          static_cast<double>(i) + static_cast<double>(s.tk) - static_cast<double>(s.tq)};
      std::size_t n_allowed = 0;
      for (std::size_t j = 0; j < s.tk; ++j) {
        allowed[j] = is_allowed(o.mask, i, j, s.tq, s.tk);
        n_allowed += allowed[j];
      }
      bool inf_score = false;
      if (o.return_scores) {
        T* sc = out->scores.data() + row * s.tk;
        for (std::size_t j = 0; j < s.tk; ++j) {
          sc[j] = score(j);
          inf_score |= std::isinf(sc[j]);
        }
      }
      if (n_allowed == 0) ++out->diag.fully_masked_rows;
      if (n_allowed == 0 && !after) {
        if (inf_score) ++out->diag.inf_score_rows;
        variant_fully_masked_row(o, vg, w, y, lse, ent, rs, drow);
        continue;
      }
      auto in_domain = [&](std::size_t j) { return after || allowed[j]; };
      // 1. Scores of the domain.
      std::fill(w, w + s.tk, T(0));
      for (std::size_t j = 0; j < s.tk; ++j) {
        if (!in_domain(j)) continue;
        w[j] = score(j);
        inf_score |= std::isinf(w[j]);
      }
      if (inf_score) ++out->diag.inf_score_rows;
      // 2. The normalizer.
      *lse = nan;
      switch (var.normalizer) {
        case Normalizer::kSoftmax:
        case Normalizer::kSoftmax1: {
          const bool one = var.normalizer == Normalizer::kSoftmax1;
          // m: the row maximum (softmax1: at least the sink's 0), NaN-propagating; 0 unshifted.
          T m = 0;
          if (var.max_shift) {
            m = one ? T(0) : -std::numeric_limits<T>::infinity();
            bool has_nan = false;
            for (std::size_t j = 0; j < s.tk; ++j) {
              if (!in_domain(j)) continue;
              has_nan |= std::isnan(w[j]);
              m = std::max(m, w[j]);
            }
            if (has_nan) m = nan;
          }
          T l = one ? std::exp(-m) : T(0);  // the sink's e^(0 - m)
          for (std::size_t j = 0; j < s.tk; ++j) {
            if (!in_domain(j)) continue;
            w[j] = std::exp(w[j] - m);
            l += w[j];
          }
          for (std::size_t j = 0; j < s.tk; ++j) {
            if (in_domain(j)) w[j] /= l;
          }
          *lse = m + std::log(l);
          break;
        }
        case Normalizer::kSigmoid:
          for (std::size_t j = 0; j < s.tk; ++j) {
            if (in_domain(j)) w[j] = sigmoid(w[j] + bias);
          }
          break;
        case Normalizer::kRelu:
          for (std::size_t j = 0; j < s.tk; ++j) {
            if (in_domain(j) && !std::isnan(w[j]))
              w[j] = std::max(w[j], T(0)) / static_cast<T>(s.tk);
          }
          break;
        case Normalizer::kLinear: {
          T sum = 0;
          for (std::size_t j = 0; j < s.tk; ++j) {
            if (in_domain(j)) sum += w[j];
          }
          const T den = sum + static_cast<T>(kLinearEps);
          for (std::size_t j = 0; j < s.tk; ++j) {
            if (in_domain(j)) w[j] /= den;
          }
          break;
        }
      }
      // 3. 'after': the lesson's wrong way, forbidden weights zeroed after normalising.
      if (after) {
        for (std::size_t j = 0; j < s.tk; ++j) {
          if (!allowed[j]) w[j] = 0;
        }
      }
      // 4. Output over the allowed keys, then the row's sums.
      std::fill(y, y + s.dv, T(0));
      T sum = 0;
      for (std::size_t j = 0; j < s.tk; ++j) {
        sum += w[j];
        if (!allowed[j]) continue;
        if (p <= 0) {
          axpy(w[j], vg + j * s.dv, y, s.dv);
        } else if (dropout_keep_row(drow, j, p)) {
          axpy(w[j] * keep_scale, vg + j * s.dv, y, s.dv);
        }
      }
      *rs = sum;
      *ent = row_entropy(w, s.tk);
    }
  }
}

// The emulated binary16 kernel (softmax; no position, no qkNorm; validated), with h = round to
// nearest binary16 (round_to_half) and every sum a float32 loop over j ascending:
//   q, k, v <- h(.);  s = h(scale * (q . k));  forbidden s = h(fill) ('before': -1e9 is -inf in
//   binary16, so a fully masked row is NaN under 'finite' too; 'zero' keeps its zero row);
//   m = row max (0 without the shift);  e = h(exp(s - m));  l = h(sum e);  w = h(e / l);
//   'after' zeroes the forbidden w;  output = h(sum_j w v) over the row's keys.
// lse = h(m + ln l); entropy and rowSums in float32 from the binary16 weights.
inline void fp16_kernel(const float* q, const float* k, const float* v, const AttentionOptions& o,
                        float scale, AttentionResult<float>* out) {
  const Shape& s = o.shape;
  const Variant& var = o.variant;
  const std::size_t group = s.heads / s.kv_heads;
  const bool after = var.mask_mode == MaskMode::kAfter;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto h16 = [](const float* x, std::size_t n) {
    std::vector<float> r(n);
    for (std::size_t c = 0; c < n; ++c) r[c] = round_to_half(x[c]);
    return r;
  };
  const std::vector<float> hq = h16(q, s.heads * s.tq * s.dk),
                           hk = h16(k, s.kv_heads * s.tk * s.dk),
                           hv = h16(v, s.kv_heads * s.tk * s.dv);
  const float hscale = scale;  // scale multiplies in float32 (not rounded itself)
  const float fill =
      round_to_half(o.fill == MaskFill::kFinite ? static_cast<float>(kFiniteMaskValue)
                                                : -std::numeric_limits<float>::infinity());
  std::vector<unsigned char> allowed(s.tk);
  std::vector<float> acc(s.dv);
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t g = h / group;
    const float* kg = hk.data() + g * s.tk * s.dk;
    const float* vg = hv.data() + g * s.tk * s.dv;
    for (std::size_t i = 0; i < s.tq; ++i) {
      const std::size_t row = h * s.tq + i;
      const float* qi = hq.data() + row * s.dk;
      float* w = out->weights.data() + row * s.tk;
      float* y = out->output.data() + row * s.dv;
      std::size_t n_allowed = 0;
      for (std::size_t j = 0; j < s.tk; ++j) {
        allowed[j] = is_allowed(o.mask, i, j, s.tq, s.tk);
        n_allowed += allowed[j];
      }
      if (n_allowed == 0) ++out->diag.fully_masked_rows;
      // 1. Scores: float32 dot product in order, times scale in float32, rounded once.
      bool inf_score = false;
      for (std::size_t j = 0; j < s.tk; ++j) {
        float d = 0;
        for (std::size_t c = 0; c < s.dk; ++c) d += qi[c] * kg[j * s.dk + c];
        const float sj = round_to_half(hscale * d);
        if (o.return_scores) out->scores.data()[row * s.tk + j] = sj;
        if (allowed[j] || after) inf_score |= std::isinf(sj);
        w[j] = (allowed[j] || after) ? sj : fill;
      }
      if (inf_score) ++out->diag.inf_score_rows;
      if (n_allowed == 0 && !after && o.fill == MaskFill::kZero) {
        std::fill(w, w + s.tk, 0.0f);
        std::fill(y, y + s.dv, 0.0f);
        out->lse.data()[row] = -std::numeric_limits<float>::infinity();
        out->entropy.data()[row] = 0;
        out->row_sums.data()[row] = 0;
        continue;
      }
      // 2. Shifted exponentials, their sum and the weights, each rounded to binary16.
      float m = 0;
      if (var.max_shift) {
        m = -std::numeric_limits<float>::infinity();
        bool has_nan = false;
        for (std::size_t j = 0; j < s.tk; ++j) {
          has_nan |= std::isnan(w[j]);
          m = std::max(m, w[j]);
        }
        if (has_nan) m = nan;
      }
      float l = 0;
      for (std::size_t j = 0; j < s.tk; ++j) {
        w[j] = round_to_half(std::exp(w[j] - m));
        l += w[j];
      }
      l = round_to_half(l);
      for (std::size_t j = 0; j < s.tk; ++j) w[j] = round_to_half(w[j] / l);
      if (after) {
        for (std::size_t j = 0; j < s.tk; ++j) {
          if (!allowed[j]) w[j] = 0;
        }
      }
      // 3. Output: the row's keys (the allowed ones; all of them for a fully masked row, whose
      //    fill made them the row), summed in float32, rounded once.
      const bool all_keys = n_allowed == 0 && !after;
      std::fill(acc.begin(), acc.end(), 0.0f);
      float sum = 0;
      for (std::size_t j = 0; j < s.tk; ++j) {
        sum += w[j];
        if (!allowed[j] && !all_keys) continue;
        for (std::size_t c = 0; c < s.dv; ++c) acc[c] += w[j] * vg[j * s.dv + c];
      }
      for (std::size_t c = 0; c < s.dv; ++c) y[c] = round_to_half(acc[c]);
      out->lse.data()[row] = round_to_half(m + std::log(l));
      out->entropy.data()[row] = row_entropy(w, s.tk);
      out->row_sums.data()[row] = sum;
    }
  }
}

// Online state of one query row in the tiled variant kernel.
template <class T>
struct VariantRow {
  T m;  // softmax/softmax1: running maximum (softmax1 starts at the sink's 0)
  T l;  // softmax/softmax1: sum of e^(s - m) over real keys; sigmoid/relu: sum of w
  T t;  // softmax/softmax1: sum of e^(s - m)(s - m); sigmoid/relu: sum of w ln w
  bool nan;
  std::size_t allowed;
};

// The tiled variant kernel (softmax, softmax1, sigmoid, relu; every position and qkNorm;
// 'before', maxShift true): keys stream past in tiles of kTileK per query row, never a T x T
// matrix.
//   softmax, softmax1: the online softmax of kernels.hpp (m, l, t and the unnormalised output
//     rescaled by e^(m_old - m_new) when the maximum grows); softmax1 starts m at 0 and adds
//     its sink e^(0 - m) to the denominator L = l + e^-m at the end, so w sums to l / L;
//     entropy = ln L * (l / L) - t / L, lse = m + ln L;
//   sigmoid, relu: pointwise, so each tile adds w v, w and w ln w straight away.
template <class T>
void tiled_variant_kernel(const T* q, const T* k, const T* v, const AttentionOptions& o, T scale,
                          AttentionResult<T>* out) {
  const Shape& s = o.shape;
  const Variant& var = o.variant;
  const std::size_t group = s.heads / s.kv_heads;
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> qt, kt;
  if (var.transforms_qk()) {
    prepare_qk(q, k, o, &qt, &kt);
    q = qt.data(), k = kt.data();
  }
  const std::vector<double> slopes =
      var.position == Position::kAlibi ? alibi_slopes(s.heads) : std::vector<double>{};
  const T bias = static_cast<T>(effective_sigmoid_bias(var, s.tk));
  const bool online =
      var.normalizer == Normalizer::kSoftmax || var.normalizer == Normalizer::kSoftmax1;
  const bool one = var.normalizer == Normalizer::kSoftmax1;
  const double p = o.dropout;
  const T keep_scale = static_cast<T>(1 / (1 - p));
  std::vector<T> tile(kTileK);
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t g = h / group;
    const T* kg = k + g * s.tk * s.dk;
    const T* vg = v + g * s.tk * s.dv;
    for (std::size_t i = 0; i < s.tq; ++i) {
      const std::size_t row = h * s.tq + i;
      const std::uint64_t drow = p > 0 ? dropout_row(o.dropout_seed, h, i) : 0;
      T* y = out->output.data() + row * s.dv;
      T* lse = out->lse.data() + row;
      T* ent = out->entropy.data() + row;
      T* rs = out->row_sums.data() + row;
      const Scorer<T> score{
          q + row * s.dk,
          kg,
          s.dk,
          scale,
          false,
          slopes.empty() ? 0.0 : slopes[h],
          static_cast<double>(i) + static_cast<double>(s.tk) - static_cast<double>(s.tq)};
      std::fill(y, y + s.dv, T(0));
      VariantRow<T> st{one ? T(0) : -inf, T(0), T(0), false, 0};
      bool inf_score = false;
      const KeyRange kr = key_range(o.mask, i, s.tq, s.tk);
      for (std::size_t j0 = kr.lo; j0 < kr.hi; j0 += kTileK) {
        const std::size_t j1 = std::min(j0 + kTileK, kr.hi);
        // 1. The tile's scores; forbidden keys are -inf (skipped below).
        T tile_max = -inf;
        for (std::size_t j = j0; j < j1; ++j) {
          if (!pointwise_allowed(o.mask, i, j, s.tk)) {
            tile[j - j0] = -inf;
            continue;
          }
          const T sj = score(j);
          tile[j - j0] = sj;
          ++st.allowed;
          inf_score |= std::isinf(sj);
          st.nan |= std::isnan(sj);
          tile_max = std::max(tile_max, sj);
        }
        if (!online) {
          // 2'. Pointwise: w = f(s), accumulated at once.
          for (std::size_t j = j0; j < j1; ++j) {
            if (!pointwise_allowed(o.mask, i, j, s.tk)) continue;
            const T sj = tile[j - j0];
            const T wj = var.normalizer == Normalizer::kSigmoid
                             ? sigmoid(sj + bias)
                             : (std::isnan(sj) ? sj : std::max(sj, T(0)) / static_cast<T>(s.tk));
            st.l += wj;
            if (wj > 0) st.t += wj * std::log(wj);
            if (std::isnan(wj)) st.nan = true;
            if (p <= 0) {
              axpy(wj, vg + j * s.dv, y, s.dv);
            } else if (dropout_keep_row(drow, j, p)) {
              axpy(wj * keep_scale, vg + j * s.dv, y, s.dv);
            }
          }
          continue;
        }
        if (st.nan || tile_max == -inf) continue;
        // 2. Online rescaling when the maximum grows.
        const T m_new = std::max(st.m, tile_max);
        if (m_new > st.m) {
          if (st.l > 0) {
            const T alpha = std::exp(st.m - m_new);
            st.t = alpha * (st.t + st.l * (st.m - m_new));
            st.l *= alpha;
            for (std::size_t c = 0; c < s.dv; ++c) y[c] *= alpha;
          }
          st.m = m_new;
        }
        // 3. This tile's e^(s - m), its entropy term and e v.
        for (std::size_t j = j0; j < j1; ++j) {
          if (tile[j - j0] == -inf) continue;
          const T d = tile[j - j0] - st.m;
          const T e = std::exp(d);
          st.l += e;
          st.t += e * d;
          if (p <= 0) {
            axpy(e, vg + j * s.dv, y, s.dv);
          } else if (dropout_keep_row(drow, j, p)) {
            axpy(e * keep_scale, vg + j * s.dv, y, s.dv);
          }
        }
      }
      // 4. Finish the row.
      if (inf_score) ++out->diag.inf_score_rows;
      if (st.allowed == 0) {
        ++out->diag.fully_masked_rows;
        variant_fully_masked_row<T>(o, vg, nullptr, y, lse, ent, rs, drow);
        continue;
      }
      if (!online) {
        *lse = nan;
        *rs = st.nan ? nan : st.l;
        *ent = st.nan ? nan : -st.t;
        if (st.nan) std::fill(y, y + s.dv, nan);
        continue;
      }
      const T big_l = st.l + (one ? std::exp(-st.m) : T(0));
      if (st.nan || st.m == inf || !(big_l > 0)) {  // NaN, +inf, or softmax over -inf only
        std::fill(y, y + s.dv, nan);
        *lse = *ent = *rs = nan;
        continue;
      }
      for (std::size_t c = 0; c < s.dv; ++c) y[c] /= big_l;
      *rs = st.l / big_l;
      *lse = st.m + std::log(big_l);
      *ent = std::log(big_l) * *rs - st.t / big_l;
    }
  }
}

// Linear attention in its causal prefix-sum form (Katharopoulos et al. 2020), per head:
//   S_i = sum_{j <= i'} phi(k_j) v_j^T (d_k x d_v),  z_i = sum_{j <= i'} phi(k_j) (d_k),
//   output_i = phi(q_i)^T S_i / (phi(q_i) . z_i + 1e-6),
// O(T d_k d_v) time and O(d_k d_v) state: no T x T matrix and no weights. Without a mask S and
// z hold every key. rowSums = phi(q).z / (phi(q).z + 1e-6); entropy is not available from
// this form (NaN) and lse is NaN as for every non-softmax normalizer.
template <class T>
void linear_prefix_kernel(const T* q, const T* k, const T* v, const AttentionOptions& o,
                          AttentionResult<T>* out) {
  const Shape& s = o.shape;
  const std::size_t group = s.heads / s.kv_heads;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> qt, kt;
  prepare_qk(q, k, o, &qt, &kt);  // phi (after qkNorm and RoPE)
  std::vector<T> state(s.dk * s.dv), z(s.dk);
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t g = h / group;
    const T* kg = kt.data() + g * s.tk * s.dk;
    const T* vg = v + g * s.tk * s.dv;
    std::fill(state.begin(), state.end(), T(0));
    std::fill(z.begin(), z.end(), T(0));
    std::size_t next = 0;  // keys [0, next) are in S and z
    for (std::size_t i = 0; i < s.tq; ++i) {
      const std::size_t row = h * s.tq + i;
      // Keys j <= i' = i + T_k - T_q (all keys without the causal mask).
      const long ip = static_cast<long>(i) + static_cast<long>(s.tk) - static_cast<long>(s.tq);
      const std::size_t hi =
          o.mask.causal ? static_cast<std::size_t>(std::clamp(ip + 1, 0L, static_cast<long>(s.tk)))
                        : s.tk;
      for (; next < hi; ++next) {
        const T* kj = kg + next * s.dk;
        const T* vj = vg + next * s.dv;
        for (std::size_t a = 0; a < s.dk; ++a) {
          z[a] += kj[a];
          axpy(kj[a], vj, state.data() + a * s.dv, s.dv);
        }
      }
      T* y = out->output.data() + row * s.dv;
      out->lse.data()[row] = nan;
      out->entropy.data()[row] = nan;
      if (hi == 0) {
        ++out->diag.fully_masked_rows;
        std::fill(y, y + s.dv, T(0));
        out->row_sums.data()[row] = 0;
        continue;
      }
      const T* qi = qt.data() + row * s.dk;
      std::fill(y, y + s.dv, T(0));
      for (std::size_t a = 0; a < s.dk; ++a) axpy(qi[a], state.data() + a * s.dv, y, s.dv);
      const T den = dot(qi, z.data(), s.dk);
      const T div = den + static_cast<T>(kLinearEps);
      for (std::size_t c = 0; c < s.dv; ++c) y[c] /= div;
      out->row_sums.data()[row] = den / div;
    }
  }
}

}  // namespace attn::detail
