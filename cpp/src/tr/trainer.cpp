#include "attn/tr/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "attn/checked.hpp"

namespace attn::tr {

namespace {

Status finite_in(const char* field, double v, double lo, double hi, bool lo_open) {
  const bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
  if (!ok) {
    return Status::Invalid(field, std::string(field) + " must be a number in " +
                                      (lo_open ? "(" : "[") + std::to_string(lo) + ", " +
                                      std::to_string(hi) + "] (got " + std::to_string(v) + ")");
  }
  return Status::Ok();
}

// Bytes of the (B*H, t, t) weights of every layer: the extra a weights-keeping pass needs.
std::size_t weights_bytes(const ModelConfig& c, std::size_t batch, std::size_t t) {
  using detail::sat_mul;
  return sat_mul(sat_mul(sat_mul(c.layers, batch), sat_mul(c.heads, t)), sat_mul(t, 4));
}

Status check_weights_cap(const ModelConfig& c, std::size_t batch, std::size_t t) {
  const std::size_t need =
      detail::sat_add(estimate_training_bytes(c, batch), weights_bytes(c, batch, t));
  if (need > c.memory_cap) {
    return Status::Exhausted("memory",
                             "the attention weights of this call (layers*batch*heads*"
                             "T*T values) would exceed the memory cap");
  }
  return Status::Ok();
}

}  // namespace

Status validate_trainer(const TrainerConfig& c) {
  Status st;
  if (!(st = finite_in("lr", c.opt.lr, 0, 1e3, false)).ok()) return st;
  if (!(st = finite_in("beta1", c.opt.beta1, 0, 1, false)).ok()) return st;
  if (c.opt.beta1 >= 1) return Status::Invalid("beta1", "beta1 must be in [0, 1)");
  if (!(st = finite_in("beta2", c.opt.beta2, 0, 1, false)).ok()) return st;
  if (c.opt.beta2 >= 1) return Status::Invalid("beta2", "beta2 must be in [0, 1)");
  if (!(st = finite_in("eps", c.opt.eps, 0, 1, true)).ok()) return st;
  // The optimiser runs in float32: an eps that rounds to 0 there (below about 1.4e-45) makes
  // a zero gradient entry 0/0 = NaN and a tiny one (g*g underflows) m/0 = inf.
  if (!(static_cast<float>(c.opt.eps) > 0)) {
    char got[32];
    std::snprintf(got, sizeof got, "%.3g", c.opt.eps);
    return Status::Invalid("eps", std::string("eps must be at least float32's smallest positive "
                                              "value, about 1.4e-45 (got ") +
                                      got + ")");
  }
  if (!(st = finite_in("weightDecay", c.opt.weight_decay, 0, 1e3, false)).ok()) return st;
  if (!(st = finite_in("clip", c.opt.clip, 0, 1e12, false)).ok()) return st;
  return validate_model(c.model, c.batch);
}

namespace {

// The task's error, saying what still works without it.
Status task_error(const TrainerConfig& c) {
  Status st = validate_task(c.task, c.model.vocab, c.model.seq_len);
  if (!st.ok()) {
    st.message +=
        "; trainOn, lossAndGradients, attention and decoding take your own tokens "
        "and work without the task";
  }
  return st;
}

}  // namespace

Status Trainer::create(const TrainerConfig& c, const std::vector<float>* weights,
                       std::unique_ptr<Trainer>* out) {
  Status st = validate_trainer(c);
  if (!st.ok()) return st;
  const ParamLayout layout = param_layout(c.model);
  if (weights) {
    if (weights->size() != layout.total) {
      return Status::Invalid("weights", "weights hold " + std::to_string(weights->size()) +
                                            " values but this config has " +
                                            std::to_string(layout.total) + " parameters");
    }
    for (float w : *weights)
      if (!std::isfinite(w)) return Status::Invalid("weights", "weights must all be finite");
  }
  std::unique_ptr<Trainer> t(new Trainer());
  t->c_ = c;
  t->layout_ = layout;
  t->params_ = std::make_shared<std::vector<float>>(layout.total);
  if (weights)
    *t->params_ = *weights;
  else
    init_params(c.model, c.seed, t->params_->data());
  t->grads_.assign(layout.total, 0.0f);
  t->opt_.m.assign(layout.total, 0.0f);
  t->opt_.v.assign(layout.total, 0.0f);
  t->train_rng_ = Rng(c.data_seed_or_seed() ^ kTrainStream);
  t->sample_rng_ = Rng(c.data_seed_or_seed() ^ kSampleStream);
  const std::size_t n = c.batch * c.model.seq_len;
  t->batch_.tokens.resize(n);
  t->batch_.mask.resize(n);
  t->batch_.rows = c.batch;
  t->eval_tokens_.resize(n);
  t->eval_mask_.resize(n);
  t->task_status_ = task_error(c);
  if (t->task_status_.ok()) {
    Rng eval(c.data_seed_or_seed() ^ kEvalStream);
    sample_task(c.task, &eval, c.batch, c.model.seq_len, c.model.vocab, t->eval_tokens_.data(),
                t->eval_mask_.data());
  }
  t->ablate_.assign(c.model.layers * c.model.heads, 0);
  *out = std::move(t);
  return Status::Ok();
}

void shard_rows(std::size_t rows, std::size_t s, std::size_t* begin, std::size_t* end) {
  *begin = s * rows / kShards;
  *end = (s + 1) * rows / kShards;
}

namespace {

std::size_t count_targets(const std::uint8_t* mask, std::size_t rows, std::size_t t) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < rows; ++b)
    for (std::size_t i = 1; i < t; ++i) n += mask[b * t + i] ? 1 : 0;
  return n;
}

Status no_target() {
  return Status::Invalid("lossMask", "lossMask selects no target (t >= 1)");
}

}  // namespace

Status Trainer::next_batch(StepBatch* b) {
  if (!task_status_.ok()) return task_status_;
  const std::size_t T = c_.model.seq_len;
  b->tokens.resize(c_.batch * T);
  b->mask.resize(c_.batch * T);
  sample_task(c_.task, &train_rng_, c_.batch, T, c_.model.vocab, b->tokens.data(), b->mask.data());
  b->rows = c_.batch;
  b->step = opt_.step;
  b->targets = count_targets(b->mask.data(), b->rows, T);
  return Status::Ok();
}

Status Trainer::make_batch(const std::vector<std::int32_t>& tokens,
                           const std::vector<std::uint8_t>& mask, StepBatch* b) const {
  std::size_t rows = 0;
  Status st = batch_rows(tokens, mask, &rows);
  if (!st.ok()) return st;
  b->tokens = tokens;
  b->mask = mask;
  b->rows = rows;
  b->step = opt_.step;
  b->targets = count_targets(mask.data(), rows, c_.model.seq_len);
  return Status::Ok();
}

Status Trainer::check_step_batch(const StepBatch& b) const {
  const std::size_t T = c_.model.seq_len;
  if (b.rows < 1 || b.rows > 65536 || b.tokens.size() != b.rows * T) {
    return Status::Invalid("tokens", "tokens must hold B*seqLen values (seqLen " +
                                         std::to_string(T) + ", got " +
                                         std::to_string(b.tokens.size()) + ")");
  }
  if (b.mask.size() != b.tokens.size()) {
    return Status::Invalid("lossMask", "lossMask must have as many entries as tokens");
  }
  if (estimate_training_bytes(c_.model, b.rows) > c_.model.memory_cap) {
    return Status::Exhausted("memory", "this batch would exceed the memory cap");
  }
  if (b.targets == 0) return no_target();
  return Status::Ok();
}

Status Trainer::shard_gradient(const StepBatch& b, std::size_t shard, float* grad, double* loss) {
  Status st = check_step_batch(b);
  if (!st.ok()) return st;
  std::size_t r0 = 0, r1 = 0;
  if (shard < kShards) shard_rows(b.rows, shard, &r0, &r1);
  if (r0 == r1) {
    return Status::Invalid("shard", "shard " + std::to_string(shard) +
                                        " is not one of this batch's non-empty shards (0.." +
                                        std::to_string(kShards - 1) + ", rows s*B/" +
                                        std::to_string(kShards) + " onwards)");
  }
  const std::size_t T = c_.model.seq_len;
  RunOptions ro;
  ro.training = true;
  Rng d((c_.seed ^ kDropStream) + b.step);
  Rng ds(d.next_u64() ^ (kShardStream * (shard + 1)));
  ro.dropout_seed = ds.next_u64();
  ro.ablate = ablate_.data();
  ro.loss_norm = b.targets;
  return forward_backward(c_.model, params_->data(), b.tokens.data() + r0 * T,
                          b.mask.data() + r0 * T, r1 - r0, T, ro, &ws_, grad, loss, nullptr);
}

void Trainer::finish_step(double loss, double* gnorm, bool* finite) {
  *gnorm = clip_grad_norm(grads_.data(), grads_.size(), c_.opt.clip);
  // Judged in float32, the precision of the report (train's loss and gradNorm arrays): a
  // gradient norm past 3.4e38 is reported as inf, so that step is not applied either.
  *finite = std::isfinite(static_cast<float>(loss)) && std::isfinite(static_cast<float>(*gnorm));
  if (*finite) adamw_step(c_.opt, params_->data(), grads_.data(), grads_.size(), &opt_);
}

Status Trainer::step_on(const StepBatch& b, double* loss, double* gnorm, bool* finite) {
  if (b.targets == 0) return no_target();
  // The first non-empty shard straight into grads_, every later one added in shard order: the
  // same float32 sums apply_gradients forms from Workers' shards.
  double total = 0;
  bool first = true;
  shard_grad_.resize(grads_.size());
  for (std::size_t s = 0; s < kShards; ++s) {
    std::size_t r0 = 0, r1 = 0;
    shard_rows(b.rows, s, &r0, &r1);
    if (r0 == r1) continue;
    double ls = 0;
    Status st = shard_gradient(b, s, first ? grads_.data() : shard_grad_.data(), &ls);
    if (!st.ok()) return st;
    if (!first)
      for (std::size_t i = 0; i < grads_.size(); ++i) grads_[i] += shard_grad_[i];
    total += ls;
    first = false;
  }
  *loss = total;
  finish_step(total, gnorm, finite);
  return Status::Ok();
}

Status Trainer::apply_gradients(const StepBatch& b, const std::vector<const float*>& grads,
                                const std::vector<double>& losses, double* loss, double* gnorm,
                                bool* finite) {
  if (b.step != opt_.step) {
    return Status::Invalid("step", "these gradients are for step " + std::to_string(b.step + 1) +
                                       " but the trainer is at step " +
                                       std::to_string(opt_.step + 1));
  }
  if (b.targets == 0) return no_target();
  std::size_t shards = 0;
  for (std::size_t s = 0; s < kShards; ++s) {
    std::size_t r0 = 0, r1 = 0;
    shard_rows(b.rows, s, &r0, &r1);
    shards += r0 < r1 ? 1 : 0;
  }
  if (grads.size() != shards || losses.size() != shards) {
    return Status::Invalid("shards", "this batch has " + std::to_string(shards) +
                                         " non-empty shards; got " + std::to_string(grads.size()) +
                                         " gradients and " + std::to_string(losses.size()) +
                                         " losses");
  }
  double total = 0;
  std::copy_n(grads[0], grads_.size(), grads_.begin());
  total += losses[0];
  for (std::size_t k = 1; k < shards; ++k) {
    for (std::size_t i = 0; i < grads_.size(); ++i) grads_[i] += grads[k][i];
    total += losses[k];
  }
  *loss = total;
  finish_step(total, gnorm, finite);
  return Status::Ok();
}

Status Trainer::set_params(const std::vector<float>& w) {
  if (w.size() != layout_.total) {
    return Status::Invalid("weights", "weights hold " + std::to_string(w.size()) +
                                          " values but this config has " +
                                          std::to_string(layout_.total) + " parameters");
  }
  for (float x : w)
    if (!std::isfinite(x)) return Status::Invalid("weights", "weights must all be finite");
  std::copy(w.begin(), w.end(), params_->begin());
  return Status::Ok();
}

Status Trainer::train(std::size_t n, TrainReport* r) {
  if (n > 100000) return Status::Invalid("n", "n must be at most 100000 steps per call");
  if (!task_status_.ok()) return task_status_;
  r->loss.clear();
  r->grad_norm.clear();
  r->finite = true;
  for (std::size_t i = 0; i < n; ++i) {
    Status st = next_batch(&batch_);
    if (!st.ok()) return st;
    double loss = 0, gn = 0;
    bool fin = true;
    st = step_on(batch_, &loss, &gn, &fin);
    if (!st.ok()) return st;
    r->loss.push_back(static_cast<float>(loss));
    r->grad_norm.push_back(static_cast<float>(gn));
    if (!fin) {
      r->finite = false;
      break;
    }
  }
  r->step = opt_.step;
  return Status::Ok();
}

Status Trainer::batch_rows(const std::vector<std::int32_t>& tokens,
                           const std::vector<std::uint8_t>& mask, std::size_t* rows) const {
  const std::size_t T = c_.model.seq_len;
  if (tokens.empty() || tokens.size() % T != 0) {
    return Status::Invalid("tokens", "tokens must hold B*seqLen values (seqLen " +
                                         std::to_string(T) + ", got " +
                                         std::to_string(tokens.size()) + ")");
  }
  if (mask.size() != tokens.size()) {
    return Status::Invalid("lossMask", "lossMask must have as many entries as tokens");
  }
  const std::size_t b = tokens.size() / T;
  if (b > 65536) return Status::Invalid("tokens", "at most 65536 sequences per batch");
  if (estimate_training_bytes(c_.model, b) > c_.model.memory_cap) {
    return Status::Exhausted("memory", "this batch would exceed the memory cap");
  }
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || static_cast<std::size_t>(tokens[i]) >= c_.model.vocab)
      return Status::Invalid("tokens", "tokens[" + std::to_string(i) + "] = " +
                                           std::to_string(tokens[i]) + " is outside [0, vocab)");
  *rows = b;
  return Status::Ok();
}

Status Trainer::train_on(const std::vector<std::int32_t>& tokens,
                         const std::vector<std::uint8_t>& mask, double* loss, double* gnorm,
                         bool* finite) {
  Status st = make_batch(tokens, mask, &batch_);
  if (!st.ok()) return st;
  return step_on(batch_, loss, gnorm, finite);
}

Status Trainer::loss_and_gradients(const std::vector<std::int32_t>& tokens,
                                   const std::vector<std::uint8_t>& mask, double* loss,
                                   std::vector<float>* grads) {
  std::size_t rows = 0;
  Status st = batch_rows(tokens, mask, &rows);
  if (!st.ok()) return st;
  RunOptions ro;  // no dropout: the deterministic gradient of this batch
  ro.ablate = ablate_.data();
  grads->assign(layout_.total, 0.0f);
  std::size_t count = 0;
  st = forward_backward(c_.model, params_->data(), tokens.data(), mask.data(), rows,
                        c_.model.seq_len, ro, &ws_, grads->data(), loss, &count);
  if (!st.ok()) return st;
  if (count == 0) return Status::Invalid("lossMask", "lossMask selects no target (t >= 1)");
  return Status::Ok();
}

Status Trainer::evaluate(double* loss, double* accuracy) {
  if (!task_status_.ok()) return task_status_;
  return evaluate_batch(c_.model, params_->data(), eval_tokens_.data(), eval_mask_.data(), c_.batch,
                        ablate_.data(), &ws_, loss, accuracy);
}

Status Trainer::head_scores(HeadScores* out) {
  if (!task_status_.ok()) return task_status_;
  Status st = check_weights_cap(c_.model, c_.batch, c_.model.seq_len);
  if (!st.ok()) return st;
  return tr::head_scores(c_.model, params_->data(), eval_tokens_.data(), c_.batch,
                         eval_tokens_.data(), eval_mask_.data(), c_.batch, ablate_.data(), &ws_,
                         out);
}

Status Trainer::score_gradients(std::vector<double>* score_grad, std::vector<double>* wq_grad_norm,
                                double* loss) {
  if (!task_status_.ok()) return task_status_;
  Status st = check_weights_cap(c_.model, c_.batch, c_.model.seq_len);
  if (!st.ok()) return st;
  std::size_t count = 0;
  return score_gradient_pass(score_grad, wq_grad_norm, loss, &count);
}

Status Trainer::score_gradient_pass(std::vector<double>* score_grad,
                                    std::vector<double>* wq_grad_norm, double* loss,
                                    std::size_t* count) {
  const std::size_t L = c_.model.layers, H = c_.model.heads;
  score_grad->assign(L * H, 0.0);
  RunOptions ro;
  ro.keep_weights = true;  // the naive forward: P is kept for the diagnostic
  ro.ablate = ablate_.data();
  ro.score_grad = score_grad->data();
  ro.wq_grads_only = true;
  // grads_ is scratch between steps (each step overwrites it).
  Status st = forward_backward(c_.model, params_->data(), eval_tokens_.data(), eval_mask_.data(),
                               c_.batch, c_.model.seq_len, ro, &ws_, grads_.data(), loss, count);
  if (!st.ok()) return st;
  const std::size_t nq = c_.model.d_model * H * (c_.model.d_model / H);
  wq_grad_norm->assign(L, 0.0);
  for (std::size_t l = 0; l < L; ++l) {
    double s = 0;
    for (std::size_t i = 0; i < nq; ++i)
      s += double(grads_[layout_.layer[l].wq + i]) * grads_[layout_.layer[l].wq + i];
    (*wq_grad_norm)[l] = std::sqrt(s);
  }
  return Status::Ok();
}

Status Trainer::diagnostics(Diagnostics* out) {
  if (!task_status_.ok()) return task_status_;
  Status st = check_weights_cap(c_.model, c_.batch, c_.model.seq_len);
  if (!st.ok()) return st;
  if (c_.model.kernel == Kernel::kTiled) {
    // The evaluation runs the tiled kernel and the diagnostics the weight-keeping naive one:
    // their losses need not share bits, so the passes stay separate.
    double loss = 0;
    st = evaluate(&out->scores.loss, &out->accuracy);
    if (st.ok()) st = head_scores(&out->scores);
    if (st.ok()) st = score_gradients(&out->score_grad, &out->wq_grad_norm, &loss);
    return st;
  }
  // One forward of the held-out batch (naive, weights kept): its loss is evaluate's (same
  // kernel, same bits), its logits give the accuracy, its weights the pattern scores, its
  // backward the score gradients; then the ablation reruns start from its residual streams.
  std::size_t count = 0;
  st = score_gradient_pass(&out->score_grad, &out->wq_grad_norm, &out->scores.loss, &count);
  if (!st.ok()) return st;
  out->accuracy = accuracy_of(ws_.logits.data(), eval_tokens_.data(), eval_mask_.data(), c_.batch,
                              c_.model.seq_len, c_.model.vocab, count);
  return head_scores_from_forward(c_.model, params_->data(), eval_tokens_.data(), c_.batch,
                                  eval_tokens_.data(), eval_mask_.data(), c_.batch, ablate_.data(),
                                  true, &ws_, &out->scores);
}

Status Trainer::attention(const std::vector<std::int32_t>& tokens, std::vector<float>* weights,
                          std::vector<float>* logits, std::vector<float>* qkv) {
  const std::size_t t = tokens.size();
  if (t < 1 || t > c_.model.seq_len) {
    return Status::Invalid(
        "tokens", "tokens must hold 1 to seqLen (" + std::to_string(c_.model.seq_len) + ") values");
  }
  Status st = check_weights_cap(c_.model, 1, t);
  if (!st.ok()) return st;
  RunOptions ro;
  ro.keep_weights = true;
  ro.ablate = ablate_.data();
  st = forward_backward(c_.model, params_->data(), tokens.data(),
                        static_cast<const std::uint8_t*>(nullptr), 1, t, ro, &ws_,
                        static_cast<float*>(nullptr), static_cast<double*>(nullptr), nullptr);
  if (!st.ok()) return st;
  const std::size_t L = c_.model.layers, H = c_.model.heads;
  weights->resize(L * H * t * t);
  for (std::size_t l = 0; l < L; ++l)
    std::copy_n(ws_.att[l].weights.data(), H * t * t, weights->data() + l * H * t * t);
  // The maps are causal: keys j > i are 0, also in a NaN row. The core writes a NaN row
  // (a NaN score, or scale * q.k past float32's range) as NaN in every cell, forbidden keys
  // included (docs/numerics.md); here only the keys the row may see carry the NaN.
  for (std::size_t r = 0; r < L * H * t; ++r) {
    const std::size_t i = r % t;
    std::fill(weights->data() + r * t + i + 1, weights->data() + (r + 1) * t, 0.0f);
  }
  logits->assign(ws_.logits.begin(), ws_.logits.begin() + t * c_.model.vocab);
  if (qkv) {
    // The forward's own head-layout rows (batch 1): the attention read exactly these.
    qkv->clear();
    for (std::size_t l = 0; l < L; ++l)
      for (const auto* a : {&ws_.qh[l], &ws_.kh[l], &ws_.vh[l]})
        qkv->insert(qkv->end(), a->begin(), a->end());
  }
  return Status::Ok();
}

Status Trainer::text_scores(const std::vector<std::int32_t>& tokens, TextHeadScores* out) {
  const std::size_t t = tokens.size();
  // A bad length gets text_head_scores' own message (field tokens); a good one the cap of
  // attention().
  if (t >= 2 && t <= c_.model.seq_len) {
    Status st = check_weights_cap(c_.model, 1, t);
    if (!st.ok()) return st;
  }
  return text_head_scores(c_.model, params_->data(), tokens.data(), t, ablate_.data(), &ws_, out);
}

Status Trainer::text_loss(const std::vector<std::int32_t>& windows, double* loss) {
  const std::size_t T = c_.model.seq_len, W = windows.size() / T;
  if (W < 1 || windows.size() % T != 0) {
    return Status::Invalid("windows", "windows must hold a whole number (>= 1) of seqLen (" +
                                          std::to_string(T) + ") tokens");
  }
  const std::vector<std::uint8_t> mask(kTextChunk * T, 1);
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t w0 = 0; w0 < W; w0 += kTextChunk) {
    const std::size_t rows = std::min(kTextChunk, W - w0);
    RunOptions ro;
    ro.ablate = ablate_.data();
    ro.loss_norm = 1;  // the chunk's sum
    double s = 0;
    std::size_t n = 0;
    Status st = forward_backward(c_.model, params_->data(), windows.data() + w0 * T, mask.data(),
                                 rows, T, ro, &ws_, static_cast<float*>(nullptr), &s, &n);
    if (!st.ok()) return st;
    sum += s;
    count += n;
  }
  *loss = sum / static_cast<double>(count);
  return Status::Ok();
}

Status Trainer::probe_batch(const std::vector<std::int32_t>& probe, ProbeScores* out) {
  const std::size_t n = probe_length(c_.model.seq_len), t = 2 * n;
  if (n < 2) {
    return Status::Invalid(
        "seqLen", "the probe needs seqLen >= 4 (got " + std::to_string(c_.model.seq_len) + ")");
  }
  const std::size_t rows = probe.size() / t;
  if (rows < 1 || probe.size() % t != 0) {
    return Status::Invalid("probe", "probe must hold a whole number (>= 1) of rows of 2n = " +
                                        std::to_string(t) + " tokens");
  }
  Status st = check_weights_cap(c_.model, std::min(kTextChunk, rows), t);
  if (!st.ok()) return st;
  return probe_scores_chunked(c_.model, params_->data(), probe.data(), rows, kTextChunk,
                              ablate_.data(), &ws_, out);
}

Status Trainer::sample_batch(std::vector<std::int32_t>* tokens, std::vector<std::uint8_t>* mask) {
  if (!task_status_.ok()) return task_status_;
  const std::size_t n = c_.batch * c_.model.seq_len;
  tokens->resize(n);
  mask->resize(n);
  sample_task(c_.task, &sample_rng_, c_.batch, c_.model.seq_len, c_.model.vocab, tokens->data(),
              mask->data());
  return Status::Ok();
}

Status Trainer::set_learning_rate(double lr) {
  if (!(std::isfinite(lr) && lr >= 0 && lr <= 1e3)) {
    return Status::Invalid("lr", "lr must be a finite number in [0, 1000]");
  }
  c_.opt.lr = lr;
  return Status::Ok();
}

Status Trainer::set_ablation(std::size_t layer, std::size_t head, bool on) {
  if (layer >= c_.model.layers) return Status::Invalid("layer", "layer must be < layers");
  if (head >= c_.model.heads) return Status::Invalid("head", "head must be < heads");
  ablate_[layer * c_.model.heads + head] = on ? 1 : 0;
  return Status::Ok();
}

std::unique_ptr<Decoder> Trainer::decoder(bool cache) const {
  return std::make_unique<Decoder>(c_.model, params_, cache, ablate_);
}

std::unique_ptr<Decoder> Trainer::decoder(DecodeMode mode) const {
  return std::make_unique<Decoder>(c_.model, params_, mode, ablate_);
}

Status Trainer::generate(const std::vector<std::int32_t>& prompt, std::size_t n, bool cache,
                         double temperature, std::uint64_t seed, std::vector<std::int32_t>* out) {
  SampleConfig s;
  s.temperature = temperature;
  return generate(prompt, n, cache, s, seed, out);
}

Status Trainer::generate(const std::vector<std::int32_t>& prompt, std::size_t n, bool cache,
                         const SampleConfig& s, std::uint64_t seed, std::vector<std::int32_t>* out,
                         std::vector<std::int32_t>* top_ids, std::vector<float>* top_probs) {
  if (prompt.empty()) return Status::Invalid("prompt", "prompt must hold at least one token");
  if (prompt.size() + n > c_.model.seq_len) {
    return Status::Invalid(
        "n", "prompt length + n must be at most seqLen (" + std::to_string(c_.model.seq_len) + ")");
  }
  if (Status st = check_sample_config(s); !st.ok()) return st;
  std::unique_ptr<Decoder> dec = decoder(cache);
  if (Status st = check_decode_mode(c_.model, dec->mode()); !st.ok()) return st;
  std::vector<float> logits, weights;
  for (std::size_t i = 0; i < prompt.size(); ++i) {
    Status st = dec->append(prompt[i], &logits, &weights);
    if (!st.ok()) {
      st.field = "prompt";
      st.message = "prompt[" + std::to_string(i) + "]: " + st.message;
      return st;
    }
  }
  const std::size_t V = c_.model.vocab, nt = std::min<std::size_t>(5, V);
  const bool tops = top_ids && top_probs;
  if (tops) {
    top_ids->assign(n * nt, 0);
    top_probs->assign(n * nt, 0.0f);
  }
  Rng rng(seed);
  out->clear();
  for (std::size_t i = 0; i < n; ++i) {
    const double u = s.temperature > 0 ? rng.uniform() : 0.0;
    const std::int32_t tok = sample_token(logits.data(), logits.size(), s, u, tops ? nt : 0,
                                          tops ? top_ids->data() + i * nt : nullptr,
                                          tops ? top_probs->data() + i * nt : nullptr);
    out->push_back(tok);
    if (i + 1 < n) {
      Status st = dec->append(tok, &logits, &weights);
      if (!st.ok()) return st;
    }
  }
  return Status::Ok();
}

Status Trainer::profile(std::size_t reps, double ms[3]) {
  if (reps < 1 || reps > 10000) return Status::Invalid("reps", "reps must be in 1..10000");
  if (!task_status_.ok()) return task_status_;
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  };
  sample_task(c_.task, &train_rng_, c_.batch, c_.model.seq_len, c_.model.vocab,
              batch_.tokens.data(), batch_.mask.data());
  std::vector<double> f, fb, o;
  RunOptions ro;
  ro.training = true;
  ro.ablate = ablate_.data();
  for (std::size_t i = 0; i < reps; ++i) {
    double loss = 0;
    auto t0 = clock::now();
    Status st = forward_backward(c_.model, params_->data(), batch_.tokens.data(),
                                 batch_.mask.data(), c_.batch, c_.model.seq_len, ro, &ws_,
                                 static_cast<float*>(nullptr), &loss, nullptr);
    if (!st.ok()) return st;
    f.push_back(since(t0));
    t0 = clock::now();
    st = forward_backward(c_.model, params_->data(), batch_.tokens.data(), batch_.mask.data(),
                          c_.batch, c_.model.seq_len, ro, &ws_, grads_.data(), &loss, nullptr);
    if (!st.ok()) return st;
    fb.push_back(since(t0));
    t0 = clock::now();
    clip_grad_norm(grads_.data(), grads_.size(), c_.opt.clip);
    adamw_step(c_.opt, params_->data(), grads_.data(), grads_.size(), &opt_);
    o.push_back(since(t0));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  };
  ms[0] = median(f);
  ms[1] = median(fb);
  ms[2] = median(o);
  return Status::Ok();
}

}  // namespace attn::tr
