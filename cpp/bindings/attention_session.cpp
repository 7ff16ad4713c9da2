// The attention calls of attn_core's Embind surface: core.attention (the float32 fast path
// through an io block of doubles, and precision 'float64'), core.multiHeadAttention and
// core.mergeHeads. Thin on purpose: api.js (appended with --post-js) checks JavaScript types
// and fills in defaults, this file copies the inputs into the session's buffers (one copy),
// runs the core and hands back what api.js copies out at once. Errors come back as
// {ok: false, field, message}; nothing here throws or aborts.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/backward.hpp"
#include "attn/introspect.hpp"
#include "attn/multihead.hpp"
#include "attn/names.hpp"
#include "attn/tiled.hpp"
#include "embind_common.hpp"
#include "session_common.hpp"

using emscripten::val;

namespace {

using attn_bind::error;
using attn_bind::size_field;
using attn_bind::view;

// The slots of the fast path's io block (doubles), in order: one list, from which both the
// C++ names below (Io::heads, ...) and the map api.js reads (ioSlots(), name -> index) come.
// Enums travel as their position in the core's name lists (attn/names.hpp).
// The list is laid out by hand (clang-format 14 reflows an X-macro list into nonsense).
// clang-format off
#define ATTN_IO_SLOTS(X)                                                                 \
  /* in: options, normalised by api.js */                                                \
  X(heads) X(kvHeads) X(tq) X(tk) X(dk) X(dv) X(causal) X(window)                        \
  X(scale) /* NaN: 1/sqrt(dk) */                                                         \
  X(maskFill) X(kernel) X(returnScores) X(memoryCap) X(dropout) X(dropoutSeed)           \
  X(qLen) X(kLen) X(vLen) X(padLen) /* -1: none */ X(maskLen) /* -1: none */             \
  /* in: the variant (attn/variants.hpp) */                                              \
  X(qkNorm) X(position) X(ropeBase) X(normalizer) X(sigmoidBias) /* NaN: -ln tk */       \
  X(maxShift) X(maskMode) X(precision)                                                   \
  /* out of prepareAttention: where api.js copies the inputs */                          \
  X(q) X(k) X(v) X(pad) X(mask)                                                          \
  /* out of runAttention: the results (address, length) and diagnostics */               \
  X(output) X(outputLen) X(entropy) X(rowsLen) /* entropy, lse and rowSums */            \
  X(lse) X(rowSums) X(weights) X(weightsLen) X(scores) X(scoresLen)                      \
  X(fullyMasked) X(nanRows) X(infScoreRows) X(effScale) X(perHead) X(perHeadLen)         \
  X(kernelMs)
// clang-format on

struct Io {
#define ATTN_IO_ENUM(name) name,
  enum : int { ATTN_IO_SLOTS(ATTN_IO_ENUM) kCount };
#undef ATTN_IO_ENUM
};

// name -> slot of the io block, read once by api.js.
val ioSlots() {
  val r = val::object();
#define ATTN_IO_ENTRY(name) r.set(#name, static_cast<double>(Io::name));
  ATTN_IO_SLOTS(ATTN_IO_ENTRY)
#undef ATTN_IO_ENTRY
  return r;
}

// A buffer that only grows and never zero-fills (every byte is overwritten by the copy in);
// 64-byte aligned so the kernels' 16-byte loads never split a cache line.
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

double address(const void* p) {
  return static_cast<double>(reinterpret_cast<std::uintptr_t>(p));
}

// One per module instance (api.js): it owns every buffer the attention calls reuse.
class AttentionSession {
 public:
  // ---- the attention call without per-field emval traffic or reallocations ----
  // api.js writes the options into io_ (doubles at the Io:: slots), calls prepareAttention
  // (validates, then sizes the session's input buffers and writes their addresses into
  // io_), copies q, k, v and the masks straight into those buffers (the one copy in),
  // calls runAttention, which leaves the results' addresses and counts in io_, and copies
  // the results out (the one copy out). Both return 0 or, on an error, 1 with lastError().
  double ioAddress() const { return address(io_); }

  int prepareAttention() {
    attn::AttentionOptions& opts = fast_;
    const double* in = io_;
    opts = attn::AttentionOptions{};
    opts.shape = {io_size(Io::heads), io_size(Io::kvHeads), io_size(Io::tq),
                  io_size(Io::tk),    io_size(Io::dk),      io_size(Io::dv)};
    opts.mask.causal = in[Io::causal] != 0;
    opts.mask.window = io_size(Io::window);
    if (!std::isnan(in[Io::scale])) opts.scale = in[Io::scale];
    attn::Kernel kernel = attn::Kernel::kNaive;
    attn::Variant& var = opts.variant;
    // Names travel as their list positions (attn/names.hpp): checked, never trusted.
    if (!attn::enum_at(attn::mask_fill_names(), in[Io::maskFill], &opts.fill)) {
      return set_error(attn::Status::Invalid("maskFill", attn::mask_fill_names().must_be()));
    }
    if (!attn::enum_at(attn::kernel_names(), in[Io::kernel], &kernel)) {
      return set_error(attn::Status::Invalid("kernel", attn::kernel_names().must_be()));
    }
    if (!attn::enum_at(attn::position_names(), in[Io::position], &var.position)) {
      return set_error(attn::Status::Invalid("position", attn::position_names().must_be()));
    }
    if (!attn::enum_at(attn::normalizer_names(), in[Io::normalizer], &var.normalizer)) {
      return set_error(attn::Status::Invalid("normalizer", attn::normalizer_names().must_be()));
    }
    if (!attn::enum_at(attn::mask_mode_names(), in[Io::maskMode], &var.mask_mode)) {
      return set_error(attn::Status::Invalid("maskMode", attn::mask_mode_names().must_be()));
    }
    if (!attn::enum_at(attn::precision_names(), in[Io::precision], &var.precision)) {
      return set_error(attn::Status::Invalid("precision", attn::precision_names().must_be()));
    }
    fast_tiled_ = kernel == attn::Kernel::kTiled;
    opts.return_scores = in[Io::returnScores] != 0;
    opts.memory_cap = io_size(Io::memoryCap);
    opts.dropout = in[Io::dropout];
    opts.dropout_seed = static_cast<std::uint64_t>(in[Io::dropoutSeed]);
    var.qk_norm = in[Io::qkNorm] != 0;
    var.rope_base = in[Io::ropeBase];
    if (!std::isnan(in[Io::sigmoidBias])) var.sigmoid_bias = in[Io::sigmoidBias];
    var.max_shift = in[Io::maxShift] != 0;
    const bool has_pad = in[Io::padLen] >= 0, has_mask = in[Io::maskLen] >= 0;
    const std::size_t pad_len = has_pad ? io_size(Io::padLen) : 0;
    const std::size_t mask_len = has_mask ? io_size(Io::maskLen) : 0;
    opts.mask.key_padding = has_pad ? attn::Bytes(&attn_bind::kNotCopied, pad_len) : nullptr;
    opts.mask.mask = has_mask ? attn::Bytes(&attn_bind::kNotCopied, mask_len) : nullptr;
    const std::size_t qn = io_size(Io::qLen), kn = io_size(Io::kLen), vn = io_size(Io::vLen);
    // Validate before touching the heap.
    attn::Status st = attn::validate(opts, qn, kn, vn, !fast_tiled_);
    if (st.ok() && !(fq_.reserve(qn * 4) && fk_.reserve(kn * 4) && fv_.reserve(vn * 4) &&
                     fpad_.reserve(pad_len) && fmask_.reserve(mask_len))) {
      st = attn::Status::Exhausted("memory", "the wasm heap cannot hold the inputs");
    }
    if (!st.ok()) return set_error(st);
    fast_lens_[0] = qn, fast_lens_[1] = kn, fast_lens_[2] = vn;
    io_[Io::q] = address(fq_.data), io_[Io::k] = address(fk_.data);
    io_[Io::v] = address(fv_.data), io_[Io::pad] = address(fpad_.data);
    io_[Io::mask] = address(fmask_.data);
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
    io_[Io::kernelMs] = emscripten_get_now() - t0;  // core.lastKernelMs(): the bench's split
    if (!st.ok()) return set_error(st);
    io_[Io::output] = address(res_.output.data());
    io_[Io::outputLen] = static_cast<double>(res_.output.size());
    io_[Io::entropy] = address(res_.entropy.data());
    io_[Io::rowsLen] = static_cast<double>(res_.entropy.size());
    io_[Io::lse] = address(res_.lse.data());
    io_[Io::rowSums] = address(res_.row_sums.data());
    io_[Io::weights] = address(res_.weights.data());
    io_[Io::weightsLen] = static_cast<double>(res_.weights.size());
    io_[Io::scores] = address(res_.scores.data());
    io_[Io::scoresLen] = static_cast<double>(res_.scores.size());
    io_[Io::fullyMasked] = static_cast<double>(res_.diag.fully_masked_rows);
    io_[Io::nanRows] = static_cast<double>(res_.diag.nan_rows);
    io_[Io::infScoreRows] = static_cast<double>(res_.diag.inf_score_rows);
    io_[Io::effScale] = attn::effective_scale(opts);
    // NaN rows per query head (they sum to nanRows: no scan when that is 0).
    per_head_.assign(opts.shape.heads, 0.0);
    if (res_.diag.nan_rows) {
      const std::vector<std::size_t> per_head = attn::nan_rows_per_head(res_);
      for (std::size_t h = 0; h < per_head.size(); ++h)
        per_head_[h] = static_cast<double>(per_head[h]);
    }
    io_[Io::perHead] = address(per_head_.data());
    io_[Io::perHeadLen] = static_cast<double>(per_head_.size());
    return 0;
  }

  // {ok: false, field, message, code} of the last failed prepareAttention / runAttention.
  val lastError() const { return error(last_error_); }
  // ---- end: the attention call ----

  // precision 'float64': every step in double (attn::attention<double>); q, k and v come as
  // Float32Array or Float64Array and are widened once; the results are views of doubles.
  val attention64(val q, val k, val v, val o) {
    attn::AttentionOptions opts;
    bool tiled = false;
    attn::Status st = attn_bind::read_attention(o, &opts, &tiled);
    if (st.ok()) st = attn_bind::read_variant(o, &opts.variant);
    if (!st.ok()) return error(st);
    st = attn::validate(opts, q["length"].as<std::size_t>(), k["length"].as<std::size_t>(),
                        v["length"].as<std::size_t>(), !tiled, sizeof(double));
    if (!st.ok()) return error(st);
    in_.copy64(q, k, v, o, &opts.mask);
    st = tiled
             ? attn::attention_tiled(in_.q64.data(), in_.q64.size(), in_.k64.data(), in_.k64.size(),
                                     in_.v64.data(), in_.v64.size(), opts, &res64_)
             : attn::attention(in_.q64.data(), in_.q64.size(), in_.k64.data(), in_.k64.size(),
                               in_.v64.data(), in_.v64.size(), opts, &res64_);
    if (!st.ok()) return error(st);
    val r = val::object();
    r.set("ok", true);
    r.set("output", view(res64_.output.data(), res64_.output.size()));
    return attn_bind::diag_into(r, res64_, attn::effective_scale(opts));
  }

  // o.xKv (Float32Array / Float64Array, or null): cross-attention, keys and values from its
  // o.tk rows; null: self-attention (o.tk is then t).
  val multiHeadAttention(val x, val wq, val wk, val wv, val wo, val o) {
    attn::MhaOptions m;
    m.t = size_field(o, "t");
    m.tk = size_field(o, "tk");
    m.d_model = size_field(o, "dModel");
    m.heads = size_field(o, "heads");
    m.kv_heads = size_field(o, "kvHeads");
    m.dk = size_field(o, "dk");
    m.dv = size_field(o, "dv");
    attn::Status st = attn_bind::read_common(o, &m.mask, &m.scale, &m.fill, &m.memory_cap);
    if (!st.ok()) return error(st);
    m.tiled = attn_bind::tiled_kernel(o);
    m.return_scores = o["returnScores"].as<bool>();
    st = attn_bind::read_variant(o, &m.variant);
    if (!st.ok()) return error(st);
    if (m.tiled && m.return_scores) {
      return error(attn::Status::Invalid("returnScores", "returnScores needs the naive kernel"));
    }
    // Resolve and size-check (masks included) before copying the inputs.
    attn_bind::declare_masks(o, &m.mask);
    attn::MhaOptions probe = m;
    st = attn::resolve_mha(&probe);
    if (!st.ok()) return error(st);
    const val x_kv = o["xKv"];
    const bool cross = !x_kv.isNull() && !x_kv.isUndefined();
    const double in_bytes =
        (m.variant.precision == attn::Precision::kFloat64 ? 8.0 : 4.0) *
        (x["length"].as<double>() + (cross ? x_kv["length"].as<double>() : 0.0) +
         wq["length"].as<double>() + wk["length"].as<double>() + wv["length"].as<double>() +
         wo["length"].as<double>());
    if (in_bytes > static_cast<double>(m.memory_cap)) {
      return error(attn::Status::Exhausted("memory", "the inputs alone exceed the memory cap"));
    }
    in_.copy_masks(o, &m.mask);
    // precision 'float64': the whole call (projections included) in double.
    if (m.variant.precision == attn::Precision::kFloat64) {
      return run_mha<double>(x, cross ? &x_kv : nullptr, wq, wk, wv, wo, m, probe, &x64_, &mha64_);
    }
    return run_mha<float>(x, cross ? &x_kv : nullptr, wq, wk, wv, wo, m, probe, &x_, &mha_);
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

 private:
  // x_kv: null for self-attention (the core's self overload, which refuses a tk other than t).
  template <class T>
  val run_mha(const val& x, const val* x_kv, const val& wq, const val& wk, const val& wv,
              const val& wo, const attn::MhaOptions& m, const attn::MhaOptions& probe,
              std::vector<T>* in, attn::MhaResult<T>* res) {
    std::vector<T> bufs[5];
    const val* src[5] = {&x, &wq, &wk, &wv, &wo};
    for (int i = 0; i < 5; ++i) bufs[i] = emscripten::convertJSArrayToNumberVector<T>(*src[i]);
    *in = std::move(bufs[0]);
    attn::Status st;
    if (x_kv) {
      const std::vector<T> kv = emscripten::convertJSArrayToNumberVector<T>(*x_kv);
      st =
          attn::multi_head_attention(in->data(), in->size(), kv.data(), kv.size(), bufs[1].data(),
                                     bufs[1].size(), bufs[2].data(), bufs[2].size(), bufs[3].data(),
                                     bufs[3].size(), bufs[4].data(), bufs[4].size(), m, res);
    } else {
      st = attn::multi_head_attention(in->data(), in->size(), bufs[1].data(), bufs[1].size(),
                                      bufs[2].data(), bufs[2].size(), bufs[3].data(),
                                      bufs[3].size(), bufs[4].data(), bufs[4].size(), m, res);
    }
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
    return attn_bind::diag_into(r, res->attn, attn::effective_scale(ao));
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
  attn::AttentionResult<float> res_;

  attn_bind::Inputs in_;  // attention64's inputs, multiHeadAttention's masks
  std::vector<float> x_, y_, wo_;
  std::vector<double> x64_;  // precision 'float64'
  attn::MhaResult<float> mha_;
  attn::MhaResult<double> mha64_;
  attn::AttentionResult<double> res64_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(attn_attention) {
  emscripten::class_<AttentionSession>("AttentionSession")
      .constructor<>()
      .function("ioAddress", &AttentionSession::ioAddress)
      .function("prepareAttention", &AttentionSession::prepareAttention)
      .function("runAttention", &AttentionSession::runAttention)
      .function("lastError", &AttentionSession::lastError)
      .function("attention64", &AttentionSession::attention64)
      .function("multiHeadAttention", &AttentionSession::multiHeadAttention)
      .function("mergeHeads", &AttentionSession::mergeHeads);
  emscripten::function("ioSlots", &ioSlots);
}
