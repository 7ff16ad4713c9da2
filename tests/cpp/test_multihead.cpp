#include <array>
#include <catch2/catch.hpp>
#include <cstring>

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

namespace {
// A cross_mha.json case: x (T_q rows), xKv (T_k rows), the weights and the options.
template <class T>
struct CrossCase {
  attn::MhaOptions m;
  std::vector<std::uint8_t> pad;
  std::vector<T> x, x_kv, wq, wk, wv, wo;

  template <class Json>
  explicit CrossCase(const Json& c) {
    const auto& o = c.at("opts");
    m = fixture_options(o);
    m.tk = o.at("tk");
    if (!o["keyPadding"].is_null()) pad = fixtures::bytes(o["keyPadding"]);
    m.mask.key_padding = pad.empty() ? nullptr : attn::Bytes(pad.data(), pad.size());
    x = fixtures::inputs<T>(c.at("x"));
    x_kv = fixtures::inputs<T>(c.at("xKv"));
    wq = fixtures::inputs<T>(c.at("wq"));
    wk = fixtures::inputs<T>(c.at("wk"));
    wv = fixtures::inputs<T>(c.at("wv"));
    wo = fixtures::inputs<T>(c.at("wo"));
  }
  attn::Status run(const attn::MhaOptions& o, attn::MhaResult<T>* r) const {
    return attn::multi_head_attention(x.data(), x.size(), x_kv.data(), x_kv.size(), wq.data(),
                                      wq.size(), wk.data(), wk.size(), wv.data(), wv.size(),
                                      wo.data(), wo.size(), o, r);
  }
};

// Every expectation of a cross_mha.json case within tol (outputs relative to their scale).
template <class T, class Json>
void check_cross(const attn::MhaResult<T>& r, const attn::MhaOptions& m, const Json& e, double tol,
                 bool weights) {
  const std::size_t h = m.heads, hkv = m.kv_heads, tq = m.t, tk = m.tk;
  CHECK(r.q.shape() == std::array<std::size_t, 3>{h, tq, m.dk});
  CHECK(r.k.shape() == std::array<std::size_t, 3>{hkv, tk, m.dk});
  CHECK(r.v.shape() == std::array<std::size_t, 3>{hkv, tk, m.dv});
  CHECK(r.output.shape() == std::array<std::size_t, 2>{tq, m.d_model});
  const auto out = fixtures::vec<double>(e.at("output"));
  double scale = 1;
  for (double v : out) scale = std::max(scale, std::abs(v));
  const auto near = [&](const char* key, const T* got, std::size_t n) {
    const auto want = fixtures::vec<double>(e.at(key));
    INFO(key);
    REQUIRE(want.size() == n);
    CHECK(fixtures::max_abs_diff(got, want.data(), n) <= tol * scale);
  };
  near("output", r.output.data(), r.output.size());
  near("merged", r.merged.data(), r.merged.size());
  near("headOutputs", r.attn.output.data(), r.attn.output.size());
  near("k", r.k.data(), r.k.size());
  near("v", r.v.data(), r.v.size());
  if (weights) {
    REQUIRE(r.attn.weights.size() == h * tq * tk);
    near("weights", r.attn.weights.data(), r.attn.weights.size());
  }
}
}  // namespace

TEST_CASE("multihead - cross-attention (T_q != T_k) matches the NumPy oracle",
          "[multihead][cross][oracle]") {
  const auto fx = fixtures::load("cross_mha.json");
  REQUIRE(fx.at("cases").size() == 4);
  for (const auto& c : fx.at("cases")) {
    INFO(c.at("name").get<std::string>());
    const CrossCase<float> f(c);
    attn::MhaOptions m = f.m;
    REQUIRE(attn::resolve_mha(&m).ok());
    for (int tiled = 0; tiled < 2; ++tiled) {
      INFO("tiled " << tiled);
      attn::MhaOptions o = f.m;
      o.tiled = tiled;
      attn::MhaResult<float> r;
      REQUIRE(f.run(o, &r).ok());
      check_cross(r, m, c.at("expect"), 1e-5, !tiled);
    }
    // float64 all the way: the oracle's numbers to its 12 printed digits.
    const CrossCase<double> f64(c);
    attn::MhaResult<double> r64;
    REQUIRE(f64.run(f64.m, &r64).ok());
    check_cross(r64, m, c.at("expect"), 1e-12, true);
  }
}

TEST_CASE("multihead - cross-attention refuses wrong lengths, naming the field",
          "[multihead][cross][errors]") {
  const auto fx = fixtures::load("cross_mha.json");
  const auto& c = fx.at("cases").at(2);  // key padding, T_q 4, T_k 6
  CrossCase<float> f(c);
  REQUIRE(f.m.t != f.m.tk);
  attn::MhaResult<float> r;
  REQUIRE(f.run(f.m, &r).ok());
  // x_kv one row short: T_k * d_model values wanted.
  f.x_kv.resize(f.x_kv.size() - f.m.d_model);
  attn::Status st = f.run(f.m, &r);
  CHECK(st.field == "xKv");
  CHECK(st.message.find("tk*dModel") != std::string::npos);
  f.x_kv = fixtures::inputs<float>(c.at("xKv"));
  // keyPadding of length T_q instead of T_k.
  attn::MhaOptions o = f.m;
  const std::vector<std::uint8_t> short_pad(f.m.t, 1);
  o.mask.key_padding = attn::Bytes(short_pad.data(), short_pad.size());
  st = f.run(o, &r);
  CHECK(st.field == "keyPadding");
  CHECK(st.message.find("tk = 6") != std::string::npos);
  // An explicit mask is (T_q, T_k): one of T_q * T_q entries is refused, T_q * T_k taken.
  o = f.m;
  std::vector<std::uint8_t> mask(f.m.t * f.m.t, 1);
  o.mask.mask = attn::Bytes(mask.data(), mask.size());
  CHECK(f.run(o, &r).field == "mask");
  mask.assign(f.m.t * f.m.tk, 1);
  o.mask.mask = attn::Bytes(mask.data(), mask.size());
  CHECK(f.run(o, &r).ok());
  // tk other than 0 or t to the self-attention overload.
  o = f.m;
  o.mask.key_padding = nullptr;
  st = attn::multi_head_attention(f.x.data(), f.x.size(), f.wq.data(), f.wq.size(), f.wk.data(),
                                  f.wk.size(), f.wv.data(), f.wv.size(), f.wo.data(), f.wo.size(),
                                  o, &r);
  CHECK(st.field == "tk");
  CHECK(st.message.find("xKv") != std::string::npos);
  o.tk = o.t;  // tk = t is self-attention
  CHECK(attn::multi_head_attention(f.x.data(), f.x.size(), f.wq.data(), f.wq.size(), f.wk.data(),
                                   f.wk.size(), f.wv.data(), f.wv.size(), f.wo.data(), f.wo.size(),
                                   o, &r)
            .ok());
}

TEST_CASE("multihead - estimate_mha_bytes counts T_k for K, V and the attention",
          "[multihead][cross]") {
  const auto fx = fixtures::load("cross_mha.json");
  for (const auto& c : fx.at("cases")) {
    INFO(c.at("name").get<std::string>());
    const CrossCase<float> f(c);
    attn::MhaOptions m = f.m;
    REQUIRE(attn::resolve_mha(&m).ok());
    const std::size_t need = attn::estimate_mha_bytes(m);
    attn::MhaOptions self = m;  // T_k = T_q: K, V and the scores shrink or grow with T_k
    self.tk = self.t;
    const std::size_t self_need = attn::estimate_mha_bytes(self);
    CHECK((m.tk > m.t ? need > self_need : need < self_need));
    attn::MhaOptions o = f.m;
    attn::MhaResult<float> r;
    o.memory_cap = need;
    CHECK(f.run(o, &r).ok());
    o.memory_cap = need - 1;
    CHECK(f.run(o, &r).field == "memory");
  }
}

TEST_CASE(
    "multihead - self-attention through the cross overload (x_kv = x) is the same, bit for "
    "bit",
    "[multihead][cross]") {
  const auto fx = fixtures::load("multihead.json");
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
    const auto x = fixtures::inputs<float>(c.at("x")), wq = fixtures::inputs<float>(c.at("wq")),
               wk = fixtures::inputs<float>(c.at("wk")), wv = fixtures::inputs<float>(c.at("wv")),
               wo = fixtures::inputs<float>(c.at("wo"));
    attn::MhaResult<float> self, cross;
    REQUIRE(attn::multi_head_attention(x.data(), x.size(), wq.data(), wq.size(), wk.data(),
                                       wk.size(), wv.data(), wv.size(), wo.data(), wo.size(), m,
                                       &self)
                .ok());
    REQUIRE(attn::multi_head_attention(x.data(), x.size(), x.data(), x.size(), wq.data(), wq.size(),
                                       wk.data(), wk.size(), wv.data(), wv.size(), wo.data(),
                                       wo.size(), m, &cross)
                .ok());
    const auto same = [](const auto& a, const auto& b) {
      return a.shape() == b.shape() &&
             std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
    };
    CHECK(same(self.output, cross.output));
    CHECK(same(self.merged, cross.merged));
    CHECK(same(self.q, cross.q));
    CHECK(same(self.k, cross.k));
    CHECK(same(self.v, cross.v));
    CHECK(same(self.attn.weights, cross.attn.weights));
  }
}
