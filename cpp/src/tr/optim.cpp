#include "attn/tr/optim.hpp"

#include <cmath>

namespace attn::tr {

template <class T>
double grad_norm(const T* g, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<double>(g[i]) * static_cast<double>(g[i]);
  return std::sqrt(s);
}

template <class T>
double clip_grad_norm(T* g, std::size_t n, double max_norm) {
  const double total = grad_norm(g, n);
  if (max_norm > 0) {
    const double coef = max_norm / (total + 1e-6);
    if (coef < 1) {
      const T c = static_cast<T>(coef);
      for (std::size_t i = 0; i < n; ++i) g[i] *= c;
    }
  }
  return total;
}

template <class T>
void adamw_step(const AdamWConfig& c, T* p, const T* g, std::size_t n, AdamWState<T>* s) {
  if (s->m.size() != n) {
    s->m.assign(n, T(0));
    s->v.assign(n, T(0));
    s->step = 0;
  }
  s->step += 1;
  const double t = static_cast<double>(s->step);
  const double bc1 = 1 - std::pow(c.beta1, t), bc2 = 1 - std::pow(c.beta2, t);
  const T decay = static_cast<T>(1 - c.lr * c.weight_decay);
  const T b1 = static_cast<T>(c.beta1), b2 = static_cast<T>(c.beta2);
  const T ob1 = static_cast<T>(1 - c.beta1), ob2 = static_cast<T>(1 - c.beta2);
  const T step_size = static_cast<T>(c.lr / bc1);
  const T sqrt_bc2 = static_cast<T>(std::sqrt(bc2));
  const T eps = static_cast<T>(c.eps);
  T* m = s->m.data();
  T* v = s->v.data();
  for (std::size_t i = 0; i < n; ++i) {
    p[i] *= decay;
    m[i] = b1 * m[i] + ob1 * g[i];
    v[i] = b2 * v[i] + ob2 * g[i] * g[i];
    const T denom = std::sqrt(v[i]) / sqrt_bc2 + eps;
    p[i] -= step_size * (m[i] / denom);
  }
}

template double grad_norm<float>(const float*, std::size_t);
template double grad_norm<double>(const double*, std::size_t);
template double clip_grad_norm<float>(float*, std::size_t, double);
template double clip_grad_norm<double>(double*, std::size_t, double);
template void adamw_step<float>(const AdamWConfig&, float*, const float*, std::size_t,
                                AdamWState<float>*);
template void adamw_step<double>(const AdamWConfig&, double*, const double*, std::size_t,
                                 AdamWState<double>*);

}  // namespace attn::tr
