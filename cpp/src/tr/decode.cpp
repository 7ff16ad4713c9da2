#include "attn/tr/decode.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/gemm.hpp"
#include "attn/rng.hpp"
#include "attn/row_ops.hpp"
#include "attn/variant_grad.hpp"

namespace attn::tr {

namespace {

// The attention variant the model's forward runs (attention_variant, model.hpp) and whether
// a learned positional table is added to the embedding ('learned'; 'shortformer' adds it to
// the queries' and keys' input instead).
Variant model_variant(const ModelConfig& c, bool* learned_pos) {
  *learned_pos = c.positional && !c.shortformer;
  return attention_variant(c);
}

// One query row over the t cached keys: with T_q = 1 the bottom-right causal mask allows
// every cached key, so the normalizer runs over all of them. The core's kernels work on
// blocks of 16+ query rows; a single row here costs O(t d_h) with no padding.
// q: (d_h) after qkNorm and RoPE, k, v: (t, d_h) rows (the cached keys, already rotated);
// writes w (t) and out (d_h). Passes:
//   1. scores: scale q.k_j, plus ALiBi's -m_h (pos - j) (pos = t - 1, the new query's
//      position; only the distance matters); linear: phi(q).phi(k_j), no scale;
//   2. the normalizer over the row (the definitions of attn/variants.hpp);
//   3. out = sum_j w_j v_j.
void attend_one(const float* q, const float* k, const float* v, std::size_t t, std::size_t dh,
                float scale, const Variant& var, double slope, std::size_t context, float* w,
                float* out, std::vector<float>* phi) {
  const Normalizer n = var.normalizer;
  if (n == Normalizer::kLinear) {
    phi->resize(2 * dh);
    float* pq = phi->data();
    float* pk = pq + dh;
    for (std::size_t e = 0; e < dh; ++e) pq[e] = vgrad::phi(q[e]);
    for (std::size_t j = 0; j < t; ++j) {
      for (std::size_t e = 0; e < dh; ++e) pk[e] = vgrad::phi(k[j * dh + e]);
      w[j] = row::dot(pq, pk, dh);
    }
  } else {
    const double pos = static_cast<double>(t - 1);
    for (std::size_t j = 0; j < t; ++j) {
      w[j] = scale * row::dot(q, k + j * dh, dh);
      if (slope != 0) w[j] += static_cast<float>(-slope * (pos - static_cast<double>(j)));
    }
  }
  switch (n) {
    case Normalizer::kSoftmax: {
      float mx = -std::numeric_limits<float>::infinity();
      for (std::size_t j = 0; j < t; ++j) mx = std::max(mx, w[j]);
      for (std::size_t j = 0; j < t; ++j) w[j] -= mx;
      row::exp(w, w, t, true);  // arguments <= 0
      float sum = 0;
      for (std::size_t j = 0; j < t; ++j) sum += w[j];
      const float inv = 1.0f / sum;
      for (std::size_t j = 0; j < t; ++j) w[j] *= inv;
      break;
    }
    case Normalizer::kSoftmax1: {
      // A virtual key with score 0 and value 0: m' = max(0, max s).
      float mx = 0;
      for (std::size_t j = 0; j < t; ++j) mx = std::max(mx, w[j]);
      float sum = std::exp(-mx);
      for (std::size_t j = 0; j < t; ++j) {
        w[j] = std::exp(w[j] - mx);
        sum += w[j];
      }
      for (std::size_t j = 0; j < t; ++j) w[j] /= sum;
      break;
    }
    case Normalizer::kSigmoid: {
      // The model's bias (attention_variant: sigmoidBias or -ln seqLen), as its forward.
      const float bias = static_cast<float>(effective_sigmoid_bias(var, context));
      for (std::size_t j = 0; j < t; ++j) w[j] = vgrad::sigmoid(w[j] + bias);
      break;
    }
    case Normalizer::kRelu:
      // Divided by the model's context length, as its forward (not by the t keys so far).
      for (std::size_t j = 0; j < t; ++j)
        w[j] = std::max(w[j], 0.0f) * (1.0f / static_cast<float>(context));
      break;
    case Normalizer::kLinear: {
      float sum = 0;
      for (std::size_t j = 0; j < t; ++j) sum += w[j];
      const float den = sum + static_cast<float>(kLinearEps);
      for (std::size_t j = 0; j < t; ++j) w[j] /= den;
      break;
    }
  }
  std::fill_n(out, dh, 0.0f);
  for (std::size_t j = 0; j < t; ++j) row::axpy(w[j], v + j * dh, out, dh);
}

}  // namespace

DecodeMode default_decode_mode(const ModelConfig& c, bool cache) {
  if (!cache) return DecodeMode::kRecompute;
  bool learned = true;
  return model_variant(c, &learned).normalizer == Normalizer::kLinear ? DecodeMode::kState
                                                                      : DecodeMode::kCache;
}

Status check_decode_mode(const ModelConfig& c, DecodeMode mode) {
  bool learned = true;
  const Variant v = model_variant(c, &learned);
  if (mode == DecodeMode::kState && v.normalizer != Normalizer::kLinear) {
    return Status::Invalid("state", std::string("the recurrent state needs normalizer 'linear' "
                                                "(this model's is '") +
                                        normalizer_name(v.normalizer) + "'); use the K/V cache");
  }
  return Status::Ok();
}

const char* decode_mode_name(DecodeMode mode) {
  switch (mode) {
    case DecodeMode::kRecompute:
      return "recompute";
    case DecodeMode::kCache:
      return "cache";
    case DecodeMode::kState:
      return "state";
  }
  return "cache";
}

Decoder::Decoder(const ModelConfig& c, std::shared_ptr<const std::vector<float>> params, bool cache,
                 std::vector<std::uint8_t> ablate)
    : Decoder(c, std::move(params), default_decode_mode(c, cache), std::move(ablate)) {}

Decoder::Decoder(const ModelConfig& c, std::shared_ptr<const std::vector<float>> params,
                 DecodeMode mode, std::vector<std::uint8_t> ablate)
    : c_(c), params_(std::move(params)), mode_(mode), ablate_(std::move(ablate)) {
  mode_status_ = check_decode_mode(c_, mode_);
  var_ = model_variant(c_, &learned_pos_);
  qk_pos_ = c_.positional && c_.shortformer;
  const std::size_t dh = d_head(c_);
  if (var_.position == Position::kAlibi) slopes_ = alibi_slopes(c_.heads);
  if (var_.position == Position::kRope) {
    // As the core: the angle and its cos/sin in double, the rotation in float.
    theta_ = vgrad::rope_thetas(dh, var_.rope_base);
  }
  reset();
}

void Decoder::reset() {
  tokens_.clear();
  const std::size_t dh = d_head(c_);
  if (mode_ == DecodeMode::kCache) {
    const std::size_t n = c_.kv_heads * c_.seq_len * dh;
    k_.assign(c_.layers, std::vector<float>(n, 0.0f));
    v_.assign(c_.layers, std::vector<float>(n, 0.0f));
  } else if (mode_ == DecodeMode::kState) {
    s_.assign(c_.layers, std::vector<float>(c_.kv_heads * dh * dh, 0.0f));
    zs_.assign(c_.layers, std::vector<float>(c_.kv_heads * dh, 0.0f));
  }
}

std::size_t Decoder::cache_bytes() const {
  const std::size_t dh = d_head(c_);
  switch (mode_) {
    case DecodeMode::kRecompute:
      return 0;
    case DecodeMode::kCache:
      return 2 * c_.layers * c_.kv_heads * c_.seq_len * dh * sizeof(float);
    case DecodeMode::kState:
      return c_.layers * c_.kv_heads * (dh * dh + dh) * sizeof(float);
  }
  return 0;
}

Status Decoder::cache(std::size_t layer, std::vector<float>* k, std::vector<float>* v) const {
  if (mode_ == DecodeMode::kRecompute)
    return Status::Invalid("cache", "a recompute-mode decoder keeps no K/V cache");
  if (mode_ == DecodeMode::kState)
    return Status::Invalid("cache",
                           "a recurrent-state decoder keeps no K/V cache (state() gives S and z)");
  if (layer >= c_.layers) {
    return Status::Invalid("layer", "layer " + std::to_string(layer) + " is outside [0, layers)");
  }
  // The cache holds seq_len rows per K/V head; copy the t filled ones of each head.
  const std::size_t t = tokens_.size(), dh = d_head(c_);
  k->resize(c_.kv_heads * t * dh);
  v->resize(c_.kv_heads * t * dh);
  for (std::size_t g = 0; g < c_.kv_heads; ++g) {
    std::copy_n(k_[layer].data() + g * c_.seq_len * dh, t * dh, k->data() + g * t * dh);
    std::copy_n(v_[layer].data() + g * c_.seq_len * dh, t * dh, v->data() + g * t * dh);
  }
  return Status::Ok();
}

Status Decoder::state(std::size_t layer, std::vector<float>* s, std::vector<float>* z) const {
  if (mode_ != DecodeMode::kState)
    return Status::Invalid("state", std::string("a ") + decode_mode_name(mode_) +
                                        "-mode decoder keeps no recurrent state");
  if (layer >= c_.layers) {
    return Status::Invalid("layer", "layer " + std::to_string(layer) + " is outside [0, layers)");
  }
  *s = s_[layer];
  *z = zs_[layer];
  return Status::Ok();
}

void Decoder::transform(float* x, std::size_t rows, std::size_t pos) const {
  const std::size_t dh = d_head(c_);
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = x + r * dh;
    if (var_.qk_norm) {
      float ss = 0;
      for (std::size_t e = 0; e < dh; ++e) ss += row[e] * row[e];
      const float div = std::max(std::sqrt(ss), static_cast<float>(kQkNormEps));
      for (std::size_t e = 0; e < dh; ++e) row[e] /= div;
    }
    if (var_.position == Position::kRope) {
      for (std::size_t p = 0; p < dh / 2; ++p) {
        const double ang = static_cast<double>(pos) * theta_[p];
        vgrad::rope_rotate(&row[2 * p], &row[2 * p + 1], static_cast<float>(std::cos(ang)),
                           static_cast<float>(std::sin(ang)));
      }
    }
  }
}

void Decoder::attend_cached(std::size_t l, std::size_t pos, float* w) {
  const std::size_t H = c_.heads, dh = d_head(c_), grp = H / c_.kv_heads, t = pos + 1;
  AttentionOptions so;
  so.shape.dk = dh;
  so.scale = c_.scale;
  const float scale = static_cast<float>(effective_scale(so));
  // Each query head over its K/V head's t cached rows (T_q = 1).
  for (std::size_t h = 0; h < H; ++h) {
    const std::size_t g = h / grp;
    attend_one(q_.data() + h * dh, k_[l].data() + g * c_.seq_len * dh,
               v_[l].data() + g * c_.seq_len * dh, t, dh, scale, var_,
               slopes_.empty() ? 0.0 : slopes_[h], c_.seq_len, w + h * t, z_.data() + h * dh,
               &phi_);
  }
}

void Decoder::attend_state(std::size_t l) {
  const std::size_t H = c_.heads, Hkv = c_.kv_heads, dh = d_head(c_), grp = H / Hkv;
  // Pass 1: S_g += phi(k) v^T, z_g += phi(k) for the new token (kv_ holds k | v, (2, H_kv, d_h)).
  phi_.resize(dh);
  for (std::size_t g = 0; g < Hkv; ++g) {
    const float* k = kv_.data() + g * dh;
    const float* v = kv_.data() + (Hkv + g) * dh;
    float* S = s_[l].data() + g * dh * dh;
    float* z = zs_[l].data() + g * dh;
    for (std::size_t a = 0; a < dh; ++a) {
      const float pk = vgrad::phi(k[a]);
      z[a] += pk;
      row::axpy(pk, v, S + a * dh, dh);
    }
  }
  // Pass 2: each query head reads its group's state: phi(q)^T S / (phi(q) . z + 1e-6).
  num_.resize(dh);
  for (std::size_t h = 0; h < H; ++h) {
    const std::size_t g = h / grp;
    const float* S = s_[l].data() + g * dh * dh;
    const float* z = zs_[l].data() + g * dh;
    for (std::size_t a = 0; a < dh; ++a) phi_[a] = vgrad::phi(q_[h * dh + a]);
    std::fill_n(num_.data(), dh, 0.0f);
    for (std::size_t a = 0; a < dh; ++a) row::axpy(phi_[a], S + a * dh, num_.data(), dh);
    const float den = row::dot(phi_.data(), z, dh) + static_cast<float>(kLinearEps);
    for (std::size_t e = 0; e < dh; ++e) z_[h * dh + e] = num_[e] / den;
  }
}

Status Decoder::append(std::int32_t token, std::vector<float>* logits,
                       std::vector<float>* weights) {
  if (!mode_status_.ok()) return mode_status_;
  if (token < 0 || static_cast<std::size_t>(token) >= c_.vocab) {
    return Status::Invalid("token", "token " + std::to_string(token) + " is outside [0, vocab)");
  }
  if (tokens_.size() >= c_.seq_len) {
    return Status::Invalid("token", "token rejected: the sequence is full (seqLen " +
                                        std::to_string(c_.seq_len) + "); reset() the decoder");
  }
  const std::size_t L = c_.layers, H = c_.heads, Hkv = c_.kv_heads, dh = d_head(c_);
  const std::size_t D = c_.d_model, V = c_.vocab;
  const float* p = params_->data();
  const ParamLayout P = param_layout(c_);
  tokens_.push_back(token);
  const std::size_t t = tokens_.size(), pos = t - 1;
  weights->assign(mode_ == DecodeMode::kState ? 0 : L * H * t, 0.0f);
  logits->assign(V, 0.0f);

  if (mode_ == DecodeMode::kRecompute) {
    // Full causal forward over the prefix (the config's kernel, no T x T weights kept),
    // then the new query row's weights from one T_q = 1 call per layer over that layer's K
    // (all H heads in one call, so ALiBi's slopes are the model's; the core applies qkNorm
    // and RoPE to the raw projections as the forward does).
    RunOptions ro;
    ro.ablate = ablate_.empty() ? nullptr : ablate_.data();
    Status st = forward_backward(c_, p, tokens_.data(), static_cast<const std::uint8_t*>(nullptr),
                                 1, t, ro, &ws_, static_cast<float*>(nullptr),
                                 static_cast<double*>(nullptr), nullptr);
    if (!st.ok()) {
      tokens_.pop_back();
      return st;
    }
    std::copy_n(ws_.logits.data() + pos * V, V, logits->data());
    AttentionOptions ao;
    ao.shape = Shape{H, Hkv, 1, t, dh, dh};
    ao.mask.causal = true;
    ao.scale = c_.scale;
    ao.variant = var_;
    ao.memory_cap = static_cast<std::size_t>(-1);
    q_.resize(H * dh);
    for (std::size_t l = 0; l < L; ++l) {
      for (std::size_t h = 0; h < H; ++h)
        std::copy_n(ws_.qh[l].data() + (h * t + pos) * dh, dh, q_.data() + h * dh);
      st = attention(q_.data(), H * dh, ws_.kh[l].data(), Hkv * t * dh, ws_.vh[l].data(),
                     Hkv * t * dh, ao, &att_);
      if (!st.ok()) {
        tokens_.pop_back();
        return st;
      }
      std::copy_n(att_.weights.data(), H * t, weights->data() + l * H * t);
    }
    // The core's relu divides by the call's t keys; the model's by its context length.
    if (var_.normalizer == Normalizer::kRelu) {
      const float f = static_cast<float>(t) / static_cast<float>(c_.seq_len);
      for (float& x : *weights) x *= f;
    }
    return Status::Ok();
  }

  // x = E[token] + P[pos] ('learned'; shortformer: x = E[token])
  x_.assign(p + P.embed + static_cast<std::size_t>(token) * D,
            p + P.embed + static_cast<std::size_t>(token) * D + D);
  if (learned_pos_)
    for (std::size_t d = 0; d < D; ++d) x_[d] += p[P.pos + pos * D + d];
  q_.resize(H * dh);
  kv_.resize(2 * Hkv * dh);
  z_.resize(H * dh);
  for (std::size_t l = 0; l < L; ++l) {
    const auto& W = P.layer[l];
    // Pass 1: q, k, v of the new token; qkNorm and RoPE (at pos) on q and k, once. Shortformer:
    // q and k from x + P[pos] (the cached key keeps its own position's P), v from x.
    const float* xqk = x_.data();
    if (qk_pos_) {
      xp_.resize(D);
      for (std::size_t d = 0; d < D; ++d) xp_[d] = x_[d] + p[P.pos + pos * D + d];
      xqk = xp_.data();
    }
    gemm(Trans::kNN, 1, H * dh, D, xqk, D, p + W.wq, H * dh, 0.0f, q_.data(), H * dh, &pack_);
    gemm(Trans::kNN, 1, Hkv * dh, D, xqk, D, p + W.wk, Hkv * dh, 0.0f, kv_.data(), Hkv * dh,
         &pack_);
    gemm(Trans::kNN, 1, Hkv * dh, D, x_.data(), D, p + W.wv, Hkv * dh, 0.0f, kv_.data() + Hkv * dh,
         Hkv * dh, &pack_);
    transform(q_.data(), H, pos);
    transform(kv_.data(), Hkv, pos);
    // Pass 2: attend, from the cache (k and v appended at row pos of every K/V head) or
    // from the recurrent state.
    if (mode_ == DecodeMode::kCache) {
      for (std::size_t g = 0; g < Hkv; ++g) {
        std::copy_n(kv_.data() + g * dh, dh, k_[l].data() + (g * c_.seq_len + pos) * dh);
        std::copy_n(kv_.data() + (Hkv + g) * dh, dh, v_[l].data() + (g * c_.seq_len + pos) * dh);
      }
      attend_cached(l, pos, weights->data() + l * H * t);
    } else {
      attend_state(l);
    }
    if (!ablate_.empty())
      for (std::size_t h = 0; h < H; ++h)
        if (ablate_[l * H + h]) std::fill_n(z_.data() + h * dh, dh, 0.0f);
    // Pass 3: x += z W_O.
    gemm(Trans::kNN, 1, D, H * dh, z_.data(), H * dh, p + W.wo, D, 1.0f, x_.data(), D, &pack_);
  }
  const float* y = x_.data();
  if (c_.layer_norm) {
    y_.resize(D);
    float mean = 0, var = 0;
    for (std::size_t d = 0; d < D; ++d) mean += x_[d];
    mean /= static_cast<float>(D);
    for (std::size_t d = 0; d < D; ++d) var += (x_[d] - mean) * (x_[d] - mean);
    var /= static_cast<float>(D);
    const float rs = 1.0f / std::sqrt(var + 1e-5f);
    for (std::size_t d = 0; d < D; ++d)
      y_[d] = (x_[d] - mean) * rs * p[P.ln_gain + d] + p[P.ln_bias + d];
    y = y_.data();
  }
  gemm(Trans::kNN, 1, V, D, y, D, p + P.unembed, V, 0.0f, logits->data(), V, &pack_);
  return Status::Ok();
}

Status Decoder::prefill(const std::vector<std::int32_t>& tokens) {
  if (tokens_.size() + tokens.size() > c_.seq_len) {
    return Status::Invalid("tokens",
                           "prefill would exceed seqLen (" + std::to_string(c_.seq_len) + ")");
  }
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || static_cast<std::size_t>(tokens[i]) >= c_.vocab)
      return Status::Invalid("tokens", "tokens[" + std::to_string(i) + "] is outside [0, vocab)");
  if (!mode_status_.ok()) return mode_status_;
  if (mode_ == DecodeMode::kRecompute) {
    tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());  // the next append recomputes
    return Status::Ok();
  }
  std::vector<float> lg, w;
  for (std::int32_t tok : tokens) {
    Status st = append(tok, &lg, &w);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

std::int32_t pick_token(const std::vector<float>& logits, double temperature, Rng* rng) {
  std::size_t arg = 0;
  for (std::size_t j = 1; j < logits.size(); ++j)
    if (logits[j] > logits[arg]) arg = j;
  if (!(temperature > 0)) return static_cast<std::int32_t>(arg);
  std::vector<double> pr(logits.size());
  double sum = 0;
  for (std::size_t j = 0; j < logits.size(); ++j) {
    pr[j] = std::exp((static_cast<double>(logits[j]) - logits[arg]) / temperature);
    sum += pr[j];
  }
  const double u = rng->uniform() * sum;
  double acc = 0;
  for (std::size_t j = 0; j < logits.size(); ++j) {
    acc += pr[j];
    if (u < acc) return static_cast<std::int32_t>(j);
  }
  return static_cast<std::int32_t>(logits.size() - 1);
}

Status check_sample_config(const SampleConfig& s) {
  if (!(std::isfinite(s.temperature) && s.temperature >= 0)) {
    return Status::Invalid("temperature", "temperature must be a finite number >= 0");
  }
  if (!(s.top_p > 0 && s.top_p <= 1)) return Status::Invalid("topP", "topP must be in (0, 1]");
  return Status::Ok();
}

std::int32_t sample_token(const float* logits, std::size_t V, const SampleConfig& s, double u,
                          std::size_t n_top, std::int32_t* top_ids, float* top_probs) {
  std::size_t arg = 0;
  for (std::size_t j = 1; j < V; ++j)
    if (logits[j] > logits[arg]) arg = j;
  const bool greedy = !(s.temperature > 0);
  const std::size_t want = top_ids ? std::min(n_top, V) : 0;
  const bool filter = !greedy && ((s.top_k > 0 && s.top_k < V) || s.top_p < 1);
  if (greedy && want == 0) return static_cast<std::int32_t>(arg);
  // w (V): pick_token's weights; greedy shows temperature 1.
  const double temp = greedy ? 1.0 : s.temperature;
  std::vector<double> w(V);
  for (std::size_t j = 0; j < V; ++j)
    w[j] = std::exp((static_cast<double>(logits[j]) - logits[arg]) / temp);
  std::vector<std::int32_t> order;
  std::vector<std::uint8_t> kept(V, 1);
  auto by_prob = [&](std::int32_t a, std::int32_t b) {
    return w[a] > w[b] || (w[a] == w[b] && a < b);
  };
  if (filter || want > 0) {
    order.resize(V);
    for (std::size_t j = 0; j < V; ++j) order[j] = static_cast<std::int32_t>(j);
    std::sort(order.begin(), order.end(), by_prob);
  }
  if (filter) {
    std::size_t m = (s.top_k > 0 && s.top_k < V) ? s.top_k : V;
    if (s.top_p < 1) {
      std::vector<std::uint8_t> in_k(V, 0);
      for (std::size_t r = 0; r < m; ++r) in_k[order[r]] = 1;
      double sum_k = 0;
      for (std::size_t j = 0; j < V; ++j)
        if (in_k[j]) sum_k += w[j];
      double run = 0;
      for (std::size_t r = 0; r < m; ++r) {
        run += w[order[r]] / sum_k;
        if (run >= s.top_p) {
          m = r + 1;
          break;
        }
      }
    }
    std::fill(kept.begin(), kept.end(), 0);
    for (std::size_t r = 0; r < m; ++r) kept[order[r]] = 1;
  }
  double sum = 0;
  for (std::size_t j = 0; j < V; ++j)
    if (kept[j]) sum += w[j];
  for (std::size_t r = 0; r < want; ++r) {
    top_ids[r] = order[r];
    top_probs[r] = kept[order[r]] ? static_cast<float>(w[order[r]] / sum) : 0.0f;
  }
  if (greedy) return static_cast<std::int32_t>(arg);
  const double target = u * sum;
  double acc = 0;
  std::size_t last = arg;
  for (std::size_t j = 0; j < V; ++j) {
    if (!kept[j]) continue;
    acc += w[j];
    last = j;
    if (target < acc) return static_cast<std::int32_t>(j);
  }
  return static_cast<std::int32_t>(last);
}

}  // namespace attn::tr
