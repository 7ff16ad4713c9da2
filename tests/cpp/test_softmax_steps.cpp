#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "attn/softmax_steps.hpp"
#include "fixtures.hpp"

namespace {

template <class T>
double max_rel_diff(const std::vector<T>& a, const std::vector<double>& b) {
  return a.size() == b.size() ? fixtures::max_rel_diff(a.data(), b.data(), a.size()) : INFINITY;
}

template <class T>
void check_case(const nlohmann::json& c, double tol) {
  attn::SoftmaxStepsOptions o;
  o.rows = c.at("rows").get<std::size_t>();
  o.cols = c.at("cols").get<std::size_t>();
  REQUIRE(attn::parse_mask_fill(c.at("fill").get<std::string>().c_str(), &o.fill));
  o.max_shift = c.at("maxShift").get<bool>();
  o.softmax1 = c.at("normalizer").get<std::string>() == "softmax1";
  o.memory_cap = std::size_t{1} << 24;
  const auto s = fixtures::vec<T>(c.at("scores"));
  const auto allowed = fixtures::bytes(c.at("allowed"));
  attn::SoftmaxSteps<T> r;
  REQUIRE(attn::softmax_steps(s.data(), s.size(), allowed.data(), allowed.size(), o, &r).ok());
  CHECK(max_rel_diff(r.masked, fixtures::vec<double>(c.at("masked"))) <= tol);
  CHECK(max_rel_diff(r.shifted, fixtures::vec<double>(c.at("shifted"))) <= tol);
  CHECK(max_rel_diff(r.exps, fixtures::vec<double>(c.at("exps"))) <= tol);
  CHECK(max_rel_diff(r.sums, fixtures::vec<double>(c.at("sums"))) <= tol);
  CHECK(max_rel_diff(r.weights, fixtures::vec<double>(c.at("weights"))) <= tol);
}

}  // namespace

TEST_CASE("softmax steps - each step matches lesson 1's NumPy lines", "[softmax_steps][oracle]") {
  const auto fx = fixtures::load("softmax_steps.json");
  REQUIRE(fx.at("cases").size() >= 20);
  for (const auto& c : fx.at("cases")) {
    INFO(c.at("name").get<std::string>());
    // The same operations in the same order: float64 to rounding, float32 to an ulp or two of
    // exp (NumPy's expf and the C library's may differ in the last bit).
    if (c.at("dtype") == "float64")
      check_case<double>(c, 1e-13);
    else
      check_case<float>(c, 5e-7);
  }
}

TEST_CASE("softmax steps - bad sizes and the memory cap are refused", "[softmax_steps]") {
  const float s[4] = {0, 1, 2, 3};
  const std::uint8_t ok[4] = {1, 1, 1, 1};
  attn::SoftmaxSteps<float> r;
  attn::SoftmaxStepsOptions o;
  o.rows = 2;
  o.cols = 2;
  o.memory_cap = 1 << 20;
  CHECK(attn::softmax_steps(s, 4, ok, 4, o, &r).ok());
  CHECK(attn::softmax_steps(s, 3, ok, 4, o, &r).field == "scores");
  CHECK(attn::softmax_steps(s, 4, ok, 3, o, &r).field == "allowed");
  o.rows = 0;
  CHECK(attn::softmax_steps(s, 0, ok, 0, o, &r).field == "rows");
  o.rows = 2;
  o.memory_cap = 16;
  const attn::Status st = attn::softmax_steps(s, 4, ok, 4, o, &r);
  CHECK(st.code == attn::StatusCode::kResourceExhausted);
}
