#include "attn/tr/probe.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>

#include "attn/rng.hpp"

namespace attn::tr {

std::size_t probe_length(std::size_t seq_len) {
  return std::min(seq_len / 2, kProbeMaxHalf);
}

Status make_probe(const ModelConfig& c, const std::vector<std::int32_t>& candidates,
                  std::size_t count, std::uint64_t seed, std::vector<std::int32_t>* tokens) {
  const std::size_t n = probe_length(c.seq_len);
  if (n < 2) {
    return Status::Invalid("seqLen",
                           "the probe needs seqLen >= 4 (got " + std::to_string(c.seq_len) + ")");
  }
  if (count < 1) return Status::Invalid("count", "count must be at least 1");
  if (candidates.empty()) return Status::Invalid("candidates", "candidates must not be empty");
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i] < 0 || static_cast<std::size_t>(candidates[i]) >= c.vocab) {
      return Status::Invalid("candidates", "candidates[" + std::to_string(i) +
                                               "] = " + std::to_string(candidates[i]) +
                                               " is outside [0, vocab)");
    }
  }
  const double m = static_cast<double>(candidates.size());
  Rng rng(seed);
  tokens->resize(count * 2 * n);
  for (std::size_t b = 0; b < count; ++b) {
    std::int32_t* row = tokens->data() + b * 2 * n;
    for (std::size_t i = 0; i < n; ++i) {
      // uniform() < 1, so the index stays below m.
      row[i] = candidates[static_cast<std::size_t>(rng.uniform() * m)];
      row[n + i] = row[i];
    }
  }
  return Status::Ok();
}

namespace {

// One forward of (batch, t) tokens with every layer's (batch*H, t, t) weights kept.
template <class T>
Status forward_keep(const ModelConfig& c, const T* params, const std::int32_t* tokens,
                    std::size_t batch, std::size_t t, const std::uint8_t* ablate,
                    Workspace<T>* ws) {
  Status st = validate_model(c, 1);
  if (!st.ok()) return st;
  RunOptions ro;
  ro.keep_weights = true;
  ro.ablate = ablate;
  return forward_backward(c, params, tokens, static_cast<const std::uint8_t*>(nullptr), batch, t,
                          ro, ws, static_cast<T*>(nullptr), static_cast<double*>(nullptr), nullptr);
}

// -log softmax(logits)[target] in double.
template <class T>
double cross_entropy(const T* lg, std::size_t V, std::size_t target) {
  double mx = lg[0];
  for (std::size_t j = 1; j < V; ++j) mx = std::max(mx, double(lg[j]));
  double sum = 0;
  for (std::size_t j = 0; j < V; ++j) sum += std::exp(double(lg[j]) - mx);
  return mx + std::log(sum) - double(lg[target]);
}

}  // namespace

template <class T>
Status probe_scores(const ModelConfig& c, const T* params, const std::int32_t* probe,
                    std::size_t count, const std::uint8_t* ablate, Workspace<T>* ws,
                    ProbeScores* out) {
  const std::size_t n = probe_length(c.seq_len), t = 2 * n;
  if (n < 2) {
    return Status::Invalid("seqLen",
                           "the probe needs seqLen >= 4 (got " + std::to_string(c.seq_len) + ")");
  }
  if (count < 1) return Status::Invalid("count", "count must be at least 1");
  Status st = forward_keep(c, params, probe, count, t, ablate, ws);
  if (!st.ok()) return st;
  const std::size_t L = c.layers, H = c.heads, V = c.vocab;
  // Row b*t + j - 1 of the logits predicts token j of row b.
  double first = 0, second = 0;
  for (std::size_t b = 0; b < count; ++b) {
    const std::int32_t* tok = probe + b * t;
    const T* lg = ws->logits.data() + b * t * V;
    for (std::size_t j = 1; j < n; ++j)
      first += cross_entropy(lg + (j - 1) * V, V, static_cast<std::size_t>(tok[j]));
    for (std::size_t j = n + 1; j < t; ++j)
      second += cross_entropy(lg + (j - 1) * V, V, static_cast<std::size_t>(tok[j]));
  }
  const double targets = double(count) * double(n - 1);
  out->ce_first = first / targets;
  out->ce_second = second / targets;
  out->in_context = out->ce_second - out->ce_first;
  out->induction.assign(L * H, 0.0);
  out->previous.assign(L * H, 0.0);
  for (std::size_t l = 0; l < L; ++l) {
    const T* w = ws->att[l].weights.data();  // (count*H, t, t)
    for (std::size_t h = 0; h < H; ++h) {
      double ind = 0, prev = 0;
      for (std::size_t b = 0; b < count; ++b) {
        const T* a = w + (b * H + h) * t * t;
        for (std::size_t i = n; i < t; ++i) ind += double(a[i * t + i - n + 1]);
        for (std::size_t i = 1; i < t; ++i) prev += double(a[i * t + i - 1]);
      }
      out->induction[l * H + h] = ind / (double(count) * double(n));
      out->previous[l * H + h] = prev / (double(count) * double(t - 1));
    }
  }
  return Status::Ok();
}

template <class T>
Status text_head_scores(const ModelConfig& c, const T* params, const std::int32_t* tokens,
                        std::size_t t, const std::uint8_t* ablate, Workspace<T>* ws,
                        TextHeadScores* out) {
  if (t < 2 || t > c.seq_len) {
    return Status::Invalid(
        "tokens", "tokens must hold 2 to seqLen (" + std::to_string(c.seq_len) + ") values");
  }
  Status st = forward_keep(c, params, tokens, 1, t, ablate, ws);
  if (!st.ok()) return st;
  const std::size_t L = c.layers, H = c.heads;
  out->previous.assign(L * H, 0.0);
  out->duplicate.assign(L * H, 0.0);
  out->first.assign(L * H, 0.0);
  out->induction.assign(L * H, 0.0);
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t h = 0; h < H; ++h) {
      const T* a = ws->att[l].weights.data() + h * t * t;
      double prev = 0, first = 0, dup = 0, ind = 0;
      std::size_t dup_rows = 0, ind_rows = 0;
      for (std::size_t i = 1; i < t; ++i) {
        prev += double(a[i * t + i - 1]);
        first += double(a[i * t]);
        double s = 0, si = 0;
        bool any = false, any_ind = false;
        for (std::size_t j = 0; j < i; ++j)
          if (tokens[j] == tokens[i]) {
            s += double(a[i * t + j]);
            any = true;
            // Key j + 1 once per earlier occurrence j (distinct j give distinct keys); j + 1 = i
            // is the previous-token key, left out.
            if (j + 1 < i) {
              si += double(a[i * t + j + 1]);
              any_ind = true;
            }
          }
        if (any) {
          dup += s;
          ++dup_rows;
        }
        if (any_ind) {
          ind += si;
          ++ind_rows;
        }
      }
      out->previous[l * H + h] = prev / double(t - 1);
      out->first[l * H + h] = first / double(t - 1);
      out->duplicate[l * H + h] = dup_rows ? dup / double(dup_rows) : 0.0;
      out->induction[l * H + h] = ind_rows ? ind / double(ind_rows) : 0.0;
    }
  return Status::Ok();
}

namespace {

constexpr const char* kHeadRoles[] = {"previous-token", "induction", "duplicate-token",
                                      "first-token", "mixed"};
static_assert(std::size(kHeadRoles) == kHeadRoleCount);
static_assert(static_cast<std::size_t>(HeadRole::kMixed) + 1 == kHeadRoleCount);
constexpr NameList kHeadRoleList{"role", kHeadRoles, std::size(kHeadRoles)};

}  // namespace

const NameList& head_role_names() {
  return kHeadRoleList;
}

const char* head_role_name(HeadRole r) {
  return kHeadRoles[static_cast<std::size_t>(r)];
}

HeadRole head_role(double previous, double induction, double duplicate, double first) {
  const double s[] = {previous, induction, duplicate, first};  // in HeadRole order
  std::size_t best = 0;
  double v = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < 4; ++k)
    if (s[k] > v) {  // strict: a tie keeps the earlier score; NaN never compares greater
      v = s[k];
      best = k;
    }
  return v >= kRoleThreshold ? static_cast<HeadRole>(best) : HeadRole::kMixed;
}

HeadRole head_role(const TextHeadScores& s, std::size_t index) {
  return head_role(s.previous[index], s.induction[index], s.duplicate[index], s.first[index]);
}

template <class T>
Status probe_scores_chunked(const ModelConfig& c, const T* params, const std::int32_t* probe,
                            std::size_t rows, std::size_t chunk, const std::uint8_t* ablate,
                            Workspace<T>* ws, ProbeScores* out) {
  if (chunk < 1) return Status::Invalid("chunk", "chunk must be at least 1");
  if (rows < 1) return Status::Invalid("count", "count must be at least 1");
  const std::size_t t = 2 * probe_length(c.seq_len), LH = c.layers * c.heads;
  ProbeScores sum;
  sum.induction.assign(LH, 0.0);
  sum.previous.assign(LH, 0.0);
  for (std::size_t r0 = 0; r0 < rows; r0 += chunk) {
    const std::size_t count = std::min(chunk, rows - r0);
    ProbeScores ps;
    Status st = probe_scores(c, params, probe + r0 * t, count, ablate, ws, &ps);
    if (!st.ok()) return st;
    // Every row has the same number of targets and queries: a chunk's mean times its rows.
    const double w = static_cast<double>(count);
    sum.ce_first += ps.ce_first * w;
    sum.ce_second += ps.ce_second * w;
    for (std::size_t i = 0; i < LH; ++i) {
      sum.induction[i] += ps.induction[i] * w;
      sum.previous[i] += ps.previous[i] * w;
    }
  }
  const double all = static_cast<double>(rows);
  sum.ce_first /= all;
  sum.ce_second /= all;
  sum.in_context = sum.ce_second - sum.ce_first;
  for (std::size_t i = 0; i < LH; ++i) {
    sum.induction[i] /= all;
    sum.previous[i] /= all;
  }
  *out = std::move(sum);
  return Status::Ok();
}

#define ATTN_PROBE(T)                                                                             \
  template Status probe_scores<T>(const ModelConfig&, const T*, const std::int32_t*, std::size_t, \
                                  const std::uint8_t*, Workspace<T>*, ProbeScores*);              \
  template Status probe_scores_chunked<T>(const ModelConfig&, const T*, const std::int32_t*,      \
                                          std::size_t, std::size_t, const std::uint8_t*,          \
                                          Workspace<T>*, ProbeScores*);                           \
  template Status text_head_scores<T>(const ModelConfig&, const T*, const std::int32_t*,          \
                                      std::size_t, const std::uint8_t*, Workspace<T>*,            \
                                      TextHeadScores*);
ATTN_PROBE(float)
ATTN_PROBE(double)
#undef ATTN_PROBE

}  // namespace attn::tr
