#include "dispatch.hpp"

#include <cmath>
#include <limits>
#include <type_traits>

#include "attn/validate.hpp"
#include "backward_kernels.hpp"
#include "diagnostics.hpp"
#include "kernels.hpp"
#include "simd_kernels.hpp"
#include "variant_kernels.hpp"

namespace attn::detail {

namespace {

template <class T>
void size_outputs(const AttentionOptions& opts, bool naive, AttentionResult<T>* out) {
  const Shape& s = opts.shape;
  out->output.resize({s.heads, s.tq, s.dv});
  if (naive) {
    out->weights.resize({s.heads, s.tq, s.tk});
  } else {
    out->weights.resize({0, 0, 0});
  }
  if (naive && opts.return_scores) {
    out->scores.resize({s.heads, s.tq, s.tk});
  } else {
    out->scores.resize({0, 0, 0});
  }
  out->entropy.resize({s.heads, s.tq});
  out->lse.resize({s.heads, s.tq});
  out->row_sums.resize({s.heads, s.tq});
  out->diag = {};
}

// rowSums of the naive softmax weights (its kernels leave them untouched): eight independent
// partial sums, so the pass costs about one add per weight instead of a serial chain of T_k
// dependent adds.
template <class T>
void weight_row_sums(const Shape& s, AttentionResult<T>* out) {
  for (std::size_t row = 0; row < s.heads * s.tq; ++row) {
    const T* w = out->weights.data() + row * s.tk;
    T acc[8] = {};
    std::size_t j = 0;
    for (; j + 8 <= s.tk; j += 8) {
      for (std::size_t c = 0; c < 8; ++c) acc[c] += w[j + c];
    }
    T sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; j < s.tk; ++j) sum += w[j];
    out->row_sums.data()[row] = sum;
  }
}

// rowSums of the online softmax: l * (1/l) = 1 for a row with a distribution (finite fill's
// uniform fully masked row included), 0 for a 'zero' fully masked row (lse -inf), NaN for a
// NaN row (lse NaN). Read from lse so the SIMD kernel stays as it is.
template <class T>
void lse_row_sums(const Shape& s, AttentionResult<T>* out) {
  for (std::size_t row = 0; row < s.heads * s.tq; ++row) {
    const T l = out->lse.data()[row];
    out->row_sums.data()[row] =
        std::isnan(l) ? l : (l == -std::numeric_limits<T>::infinity() ? T(0) : T(1));
  }
}

}  // namespace

template <class T>
Status run_attention(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                     std::size_t v_len, const AttentionOptions& opts, Kernel kernel,
                     AttentionResult<T>* out) {
  const Shape& s = opts.shape;
  const Variant& var = opts.variant;
  const bool naive = kernel == Kernel::kNaive;
  Status st = validate(opts, q_len, k_len, v_len, naive, sizeof(T));
  if (!st.ok()) return st;
  size_outputs(opts, naive, out);
  const T scale = static_cast<T>(effective_scale(opts));
  constexpr bool kSimd = std::is_same_v<T, float> && kSimdKernels;
  // The choice. Any variant option: the variants' kernels (float16 and the linear prefix sums
  // among them). Else the softmax kernels: SIMD128 when compiled in and the inputs are finite
  // and small enough (the SIMD kernel checks and declines), the scalar reference otherwise.
  // A SIMD kernel that ran counted NaN rows exactly: its inputs were finite with no possible
  // overflow, so a NaN can only come from a fully masked row under neg_inf, which it counted.
  bool nan_rows_exact = false;
  if (var.needs_variant_kernel()) {
    if (!naive && var.normalizer == Normalizer::kLinear) {
      linear_prefix_kernel(q, k, v, opts, out);
    } else if (!naive) {
      tiled_variant_kernel(q, k, v, opts, scale, out);
    } else if constexpr (std::is_same_v<T, float>) {
      if (var.precision == Precision::kFloat16) {
        fp16_kernel(q, k, v, opts, scale, out);
      } else {
        naive_variant_kernel(q, k, v, opts, scale, out);
      }
    } else {
      naive_variant_kernel(q, k, v, opts, scale, out);  // float16 refused by validate
    }
  } else if (naive) {
    if constexpr (kSimd) nan_rows_exact = naive_kernel_simd(q, k, v, opts, scale, out);
    if (!nan_rows_exact) naive_kernel_scalar(q, k, v, opts, scale, out);
  } else {
    if constexpr (kSimd) nan_rows_exact = tiled_kernel_simd(q, k, v, opts, scale, out);
    if (!nan_rows_exact) tiled_kernel_scalar(q, k, v, opts, scale, out);
  }
  if (!nan_rows_exact) out->diag.nan_rows = count_nan_rows(*out, s.heads * s.tq);
  if (var.needs_variant_kernel()) return Status::Ok();  // the variants fill rowSums themselves
  if (!naive) {
    lse_row_sums(s, out);
  } else if (opts.row_sums) {
    weight_row_sums(s, out);
  } else {
    out->row_sums.resize({0, 0});
  }
  return Status::Ok();
}

template <class T>
void run_backward(const T* q, const T* k, const T* v, const T* d_out, const AttentionOptions& opts,
                  Kernel kernel, const AttentionResult<T>& fwd, AttentionGrads<T>* g) {
  const Variant& var = opts.variant;
  const bool naive = kernel == Kernel::kNaive;
  const T scale = static_cast<T>(effective_scale(opts));
  // The choice, as for the forward: the variants' kernels for any variant option; else the
  // SIMD128 tiled backward when compiled in and eligible (the naive one takes P from the
  // forward's weights instead of recomputing it), the scalar kernels otherwise.
  if (var.needs_variant_kernel()) {
    if (naive) {
      backward_naive_variant(q, k, v, d_out, opts, scale, fwd, g);
    } else if (var.normalizer == Normalizer::kLinear) {
      backward_linear_prefix(q, k, v, d_out, opts, fwd, g);
    } else {
      backward_tiled_variant(q, k, v, d_out, opts, scale, fwd, g);
    }
    return;
  }
  if constexpr (std::is_same_v<T, float> && kSimdKernels) {
    if (tiled_backward_simd(q, k, v, d_out, opts, scale, fwd, g, naive)) return;
  }
  if (naive) {
    backward_naive(q, k, v, d_out, opts, scale, fwd, g);
  } else {
    backward_tiled_scalar(q, k, v, d_out, opts, scale, fwd, g);
  }
}

template Status run_attention<float>(const float*, std::size_t, const float*, std::size_t,
                                     const float*, std::size_t, const AttentionOptions&, Kernel,
                                     AttentionResult<float>*);
template Status run_attention<double>(const double*, std::size_t, const double*, std::size_t,
                                      const double*, std::size_t, const AttentionOptions&, Kernel,
                                      AttentionResult<double>*);
template void run_backward<float>(const float*, const float*, const float*, const float*,
                                  const AttentionOptions&, Kernel, const AttentionResult<float>&,
                                  AttentionGrads<float>*);
template void run_backward<double>(const double*, const double*, const double*, const double*,
                                   const AttentionOptions&, Kernel, const AttentionResult<double>&,
                                   AttentionGrads<double>*);

}  // namespace attn::detail
