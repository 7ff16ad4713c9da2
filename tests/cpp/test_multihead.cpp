#include <catch2/catch.hpp>

#include "attn/multihead.hpp"
#include "fixtures.hpp"
#include "random_inputs.hpp"

TEST_CASE("multihead - split_heads then merge_heads is the identity", "[multihead]") {
  xt::xtensor<double, 2> x({5, 12});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<double>(i);
  xt::xtensor<double, 3> h;
  REQUIRE(attn::split_heads(x, 3, &h).ok());
  REQUIRE(h.shape(0) == 3);
  REQUIRE(h.shape(1) == 5);
  REQUIRE(h.shape(2) == 4);
  CHECK(h(1, 2, 3) == x(2, 1 * 4 + 3));  // head 1, row 2, column 3
  const auto back = attn::merge_heads(h);
  CHECK(back == x);
}

TEST_CASE("multihead - split_heads refuses a width not divisible by heads", "[multihead][errors]") {
  xt::xtensor<float, 2> x({2, 10});
  xt::xtensor<float, 3> h;
  const attn::Status st = attn::split_heads(x, 3, &h);
  CHECK(st.field == "heads");
}

namespace {
// A multihead.json case's options, without the byte masks (their storage is the caller's).
template <class Json>
attn::MhaOptions fixture_options(const Json& o) {
  attn::MhaOptions m;
  m.t = o.at("t");
  m.d_model = o.at("dModel");
  m.heads = o.at("heads");
  m.kv_heads = o.value("kvHeads", 0);
  m.dk = o.value("dk", 0);
  m.dv = o.value("dv", 0);
  m.mask.causal = o.value("causal", false);
  m.mask.window = o.value("window", 0);
  if (o.contains("scale") && !o["scale"].is_null()) m.scale = o["scale"].template get<double>();
  attn::parse_mask_fill(o.value("maskFill", std::string("neg_inf")).c_str(), &m.fill);
  return m;
}
}  // namespace

TEST_CASE("multihead - matches the NumPy oracle", "[multihead][oracle]") {
  const auto fx = fixtures::load("multihead.json");
  REQUIRE(fx.at("cases").size() > 0);
  for (const auto& c : fx.at("cases")) {
    INFO(c.at("name").get<std::string>());
    const auto& o = c.at("opts");
    attn::MhaOptions m = fixture_options(o);
    std::vector<std::uint8_t> pad, mask;
    if (o.contains("keyPadding") && !o["keyPadding"].is_null())
      pad = fixtures::bytes(o["keyPadding"]);
    if (o.contains("mask") && !o["mask"].is_null()) mask = fixtures::bytes(o["mask"]);
    m.mask.key_padding = pad.empty() ? nullptr : attn::Bytes(pad.data(), pad.size());
    m.mask.mask = mask.empty() ? nullptr : attn::Bytes(mask.data(), mask.size());
    for (int tiled = 0; tiled < 2; ++tiled) {
      m.tiled = tiled;
      const auto x = fixtures::inputs<float>(c.at("x")), wq = fixtures::inputs<float>(c.at("wq")),
                 wk = fixtures::inputs<float>(c.at("wk")), wv = fixtures::inputs<float>(c.at("wv")),
                 wo = fixtures::inputs<float>(c.at("wo"));
      attn::MhaResult<float> r;
      REQUIRE(attn::multi_head_attention(x.data(), x.size(), wq.data(), wq.size(), wk.data(),
                                         wk.size(), wv.data(), wv.size(), wo.data(), wo.size(), m,
                                         &r)
                  .ok());
      const auto& e = c.at("expect");
      const auto out = fixtures::vec<double>(e.at("output")),
                 merged = fixtures::vec<double>(e.at("merged"));
      REQUIRE(out.size() == r.output.size());
      // Outputs are sums of d_model products of O(1) numbers: compare relative to their scale.
      double scale = 1;
      for (double v : out) scale = std::max(scale, std::abs(v));
      CHECK(fixtures::max_abs_diff(r.output.data(), out.data(), out.size()) <= 2e-5 * scale);
      CHECK(fixtures::max_abs_diff(r.merged.data(), merged.data(), merged.size()) <= 2e-5 * scale);
      if (!tiled && e.contains("weights")) {
        const auto w = fixtures::vec<double>(e.at("weights"));
        CHECK(fixtures::max_abs_diff(r.attn.weights.data(), w.data(), w.size()) <= 2e-5);
      }
    }
  }
}

TEST_CASE("multihead - split_heads and merge_heads match the oracle", "[multihead][oracle]") {
  const auto fx = fixtures::load("multihead.json").at("splitMerge");
  REQUIRE(fx.size() > 0);
  for (const auto& c : fx) {
    const std::size_t t = c.at("t"), heads = c.at("heads"), d = c.at("d");
    xt::xtensor<double, 2> x({t, heads * d});
    const auto xs = fixtures::vec<double>(c.at("x"));
    std::copy(xs.begin(), xs.end(), x.data());
    xt::xtensor<double, 3> h;
    REQUIRE(attn::split_heads(x, heads, &h).ok());
    const auto want = fixtures::vec<double>(c.at("split"));
    CHECK(fixtures::max_abs_diff(h.data(), want.data(), want.size()) == 0.0);
    const auto merged = fixtures::vec<double>(c.at("merged"));
    const auto back = attn::merge_heads(h);
    CHECK(fixtures::max_abs_diff(back.data(), merged.data(), merged.size()) == 0.0);
  }
}

TEST_CASE("multihead - impossible shapes are errors naming the field", "[multihead][errors]") {
  const std::vector<float> buf(4096, 0.1f);
  attn::MhaOptions m;
  m.t = 4;
  m.d_model = 10;
  m.heads = 3;
  attn::MhaResult<float> r;
  auto run = [&](attn::MhaOptions o, std::size_t xl, std::size_t wql, std::size_t wkl,
                 std::size_t wvl, std::size_t wol) {
    return attn::multi_head_attention(buf.data(), xl, buf.data(), wql, buf.data(), wkl, buf.data(),
                                      wvl, buf.data(), wol, o, &r);
  };
  CHECK(run(m, 40, 100, 100, 100, 100).field == "dModel");  // 10 % 3 != 0 and no dk given
  m.dk = 4;                                                 // explicit d_k makes it possible
  CHECK(run(m, 40, 120, 120, 120, 120).ok());
  CHECK(run(m, 39, 120, 120, 120, 120).field == "x");
  CHECK(run(m, 40, 121, 120, 120, 120).field == "wq");
  CHECK(run(m, 40, 120, 12, 120, 120).field == "wk");
  CHECK(run(m, 40, 120, 120, 120, 1).field == "wo");
  m.kv_heads = 2;
  CHECK(run(m, 40, 120, 80, 80, 120).field == "kvHeads");
  m.kv_heads = 1;
  CHECK(run(m, 40, 120, 40, 40, 120).ok());  // MQA
  m.t = 0;
  CHECK(run(m, 0, 120, 40, 40, 120).field == "t");
}

TEST_CASE("multihead - estimate_mha_bytes is exactly the cap the call enforces",
          "[multihead][memory]") {
  // A cap equal to the estimate is accepted, one byte less is refused: the estimate the page
  // shows is the core's own rule, for both kernels and several shapes.
  const std::vector<float> buf(1 << 16, 0.01f);
  struct S {
    std::size_t t, d, h, kv, dk, dv;
  };
  for (const S s : {S{64, 16, 2, 2, 8, 8}, S{33, 12, 4, 2, 3, 5}, S{1, 1, 1, 1, 1, 1}}) {
    for (bool tiled : {false, true}) {
      attn::MhaOptions m;
      m.t = s.t;
      m.d_model = s.d;
      m.heads = s.h;
      m.kv_heads = s.kv;
      m.dk = s.dk;
      m.dv = s.dv;
      m.tiled = tiled;
      m.mask.causal = true;
      attn::MhaOptions resolved = m;
      REQUIRE(attn::resolve_mha(&resolved).ok());
      const std::size_t need = attn::estimate_mha_bytes(resolved);
      INFO("t " << s.t << " tiled " << tiled << " estimate " << need);
      attn::MhaResult<float> r;
      auto run = [&](std::size_t cap) {
        attn::MhaOptions o = m;
        o.memory_cap = cap;
        return attn::multi_head_attention(buf.data(), s.t * s.d, buf.data(), s.d * s.h * s.dk,
                                          buf.data(), s.d * s.kv * s.dk, buf.data(),
                                          s.d * s.kv * s.dv, buf.data(), s.h * s.dv * s.d, o, &r);
      };
      CHECK(run(need).ok());
      const attn::Status st = run(need - 1);
      CHECK(st.code == attn::StatusCode::kResourceExhausted);
      CHECK(st.field == "memory");
    }
  }
}

TEST_CASE("multihead - a small request over a small cap names its size in bytes, not 0 MiB",
          "[multihead][memory]") {
  const std::vector<float> buf(64, 0.5f);
  attn::MhaOptions m;
  m.t = 2;
  m.d_model = 2;
  m.heads = 1;
  m.memory_cap = 100;
  attn::MhaResult<float> r;
  const attn::Status st = attn::multi_head_attention(buf.data(), 4, buf.data(), 4, buf.data(), 4,
                                                     buf.data(), 4, buf.data(), 4, m, &r);
  REQUIRE(st.code == attn::StatusCode::kResourceExhausted);
  INFO(st.message);
  CHECK(st.message.find("0 MiB") == std::string::npos);
  CHECK(st.message.find("100 bytes") != std::string::npos);  // the cap, as given
}

TEST_CASE(
    "multihead - merge_and_project alone matches the NumPy oracle and the full call bit for bit",
    "[multihead][oracle]") {
  const auto fx = fixtures::load("multihead.json");
  for (const auto& c : fx.at("cases")) {
    INFO(c.at("name").get<std::string>());
    const auto& o = c.at("opts");
    if ((o.contains("keyPadding") && !o["keyPadding"].is_null()) ||
        (o.contains("mask") && !o["mask"].is_null()))
      continue;  // the masks do not matter here: step 4 sees only the per-head outputs
    const attn::MhaOptions m = fixture_options(o);
    const auto x = fixtures::inputs<float>(c.at("x")), wq = fixtures::inputs<float>(c.at("wq")),
               wk = fixtures::inputs<float>(c.at("wk")), wv = fixtures::inputs<float>(c.at("wv")),
               wo = fixtures::inputs<float>(c.at("wo"));
    attn::MhaResult<float> full;
    REQUIRE(attn::multi_head_attention(x.data(), x.size(), wq.data(), wq.size(), wk.data(),
                                       wk.size(), wv.data(), wv.size(), wo.data(), wo.size(), m,
                                       &full)
                .ok());
    // Per-head outputs from a separate attention call on the split projections (what the page
    // does when only the mask changed), then step 4 alone.
    attn::MhaOptions res = m;
    REQUIRE(attn::resolve_mha(&res).ok());
    attn::AttentionOptions ao;
    ao.shape = attn::Shape{res.heads, res.kv_heads, res.t, res.t, res.dk, res.dv};
    ao.mask = m.mask;
    ao.scale = m.scale;
    ao.fill = m.fill;
    attn::AttentionResult<float> a;
    REQUIRE(attn::attention(full.q.data(), full.q.size(), full.k.data(), full.k.size(),
                            full.v.data(), full.v.size(), ao, &a)
                .ok());
    xt::xtensor<float, 2> merged, output;
    REQUIRE(attn::merge_and_project(a.output.data(), a.output.size(), wo.data(), wo.size(),
                                    attn::MergeOptions{res.t, res.heads, res.dv, res.d_model},
                                    &merged, &output)
                .ok());
    REQUIRE(output.size() == full.output.size());
    CHECK(std::equal(output.begin(), output.end(), full.output.begin()));
    CHECK(std::equal(merged.begin(), merged.end(), full.merged.begin()));
    const auto want = fixtures::vec<double>(c.at("expect").at("output"));
    double scale = 1;
    for (double v : want) scale = std::max(scale, std::abs(v));
    CHECK(fixtures::max_abs_diff(output.data(), want.data(), want.size()) <= 2e-5 * scale);
  }
}

TEST_CASE("multihead - merge_and_project refuses wrong lengths and zero sizes, naming the field",
          "[multihead][errors]") {
  std::vector<float> y(2 * 3 * 4, 1.0f), wo(8 * 5, 1.0f);
  xt::xtensor<float, 2> merged, output;
  const auto run = [&](std::size_t y_len, std::size_t wo_len, attn::MergeOptions o) {
    return attn::merge_and_project(y.data(), y_len, wo.data(), wo_len, o, &merged, &output);
  };
  CHECK(run(y.size(), wo.size(), {3, 2, 4, 5}).ok());
  CHECK(output.shape(0) == 3);
  CHECK(output.shape(1) == 5);
  CHECK(output(0, 0) == 8.0f);  // a row of eight ones times a column of eight ones
  CHECK(run(y.size() - 1, wo.size(), {3, 2, 4, 5}).field == "headOutputs");
  CHECK(run(y.size(), wo.size() + 1, {3, 2, 4, 5}).field == "wo");
  CHECK(run(y.size(), wo.size(), {0, 2, 4, 5}).field == "t");
  CHECK(run(y.size(), wo.size(), {3, 0, 4, 5}).field == "heads");
  CHECK(run(y.size(), wo.size(), {3, 2, 0, 5}).field == "dv");
  CHECK(run(y.size(), wo.size(), {3, 2, 4, 0}).field == "dModel");
  // the results (3 x 8 merged + 3 x 5 output floats = 156 bytes) against the cap
  CHECK(run(y.size(), wo.size(), {3, 2, 4, 5, 156}).ok());
  CHECK(run(y.size(), wo.size(), {3, 2, 4, 5, 155}).field == "memory");
}
