// What attn_core tells the page besides attention itself: the lessons' examples, the entropy
// study, the mask and key ranges the kernels apply, memory estimates, the float32-vs-float64
// Check, and the IO model (core.traffic). The page asks these instead of re-implementing them.
// api.js checks the JavaScript types first; errors come back as {ok: false, field, message}.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/breakdown.hpp"
#include "attn/check.hpp"
#include "attn/examples.hpp"
#include "attn/geometry.hpp"
#include "attn/multihead.hpp"
#include "attn/names.hpp"
#include "attn/numpy_example.hpp"
#include "attn/roles.hpp"
#include "attn/selection.hpp"
#include "attn/softmax_steps.hpp"
#include "attn/tiled.hpp"
#include "attn/traffic.hpp"
#include "embind_common.hpp"
#include "session_common.hpp"

using emscripten::val;

namespace {

using attn_bind::error;
using attn_bind::size_field;
using attn_bind::view;

// One per module instance (api.js): it owns the buffers these calls return views of.
class CoreSession {
 public:
  val example(std::string name, val o) {
    attn::Status st;
    if (name == "induction") {
      std::vector<std::string> tokens = attn::lesson_sentence();
      if (!o["tokens"].isNull()) tokens = emscripten::vecFromJSArray<std::string>(o["tokens"]);
      st = attn::induction_example(tokens, o["sharpness"].as<double>(), &ex_);
    } else if (name == "alignment") {
      std::vector<std::string> queries = attn::alignment_queries(), keys = attn::alignment_keys();
      if (!o["queries"].isNull()) queries = emscripten::vecFromJSArray<std::string>(o["queries"]);
      if (!o["keys"].isNull()) keys = emscripten::vecFromJSArray<std::string>(o["keys"]);
      st = attn::alignment_example(queries, keys, o["sharpness"].as<double>(), &ex_);
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
      if (!o["kvTokens"].isNull()) {
        r.kv_tokens = emscripten::vecFromJSArray<std::string>(o["kvTokens"]);
      }
      // generator 'numpy' draws from NumPy's default_rng(seed) (lesson-2 preset).
      st = o["generator"].as<std::string>() == "numpy" ? attn::numpy_random_example(r, &ex_)
                                                       : attn::random_example(r, &ex_);
    } else {
      st = attn::Status::Invalid("name", "unknown example name '" + name +
                                             "' (expected 'induction', 'alignment' or 'random')");
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
    if (ex_.tk > 0) {  // cross-attention: keys and values from x_kv
      val kv_tokens = val::array();
      for (const std::string& t : ex_.kv_tokens) kv_tokens.call<void>("push", t);
      r.set("kvTokens", kv_tokens);
      r.set("tk", static_cast<double>(ex_.tk));
      r.set("xKv", view(ex_.x_kv.data(), ex_.x_kv.size()));
    }
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

  // ---- the core as the page's single source of truth (mask, memory, check) ----

  // (T_q, T_k) allowed mask, exactly as the kernels apply it (attn::allowed_mask).
  val allowedMask(val o) {
    attn::AttentionOptions opts;
    opts.shape = {1, 1, size_field(o, "tq"), size_field(o, "tk"), 1, 1};
    opts.mask.causal = o["causal"].as<bool>();
    opts.mask.window = size_field(o, "window");
    opts.memory_cap = size_field(o, "memoryCap");
    // Validate before copying anything into the heap (weights of tq*tk floats bound the mask).
    attn_bind::declare_masks(o, &opts.mask);
    attn::Status st = attn::validate(opts, opts.shape.tq, opts.shape.tk, opts.shape.tk, true);
    if (!st.ok()) return error(st);
    in_.copy_masks(o, &opts.mask);
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
    const bool tiled = attn_bind::tiled_kernel(o);
    attn::Variant var;
    attn::Status st = attn_bind::read_variant(o, &var);
    if (!st.ok()) return error(st);
    const std::size_t elem = var.precision == attn::Precision::kFloat64 ? 8 : 4;
    return attn_bind::bytes_result(
        attn::estimate_bytes(s, elem, !tiled, !tiled && o["returnScores"].as<bool>(), var));
  }

  // The same for multiHeadAttention (attn::estimate_mha_bytes; inputs not counted).
  val estimateMultiHeadBytes(val o) {
    attn::MhaOptions m;
    m.t = size_field(o, "t");
    m.tk = size_field(o, "tk");  // 0: t
    m.d_model = size_field(o, "dModel");
    m.heads = size_field(o, "heads");
    m.kv_heads = size_field(o, "kvHeads");
    m.dk = size_field(o, "dk");
    m.dv = size_field(o, "dv");
    m.tiled = attn_bind::tiled_kernel(o);
    m.return_scores = !m.tiled && o["returnScores"].as<bool>();
    attn::Status st = attn_bind::read_variant(o, &m.variant);
    if (st.ok()) st = attn::resolve_mha(&m);
    if (!st.ok()) return error(st);
    return attn_bind::bytes_result(
        attn::estimate_mha_bytes(m, m.variant.precision == attn::Precision::kFloat64 ? 8 : 4));
  }

  // float32 kernel vs float64 scalar kernel, tiled vs naive (attn::check_kernels).
  val check(val q, val k, val v, val o) {
    attn::AttentionOptions opts;
    opts.shape = {size_field(o, "heads"), size_field(o, "kvHeads"), size_field(o, "tq"),
                  size_field(o, "tk"),    size_field(o, "dk"),      size_field(o, "dv")};
    attn::Status st =
        attn_bind::read_common(o, &opts.mask, &opts.scale, &opts.fill, &opts.memory_cap);
    if (!st.ok()) return error(st);
    attn_bind::declare_masks(o, &opts.mask);
    st = attn::validate(opts, q["length"].as<std::size_t>(), k["length"].as<std::size_t>(),
                        v["length"].as<std::size_t>(), true);
    if (!st.ok()) return error(st);
    in_.copy(q, k, v, o, &opts);
    attn::KernelCheck c;
    st = attn::check_kernels(in_.q.data(), in_.q.size(), in_.k.data(), in_.k.size(), in_.v.data(),
                             in_.v.size(), opts, &c);
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

  // One head's softmax step by step (attn::softmax_steps): what the Lesson view prints under its
  // lines. o, normalised by api.js: rows, cols, maskFill, maxShift, normalizer ('softmax' |
  // 'softmax1'), precision ('float32' | 'float64'), memoryCap.
  val softmaxSteps(val scores, val allowed, val o) {
    attn::SoftmaxStepsOptions so;
    so.rows = size_field(o, "rows");
    so.cols = size_field(o, "cols");
    so.memory_cap = size_field(o, "memoryCap");
    so.max_shift = o["maxShift"].as<bool>();
    so.softmax1 = o["normalizer"].as<std::string>() == "softmax1";
    const std::string fill = o["maskFill"].as<std::string>();
    if (!attn::parse_mask_fill(fill.c_str(), &so.fill))
      return error(attn::Status::Invalid("maskFill", attn::mask_fill_names().must_be()));
    // The inputs are checked against the cap before they are copied into the heap.
    if (8.0 * scores["length"].as<double>() + allowed["length"].as<double>() >
        static_cast<double>(so.memory_cap))
      return error(attn::Status::Exhausted("memory", "the scores alone exceed the memory cap"));
    const auto a = emscripten::convertJSArrayToNumberVector<std::uint8_t>(allowed);
    if (o["precision"].as<std::string>() == "float64") {
      const auto s = emscripten::convertJSArrayToNumberVector<double>(scores);
      const attn::Status st =
          attn::softmax_steps(s.data(), s.size(), a.data(), a.size(), so, &steps64_);
      return st.ok() ? steps_result(steps64_) : error(st);
    }
    const auto s = emscripten::convertJSArrayToNumberVector<float>(scores);
    const attn::Status st =
        attn::softmax_steps(s.data(), s.size(), a.data(), a.size(), so, &steps32_);
    return st.ok() ? steps_result(steps32_) : error(st);
  }

  // One score taken apart (attn::score_breakdown): the page's "why is this weight large" panel.
  // o, normalised by api.js: the shape, mask, scale and variant as for attention, and head,
  // query, key. Under precision 'float64' q and k are read as doubles.
  val scoreBreakdown(val q, val k, val o) {
    attn::AttentionOptions opts;
    opts.shape = {size_field(o, "heads"), size_field(o, "kvHeads"), size_field(o, "tq"),
                  size_field(o, "tk"),    size_field(o, "dk"),      size_field(o, "dv")};
    attn::Status st =
        attn_bind::read_common(o, &opts.mask, &opts.scale, &opts.fill, &opts.memory_cap);
    if (st.ok()) st = attn_bind::read_variant(o, &opts.variant);
    if (!st.ok()) return error(st);
    attn_bind::declare_masks(o, &opts.mask);
    const bool f64 = opts.variant.precision == attn::Precision::kFloat64;
    // Checked before anything is copied into the heap (v is not read: its length passes).
    st = attn::validate(opts, q["length"].as<std::size_t>(), k["length"].as<std::size_t>(),
                        opts.shape.kv_heads * opts.shape.tk * opts.shape.dv, true,
                        f64 ? sizeof(double) : sizeof(float));
    if (!st.ok()) return error(st);
    in_.copy_masks(o, &opts.mask);
    const attn::BreakdownCell cell{size_field(o, "head"), size_field(o, "query"),
                                   size_field(o, "key")};
    if (f64) {
      const auto qv = emscripten::convertJSArrayToNumberVector<double>(q);
      const auto kv = emscripten::convertJSArrayToNumberVector<double>(k);
      st = attn::score_breakdown(qv.data(), qv.size(), kv.data(), kv.size(), opts, cell, &b64_);
      return st.ok() ? breakdown_result(b64_) : error(st);
    }
    const auto qv = emscripten::convertJSArrayToNumberVector<float>(q);
    const auto kv = emscripten::convertJSArrayToNumberVector<float>(k);
    st = attn::score_breakdown(qv.data(), qv.size(), kv.data(), kv.size(), opts, cell, &b32_);
    return st.ok() ? breakdown_result(b32_) : error(st);
  }

  // One head's queries and keys as points in a plane (attn::qk_map, attn/geometry.hpp): the
  // page's "queries and keys as points" map. q, k and o as for scoreBreakdown, and head; under
  // precision 'float64' q and k are read as doubles.
  val qkMap(val q, val k, val o) {
    attn::AttentionOptions opts;
    opts.shape = {size_field(o, "heads"), size_field(o, "kvHeads"), size_field(o, "tq"),
                  size_field(o, "tk"),    size_field(o, "dk"),      size_field(o, "dv")};
    attn::Status st =
        attn_bind::read_common(o, &opts.mask, &opts.scale, &opts.fill, &opts.memory_cap);
    if (st.ok()) st = attn_bind::read_variant(o, &opts.variant);
    if (!st.ok()) return error(st);
    attn_bind::declare_masks(o, &opts.mask);
    const bool f64 = opts.variant.precision == attn::Precision::kFloat64;
    // Checked before anything is copied into the heap (v is not read: its length passes).
    st = attn::validate(opts, q["length"].as<std::size_t>(), k["length"].as<std::size_t>(),
                        opts.shape.kv_heads * opts.shape.tk * opts.shape.dv, true,
                        f64 ? sizeof(double) : sizeof(float));
    if (!st.ok()) return error(st);
    in_.copy_masks(o, &opts.mask);
    const std::size_t head = size_field(o, "head");
    if (f64) {
      const auto qv = emscripten::convertJSArrayToNumberVector<double>(q);
      const auto kv = emscripten::convertJSArrayToNumberVector<double>(k);
      st = attn::qk_map(qv.data(), qv.size(), kv.data(), kv.size(), opts, head, &map64_);
      return st.ok() ? map_result(map64_) : error(st);
    }
    const auto qv = emscripten::convertJSArrayToNumberVector<float>(q);
    const auto kv = emscripten::convertJSArrayToNumberVector<float>(k);
    st = attn::qk_map(qv.data(), qv.size(), kv.data(), kv.size(), opts, head, &map32_);
    return st.ok() ? map_result(map32_) : error(st);
  }

  // What a selection of one head's query rows and key columns adds up to
  // (attn::weight_selection, attn/selection.hpp). weights (heads, T_q, T_k); o, normalised by
  // api.js: heads, tq, tk, head, queries and keys (Float64Arrays of whole numbers), memoryCap.
  val weightSelection(val weights, val o) {
    const std::size_t heads = size_field(o, "heads"), tq = size_field(o, "tq"),
                      tk = size_field(o, "tk");
    const double n = weights["length"].as<double>(), nq = o["queries"]["length"].as<double>(),
                 nk = o["keys"]["length"].as<double>();
    // Checked before anything is copied into the heap.
    if (n != static_cast<double>(heads) * static_cast<double>(tq) * static_cast<double>(tk))
      return error(attn::Status::Invalid("weights", "weights must hold heads × T_q × T_k values"));
    if (4.0 * n + 8.0 * (nq + nk) > static_cast<double>(size_field(o, "memoryCap")))
      return error(attn::Status::Exhausted("memory", "the weights exceed the memory cap"));
    const auto w = emscripten::convertJSArrayToNumberVector<float>(weights);
    const auto to_sizes = [](const val& a) {
      const auto d = emscripten::convertJSArrayToNumberVector<double>(a);
      return std::vector<std::size_t>(d.begin(), d.end());
    };
    const std::vector<std::size_t> qs = to_sizes(o["queries"]), ks = to_sizes(o["keys"]);
    const attn::Status st =
        attn::weight_selection(w.data(), w.size(), heads, tq, tk, size_field(o, "head"), qs.data(),
                               qs.size(), ks.data(), ks.size(), &sel_);
    if (!st.ok()) return error(st);
    val r = val::object();
    r.set("ok", true);
    r.set("mean", view(sel_.mean.data(), sel_.mean.size()));
    r.set("sum", view(sel_.sum.data(), sel_.sum.size()));
    r.set("column", view(sel_.column.data(), sel_.column.size()));
    return r;
  }

  // Each head's pattern scores on one sequence (attn::pattern_scores, attn/roles.hpp): what the
  // page's "build a head" exercises check. tokens (T) ids, weights (heads, T, T); o, normalised
  // by api.js: heads, memoryCap.
  val patternScores(val tokens, val weights, val o) {
    const std::size_t heads = size_field(o, "heads");
    const double t = tokens["length"].as<double>(), n = weights["length"].as<double>();
    if (t < 1) return error(attn::Status::Invalid("tokens", "tokens must hold at least one token"));
    // Checked before anything is copied into the heap.
    if (n != static_cast<double>(heads) * t * t)
      return error(attn::Status::Invalid(
          "weights", "weights must hold heads × T × T values (T = the tokens' length)"));
    if (4.0 * n + 4.0 * t > static_cast<double>(size_field(o, "memoryCap")))
      return error(attn::Status::Exhausted("memory", "the weights exceed the memory cap"));
    const auto tok = emscripten::convertJSArrayToNumberVector<std::int32_t>(tokens);
    const auto w = emscripten::convertJSArrayToNumberVector<float>(weights);
    std::vector<double> prev(heads), ind(heads), dup(heads);
    attn::pattern_scores(tok.data(), 1, tok.size(), heads, w.data(), prev.data(), ind.data(),
                         dup.data());
    val r = val::object();
    r.set("ok", true);
    const auto list = [](const std::vector<double>& v) {
      val a = val::array();
      for (double x : v) a.call<void>("push", x);
      return a;
    };
    r.set("previousToken", list(prev));
    r.set("induction", list(ind));
    r.set("duplicateToken", list(dup));
    return r;
  }

 private:
  template <class T>
  static val breakdown_result(const attn::Breakdown<T>& b) {
    val r = val::object();
    r.set("ok", true);
    r.set("qRaw", view(b.q_raw.data(), b.q_raw.size()));
    r.set("kRaw", view(b.k_raw.data(), b.k_raw.size()));
    r.set("q", view(b.q.data(), b.q.size()));
    r.set("k", view(b.k.data(), b.k.size()));
    r.set("products", view(b.products.data(), b.products.size()));
    r.set("dot", b.dot);
    r.set("scale", b.scale);
    r.set("bias", b.bias);
    r.set("score", b.score);
    r.set("allowed", b.allowed);
    r.set("rowScores", view(b.row_scores.data(), b.row_scores.size()));
    r.set("rowAllowed", view(b.row_allowed.data(), b.row_allowed.size()));
    r.set("nextBest", b.next_best);
    return r;
  }

  template <class T>
  static val map_result(const attn::QkMap<T>& m) {
    val r = val::object();
    r.set("ok", true);
    r.set("queries", view(m.queries.data(), m.queries.size()));
    r.set("keys", view(m.keys.data(), m.keys.size()));
    r.set("axes", view(m.axes.data(), m.axes.size()));
    val explained = val::array();
    explained.call<void>("push", m.explained[0]);
    explained.call<void>("push", m.explained[1]);
    r.set("explained", explained);
    r.set("dotMean", m.dot_mean);
    r.set("dotStd", m.dot_std);
    r.set("prodStd", m.prod_std);
    r.set("scale", m.scale);
    return r;
  }

  template <class T>
  static val steps_result(const attn::SoftmaxSteps<T>& s) {
    val r = val::object();
    r.set("ok", true);
    r.set("masked", view(s.masked.data(), s.masked.size()));
    r.set("shifted", view(s.shifted.data(), s.shifted.size()));
    r.set("exps", view(s.exps.data(), s.exps.size()));
    r.set("sums", view(s.sums.data(), s.sums.size()));
    r.set("weights", view(s.weights.data(), s.weights.size()));
    return r;
  }

  attn::Breakdown<float> b32_;          // scoreBreakdown's result (float32)
  attn::Breakdown<double> b64_;         // scoreBreakdown's result (float64)
  attn::QkMap<float> map32_;            // qkMap's result (rows formed in float32)
  attn::QkMap<double> map64_;           // qkMap's result (rows formed in float64)
  attn::Selection sel_;                 // weightSelection's result
  attn::SoftmaxSteps<float> steps32_;   // softmaxSteps' result (float32)
  attn::SoftmaxSteps<double> steps64_;  // softmaxSteps' result (float64)
  attn_bind::Inputs in_;                // check's inputs
  attn::Example ex_;                    // example's result
  std::vector<std::uint8_t> allowed_;   // allowedMask's result
  std::vector<std::uint32_t> ranges_;   // keyRanges' result
};

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
  t.kernel =
      attn_bind::tiled_kernel(o) ? attn::TrafficKernel::kTiled : attn::TrafficKernel::kStandard;
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

EMSCRIPTEN_BINDINGS(attn_introspect) {
  emscripten::class_<CoreSession>("CoreSession")
      .constructor<>()
      .function("example", &CoreSession::example)
      .function("entropyStudy", &CoreSession::entropyStudy)
      .function("allowedMask", &CoreSession::allowedMask)
      .function("keyRanges", &CoreSession::keyRanges)
      .function("tiledScratchBytes", &CoreSession::tiledScratchBytes)
      .function("estimateBytes", &CoreSession::estimateBytes)
      .function("estimateMultiHeadBytes", &CoreSession::estimateMultiHeadBytes)
      .function("check", &CoreSession::check)
      .function("softmaxSteps", &CoreSession::softmaxSteps)
      .function("scoreBreakdown", &CoreSession::scoreBreakdown)
      .function("patternScores", &CoreSession::patternScores)
      .function("qkMap", &CoreSession::qkMap)
      .function("weightSelection", &CoreSession::weightSelection);
  emscripten::function("trafficModel", &trafficModel);
}
