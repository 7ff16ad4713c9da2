// Embind surface of the training core (module attn_train). Thin, as attn_core's: the
// post-js layer train_api.js checks JavaScript types, fills in defaults and reshapes flat
// arrays; this file reads the normalised config, runs the core and hands back typed views
// that train_api.js copies at once. Errors come back as {ok: false, field, message};
// nothing here throws or aborts.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attn/names.hpp"
#include "attn/tr/trainer.hpp"
#include "embind_common.hpp"

using emscripten::val;

namespace {

using attn_bind::error;
using attn_bind::ok;
using attn_bind::size_field;
using attn_bind::view;

// The names the config's string fields take, from the cores' own tables: the tasks
// (attn/tr/tasks.hpp), positional ('learned', the core's positions, then 'shortformer':
// attn/tr/model.hpp), the normalizers and kernels (attn/names.hpp). Read once by train_api.js
// into tr module.names.
std::vector<std::string> task_names() {
  using attn::tr::Task;
  std::vector<std::string> r;
  for (Task t : {Task::kInduction, Task::kInductionFixed, Task::kRandom}) {
    r.push_back(attn::tr::task_name(t));
  }
  return r;
}
std::vector<std::string> positional_names() {
  attn::tr::ModelConfig c;
  c.positional = true;
  std::vector<std::string> r{attn::tr::positional_name(c)};
  c.positional = false;
  for (std::size_t i = 0; i < attn::position_names().size; ++i) {
    c.position = static_cast<attn::Position>(i);
    r.push_back(attn::tr::positional_name(c));
  }
  c.positional = true;
  c.shortformer = true;
  c.position = attn::Position::kNone;
  r.push_back(attn::tr::positional_name(c));
  return r;
}
std::string must_be(const char* option, const std::vector<std::string>& names,
                    const std::string& got) {
  std::vector<const char*> p;
  for (const std::string& n : names) p.push_back(n.c_str());
  return attn::must_be_text(option, p.data(), p.size()) + " (got '" + got + "')";
}
val js_array(const std::vector<std::string>& names) {
  val a = val::array();
  for (const std::string& n : names) a.call<void>("push", n);
  return a;
}
val list_array(const attn::NameList& l) {
  return js_array(std::vector<std::string>(l.names, l.names + l.size));
}
val trainNames() {
  val r = val::object();
  r.set("task", js_array(task_names()));
  r.set("positional", js_array(positional_names()));
  r.set("normalizer", list_array(attn::normalizer_names()));
  r.set("kernel", list_array(attn::kernel_names()));
  return r;
}

template <class T>
std::vector<T> vec(const val& a) {
  return emscripten::convertJSArrayToNumberVector<T>(a);
}

class TrainerHandle {
 public:
  // The most windows (textLoss) and probe rows (probeScores, makeProbe) one call takes.
  static constexpr std::size_t kMaxTextRows = 4096;

  // cfg: normalised by train_api.js (numbers, strings, booleans; scale null = 'sqrt';
  // weights null or a flat Float32Array in the documented order).
  val init(val o) {
    attn::tr::TrainerConfig c;
    const std::string task = o["task"].as<std::string>();
    if (!attn::tr::parse_task(task, &c.task)) {
      return error(attn::Status::Invalid("task", must_be("task", task_names(), task)));
    }
    attn::tr::ModelConfig& m = c.model;
    m.vocab = size_field(o, "vocab");
    m.seq_len = size_field(o, "seqLen");
    m.layers = size_field(o, "layers");
    m.heads = size_field(o, "heads");
    m.kv_heads = size_field(o, "kvHeads");
    m.d_model = size_field(o, "dModel");
    const std::string positional = o["positional"].as<std::string>();
    if (!attn::tr::parse_positional(positional, &m)) {
      return error(attn::Status::Invalid("positional",
                                         must_be("positional", positional_names(), positional)));
    }
    const std::string normalizer = o["normalizer"].as<std::string>();
    if (!attn::parse_normalizer(normalizer.c_str(), &m.normalizer)) {
      return error(
          attn::Status::Invalid("normalizer", attn::normalizer_names().must_be(normalizer)));
    }
    m.qk_norm = o["qkNorm"].as<bool>();
    if (!o["sigmoidBias"].isNull()) m.sigmoid_bias = o["sigmoidBias"].as<double>();
    m.layer_norm = o["layerNorm"].as<bool>();
    if (!o["scale"].isNull()) m.scale = o["scale"].as<double>();
    m.init_std = o["initStd"].isNull() ? 0.0 : o["initStd"].as<double>();
    m.dropout = o["dropout"].as<double>();
    const std::string kernel = o["kernel"].as<std::string>();
    if (!attn::parse_name(attn::kernel_names(), kernel.c_str(), &m.kernel)) {
      return error(attn::Status::Invalid("kernel", attn::kernel_names().must_be(kernel)));
    }
    m.memory_cap = size_field(o, "memoryCap");
    c.opt.lr = o["lr"].as<double>();
    c.opt.beta1 = o["beta1"].as<double>();
    c.opt.beta2 = o["beta2"].as<double>();
    c.opt.eps = o["eps"].as<double>();
    c.opt.weight_decay = o["weightDecay"].as<double>();
    c.opt.clip = o["clip"].as<double>();
    c.batch = size_field(o, "batch");
    c.seed = static_cast<std::uint64_t>(o["seed"].as<double>());
    if (!o["dataSeed"].isNull()) {
      c.has_data_seed = true;
      c.data_seed = static_cast<std::uint64_t>(o["dataSeed"].as<double>());
    }
    // Validate before copying any weights into the heap.
    attn::Status st = attn::tr::validate_trainer(c);
    if (!st.ok()) return error(st);
    std::vector<float> w;
    if (!o["weights"].isNull()) {
      const std::size_t n = o["weights"]["length"].as<std::size_t>();
      if (n != attn::tr::param_layout(m).total) {
        return error(attn::Status::Invalid("weights", "weights do not match this config's shapes"));
      }
      w = vec<float>(o["weights"]);
    }
    st = attn::tr::Trainer::create(c, w.empty() ? nullptr : &w, &t_);
    if (!st.ok()) return error(st);
    return ok();
  }

  // Offsets of the flat parameter vector, for train_api.js to cut weights() into pieces.
  val layout() const {
    const attn::tr::ParamLayout& p = t_->layout();
    val r = val::object();
    r.set("embed", static_cast<double>(p.embed));
    r.set("pos", static_cast<double>(p.pos));
    r.set("lnGain", static_cast<double>(p.ln_gain));
    r.set("lnBias", static_cast<double>(p.ln_bias));
    r.set("unembed", static_cast<double>(p.unembed));
    r.set("total", static_cast<double>(p.total));
    val layers = val::array();
    for (const auto& L : p.layer) {
      val l = val::object();
      l.set("wq", static_cast<double>(L.wq));
      l.set("wk", static_cast<double>(L.wk));
      l.set("wv", static_cast<double>(L.wv));
      l.set("wo", static_cast<double>(L.wo));
      layers.call<void>("push", l);
    }
    r.set("layers", layers);
    return r;
  }

  val train(double n) {
    attn::Status st = t_->train(static_cast<std::size_t>(n), &report_);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("step", static_cast<double>(report_.step));
    r.set("loss", view(report_.loss.data(), report_.loss.size()));
    r.set("gradNorm", view(report_.grad_norm.data(), report_.grad_norm.size()));
    r.set("finite", report_.finite);
    return r;
  }

  val evaluate() {
    double loss = 0, acc = 0;
    attn::Status st = t_->evaluate(&loss, &acc);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("loss", loss);
    r.set("accuracy", acc);
    return r;
  }

  // Float64 views: the score gradient of a saturated softmax can be below float32's range.
  val scoreGradients() {
    double loss = 0;
    attn::Status st = t_->score_gradients(&sg_, &wqn_, &loss);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("scoreGrad", view(sg_.data(), sg_.size()));
    r.set("wqGradNorm", view(wqn_.data(), wqn_.size()));
    r.set("loss", loss);
    return r;
  }

  val headScores() {
    attn::Status st = t_->head_scores(&hs_);
    if (!st.ok()) return error(st);
    val r = ok();
    setScores(r, hs_);
    return r;
  }

  // headScores + evaluate + scoreGradients in one call (one shared forward; the same bits).
  val diagnostics() {
    attn::Status st = t_->diagnostics(&dg_);
    if (!st.ok()) return error(st);
    val r = ok();
    setScores(r, dg_.scores);
    r.set("accuracy", dg_.accuracy);
    r.set("scoreGrad", view(dg_.score_grad.data(), dg_.score_grad.size()));
    r.set("wqGradNorm", view(dg_.wq_grad_norm.data(), dg_.wq_grad_norm.size()));
    return r;
  }

  // withQkv: also each layer's q, k, v before any variant transform (Trainer::attention).
  val attention(val tokens, bool withQkv) {
    if (tokens["length"].as<double>() > static_cast<double>(t_->config().model.seq_len)) {
      return error(attn::Status::Invalid("tokens", "tokens must hold 1 to seqLen values"));
    }
    attn::Status st = t_->attention(vec<std::int32_t>(tokens), &w_, &g_, withQkv ? &qkv_ : nullptr);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("weights", view(w_.data(), w_.size()));
    r.set("logits", view(g_.data(), g_.size()));
    if (withQkv) r.set("qkv", view(qkv_.data(), qkv_.size()));
    return r;
  }

  // Per head (L*H, index l*H + h) the text scores of attn/tr/probe.hpp as float64 views, and
  // each head's role name. The length is checked before the array is copied into the heap.
  val textScores(val tokens) {
    const double n = tokens["length"].as<double>();
    if (n < 2 || n > static_cast<double>(t_->config().model.seq_len)) {
      return error(attn::Status::Invalid("tokens", "tokens must hold 2 to seqLen (" +
                                                       std::to_string(t_->config().model.seq_len) +
                                                       ") values"));
    }
    attn::Status st = t_->text_scores(vec<std::int32_t>(tokens), &ts_);
    if (!st.ok()) return error(st);
    val r = ok();
    const std::size_t lh = ts_.previous.size();
    r.set("previous", view(ts_.previous.data(), lh));
    r.set("induction", view(ts_.induction.data(), lh));
    r.set("duplicate", view(ts_.duplicate.data(), lh));
    r.set("first", view(ts_.first.data(), lh));
    val roles = val::array();
    for (std::size_t i = 0; i < lh; ++i) {
      roles.call<void>("push", std::string(attn::tr::head_role_name(attn::tr::head_role(ts_, i))));
    }
    r.set("roles", roles);
    return r;
  }

  // The text model's measures with the current ablations (Trainer::text_loss, probe_batch).
  // Lengths are checked before the arrays are copied into the heap.
  val textLoss(val windows) {
    const double n = windows["length"].as<double>(),
                 T = static_cast<double>(t_->config().model.seq_len);
    if (n < T || n > kMaxTextRows * T) {
      return error(attn::Status::Invalid(
          "windows", "windows must hold 1 to " + std::to_string(kMaxTextRows) +
                         " windows of seqLen (" + std::to_string(t_->config().model.seq_len) +
                         ") tokens"));
    }
    double loss = 0;
    attn::Status st = t_->text_loss(vec<std::int32_t>(windows), &loss);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("loss", loss);
    return r;
  }

  val probeScores(val probe) {
    const double n = probe["length"].as<double>(),
                 t = 2.0 * static_cast<double>(attn::tr::probe_length(t_->config().model.seq_len));
    if (n < t || n > kMaxTextRows * t) {
      return error(attn::Status::Invalid("probe", "probe must hold 1 to " +
                                                      std::to_string(kMaxTextRows) +
                                                      " rows of 2n tokens (makeProbe's layout)"));
    }
    attn::tr::ProbeScores ps;
    attn::Status st = t_->probe_batch(vec<std::int32_t>(probe), &ps);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("inContext", ps.in_context);
    r.set("ceFirst", ps.ce_first);
    r.set("ceSecond", ps.ce_second);
    pv_ = ps.induction;
    pv_.insert(pv_.end(), ps.previous.begin(), ps.previous.end());
    const std::size_t lh = ps.induction.size();
    r.set("induction", view(pv_.data(), lh));
    r.set("previous", view(pv_.data() + lh, lh));
    return r;
  }

  // attn::tr::make_probe for this trainer's vocab and seqLen: (rows, 2n) tokens.
  val makeProbe(val candidates, double rows, double seed) {
    if (candidates["length"].as<double>() > static_cast<double>(t_->config().model.vocab)) {
      return error(attn::Status::Invalid("candidates", "candidates must hold at most vocab ids"));
    }
    if (!(rows >= 1 && rows <= kMaxTextRows)) {
      return error(attn::Status::Invalid(
          "rows", "rows must be a whole number from 1 to " + std::to_string(kMaxTextRows)));
    }
    attn::Status st = attn::tr::make_probe(t_->config().model, vec<std::int32_t>(candidates),
                                           static_cast<std::size_t>(rows),
                                           static_cast<std::uint64_t>(seed), &tok_);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("tokens", view(tok_.data(), tok_.size()));
    return r;
  }

  val sampleBatch() {
    attn::Status st = t_->sample_batch(&tok_, &mask_);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("tokens", view(tok_.data(), tok_.size()));
    r.set("lossMask", view(mask_.data(), mask_.size()));
    return r;
  }

  // Lengths are checked before the arrays are copied into the heap.
  attn::Status check_batch(const val& tokens, const val& mask) const {
    const double n = tokens["length"].as<double>(),
                 T = static_cast<double>(t_->config().model.seq_len);
    if (n < T || n > 65536.0 * T) {
      return attn::Status::Invalid("tokens", "tokens must hold B*seqLen values");
    }
    if (mask["length"].as<double>() != n) {
      return attn::Status::Invalid("lossMask", "lossMask must have as many entries as tokens");
    }
    return attn::Status::Ok();
  }

  val lossAndGradients(val tokens, val mask) {
    attn::Status st = check_batch(tokens, mask);
    if (!st.ok()) return error(st);
    double loss = 0;
    st = t_->loss_and_gradients(vec<std::int32_t>(tokens), vec<std::uint8_t>(mask), &loss, &g_);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("loss", loss);
    r.set("grads", view(g_.data(), g_.size()));
    return r;
  }

  val trainOn(val tokens, val mask) {
    attn::Status st = check_batch(tokens, mask);
    if (!st.ok()) return error(st);
    double loss = 0, gn = 0;
    bool fin = true;
    st = t_->train_on(vec<std::int32_t>(tokens), vec<std::uint8_t>(mask), &loss, &gn, &fin);
    if (!st.ok()) return error(st);
    return step_result(loss, gn, fin);
  }

  val weights() const { return view(t_->params().data(), t_->params().size()); }

  // The shard API (trainer.hpp): a step's batch travels as tokens, lossMask, step, targets.
  val nextBatch() {
    attn::Status st = t_->next_batch(&batch_);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("tokens", view(batch_.tokens.data(), batch_.tokens.size()));
    r.set("lossMask", view(batch_.mask.data(), batch_.mask.size()));
    r.set("step", static_cast<double>(batch_.step));
    r.set("targets", static_cast<double>(batch_.targets));
    return r;
  }

  // A batch a caller hands back (nextBatch's, or one it made) into batch_.
  attn::Status load_batch(const val& tokens, const val& mask, double step, double targets) {
    attn::Status st = check_batch(tokens, mask);
    if (!st.ok()) return st;
    batch_.tokens = vec<std::int32_t>(tokens);
    batch_.mask = vec<std::uint8_t>(mask);
    batch_.rows = batch_.tokens.size() / t_->config().model.seq_len;
    batch_.step = static_cast<std::size_t>(step);
    batch_.targets = static_cast<std::size_t>(targets);
    return attn::Status::Ok();
  }

  // step and targets: non-negative integers checked by train_api.js.
  val shardGradient(val tokens, val mask, double step, double targets, double shard) {
    attn::Status st = load_batch(tokens, mask, step, targets);
    if (!st.ok()) return error(st);
    g_.resize(t_->params().size());
    double loss = 0;
    st = t_->shard_gradient(batch_, static_cast<std::size_t>(shard), g_.data(), &loss);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("loss", loss);
    r.set("grads", view(g_.data(), g_.size()));
    return r;
  }

  // The same gradient kept here, in kept_[shard], for applyGradients to read in place: the
  // Worker pool's coordinator saves copying its own shards out of the heap and back.
  val keepShardGradient(val tokens, val mask, double step, double targets, double shard) {
    const auto s = static_cast<std::size_t>(shard);
    if (s >= attn::tr::kShards) {
      return error(attn::Status::Invalid("shard", "shard must be 0 to 3"));
    }
    kept_step_[s] = -1;
    attn::Status st = load_batch(tokens, mask, step, targets);
    if (!st.ok()) return error(st);
    kept_[s].resize(t_->params().size());
    double loss = 0;
    st = t_->shard_gradient(batch_, s, kept_[s].data(), &loss);
    if (!st.ok()) return error(st);
    kept_step_[s] = static_cast<double>(batch_.step);
    kept_rows_[s] = batch_.rows;
    val r = ok();
    r.set("loss", loss);
    return r;
  }

  // grads: per non-empty shard, in shard order, a Float32Array (lengths checked by
  // train_api.js) or null for a gradient keepShardGradient kept here for this step; losses:
  // numbers.
  val applyGradients(double rows, double step, double targets, val grads, val losses) {
    attn::tr::StepBatch b;
    b.rows = static_cast<std::size_t>(rows);
    b.step = static_cast<std::size_t>(step);
    b.targets = static_cast<std::size_t>(targets);
    const std::size_t n = grads["length"].as<std::size_t>();
    if (n > attn::tr::kShards || losses["length"].as<std::size_t>() != n) {
      return error(
          attn::Status::Invalid("shards", "one gradient and one loss per non-empty shard"));
    }
    std::vector<std::size_t> live;
    for (std::size_t s = 0; s < attn::tr::kShards; ++s) {
      std::size_t r0 = 0, r1 = 0;
      attn::tr::shard_rows(b.rows, s, &r0, &r1);
      if (r0 < r1) live.push_back(s);
    }
    const std::size_t total = t_->params().size();
    shard_g_.resize(n);
    std::vector<const float*> gp;
    std::vector<double> ls;
    for (std::size_t i = 0; i < n; ++i) {
      const val g = grads[i];
      if (g.isNull()) {
        const std::size_t s = i < live.size() ? live[i] : attn::tr::kShards;
        if (s >= attn::tr::kShards || kept_step_[s] != step || kept_rows_[s] != b.rows) {
          return error(attn::Status::Invalid(
              "grads", "grads[" + std::to_string(i) +
                           "] is null but this trainer kept no gradient of that shard for this "
                           "step (a keepShardGradient() result applies only to the trainer that "
                           "kept it, before its next step or setParams)"));
        }
        gp.push_back(kept_[s].data());
      } else {
        if (g["length"].as<std::size_t>() != total) {
          return error(
              attn::Status::Invalid("grads", "each gradient must hold one value per parameter"));
        }
        // Into a buffer kept from the last step: no allocation, no zeroing.
        shard_g_[i].resize(total);
        val(emscripten::typed_memory_view(total, shard_g_[i].data())).call<void>("set", g);
        gp.push_back(shard_g_[i].data());
      }
      ls.push_back(losses[i].as<double>());
    }
    double loss = 0, gn = 0;
    bool fin = true;
    attn::Status st = t_->apply_gradients(b, gp, ls, &loss, &gn, &fin);
    if (!st.ok()) return error(st);
    kept_step_.fill(-1);
    return step_result(loss, gn, fin);
  }

  // w: a Float32Array of every parameter (length checked by train_api.js).
  val setParams(val w) {
    kept_step_.fill(-1);  // gradients kept for the old weights
    attn::Status st = t_->set_params(vec<float>(w));
    return st.ok() ? ok() : error(st);
  }

  val setLearningRate(double lr) {
    attn::Status st = t_->set_learning_rate(lr);
    return st.ok() ? ok() : error(st);
  }

  val setAblation(double layer, double head, bool on) {
    attn::Status st =
        t_->set_ablation(static_cast<std::size_t>(layer), static_cast<std::size_t>(head), on);
    return st.ok() ? ok() : error(st);
  }

  val generate(val prompt, double n, bool cache, double temperature, double seed, double top_k,
               double top_p) {
    if (prompt["length"].as<double>() > static_cast<double>(t_->config().model.seq_len)) {
      return error(attn::Status::Invalid("prompt", "prompt must hold at most seqLen tokens"));
    }
    attn::tr::SampleConfig s;
    s.temperature = temperature;
    s.top_k = static_cast<std::size_t>(top_k);  // whole, 0..2^31 - 1 (train_api.js)
    s.top_p = top_p;
    attn::Status st = t_->generate(vec<std::int32_t>(prompt), static_cast<std::size_t>(n), cache, s,
                                   static_cast<std::uint64_t>(seed), &tok_, &top_ids_, &top_probs_);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("tokens", view(tok_.data(), tok_.size()));
    r.set("topIds", view(top_ids_.data(), top_ids_.size()));
    r.set("topProbs", view(top_probs_.data(), top_probs_.size()));
    return r;
  }

  double step() const { return static_cast<double>(t_->step()); }

  val profile(double reps) {
    double ms[3];
    attn::Status st = t_->profile(static_cast<std::size_t>(reps), ms);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("forward", ms[0]);
    r.set("forwardBackward", ms[1]);
    r.set("optimizer", ms[2]);
    return r;
  }

  // mode: "recompute", "cache", "state", or "default" (the model's cached mode: the recurrent
  // state for normalizer 'linear', else the K/V cache). Unknown names mean "default".
  attn::tr::DecodeMode decode_mode(const std::string& mode) const {
    if (mode == "recompute") return attn::tr::DecodeMode::kRecompute;
    if (mode == "cache") return attn::tr::DecodeMode::kCache;
    if (mode == "state") return attn::tr::DecodeMode::kState;
    return attn::tr::default_decode_mode(t_->config().model, true);
  }
  val checkDecoder(std::string mode) const {
    attn::Status st = attn::tr::check_decode_mode(t_->config().model, decode_mode(mode));
    return st.ok() ? ok() : error(st);
  }
  std::unique_ptr<attn::tr::Decoder> make_decoder(const std::string& mode) const {
    return t_->decoder(decode_mode(mode));
  }

 private:
  // One optimiser step's report (trainOn, applyGradients): { ok, loss, gradNorm, finite, step }.
  val step_result(double loss, double gn, bool fin) const {
    val r = ok();
    r.set("loss", loss);
    r.set("gradNorm", gn);
    r.set("finite", fin);
    r.set("step", static_cast<double>(t_->step()));
    return r;
  }

  // The head scores into r as Float32 views of f_ (previousToken ... kComposition, loss).
  void setScores(val& r, const attn::tr::HeadScores& hs) {
    f_.clear();
    for (const auto* v : {&hs.previous_token, &hs.induction, &hs.duplicate_token, &hs.ablation_loss,
                          &hs.k_composition})
      for (double x : *v) f_.push_back(static_cast<float>(x));
    const std::size_t lh = hs.previous_token.size();
    r.set("previousToken", view(f_.data(), lh));
    r.set("induction", view(f_.data() + lh, lh));
    r.set("duplicateToken", view(f_.data() + 2 * lh, lh));
    r.set("ablationLoss", view(f_.data() + 3 * lh, lh));
    r.set("kComposition", view(f_.data() + 4 * lh, hs.k_composition.size()));
    r.set("loss", hs.loss);
  }

  std::unique_ptr<attn::tr::Trainer> t_;
  attn::tr::TrainReport report_;
  attn::tr::HeadScores hs_;
  attn::tr::TextHeadScores ts_;
  attn::tr::Diagnostics dg_;
  std::vector<float> f_, w_, g_, qkv_;
  std::vector<double> sg_, wqn_, pv_;
  std::vector<std::int32_t> tok_, top_ids_;
  std::vector<float> top_probs_;
  std::vector<std::uint8_t> mask_;
  attn::tr::StepBatch batch_;
  std::vector<std::vector<float>> shard_g_;
  // keepShardGradient's gradients by shard, with the step (-1: none) and batch rows of each.
  std::array<std::vector<float>, attn::tr::kShards> kept_;
  std::array<double, attn::tr::kShards> kept_step_{-1, -1, -1, -1};
  std::array<std::size_t, attn::tr::kShards> kept_rows_{};
};

class DecoderHandle {
 public:
  DecoderHandle(const TrainerHandle& t, std::string mode) : d_(t.make_decoder(mode)) {}

  val append(double token) {
    attn::Status st = d_->append(static_cast<std::int32_t>(token), &logits_, &weights_);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("logits", view(logits_.data(), logits_.size()));
    if (d_->mode() == attn::tr::DecodeMode::kState)
      r.set("weights", val::null());  // the recurrent state keeps no keys to weigh
    else
      r.set("weights", view(weights_.data(), weights_.size()));
    r.set("cacheBytes", static_cast<double>(d_->cache_bytes()));
    return r;
  }

  val prefill(val tokens) {
    attn::Status st = d_->prefill(vec<std::int32_t>(tokens));
    return st.ok() ? ok() : error(st);
  }

  val cache(double layer) {
    if (!(layer >= 0)) return error(attn::Status::Invalid("layer", "layer must be >= 0"));
    attn::Status st = d_->cache(static_cast<std::size_t>(layer), &k_, &v_);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("k", view(k_.data(), k_.size()));
    r.set("v", view(v_.data(), v_.size()));
    return r;
  }

  val state(double layer) {
    if (!(layer >= 0)) return error(attn::Status::Invalid("layer", "layer must be >= 0"));
    attn::Status st = d_->state(static_cast<std::size_t>(layer), &k_, &v_);
    if (!st.ok()) return error(st);
    val r = ok();
    r.set("s", view(k_.data(), k_.size()));
    r.set("z", view(v_.data(), v_.size()));
    return r;
  }

  std::string mode() const { return attn::tr::decode_mode_name(d_->mode()); }

  void reset() { d_->reset(); }
  double length() const { return static_cast<double>(d_->length()); }

 private:
  std::unique_ptr<attn::tr::Decoder> d_;
  std::vector<float> logits_, weights_, k_, v_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(attn_train) {
  emscripten::class_<TrainerHandle>("TrainerHandle")
      .constructor<>()
      .function("init", &TrainerHandle::init)
      .function("layout", &TrainerHandle::layout)
      .function("train", &TrainerHandle::train)
      .function("evaluate", &TrainerHandle::evaluate)
      .function("headScores", &TrainerHandle::headScores)
      .function("scoreGradients", &TrainerHandle::scoreGradients)
      .function("diagnostics", &TrainerHandle::diagnostics)
      .function("attention", &TrainerHandle::attention)
      .function("textScores", &TrainerHandle::textScores)
      .function("textLoss", &TrainerHandle::textLoss)
      .function("probeScores", &TrainerHandle::probeScores)
      .function("makeProbe", &TrainerHandle::makeProbe)
      .function("sampleBatch", &TrainerHandle::sampleBatch)
      .function("lossAndGradients", &TrainerHandle::lossAndGradients)
      .function("trainOn", &TrainerHandle::trainOn)
      .function("weights", &TrainerHandle::weights)
      .function("nextBatch", &TrainerHandle::nextBatch)
      .function("shardGradient", &TrainerHandle::shardGradient)
      .function("keepShardGradient", &TrainerHandle::keepShardGradient)
      .function("applyGradients", &TrainerHandle::applyGradients)
      .function("setParams", &TrainerHandle::setParams)
      .function("setLearningRate", &TrainerHandle::setLearningRate)
      .function("setAblation", &TrainerHandle::setAblation)
      .function("generate", &TrainerHandle::generate)
      .function("step", &TrainerHandle::step)
      .function("profile", &TrainerHandle::profile)
      .function("checkDecoder", &TrainerHandle::checkDecoder);
  emscripten::class_<DecoderHandle>("DecoderHandle")
      .constructor<const TrainerHandle&, std::string>()
      .function("append", &DecoderHandle::append)
      .function("prefill", &DecoderHandle::prefill)
      .function("cache", &DecoderHandle::cache)
      .function("state", &DecoderHandle::state)
      .function("mode", &DecoderHandle::mode)
      .function("reset", &DecoderHandle::reset)
      .function("length", &DecoderHandle::length);
  emscripten::function("trainNames", &trainNames);
}
