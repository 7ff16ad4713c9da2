// What attn_train_text measures and records at a checkpoint: the held-out loss, the probe
// metrics, the checkpoint steps, and model.json's parts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/tr/model.hpp"
#include "attn/tr/trainer.hpp"
#include "common.hpp"
#include "corpus.hpp"
#include "pool.hpp"

namespace train_text {

inline constexpr std::size_t kEvalChunk = 16;  // held-out windows per forward

// Offsets of the held-out windows: floor(i * (n - T) / (W - 1)), i < W (0 when W = 1).
std::vector<std::size_t> eval_offsets(std::size_t n, std::size_t T, std::size_t windows);

// Mean cross-entropy (nats) over every target of the held-out windows (tokens: windows rows of
// T): chunks of kEvalChunk windows (chunk c on thread c % N, in ws[t]), each chunk's loss sum,
// added in chunk order, so the bits do not depend on the thread count.
Fail held_out_loss(Pool* pool, const attn::tr::ModelConfig& m, const float* params,
                   const std::vector<std::int32_t>& tokens, std::size_t windows,
                   std::vector<attn::tr::Workspace<float>>* ws, double* out);

// The baseline the held-out loss is judged against: an interpolated (Jelinek-Mercer) bigram of
// the training stream, p(b | a) = lam * c(a, b) / c(a) + (1 - lam) * (c(b) + 1) / (N + V)
// (c(a, b) / c(a) = 0 when c(a) = 0), lam in {0.5, 0.7, 0.8, 0.9, 0.95, 0.98} chosen on the last
// 5 % of the training stream with counts from the first 95 %, then counted on all of it; its mean
// cross-entropy (nats) over exactly the held-out windows' targets (windows rows of T: token t
// predicted from token t - 1, t >= 1). *lam_out: the lam chosen.
double bigram_loss(const std::vector<std::int32_t>& train, std::size_t vocab,
                   const std::vector<std::int32_t>& windows, std::size_t T, double* lam_out);

// ---- the probe (attn/tr/probe.hpp's definitions), the same rows at every checkpoint

inline constexpr std::uint64_t kProbeSeed = 0;         // not --seed: every run meets one probe
inline constexpr std::size_t kProbeCandidates = 1000;  // the most frequent training tokens
inline constexpr std::size_t kProbeChunk = 16;         // probe rows per forward

struct TextProbe {
  std::size_t rows = 0, n = 0;  // n = probe_length(seqLen)
  std::vector<std::int32_t> candidates;
  std::vector<std::int32_t> tokens;  // (rows, 2n): make_probe(candidates, rows, kProbeSeed)
  attn::tr::Workspace<float> ws;     // its own: the trainers' and the held-out's are untouched
};

// Candidates = frequent_tokens(corpus, kProbeCandidates); errors name the flag (--seq-len:
// seqLen < 4 has no probe; --probe-rows).
Fail make_text_probe(const attn::tr::ModelConfig& m, const Corpus& corpus, std::size_t rows,
                     TextProbe* probe);

// model.json's "probe": {rows, seed, n, candidates (their count), chunkRows, definition}.
ojson probe_json(const TextProbe& probe);

struct ProbeSummary {
  double in_context = 0, previous = 0;
  double induction = 0;  // NaN for a 1-layer model (no layer >= 2)
};

// probe_scores of params (read only) on one thread, kProbeChunk rows per forward (the kept
// weights are kProbeChunk * H * (2n)^2 floats per layer, whatever --probe-rows), each chunk's
// means weighted by its rows and added in chunk order: the same bits for any --threads. Writes
// into the checkpoint's JSON: inContext, ceFirst, ceSecond, induction (the best head of layers
// >= 2; null for one layer), previous (the best head of layer 1), heads: {induction,
// previous} as [layer][head].
Fail add_probe_metrics(const attn::tr::ModelConfig& m, const float* params, TextProbe* probe,
                       ojson* checkpoint, ProbeSummary* summary);

// The checkpoint steps: round((S+1)^(i/(K-1))) - 1 for i < K (log-spaced over step + 1, so 0
// and S are the ends), sorted, deduplicated.
std::vector<std::size_t> checkpoint_steps(std::size_t S, std::size_t K);

// model.json's "config" (createTrainer's field names), "tokenizer" and "corpus".
// The text model's targets, judged on the checkpoints written so far (the last one is the
// model): held-out loss <= 0.9 x the bigram's; in-context score <= -1 nat; a layer >= 2 head with
// induction >= 0.4; a layer-1 head with previous-token >= 0.4; a phase change: a checkpoint with
// in-context > -0.2 followed by one < -1.0, the tokens between the last such "before" and the
// first "after" at most a third of the training tokens. [{name, want, got, met, ...}]: the page
// shows the misses.
ojson targets_json(const ojson& checkpoints, double bigram_loss, double training_tokens);

ojson config_json(const attn::tr::ModelConfig& mc, const attn::tr::TrainerConfig& tc);
ojson tokenizer_json(const Corpus& corpus);
ojson corpus_json(const Corpus& corpus);

// "<CPU model>, <n> logical CPUs" from /proc/cpuinfo.
std::string machine_string();
// a as a POSIX shell word (quoted only when needed).
std::string shell_quote(const std::string& a);

}  // namespace train_text
