// Seeded sequence tasks for the training core. Each fills tokens (B, T) and a loss mask
// (B, T) (1 = position t's token is a target, predicted from positions < t).
//
//  - kInduction (any T >= 4): n = floor(T/2); per sequence len(s) = L ~ U{max(2, ceil(n/2)),
//    ..., n} (L >= 2 so every sequence has a target; only T = 4 is affected); the sequence is
//    [noise (T - 2L tokens, at least 1 for an odd T), s, s], all T - L tokens of a sequence
//    distinct. Targets: the
//    second copy from its second token on (t in [T - L + 1, T)), the positions a
//    previous-token + induction circuit can predict; the repeat offset L varies, so
//    position alone cannot.
//  - kInductionFixed (even T >= 4): [s, s] with len(s) = n, distinct tokens, targets t in [n + 1,
//  T): the
//    offset is always n, so a purely positional head solves it (the shortcut).
//  - kRandom: every token uniform on [0, V) independently, targets every t >= 1: nothing
//    beyond unigram statistics is learnable (the loss floor is ln V).
//
// Randomness: attn::Rng; a uniform integer on [0, m) is floor(uniform() * m); distinct
// tokens come from a partial Fisher-Yates shuffle of 0..V-1 (swap i with i + that integer
// on [0, V - i)), the first tokens drawn being the noise, then s.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "attn/rng.hpp"
#include "attn/status.hpp"

namespace attn::tr {

enum class Task { kInduction, kInductionFixed, kRandom };

bool parse_task(const std::string& name, Task* out);
const char* task_name(Task t);

// Checks that the task can be drawn for this vocab and seqLen (field names as in JS).
Status validate_task(Task task, std::size_t vocab, std::size_t seq_len);

// Fills tokens[b*T + t] and mask[b*T + t] for b < batch; validate_task first.
void sample_task(Task task, Rng* rng, std::size_t batch, std::size_t seq_len, std::size_t vocab,
                 std::int32_t* tokens, std::uint8_t* mask);

}  // namespace attn::tr
