#include "session_common.hpp"

#include <emscripten/bind.h>

#include <cmath>
#include <string>

#include "attn/backward.hpp"
#include "attn/names.hpp"

namespace attn_bind {

attn::Status read_common(const val& o, attn::MaskSpec* mask, std::optional<double>* scale,
                         attn::MaskFill* fill, std::size_t* cap) {
  mask->causal = o["causal"].as<bool>();
  mask->window = size_field(o, "window");
  if (!o["scale"].isNull()) *scale = o["scale"].as<double>();
  const std::string f = o["maskFill"].as<std::string>();
  if (!attn::parse_mask_fill(f.c_str(), fill)) {
    return attn::Status::Invalid("maskFill", attn::mask_fill_names().must_be());
  }
  *cap = size_field(o, "memoryCap");
  return attn::Status::Ok();
}

attn::Status read_variant(const val& o, attn::Variant* v) {
  v->qk_norm = o["qkNorm"].as<bool>();
  v->rope_base = o["ropeBase"].as<double>();
  if (!o["sigmoidBias"].isNull()) v->sigmoid_bias = o["sigmoidBias"].as<double>();
  v->max_shift = o["maxShift"].as<bool>();
  const std::string pos = o["position"].as<std::string>(), norm = o["normalizer"].as<std::string>(),
                    mode = o["maskMode"].as<std::string>(), prec = o["precision"].as<std::string>();
  if (!attn::parse_position(pos.c_str(), &v->position)) {
    return attn::Status::Invalid("position", attn::position_names().must_be());
  }
  if (!attn::parse_normalizer(norm.c_str(), &v->normalizer)) {
    return attn::Status::Invalid("normalizer", attn::normalizer_names().must_be());
  }
  if (!attn::parse_mask_mode(mode.c_str(), &v->mask_mode)) {
    return attn::Status::Invalid("maskMode", attn::mask_mode_names().must_be());
  }
  if (!attn::parse_precision(prec.c_str(), &v->precision)) {
    return attn::Status::Invalid("precision", attn::precision_names().must_be());
  }
  return attn::Status::Ok();
}

bool tiled_kernel(const val& o) {
  const std::string k = o["kernel"].as<std::string>();
  return attn::kernel_names().find(k.c_str()) == static_cast<int>(attn::Kernel::kTiled);
}

attn::Status read_attention(const val& o, attn::AttentionOptions* opts, bool* tiled) {
  opts->shape = {size_field(o, "heads"), size_field(o, "kvHeads"), size_field(o, "tq"),
                 size_field(o, "tk"),    size_field(o, "dk"),      size_field(o, "dv")};
  attn::Status st = read_common(o, &opts->mask, &opts->scale, &opts->fill, &opts->memory_cap);
  if (!st.ok()) return st;
  opts->return_scores = o["returnScores"].as<bool>();
  opts->dropout = o["dropout"].as<double>();
  opts->dropout_seed = static_cast<std::uint64_t>(o["dropoutSeed"].as<double>());
  *tiled = tiled_kernel(o);
  declare_masks(o, &opts->mask);
  return attn::Status::Ok();
}

void declare_masks(const val& o, attn::MaskSpec* m) {
  const val pad = o["keyPadding"], mask = o["mask"];
  m->key_padding =
      pad.isNull() ? attn::Bytes() : attn::Bytes(&kNotCopied, pad["length"].as<std::size_t>());
  m->mask =
      mask.isNull() ? attn::Bytes() : attn::Bytes(&kNotCopied, mask["length"].as<std::size_t>());
}

void Inputs::copy_masks(const val& o, attn::MaskSpec* m) {
  if (m->key_padding) {
    pad = emscripten::convertJSArrayToNumberVector<std::uint8_t>(o["keyPadding"]);
    m->key_padding = attn::Bytes(pad.data(), pad.size());
  }
  if (m->mask) {
    mask = emscripten::convertJSArrayToNumberVector<std::uint8_t>(o["mask"]);
    m->mask = attn::Bytes(mask.data(), mask.size());
  }
}

void Inputs::copy(const val& q_in, const val& k_in, const val& v_in, const val& o,
                  attn::AttentionOptions* opts) {
  q = emscripten::convertJSArrayToNumberVector<float>(q_in);
  k = emscripten::convertJSArrayToNumberVector<float>(k_in);
  v = emscripten::convertJSArrayToNumberVector<float>(v_in);
  copy_masks(o, &opts->mask);
}

void Inputs::copy64(const val& q_in, const val& k_in, const val& v_in, const val& o,
                    attn::MaskSpec* m) {
  q64 = emscripten::convertJSArrayToNumberVector<double>(q_in);
  k64 = emscripten::convertJSArrayToNumberVector<double>(k_in);
  v64 = emscripten::convertJSArrayToNumberVector<double>(v_in);
  copy_masks(o, m);
}

val bytes_result(std::size_t n) {
  val r = val::object();
  r.set("ok", true);
  r.set("bytes", n == static_cast<std::size_t>(-1) ? INFINITY : static_cast<double>(n));
  return r;
}

}  // namespace attn_bind
