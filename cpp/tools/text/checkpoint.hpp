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

// Where a later step adds the probe metrics of a checkpoint (inContext, induction, previous):
// the weights after `step` steps and the tokenizer are here. Nothing yet.
void add_probe_metrics(const attn::tr::ModelConfig& model, const std::vector<float>& params,
                       const Corpus& corpus, ojson* checkpoint);

// The checkpoint steps: round((S+1)^(i/(K-1))) - 1 for i < K (log-spaced over step + 1, so 0
// and S are the ends), sorted, deduplicated.
std::vector<std::size_t> checkpoint_steps(std::size_t S, std::size_t K);

// model.json's "config" (createTrainer's field names), "tokenizer" and "corpus".
ojson config_json(const attn::tr::ModelConfig& mc, const attn::tr::TrainerConfig& tc);
ojson tokenizer_json(const Corpus& corpus);
ojson corpus_json(const Corpus& corpus);

// "<CPU model>, <n> logical CPUs" from /proc/cpuinfo.
std::string machine_string();
// a as a POSIX shell word (quoted only when needed).
std::string shell_quote(const std::string& a);

}  // namespace train_text
