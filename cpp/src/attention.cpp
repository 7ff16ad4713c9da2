#include "attn/attention.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "attn/softmax.hpp"
#include "attn/tiled.hpp"
#include "bytes_text.hpp"
#include "checked.hpp"
#include "diagnostics.hpp"
#include "kernels.hpp"
#include "variant_kernels.hpp"

namespace attn {

using detail::sat_add;
using detail::sat_mul;

double effective_scale(const AttentionOptions& opts) {
  return opts.scale ? *opts.scale : 1.0 / std::sqrt(static_cast<double>(opts.shape.dk));
}

std::size_t estimate_bytes(const Shape& s, std::size_t elem, bool materialise_weights,
                           bool return_scores, const Variant& variant) {
  const std::size_t rows = sat_mul(s.heads, s.tq);
  std::size_t n = 0;
  n = sat_add(n, sat_mul(rows, s.dk));                       // q copy
  n = sat_add(n, sat_mul(sat_mul(s.kv_heads, s.tk), s.dk));  // k copy
  n = sat_add(n, sat_mul(sat_mul(s.kv_heads, s.tk), s.dv));  // v copy
  n = sat_add(n, sat_mul(rows, s.dv));                       // output
  n = sat_add(n, sat_mul(rows, 3));                          // entropy, lse, rowSums
  std::size_t extra_bytes = 0;
  if (variant.needs_variant_kernel()) {
    const std::size_t qk = sat_add(sat_mul(rows, s.dk), sat_mul(sat_mul(s.kv_heads, s.tk), s.dk));
    // Working copies: q and k through qkNorm / RoPE / phi; under float16 q, k and v rounded.
    if (detail::transforms_qk(variant)) n = sat_add(n, qk);
    if (variant.precision == Precision::kFloat16) {
      n = sat_add(n, sat_add(qk, sat_mul(sat_mul(s.kv_heads, s.tk), s.dv)));
      n = sat_add(n, s.dv);  // the float32 output accumulator
    }
    // The linear prefix-sum state S (d_k x d_v) and z (d_k); the tiled kernels' key tile.
    if (!materialise_weights) n = sat_add(n, sat_add(sat_mul(s.dk, s.dv), s.dk + kTileK));
    // Allowed flags of one row and the ALiBi slopes.
    // Allowed flags of one row, the ALiBi slopes (with the 2n list a non-power-of-two count
    // draws from) and RoPE's d_k / 2 frequencies.
    extra_bytes = sat_add(s.tk, sat_mul(sat_add(sat_mul(s.heads, 3), s.dk), sizeof(double)));
  }
  if (materialise_weights) n = sat_add(n, sat_mul(rows, s.tk));  // weights
  if (return_scores) n = sat_add(n, sat_mul(rows, s.tk));        // scores
  n = sat_mul(n, elem);
  n = sat_add(n, materialise_weights ? sat_mul(s.tk, elem) : tiled_workspace_bytes(s, elem));
  return sat_add(n, extra_bytes);
}

namespace {

std::string mib(std::size_t bytes) {
  return detail::bytes_text(bytes);
}  // bytes_text.hpp

Status check_dim(const char* field, std::size_t v) {
  if (v == 0) return Status::Invalid(field, std::string(field) + " must be at least 1");
  return Status::Ok();
}

// The variant's own fields, then which kernel and precision support them. Every option is
// checked whenever it is set, used or not (a bad ropeBase fails without RoPE).
Status validate_variant(const AttentionOptions& o, bool naive, std::size_t elem_size) {
  const Variant& v = o.variant;
  const Shape& s = o.shape;
  const bool softmax_like =
      v.normalizer == Normalizer::kSoftmax || v.normalizer == Normalizer::kSoftmax1;
  if (!(std::isfinite(v.rope_base) && v.rope_base > 0)) {
    return Status::Invalid("ropeBase", "ropeBase must be a finite number above 0 (got " +
                                           std::to_string(v.rope_base) + ")");
  }
  if (v.sigmoid_bias && !std::isfinite(*v.sigmoid_bias)) {
    return Status::Invalid("sigmoidBias", "sigmoidBias must be a finite number or unset (got " +
                                              std::to_string(*v.sigmoid_bias) + ")");
  }
  if (v.position == Position::kRope && s.dk % 2 != 0) {
    return Status::Invalid("position", "position 'rope' rotates pairs of coordinates: dk (" +
                                           std::to_string(s.dk) + ") must be even");
  }
  if (v.position == Position::kAlibi && v.normalizer == Normalizer::kLinear) {
    return Status::Invalid("position",
                           "position 'alibi' adds to a score, and normalizer 'linear' has none: "
                           "use 'none' or 'rope'");
  }
  if (!v.max_shift && !softmax_like) {
    return Status::Invalid("maxShift", std::string("maxShift: false applies to softmax and "
                                                   "softmax1 only (normalizer is '") +
                                           normalizer_name(v.normalizer) + "')");
  }
  if (v.precision == Precision::kFloat16) {
    if (v.normalizer != Normalizer::kSoftmax || v.position != Position::kNone || v.qk_norm) {
      return Status::Invalid("precision",
                             "precision 'float16' emulates softmax attention only: normalizer "
                             "'softmax', position 'none', qkNorm false");
    }
    if (elem_size != sizeof(float)) {
      return Status::Invalid("precision", "precision 'float16' runs on float32 inputs");
    }
    if (o.dropout > 0) {
      return Status::Invalid("dropout", "precision 'float16' has no dropout");
    }
  }
  if (v.precision == Precision::kFloat64 && elem_size != sizeof(double)) {
    return Status::Invalid("precision", "precision 'float64' runs attention<double>");
  }
  if (!naive) {
    if (v.precision != Precision::kFloat32) {
      return Status::Invalid("kernel",
                             std::string("kernel 'tiled' runs float32 only (precision '") +
                                 precision_name(v.precision) + "'): use kernel 'naive'");
    }
    if (v.mask_mode != MaskMode::kBefore) {
      return Status::Invalid("kernel",
                             "kernel 'tiled' masks before the normalizer only "
                             "(maskMode 'after' needs kernel 'naive')");
    }
    if (v.normalizer == Normalizer::kLinear) {
      if (o.mask.key_padding || o.mask.mask || o.mask.window != 0) {
        return Status::Invalid("kernel",
                               "kernel 'tiled' with normalizer 'linear' is the causal prefix-sum "
                               "form: a causal mask or none (no keyPadding, mask or window)");
      }
      if (o.dropout > 0) {
        return Status::Invalid("kernel", "kernel 'tiled' with normalizer 'linear' has no dropout");
      }
    } else if (!v.max_shift) {
      return Status::Invalid("kernel",
                             "kernel 'tiled' always shifts by the running maximum "
                             "(maxShift false needs kernel 'naive')");
    }
  }
  return Status::Ok();
}

}  // namespace

Status validate(const AttentionOptions& opts, std::size_t q_len, std::size_t k_len,
                std::size_t v_len, bool materialise_weights, std::size_t elem_size) {
  const Shape& s = opts.shape;
  Status st;
  for (auto [name, val] : {std::pair<const char*, std::size_t>{"heads", s.heads},
                           {"kvHeads", s.kv_heads},
                           {"tq", s.tq},
                           {"tk", s.tk},
                           {"dk", s.dk},
                           {"dv", s.dv}}) {
    st = check_dim(name, val);
    if (!st.ok()) return st;
  }
  if (s.heads % s.kv_heads != 0) {
    return Status::Invalid("kvHeads", "kvHeads (" + std::to_string(s.kv_heads) +
                                          ") must divide heads (" + std::to_string(s.heads) + ")");
  }
  std::size_t nq, nk, nv, nm;
  if (!detail::checked_product({s.heads, s.tq, s.dk}, &nq) ||
      !detail::checked_product({s.kv_heads, s.tk, s.dk}, &nk) ||
      !detail::checked_product({s.kv_heads, s.tk, s.dv}, &nv) ||
      !detail::checked_product({s.tq, s.tk}, &nm)) {
    return Status::Exhausted(
        "memory", "this shape needs more memory than can be addressed, over the cap of " +
                      mib(opts.memory_cap));
  }
  if (q_len != nq) {
    return Status::Invalid(
        "q", "q has " + std::to_string(q_len) + " values but heads*tq*dk = " + std::to_string(nq));
  }
  if (k_len != nk) {
    return Status::Invalid("k", "k has " + std::to_string(k_len) +
                                    " values but kvHeads*tk*dk = " + std::to_string(nk));
  }
  if (v_len != nv) {
    return Status::Invalid("v", "v has " + std::to_string(v_len) +
                                    " values but kvHeads*tk*dv = " + std::to_string(nv));
  }
  if (opts.mask.key_padding && opts.mask.key_padding.size != s.tk) {
    return Status::Invalid("keyPadding", "keyPadding has " +
                                             std::to_string(opts.mask.key_padding.size) +
                                             " entries but tk = " + std::to_string(s.tk));
  }
  if (opts.mask.mask && opts.mask.mask.size != nm) {
    return Status::Invalid("mask", "mask has " + std::to_string(opts.mask.mask.size) +
                                       " entries but tq*tk = " + std::to_string(nm));
  }
  if (opts.scale && !(std::isfinite(*opts.scale) && *opts.scale > 0)) {
    return Status::Invalid("scale", "scale must be a finite positive number (got " +
                                        std::to_string(*opts.scale) + ")");
  }
  // The kernels multiply in float32: a scale that rounds to +inf (1e300) or to 0 (1e-300)
  // would turn every score into inf, NaN or 0 without a word.
  if (opts.scale &&
      !(std::isfinite(static_cast<float>(*opts.scale)) && static_cast<float>(*opts.scale) > 0)) {
    return Status::Invalid("scale",
                           "scale must lie within float32 range, about 1e-45 to 3.4e38 (got " +
                               std::to_string(*opts.scale) + ")");
  }
  if (!(std::isfinite(opts.dropout) && opts.dropout >= 0 && opts.dropout < 1)) {
    return Status::Invalid("dropout",
                           "dropout must be a finite number with 0 <= dropout < 1 (got " +
                               std::to_string(opts.dropout) + ")");
  }
  if (opts.return_scores && !materialise_weights) {
    return Status::Invalid("returnScores", "returnScores needs the naive kernel");
  }
  st = validate_variant(opts, materialise_weights, elem_size);
  if (!st.ok()) return st;
  const std::size_t need =
      estimate_bytes(s, elem_size, materialise_weights, opts.return_scores, opts.variant);
  if (need > opts.memory_cap) {
    return Status::Exhausted(
        "memory", "this request needs " + mib(need) + " of working memory, over the cap of " +
                      mib(opts.memory_cap) +
                      (materialise_weights ? "; the weights alone are heads*tq*tk values: try "
                                             "kernel 'tiled' or a shorter sequence"
                                           : "; try a shorter sequence or fewer heads"));
  }
  return Status::Ok();
}

template <class T>
Status attention(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                 std::size_t v_len, const AttentionOptions& opts, AttentionResult<T>* out) {
  const Shape& s = opts.shape;
  Status st = validate(opts, q_len, k_len, v_len, true, sizeof(T));
  if (!st.ok()) return st;
  out->output.resize({s.heads, s.tq, s.dv});
  out->weights.resize({s.heads, s.tq, s.tk});
  if (opts.return_scores) {
    out->scores.resize({s.heads, s.tq, s.tk});
  } else {
    out->scores.resize({0, 0, 0});
  }
  out->entropy.resize({s.heads, s.tq});
  out->lse.resize({s.heads, s.tq});
  out->row_sums.resize({s.heads, s.tq});
  out->diag = {};
  const T scale = static_cast<T>(effective_scale(opts));
  if (opts.variant.needs_variant_kernel()) {
    if constexpr (std::is_same_v<T, float>) {
      if (opts.variant.precision == Precision::kFloat16) {
        detail::fp16_kernel(q, k, v, opts, scale, out);
      } else {
        detail::naive_variant_kernel(q, k, v, opts, scale, out);
      }
    } else {
      detail::naive_variant_kernel(q, k, v, opts, scale, out);  // float16 refused by validate
    }
    out->diag.nan_rows = detail::count_nan_rows(*out, s.heads * s.tq);
    return Status::Ok();
  }
  // The SIMD kernel's count is exact (see naive_kernel); the scalar kernels' is recounted.
  if (!detail::naive_kernel(q, k, v, opts, scale, out)) {
    out->diag.nan_rows = detail::count_nan_rows(*out, s.heads * s.tq);
  }
  if (!opts.row_sums) {
    out->row_sums.resize({0, 0});
    return Status::Ok();
  }
  // rowSums of the softmax weights (the original kernels leave them untouched): eight
  // independent partial sums, so the pass costs about one add per weight instead of a serial
  // chain of T_k dependent adds (a few per cent of the naive kernel at T = 2048 otherwise).
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
  return Status::Ok();
}

template <class T>
Status attention(const xt::xtensor<T, 3>& q, const xt::xtensor<T, 3>& k, const xt::xtensor<T, 3>& v,
                 AttentionOptions opts, AttentionResult<T>* out) {
  opts.shape = Shape{q.shape(0), k.shape(0), q.shape(1), k.shape(1), q.shape(2), v.shape(2)};
  if (k.shape(2) != q.shape(2)) {
    return Status::Invalid("k", "k's last axis (" + std::to_string(k.shape(2)) +
                                    ") must equal q's d_k (" + std::to_string(q.shape(2)) + ")");
  }
  if (v.shape(0) != k.shape(0) || v.shape(1) != k.shape(1)) {
    return Status::Invalid("v", "v must have the same heads and positions as k");
  }
  return attention(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(), opts, out);
}

template Status attention<float>(const float*, std::size_t, const float*, std::size_t, const float*,
                                 std::size_t, const AttentionOptions&, AttentionResult<float>*);
template Status attention<double>(const double*, std::size_t, const double*, std::size_t,
                                  const double*, std::size_t, const AttentionOptions&,
                                  AttentionResult<double>*);
template Status attention<float>(const xt::xtensor<float, 3>&, const xt::xtensor<float, 3>&,
                                 const xt::xtensor<float, 3>&, AttentionOptions,
                                 AttentionResult<float>*);
template Status attention<double>(const xt::xtensor<double, 3>&, const xt::xtensor<double, 3>&,
                                  const xt::xtensor<double, 3>&, AttentionOptions,
                                  AttentionResult<double>*);

}  // namespace attn
