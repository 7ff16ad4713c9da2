// A tiny attention-only transformer (no MLP, no biases), forward and backward.
//
//   x_0      = E[tokens] + P[positions]                 (N, D), N = B*T rows, row r = b*T + i
//                (P only with the learned table: positional 'learned')
//   x_{l+1}  = x_l + Z_l W_O^l                          Z_l: (N, H*d_h), the merged head outputs
//   Z_l head h = attention(x_l W_Q^h, x_l W_K^g, x_l W_V^g), causal, g = h / (H / H_kv)
//                (positional 'shortformer', Press et al. 2021: x_0 = E[tokens] and the same
//                table enters every layer's queries and keys only:
//                attention((x_l + P) W_Q^h, (x_l + P) W_K^g, x_l W_V^g))
//                (softmax by default; a config with a variant - normalizer, RoPE, ALiBi, qkNorm -
//                runs the trainer's own variant kernels, cpp/src/tr/variant_attention.hpp)
//   y        = LayerNorm(x_L) * gain + bias   (optional; eps 1e-5, biased variance as torch)
//   logits   = y U                                      (N, V), untied unembedding U: (D, V)
//   loss     = mean over (b, t >= 1) with mask[b, t] = 1 of -log softmax(logits[b, t-1])[tokens[b,
//   t]]
//
// d_h = D / H; head h owns columns [h*d_h, (h+1)*d_h) of W_Q (and, for its K/V head g,
// the same block g of W_K, W_V) and rows [h*d_h, (h+1)*d_h) of W_O. Every attention call
// covers the whole batch: heads = B*H, kv_heads = B*H_kv, Q (B, H, T, d_h) row-major, so
// query head b*H + h reads K/V head (b*H + h) / (H / H_kv) = b*H_kv + g, inside its own
// sequence.
//
// All parameters live in one flat buffer (ParamLayout gives the offsets), so the optimiser,
// the clipping norm and the gradient buffer treat them as one vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attn/aligned.hpp"
#include "attn/attention.hpp"
#include "attn/backward.hpp"
#include "attn/status.hpp"
#include "attn/tr/variant_cache.hpp"
#include "attn/variants.hpp"

namespace attn::tr {

struct ModelConfig {
  std::size_t vocab = 32;    // V
  std::size_t seq_len = 32;  // T, the longest sequence (rows of the positional table)
  std::size_t layers = 2;    // L
  std::size_t heads = 2;     // H
  std::size_t kv_heads = 2;  // H_kv, divides H
  std::size_t d_model = 64;  // D, divisible by H
  // The JS field `positional` is one choice: 'learned' (positional = true, position = kNone),
  // 'none' (false, kNone), 'rope' (false, kRope), 'alibi' (false, kAlibi), 'shortformer'
  // (positional = true, shortformer = true, kNone); a learned table together with RoPE or
  // ALiBi, or shortformer without the table, is rejected (field positional).
  bool positional = true;               // learned positional embedding P: (T, D)
  bool shortformer = false;             // P goes into W_Q and W_K's input, not into x_0
  Position position = Position::kNone;  // inside attention: RoPE on q and k, or ALiBi biases
  bool layer_norm = false;              // final LayerNorm with gain and bias
  std::optional<double> scale;          // unset: 1/sqrt(d_h) ('sqrt'); 'none' is scale 1
  double init_std = 0;                  // 0: 1/sqrt(D) (see init_params)
  double dropout = 0;                   // attention-weight dropout while training
  Kernel kernel = Kernel::kNaive;
  // Attention variants (attn/variants.hpp, the core's definitions): the normalizer, qkNorm
  // (per row, eps 1e-12) and sigmoid's bias (unset: -ln t for a call over t positions).
  // RoPE uses ropeBase 10000 and positions within each sequence; ALiBi uses Press et al.'s
  // slopes for the H heads of a layer. The defaults run today's softmax path bit for bit.
  Normalizer normalizer = Normalizer::kSoftmax;
  bool qk_norm = false;
  std::optional<double> sigmoid_bias;
  std::size_t memory_cap = kDefaultMemoryCap;  // model + optimiser + batch activations
};

// Offsets (in elements) of every parameter in the flat buffer.
struct ParamLayout {
  struct Layer {
    std::size_t wq, wk, wv, wo;  // (D, H*d_h), (D, H_kv*d_h), (D, H_kv*d_h), (H*d_h, D)
  };
  std::size_t embed = 0;  // (V, D)
  std::size_t pos = 0;    // (T, D) when positional (also for shortformer)
  std::vector<Layer> layer;
  std::size_t ln_gain = 0, ln_bias = 0;  // (D,) each when layer_norm
  std::size_t unembed = 0;               // (D, V)
  std::size_t total = 0;
};

std::size_t d_head(const ModelConfig& c);

// Whether the config uses any attention variant (then the trainer's variant kernels run).
bool uses_variant(const ModelConfig& c);
// The core's Variant for one head's attention call with this config (for callers that run
// attn::attention per head, e.g. to show the weights; ALiBi's slopes there are per call).
Variant attention_variant(const ModelConfig& c);
// The JS name of the positional choice: 'learned', 'none', 'rope', 'alibi' or 'shortformer'.
const char* positional_name(const ModelConfig& c);
// Parses that name into c->positional, c->shortformer and c->position; false for anything else.
bool parse_positional(const std::string& name, ModelConfig* c);
ParamLayout param_layout(const ModelConfig& c);

// Checks every field (names as in the JS config: vocab, seqLen, layers, heads, kvHeads,
// dModel, scale, initStd, dropout, positional, normalizer, sigmoidBias, memoryCap) without
// allocating.
Status validate_model(const ModelConfig& c, std::size_t batch);

// Bytes a trainer with this batch needs: parameters, gradients, two AdamW moments and
// the activations of one forward + backward (with the (B*H, T, T) weights of every layer
// for the naive kernel). An estimate with the big terms exact, used for the memory cap.
std::size_t estimate_training_bytes(const ModelConfig& c, std::size_t batch);

// Deterministic initialisation. One attn::Rng (SplitMix64, Box-Muller normals) seeded with
// `seed` fills, in this order, E, P, then per layer W_Q, W_K, W_V, W_O, then U, each in
// row-major order, with N(0, s^2), s = init_std or 1/sqrt(D) (every matrix has fan-in D,
// H*d_h = D); LayerNorm gain = 1, bias = 0.
template <class T>
void init_params(const ModelConfig& c, std::uint64_t seed, T* params);

// Per-call switches of a forward pass.
struct RunOptions {
  bool training = false;                 // dropout on (if config.dropout > 0)
  std::uint64_t dropout_seed = 0;        // layer l uses a seed mixed from this and l
  const std::uint8_t* ablate = nullptr;  // (L*H,), 1 = head output zeroed; nullptr = none
  bool keep_weights = false;             // keep every layer's (B*H, T, T) weights (naive forward)
  // (L*H,) if set, with keep_weights, no dropout and gradients requested: mean |dL/dS| per
  // layer x head over the causal cells, S the softmax input (a diagnostic pass, not training).
  double* score_grad = nullptr;
  // A diagnostic pass that needs only dL/dW_Q (the score-gradient diagnostic): the backward
  // skips the other weights' products, and the rest of grads is left unspecified. The W_Q
  // gradients have the same bits as in a full pass.
  bool wq_grads_only = false;
  // Targets the loss and its gradient are divided by; 0 = this call's own count. A shard of a
  // batch passes the whole batch's count, so its loss and gradient are its share of the
  // batch's: shard gradients add up to the batch gradient (a shard without targets: loss 0).
  std::size_t loss_norm = 0;
  // Layers below this one are not recomputed: their residual stream x_0 .. x_from_layer is
  // taken from the workspace as the previous call left it. For a caller that changes only
  // layers from_layer and up (an ablation there): same tokens, batch, length, parameters and
  // ablations below from_layer as that call, no gradients. 0 = the whole forward.
  std::size_t from_layer = 0;
  // With from_layer (0 included): layer from_layer's attention is also taken from the
  // workspace, as the previous call left it. For ablation reruns: zeroing a head of that
  // layer acts after its attention, on an unchanged x_from_layer, so only its merge (with
  // the ablations) and output projection are recomputed, to the same bits. Same conditions
  // as from_layer (a previous forward of the same batch, no gradients), and that call's
  // attention at from_layer must be in the workspace (it computed that layer).
  bool keep_from_attention = false;
};

// Activations of one forward pass, reused between calls (buffers only grow).
template <class T>
struct Workspace {
  std::size_t batch = 0, t = 0;
  std::vector<AlignedVector<T>> x;           // L+1 residual streams (N, D)
  std::vector<AlignedVector<T>> qh, kh, vh;  // per layer (B*H, T, d_h), (B*H_kv, T, d_h) x2
  std::vector<AlignedVector<T>> z;           // per layer (N, H*d_h) merged head outputs
  std::vector<AttentionResult<T>> att;       // per layer attention forward
  AlignedVector<T> xhat, rstd, y, logits;    // final LayerNorm and unembedding
  std::vector<AlignedVector<T>> wqkv;        // per layer [W_Q | W_K | W_V] packed (D, w3)
  AlignedVector<T> qkv;  // (N, w3): q | k | v, then dq | dk | dv in the backward
  AlignedVector<T> dx, dz, dout, dw, dlogits, dy;  // backward scratch
  AlignedVector<T> xp, dxp;  // shortformer: x_l + P and its gradient (N, D), one layer at a time
  std::vector<T> pack;       // the products' packing scratch
  AlignedVector<T> ce;       // (V) one row's exp(logit - max) when there are no gradients
  AttentionGrads<T> grads;
  std::vector<VariantCache<T>> vcache;  // per layer, when the config uses a variant
};

// Forward pass over tokens (B, t) (t <= seq_len), returning logits in ws->logits (N, V).
// If `loss_mask` is given, *loss is the masked mean cross-entropy (NaN if the mask selects
// no target) and *count the number of targets. If `grads` is non-null the backward pass
// writes every parameter gradient into it (overwriting). Tokens must be < vocab (checked).
template <class T>
Status forward_backward(const ModelConfig& c, const T* params, const std::int32_t* tokens,
                        const std::uint8_t* loss_mask, std::size_t batch, std::size_t t,
                        const RunOptions& ro, Workspace<T>* ws, T* grads, double* loss,
                        std::size_t* count);

}  // namespace attn::tr
