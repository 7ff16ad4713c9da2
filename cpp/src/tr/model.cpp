#include "attn/tr/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "attn/bytes_text.hpp"
#include "attn/checked.hpp"
#include "attn/gemm.hpp"
#include "attn/names.hpp"
#include "attn/rng.hpp"
#include "attn/row_ops.hpp"
#include "attn/simd128.hpp"
#include "attn/tiled.hpp"
#include "variant_attention.hpp"

#ifdef ATTN_SIMD128
#define ATTN_MODEL_SIMD 1
#endif

namespace attn::tr {

using detail::sat_add;
using detail::sat_mul;

namespace {

// n values from src to dst (no overlap). In wasm SIMD128 builds a float run moves as f32x4
// loads and stores inline: std::copy_n becomes a call of the libc memcpy, which for the
// d_h = 16 to 32 floats of one head's row cost several times the copy itself (split and
// merge below move every q, k, v, dq, dk and dv value that way, twice per layer and step).
template <class T>
inline void copy_run(const T* src, std::size_t n, T* dst) {
#ifdef ATTN_MODEL_SIMD
  if constexpr (std::is_same_v<T, float>) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const v128_t x0 = wasm_v128_load(src + i), x1 = wasm_v128_load(src + i + 4);
      wasm_v128_store(dst + i, x0);
      wasm_v128_store(dst + i + 4, x1);
    }
    for (; i + 4 <= n; i += 4) wasm_v128_store(dst + i, wasm_v128_load(src + i));
    for (; i < n; ++i) dst[i] = src[i];
    return;
  }
#endif
  std::copy_n(src, n, dst);
}

// Rows of (N, ld) with N = B*t, columns [0, heads*dh) of each row -> (B*heads, t, dh).
template <class T>
void split(const T* in, std::size_t ld, std::size_t batch, std::size_t t, std::size_t heads,
           std::size_t dh, T* out) {
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t i = 0; i < t; ++i)
        copy_run(in + (b * t + i) * ld + h * dh, dh, out + ((b * heads + h) * t + i) * dh);
}

// (B*heads, t, dh) -> columns [0, heads*dh) of (N, ld) rows; heads with ablate[h] set become 0.
template <class T>
void merge(const T* in, std::size_t batch, std::size_t t, std::size_t heads, std::size_t dh,
           const std::uint8_t* ablate, T* out, std::size_t ld) {
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t i = 0; i < t; ++i) {
        T* dst = out + (b * t + i) * ld + h * dh;
        if (ablate && ablate[h])
          std::fill_n(dst, dh, T(0));
        else
          copy_run(in + ((b * heads + h) * t + i) * dh, dh, dst);
      }
}

// W_QKV = [W_Q | W_K | W_V]: (D, w3) row by row, so one product projects all three.
template <class T>
void pack_qkv(const T* wq, const T* wk, const T* wv, std::size_t D, std::size_t wq_w,
              std::size_t wkv_w, T* out) {
  const std::size_t w3 = wq_w + 2 * wkv_w;
  for (std::size_t r = 0; r < D; ++r) {
    copy_run(wq + r * wq_w, wq_w, out + r * w3);
    copy_run(wk + r * wkv_w, wkv_w, out + r * w3 + wq_w);
    copy_run(wv + r * wkv_w, wkv_w, out + r * w3 + wq_w + wkv_w);
  }
}

// Shortformer's query/key input: xp[b*t + i] = x[b*t + i] + P[i], rows (N, D).
template <class T>
void add_positions(const T* x, const T* pos, std::size_t batch, std::size_t t, std::size_t D,
                   T* xp) {
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t i = 0; i < t; ++i) {
      const T* xr = x + (b * t + i) * D;
      const T* p = pos + i * D;
      T* o = xp + (b * t + i) * D;
      for (std::size_t d = 0; d < D; ++d) o[d] = xr[d] + p[d];
    }
}

std::uint64_t layer_seed(std::uint64_t seed, std::size_t layer) {
  Rng r(seed ^ (0xD1B54A32D192ED03ull * (layer + 1)));
  return r.next_u64();
}

// Diagnostic (RunOptions::score_grad), no dropout: mean |dL/dS| per head over the causal
// cells, S the softmax input (scaled scores), from the dO this layer's backward receives and
// the kept weights P, with the softmax Jacobian attention_backward applies:
// dP_ij = dO_i . V_j, D_i = sum_j P_ij dP_ij, dS_ij = P_ij (dP_ij - D_i). Sums in double.
// p: (B*H, t, t), d_out: (B*H, t, dh), v: (B*Hkv, t, dh); out: (H,)
template <class T>
void score_grad_means(const T* p, const T* d_out, const T* v, std::size_t batch, std::size_t H,
                      std::size_t Hkv, std::size_t t, std::size_t dh, double* out) {
  std::fill(out, out + H, 0.0);
  std::vector<double> dp(t), vt(dh * t);
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      const T* P = p + (b * H + h) * t * t;
      const T* dO = d_out + (b * H + h) * t * dh;
      const T* V = v + (b * Hkv + h / (H / Hkv)) * t * dh;
      // V^T in double, (dh, t): the dot products dP_ij below then run over keys j in the inner
      // loop (vectorised), each still summed over e in ascending order from 0, as before.
      for (std::size_t j = 0; j < t; ++j)
        for (std::size_t e = 0; e < dh; ++e) vt[e * t + j] = double(V[j * dh + e]);
      for (std::size_t i = 0; i < t; ++i) {
        std::fill_n(dp.data(), i + 1, 0.0);
        for (std::size_t e = 0; e < dh; ++e) {
          const double a = double(dO[i * dh + e]);
          const double* ve = vt.data() + e * t;
          for (std::size_t j = 0; j <= i; ++j) dp[j] += a * ve[j];
        }
        double D = 0;
        for (std::size_t j = 0; j <= i; ++j) D += double(P[i * t + j]) * dp[j];
        for (std::size_t j = 0; j <= i; ++j) out[h] += std::abs(double(P[i * t + j]) * (dp[j] - D));
      }
    }
  const double cells = double(batch) * double(t) * double(t + 1) / 2;
  for (std::size_t h = 0; h < H; ++h) out[h] /= cells;
}

// What the trainer's variant kernels (variant_attention.hpp) need of the config for one call.
varattn::VariantCall variant_call(const ModelConfig& c, std::size_t batch, std::size_t t,
                                  double dropout, std::uint64_t dropout_seed, bool keep_weights) {
  varattn::VariantCall vc;
  vc.batch = batch;
  vc.heads = c.heads;
  vc.kv_heads = c.kv_heads;
  vc.t = t;
  vc.dh = d_head(c);
  AttentionOptions so;
  so.shape.dk = vc.dh;
  so.scale = c.scale;
  vc.scale = effective_scale(so);
  vc.normalizer = c.normalizer;
  vc.position = c.position;
  vc.qk_norm = c.qk_norm;
  vc.context = std::max<std::size_t>(c.seq_len, 1);
  vc.sigmoid_bias = effective_sigmoid_bias(attention_variant(c), vc.context);
  vc.dropout = dropout;
  vc.dropout_seed = dropout_seed;
  vc.keep_weights = keep_weights;
  return vc;
}

// The trainer's one choice of attention kernel for a layer: a config with a variant runs the
// trainer's own row kernels (variant_attention.hpp; docs/kernels.md says why it keeps them),
// plain softmax runs the core's attention with the config's kernel. ao carries the layer's
// dropout and seed; q, k, v are ws->qh[l], kh[l], vh[l].
template <class T>
Status layer_attention(const ModelConfig& c, const AttentionOptions& ao, std::size_t batch,
                       std::size_t t, Kernel kernel, Workspace<T>* ws, std::size_t l) {
  const T *q = ws->qh[l].data(), *k = ws->kh[l].data(), *v = ws->vh[l].data();
  if (uses_variant(c)) {
    const auto vc =
        variant_call(c, batch, t, ao.dropout, ao.dropout_seed, kernel == Kernel::kNaive);
    varattn::variant_forward(vc, q, k, v, &ws->vcache[l], &ws->att[l]);
    return Status::Ok();
  }
  return attention(q, ws->qh[l].size(), k, ws->kh[l].size(), v, ws->vh[l].size(), ao, kernel,
                   &ws->att[l]);
}

// Its backward, the same choice, into ws->grads from d_out = ws->dout. score_grad (H,), if set:
// mean |dL/dS| per head (RunOptions::score_grad; naive kernel, no dropout).
template <class T>
Status layer_attention_backward(const ModelConfig& c, const AttentionOptions& ao, std::size_t batch,
                                std::size_t t, Kernel kernel, Workspace<T>* ws, std::size_t l,
                                double* score_grad) {
  const T *q = ws->qh[l].data(), *k = ws->kh[l].data(), *v = ws->vh[l].data();
  if (uses_variant(c)) {
    const auto vc =
        variant_call(c, batch, t, ao.dropout, ao.dropout_seed, kernel == Kernel::kNaive);
    varattn::variant_backward(vc, q, k, v, ws->dout.data(), ws->vcache[l], ws->att[l], &ws->grads,
                              score_grad);
    return Status::Ok();
  }
  if (score_grad) {
    score_grad_means(ws->att[l].weights.data(), ws->dout.data(), v, batch, c.heads, c.kv_heads, t,
                     d_head(c), score_grad);
  }
  return attention_backward(q, ws->qh[l].size(), k, ws->kh[l].size(), v, ws->vh[l].size(),
                            ws->dout.data(), ws->dout.size(), ao, kernel, &ws->att[l], &ws->grads);
}

}  // namespace

template <class T>
Status forward_backward(const ModelConfig& c, const T* params, const std::int32_t* tokens,
                        const std::uint8_t* loss_mask, std::size_t batch, std::size_t t,
                        const RunOptions& ro, Workspace<T>* ws, T* grads, double* loss,
                        std::size_t* count) {
  if (t < 1 || t > c.seq_len) {
    return Status::Invalid("tokens", "sequence length " + std::to_string(t) +
                                         " must be between 1 and seqLen " +
                                         std::to_string(c.seq_len));
  }
  const std::size_t N = batch * t;
  for (std::size_t r = 0; r < N; ++r) {
    if (tokens[r] < 0 || static_cast<std::size_t>(tokens[r]) >= c.vocab) {
      return Status::Invalid("tokens", "tokens[" + std::to_string(r) + "] = " +
                                           std::to_string(tokens[r]) + " is outside [0, vocab)");
    }
  }
  const ParamLayout P = param_layout(c);
  const std::size_t D = c.d_model, V = c.vocab, H = c.heads, Hkv = c.kv_heads, dh = d_head(c);
  const std::size_t L = c.layers, wq_w = H * dh, wkv_w = Hkv * dh;
  const bool tiled = c.kernel == Kernel::kTiled && !ro.keep_weights;
  const Kernel kernel = tiled ? Kernel::kTiled : Kernel::kNaive;
  const bool variant = uses_variant(c);
  // The learned table goes into x_0 ('learned') or into every layer's W_Q, W_K input
  // ('shortformer').
  const bool embed_pos = c.positional && !c.shortformer;
  const bool qk_pos = c.positional && c.shortformer;
  const std::size_t from = ro.from_layer;
  const bool keep_att = ro.keep_from_attention;
  if ((from > 0 || keep_att) &&
      (from >= L || grads || ws->batch != batch || ws->t != t || ws->x.size() != L + 1 ||
       ws->x[from].size() != N * D ||
       (keep_att && (ws->att.size() != L || ws->att[from].output.size() != N * wq_w)))) {
    return Status::Invalid("from_layer", "from_layer " + std::to_string(from) +
                                             " needs a previous forward of the same batch in "
                                             "the workspace, fewer than " +
                                             std::to_string(L) + " layers and no gradients");
  }

  AttentionOptions ao;
  ao.shape = Shape{batch * H, batch * Hkv, t, t, dh, dh};
  ao.mask.causal = true;
  ao.scale = c.scale;
  ao.dropout = ro.training ? c.dropout : 0.0;
  ao.memory_cap = static_cast<std::size_t>(-1);  // the trainer's own cap covers the model
  ao.row_sums = false;                           // never read here

  ws->batch = batch;
  ws->t = t;
  ws->x.resize(L + 1);
  ws->qh.resize(L);
  ws->kh.resize(L);
  ws->vh.resize(L);
  ws->z.resize(L);
  ws->att.resize(L);
  if (variant) ws->vcache.resize(L);
  for (auto& x : ws->x) x.resize(N * D);

  // Pass 1: embeddings. x_0[b*t + i] = E[token] + P[i] (kept from the last call if from > 0
  // or the attention at from is kept).
  if (from == 0 && !keep_att) {
    for (std::size_t b = 0; b < batch; ++b)
      for (std::size_t i = 0; i < t; ++i) {
        const std::size_t r = b * t + i;
        const T* e = params + P.embed + static_cast<std::size_t>(tokens[r]) * D;
        T* x = ws->x[0].data() + r * D;
        if (embed_pos) {
          const T* p = params + P.pos + i * D;
          for (std::size_t d = 0; d < D; ++d) x[d] = e[d] + p[d];
        } else {
          copy_run(e, D, x);
        }
      }
  }

  // Pass 2: layers. Project, split into (B*H, t, d_h), attend, merge, project out.
  const std::size_t w3 = wq_w + 2 * wkv_w, wqk_w = wq_w + wkv_w;
  ws->qkv.resize(N * w3);
  ws->wqkv.resize(L);
  for (std::size_t l = from; l < L; ++l) {
    const auto& W = P.layer[l];
    // With keep_att, layer `from`'s attention is the kept one of this same x_l.
    if (!(keep_att && l == from)) {
      const T* x = ws->x[l].data();
      // q | k | v = x W_QKV in one product (N, w3), then each part into head layout.
      ws->wqkv[l].resize(D * w3);
      pack_qkv(params + W.wq, params + W.wk, params + W.wv, D, wq_w, wkv_w, ws->wqkv[l].data());
      if (qk_pos) {
        // q | k = (x + P) [W_Q | W_K], v = x W_V: the same columns of W_QKV, two products.
        ws->xp.resize(N * D);
        add_positions(x, params + P.pos, batch, t, D, ws->xp.data());
        gemm(Trans::kNN, N, wqk_w, D, ws->xp.data(), D, ws->wqkv[l].data(), w3, T(0),
             ws->qkv.data(), w3, &ws->pack);
        gemm(Trans::kNN, N, wkv_w, D, x, D, ws->wqkv[l].data() + wqk_w, w3, T(0),
             ws->qkv.data() + wqk_w, w3, &ws->pack);
      } else {
        gemm(Trans::kNN, N, w3, D, x, D, ws->wqkv[l].data(), w3, T(0), ws->qkv.data(), w3,
             &ws->pack);
      }
      ws->qh[l].resize(N * wq_w);
      ws->kh[l].resize(N * wkv_w);
      ws->vh[l].resize(N * wkv_w);
      split(ws->qkv.data(), w3, batch, t, H, dh, ws->qh[l].data());
      split(ws->qkv.data() + wq_w, w3, batch, t, Hkv, dh, ws->kh[l].data());
      split(ws->qkv.data() + wq_w + wkv_w, w3, batch, t, Hkv, dh, ws->vh[l].data());
      ao.dropout_seed = layer_seed(ro.dropout_seed, l);
      Status st = layer_attention(c, ao, batch, t, kernel, ws, l);
      if (!st.ok()) return st;
    }
    ws->z[l].resize(N * wq_w);
    merge(ws->att[l].output.data(), batch, t, H, dh, ro.ablate ? ro.ablate + l * H : nullptr,
          ws->z[l].data(), wq_w);
    copy_run(ws->x[l].data(), N * D, ws->x[l + 1].data());
    gemm(Trans::kNN, N, D, wq_w, ws->z[l].data(), wq_w, params + W.wo, D, T(1), ws->x[l + 1].data(),
         D, &ws->pack);
  }

  // Pass 3: final LayerNorm (biased variance, eps 1e-5 inside the root, as torch).
  const T* y = ws->x[L].data();
  if (c.layer_norm) {
    ws->xhat.resize(N * D);
    ws->rstd.resize(N);
    ws->y.resize(N * D);
    const T* g = params + P.ln_gain;
    const T* bb = params + P.ln_bias;
    for (std::size_t r = 0; r < N; ++r) {
      const T* xr = ws->x[L].data() + r * D;
      T mean = 0;
      for (std::size_t d = 0; d < D; ++d) mean += xr[d];
      mean /= static_cast<T>(D);
      T var = 0;
      for (std::size_t d = 0; d < D; ++d) var += (xr[d] - mean) * (xr[d] - mean);
      var /= static_cast<T>(D);
      const T rs = T(1) / std::sqrt(var + T(1e-5));
      ws->rstd[r] = rs;
      for (std::size_t d = 0; d < D; ++d) {
        const T xh = (xr[d] - mean) * rs;
        ws->xhat[r * D + d] = xh;
        ws->y[r * D + d] = xh * g[d] + bb[d];
      }
    }
    y = ws->y.data();
  }

  // Pass 4: logits = y U.
  ws->logits.resize(N * V);
  gemm(Trans::kNN, N, V, D, y, D, params + P.unembed, V, T(0), ws->logits.data(), V, &ws->pack);
  if (!loss_mask) return Status::Ok();

  // Pass 5: masked cross-entropy; row b*t + i - 1 predicts tokens[b*t + i]. The sum is
  // kept in double so the loss of a float32 run does not depend on the batch size's rounding.
  std::size_t n = 0;
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t i = 1; i < t; ++i) n += loss_mask[b * t + i] ? 1 : 0;
  if (count) *count = n;
  const std::size_t norm = ro.loss_norm ? ro.loss_norm : n;
  if (grads) {
    ws->dlogits.assign(N * V, T(0));
  } else {
    ws->ce.resize(V);
  }
  double total = 0;
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t i = 1; i < t; ++i) {
      if (!loss_mask[b * t + i]) continue;
      const std::size_t r = b * t + i - 1;
      const T* lg = ws->logits.data() + r * V;
      const std::size_t target = static_cast<std::size_t>(tokens[b * t + i]);
      T mx = lg[0];
      for (std::size_t j = 1; j < V; ++j) mx = std::max(mx, lg[j]);
      // e = exp(logit - max), once per logit (into the row's dlogits when there are gradients):
      // float through the kernels' vectorised exp (one call per row instead of two scalar
      // exps per logit), double through std::exp.
      T* e = grads ? ws->dlogits.data() + r * V : ws->ce.data();
      for (std::size_t j = 0; j < V; ++j) e[j] = lg[j] - mx;
      if constexpr (std::is_same_v<T, float>) {
        row::exp(e, e, V, true);
      } else {
        for (std::size_t j = 0; j < V; ++j) e[j] = std::exp(e[j]);
      }
      T sum = 0;
      for (std::size_t j = 0; j < V; ++j) sum += e[j];
      const T lse = mx + std::log(sum);
      total += static_cast<double>(lse - lg[target]);
      if (grads) {
        // d loss / d logits = (softmax - onehot) / n, softmax = e / sum
        const T inv = T(1) / static_cast<T>(norm);
        const T scale = inv / sum;
        for (std::size_t j = 0; j < V; ++j) e[j] *= scale;
        e[target] -= inv;
      }
    }
  *loss = norm ? total / static_cast<double>(norm) : std::numeric_limits<double>::quiet_NaN();
  if (!grads || n == 0) {
    if (grads) std::fill(grads, grads + P.total, T(0));
    return Status::Ok();
  }

  // Backward. Pass 6: unembedding. dU = y^T dlogits, dy = dlogits U^T.
  const bool all_grads = !ro.wq_grads_only;
  if (all_grads)
    gemm(Trans::kTN, D, V, N, y, D, ws->dlogits.data(), V, T(0), grads + P.unembed, V, &ws->pack);
  ws->dx.resize(N * D);
  gemm(Trans::kNT, N, D, V, ws->dlogits.data(), V, params + P.unembed, V, T(0), ws->dx.data(), D,
       &ws->pack);

  // Pass 7: LayerNorm. dgain = sum dy*xhat, dbias = sum dy,
  // dx = rstd * (g*dy - mean(g*dy) - xhat * mean(g*dy * xhat)).
  if (c.layer_norm) {
    T* dg = grads + P.ln_gain;
    T* db = grads + P.ln_bias;
    std::fill(dg, dg + D, T(0));
    std::fill(db, db + D, T(0));
    const T* g = params + P.ln_gain;
    ws->dy.resize(D);
    for (std::size_t r = 0; r < N; ++r) {
      T* dyr = ws->dx.data() + r * D;
      const T* xh = ws->xhat.data() + r * D;
      T m1 = 0, m2 = 0;
      for (std::size_t d = 0; d < D; ++d) {
        dg[d] += dyr[d] * xh[d];
        db[d] += dyr[d];
        const T gd = g[d] * dyr[d];
        ws->dy[d] = gd;
        m1 += gd;
        m2 += gd * xh[d];
      }
      m1 /= static_cast<T>(D);
      m2 /= static_cast<T>(D);
      for (std::size_t d = 0; d < D; ++d) dyr[d] = ws->rstd[r] * (ws->dy[d] - m1 - xh[d] * m2);
    }
  }

  // Pass 8: layers in reverse. ws->dx holds dL/dx_{l+1}; the residual passes it through.
  // Shortformer's dP sums the q/k input gradients of every layer (last layer first) and row.
  ws->dz.resize(N * wq_w);
  if (qk_pos && all_grads) std::fill(grads + P.pos, grads + P.pos + c.seq_len * D, T(0));
  for (std::size_t l = L; l-- > 0;) {
    const auto& W = P.layer[l];
    const T* x = ws->x[l].data();
    // dW_O = Z^T dx, dZ = dx W_O^T (ablated heads' columns of Z are zero: no gradient).
    if (all_grads)
      gemm(Trans::kTN, wq_w, D, N, ws->z[l].data(), wq_w, ws->dx.data(), D, T(0), grads + W.wo, D,
           &ws->pack);
    gemm(Trans::kNT, N, wq_w, D, ws->dx.data(), D, params + W.wo, D, T(0), ws->dz.data(), wq_w,
         &ws->pack);
    const std::uint8_t* abl = ro.ablate ? ro.ablate + l * H : nullptr;
    // dO in head layout, ablated heads zero.
    ws->dout.resize(N * wq_w);
    split(ws->dz.data(), wq_w, batch, t, H, dh, ws->dout.data());
    if (abl)
      for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t h = 0; h < H; ++h)
          if (abl[h]) std::fill_n(ws->dout.data() + (b * H + h) * t * dh, t * dh, T(0));
    ao.dropout_seed = layer_seed(ro.dropout_seed, l);
    Status st = layer_attention_backward(
        c, ao, batch, t, kernel, ws, l,
        ro.score_grad && !tiled && ao.dropout == 0 ? ro.score_grad + l * H : nullptr);
    if (!st.ok()) return st;
    // dq | dk | dv as (N, w3) rows; dW_QKV = x^T dqkv, cut back into W_Q, W_K, W_V;
    // dx += dqkv W_QKV^T.
    merge(ws->grads.dq.data(), batch, t, H, dh, nullptr, ws->qkv.data(), w3);
    merge(ws->grads.dk.data(), batch, t, Hkv, dh, nullptr, ws->qkv.data() + wq_w, w3);
    merge(ws->grads.dv.data(), batch, t, Hkv, dh, nullptr, ws->qkv.data() + wq_w + wkv_w, w3);
    if (qk_pos) {
      // The forward's q/k input again (the same bits): dW_Q | dW_K = (x + P)^T [dq | dk].
      ws->xp.resize(N * D);
      add_positions(x, params + P.pos, batch, t, D, ws->xp.data());
    }
    const T* xqk = qk_pos ? ws->xp.data() : x;
    if (all_grads) {
      ws->dw.resize(D * w3);
      if (qk_pos) {
        gemm(Trans::kTN, D, wqk_w, N, xqk, D, ws->qkv.data(), w3, T(0), ws->dw.data(), w3,
             &ws->pack);
        gemm(Trans::kTN, D, wkv_w, N, x, D, ws->qkv.data() + wqk_w, w3, T(0), ws->dw.data() + wqk_w,
             w3, &ws->pack);
      } else {
        gemm(Trans::kTN, D, w3, N, x, D, ws->qkv.data(), w3, T(0), ws->dw.data(), w3, &ws->pack);
      }
      for (std::size_t r = 0; r < D; ++r) {
        const T* src = ws->dw.data() + r * w3;
        copy_run(src, wq_w, grads + W.wq + r * wq_w);
        copy_run(src + wq_w, wkv_w, grads + W.wk + r * wkv_w);
        copy_run(src + wq_w + wkv_w, wkv_w, grads + W.wv + r * wkv_w);
      }
    } else {
      // dW_Q alone: the dq columns of the same product (each element the same sum over rows).
      gemm(Trans::kTN, D, wq_w, N, xqk, D, ws->qkv.data(), w3, T(0), grads + W.wq, wq_w, &ws->pack);
      if (l == 0) return Status::Ok();  // dL/dx_0 feeds only the embeddings' gradients
    }
    if (qk_pos) {
      // d(x + P) = [dq | dk] [W_Q | W_K]^T; dx += d(x + P) + dv W_V^T; dP[i] += d(x + P) rows.
      ws->dxp.resize(N * D);
      gemm(Trans::kNT, N, D, wqk_w, ws->qkv.data(), w3, ws->wqkv[l].data(), w3, T(0),
           ws->dxp.data(), D, &ws->pack);
      T* dx = ws->dx.data();
      const T* dxp = ws->dxp.data();
      for (std::size_t e = 0; e < N * D; ++e) dx[e] += dxp[e];
      gemm(Trans::kNT, N, D, wkv_w, ws->qkv.data() + wqk_w, w3, ws->wqkv[l].data() + wqk_w, w3,
           T(1), dx, D, &ws->pack);
      if (all_grads)
        for (std::size_t b = 0; b < batch; ++b)
          for (std::size_t i = 0; i < t; ++i) {
            T* p = grads + P.pos + i * D;
            const T* g = dxp + (b * t + i) * D;
            for (std::size_t d = 0; d < D; ++d) p[d] += g[d];
          }
    } else {
      gemm(Trans::kNT, N, D, w3, ws->qkv.data(), w3, ws->wqkv[l].data(), w3, T(1), ws->dx.data(), D,
           &ws->pack);
    }
  }

  // Pass 9: embeddings, rows in ascending order (a fixed summation order).
  T* de = grads + P.embed;
  std::fill(de, de + V * D, T(0));
  if (embed_pos) std::fill(grads + P.pos, grads + P.pos + c.seq_len * D, T(0));
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t i = 0; i < t; ++i) {
      const std::size_t r = b * t + i;
      const T* g = ws->dx.data() + r * D;
      T* e = de + static_cast<std::size_t>(tokens[r]) * D;
      for (std::size_t d = 0; d < D; ++d) e[d] += g[d];
      if (embed_pos) {
        T* p = grads + P.pos + i * D;
        for (std::size_t d = 0; d < D; ++d) p[d] += g[d];
      }
    }
  return Status::Ok();
}

template Status forward_backward<float>(const ModelConfig&, const float*, const std::int32_t*,
                                        const std::uint8_t*, std::size_t, std::size_t,
                                        const RunOptions&, Workspace<float>*, float*, double*,
                                        std::size_t*);
template Status forward_backward<double>(const ModelConfig&, const double*, const std::int32_t*,
                                         const std::uint8_t*, std::size_t, std::size_t,
                                         const RunOptions&, Workspace<double>*, double*, double*,
                                         std::size_t*);

}  // namespace attn::tr
