#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <vector>

#include "attn/rng.hpp"
#include "attn/tr/decode.hpp"
#include "attn/tr/trainer.hpp"
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
// The reference for step n is written here from the model's definition (model.hpp): x = E[tok]
// (+ P[pos] when learned), per layer x += merge_h(attention(x W_Q, x W_K, x W_V)) W_O (for
// shortformer: attention((x + P) W_Q, (x + P) W_K, x W_V), x_0 = E[tok]) with the
// core's attn::attention (causal, T_q = T_k = n, the config's variant: qkNorm, RoPE, ALiBi and
// the normalizer are the core's, checked against the NumPy oracle elsewhere), the final
// LayerNorm, x U; projections in double. Its last row is what the decoder's step n must give, in
// each mode: the recurrent state (linear), the K/V cache, and recompute (the trainer's own
// forward_backward over the prefix, whose variant kernels are a separate implementation).
// For every variant but relu and sigmoid with its default bias (which divide by / subtract ln of
// the call's T_k) row i does not depend on the tokens after it, so one forward over the whole
// sequence gives every step's reference too.

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
  out.push_back({"softmax, ALiBi, 6 heads, GQA", c, true});
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
  // One layer: relu's 1/T_k and sigmoid's default -ln T_k change the earlier positions' outputs
  // as tokens arrive, which a second layer would read through its keys and values (refused below).
  c = base(4, 2, 16);
  c.layers = 1;
  c.normalizer = Normalizer::kSigmoid;
  out.push_back({"sigmoid, default bias -ln t, one layer", c, false});
  c = base(4, 4, 16);
  c.layers = 1;
  c.normalizer = Normalizer::kRelu;
  c.positional = false;
  c.position = Position::kRope;
  out.push_back({"relu, RoPE, one layer", c, false});
  // Shortformer: P in every layer's queries and keys; the cached keys carry their own position's P.
  c = base(4, 2, 16);
  c.shortformer = true;
  out.push_back({"softmax, shortformer, GQA", c, true});
  c = base(4, 1, 16);
  c.shortformer = true;
  c.normalizer = Normalizer::kLinear;
  out.push_back({"linear, shortformer, MQA (the recurrent state)", c, true});
  return out;
}

// The model over tokens[0, n): logits (n, V) and per layer the weights (H, n, n).
void reference_forward(const ModelConfig& c, const std::vector<float>& p,
                       const std::vector<std::int32_t>& tok, std::size_t n,
                       std::vector<float>* logits, std::vector<std::vector<float>>* weights) {
  const auto P = attn::tr::param_layout(c);
  const std::size_t D = c.d_model, H = c.heads, G = c.kv_heads, dh = attn::tr::d_head(c);
  const std::size_t V = c.vocab;
  const bool embed_pos = c.positional && !c.shortformer, qk_pos = c.positional && c.shortformer;
  std::vector<double> x(n * D);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t d = 0; d < D; ++d)
      x[i * D + d] =
          double(p[P.embed + tok[i] * D + d]) + (embed_pos ? double(p[P.pos + i * D + d]) : 0.0);
  weights->assign(c.layers, {});
  for (std::size_t l = 0; l < c.layers; ++l) {
    const auto& W = P.layer[l];
    // (heads, n, d_h) row-major from (x [+ P]) W (W: (D, heads*d_h)).
    auto project = [&](std::size_t off, std::size_t heads, bool add_p) {
      std::vector<float> out(heads * n * dh);
      for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t e = 0; e < dh; ++e) {
            double s = 0;
            for (std::size_t d = 0; d < D; ++d)
              s += (x[i * D + d] + (add_p ? double(p[P.pos + i * D + d]) : 0.0)) *
                   double(p[off + d * heads * dh + h * dh + e]);
            out[(h * n + i) * dh + e] = float(s);
          }
      return out;
    };
    const auto q = project(W.wq, H, qk_pos), k = project(W.wk, G, qk_pos);
    const auto v = project(W.wv, G, false);
    attn::AttentionOptions ao;
    ao.shape = attn::Shape{H, G, n, n, dh, dh};
    ao.mask.causal = true;
    ao.scale = c.scale;
    ao.variant = attn::tr::attention_variant(c);
    // The model's normalising length is its context, seqLen (sigmoid's default bias is set by
    // attention_variant; relu divides by it): the core's relu divides by the call's n keys.
    if (c.normalizer == attn::Normalizer::kSigmoid && !c.sigmoid_bias)
      ao.variant.sigmoid_bias = -std::log(double(c.seq_len));
    attn::AttentionResult<float> res;
    REQUIRE(
        attn::attention(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(), ao, &res).ok());
    if (c.normalizer == attn::Normalizer::kRelu) {
      const float f = float(n) / float(c.seq_len);
      for (auto& x : res.weights) x *= f;
      for (auto& x : res.output) x *= f;
    }
    (*weights)[l].assign(res.weights.begin(), res.weights.end());
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t d = 0; d < D; ++d) {
        double s = 0;
        for (std::size_t h = 0; h < H; ++h)
          for (std::size_t e = 0; e < dh; ++e)
            s += double(res.output(h, i, e)) * double(p[W.wo + (h * dh + e) * D + d]);
        x[i * D + d] += s;
      }
  }
  logits->assign(n * V, 0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> y(x.begin() + i * D, x.begin() + (i + 1) * D);
    if (c.layer_norm) {
      double mean = 0, var = 0;
      for (double a : y) mean += a;
      mean /= double(D);
      for (double a : y) var += (a - mean) * (a - mean);
      var /= double(D);
      for (std::size_t d = 0; d < D; ++d)
        y[d] = (y[d] - mean) / std::sqrt(var + 1e-5) * p[P.ln_gain + d] + p[P.ln_bias + d];
    }
    for (std::size_t j = 0; j < V; ++j) {
      double s = 0;
      for (std::size_t d = 0; d < D; ++d) s += y[d] * double(p[P.unembed + d * V + j]);
      (*logits)[i * V + j] = float(s);
    }
  }
}

}  // namespace

TEST_CASE("decode - every variant: cached steps equal the model's forward at every position",
          "[decode][variants]") {
  for (const auto& nc : variant_configs()) {
    INFO(nc.name);
    const ModelConfig& c = nc.c;
    REQUIRE(attn::tr::validate_model(c, 1).ok());
    auto params = std::make_shared<std::vector<float>>(attn::tr::param_layout(c).total);
    attn::tr::init_params(c, 31, params->data());
    std::vector<std::int32_t> tok(c.seq_len);
    attn::Rng r(3);
    for (auto& x : tok) x = static_cast<std::int32_t>(r.uniform() * c.vocab);
    const std::size_t T = c.seq_len, V = c.vocab, H = c.heads;
    std::vector<float> full, pre;
    std::vector<std::vector<float>> wfull, wpre;
    reference_forward(c, *params, tok, T, &full, &wfull);
    double mag = 1;
    for (float a : full) mag = std::max(mag, std::abs(double(a)));
    // The decoder a cache asks for (the recurrent state for linear), and the K/V cache.
    attn::tr::Decoder dec(c, params, true, {});
    attn::tr::Decoder kv(c, params, attn::tr::DecodeMode::kCache, {});
    // The recompute path: the trainer's forward (forward_backward) over the prefix.
    attn::tr::Decoder re(c, params, false, {});
    double worst = 0, worst_full = 0, worst_w = 0;
    std::vector<float> logits, w, lk, wk, lr, wr;
    for (std::size_t i = 0; i < T; ++i) {
      const std::size_t n = i + 1;
      reference_forward(c, *params, tok, n, &pre, &wpre);
      REQUIRE(dec.append(tok[i], &logits, &w).ok());
      REQUIRE(kv.append(tok[i], &lk, &wk).ok());
      REQUIRE(re.append(tok[i], &lr, &wr).ok());
      REQUIRE(logits.size() == V);
      REQUIRE(wr.size() == wk.size());
      worst_w = std::max(worst_w, fixtures::max_abs_diff(wk.data(), wr.data(), wk.size()));
      for (const auto* lg : {&logits, &lk, &lr}) {
        worst = std::max(worst, fixtures::max_abs_diff(lg->data(), pre.data() + i * V, V));
        worst_full =
            std::max(worst_full, fixtures::max_abs_diff(lg->data(), full.data() + i * V, V));
      }
      // The weights of the new row (the K/V cache; the recurrent state keeps no keys).
      REQUIRE(wk.size() == c.layers * H * n);
      for (std::size_t l = 0; l < c.layers; ++l)
        for (std::size_t h = 0; h < H; ++h)
          worst_w = std::max(worst_w, fixtures::max_abs_diff(wk.data() + (l * H + h) * n,
                                                             wpre[l].data() + (h * n + i) * n, n));
    }
    WARN("decode " << nc.name << " (" << attn::tr::decode_mode_name(dec.mode())
                   << "): max |delta logits| vs the forward over each prefix " << worst
                   << ", vs one full forward " << worst_full << " (logits up to " << mag
                   << "); weights " << worst_w);
    CHECK(worst <= 2e-5 * mag);
    CHECK(worst_w <= 1e-5);  // weights <= 1, scores up to ~10 in float32
    if (nc.prefix_free) CHECK(worst_full <= 2e-5 * mag);
    // The state is what linear asks for; every other model keeps the K/V cache.
    CHECK(dec.mode() == (c.normalizer == attn::Normalizer::kLinear ? attn::tr::DecodeMode::kState
                                                                   : attn::tr::DecodeMode::kCache));
  }
}

TEST_CASE(
    "decode - the recurrent state is S = sum phi(k) v^T and z = sum phi(k) of the cached keys",
    "[decode][variants]") {
  const ModelConfig c = variant_configs()[1].c;  // linear, RoPE, qkNorm, MQA
  auto params = std::make_shared<std::vector<float>>(attn::tr::param_layout(c).total);
  attn::tr::init_params(c, 5, params->data());
  attn::tr::Decoder st(c, params, attn::tr::DecodeMode::kState, {});
  attn::tr::Decoder kv(c, params, attn::tr::DecodeMode::kCache, {});
  const std::size_t dh = attn::tr::d_head(c), G = c.kv_heads, L = c.layers;
  const std::size_t state_bytes = L * G * (dh * dh + dh) * 4;
  std::vector<float> lg, w, k, v, S, z;
  for (std::size_t t = 1; t <= c.seq_len; ++t) {
    const auto tok = static_cast<std::int32_t>((t * 7) % c.vocab);
    REQUIRE(st.append(tok, &lg, &w).ok());
    CHECK(w.empty());
    REQUIRE(kv.append(tok, &lg, &w).ok());
    // Constant memory: the same bytes at every length, and no K/V cache to read.
    CHECK(st.cache_bytes() == state_bytes);
    if (t % 5 != 0) continue;
    for (std::size_t l = 0; l < L; ++l) {
      REQUIRE(st.state(l, &S, &z).ok());
      REQUIRE(kv.cache(l, &k, &v).ok());
      REQUIRE(S.size() == G * dh * dh);
      REQUIRE(z.size() == G * dh);
      double worst = 0;
      for (std::size_t g = 0; g < G; ++g)
        for (std::size_t a = 0; a < dh; ++a) {
          double zr = 0;
          for (std::size_t j = 0; j < t; ++j) {
            const double x = k[(g * t + j) * dh + a];
            zr += x > 0 ? x + 1 : std::exp(x);
          }
          worst = std::max(worst, std::abs(zr - z[g * dh + a]) / t);
          for (std::size_t b = 0; b < dh; ++b) {
            double sr = 0;
            for (std::size_t j = 0; j < t; ++j) {
              const double x = k[(g * t + j) * dh + a];
              sr += (x > 0 ? x + 1 : std::exp(x)) * v[(g * t + j) * dh + b];
            }
            worst = std::max(worst, std::abs(sr - S[(g * dh + a) * dh + b]) / t);
          }
        }
      CHECK(worst < 1e-5);
    }
  }
  CHECK(kv.cache_bytes() == 2 * L * G * c.seq_len * dh * 4);
  CHECK(st.cache(0, &k, &v).field == "cache");
  CHECK(kv.state(0, &S, &z).field == "state");
  CHECK(st.state(L, &S, &z).field == "layer");
  st.reset();
  REQUIRE(st.state(0, &S, &z).ok());
  CHECK(*std::max_element(z.begin(), z.end()) == 0.0f);
  // The state needs linear attention.
  ModelConfig soft = c;
  soft.normalizer = attn::Normalizer::kSoftmax;
  CHECK(attn::tr::check_decode_mode(soft, attn::tr::DecodeMode::kState).field == "state");
  attn::tr::Decoder bad(soft, params, attn::tr::DecodeMode::kState, {});
  CHECK(bad.append(1, &lg, &w).field == "state");
}

TEST_CASE("decode - relu and sigmoid's default bias: causal, so the cache is exact with two layers",
          "[decode][variants]") {
  // relu divides by the model's context length seqLen and sigmoid's default bias is -ln seqLen,
  // not the number of tokens so far: a position's output (and, from layer 1 on, its keys and
  // values) is the same whatever follows it. The reference shows it on the forward itself: over
  // 5 tokens and over 6 it agrees on position 5's logits; then cache == recompute == forward.
  for (auto n : {attn::Normalizer::kRelu, attn::Normalizer::kSigmoid}) {
    ModelConfig c = variant_configs()[0].c;  // 2 layers
    c.normalizer = n;
    INFO(attn::normalizer_name(n));
    CHECK(attn::tr::check_decode_mode(c, attn::tr::DecodeMode::kCache).ok());
    auto params = std::make_shared<std::vector<float>>(attn::tr::param_layout(c).total);
    attn::tr::init_params(c, 9, params->data());
    const std::vector<std::int32_t> tok = {1, 2, 3, 4, 5, 6};
    std::vector<float> a, b;
    std::vector<std::vector<float>> wa, wb;
    reference_forward(c, *params, tok, 5, &a, &wa);
    reference_forward(c, *params, tok, 6, &b, &wb);
    double scale = 1;
    for (float x : b) scale = std::max(scale, 1.0 + std::fabs(double(x)));
    CHECK(fixtures::max_abs_diff(a.data() + 4 * c.vocab, b.data() + 4 * c.vocab, c.vocab) <
          1e-5 * scale);
    attn::tr::Decoder dec(c, params, true, {}), re(c, params, false, {});
    std::vector<float> lg, w, lr, wr;
    for (std::size_t i = 0; i < tok.size(); ++i) {
      REQUIRE(dec.append(tok[i], &lg, &w).ok());
      REQUIRE(re.append(tok[i], &lr, &wr).ok());
      CHECK(fixtures::max_abs_diff(lg.data(), b.data() + i * c.vocab, c.vocab) < 2e-5 * scale);
      CHECK(fixtures::max_abs_diff(lr.data(), b.data() + i * c.vocab, c.vocab) < 2e-5 * scale);
      REQUIRE(w.size() == wr.size());
      CHECK(fixtures::max_abs_diff(w.data(), wr.data(), w.size()) < 1e-5);
    }
  }
}

TEST_CASE(
    "decode - shortformer: cached keys are (E + P) W_K, values E W_V; cache and recompute "
    "generate the same tokens",
    "[decode][shortformer]") {
  ModelConfig c = variant(1);  // GQA, LayerNorm
  c.shortformer = true;
  REQUIRE(attn::tr::validate_model(c, 1).ok());
  const auto P = attn::tr::param_layout(c);
  auto params = std::make_shared<std::vector<float>>(P.total);
  attn::tr::init_params(c, 17, params->data());
  const float* p = params->data();
  const std::size_t D = c.d_model, G = c.kv_heads, dh = attn::tr::d_head(c), V = c.vocab;
  const std::vector<std::int32_t> tok = {3, 1, 4, 1, 5, 9, 2, 6};
  attn::tr::Decoder dec(c, params, true, {}), re(c, params, false, {});
  std::vector<float> logits, w, lr, wr, k, v;
  for (std::int32_t t : tok) {
    REQUIRE(dec.append(t, &logits, &w).ok());
    REQUIRE(re.append(t, &lr, &wr).ok());
    CHECK(fixtures::max_abs_diff(logits.data(), lr.data(), V) < 1e-4);
    REQUIRE(w.size() == wr.size());
    CHECK(fixtures::max_abs_diff(w.data(), wr.data(), w.size()) < 1e-5);
  }
  const std::size_t n = tok.size();
  REQUIRE(dec.cache(0, &k, &v).ok());
  double worst = 0;
  for (std::size_t pos = 0; pos < n; ++pos)
    for (std::size_t col = 0; col < G * dh; ++col) {
      // Layer 0 in double: k = (E[token] + P[pos]) W_K, v = E[token] W_V.
      double rk = 0, rv = 0;
      for (std::size_t d = 0; d < D; ++d) {
        const double e = double(p[P.embed + tok[pos] * D + d]);
        rk += (e + double(p[P.pos + pos * D + d])) * p[P.layer[0].wk + d * G * dh + col];
        rv += e * p[P.layer[0].wv + d * G * dh + col];
      }
      const std::size_t g = col / dh, i = col % dh;
      worst = std::max(worst, std::abs(k[(g * n + pos) * dh + i] - rk));
      worst = std::max(worst, std::abs(v[(g * n + pos) * dh + i] - rv));
    }
  CHECK(worst < 1e-4);
  // Generation through the trainer: greedy and sampled, cache == recompute token for token.
  attn::tr::TrainerConfig tc;
  tc.model = c;
  tc.batch = 2;
  std::unique_ptr<attn::tr::Trainer> tr;
  REQUIRE(attn::tr::Trainer::create(tc, params.get(), &tr).ok());
  for (double temp : {0.0, 1.0}) {
    std::vector<std::int32_t> a, b;
    REQUIRE(tr->generate({3, 1, 4}, c.seq_len - 3, true, temp, 8, &a).ok());
    REQUIRE(tr->generate({3, 1, 4}, c.seq_len - 3, false, temp, 8, &b).ok());
    CHECK(a.size() == c.seq_len - 3);
    CHECK(a == b);
  }
}

TEST_CASE("decode - sample_token equals the NumPy oracle's temperature / topK / topP draw",
          "[decode][oracle]") {
  const auto fx = fixtures::load("sampling.json").at("cases");
  REQUIRE(fx.size() >= 200);
  for (const auto& c : fx) {
    INFO(c.at("name").get<std::string>());
    const std::vector<float> lg = fixtures::vec<float>(c.at("logits"));
    attn::tr::SampleConfig s;
    s.temperature = c.at("temperature");
    s.top_k = c.at("topK");
    s.top_p = c.at("topP");
    REQUIRE(attn::tr::check_sample_config(s).ok());
    const std::size_t nt = std::min<std::size_t>(5, lg.size());
    std::vector<std::int32_t> ids(nt, -1);
    std::vector<float> pr(nt, -1);
    const std::int32_t tok =
        attn::tr::sample_token(lg.data(), lg.size(), s, c.at("u"), 5, ids.data(), pr.data());
    CHECK(tok == c.at("token").get<std::int32_t>());
    CHECK(ids == c.at("topIds").get<std::vector<std::int32_t>>());
    const auto want = c.at("topProbs").get<std::vector<double>>();
    for (std::size_t r = 0; r < nt; ++r) CHECK(std::abs(pr[r] - want[r]) < 1e-6);
  }
}

TEST_CASE("decode - sample_token without filters is pick_token bit for bit; generate's topK/topP",
          "[decode]") {
  attn::Rng data(5), a(9), b(9);
  for (int i = 0; i < 500; ++i) {
    const std::size_t V = 1 + i % 37;
    std::vector<float> lg(V);
    for (auto& x : lg) x = static_cast<float>(data.normal() * (i % 3 ? 1.0 : 8.0));
    attn::tr::SampleConfig s;
    s.temperature = (i % 5) * 0.4;
    s.top_k = (i % 2) ? 0 : V + i % 3;  // 0 or >= V: off
    const std::int32_t want = attn::tr::pick_token(lg, s.temperature, &a);
    const double u = s.temperature > 0 ? b.uniform() : 0.0;
    CHECK(attn::tr::sample_token(lg.data(), V, s, u) == want);
  }
  ModelConfig c = variant(0);
  REQUIRE(attn::tr::validate_model(c, 1).ok());
  attn::tr::TrainerConfig tc;
  tc.model = c;
  tc.batch = 2;
  std::unique_ptr<attn::tr::Trainer> tr;
  REQUIRE(attn::tr::Trainer::create(tc, nullptr, &tr).ok());
  const std::size_t n = c.seq_len - 3;
  std::vector<std::int32_t> old, now, greedy, k1, p0, ids;
  std::vector<float> pr;
  attn::tr::SampleConfig s;
  s.temperature = 1.3;
  REQUIRE(tr->generate({3, 1, 4}, n, true, 1.3, 11, &old).ok());
  REQUIRE(tr->generate({3, 1, 4}, n, true, s, 11, &now, &ids, &pr).ok());
  CHECK(now == old);  // temperature only: today's bits
  REQUIRE(ids.size() == n * 5);
  REQUIRE(pr.size() == n * 5);
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (std::size_t r = 0; r < 5; ++r) {
      sum += pr[i * 5 + r];
      if (r) CHECK(pr[i * 5 + r] <= pr[i * 5 + r - 1]);
    }
    CHECK(sum <= 1.0 + 1e-6);
  }
  REQUIRE(tr->generate({3, 1, 4}, n, true, 0.0, 0, &greedy).ok());
  s.top_k = 1;  // only the most probable token is left: greedy
  REQUIRE(tr->generate({3, 1, 4}, n, false, s, 11, &k1, &ids, &pr).ok());
  CHECK(k1 == greedy);
  for (std::size_t i = 0; i < n; ++i) CHECK(pr[i * 5] == 1.0f);
  s.top_k = 0;
  s.top_p = 1e-9;  // the first token alone reaches p
  REQUIRE(tr->generate({3, 1, 4}, n, true, s, 11, &p0).ok());
  CHECK(p0 == greedy);
  for (double bad : {0.0, -0.1, 1.0000001, std::nan("")}) {
    s.top_p = bad;
    CHECK(tr->generate({1}, 1, true, s, 0, &p0).field == "topP");
  }
  s.top_p = 1;
  s.temperature = -1;
  CHECK(tr->generate({1}, 1, true, s, 0, &p0).field == "temperature");
}
