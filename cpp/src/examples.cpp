#include "attn/examples.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "attn/rng.hpp"
#include "attn/softmax.hpp"
#include "checked.hpp"

namespace attn {

namespace {
constexpr std::size_t kMaxExampleT = 4096;
constexpr std::size_t kMaxExampleValues = std::size_t{16} << 20;  // 64 MiB of float32
}  // namespace

MhaOptions mha_options(const Example& e) {
  MhaOptions m;
  m.t = e.t;
  m.d_model = e.d_model;
  m.heads = e.heads;
  m.kv_heads = e.kv_heads;
  m.dk = e.dk;
  m.dv = e.dv;
  m.mask.causal = e.causal;
  return m;
}

std::vector<std::string> lesson_sentence() {
  return {"the", "cat", "sat", "on", "the", "mat", "because", "the", "cat", "was", "tired"};
}

Status induction_example(const std::vector<std::string>& tokens, double sharpness, Example* out) {
  const std::size_t t = tokens.size();
  if (t == 0) return Status::Invalid("tokens", "tokens must hold at least one token");
  if (t > 512) return Status::Invalid("tokens", "the hand-built model takes at most 512 tokens");
  if (!(std::isfinite(sharpness) && sharpness > 0)) {
    return Status::Invalid("sharpness", "sharpness must be a finite positive number");
  }
  // Word identities: index into the sorted vocabulary, as the lesson does.
  std::vector<std::string> vocab = tokens;
  std::sort(vocab.begin(), vocab.end());
  vocab.erase(std::unique(vocab.begin(), vocab.end()), vocab.end());
  const std::size_t nv = vocab.size();
  const std::size_t dk = std::max<std::size_t>({12, nv, t}), d = 2 * dk;

  Example& e = *out;
  e = Example{};
  e.tokens = tokens;
  e.t = t;
  e.d_model = d;
  e.heads = e.kv_heads = 2;
  e.dk = e.dv = dk;
  e.causal = true;
  e.x.assign(t * d, 0.f);
  e.wq.assign(d * d, 0.f);
  e.wk.assign(d * d, 0.f);
  e.wv.assign(d * d, 0.f);
  e.wo.assign(d * d, 0.f);
  const float sh = static_cast<float>(sharpness);
  for (std::size_t i = 0; i < t; ++i) {
    const std::size_t id = std::lower_bound(vocab.begin(), vocab.end(), tokens[i]) - vocab.begin();
    e.x[i * d + id] = 1.f;      // word one-hot, head-1 dims
    e.x[i * d + dk + i] = 1.f;  // position one-hot, head-2 dims
  }
  for (std::size_t a = 0; a < nv; ++a) {  // head 1: same word matches
    e.wq[a * d + a] = sh;
    e.wk[a * d + a] = 1.f;
  }
  for (std::size_t p = 0; p < t; ++p) {  // head 2: query at p looks for position p - 1
    if (p >= 1) e.wq[(dk + p) * d + (dk + p - 1)] = sh;
    e.wk[(dk + p) * d + (dk + p)] = 1.f;
  }
  for (std::size_t a = 0; a < d; ++a) e.wv[a * d + a] = e.wo[a * d + a] = 1.f;
  return Status::Ok();
}

Status random_example(RandomExampleOptions o, Example* out) {
  if (!o.tokens.empty()) o.t = o.tokens.size();
  MhaOptions m;
  m.t = o.t;
  m.d_model = o.d_model;
  m.heads = o.heads;
  m.kv_heads = o.kv_heads;
  m.dk = o.dk;
  m.dv = o.dv;
  Status st = resolve_mha(&m);
  if (!st.ok()) return st;
  if (m.t > kMaxExampleT) {
    return Status::Invalid("t", "t must be at most " + std::to_string(kMaxExampleT));
  }
  using detail::sat_add;
  using detail::sat_mul;
  std::size_t n = sat_mul(m.t, m.d_model);
  n = sat_add(n, sat_mul(m.d_model, sat_mul(m.heads, m.dk)));
  n = sat_add(n, sat_mul(m.d_model, sat_mul(m.kv_heads, m.dk)));
  n = sat_add(n, sat_mul(m.d_model, sat_mul(m.kv_heads, m.dv)));
  n = sat_add(n, sat_mul(sat_mul(m.heads, m.dv), m.d_model));
  if (n > kMaxExampleValues) {
    return Status::Exhausted("memory",
                             "the random example would need more memory than its cap of " +
                                 std::to_string(kMaxExampleValues) + " values");
  }
  Example& e = *out;
  e = Example{};
  e.t = m.t;
  e.d_model = m.d_model;
  e.heads = m.heads;
  e.kv_heads = m.kv_heads;
  e.dk = m.dk;
  e.dv = m.dv;
  e.causal = o.causal;
  if (o.tokens.empty()) {
    for (std::size_t i = 0; i < m.t; ++i) e.tokens.push_back("t" + std::to_string(i));
  } else {
    e.tokens = o.tokens;
  }
  Rng rng(o.seed);
  // The same N(0,1) stream for both inits; the scaled one multiplies each weight draw (in
  // double, before rounding to float) by 1/sqrt(d_model).
  auto draw = [&rng](std::vector<float>* w, std::size_t count, double sd) {
    w->resize(count);
    for (float& x : *w) x = static_cast<float>(sd * rng.normal());
  };
  const double w_sd =
      o.init == WeightInit::kScaled ? 1.0 / std::sqrt(static_cast<double>(m.d_model)) : 1.0;
  draw(&e.x, m.t * m.d_model, 1.0);
  draw(&e.wq, m.d_model * m.heads * m.dk, w_sd);
  draw(&e.wk, m.d_model * m.kv_heads * m.dk, w_sd);
  draw(&e.wv, m.d_model * m.kv_heads * m.dv, w_sd);
  draw(&e.wo, m.heads * m.dv * m.d_model, w_sd);
  return Status::Ok();
}

Status entropy_study(const std::vector<std::size_t>& dks, std::size_t keys, std::size_t queries,
                     std::uint64_t seed, std::vector<EntropyPoint>* out) {
  if (dks.empty() || dks.size() > 16) return Status::Invalid("dks", "dks must hold 1 to 16 widths");
  std::size_t dk_sum = 0;
  for (std::size_t dk : dks) {
    if (dk == 0 || dk > 8192)
      return Status::Invalid("dks", "every entry of dks must be in 1..8192");
    dk_sum += dk;
  }
  if (keys == 0 || keys > 4096) return Status::Invalid("keys", "keys must be in 1..4096");
  if (queries == 0 || queries > 100000) {
    return Status::Invalid("queries", "queries must be in 1..100000");
  }
  // At most 16 * 8192 * 4096 * 100000 < 2^56: 64-bit arithmetic (size_t is 32-bit in wasm).
  const std::uint64_t work = std::uint64_t{dk_sum} * keys * queries;
  if (work > kMaxEntropyStudyWork) {
    return Status::Invalid("queries", "queries * keys * sum(dks) = " + std::to_string(work) +
                                          " multiply-adds is over the budget of " +
                                          std::to_string(kMaxEntropyStudyWork) +
                                          "; use fewer queries, keys or widths");
  }
  out->clear();
  Rng rng(seed);
  std::vector<double> k, q, s(keys), s1(keys);
  for (std::size_t dk : dks) {
    k.resize(keys * dk);
    for (double& x : k) x = rng.normal();
    double sum_scaled = 0, sum_unscaled = 0;
    q.resize(dk);
    const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
    for (std::size_t n = 0; n < queries; ++n) {
      for (double& x : q) x = rng.normal();
      for (std::size_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (std::size_t c = 0; c < dk; ++c) dot += q[c] * k[j * dk + c];
        s[j] = dot * scale;
        s1[j] = dot;
      }
      softmax_rows(s.data(), 1, keys);
      softmax_rows(s1.data(), 1, keys);
      sum_scaled += row_entropy(s.data(), keys);
      sum_unscaled += row_entropy(s1.data(), keys);
    }
    out->push_back({dk, sum_scaled / queries, sum_unscaled / queries});
  }
  return Status::Ok();
}

}  // namespace attn
