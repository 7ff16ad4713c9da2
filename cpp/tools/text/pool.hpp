// attn_train_text's threads: a fixed pool that runs one job on every thread and waits.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace train_text {

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

}  // namespace train_text
