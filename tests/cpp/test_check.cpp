// attn::check_kernels against independent figures: the float32 kernel's distance from the
// NumPy oracle (tests/fixtures/attention.json) and the tiled/naive distance measured here.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "attn/check.hpp"
#include "attn/tiled.hpp"
#include "fixtures.hpp"

TEST_CASE("check - figures agree with the oracle and pass their tolerances on every fixture case",
          "[check][oracle]") {
  const auto fx = fixtures::load("attention.json").at("cases");
  int compared = 0, overflow = 0;
  double worst_ratio = 0;
  for (const auto& c : fx) {
    auto kc = fixtures::read_case(c);
    INFO(kc.name);
    const auto o = fixtures::bind(kc);
    const auto q = fixtures::inputs<float>(c.at("q")), k = fixtures::inputs<float>(c.at("k")),
               v = fixtures::inputs<float>(c.at("v"));
    attn::KernelCheck chk;
    REQUIRE(attn::check_kernels(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(), o, &chk)
                .ok());
    // The float32 kernel against NumPy's float64 (12 significant digits): the check's
    // float64 reference is the same up to far less than float32 error.
    attn::AttentionResult<float> naive, tiled;
    REQUIRE(attn::attention(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(), o, &naive)
                .ok());
    REQUIRE(
        attn::attention_tiled(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(), o, &tiled)
            .ok());
    CHECK(chk.tiled_vs_naive ==
          fixtures::max_abs_diff(tiled.output.data(), naive.output.data(), naive.output.size()));
    if (c.at("expect").at("infScoreRows").get<int>() > 0) {
      // float32 scores overflow where float64 ones do not: the check must say so.
      CHECK(chk.f32_vs_f64 == std::numeric_limits<double>::infinity());
      CHECK_FALSE(chk.ok());
      ++overflow;
      continue;
    }
    CHECK(chk.ok());
    worst_ratio = std::max(worst_ratio, chk.f32_vs_f64 / chk.f32_vs_f64_tol);
    if (c.at("expect").at("weights").is_null()) continue;
    const auto out = fixtures::vec<double>(c.at("expect").at("output"));
    const auto w = fixtures::vec<double>(c.at("expect").at("weights"));
    const double d = std::max(fixtures::max_abs_diff(naive.output.data(), out.data(), out.size()),
                              fixtures::max_abs_diff(naive.weights.data(), w.data(), w.size()));
    CHECK(std::abs(chk.f32_vs_f64 - d) <= 1e-9 * std::max(1.0, chk.max_abs_v));
    ++compared;
  }
  CHECK(compared >= 30);
  CHECK(overflow >= 1);
  WARN("worst f32-vs-f64 / tolerance over the fixture: " << worst_ratio);
}

TEST_CASE("check - bad inputs and a small cap are refused with the field", "[check][errors]") {
  attn::AttentionOptions o;
  o.shape = attn::Shape{1, 1, 4, 4, 2, 2};
  const std::vector<float> buf(8, 0.5f);
  attn::KernelCheck chk;
  CHECK(attn::check_kernels(buf.data(), 7, buf.data(), 8, buf.data(), 8, o, &chk).field == "q");
  o.memory_cap = 200;
  const attn::Status st = attn::check_kernels(buf.data(), 8, buf.data(), 8, buf.data(), 8, o, &chk);
  CHECK(st.field == "memory");
  CHECK(st.code == attn::StatusCode::kResourceExhausted);
}
