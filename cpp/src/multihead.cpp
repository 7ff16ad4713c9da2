#include "attn/multihead.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "attn/bytes_text.hpp"
#include "attn/gemm.hpp"
#include "attn/tiled.hpp"
#include "checked.hpp"
#include "kernels.hpp"

namespace attn {

template <class T>
Status split_heads(const xt::xtensor<T, 2>& x, std::size_t heads, xt::xtensor<T, 3>* out) {
  const std::size_t t = x.shape(0), width = x.shape(1);
  if (heads == 0) return Status::Invalid("heads", "heads must be at least 1");
  // heads > width (including width 0) would loop heads * t times over empty slices.
  if (width % heads != 0 || heads > width) {
    return Status::Invalid("heads", "a width of " + std::to_string(width) +
                                        " cannot be split into " + std::to_string(heads) +
                                        " equal heads");
  }
  const std::size_t d = width / heads;
  out->resize({heads, t, d});
  // out[h, i, :] = x[i, h*d : (h+1)*d]
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < t; ++i)
      std::copy_n(x.data() + i * width + h * d, d, out->data() + (h * t + i) * d);
  return Status::Ok();
}

namespace {
// out[i, h*d : (h+1)*d] = y[h, i, :] for y (heads, t, d) and out (t, heads*d).
template <class T>
void merge_into(const T* y, std::size_t heads, std::size_t t, std::size_t d, T* out) {
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < t; ++i)
      std::copy_n(y + (h * t + i) * d, d, out + i * heads * d + h * d);
}
}  // namespace

template <class T>
xt::xtensor<T, 2> merge_heads(const xt::xtensor<T, 3>& y) {
  const std::size_t heads = y.shape(0), t = y.shape(1), d = y.shape(2);
  xt::xtensor<T, 2> out({t, heads * d});
  merge_into(y.data(), heads, t, d, out.data());
  return out;
}

Status resolve_mha(MhaOptions* o) {
  if (o->t == 0) return Status::Invalid("t", "t must be at least 1");
  if (o->d_model == 0) return Status::Invalid("dModel", "dModel must be at least 1");
  if (o->heads == 0) return Status::Invalid("heads", "heads must be at least 1");
  if (o->kv_heads == 0) o->kv_heads = o->heads;
  if (o->heads % o->kv_heads != 0) {
    return Status::Invalid("kvHeads", "kvHeads (" + std::to_string(o->kv_heads) +
                                          ") must divide heads (" + std::to_string(o->heads) + ")");
  }
  if (o->dk == 0) {
    if (o->d_model % o->heads != 0) {
      return Status::Invalid("dModel", "dModel (" + std::to_string(o->d_model) +
                                           ") is not divisible by heads (" +
                                           std::to_string(o->heads) + "); give dk explicitly");
    }
    o->dk = o->d_model / o->heads;
  }
  if (o->dv == 0) o->dv = o->dk;
  if (o->tk == 0) o->tk = o->t;
  // The masks' lengths (they carry them): checked here too, so a caller that copies the
  // inputs after resolving (the wasm bindings) never copies a mask of the wrong size.
  if (o->mask.key_padding && o->mask.key_padding.size != o->tk) {
    return Status::Invalid("keyPadding", "keyPadding has " +
                                             std::to_string(o->mask.key_padding.size) +
                                             " entries but tk = " + std::to_string(o->tk));
  }
  if (o->mask.mask && (o->mask.mask.size % o->t != 0 || o->mask.mask.size / o->t != o->tk)) {
    return Status::Invalid("mask", "mask has " + std::to_string(o->mask.mask.size) +
                                       " entries but t*tk = " + std::to_string(o->t) + "*" +
                                       std::to_string(o->tk));
  }
  return Status::Ok();
}

namespace {

// c (n, p) = a (n, m) @ b (m, p), all row-major: attn::gemm's register-blocked SIMD128 kernel
// (each c[i][j] summed over k ascending, multiply then add: the same sums, bit for bit, as the
// row-by-row axpy loop it replaces, about 2-3x faster for the projections at d_model 512).
template <class T>
void matmul(const T* a, const T* b, T* c, std::size_t n, std::size_t m, std::size_t p) {
  gemm(Trans::kNN, n, p, m, a, m, b, p, T(0), c, p, nullptr);
}

Status check_len(const char* field, std::size_t got, std::size_t rows, std::size_t cols,
                 const char* shape) {
  std::size_t want;
  if (!detail::checked_product({rows, cols}, &want)) {
    return Status::Exhausted("memory", std::string(field) + " is too large to address in memory");
  }
  if (got != want) {
    return Status::Invalid(field, std::string(field) + " has " + std::to_string(got) +
                                      " values but " + shape + " = " + std::to_string(rows) + "x" +
                                      std::to_string(cols) + " = " + std::to_string(want));
  }
  return Status::Ok();
}

}  // namespace

std::size_t estimate_mha_bytes(const MhaOptions& o, std::size_t elem_size) {
  using detail::sat_add;
  using detail::sat_mul;
  const std::size_t tk = o.tk ? o.tk : o.t;
  // Projections: unsplit Q (T_q rows), K and V (T_k rows), their split copies, merged and
  // output (T_q rows), on top of attention.
  std::size_t proj = sat_mul(2, sat_mul(o.t, sat_mul(o.heads, o.dk)));
  for (std::size_t cols : {sat_mul(o.kv_heads, o.dk), sat_mul(o.kv_heads, o.dv)})
    proj = sat_add(proj, sat_mul(2, sat_mul(tk, cols)));
  proj = sat_add(proj, sat_mul(o.t, sat_add(sat_mul(o.heads, o.dv), o.d_model)));
  const Shape s{o.heads, o.kv_heads, o.t, tk, o.dk, o.dv};
  return sat_add(sat_mul(proj, elem_size),
                 estimate_bytes(s, elem_size, !o.tiled, o.return_scores, o.variant));
}

template <class T>
Status multi_head_attention(const T* x, std::size_t x_len, const T* wq, std::size_t wq_len,
                            const T* wk, std::size_t wk_len, const T* wv, std::size_t wv_len,
                            const T* wo, std::size_t wo_len, MhaOptions o, MhaResult<T>* out) {
  if (o.tk != 0 && o.tk != o.t) {
    return Status::Invalid("tk", "tk (" + std::to_string(o.tk) + ") differs from t (" +
                                     std::to_string(o.t) +
                                     ") in self-attention: give xKv for cross-attention");
  }
  // Self-attention is cross-attention of x with itself.
  return multi_head_attention(x, x_len, x, x_len, wq, wq_len, wk, wk_len, wv, wv_len, wo, wo_len, o,
                              out);
}

template <class T>
Status multi_head_attention(const T* x, std::size_t x_len, const T* x_kv, std::size_t x_kv_len,
                            const T* wq, std::size_t wq_len, const T* wk, std::size_t wk_len,
                            const T* wv, std::size_t wv_len, const T* wo, std::size_t wo_len,
                            MhaOptions o, MhaResult<T>* out) {
  Status st = resolve_mha(&o);
  if (!st.ok()) return st;
  using detail::sat_mul;
  const std::size_t wq_cols = sat_mul(o.heads, o.dk), wk_cols = sat_mul(o.kv_heads, o.dk),
                    wv_cols = sat_mul(o.kv_heads, o.dv), wo_rows = sat_mul(o.heads, o.dv);
  if (!(st = check_len("x", x_len, o.t, o.d_model, "t*dModel")).ok()) return st;
  if (!(st = check_len("xKv", x_kv_len, o.tk, o.d_model, "tk*dModel")).ok()) return st;
  if (!(st = check_len("wq", wq_len, o.d_model, wq_cols, "dModel*(heads*dk)")).ok()) return st;
  if (!(st = check_len("wk", wk_len, o.d_model, wk_cols, "dModel*(kvHeads*dk)")).ok()) return st;
  if (!(st = check_len("wv", wv_len, o.d_model, wv_cols, "dModel*(kvHeads*dv)")).ok()) return st;
  if (!(st = check_len("wo", wo_len, wo_rows, o.d_model, "(heads*dv)*dModel")).ok()) return st;

  AttentionOptions ao;
  ao.shape = Shape{o.heads, o.kv_heads, o.t, o.tk, o.dk, o.dv};
  ao.mask = o.mask;
  ao.scale = o.scale;
  ao.fill = o.fill;
  ao.return_scores = o.return_scores;
  ao.memory_cap = o.memory_cap;
  ao.variant = o.variant;
  // Scale, masks and the attention's own memory are checked before anything is allocated.
  st = validate(ao, sat_mul(wq_cols, o.t), sat_mul(wk_cols, o.tk), sat_mul(wv_cols, o.tk), !o.tiled,
                sizeof(T));
  if (!st.ok()) return st;
  const std::size_t need = estimate_mha_bytes(o, sizeof(T));
  if (need > o.memory_cap) {
    return Status::Exhausted("memory", "this request needs " + detail::bytes_text(need) +
                                           " of working memory, over the cap of " +
                                           detail::bytes_text(o.memory_cap));
  }

  // 1. Project: Q = x W_Q (T_q, d_model) @ (d_model, H*d_k); K = x_kv W_K and V = x_kv W_V,
  //    (T_k, d_model) @ (d_model, H_kv*d).
  xt::xtensor<T, 2> pq({o.t, wq_cols}), pk({o.tk, wk_cols}), pv({o.tk, wv_cols});
  matmul(x, wq, pq.data(), o.t, o.d_model, wq_cols);
  matmul(x_kv, wk, pk.data(), o.tk, o.d_model, wk_cols);
  matmul(x_kv, wv, pv.data(), o.tk, o.d_model, wv_cols);
  // 2. Split: (T, H*d) -> (H, T, d) with T = T_q for Q and T_k for K and V; the head axis
  //    becomes a batch axis.
  split_heads(pq, o.heads, &out->q);
  split_heads(pk, o.kv_heads, &out->k);
  split_heads(pv, o.kv_heads, &out->v);
  // 3. Attend per head: scores (H, T_q, T_k), outputs (H, T_q, d_v).
  st = o.tiled ? attention_tiled(out->q.data(), out->q.size(), out->k.data(), out->k.size(),
                                 out->v.data(), out->v.size(), ao, &out->attn)
               : attention(out->q.data(), out->q.size(), out->k.data(), out->k.size(),
                           out->v.data(), out->v.size(), ao, &out->attn);
  if (!st.ok()) return st;
  // 4. Merge (H, T_q, d_v) -> (T_q, H*d_v) and mix with W_o.
  return merge_and_project(out->attn.output.data(), out->attn.output.size(), wo, wo_len,
                           MergeOptions{o.t, o.heads, o.dv, o.d_model, o.memory_cap}, &out->merged,
                           &out->output);
}

template <class T>
Status merge_and_project(const T* y, std::size_t y_len, const T* wo, std::size_t wo_len,
                         const MergeOptions& o, xt::xtensor<T, 2>* merged,
                         xt::xtensor<T, 2>* output) {
  for (const auto& [field, n] : {std::pair<const char*, std::size_t>{"t", o.t},
                                 {"heads", o.heads},
                                 {"dv", o.dv},
                                 {"dModel", o.d_model}}) {
    if (n == 0) return Status::Invalid(field, std::string(field) + " must be at least 1");
  }
  std::size_t width;
  if (!detail::checked_product({o.heads, o.dv}, &width)) {
    return Status::Exhausted("memory", "heads*dv is too large to address in memory");
  }
  Status st = check_len("headOutputs", y_len, o.heads, detail::sat_mul(o.t, o.dv), "heads*(t*dv)");
  if (!st.ok()) return st;
  if (!(st = check_len("wo", wo_len, width, o.d_model, "(heads*dv)*dModel")).ok()) return st;
  // The results, merged (T, H*d_v) = y's length and output (T, d_model), against the cap.
  const std::size_t need =
      detail::sat_mul(sizeof(T), detail::sat_add(y_len, detail::sat_mul(o.t, o.d_model)));
  if (need > o.memory_cap) {
    return Status::Exhausted("memory", "mergeHeads needs " + detail::bytes_text(need) +
                                           " for its results, over the cap of " +
                                           detail::bytes_text(o.memory_cap));
  }
  merged->resize({o.t, width});
  merge_into(y, o.heads, o.t, o.dv, merged->data());
  output->resize({o.t, o.d_model});
  matmul(merged->data(), wo, output->data(), o.t, width, o.d_model);
  return Status::Ok();
}

#define ATTN_INSTANTIATE(T)                                                                       \
  template Status split_heads<T>(const xt::xtensor<T, 2>&, std::size_t, xt::xtensor<T, 3>*);      \
  template xt::xtensor<T, 2> merge_heads<T>(const xt::xtensor<T, 3>&);                            \
  template Status multi_head_attention<T>(const T*, std::size_t, const T*, std::size_t, const T*, \
                                          std::size_t, const T*, std::size_t, const T*,           \
                                          std::size_t, MhaOptions, MhaResult<T>*);                \
  template Status multi_head_attention<T>(                                                        \
      const T*, std::size_t, const T*, std::size_t, const T*, std::size_t, const T*, std::size_t, \
      const T*, std::size_t, const T*, std::size_t, MhaOptions, MhaResult<T>*);                   \
  template Status merge_and_project<T>(const T*, std::size_t, const T*, std::size_t,              \
                                       const MergeOptions&, xt::xtensor<T, 2>*,                   \
                                       xt::xtensor<T, 2>*);
ATTN_INSTANTIATE(float)
ATTN_INSTANTIATE(double)
#undef ATTN_INSTANTIATE

}  // namespace attn
