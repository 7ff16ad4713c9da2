// Interpretability measurements of a trained (or random) model on fixed batches.
//
// Pattern scores of head (l, h) (previous-token, induction, duplicate-token): the core's
// attn::pattern_scores on the layer's causal weights; attn/roles.hpp defines them.
//
// K-composition of head h1 in layer l into head h2 in layer l+1 (Elhage et al. 2021), in
// this code's row-vector convention (scores = x_i W_Q W_K^T x_j^T, output = x W_V W_O):
//   M_QK = W_Q^{h2} W_K^{g(h2)T} (D x D),  M_OV = W_V^{g(h1)} W_O^{h1} (D x D),
//   K = ||M_QK M_OV^T||_F / (||M_QK||_F ||M_OV||_F)
// (the key side of h2 reading h1's output). Index ((l * H) + h1) * H + h2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/roles.hpp"
#include "attn/tr/model.hpp"

namespace attn::tr {

// Per-head pattern scores from weights (B*H, t, t): the core's (attn/roles.hpp).
using attn::pattern_scores;

// (L-1)*H*H K-composition scores.
template <class T>
std::vector<double> k_composition(const ModelConfig& c, const T* params);

// Loss and accuracy (argmax == target, first maximum on ties) over the masked targets.
template <class T>
Status evaluate_batch(const ModelConfig& c, const T* params, const std::int32_t* tokens,
                      const std::uint8_t* mask, std::size_t batch, const std::uint8_t* ablate,
                      Workspace<T>* ws, double* loss, double* accuracy);

// Share of the masked targets (count of them) whose argmax logit is the target, logits
// (batch*t, V) of a forward: row b*t + i - 1 predicts tokens[b*t + i].
template <class T>
double accuracy_of(const T* logits, const std::int32_t* tokens, const std::uint8_t* mask,
                   std::size_t batch, std::size_t t, std::size_t V, std::size_t count);

struct HeadScores {
  std::vector<double> previous_token, induction, duplicate_token;  // (L*H)
  std::vector<double> ablation_loss;                               // (L*H)
  std::vector<double> k_composition;                               // ((L-1)*H*H)
  double loss = 0;  // the evaluation batch's loss with no extra head ablated
};

// Pattern scores on the probe batch; ablation losses on the evaluation batch (each head
// zeroed on top of `ablate`, which may be null).
template <class T>
Status head_scores(const ModelConfig& c, const T* params, const std::int32_t* probe,
                   std::size_t probe_batch, const std::int32_t* eval_tokens,
                   const std::uint8_t* eval_mask, std::size_t eval_batch,
                   const std::uint8_t* ablate, Workspace<T>* ws, HeadScores* out);

// head_scores after its first pass: ws holds the forward of the probe batch with kept weights
// (the unablated one, `ablate` applied); one_pass: the probe is the evaluation batch and that
// forward's loss is already out->loss (the naive kernel), else the evaluation is rerun.
template <class T>
Status head_scores_from_forward(const ModelConfig& c, const T* params, const std::int32_t* probe,
                                std::size_t probe_batch, const std::int32_t* eval_tokens,
                                const std::uint8_t* eval_mask, std::size_t eval_batch,
                                const std::uint8_t* ablate, bool one_pass, Workspace<T>* ws,
                                HeadScores* out);

}  // namespace attn::tr
