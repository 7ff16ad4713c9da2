// Several queries, one key, a span: what a selection of query rows and key columns of one head's
// attention weights adds up to, for the page's selections on a heatmap.
// Reference: tests/oracle/gen_geometry_fixtures.py (its "selections", in NumPy).
//
//   weights    (heads, T_q, T_k) row-major, one head read: A = weights[head]  (T_q, T_k)
//   sum[j]     Σ_{i ∈ queries} A[i, j]                                        (T_k)
//   mean[j]    sum[j] / |queries|                                              (T_k)
//   column[i]  Σ_{j ∈ keys} A[i, j]: the weight query i puts on the keys      (T_q)
// Empty index lists give empty results (mean and sum without queries, column without keys).
// Every sum runs in double, in the order the indices are given.
#pragma once

#include <cstddef>
#include <vector>

#include "attn/status.hpp"

namespace attn {

struct Selection {
  std::vector<double> mean;    // (T_k) mean over the selected query rows of their weights
  std::vector<double> sum;     // (T_k) the sum over the selected query rows
  std::vector<double> column;  // (T_q) per query, the total weight it puts on the selected keys
};

// weights: n values, (heads, T_q, T_k); queries (nq) and keys (nk) indices into T_q and T_k.
// Errors (invalid argument): "weights" when n != heads·T_q·T_k, "head" for head ≥ heads,
// "queries" / "keys" for an index out of range or given twice.
Status weight_selection(const float* weights, std::size_t n, std::size_t heads, std::size_t tq,
                        std::size_t tk, std::size_t head, const std::size_t* queries,
                        std::size_t nq, const std::size_t* keys, std::size_t nk, Selection* out);

}  // namespace attn
