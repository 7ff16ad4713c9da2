// The attention variants (attn/variants.hpp) against the NumPy oracle
// (tests/oracle/gen_variant_fixtures.py -> tests/fixtures/variants.json), the tiled kernels
// against the naive one, and every error field.
//
// Tolerances (|got - want| <= abs + rel * |want|, NaN where NaN, equal infinities):
//   float64 kernel vs float64 oracle   1e-9 + 1e-9 |want|
//   float32 kernel vs float64 oracle   2e-5 + 2e-5 |want|   (rounding of d_k = 4 dot products,
//                                                           T_k <= 5 sums, RoPE's cos/sin)
//   float32 kernel vs float32 oracle   1e-5 + 1e-5 |want|   (the overflow-threshold cases)
//   float16 kernel vs float16 oracle   2^-9 (1 + |want|)    (two binary16 ulps at 1: exp may
//                                                           differ by a float32 ulp before h)
//   tiled vs naive (float32)           2e-5 + 2e-5 |naive|
//   prefix-sum linear vs naive linear  2e-5 + 2e-5 |naive|
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "attn/attention.hpp"
#include "attn/backward.hpp"
#include "attn/multihead.hpp"
#include "attn/tiled.hpp"
#include "attn/variants.hpp"
#include "fixtures.hpp"
#include "random_inputs.hpp"

using attn::AttentionOptions;
using attn::AttentionResult;
using attn::MaskMode;
using attn::Normalizer;
using attn::Position;
using attn::Precision;
using attn::Shape;

namespace {

struct VCase {
  std::string name;
  AttentionOptions opts;
  std::vector<std::uint8_t> padding, mask;
  std::vector<float> q, k, v;  // float32 inputs
  fixtures::json expect;
  std::string precision;
  AttentionOptions bound() {
    AttentionOptions o = opts;
    o.mask.key_padding = padding.empty() ? nullptr : attn::Bytes(padding.data(), padding.size());
    o.mask.mask = mask.empty() ? nullptr : attn::Bytes(mask.data(), mask.size());
    return o;
  }
};

VCase read_vcase(const fixtures::json& fx, const fixtures::json& c) {
  VCase k;
  k.name = c.at("name").get<std::string>();
  const auto& in = fx.at("inputs").at(c.at("inputs").get<std::string>());
  k.opts.shape = {in.at("heads").get<std::size_t>(), in.at("kvHeads").get<std::size_t>(),
                  in.at("tq").get<std::size_t>(),    in.at("tk").get<std::size_t>(),
                  in.at("dk").get<std::size_t>(),    in.at("dv").get<std::size_t>()};
  k.q = fixtures::inputs<float>(in.at("q"));
  k.k = fixtures::inputs<float>(in.at("k"));
  k.v = fixtures::inputs<float>(in.at("v"));
  const auto& o = c.at("opts");
  k.opts.mask.causal = o.at("causal").get<bool>();
  k.opts.mask.window = o.at("window").get<std::size_t>();
  if (!o.at("keyPadding").is_null()) k.padding = fixtures::bytes(o.at("keyPadding"));
  if (!o.at("mask").is_null()) k.mask = fixtures::bytes(o.at("mask"));
  if (!o.at("scale").is_null()) k.opts.scale = o.at("scale").get<double>();
  REQUIRE(attn::parse_mask_fill(o.at("maskFill").get<std::string>().c_str(), &k.opts.fill));
  attn::Variant& v = k.opts.variant;
  v.qk_norm = o.at("qkNorm").get<bool>();
  REQUIRE(attn::parse_position(o.at("position").get<std::string>().c_str(), &v.position));
  v.rope_base = o.at("ropeBase").get<double>();
  REQUIRE(attn::parse_normalizer(o.at("normalizer").get<std::string>().c_str(), &v.normalizer));
  if (!o.at("sigmoidBias").is_null()) v.sigmoid_bias = o.at("sigmoidBias").get<double>();
  v.max_shift = o.at("maxShift").get<bool>();
  REQUIRE(attn::parse_mask_mode(o.at("maskMode").get<std::string>().c_str(), &v.mask_mode));
  k.precision = o.at("precision").get<std::string>();
  k.expect = c.at("expect");
  return k;
}

// Largest violation of |got - want| <= abs + rel |want| (0 when within; +inf for a NaN or
// infinity out of place).
template <class T>
double excess(const T* got, const std::vector<double>& want, double abs_tol, double rel_tol) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double x = static_cast<double>(got[i]), y = want[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) return INFINITY;
      continue;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) return INFINITY;
      continue;
    }
    worst = std::max(worst, std::abs(x - y) - (abs_tol + rel_tol * std::abs(y)));
  }
  return std::max(worst, 0.0);
}

template <class T>
void check_against(const AttentionResult<T>& r, const fixtures::json& e, double abs_tol,
                   double rel_tol) {
  const std::pair<const char*, const xt::xtensor<T, 2>*> rows[] = {
      {"rowSums", &r.row_sums}, {"entropy", &r.entropy}, {"lse", &r.lse}};
  const auto out = fixtures::vec<double>(e.at("output"));
  const auto w = fixtures::vec<double>(e.at("weights"));
  REQUIRE(out.size() == r.output.size());
  REQUIRE(w.size() == r.weights.size());
  CHECK(excess(r.output.data(), out, abs_tol, rel_tol) == 0);
  CHECK(excess(r.weights.data(), w, abs_tol, rel_tol) == 0);
  for (const auto& [name, t] : rows) {
    INFO(name);
    const auto want = fixtures::vec<double>(e.at(name));
    REQUIRE(want.size() == t->size());
    CHECK(excess(t->data(), want, abs_tol, rel_tol) == 0);
  }
}

template <class T>
AttentionResult<T> run(VCase& c, AttentionOptions o) {
  const std::vector<T> q(c.q.begin(), c.q.end()), k(c.k.begin(), c.k.end()),
      v(c.v.begin(), c.v.end());
  AttentionResult<T> r;
  const attn::Status st =
      attn::attention(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(), o, &r);
  INFO(st.field << ": " << st.message);
  REQUIRE(st.ok());
  return r;
}

template <class T>
attn::Status run_status(const AttentionOptions& o, bool tiled = false) {
  const Shape& s = o.shape;
  std::mt19937 g(1);
  auto x = testing_inputs::make_qkv<T>(s, g);
  AttentionResult<T> r;
  return tiled ? attn::attention_tiled(x.q.data(), x.q.size(), x.k.data(), x.k.size(), x.v.data(),
                                       x.v.size(), o, &r)
               : attn::attention(x.q.data(), x.q.size(), x.k.data(), x.k.size(), x.v.data(),
                                 x.v.size(), o, &r);
}

}  // namespace

TEST_CASE("variants - every fixture case matches the NumPy oracle in its precision",
          "[variants][oracle]") {
  const auto fx = fixtures::load("variants.json");
  REQUIRE(fx.at("cases").size() >= 300);
  int n64 = 0, n32 = 0, n16 = 0;
  for (const auto& jc : fx.at("cases")) {
    VCase c = read_vcase(fx, jc);
    INFO("case " << c.name);
    if (c.precision == "float16") {
      AttentionOptions o = c.bound();
      o.variant.precision = Precision::kFloat16;
      const double tol = std::ldexp(1.0, -9);
      check_against(run<float>(c, o), c.expect, tol, tol);
      ++n16;
    } else if (c.precision == "float32") {
      check_against(run<float>(c, c.bound()), c.expect, 1e-5, 1e-5);
      ++n32;
    } else {
      AttentionOptions o = c.bound();
      o.variant.precision = Precision::kFloat64;
      check_against(run<double>(c, o), c.expect, 1e-9, 1e-9);
      ++n64;
      // The float32 kernel against the same float64 reference (not past float32's range).
      if (c.name.rfind("threshold", 0) != 0) {
        INFO("float32 kernel");
        check_against(run<float>(c, c.bound()), c.expect, 2e-5, 2e-5);
      }
    }
  }
  CHECK(n64 >= 300);
  CHECK(n32 == 4);
  CHECK(n16 >= 20);
}

TEST_CASE("variants - exp overflows without the max shift on the side of each threshold",
          "[variants][oracle]") {
  const auto fx = fixtures::load("variants.json");
  int seen = 0;
  for (const auto& jc : fx.at("cases")) {
    const std::string name = jc.at("name").get<std::string>();
    if (name.rfind("threshold", 0) != 0) continue;
    VCase c = read_vcase(fx, jc);
    INFO(name);
    AttentionOptions o = c.bound();
    double out0;
    if (c.precision == "float64") {
      o.variant.precision = Precision::kFloat64;
      out0 = run<double>(c, o).output(0, 0, 0);
    } else {
      if (c.precision == "float16") o.variant.precision = Precision::kFloat16;
      out0 = run<float>(c, o).output(0, 0, 0);
    }
    const bool above = name.find("above") != std::string::npos;
    const bool shifted = name.find("maxShift=True") != std::string::npos;
    CHECK(std::isnan(out0) == (above && !shifted));
    ++seen;
  }
  CHECK(seen == 12);
}

TEST_CASE("variants - defaults and unused options keep the original kernel's bits", "[variants]") {
  const Shape s{4, 2, 7, 9, 6, 5};
  std::mt19937 g(7);
  auto x = testing_inputs::make_qkv<float>(s, g);
  for (bool causal : {false, true}) {
    AttentionOptions base;
    base.shape = s;
    base.mask.causal = causal;
    AttentionOptions unused = base;  // validated but not used: still the original kernel
    unused.variant.sigmoid_bias = 0.25;
    unused.variant.rope_base = 500;
    for (bool tiled : {false, true}) {
      AttentionResult<float> a, b;
      auto call = [&](const AttentionOptions& o, AttentionResult<float>* r) {
        return tiled ? attn::attention_tiled(x.q.data(), x.q.size(), x.k.data(), x.k.size(),
                                             x.v.data(), x.v.size(), o, r)
                     : attn::attention(x.q.data(), x.q.size(), x.k.data(), x.k.size(), x.v.data(),
                                       x.v.size(), o, r);
      };
      REQUIRE(call(base, &a).ok());
      REQUIRE(call(unused, &b).ok());
      CHECK(std::memcmp(a.output.data(), b.output.data(), a.output.size() * 4) == 0);
      CHECK(std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * 4) == 0);
      CHECK(std::memcmp(a.row_sums.data(), b.row_sums.data(), a.row_sums.size() * 4) == 0);
      for (std::size_t r = 0; r < a.row_sums.size(); ++r) {
        CHECK(a.row_sums.data()[r] == Approx(1).margin(1e-5));
      }
    }
  }
}

TEST_CASE("variants - tiled equals naive for every tiled-capable combination",
          "[variants][tiled]") {
  // T = 150 keys crosses two 64-key tiles; T_q = 70 < T_k; GQA.
  const Shape s{4, 2, 70, 150, 8, 5};
  std::mt19937 g(11);
  auto x = testing_inputs::make_qkv<float>(s, g);
  std::vector<std::uint8_t> pad(s.tk, 1), mask(s.tq * s.tk);
  for (std::size_t j = 0; j < s.tk; j += 7) pad[j] = 0;
  for (auto& m : mask) m = g() % 3 != 0;
  int combos = 0;
  for (Normalizer n :
       {Normalizer::kSoftmax, Normalizer::kSoftmax1, Normalizer::kSigmoid, Normalizer::kRelu}) {
    for (Position p : {Position::kNone, Position::kRope, Position::kAlibi}) {
      for (bool qkn : {false, true}) {
        for (int kind = 0; kind < 5; ++kind) {
          AttentionOptions o;
          o.shape = s;
          o.variant.normalizer = n;
          o.variant.position = p;
          o.variant.qk_norm = qkn;
          if (qkn) o.scale = 4.0;
          if (kind == 1) o.mask.causal = true;
          if (kind == 2) o.mask.key_padding = attn::Bytes(pad.data(), pad.size());
          if (kind == 3) o.mask.window = 20, o.mask.causal = true;
          if (kind == 4) o.mask.mask = attn::Bytes(mask.data(), mask.size());
          INFO("normalizer " << attn::normalizer_name(n) << " position " << attn::position_name(p)
                             << " qkNorm " << qkn << " mask " << kind);
          AttentionResult<float> a, b;
          REQUIRE(attn::attention(x.q.data(), x.q.size(), x.k.data(), x.k.size(), x.v.data(),
                                  x.v.size(), o, &a)
                      .ok());
          REQUIRE(attn::attention_tiled(x.q.data(), x.q.size(), x.k.data(), x.k.size(), x.v.data(),
                                        x.v.size(), o, &b)
                      .ok());
          CHECK(b.weights.size() == 0);
          auto vec = [](const auto& t) { return std::vector<double>(t.begin(), t.end()); };
          CHECK(excess(b.output.data(), vec(a.output), 2e-5, 2e-5) == 0);
          CHECK(excess(b.row_sums.data(), vec(a.row_sums), 2e-5, 2e-5) == 0);
          CHECK(excess(b.entropy.data(), vec(a.entropy), 2e-5, 2e-5) == 0);
          CHECK(excess(b.lse.data(), vec(a.lse), 2e-5, 2e-5) == 0);
          CHECK(a.diag.fully_masked_rows == b.diag.fully_masked_rows);
          ++combos;
        }
      }
    }
  }
  CHECK(combos == 120);
}

TEST_CASE("variants - the tiled kernel's fully masked rows agree with the naive one",
          "[variants][tiled]") {
  const Shape s{2, 1, 5, 3, 4, 3};  // causal with T_q > T_k: rows 0 and 1 see no key
  std::mt19937 g(5);
  auto x = testing_inputs::make_qkv<float>(s, g);
  for (Normalizer n :
       {Normalizer::kSoftmax, Normalizer::kSoftmax1, Normalizer::kSigmoid, Normalizer::kRelu}) {
    for (attn::MaskFill f :
         {attn::MaskFill::kNegInf, attn::MaskFill::kFinite, attn::MaskFill::kZero}) {
      AttentionOptions o;
      o.shape = s;
      o.mask.causal = true;
      o.fill = f;
      o.variant.normalizer = n;
      o.variant.position = Position::kRope;
      AttentionResult<float> a, b;
      REQUIRE(attn::attention(x.q.data(), x.q.size(), x.k.data(), x.k.size(), x.v.data(),
                              x.v.size(), o, &a)
                  .ok());
      REQUIRE(attn::attention_tiled(x.q.data(), x.q.size(), x.k.data(), x.k.size(), x.v.data(),
                                    x.v.size(), o, &b)
                  .ok());
      auto vec = [](const auto& t) { return std::vector<double>(t.begin(), t.end()); };
      CHECK(excess(b.output.data(), vec(a.output), 2e-5, 2e-5) == 0);
      CHECK(excess(b.row_sums.data(), vec(a.row_sums), 2e-5, 2e-5) == 0);
      CHECK(excess(b.lse.data(), vec(a.lse), 2e-5, 2e-5) == 0);
      CHECK(a.diag.fully_masked_rows == 4);
      CHECK(b.diag.fully_masked_rows == 4);
      CHECK(a.diag.nan_rows == b.diag.nan_rows);
    }
  }
}

TEST_CASE("variants - the prefix-sum linear kernel equals naive linear attention",
          "[variants][tiled]") {
  for (const Shape& s :
       {Shape{2, 2, 100, 100, 8, 6}, Shape{4, 2, 40, 90, 6, 4}, Shape{2, 1, 90, 40, 6, 4}}) {
    std::mt19937 g(3);
    auto x = testing_inputs::make_qkv<float>(s, g);
    for (bool causal : {false, true}) {
      for (Position p : {Position::kNone, Position::kRope}) {
        for (bool qkn : {false, true}) {
          AttentionOptions o;
          o.shape = s;
          o.mask.causal = causal;
          o.variant.normalizer = Normalizer::kLinear;
          o.variant.position = p;
          o.variant.qk_norm = qkn;
          INFO("tq " << s.tq << " tk " << s.tk << " causal " << causal << " rope "
                     << (p == Position::kRope) << " qkNorm " << qkn);
          AttentionResult<float> a, b;
          REQUIRE(attn::attention(x.q.data(), x.q.size(), x.k.data(), x.k.size(), x.v.data(),
                                  x.v.size(), o, &a)
                      .ok());
          REQUIRE(attn::attention_tiled(x.q.data(), x.q.size(), x.k.data(), x.k.size(), x.v.data(),
                                        x.v.size(), o, &b)
                      .ok());
          CHECK(b.weights.size() == 0);
          auto vec = [](const auto& t) { return std::vector<double>(t.begin(), t.end()); };
          CHECK(excess(b.output.data(), vec(a.output), 2e-5, 2e-5) == 0);
          CHECK(excess(b.row_sums.data(), vec(a.row_sums), 2e-5, 2e-5) == 0);
          CHECK(a.diag.fully_masked_rows == b.diag.fully_masked_rows);
          for (std::size_t r = 0; r < b.entropy.size(); ++r) {
            CHECK(std::isnan(b.entropy.data()[r]));  // not available from the prefix sums
            CHECK(std::isnan(b.lse.data()[r]));
          }
        }
      }
    }
  }
}

TEST_CASE("variants - every new option's errors name their field", "[variants][errors]") {
  AttentionOptions base;
  base.shape = Shape{2, 1, 4, 6, 4, 3};
  struct Bad {
    const char* field;
    bool tiled;
    bool f64;
    void (*edit)(AttentionOptions*);
  };
  const Bad bad[] = {
      {"ropeBase", false, false, [](AttentionOptions* o) { o->variant.rope_base = 0; }},
      {"ropeBase", false, false, [](AttentionOptions* o) { o->variant.rope_base = -3; }},
      {"ropeBase", false, false, [](AttentionOptions* o) { o->variant.rope_base = NAN; }},
      {"sigmoidBias", false, false,
       [](AttentionOptions* o) { o->variant.sigmoid_bias = INFINITY; }},
      {"sigmoidBias", false, false,
       [](AttentionOptions* o) {
         o->variant.normalizer = Normalizer::kSigmoid;
         o->variant.sigmoid_bias = NAN;
       }},
      {"position", false, false,
       [](AttentionOptions* o) {
         o->variant.position = Position::kRope;
         o->shape.dk = 3;
       }},
      {"position", false, false,
       [](AttentionOptions* o) {
         o->variant.position = Position::kAlibi;
         o->variant.normalizer = Normalizer::kLinear;
       }},
      {"maxShift", false, false,
       [](AttentionOptions* o) {
         o->variant.max_shift = false;
         o->variant.normalizer = Normalizer::kSigmoid;
       }},
      {"maxShift", true, false,
       [](AttentionOptions* o) {
         o->variant.max_shift = false;
         o->variant.normalizer = Normalizer::kRelu;
       }},
      {"precision", false, false,
       [](AttentionOptions* o) {
         o->variant.precision = Precision::kFloat16;
         o->variant.normalizer = Normalizer::kSoftmax1;
       }},
      {"precision", false, false,
       [](AttentionOptions* o) {
         o->variant.precision = Precision::kFloat16;
         o->variant.position = Position::kAlibi;
       }},
      {"precision", false, false,
       [](AttentionOptions* o) {
         o->variant.precision = Precision::kFloat16;
         o->variant.qk_norm = true;
       }},
      {"precision", false, true,
       [](AttentionOptions* o) { o->variant.precision = Precision::kFloat16; }},
      {"precision", false, false,
       [](AttentionOptions* o) { o->variant.precision = Precision::kFloat64; }},
      {"dropout", false, false,
       [](AttentionOptions* o) {
         o->variant.precision = Precision::kFloat16;
         o->dropout = 0.5;
       }},
      {"kernel", true, false,
       [](AttentionOptions* o) { o->variant.precision = Precision::kFloat16; }},
      {"kernel", true, true,
       [](AttentionOptions* o) { o->variant.precision = Precision::kFloat64; }},
      {"kernel", true, false, [](AttentionOptions* o) { o->variant.mask_mode = MaskMode::kAfter; }},
      {"kernel", true, false, [](AttentionOptions* o) { o->variant.max_shift = false; }},
      {"kernel", true, false,
       [](AttentionOptions* o) {
         o->variant.normalizer = Normalizer::kLinear;
         o->mask.window = 2;
       }},
      {"kernel", true, false,
       [](AttentionOptions* o) {
         o->variant.normalizer = Normalizer::kLinear;
         o->mask.causal = true;
         o->variant.mask_mode = MaskMode::kAfter;  // linear's tiled form: 'after' not checked
         o->dropout = 0.1;
       }},
      {"memory", false, false,
       [](AttentionOptions* o) {
         o->variant.qk_norm = true;
         o->memory_cap = attn::estimate_bytes(o->shape, sizeof(float), true, false, o->variant) - 1;
       }},
      {"memory", true, false,
       [](AttentionOptions* o) {
         o->variant.normalizer = Normalizer::kLinear;
         o->memory_cap =
             attn::estimate_bytes(o->shape, sizeof(float), false, false, o->variant) - 1;
       }},
  };
  for (const Bad& b : bad) {
    AttentionOptions o = base;
    b.edit(&o);
    INFO("expect field " << b.field << (b.tiled ? " (tiled)" : "") << (b.f64 ? " (double)" : ""));
    const attn::Status st = b.f64 ? run_status<double>(o, b.tiled) : run_status<float>(o, b.tiled);
    CHECK(!st.ok());
    CHECK(st.field == b.field);
    CHECK(st.message.find(b.field) != std::string::npos);
  }
  // The caps the two estimates name are accepted exactly.
  AttentionOptions o = base;
  o.variant.qk_norm = true;
  o.memory_cap = attn::estimate_bytes(o.shape, sizeof(float), true, false, o.variant);
  CHECK(run_status<float>(o).ok());
  CHECK(attn::estimate_bytes(o.shape, 4, true, false, o.variant) >
        attn::estimate_bytes(o.shape, 4, true, false));
  // The backward pass takes the trainable variants; the demonstrations are refused, naming
  // their option (tests/cpp/test_variant_grad.cpp has the rest).
  AttentionOptions ob = base;
  ob.variant.normalizer = Normalizer::kRelu;
  CHECK(attn::validate_backward(ob, 2 * 4 * 4, 6 * 4, 6 * 3, 2 * 4 * 3, attn::Kernel::kNaive, 4)
            .ok());
  ob.variant.normalizer = Normalizer::kSoftmax;
  ob.variant.max_shift = false;
  CHECK(attn::validate_backward(ob, 2 * 4 * 4, 6 * 4, 6 * 3, 2 * 4 * 3, attn::Kernel::kNaive, 4)
            .field == "maxShift");
}

TEST_CASE("variants - multi_head_attention passes the options through", "[variants][multihead]") {
  attn::MhaOptions m;
  m.t = 6, m.d_model = 8, m.heads = 2;
  m.mask.causal = true;
  m.variant.normalizer = Normalizer::kSoftmax1;
  m.variant.position = Position::kAlibi;
  m.variant.qk_norm = true;
  m.scale = 3.0;
  std::mt19937 g(2);
  const auto x = testing_inputs::normal<float>(6 * 8, g), wq = testing_inputs::normal<float>(64, g),
             wk = testing_inputs::normal<float>(64, g), wv = testing_inputs::normal<float>(64, g),
             wo = testing_inputs::normal<float>(64, g);
  attn::MhaResult<float> r;
  REQUIRE(attn::multi_head_attention(x.data(), x.size(), wq.data(), wq.size(), wk.data(), wk.size(),
                                     wv.data(), wv.size(), wo.data(), wo.size(), m, &r)
              .ok());
  AttentionOptions o;
  o.shape = Shape{2, 2, 6, 6, 4, 4};
  o.mask.causal = true;
  o.scale = 3.0;
  o.variant = m.variant;
  AttentionResult<float> a;
  REQUIRE(
      attn::attention(r.q.data(), r.q.size(), r.k.data(), r.k.size(), r.v.data(), r.v.size(), o, &a)
          .ok());
  CHECK(std::memcmp(a.output.data(), r.attn.output.data(), a.output.size() * 4) == 0);
  CHECK(std::memcmp(a.row_sums.data(), r.attn.row_sums.data(), a.row_sums.size() * 4) == 0);
  // softmax1's rows sum to less than one.
  for (std::size_t i = 0; i < a.row_sums.size(); ++i) CHECK(a.row_sums.data()[i] < 1.0f);
  // A bad option through multi_head_attention names its field too.
  m.variant.normalizer = Normalizer::kLinear;
  const attn::Status st =
      attn::multi_head_attention(x.data(), x.size(), wq.data(), wq.size(), wk.data(), wk.size(),
                                 wv.data(), wv.size(), wo.data(), wo.size(), m, &r);
  CHECK(st.field == "position");
}

TEST_CASE("variants - round_to_half rounds to nearest binary16, ties to even", "[variants]") {
  using attn::round_to_half;
  CHECK(round_to_half(1.0f) == 1.0f);
  CHECK(round_to_half(1.0f + std::ldexp(1.0f, -11)) == 1.0f);  // tie: to even (1)
  CHECK(round_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 1.0f + std::ldexp(1.0f, -9));  // tie up
  CHECK(round_to_half(65504.0f) == 65504.0f);
  CHECK(round_to_half(65519.0f) == 65504.0f);
  CHECK(std::isinf(round_to_half(65520.0f)));  // the tie to even overflows
  CHECK(round_to_half(-1e9f) == -INFINITY);    // the 'finite' fill in binary16
  CHECK(round_to_half(std::ldexp(1.0f, -24)) == std::ldexp(1.0f, -24));      // smallest subnormal
  CHECK(round_to_half(std::ldexp(1.0f, -25)) == 0.0f);                       // tie to even 0
  CHECK(round_to_half(3 * std::ldexp(1.0f, -25)) == std::ldexp(1.0f, -23));  // tie to even 2
  CHECK(std::signbit(round_to_half(-std::ldexp(1.0f, -30))));
  CHECK(std::isnan(round_to_half(NAN)));
  CHECK(round_to_half(11.1f) == 11.1015625f);
  CHECK(round_to_half(std::exp(11.0f)) == 59872.0f);
}

TEST_CASE("variants - ALiBi slopes are Press et al.'s for any head count", "[variants]") {
  const auto s8 = attn::alibi_slopes(8);
  REQUIRE(s8.size() == 8);
  for (std::size_t h = 0; h < 8; ++h) CHECK(s8[h] == std::ldexp(1.0, -static_cast<int>(h + 1)));
  // 6 heads: the 4-head slopes 2^-2, 2^-4, 2^-6, 2^-8, then 2^-1, 2^-3 (every other of 8).
  const std::vector<double> s6{0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};
  CHECK(attn::alibi_slopes(6) == s6);
  const std::vector<double> s3{0.0625, 0.00390625, 0.25};  // 2 heads: 2^-4, 2^-8; then 2^-2
  CHECK(attn::alibi_slopes(3) == s3);
}
