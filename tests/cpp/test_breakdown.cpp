#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "attn/breakdown.hpp"
#include "attn/variants.hpp"
#include "fixtures.hpp"

namespace {

double rel(double a, double b) {
  return std::abs(a - b) / std::max(1.0, std::abs(b));
}

template <class T>
void check_case(const nlohmann::json& c, double tol) {
  attn::AttentionOptions o;
  o.shape = {c.at("heads").get<std::size_t>(), c.at("kvHeads").get<std::size_t>(),
             c.at("tq").get<std::size_t>(),    c.at("tk").get<std::size_t>(),
             c.at("dk").get<std::size_t>(),    1};
  o.mask.causal = c.at("causal").get<bool>();
  o.mask.window = c.at("window").get<std::size_t>();
  const auto pad = c.at("keyPadding").is_null() ? std::vector<std::uint8_t>{}
                                                : fixtures::bytes(c.at("keyPadding"));
  if (!pad.empty()) o.mask.key_padding = attn::Bytes(pad.data(), pad.size());
  if (!c.at("scale").is_null()) o.scale = c.at("scale").get<double>();
  const auto& v = c.at("variant");
  o.variant.qk_norm = v.at("qkNorm").get<bool>();
  REQUIRE(attn::parse_position(v.at("position").get<std::string>().c_str(), &o.variant.position));
  REQUIRE(
      attn::parse_normalizer(v.at("normalizer").get<std::string>().c_str(), &o.variant.normalizer));
  const auto q = fixtures::inputs<T>(c.at("q")), k = fixtures::inputs<T>(c.at("k"));
  for (const auto& w : c.at("cells")) {
    const attn::BreakdownCell cell{w.at("head").get<std::size_t>(),
                                   w.at("query").get<std::size_t>(),
                                   w.at("key").get<std::size_t>()};
    INFO("cell " << cell.head << "," << cell.query << "," << cell.key);
    attn::Breakdown<T> b;
    REQUIRE(attn::score_breakdown(q.data(), q.size(), k.data(), k.size(), o, cell, &b).ok());
    const auto wq = fixtures::vec<double>(w.at("q")), wk = fixtures::vec<double>(w.at("k")),
               wp = fixtures::vec<double>(w.at("products"));
    for (std::size_t d = 0; d < wq.size(); ++d) {
      CHECK(rel(b.q[d], wq[d]) <= tol);
      CHECK(rel(b.k[d], wk[d]) <= tol);
      CHECK(rel(b.products[d], wp[d]) <= tol);
    }
    CHECK(rel(b.dot, w.at("dot").get<double>()) <= tol);
    CHECK(rel(b.scale, w.at("scale").get<double>()) <= 1e-15);
    CHECK(rel(b.bias, w.at("bias").get<double>()) <= 1e-15);
    CHECK(rel(b.score, w.at("score").get<double>()) <= tol);
    CHECK(b.allowed == w.at("allowed").get<bool>());
    const auto rs = fixtures::vec<double>(w.at("rowScores"));
    REQUIRE(b.row_scores.size() == rs.size());
    for (std::size_t j = 0; j < rs.size(); ++j) CHECK(rel(b.row_scores[j], rs[j]) <= tol);
    if (w.at("nextBest").is_null())
      CHECK(std::isinf(b.next_best));
    else
      CHECK(rel(b.next_best, w.at("nextBest").get<double>()) <= tol);
  }
}

}  // namespace

TEST_CASE("breakdown - every case and variant matches the NumPy oracle", "[breakdown][oracle]") {
  const auto fx = fixtures::load("breakdown.json");
  REQUIRE(fx.at("cases").size() >= 10);
  for (const auto& c : fx.at("cases")) {
    INFO(c.at("name").get<std::string>());
    check_case<double>(c, 1e-12);
    check_case<float>(c, 2e-6);
  }
}

TEST_CASE("breakdown - a cell out of range and a short q are refused", "[breakdown]") {
  attn::AttentionOptions o;
  o.shape = {1, 1, 2, 2, 2, 2};
  const std::vector<float> q(4, 1.f), k(4, 1.f);
  attn::Breakdown<float> b;
  CHECK(attn::score_breakdown(q.data(), 4, k.data(), 4, o, {0, 1, 1}, &b).ok());
  CHECK(attn::score_breakdown(q.data(), 4, k.data(), 4, o, {1, 0, 0}, &b).field == "cell");
  CHECK(attn::score_breakdown(q.data(), 4, k.data(), 4, o, {0, 2, 0}, &b).field == "cell");
  CHECK(attn::score_breakdown(q.data(), 3, k.data(), 4, o, {0, 0, 0}, &b).field == "q");
}
