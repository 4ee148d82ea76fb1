// The shared tenant state in etcd (`state_store: etcd`, docs/ha.md): the document StateStore
// writes to state.json lives in the key PREFIX + "state", the other parts of the shared state
// (the tenants last routed, the recorded layout, the tenants file's applied list: StateStore's
// SharedPart) in PREFIX + their name, and the SM that took it over as master holds PREFIX +
// "leader" (its name, under a lease it keeps alive). Every write is a transaction that compares
// the leader key's mod_revision and value with what this SM's take-over left there, so a
// deposed master's write is refused by etcd itself (FencedError), never applied. A watch on the
// prefix follows every change (no polling): the standbys answer reads from what it brought.
// A master whose lease ran out while etcd was out of its reach holds the key again as soon as
// etcd answers, if nobody took the state over meanwhile (the keeper; logged either way). Every call
// to etcd has a deadline (`timeout_ms`); without a quorum they fail with StoreUnavailableError
// within it, and the store counts as unavailable until a call succeeds again (the keeper probes
// every second).
//
// Thread-safe. Shared by the StateStore copies of one service (a shared_ptr); the watch and
// keeper threads stop and are joined when the last copy goes.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "service/etcd_client.h"
#include "service/state_stamp.h"

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
  // The parts of the shared state beside the document: key PREFIX + name.
  std::string part_key(const std::string& name) const { return settings_.prefix + name; }
  // The parts `names` (absent ones with exists false), read together from a quorum in one
  // transaction; while etcd does not answer and `or_followed`, what the watch last brought of
  // them (StoreUnavailableError when it never did).
  std::map<std::string, Doc> read_parts(const std::vector<std::string>& names,
                                        bool or_followed) const;

  // Becomes the master's writer: `raise` turns the document (nullopt: none) into the one to
  // write (or throws to refuse); written together with the leader key (value `me`, under a new
  // lease) only if nobody wrote the state in between. Returns what was written.
  Doc take_over(const std::string& me,
                const std::function<std::string(const std::optional<std::string>&)>& raise);
  // A fenced write: only while the leader key is as this SM's take-over left it (re-taken,
  // same value, when only its lease ran out and nobody wrote since). FencedError otherwise.
  FileStamp write(const std::string& text);
  // A part, fenced as write() is (FencedError when another SM took the state over).
  void write_part(const std::string& name, const std::string& text);
  // The first state, only where there is none, in one transaction with `parts` (name -> text;
  // `stale`: parts deleted in it, `laasctl state migrate`). False: one exists; nothing written.
  bool create(const std::string& text, const std::map<std::string, std::string>& parts = {},
              const std::vector<std::string>& stale = {});
  // Replaces the document unconditionally (`laasctl state migrate`, offline).
  void put(const std::string& text);

  // "" while etcd answers; else what failed and since when.
  std::string unavailable() const;
  double unavailable_seconds() const;
  // Called (on the keeper thread) when etcd answers again after being unavailable.
  void set_recovery_hook(std::function<void(double seconds)> hook);
  // Who holds the leader key, as followed ("" none or not known).
  std::string leader() const;
  // What the keeper says of the leader key (its lease lost, held again, or this SM deposed):
  // `error` true for the lines an administrator must act on.
  void set_log_hook(std::function<void(bool error, const std::string& line)> hook);

 private:
  struct Shared;
  void watch_loop();
  void keep_loop();
  template <class F>
  auto guarded(F call) const -> decltype(call());
  std::int64_t grant_lease();
  // The put of `key` fenced by the leader key; returns the revision it was written at.
  std::int64_t fenced_put(const std::string& key, const std::string& text);
  // The leader key is gone (its lease ran out): hold it again if nobody took the state over.
  bool retake();
  // The keeper's part: a lost lease taken back as soon as etcd answers, said once either way.
  void keep_leadership();
  void note(bool error, const std::string& line) const;

  EtcdSettings settings_;
  etcd::Client client_;
  std::shared_ptr<Shared> s_;
  std::thread watcher_, keeper_;
};

}  // namespace laas::service
