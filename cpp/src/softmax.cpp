#include "attn/softmax.hpp"

#include <cmath>
#include <limits>

namespace attn {

template <class T>
void softmax_rows(T* x, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    T* row = x + r * cols;
    // 1. Row maximum (NaN-propagating, like NumPy's max).
    T m = -std::numeric_limits<T>::infinity();
    bool has_nan = false;
    for (std::size_t j = 0; j < cols; ++j) {
      if (std::isnan(row[j])) has_nan = true;
      if (row[j] > m) m = row[j];
    }
    if (has_nan) m = std::numeric_limits<T>::quiet_NaN();
    // 2. exp(x - max): the largest term is exp(0) = 1, so nothing overflows.
    T sum = 0;
    for (std::size_t j = 0; j < cols; ++j) {
      row[j] = std::exp(row[j] - m);
      sum += row[j];
    }
    // 3. Normalise.
    const T inv = T(1) / sum;
    for (std::size_t j = 0; j < cols; ++j) row[j] *= inv;
  }
}

template <class T>
xt::xtensor<T, 2> softmax(const xt::xtensor<T, 2>& x) {
  xt::xtensor<T, 2> y = x;
  softmax_rows(y.data(), y.shape(0), y.shape(1));
  return y;
}

template <class T>
T row_entropy(const T* p, std::size_t n) {
  T h = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (std::isnan(p[j])) return std::numeric_limits<T>::quiet_NaN();
    if (p[j] > 0) h -= p[j] * std::log(p[j]);
  }
  return h;
}

template void softmax_rows<float>(float*, std::size_t, std::size_t);
template void softmax_rows<double>(double*, std::size_t, std::size_t);
template xt::xtensor<float, 2> softmax<float>(const xt::xtensor<float, 2>&);
template xt::xtensor<double, 2> softmax<double>(const xt::xtensor<double, 2>&);
template float row_entropy<float>(const float*, std::size_t);
template double row_entropy<double>(const double*, std::size_t);

}  // namespace attn
