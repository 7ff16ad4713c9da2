// Attention backward pass: the naive kernel (from the forward's stored weights) and the
// tiled kernel (scores recomputed tile by tile from Q, K and the forward's lse).
// Maths and fill-policy semantics: attn/backward.hpp. The variants (normalizer, position,
// qkNorm) run their own kernels in backward_kernels.hpp, from the rules of attn/variant_grad.hpp.
#include "attn/backward.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "attn/dropout.hpp"
#include "attn/tiled.hpp"
#include "backward_kernels.hpp"
#include "checked.hpp"
#include "kernels.hpp"

namespace attn {

using detail::sat_add;
using detail::sat_mul;

std::size_t tiled_backward_workspace_bytes(const Shape& s, std::size_t elem) {
  // Scalar kernel: P and dS tiles, per-row D, dropout prefix and flags.
  const std::size_t scalar =
      (2 * kTileQ * kTileK + 2 * kTileQ) * elem + kTileQ * (sizeof(std::uint64_t) + 1);
  // SIMD kernel (float32): also the transposed Q and dO tiles (d_k + d_v) x 64.
  const std::size_t simd =
      sat_mul(detail::simd_backward_scratch_floats(s.dk, s.dv), sizeof(float)) + 8 * kTileQ;
  return std::max(scalar, simd);
}

std::size_t estimate_backward_bytes(const Shape& s, std::size_t elem, Kernel kernel,
                                    const Variant& variant) {
  const bool naive = kernel == Kernel::kNaive;
  std::size_t n = 0;
  n = sat_add(n, sat_mul(sat_mul(s.heads, s.tq), s.dk));                    // dq
  n = sat_add(n, sat_mul(sat_mul(s.kv_heads, s.tk), sat_add(s.dk, s.dv)));  // dk, dv
  n = sat_add(n, sat_mul(sat_mul(s.heads, s.tq), s.dv));  // dO copy (the bindings make one)
  std::size_t extra_bytes = 0;
  if (variant.needs_variant_kernel()) {
    // The transformed working copies q~, k~ and one row's intermediates (qkNorm, RoPE, phi);
    // naive: one row's dW and allowed flags; linear prefix: S, z, G, u and per-row den, b.
    if (detail::transforms_qk(variant)) {
      n = sat_add(n, sat_add(sat_mul(sat_mul(s.heads, s.tq), s.dk),
                             sat_mul(sat_mul(s.kv_heads, s.tk), s.dk)));
      n = sat_add(n, sat_mul(s.dk, 2));
    }
    if (naive) n = sat_add(n, s.tk);
    if (!naive && variant.normalizer == Normalizer::kLinear) {
      n = sat_add(
          n, sat_add(sat_mul(sat_mul(s.dk, s.dv), 2), sat_add(sat_mul(s.dk, 2), sat_mul(s.tq, 2))));
    }
    // Allowed flags, the ALiBi slopes and RoPE's frequencies.
    extra_bytes = sat_add(s.tk, sat_mul(sat_add(sat_mul(s.heads, 3), s.dk), sizeof(double)));
  }
  n = sat_mul(n, elem);
  n = sat_add(n, extra_bytes);
  // The forward pass, in case the caller did not pass one (its outputs and scratch).
  n = sat_add(n, estimate_bytes(s, elem, naive, false, variant));
  // Working memory: naive one row of dP (T_k); tiled a fixed set of tiles.
  n = sat_add(n, naive ? sat_mul(s.tk, elem) : tiled_backward_workspace_bytes(s, elem));
  return n;
}

namespace {

std::string mib(std::size_t bytes) {
  if (bytes == static_cast<std::size_t>(-1)) return "more than the address space";
  if (bytes < (std::size_t{1} << 20)) return std::to_string(bytes) + " bytes";
  return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

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
      if (detail::allowed_count(o.mask, i, s.tq, s.tk) == 0) {
        for (std::size_t j = 0; j < s.tk; ++j) {
          detail::axpy(P[j] * keep(j), doi, dvg + j * s.dv, s.dv);
        }
        continue;
      }
      // 2.
      const KeyRange r = key_range(o.mask, i, s.tq, s.tk);
      T D = 0;
      for (std::size_t j = r.lo; j < r.hi; ++j) {
        if (!detail::pointwise_allowed(o.mask, i, j, s.tk)) continue;
        const T kj = keep(j);
        detail::axpy(P[j] * kj, doi, dvg + j * s.dv, s.dv);
        dp[j] = kj * detail::dot(doi, vg + j * s.dv, s.dv);
        D += P[j] * dp[j];
      }
      // 3.
      for (std::size_t j = r.lo; j < r.hi; ++j) {
        if (!detail::pointwise_allowed(o.mask, i, j, s.tk)) continue;
        const T ds = scale * (P[j] * (dp[j] - D));
        detail::axpy(ds, kg + j * s.dk, dqi, s.dk);
        detail::axpy(ds, qi, dkg + j * s.dk, s.dk);
      }
    }
  }
}

template <class T>
Status check_forward(const Shape& s, Kernel kernel, const AttentionResult<T>& f) {
  const std::size_t rows = s.heads * s.tq;
  if (f.output.size() != rows * s.dv || f.lse.size() != rows) {
    return Status::Invalid("forward",
                           "forward must be the result of the same attention call (output has " +
                               std::to_string(f.output.size()) + " values, expected " +
                               std::to_string(rows * s.dv) + ")");
  }
  if (kernel == Kernel::kNaive && f.weights.size() != rows * s.tk) {
    return Status::Invalid("forward",
                           "the naive backward needs the forward's weights (heads*tq*tk = " +
                               std::to_string(rows * s.tk) + " values), got " +
                               std::to_string(f.weights.size()));
  }
  return Status::Ok();
}

}  // namespace

Status validate_backward(const AttentionOptions& opts, std::size_t q_len, std::size_t k_len,
                         std::size_t v_len, std::size_t d_out_len, Kernel kernel,
                         std::size_t elem_size) {
  const Shape& s = opts.shape;
  if (kernel != Kernel::kNaive && kernel != Kernel::kTiled) {
    return Status::Invalid("kernel", "kernel must be 'naive' or 'tiled'");
  }
  const bool naive = kernel == Kernel::kNaive;
  // Options the forward has but training does not: the lesson's demonstrations.
  const Variant& var = opts.variant;
  if (!var.max_shift) {
    return Status::Invalid("maxShift",
                           "maxShift: false is the overflow demonstration; the backward pass "
                           "needs the max shift (maxShift true)");
  }
  if (var.mask_mode != MaskMode::kBefore) {
    return Status::Invalid("maskMode",
                           "maskMode 'after' is the lesson's wrong way to mask; the backward pass "
                           "masks before the normalizer (maskMode 'before')");
  }
  if (var.precision == Precision::kFloat16) {
    return Status::Invalid("precision",
                           "precision 'float16' is an emulation of the forward pass only; the "
                           "backward pass runs float32 or float64");
  }
  // Every field except memory through the forward's checks; the cap is checked below
  // against the backward's own (larger) estimate.
  AttentionOptions unlimited = opts;
  unlimited.memory_cap = static_cast<std::size_t>(-1);
  Status st = validate(unlimited, q_len, k_len, v_len, naive, elem_size);
  if (!st.ok()) return st;
  std::size_t nd;
  if (!detail::checked_product({s.heads, s.tq, s.dv}, &nd)) {
    return Status::Exhausted("memory",
                             "dOut (heads*tq*dv values) needs more memory than can be "
                             "addressed, over the cap of " +
                                 mib(opts.memory_cap));
  }
  if (d_out_len != nd) {
    return Status::Invalid("dOut", "dOut has " + std::to_string(d_out_len) +
                                       " values but heads*tq*dv = " + std::to_string(nd));
  }
  const std::size_t need = estimate_backward_bytes(s, elem_size, kernel, var);
  if (need > opts.memory_cap) {
    return Status::Exhausted(
        "memory", "this backward pass needs " + mib(need) + " of working memory, over the cap of " +
                      mib(opts.memory_cap) +
                      (naive ? "; the weights alone are heads*tq*tk values: try kernel 'tiled' or "
                               "a shorter sequence"
                             : "; try a shorter sequence or fewer heads"));
  }
  return Status::Ok();
}

template <class T>
Status attention_backward(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                          std::size_t v_len, const T* d_out, std::size_t d_out_len,
                          const AttentionOptions& opts, Kernel kernel,
                          const AttentionResult<T>* forward, AttentionGrads<T>* out) {
  const Shape& s = opts.shape;
  const bool naive = kernel == Kernel::kNaive;
  Status st = validate_backward(opts, q_len, k_len, v_len, d_out_len, kernel, sizeof(T));
  if (!st.ok()) return st;
  if (forward) {
    st = check_forward(s, kernel, *forward);
    if (!st.ok()) return st;
  }
  // The forward pass, unless given (then out->forward is left as it was: the caller's
  // result may even be out->forward itself).
  const AttentionResult<T>* fwd = forward;
  if (!fwd) {
    st = naive ? attention(q, q_len, k, k_len, v, v_len, opts, &out->forward)
               : attention_tiled(q, q_len, k, k_len, v, v_len, opts, &out->forward);
    if (!st.ok()) return st;
    fwd = &out->forward;
  }
  out->dq = xt::zeros<T>({s.heads, s.tq, s.dk});
  out->dk = xt::zeros<T>({s.kv_heads, s.tk, s.dk});
  out->dv = xt::zeros<T>({s.kv_heads, s.tk, s.dv});
  const T scale = static_cast<T>(effective_scale(opts));
  if (opts.variant.needs_variant_kernel()) {
    if (naive) {
      detail::backward_naive_variant(q, k, v, d_out, opts, scale, *fwd, out);
    } else if (opts.variant.normalizer == Normalizer::kLinear) {
      detail::backward_linear_prefix(q, k, v, d_out, opts, *fwd, out);
    } else {
      detail::backward_tiled_variant(q, k, v, d_out, opts, scale, *fwd, out);
    }
    return Status::Ok();
  }
  if (naive) {
    // float32 with SIMD128: the tiled SIMD kernel taking P from the stored weights.
    if constexpr (std::is_same_v<T, float> && detail::kSimdKernels) {
      if (detail::tiled_backward_simd(q, k, v, d_out, opts, scale, *fwd, out, true)) {
        return Status::Ok();
      }
    }
    backward_naive(q, k, v, d_out, opts, scale, *fwd, out);
  } else {
    detail::backward_tiled(q, k, v, d_out, opts, scale, *fwd, out);
  }
  return Status::Ok();
}

template Status attention_backward<float>(const float*, std::size_t, const float*, std::size_t,
                                          const float*, std::size_t, const float*, std::size_t,
                                          const AttentionOptions&, Kernel,
                                          const AttentionResult<float>*, AttentionGrads<float>*);
template Status attention_backward<double>(const double*, std::size_t, const double*, std::size_t,
                                           const double*, std::size_t, const double*, std::size_t,
                                           const AttentionOptions&, Kernel,
                                           const AttentionResult<double>*, AttentionGrads<double>*);

}  // namespace attn
