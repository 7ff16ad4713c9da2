// The training session: a model, its AdamW state, a task and fixed evaluation batches.
//
// Random streams (all attn::Rng, SplitMix64). `ds` is the data seed: data_seed when
// has_data_seed, else seed (so configs without a data seed keep their bits):
//   initialisation      Rng(seed)                      (init_params)
//   training batches    Rng(ds ^ kTrainStream)         one task batch per train() step
//   held-out batch      Rng(ds ^ kEvalStream)          drawn once; evaluate, ablation, and the
//                                                      probe batch of the pattern scores
//   sampleBatch()       Rng(ds ^ kSampleStream)        never touches the training stream
//   dropout             per step k: step_seed = SplitMix64 output of (seed ^ kDropStream) + k;
//                       per shard s of that step: SplitMix64 output of
//                       step_seed ^ (kShardStream * (s + 1)) (the model's own noise: follows the
//                       init seed, not the data seed, and never which Worker computes a shard)
// Same config and seeds -> bit-identical loss history (fixed shards, fixed summation orders,
// no FMA, no relaxed SIMD), however many Workers compute the shards.
//
// Fixed shards (data-parallel training without changing the bits). Every step's batch of B
// rows is cut into kShards shards, shard s = rows [s*B/kShards, (s+1)*B/kShards) (empty
// shards skipped), whatever the number of Workers. Each shard's loss and gradient are
// divided by the target count n of the WHOLE batch (RunOptions::loss_norm), so they are the
// shard's share; the step's gradient is their float32 sum in shard order ((g0 + g1) + g2) + g3
// and its loss the double sum l0 + l1 + l2 + l3 (each l_s = shard loss sum / n), then clip
// and AdamW. train() and train_on() run exactly this path on one thread; a coordinator runs
// it across Workers with next_batch (here), shard_gradient (on replicas: set_params) and
// apply_gradients (here), and gets the same bits by construction.
//
// The task is used only by what draws its batches: train, sample_batch, evaluate,
// head_scores, score_gradients and profile. A task that cannot be drawn for this vocab and
// seqLen (validate_task) does not stop create(): those calls return its error, while
// train_on, loss_and_gradients, attention, decoding and generate take the caller's tokens
// and neither check nor use the task (their results do not depend on it).
//
// Divergence: a step whose loss or gradient norm is not finite as a float32 (the precision
// of TrainReport) is reported and NOT applied
// (weights and optimiser state are kept); train() stops there with finite = false.
// Ablated heads (set_ablation) output zero in every pass: training, evaluation, decoding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "attn/rng.hpp"
#include "attn/tr/decode.hpp"
#include "attn/tr/interp.hpp"
#include "attn/tr/model.hpp"
#include "attn/tr/optim.hpp"
#include "attn/tr/probe.hpp"
#include "attn/tr/tasks.hpp"

namespace attn::tr {

inline constexpr std::uint64_t kTrainStream = 0x5452414E00000001ull;
inline constexpr std::uint64_t kEvalStream = 0x4556414C00000002ull;
inline constexpr std::uint64_t kSampleStream = 0x53414D5000000003ull;
inline constexpr std::uint64_t kDropStream = 0x44524F5000000004ull;
inline constexpr std::uint64_t kShardStream = 0x9E3779B97F4A7C15ull;

// Shards per batch: fixed, so the bits never depend on how many Workers compute them.
inline constexpr std::size_t kShards = 4;
// Rows [*begin, *end) of shard s of a batch of `rows` rows (empty when begin == end).
void shard_rows(std::size_t rows, std::size_t s, std::size_t* begin, std::size_t* end);

// One step's batch, as a coordinator hands it to the Workers.
struct StepBatch {
  std::vector<std::int32_t> tokens;  // (B, T) row-major
  std::vector<std::uint8_t> mask;    // (B, T) loss mask
  std::size_t rows = 0;              // B
  std::size_t step = 0;              // optimiser steps done before this batch (dropout seed)
  std::size_t targets = 0;           // n: mask[b, t] = 1 with t >= 1 over the whole batch
};

struct TrainerConfig {
  ModelConfig model;
  Task task = Task::kInduction;
  AdamWConfig opt;
  std::size_t batch = 32;
  std::uint64_t seed = 0;
  // Separate seed of the data streams (training, held-out, sampleBatch); when false they
  // derive from `seed` as before.
  bool has_data_seed = false;
  std::uint64_t data_seed = 0;
  std::uint64_t data_seed_or_seed() const { return has_data_seed ? data_seed : seed; }
};

// Checks every field and the memory cap (field names as in JS: lr, beta1, beta2, eps,
// weightDecay, clip, batch, ...); not the task against vocab/seqLen (Trainer::task_status).
Status validate_trainer(const TrainerConfig& c);

struct TrainReport {
  std::size_t step = 0;                // optimiser steps done after this call
  std::vector<float> loss, grad_norm;  // one per attempted step (the last may be non-finite)
  bool finite = true;
};

// What the Train tab draws at one step (Trainer::diagnostics).
struct Diagnostics {
  HeadScores scores;                 // scores.loss: the held-out loss, as evaluate gives it
  double accuracy = 0;               // evaluate's accuracy
  std::vector<double> score_grad;    // (L*H,) as score_gradients
  std::vector<double> wq_grad_norm;  // (L,)
};

class Trainer {
 public:
  // Validates, allocates, initialises (or copies `weights`, which must have
  // param_layout(c.model).total values, all finite).
  static Status create(const TrainerConfig& c, const std::vector<float>* weights,
                       std::unique_ptr<Trainer>* out);

  Status train(std::size_t n, TrainReport* r);
  // One AdamW step on the given batch (B = tokens.size() / seqLen rows).
  Status train_on(const std::vector<std::int32_t>& tokens, const std::vector<std::uint8_t>& mask,
                  double* loss, double* grad_norm, bool* finite);
  Status loss_and_gradients(const std::vector<std::int32_t>& tokens,
                            const std::vector<std::uint8_t>& mask, double* loss,
                            std::vector<float>* grads);
  Status evaluate(double* loss, double* accuracy);

  // The shard API (see the top of this file). next_batch draws the next training batch from
  // the training stream and advances it, as one train() step does (step = step()).
  Status next_batch(StepBatch* b);
  // A caller's batch (tokens, mask as train_on takes them) for the optimiser's next step.
  Status make_batch(const std::vector<std::int32_t>& tokens, const std::vector<std::uint8_t>& mask,
                    StepBatch* b) const;
  // Shard `shard`'s loss share and gradient (param_layout().total values, overwritten) at
  // this trainer's weights, with this trainer's ablations.
  Status shard_gradient(const StepBatch& b, std::size_t shard, float* grad, double* loss);
  // Sums the non-empty shards' gradients and losses in shard order (grads[i] and losses[i]
  // belong to the i-th non-empty shard; each grads[i] holds param_layout().total values),
  // then clips and runs AdamW as train() does (b.step must be step()). A non-finite step is
  // reported and not applied.
  Status apply_gradients(const StepBatch& b, const std::vector<const float*>& grads,
                         const std::vector<double>& losses, double* loss, double* grad_norm,
                         bool* finite);
  // A replica's weights (a Worker that computes shards for a coordinator): total values, all
  // finite. The optimiser state is not touched.
  Status set_params(const std::vector<float>& w);
  Status head_scores(HeadScores* out);
  // On the held-out batch, no dropout, weights unchanged: per layer x head the mean |dL/dS|
  // over the causal cells (S = softmax input, L = mean held-out loss) into score_grad (L*H,),
  // per layer the norm of dL/dW_Q into wq_grad_norm (L,), and the loss.
  Status score_gradients(std::vector<double>* score_grad, std::vector<double>* wq_grad_norm,
                         double* loss);
  // evaluate, head_scores and score_gradients at once, to the same bits, sharing one forward of
  // the held-out batch where the kernel allows (naive; the tiled kernel runs them separately).
  Status diagnostics(Diagnostics* out);
  // One sequence (1 <= t <= seqLen): weights (L, H, t, t) and logits (t, V). With qkv, also
  // each layer's projected rows before any variant transform (RoPE, qkNorm), layer after layer:
  // q (H, t, d_h), k (H_kv, t, d_h), v (H_kv, t, d_h) - what "why this weight" takes apart.
  Status attention(const std::vector<std::int32_t>& tokens, std::vector<float>* weights,
                   std::vector<float>* logits, std::vector<float>* qkv = nullptr);
  // text_head_scores (attn/tr/probe.hpp) of one text (2 <= t <= seqLen) at this trainer's
  // weights, with this trainer's ablations.
  Status text_scores(const std::vector<std::int32_t>& tokens, TextHeadScores* out);
  // The text model's two measures at this trainer's weights, with its ablations (what a
  // knocked-out head changes; attn_train_text measures the same on the intact model):
  //   text_loss:    windows (W, seqLen) row-major, W >= 1: the mean cross-entropy (nats) of
  //                 every next-token target, forward only, kTextChunk windows per forward.
  //   probe_batch:  probe (rows, 2n) as make_probe draws it, n = probe_length(seqLen): the
  //                 probe's scores (attn/tr/probe.hpp), kTextChunk rows per forward, each
  //                 chunk's means weighted by its rows.
  static constexpr std::size_t kTextChunk = 16;
  Status text_loss(const std::vector<std::int32_t>& windows, double* loss);
  Status probe_batch(const std::vector<std::int32_t>& probe, ProbeScores* out);
  // A batch from the task's own stream (task_status() first).
  Status sample_batch(std::vector<std::int32_t>* tokens, std::vector<std::uint8_t>* mask);
  // Ok, or why the task cannot be drawn for this vocab and seqLen (fields seqLen, vocab).
  const Status& task_status() const { return task_status_; }
  Status set_learning_rate(double lr);
  Status set_ablation(std::size_t layer, std::size_t head, bool on);
  std::unique_ptr<Decoder> decoder(bool cache) const;
  std::unique_ptr<Decoder> decoder(DecodeMode mode) const;  // check_decode_mode first
  Status generate(const std::vector<std::int32_t>& prompt, std::size_t n, bool cache,
                  double temperature, std::uint64_t seed, std::vector<std::int32_t>* out);
  // The same with topK / topP (sample_token, one Rng(seed).uniform() per sampled step; none when
  // greedy). top_ids / top_probs (optional): per step the min(5, V) most probable next tokens and
  // their probabilities after the filtering, (n, min(5, V)) row-major.
  Status generate(const std::vector<std::int32_t>& prompt, std::size_t n, bool cache,
                  const SampleConfig& s, std::uint64_t seed, std::vector<std::int32_t>* out,
                  std::vector<std::int32_t>* top_ids = nullptr,
                  std::vector<float>* top_probs = nullptr);

  // Benchmark helper: `reps` steps on one fixed training batch, timing separately the
  // forward pass (loss only), forward + backward, and the optimiser (clip + AdamW); the
  // medians in ms go to ms[0..2]. The weights move as in training.
  Status profile(std::size_t reps, double ms[3]);

  const TrainerConfig& config() const { return c_; }
  const ParamLayout& layout() const { return layout_; }
  const std::vector<float>& params() const { return *params_; }
  std::size_t step() const { return opt_.step; }

 private:
  Trainer() = default;
  Status batch_rows(const std::vector<std::int32_t>& tokens, const std::vector<std::uint8_t>& mask,
                    std::size_t* rows) const;
  Status check_step_batch(const StepBatch& b) const;
  // All shards of b on this thread, summed as apply_gradients sums them, then clip + AdamW.
  Status step_on(const StepBatch& b, double* loss, double* gnorm, bool* finite);
  // Clip + AdamW on grads_ (the summed gradient) with the step's loss.
  void finish_step(double loss, double* gnorm, bool* finite);
  // score_gradients' pass after its checks; count = the held-out batch's targets.
  Status score_gradient_pass(std::vector<double>* score_grad, std::vector<double>* wq_grad_norm,
                             double* loss, std::size_t* count);

  TrainerConfig c_;
  ParamLayout layout_;
  std::shared_ptr<std::vector<float>> params_;
  std::vector<float> grads_, shard_grad_;
  StepBatch batch_;
  AdamWState<float> opt_;
  Rng train_rng_{0}, sample_rng_{0};
  std::vector<std::int32_t> eval_tokens_;
  std::vector<std::uint8_t> eval_mask_, ablate_;
  Workspace<float> ws_;
  Status task_status_;
};

}  // namespace attn::tr
