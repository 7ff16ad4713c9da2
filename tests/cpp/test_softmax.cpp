#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "attn/softmax.hpp"
#include "fixtures.hpp"

TEST_CASE("softmax - matches the NumPy oracle row by row", "[softmax][oracle]") {
  const auto fx = fixtures::load("softmax.json");
  REQUIRE(fx.at("cases").size() > 0);
  for (const auto& c : fx.at("cases")) {
    INFO(c.at("name").get<std::string>());
    const std::size_t rows = c.at("rows").get<std::size_t>(),
                      cols = c.at("cols").get<std::size_t>();
    auto x = fixtures::vec<double>(c.at("x"));
    const auto want = fixtures::vec<double>(c.at("expect"));
    attn::softmax_rows(x.data(), rows, cols);
    CHECK(fixtures::max_abs_diff(x.data(), want.data(), x.size()) <= 1e-12);
    auto xf = fixtures::vec<float>(c.at("x"));
    attn::softmax_rows(xf.data(), rows, cols);
    CHECK(fixtures::max_abs_diff(xf.data(), want.data(), xf.size()) <= 1e-6);
  }
}

TEST_CASE("softmax - huge logits stay finite thanks to max subtraction", "[softmax]") {
  float x[3] = {1000.f, 1001.f, 1002.f};
  attn::softmax_rows(x, 1, 3);
  const double e1 = std::exp(-1.0), e2 = std::exp(-2.0), z = 1 + e1 + e2;
  CHECK(x[2] == Approx(1 / z).epsilon(1e-6));
  CHECK(x[0] == Approx(e2 / z).epsilon(1e-6));
}

TEST_CASE("softmax - an all -inf row becomes NaN as in NumPy", "[softmax]") {
  const double inf = std::numeric_limits<double>::infinity();
  double x[2] = {-inf, -inf};
  attn::softmax_rows(x, 1, 2);
  CHECK(std::isnan(x[0]));
  CHECK(std::isnan(x[1]));
}

TEST_CASE("softmax - xtensor form equals the pointer form", "[softmax]") {
  xt::xtensor<double, 2> x = {{1.0, 2.0, 3.0}, {0.0, 0.0, -1.0}};
  const auto y = attn::softmax(x);
  double raw[6] = {1.0, 2.0, 3.0, 0.0, 0.0, -1.0};
  attn::softmax_rows(raw, 2, 3);
  for (std::size_t i = 0; i < 6; ++i) CHECK(y.data()[i] == raw[i]);
}

TEST_CASE("softmax - entropy is 0 for one-hot and ln n for uniform and NaN for NaN", "[softmax]") {
  const double onehot[4] = {0, 1, 0, 0}, uniform[4] = {0.25, 0.25, 0.25, 0.25};
  CHECK(attn::row_entropy(onehot, 4) == 0.0);
  CHECK(attn::row_entropy(uniform, 4) == Approx(std::log(4.0)));
  const double bad[2] = {std::numeric_limits<double>::quiet_NaN(), 1.0};
  CHECK(std::isnan(attn::row_entropy(bad, 2)));
}
