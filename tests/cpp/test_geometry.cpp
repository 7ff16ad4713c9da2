#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "attn/breakdown.hpp"
#include "attn/geometry.hpp"
#include "attn/validate.hpp"
#include "attn/variants.hpp"
#include "fixtures.hpp"

namespace {

double map_rel(double a, double b) {
  return std::abs(a - b) / std::max(1.0, std::abs(b));
}

attn::AttentionOptions map_options(const nlohmann::json& c) {
  attn::AttentionOptions o;
  o.shape = {c.at("heads").get<std::size_t>(), c.at("kvHeads").get<std::size_t>(),
             c.at("tq").get<std::size_t>(),    c.at("tk").get<std::size_t>(),
             c.at("dk").get<std::size_t>(),    1};
  o.mask.causal = c.at("causal").get<bool>();
  o.mask.window = c.at("window").get<std::size_t>();
  if (!c.at("scale").is_null()) o.scale = c.at("scale").get<double>();
  const auto& v = c.at("variant");
  o.variant.qk_norm = v.at("qkNorm").get<bool>();
  REQUIRE(attn::parse_position(v.at("position").get<std::string>().c_str(), &o.variant.position));
  REQUIRE(
      attn::parse_normalizer(v.at("normalizer").get<std::string>().c_str(), &o.variant.normalizer));
  return o;
}

void map_close(const std::vector<double>& got, const nlohmann::json& want, double tol,
               const char* what) {
  const auto w = fixtures::vec<double>(want);
  REQUIRE(got.size() == w.size());
  for (std::size_t n = 0; n < w.size(); ++n) {
    INFO(what << "[" << n << "] " << got[n] << " vs " << w[n]);
    CHECK(map_rel(got[n], w[n]) <= tol);
  }
}

template <class T>
void check_map_case(const nlohmann::json& c, double tol) {
  const attn::AttentionOptions o = map_options(c);
  const auto q = fixtures::inputs<T>(c.at("q")), k = fixtures::inputs<T>(c.at("k"));
  for (const auto& m : c.at("maps")) {
    const std::size_t head = m.at("head").get<std::size_t>();
    INFO("head " << head);
    attn::QkMap<T> r;
    REQUIRE(attn::qk_map(q.data(), q.size(), k.data(), k.size(), o, head, &r).ok());
    map_close(r.queries, m.at("queries"), tol, "queries");
    map_close(r.keys, m.at("keys"), tol, "keys");
    map_close(r.axes, m.at("axes"), tol, "axes");
    CHECK(map_rel(r.explained[0], m.at("explained")[0].get<double>()) <= tol);
    CHECK(map_rel(r.explained[1], m.at("explained")[1].get<double>()) <= tol);
    CHECK(map_rel(r.dot_mean, m.at("dotMean").get<double>()) <= tol);
    CHECK(map_rel(r.dot_std, m.at("dotStd").get<double>()) <= tol);
    CHECK(map_rel(r.prod_std, m.at("prodStd").get<double>()) <= tol);
    CHECK(map_rel(r.scale, m.at("scale").get<double>()) <= 1e-15);
  }
}

}  // namespace

TEST_CASE("geometry - every case matches the NumPy oracle's SVD", "[geometry][oracle]") {
  const auto fx = fixtures::load("geometry.json");
  REQUIRE(fx.at("cases").size() >= 10);
  for (const auto& c : fx.at("cases")) {
    INFO(c.at("name").get<std::string>());
    check_map_case<double>(c, 1e-9);
    check_map_case<float>(c, 1e-5);
  }
}

TEST_CASE("geometry - the rows are score_breakdown's, the axes orthonormal", "[geometry]") {
  const auto fx = fixtures::load("geometry.json");
  for (const auto& c : fx.at("cases")) {
    INFO(c.at("name").get<std::string>());
    const attn::AttentionOptions o = map_options(c);
    const auto q = fixtures::inputs<float>(c.at("q")), k = fixtures::inputs<float>(c.at("k"));
    const std::size_t d = o.shape.dk, h = o.shape.heads - 1;
    attn::QkMap<float> m;
    REQUIRE(attn::qk_map(q.data(), q.size(), k.data(), k.size(), o, h, &m).ok());
    // The first query and the last key, projected: breakdown's rows on the map's axes.
    attn::Breakdown<float> b;
    REQUIRE(
        attn::score_breakdown(q.data(), q.size(), k.data(), k.size(), o, {h, 0, o.shape.tk - 1}, &b)
            .ok());
    for (std::size_t a = 0; a < 2; ++a) {
      double pq = 0, pk = 0;
      for (std::size_t c2 = 0; c2 < d; ++c2) {
        pq += static_cast<double>(b.q[c2]) * m.axes[a * d + c2];
        pk += static_cast<double>(b.k[c2]) * m.axes[a * d + c2];
      }
      CHECK(std::abs(pq - m.queries[a]) <= 1e-12 * std::max(1.0, std::abs(pq)));
      CHECK(std::abs(pk - m.keys[2 * (o.shape.tk - 1) + a]) <= 1e-12 * std::max(1.0, std::abs(pk)));
    }
    // Unit axes (d_k = 1: the second is 0), orthogonal.
    double n0 = 0, n1 = 0, cross = 0;
    for (std::size_t c2 = 0; c2 < d; ++c2) {
      n0 += m.axes[c2] * m.axes[c2];
      n1 += m.axes[d + c2] * m.axes[d + c2];
      cross += m.axes[c2] * m.axes[d + c2];
    }
    CHECK(std::abs(n0 - 1) <= 1e-12);
    CHECK(std::abs(n1 - (d == 1 ? 0.0 : 1.0)) <= 1e-12);
    CHECK(std::abs(cross) <= 1e-12);
    CHECK(m.explained[0] + m.explained[1] <= 1 + 1e-12);
  }
}

TEST_CASE("geometry - d_k = 2 is exact: the coordinates are the rows", "[geometry]") {
  attn::AttentionOptions o;
  o.shape = {1, 1, 2, 2, 2, 2};
  const std::vector<double> q{1, -2, 0.5, 3}, k{-1, 4, 2, 0.25};
  attn::QkMap<double> m;
  REQUIRE(attn::qk_map(q.data(), 4, k.data(), 4, o, 0, &m).ok());
  CHECK(m.queries == q);
  CHECK(m.keys == k);
  CHECK(m.axes == std::vector<double>{1, 0, 0, 1});
  CHECK(m.scale == 1 / std::sqrt(2.0));
}

TEST_CASE("geometry - rows in a plane through 0 keep every q·k (here n = 2: X Xᵀ is 2 × 2)",
          "[geometry]") {
  attn::AttentionOptions o;
  o.shape = {1, 1, 1, 1, 3, 1};
  const std::vector<double> q{1, 2, 3}, k{-3, 1, 0.5};
  attn::QkMap<double> m;
  REQUIRE(attn::qk_map(q.data(), 3, k.data(), 3, o, 0, &m).ok());
  CHECK(std::abs(m.explained[0] + m.explained[1] - 1) <= 1e-15);
  CHECK(m.explained[0] > m.explained[1]);
  const double real = 1 * -3 + 2 * 1 + 3 * 0.5;
  CHECK(std::abs(m.queries[0] * m.keys[0] + m.queries[1] * m.keys[1] - real) <= 1e-14);
  CHECK(m.dot_mean == real);
  CHECK(m.dot_std == 0);
}

TEST_CASE("geometry - a bad head, a short q, a bad variant and the cap are refused", "[geometry]") {
  attn::AttentionOptions o;
  o.shape = {2, 1, 2, 3, 4, 4};
  const std::vector<float> q(16, 1.f), k(12, 1.f);
  attn::QkMap<float> m;
  CHECK(attn::qk_map(q.data(), 16, k.data(), 12, o, 1, &m).ok());
  const attn::Status head = attn::qk_map(q.data(), 16, k.data(), 12, o, 2, &m);
  CHECK(head.field == "head");
  CHECK(head.message.find("head 2") != std::string::npos);
  CHECK(head.message.find("heads 2") != std::string::npos);
  CHECK(attn::qk_map(q.data(), 15, k.data(), 12, o, 0, &m).field == "q");
  CHECK(attn::qk_map(q.data(), 16, k.data(), 11, o, 0, &m).field == "k");
  attn::AttentionOptions odd = o;
  odd.shape.dk = 3;
  odd.variant.position = attn::Position::kRope;
  CHECK(attn::qk_map(q.data(), 12, k.data(), 9, odd, 0, &m).field == "position");
  // The map's own buffers against the cap, checked after the attention's estimate: here
  // X (5 × 4) and two 4 × 4 matrices in double, 416 bytes, more than the attention needs.
  attn::AttentionOptions capped;
  capped.shape = {1, 1, 2, 3, 4, 1};
  const std::size_t attention =
      attn::estimate_bytes(capped.shape, sizeof(float), true, false, capped.variant);
  REQUIRE(attention < 416);
  capped.memory_cap = attention;
  const attn::Status cap = attn::qk_map(q.data(), 8, k.data(), 12, capped, 0, &m);
  CHECK(cap.field == "memory");
  CHECK(cap.message.find("416 bytes") != std::string::npos);
  capped.memory_cap = 416;
  CHECK(attn::qk_map(q.data(), 8, k.data(), 12, capped, 0, &m).ok());
}
