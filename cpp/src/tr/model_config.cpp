// The model's configuration side (attn/tr/model.hpp): head size, the positional names, the
// parameter layout, validation, the memory estimate and the initialisation. The passes themselves
// are in model.cpp.
#include <algorithm>
#include <cmath>
#include <string>

#include "attn/bytes_text.hpp"
#include "attn/checked.hpp"
#include "attn/names.hpp"
#include "attn/rng.hpp"
#include "attn/tr/model.hpp"

namespace attn::tr {

using detail::sat_add;
using detail::sat_mul;

std::size_t d_head(const ModelConfig& c) {
  return c.heads ? c.d_model / c.heads : 0;
}

bool uses_variant(const ModelConfig& c) {
  return c.position != Position::kNone || c.normalizer != Normalizer::kSoftmax || c.qk_norm;
}

Variant attention_variant(const ModelConfig& c) {
  Variant v;
  v.qk_norm = c.qk_norm;
  v.position = c.position;
  v.normalizer = c.normalizer;
  // sigmoid's default bias is -ln of the model's context length, seqLen (relu divides by it
  // too: variant_attention.hpp): a position's output must not depend on how many tokens follow.
  v.sigmoid_bias = c.sigmoid_bias
                       ? *c.sigmoid_bias
                       : -std::log(static_cast<double>(std::max<std::size_t>(c.seq_len, 1)));
  return v;
}

const char* positional_name(const ModelConfig& c) {
  if (c.positional) return c.shortformer ? "shortformer" : "learned";
  return c.position == Position::kNone ? "none" : position_name(c.position);
}

bool parse_positional(const std::string& name, ModelConfig* c) {
  if (name == "learned" || name == "shortformer") {
    c->positional = true;
    c->shortformer = name == "shortformer";
    c->position = Position::kNone;
    return true;
  }
  Position p;
  if (!parse_position(name.c_str(), &p)) return false;
  c->positional = false;
  c->shortformer = false;
  c->position = p;
  return true;
}

ParamLayout param_layout(const ModelConfig& c) {
  ParamLayout p;
  const std::size_t D = c.d_model, dh = d_head(c), V = c.vocab;
  std::size_t off = 0;
  p.embed = off;
  off += V * D;
  p.pos = off;
  if (c.positional) off += c.seq_len * D;
  for (std::size_t l = 0; l < c.layers; ++l) {
    ParamLayout::Layer L;
    L.wq = off;
    off += D * c.heads * dh;
    L.wk = off;
    off += D * c.kv_heads * dh;
    L.wv = off;
    off += D * c.kv_heads * dh;
    L.wo = off;
    off += c.heads * dh * D;
    p.layer.push_back(L);
  }
  p.ln_gain = off;
  if (c.layer_norm) off += D;
  p.ln_bias = off;
  if (c.layer_norm) off += D;
  p.unembed = off;
  off += D * V;
  p.total = off;
  return p;
}

namespace {

Status range(const char* field, std::size_t v, std::size_t lo, std::size_t hi) {
  if (v < lo || v > hi) {
    return Status::Invalid(field, std::string(field) + " must be between " + std::to_string(lo) +
                                      " and " + std::to_string(hi) + " (got " + std::to_string(v) +
                                      ")");
  }
  return Status::Ok();
}

}  // namespace

Status validate_model(const ModelConfig& c, std::size_t batch) {
  Status st;
  if (!(st = range("vocab", c.vocab, 2, 65536)).ok()) return st;
  if (!(st = range("seqLen", c.seq_len, 2, 8192)).ok()) return st;
  if (!(st = range("layers", c.layers, 1, 64)).ok()) return st;
  if (!(st = range("heads", c.heads, 1, 256)).ok()) return st;
  if (!(st = range("kvHeads", c.kv_heads, 1, c.heads)).ok()) return st;
  if (c.heads % c.kv_heads != 0) {
    return Status::Invalid("kvHeads", "kvHeads (" + std::to_string(c.kv_heads) +
                                          ") must divide heads (" + std::to_string(c.heads) + ")");
  }
  if (!(st = range("dModel", c.d_model, 1, 8192)).ok()) return st;
  if (c.d_model % c.heads != 0) {
    return Status::Invalid("dModel", "dModel (" + std::to_string(c.d_model) +
                                         ") must be divisible by heads (" +
                                         std::to_string(c.heads) + ")");
  }
  if (!(st = range("batch", batch, 1, 65536)).ok()) return st;
  if (c.scale &&
      !(std::isfinite(*c.scale) && *c.scale > 0 && std::isfinite(static_cast<float>(*c.scale)) &&
        static_cast<float>(*c.scale) > 0)) {
    return Status::Invalid("scale", "scale must be 'sqrt', 'none' or a finite positive number");
  }
  if (!(std::isfinite(c.init_std) && c.init_std >= 0 && c.init_std <= 1e3)) {
    return Status::Invalid("initStd", "initStd must be null or a finite positive number <= 1000");
  }
  if (!(c.dropout >= 0 && c.dropout < 1)) {
    return Status::Invalid("dropout", "dropout must be in [0, 1)");
  }
  if (c.positional && c.position != Position::kNone) {
    return Status::Invalid("positional",
                           "positional is one of 'learned', 'none', 'rope', 'alibi' or "
                           "'shortformer': a learned table cannot be combined with " +
                               std::string(position_name(c.position)));
  }
  if (c.shortformer && !c.positional) {
    return Status::Invalid("positional",
                           "positional 'shortformer' adds the learned table to the queries' and "
                           "keys' input: it needs the table (positional = true)");
  }
  if (c.position == Position::kRope && d_head(c) % 2 != 0) {
    return Status::Invalid("positional",
                           "positional 'rope' rotates pairs of coordinates: "
                           "dModel / heads (" +
                               std::to_string(d_head(c)) + ") must be even");
  }
  if (c.position == Position::kAlibi && c.normalizer == Normalizer::kLinear) {
    return Status::Invalid("positional",
                           "positional 'alibi' adds to the scores, which normalizer 'linear' "
                           "does not form; use 'rope', 'learned' or 'none'");
  }
  if (c.sigmoid_bias &&
      !(std::isfinite(*c.sigmoid_bias) && std::isfinite(static_cast<float>(*c.sigmoid_bias)))) {
    return Status::Invalid("sigmoidBias",
                           "sigmoidBias must be null (-ln seqLen) or a finite number");
  }
  if (static_cast<std::size_t>(c.normalizer) >= normalizer_names().size) {
    return Status::Invalid("normalizer", normalizer_names().must_be());
  }
  const std::size_t need = estimate_training_bytes(c, batch);
  if (need > c.memory_cap) {
    return Status::Exhausted("memory",
                             "this model and batch need about " + detail::bytes_text(need) +
                                 " of memory, over the cap of " + detail::bytes_text(c.memory_cap) +
                                 "; try a smaller batch, seqLen or dModel");
  }
  return Status::Ok();
}

std::size_t estimate_training_bytes(const ModelConfig& c, std::size_t batch) {
  const std::size_t D = c.d_model, V = c.vocab, T = c.seq_len, H = c.heads, Hkv = c.kv_heads;
  const std::size_t dh = d_head(c);
  // Parameters: exact count with saturating arithmetic (the layout could overflow).
  std::size_t P = sat_mul(V, D);
  if (c.positional) P = sat_add(P, sat_mul(T, D));
  P = sat_add(P, sat_mul(c.layers, sat_mul(D, sat_mul(2 * H + 2 * Hkv, dh))));
  P = sat_add(P, sat_add(sat_mul(D, V), 2 * D));
  const std::size_t N = sat_mul(batch, T);
  // Per layer: x, q/k/v (flat and per head), z, attention output, lse, entropy, weights.
  std::size_t per_layer = sat_mul(N, sat_add(D, sat_mul(3 * (H + 2 * Hkv) + 2 * H, dh)));
  // The naive kernel keeps every layer's (B*H, T, T) weights for the backward pass; the
  // tiled kernel keeps only O(T) per row (its lse), so long sequences fit.
  const std::size_t w = sat_mul(sat_mul(batch, H), sat_mul(T, T));
  const bool naive = c.kernel == Kernel::kNaive;
  if (naive) per_layer = sat_add(per_layer, w);
  // The variant kernels keep q and k after qkNorm and RoPE (and phi for linear) beside the
  // projections, plus each row's norms, and one row of scores per call in the backward.
  if (uses_variant(c)) {
    per_layer = sat_add(per_layer, sat_mul(N, sat_add(sat_mul(2 * (H + Hkv), dh), H + Hkv)));
  }
  std::size_t n = sat_mul(4, P);  // params, grads, AdamW m and v
  n = sat_add(n, sat_mul(c.layers + 1, per_layer));
  n = sat_add(n, sat_mul(N, sat_add(4 * D, 3 * V)));  // LayerNorm, logits, backward scratch
  // The backward of one layer: dQ/dK/dV, a forward copy and (naive) dP/dS rows.
  n = sat_add(n, sat_mul(N, sat_mul(4 * (H + 2 * Hkv), dh)));
  if (naive) n = sat_add(n, w);
  if (c.positional && c.shortformer) n = sat_add(n, sat_mul(N, 2 * D));  // x_l + P, its gradient
  return sat_mul(n, 4);  // float32 training; float64 test runs stay far below any cap
}

template <class T>
void init_params(const ModelConfig& c, std::uint64_t seed, T* params) {
  const ParamLayout p = param_layout(c);
  const double s = c.init_std > 0 ? c.init_std : 1.0 / std::sqrt(static_cast<double>(c.d_model));
  Rng rng(seed);
  auto fill = [&](std::size_t off, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) params[off + i] = static_cast<T>(s * rng.normal());
  };
  const std::size_t D = c.d_model, dh = d_head(c);
  fill(p.embed, c.vocab * D);
  if (c.positional) fill(p.pos, c.seq_len * D);
  for (const auto& L : p.layer) {
    fill(L.wq, D * c.heads * dh);
    fill(L.wk, D * c.kv_heads * dh);
    fill(L.wv, D * c.kv_heads * dh);
    fill(L.wo, c.heads * dh * D);
  }
  if (c.layer_norm) {
    std::fill(params + p.ln_gain, params + p.ln_gain + D, T(1));
    std::fill(params + p.ln_bias, params + p.ln_bias + D, T(0));
  }
  fill(p.unembed, D * c.vocab);
}

template void init_params<float>(const ModelConfig&, std::uint64_t, float*);
template void init_params<double>(const ModelConfig&, std::uint64_t, double*);

}  // namespace attn::tr
