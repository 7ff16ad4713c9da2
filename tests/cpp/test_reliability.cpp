// Regression tests for the bugs the fuzzer (tests/fuzz) found, one case each.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/attention.hpp"
#include "attn/examples.hpp"
#include "attn/multihead.hpp"
#include "attn/tiled.hpp"

namespace {

attn::AttentionOptions small(std::size_t t, std::size_t d) {
  attn::AttentionOptions o;
  o.shape = {1, 1, t, t, d, d};
  return o;
}

std::vector<float> ramp(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  return v;
}

}  // namespace

TEST_CASE("reliability - a window wider than the sequence allows every key", "[reliability]") {
  const auto q = ramp(12), k = ramp(12), v = ramp(12);
  for (std::size_t w : {std::size_t{4}, std::size_t{5}, std::numeric_limits<std::size_t>::max(),
                        std::size_t{1} << 63}) {
    INFO("window " << w);
    attn::AttentionOptions o = small(4, 3);
    o.mask.causal = true;
    o.mask.window = w;
    attn::AttentionResult<float> r, t;
    REQUIRE(attn::attention(q.data(), 12, k.data(), 12, v.data(), 12, o, &r).ok());
    REQUIRE(attn::attention_tiled(q.data(), 12, k.data(), 12, v.data(), 12, o, &t).ok());
    CHECK(r.diag.fully_masked_rows == 0);
    CHECK(t.diag.fully_masked_rows == 0);
    CHECK(r.diag.nan_rows == 0);
    CHECK(r.weights(0, 3, 0) > 0.f);  // the last query still sees the first key
  }
}

TEST_CASE("reliability - split_heads refuses more heads than columns", "[reliability]") {
  xt::xtensor<float, 2> empty({3, 0});
  xt::xtensor<float, 3> out;
  // Used to loop heads * t times over empty slices (a hang for a huge head count).
  attn::Status st = attn::split_heads(empty, std::size_t{1} << 62, &out);
  CHECK(st.field == "heads");
  st = attn::split_heads(empty, 1, &out);
  CHECK(st.field == "heads");
  xt::xtensor<float, 2> x({2, 4});
  CHECK(attn::split_heads(x, 8, &out).field == "heads");
  CHECK(attn::split_heads(x, 4, &out).ok());
}

TEST_CASE("reliability - a scale outside float32 range is refused", "[reliability]") {
  const auto q = ramp(8), k = ramp(8), v = ramp(8);
  for (double s : {1e300, 1e39, 1e-300, 1e-46}) {
    INFO("scale " << s);
    attn::AttentionOptions o = small(2, 4);
    o.scale = s;
    attn::AttentionResult<float> r;
    CHECK(attn::attention(q.data(), 8, k.data(), 8, v.data(), 8, o, &r).field == "scale");
    CHECK(attn::attention_tiled(q.data(), 8, k.data(), 8, v.data(), 8, o, &r).field == "scale");
    attn::MhaOptions m;
    m.t = 2;
    m.d_model = 4;
    m.scale = s;
    attn::MhaResult<float> mr;
    const auto w = ramp(16);
    CHECK(attn::multi_head_attention(q.data(), 8, w.data(), 16, w.data(), 16, w.data(), 16,
                                     w.data(), 16, m, &mr)
              .field == "scale");
  }
  attn::AttentionOptions o = small(2, 4);
  o.scale = 1e38;  // large but representable: allowed
  attn::AttentionResult<float> r;
  CHECK(attn::attention(q.data(), 8, k.data(), 8, v.data(), 8, o, &r).ok());
}

TEST_CASE("reliability - a fully masked finite row with NaN values counts as a NaN row",
          "[reliability]") {
  // 'finite' makes a fully masked row the mean of every value row, NaN included.
  auto q = ramp(8), k = ramp(8), v = ramp(8);
  v[1] = std::numeric_limits<float>::quiet_NaN();
  attn::AttentionOptions o = small(2, 4);
  o.fill = attn::MaskFill::kFinite;
  const std::uint8_t pad[2] = {0, 0};
  o.mask.key_padding = {pad, 2};
  attn::AttentionResult<float> r, t;
  REQUIRE(attn::attention(q.data(), 8, k.data(), 8, v.data(), 8, o, &r).ok());
  REQUIRE(attn::attention_tiled(q.data(), 8, k.data(), 8, v.data(), 8, o, &t).ok());
  CHECK(std::isnan(r.output(0, 0, 1)));
  CHECK(r.diag.fully_masked_rows == 2);
  CHECK(r.diag.nan_rows == 2);
  CHECK(t.diag.nan_rows == 2);
}

TEST_CASE("reliability - the entropy study refuses work over its budget", "[reliability]") {
  std::vector<attn::EntropyPoint> pts;
  const attn::Status st = attn::entropy_study({8192, 8192}, 4096, 100000, 0, &pts);
  CHECK(st.field == "queries");
  CHECK(st.message.find("queries") != std::string::npos);
  // The page's study (1..1024, 16 keys, 1000 queries) stays well inside.
  CHECK(attn::entropy_study({1, 4, 16, 64, 256, 1024}, 16, 1000, 0, &pts).ok());
}

TEST_CASE("reliability - error messages name their field", "[reliability]") {
  std::vector<attn::EntropyPoint> pts;
  attn::Status st = attn::entropy_study({0}, 16, 10, 0, &pts);
  CHECK(st.field == "dks");
  CHECK(st.message.find("dks") != std::string::npos);
  attn::RandomExampleOptions ro;
  ro.t = 4096;
  ro.d_model = 4096;
  attn::Example e;
  st = attn::random_example(ro, &e);
  CHECK(st.field == "memory");
  CHECK(st.message.find("memory") != std::string::npos);
}
