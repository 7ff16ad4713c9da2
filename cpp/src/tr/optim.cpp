#include "attn/tr/optim.hpp"

#include <cmath>
#include <type_traits>

#include "attn/simd128.hpp"
#ifdef ATTN_SIMD128
#define ATTN_OPTIM_SIMD 1
#endif

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
  std::size_t i = 0;
#ifdef ATTN_OPTIM_SIMD
  // Four parameters at a time with the scalar loop's operations in its order: f32x4 sqrt
  // and div are correctly rounded like their scalar twins, so every lane gets the scalar
  // loop's bits.
  if constexpr (std::is_same_v<T, float>) {
    const v128_t vdecay = wasm_f32x4_splat(decay), vb1 = wasm_f32x4_splat(b1),
                 vb2 = wasm_f32x4_splat(b2), vob1 = wasm_f32x4_splat(ob1),
                 vob2 = wasm_f32x4_splat(ob2), vstep = wasm_f32x4_splat(step_size),
                 vsq = wasm_f32x4_splat(sqrt_bc2), veps = wasm_f32x4_splat(eps);
    for (; i + 4 <= n; i += 4) {
      const v128_t gi = wasm_v128_load(g + i);
      const v128_t pi = wasm_f32x4_mul(wasm_v128_load(p + i), vdecay);
      const v128_t mi =
          wasm_f32x4_add(wasm_f32x4_mul(vb1, wasm_v128_load(m + i)), wasm_f32x4_mul(vob1, gi));
      const v128_t vi = wasm_f32x4_add(wasm_f32x4_mul(vb2, wasm_v128_load(v + i)),
                                       wasm_f32x4_mul(wasm_f32x4_mul(vob2, gi), gi));
      const v128_t denom = wasm_f32x4_add(wasm_f32x4_div(wasm_f32x4_sqrt(vi), vsq), veps);
      wasm_v128_store(m + i, mi);
      wasm_v128_store(v + i, vi);
      wasm_v128_store(p + i, wasm_f32x4_sub(pi, wasm_f32x4_mul(vstep, wasm_f32x4_div(mi, denom))));
    }
  }
#endif
  for (; i < n; ++i) {
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
