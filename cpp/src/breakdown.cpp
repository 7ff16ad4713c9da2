#include "attn/breakdown.hpp"

#include <cmath>
#include <string>

#include "attn/mask.hpp"
#include "attn/validate.hpp"
#include "attn/variants.hpp"
#include "score_rows.hpp"

namespace attn {

template <class T>
Status score_breakdown(const T* q, std::size_t q_len, const T* k, std::size_t k_len,
                       const AttentionOptions& opts, const BreakdownCell& cell, Breakdown<T>* out) {
  const Shape& s = opts.shape;
  // 1. The call's own checks (v is not read: its expected length is passed through).
  const std::size_t v_len = s.kv_heads * s.tk * s.dv;
  Status st = validate(opts, q_len, k_len, v_len, true, sizeof(T));  // as the naive kernel
  if (!st.ok()) return st;
  if (cell.head >= s.heads || cell.query >= s.tq || cell.key >= s.tk)
    return Status::Invalid("cell", "cell (head " + std::to_string(cell.head) + ", query " +
                                       std::to_string(cell.query) + ", key " +
                                       std::to_string(cell.key) + ") is outside heads " +
                                       std::to_string(s.heads) + ", T_q " + std::to_string(s.tq) +
                                       ", T_k " + std::to_string(s.tk));
  const Variant& v = opts.variant;
  const detail::ScoreRows rows(opts);  // the rows as the score uses them (score_rows.hpp)
  const std::size_t d = s.dk, kvh = rows.kv_head(cell.head);
  // The query's position on the key axis, i' = i + (T_k − T_q): the masks' alignment.
  const double qpos = rows.query_pos(cell.query);
  const bool linear = v.normalizer == Normalizer::kLinear;
  out->scale = linear ? 1.0 : effective_scale(opts);
  const double slope = v.position == Position::kAlibi ? alibi_slopes(s.heads)[cell.head] : 0.0;

  // 2. The query row as the score uses it.
  const T* qr = q + (cell.head * s.tq + cell.query) * d;
  out->q_raw.assign(qr, qr + d);
  out->q.resize(d);
  rows.query(q, cell.head, cell.query, out->q.data());

  // 3. Every key of the row, formed alike; the selected one kept in full.
  out->row_scores.assign(s.tk, 0);
  out->row_allowed.assign(s.tk, 0);
  out->next_best = -std::numeric_limits<double>::infinity();
  std::vector<T> kt(d);
  for (std::size_t j = 0; j < s.tk; ++j) {
    const T* kr = k + (kvh * s.tk + j) * d;
    rows.key(k, kvh, j, kt.data());
    double dot = 0;
    for (std::size_t c = 0; c < d; ++c) dot += static_cast<double>(out->q[c] * kt[c]);
    const double bias = -slope * std::fabs(qpos - static_cast<double>(j));
    const double score = out->scale * dot + bias;
    const bool ok = is_allowed(opts.mask, cell.query, j, s.tq, s.tk);
    out->row_scores[j] = score;
    out->row_allowed[j] = ok ? 1 : 0;
    if (j == cell.key) {
      out->k_raw.assign(kr, kr + d);
      out->k = kt;
      out->products.resize(d);
      for (std::size_t c = 0; c < d; ++c) out->products[c] = out->q[c] * kt[c];
      out->dot = dot;
      out->bias = bias;
      out->score = score;
      out->allowed = ok;
    } else if (ok && score > out->next_best) {
      out->next_best = score;
    }
  }
  return Status::Ok();
}

template Status score_breakdown<float>(const float*, std::size_t, const float*, std::size_t,
                                       const AttentionOptions&, const BreakdownCell&,
                                       Breakdown<float>*);
template Status score_breakdown<double>(const double*, std::size_t, const double*, std::size_t,
                                        const AttentionOptions&, const BreakdownCell&,
                                        Breakdown<double>*);

}  // namespace attn
