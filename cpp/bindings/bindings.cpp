// Embind surface of the core. Thin on purpose: api.js (appended with --post-js)
// checks JavaScript types and fills in defaults, this file copies typed arrays
// into the session's buffers (one copy), runs the core and hands back typed
// views that api.js copies at once. Errors come back as {ok: false, field,
// message}; nothing here throws or aborts.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/backward.hpp"
#include "attn/check.hpp"
#include "attn/examples.hpp"
#include "attn/introspect.hpp"
#include "attn/multihead.hpp"
#include "attn/numpy_example.hpp"
#include "attn/tiled.hpp"
#include "embind_common.hpp"

using emscripten::val;

namespace {

using attn_bind::error;
using attn_bind::size_field;
using attn_bind::view;

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

// The variant's options (attn/variants.hpp), already type-checked by api.js (variantOpts).
attn::Status read_variant(const val& o, attn::Variant* v) {
  v->qk_norm = o["qkNorm"].as<bool>();
  v->rope_base = o["ropeBase"].as<double>();
  if (!o["sigmoidBias"].isNull()) v->sigmoid_bias = o["sigmoidBias"].as<double>();
  v->max_shift = o["maxShift"].as<bool>();
  const std::string pos = o["position"].as<std::string>(), norm = o["normalizer"].as<std::string>(),
                    mode = o["maskMode"].as<std::string>(), prec = o["precision"].as<std::string>();
  if (!attn::parse_position(pos.c_str(), &v->position)) {
    return attn::Status::Invalid("position", "position must be 'none', 'rope' or 'alibi'");
  }
  if (!attn::parse_normalizer(norm.c_str(), &v->normalizer)) {
    return attn::Status::Invalid(
        "normalizer", "normalizer must be 'softmax', 'softmax1', 'sigmoid', 'relu' or 'linear'");
  }
  if (!attn::parse_mask_mode(mode.c_str(), &v->mask_mode)) {
    return attn::Status::Invalid("maskMode", "maskMode must be 'before' or 'after'");
  }
  if (!attn::parse_precision(prec.c_str(), &v->precision)) {
    return attn::Status::Invalid("precision",
                                 "precision must be 'float32', 'float64' or 'float16'");
  }
  return attn::Status::Ok();
}

template <class T>
val diag_into(val r, const attn::AttentionResult<T>& a, double scale) {
  r.set("entropy", view(a.entropy.data(), a.entropy.size()));
  r.set("lse", view(a.lse.data(), a.lse.size()));
  r.set("rowSums", view(a.row_sums.data(), a.row_sums.size()));
  r.set("fullyMaskedRows", static_cast<double>(a.diag.fully_masked_rows));
  r.set("nanRows", static_cast<double>(a.diag.nan_rows));
  r.set("infScoreRows", static_cast<double>(a.diag.inf_score_rows));
  r.set("scale", scale);
  val per_head = val::array();                    // NaN rows per query head (sum = nanRows)
  const std::size_t heads = a.output.shape()[0];  // the counts sum to nanRows: skip the scan at 0
  const std::vector<std::size_t> counts =
      a.diag.nan_rows ? attn::nan_rows_per_head(a) : std::vector<std::size_t>(heads, 0);
  for (std::size_t n : counts) per_head.call<void>("push", static_cast<double>(n));
  r.set("nanRowsPerHead", per_head);
  r.set("weights", a.weights.size() ? view(a.weights.data(), a.weights.size()) : val::null());
  r.set("scores", a.scores.size() ? view(a.scores.data(), a.scores.size()) : val::null());
  return r;
}

// One session per module instance: it owns every buffer the calls reuse.
class Session {
 public:
  // ---- the attention call without per-field emval traffic or reallocations ----
  // api.js writes the options into io_ (doubles at the Io:: slots), calls prepareAttention
  // (validates, then sizes the session's input buffers and writes their addresses into
  // io_), copies q, k, v and the masks straight into those buffers (the one copy in),
  // calls runAttention, which leaves the results' addresses and counts in io_, and copies
  // the results out (the one copy out). Both return 0 or, on an error, 1 with lastError().
  double ioAddress() const { return static_cast<double>(reinterpret_cast<std::uintptr_t>(io_)); }

  int prepareAttention() {
    attn::AttentionOptions& opts = fast_;
    const double* in = io_;
    opts = attn::AttentionOptions{};
    opts.shape = {io_size(Io::kHeads), io_size(Io::kKvHeads), io_size(Io::kTq),
                  io_size(Io::kTk),    io_size(Io::kDk),      io_size(Io::kDv)};
    opts.mask.causal = in[Io::kCausal] != 0;
    opts.mask.window = io_size(Io::kWindow);
    if (!std::isnan(in[Io::kScale])) opts.scale = in[Io::kScale];
    const int fill = static_cast<int>(in[Io::kFill]);
    opts.fill = fill == 1   ? attn::MaskFill::kFinite
                : fill == 2 ? attn::MaskFill::kZero
                            : attn::MaskFill::kNegInf;
    fast_tiled_ = in[Io::kTiled] != 0;
    opts.return_scores = in[Io::kReturnScores] != 0;
    opts.memory_cap = io_size(Io::kMemoryCap);
    opts.dropout = in[Io::kDropout];
    opts.dropout_seed = static_cast<std::uint64_t>(in[Io::kDropoutSeed]);
    // The variant, as small integers in enum order (api.js: VARIANT_CODES).
    attn::Variant& var = opts.variant;
    var.qk_norm = in[Io::kQkNorm] != 0;
    var.position = static_cast<attn::Position>(static_cast<int>(in[Io::kPosition]));
    var.rope_base = in[Io::kRopeBase];
    var.normalizer = static_cast<attn::Normalizer>(static_cast<int>(in[Io::kNormalizer]));
    if (!std::isnan(in[Io::kSigmoidBias])) var.sigmoid_bias = in[Io::kSigmoidBias];
    var.max_shift = in[Io::kMaxShift] != 0;
    var.mask_mode = static_cast<attn::MaskMode>(static_cast<int>(in[Io::kMaskMode]));
    var.precision = static_cast<attn::Precision>(static_cast<int>(in[Io::kPrecision]));
    const bool has_pad = in[Io::kPadLen] >= 0, has_mask = in[Io::kMaskLen] >= 0;
    const std::size_t pad_len = has_pad ? io_size(Io::kPadLen) : 0;
    const std::size_t mask_len = has_mask ? io_size(Io::kMaskLen) : 0;
    opts.mask.key_padding = has_pad ? attn::Bytes(&kNotCopied, pad_len) : nullptr;
    opts.mask.mask = has_mask ? attn::Bytes(&kNotCopied, mask_len) : nullptr;
    const std::size_t qn = io_size(Io::kQLen), kn = io_size(Io::kKLen), vn = io_size(Io::kVLen);
    // Validate before touching the heap.
    attn::Status st = attn::validate(opts, qn, kn, vn, !fast_tiled_);
    if (st.ok() && !(fq_.reserve(qn * 4) && fk_.reserve(kn * 4) && fv_.reserve(vn * 4) &&
                     fpad_.reserve(pad_len) && fmask_.reserve(mask_len))) {
      st = attn::Status::Exhausted("memory", "the wasm heap cannot hold the inputs");
    }
    if (!st.ok()) return set_error(st);
    fast_lens_[0] = qn, fast_lens_[1] = kn, fast_lens_[2] = vn;
    io_[Io::kQ] = address(fq_.data), io_[Io::kK] = address(fk_.data);
    io_[Io::kV] = address(fv_.data), io_[Io::kPad] = address(fpad_.data);
    io_[Io::kMask] = address(fmask_.data);
    opts.mask.key_padding = has_pad ? attn::Bytes(fpad_.data, pad_len) : nullptr;
    opts.mask.mask = has_mask ? attn::Bytes(fmask_.data, mask_len) : nullptr;
    fast_ready_ = true;
    return 0;
  }

  int runAttention() {
    if (!fast_ready_) {
      return set_error(attn::Status::Invalid("opts", "runAttention without prepareAttention"));
    }
    fast_ready_ = false;
    const attn::AttentionOptions& opts = fast_;
    const float *q = reinterpret_cast<const float*>(fq_.data),
                *k = reinterpret_cast<const float*>(fk_.data),
                *v = reinterpret_cast<const float*>(fv_.data);
    const double t0 = emscripten_get_now();
    const attn::Status st = fast_tiled_ ? attn::attention_tiled(q, fast_lens_[0], k, fast_lens_[1],
                                                                v, fast_lens_[2], opts, &res_)
                                        : attn::attention(q, fast_lens_[0], k, fast_lens_[1], v,
                                                          fast_lens_[2], opts, &res_);
    io_[Io::kKernelMs] = emscripten_get_now() - t0;  // core.lastKernelMs(): the bench's split
    if (!st.ok()) return set_error(st);
    io_[Io::kOutput] = address(res_.output.data());
    io_[Io::kOutputLen] = static_cast<double>(res_.output.size());
    io_[Io::kEntropy] = address(res_.entropy.data());
    io_[Io::kRowsLen] = static_cast<double>(res_.entropy.size());
    io_[Io::kLse] = address(res_.lse.data());
    io_[Io::kRowSums] = address(res_.row_sums.data());
    io_[Io::kWeights] = address(res_.weights.data());
    io_[Io::kWeightsLen] = static_cast<double>(res_.weights.size());
    io_[Io::kScores] = address(res_.scores.data());
    io_[Io::kScoresLen] = static_cast<double>(res_.scores.size());
    io_[Io::kFullyMasked] = static_cast<double>(res_.diag.fully_masked_rows);
    io_[Io::kNanRows] = static_cast<double>(res_.diag.nan_rows);
    io_[Io::kInfScoreRows] = static_cast<double>(res_.diag.inf_score_rows);
    io_[Io::kEffScale] = attn::effective_scale(opts);
    // NaN rows per query head (they sum to nanRows: no scan when that is 0).
    per_head_.assign(opts.shape.heads, 0.0);
    if (res_.diag.nan_rows) {
      const std::vector<std::size_t> per_head = attn::nan_rows_per_head(res_);
      for (std::size_t h = 0; h < per_head.size(); ++h)
        per_head_[h] = static_cast<double>(per_head[h]);
    }
    io_[Io::kPerHead] = address(per_head_.data());
    io_[Io::kPerHeadLen] = static_cast<double>(per_head_.size());
    return 0;
  }

  // precision 'float64': every step in double (attn::attention<double>); q, k and v come as
  // Float32Array or Float64Array and are widened once; the results are views of doubles.
  val attention64(val q, val k, val v, val o) {
    attn::AttentionOptions opts;
    bool tiled = false;
    attn::Status st = read_attention(o, &opts, &tiled);
    if (st.ok()) st = read_variant(o, &opts.variant);
    if (!st.ok()) return error(st);
    st = attn::validate(opts, q["length"].as<std::size_t>(), k["length"].as<std::size_t>(),
                        v["length"].as<std::size_t>(), !tiled, sizeof(double));
    if (!st.ok()) return error(st);
    q64_ = emscripten::convertJSArrayToNumberVector<double>(q);
    k64_ = emscripten::convertJSArrayToNumberVector<double>(k);
    v64_ = emscripten::convertJSArrayToNumberVector<double>(v);
    copy_masks(o, &opts.mask);
    st = tiled ? attn::attention_tiled(q64_.data(), q64_.size(), k64_.data(), k64_.size(),
                                       v64_.data(), v64_.size(), opts, &res64_)
               : attn::attention(q64_.data(), q64_.size(), k64_.data(), k64_.size(), v64_.data(),
                                 v64_.size(), opts, &res64_);
    if (!st.ok()) return error(st);
    val r = val::object();
    r.set("ok", true);
    r.set("output", view(res64_.output.data(), res64_.output.size()));
    return diag_into(r, res64_, attn::effective_scale(opts));
  }

  // The backward's options, kernel and input lengths, checked before anything is copied in
  // (elem: the bytes of one input value, for the memory cap).
  attn::Status read_backward(val q, val k, val v, val d_out, val o, std::size_t elem,
                             attn::AttentionOptions* opts, attn::Kernel* kernel) {
    bool tiled = false;
    attn::Status st = read_attention(o, opts, &tiled);
    if (st.ok()) st = read_variant(o, &opts->variant);
    if (!st.ok()) return st;
    if (opts->return_scores) {
      return attn::Status::Invalid("returnScores", "attentionBackward has no returnScores");
    }
    *kernel = tiled ? attn::Kernel::kTiled : attn::Kernel::kNaive;
    return attn::validate_backward(*opts, q["length"].as<std::size_t>(),
                                   k["length"].as<std::size_t>(), v["length"].as<std::size_t>(),
                                   d_out["length"].as<std::size_t>(), *kernel, elem);
  }

  // {ok, dq, dk, dv, output, lse} as views of the session's gradient buffers.
  template <class T>
  static val grads_result(const attn::AttentionGrads<T>& g) {
    val r = val::object();
    r.set("ok", true);
    r.set("dq", view(g.dq.data(), g.dq.size()));
    r.set("dk", view(g.dk.data(), g.dk.size()));
    r.set("dv", view(g.dv.data(), g.dv.size()));
    r.set("output", view(g.forward.output.data(), g.forward.output.size()));
    r.set("lse", view(g.forward.lse.data(), g.forward.lse.size()));
    return r;
  }

  // {ok: false, field, message, code} of the last failed prepareAttention / runAttention.
  val lastError() const { return error(last_error_); }
  // ---- end: the attention call ----

  // Gradients of sum(output * dOut) with respect to q, k and v (attn/backward.hpp).
  val attentionBackward(val q, val k, val v, val d_out, val o) {
    attn::AttentionOptions opts;
    attn::Kernel kernel;
    attn::Status st = read_backward(q, k, v, d_out, o, sizeof(float), &opts, &kernel);
    if (!st.ok()) return error(st);
    copy_inputs(q, k, v, o, &opts);
    dout_ = emscripten::convertJSArrayToNumberVector<float>(d_out);
    st = attn::attention_backward(q_.data(), q_.size(), k_.data(), k_.size(), v_.data(), v_.size(),
                                  dout_.data(), dout_.size(), opts, kernel,
                                  static_cast<const attn::AttentionResult<float>*>(nullptr),
                                  &grads_);
    return st.ok() ? grads_result(grads_) : error(st);
  }

  // precision 'float64': the same on doubles (attn::attention_backward<double>); q, k, v and
  // dOut come as Float32Array or Float64Array and are widened once.
  val attentionBackward64(val q, val k, val v, val d_out, val o) {
    attn::AttentionOptions opts;
    attn::Kernel kernel;
    attn::Status st = read_backward(q, k, v, d_out, o, sizeof(double), &opts, &kernel);
    if (!st.ok()) return error(st);
    q64_ = emscripten::convertJSArrayToNumberVector<double>(q);
    k64_ = emscripten::convertJSArrayToNumberVector<double>(k);
    v64_ = emscripten::convertJSArrayToNumberVector<double>(v);
    dout64_ = emscripten::convertJSArrayToNumberVector<double>(d_out);
    copy_masks(o, &opts.mask);
    st = attn::attention_backward(q64_.data(), q64_.size(), k64_.data(), k64_.size(), v64_.data(),
                                  v64_.size(), dout64_.data(), dout64_.size(), opts, kernel,
                                  static_cast<const attn::AttentionResult<double>*>(nullptr),
                                  &grads64_);
    return st.ok() ? grads_result(grads64_) : error(st);
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
    st = read_variant(o, &m.variant);
    if (!st.ok()) return error(st);
    if (m.tiled && m.return_scores) {
      return error(attn::Status::Invalid("returnScores", "returnScores needs the naive kernel"));
    }
    // Resolve and size-check (masks included) before copying the inputs.
    declare_masks(o, &m.mask);
    attn::MhaOptions probe = m;
    st = attn::resolve_mha(&probe);
    if (!st.ok()) return error(st);
    const double in_bytes =
        (m.variant.precision == attn::Precision::kFloat64 ? 8.0 : 4.0) *
        (x["length"].as<double>() + wq["length"].as<double>() + wk["length"].as<double>() +
         wv["length"].as<double>() + wo["length"].as<double>());
    if (in_bytes > static_cast<double>(m.memory_cap)) {
      return error(attn::Status::Exhausted("memory", "the inputs alone exceed the memory cap"));
    }
    copy_masks(o, &m.mask);
    // precision 'float64': the whole call (projections included) in double.
    if (m.variant.precision == attn::Precision::kFloat64) {
      return run_mha<double>(x, wq, wk, wv, wo, m, probe, &x64_, &mha64_);
    }
    return run_mha<float>(x, wq, wk, wv, wo, m, probe, &x_, &mha_);
  }

  // Step 4 of multiHeadAttention alone (attn::merge_and_project): the page's redraw when only the
  // mask or the scale changed reruns attention on the cached Q, K, V and then this.
  val mergeHeads(val y, val wo, val o) {
    const attn::MergeOptions m{size_field(o, "t"), size_field(o, "heads"), size_field(o, "dv"),
                               size_field(o, "dModel"), size_field(o, "memoryCap")};
    // As multiHeadAttention: the inputs checked here before they are copied, the results by the
    // core.
    if (4.0 * (y["length"].as<double>() + wo["length"].as<double>()) >
        static_cast<double>(m.memory_cap)) {
      return error(attn::Status::Exhausted("memory", "the inputs alone exceed the memory cap"));
    }
    y_ = emscripten::convertJSArrayToNumberVector<float>(y);
    wo_ = emscripten::convertJSArrayToNumberVector<float>(wo);
    attn::Status st = attn::merge_and_project(y_.data(), y_.size(), wo_.data(), wo_.size(), m,
                                              &mha_.merged, &mha_.output);
    if (!st.ok()) return error(st);
    val r = val::object();
    r.set("ok", true);
    r.set("merged", view(mha_.merged.data(), mha_.merged.size()));
    r.set("output", view(mha_.output.data(), mha_.output.size()));
    return r;
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
      if (o["init"].as<std::string>() == "scaled") r.init = attn::WeightInit::kScaled;
      if (!o["tokens"].isNull()) r.tokens = emscripten::vecFromJSArray<std::string>(o["tokens"]);
      // generator 'numpy' draws from NumPy's default_rng(seed) (lesson-2 preset).
      st = o["generator"].as<std::string>() == "numpy" ? attn::numpy_random_example(r, &ex_)
                                                       : attn::random_example(r, &ex_);
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

  // ---- the core as the page's single source of truth (mask, memory, check) ----

  // (T_q, T_k) allowed mask, exactly as the kernels apply it (attn::allowed_mask).
  val allowedMask(val o) {
    attn::AttentionOptions opts;
    opts.shape = {1, 1, size_field(o, "tq"), size_field(o, "tk"), 1, 1};
    opts.mask.causal = o["causal"].as<bool>();
    opts.mask.window = size_field(o, "window");
    opts.memory_cap = size_field(o, "memoryCap");
    // Validate before copying anything into the heap (weights of tq*tk floats bound the mask).
    declare_masks(o, &opts.mask);
    attn::Status st = attn::validate(opts, opts.shape.tq, opts.shape.tk, opts.shape.tk, true);
    if (!st.ok()) return error(st);
    copy_masks(o, &opts.mask);
    st = attn::allowed_mask(opts.mask, opts.shape.tq, opts.shape.tk, opts.memory_cap, &allowed_);
    if (!st.ok()) return error(st);
    val r = val::object();
    r.set("ok", true);
    r.set("mask", view(allowed_.data(), allowed_.size()));
    return r;
  }

  // Per query row, the key range [lo, hi) causal + window allow (attn::key_range), as
  // (lo, hi) pairs: O(T_q) where allowedMask is O(T_q * T_k), for splitting long calls.
  val keyRanges(val o) {
    attn::MaskSpec m;
    m.causal = o["causal"].as<bool>();
    m.window = size_field(o, "window");
    const std::size_t tq = size_field(o, "tq"), tk = size_field(o, "tk");
    ranges_.resize(2 * tq);
    for (std::size_t i = 0; i < tq; ++i) {
      const attn::KeyRange r = attn::key_range(m, i, tq, tk);
      ranges_[2 * i] = static_cast<std::uint32_t>(r.lo);
      ranges_[2 * i + 1] = static_cast<std::uint32_t>(r.hi);
    }
    val r = val::object();
    r.set("ok", true);
    r.set("ranges", view(ranges_.data(), ranges_.size()));
    return r;
  }

  // Bytes of the tiled kernel's scratch, independent of T (attn::tiled_workspace_bytes).
  double tiledScratchBytes(double dk) const {
    attn::Shape s;
    s.dk = static_cast<std::size_t>(dk);
    return static_cast<double>(attn::tiled_workspace_bytes(s, sizeof(float)));
  }

  // Bytes a call counts against its cap (attn::estimate_bytes); Infinity if it overflows.
  val estimateBytes(val o) {
    const attn::Shape s{size_field(o, "heads"), size_field(o, "kvHeads"), size_field(o, "tq"),
                        size_field(o, "tk"),    size_field(o, "dk"),      size_field(o, "dv")};
    const bool tiled = o["kernel"].as<std::string>() == "tiled";
    attn::Variant var;
    attn::Status st = read_variant(o, &var);
    if (!st.ok()) return error(st);
    const std::size_t elem = var.precision == attn::Precision::kFloat64 ? 8 : 4;
    return bytes_result(
        attn::estimate_bytes(s, elem, !tiled, !tiled && o["returnScores"].as<bool>(), var));
  }

  // The same for multiHeadAttention (attn::estimate_mha_bytes; inputs not counted).
  val estimateMultiHeadBytes(val o) {
    attn::MhaOptions m;
    m.t = size_field(o, "t");
    m.d_model = size_field(o, "dModel");
    m.heads = size_field(o, "heads");
    m.kv_heads = size_field(o, "kvHeads");
    m.dk = size_field(o, "dk");
    m.dv = size_field(o, "dv");
    m.tiled = o["kernel"].as<std::string>() == "tiled";
    m.return_scores = !m.tiled && o["returnScores"].as<bool>();
    attn::Status st = read_variant(o, &m.variant);
    if (st.ok()) st = attn::resolve_mha(&m);
    if (!st.ok()) return error(st);
    return bytes_result(
        attn::estimate_mha_bytes(m, m.variant.precision == attn::Precision::kFloat64 ? 8 : 4));
  }

  // float32 kernel vs float64 scalar kernel, tiled vs naive (attn::check_kernels).
  val check(val q, val k, val v, val o) {
    attn::AttentionOptions opts;
    opts.shape = {size_field(o, "heads"), size_field(o, "kvHeads"), size_field(o, "tq"),
                  size_field(o, "tk"),    size_field(o, "dk"),      size_field(o, "dv")};
    attn::Status st = read_common(o, &opts.mask, &opts.scale, &opts.fill, &opts.memory_cap);
    if (!st.ok()) return error(st);
    declare_masks(o, &opts.mask);
    st = attn::validate(opts, q["length"].as<std::size_t>(), k["length"].as<std::size_t>(),
                        v["length"].as<std::size_t>(), true);
    if (!st.ok()) return error(st);
    copy_inputs(q, k, v, o, &opts);
    attn::KernelCheck c;
    st = attn::check_kernels(q_.data(), q_.size(), k_.data(), k_.size(), v_.data(), v_.size(), opts,
                             &c);
    if (!st.ok()) return error(st);
    val r = val::object();
    r.set("ok", true);
    r.set("f32VsF64", c.f32_vs_f64);
    r.set("f32VsF64Tolerance", c.f32_vs_f64_tol);
    r.set("tiledVsNaive", c.tiled_vs_naive);
    r.set("tiledVsNaiveTolerance", c.tiled_vs_naive_tol);
    r.set("maxAbsScore", c.max_abs_score);
    r.set("maxAbsV", c.max_abs_v);
    r.set("simd", c.simd);
    r.set("pass", c.ok());
    return r;
  }
  // ---- end: the core as the page's source of truth ----

 private:
  template <class T>
  val run_mha(const val& x, const val& wq, const val& wk, const val& wv, const val& wo,
              const attn::MhaOptions& m, const attn::MhaOptions& probe, std::vector<T>* in,
              attn::MhaResult<T>* res) {
    std::vector<T> bufs[5];
    const val* src[5] = {&x, &wq, &wk, &wv, &wo};
    for (int i = 0; i < 5; ++i) bufs[i] = emscripten::convertJSArrayToNumberVector<T>(*src[i]);
    *in = std::move(bufs[0]);
    attn::Status st = attn::multi_head_attention(
        in->data(), in->size(), bufs[1].data(), bufs[1].size(), bufs[2].data(), bufs[2].size(),
        bufs[3].data(), bufs[3].size(), bufs[4].data(), bufs[4].size(), m, res);
    if (!st.ok()) return error(st);
    val r = val::object();
    r.set("ok", true);
    r.set("output", view(res->output.data(), res->output.size()));
    r.set("merged", view(res->merged.data(), res->merged.size()));
    r.set("headOutputs", view(res->attn.output.data(), res->attn.output.size()));
    r.set("q", view(res->q.data(), res->q.size()));
    r.set("k", view(res->k.data(), res->k.size()));
    r.set("v", view(res->v.data(), res->v.size()));
    r.set("dk", static_cast<double>(probe.dk));
    r.set("dv", static_cast<double>(probe.dv));
    r.set("kvHeads", static_cast<double>(probe.kv_heads));
    attn::AttentionOptions ao;
    ao.shape.dk = probe.dk;
    ao.scale = m.scale;
    return diag_into(r, res->attn, attn::effective_scale(ao));
  }

  // Shape, masks (declared with their lengths until copied), scale, fill, kernel, dropout.
  attn::Status read_attention(const val& o, attn::AttentionOptions* opts, bool* tiled) {
    opts->shape = {size_field(o, "heads"), size_field(o, "kvHeads"), size_field(o, "tq"),
                   size_field(o, "tk"),    size_field(o, "dk"),      size_field(o, "dv")};
    attn::Status st = read_common(o, &opts->mask, &opts->scale, &opts->fill, &opts->memory_cap);
    if (!st.ok()) return st;
    opts->return_scores = o["returnScores"].as<bool>();
    opts->dropout = o["dropout"].as<double>();
    opts->dropout_seed = static_cast<std::uint64_t>(o["dropoutSeed"].as<double>());
    *tiled = o["kernel"].as<std::string>() == "tiled";
    declare_masks(o, &opts->mask);
    return attn::Status::Ok();
  }

  // The masks of an options object with their real lengths, before their bytes are in the
  // heap: validate() needs only which masks are present and their sizes, so a wrong length or
  // an over-cap shape fails before anything is copied. The data points at kNotCopied until
  // copy_masks() points it at the session's copies.
  static void declare_masks(const val& o, attn::MaskSpec* m) {
    const val pad = o["keyPadding"], mask = o["mask"];
    m->key_padding =
        pad.isNull() ? attn::Bytes() : attn::Bytes(&kNotCopied, pad["length"].as<std::size_t>());
    m->mask =
        mask.isNull() ? attn::Bytes() : attn::Bytes(&kNotCopied, mask["length"].as<std::size_t>());
  }
  void copy_masks(const val& o, attn::MaskSpec* m) {
    if (m->key_padding) {
      pad_ = emscripten::convertJSArrayToNumberVector<std::uint8_t>(o["keyPadding"]);
      m->key_padding = attn::Bytes(pad_.data(), pad_.size());
    }
    if (m->mask) {
      mask_ = emscripten::convertJSArrayToNumberVector<std::uint8_t>(o["mask"]);
      m->mask = attn::Bytes(mask_.data(), mask_.size());
    }
  }

  // Copies q, k, v and the masks into the session's buffers (after validation).
  void copy_inputs(const val& q, const val& k, const val& v, const val& o,
                   attn::AttentionOptions* opts) {
    q_ = emscripten::convertJSArrayToNumberVector<float>(q);
    k_ = emscripten::convertJSArrayToNumberVector<float>(k);
    v_ = emscripten::convertJSArrayToNumberVector<float>(v);
    copy_masks(o, &opts->mask);
  }

  // slots of io_, shared with api.js (keep the two lists in step).
  struct Io {
    enum : int {
      // in: options, normalised by api.js
      kHeads,
      kKvHeads,
      kTq,
      kTk,
      kDk,
      kDv,
      kCausal,
      kWindow,
      kScale /* NaN: 1/sqrt(dk) */,
      kFill /* 0 neg_inf, 1 finite, 2 zero */,
      kTiled,
      kReturnScores,
      kMemoryCap,
      kDropout,
      kDropoutSeed,
      kQLen,
      kKLen,
      kVLen,
      kPadLen /* -1: none */,
      kMaskLen /* -1: none */,
      // out of prepareAttention: where api.js copies the inputs
      kQ,
      kK,
      kV,
      kPad,
      kMask,
      // out of runAttention: the results (address, length) and diagnostics
      kOutput,
      kOutputLen,
      kEntropy,
      kRowsLen /* entropy and lse */,
      kLse,
      kWeights,
      kWeightsLen,
      kScores,
      kScoresLen,
      kFullyMasked,
      kNanRows,
      kInfScoreRows,
      kEffScale,
      kPerHead,
      kPerHeadLen,
      kKernelMs,
      // in: the variant (attn/variants.hpp), enums as their index
      kQkNorm,
      kPosition,
      kRopeBase,
      kNormalizer,
      kSigmoidBias /* NaN: -ln tk */,
      kMaxShift,
      kMaskMode,
      kPrecision,
      // out of runAttention: rowSums' address (length kRowsLen)
      kRowSums,
      kCount
    };
  };
  // A buffer that only grows and never zero-fills (every byte is overwritten by the copy
  // in); 64-byte aligned so the kernels' 16-byte loads never split a cache line.
  struct Buffer {
    std::uint8_t* data = nullptr;
    std::size_t cap = 0;
    bool reserve(std::size_t bytes) {
      if (bytes <= cap) return true;
      const std::size_t rounded = (bytes + 63) & ~std::size_t(63);
      if (rounded < bytes) return false;
      void* p = std::aligned_alloc(64, rounded);
      if (!p) return false;
      std::free(data);
      data = static_cast<std::uint8_t*>(p), cap = rounded;
      return true;
    }
    Buffer() = default;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() { std::free(data); }
  };
  static double address(const void* p) {
    return static_cast<double>(reinterpret_cast<std::uintptr_t>(p));
  }
  std::size_t io_size(int slot) const { return static_cast<std::size_t>(io_[slot]); }
  int set_error(const attn::Status& st) {
    last_error_ = st;
    return 1;
  }
  double io_[Io::kCount] = {};
  Buffer fq_, fk_, fv_, fpad_, fmask_;
  attn::AttentionOptions fast_;
  std::size_t fast_lens_[3] = {0, 0, 0};
  bool fast_tiled_ = false, fast_ready_ = false;
  std::vector<double> per_head_;
  attn::Status last_error_;

  static inline const std::uint8_t kNotCopied = 1;  // see declare_masks
  std::vector<float> dout_;
  attn::AttentionGrads<float> grads_;
  std::vector<float> q_, k_, v_, x_, wq_, wk_, wv_, wo_, y_;
  std::vector<std::uint8_t> pad_, mask_;
  attn::AttentionResult<float> res_;
  attn::MhaResult<float> mha_;
  std::vector<double> q64_, k64_, v64_, x64_;  // precision 'float64'
  std::vector<double> dout64_;                 // attentionBackward64
  attn::AttentionGrads<double> grads64_;
  attn::AttentionResult<double> res64_;
  attn::MhaResult<double> mha64_;
  attn::Example ex_;
  std::vector<std::uint8_t> allowed_;  // allowedMask's result
  std::vector<std::uint32_t> ranges_;  // keyRanges' result

  static val bytes_result(std::size_t n) {
    val r = val::object();
    r.set("ok", true);
    r.set("bytes", n == static_cast<std::size_t>(-1) ? INFINITY : static_cast<double>(n));
    return r;
  }
};

// the core's constants, read once by api.js into core.limits.
val coreConstants() {
  val r = val::object();
  r.set("memoryCap", static_cast<double>(attn::kDefaultMemoryCap));
  r.set("tileQueries", static_cast<double>(attn::kTileQ));
  r.set("tileKeys", static_cast<double>(attn::kTileK));
  r.set("tileKeysSimd", static_cast<double>(attn::kTileKSimd));
  r.set("simd", attn::simd_kernels_built());
#ifdef ATTN_RELAXED_SIMD  // the attn_core_relaxed build (fused multiply-adds)
  r.set("relaxedSimd", true);
#else
  r.set("relaxedSimd", false);
#endif
  r.set("checkUnitRoundoff", attn::kCheckUnitRoundoff);
  r.set("checkF32VsF64Abs", attn::kCheckF32VsF64Abs);
  r.set("checkTiledVsNaiveAbs", attn::kCheckTiledVsNaiveAbs);
  return r;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attn_core) {
  emscripten::class_<Session>("Session")
      .constructor<>()
      .function("ioAddress", &Session::ioAddress)
      .function("prepareAttention", &Session::prepareAttention)
      .function("runAttention", &Session::runAttention)
      .function("attention64", &Session::attention64)
      .function("attentionBackward64", &Session::attentionBackward64)
      .function("lastError", &Session::lastError)
      .function("attentionBackward", &Session::attentionBackward)
      .function("multiHeadAttention", &Session::multiHeadAttention)
      .function("mergeHeads", &Session::mergeHeads)
      .function("example", &Session::example)
      .function("entropyStudy", &Session::entropyStudy)
      .function("memoryCap", &Session::memoryCap)
      .function("allowedMask", &Session::allowedMask)
      .function("keyRanges", &Session::keyRanges)
      .function("tiledScratchBytes", &Session::tiledScratchBytes)
      .function("estimateBytes", &Session::estimateBytes)
      .function("estimateMultiHeadBytes", &Session::estimateMultiHeadBytes)
      .function("check", &Session::check);
  emscripten::function("coreConstants", &coreConstants);
}

// ---- Bytes moved (core.traffic): the IO model of the standard and tiled algorithms. Its own
// block (include, function, registration) so it merges apart from the attention surface.
#include "attn/traffic.hpp"

namespace {

// o: normalised by api.js (integers >= 1, kernel 'naive' | 'tiled', sramBytes 0 when unused,
// loopOrder 'q-outer' | 'kv-outer').
val trafficModel(val o) {
  attn::TrafficOptions t;
  t.tq = static_cast<std::uint64_t>(o["tq"].as<double>());
  t.tk = static_cast<std::uint64_t>(o["tk"].as<double>());
  t.dk = static_cast<std::uint64_t>(o["dk"].as<double>());
  t.dv = static_cast<std::uint64_t>(o["dv"].as<double>());
  t.heads = static_cast<std::uint64_t>(o["heads"].as<double>());
  t.kv_heads = static_cast<std::uint64_t>(o["kvHeads"].as<double>());
  t.causal = o["causal"].as<bool>();
  t.kernel = o["kernel"].as<std::string>() == "tiled" ? attn::TrafficKernel::kTiled
                                                      : attn::TrafficKernel::kStandard;
  t.sram_bytes = static_cast<std::uint64_t>(o["sramBytes"].as<double>());
  t.loop_order = o["loopOrder"].as<std::string>() == "kv-outer"
                     ? attn::TrafficLoopOrder::kKeyBlocksOuter
                     : attn::TrafficLoopOrder::kQueryBlocksOuter;
  attn::Traffic r;
  attn::Status st = attn::traffic(t, &r);
  if (!st.ok()) return error(st);
  // JavaScript numbers hold integers exactly up to 2^53.
  constexpr std::uint64_t kExact = std::uint64_t{1} << 53;
  if (r.footprint_bytes > kExact || r.slow_memory_bytes > kExact) {
    return error(attn::Status::Invalid(
        "tq",
        "tq, tk, dk, dv and heads give byte counts beyond 2^53, the largest integer a "
        "JavaScript number holds exactly; use smaller sizes"));
  }
  val out = val::object();
  out.set("ok", true);
  out.set("footprintBytes", static_cast<double>(r.footprint_bytes));
  out.set("slowMemoryBytes", static_cast<double>(r.slow_memory_bytes));
  out.set("loadedBytes", static_cast<double>(r.loaded_bytes));
  out.set("storedBytes", static_cast<double>(r.stored_bytes));
  out.set("blockRows", static_cast<double>(r.block_rows));
  out.set("blockCols", static_cast<double>(r.block_cols));
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attn_traffic) {
  emscripten::function("trafficModel", &trafficModel);
}
