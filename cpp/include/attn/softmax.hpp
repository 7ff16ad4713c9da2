// Numerically stable softmax over the rows of a row-major matrix.
#pragma once

#include <cstddef>
#include <xtensor/xtensor.hpp>

namespace attn {

// x: (rows, cols) row-major, softmaxed in place along each row.
//   1. subtract the row maximum, so exp never overflows (exp(1000) is inf,
//      exp(1000 - 1000) is 1) and the result is unchanged mathematically;
//   2. exponentiate and sum;
//   3. divide by the sum.
// A row whose maximum is -inf (every entry -inf) becomes NaN, as in NumPy:
// exp(-inf - (-inf)) = exp(NaN). A row holding NaN stays NaN.
template <class T>
void softmax_rows(T* x, std::size_t rows, std::size_t cols);

// Convenience form on an xtensor matrix: returns softmax along the last axis.
template <class T>
xt::xtensor<T, 2> softmax(const xt::xtensor<T, 2>& x);

// Entropy in nats of one probability row, -sum p log p with 0 log 0 = 0.
// NaN in, NaN out.
template <class T>
T row_entropy(const T* p, std::size_t n);

}  // namespace attn
