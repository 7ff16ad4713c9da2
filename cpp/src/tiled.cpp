#include "attn/tiled.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "checked.hpp"
#include "diagnostics.hpp"
#include "kernels.hpp"
#include "variant_kernels.hpp"

namespace attn {

std::size_t tiled_workspace_bytes(const Shape& s, std::size_t elem) {
  // Scalar kernel: score tile plus per-row running state (m, l, t) and flags.
  const std::size_t scalar =
      (kTileQ * kTileK + 3 * kTileQ) * elem + 2 * kTileQ * sizeof(std::size_t);
  // SIMD kernel (float32): a transposed query tile (d_k x 64) besides the score tile and state.
  const std::size_t simd =
      detail::sat_add(detail::sat_mul(detail::simd_scratch_floats(s.dk), sizeof(float)),
                      4 * kTileQ * sizeof(std::size_t));
  return std::max(scalar, simd);
}

template <class T>
Status attention_tiled(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                       std::size_t v_len, const AttentionOptions& opts, AttentionResult<T>* out) {
  const Shape& s = opts.shape;
  Status st = validate(opts, q_len, k_len, v_len, false, sizeof(T));
  if (!st.ok()) return st;
  out->output.resize({s.heads, s.tq, s.dv});
  out->weights.resize({0, 0, 0});
  out->scores.resize({0, 0, 0});
  out->entropy.resize({s.heads, s.tq});
  out->lse.resize({s.heads, s.tq});
  out->row_sums.resize({s.heads, s.tq});
  out->diag = {};
  const T scale = static_cast<T>(effective_scale(opts));
  bool nan_rows_exact = false;  // the SIMD kernel's own count (see naive_kernel in kernels.hpp)
  if (opts.variant.normalizer == Normalizer::kLinear) {
    detail::linear_prefix_kernel(q, k, v, opts, out);
  } else if (opts.variant.needs_variant_kernel()) {
    detail::tiled_variant_kernel(q, k, v, opts, scale, out);
  } else {
    nan_rows_exact = detail::tiled_kernel(q, k, v, opts, scale, out);
    // rowSums of the online softmax: l * (1/l) = 1 for a row with a distribution (finite fill's
    // uniform fully masked row included), 0 for a 'zero' fully masked row (lse -inf), NaN for
    // a NaN row (lse NaN). Read from lse so the SIMD kernel stays as it is.
    for (std::size_t row = 0; row < s.heads * s.tq; ++row) {
      const T l = out->lse.data()[row];
      out->row_sums.data()[row] =
          std::isnan(l) ? l : (l == -std::numeric_limits<T>::infinity() ? T(0) : T(1));
    }
  }
  if (!nan_rows_exact) out->diag.nan_rows = detail::count_nan_rows(*out, s.heads * s.tq);
  return Status::Ok();
}

template Status attention_tiled<float>(const float*, std::size_t, const float*, std::size_t,
                                       const float*, std::size_t, const AttentionOptions&,
                                       AttentionResult<float>*);
template Status attention_tiled<double>(const double*, std::size_t, const double*, std::size_t,
                                        const double*, std::size_t, const AttentionOptions&,
                                        AttentionResult<double>*);

}  // namespace attn
