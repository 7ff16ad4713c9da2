#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

#include "attn/attention.hpp"
#include "attn/backward.hpp"
#include "attn/check.hpp"
#include "attn/introspect.hpp"
#include "attn/multihead.hpp"
#include "attn/tiled.hpp"
#include "fixtures.hpp"
#include "random_inputs.hpp"

using attn::AttentionOptions;
using attn::AttentionResult;
using attn::Shape;

namespace {

// Tolerance against the float64 oracle: float32 rounding of the scores scales with
// their magnitude, so the large-logit family gets a relative bound.
double tolerance_for(const fixtures::Case& c) {
  return c.family == "large_logits" ? 2e-3 : 2e-5;
}

template <class T>
AttentionResult<T> run_case(fixtures::Case& c) {
  // Inputs are float32 values: round them to float32 first, then widen to T.
  const auto q = fixtures::inputs<T>(c.j.at("q")), k = fixtures::inputs<T>(c.j.at("k")),
             v = fixtures::inputs<T>(c.j.at("v"));
  AttentionResult<T> r;
  const attn::Status st = attn::attention(q.data(), q.size(), k.data(), k.size(), v.data(),
                                          v.size(), fixtures::bind(c), &r);
  REQUIRE(st.ok());
  return r;
}

}  // namespace

TEST_CASE("attention - naive float32 matches the NumPy oracle for every fixture",
          "[attention][oracle]") {
  const auto fx = fixtures::load("attention.json");
  REQUIRE(fx.at("cases").size() >= 20);
  std::map<std::string, double> worst;
  for (const auto& jc : fx.at("cases")) {
    fixtures::Case c = fixtures::read_case(jc);
    INFO("case " << c.name);
    const auto r = run_case<float>(c);
    const auto& e = jc.at("expect");
    const auto out = fixtures::vec<double>(e.at("output")),
               w = fixtures::vec<double>(e.at("weights")),
               ent = fixtures::vec<double>(e.at("entropy")),
               lse = fixtures::vec<double>(e.at("lse"));
    REQUIRE(out.size() == r.output.size());
    // Large cases pin output, entropy and lse only (weights null in the fixture).
    if (!e.at("weights").is_null()) REQUIRE(w.size() == r.weights.size());
    const double d = std::max({fixtures::max_abs_diff(r.output.data(), out.data(), out.size()),
                               fixtures::max_abs_diff(r.weights.data(), w.data(), w.size())});
    CHECK(d <= tolerance_for(c));
    CHECK(fixtures::max_abs_diff(r.entropy.data(), ent.data(), ent.size()) <= 1e-4);
    // lse carries the scores' magnitude: compare relative to it.
    for (std::size_t i = 0; i < lse.size(); ++i) {
      if (std::isfinite(lse[i])) {
        CHECK(std::abs(r.lse.data()[i] - lse[i]) <= 1e-5 * std::max(1.0, std::abs(lse[i])));
      } else {
        CHECK((std::isnan(lse[i]) ? std::isnan(r.lse.data()[i]) : r.lse.data()[i] == lse[i]));
      }
    }
    CHECK(r.diag.fully_masked_rows == e.at("fullyMaskedRows").get<std::size_t>());
    CHECK(r.diag.nan_rows == e.at("nanRows").get<std::size_t>());
    CHECK(r.diag.inf_score_rows == e.value("infScoreRows", std::size_t{0}));
    worst[c.family] = std::max(worst[c.family], d);
  }
  for (const auto& [family, d] : worst) WARN("naive f32 max|delta| " << family << ": " << d);
}

TEST_CASE("attention - naive float64 matches the oracle to 1e-12", "[attention][oracle]") {
  const auto fx = fixtures::load("attention.json");
  for (const auto& jc : fx.at("cases")) {
    fixtures::Case c = fixtures::read_case(jc);
    // The overflow family models float32's QK^T overflowing; float64 does not overflow.
    if (c.family == "overflow") continue;
    INFO("case " << c.name);
    const auto r = run_case<double>(c);
    const auto out = fixtures::vec<double>(jc.at("expect").at("output"));
    const auto w = fixtures::vec<double>(jc.at("expect").at("weights"));  // empty if null
    const double tol = c.family == "large_logits" ? 1e-9 : 1e-10;
    CHECK(fixtures::max_abs_diff(r.output.data(), out.data(), out.size()) <= tol);
    CHECK(fixtures::max_abs_diff(r.weights.data(), w.data(), w.size()) <= tol);
  }
}

TEST_CASE("attention - weight rows sum to one and forbidden weights are exactly zero",
          "[attention][property]") {
  std::mt19937 g(1234);
  for (int trial = 0; trial < 40; ++trial) {
    std::uniform_int_distribution<int> dim(1, 24);
    Shape s{
        1, 1, std::size_t(dim(g)), std::size_t(dim(g)), std::size_t(dim(g)), std::size_t(dim(g))};
    s.kv_heads = 1 + trial % 2;
    s.heads = s.kv_heads * (1 + trial % 3);
    auto in = testing_inputs::make_qkv<float>(s, g, 2.0);
    std::vector<std::uint8_t> pad(s.tk);
    for (auto& p : pad) p = g() % 4 != 0;
    pad[0] = 1;  // keep at least one real key so no row is fully masked by padding alone
    AttentionOptions o;
    o.shape = s;
    o.mask.causal = trial % 2 == 0;
    o.mask.window = trial % 5 == 0 ? 3 : 0;
    o.mask.key_padding = attn::Bytes(pad.data(), pad.size());
    AttentionResult<float> r;
    REQUIRE(attn::attention(in.q.data(), in.q.size(), in.k.data(), in.k.size(), in.v.data(),
                            in.v.size(), o, &r)
                .ok());
    for (std::size_t h = 0; h < s.heads; ++h) {
      for (std::size_t i = 0; i < s.tq; ++i) {
        const float* w = r.weights.data() + (h * s.tq + i) * s.tk;
        std::size_t allowed = 0;
        double sum = 0;
        for (std::size_t j = 0; j < s.tk; ++j) {
          if (attn::is_allowed(o.mask, i, j, s.tq, s.tk)) {
            ++allowed;
            sum += w[j];
          }
        }
        if (allowed == 0) continue;  // fully masked: the fill policy decides (tested below)
        CHECK(sum == Approx(1.0).margin(1e-5));
        for (std::size_t j = 0; j < s.tk; ++j) {
          if (!attn::is_allowed(o.mask, i, j, s.tq, s.tk)) CHECK(w[j] == 0.0f);
        }
      }
    }
  }
}

TEST_CASE("attention - row_sums off: the same output, weights and lse bits, no rowSums",
          "[attention][edge]") {
  std::mt19937 g(77);
  for (const std::size_t t : {std::size_t{1}, std::size_t{32}, std::size_t{100}}) {
    Shape s{4, 2, t, t, 16, 16};
    auto in = testing_inputs::make_qkv<float>(s, g, 2.0);
    AttentionOptions o;
    o.shape = s;
    o.mask.causal = true;
    AttentionResult<float> with, without;
    REQUIRE(attn::attention(in.q.data(), in.q.size(), in.k.data(), in.k.size(), in.v.data(),
                            in.v.size(), o, &with)
                .ok());
    o.row_sums = false;
    REQUIRE(attn::attention(in.q.data(), in.q.size(), in.k.data(), in.k.size(), in.v.data(),
                            in.v.size(), o, &without)
                .ok());
    CHECK(with.row_sums.size() == s.heads * t);
    CHECK(without.row_sums.size() == 0);
    REQUIRE(with.output.size() == without.output.size());
    REQUIRE(with.weights.size() == without.weights.size());
    CHECK(std::memcmp(with.output.data(), without.output.data(), with.output.size() * 4) == 0);
    CHECK(std::memcmp(with.weights.data(), without.weights.data(), with.weights.size() * 4) == 0);
    CHECK(std::memcmp(with.lse.data(), without.lse.data(), with.lse.size() * 4) == 0);
  }
}

TEST_CASE("attention - permuting keys and values permutes nothing in the output",
          "[attention][property]") {
  std::mt19937 g(99);
  const Shape s{2, 2, 7, 9, 5, 3};
  auto in = testing_inputs::make_qkv<double>(s, g);
  std::vector<std::size_t> perm(s.tk);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), g);
  std::vector<double> k2(in.k.size()), v2(in.v.size());
  for (std::size_t h = 0; h < s.kv_heads; ++h)
    for (std::size_t j = 0; j < s.tk; ++j) {
      std::copy_n(in.k.data() + (h * s.tk + perm[j]) * s.dk, s.dk,
                  k2.data() + (h * s.tk + j) * s.dk);
      std::copy_n(in.v.data() + (h * s.tk + perm[j]) * s.dv, s.dv,
                  v2.data() + (h * s.tk + j) * s.dv);
    }
  AttentionOptions o;
  o.shape = s;
  AttentionResult<double> a, b;
  REQUIRE(attn::attention(in.q.data(), in.q.size(), in.k.data(), in.k.size(), in.v.data(),
                          in.v.size(), o, &a)
              .ok());
  REQUIRE(
      attn::attention(in.q.data(), in.q.size(), k2.data(), k2.size(), v2.data(), v2.size(), o, &b)
          .ok());
  CHECK(fixtures::max_abs_diff(a.output.data(), b.output.data(), a.output.size()) <= 1e-12);
  // The weights move with their keys: b[.., j] == a[.., perm[j]].
  for (std::size_t r = 0; r < s.heads * s.tq; ++r)
    for (std::size_t j = 0; j < s.tk; ++j)
      CHECK(b.weights.data()[r * s.tk + j] ==
            Approx(a.weights.data()[r * s.tk + perm[j]]).margin(1e-14));
}

TEST_CASE("attention - edge cases T = 1 and d_k = 1 and empty padding", "[attention][edge]") {
  std::mt19937 g(5);
  SECTION("T = 1: the single weight is 1 and the output is the single value") {
    const Shape s{1, 1, 1, 1, 4, 3};
    auto in = testing_inputs::make_qkv<float>(s, g);
    AttentionOptions o;
    o.shape = s;
    o.mask.causal = true;
    AttentionResult<float> r;
    REQUIRE(attn::attention(in.q.data(), 4, in.k.data(), 4, in.v.data(), 3, o, &r).ok());
    CHECK(r.weights.data()[0] == 1.0f);
    for (int c = 0; c < 3; ++c) CHECK(r.output.data()[c] == in.v[c]);
    CHECK(r.entropy.data()[0] == 0.0f);
  }
  SECTION("d_k = 1: scores are scalar products") {
    const Shape s{1, 1, 3, 3, 1, 1};
    const std::vector<double> q{1, 2, 3}, k{0.5, -1, 2}, v{1, 10, 100};
    AttentionOptions o;
    o.shape = s;
    AttentionResult<double> r;
    REQUIRE(attn::attention(q.data(), 3, k.data(), 3, v.data(), 3, o, &r).ok());
    const double e0 = std::exp(2 * 0.5), e1 = std::exp(2 * -1.0), e2 = std::exp(2 * 2.0);
    CHECK(r.weights.data()[3] == Approx(e0 / (e0 + e1 + e2)));
  }
  SECTION("empty padding (all ones) changes nothing") {
    const Shape s{2, 1, 5, 5, 4, 4};
    auto in = testing_inputs::make_qkv<float>(s, g);
    std::vector<std::uint8_t> pad(5, 1);
    AttentionOptions a, b;
    a.shape = b.shape = s;
    b.mask.key_padding = attn::Bytes(pad.data(), pad.size());
    AttentionResult<float> ra, rb;
    REQUIRE(attn::attention(in.q.data(), in.q.size(), in.k.data(), in.k.size(), in.v.data(),
                            in.v.size(), a, &ra)
                .ok());
    REQUIRE(attn::attention(in.q.data(), in.q.size(), in.k.data(), in.k.size(), in.v.data(),
                            in.v.size(), b, &rb)
                .ok());
    CHECK(fixtures::max_abs_diff(ra.weights.data(), rb.weights.data(), ra.weights.size()) == 0.0);
  }
}

TEST_CASE("attention - a fully masked row under each fill policy", "[attention][edge]") {
  std::mt19937 g(8);
  const Shape s{1, 1, 3, 4, 2, 2};
  auto in = testing_inputs::make_qkv<float>(s, g);
  std::vector<std::uint8_t> mask(12, 1);
  std::fill(mask.begin() + 4, mask.begin() + 8, 0);  // query 1 sees nothing
  AttentionOptions o;
  o.shape = s;
  o.mask.mask = attn::Bytes(mask.data(), mask.size());
  AttentionResult<float> r;
  SECTION("neg_inf: NaN row, counted") {
    o.fill = attn::MaskFill::kNegInf;
    REQUIRE(attn::attention(in.q.data(), 6, in.k.data(), 8, in.v.data(), 8, o, &r).ok());
    CHECK(std::isnan(r.weights.data()[4]));
    CHECK(std::isnan(r.output.data()[2]));
    CHECK(r.diag.nan_rows == 1);
    CHECK(r.diag.fully_masked_rows == 1);
    CHECK_FALSE(std::isnan(r.output.data()[0]));
  }
  SECTION("finite: uniform 1/T_k and the mean of V") {
    o.fill = attn::MaskFill::kFinite;
    REQUIRE(attn::attention(in.q.data(), 6, in.k.data(), 8, in.v.data(), 8, o, &r).ok());
    for (int j = 0; j < 4; ++j) CHECK(r.weights.data()[4 + j] == 0.25f);
    const double mean0 = (in.v[0] + in.v[2] + in.v[4] + in.v[6]) / 4.0;
    CHECK(r.output.data()[2] == Approx(mean0).margin(1e-6));
    CHECK(r.diag.nan_rows == 0);
    CHECK(r.entropy.data()[1] == Approx(std::log(4.0)));
  }
  SECTION("zero: zero weights and zero output") {
    o.fill = attn::MaskFill::kZero;
    REQUIRE(attn::attention(in.q.data(), 6, in.k.data(), 8, in.v.data(), 8, o, &r).ok());
    for (int j = 0; j < 4; ++j) CHECK(r.weights.data()[4 + j] == 0.0f);
    CHECK(r.output.data()[2] == 0.0f);
    CHECK(r.output.data()[3] == 0.0f);
    CHECK(r.diag.nan_rows == 0);
    CHECK(r.entropy.data()[1] == 0.0f);
  }
}

TEST_CASE("attention - NaN and Inf inputs touch only their own rows", "[attention][edge]") {
  std::mt19937 g(77);
  const Shape s{1, 1, 4, 4, 3, 2};
  auto in = testing_inputs::make_qkv<float>(s, g);
  in.q[2 * 3 + 1] = std::numeric_limits<float>::quiet_NaN();  // query 2
  in.v[3 * 2] = std::numeric_limits<float>::infinity();       // value of key 3
  AttentionOptions o;
  o.shape = s;
  o.mask.causal = true;
  AttentionResult<float> r;
  REQUIRE(attn::attention(in.q.data(), in.q.size(), in.k.data(), in.k.size(), in.v.data(),
                          in.v.size(), o, &r)
              .ok());
  // Rows 0 and 1 see neither query 2 nor key 3: finite.
  for (int i = 0; i < 4; ++i) CHECK(std::isfinite(r.output.data()[i]));
  CHECK(std::isnan(r.output.data()[4]));  // query 2's own row
  CHECK(std::isinf(r.output.data()[6]));  // query 3 averages the infinite value
  CHECK(r.diag.nan_rows == 1);
}

TEST_CASE("attention - logits near 1e4 stay finite and float32 overflow is reported",
          "[attention][edge]") {
  const Shape s{1, 1, 1, 3, 1, 1};
  AttentionOptions o;
  o.shape = s;
  o.scale = 1.0;
  AttentionResult<float> r;
  const std::vector<float> q{100.f}, k{100.f, 99.f, -100.f}, v{1.f, 2.f, 3.f};
  REQUIRE(attn::attention(q.data(), 1, k.data(), 3, v.data(), 3, o, &r).ok());
  CHECK(std::isfinite(r.output.data()[0]));
  CHECK(r.weights.data()[0] == Approx(1 / (1 + std::exp(-100.0))));
  CHECK(r.diag.inf_score_rows == 0);
  const std::vector<float> big{3e19f}, kbig{3e19f, 1.f, 1.f};
  REQUIRE(attn::attention(big.data(), 1, kbig.data(), 3, v.data(), 3, o, &r).ok());
  CHECK(r.diag.inf_score_rows == 1);
  CHECK(r.diag.nan_rows == 1);
}

TEST_CASE("attention - bad arguments are errors that name the field", "[attention][errors]") {
  const std::vector<float> buf(64, 0.5f);
  AttentionOptions o;
  o.shape = {2, 1, 2, 2, 2, 2};
  AttentionResult<float> r;
  auto run = [&](const AttentionOptions& opts, std::size_t ql = 8, std::size_t kl = 4,
                 std::size_t vl = 4) {
    return attn::attention(buf.data(), ql, buf.data(), kl, buf.data(), vl, opts, &r);
  };
  REQUIRE(run(o).ok());
  auto expect_field = [&](AttentionOptions opts, const char* field, std::size_t ql = 8,
                          std::size_t kl = 4, std::size_t vl = 4) {
    const attn::Status st = run(opts, ql, kl, vl);
    CHECK_FALSE(st.ok());
    CHECK(st.field == field);
    CHECK(st.message.find(field) != std::string::npos);
  };
  AttentionOptions bad = o;
  bad.shape.heads = 0;
  expect_field(bad, "heads");
  bad = o;
  bad.shape.kv_heads = 3;
  expect_field(bad, "kvHeads");
  bad = o;
  bad.shape.dk = 0;
  expect_field(bad, "dk");
  expect_field(o, "q", 7);
  expect_field(o, "k", 8, 5);
  expect_field(o, "v", 8, 4, 3);
  bad = o;
  bad.scale = std::nan("");
  expect_field(bad, "scale");
  bad.scale = -1.0;
  expect_field(bad, "scale");
  bad.scale = std::numeric_limits<double>::infinity();
  expect_field(bad, "scale");
  bad = o;
  bad.shape = {1, 1, 100000, 100000, 2, 2};
  const attn::Status st =
      attn::attention(buf.data(), 200000, buf.data(), 200000, buf.data(), 200000, bad, &r);
  CHECK(st.code == attn::StatusCode::kResourceExhausted);
  CHECK(st.field == "memory");
  CHECK(st.message.find("MiB") != std::string::npos);
  // Overflowing shapes are refused, not wrapped around.
  bad.shape = {std::size_t(-1) / 2, 1, std::size_t(-1) / 2, 1, 1, 1};
  CHECK_FALSE(run(bad).ok());
  // Still works afterwards.
  CHECK(run(o).ok());
}

TEST_CASE("attention - masks carry their lengths: a short or long mask fails every entry point",
          "[attention][errors]") {
  // T = 4: key padding needs 4 bytes and the custom mask 16. Before masks carried their
  // lengths, the entry points assumed those sizes and read past a shorter buffer.
  const std::size_t t = 4, d = 2;
  std::vector<float> q(t * d, 0.5f), k(t * d, 0.25f), v(t * d, 1.f), dout(t * d, 1.f);
  const std::vector<std::uint8_t> bytes(32, 1);
  for (int which = 0; which < 2; ++which) {
    for (std::size_t n : {std::size_t(0), std::size_t(3), std::size_t(15), std::size_t(17)}) {
      const std::size_t want = which == 0 ? t : t * t;
      if (n == want) continue;
      AttentionOptions o;
      o.shape = {1, 1, t, t, d, d};
      (which == 0 ? o.mask.key_padding : o.mask.mask) = attn::Bytes(bytes.data(), n);
      const std::string field = which == 0 ? "keyPadding" : "mask";
      INFO(field << " of " << n << " bytes");
      AttentionResult<float> r;
      CHECK(attn::attention(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(), o, &r)
                .field == field);
      CHECK(attn::attention_tiled(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(), o, &r)
                .field == field);
      attn::AttentionGrads<float> g;
      CHECK(attn::attention_backward(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(),
                                     dout.data(), dout.size(), o, attn::Kernel::kTiled, &g)
                .field == field);
      attn::KernelCheck c;
      CHECK(attn::check_kernels(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(), o, &c)
                .field == field);
      std::vector<std::uint8_t> allowed;
      CHECK(attn::allowed_mask(o.mask, t, t, attn::kDefaultMemoryCap, &allowed).field == field);
      attn::MhaOptions m;
      m.t = t, m.d_model = d, m.heads = 1, m.mask = o.mask;
      const std::vector<float> x(t * d, 0.1f), w(d * d, 0.3f);
      attn::MhaResult<float> mr;
      CHECK(attn::multi_head_attention(x.data(), x.size(), w.data(), w.size(), w.data(), w.size(),
                                       w.data(), w.size(), w.data(), w.size(), m, &mr)
                .field == field);
      CHECK(attn::resolve_mha(&m).field == field);
    }
  }
  // The right lengths pass.
  AttentionOptions o;
  o.shape = {1, 1, t, t, d, d};
  o.mask.key_padding = attn::Bytes(bytes.data(), t);
  o.mask.mask = attn::Bytes(bytes.data(), t * t);
  AttentionResult<float> r;
  CHECK(attn::attention(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(), o, &r).ok());
}
