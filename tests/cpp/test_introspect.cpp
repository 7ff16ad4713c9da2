// attn/introspect.hpp: the allowed mask against the NumPy oracle's rule (tests/fixtures/masks.json,
// tests/oracle/gen_masks.py), per-head NaN rows against the oracle's attention results, tiles.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "attn/introspect.hpp"
#include "attn/tiled.hpp"  // attention_tiled
#include "fixtures.hpp"

TEST_CASE("introspect - allowed_mask equals the NumPy oracle's mask", "[introspect][oracle]") {
  const auto fx = fixtures::load("masks.json").at("cases");
  REQUIRE(fx.size() >= 10);
  for (const auto& c : fx) {
    INFO(c.at("name").get<std::string>());
    const std::size_t tq = c.at("tq"), tk = c.at("tk");
    std::vector<std::uint8_t> pad, mask;
    if (!c.at("keyPadding").is_null()) pad = fixtures::bytes(c.at("keyPadding"));
    if (!c.at("mask").is_null()) mask = fixtures::bytes(c.at("mask"));
    attn::MaskSpec m;
    m.causal = c.at("causal");
    m.window = c.at("window");
    m.key_padding = pad.empty() ? nullptr : attn::Bytes(pad.data(), pad.size());
    m.mask = mask.empty() ? nullptr : attn::Bytes(mask.data(), mask.size());
    std::vector<std::uint8_t> got;
    REQUIRE(attn::allowed_mask(m, tq, tk, attn::kDefaultMemoryCap, &got).ok());
    std::string s;
    for (std::uint8_t a : got) s += a ? '1' : '0';
    CHECK(s == c.at("allowed").get<std::string>());
  }
}

TEST_CASE("introspect - allowed_mask checks its arguments like an attention call", "[introspect]") {
  attn::MaskSpec m;
  std::vector<std::uint8_t> out;
  CHECK(attn::allowed_mask(m, 0, 4, attn::kDefaultMemoryCap, &out).field == "tq");
  CHECK(attn::allowed_mask(m, 4, 0, attn::kDefaultMemoryCap, &out).field == "tk");
  const std::uint8_t pad[3] = {1, 1, 1};
  m.key_padding = {pad, 3};
  CHECK(attn::allowed_mask(m, 4, 4, attn::kDefaultMemoryCap, &out).field == "keyPadding");
  m.key_padding = nullptr;
  m.mask = {pad, 3};
  CHECK(attn::allowed_mask(m, 4, 4, attn::kDefaultMemoryCap, &out).field == "mask");
  m.mask = nullptr;
  const attn::Status st = attn::allowed_mask(m, 100000, 100000, attn::kDefaultMemoryCap, &out);
  CHECK(st.code == attn::StatusCode::kResourceExhausted);
  CHECK(out.empty());
}

TEST_CASE("introspect - nan_rows_per_head matches the oracle's NaN rows head by head",
          "[introspect][oracle]") {
  const auto fx = fixtures::load("attention.json").at("cases");
  int with_nan = 0;
  for (const auto& c : fx) {
    auto k = fixtures::read_case(c);
    INFO(k.name);
    const auto o = fixtures::bind(k);
    const auto q = fixtures::inputs<float>(c.at("q")), kk = fixtures::inputs<float>(c.at("k")),
               v = fixtures::inputs<float>(c.at("v"));
    const auto out = fixtures::vec<double>(c.at("expect").at("output"));
    const auto w = fixtures::vec<double>(c.at("expect").at("weights"));
    const std::size_t H = o.shape.heads, T = o.shape.tq, TK = o.shape.tk, DV = o.shape.dv;
    std::vector<std::size_t> want(H, 0);
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t i = 0; i < T; ++i) {
        bool nan = false;
        for (std::size_t j = 0; j < DV; ++j) nan |= std::isnan(out[(h * T + i) * DV + j]);
        for (std::size_t j = 0; j < TK && !w.empty(); ++j)
          nan |= std::isnan(w[(h * T + i) * TK + j]);
        want[h] += nan;
      }
    }
    for (bool tiled : {false, true}) {
      attn::AttentionResult<float> r;
      const attn::Status st = tiled ? attn::attention_tiled(q.data(), q.size(), kk.data(),
                                                            kk.size(), v.data(), v.size(), o, &r)
                                    : attn::attention(q.data(), q.size(), kk.data(), kk.size(),
                                                      v.data(), v.size(), o, &r);
      REQUIRE(st.ok());
      const auto got = attn::nan_rows_per_head(r);
      REQUIRE(got.size() == H);
      for (std::size_t h = 0; h < H; ++h) CHECK(got[h] == want[h]);
      std::size_t sum = 0;
      for (auto n : got) sum += n;
      CHECK(sum == r.diag.nan_rows);
      if (sum) ++with_nan;
    }
  }
  CHECK(with_nan >= 4);  // the fixture's fully masked neg_inf rows and overflow rows
}
