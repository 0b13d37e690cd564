// thread_pool: a fixed set of std::threads that run index ranges, reused across calls so that a
// scoring call neither creates threads nor allocates.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace gpusched::batch {

class thread_pool {
 public:
  // `threads` workers in all, the calling thread included (0: std::thread::hardware_concurrency()).
  explicit thread_pool(unsigned threads = 0) {
    if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
    size_ = threads;
    workers_.reserve(threads - 1);
    for (unsigned w = 1; w < threads; ++w) workers_.emplace_back([this, w] { work(w); });
  }
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  [[nodiscard]] unsigned size() const noexcept { return size_; }

  // Calls f(task, worker) for every task in [0, tasks), spread over the workers (worker < size()),
  // and returns when all are done. Tasks are taken in increasing order from a shared counter, so
  // results are deterministic when each task writes only its own outputs. The first exception a
  // task throws is rethrown here (the remaining tasks are skipped).
  template <class F>
  void run(std::size_t tasks, F&& f) {
    if (tasks == 0) return;
    if (size_ == 1 || tasks == 1) {
      for (std::size_t t = 0; t < tasks; ++t) f(t, 0U);
      return;
    }
    job_.ctx = &f;
    job_.call = [](void* ctx, std::size_t task, unsigned worker) { (*static_cast<F*>(ctx))(task, worker); };
    job_.tasks = tasks;
    next_.store(0, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = static_cast<unsigned>(workers_.size());
      ++generation_;
    }
    wake_.notify_all();
    drain(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
    if (error_) {
      std::exception_ptr e = std::exchange(error_, nullptr);
      std::rethrow_exception(e);
    }
  }

 private:
  struct job {
    void* ctx = nullptr;
    void (*call)(void*, std::size_t, unsigned) = nullptr;
    std::size_t tasks = 0;
  };

  void drain(unsigned worker) {
    for (;;) {
      const std::size_t t = next_.fetch_add(1, std::memory_order_relaxed);
      if (t >= job_.tasks || failed_.load(std::memory_order_relaxed)) return;
      try {
        job_.call(job_.ctx, t, worker);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
        failed_.store(true, std::memory_order_relaxed);
      }
    }
  }

  void work(unsigned worker) {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
      }
      drain(worker);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--busy_ == 0) done_.notify_one();
      }
    }
  }

  unsigned size_ = 1;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::uint64_t generation_ = 0;
  unsigned busy_ = 0;
  bool stop_ = false;
  job job_;
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

}  // namespace gpusched::batch
