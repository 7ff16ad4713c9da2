#include "checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <thread>

#include "attn/tr/probe.hpp"
#include "flags.hpp"

namespace train_text {

using attn::Status;

std::vector<std::size_t> eval_offsets(std::size_t n, std::size_t T, std::size_t windows) {
  std::vector<std::size_t> o(windows, 0);
  if (windows > 1)
    for (std::size_t i = 0; i < windows; ++i) o[i] = i * (n - T) / (windows - 1);
  return o;
}

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

Fail make_text_probe(const attn::tr::ModelConfig& m, const Corpus& corpus, std::size_t rows,
                     TextProbe* probe) {
  probe->rows = rows;
  probe->n = attn::tr::probe_length(m.seq_len);
  probe->candidates = frequent_tokens(corpus, kProbeCandidates);
  const Status st = attn::tr::make_probe(m, probe->candidates, rows, kProbeSeed, &probe->tokens);
  return st.ok() ? Fail{} : from_status(st);
}

ojson probe_json(const TextProbe& probe) {
  return {{"rows", probe.rows},
          {"seed", kProbeSeed},
          {"n", probe.n},
          {"candidates", probe.candidates.size()},
          // The candidates in make_probe's order: a reader (the page) draws the same probe.
          {"candidateIds", probe.candidates},
          {"chunkRows", kProbeChunk},
          {"definition",
           "attn::tr::make_probe: rows [r, r] of 2n tokens, r drawn with replacement from the "
           "training split's most frequent tokens (at most 1000); inContext = mean CE of the "
           "second copy minus the first's (nats), induction(l, h) = mean weight from query i >= n "
           "to key i - n + 1, previous(l, h) = mean weight from i to i - 1 (attn/tr/probe.hpp); "
           "a checkpoint's induction is its best head in layers >= 2, previous its best in "
           "layer 1"}};
}

Fail add_probe_metrics(const attn::tr::ModelConfig& m, const float* params, TextProbe* probe,
                       ojson* checkpoint, ProbeSummary* summary) {
  const std::size_t L = m.layers, H = m.heads;
  attn::tr::ProbeScores ps;
  const Status st =
      attn::tr::probe_scores_chunked(m, params, probe->tokens.data(), probe->rows, kProbeChunk,
                                     static_cast<const std::uint8_t*>(nullptr), &probe->ws, &ps);
  if (!st.ok()) return run_error("probe: " + st.message);
  const double ce_first = ps.ce_first, ce_second = ps.ce_second;
  ojson ind_heads = ojson::array(), prev_heads = ojson::array();
  summary->in_context = ps.in_context;
  double best_ind = -1, best_prev = -1;  // weights are >= 0
  for (std::size_t l = 0; l < L; ++l) {
    ojson il = ojson::array(), pl = ojson::array();
    for (std::size_t h = 0; h < H; ++h) {
      const double ind = ps.induction[l * H + h], prev = ps.previous[l * H + h];
      il.push_back(ind);
      pl.push_back(prev);
      if (l >= 1) best_ind = std::max(best_ind, ind);
      if (l == 0) best_prev = std::max(best_prev, prev);
    }
    ind_heads.push_back(il);
    prev_heads.push_back(pl);
  }
  summary->induction = L >= 2 ? best_ind : std::nan("");
  summary->previous = best_prev;
  ojson& c = *checkpoint;
  c["inContext"] = summary->in_context;
  c["ceFirst"] = ce_first;
  c["ceSecond"] = ce_second;
  c["induction"] = L >= 2 ? ojson(summary->induction) : ojson(nullptr);
  c["previous"] = summary->previous;
  c["heads"] = {{"induction", ind_heads}, {"previous", prev_heads}};
  return {};
}

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

ojson config_json(const attn::tr::ModelConfig& mc, const attn::tr::TrainerConfig& tc) {
  ojson cfg;
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
  return cfg;
}

ojson tokenizer_json(const Corpus& corpus) {
  if (!corpus.pieces.empty()) return corpus.tokenizer;
  return {{"kind", "char"}, {"symbols", symbols_json(corpus)}, {"unknown", utf8_of(kUnknown)}};
}

ojson corpus_json(const Corpus& corpus) {
  return {{"package", kCorpusPackage},
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
}

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

namespace {

struct BigramCounts {
  std::vector<double> uni, big;  // (V), (V * V)
  double n = 0;
};

BigramCounts count_bigrams(const std::int32_t* ids, std::size_t n, std::size_t V) {
  BigramCounts c{std::vector<double>(V), std::vector<double>(V * V), static_cast<double>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    c.uni[static_cast<std::size_t>(ids[i])] += 1;
    if (i + 1 < n)
      c.big[static_cast<std::size_t>(ids[i]) * V + static_cast<std::size_t>(ids[i + 1])] += 1;
  }
  return c;
}

// -log p(b | a) of the interpolated bigram.
double bigram_nll(const BigramCounts& c, std::size_t V, std::int32_t a, std::int32_t b,
                  double lam) {
  const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
  const double pu = (c.uni[ub] + 1) / (c.n + static_cast<double>(V));
  const double pb = c.uni[ua] > 0 ? c.big[ua * V + ub] / c.uni[ua] : 0.0;
  return -std::log(lam * pb + (1 - lam) * pu);
}

}  // namespace

double bigram_loss(const std::vector<std::int32_t>& train, std::size_t vocab,
                   const std::vector<std::int32_t>& windows, std::size_t T, double* lam_out) {
  const std::size_t cut = train.size() * 95 / 100;
  const BigramCounts head = count_bigrams(train.data(), cut, vocab);
  double best = 0, best_nll = INFINITY;
  for (double lam : {0.5, 0.7, 0.8, 0.9, 0.95, 0.98}) {
    double s = 0;
    for (std::size_t i = cut; i + 1 < train.size(); ++i)
      s += bigram_nll(head, vocab, train[i], train[i + 1], lam);
    if (s < best_nll) {
      best_nll = s;
      best = lam;
    }
  }
  const BigramCounts all = count_bigrams(train.data(), train.size(), vocab);
  double s = 0;
  std::size_t n = 0;
  for (std::size_t w = 0; w + T <= windows.size(); w += T)
    for (std::size_t t = 1; t < T; ++t, ++n)
      s += bigram_nll(all, vocab, windows[w + t - 1], windows[w + t], best);
  if (lam_out) *lam_out = best;
  return n ? s / static_cast<double>(n) : 0.0;
}

ojson targets_json(const ojson& checkpoints, double bigram_loss, double training_tokens) {
  ojson out = ojson::array();
  if (checkpoints.empty()) return out;
  const ojson& last = checkpoints.back();
  auto num = [](const ojson& v) { return v.is_number() ? v.get<double>() : std::nan(""); };
  auto add = [&](const char* name, const char* want, double got, bool met) {
    out.push_back({{"name", name},
                   {"want", want},
                   {"got", std::isfinite(got) ? ojson(got) : ojson(nullptr)},
                   {"met", met}});
  };
  const double held = num(last["heldOutLoss"]), ic = num(last["inContext"]);
  const double ind = num(last["induction"]), prev = num(last["previous"]);
  add("heldOut", "held-out loss / the smoothed bigram's <= 0.9", held / bigram_loss,
      held <= 0.9 * bigram_loss);
  add("inContext", "in-context score <= -1.0 nat", ic, ic <= -1.0);
  add("induction", "a head in layer >= 2 with induction score >= 0.4", ind, ind >= 0.4);
  add("previous", "a layer-1 head with previous-token score >= 0.4", prev, prev >= 0.4);
  // Phase change: the last checkpoint before (ic > -0.2) that precedes the first after (< -1).
  std::size_t after = checkpoints.size();
  for (std::size_t i = 0; i < checkpoints.size() && after == checkpoints.size(); ++i)
    if (num(checkpoints[i]["inContext"]) < -1.0) after = i;
  double span = std::nan("");
  bool met = false;
  if (after < checkpoints.size()) {
    for (std::size_t i = after; i-- > 0;)
      if (num(checkpoints[i]["inContext"]) > -0.2) {
        span = num(checkpoints[after]["tokens"]) - num(checkpoints[i]["tokens"]);
        met = span <= training_tokens / 3;
        break;
      }
  }
  add("phaseChange",
      "in-context > -0.2 at one checkpoint, < -1.0 at a later one, within a third of the "
      "training tokens",
      std::isfinite(span) ? span / training_tokens : std::nan(""), met);
  return out;
}

}  // namespace train_text
