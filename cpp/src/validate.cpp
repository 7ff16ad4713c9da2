// The entry points' checks and memory estimates (attn/validate.hpp): one place for every field
// an attention call, its tiled form and its backward pass refuse, and for the bytes each will
// allocate (compared with opts.memory_cap before anything is allocated).
#include "attn/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "attn/bytes_text.hpp"
#include "attn/names.hpp"
#include "attn/tile_sizes.hpp"
#include "checked.hpp"

namespace attn {

// names.hpp's lists end at these enums' last values (mask.hpp, types.hpp).
static_assert(kMaskFillCount == static_cast<std::size_t>(MaskFill::kZero) + 1);
static_assert(kKernelCount == static_cast<std::size_t>(Kernel::kTiled) + 1);

using detail::sat_add;
using detail::sat_mul;

namespace {

// Floats of scratch the SIMD128 tiled forward allocates (simd_kernels.cpp): Qt (d_k x 64), the
// score tile (64 x 64), per-row m, l, t, alpha and the key ranges.
std::size_t simd_scratch_floats(std::size_t dk) {
  return kTileQ * dk + kTileQ * kTileK + 6 * kTileQ;
}

// Floats of scratch the SIMD128 backward allocates (simd_backward.cpp): Qt (d_k x 64), dO^t
// (d_v x 64), the P and dS tiles (64 x 64), per-row lse and D.
std::size_t simd_backward_scratch_floats(std::size_t dk, std::size_t dv) {
  return kTileQ * (dk + dv) + 2 * kTileQ * kTileK + 2 * kTileQ;
}

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
    if (variant.transforms_qk()) n = sat_add(n, qk);
    if (variant.precision == Precision::kFloat16) {
      n = sat_add(n, sat_add(qk, sat_mul(sat_mul(s.kv_heads, s.tk), s.dv)));
      n = sat_add(n, s.dv);  // the float32 output accumulator
    }
    // The linear prefix-sum state S (d_k x d_v) and z (d_k); the tiled kernels' key tile.
    if (!materialise_weights) n = sat_add(n, sat_add(sat_mul(s.dk, s.dv), s.dk + kTileK));
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

std::size_t tiled_workspace_bytes(const Shape& s, std::size_t elem) {
  // Scalar kernel: score tile plus per-row running state (m, l, t) and flags.
  const std::size_t scalar =
      (kTileQ * kTileK + 3 * kTileQ) * elem + 2 * kTileQ * sizeof(std::size_t);
  // SIMD kernel (float32): a transposed query tile (d_k x 64) besides the score tile and state.
  const std::size_t simd =
      sat_add(sat_mul(simd_scratch_floats(s.dk), sizeof(float)), 4 * kTileQ * sizeof(std::size_t));
  return std::max(scalar, simd);
}

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
                      detail::bytes_text(opts.memory_cap));
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
        "memory", "this request needs " + detail::bytes_text(need) +
                      " of working memory, over the cap of " + detail::bytes_text(opts.memory_cap) +
                      (materialise_weights ? "; the weights alone are heads*tq*tk values: try "
                                             "kernel 'tiled' or a shorter sequence"
                                           : "; try a shorter sequence or fewer heads"));
  }
  return Status::Ok();
}

std::size_t tiled_backward_workspace_bytes(const Shape& s, std::size_t elem) {
  // Scalar kernel: P and dS tiles, per-row D, dropout prefix and flags.
  const std::size_t scalar =
      (2 * kTileQ * kTileK + 2 * kTileQ) * elem + kTileQ * (sizeof(std::uint64_t) + 1);
  // SIMD kernel (float32): also the transposed Q and dO tiles (d_k + d_v) x 64.
  const std::size_t simd =
      sat_mul(simd_backward_scratch_floats(s.dk, s.dv), sizeof(float)) + 8 * kTileQ;
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
    if (variant.transforms_qk()) {
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

Status validate_backward(const AttentionOptions& opts, std::size_t q_len, std::size_t k_len,
                         std::size_t v_len, std::size_t d_out_len, Kernel kernel,
                         std::size_t elem_size) {
  const Shape& s = opts.shape;
  if (kernel != Kernel::kNaive && kernel != Kernel::kTiled) {
    return Status::Invalid("kernel", kernel_names().must_be());
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
                                 detail::bytes_text(opts.memory_cap));
  }
  if (d_out_len != nd) {
    return Status::Invalid("dOut", "dOut has " + std::to_string(d_out_len) +
                                       " values but heads*tq*dv = " + std::to_string(nd));
  }
  const std::size_t need = estimate_backward_bytes(s, elem_size, kernel, var);
  if (need > opts.memory_cap) {
    return Status::Exhausted(
        "memory", "this backward pass needs " + detail::bytes_text(need) +
                      " of working memory, over the cap of " + detail::bytes_text(opts.memory_cap) +
                      (naive ? "; the weights alone are heads*tq*tk values: try kernel 'tiled' or "
                               "a shorter sequence"
                             : "; try a shorter sequence or fewer heads"));
  }
  return Status::Ok();
}

}  // namespace attn
