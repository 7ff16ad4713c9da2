#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "attn/rng.hpp"
#include "attn/tr/model.hpp"
#include "model_fixtures.hpp"

using attn::tr::ModelConfig;

namespace {

template <class T>
double loss_grads(const ModelConfig& c, const std::vector<T>& p,
                  const std::vector<std::int32_t>& tok, const std::vector<std::uint8_t>& mask,
                  std::size_t batch, std::vector<T>* g,
                  const attn::tr::RunOptions& ro = attn::tr::RunOptions{}) {
  attn::tr::Workspace<T> ws;
  double loss = 0;
  if (g) g->assign(p.size(), T(0));
  const attn::Status st =
      attn::tr::forward_backward(c, p.data(), tok.data(), mask.data(), batch, c.seq_len, ro, &ws,
                                 g ? g->data() : nullptr, &loss, nullptr);
  REQUIRE(st.ok());
  return loss;
}

template <class T>
void check_fixture(double tol_rel, const char* label, const char* family = "grad",
                   attn::Kernel kernel = attn::Kernel::kNaive) {
  const auto fx = fixtures::load("model.json");
  double worst_loss = 0, worst_grad = 0;
  REQUIRE(fx.at(family).size() >= 10);
  std::size_t with_weights = 0;
  for (const auto& c : fx.at(family)) {
    const std::string name = c.at("name");
    INFO(name);
    ModelConfig cfg = model_fx::config(c);
    cfg.kernel = kernel;
    const auto p = model_fx::flat<T>(c.at("params"), true);
    REQUIRE(p.size() == attn::tr::param_layout(cfg).total);
    const auto want = model_fx::flat<double>(c.at("grads"), false);
    std::vector<T> g;
    const double loss = loss_grads(cfg, p, model_fx::tokens(c), model_fx::mask(c),
                                   c.at("batch").get<std::size_t>(), &g);
    const double want_loss = c.at("loss");
    const double dl = std::abs(loss - want_loss);
    worst_loss = std::max(worst_loss, dl);
    CHECK(dl <= tol_rel * std::max(1.0, std::abs(want_loss)));
    double gmax = 0;
    for (double x : want) gmax = std::max(gmax, std::abs(x));
    const double dg = fixtures::max_abs_diff(g.data(), want.data(), want.size());
    worst_grad = std::max(worst_grad, dg / std::max(1.0, gmax));
    CHECK(dg <= tol_rel * std::max(1.0, gmax));
    if (c.contains("weights0")) {
      // The forward's own weights of the first sequence (L, H, T, T) against the oracle's.
      attn::tr::Workspace<T> ws;
      attn::tr::RunOptions ro;
      ro.keep_weights = true;
      const auto tok = model_fx::tokens(c);
      REQUIRE(attn::tr::forward_backward(cfg, p.data(), tok.data(),
                                         static_cast<const std::uint8_t*>(nullptr), 1, cfg.seq_len,
                                         ro, &ws, static_cast<T*>(nullptr),
                                         static_cast<double*>(nullptr), nullptr)
                  .ok());
      const auto w0 = fixtures::vec<double>(c.at("weights0"));
      const std::size_t per = cfg.heads * cfg.seq_len * cfg.seq_len;
      REQUIRE(w0.size() == cfg.layers * per);
      for (std::size_t l = 0; l < cfg.layers; ++l)
        CHECK(fixtures::max_abs_diff(ws.att[l].weights.data(), w0.data() + l * per, per) <=
              tol_rel);
      ++with_weights;
    }
  }
  if (std::string(family) == "shortformer") CHECK(with_weights == fx.at(family).size());
  WARN(label << ": max |delta| loss " << worst_loss << ", gradients " << worst_grad
             << " (relative to max(1, max |grad|) per case)");
}

}  // namespace

TEST_CASE("model - loss and every gradient match the PyTorch oracle in float64",
          "[model][oracle]") {
  check_fixture<double>(1e-10, "model float64 vs PyTorch");
}

TEST_CASE("model - loss and every gradient match the PyTorch oracle in float32",
          "[model][oracle]") {
  check_fixture<float>(2e-5, "model float32 vs PyTorch");
}

TEST_CASE("model - attention variants: loss and every gradient match PyTorch, both kernels",
          "[model][oracle][variants]") {
  // normalizer softmax1 / sigmoid (+ bias) / relu (its kink included) / linear, positional
  // rope / alibi (3 heads: not a power of two), qkNorm; with GQA, MQA and layer norm.
  check_fixture<double>(1e-10, "variants naive float64 vs PyTorch", "variants");
  check_fixture<double>(1e-10, "variants tiled float64 vs PyTorch", "variants",
                        attn::Kernel::kTiled);
  check_fixture<float>(2e-5, "variants naive float32 vs PyTorch", "variants");
  check_fixture<float>(2e-5, "variants tiled float32 vs PyTorch", "variants", attn::Kernel::kTiled);
}

TEST_CASE("model - shortformer: loss, every gradient (dP too) and the weights match PyTorch",
          "[model][oracle][shortformer]") {
  // P added to every layer's W_Q and W_K input only; with LayerNorm, GQA / MQA, 1 to 3 layers,
  // sigmoid + qkNorm and linear (the variant kernels), both kernels.
  for (attn::Kernel kernel : {attn::Kernel::kNaive, attn::Kernel::kTiled}) {
    const bool tiled = kernel == attn::Kernel::kTiled;
    check_fixture<double>(1e-10, tiled ? "shortformer tiled float64" : "shortformer naive float64",
                          "shortformer", kernel);
    check_fixture<float>(2e-5, tiled ? "shortformer tiled float32" : "shortformer naive float32",
                         "shortformer", kernel);
  }
}

TEST_CASE(
    "model - shortformer: P never reaches x_0 or W_V, and float64 gradients agree with "
    "finite differences",
    "[model][finite-diff][shortformer]") {
  ModelConfig c;
  c.vocab = 7;
  c.seq_len = 5;
  c.layers = 2;
  c.heads = 2;
  c.kv_heads = 1;
  c.d_model = 6;
  c.layer_norm = true;
  c.shortformer = true;
  c.init_std = 0.6;
  REQUIRE(attn::tr::validate_model(c, 2).ok());
  const auto L = attn::tr::param_layout(c);
  std::vector<double> p(L.total);
  attn::tr::init_params(c, 21, p.data());
  std::vector<std::int32_t> tok = {1, 4, 2, 1, 4, 0, 3, 6, 5, 3};
  std::vector<std::uint8_t> mask = {0, 1, 1, 0, 1, 1, 1, 1, 1, 1};
  std::vector<double> g;
  loss_grads(c, p, tok, mask, 2, &g);
  double worst = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double h = 1e-5, keep = p[i];
    p[i] = keep + h;
    const double lp = loss_grads<double>(c, p, tok, mask, 2, nullptr);
    p[i] = keep - h;
    const double lm = loss_grads<double>(c, p, tok, mask, 2, nullptr);
    p[i] = keep;
    const double fd = (lp - lm) / (2 * h);
    worst = std::max(worst, std::abs(fd - g[i]));
    REQUIRE(std::abs(fd - g[i]) <= 1e-7 + 1e-6 * std::abs(fd));
  }
  WARN("finite differences shortformer: max |delta| " << worst);
  // With W_Q = W_K = 0 the scores are 0 whatever P is, and P reaches nothing else: the loss is
  // the same for any P and dP = 0 (a table added to x_0 or to W_V's input would move both).
  for (const auto& W : L.layer) {
    std::fill(p.begin() + W.wq, p.begin() + W.wq + c.d_model * c.d_model, 0.0);
    std::fill(p.begin() + W.wk, p.begin() + W.wk + c.d_model * attn::tr::d_head(c), 0.0);
  }
  const double l0 = loss_grads(c, p, tok, mask, 2, &g);
  for (std::size_t i = 0; i < c.seq_len * c.d_model; ++i) CHECK(g[L.pos + i] == 0.0);
  for (std::size_t i = 0; i < c.seq_len * c.d_model; ++i) p[L.pos + i] += 0.5 + 0.1 * i;
  CHECK(loss_grads<double>(c, p, tok, mask, 2, nullptr) == l0);
}

TEST_CASE("model - attention variants: float64 gradients agree with finite differences",
          "[model][finite-diff][variants]") {
  struct V {
    const char* name;
    attn::Normalizer n;
    attn::Position pos;
    bool qk;
    double drop;
  };
  const V vs[] = {{"softmax1", attn::Normalizer::kSoftmax1, attn::Position::kNone, false, 0},
                  {"sigmoid", attn::Normalizer::kSigmoid, attn::Position::kNone, false, 0},
                  {"relu", attn::Normalizer::kRelu, attn::Position::kNone, false, 0},
                  {"linear", attn::Normalizer::kLinear, attn::Position::kNone, false, 0},
                  {"rope", attn::Normalizer::kSoftmax, attn::Position::kRope, false, 0},
                  {"alibi", attn::Normalizer::kSoftmax, attn::Position::kAlibi, false, 0},
                  {"qkNorm", attn::Normalizer::kSoftmax, attn::Position::kNone, true, 0},
                  {"linear+rope+qkNorm", attn::Normalizer::kLinear, attn::Position::kRope, true, 0},
                  {"sigmoid+alibi, dropout 0.3", attn::Normalizer::kSigmoid, attn::Position::kAlibi,
                   false, 0.3}};
  for (const V& v : vs) {
    for (attn::Kernel kernel : {attn::Kernel::kNaive, attn::Kernel::kTiled}) {
      ModelConfig c;
      c.vocab = 7;
      c.seq_len = 5;
      c.layers = 2;
      c.heads = 2;
      c.kv_heads = 1;
      c.d_model = 8;
      c.positional = false;
      c.position = v.pos;
      c.normalizer = v.n;
      c.qk_norm = v.qk;
      c.scale = v.qk ? 3.0 : 0.5;
      c.init_std = 0.6;
      c.dropout = v.drop;
      c.kernel = kernel;
      INFO(v.name << (kernel == attn::Kernel::kTiled ? " tiled" : " naive"));
      REQUIRE(attn::tr::validate_model(c, 2).ok());
      std::vector<double> p(attn::tr::param_layout(c).total);
      attn::tr::init_params(c, 11, p.data());
      std::vector<std::int32_t> tok = {1, 4, 2, 1, 4, 0, 3, 6, 5, 3};
      std::vector<std::uint8_t> mask = {0, 1, 1, 0, 1, 1, 1, 1, 1, 1};
      attn::tr::RunOptions ro;
      ro.training = v.drop > 0;
      ro.dropout_seed = 99;
      std::vector<double> g;
      loss_grads(c, p, tok, mask, 2, &g, ro);
      double worst = 0;
      for (std::size_t i = 0; i < p.size(); i += fixtures::kFdStride) {
        const double h = 1e-5, keep = p[i];
        p[i] = keep + h;
        const double lp = loss_grads<double>(c, p, tok, mask, 2, nullptr, ro);
        p[i] = keep - h;
        const double lm = loss_grads<double>(c, p, tok, mask, 2, nullptr, ro);
        p[i] = keep;
        const double fd = (lp - lm) / (2 * h);
        worst = std::max(worst, std::abs(fd - g[i]));
        REQUIRE(std::abs(fd - g[i]) <= 1e-7 + 1e-6 * std::abs(fd));
      }
      WARN("finite differences " << v.name << ": max |delta| " << worst);
    }
  }
}

TEST_CASE("model - attention variants: tiled == naive bit for bit, and the kept weights",
          "[model][tiled][variants]") {
  for (auto n : {attn::Normalizer::kSoftmax1, attn::Normalizer::kSigmoid, attn::Normalizer::kRelu,
                 attn::Normalizer::kLinear}) {
    ModelConfig c;
    c.vocab = 16;
    c.seq_len = 12;
    c.d_model = 16;
    c.heads = 4;
    c.kv_heads = 2;
    c.normalizer = n;
    c.positional = false;
    c.position = attn::Position::kRope;
    std::vector<float> p(attn::tr::param_layout(c).total);
    attn::tr::init_params(c, 9, p.data());
    std::vector<std::int32_t> tok(3 * 12);
    std::vector<std::uint8_t> mask(3 * 12, 1);
    for (std::size_t i = 0; i < tok.size(); ++i) tok[i] = static_cast<std::int32_t>((i * 7) % 16);
    std::vector<float> g1, g2;
    const double l1 = loss_grads(c, p, tok, mask, 3, &g1);
    c.kernel = attn::Kernel::kTiled;
    const double l2 = loss_grads(c, p, tok, mask, 3, &g2);
    CHECK(l1 == l2);
    CHECK(std::memcmp(g1.data(), g2.data(), g1.size() * sizeof(float)) == 0);
    // Kept weights: causal (keys after the query exactly 0); softmax1's and linear's rows sum
    // to at most 1, relu's cells are >= 0.
    attn::tr::Workspace<float> ws;
    attn::tr::RunOptions ro;
    ro.keep_weights = true;
    REQUIRE(attn::tr::forward_backward(c, p.data(), tok.data(),
                                       static_cast<const std::uint8_t*>(nullptr), 3, 12, ro, &ws,
                                       static_cast<float*>(nullptr), nullptr, nullptr)
                .ok());
    const auto& w = ws.att[0].weights;
    REQUIRE(w.size() == 3u * 4 * 12 * 12);
    for (std::size_t r = 0; r < 3 * 4 * 12; ++r) {
      const std::size_t i = r % 12;
      double sum = 0;
      for (std::size_t j = 0; j < 12; ++j) {
        const float x = w.data()[r * 12 + j];
        if (j > i) REQUIRE(x == 0.0f);
        REQUIRE(x >= 0.0f);
        sum += x;
      }
      if (n == attn::Normalizer::kSoftmax1 || n == attn::Normalizer::kLinear)
        REQUIRE(sum <= 1.0 + 1e-6);
    }
  }
}

TEST_CASE("model - float64 gradients agree with central finite differences",
          "[model][finite-diff]") {
  for (int variant = 0; variant < 3; ++variant) {
    ModelConfig c;
    c.vocab = 7;
    c.seq_len = 5;
    c.layers = variant == 2 ? 1 : 2;
    c.heads = 2;
    c.kv_heads = variant == 1 ? 1 : 2;
    c.d_model = 6;
    c.layer_norm = variant == 1;
    c.positional = variant != 2;
    c.init_std = 0.6;
    INFO("variant " << variant);
    std::vector<double> p(attn::tr::param_layout(c).total);
    attn::tr::init_params(c, 42 + variant, p.data());
    if (c.layer_norm) {  // non-trivial gain and bias
      attn::Rng r(5);
      const auto L = attn::tr::param_layout(c);
      for (std::size_t d = 0; d < c.d_model; ++d) {
        p[L.ln_gain + d] = 1 + 0.3 * r.normal();
        p[L.ln_bias + d] = 0.3 * r.normal();
      }
    }
    const std::size_t batch = 2;
    std::vector<std::int32_t> tok = {1, 4, 2, 1, 4, 0, 3, 6, 5, 3};
    std::vector<std::uint8_t> mask = {0, 1, 1, 0, 1, 1, 1, 1, 1, 1};
    std::vector<double> g;
    loss_grads(c, p, tok, mask, batch, &g);
    double worst = 0;
    for (std::size_t i = 0; i < p.size(); i += (variant == 0 ? 1 : 3)) {
      const double h = 1e-5, keep = p[i];
      p[i] = keep + h;
      const double lp = loss_grads<double>(c, p, tok, mask, batch, nullptr);
      p[i] = keep - h;
      const double lm = loss_grads<double>(c, p, tok, mask, batch, nullptr);
      p[i] = keep;
      const double fd = (lp - lm) / (2 * h);
      worst = std::max(worst, std::abs(fd - g[i]));
      REQUIRE(std::abs(fd - g[i]) <= 1e-7 + 1e-6 * std::abs(fd));
    }
    WARN("finite differences variant " << variant << ": max |delta| " << worst);
  }
}

TEST_CASE("model - with dropout (mask fixed by its seed) gradients agree with finite differences",
          "[model][finite-diff][dropout]") {
  ModelConfig c;
  c.vocab = 7;
  c.seq_len = 5;
  c.layers = 2;
  c.heads = 2;
  c.kv_heads = 1;
  c.d_model = 6;
  c.init_std = 0.6;
  c.dropout = 0.3;
  std::vector<double> p(attn::tr::param_layout(c).total);
  attn::tr::init_params(c, 77, p.data());
  std::vector<std::int32_t> tok = {1, 4, 2, 1, 4, 0, 3, 6, 5, 3};
  std::vector<std::uint8_t> mask(10, 1);
  attn::tr::RunOptions ro;
  ro.training = true;
  ro.dropout_seed = 1234;
  std::vector<double> g, g0;
  const double l1 = loss_grads(c, p, tok, mask, 2, &g, ro);
  const double l0 = loss_grads(c, p, tok, mask, 2, &g0);
  CHECK(l1 != l0);  // some weights were dropped
  double worst = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double h = 1e-5, keep = p[i];
    p[i] = keep + h;
    const double lp = loss_grads<double>(c, p, tok, mask, 2, nullptr, ro);
    p[i] = keep - h;
    const double lm = loss_grads<double>(c, p, tok, mask, 2, nullptr, ro);
    p[i] = keep;
    const double fd = (lp - lm) / (2 * h);
    worst = std::max(worst, std::abs(fd - g[i]));
    REQUIRE(std::abs(fd - g[i]) <= 1e-7 + 1e-6 * std::abs(fd));
  }
  WARN("finite differences with dropout 0.3: max |delta| " << worst);
}

TEST_CASE("model - initialisation is deterministic and uses the documented scale",
          "[model][determinism]") {
  ModelConfig c;
  const std::size_t n = attn::tr::param_layout(c).total;
  std::vector<float> a(n), b(n), d(n);
  attn::tr::init_params(c, 3, a.data());
  attn::tr::init_params(c, 3, b.data());
  attn::tr::init_params(c, 4, d.data());
  CHECK(std::memcmp(a.data(), b.data(), n * sizeof(float)) == 0);
  CHECK(std::memcmp(a.data(), d.data(), n * sizeof(float)) != 0);
  // The first value is the first Box-Muller normal of Rng(3) times 1/sqrt(64).
  attn::Rng r(3);
  CHECK(a[0] == static_cast<float>(r.normal() / 8.0));
  double s2 = 0;
  for (float x : a) s2 += static_cast<double>(x) * x;
  CHECK(std::sqrt(s2 / n) == Approx(1.0 / 8.0).epsilon(0.03));
}

TEST_CASE("model - validation names the field", "[model][errors]") {
  auto field = [](ModelConfig c, std::size_t batch = 4) {
    return attn::tr::validate_model(c, batch).field;
  };
  ModelConfig c;
  CHECK(attn::tr::validate_model(c, 32).ok());
  ModelConfig x = c;
  x.vocab = 1;
  CHECK(field(x) == "vocab");
  x = c;
  x.seq_len = 0;
  CHECK(field(x) == "seqLen");
  x = c;
  x.layers = 0;
  CHECK(field(x) == "layers");
  x = c;
  x.heads = 0;
  CHECK(field(x) == "heads");
  x = c;
  x.kv_heads = 3;
  CHECK(field(x) == "kvHeads");
  x = c;
  x.d_model = 63;
  CHECK(field(x) == "dModel");
  x = c;
  x.scale = -1.0;
  CHECK(field(x) == "scale");
  x = c;
  x.init_std = std::nan("");
  CHECK(field(x) == "initStd");
  x = c;
  x.dropout = 1.0;
  CHECK(field(x) == "dropout");
  CHECK(field(c, 0) == "batch");
  x = c;
  x.position = attn::Position::kRope;  // beside a learned table
  CHECK(field(x) == "positional");
  x.positional = false;
  CHECK(attn::tr::validate_model(x, 4).ok());
  x.d_model = 6;
  x.heads = 2;
  x.kv_heads = 2;  // d_h = 3: odd, RoPE cannot pair it
  CHECK(field(x) == "positional");
  x = c;
  x.positional = false;
  x.position = attn::Position::kAlibi;
  x.normalizer = attn::Normalizer::kLinear;
  CHECK(field(x) == "positional");
  x = c;
  x.normalizer = attn::Normalizer::kSigmoid;
  x.sigmoid_bias = std::nan("");
  CHECK(field(x) == "sigmoidBias");
  x.sigmoid_bias = 1e300;  // not a float32
  CHECK(field(x) == "sigmoidBias");
  // The variant kernels' extra buffers count towards the memory estimate.
  x = c;
  const std::size_t plain = attn::tr::estimate_training_bytes(x, 8);
  x.qk_norm = true;
  CHECK(attn::tr::estimate_training_bytes(x, 8) > plain);
  x = c;
  x.seq_len = 4096;
  x.d_model = 1024;
  x.heads = 16;
  x.kv_heads = 16;
  const attn::Status st = attn::tr::validate_model(x, 64);
  CHECK(st.field == "memory");
  CHECK(st.code == attn::StatusCode::kResourceExhausted);
}

TEST_CASE("model - shortformer: its name, its table in the layout, and the refused combinations",
          "[model][errors][shortformer]") {
  for (const char* name : {"learned", "none", "rope", "alibi", "shortformer"}) {
    ModelConfig c;
    REQUIRE(attn::tr::parse_positional(name, &c));
    CHECK(std::string(attn::tr::positional_name(c)) == name);
    CHECK(c.shortformer == (std::string(name) == "shortformer"));
  }
  ModelConfig c;
  CHECK_FALSE(attn::tr::parse_positional("short", &c));
  // The same table, in the same place, filled by the same draws as 'learned'.
  ModelConfig learned, sf;
  REQUIRE(attn::tr::parse_positional("shortformer", &sf));
  const auto a = attn::tr::param_layout(learned), b = attn::tr::param_layout(sf);
  CHECK(a.total == b.total);
  CHECK(a.pos == b.pos);
  CHECK(a.unembed == b.unembed);
  std::vector<float> pa(a.total), pb(b.total);
  attn::tr::init_params(learned, 5, pa.data());
  attn::tr::init_params(sf, 5, pb.data());
  CHECK(pa == pb);
  CHECK(attn::tr::validate_model(sf, 4).ok());
  ModelConfig x = sf;
  x.positional = false;  // no table to add
  CHECK(attn::tr::validate_model(x, 4).field == "positional");
  x = sf;
  x.position = attn::Position::kRope;
  CHECK(attn::tr::validate_model(x, 4).field == "positional");
}

TEST_CASE("model - tokens outside the vocabulary are refused", "[model][errors]") {
  ModelConfig c;
  c.seq_len = 4;
  std::vector<float> p(attn::tr::param_layout(c).total, 0.1f);
  std::vector<std::int32_t> tok = {1, 2, 32, 3};
  std::vector<std::uint8_t> mask = {1, 1, 1, 1};
  attn::tr::Workspace<float> ws;
  double loss = 0;
  const attn::Status st =
      attn::tr::forward_backward(c, p.data(), tok.data(), mask.data(), 1, 4, attn::tr::RunOptions{},
                                 &ws, static_cast<float*>(nullptr), &loss, nullptr);
  CHECK(st.field == "tokens");
}

TEST_CASE("model - the tiled kernel gives the naive kernel's loss and gradients",
          "[model][tiled]") {
  ModelConfig c;
  c.vocab = 16;
  c.seq_len = 12;
  c.d_model = 16;
  c.heads = 4;
  c.kv_heads = 2;
  std::vector<float> p(attn::tr::param_layout(c).total);
  attn::tr::init_params(c, 9, p.data());
  std::vector<std::int32_t> tok(3 * 12);
  std::vector<std::uint8_t> mask(3 * 12, 1);
  for (std::size_t i = 0; i < tok.size(); ++i) tok[i] = static_cast<std::int32_t>((i * 7) % 16);
  std::vector<float> g1, g2;
  const double l1 = loss_grads(c, p, tok, mask, 3, &g1);
  c.kernel = attn::Kernel::kTiled;
  const double l2 = loss_grads(c, p, tok, mask, 3, &g2);
  CHECK(std::abs(l1 - l2) <= 1e-6);
  CHECK(fixtures::max_abs_diff(g1.data(), g2.data(), g1.size()) <= 1e-6);
}

TEST_CASE("model - the score-gradient diagnostic matches the PyTorch oracle", "[model][fixtures]") {
  const auto fx = fixtures::load("score_grad.json");
  REQUIRE(fx.at("cases").size() >= 3);
  double worst64 = 0, worst32 = 0;
  for (const auto& c : fx.at("cases")) {
    const std::string name = c.at("name");
    INFO(name);
    const ModelConfig cfg = model_fx::config(c);
    const auto want = c.at("scoreGrad").get<std::vector<double>>();
    REQUIRE(want.size() == cfg.layers * cfg.heads);
    double wmax = 0;
    for (double x : want) wmax = std::max(wmax, std::abs(x));
    auto run = [&](auto zero, double tol, double* worst) {
      using T = decltype(zero);
      const auto p = model_fx::flat<T>(c.at("params"), true);
      std::vector<T> g;
      std::vector<double> got(want.size(), -1.0);
      attn::tr::RunOptions ro;
      ro.keep_weights = true;
      ro.score_grad = got.data();
      loss_grads(cfg, p, model_fx::tokens(c), model_fx::mask(c), c.at("batch").get<std::size_t>(),
                 &g, ro);
      for (std::size_t i = 0; i < want.size(); ++i) {
        // Relative to the largest head of the case: saturated heads are ~0 in both.
        const double d = std::abs(got[i] - want[i]) / std::max(wmax, 1e-300);
        *worst = std::max(*worst, d);
        CHECK(d <= tol);
      }
    };
    run(double(0), 1e-9, &worst64);
    if (wmax > 1e-6) run(float(0), 1e-3, &worst32);  // float32 cannot resolve a saturated case
  }
  WARN("score gradient, max |delta| / max head: float64 " << worst64 << ", float32 " << worst32);
}

TEST_CASE("model - from_layer reruns the upper layers on the lower ones' bits, and refuses misuse",
          "[model]") {
  const auto fx = fixtures::load("model.json");
  const auto& c = fx.at("interp").at(0);
  const ModelConfig cfg = model_fx::config(c);
  REQUIRE(cfg.layers >= 2);
  const auto p = model_fx::flat<float>(c.at("params"), true);
  const auto tok = model_fx::tokens(c);
  const auto mask = model_fx::mask(c);
  const std::size_t B = c.at("batch"), t = cfg.seq_len;
  std::vector<std::uint8_t> abl(cfg.layers * cfg.heads, 0);
  attn::tr::RunOptions ro;
  ro.ablate = abl.data();
  attn::tr::Workspace<float> ws;
  double full = 0, part = 0;
  // Without a previous forward in the workspace, or with gradients, from_layer is refused.
  ro.from_layer = 1;
  CHECK(attn::tr::forward_backward(cfg, p.data(), tok.data(), mask.data(), B, t, ro, &ws,
                                   static_cast<float*>(nullptr), &part, nullptr)
            .code == attn::StatusCode::kInvalidArgument);
  ro.from_layer = 0;
  REQUIRE(attn::tr::forward_backward(cfg, p.data(), tok.data(), mask.data(), B, t, ro, &ws,
                                     static_cast<float*>(nullptr), &full, nullptr)
              .ok());
  std::vector<float> g(p.size());
  ro.from_layer = 1;
  CHECK_FALSE(attn::tr::forward_backward(cfg, p.data(), tok.data(), mask.data(), B, t, ro, &ws,
                                         g.data(), &part, nullptr)
                  .ok());
  ro.from_layer = cfg.layers;
  CHECK_FALSE(attn::tr::forward_backward(cfg, p.data(), tok.data(), mask.data(), B, t, ro, &ws,
                                         static_cast<float*>(nullptr), &part, nullptr)
                  .ok());
  // Layer 2's head 1 zeroed: from layer 1 on the kept stream, the bits of a whole forward.
  abl[cfg.heads] = 1;
  attn::tr::Workspace<float> fresh;
  ro.from_layer = 0;
  REQUIRE(attn::tr::forward_backward(cfg, p.data(), tok.data(), mask.data(), B, t, ro, &fresh,
                                     static_cast<float*>(nullptr), &full, nullptr)
              .ok());
  ro.from_layer = 1;
  REQUIRE(attn::tr::forward_backward(cfg, p.data(), tok.data(), mask.data(), B, t, ro, &ws,
                                     static_cast<float*>(nullptr), &part, nullptr)
              .ok());
  CHECK(part == full);

  // keep_from_attention: the ablated layer's own attention is the workspace's (the head is
  // zeroed after it). Layer 1's head 1 again, and layer 0's head 0 from the embeddings on.
  attn::tr::Workspace<float> ws2;
  attn::tr::RunOptions rk;
  rk.ablate = abl.data();
  rk.keep_from_attention = true;
  rk.from_layer = 0;  // nothing in the workspace yet: refused
  CHECK(attn::tr::forward_backward(cfg, p.data(), tok.data(), mask.data(), B, t, rk, &ws2,
                                   static_cast<float*>(nullptr), &part, nullptr)
            .field == "from_layer");
  std::fill(abl.begin(), abl.end(), 0);
  attn::tr::RunOptions r0;
  r0.ablate = abl.data();
  REQUIRE(attn::tr::forward_backward(cfg, p.data(), tok.data(), mask.data(), B, t, r0, &ws2,
                                     static_cast<float*>(nullptr), &part, nullptr)
              .ok());
  CHECK_FALSE(attn::tr::forward_backward(cfg, p.data(), tok.data(), mask.data(), B, t, rk, &ws2,
                                         g.data(), &part, nullptr)
                  .ok());  // no gradients
  for (const std::size_t l : {std::size_t{1}, std::size_t{0}}) {
    std::fill(abl.begin(), abl.end(), 0);
    abl[l * cfg.heads + (l == 1 ? 1 : 0)] = 1;
    rk.from_layer = l;
    REQUIRE(attn::tr::forward_backward(cfg, p.data(), tok.data(), mask.data(), B, t, rk, &ws2,
                                       static_cast<float*>(nullptr), &part, nullptr)
                .ok());
    attn::tr::Workspace<float> whole;
    REQUIRE(attn::tr::forward_backward(cfg, p.data(), tok.data(), mask.data(), B, t, r0, &whole,
                                       static_cast<float*>(nullptr), &full, nullptr)
                .ok());
    INFO("layer " << l);
    CHECK(std::memcmp(&part, &full, sizeof part) == 0);
    CHECK(ws2.logits == whole.logits);
  }
}

TEST_CASE("model - wq_grads_only: the W_Q gradients and the loss of a full pass, bit for bit",
          "[model]") {
  // The score-gradient diagnostic asks for dL/dW_Q only; the pass skips the other weights'
  // products, which must not move a bit of what it keeps. Every fixture family (plain,
  // grouped KV heads, LayerNorm, the variants), both precisions, with an ablated head.
  const auto fx = fixtures::load("model.json");
  std::size_t cases = 0;
  for (const char* family : {"grad", "interp", "variants", "shortformer"}) {
    if (!fx.contains(family)) continue;
    for (const auto& c : fx.at(family)) {
      const std::string name = c.at("name");
      INFO(family << " " << name);
      const ModelConfig cfg = model_fx::config(c);
      const auto P = attn::tr::param_layout(cfg);
      const std::size_t nq = cfg.d_model * cfg.heads * attn::tr::d_head(cfg);
      auto run = [&](auto zero) {
        using T = decltype(zero);
        const auto p = model_fx::flat<T>(c.at("params"), true);
        std::vector<std::uint8_t> abl(cfg.layers * cfg.heads, 0);
        abl[0] = cfg.heads > 1 ? 1 : 0;
        attn::tr::RunOptions ro;
        ro.ablate = abl.data();
        ro.keep_weights = true;
        std::vector<double> sg_full(abl.size()), sg_q(abl.size());
        ro.score_grad = sg_full.data();
        std::vector<T> full, only;
        const double l_full = loss_grads(cfg, p, model_fx::tokens(c), model_fx::mask(c),
                                         c.at("batch").get<std::size_t>(), &full, ro);
        ro.wq_grads_only = true;
        ro.score_grad = sg_q.data();
        const double l_q = loss_grads(cfg, p, model_fx::tokens(c), model_fx::mask(c),
                                      c.at("batch").get<std::size_t>(), &only, ro);
        CHECK(std::memcmp(&l_full, &l_q, sizeof l_full) == 0);
        CHECK(std::memcmp(sg_full.data(), sg_q.data(), sg_full.size() * sizeof(double)) == 0);
        for (std::size_t l = 0; l < cfg.layers; ++l)
          CHECK(std::memcmp(full.data() + P.layer[l].wq, only.data() + P.layer[l].wq,
                            nq * sizeof(T)) == 0);
      };
      run(float(0));
      run(double(0));
      ++cases;
    }
  }
  CHECK(cases >= 10);
}
