// The NumPy-stream examples against NumPy (tests/fixtures/numpy_rng.json, written by
// tests/oracle/gen_numpy_rng.py): lesson 2's draws bit for bit, and its printed W.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "attn/numpy_example.hpp"
#include "fixtures.hpp"

namespace {

std::uint32_t bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// NumPy's float64 value (repr string), rounded to float32 as the example stores it.
float as_f32(const fixtures::json& j) {
  return static_cast<float>(std::strtod(j.get<std::string>().c_str(), nullptr));
}

void require_same_bits(const std::vector<float>& got, const fixtures::json& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("entry " << i);
    REQUIRE(bits(got[i]) == bits(as_f32(want[i])));
  }
}

std::vector<double> exact(const fixtures::json& j) {
  std::vector<double> v;
  for (const auto& x : j) v.push_back(std::strtod(x.get<std::string>().c_str(), nullptr));
  return v;
}

const fixtures::json& fx() {
  static const fixtures::json j = fixtures::load("numpy_rng.json");
  return j;
}

}  // namespace

TEST_CASE("numpy_example - lesson 2's X, W_q, W_k, W_v are NumPy's default_rng(0) draws",
          "[numpy_example][oracle]") {
  const auto& l2 = fx().at("lesson2");
  attn::Example e;
  REQUIRE(attn::lesson2_example(&e).ok());
  CHECK(e.t == l2.at("t").get<std::size_t>());
  CHECK(e.d_model == l2.at("dModel").get<std::size_t>());
  CHECK(e.dk == l2.at("dk").get<std::size_t>());
  CHECK(e.heads == 1);
  CHECK(e.causal);
  SECTION("X") {
    require_same_bits(e.x, l2.at("x"));
  }
  SECTION("W_q") {
    require_same_bits(e.wq, l2.at("wq"));
  }
  SECTION("W_k") {
    require_same_bits(e.wk, l2.at("wk"));
  }
  SECTION("W_v") {
    require_same_bits(e.wv, l2.at("wv"));
  }
  SECTION("W_o continues the stream") {
    require_same_bits(e.wo, l2.at("wo"));
  }
}

TEST_CASE("numpy_example - lesson 2's weights round to the matrix the lesson prints",
          "[numpy_example][oracle]") {
  const auto& l2 = fx().at("lesson2");
  attn::Example e;
  REQUIRE(attn::lesson2_example(&e).ok());
  attn::MhaResult<float> r;
  REQUIRE(attn::multi_head_attention(e.x.data(), e.x.size(), e.wq.data(), e.wq.size(), e.wk.data(),
                                     e.wk.size(), e.wv.data(), e.wv.size(), e.wo.data(),
                                     e.wo.size(), attn::mha_options(e), &r)
              .ok());
  const auto want = exact(l2.at("weights"));  // float64 from float64 draws
  const auto printed = exact(l2.at("printed"));
  REQUIRE(r.attn.weights.size() == want.size());
  const double d = fixtures::max_abs_diff(r.attn.weights.data(), want.data(), want.size());
  INFO("max |dW| = " << d);
  // Closer than every weight's distance to a rounding boundary: np.round(W, 2) must agree.
  REQUIRE(d < l2.at("printMargin").get<double>());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("weight " << i);
    CHECK(std::round(r.attn.weights.data()[i] * 100.0) / 100.0 == Approx(printed[i]).margin(1e-12));
  }
}

TEST_CASE(
    "numpy_example - other shapes draw NumPy's normal stream in the order X, W_q, W_k, W_v, W_o",
    "[numpy_example][oracle]") {
  for (const auto& s : fx().at("streams")) {
    INFO("seed " << s.at("seed").get<std::string>());
    attn::RandomExampleOptions o;
    o.seed = std::stoull(s.at("seed").get<std::string>());
    o.t = 4;
    o.d_model = 4;
    o.heads = 2;
    o.kv_heads = 1;
    o.dk = 2;
    o.dv = 1;  // x 16, wq 16, wk 8, wv 4, wo 8: 52 of the 64 stored normals
    attn::Example e;
    REQUIRE(attn::numpy_random_example(o, &e).ok());
    std::vector<float> all;
    for (const auto* w : {&e.x, &e.wq, &e.wk, &e.wv, &e.wo})
      all.insert(all.end(), w->begin(), w->end());
    const auto& first = s.at("normal").at("first");
    REQUIRE(all.size() == 52);
    for (std::size_t i = 0; i < all.size(); ++i) {
      INFO("value " << i);
      REQUIRE(bits(all[i]) == bits(as_f32(first[i])));
    }
  }
}

TEST_CASE("numpy_example - bad options are refused with random_example's fields",
          "[numpy_example]") {
  attn::RandomExampleOptions o;
  attn::Example e;
  o.t = 0;
  attn::Status a = attn::numpy_random_example(o, &e), b = attn::random_example(o, &e);
  CHECK_FALSE(a.ok());
  CHECK(a.field == b.field);
  o = attn::RandomExampleOptions{};
  o.d_model = 9;
  o.heads = 2;  // d_model not divisible by heads, dk unset
  a = attn::numpy_random_example(o, &e);
  b = attn::random_example(o, &e);
  CHECK_FALSE(a.ok());
  CHECK(a.field == b.field);
}
