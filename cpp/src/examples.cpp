#include "attn/examples.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

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
  m.tk = e.tk;
  m.mask.causal = e.causal;
  return m;
}

std::vector<std::string> lesson_sentence() {
  return {"the", "cat", "sat", "on", "the", "mat", "because", "the", "cat", "was", "tired"};
}

Status induction_example(const std::vector<std::string>& tokens, double sharpness, Example* out) {
  const std::size_t t = tokens.size();
  if (t == 0) return Status::Invalid("tokens", "tokens must hold at least one token");
  if (t > kMaxHandBuiltTokens) {
    return Status::Invalid("tokens", "the hand-built model takes at most " +
                                         std::to_string(kMaxHandBuiltTokens) + " tokens");
  }
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

namespace {

// The alignment example's bilingual lexicon: a concept (upper case, so no folded word can
// name one) and its English and French words, lower case.
struct Concept {
  const char* name;
  std::vector<const char*> words;
};
const std::vector<Concept>& lexicon() {
  static const std::vector<Concept> kLexicon = {
      {"DET", {"the", "le", "la", "les", "l'"}},
      {"A", {"a", "an", "un", "une"}},
      {"CAT", {"cat", "chat"}},
      {"DOG", {"dog", "chien"}},
      {"BIRD", {"bird", "oiseau"}},
      {"SIT", {"sat", "sits", "assis", "assise"}},
      {"BE", {"was", "is", "were", "\xc3\xa9tait", "est", "\xc3\xa9taient"}},  // était
      {"SLEEP", {"sleeps", "slept", "dort", "dormait"}},
      {"SEE", {"sees", "saw", "voit", "voyait"}},
      {"ON", {"on", "sur"}},
      {"IN", {"in", "dans"}},
      {"UNDER", {"under", "sous"}},
      {"WITH", {"with", "avec"}},
      {"AND", {"and", "et"}},
      {"BECAUSE", {"because", "parce"}},
      {"MAT", {"mat", "tapis"}},
      {"HOUSE", {"house", "maison"}},
      {"GARDEN", {"garden", "jardin"}},
      {"BLACK", {"black", "noir", "noire"}},
      {"WHITE", {"white", "blanc", "blanche"}},
      {"SMALL", {"small", "little", "petit", "petite"}},
      {"BIG", {"big", "grand", "grande"}},
      {"TIRED",
       {"tired", "fatigu\xc3\xa9",
        "fatigu\xc3\xa9"
        "e"}},  // fatigué(e)
      {"HE", {"he", "il"}},
      {"SHE", {"she", "elle"}},
  };
  return kLexicon;
}

// A word's concept: its lexicon entry, or the folded word itself (its own concept).
std::string concept_of(const std::string& word) {
  static const std::unordered_map<std::string, std::string> kIndex = [] {
    std::unordered_map<std::string, std::string> m;
    for (const Concept& c : lexicon()) {
      for (const char* w : c.words) m.emplace(w, c.name);
    }
    return m;
  }();
  std::string folded = word;
  for (char& ch : folded) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');  // ASCII only
  }
  const auto it = kIndex.find(folded);
  return it == kIndex.end() ? folded : it->second;
}

}  // namespace

std::vector<std::string> alignment_queries() {
  return {"the", "cat", "sat", "on", "the", "mat"};
}
std::vector<std::string> alignment_keys() {
  return {"le", "chat", "\xc3\xa9tait", "assis", "sur", "le", "tapis"};
}

Status alignment_example(const std::vector<std::string>& queries,
                         const std::vector<std::string>& keys, double sharpness, Example* out) {
  const std::size_t tq = queries.size(), tk = keys.size();
  const std::string most = std::to_string(kMaxHandBuiltTokens);
  if (tq == 0) return Status::Invalid("queries", "queries must hold at least one token");
  if (tq > kMaxHandBuiltTokens) {
    return Status::Invalid("queries", "the hand-built model takes at most " + most + " queries");
  }
  if (tk == 0) return Status::Invalid("keys", "keys must hold at least one token");
  if (tk > kMaxHandBuiltTokens) {
    return Status::Invalid("keys", "the hand-built model takes at most " + most + " keys");
  }
  if (!(std::isfinite(sharpness) && sharpness > 0)) {
    return Status::Invalid("sharpness", "sharpness must be a finite positive number");
  }
  // Concept ids in order of first appearance, queries then keys.
  std::unordered_map<std::string, std::size_t> ids;
  std::vector<std::size_t> q_id(tq), k_id(tk);
  auto id_of = [&ids](const std::string& word) {
    return ids.emplace(concept_of(word), ids.size()).first->second;
  };
  for (std::size_t i = 0; i < tq; ++i) q_id[i] = id_of(queries[i]);
  for (std::size_t j = 0; j < tk; ++j) k_id[j] = id_of(keys[j]);
  const std::size_t nc = ids.size();
  // The lesson's width 12 unless the concepts or positions need more.
  const std::size_t dk = std::max<std::size_t>({12, nc, tq, tk}), d = 2 * dk;

  Example& e = *out;
  e = Example{};
  e.tokens = queries;
  e.kv_tokens = keys;
  e.t = tq;
  e.tk = tk;
  e.d_model = d;
  e.heads = e.kv_heads = 2;
  e.dk = e.dv = dk;
  e.causal = false;
  e.x.assign(tq * d, 0.f);
  e.x_kv.assign(tk * d, 0.f);
  e.wq.assign(d * d, 0.f);
  e.wk.assign(d * d, 0.f);
  e.wv.assign(d * d, 0.f);
  e.wo.assign(d * d, 0.f);
  const float sh = static_cast<float>(sharpness);
  for (std::size_t i = 0; i < tq; ++i) {
    e.x[i * d + q_id[i]] = 1.f;  // concept one-hot, head-1 dims
    e.x[i * d + dk + i] = 1.f;   // position one-hot, head-2 dims
  }
  for (std::size_t j = 0; j < tk; ++j) {
    e.x_kv[j * d + k_id[j]] = 1.f;
    e.x_kv[j * d + dk + j] = 1.f;
  }
  for (std::size_t c = 0; c < nc; ++c) {  // head 1: same concept matches
    e.wq[c * d + c] = sh;
    e.wk[c * d + c] = 1.f;
  }
  for (std::size_t i = 0; i < tq; ++i) {  // head 2: query i looks for key position j(i)
    // round(i (T_k - 1) / (T_q - 1)), halves up, in integers: floor((2 i (T_k-1) + T_q-1) / (2
    // (T_q-1)))
    const std::size_t j = tq == 1 ? 0 : (2 * i * (tk - 1) + (tq - 1)) / (2 * (tq - 1));
    e.wq[(dk + i) * d + (dk + j)] = sh;
  }
  for (std::size_t j = 0; j < tk; ++j) e.wk[(dk + j) * d + (dk + j)] = 1.f;
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
  const std::size_t tk = o.kv_tokens.size();
  if (tk > kMaxExampleT) {
    return Status::Invalid(
        "kvTokens", "kvTokens must hold at most " + std::to_string(kMaxExampleT) + " tokens");
  }
  using detail::sat_add;
  using detail::sat_mul;
  std::size_t n = sat_mul(m.t, m.d_model);
  n = sat_add(n, sat_mul(m.d_model, sat_mul(m.heads, m.dk)));
  n = sat_add(n, sat_mul(m.d_model, sat_mul(m.kv_heads, m.dk)));
  n = sat_add(n, sat_mul(m.d_model, sat_mul(m.kv_heads, m.dv)));
  n = sat_add(n, sat_mul(sat_mul(m.heads, m.dv), m.d_model));
  n = sat_add(n, sat_mul(tk, m.d_model));
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
  if (tk > 0) {  // after W_o: the self-attention draws above stay those of the seed
    e.kv_tokens = o.kv_tokens;
    e.tk = tk;
    draw(&e.x_kv, tk * m.d_model, 1.0);
  }
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
