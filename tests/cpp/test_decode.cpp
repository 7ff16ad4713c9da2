#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <vector>

#include "attn/tr/decode.hpp"
#include "attn/rng.hpp"
#include "fixtures.hpp"

using attn::tr::ModelConfig;

namespace {

ModelConfig variant(int v) {
  ModelConfig c;
  c.vocab = 13;
  c.seq_len = 20;
  c.d_model = 16;
  c.layers = v == 2 ? 3 : 2;
  c.heads = 4;
  c.kv_heads = v == 1 ? 2 : (v == 2 ? 1 : 4);
  c.layer_norm = v >= 1;
  c.positional = v != 2;
  c.init_std = 0.5;
  if (v == 3) {
    c.scale = 1.0;
    c.kernel = attn::Kernel::kTiled;
  }
  return c;
}

}  // namespace

TEST_CASE("decode - cached and recomputed steps equal the full causal forward at every position",
          "[decode]") {
  for (int v = 0; v < 4; ++v) {
    INFO("variant " << v);
    const ModelConfig c = variant(v);
    auto params = std::make_shared<std::vector<float>>(attn::tr::param_layout(c).total);
    attn::tr::init_params(c, 100 + v, params->data());
    std::vector<std::int32_t> tok(c.seq_len);
    attn::Rng r(v);
    for (auto& x : tok) x = static_cast<std::int32_t>(r.uniform() * c.vocab);
    // Reference: one forward over the whole sequence with the weights kept.
    attn::tr::Workspace<float> ws;
    attn::tr::RunOptions ro;
    ro.keep_weights = true;
    REQUIRE(attn::tr::forward_backward(c, params->data(), tok.data(),
                                       static_cast<const std::uint8_t*>(nullptr), 1, c.seq_len, ro,
                                       &ws, static_cast<float*>(nullptr),
                                       static_cast<double*>(nullptr), nullptr)
                .ok());
    const std::size_t T = c.seq_len, V = c.vocab, H = c.heads;
    // float32: the cached step (single-row softmax) and the full forward's kernels round
    // differently; logits of size M carry errors of a few ulps of M.
    double mag = 1;
    for (std::size_t i = 0; i < T * V; ++i) mag = std::max(mag, std::abs(double(ws.logits[i])));
    for (bool cache : {true, false}) {
      attn::tr::Decoder dec(c, params, cache, {});
      double worst = 0;
      std::vector<float> logits, w;
      for (std::size_t i = 0; i < T; ++i) {
        REQUIRE(dec.append(tok[i], &logits, &w).ok());
        REQUIRE(logits.size() == V);
        REQUIRE(w.size() == c.layers * H * (i + 1));
        worst = std::max(worst, fixtures::max_abs_diff(logits.data(), ws.logits.data() + i * V, V));
        for (std::size_t l = 0; l < c.layers; ++l)
          for (std::size_t h = 0; h < H; ++h)
            worst = std::max(
                worst, fixtures::max_abs_diff(w.data() + (l * H + h) * (i + 1),
                                              ws.att[l].weights.data() + (h * T + i) * T, i + 1));
      }
      CHECK(worst <= 2e-5 * mag);
      CHECK(dec.cache_bytes() == (cache ? 2 * c.layers * c.kv_heads * T * (c.d_model / H) * 4 : 0));
      WARN("decode variant " << v << (cache ? " cached" : " recompute")
                             << ": max |delta| vs full forward " << worst);
      // Full: one more token is refused, and the decoder still works after reset.
      CHECK(dec.append(0, &logits, &w).field == "token");
      dec.reset();
      REQUIRE(dec.append(tok[0], &logits, &w).ok());
      CHECK(fixtures::max_abs_diff(logits.data(), ws.logits.data(), V) <= 2e-5 * mag);
    }
  }
}

TEST_CASE("decode - bad tokens are refused without changing the state", "[decode][errors]") {
  const ModelConfig c = variant(0);
  auto params = std::make_shared<std::vector<float>>(attn::tr::param_layout(c).total, 0.01f);
  attn::tr::Decoder dec(c, params, true, {});
  std::vector<float> logits, w;
  CHECK(dec.append(-1, &logits, &w).field == "token");
  CHECK(dec.append(13, &logits, &w).field == "token");
  CHECK(dec.length() == 0);
  CHECK(dec.append(3, &logits, &w).ok());
  CHECK(dec.length() == 1);
}

TEST_CASE("decode - greedy picks the first maximum; sampling is seeded", "[decode]") {
  const std::vector<float> logits = {0.5f, 2.0f, 2.0f, -1.0f};
  attn::Rng r(1);
  CHECK(attn::tr::pick_token(logits, 0.0, &r) == 1);
  std::vector<int> a, b;
  attn::Rng r1(5), r2(5);
  std::vector<int> count(4, 0);
  for (int i = 0; i < 2000; ++i) {
    a.push_back(attn::tr::pick_token(logits, 1.0, &r1));
    b.push_back(attn::tr::pick_token(logits, 1.0, &r2));
    count[static_cast<std::size_t>(a.back())]++;
  }
  CHECK(a == b);
  // softmax(0.5, 2, 2, -1) = (0.098, 0.440, 0.440, 0.022), within sampling noise
  CHECK(std::abs(count[1] / 2000.0 - 0.440) < 0.05);
  CHECK(std::abs(count[3] / 2000.0 - 0.0219) < 0.015);
}

TEST_CASE("decode - cache(layer) holds layer 0's keys and values (E + P) W_K, W_V per K/V head",
          "[decode]") {
  // Variant 1: 4 query heads over 2 K/V heads (GQA), positions learned.
  const ModelConfig c = variant(1);
  const auto P = attn::tr::param_layout(c);
  auto params = std::make_shared<std::vector<float>>(P.total);
  attn::tr::init_params(c, 7, params->data());
  const float* p = params->data();
  const std::size_t D = c.d_model, G = c.kv_heads, dh = attn::tr::d_head(c);
  const std::vector<std::int32_t> tok = {3, 1, 4, 1, 5, 9};
  attn::tr::Decoder dec(c, params, true, {});
  std::vector<float> logits, w, k, v;
  for (std::int32_t t : tok) REQUIRE(dec.append(t, &logits, &w).ok());
  const std::size_t n = tok.size();
  REQUIRE(dec.cache(0, &k, &v).ok());
  REQUIRE(k.size() == G * n * dh);
  REQUIRE(v.size() == G * n * dh);
  double worst = 0;
  for (std::size_t pos = 0; pos < n; ++pos) {
    for (std::size_t col = 0; col < G * dh; ++col) {
      // Reference in double: x = E[token] + P[pos]; k = x W_K, v = x W_V (columns g*dh + i).
      double rk = 0, rv = 0;
      for (std::size_t d = 0; d < D; ++d) {
        const double x = double(p[P.embed + tok[pos] * D + d]) + double(p[P.pos + pos * D + d]);
        rk += x * p[P.layer[0].wk + d * G * dh + col];
        rv += x * p[P.layer[0].wv + d * G * dh + col];
      }
      const std::size_t g = col / dh, i = col % dh;
      worst = std::max(worst, std::abs(k[(g * n + pos) * dh + i] - rk));
      worst = std::max(worst, std::abs(v[(g * n + pos) * dh + i] - rv));
    }
  }
  CHECK(worst < 1e-4);
  CHECK(dec.cache(c.layers, &k, &v).field == "layer");
  attn::tr::Decoder re(c, params, false, {});
  CHECK(re.cache(0, &k, &v).field == "cache");
  dec.reset();
  REQUIRE(dec.cache(1, &k, &v).ok());
  CHECK(k.empty());
}

// ---------- attention variants ----------
//
// The reference for step n is the model's own forward (forward_backward) over the first n
// tokens, its last row: what the recompute decoder runs. For the variants whose row i does
// not depend on how many tokens follow (all but relu and sigmoid's default bias, which divide
// by / subtract ln of the call's T_k), one forward over the whole sequence gives the same rows.

namespace {

struct NamedConfig {
  const char* name;
  ModelConfig c;
  bool prefix_free;  // row i of a full forward == the last row of the forward over i+1 tokens
};

std::vector<NamedConfig> variant_configs() {
  std::vector<NamedConfig> out;
  auto base = [](std::size_t heads, std::size_t kv, std::size_t dm) {
    ModelConfig c;
    c.vocab = 13;
    c.seq_len = 20;
    c.d_model = dm;
    c.layers = 2;
    c.heads = heads;
    c.kv_heads = kv;
    c.layer_norm = true;
    c.init_std = 0.5;
    return c;
  };
  using attn::Normalizer;
  using attn::Position;
  ModelConfig c = base(4, 2, 16);
  c.normalizer = Normalizer::kLinear;
  out.push_back({"linear, learned positions, GQA", c, true});
  c = base(4, 1, 16);
  c.normalizer = Normalizer::kLinear;
  c.positional = false;
  c.position = Position::kRope;
  c.qk_norm = true;
  out.push_back({"linear, RoPE, qkNorm, MQA", c, true});
  c = base(4, 4, 16);
  c.positional = false;
  c.position = Position::kRope;
  out.push_back({"softmax, RoPE", c, true});
  c = base(6, 3, 24);  // 6 heads: Press et al.'s slopes for a non-power of two
  c.positional = false;
  c.position = Position::kAlibi;
  out.push_back({"softmax, ALiBi, 6 heads", c, true});
  c = base(4, 2, 16);
  c.normalizer = Normalizer::kSoftmax1;
  c.qk_norm = true;
  c.scale = 10.0;
  out.push_back({"softmax1, qkNorm, scale 10", c, true});
  c = base(4, 4, 16);
  c.normalizer = Normalizer::kSigmoid;
  c.sigmoid_bias = -1.5;
  c.positional = false;
  c.position = Position::kAlibi;
  out.push_back({"sigmoid bias -1.5, ALiBi", c, true});
  c = base(4, 2, 16);
  c.normalizer = Normalizer::kSigmoid;
  out.push_back({"sigmoid, default bias -ln t", c, false});
  c = base(4, 4, 16);
  c.normalizer = Normalizer::kRelu;
  c.positional = false;
  c.position = Position::kRope;
  out.push_back({"relu, RoPE", c, false});
  return out;
}

}  // namespace

TEST_CASE("decode - every variant: cached steps equal the model's forward at every position",
          "[decode][variants]") {
  for (const auto& nc : variant_configs()) {
    INFO(nc.name);
    const ModelConfig& c = nc.c;
    auto params = std::make_shared<std::vector<float>>(attn::tr::param_layout(c).total);
    attn::tr::init_params(c, 31, params->data());
    std::vector<std::int32_t> tok(c.seq_len);
    attn::Rng r(3);
    for (auto& x : tok) x = static_cast<std::int32_t>(r.uniform() * c.vocab);
    const std::size_t T = c.seq_len, V = c.vocab, H = c.heads;
    attn::tr::RunOptions ro;
    ro.keep_weights = true;
    attn::tr::Workspace<float> full, pre;
    REQUIRE(attn::tr::forward_backward(c, params->data(), tok.data(),
                                       static_cast<const std::uint8_t*>(nullptr), 1, T, ro, &full,
                                       static_cast<float*>(nullptr), static_cast<double*>(nullptr),
                                       nullptr)
                .ok());
    // float32 on both sides, different summation orders: a few ulps of the logits' size M.
    double mag = 1;
    for (std::size_t i = 0; i < T * V; ++i) mag = std::max(mag, std::abs(double(full.logits[i])));
    attn::tr::Decoder dec(c, params, true, {});
    double worst = 0, worst_full = 0;
    std::vector<float> logits, w;
    for (std::size_t i = 0; i < T; ++i) {
      const std::size_t n = i + 1;
      REQUIRE(attn::tr::forward_backward(c, params->data(), tok.data(),
                                         static_cast<const std::uint8_t*>(nullptr), 1, n, ro, &pre,
                                         static_cast<float*>(nullptr),
                                         static_cast<double*>(nullptr), nullptr)
                  .ok());
      REQUIRE(dec.append(tok[i], &logits, &w).ok());
      REQUIRE(logits.size() == V);
      worst = std::max(worst, fixtures::max_abs_diff(logits.data(), pre.logits.data() + i * V, V));
      worst_full = std::max(
          worst_full, fixtures::max_abs_diff(logits.data(), full.logits.data() + i * V, V));
      // The weights of the new row (cache mode; the recurrent state keeps no keys).
      if (!w.empty()) {
        REQUIRE(w.size() == c.layers * H * n);
        for (std::size_t l = 0; l < c.layers; ++l)
          for (std::size_t h = 0; h < H; ++h)
            worst = std::max(worst, fixtures::max_abs_diff(w.data() + (l * H + h) * n,
                                                           pre.att[l].weights.data() +
                                                               (h * n + i) * n,
                                                           n));
      }
    }
    WARN("decode " << nc.name << ": max |delta| vs the forward over each prefix " << worst
                   << ", vs one full forward " << worst_full << " (logits up to " << mag << ")");
    CHECK(worst <= 2e-5 * mag);
    if (nc.prefix_free) CHECK(worst_full <= 2e-5 * mag);
  }
}
