// Head roles read from attention weights: how much of each row goes where a previous-token, an
// induction or a duplicate-token head would put it. The trainer's probes (attn::tr::head_scores)
// and the page's "build a head" exercises both ask this one function.
//
// Pattern scores of one head, from its causal weights A (rows i, keys j) over tokens tok:
//   previous-token:  cells (i, i-1)
//   duplicate-token: cells (i, j), j < i, tok[j] == tok[i]
//   induction:       cells (i, j+1), j < i, tok[j] == tok[i] (the key right after an earlier
//                    occurrence of the current token)
// Per sequence, score = Σ A · pattern / Σ A (the row's weights on keys ≤ i), both sums over the
// rows holding at least one pattern cell; sequences without such a row are skipped; the score is
// the mean over the remaining sequences (0 if none).
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {

// tokens (batch, t); weights (batch, H, t, t) row-major; prev, induction, duplicate get H each.
template <class T>
void pattern_scores(const std::int32_t* tokens, std::size_t batch, std::size_t t, std::size_t H,
                    const T* weights, double* prev, double* induction, double* duplicate);

}  // namespace attn
