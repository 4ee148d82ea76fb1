// A thread that does one job at a steady beat and on demand: the plugin's switch check and
// laas-sdn's loop. Its own lock guards only its beat and its stop, so a tick may take the
// caller's locks freely, and stop() returns only once a tick under way has ended.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace laas::util {

class Ticker {
 public:
  Ticker() = default;
  ~Ticker();  // stop()
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;

  // Calls `tick` on a thread of its own `period` after the last tick ended, or sooner at
  // wake(). Once only.
  void start(std::chrono::milliseconds period, std::function<void()> tick);
  // The next tick now (or, when one is under way, right after it).
  void wake();
  // No tick after it returns. Idempotent; a Ticker never started stops at once.
  void stop();
  // Whether the caller is the ticking thread (a tick may ask for another without waiting).
  bool on_ticker_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

 private:
  void run(std::chrono::milliseconds period);

  std::function<void()> tick_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool woken_ = false;
  std::thread thread_;
};

}  // namespace laas::util
