#include "variant_attention.hpp"

#include <algorithm>
#include <cmath>

#include "attn/dropout.hpp"
#include "attn/variant_grad.hpp"

namespace attn::tr::varattn {

namespace {

template <class T>
T dot(const T* a, const T* b, std::size_t n) {
  T s = 0;
  for (std::size_t e = 0; e < n; ++e) s += a[e] * b[e];
  return s;
}

// RoPE tables for positions 0..t-1: cos and sin of pos * 10000^(-2p/dh), (t, dh/2), in double
// then rounded to T (the core's angles, vgrad::rope_thetas, computed once per call).
template <class T>
void rope_tables(std::size_t t, std::size_t dh, std::vector<T>* cs, std::vector<T>* sn) {
  const std::size_t half = dh / 2;
  const std::vector<double> theta = vgrad::rope_thetas(dh, kDefaultRopeBase);
  cs->resize(t * half);
  sn->resize(t * half);
  for (std::size_t i = 0; i < t; ++i)
    for (std::size_t p = 0; p < half; ++p) {
      const double a = static_cast<double>(i) * theta[p];
      (*cs)[i * half + p] = static_cast<T>(std::cos(a));
      (*sn)[i * half + p] = static_cast<T>(std::sin(a));
    }
}

// Every pair of a row rotated by its position's angles (vgrad::rope_rotate), or back (the
// transpose, vgrad::rope_rotate_back).
template <class T>
void rotate(T* x, std::size_t dh, const T* cs, const T* sn, bool back) {
  for (std::size_t p = 0; p < dh / 2; ++p) {
    if (back) {
      vgrad::rope_rotate_back(&x[2 * p], &x[2 * p + 1], cs[p], sn[p]);
    } else {
      vgrad::rope_rotate(&x[2 * p], &x[2 * p + 1], cs[p], sn[p]);
    }
  }
}

// Pass 1 of both directions: q, k -> q', k' (qkNorm, then RoPE), and phi for linear.
// rows: (n, t, dh) heads of t rows each; norm: (n*t) or unused.
template <class T>
void prepare(const VariantCall& vc, const T* x, std::size_t n, const std::vector<T>& cs,
             const std::vector<T>& sn, std::vector<T>* xp, std::vector<T>* xf,
             std::vector<T>* norm) {
  const std::size_t t = vc.t, dh = vc.dh;
  xp->assign(x, x + n * t * dh);
  if (vc.qk_norm) norm->resize(n * t);
  for (std::size_t r = 0; r < n * t; ++r) {
    T* row = xp->data() + r * dh;
    if (vc.qk_norm) {
      double ss = 0;
      for (std::size_t e = 0; e < dh; ++e) ss += static_cast<double>(row[e]) * row[e];
      const T nr = static_cast<T>(std::max(std::sqrt(ss), kQkNormEps));
      (*norm)[r] = nr;
      for (std::size_t e = 0; e < dh; ++e) row[e] /= nr;
    }
    if (vc.position == Position::kRope) {
      const std::size_t i = r % t;
      rotate(row, dh, cs.data() + i * (dh / 2), sn.data() + i * (dh / 2), false);
    }
  }
  if (vc.normalizer == Normalizer::kLinear) {
    xf->resize(xp->size());
    for (std::size_t e = 0; e < xp->size(); ++e) (*xf)[e] = vgrad::phi((*xp)[e]);
  }
}

// Weights of row i of query head bh (keys 0..i) into w[0..i]; *z gets linear's denominator.
template <class T>
void row_weights(const VariantCall& vc, const VariantCache<T>& c, std::size_t bh, std::size_t kv,
                 std::size_t i, T slope, T* w, T* z) {
  const std::size_t t = vc.t, dh = vc.dh;
  if (vc.normalizer == Normalizer::kLinear) {
    const T* qi = c.qf.data() + (bh * t + i) * dh;
    const T* kb = c.kf.data() + kv * t * dh;
    T sum = 0;
    for (std::size_t j = 0; j <= i; ++j) {
      w[j] = dot(qi, kb + j * dh, dh);
      sum += w[j];
    }
    const T zz = sum + static_cast<T>(kLinearEps);
    for (std::size_t j = 0; j <= i; ++j) w[j] /= zz;
    *z = zz;
    return;
  }
  const T* qi = c.qp.data() + (bh * t + i) * dh;
  const T* kb = c.kp.data() + kv * t * dh;
  const T scale = static_cast<T>(vc.scale);
  for (std::size_t j = 0; j <= i; ++j) {
    w[j] = scale * dot(qi, kb + j * dh, dh);
    if (vc.position == Position::kAlibi) w[j] -= slope * static_cast<T>(i - j);
  }
  switch (vc.normalizer) {
    case Normalizer::kSoftmax:
    case Normalizer::kSoftmax1: {
      T m = w[0];
      for (std::size_t j = 1; j <= i; ++j) m = std::max(m, w[j]);
      // softmax1: m' = max(0, m) and the sink adds e^(0 - m') to the sum.
      T l = 0;
      if (vc.normalizer == Normalizer::kSoftmax1) {
        m = std::max(m, T(0));
        l = std::exp(-m);
      }
      for (std::size_t j = 0; j <= i; ++j) {
        w[j] = std::exp(w[j] - m);
        l += w[j];
      }
      for (std::size_t j = 0; j <= i; ++j) w[j] /= l;
      break;
    }
    case Normalizer::kSigmoid: {
      const T b = static_cast<T>(vc.sigmoid_bias);
      for (std::size_t j = 0; j <= i; ++j) w[j] = T(1) / (T(1) + std::exp(-(w[j] + b)));
      break;
    }
    case Normalizer::kRelu: {
      const T inv = T(1) / static_cast<T>(vc.context);
      for (std::size_t j = 0; j <= i; ++j) w[j] = std::max(w[j], T(0)) * inv;
      break;
    }
    case Normalizer::kLinear:
      break;
  }
}

}  // namespace

template <class T>
void variant_forward(const VariantCall& vc, const T* q, const T* k, const T* v,
                     VariantCache<T>* cache, AttentionResult<T>* out) {
  const std::size_t B = vc.batch, H = vc.heads, Hkv = vc.kv_heads, t = vc.t, dh = vc.dh;
  const std::size_t grp = H / Hkv;
  std::vector<T> cs, sn;
  if (vc.position == Position::kRope) rope_tables(t, dh, &cs, &sn);
  // Pass 1: q', k' (and phi) for every row.
  prepare(vc, q, B * H, cs, sn, &cache->qp, &cache->qf, &cache->qnorm);
  prepare(vc, k, B * Hkv, cs, sn, &cache->kp, &cache->kf, &cache->knorm);
  const std::vector<double> slopes =
      vc.position == Position::kAlibi ? alibi_slopes(H) : std::vector<double>(H, 0.0);
  out->output = xt::xtensor<T, 3>::from_shape({B * H, t, dh});
  std::fill(out->output.begin(), out->output.end(), T(0));
  if (vc.keep_weights) {
    out->weights = xt::xtensor<T, 3>::from_shape({B * H, t, t});
    std::fill(out->weights.begin(), out->weights.end(), T(0));
    if (vc.normalizer == Normalizer::kLinear) cache->z.resize(B * H * t);
  } else {
    out->weights = xt::xtensor<T, 3>::from_shape({0, 0, 0});
  }
  const T keep_scale = static_cast<T>(1.0 / (1.0 - vc.dropout));
  std::vector<T> w(t);
  // Pass 2: per row, the weights (kept for the naive kernel), then O_i = sum_j w~_ij v_j.
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t bh = b * H + h, kv = b * Hkv + h / grp;
      const T* vb = v + kv * t * dh;
      for (std::size_t i = 0; i < t; ++i) {
        T z = 0;
        row_weights(vc, *cache, bh, kv, i, static_cast<T>(slopes[h]), w.data(), &z);
        if (vc.keep_weights) {
          std::copy_n(w.data(), i + 1, out->weights.data() + (bh * t + i) * t);
          if (vc.normalizer == Normalizer::kLinear) cache->z[bh * t + i] = z;
        }
        const std::uint64_t drow = dropout_row(vc.dropout_seed, bh, i);
        T* o = out->output.data() + (bh * t + i) * dh;
        for (std::size_t j = 0; j <= i; ++j) {
          T wj = w[j];
          if (vc.dropout > 0) wj = dropout_keep_row(drow, j, vc.dropout) ? wj * keep_scale : T(0);
          for (std::size_t e = 0; e < dh; ++e) o[e] += wj * vb[j * dh + e];
        }
      }
    }
}

template <class T>
void variant_backward(const VariantCall& vc, const T* q, const T* k, const T* v, const T* d_out,
                      const VariantCache<T>& cache, const AttentionResult<T>& fwd,
                      AttentionGrads<T>* grads, double* score_grad) {
  const std::size_t B = vc.batch, H = vc.heads, Hkv = vc.kv_heads, t = vc.t, dh = vc.dh;
  const std::size_t grp = H / Hkv;
  const bool linear = vc.normalizer == Normalizer::kLinear;
  // d q' and d k' (d phi(q'), d phi(k') for linear) accumulate here, then go back through
  // phi, RoPE and qkNorm into grads->dq, dk.
  std::vector<T> dqp(B * H * t * dh, T(0)), dkp(B * Hkv * t * dh, T(0));
  grads->dv = xt::xtensor<T, 3>::from_shape({B * Hkv, t, dh});
  std::fill(grads->dv.begin(), grads->dv.end(), T(0));
  const std::vector<double> slopes =
      vc.position == Position::kAlibi ? alibi_slopes(H) : std::vector<double>(H, 0.0);
  if (score_grad) std::fill(score_grad, score_grad + H, 0.0);
  const T keep_scale = static_cast<T>(1.0 / (1.0 - vc.dropout));
  const T scale = linear ? T(1) : static_cast<T>(vc.scale);
  const T inv_t = T(1) / static_cast<T>(vc.context);  // relu's divisor
  std::vector<T> w(t), dp(t);
  std::vector<std::uint8_t> kept(t);
  // Pass 1: per row, dV, dP and the normalizer's Jacobian, then dq' and dk'.
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t bh = b * H + h, kv = b * Hkv + h / grp;
      const T* vb = v + kv * t * dh;
      T* dvb = grads->dv.data() + kv * t * dh;
      const T* qs = (linear ? cache.qf : cache.qp).data();
      const T* ks = (linear ? cache.kf : cache.kp).data() + kv * t * dh;
      T* dkb = dkp.data() + kv * t * dh;
      for (std::size_t i = 0; i < t; ++i) {
        T z = 0;
        if (vc.keep_weights) {
          std::copy_n(fwd.weights.data() + (bh * t + i) * t, i + 1, w.data());
          if (linear) z = cache.z[bh * t + i];
        } else {
          row_weights(vc, cache, bh, kv, i, static_cast<T>(slopes[h]), w.data(), &z);
        }
        const T* dO = d_out + (bh * t + i) * dh;
        const std::uint64_t drow = dropout_row(vc.dropout_seed, bh, i);
        T sum = 0;  // sum_k w_ik dP_ik
        for (std::size_t j = 0; j <= i; ++j) {
          const bool keep = dropout_keep_row(drow, j, vc.dropout);
          const T f = vc.dropout > 0 ? (keep ? keep_scale : T(0)) : T(1);
          const T wt = w[j] * f;
          for (std::size_t e = 0; e < dh; ++e) dvb[j * dh + e] += wt * dO[e];
          dp[j] = dot(dO, vb + j * dh, dh) * f;
          sum += w[j] * dp[j];
        }
        // dS (or dA) into dp.
        for (std::size_t j = 0; j <= i; ++j) {
          switch (vc.normalizer) {
            case Normalizer::kSoftmax:
            case Normalizer::kSoftmax1:
              dp[j] = w[j] * (dp[j] - sum);
              break;
            case Normalizer::kSigmoid:
              dp[j] = dp[j] * w[j] * (T(1) - w[j]);
              break;
            case Normalizer::kRelu:
              dp[j] = w[j] > 0 ? dp[j] * inv_t : T(0);
              break;
            case Normalizer::kLinear:
              dp[j] = (dp[j] - sum) / z;
              break;
          }
          if (score_grad) score_grad[h] += std::abs(static_cast<double>(dp[j]));
        }
        const T* qi = qs + (bh * t + i) * dh;
        T* dqi = dqp.data() + (bh * t + i) * dh;
        for (std::size_t j = 0; j <= i; ++j) {
          const T g = scale * dp[j];
          for (std::size_t e = 0; e < dh; ++e) {
            dqi[e] += g * ks[j * dh + e];
            dkb[j * dh + e] += g * qi[e];
          }
        }
      }
    }
  if (score_grad) {
    const double cells = double(B) * double(t) * double(t + 1) / 2;
    for (std::size_t h = 0; h < H; ++h) score_grad[h] /= cells;
  }
  // Pass 2: back through phi (linear), RoPE and qkNorm, row by row.
  std::vector<T> cs, sn;
  if (vc.position == Position::kRope) rope_tables(t, dh, &cs, &sn);
  auto back = [&](std::vector<T>& dx, const std::vector<T>& xp, const T* x,
                  const std::vector<T>& norm, std::size_t n, xt::xtensor<T, 3>* out) {
    *out = xt::xtensor<T, 3>::from_shape({n, t, dh});
    for (std::size_t r = 0; r < n * t; ++r) {
      T* g = dx.data() + r * dh;
      if (linear)
        for (std::size_t e = 0; e < dh; ++e) g[e] *= vgrad::phi_grad(xp[r * dh + e]);
      if (vc.position == Position::kRope) {
        const std::size_t i = r % t;
        rotate(g, dh, cs.data() + i * (dh / 2), sn.data() + i * (dh / 2), true);
      }
      if (vc.qk_norm) {
        // x^ = x / nr; nr = |x| if above the floor (then dx = (g - x^ (x^ . g)) / nr),
        // else the constant floor (dx = g / nr).
        const T nr = norm[r];
        const T* xr = x + r * dh;
        double ss = 0;
        for (std::size_t e = 0; e < dh; ++e) ss += static_cast<double>(xr[e]) * xr[e];
        T proj = 0;
        const bool above = std::sqrt(ss) > kQkNormEps;
        if (above)
          for (std::size_t e = 0; e < dh; ++e) proj += (xr[e] / nr) * g[e];
        for (std::size_t e = 0; e < dh; ++e) g[e] = (g[e] - (xr[e] / nr) * proj) / nr;
      }
      std::copy_n(g, dh, out->data() + r * dh);
    }
  };
  back(dqp, cache.qp, q, cache.qnorm, B * H, &grads->dq);
  back(dkp, cache.kp, k, cache.knorm, B * Hkv, &grads->dk);
}

template void variant_forward<float>(const VariantCall&, const float*, const float*, const float*,
                                     VariantCache<float>*, AttentionResult<float>*);
template void variant_forward<double>(const VariantCall&, const double*, const double*,
                                      const double*, VariantCache<double>*,
                                      AttentionResult<double>*);
template void variant_backward<float>(const VariantCall&, const float*, const float*, const float*,
                                      const float*, const VariantCache<float>&,
                                      const AttentionResult<float>&, AttentionGrads<float>*,
                                      double*);
template void variant_backward<double>(const VariantCall&, const double*, const double*,
                                       const double*, const double*, const VariantCache<double>&,
                                       const AttentionResult<double>&, AttentionGrads<double>*,
                                       double*);

}  // namespace attn::tr::varattn
