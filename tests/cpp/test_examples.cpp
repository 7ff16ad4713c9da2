#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "attn/examples.hpp"
#include "attn/numpy_example.hpp"
#include "fixtures.hpp"

namespace {

attn::MhaResult<float> run_example(const attn::Example& e) {
  const attn::MhaOptions m = attn::mha_options(e);
  attn::MhaResult<float> r;
  REQUIRE(attn::multi_head_attention(e.x.data(), e.x.size(), e.wq.data(), e.wq.size(), e.wk.data(),
                                     e.wk.size(), e.wv.data(), e.wv.size(), e.wo.data(),
                                     e.wo.size(), m, &r)
              .ok());
  return r;
}

attn::MhaResult<float> run_cross(const attn::Example& e) {
  const attn::MhaOptions m = attn::mha_options(e);
  attn::MhaResult<float> r;
  REQUIRE(attn::multi_head_attention(e.x.data(), e.x.size(), e.x_kv.data(), e.x_kv.size(),
                                     e.wq.data(), e.wq.size(), e.wk.data(), e.wk.size(),
                                     e.wv.data(), e.wv.size(), e.wo.data(), e.wo.size(), m, &r)
              .ok());
  return r;
}

std::vector<std::string> strings(const fixtures::json& j) {
  std::vector<std::string> v;
  for (const auto& s : j) v.push_back(s.get<std::string>());
  return v;
}

}  // namespace

TEST_CASE("examples - the hand-built induction heads give the lesson's 0.471 and 0.877",
          "[examples]") {
  attn::Example e;
  REQUIRE(attn::induction_example(attn::lesson_sentence(), 14.0, &e).ok());
  REQUIRE(e.t == 11);
  REQUIRE(e.dk == 12);
  const auto r = run_example(e);
  const auto w = [&](std::size_t h, std::size_t i, std::size_t j) {
    return r.attn.weights(h, i, j);
  };
  CHECK(std::round(w(0, 8, 1) * 1000) == 471);
  CHECK(std::round(w(0, 8, 8) * 1000) == 471);
  CHECK(std::round(w(1, 8, 7) * 1000) == 877);
}

TEST_CASE("examples - induction weights match the NumPy oracle", "[examples][oracle]") {
  const auto fx = fixtures::load("examples.json").at("induction");
  attn::Example e;
  REQUIRE(attn::induction_example(attn::lesson_sentence(), 14.0, &e).ok());
  const auto r = run_example(e);
  const auto want = fixtures::vec<double>(fx.at("expect").at("weights"));
  REQUIRE(want.size() == r.attn.weights.size());
  CHECK(fixtures::max_abs_diff(r.attn.weights.data(), want.data(), want.size()) <= 1e-6);
}

TEST_CASE("examples - the random example draws X and W_q and W_k and W_v and W_o as documented",
          "[examples][oracle]") {
  const auto fx = fixtures::load("examples.json").at("random");
  REQUIRE(fx.size() > 0);
  for (const auto& c : fx) {
    const auto& o = c;
    attn::RandomExampleOptions ro;
    ro.seed = o.at("seed");
    ro.t = o.at("t");
    ro.d_model = o.at("dModel");
    ro.heads = o.at("heads");
    ro.kv_heads = o.value("kvHeads", 0);
    ro.dk = o.value("dk", 0);
    ro.dv = o.value("dv", 0);
    ro.causal = o.value("causal", true);
    attn::Example e;
    REQUIRE(attn::random_example(ro, &e).ok());
    for (const char* name : {"x", "wq", "wk", "wv", "wo"}) {
      INFO(name);
      const auto want = fixtures::vec<double>(c.at(name));
      const std::vector<float>& got = std::string(name) == "x"    ? e.x
                                      : std::string(name) == "wq" ? e.wq
                                      : std::string(name) == "wk" ? e.wk
                                      : std::string(name) == "wv" ? e.wv
                                                                  : e.wo;
      REQUIRE(got.size() == want.size());
      CHECK(fixtures::max_abs_diff(got.data(), want.data(), got.size()) <= 1e-6);
    }
    const auto r = run_example(e);
    const auto w = fixtures::vec<double>(c.at("expect").at("weights"));
    CHECK(fixtures::max_abs_diff(r.attn.weights.data(), w.data(), w.size()) <= 1e-4);
  }
}

TEST_CASE("examples - the sqrt(d_k) study reproduces the lesson's entropy effect", "[examples]") {
  std::vector<attn::EntropyPoint> pts;
  REQUIRE(attn::entropy_study({16, 64, 256, 1024}, 16, 2000, 0, &pts).ok());
  REQUIRE(pts.size() == 4);
  const auto fx = fixtures::load("examples.json").at("entropy_study");
  // NumPy's study repeated over 32 seeds gives the mean and spread of each figure;
  // our generator's draws must land within 4 standard deviations of NumPy's mean.
  const auto& spread = fx.at("spread");
  const auto sc_mean = fixtures::vec<double>(spread.at("scaledMean"));
  const auto sc_sd = fixtures::vec<double>(spread.at("scaledStd"));
  const auto un_mean = fixtures::vec<double>(spread.at("unscaledMean"));
  const auto un_sd = fixtures::vec<double>(spread.at("unscaledStd"));
  for (std::size_t i = 0; i < 4; ++i) {
    INFO("d_k = " << pts[i].dk);
    // Scaled: a soft average near ln 16 = 2.77 at every width (lesson: 2.36-2.43).
    CHECK(pts[i].scaled > 2.30);
    CHECK(pts[i].scaled < 2.50);
    // Agreement with NumPy's own random draws, within sampling noise.
    CHECK(std::abs(pts[i].scaled - sc_mean[i]) <= 4 * sc_sd[i]);
    CHECK(std::abs(pts[i].unscaled - un_mean[i]) <= 4 * un_sd[i]);
  }
  // Unscaled: collapses towards one-hot as d_k grows (lesson: about 0.10 at 1024).
  for (std::size_t i = 1; i < 4; ++i) CHECK(pts[i].unscaled < pts[i - 1].unscaled);
  CHECK(pts[3].unscaled < 0.2);
}

TEST_CASE("examples - bad example options are errors naming the field", "[examples][errors]") {
  attn::Example e;
  CHECK(attn::induction_example({}, 14.0, &e).field == "tokens");
  CHECK(attn::induction_example(attn::lesson_sentence(), std::nan(""), &e).field == "sharpness");
  attn::RandomExampleOptions o;
  o.heads = 3;
  o.d_model = 8;
  CHECK(attn::random_example(o, &e).field == "dModel");
  o.heads = 2;
  o.t = 100000;
  CHECK(attn::random_example(o, &e).field == "t");
  std::vector<attn::EntropyPoint> pts;
  CHECK(attn::entropy_study({}, 16, 10, 0, &pts).field == "dks");
  CHECK(attn::entropy_study({16}, 0, 10, 0, &pts).field == "keys");
}

TEST_CASE("examples - the scaled init draws the same weights times 1/sqrt(d_model)",
          "[examples][oracle]") {
  const auto fx = fixtures::load("examples.json").at("random");
  for (const auto& c : fx) {
    attn::RandomExampleOptions ro;
    ro.seed = c.at("seed");
    ro.t = c.at("t");
    ro.d_model = c.at("dModel");
    ro.heads = c.at("heads");
    ro.kv_heads = c.value("kvHeads", 0);
    ro.dk = c.value("dk", 0);
    ro.dv = c.value("dv", 0);
    ro.init = attn::WeightInit::kScaled;
    attn::Example e;
    REQUIRE(attn::random_example(ro, &e).ok());
    const double sd = 1.0 / std::sqrt(static_cast<double>(ro.d_model));
    for (const char* name : {"x", "wq", "wk", "wv", "wo"}) {
      INFO(name);
      auto want = fixtures::vec<double>(c.at(name));  // the oracle's N(0,1) draws
      if (std::string(name) != "x") {
        for (double& w : want) w *= sd;  // X stays N(0,1)
      }
      const std::vector<float>& got = std::string(name) == "x"    ? e.x
                                      : std::string(name) == "wq" ? e.wq
                                      : std::string(name) == "wk" ? e.wk
                                      : std::string(name) == "wv" ? e.wv
                                                                  : e.wo;
      REQUIRE(got.size() == want.size());
      CHECK(fixtures::max_abs_diff(got.data(), want.data(), got.size()) <= 1e-6);
    }
  }
}

TEST_CASE("examples - with the scaled init query entries have unit variance, with N(0,1) d_model",
          "[examples]") {
  // The reason for the init choice: q = X W_q sums d_model products. Sample variance over
  // T * H * d_k = 64 * 64 entries (standard error about 2 %).
  for (const auto init : {attn::WeightInit::kLesson, attn::WeightInit::kScaled}) {
    attn::RandomExampleOptions ro;
    ro.seed = 7;
    ro.t = 64;
    ro.d_model = 128;
    ro.heads = 1;
    ro.dk = 64;
    ro.init = init;
    attn::Example e;
    REQUIRE(attn::random_example(ro, &e).ok());
    double sum = 0, sum2 = 0;
    const std::size_t n = ro.t * ro.dk;
    for (std::size_t i = 0; i < ro.t; ++i) {
      for (std::size_t c = 0; c < ro.dk; ++c) {
        double q = 0;
        for (std::size_t a = 0; a < ro.d_model; ++a) {
          q += double{e.x[i * ro.d_model + a]} * e.wq[a * ro.dk + c];
        }
        sum += q;
        sum2 += q * q;
      }
    }
    const double var = sum2 / n - (sum / n) * (sum / n);
    const double want = init == attn::WeightInit::kScaled ? 1.0 : 128.0;
    INFO("variance " << var);
    CHECK(var > 0.8 * want);
    CHECK(var < 1.25 * want);
  }
}

TEST_CASE("examples - the alignment example and its cross attention match the NumPy oracle",
          "[examples][oracle]") {
  const auto fx = fixtures::load("alignment.json").at("cases");
  REQUIRE(fx.size() == 3);
  for (const auto& c : fx) {
    INFO(c.at("name").get<std::string>());
    attn::Example e;
    REQUIRE(attn::alignment_example(strings(c.at("queries")), strings(c.at("keys")),
                                    c.at("sharpness").get<double>(), &e)
                .ok());
    CHECK(e.tokens == strings(c.at("queries")));
    CHECK(e.kv_tokens == strings(c.at("keys")));
    CHECK(e.t == c.at("t").get<std::size_t>());
    CHECK(e.tk == c.at("tk").get<std::size_t>());
    CHECK(e.d_model == c.at("dModel").get<std::size_t>());
    CHECK(e.heads == 2);
    CHECK(e.kv_heads == 2);
    CHECK(e.dk == c.at("dk").get<std::size_t>());
    CHECK(e.dv == c.at("dv").get<std::size_t>());
    CHECK_FALSE(e.causal);
    for (const char* name : {"x", "xKv", "wq", "wk", "wv", "wo"}) {
      INFO(name);
      const std::string n = name;
      const std::vector<float>& got = n == "x"     ? e.x
                                      : n == "xKv" ? e.x_kv
                                      : n == "wq"  ? e.wq
                                      : n == "wk"  ? e.wk
                                      : n == "wv"  ? e.wv
                                                   : e.wo;
      const auto want = fixtures::vec<double>(c.at(name));
      REQUIRE(got.size() == want.size());
      CHECK(fixtures::max_abs_diff(got.data(), want.data(), got.size()) == 0);
    }
    const auto r = run_cross(e);
    for (const char* name : {"weights", "headOutputs", "output"}) {
      INFO(name);
      const auto want = fixtures::vec<double>(c.at("expect").at(name));
      const std::string n = name;
      const float* got = n == "weights"       ? r.attn.weights.data()
                         : n == "headOutputs" ? r.attn.output.data()
                                              : r.output.data();
      const std::size_t size = n == "weights"       ? r.attn.weights.size()
                               : n == "headOutputs" ? r.attn.output.size()
                                                    : r.output.size();
      REQUIRE(size == want.size());
      CHECK(fixtures::max_abs_diff(got, want.data(), size) <= 1e-5);
    }
  }
}

TEST_CASE("examples - the alignment heads: 'cat' finds 'chat', positions align monotonically",
          "[examples]") {
  attn::Example e;
  REQUIRE(
      attn::alignment_example(attn::alignment_queries(), attn::alignment_keys(), 14.0, &e).ok());
  REQUIRE(e.t == 6);
  REQUIRE(e.tk == 7);
  const auto r = run_cross(e);
  const auto argmax = [&](std::size_t h, std::size_t i) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < e.tk; ++j) {
      if (r.attn.weights(h, i, j) > r.attn.weights(h, i, best)) best = j;
    }
    return best;
  };
  CHECK(e.tokens[1] == "cat");
  CHECK(e.kv_tokens[argmax(0, 1)] == "chat");
  CHECK(e.kv_tokens[argmax(0, 5)] == "tapis");  // "mat"
  for (std::size_t i = 1; i < e.t; ++i) CHECK(argmax(1, i) >= argmax(1, i - 1));
  CHECK(argmax(1, 0) == 0);
  CHECK(argmax(1, e.t - 1) == e.tk - 1);
  // Case-insensitive, and an unknown word is its own concept.
  REQUIRE(
      attn::alignment_example({"Alice", "THE", "dog"}, {"chien", "le", "alice"}, 14.0, &e).ok());
  const auto r2 = run_cross(e);
  for (std::size_t i = 0; i < 3; ++i) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < 3; ++j) {
      if (r2.attn.weights(0, i, j) > r2.attn.weights(0, i, best)) best = j;
    }
    CHECK(best == 2 - i);
  }
}

TEST_CASE("examples - bad alignment options are errors naming the field", "[examples][errors]") {
  attn::Example e;
  const auto q = attn::alignment_queries(), k = attn::alignment_keys();
  CHECK(attn::alignment_example({}, k, 14.0, &e).field == "queries");
  CHECK(attn::alignment_example(q, {}, 14.0, &e).field == "keys");
  const std::vector<std::string> many(attn::kMaxHandBuiltTokens + 1, "cat");
  CHECK(attn::alignment_example(many, k, 14.0, &e).field == "queries");
  CHECK(attn::alignment_example(q, many, 14.0, &e).field == "keys");
  CHECK(attn::alignment_example(q, k, 0.0, &e).field == "sharpness");
  CHECK(attn::alignment_example(q, k, -1.0, &e).field == "sharpness");
  CHECK(attn::alignment_example(q, k, std::nan(""), &e).field == "sharpness");
  CHECK(attn::alignment_example(q, k, INFINITY, &e).field == "sharpness");
  const std::vector<std::string> most(attn::kMaxHandBuiltTokens, "cat");
  CHECK(attn::alignment_example(most, most, 1.0, &e).ok());
  attn::RandomExampleOptions o;
  o.kv_tokens.assign(100000, "k");
  CHECK(attn::random_example(o, &e).field == "kvTokens");
}

TEST_CASE("examples - kv_tokens draws X_kv after W_o and leaves the seed's other draws alone",
          "[examples]") {
  for (const bool numpy : {false, true}) {
    INFO("numpy generator " << numpy);
    attn::RandomExampleOptions o;
    o.seed = 11;
    o.t = 5;
    o.d_model = 8;
    o.heads = 2;
    attn::Example self, cross;
    REQUIRE((numpy ? attn::numpy_random_example(o, &self) : attn::random_example(o, &self)).ok());
    o.kv_tokens = {"a", "b", "c"};
    REQUIRE((numpy ? attn::numpy_random_example(o, &cross) : attn::random_example(o, &cross)).ok());
    CHECK(self.tk == 0);
    CHECK(self.x_kv.empty());
    CHECK(cross.x == self.x);
    CHECK(cross.wq == self.wq);
    CHECK(cross.wk == self.wk);
    CHECK(cross.wv == self.wv);
    CHECK(cross.wo == self.wo);
    CHECK(cross.tk == 3);
    CHECK(cross.kv_tokens == o.kv_tokens);
    REQUIRE(cross.x_kv.size() == 3 * 8);
    // A longer X_kv starts with the same draws: they follow W_o in the one stream.
    o.kv_tokens.push_back("d");
    attn::Example longer;
    REQUIRE(
        (numpy ? attn::numpy_random_example(o, &longer) : attn::random_example(o, &longer)).ok());
    CHECK(std::equal(cross.x_kv.begin(), cross.x_kv.end(), longer.x_kv.begin()));
    CHECK(attn::mha_options(cross).tk == 3);
    const auto r = run_cross(cross);
    CHECK(r.attn.weights.size() == 2 * 5 * 3);
  }
}
