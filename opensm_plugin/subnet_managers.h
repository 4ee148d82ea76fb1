// The subnet managers of the fabric as this OpenSM sees them: its own role (SMInfo
// state), the master it polls, and every SM port it knows of. The only other file of the
// plugin that includes OpenSM headers (besides plugin.cc).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "service/service_state.h"
#include "service/sm_role.h"

struct osm_opensm;

namespace laas::plugin {

// The SMs' identities are read under OpenSM's lock (by the sweeper thread, which holds it, or
// by refresh(), which takes it); the role is read without the lock, so the service can ask
// from any thread, the sweeper's included.
class SubnetManagers {
 public:
  explicit SubnetManagers(osm_opensm* osm) : osm_(osm) {}

  // OpenSM's lock held by the caller; `routing`: called from a routing callback (the sweeper
  // thread, which role() must then never make take the lock).
  void refresh_locked(bool routing = false);
  // Takes OpenSM's lock for reading: never from the sweeper thread.
  void refresh();

  // Not master and no master known yet (a standby that has just entered STANDBY, before the
  // watcher's next refresh): refreshes first, taking OpenSM's lock, unless called from the
  // thread that routes (which holds it).
  service::SmRole role();
  // Port GUIDs of this SM and of every SM it has found (SMInfo), as of the last refresh.
  std::vector<std::uint64_t> ports() const;
  // This SM's own identity, as of the last refresh.
  service::SmIdentity self() const;
  // Every SM this OpenSM knows (itself first) with its SMInfo state and priority, as of the
  // last refresh: a remote SM's state is what its last SMInfo said (a standby polls only its
  // master).
  std::vector<service::SmSeen> seen() const;

  // When this SM last saw itself out of the master's role (standby, not active) -- the start
  // of a failover from its point of view; and how long OpenSM waits before declaring the
  // master dead: (polling_retry_number + extra) x sminfo_polling_timeout, where extra is 1 to 2
  // polls (measured under ibsim: 3-4 s with 2 retries of 1000 ms).
  std::chrono::steady_clock::time_point last_not_master() const;
  void note_state();
  int detection_ms(int extra_polls) const;

 private:
  osm_opensm* osm_;
  mutable std::mutex mu_;
  service::SmIdentity self_;
  std::optional<service::SmIdentity> master_;
  std::vector<std::uint64_t> ports_;
  std::vector<service::SmSeen> seen_;
  std::chrono::steady_clock::time_point last_not_master_{};
  std::thread::id routing_thread_{};  // the sweeper, as seen in refresh_locked
};

}  // namespace laas::plugin
