#include "attn/softmax_steps.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace attn {

template <class T>
Status softmax_steps(const T* scores, std::size_t n_scores, const std::uint8_t* allowed,
                     std::size_t n_allowed, const SoftmaxStepsOptions& o, SoftmaxSteps<T>* out) {
  const std::size_t rows = o.rows, cols = o.cols;
  if (rows == 0) return Status::Invalid("rows", "rows must be at least 1");
  if (cols == 0) return Status::Invalid("cols", "cols must be at least 1");
  // Four (rows, cols) arrays and the sums, in T; compared in double so nothing overflows.
  const double bytes =
      (4.0 * static_cast<double>(rows) * static_cast<double>(cols) + static_cast<double>(rows)) *
      sizeof(T);
  if (bytes > static_cast<double>(o.memory_cap))
    return Status::Exhausted("memory", "the softmax steps of " + std::to_string(rows) + " x " +
                                           std::to_string(cols) + " scores exceed the memory cap");
  const std::size_t n = rows * cols;
  if (n_scores != n)
    return Status::Invalid("scores", "scores must hold rows * cols = " + std::to_string(n) +
                                         " values, not " + std::to_string(n_scores));
  if (n_allowed != n)
    return Status::Invalid("allowed", "allowed must hold rows * cols = " + std::to_string(n) +
                                          " values, not " + std::to_string(n_allowed));
  const T inf = std::numeric_limits<T>::infinity();
  const T fill = o.fill == MaskFill::kFinite ? static_cast<T>(kFiniteMaskValue) : -inf;
  out->masked.assign(n, 0);
  out->shifted.assign(n, 0);
  out->exps.assign(n, 0);
  out->weights.assign(n, 0);
  out->sums.assign(rows, 0);
  for (std::size_t i = 0; i < rows; ++i) {
    T* masked = out->masked.data() + i * cols;
    // 1. The mask: forbidden scores become the fill.
    bool any = false;
    for (std::size_t j = 0; j < cols; ++j) {
      const bool ok = allowed[i * cols + j] != 0;
      any = any || ok;
      masked[j] = ok ? scores[i * cols + j] : fill;
    }
    // 2. The shift: the row maximum as NumPy's max gives it (NaN wins).
    T m = 0;
    if (o.max_shift) {
      m = -inf;
      for (std::size_t j = 0; j < cols; ++j) {
        if (std::isnan(masked[j])) {
          m = masked[j];
          break;
        }
        if (masked[j] > m) m = masked[j];
      }
      if (o.softmax1 && m < 0) m = 0;  // max(m, 0); a NaN stays
    }
    T* shifted = out->shifted.data() + i * cols;
    T* e = out->exps.data() + i * cols;
    T sum = o.softmax1 ? std::exp(-m) : T(0);
    // 3-4. exp and the row sum, left to right (NumPy sums rows longer than 8 pairwise, so a
    //      sum's last bit may differ from the notebook's there).
    for (std::size_t j = 0; j < cols; ++j) {
      shifted[j] = masked[j] - m;
      e[j] = std::exp(shifted[j]);
      sum += e[j];
    }
    out->sums[i] = sum;
    // 5. Normalise; kZero's fully masked row is zeros, not 0/0.
    T* w = out->weights.data() + i * cols;
    if (o.fill == MaskFill::kZero && !any) {
      out->sums[i] = 0;
      continue;
    }
    for (std::size_t j = 0; j < cols; ++j) w[j] = e[j] / sum;
  }
  return Status::Ok();
}

template Status softmax_steps<float>(const float*, std::size_t, const std::uint8_t*, std::size_t,
                                     const SoftmaxStepsOptions&, SoftmaxSteps<float>*);
template Status softmax_steps<double>(const double*, std::size_t, const std::uint8_t*, std::size_t,
                                      const SoftmaxStepsOptions&, SoftmaxSteps<double>*);

}  // namespace attn
