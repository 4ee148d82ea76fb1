#include "util/ticker.h"

#include <utility>

namespace laas::util {

Ticker::~Ticker() { stop(); }

void Ticker::start(std::chrono::milliseconds period, std::function<void()> tick) {
  tick_ = std::move(tick);
  thread_ = std::thread([this, period] { run(period); });
}

void Ticker::wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void Ticker::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Ticker::run(std::chrono::milliseconds period) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, period, [this] { return stopping_ || woken_; });
    if (stopping_) break;
    woken_ = false;
    lock.unlock();
    tick_();
    lock.lock();
  }
}

}  // namespace laas::util
