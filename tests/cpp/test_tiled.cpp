#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "attn/attention.hpp"
#include "attn/tiled.hpp"
#include "fixtures.hpp"
#include "random_inputs.hpp"

using attn::AttentionOptions;
using attn::AttentionResult;
using attn::Shape;

namespace {

template <class T>
void run_both(const testing_inputs::Qkv<T>& in, const AttentionOptions& o,
              AttentionResult<T>* naive, AttentionResult<T>* tiled) {
  REQUIRE(attn::attention(in.q.data(), in.q.size(), in.k.data(), in.k.size(), in.v.data(),
                          in.v.size(), o, naive)
              .ok());
  REQUIRE(attn::attention_tiled(in.q.data(), in.q.size(), in.k.data(), in.k.size(), in.v.data(),
                                in.v.size(), o, tiled)
              .ok());
}

}  // namespace

TEST_CASE("tiled - matches the NumPy oracle for every fixture", "[tiled][oracle]") {
  const auto fx = fixtures::load("attention.json");
  std::map<std::string, double> worst;
  for (const auto& jc : fx.at("cases")) {
    fixtures::Case c = fixtures::read_case(jc);
    INFO("case " << c.name);
    const auto q = fixtures::inputs<float>(jc.at("q")), k = fixtures::inputs<float>(jc.at("k")),
               v = fixtures::inputs<float>(jc.at("v"));
    AttentionResult<float> r;
    REQUIRE(attn::attention_tiled(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(),
                                  fixtures::bind(c), &r)
                .ok());
    CHECK(r.weights.size() == 0);
    const auto& e = jc.at("expect");
    const auto out = fixtures::vec<double>(e.at("output")),
               ent = fixtures::vec<double>(e.at("entropy"));
    const double d = fixtures::max_abs_diff(r.output.data(), out.data(), out.size());
    CHECK(d <= (c.family == "large_logits" ? 2e-3 : 2e-5));
    CHECK(fixtures::max_abs_diff(r.entropy.data(), ent.data(), ent.size()) <= 1e-4);
    CHECK(r.diag.fully_masked_rows == e.at("fullyMaskedRows").get<std::size_t>());
    CHECK(r.diag.nan_rows == e.at("nanRows").get<std::size_t>());
    worst[c.family] = std::max(worst[c.family], d);
  }
  for (const auto& [family, d] : worst) WARN("tiled f32 max|delta| " << family << ": " << d);
}

TEST_CASE("tiled - equals naive within 1e-5 (float32) for every option and T up to 512",
          "[tiled][property]") {
  std::mt19937 g(2024);
  const std::size_t sizes[] = {1, 2, 5, 63, 64, 65, 127, 130, 200, 333, 512};
  double worst = 0;
  int trial = 0;
  for (std::size_t tq : sizes) {
    for (int variant = 0; variant < 4; ++variant, ++trial) {
      const std::size_t tk = variant == 3 ? std::max<std::size_t>(1, tq / 2 + 3) : tq;
      Shape s{2,  1 + std::size_t(variant % 2),      tq,
              tk, std::size_t(1 + (trial * 7) % 33), std::size_t(1 + (trial * 5) % 17)};
      if (s.heads % s.kv_heads) s.heads = s.kv_heads;
      auto in = testing_inputs::make_qkv<float>(s, g);
      std::vector<std::uint8_t> pad(tk, 1), mask(tq * tk, 1);
      for (std::size_t j = 0; j < tk; j += 3) pad[j] = 0;
      for (std::size_t x = 0; x < mask.size(); x += 7) mask[x] = 0;
      AttentionOptions o;
      o.shape = s;
      o.mask.causal = variant != 1;
      o.mask.window = variant == 2 ? 17 : 0;
      o.mask.key_padding = variant >= 1 ? attn::Bytes(pad.data(), pad.size()) : nullptr;
      o.mask.mask = variant == 3 ? attn::Bytes(mask.data(), mask.size()) : nullptr;
      o.fill = static_cast<attn::MaskFill>(trial % 3);
      if (trial % 4 == 1) o.scale = 0.7;
      INFO("tq=" << tq << " tk=" << tk << " variant=" << variant);
      AttentionResult<float> a, b;
      run_both(in, o, &a, &b);
      const double d = fixtures::max_abs_diff(a.output.data(), b.output.data(), a.output.size());
      CHECK(d <= 1e-5);
      CHECK(fixtures::max_abs_diff(a.lse.data(), b.lse.data(), a.lse.size()) <= 1e-4);
      CHECK(fixtures::max_abs_diff(a.entropy.data(), b.entropy.data(), a.entropy.size()) <= 1e-4);
      CHECK(a.diag.fully_masked_rows == b.diag.fully_masked_rows);
      CHECK(a.diag.nan_rows == b.diag.nan_rows);
      worst = std::max(worst, d);
    }
  }
  WARN("tiled vs naive f32 max|delta| over " << trial << " configurations: " << worst);
}

TEST_CASE("tiled - lse is the log of the naive softmax denominator", "[tiled][property]") {
  std::mt19937 g(31);
  const Shape s{1, 1, 70, 90, 8, 4};
  auto in = testing_inputs::make_qkv<double>(s, g, 3.0);
  AttentionOptions o;
  o.shape = s;
  AttentionResult<double> a, b;
  run_both(in, o, &a, &b);
  for (std::size_t i = 0; i < s.tq; ++i) {
    // weights_ij = exp(s_ij - lse_i)  =>  lse_i = s_ij - ln w_ij for any j.
    const double sc = 1 / std::sqrt(8.0);
    double dot = 0;
    for (std::size_t c = 0; c < 8; ++c) dot += in.q[i * 8 + c] * in.k[c];
    CHECK(b.lse.data()[i] ==
          Approx(sc * dot - std::log(a.weights.data()[i * s.tk])).epsilon(1e-10));
  }
}

TEST_CASE("tiled - working memory does not grow with T", "[tiled][memory]") {
  const Shape small{1, 1, 64, 64, 64, 64}, huge{8, 8, 16384, 16384, 64, 64};
  CHECK(attn::tiled_workspace_bytes(small, 4) == attn::tiled_workspace_bytes(huge, 4));
  CHECK(attn::tiled_workspace_bytes(huge, 4) < (std::size_t{16} << 20));
  // The naive kernel's estimate for the same shape needs the whole T x T matrix.
  CHECK(attn::estimate_bytes(huge, 4, true, false) > std::size_t{8} * 16384 * 16384 * 4);
  CHECK(attn::estimate_bytes(huge, 4, false, false) < std::size_t{256} << 20);
  // And the tiled kernel accepts it under the default cap where the naive one refuses.
  AttentionOptions o;
  o.shape = huge;
  const std::size_t n = 8 * 16384 * 64;
  CHECK(attn::validate(o, n, n, n, false).ok());
  CHECK(attn::validate(o, n, n, n, true).field == "memory");
}

TEST_CASE("tiled - rejects returnScores and bad shapes with the field name", "[tiled][errors]") {
  const std::vector<float> buf(16, 1.f);
  AttentionOptions o;
  o.shape = {1, 1, 2, 2, 2, 2};
  o.return_scores = true;
  AttentionResult<float> r;
  attn::Status st = attn::attention_tiled(buf.data(), 4, buf.data(), 4, buf.data(), 4, o, &r);
  CHECK(st.field == "returnScores");
  o.return_scores = false;
  o.shape.tk = 0;
  st = attn::attention_tiled(buf.data(), 4, buf.data(), 0, buf.data(), 0, o, &r);
  CHECK(st.field == "tk");
}

TEST_CASE("tiled - equals naive for odd T and d_k off the vector width and the tile",
          "[tiled][property]") {
  std::mt19937 g(4242);
  const std::size_t ts[] = {1, 3, 5, 17, 63, 65, 127, 129};
  const std::size_t dks[] = {1, 3, 5, 33, 64, 65};
  double worst = 0;
  int trial = 0;
  for (std::size_t t : ts) {
    for (std::size_t dk : dks) {
      for (int variant = 0; variant < 4; ++variant, ++trial) {
        const std::size_t tk = variant == 3 ? t + 5 : t;
        const Shape s{2, variant == 2 ? 1u : 2u, t, tk, dk, 1 + (dk * 3 + t) % 67};
        auto in = testing_inputs::make_qkv<float>(s, g);
        std::vector<std::uint8_t> pad(tk, 1);
        for (std::size_t j = 2; j < tk; j += 4) pad[j] = 0;
        AttentionOptions o;
        o.shape = s;
        o.mask.causal = variant != 1;
        o.mask.window = variant == 2 ? 6 : 0;
        o.mask.key_padding = variant == 3 ? attn::Bytes(pad.data(), pad.size()) : nullptr;
        o.fill = static_cast<attn::MaskFill>(trial % 3);
        INFO("T=" << t << " tk=" << tk << " dk=" << dk << " variant=" << variant);
        AttentionResult<float> a, b;
        run_both(in, o, &a, &b);
        const double d = fixtures::max_abs_diff(a.output.data(), b.output.data(), a.output.size());
        CHECK(d <= 1e-5);
        CHECK(fixtures::max_abs_diff(a.lse.data(), b.lse.data(), a.lse.size()) <= 1e-4);
        CHECK(fixtures::max_abs_diff(a.entropy.data(), b.entropy.data(), a.entropy.size()) <= 1e-4);
        CHECK(a.diag.fully_masked_rows == b.diag.fully_masked_rows);
        CHECK(a.diag.nan_rows == b.diag.nan_rows);
        worst = std::max(worst, d);
      }
    }
  }
  WARN("tiled vs naive f32 (odd sizes) max|delta| over " << trial << " shapes: " << worst);
}
