// Bounds runs of something expensive (the live audit): at most `total` at once, at most
// `per_key` for one key (a caller's uid). A run that would pass a bound is refused, not queued:
// the caller is told to try again, and nothing waits on a lock meanwhile.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace laas::service {

class RunLimit {
 public:
  RunLimit(int total, int per_key) : total_(total), per_key_(per_key) {}

  // A run in progress until destroyed; false when it was refused (`why` says which bound).
  class Run {
   public:
    Run(Run&& other) noexcept : why(std::move(other.why)), limit_(other.limit_), key_(other.key_) {
      other.limit_ = nullptr;
    }
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;
    Run& operator=(Run&&) = delete;
    ~Run() {
      if (limit_) limit_->finish(key_);
    }
    explicit operator bool() const { return limit_ != nullptr; }
    std::string why;

   private:
    friend class RunLimit;
    Run(RunLimit* limit, long key) : limit_(limit), key_(key) {}
    RunLimit* limit_;
    long key_;
  };

  Run start(long key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& mine = by_key_[key];
    if (mine >= per_key_ || running_ >= total_) {
      Run refused(nullptr, key);
      refused.why = mine >= per_key_
                        ? "uid " + std::to_string(key) + " has " + std::to_string(mine) + " running"
                        : std::to_string(running_) + " running in all";
      if (mine == 0) by_key_.erase(key);
      return refused;
    }
    ++mine;
    ++running_;
    return Run(this, key);
  }

 private:
  void finish(long key) {
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
    if (--by_key_[key] == 0) by_key_.erase(key);
  }

  const int total_, per_key_;
  std::mutex mu_;
  int running_ = 0;
  std::map<long, int> by_key_;
};

}  // namespace laas::service
