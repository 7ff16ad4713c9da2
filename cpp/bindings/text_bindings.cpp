// The training module's text-model functions that need no trainer: the head roles' names and
// threshold (read once by train_api.js into lib.headRoles) and attn::tr::sample_token on given
// logits and u (lib.sampleToken, for the oracle test). The trainer's own text calls (textScores,
// textLoss, probeScores, generate) are in train_bindings.cpp.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/tr/decode.hpp"
#include "attn/tr/probe.hpp"
#include "embind_common.hpp"

using emscripten::val;

namespace {

using attn_bind::error;
using attn_bind::ok;

// The head roles of textScores: the core's names (attn/tr/probe.hpp, in HeadRole order) and
// kRoleThreshold. Read once by train_api.js into tr module.headRoles.
val headRoles() {
  val r = val::object();
  const attn::NameList l = attn::tr::head_role_names();
  val names = val::array();
  for (std::size_t i = 0; i < l.size; ++i) names.call<void>("push", std::string(l.names[i]));
  r.set("names", names);
  r.set("threshold", attn::tr::kRoleThreshold);
  return r;
}
// attn::tr::sample_token on given logits and u (train_api.js: lib.sampleToken, for the oracle
// test).
val sampleToken(val logits, double temperature, double top_k, double top_p, double u) {
  const std::vector<float> lg = emscripten::convertJSArrayToNumberVector<float>(logits);
  attn::tr::SampleConfig s;
  s.temperature = temperature;
  s.top_k = static_cast<std::size_t>(top_k);
  s.top_p = top_p;
  if (attn::Status st = attn::tr::check_sample_config(s); !st.ok()) return error(st);
  if (lg.empty())
    return error(attn::Status::Invalid("logits", "logits must hold at least one value"));
  std::int32_t ids[5];
  float probs[5];
  const std::size_t nt = std::min<std::size_t>(5, lg.size());
  const std::int32_t tok = attn::tr::sample_token(lg.data(), lg.size(), s, u, nt, ids, probs);
  val r = ok();
  r.set("token", tok);
  val id = val::array(), pr = val::array();  // plain arrays: ids / probs live on the stack
  for (std::size_t i = 0; i < nt; ++i) {
    id.call<void>("push", ids[i]);
    pr.call<void>("push", static_cast<double>(probs[i]));
  }
  r.set("topIds", id);
  r.set("topProbs", pr);
  return r;
}
}  // namespace

EMSCRIPTEN_BINDINGS(attn_train_text) {
  emscripten::function("headRoles", &headRoles);
  emscripten::function("sampleTokenRaw", &sampleToken);
}
