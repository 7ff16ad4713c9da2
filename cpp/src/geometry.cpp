#include "attn/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "attn/bytes_text.hpp"
#include "attn/checked.hpp"
#include "attn/validate.hpp"
#include "attn/variants.hpp"
#include "score_rows.hpp"

namespace attn {
namespace {

// Below this share of σ_1² the second singular value counts as 0 (rank ≤ 1): the Gram matrix's
// eigenvalues carry errors of about 1e-16 λ_1, so a smaller λ_2 names no direction.
constexpr double kRankOneRatio = 1e-12;

// x (d) scaled to unit length (left as is when zero).
void normalise(double* x, std::size_t d) {
  double ss = 0;
  for (std::size_t c = 0; c < d; ++c) ss += x[c] * x[c];
  if (ss == 0) return;
  const double inv = 1 / std::sqrt(ss);
  for (std::size_t c = 0; c < d; ++c) x[c] *= inv;
}

// The two largest eigenvalues of the symmetric n × n matrix a (row-major, n ≥ 2, destroyed),
// lambda[0] ≥ lambda[1], and their unit eigenvectors, vec (2, n). Only two pairs are needed, so
// no full eigen-decomposition: (1) Householder reflections reduce a to tridiagonal T = QᵀAQ
// (4/3 n³ multiply-adds, every loop over whole rows); (2) bisection on T's Sturm sequence finds
// λ_1 and λ_2 to within a few ulps of ‖T‖ (O(n) a step); (3) inverse iteration on T − λI (a
// tridiagonal solve with partial pivoting, O(n)) gives T's eigenvectors y; (4) Q y are A's. A
// cyclic Jacobi solver did the same in 13 sweeps of O(n³) with strided columns: 0.7 s at
// n = 256, where this takes milliseconds.
void top_two_eigen(std::vector<double>& a, std::size_t n, double lambda[2], double* vec) {
  // 1. Tridiagonalise: for k = 0 .. n − 3, H_k = I − τ_k v_k v_kᵀ on indices k+1 .. n−1 maps
  //    row k's tail x to (α, 0, ...); v_k = x − α e_1 is kept in that tail (T needs no more of
  //    row k; step 4 reads v_k there), and the trailing block becomes
  //    B ← H B H = B − v wᵀ − w vᵀ, with p = τ B v and w = p − (τ/2)(vᵀp) v.
  std::vector<double> diag(n), off(n, 0.0), tau(n, 0.0), p(n);
  for (std::size_t k = 0; k + 2 < n; ++k) {
    double* row = &a[k * n];
    const std::size_t m = k + 1;
    diag[k] = row[k];
    double tail2 = 0;
    for (std::size_t i = m + 1; i < n; ++i) tail2 += row[i] * row[i];
    if (tail2 == 0) {  // already tridiagonal in this column
      off[k] = row[m];
      continue;
    }
    const double x0 = row[m], norm = std::sqrt(tail2 + x0 * x0);
    const double alpha = x0 >= 0 ? -norm : norm;  // the sign that avoids cancellation in x0 − α
    row[m] = x0 - alpha;
    tau[k] = 2 / (tail2 + row[m] * row[m]);
    off[k] = alpha;
    const double* v = row;
    double vp = 0;
    for (std::size_t i = m; i < n; ++i) {
      const double* bi = &a[i * n];
      double sum = 0;
      for (std::size_t j = m; j < n; ++j) sum += bi[j] * v[j];
      p[i] = tau[k] * sum;
      vp += v[i] * p[i];
    }
    const double half = 0.5 * tau[k] * vp;
    for (std::size_t i = m; i < n; ++i) p[i] -= half * v[i];
    for (std::size_t i = m; i < n; ++i) {
      double* bi = &a[i * n];
      for (std::size_t j = m; j < n; ++j) bi[j] -= v[i] * p[j] + p[i] * v[j];
    }
  }
  diag[n - 2] = a[(n - 2) * n + n - 2];
  diag[n - 1] = a[(n - 1) * n + n - 1];
  off[n - 2] = a[(n - 1) * n + n - 2];

  // 2. λ_1, λ_2 by bisection inside T's Gershgorin interval: below(x) counts T's eigenvalues
  //    under x (the negative pivots of T − xI's LDLᵀ, Sturm's theorem).
  double lo = 0, hi = 0, tnorm = 0, off2max = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = (i ? std::fabs(off[i - 1]) : 0.0) + (i + 1 < n ? std::fabs(off[i]) : 0.0);
    lo = i ? std::min(lo, diag[i] - r) : diag[i] - r;
    hi = i ? std::max(hi, diag[i] + r) : diag[i] + r;
    tnorm = std::max(tnorm, std::fabs(diag[i]) + r);
    if (i + 1 < n) off2max = std::max(off2max, off[i] * off[i]);
  }
  const double eps = std::numeric_limits<double>::epsilon();
  const double pivmin = std::numeric_limits<double>::min() * std::max(1.0, off2max);
  const auto below = [&](double x) {
    std::size_t count = 0;
    double q = 1;
    for (std::size_t i = 0; i < n; ++i) {
      q = diag[i] - x - (i ? off[i - 1] * off[i - 1] / q : 0.0);
      if (std::fabs(q) < pivmin) q = -pivmin;
      if (q < 0) ++count;
    }
    return count;
  };
  const double widen = 2 * eps * tnorm + 2 * pivmin;
  for (std::size_t e = 0; e < 2; ++e) {
    const std::size_t j = n - 1 - e;  // ascending index: below(λ_j) ≤ j < below(λ_j⁺)
    double l = lo - widen, h = hi + widen;
    for (int it = 0; it < 256 && h - l > 2 * eps * std::max(std::fabs(l), std::fabs(h)) + pivmin;
         ++it) {
      const double mid = 0.5 * (l + h);
      if (below(mid) <= j)
        l = mid;
      else
        h = mid;
    }
    lambda[e] = 0.5 * (l + h);
  }

  // 3. Inverse iteration: (T − λI) y_new = y, LU with partial pivoting (a swap brings a second
  //    superdiagonal u2), zero pivots replaced by eps‖T‖; four steps from a fixed start vector,
  //    the second vector kept orthogonal to the first (they may share an eigenvalue).
  std::vector<double> dd(n), u1(n), u2(n), lm(n), y(2 * n), b(n);
  std::vector<std::uint8_t> swapped(n);
  const double tiny = std::max(eps * tnorm, pivmin);
  for (std::size_t e = 0; e < 2; ++e) {
    for (std::size_t i = 0; i < n; ++i) {
      dd[i] = diag[i] - lambda[e];
      u1[i] = i + 1 < n ? off[i] : 0.0;
      u2[i] = 0;
    }
    for (std::size_t i = 0; i + 1 < n; ++i) {
      const double sub = off[i];
      swapped[i] = std::fabs(sub) > std::fabs(dd[i]);
      if (!swapped[i]) {
        if (dd[i] == 0) dd[i] = tiny;
        lm[i] = sub / dd[i];
        dd[i + 1] -= lm[i] * u1[i];
      } else {
        const double d0 = dd[i], c0 = u1[i], d1 = dd[i + 1], c1 = u1[i + 1];
        lm[i] = d0 / sub;
        dd[i] = sub;
        u1[i] = d1;
        u2[i] = c1;
        dd[i + 1] = c0 - lm[i] * d1;
        u1[i + 1] = -lm[i] * c1;
      }
    }
    if (dd[n - 1] == 0) dd[n - 1] = tiny;
    double* ye = &y[e * n];
    for (std::size_t i = 0; i < n; ++i) ye[i] = 1 + 0.5 * std::sin(1.7 * static_cast<double>(i));
    for (int it = 0; it < 4; ++it) {
      b.assign(ye, ye + n);
      for (std::size_t i = 0; i + 1 < n; ++i) {
        if (swapped[i]) std::swap(b[i], b[i + 1]);
        b[i + 1] -= lm[i] * b[i];
      }
      for (std::size_t i = n; i-- > 0;) {
        double r = b[i];
        if (i + 1 < n) r -= u1[i] * ye[i + 1];
        if (i + 2 < n) r -= u2[i] * ye[i + 2];
        ye[i] = r / dd[i];
      }
      if (e == 1) {
        double dot = 0;
        for (std::size_t i = 0; i < n; ++i) dot += ye[i] * y[i];
        for (std::size_t i = 0; i < n; ++i) ye[i] -= dot * y[i];
      }
      normalise(ye, n);
    }
  }

  // 4. A's eigenvectors Q y = H_0 (H_1 (… H_{n−3} y)).
  for (std::size_t e = 0; e < 2; ++e) {
    double* u = vec + e * n;
    std::copy(&y[e * n], &y[e * n] + n, u);
    for (std::size_t k = n - 2; k-- > 0;) {
      if (tau[k] == 0) continue;
      const double* v = &a[k * n];
      double dot = 0;
      for (std::size_t i = k + 1; i < n; ++i) dot += v[i] * u[i];
      dot *= tau[k];
      for (std::size_t i = k + 1; i < n; ++i) u[i] -= dot * v[i];
    }
    normalise(u, n);
  }
}

// The sign convention: the entry of largest |value| (the lowest index on ties) is positive.
void fix_sign(double* x, std::size_t d) {
  std::size_t m = 0;
  for (std::size_t c = 1; c < d; ++c)
    if (std::fabs(x[c]) > std::fabs(x[m])) m = c;
  if (x[m] < 0)
    for (std::size_t c = 0; c < d; ++c) x[c] = -x[c];
}

// The top two right singular vectors of x (rows, d), d ≥ 3, into axes (2, d), signs not fixed.
void top_axes(const std::vector<double>& x, std::size_t rows, std::size_t d, double* axes) {
  // The smaller Gram matrix: XᵀX (d × d) when d ≤ rows, else XXᵀ (rows × rows); both hold σ².
  const bool by_columns = d <= rows;
  const std::size_t n = by_columns ? d : rows;
  std::vector<double> g(n * n, 0.0);
  if (by_columns) {
    for (std::size_t r = 0; r < rows; ++r) {
      const double* xr = &x[r * d];
      for (std::size_t a = 0; a < d; ++a)
        for (std::size_t b = a; b < d; ++b) g[a * d + b] += xr[a] * xr[b];
    }
  } else {
    for (std::size_t a = 0; a < rows; ++a)
      for (std::size_t b = a; b < rows; ++b) {
        double s = 0;
        for (std::size_t c = 0; c < d; ++c) s += x[a * d + c] * x[b * d + c];
        g[a * n + b] = s;
      }
  }
  double trace = 0;  // Σ σ² = Σ ‖x‖²
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < a; ++b) g[a * n + b] = g[b * n + a];
    trace += g[a * n + a];
  }
  if (!(trace > 0)) {  // every row zero: e0 and e1
    std::fill(axes, axes + 2 * d, 0.0);
    axes[0] = 1;
    axes[d + 1] = 1;
    return;
  }
  double lambda[2];
  std::vector<double> vec(2 * n);
  top_two_eigen(g, n, lambda, vec.data());
  // An axis from eigenvector `col` (a row of vec): itself (XᵀX), or Xᵀu / ‖Xᵀu‖ (XXᵀ).
  const auto axis = [&](std::size_t col, double* out) {
    if (by_columns) {
      for (std::size_t c = 0; c < d; ++c) out[c] = vec[col * n + c];
    } else {
      for (std::size_t c = 0; c < d; ++c) {
        double s = 0;
        for (std::size_t r = 0; r < rows; ++r) s += x[r * d + c] * vec[col * n + r];
        out[c] = s;
      }
    }
    normalise(out, d);
  };
  axis(0, axes);
  if (lambda[1] > kRankOneRatio * lambda[0]) {
    axis(1, axes + d);
    return;
  }
  // Rank ≤ 1: no second direction in the data. A deterministic unit vector orthogonal to the
  // first: e_m − (a_1·e_m) a_1 normalised, m = argmin |a_1[m]| (its squared length 1 − a_1[m]²
  // is at least 1 − 1/d, so this is well conditioned).
  std::size_t m = 0;
  for (std::size_t c = 1; c < d; ++c)
    if (std::fabs(axes[c]) < std::fabs(axes[m])) m = c;
  for (std::size_t c = 0; c < d; ++c) axes[d + c] = -axes[m] * axes[c];
  axes[d + m] += 1;
  normalise(axes + d, d);
}

}  // namespace

template <class T>
Status qk_map(const T* q, std::size_t q_len, const T* k, std::size_t k_len,
              const AttentionOptions& opts, std::size_t head, QkMap<T>* out) {
  const Shape& s = opts.shape;
  // 1. The call's own checks (v is not read: its expected length is passed through), the head,
  //    and this call's buffers against the cap: X (N, d_k) and two n × n matrices, in double.
  const std::size_t v_len = s.kv_heads * s.tk * s.dv;
  Status st = validate(opts, q_len, k_len, v_len, true, sizeof(T));  // as score_breakdown
  if (!st.ok()) return st;
  if (head >= s.heads)
    return Status::Invalid("head", "head " + std::to_string(head) + " is outside heads " +
                                       std::to_string(s.heads) + " (heads count from 0)");
  const std::size_t d = s.dk, rows = s.tq + s.tk, n = std::min(d, rows);
  const std::size_t need = detail::sat_mul(
      8, detail::sat_add(detail::sat_mul(rows, d), detail::sat_mul(2, detail::sat_mul(n, n))));
  if (need > opts.memory_cap)
    return Status::Exhausted("memory", "the map of this head needs " + detail::bytes_text(need) +
                                           " of working memory, over the cap of " +
                                           detail::bytes_text(opts.memory_cap));
  out->scale = opts.variant.normalizer == Normalizer::kLinear ? 1.0 : effective_scale(opts);

  // 2. X (T_q + T_k, d_k): the rows as the score uses them (formed in T, as the kernels form
  //    them), then widened to double.
  const detail::ScoreRows form(opts);
  const std::size_t kvh = form.kv_head(head);
  std::vector<double> x(rows * d);
  std::vector<T> row(d);
  for (std::size_t r = 0; r < rows; ++r) {
    if (r < s.tq)
      form.query(q, head, r, row.data());
    else
      form.key(k, kvh, r - s.tq, row.data());
    for (std::size_t c = 0; c < d; ++c) x[r * d + c] = static_cast<double>(row[c]);
  }

  // 3. The dot statistics over all T_q × T_k pairs: the mean from the row sums,
  //    mean = (Σ_i q_i) · (Σ_j k_j) / (T_q T_k), then the variances in one pass about it, of the
  //    dots and of their single products (whose mean is mean / d_k).
  std::vector<double> qsum(d, 0.0), ksum(d, 0.0);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < d; ++c) (r < s.tq ? qsum : ksum)[c] += x[r * d + c];
  const double pairs = static_cast<double>(s.tq) * static_cast<double>(s.tk);
  double mean = 0;
  for (std::size_t c = 0; c < d; ++c) mean += qsum[c] * ksum[c];
  mean /= pairs;
  const double prod_mean = mean / static_cast<double>(d);
  double var = 0, prod_var = 0;
  for (std::size_t i = 0; i < s.tq; ++i)
    for (std::size_t j = 0; j < s.tk; ++j) {
      double dot = 0;
      for (std::size_t c = 0; c < d; ++c) {
        const double p = x[i * d + c] * x[(s.tq + j) * d + c];
        dot += p;
        prod_var += (p - prod_mean) * (p - prod_mean);
      }
      var += (dot - mean) * (dot - mean);
    }
  out->dot_mean = mean;
  out->dot_std = std::sqrt(var / pairs);
  out->prod_std = std::sqrt(prod_var / (pairs * static_cast<double>(d)));

  // 4. The axes (2, d_k): d_k = 1 and 2 fixed (the plane is the rows' own), else the uncentred
  //    PCA; then the sign convention.
  out->axes.assign(2 * d, 0.0);
  if (d == 1) {
    out->axes[0] = 1;
  } else if (d == 2) {
    out->axes[0] = out->axes[3] = 1;
  } else {
    top_axes(x, rows, d, out->axes.data());
    fix_sign(out->axes.data(), d);
    fix_sign(out->axes.data() + d, d);
  }

  // 5. Every row on the two axes, and each axis's share of Σ‖x‖².
  out->queries.assign(2 * s.tq, 0.0);
  out->keys.assign(2 * s.tk, 0.0);
  double total = 0, along[2] = {0, 0};
  for (std::size_t r = 0; r < rows; ++r) {
    const double* xr = &x[r * d];
    double* p = r < s.tq ? &out->queries[2 * r] : &out->keys[2 * (r - s.tq)];
    for (std::size_t a = 0; a < 2; ++a) {
      double dot = 0;
      for (std::size_t c = 0; c < d; ++c) dot += xr[c] * out->axes[a * d + c];
      p[a] = dot;
      along[a] += dot * dot;
    }
    for (std::size_t c = 0; c < d; ++c) total += xr[c] * xr[c];
  }
  for (std::size_t a = 0; a < 2; ++a) out->explained[a] = total > 0 ? along[a] / total : 0.0;
  return Status::Ok();
}

template Status qk_map<float>(const float*, std::size_t, const float*, std::size_t,
                              const AttentionOptions&, std::size_t, QkMap<float>*);
template Status qk_map<double>(const double*, std::size_t, const double*, std::size_t,
                               const AttentionOptions&, std::size_t, QkMap<double>*);

}  // namespace attn
