// The text model's probe and head scores (the definitions the page, docs/train-api.md and the
// tests use). A model with context T = seqLen; n = probe_length(T) = min(floor(T/2), 50).
//
// Probe: `count` rows of length 2n, row b = [r_b, r_b], r_b n tokens drawn uniformly with
// replacement from a caller's candidate list (m ids; the text model passes its 1,000 most
// frequent training tokens, or all if fewer). The draws, so an oracle can reproduce them:
//   attn::Rng rng(seed);                       // SplitMix64, attn/rng.hpp
//   for b in 0..count-1: for i in 0..n-1:
//     r_b[i] = candidates[floor(rng.uniform() * m)]   // uniform(): (next_u64() >> 11) * 2^-53
//
// On a probe batch (forward in the model's precision, weights kept, no dropout):
//   in-context score  = mean CE over the second copy's targets (positions n+1 .. 2n-1, predicted
//                       from the logits at n .. 2n-2) minus mean CE over the first copy's
//                       (positions 1 .. n-1); CE in nats of the model's next-token softmax, means
//                       over all rows and those positions; negative = the repeat is predicted
//                       from context.
//   induction(l, h)   = mean over rows and queries i = n .. 2n-1 of the weight from i to key
//                       i - n + 1 (the token after i's earlier copy).
//   previous(l, h)    = mean over rows and queries i = 1 .. 2n-1 of the weight from i to i - 1.
// On one text of t tokens (2 <= t <= T):
//   previous(l, h)    = mean over i = 1 .. t-1 of the weight from i to i - 1;
//   first(l, h)       = mean over i = 1 .. t-1 of the weight from i to key 0;
//   duplicate(l, h)   = mean, over the queries i with at least one j < i holding the same token,
//                       of the summed weight on those j (0 when no query has one);
//   induction(l, h)   = mean, over the queries i with K_i non-empty, of the summed weight on
//                       K_i = { j + 1 : j < i, tokens[j] == tokens[i], j + 1 <= i - 1 } (the key
//                       after each earlier occurrence of i's token; j + 1 = i, the previous-token
//                       key, is left out), 0 when no query has one.
// Role of a head on a text (head_role): the largest of (previous, induction, duplicate, first)
// if it is >= kRoleThreshold, else mixed; ties go to the earlier score in that order, and a NaN
// score never wins.
// Weights are the model's attention weights as its forward forms them (any normalizer; rows of
// sigmoid / relu need not sum to 1), ablated heads included (their weights are still formed).
//
// attn::pattern_scores (attn/roles.hpp; the Train tab's head scores) is a different, token-based
// measure: its pattern cells come from token matches (induction = the key after ANY earlier
// occurrence of the query's token, so repeated tokens within r add cells), each sequence's score
// is Σ A·pattern / Σ A over its matching rows, and the result is a mean over sequences. The
// scores here are position-based on the probe's known layout and plain means of weights per query.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/names.hpp"
#include "attn/status.hpp"
#include "attn/tr/model.hpp"

namespace attn::tr {

inline constexpr std::size_t kProbeMaxHalf = 50;

// n = min(floor(seq_len / 2), 50).
std::size_t probe_length(std::size_t seq_len);

// Probe tokens (count, 2n) row-major, drawn as above. Errors: seqLen (n < 2: the first copy
// would have no target), count (0), candidates (empty, or an id outside [0, vocab)).
Status make_probe(const ModelConfig& c, const std::vector<std::int32_t>& candidates,
                  std::size_t count, std::uint64_t seed, std::vector<std::int32_t>* tokens);

struct ProbeScores {
  double in_context = 0;               // ce_second - ce_first
  double ce_first = 0, ce_second = 0;  // the two means (nats)
  std::vector<double> induction;       // (L*H), index l*H + h
  std::vector<double> previous;        // (L*H)
};

// Scores of a probe batch: probe (count, 2n) as make_probe gives it, n = probe_length(seqLen).
// One batched forward (naive kernel, weights kept) in ws. ablate: (L*H) or null.
template <class T>
Status probe_scores(const ModelConfig& c, const T* params, const std::int32_t* probe,
                    std::size_t count, const std::uint8_t* ablate, Workspace<T>* ws,
                    ProbeScores* out);

// probe_scores over `rows` rows of the probe in forwards of at most `chunk` rows (the kept
// weights stay chunk * H * (2n)^2 floats per layer), each chunk's means weighted by its rows and
// added in chunk order, then divided by rows (the same bits for the same chunk). Errors as
// probe_scores; chunk 0 is refused (field chunk).
template <class T>
Status probe_scores_chunked(const ModelConfig& c, const T* params, const std::int32_t* probe,
                            std::size_t rows, std::size_t chunk, const std::uint8_t* ablate,
                            Workspace<T>* ws, ProbeScores* out);

struct TextHeadScores {
  std::vector<double> previous, duplicate, first, induction;  // (L*H) each, index l*H + h
};

// Per-head scores of one text, tokens (t), 2 <= t <= seqLen. ablate: (L*H) or null.
template <class T>
Status text_head_scores(const ModelConfig& c, const T* params, const std::int32_t* tokens,
                        std::size_t t, const std::uint8_t* ablate, Workspace<T>* ws,
                        TextHeadScores* out);

// A head's role on a text, in the order of head_role_names() (a role's index is its value).
enum class HeadRole { kPreviousToken, kInduction, kDuplicateToken, kFirstToken, kMixed };
inline constexpr std::size_t kHeadRoleCount = 5;
inline constexpr double kRoleThreshold = 0.4;

// "previous-token", "induction", "duplicate-token", "first-token", "mixed" (option "role"):
// the one spelling of the roles; the JS API hands it on as lib.headRoles.names.
const NameList& head_role_names();
const char* head_role_name(HeadRole r);

// The rule of the header comment on four scores.
HeadRole head_role(double previous, double induction, double duplicate, double first);
// Head `index` (= l*H + h) of s; index must be below s.previous.size().
HeadRole head_role(const TextHeadScores& s, std::size_t index);

}  // namespace attn::tr
