// Gradients of the attention variants' row operations (attn/variants.hpp), public so that the
// training library can use them without the core's private kernel headers. attention_backward
// (attn/backward.hpp) is built from these; docs/numerics.md states the rules.
//
// The forward chain of one query or key row x (d values) at position pos:
//
//   x^ = x / max(|x|_2, 1e-12)                       qkNorm
//   x~ = R(pos) x^   (pairs (2p, 2p+1) rotated)       RoPE
//   f  = phi(x~) = elu(x~) + 1 elementwise            linear only
//
// and of one query row's weights w over its keys, from the scores s (scale q.k + ALiBi; linear:
// a = phi(q).phi(k)):
//
//   softmax, softmax1   dS_j = w_j (dW_j - D),   D = sum_j w_j dW_j   (softmax1's sink has value
//                                                0, so D is still rowsum(dO * O))
//   sigmoid             dS_j = dW_j w_j (1 - w_j)
//   relu                dS_j = dW_j / T_k where w_j > 0, else 0 (the subgradient at s = 0 is 0,
//                                                as PyTorch's relu)
//   linear              dA_j = (dW_j - D) / Z,    Z = sum_allowed a_j + 1e-6
//
// where dW_j = dL/dw_j (dO_i . v_j, times the dropout keep scale) and forbidden keys get 0.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "attn/variants.hpp"

namespace attn::vgrad {

// The pieces the core's kernels, the trainer's variant kernels and the decoder share, bit for bit:
// phi and its derivative, the core's and the decoder's sigmoid, and RoPE's rotation of one pair
// (x0, x1) by the angle whose cosine and sine are c and s, and its transpose (the rotation by minus
// that angle).
template <class T>
inline T phi(T x) {
  return x > 0 ? x + T(1) : std::exp(x);
}
template <class T>
inline T phi_grad(T x) {
  return x > 0 ? T(1) : std::exp(x);
}
// sigma(x) in the form that never overflows: 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below.
template <class T>
inline T sigmoid(T x) {
  if (x >= 0) return T(1) / (T(1) + std::exp(-x));
  const T e = std::exp(x);
  return e / (T(1) + e);
}
template <class T>
inline void rope_rotate(T* x0, T* x1, T c, T s) {
  const T a = *x0, b = *x1;
  *x0 = a * c - b * s;
  *x1 = a * s + b * c;
}
template <class T>
inline void rope_rotate_back(T* g0, T* g1, T c, T s) {
  const T a = *g0, b = *g1;
  *g0 = a * c + b * s;
  *g1 = -a * s + b * c;
}

// RoPE's frequencies theta_p = base^(-2p/d) for p < d/2, in double as the kernels compute them.
std::vector<double> rope_thetas(std::size_t d, double base);

// One row through qkNorm -> RoPE (at position pos) -> phi (normalizer linear), in place, with
// the kernels' arithmetic. theta: rope_thetas(d, v.rope_base), or null without RoPE.
template <class T>
void transform_row(T* x, std::size_t d, double pos, const Variant& v, const double* theta);

// The backward of transform_row: x is the raw row (before transform_row); g holds dL/d(the
// transformed row) on entry and dL/dx on return (in place). Steps, last first:
//   phi:     g *= phi'(x~) = 1 where x~ > 0, else e^x~
//   RoPE:    g <- R(pos)^T g  (rotation by -pos theta_p)
//   qkNorm:  g <- (g - x^ (x^ . g)) / |x|  when |x| > 1e-12, else g / 1e-12 (the floor is a
//            constant there)
template <class T>
void transform_row_backward(const T* x, T* g, std::size_t d, double pos, const Variant& v,
                            const double* theta);

// dS (or linear's dA) of one query row over n keys from its weights w and dW = dL/dw, by the
// rules above. allowed: the row's keys (null: all n); the others get ds = 0 and must have
// w = 0. tk: T_k (relu's divisor). z: linear's Z (ignored otherwise). Returns D (0 for sigmoid
// and relu). ds may alias dw.
template <class T>
T normalizer_row_backward(Normalizer norm, const T* w, const T* dw, const unsigned char* allowed,
                          std::size_t n, std::size_t tk, T z, T* ds);

}  // namespace attn::vgrad
