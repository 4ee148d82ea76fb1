// Work spread over a few threads inside OpenSM (routing, hop matrices) and the tools.
#pragma once

#include <exception>
#include <thread>
#include <vector>

namespace laas::util {

// Runs `worker` on up to `count` threads, the caller's included, and returns once every one
// has returned. Workers share their work through a counter (each takes the next item until
// none is left), so when the system refuses a thread (EAGAIN: the process's or a cgroup's
// limit) those already running do it all: creating a thread never ends the process, which a
// std::system_error escaping a pool inside OpenSM's sweeper would. Returns the threads used.
template <class Worker>
int run_on_threads(int count, const Worker& worker) {
  std::vector<std::thread> pool;
  struct JoinAll {  // also when the caller's own share throws
    std::vector<std::thread>& pool;
    ~JoinAll() {
      for (auto& t : pool) t.join();
    }
  } join_all{pool};
  try {
    pool.reserve(count > 1 ? static_cast<std::size_t>(count - 1) : 0);
    for (int i = 1; i < count; ++i) pool.emplace_back(worker);
  } catch (const std::exception&) {
    // Fewer threads than asked: the work is the same, only slower.
  }
  worker();
  return static_cast<int>(pool.size()) + 1;
}

}  // namespace laas::util
