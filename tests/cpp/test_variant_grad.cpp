// Gradients of the attention variants: attn/variant_grad.hpp's row helpers and
// attention_backward with every variant option training uses (normalizer, position, qkNorm,
// sigmoidBias, ropeBase, scale), against the PyTorch autograd fixtures
// (tests/fixtures/variant_grads.json, tests/oracle/gen_variant_grad_fixtures.py) and float64
// central finite differences.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>

#include "attn/attention.hpp"
#include "attn/backward.hpp"
#include "attn/tiled.hpp"
#include "attn/variant_grad.hpp"
#include "backward_case.hpp"
#include "fixtures.hpp"
#include "random_inputs.hpp"
#include "variant_kernels.hpp"

using attn::AttentionGrads;
using attn::AttentionOptions;
using attn::AttentionResult;
using attn::Kernel;
using attn::MaskMode;
using attn::Normalizer;
using attn::Position;
using attn::Shape;
using attn::Variant;

namespace {

// Tolerances against PyTorch float64, per array: |delta| <= abs + rel * max|expected|.
// float64 runs do the same sums in another order (1e-10 covers qkNorm's scale 10 and the
// saturated sigmoid); float32 runs carry float32 rounding of scores, weights and sums
// (u32 = 6e-8 times the dot products' length and the gradients' size).
struct Tol {
  double abs, rel;
};
constexpr Tol kTol64{1e-10, 1e-10};
constexpr Tol kTol32{5e-5, 5e-5};

template <class T>
attn::Status backward(const std::vector<T>& q, const std::vector<T>& k, const std::vector<T>& v,
                      const std::vector<T>& dout, const AttentionOptions& o, Kernel kernel,
                      AttentionGrads<T>* g) {
  return attn::attention_backward(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(),
                                  dout.data(), dout.size(), o, kernel, g);
}

// The variant fields of a fixture case's options (JS names).
Variant read_variant(const fixtures::json& o) {
  Variant v;
  v.qk_norm = o.at("qkNorm").get<bool>();
  REQUIRE(attn::parse_position(o.at("position").get<std::string>().c_str(), &v.position));
  REQUIRE(attn::parse_normalizer(o.at("normalizer").get<std::string>().c_str(), &v.normalizer));
  v.rope_base = fixtures::num(o.at("ropeBase"));
  if (!o.at("sigmoidBias").is_null()) v.sigmoid_bias = fixtures::num(o.at("sigmoidBias"));
  return v;
}

struct Errors {
  double abs = 0, rel = 0;  // max |delta|, max |delta| / max|expected| over the arrays
  void add(const Errors& e) {
    abs = std::max(abs, e.abs);
    rel = std::max(rel, e.rel);
  }
};

// One fixture case through attention_backward<T>: output, dq, dk, dv within `tol`, NaN exactly
// where PyTorch has NaN.
template <class T>
Errors fixture_errors(const fixtures::json& jc, Kernel kernel, Tol tol) {
  fixtures::Case c = fixtures::read_case(jc);
  c.opts.variant = read_variant(jc.at("opts"));
  const auto q = fixtures::inputs<T>(jc.at("q")), k = fixtures::inputs<T>(jc.at("k")),
             v = fixtures::inputs<T>(jc.at("v")), dout = fixtures::inputs<T>(jc.at("dOut"));
  AttentionGrads<T> g;
  const attn::Status st = backward(q, k, v, dout, fixtures::bind(c), kernel, &g);
  INFO(st.field << ": " << st.message);
  REQUIRE(st.ok());
  const auto& e = jc.at("expect");
  CHECK(g.forward.diag.fully_masked_rows == e.at("fullyMaskedRows").get<std::size_t>());
  Errors out;
  for (auto [name, got] : {std::pair<const char*, const T*>{"output", g.forward.output.data()},
                           {"dq", g.dq.data()},
                           {"dk", g.dk.data()},
                           {"dv", g.dv.data()}}) {
    const auto want = fixtures::vec<double>(e.at(name));
    double top = 0;
    for (double x : want) {
      if (std::isfinite(x)) top = std::max(top, std::abs(x));
    }
    const double d = fixtures::max_abs_diff(got, want.data(), want.size());
    INFO(name << " max|delta| " << d << ", max|expected| " << top);
    CHECK(d <= tol.abs + tol.rel * top);  // +inf (a NaN out of place) fails
    out.add({d, d / std::max(top, 1e-300)});
  }
  return out;
}

// L = sum(output * dO) from the naive float64 forward.
double loss(const backward_case::Config& c, const std::vector<double>& q,
            const std::vector<double>& k, const std::vector<double>& v) {
  AttentionResult<double> r;
  REQUIRE(
      attn::attention(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(), c.opts, &r).ok());
  double l = 0;
  for (std::size_t x = 0; x < r.output.size(); ++x) l += r.output.data()[x] * c.dout[x];
  return l;
}

// Worst |central difference - analytic| over every element of q, k and v (a stride under the
// sanitizers: fixtures::kFdStride).
double fd_check(const backward_case::Config& c, const AttentionGrads<double>& g) {
  const double h = 1e-6;
  double worst = 0;
  std::vector<double> q = c.q, k = c.k, v = c.v;
  auto probe = [&](std::vector<double>& x, const double* grad) {
    for (std::size_t n = 0; n < x.size(); n += fixtures::kFdStride) {
      const double x0 = x[n];
      x[n] = x0 + h;
      const double lp = loss(c, q, k, v);
      x[n] = x0 - h;
      const double lm = loss(c, q, k, v);
      x[n] = x0;
      const double d = std::abs((lp - lm) / (2 * h) - grad[n]);
      worst = std::max(worst, std::isnan(d) ? std::numeric_limits<double>::infinity() : d);
    }
  };
  probe(q, g.dq.data());
  probe(k, g.dk.data());
  probe(v, g.dv.data());
  return worst;
}

// A random variant on top of backward_case::random_config (which draws shapes, masks, scale,
// fill and dropout): normalizer, position, qkNorm, ropeBase, sigmoidBias; d_k made even for
// RoPE. Linear never takes ALiBi.
void random_variant(std::mt19937& gen, backward_case::Config* c) {
  Variant& v = c->opts.variant;
  v.normalizer = static_cast<Normalizer>(std::uniform_int_distribution<int>(0, 4)(gen));
  v.position = static_cast<Position>(std::uniform_int_distribution<int>(0, 2)(gen));
  if (v.normalizer == Normalizer::kLinear && v.position == Position::kAlibi) {
    v.position = Position::kRope;
  }
  v.qk_norm = std::uniform_int_distribution<int>(0, 1)(gen);
  if (std::uniform_int_distribution<int>(0, 2)(gen) == 0) v.rope_base = 50;
  if (std::uniform_int_distribution<int>(0, 1)(gen)) {
    v.sigmoid_bias = std::uniform_real_distribution<double>(-3, 2)(gen);
  }
  Shape& s = c->opts.shape;
  if (v.position == Position::kRope && s.dk % 2) {
    s.dk += 1;
    auto in = testing_inputs::make_qkv<double>(s, gen);
    c->q = in.q, c->k = in.k;
  }
}

// Whether the tiled forward takes these options (else the tiled backward is not defined).
bool tiled_supported(const AttentionOptions& o) {
  return attn::validate(o, o.shape.heads * o.shape.tq * o.shape.dk,
                        o.shape.kv_heads * o.shape.tk * o.shape.dk,
                        o.shape.kv_heads * o.shape.tk * o.shape.dv, false, sizeof(double))
      .ok();
}

}  // namespace

TEST_CASE("variant grads - match the PyTorch autograd oracle for every fixture",
          "[backward][variants][oracle]") {
  const auto fx = fixtures::load("variant_grads.json");
  // [f32][tiled][normalizer]
  std::map<std::string, Errors> worst[2][2];
  int runs = 0;
  for (const auto& jc : fx.at("cases")) {
    const std::string name = jc.at("name"), norm = jc.at("opts").at("normalizer");
    for (const auto& kname : jc.at("kernels")) {
      const bool tiled = kname.get<std::string>() == "tiled";
      const Kernel kernel = tiled ? Kernel::kTiled : Kernel::kNaive;
      INFO("case " << name << (tiled ? " [tiled]" : " [naive]"));
      worst[0][tiled][norm].add(fixture_errors<double>(jc, kernel, kTol64));
      worst[1][tiled][norm].add(fixture_errors<float>(jc, kernel, kTol32));
      ++runs;
    }
  }
  CHECK(runs > 300);
  for (int f32 = 0; f32 < 2; ++f32) {
    const Tol t = f32 ? kTol32 : kTol64;
    for (int tiled = 0; tiled < 2; ++tiled) {
      for (const auto& [norm, e] : worst[f32][tiled]) {
        WARN("variant grads " << (f32 ? "f32 " : "f64 ") << (tiled ? "tiled" : "naive") << " "
                              << norm << ": max|delta| " << e.abs << ", max|delta|/max|expected| "
                              << e.rel << " (tolerance " << t.abs << " + " << t.rel
                              << " * max|expected|)");
      }
    }
  }
}

TEST_CASE("variant grads - float64 gradients equal central finite differences",
          "[backward][variants][fd]") {
  // Random variants, shapes (GQA/MQA, T_q != T_k), masks, fills, scale, and dropout in every
  // other trial (its keep mask depends only on (seed, head, query, key), so it stays fixed
  // under the perturbations). Fully masked rows under neg_inf become 'finite' (NaN otherwise).
  std::mt19937 gen(20261202);
  double worst = 0;
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    auto c = backward_case::random_config(gen, trial % 2 == 1, false);
    random_variant(gen, c.get());
    INFO("trial " << trial << " normalizer " << attn::normalizer_name(c->opts.variant.normalizer)
                  << " position " << attn::position_name(c->opts.variant.position) << " qkNorm "
                  << c->opts.variant.qk_norm << " dropout " << c->opts.dropout);
    for (Kernel kernel : {Kernel::kNaive, Kernel::kTiled}) {
      if (kernel == Kernel::kTiled && !tiled_supported(c->opts)) continue;
      AttentionGrads<double> g;
      REQUIRE(backward(c->q, c->k, c->v, c->dout, c->opts, kernel, &g).ok());
      const double d = fd_check(*c, g);
      CHECK(d <= 1e-6);
      worst = std::max(worst, d);
      ++checked;
    }
  }
  WARN("variant grads f64 vs finite differences, "
       << checked << " (config, kernel) runs: max|delta| " << worst << " (tolerance 1e-6)");
}

TEST_CASE("variant grads - tiled equals naive for every tiled-capable variant, T up to 200",
          "[backward][variants][tiled]") {
  std::mt19937 gen(4242);
  double worst32 = 0, worst64 = 0;
  int compared = 0;
  for (int trial = 0; trial < 150; ++trial) {
    auto c = backward_case::random_config(gen, trial % 3 == 0, true, trial % 4 == 0 ? 200 : 20);
    random_variant(gen, c.get());
    if (c->opts.variant.normalizer == Normalizer::kLinear && trial % 2 == 0) {
      // The prefix-sum form needs a causal mask or none: make half the linear trials eligible.
      c->opts.mask.key_padding = nullptr;
      c->opts.mask.mask = nullptr;
      c->opts.mask.window = 0;
      c->opts.dropout = 0;
    }
    if (!tiled_supported(c->opts)) continue;
    INFO("trial " << trial << " normalizer " << attn::normalizer_name(c->opts.variant.normalizer));
    AttentionGrads<double> a, b;
    REQUIRE(backward(c->q, c->k, c->v, c->dout, c->opts, Kernel::kNaive, &a).ok());
    REQUIRE(backward(c->q, c->k, c->v, c->dout, c->opts, Kernel::kTiled, &b).ok());
    for (auto [x, y] : {std::pair{&a.dq, &b.dq}, {&a.dk, &b.dk}, {&a.dv, &b.dv}}) {
      const double d = fixtures::max_abs_diff(x->data(), y->data(), x->size());
      CHECK(d <= 1e-11);
      worst64 = std::max(worst64, d);
    }
    const std::vector<float> q(c->q.begin(), c->q.end()), k(c->k.begin(), c->k.end()),
        v(c->v.begin(), c->v.end()), dout(c->dout.begin(), c->dout.end());
    AttentionGrads<float> fa, fb;
    REQUIRE(backward(q, k, v, dout, c->opts, Kernel::kNaive, &fa).ok());
    REQUIRE(backward(q, k, v, dout, c->opts, Kernel::kTiled, &fb).ok());
    for (auto [x, y] : {std::pair{&fa.dq, &fb.dq}, {&fa.dk, &fb.dk}, {&fa.dv, &fb.dv}}) {
      const double d = fixtures::max_abs_diff(x->data(), y->data(), x->size());
      CHECK(d <= 2e-4);
      worst32 = std::max(worst32, d);
    }
    ++compared;
  }
  CHECK(compared > 80);
  WARN("variant grads tiled vs naive over " << compared << " random configs: max|delta| f64 "
                                            << worst64 << " (tolerance 1e-11), f32 " << worst32
                                            << " (tolerance 2e-4)");
}

TEST_CASE("variant grads - a given forward result gives the same gradients as a recomputed one",
          "[backward][variants]") {
  std::mt19937 gen(31);
  int runs = 0;
  for (int trial = 0; trial < 40; ++trial) {
    auto c = backward_case::random_config(gen, trial % 2 == 0, true);
    random_variant(gen, c.get());
    for (Kernel kernel : {Kernel::kNaive, Kernel::kTiled}) {
      if (kernel == Kernel::kTiled && !tiled_supported(c->opts)) continue;
      AttentionResult<double> f;
      REQUIRE((kernel == Kernel::kNaive
                   ? attn::attention(c->q.data(), c->q.size(), c->k.data(), c->k.size(),
                                     c->v.data(), c->v.size(), c->opts, &f)
                   : attn::attention_tiled(c->q.data(), c->q.size(), c->k.data(), c->k.size(),
                                           c->v.data(), c->v.size(), c->opts, &f))
                  .ok());
      AttentionGrads<double> a, b;
      REQUIRE(backward(c->q, c->k, c->v, c->dout, c->opts, kernel, &a).ok());
      REQUIRE(attn::attention_backward(c->q.data(), c->q.size(), c->k.data(), c->k.size(),
                                       c->v.data(), c->v.size(), c->dout.data(), c->dout.size(),
                                       c->opts, kernel, &f, &b)
                  .ok());
      CHECK(b.forward.output.size() == 0);  // left untouched
      CHECK(fixtures::max_abs_diff(a.dq.data(), b.dq.data(), a.dq.size()) == 0);
      CHECK(fixtures::max_abs_diff(a.dk.data(), b.dk.data(), a.dk.size()) == 0);
      CHECK(fixtures::max_abs_diff(a.dv.data(), b.dv.data(), a.dv.size()) == 0);
      ++runs;
    }
  }
  CHECK(runs > 50);
}

TEST_CASE("variant grads - transform_row is the kernels' transform, bit for bit",
          "[backward][variants][rows]") {
  std::mt19937 gen(8);
  for (int trial = 0; trial < 40; ++trial) {
    AttentionOptions o;
    o.shape = {2, 1, 5, 7, 6, 3};
    backward_case::Config c;
    c.opts = o;
    random_variant(gen, &c);
    o.variant = c.opts.variant;
    o.variant.qk_norm = trial % 2;  // both ways, whatever random_variant drew
    const auto in = testing_inputs::make_qkv<float>(o.shape, gen);
    std::vector<float> qt, kt;
    attn::detail::prepare_qk(in.q.data(), in.k.data(), o, &qt, &kt);
    const auto theta = attn::vgrad::rope_thetas(o.shape.dk, o.variant.rope_base);
    std::vector<float> row(o.shape.dk);
    for (std::size_t r = 0; r < o.shape.heads * o.shape.tq; ++r) {
      std::copy(in.q.begin() + r * 6, in.q.begin() + r * 6 + 6, row.begin());
      attn::vgrad::transform_row(row.data(), 6, static_cast<double>(r % 5) + 2, o.variant,
                                 theta.data());
      for (std::size_t c2 = 0; c2 < 6; ++c2) CHECK(row[c2] == qt[r * 6 + c2]);
    }
  }
}

TEST_CASE("variant grads - the default options still take the softmax kernels, bit for bit",
          "[backward][variants]") {
  // Options that do not change the computation (a ropeBase without RoPE, a sigmoidBias without
  // sigmoid) leave the backward on the original kernels: the very same bits.
  std::mt19937 gen(99);
  for (int trial = 0; trial < 20; ++trial) {
    auto c = backward_case::random_config(gen, trial % 2 == 0, true);
    AttentionOptions o = c->opts;
    o.variant.rope_base = 77;
    o.variant.sigmoid_bias = 1.5;
    REQUIRE(!o.variant.needs_variant_kernel());
    const std::vector<float> q(c->q.begin(), c->q.end()), k(c->k.begin(), c->k.end()),
        v(c->v.begin(), c->v.end()), dout(c->dout.begin(), c->dout.end());
    for (Kernel kernel : {Kernel::kNaive, Kernel::kTiled}) {
      AttentionGrads<float> a, b;
      REQUIRE(backward(q, k, v, dout, c->opts, kernel, &a).ok());
      REQUIRE(backward(q, k, v, dout, o, kernel, &b).ok());
      CHECK(std::equal(a.dq.begin(), a.dq.end(), b.dq.begin(),
                       [](float x, float y) { return x == y || (x != x && y != y); }));
      CHECK(std::equal(a.dk.begin(), a.dk.end(), b.dk.begin(),
                       [](float x, float y) { return x == y || (x != x && y != y); }));
      CHECK(std::equal(a.dv.begin(), a.dv.end(), b.dv.begin(),
                       [](float x, float y) { return x == y || (x != x && y != y); }));
    }
  }
}

TEST_CASE("variant grads - options training does not take are errors naming the field",
          "[backward][variants][errors]") {
  const std::vector<float> buf(256, 0.25f);
  AttentionOptions base;
  base.shape = {2, 1, 3, 4, 4, 2};  // q 24, k 16, v 8, dOut 12
  AttentionGrads<float> g;
  auto call = [&](const AttentionOptions& o, Kernel kernel) {
    return attn::attention_backward(buf.data(), 24, buf.data(), 16, buf.data(), 8, buf.data(), 12,
                                    o, kernel, &g);
  };
  struct Bad {
    const char* field;
    Kernel kernel;
    void (*edit)(AttentionOptions*);
  };
  const Bad bad[] = {
      {"maxShift", Kernel::kNaive, [](AttentionOptions* o) { o->variant.max_shift = false; }},
      {"maxShift", Kernel::kTiled, [](AttentionOptions* o) { o->variant.max_shift = false; }},
      {"maskMode", Kernel::kNaive,
       [](AttentionOptions* o) { o->variant.mask_mode = MaskMode::kAfter; }},
      {"precision", Kernel::kNaive,
       [](AttentionOptions* o) { o->variant.precision = attn::Precision::kFloat16; }},
      {"precision", Kernel::kNaive,
       [](AttentionOptions* o) { o->variant.precision = attn::Precision::kFloat64; }},
      {"position", Kernel::kNaive,
       [](AttentionOptions* o) {
         o->variant.normalizer = Normalizer::kLinear;
         o->variant.position = Position::kAlibi;
       }},
      {"kernel", Kernel::kTiled,
       [](AttentionOptions* o) {
         o->variant.normalizer = Normalizer::kLinear;
         o->mask.window = 2;
       }},
      {"kernel", Kernel::kTiled,
       [](AttentionOptions* o) {
         o->variant.normalizer = Normalizer::kLinear;
         o->dropout = 0.1;
       }},
      {"ropeBase", Kernel::kNaive, [](AttentionOptions* o) { o->variant.rope_base = -1; }},
      {"sigmoidBias", Kernel::kTiled,
       [](AttentionOptions* o) { o->variant.sigmoid_bias = std::nan(""); }},
  };
  for (const Bad& b : bad) {
    AttentionOptions o = base;
    b.edit(&o);
    const attn::Status st = call(o, b.kernel);
    INFO("expect field " << b.field << ", got " << st.field << ": " << st.message);
    CHECK(!st.ok());
    CHECK(st.field == b.field);
    CHECK(st.message.find(b.field) != std::string::npos);
  }
  // And every trainable variant is accepted by both kernels (linear tiled: causal or none).
  for (int n = 0; n < 5; ++n) {
    for (int p = 0; p < 3; ++p) {
      AttentionOptions o = base;
      o.variant.normalizer = static_cast<Normalizer>(n);
      o.variant.position = static_cast<Position>(p);
      o.variant.qk_norm = true;
      o.mask.causal = true;
      if (o.variant.normalizer == Normalizer::kLinear && o.variant.position == Position::kAlibi) {
        continue;
      }
      INFO(attn::normalizer_name(o.variant.normalizer)
           << " " << attn::position_name(o.variant.position));
      CHECK(call(o, Kernel::kNaive).ok());
      CHECK(call(o, Kernel::kTiled).ok());
    }
  }
  // The memory cap covers the variants' working copies.
  AttentionOptions o = base;
  o.variant.qk_norm = true;
  const std::size_t need =
      attn::estimate_backward_bytes(o.shape, sizeof(float), Kernel::kNaive, o.variant);
  CHECK(need > attn::estimate_backward_bytes(o.shape, sizeof(float), Kernel::kNaive));
  o.memory_cap = need - 1;
  CHECK(call(o, Kernel::kNaive).field == "memory");
  o.memory_cap = need;
  CHECK(call(o, Kernel::kNaive).ok());
}
