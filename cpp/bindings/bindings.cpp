// Embind surface of the core. Thin on purpose: api.js (appended with --post-js)
// checks JavaScript types and fills in defaults, this file copies typed arrays
// into the session's buffers (one copy), runs the core and hands back typed
// views that api.js copies at once. Errors come back as {ok: false, field,
// message}; nothing here throws or aborts.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/backward.hpp"
#include "attn/examples.hpp"
#include "attn/multihead.hpp"
#include "attn/tiled.hpp"

using emscripten::val;

namespace {

template <class T>
val view(const T* data, std::size_t n) {
  return val(emscripten::typed_memory_view(n, data));
}

val error(const attn::Status& st) {
  val r = val::object();
  r.set("ok", false);
  r.set("field", st.field);
  r.set("message", st.message);
  r.set("code", st.code == attn::StatusCode::kResourceExhausted ? "resource_exhausted"
                                                                : "invalid_argument");
  return r;
}

std::size_t size_field(const val& o, const char* name) {
  return static_cast<std::size_t>(o[name].as<double>());
}

// Options common to attention and multi-head attention, already normalised by api.js.
attn::Status read_common(const val& o, attn::MaskSpec* mask, std::optional<double>* scale,
                         attn::MaskFill* fill, std::size_t* cap) {
  mask->causal = o["causal"].as<bool>();
  mask->window = size_field(o, "window");
  if (!o["scale"].isNull()) *scale = o["scale"].as<double>();
  const std::string f = o["maskFill"].as<std::string>();
  if (!attn::parse_mask_fill(f.c_str(), fill)) {
    return attn::Status::Invalid("maskFill", "maskFill must be 'neg_inf', 'finite' or 'zero'");
  }
  *cap = size_field(o, "memoryCap");
  return attn::Status::Ok();
}

val diag_into(val r, const attn::AttentionResult<float>& a, double scale) {
  r.set("entropy", view(a.entropy.data(), a.entropy.size()));
  r.set("lse", view(a.lse.data(), a.lse.size()));
  r.set("fullyMaskedRows", static_cast<double>(a.diag.fully_masked_rows));
  r.set("nanRows", static_cast<double>(a.diag.nan_rows));
  r.set("infScoreRows", static_cast<double>(a.diag.inf_score_rows));
  r.set("scale", scale);
  r.set("weights", a.weights.size() ? view(a.weights.data(), a.weights.size()) : val::null());
  r.set("scores", a.scores.size() ? view(a.scores.data(), a.scores.size()) : val::null());
  return r;
}

// One session per module instance: it owns every buffer the calls reuse.
class Session {
 public:
  val attention(val q, val k, val v, val o) {
    attn::AttentionOptions opts;
    bool tiled = false;
    attn::Status st = read_attention(o, &opts, &tiled);
    if (!st.ok()) return error(st);
    // Validate before copying anything into the heap.
    st = attn::validate(opts, q["length"].as<std::size_t>(), k["length"].as<std::size_t>(),
                        v["length"].as<std::size_t>(), pad_len_, mask_len_, !tiled);
    if (!st.ok()) return error(st);
    copy_inputs(q, k, v, o, &opts);
    st = tiled ? attn::attention_tiled(q_.data(), q_.size(), k_.data(), k_.size(), v_.data(),
                                       v_.size(), opts, &res_)
               : attn::attention(q_.data(), q_.size(), k_.data(), k_.size(), v_.data(), v_.size(),
                                 opts, &res_);
    if (!st.ok()) return error(st);
    val r = val::object();
    r.set("ok", true);
    r.set("output", view(res_.output.data(), res_.output.size()));
    return diag_into(r, res_, attn::effective_scale(opts));
  }

  // Gradients of sum(output * dOut) with respect to q, k and v (attn/backward.hpp).
  val attentionBackward(val q, val k, val v, val d_out, val o) {
    attn::AttentionOptions opts;
    bool tiled = false;
    attn::Status st = read_attention(o, &opts, &tiled);
    if (!st.ok()) return error(st);
    if (opts.return_scores) {
      return error(attn::Status::Invalid("returnScores", "attentionBackward has no returnScores"));
    }
    const attn::Kernel kernel = tiled ? attn::Kernel::kTiled : attn::Kernel::kNaive;
    st = attn::validate_backward(opts, q["length"].as<std::size_t>(), k["length"].as<std::size_t>(),
                                 v["length"].as<std::size_t>(), d_out["length"].as<std::size_t>(),
                                 pad_len_, mask_len_, kernel, sizeof(float));
    if (!st.ok()) return error(st);
    copy_inputs(q, k, v, o, &opts);
    dout_ = emscripten::convertJSArrayToNumberVector<float>(d_out);
    st = attn::attention_backward(q_.data(), q_.size(), k_.data(), k_.size(), v_.data(), v_.size(),
                                  dout_.data(), dout_.size(), opts, kernel,
                                  static_cast<const attn::AttentionResult<float>*>(nullptr),
                                  &grads_);
    if (!st.ok()) return error(st);
    val r = val::object();
    r.set("ok", true);
    r.set("dq", view(grads_.dq.data(), grads_.dq.size()));
    r.set("dk", view(grads_.dk.data(), grads_.dk.size()));
    r.set("dv", view(grads_.dv.data(), grads_.dv.size()));
    r.set("output", view(grads_.forward.output.data(), grads_.forward.output.size()));
    r.set("lse", view(grads_.forward.lse.data(), grads_.forward.lse.size()));
    return r;
  }

  val multiHeadAttention(val x, val wq, val wk, val wv, val wo, val o) {
    attn::MhaOptions m;
    m.t = size_field(o, "t");
    m.d_model = size_field(o, "dModel");
    m.heads = size_field(o, "heads");
    m.kv_heads = size_field(o, "kvHeads");
    m.dk = size_field(o, "dk");
    m.dv = size_field(o, "dv");
    attn::Status st = read_common(o, &m.mask, &m.scale, &m.fill, &m.memory_cap);
    if (!st.ok()) return error(st);
    m.tiled = o["kernel"].as<std::string>() == "tiled";
    m.return_scores = o["returnScores"].as<bool>();
    if (m.tiled && m.return_scores) {
      return error(attn::Status::Invalid("returnScores", "returnScores needs the naive kernel"));
    }
    // Resolve and size-check before copying the inputs.
    attn::MhaOptions probe = m;
    st = attn::resolve_mha(&probe);
    if (!st.ok()) return error(st);
    const bool has_pad = !o["keyPadding"].isNull(), has_mask = !o["mask"].isNull();
    if (has_pad && o["keyPadding"]["length"].as<std::size_t>() != probe.t) {
      return error(attn::Status::Invalid("keyPadding", "keyPadding must have t entries"));
    }
    if (has_mask && o["mask"]["length"].as<double>() != static_cast<double>(probe.t) * probe.t) {
      return error(attn::Status::Invalid("mask", "mask must have t*t entries"));
    }
    const double in_bytes =
        4.0 * (x["length"].as<double>() + wq["length"].as<double>() + wk["length"].as<double>() +
               wv["length"].as<double>() + wo["length"].as<double>());
    if (in_bytes > static_cast<double>(m.memory_cap)) {
      return error(attn::Status::Exhausted("memory", "the inputs alone exceed the memory cap"));
    }
    x_ = emscripten::convertJSArrayToNumberVector<float>(x);
    wq_ = emscripten::convertJSArrayToNumberVector<float>(wq);
    wk_ = emscripten::convertJSArrayToNumberVector<float>(wk);
    wv_ = emscripten::convertJSArrayToNumberVector<float>(wv);
    wo_ = emscripten::convertJSArrayToNumberVector<float>(wo);
    if (has_pad) pad_ = emscripten::convertJSArrayToNumberVector<std::uint8_t>(o["keyPadding"]);
    if (has_mask) mask_ = emscripten::convertJSArrayToNumberVector<std::uint8_t>(o["mask"]);
    m.mask.key_padding = has_pad ? pad_.data() : nullptr;
    m.mask.mask = has_mask ? mask_.data() : nullptr;
    st = attn::multi_head_attention(x_.data(), x_.size(), wq_.data(), wq_.size(), wk_.data(),
                                    wk_.size(), wv_.data(), wv_.size(), wo_.data(), wo_.size(), m,
                                    &mha_);
    if (!st.ok()) return error(st);
    val r = val::object();
    r.set("ok", true);
    r.set("output", view(mha_.output.data(), mha_.output.size()));
    r.set("merged", view(mha_.merged.data(), mha_.merged.size()));
    r.set("headOutputs", view(mha_.attn.output.data(), mha_.attn.output.size()));
    r.set("q", view(mha_.q.data(), mha_.q.size()));
    r.set("k", view(mha_.k.data(), mha_.k.size()));
    r.set("v", view(mha_.v.data(), mha_.v.size()));
    r.set("dk", static_cast<double>(probe.dk));
    r.set("dv", static_cast<double>(probe.dv));
    r.set("kvHeads", static_cast<double>(probe.kv_heads));
    attn::AttentionOptions ao;
    ao.shape.dk = probe.dk;
    ao.scale = m.scale;
    return diag_into(r, mha_.attn, attn::effective_scale(ao));
  }

  val example(std::string name, val o) {
    attn::Status st;
    if (name == "induction") {
      std::vector<std::string> tokens = attn::lesson_sentence();
      if (!o["tokens"].isNull()) tokens = emscripten::vecFromJSArray<std::string>(o["tokens"]);
      st = attn::induction_example(tokens, o["sharpness"].as<double>(), &ex_);
    } else if (name == "random") {
      attn::RandomExampleOptions r;
      r.seed = static_cast<std::uint64_t>(o["seed"].as<double>());
      r.t = size_field(o, "t");
      r.d_model = size_field(o, "dModel");
      r.heads = size_field(o, "heads");
      r.kv_heads = size_field(o, "kvHeads");
      r.dk = size_field(o, "dk");
      r.dv = size_field(o, "dv");
      r.causal = o["causal"].as<bool>();
      if (!o["tokens"].isNull()) r.tokens = emscripten::vecFromJSArray<std::string>(o["tokens"]);
      st = attn::random_example(r, &ex_);
    } else {
      st = attn::Status::Invalid(
          "name", "unknown example name '" + name + "' (expected 'induction' or 'random')");
    }
    if (!st.ok()) return error(st);
    val r = val::object();
    r.set("ok", true);
    val tokens = val::array();
    for (const std::string& t : ex_.tokens) tokens.call<void>("push", t);
    r.set("tokens", tokens);
    r.set("t", static_cast<double>(ex_.t));
    r.set("dModel", static_cast<double>(ex_.d_model));
    r.set("heads", static_cast<double>(ex_.heads));
    r.set("kvHeads", static_cast<double>(ex_.kv_heads));
    r.set("dk", static_cast<double>(ex_.dk));
    r.set("dv", static_cast<double>(ex_.dv));
    r.set("causal", ex_.causal);
    r.set("x", view(ex_.x.data(), ex_.x.size()));
    r.set("wq", view(ex_.wq.data(), ex_.wq.size()));
    r.set("wk", view(ex_.wk.data(), ex_.wk.size()));
    r.set("wv", view(ex_.wv.data(), ex_.wv.size()));
    r.set("wo", view(ex_.wo.data(), ex_.wo.size()));
    return r;
  }

  val entropyStudy(val o) {
    std::vector<std::size_t> dks;
    for (double d : emscripten::vecFromJSArray<double>(o["dks"])) {
      dks.push_back(static_cast<std::size_t>(d));
    }
    std::vector<attn::EntropyPoint> pts;
    attn::Status st = attn::entropy_study(dks, size_field(o, "keys"), size_field(o, "queries"),
                                          static_cast<std::uint64_t>(o["seed"].as<double>()), &pts);
    if (!st.ok()) return error(st);
    val r = val::object();
    r.set("ok", true);
    val dk = val::array(), sc = val::array(), un = val::array();
    for (const auto& p : pts) {
      dk.call<void>("push", static_cast<double>(p.dk));
      sc.call<void>("push", p.scaled);
      un.call<void>("push", p.unscaled);
    }
    r.set("dk", dk);
    r.set("scaled", sc);
    r.set("unscaled", un);
    r.set("ceiling", std::log(static_cast<double>(size_field(o, "keys"))));
    return r;
  }

  double memoryCap() const { return static_cast<double>(attn::kDefaultMemoryCap); }

 private:
  // Shape, masks (marked non-null with kDummy until copied), scale, fill, kernel, dropout.
  attn::Status read_attention(const val& o, attn::AttentionOptions* opts, bool* tiled) {
    opts->shape = {size_field(o, "heads"), size_field(o, "kvHeads"), size_field(o, "tq"),
                   size_field(o, "tk"),    size_field(o, "dk"),      size_field(o, "dv")};
    attn::Status st = read_common(o, &opts->mask, &opts->scale, &opts->fill, &opts->memory_cap);
    if (!st.ok()) return st;
    opts->return_scores = o["returnScores"].as<bool>();
    opts->dropout = o["dropout"].as<double>();
    opts->dropout_seed = static_cast<std::uint64_t>(o["dropoutSeed"].as<double>());
    *tiled = o["kernel"].as<std::string>() == "tiled";
    const bool has_pad = !o["keyPadding"].isNull(), has_mask = !o["mask"].isNull();
    pad_len_ = has_pad ? o["keyPadding"]["length"].as<std::size_t>() : 0;
    mask_len_ = has_mask ? o["mask"]["length"].as<std::size_t>() : 0;
    opts->mask.key_padding = has_pad ? &kDummy : nullptr;
    opts->mask.mask = has_mask ? &kDummy : nullptr;
    return attn::Status::Ok();
  }

  // Copies q, k, v and the masks into the session's buffers (after validation).
  void copy_inputs(const val& q, const val& k, const val& v, const val& o,
                   attn::AttentionOptions* opts) {
    q_ = emscripten::convertJSArrayToNumberVector<float>(q);
    k_ = emscripten::convertJSArrayToNumberVector<float>(k);
    v_ = emscripten::convertJSArrayToNumberVector<float>(v);
    const bool has_pad = opts->mask.key_padding, has_mask = opts->mask.mask;
    if (has_pad) pad_ = emscripten::convertJSArrayToNumberVector<std::uint8_t>(o["keyPadding"]);
    if (has_mask) mask_ = emscripten::convertJSArrayToNumberVector<std::uint8_t>(o["mask"]);
    opts->mask.key_padding = has_pad ? pad_.data() : nullptr;
    opts->mask.mask = has_mask ? mask_.data() : nullptr;
  }

  static inline const std::uint8_t kDummy = 1;  // non-null marker for validate()
  std::size_t pad_len_ = 0, mask_len_ = 0;
  std::vector<float> dout_;
  attn::AttentionGrads<float> grads_;
  std::vector<float> q_, k_, v_, x_, wq_, wk_, wv_, wo_;
  std::vector<std::uint8_t> pad_, mask_;
  attn::AttentionResult<float> res_;
  attn::MhaResult<float> mha_;
  attn::Example ex_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(attn_core) {
  emscripten::class_<Session>("Session")
      .constructor<>()
      .function("attention", &Session::attention)
      .function("attentionBackward", &Session::attentionBackward)
      .function("multiHeadAttention", &Session::multiHeadAttention)
      .function("example", &Session::example)
      .function("entropyStudy", &Session::entropyStudy)
      .function("memoryCap", &Session::memoryCap);
}
