// Row operations of the variants' gradients (attn/variant_grad.hpp).
#include "attn/variant_grad.hpp"

#include <algorithm>
#include <cmath>

namespace attn::vgrad {

std::vector<double> rope_thetas(std::size_t d, double base) {
  std::vector<double> theta(d / 2);
  for (std::size_t p = 0; p < d / 2; ++p) {
    theta[p] = std::pow(base, -2.0 * static_cast<double>(p) / static_cast<double>(d));
  }
  return theta;
}

template <class T>
void transform_row(T* x, std::size_t d, double pos, const Variant& v, const double* theta) {
  if (v.qk_norm) {
    T ss = 0;
    for (std::size_t c = 0; c < d; ++c) ss += x[c] * x[c];
    const T div = std::max(std::sqrt(ss), static_cast<T>(kQkNormEps));
    for (std::size_t c = 0; c < d; ++c) x[c] /= div;
  }
  if (v.position == Position::kRope) {
    for (std::size_t p = 0; p < d / 2; ++p) {
      const double ang = pos * theta[p];
      rope_rotate(&x[2 * p], &x[2 * p + 1], static_cast<T>(std::cos(ang)),
                  static_cast<T>(std::sin(ang)));
    }
  }
  if (v.normalizer == Normalizer::kLinear) {
    for (std::size_t c = 0; c < d; ++c) x[c] = phi(x[c]);
  }
}

template <class T>
void transform_row_backward(const T* x, T* g, std::size_t d, double pos, const Variant& v,
                            const double* theta) {
  const bool rope = v.position == Position::kRope, linear = v.normalizer == Normalizer::kLinear;
  if (!v.qk_norm && !rope && !linear) return;
  // 1. Recompute the forward's intermediates of this row: |x| and x^ (qkNorm), then x~ (RoPE)
  //    only where phi needs it.
  T norm = 0;
  std::vector<T> xh(x, x + d);
  if (v.qk_norm) {
    T ss = 0;
    for (std::size_t c = 0; c < d; ++c) ss += x[c] * x[c];
    norm = std::sqrt(ss);
    const T div = std::max(norm, static_cast<T>(kQkNormEps));
    for (std::size_t c = 0; c < d; ++c) xh[c] /= div;
  }
  // 2. phi' at x~ = R x^.
  if (linear) {
    std::vector<T> xt(xh);
    if (rope) {
      Variant only_rope;
      only_rope.position = Position::kRope;
      transform_row(xt.data(), d, pos, only_rope, theta);
    }
    for (std::size_t c = 0; c < d; ++c) g[c] *= phi_grad(xt[c]);
  }
  // 3. RoPE: the transpose of the rotation.
  if (rope) {
    for (std::size_t p = 0; p < d / 2; ++p) {
      const double ang = pos * theta[p];
      rope_rotate_back(&g[2 * p], &g[2 * p + 1], static_cast<T>(std::cos(ang)),
                       static_cast<T>(std::sin(ang)));
    }
  }
  // 4. qkNorm: the Jacobian of x / |x| is (I - x^ x^T) / |x|; below the floor the divisor is a
  //    constant.
  if (v.qk_norm) {
    if (norm > static_cast<T>(kQkNormEps)) {
      T dotp = 0;
      for (std::size_t c = 0; c < d; ++c) dotp += xh[c] * g[c];
      for (std::size_t c = 0; c < d; ++c) g[c] = (g[c] - xh[c] * dotp) / norm;
    } else {
      for (std::size_t c = 0; c < d; ++c) g[c] /= static_cast<T>(kQkNormEps);
    }
  }
}

template <class T>
T normalizer_row_backward(Normalizer norm, const T* w, const T* dw, const unsigned char* allowed,
                          std::size_t n, std::size_t tk, T z, T* ds) {
  auto ok = [&](std::size_t j) { return !allowed || allowed[j]; };
  T d = 0;
  switch (norm) {
    case Normalizer::kSoftmax:
    case Normalizer::kSoftmax1:
    case Normalizer::kLinear:
      for (std::size_t j = 0; j < n; ++j) {
        if (ok(j)) d += w[j] * dw[j];
      }
      break;
    default:
      break;
  }
  const T inv_tk = T(1) / static_cast<T>(tk);
  for (std::size_t j = 0; j < n; ++j) {
    if (!ok(j)) {
      ds[j] = 0;
      continue;
    }
    switch (norm) {
      case Normalizer::kSoftmax:
      case Normalizer::kSoftmax1:
        ds[j] = w[j] * (dw[j] - d);
        break;
      case Normalizer::kSigmoid:
        ds[j] = dw[j] * (w[j] * (T(1) - w[j]));
        break;
      case Normalizer::kRelu:
        ds[j] = w[j] > 0 ? dw[j] * inv_tk : T(0);
        break;
      case Normalizer::kLinear:
        ds[j] = (dw[j] - d) / z;
        break;
    }
  }
  return d;
}

template void transform_row<float>(float*, std::size_t, double, const Variant&, const double*);
template void transform_row<double>(double*, std::size_t, double, const Variant&, const double*);
template void transform_row_backward<float>(const float*, float*, std::size_t, double,
                                            const Variant&, const double*);
template void transform_row_backward<double>(const double*, double*, std::size_t, double,
                                             const Variant&, const double*);
template float normalizer_row_backward<float>(Normalizer, const float*, const float*,
                                              const unsigned char*, std::size_t, std::size_t, float,
                                              float*);
template double normalizer_row_backward<double>(Normalizer, const double*, const double*,
                                                const unsigned char*, std::size_t, std::size_t,
                                                double, double*);

}  // namespace attn::vgrad
