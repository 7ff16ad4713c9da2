// Autoregressive decoding, one token at a time.
//
// Cached mode keeps each layer's K and V, (H_kv, seq_len, d_h) row-major per layer; a new
// token is embedded at position t, projected once, its k and v appended, and its query
// attends over the t+1 cached keys (T_q = 1: bottom-right causal allows all of them; a
// single-row softmax(scale q K^T) V per query head, since the core's kernels work on blocks
// of 16+ query rows): O(t) work per token.
// Recompute mode runs the full causal forward over the whole prefix each step (O(t^2)),
// the reference the cache must reproduce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "attn/rng.hpp"
#include "attn/tr/model.hpp"

namespace attn::tr {

class Decoder {
 public:
  // params: the model's flat float32 parameters, shared (the decoder outlives nothing it
  // needs). ablate: (L*H) or empty.
  Decoder(const ModelConfig& c, std::shared_ptr<const std::vector<float>> params, bool cache,
          std::vector<std::uint8_t> ablate);

  // Appends `token`; logits: (V,) for the next token; weights: (L, H, t) of the new
  // query row, t = length() after the append. Errors: token out of range, sequence full.
  Status append(std::int32_t token, std::vector<float>* logits, std::vector<float>* weights);
  // Appends tokens without returning anything (recompute mode only stores them: its next
  // append recomputes the prefix anyway). For benchmarks at a given length.
  Status prefill(const std::vector<std::int32_t>& tokens);
  void reset();
  std::size_t length() const { return tokens_.size(); }
  // Bytes held by the K/V cache (0 in recompute mode): 2 * L * H_kv * seq_len * d_h floats.
  std::size_t cache_bytes() const;
  bool cached() const { return cache_; }
  // Copies layer `layer`'s cached keys and values for the t = length() tokens so far:
  // k, v: (H_kv, t, d_h) row-major. Errors: layer out of range; recompute mode (no cache).
  Status cache(std::size_t layer, std::vector<float>* k, std::vector<float>* v) const;

 private:
  ModelConfig c_;
  std::shared_ptr<const std::vector<float>> params_;
  bool cache_;
  std::vector<std::uint8_t> ablate_;
  std::vector<std::int32_t> tokens_;
  std::vector<std::vector<float>> k_, v_;  // per layer (H_kv, seq_len, d_h)
  std::vector<float> x_, q_, kv_, z_, y_, pack_;
  AttentionResult<float> att_;
  Workspace<float> ws_;  // recompute mode
};

// Greedy (temperature 0: argmax, first maximum on ties) or softmax(logits / temperature)
// sampled by inverse CDF with one rng.uniform() draw.
std::int32_t pick_token(const std::vector<float>& logits, double temperature, Rng* rng);

}  // namespace attn::tr
