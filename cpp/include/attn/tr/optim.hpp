// AdamW exactly as torch.optim.AdamW (amsgrad off, maximize off), and global-norm clipping
// as torch.nn.utils.clip_grad_norm_, over one flat parameter vector.
//
// Step t (1-based), for every parameter p with gradient g:
//   p  <- p * (1 - lr * weight_decay)            decoupled decay, embeddings included
//   m  <- beta1 * m + (1 - beta1) * g
//   v  <- beta2 * v + (1 - beta2) * g^2
//   p  <- p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// Clipping (max_norm > 0): total = ||g||_2 over all parameters;
//   g <- g * min(1, max_norm / (total + 1e-6)).
#pragma once

#include <cstddef>
#include <vector>

namespace attn::tr {

struct AdamWConfig {
  double lr = 1e-2;
  double beta1 = 0.9, beta2 = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.01;
  double clip = 0;  // max global gradient norm; 0 = off
};

template <class T>
struct AdamWState {
  std::vector<T> m, v;
  std::size_t step = 0;  // updates done
};

// ||g||_2, accumulated in double in index order (deterministic).
template <class T>
double grad_norm(const T* g, std::size_t n);

// Scales g in place if clipping applies; returns the norm before clipping.
template <class T>
double clip_grad_norm(T* g, std::size_t n, double max_norm);

// One update of params (n values) with grads g. Resizes the state on first use.
template <class T>
void adamw_step(const AdamWConfig& c, T* params, const T* g, std::size_t n, AdamWState<T>* s);

}  // namespace attn::tr
