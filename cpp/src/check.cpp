#include "attn/check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/bytes_text.hpp"
#include "attn/tiled.hpp"
#include "checked.hpp"
#include "simd_kernels.hpp"

namespace attn {

namespace {

// Largest |a - b|; NaN must meet NaN (else +inf), equal infinities count as 0.
template <class A, class B>
double max_abs_diff(const A* a, const B* b, std::size_t n) {
  double m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(a[i]), y = static_cast<double>(b[i]);
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) return std::numeric_limits<double>::infinity();
      continue;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) return std::numeric_limits<double>::infinity();
      continue;
    }
    m = std::max(m, std::abs(x - y));
  }
  return m;
}

template <class T>
double max_abs_finite(const T* p, std::size_t n) {
  double m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isfinite(p[i])) m = std::max(m, std::abs(static_cast<double>(p[i])));
  }
  return m;
}

}  // namespace

Status check_kernels(const float* q, std::size_t q_len, const float* k, std::size_t k_len,
                     const float* v, std::size_t v_len, const AttentionOptions& opts,
                     KernelCheck* out) {
  using detail::sat_add;
  using detail::sat_mul;
  // Pass 1: validate as a naive call, then the memory of all three runs together (float32
  // naive, float64 naive with scores plus its widened inputs, float32 tiled).
  Status st = validate(opts, q_len, k_len, v_len, true, sizeof(float));
  if (!st.ok()) return st;
  std::size_t need = estimate_bytes(opts.shape, sizeof(float), true, false);
  need = sat_add(need, estimate_bytes(opts.shape, sizeof(double), true, true));
  need = sat_add(need, sat_mul(sat_add(sat_add(q_len, k_len), v_len), sizeof(double)));
  need = sat_add(need, estimate_bytes(opts.shape, sizeof(float), false, false));
  if (need > opts.memory_cap) {
    return Status::Exhausted("memory", "the check runs three kernels and needs " +
                                           detail::bytes_text(need) + ", over the cap of " +
                                           detail::bytes_text(opts.memory_cap));
  }
  *out = KernelCheck{};
  AttentionOptions o32 = opts;
  o32.return_scores = false;
  AttentionOptions o64 = opts;
  o64.return_scores = true;  // S, the scale of the float32 score error
  o64.memory_cap = std::numeric_limits<std::size_t>::max();  // counted above
  o32.memory_cap = o64.memory_cap;

  // Pass 2: float32 naive (SIMD128 when built in and eligible) against float64 naive.
  AttentionResult<float> naive;
  st = attention(q, q_len, k, k_len, v, v_len, o32, &naive);
  if (!st.ok()) return st;
  out->simd = detail::simd_eligible(q, k, v, o32, static_cast<float>(effective_scale(o32)));
  {
    const std::vector<double> q64(q, q + q_len), k64(k, k + k_len), v64(v, v + v_len);
    AttentionResult<double> ref;
    st = attention(q64.data(), q_len, k64.data(), k_len, v64.data(), v_len, o64, &ref);
    if (!st.ok()) return st;
    out->max_abs_score = max_abs_finite(ref.scores.data(), ref.scores.size());
    out->f32_vs_f64 =
        std::max(max_abs_diff(naive.output.data(), ref.output.data(), ref.output.size()),
                 max_abs_diff(naive.weights.data(), ref.weights.data(), ref.weights.size()));
  }  // the float64 buffers go before the tiled run
  out->max_abs_v = max_abs_finite(v, v_len);
  const double su = 4 * kCheckUnitRoundoff * out->max_abs_score * std::max(1.0, out->max_abs_v);
  out->f32_vs_f64_tol = kCheckF32VsF64Abs + su;
  out->tiled_vs_naive_tol = kCheckTiledVsNaiveAbs + su;

  // Pass 3: float32 tiled against float32 naive.
  AttentionResult<float> tiled;
  st = attention_tiled(q, q_len, k, k_len, v, v_len, o32, &tiled);
  if (!st.ok()) return st;
  out->tiled_vs_naive = max_abs_diff(tiled.output.data(), naive.output.data(), naive.output.size());
  return Status::Ok();
}

}  // namespace attn
