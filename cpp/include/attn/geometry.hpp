// One head's queries and keys as points in a plane, for the page's "queries and keys as points"
// map: the rows as the score uses them (as score_breakdown forms them, attn/breakdown.hpp),
// projected on the two directions that keep the most of their squared length.
// Reference: tests/oracle/gen_geometry_fixtures.py (NumPy's SVD, every variant).
//
//   X          (T_q + T_k, d_k) the head's T_q query rows, then the T_k key rows of its K/V head,
//              each as the score uses it: qkNorm, then RoPE at positions i' = i + (T_k − T_q)
//              and j, then φ = elu + 1 under the linear normalizer; widened to double
//   axes       the top two right singular vectors of X: an UNCENTRED PCA, so the origin stays
//              the origin and the projected q·k approximates the real one (exact when the rows
//              lie in a plane through the origin). d_k = 1: e0 and the zero vector; d_k = 2:
//              the identity (the map is the rows themselves, x = dim 0, y = dim 1)
//   signs      each axis's largest-|component| entry is positive (ties: the lowest index)
//   explained  Σ_rows (x · axis)² / Σ_rows ‖x‖² per axis (σ_a² / Σ σ² for d_k ≥ 3), 0 when
//              every row is zero
//   dot stats  the mean and population std of q~ · k~ (unscaled, no bias) over all T_q × T_k
//              pairs, the mask not applied; and the population std of the single products
//              q~_c k~_c over every pair and dimension (their mean is dot_mean / d_k): with
//              independent dimensions dot_std² ≈ d_k · prod_std², why the score is scaled
// Rank ≤ 1 (σ_2² ≤ 1e-12 σ_1²): the second axis is the unit vector along e_m − (a_1·e_m) a_1,
// m the index of a_1's smallest |component| (the lowest such index); all rows zero: e0 and e1.
//
// Cost (N = T_q + T_k, n = min(d_k, N)): the rows O(N d_k), the dot statistics O(T_q T_k d_k),
// the smaller Gram matrix (XᵀX or XXᵀ, n × n) O(N d_k n / 2), its top two eigenpairs
// (Householder to tridiagonal, bisection, inverse iteration) O(4/3 n³). Natively, one core:
// T = 256, d_k = 256: 22 ms; T = 512, d_k = 1024: 0.7 s. Memory 8·(N d_k + 2 n²) bytes, checked
// against opts.memory_cap ("memory") after the attention's own checks.
#pragma once

#include <cstddef>
#include <vector>

#include "attn/status.hpp"
#include "attn/types.hpp"

namespace attn {

template <class T>
struct QkMap {
  std::vector<double> queries;   // (T_q, 2) each query row (as the score uses it) on the two axes
  std::vector<double> keys;      // (T_k, 2) each key row of the head's K/V head, likewise
  std::vector<double> axes;      // (2, d_k) the two unit axis vectors (d_k = 1: the second is 0)
  double explained[2] = {0, 0};  // share of the total squared length Σ‖x‖² along each axis
  double dot_mean = 0, dot_std = 0;  // mean and std (population) of q~ · k~ over all pairs
  double prod_std = 0;               // std (population) of q~_c k~_c over all pairs and dimensions
  double scale = 1;                  // the call's scale (effective_scale; 1 under linear)
};

// q (heads, T_q, d_k), k (kv_heads, T_k, d_k); opts as for attention (shape, mask, scale,
// variant; dv and v are not read, the mask is checked but not applied). T is the precision the
// rows are formed in; the projection runs in double. Errors: the attention's own field errors,
// "head" for head ≥ heads, "memory" when the work buffers exceed opts.memory_cap.
template <class T>
Status qk_map(const T* q, std::size_t q_len, const T* k, std::size_t k_len,
              const AttentionOptions& opts, std::size_t head, QkMap<T>* out);

}  // namespace attn
