#include "service/state_io.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace laas::service {

using Clock = std::chrono::steady_clock;

// What the worker and its owner share: the worker may outlive the owner (stuck in a file
// system call at shutdown), so it holds this, never the StateIo.
struct StateIo::Shared {
  std::string directory;
  Ms hang_after;
  mutable std::mutex mu;
  mutable std::condition_variable cv;       // work queued, or stopping
  mutable std::condition_variable idle_cv;  // nothing queued or running
  std::deque<std::pair<std::string, std::function<void()>>> queue;
  bool busy = false;
  bool settling = false;  // the recovery hook runs
  bool stopping = false;
  Clock::time_point started{};  // of the operation running (busy)
  std::function<void(double)> recovered;

  double running_seconds(Clock::time_point now) const {  // mu held
    return busy ? std::chrono::duration<double>(now - started).count() : 0.0;
  }
  bool hung(Clock::time_point now) const {  // mu held
    return busy && now - started >= hang_after;
  }
  std::string message(double seconds) const {
    char n[32];
    std::snprintf(n, sizeof n, "%.0f", seconds);
    return "state directory " + directory + " not answering for " + n + " s";
  }
};

namespace {

void work(std::shared_ptr<StateIo::Shared> s);

}  // namespace

StateIo::StateIo(std::string directory, Ms hang_after) : s_(std::make_shared<Shared>()) {
  s_->directory = std::move(directory);
  s_->hang_after = hang_after;
  // The worker holds its own reference: it may outlive this object (when stuck).
  worker_ = std::thread(work, s_);
}

StateIo::~StateIo() {
  bool finished;
  {
    std::unique_lock<std::mutex> lock(s_->mu);
    s_->stopping = true;
    s_->cv.notify_all();
    // Writes queued at shutdown (allocations.json, the metrics) still land if the directory
    // answers; a hung one is left to the worker, which exits when its call returns.
    finished = s_->idle_cv.wait_for(lock, std::chrono::seconds(2), [this] {
      return !s_->busy && !s_->settling && s_->queue.empty();
    });
    s_->recovered = nullptr;
  }
  if (finished)
    worker_.join();  // it saw `stopping` with nothing queued: it is returning
  else
    worker_.detach();
}

namespace {

void work(std::shared_ptr<StateIo::Shared> s) {
  std::unique_lock<std::mutex> lock(s->mu);
  for (;;) {
    s->cv.wait(lock, [&] { return s->stopping || !s->queue.empty(); });
    if (s->queue.empty()) break;  // stopping, nothing left
    auto op = std::move(s->queue.front().second);
    s->queue.pop_front();
    s->busy = true;
    s->started = Clock::now();
    lock.unlock();
    try {
      op();
    } catch (...) {
      // A posted operation reports its own failures; call() gets its exception by its future.
    }
    lock.lock();
    s->busy = false;
    const auto took = Clock::now() - s->started;
    std::function<void(double)> recovered;
    if (took >= s->hang_after && !s->stopping) recovered = s->recovered;
    if (recovered) {
      s->settling = true;
      lock.unlock();
      recovered(std::chrono::duration<double>(took).count());
      lock.lock();
      s->settling = false;
    }
    if (s->queue.empty()) s->idle_cv.notify_all();
  }
  s->idle_cv.notify_all();
}

}  // namespace

void StateIo::enqueue(const std::string& key, std::function<void()> op, bool refuse_when_hung) {
  std::lock_guard<std::mutex> lock(s_->mu);
  const auto now = Clock::now();
  if (refuse_when_hung && s_->hung(now))
    throw NotAnsweringError(s_->message(s_->running_seconds(now)));
  if (!key.empty())
    for (auto& queued : s_->queue)
      if (queued.first == key) {
        queued.second = std::move(op);
        return;
      }
  s_->queue.emplace_back(key, std::move(op));
  s_->cv.notify_one();
}

void StateIo::post(const std::string& key, std::function<void()> op) {
  enqueue(key, std::move(op), false);
}

NotAnsweringError StateIo::timed_out(Ms deadline) const {
  std::lock_guard<std::mutex> lock(s_->mu);
  const double running = s_->running_seconds(Clock::now());
  return NotAnsweringError(
      s_->message(std::max(running, std::chrono::duration<double>(deadline).count())));
}

std::string StateIo::not_answering() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  const auto now = Clock::now();
  return s_->hung(now) ? s_->message(s_->running_seconds(now)) : "";
}

double StateIo::not_answering_seconds() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  const auto now = Clock::now();
  return s_->hung(now) ? s_->running_seconds(now) : 0.0;
}

void StateIo::set_recovery_hook(std::function<void(double)> hook) {
  std::lock_guard<std::mutex> lock(s_->mu);
  s_->recovered = std::move(hook);
}

bool StateIo::idle(Ms timeout) const {
  std::unique_lock<std::mutex> lock(s_->mu);
  return s_->idle_cv.wait_for(lock, timeout,
                              [this] { return !s_->busy && !s_->settling && s_->queue.empty(); });
}

}  // namespace laas::service
