// Autoregressive decoding, one token at a time, in one of three modes.
//
// Cache mode keeps each layer's K and V, (H_kv, seq_len, d_h) row-major per layer; a new
// token is embedded at position t, projected once, its k and v appended, and its query
// attends over the t+1 cached keys (T_q = 1: bottom-right causal allows all of them; one
// query row per head, since the core's kernels work on blocks of 16+ query rows): O(t) work
// per token. The model's attention variant applies as the full forward applies it: qkNorm
// and RoPE rewrite a key once, when it enters the cache (RoPE at its own position j; the
// query at the new position t), ALiBi adds -m_h (t - j), which depends only on the distance,
// and the normalizer (softmax, softmax1, sigmoid, relu, linear) runs over the one row.
// Shortformer positions: every layer's q and k of the new token come from x + P[t] (so a
// cached key carries its own position's P), v from x.
// State mode (normalizer 'linear' only, whose decoding is causal here): no keys are kept.
// Per layer and K/V head g the recurrent state
//   S_g = sum_{j <= t} phi(k_j) v_j^T   (d_h, d_h),   z_g = sum_{j <= t} phi(k_j)   (d_h)
// is updated with the new token's phi(k), v, and each query head of the group reads
//   out = phi(q)^T S_g / (phi(q) . z_g + 1e-6)
// (the prefix-sum form of linear attention): constant memory and O(d_h^2) work per head per
// token after the projections, whatever t is.
// Recompute mode runs the full causal forward over the whole prefix each step (O(t^2)),
// the reference the other two must reproduce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "attn/rng.hpp"
#include "attn/tr/model.hpp"
#include "attn/variants.hpp"

namespace attn::tr {

enum class DecodeMode { kRecompute, kCache, kState };

// The mode `cache` asks for: no cache is recompute; a cache is the recurrent state for a
// linear-normalizer model and the K/V cache for every other.
DecodeMode default_decode_mode(const ModelConfig& c, bool cache);
// Ok, or why this model cannot decode in `mode`: field "state" (the recurrent state needs
// normalizer 'linear'). Every variant decodes from a K/V cache: the model's relu divisor and
// sigmoid's default bias use its context length seqLen, not the number of tokens so far, so a
// position's keys and values never change once computed.
Status check_decode_mode(const ModelConfig& c, DecodeMode mode);
const char* decode_mode_name(DecodeMode mode);  // "recompute", "cache", "state"

class Decoder {
 public:
  // params: the model's flat float32 parameters, shared (the decoder outlives nothing it
  // needs). ablate: (L*H) or empty. cache: default_decode_mode(c, cache).
  Decoder(const ModelConfig& c, std::shared_ptr<const std::vector<float>> params, bool cache,
          std::vector<std::uint8_t> ablate);
  // A mode check_decode_mode refuses makes every append return that error.
  Decoder(const ModelConfig& c, std::shared_ptr<const std::vector<float>> params, DecodeMode mode,
          std::vector<std::uint8_t> ablate);

  // Appends `token`; logits: (V,) for the next token; weights: (L, H, t) of the new
  // query row, t = length() after the append; empty in state mode (it keeps no keys to weigh).
  // Errors: token out of range, sequence full, a mode the model does not support.
  Status append(std::int32_t token, std::vector<float>* logits, std::vector<float>* weights);
  // Appends tokens without returning anything (recompute mode only stores them: its next
  // append recomputes the prefix anyway). For benchmarks at a given length.
  Status prefill(const std::vector<std::int32_t>& tokens);
  void reset();
  std::size_t length() const { return tokens_.size(); }
  // Bytes the decoder keeps between tokens: the K/V cache, 2 * L * H_kv * seq_len * d_h
  // floats (allocated for seq_len at once); the recurrent state, L * H_kv * (d_h * d_h + d_h)
  // floats whatever the length; 0 in recompute mode.
  std::size_t cache_bytes() const;
  bool cached() const { return mode_ != DecodeMode::kRecompute; }
  DecodeMode mode() const { return mode_; }
  // Copies layer `layer`'s cached keys and values for the t = length() tokens so far:
  // k, v: (H_kv, t, d_h) row-major, the keys after qkNorm and RoPE (as attention reads them).
  // Errors: layer out of range; recompute or state mode (no K/V cache).
  Status cache(std::size_t layer, std::vector<float>* k, std::vector<float>* v) const;
  // Copies layer `layer`'s recurrent state: s (H_kv, d_h, d_h), z (H_kv, d_h) row-major.
  // Errors: layer out of range; not state mode.
  Status state(std::size_t layer, std::vector<float>* s, std::vector<float>* z) const;

 private:
  // Per-layer step of cache and state mode for the new token at position pos: attends, writes
  // the head outputs to z_ (H * d_h) and the weights of the new row (H, t) to w (cache mode).
  void attend_cached(std::size_t l, std::size_t pos, float* w);
  void attend_state(std::size_t l);
  // qkNorm, then RoPE at position pos, on `rows` rows of d_h (the order the forward uses).
  void transform(float* x, std::size_t rows, std::size_t pos) const;

  ModelConfig c_;
  std::shared_ptr<const std::vector<float>> params_;
  DecodeMode mode_;
  Status mode_status_;
  Variant var_;                 // the model's attention variant
  bool learned_pos_ = true;     // learned positional table P added to the embedding
  bool qk_pos_ = false;         // shortformer: P added to the input of W_Q and W_K
  std::vector<double> slopes_;  // ALiBi m_h for the H query heads (empty otherwise)
  std::vector<double> theta_;   // RoPE angles per pair p: ropeBase^(-2p/d_h)
  std::vector<std::uint8_t> ablate_;
  std::vector<std::int32_t> tokens_;
  std::vector<std::vector<float>> k_, v_;   // cache: per layer (H_kv, seq_len, d_h)
  std::vector<std::vector<float>> s_, zs_;  // state: per layer (H_kv, d_h, d_h), (H_kv, d_h)
  std::vector<float> x_, xp_, q_, kv_, z_, y_, pack_, phi_, num_;
  AttentionResult<float> att_;
  Workspace<float> ws_;  // recompute mode
};

// Greedy (temperature 0: argmax, first maximum on ties) or softmax(logits / temperature)
// sampled by inverse CDF with one rng.uniform() draw.
std::int32_t pick_token(const std::vector<float>& logits, double temperature, Rng* rng);

// Sampling settings: temperature 0 = greedy; top_k 0 = off; top_p 1 = off.
struct SampleConfig {
  double temperature = 0;
  std::size_t top_k = 0;
  double top_p = 1;
};
// Ok, or why not (fields temperature: finite >= 0; topK: whole >= 0; topP: in (0, 1]).
Status check_sample_config(const SampleConfig& s);

// One token from logits (V) with one uniform u in [0, 1). Temperature 0: argmax (first maximum),
// u unused. Otherwise, in doubles:
//   w_j = exp((logit_j - max) / temperature)                       (as pick_token)
//   order = ids sorted by w descending, ties by the smaller id
//   topK:  K = first min(k, V) of order (all when k = 0)
//   topP:  q_j = w_j / sum_K (sum_K summed in id order); keep the shortest prefix of order (within
//          K) whose running sum of q (in that order) reaches p (all of K if rounding never does);
//          skipped when p = 1
//   draw:  sum over kept ids in id order, then the first kept id (id order) whose running sum
//          exceeds u * sum - with nothing filtered, bit for bit pick_token's draw.
// top_ids / top_probs (optional, n_top each): the n_top = min(n_top, V) first ids of order and
// their probabilities after filtering (w_j / sum over kept, 0 when dropped); at temperature 0 the
// probabilities are softmax(logits) (temperature 1, unfiltered), for display.
std::int32_t sample_token(const float* logits, std::size_t V, const SampleConfig& s, double u,
                          std::size_t n_top = 0, std::int32_t* top_ids = nullptr,
                          float* top_probs = nullptr);

}  // namespace attn::tr
