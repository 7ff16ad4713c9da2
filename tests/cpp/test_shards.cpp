// Fixed shards: the batch gradient as a sum of shard gradients, and train() on one thread
// against a driver that computes every shard on replicas (as Workers do) and applies them.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "attn/tr/trainer.hpp"

using attn::tr::kShards;
using attn::tr::StepBatch;
using attn::tr::Trainer;
using attn::tr::TrainerConfig;

namespace {

TrainerConfig config(std::size_t batch, double dropout, bool layer_norm) {
  TrainerConfig c;
  c.model.vocab = 16;
  c.model.seq_len = 10;
  c.model.d_model = 16;
  c.model.heads = 4;
  c.model.kv_heads = 2;
  c.model.layer_norm = layer_norm;
  c.model.dropout = dropout;
  c.opt.clip = 1.0;
  c.batch = batch;
  c.seed = 11;
  return c;
}

std::unique_ptr<Trainer> make_trainer(const TrainerConfig& c) {
  std::unique_ptr<Trainer> t;
  const attn::Status st = Trainer::create(c, nullptr, &t);
  INFO(st.field << ": " << st.message);
  REQUIRE(st.ok());
  return t;
}

std::vector<std::size_t> live_shards(std::size_t rows) {
  std::vector<std::size_t> out;
  for (std::size_t s = 0; s < kShards; ++s) {
    std::size_t a = 0, b = 0;
    attn::tr::shard_rows(rows, s, &a, &b);
    if (a < b) out.push_back(s);
  }
  return out;
}

}  // namespace

TEST_CASE("shards - rows cut the batch in order, every row exactly once", "[trainer][shards]") {
  for (std::size_t rows : {1, 2, 3, 4, 5, 7, 8, 32, 33}) {
    std::size_t next = 0;
    for (std::size_t s = 0; s < kShards; ++s) {
      std::size_t a = 0, b = 0;
      attn::tr::shard_rows(rows, s, &a, &b);
      CHECK(a == next);
      CHECK(b >= a);
      next = b;
    }
    CHECK(next == rows);
  }
  CHECK(live_shards(2) == std::vector<std::size_t>{1, 3});
}

TEST_CASE("shards - shard gradients summed equal the straight batch gradient",
          "[trainer][shards]") {
  for (std::size_t batch : {8, 6, 3}) {
    for (bool ln : {false, true}) {
      auto t = make_trainer(config(batch, 0.0, ln));
      std::vector<std::int32_t> tok;
      std::vector<std::uint8_t> mask;
      REQUIRE(t->sample_batch(&tok, &mask).ok());
      std::vector<float> ref;
      double ref_loss = 0;
      REQUIRE(t->loss_and_gradients(tok, mask, &ref_loss, &ref).ok());
      StepBatch b;
      REQUIRE(t->make_batch(tok, mask, &b).ok());
      std::vector<double> sum(ref.size(), 0.0);
      std::vector<float> g(ref.size());
      double loss = 0;
      for (std::size_t s : live_shards(batch)) {
        double ls = 0;
        REQUIRE(t->shard_gradient(b, s, g.data(), &ls).ok());
        loss += ls;
        for (std::size_t i = 0; i < g.size(); ++i) sum[i] += g[i];
      }
      INFO("batch " << batch << " layerNorm " << ln);
      CHECK(loss == Approx(ref_loss).epsilon(1e-6));
      double scale = 0, err = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) {
        scale = std::max(scale, std::abs(double(ref[i])));
        err = std::max(err, std::abs(sum[i] - ref[i]));
      }
      CHECK(scale > 0);
      CHECK(err <= 1e-5 * scale);
    }
  }
}

TEST_CASE("shards - train() on one thread equals a driver over the shard API, bit for bit",
          "[trainer][shards][determinism]") {
  for (std::size_t batch : {8, 6, 3}) {
    for (double dropout : {0.0, 0.25}) {
      const TrainerConfig c = config(batch, dropout, true);
      auto solo = make_trainer(c), coord = make_trainer(c);
      // Two replicas stand for two Workers; shards go to them in a rotating assignment, so a
      // shard's result must not depend on which replica computed it.
      auto w1 = make_trainer(c), w2 = make_trainer(c);
      attn::tr::TrainReport r;
      REQUIRE(solo->train(12, &r).ok());
      REQUIRE(r.finite);
      std::vector<float> driver_loss, driver_norm;
      const std::size_t P = coord->params().size();
      for (std::size_t step = 0; step < 12; ++step) {
        StepBatch b;
        REQUIRE(coord->next_batch(&b).ok());
        REQUIRE(b.step == step);
        REQUIRE(w1->set_params(coord->params()).ok());
        REQUIRE(w2->set_params(coord->params()).ok());
        const auto shards = live_shards(batch);
        std::vector<std::vector<float>> g(shards.size(), std::vector<float>(P));
        std::vector<double> ls(shards.size());
        // Computed in reverse order, as Workers may finish: the sum follows shard order.
        for (std::size_t k = shards.size(); k-- > 0;) {
          Trainer* w = (k + step) % 2 ? w1.get() : w2.get();
          REQUIRE(w->shard_gradient(b, shards[k], g[k].data(), &ls[k]).ok());
        }
        std::vector<const float*> gp;
        for (auto& v : g) gp.push_back(v.data());
        double loss = 0, gn = 0;
        bool fin = false;
        REQUIRE(coord->apply_gradients(b, gp, ls, &loss, &gn, &fin).ok());
        REQUIRE(fin);
        driver_loss.push_back(static_cast<float>(loss));
        driver_norm.push_back(static_cast<float>(gn));
      }
      INFO("batch " << batch << " dropout " << dropout);
      CHECK(coord->step() == 12);
      CHECK(std::memcmp(r.loss.data(), driver_loss.data(), 12 * sizeof(float)) == 0);
      CHECK(std::memcmp(r.grad_norm.data(), driver_norm.data(), 12 * sizeof(float)) == 0);
      CHECK(std::memcmp(solo->params().data(), coord->params().data(), P * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("shards - trainOn takes the shard path: the same bits as train() on that batch",
          "[trainer][shards]") {
  const TrainerConfig c = config(8, 0.25, false);
  auto a = make_trainer(c), b = make_trainer(c), d = make_trainer(c);  // d only draws the batches
  attn::tr::TrainReport r;
  for (int step = 0; step < 3; ++step) {
    StepBatch batch;
    REQUIRE(d->next_batch(&batch).ok());  // the same stream train() draws from
    double loss = 0, gn = 0;
    bool fin = false;
    REQUIRE(b->train_on(batch.tokens, batch.mask, &loss, &gn, &fin).ok());
    REQUIRE(a->train(1, &r).ok());
    CHECK(static_cast<float>(loss) == r.loss[0]);
  }
  CHECK(std::memcmp(a->params().data(), b->params().data(), a->params().size() * 4) == 0);
}

TEST_CASE("shards - the shard API names the field of a bad argument", "[trainer][shards][errors]") {
  auto t = make_trainer(config(2, 0.0, false));
  StepBatch b;
  REQUIRE(t->next_batch(&b).ok());
  std::vector<float> g(t->params().size());
  double loss = 0, gn = 0;
  bool fin = false;
  CHECK(t->shard_gradient(b, 0, g.data(), &loss).field == "shard");  // rows [0, 0): empty
  CHECK(t->shard_gradient(b, kShards, g.data(), &loss).field == "shard");
  REQUIRE(t->shard_gradient(b, 1, g.data(), &loss).ok());
  CHECK(t->apply_gradients(b, {g.data()}, {loss}, &loss, &gn, &fin).field == "shards");
  StepBatch bad = b;
  bad.mask.pop_back();
  CHECK(t->shard_gradient(bad, 1, g.data(), &loss).field == "lossMask");
  bad = b;
  bad.step = 5;
  CHECK(t->apply_gradients(bad, {g.data(), g.data()}, {0.0, 0.0}, &loss, &gn, &fin).field ==
        "step");
  bad = b;
  std::fill(bad.mask.begin(), bad.mask.end(), 0);
  bad.targets = 0;
  CHECK(t->shard_gradient(bad, 1, g.data(), &loss).field == "lossMask");
  CHECK(t->set_params(std::vector<float>(3)).field == "weights");
  std::vector<float> w = t->params();
  w[0] = NAN;
  CHECK(t->set_params(w).field == "weights");
  CHECK(t->step() == 0);
}
