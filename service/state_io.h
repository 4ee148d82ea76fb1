// Storage I/O on the state directory, off the caller's thread. The plugin runs inside OpenSM,
// whose sweeper calls it with OpenSM's exclusive lock held; the state directory may be on a
// hard-mounted network file system (docs/ha.md) whose calls never return while its server is
// gone. So every access to the directory is an operation on one worker thread: callers that
// need the answer wait for it at most a deadline, callers that do not (files rewritten after
// each routing run) queue it and go on. While an operation has run longer than `hang_after`
// the directory is "not answering": calls are refused at once, without queueing, so only the
// first caller to meet a hung file system waits (up to its deadline), and it recovers by
// itself when the stuck operation returns.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

namespace laas::service {

// The state directory did not answer in time (the message names it and for how long).
class NotAnsweringError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The shared store (etcd, service/etcd_state.h) did not answer within its deadline: no quorum,
// or no member reachable. Handled as a state directory that does not answer, except that a
// change meeting it is refused busy (try again) at once.
class StoreUnavailableError : public NotAnsweringError {
 public:
  using NotAnsweringError::NotAnsweringError;
};

class StateIo {
 public:
  using Ms = std::chrono::milliseconds;
  // `directory` is for messages only.
  explicit StateIo(std::string directory, Ms hang_after = Ms(2000));
  // Lets queued operations finish for a moment and joins the worker: OpenSM unmaps the plugin
  // after deleting it, and a thread still running its code would crash OpenSM at exit. Only a
  // worker stuck in a hung file system is left behind (detached): every operation owns what it
  // uses, so nothing it touches is destroyed.
  ~StateIo();
  StateIo(const StateIo&) = delete;
  StateIo& operator=(const StateIo&) = delete;

  // Runs `op` on the worker and returns its result, waiting at most `deadline`. Throws
  // NotAnsweringError at once while the directory is not answering, or when `op` has not
  // finished by the deadline (it still runs later: it must own, not borrow, what it uses);
  // rethrows what `op` throws.
  template <class F>
  auto call(F op, Ms deadline) -> decltype(op()) {
    using T = decltype(op());
    auto task = std::make_shared<std::packaged_task<T()>>(std::move(op));
    std::future<T> result = task->get_future();
    enqueue(
        "", [task] { (*task)(); }, /*refuse_when_hung=*/true);
    if (result.wait_for(deadline) != std::future_status::ready) throw timed_out(deadline);
    return result.get();
  }
  // Queues `op` without waiting for it. One queued (not yet started) under the same key is
  // replaced, so a hung directory holds at most one pending write of each file.
  void post(const std::string& key, std::function<void()> op);

  // "" while the directory answers, else "state directory D not answering for N s".
  std::string not_answering() const;
  double not_answering_seconds() const;  // 0 while it answers
  // Called on the worker when an operation returns after the directory stopped answering
  // (the seconds it hung). Set before the first operation.
  void set_recovery_hook(std::function<void(double seconds)> hook);
  // Tests: waits until nothing is queued or running; false after `timeout`.
  bool idle(Ms timeout) const;

  struct Shared;  // the worker's (state_io.cc)

 private:
  void enqueue(const std::string& key, std::function<void()> op, bool refuse_when_hung);
  NotAnsweringError timed_out(Ms deadline) const;
  std::shared_ptr<Shared> s_;
  std::thread worker_;
};

}  // namespace laas::service
