// The softmax of one head's scores step by step, every intermediate array kept, as lesson 1 writes
// the computation. The Lesson view prints these under its lines, beside the student's notebook;
// the kernels never store them (they fuse the steps: docs/kernels.md). Reference: lesson 1's NumPy
// lines; tests/oracle/gen_softmax_steps.py computes the same steps in NumPy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/mask.hpp"
#include "attn/status.hpp"

namespace attn {

template <class T>
struct SoftmaxSteps {
  std::vector<T> masked;   // (rows, cols) where(allowed, S, fill)
  std::vector<T> shifted;  // (rows, cols) masked − m
  std::vector<T> exps;     // (rows, cols) exp(shifted)
  std::vector<T> sums;     // (rows)      Σ_j exps (softmax1: + exp(−m))
  std::vector<T> weights;  // (rows, cols) exps / sums
};

struct SoftmaxStepsOptions {
  std::size_t rows = 0, cols = 0;
  MaskFill fill = MaskFill::kNegInf;
  bool max_shift = true;
  bool softmax1 = false;  // softmax₁ (the "+1" in the denominator, Miller 2023)
  std::size_t memory_cap = 0;
};

// scores (rows, cols), allowed (rows, cols) 1 = may attend; both read, never kept. In T's
// arithmetic:
//   1. masked  = where(allowed, S, fill): −inf, or −1e9 under kFinite (kFiniteMaskValue)
//   2. m = the row's maximum (NaN if the row holds one), softmax₁: max(m, 0); without the max
//      shift m = 0;  shifted = masked − m
//   3. exps = exp(shifted)
//   4. sums = Σ_j exps (softmax₁: + exp(−m))
//   5. weights = exps / sums; under kZero a row with no allowed key is all zeros (sum 0)
// Errors: a size of zero or one whose arrays would exceed memory_cap (5 arrays of rows × cols).
template <class T>
Status softmax_steps(const T* scores, std::size_t n_scores, const std::uint8_t* allowed,
                     std::size_t n_allowed, const SoftmaxStepsOptions& o, SoftmaxSteps<T>* out);

}  // namespace attn
