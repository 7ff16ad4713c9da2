#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "attn/selection.hpp"
#include "fixtures.hpp"

namespace {

std::vector<std::size_t> picked(const nlohmann::json& j) {
  std::vector<std::size_t> v;
  for (const auto& x : j) v.push_back(x.get<std::size_t>());
  return v;
}

void pick_close(const std::vector<double>& got, const nlohmann::json& want, const char* what) {
  const auto w = fixtures::vec<double>(want);
  REQUIRE(got.size() == w.size());
  for (std::size_t n = 0; n < w.size(); ++n) {
    INFO(what << "[" << n << "] " << got[n] << " vs " << w[n]);
    CHECK(std::abs(got[n] - w[n]) <= 1e-12 * std::max(1.0, std::abs(w[n])));
  }
}

}  // namespace

TEST_CASE("selection - every pick matches the NumPy oracle", "[selection][oracle]") {
  const auto fx = fixtures::load("geometry.json");
  REQUIRE(fx.at("selections").size() >= 2);
  for (const auto& c : fx.at("selections")) {
    INFO(c.at("name").get<std::string>());
    const auto w = fixtures::inputs<float>(c.at("weights"));
    const std::size_t heads = c.at("heads").get<std::size_t>(), tq = c.at("tq").get<std::size_t>(),
                      tk = c.at("tk").get<std::size_t>();
    for (const auto& p : c.at("picks")) {
      const auto qs = picked(p.at("queries")), ks = picked(p.at("keys"));
      INFO("head " << p.at("head") << " queries " << p.at("queries") << " keys " << p.at("keys"));
      attn::Selection s;
      REQUIRE(attn::weight_selection(w.data(), w.size(), heads, tq, tk,
                                     p.at("head").get<std::size_t>(), qs.data(), qs.size(),
                                     ks.data(), ks.size(), &s)
                  .ok());
      pick_close(s.mean, p.at("mean"), "mean");
      pick_close(s.sum, p.at("sum"), "sum");
      pick_close(s.column, p.at("column"), "column");
    }
  }
}

TEST_CASE("selection - wrong lengths, heads, indices out of range and repeats are refused",
          "[selection]") {
  const std::vector<float> w(2 * 3 * 4, 0.25f);
  const std::vector<std::size_t> q{0, 2}, k{3, 1, 0};
  attn::Selection s;
  const auto call = [&](std::size_t n, std::size_t head, const std::vector<std::size_t>& qs,
                        const std::vector<std::size_t>& ks) {
    return attn::weight_selection(w.data(), n, 2, 3, 4, head, qs.data(), qs.size(), ks.data(),
                                  ks.size(), &s);
  };
  REQUIRE(call(24, 1, q, k).ok());
  CHECK(s.sum == std::vector<double>(4, 0.5));
  CHECK(s.mean == std::vector<double>(4, 0.25));
  CHECK(s.column == std::vector<double>(3, 0.75));
  CHECK(call(23, 0, q, k).field == "weights");
  const attn::Status head = call(24, 2, q, k);
  CHECK(head.field == "head");
  CHECK(head.message.find("head 2 is outside heads 2") != std::string::npos);
  const attn::Status qr = call(24, 0, {0, 3}, k);
  CHECK(qr.field == "queries");
  CHECK(qr.message.find("queries[1] = 3 is outside T_q 3") != std::string::npos);
  const attn::Status kr = call(24, 0, q, {4});
  CHECK(kr.field == "keys");
  CHECK(kr.message.find("keys[0] = 4 is outside T_k 4") != std::string::npos);
  const attn::Status dup = call(24, 0, q, {1, 3, 0, 3, 1});
  CHECK(dup.field == "keys");
  CHECK(dup.message.find("keys[3] = 3 repeats keys[1]") != std::string::npos);
  CHECK(call(24, 0, {2, 2}, k).field == "queries");
  // Nothing picked: empty results, no error.
  REQUIRE(call(24, 0, {}, {}).ok());
  CHECK(s.mean.empty());
  CHECK(s.sum.empty());
  CHECK(s.column.empty());
}
