// The shared tenant state in etcd (`state_store: etcd`, docs/ha.md): the document StateStore
// writes to state.json lives in the key PREFIX + "state", and the SM that took it over as
// master holds PREFIX + "leader" (its name, under a lease it keeps alive). Every write is a
// transaction that compares the leader key's mod_revision and value with what this SM's
// take-over left there, so a deposed master's write is refused by etcd itself (FencedError),
// never applied. A watch on the prefix follows every change (no polling): the standbys answer
// reads from what it brought. Every call to etcd has a deadline (`timeout_ms`); without a
// quorum they fail with StoreUnavailableError within it, and the store counts as unavailable
// until a call succeeds again (the keeper probes every second).
//
// Thread-safe. Shared by the StateStore copies of one service (a shared_ptr); the watch and
// keeper threads stop and are joined when the last copy goes.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "service/etcd_client.h"
#include "service/state_store.h"

namespace laas::service {

struct EtcdSettings {
  etcd::ClientConfig client;
  std::string prefix = "/laas/";
  int lease_ttl_s = 10;  // how long a master's leader key outlives its last keep-alive
};

class EtcdState {
 public:
  // `follow`: start the watch and keeper threads (a service); false for one-shot tools.
  EtcdState(EtcdSettings settings, bool follow);
  ~EtcdState();
  // Stops and joins the threads (the destructor does too); calls still work after.
  void stop();
  EtcdState(const EtcdState&) = delete;
  EtcdState& operator=(const EtcdState&) = delete;

  std::string state_key() const { return settings_.prefix + "state"; }
  std::string leader_key() const { return settings_.prefix + "leader"; }
  std::string where() const;  // "etcd:/laas/state", for messages

  struct Doc {
    bool exists = false;
    std::string text;
    std::int64_t revision = 0;  // the key's mod_revision (0: none)
  };
  // As the watch last brought it while it follows, else read from a quorum.
  Doc read() const;
  FileStamp stamp() const;
  // Read from a quorum: never from the watch.
  Doc read_fresh() const;

  // Becomes the master's writer: `raise` turns the document (nullopt: none) into the one to
  // write (or throws to refuse); written together with the leader key (value `me`, under a new
  // lease) only if nobody wrote the state in between. Returns what was written.
  Doc take_over(const std::string& me,
                const std::function<std::string(const std::optional<std::string>&)>& raise);
  // A fenced write: only while the leader key is as this SM's take-over left it (re-taken,
  // same value, when only its lease ran out and nobody wrote since). FencedError otherwise.
  FileStamp write(const std::string& text);
  // The first state, only where there is none. False: one exists; nothing written.
  bool create(const std::string& text);
  // Replaces the document unconditionally (`laasctl state migrate`, offline).
  void put(const std::string& text);

  // "" while etcd answers; else what failed and since when.
  std::string unavailable() const;
  double unavailable_seconds() const;
  // Called (on the keeper thread) when etcd answers again after being unavailable.
  void set_recovery_hook(std::function<void(double seconds)> hook);
  // Who holds the leader key, as followed ("" none or not known).
  std::string leader() const;

 private:
  struct Shared;
  void watch_loop();
  void keep_loop();
  template <class F>
  auto guarded(F call) const -> decltype(call());
  std::int64_t grant_lease();

  EtcdSettings settings_;
  etcd::Client client_;
  std::shared_ptr<Shared> s_;
  std::thread watcher_, keeper_;
};

}  // namespace laas::service
