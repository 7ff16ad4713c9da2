#include "attn/tr/decode.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/gemm.hpp"
#include "attn/rng.hpp"
#include "attn/row_ops.hpp"

namespace attn::tr {

namespace {

// One query row over the t cached keys: with T_q = 1 the bottom-right causal mask allows
// every cached key, so this is softmax(scale q K^T) V over all of them. The core's kernels
// work on blocks of 16+ query rows; a single row here costs O(t d_h) with no padding.
// q: (d_h), k, v: (t, d_h) rows; writes w (t) and out (d_h).
void attend_one(const float* q, const float* k, const float* v, std::size_t t, std::size_t dh,
                float scale, float* w, float* out) {
  float mx = -std::numeric_limits<float>::infinity();
  for (std::size_t j = 0; j < t; ++j) {
    w[j] = scale * row::dot(q, k + j * dh, dh);
    mx = std::max(mx, w[j]);
  }
  for (std::size_t j = 0; j < t; ++j) w[j] -= mx;
  row::exp(w, w, t, true);  // arguments <= 0
  float sum = 0;
  for (std::size_t j = 0; j < t; ++j) sum += w[j];
  const float inv = 1.0f / sum;
  std::fill_n(out, dh, 0.0f);
  for (std::size_t j = 0; j < t; ++j) {
    w[j] *= inv;
    row::axpy(w[j], v + j * dh, out, dh);
  }
}

}  // namespace

Decoder::Decoder(const ModelConfig& c, std::shared_ptr<const std::vector<float>> params, bool cache,
                 std::vector<std::uint8_t> ablate)
    : c_(c), params_(std::move(params)), cache_(cache), ablate_(std::move(ablate)) {
  reset();
}

void Decoder::reset() {
  tokens_.clear();
  if (cache_) {
    const std::size_t n = c_.kv_heads * c_.seq_len * d_head(c_);
    k_.assign(c_.layers, std::vector<float>(n, 0.0f));
    v_.assign(c_.layers, std::vector<float>(n, 0.0f));
  }
}

std::size_t Decoder::cache_bytes() const {
  if (!cache_) return 0;
  return 2 * c_.layers * c_.kv_heads * c_.seq_len * d_head(c_) * sizeof(float);
}

Status Decoder::cache(std::size_t layer, std::vector<float>* k, std::vector<float>* v) const {
  if (!cache_) return Status::Invalid("cache", "a recompute-mode decoder keeps no K/V cache");
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

Status Decoder::append(std::int32_t token, std::vector<float>* logits,
                       std::vector<float>* weights) {
  if (token < 0 || static_cast<std::size_t>(token) >= c_.vocab) {
    return Status::Invalid("token", "token " + std::to_string(token) + " is outside [0, vocab)");
  }
  if (tokens_.size() >= c_.seq_len) {
    return Status::Invalid("token", "token rejected: the sequence is full (seqLen " +
                                        std::to_string(c_.seq_len) + "); reset() the decoder");
  }
  const std::size_t L = c_.layers, H = c_.heads, Hkv = c_.kv_heads, dh = d_head(c_);
  const std::size_t D = c_.d_model, V = c_.vocab, grp = H / Hkv;
  const float* p = params_->data();
  const ParamLayout P = param_layout(c_);
  tokens_.push_back(token);
  const std::size_t t = tokens_.size(), pos = t - 1;
  weights->assign(L * H * t, 0.0f);
  logits->assign(V, 0.0f);

  if (!cache_) {
    // Full causal forward over the prefix (the config's kernel, no T x T weights kept),
    // then the new query row's weights per head from one T_q = 1 call over that layer's K.
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
    ao.shape = Shape{1, 1, 1, t, dh, dh};
    ao.mask.causal = true;
    ao.scale = c_.scale;
    ao.memory_cap = static_cast<std::size_t>(-1);
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t g = h / grp;
        st = attention(ws_.qh[l].data() + (h * t + pos) * dh, dh, ws_.kh[l].data() + g * t * dh,
                       t * dh, ws_.vh[l].data() + g * t * dh, t * dh, ao, &att_);
        if (!st.ok()) {
          tokens_.pop_back();
          return st;
        }
        std::copy_n(att_.weights.data(), t, weights->data() + (l * H + h) * t);
      }
    return Status::Ok();
  }

  // x = E[token] + P[pos]
  x_.assign(p + P.embed + static_cast<std::size_t>(token) * D,
            p + P.embed + static_cast<std::size_t>(token) * D + D);
  if (c_.positional)
    for (std::size_t d = 0; d < D; ++d) x_[d] += p[P.pos + pos * D + d];
  q_.resize(H * dh);
  kv_.resize(Hkv * dh);
  z_.resize(H * dh);
  AttentionOptions so;
  so.shape.dk = dh;
  so.scale = c_.scale;
  const float scale = static_cast<float>(effective_scale(so));
  for (std::size_t l = 0; l < L; ++l) {
    const auto& W = P.layer[l];
    gemm(Trans::kNN, 1, H * dh, D, x_.data(), D, p + W.wq, H * dh, 0.0f, q_.data(), H * dh, &pack_);
    // Append k and v at position pos of every K/V head.
    gemm(Trans::kNN, 1, Hkv * dh, D, x_.data(), D, p + W.wk, Hkv * dh, 0.0f, kv_.data(), Hkv * dh,
         &pack_);
    for (std::size_t g = 0; g < Hkv; ++g)
      std::copy_n(kv_.data() + g * dh, dh, k_[l].data() + (g * c_.seq_len + pos) * dh);
    gemm(Trans::kNN, 1, Hkv * dh, D, x_.data(), D, p + W.wv, Hkv * dh, 0.0f, kv_.data(), Hkv * dh,
         &pack_);
    for (std::size_t g = 0; g < Hkv; ++g)
      std::copy_n(kv_.data() + g * dh, dh, v_[l].data() + (g * c_.seq_len + pos) * dh);
    // Each query head over its K/V head's t cached rows (T_q = 1).
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t g = h / grp;
      float* w = weights->data() + (l * H + h) * t;
      attend_one(q_.data() + h * dh, k_[l].data() + g * c_.seq_len * dh,
                 v_[l].data() + g * c_.seq_len * dh, t, dh, scale, w, z_.data() + h * dh);
      if (!ablate_.empty() && ablate_[l * H + h]) std::fill_n(z_.data() + h * dh, dh, 0.0f);
    }
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
  if (!cache_) {
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

}  // namespace attn::tr
