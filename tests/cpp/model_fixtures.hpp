// Reading tests/fixtures/model.json (the PyTorch oracle, tests/oracle/gen_model_fixtures.py)
// into the training core's config and flat parameter layout.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "attn/tr/model.hpp"
#include "fixtures.hpp"

namespace model_fx {

using fixtures::json;

inline attn::tr::ModelConfig config(const json& c) {
  attn::tr::ModelConfig m;
  const json& o = c.at("config");
  m.vocab = o.at("vocab");
  m.seq_len = o.at("seqLen");
  m.layers = o.at("layers");
  m.heads = o.at("heads");
  m.kv_heads = o.at("kvHeads");
  m.d_model = o.at("dModel");
  const std::string positional = o.at("positional").get<std::string>();
  m.positional = positional == "learned" || positional == "shortformer";
  m.shortformer = positional == "shortformer";
  if (positional == "rope") m.position = attn::Position::kRope;
  if (positional == "alibi") m.position = attn::Position::kAlibi;
  if (o.contains("normalizer")) {
    const std::string n = o.at("normalizer").get<std::string>();
    if (!attn::parse_normalizer(n.c_str(), &m.normalizer)) throw std::runtime_error("normalizer");
  }
  if (o.contains("qkNorm")) m.qk_norm = o.at("qkNorm").get<bool>();
  if (o.contains("sigmoidBias") && !o.at("sigmoidBias").is_null())
    m.sigmoid_bias = o.at("sigmoidBias").get<double>();
  m.layer_norm = o.at("layerNorm").get<bool>();
  if (!o.at("scale").is_null()) m.scale = o.at("scale").get<double>();
  return m;
}

// Concatenates a params-shaped object in the documented order: embed, pos, per layer
// wq wk wv wo, lnGain, lnBias, unembed (nulls skipped). `exact` reads float32 inputs.
template <class T>
std::vector<T> flat(const json& p, bool inputs) {
  std::vector<T> out;
  auto add = [&](const json& a) {
    if (a.is_null()) return;
    const std::vector<T> v = inputs ? fixtures::inputs<T>(a) : fixtures::vec<T>(a);
    out.insert(out.end(), v.begin(), v.end());
  };
  add(p.at("embed"));
  add(p.at("pos"));
  for (const auto& L : p.at("layers")) {
    add(L.at("wq"));
    add(L.at("wk"));
    add(L.at("wv"));
    add(L.at("wo"));
  }
  add(p.at("lnGain"));
  add(p.at("lnBias"));
  add(p.at("unembed"));
  return out;
}

inline std::vector<std::int32_t> tokens(const json& c) {
  return c.at("tokens").get<std::vector<std::int32_t>>();
}
inline std::vector<std::uint8_t> mask(const json& c) {
  return fixtures::bytes(c.at("lossMask"));
}

}  // namespace model_fx
