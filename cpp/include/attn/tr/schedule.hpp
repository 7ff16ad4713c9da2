// The learning-rate schedule: linear warmup, then cosine decay to a floor, as a pure function
// of the optimiser step (a resumed or replayed run gets the same lr at the same step).
//
// It is what a PyTorch user gets from
//   SequentialLR(opt, [LinearLR(opt, start_factor=s0, end_factor=1, total_iters=W),
//                      CosineAnnealingLR(opt, T_max=N-W, eta_min=floor)], milestones=[W])
// (opt built with lr = peak, scheduler.step() after every opt.step()): lr_at(s, k) is the lr
// optimiser step k (0-based) runs with. With floor = final_lr_frac * peak:
//   W > 0, k <  W:  peak * (s0 + (1 - s0) * k / W)
//          k >= W:  floor + (peak - floor) * (1 + cos(pi * (k - W) / (N - W))) / 2
//   W = 0 (torch's quirk: SequentialLR's first step() already counts epoch 1, so milestone 0
//          is never reached; the cosine scheduler then starts one step late from the value the
//          LinearLR left, s0 * peak, and only its restart branch past T_max uses the peak):
//          k = 0:           s0 * peak
//          k >= 1, j = k-1: floor + (A - floor) * (1 + cos(pi * j / N)) / 2,
//                           A = s0 * peak while j <= N, then peak
//   So --warmup 0 with s0 < 1 scales the whole decay by s0; s0 = 1 gives a plain cosine (with
//   k = 0 and 1 both at the peak).
// Steps past N follow torch's cosine, which rises again (period 2 (N - W)); a run of N steps
// uses k < N only. torch computes the cosine recursively from the previous lr; this closed form
// agrees with it to within rounding (tests/cpp/test_schedule.cpp states the tolerance).
#pragma once

#include <cstddef>

#include "attn/status.hpp"

namespace attn::tr {

struct LrSchedule {
  double lr = 3e-3;            // peak lr
  std::size_t warmup = 0;      // W, warmup steps (0 .. steps-1)
  std::size_t steps = 1;       // N, optimiser steps of the run
  double warmup_start = 0.01;  // s0 in (0, 1]: torch's LinearLR start_factor
  double final_lr_frac = 0.1;  // floor = final_lr_frac * lr, final_lr_frac in [0, 1]
};

// Fields named as the attn_train_text flags: lr, warmup, steps, warmup-start, final-lr-frac.
Status validate_schedule(const LrSchedule& s);

// The lr of optimiser step k (validated schedule).
double lr_at(const LrSchedule& s, std::size_t k);

}  // namespace attn::tr
