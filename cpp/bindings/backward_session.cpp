// core.attentionBackward's Embind surface: gradients of sum(output * dOut) with respect to q,
// k and v (attn/backward.hpp), in float32 or (precision 'float64') in double. api.js checks the
// JavaScript types first; errors come back as {ok: false, field, message}.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstddef>

#include "attn/backward.hpp"
#include "embind_common.hpp"
#include "session_common.hpp"

using emscripten::val;

namespace {

using attn_bind::error;
using attn_bind::view;

// One per module instance (api.js): it owns the inputs' copies and the gradients.
class BackwardSession {
 public:
  val attentionBackward(val q, val k, val v, val d_out, val o) {
    attn::AttentionOptions opts;
    attn::Kernel kernel;
    attn::Status st = read_backward(q, k, v, d_out, o, sizeof(float), &opts, &kernel);
    if (!st.ok()) return error(st);
    in_.copy(q, k, v, o, &opts);
    in_.d_out = emscripten::convertJSArrayToNumberVector<float>(d_out);
    st = attn::attention_backward(
        in_.q.data(), in_.q.size(), in_.k.data(), in_.k.size(), in_.v.data(), in_.v.size(),
        in_.d_out.data(), in_.d_out.size(), opts, kernel,
        static_cast<const attn::AttentionResult<float>*>(nullptr), &grads_);
    return st.ok() ? grads_result(grads_) : error(st);
  }

  // precision 'float64': the same on doubles (attn::attention_backward<double>); q, k, v and
  // dOut come as Float32Array or Float64Array and are widened once.
  val attentionBackward64(val q, val k, val v, val d_out, val o) {
    attn::AttentionOptions opts;
    attn::Kernel kernel;
    attn::Status st = read_backward(q, k, v, d_out, o, sizeof(double), &opts, &kernel);
    if (!st.ok()) return error(st);
    in_.copy64(q, k, v, o, &opts.mask);
    in_.d_out64 = emscripten::convertJSArrayToNumberVector<double>(d_out);
    st = attn::attention_backward(
        in_.q64.data(), in_.q64.size(), in_.k64.data(), in_.k64.size(), in_.v64.data(),
        in_.v64.size(), in_.d_out64.data(), in_.d_out64.size(), opts, kernel,
        static_cast<const attn::AttentionResult<double>*>(nullptr), &grads64_);
    return st.ok() ? grads_result(grads64_) : error(st);
  }

 private:
  // The backward's options, kernel and input lengths, checked before anything is copied in
  // (elem: the bytes of one input value, for the memory cap).
  static attn::Status read_backward(const val& q, const val& k, const val& v, const val& d_out,
                                    const val& o, std::size_t elem, attn::AttentionOptions* opts,
                                    attn::Kernel* kernel) {
    bool tiled = false;
    attn::Status st = attn_bind::read_attention(o, opts, &tiled);
    if (st.ok()) st = attn_bind::read_variant(o, &opts->variant);
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

  attn_bind::Inputs in_;
  attn::AttentionGrads<float> grads_;
  attn::AttentionGrads<double> grads64_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(attn_backward) {
  emscripten::class_<BackwardSession>("BackwardSession")
      .constructor<>()
      .function("attentionBackward", &BackwardSession::attentionBackward)
      .function("attentionBackward64", &BackwardSession::attentionBackward64);
}
