#include "attn/tr/interp.hpp"

#include <cmath>

#include "attn/gemm.hpp"

namespace attn::tr {

template <class T>
std::vector<double> k_composition(const ModelConfig& c, const T* params) {
  const ParamLayout P = param_layout(c);
  const std::size_t D = c.d_model, H = c.heads, dh = d_head(c), grp = c.heads / c.kv_heads;
  const std::size_t wq_w = H * dh, wkv_w = c.kv_heads * dh;
  std::vector<double> out;
  if (c.layers < 2) return out;
  out.resize((c.layers - 1) * H * H);
  // Copies of the head blocks in double: a (D, dh) column block of W_Q / W_K / W_V and a
  // (dh, D) row block of W_O.
  auto col_block = [&](const T* w, std::size_t width, std::size_t blk) {
    std::vector<double> m(D * dh);
    for (std::size_t r = 0; r < D; ++r)
      for (std::size_t k = 0; k < dh; ++k) m[r * dh + k] = w[r * width + blk * dh + k];
    return m;
  };
  auto fro = [](const std::vector<double>& m) {
    double s = 0;
    for (double x : m) s += x * x;
    return std::sqrt(s);
  };
  std::vector<double> pack;
  for (std::size_t l = 0; l + 1 < c.layers; ++l) {
    const auto& A = P.layer[l];
    const auto& B = P.layer[l + 1];
    for (std::size_t h1 = 0; h1 < H; ++h1) {
      // M_OV = W_V^{g(h1)} W_O^{h1}: (D, dh) (dh, D).
      std::vector<double> wv = col_block(params + A.wv, wkv_w, h1 / grp);
      std::vector<double> wo(dh * D);
      for (std::size_t k = 0; k < dh; ++k)
        for (std::size_t d = 0; d < D; ++d) wo[k * D + d] = params[A.wo + (h1 * dh + k) * D + d];
      std::vector<double> ov(D * D);
      gemm(Trans::kNN, D, D, dh, wv.data(), dh, wo.data(), D, 0.0, ov.data(), D, &pack);
      const double n_ov = fro(ov);
      for (std::size_t h2 = 0; h2 < H; ++h2) {
        // M_QK = W_Q^{h2} W_K^{g(h2)T}: (D, dh) (dh, D).
        std::vector<double> wq = col_block(params + B.wq, wq_w, h2);
        std::vector<double> wk = col_block(params + B.wk, wkv_w, h2 / grp);
        std::vector<double> qk(D * D), prod(D * D);
        gemm(Trans::kNT, D, D, dh, wq.data(), dh, wk.data(), dh, 0.0, qk.data(), D, &pack);
        gemm(Trans::kNT, D, D, D, qk.data(), D, ov.data(), D, 0.0, prod.data(), D, &pack);
        const double den = fro(qk) * n_ov;
        out[(l * H + h1) * H + h2] = den > 0 ? fro(prod) / den : 0;
      }
    }
  }
  return out;
}

template <class T>
Status evaluate_batch(const ModelConfig& c, const T* params, const std::int32_t* tokens,
                      const std::uint8_t* mask, std::size_t batch, const std::uint8_t* ablate,
                      Workspace<T>* ws, double* loss, double* accuracy) {
  RunOptions ro;
  ro.ablate = ablate;
  std::size_t count = 0;
  const std::size_t t = c.seq_len, V = c.vocab;
  Status st = forward_backward(c, params, tokens, mask, batch, t, ro, ws, static_cast<T*>(nullptr),
                               loss, &count);
  if (!st.ok()) return st;
  *accuracy = accuracy_of(ws->logits.data(), tokens, mask, batch, t, V, count);
  return Status::Ok();
}

template <class T>
double accuracy_of(const T* logits, const std::int32_t* tokens, const std::uint8_t* mask,
                   std::size_t batch, std::size_t t, std::size_t V, std::size_t count) {
  std::size_t hit = 0;
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t i = 1; i < t; ++i) {
      if (!mask[b * t + i]) continue;
      const T* lg = logits + (b * t + i - 1) * V;
      std::size_t arg = 0;
      for (std::size_t j = 1; j < V; ++j)
        if (lg[j] > lg[arg]) arg = j;
      hit += arg == static_cast<std::size_t>(tokens[b * t + i]);
    }
  return count ? static_cast<double>(hit) / static_cast<double>(count) : 0.0;
}

template <class T>
Status head_scores(const ModelConfig& c, const T* params, const std::int32_t* probe,
                   std::size_t probe_batch, const std::int32_t* eval_tokens,
                   const std::uint8_t* eval_mask, std::size_t eval_batch,
                   const std::uint8_t* ablate, Workspace<T>* ws, HeadScores* out) {
  const std::size_t t = c.seq_len;
  // Pass 1: the probe's weights for the pattern scores. When the probe is the evaluation batch
  // and the model's kernel keeps its weights anyway (naive), the same forward gives the
  // evaluation loss too: evaluate_batch would rerun it with the same kernel, to the same bits.
  const bool one_pass =
      probe == eval_tokens && probe_batch == eval_batch && c.kernel != Kernel::kTiled;
  RunOptions ro;
  ro.ablate = ablate;
  ro.keep_weights = true;
  Status st =
      forward_backward(c, params, probe, one_pass ? eval_mask : nullptr, probe_batch, t, ro, ws,
                       static_cast<T*>(nullptr), one_pass ? &out->loss : nullptr, nullptr);
  if (!st.ok()) return st;
  return head_scores_from_forward(c, params, probe, probe_batch, eval_tokens, eval_mask, eval_batch,
                                  ablate, one_pass, ws, out);
}

template <class T>
Status head_scores_from_forward(const ModelConfig& c, const T* params, const std::int32_t* probe,
                                std::size_t probe_batch, const std::int32_t* eval_tokens,
                                const std::uint8_t* eval_mask, std::size_t eval_batch,
                                const std::uint8_t* ablate, bool one_pass, Workspace<T>* ws,
                                HeadScores* out) {
  const std::size_t L = c.layers, H = c.heads, t = c.seq_len;
  out->previous_token.assign(L * H, 0);
  out->induction.assign(L * H, 0);
  out->duplicate_token.assign(L * H, 0);
  out->ablation_loss.assign(L * H, 0);
  for (std::size_t l = 0; l < L; ++l) {
    pattern_scores(probe, probe_batch, t, H, ws->att[l].weights.data(),
                   out->previous_token.data() + l * H, out->induction.data() + l * H,
                   out->duplicate_token.data() + l * H);
  }
  std::vector<std::uint8_t> abl(L * H, 0);
  if (ablate) abl.assign(ablate, ablate + L * H);
  Status st;
  if (!one_pass) {
    double acc = 0;
    st = evaluate_batch(c, params, eval_tokens, eval_mask, eval_batch, abl.data(), ws, &out->loss,
                        &acc);
    if (!st.ok()) return st;
  }
  // Pass 2: each head ablated in turn. The workspace now holds the unablated evaluation
  // forward; zeroing a head of layer l changes nothing below it, nor layer l's own attention
  // (the head's output is zeroed after it), so each of these reruns starts at layer l's merge
  // and output projection, on the same bits as a whole forward. Last layer first: a rerun from
  // layer l rewrites x_{l+1} .. x_L and the attention of the layers above l only, and every
  // later rerun starts at or below l.
  RunOptions ra;
  ra.ablate = abl.data();
  ra.keep_from_attention = true;
  for (std::size_t l = L; l-- > 0;) {
    ra.from_layer = l;
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t i = l * H + h;
      const std::uint8_t keep = abl[i];
      abl[i] = 1;
      st = forward_backward(c, params, eval_tokens, eval_mask, eval_batch, t, ra, ws,
                            static_cast<T*>(nullptr), &out->ablation_loss[i], nullptr);
      abl[i] = keep;
      if (!st.ok()) return st;
    }
  }
  out->k_composition = k_composition(c, params);
  return Status::Ok();
}

#define ATTN_INTERP(T)                                                                            \
  template std::vector<double> k_composition<T>(const ModelConfig&, const T*);                    \
  template Status evaluate_batch<T>(const ModelConfig&, const T*, const std::int32_t*,            \
                                    const std::uint8_t*, std::size_t, const std::uint8_t*,        \
                                    Workspace<T>*, double*, double*);                             \
  template Status head_scores<T>(const ModelConfig&, const T*, const std::int32_t*, std::size_t,  \
                                 const std::int32_t*, const std::uint8_t*, std::size_t,           \
                                 const std::uint8_t*, Workspace<T>*, HeadScores*);                \
  template Status head_scores_from_forward<T>(                                                    \
      const ModelConfig&, const T*, const std::int32_t*, std::size_t, const std::int32_t*,        \
      const std::uint8_t*, std::size_t, const std::uint8_t*, bool, Workspace<T>*, HeadScores*);   \
  template double accuracy_of<T>(const T*, const std::int32_t*, const std::uint8_t*, std::size_t, \
                                 std::size_t, std::size_t, std::size_t);
ATTN_INTERP(float)
ATTN_INTERP(double)
#undef ATTN_INTERP

}  // namespace attn::tr
