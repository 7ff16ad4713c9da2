// The lessons' examples, as builders of inputs for multi_head_attention.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/multihead.hpp"

namespace attn {

// Inputs for one multi-head attention call, float32 as the page uses them.
struct Example {
  std::vector<std::string> tokens;
  std::size_t t = 0, d_model = 0, heads = 0, kv_heads = 0, dk = 0, dv = 0;
  bool causal = false;
  std::vector<float> x;   // (T, d_model)
  std::vector<float> wq;  // (d_model, H*d_k)
  std::vector<float> wk;  // (d_model, H_kv*d_k)
  std::vector<float> wv;  // (d_model, H_kv*d_v)
  std::vector<float> wo;  // (H*d_v, d_model)
  // Cross-attention: queries come from x (T = t rows), keys and values from x_kv.
  std::vector<std::string> kv_tokens;  // (T_k) the key/value sequence's tokens
  std::size_t tk = 0;                  // T_k; 0: self-attention (keys and values from x)
  std::vector<float> x_kv;             // (T_k, d_model) rows keys and values come from
};

// The multi_head_attention options that run an example as its lesson does
// (shapes, tk and the causal mask; default scale and fill). With e.tk > 0 run it through the
// cross overload of multi_head_attention with x_kv = e.x_kv.
MhaOptions mha_options(const Example& e);

// The hand-built two-head "induction" model of lesson 1. Each token is a one-hot
// word identity (dims 0..V-1) followed by a one-hot position (dims d_k..d_k+T-1),
// d_k = max(12, V, T) (the lesson's width is 12; the default scale 1/sqrt(d_k) depends
// on it, so the lesson's figures need exactly 12), two heads, d_model = 2 d_k.
//   head 1 (content): W_q = sharpness * I and W_k = I on the word dims, so a query
//     matches every key holding the same word;
//   head 2 (previous token): W_q maps position i to a one-hot at i - 1 (times
//     sharpness) and W_k reads the key position, so each token looks one step back.
// W_v and W_o are identities; causal. With the lesson's sentence and sharpness 14,
// the second "cat" (position 8) puts 0.471 on positions 1 and 8 in head 1 and
// 0.877 on position 7 in head 2 (default scale 1/sqrt(12)).
Status induction_example(const std::vector<std::string>& tokens, double sharpness, Example* out);
std::vector<std::string> lesson_sentence();  // "the cat sat on the mat because the cat was tired"

// The most tokens a hand-built example takes (each of queries and keys for the alignment one):
// d_k grows with T, so the (2 d_k)^2 weight matrices stay a few MiB.
inline constexpr std::size_t kMaxHandBuiltTokens = 512;

// A hand-built two-head cross-attention model, built as lesson 1's: the queries are one
// sentence (say English), the keys and values another (say French). A small fixed bilingual
// lexicon (examples.cpp) maps words to concepts ("the", "le", "la", "les", "l'" -> DET; "cat",
// "chat" -> CAT; "was", "is", "était", "est" -> BE; ...), matching case-insensitively (ASCII
// letters folded); a word not in the lexicon is its own concept, so an unknown word (a name)
// matches itself. Concepts get ids 0..C-1 in order of first appearance, the queries read
// before the keys.
// Each token is a one-hot concept (dims 0..C-1) then a one-hot position (dims d_k..d_k+i);
// d_k = max(12, C, T_q, T_k) (the lesson's width is 12: the default scale 1/sqrt(d_k) depends
// on it, so small pairs get the lesson's softness), two heads, d_model = 2 d_k.
//   head 1 (meaning): W_q = sharpness * I and W_k = I on the concept dims, so a query
//     matches the keys of its concept ("cat" -> "chat");
//   head 2 (position, monotone alignment): W_q maps query position i to a one-hot at key
//     position j(i) = round(i (T_k - 1) / (T_q - 1)) (halves round up; 0 when T_q = 1), times
//     sharpness, and W_k reads the key position: each word looks at the word at the same
//     relative place.
// W_v and W_o are identities; not causal (the two sequences have no order between them).
// out: tokens = queries, kv_tokens = keys, x (T_q, d_model), x_kv (T_k, d_model).
// Errors (Invalid): "queries" / "keys" empty or over kMaxHandBuiltTokens, "sharpness" not a
// finite positive number.
Status alignment_example(const std::vector<std::string>& queries,
                         const std::vector<std::string>& keys, double sharpness, Example* out);
// The default pair: "the cat sat on the mat" / "le chat était assis sur le tapis".
std::vector<std::string> alignment_queries();
std::vector<std::string> alignment_keys();

// How the random example scales its weight matrices (X is always N(0,1)).
enum class WeightInit {
  // Every weight N(0,1), as lesson 2 draws them. A query or key entry then sums d_model
  // products of unit variance: variance d_model, so even with 1/sqrt(d_k) the scores
  // grow with d_model and the softmax saturates.
  kLesson,
  // Every weight N(0, 1/d_model) (the N(0,1) draw times 1/sqrt(d_model)): query and key
  // entries have variance 1, as in the sqrt(d_k) study, where the scale keeps rows soft.
  kScaled,
};

// Seeded random example in the style of lesson 2: X ~ N(0,1) of shape (T, d_model),
// every weight matrix ~ N(0,1) (or N(0, 1/d_model), see WeightInit), drawn in the order
// X, W_q, W_k, W_v, W_o from Rng(seed); both inits use the same draws.
// Tokens are "t0", "t1", ... unless given (then their count sets T).
// kv_tokens non-empty: a cross-attention example, X_kv ~ N(0,1) of shape (T_k, d_model),
// T_k = kv_tokens.size(), drawn after W_o, so X and the weights are those of the same seed
// without kv_tokens (error field "kvTokens" over the example's T cap).
struct RandomExampleOptions {
  std::uint64_t seed = 0;
  std::size_t t = 6, d_model = 8, heads = 1, kv_heads = 0, dk = 0, dv = 0;
  bool causal = true;
  std::vector<std::string> tokens;
  std::vector<std::string> kv_tokens;  // non-empty: cross-attention, X_kv drawn after W_o
  WeightInit init = WeightInit::kLesson;
};
Status random_example(RandomExampleOptions o, Example* out);

// Lesson 1's study of the 1/sqrt(d_k) factor: for each d_k, `queries` Gaussian
// queries against `keys` Gaussian keys (all entries N(0,1) from Rng(seed)); the
// mean softmax entropy (nats) per row, with the 1/sqrt(d_k) scale and without it.
// The study costs sum(dks) * keys * queries multiply-adds; a request over this budget
// (about a second of work) is refused with field "queries", so no call can hang a tab.
inline constexpr std::uint64_t kMaxEntropyStudyWork = std::uint64_t{1} << 30;
struct EntropyPoint {
  std::size_t dk;
  double scaled, unscaled;
};
Status entropy_study(const std::vector<std::size_t>& dks, std::size_t keys, std::size_t queries,
                     std::uint64_t seed, std::vector<EntropyPoint>* out);

}  // namespace attn
