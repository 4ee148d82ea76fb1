// Change events (the socket's `events` method): what changed in the tenant state, in order,
// so that controllers (laas-api's event stream, the Slurm follower) follow it without polling.
//
// Events are not logged where changes are made: they are the difference between two tenant
// states (PersistedState), taken wherever the service's state becomes a new one -- a change
// saved by the master, state.json re-read by a standby following the shared state, a take-over.
// So a standby serves the same events as the master (read from the same file), and no change
// can be made without its event.
//
// Sequence numbers come from the state's generation (state.json's, shared by every SM): the
// events found in generation G are numbered G*1000, G*1000+1, ..., always above the last one.
// A service that starts (an OpenSM restart, a failover to an SM that just started) knows only
// the state it loaded, generation G0: its position is G0*1000+999 ("everything up to G0"), and
// a client's `since` below that position is answered `lost` (changes may have happened while no
// service watched), as is a `since` above the last position this service knows (another SM's
// numbering, a state restored from a backup). A client told `lost` re-reads the whole state
// and goes on from `next`. `next` is always such a position: the last event's number, or the
// end of the generation the service knows when it is later.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "service/state_store.h"

namespace laas::service {

constexpr std::uint64_t kEventsPerGeneration = 1000;
constexpr std::size_t kEventRing = 10000;
constexpr int kMaxEventWaitMs = 30000;

// The events that take the state `before` to `after` (pure, in a fixed order: tenants removed,
// added, changed; then drains and resumes of hosts, links, switches). Each is {"type", ...} with
// the fields that name what changed; no seq or time yet.
std::vector<nlohmann::json> state_events(const PersistedState& before, const PersistedState& after);

// One answer of `events`.
struct EventBatch {
  std::vector<nlohmann::json> events;
  std::uint64_t next = 0;
  bool lost = false;
};

// The bounded ring of numbered events, and the long-poll on it. Thread-safe with its own lock:
// observe() is called with the service's lock held, read() never takes that lock, so a
// long-poll holds no lock of the service while it waits.
class EventLog {
 public:
  using Now = std::function<std::string()>;  // the time an event gets (ISO 8601 UTC)
  explicit EventLog(std::size_t capacity = kEventRing, Now now = nullptr);

  // The service's state is now `state`. The first call only sets the starting point.
  void observe(const PersistedState& state);
  // The events after `since` (nullopt: from now on, none before), waiting up to `wait_ms` for
  // one when there is none. Returns at once when `since` is lost, and when interrupted.
  EventBatch read(std::optional<std::uint64_t> since, int wait_ms);
  // Shutting down: every read returns now, later ones do not wait.
  void interrupt();
  std::uint64_t position() const;  // what `next` is now

 private:
  EventBatch collect(std::uint64_t since) const;  // mu_ held
  bool has_after(std::uint64_t since) const;      // mu_ held

  struct Event {
    std::uint64_t seq;
    nlohmann::json body;
  };
  const std::size_t capacity_;
  Now now_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;
  bool interrupted_ = false;
  PersistedState last_;
  std::deque<Event> ring_;
  std::uint64_t position_ = 0;  // every event up to here is known or was dropped
  std::uint64_t floor_ = 0;     // events up to here are not in the ring (before start, dropped)
};

// The `events` request: params {"since": N (optional), "wait_ms": 0..30000 (default 0)} ->
// {"events": [...], "next": N, "lost": bool}. Throws RequestError (bad_request) naming the field.
nlohmann::json answer_events(EventLog& log, const nlohmann::json& params);

}  // namespace laas::service
