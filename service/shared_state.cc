// The shared state and the subnet manager's role (service/shared_state.h): one tenant truth
// for a master and its standbys. The state directory may be shared by every SM host; the master's
// service holds the state's current term (StateStore::take_over) and is the only writer, fenced by
// that term; the others re-read the file when it changes, answer reads from it, keep their own
// managed partitions.conf following it and refuse changes, naming the master.
#include "service/shared_state.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "service/partition_inputs.h"
#include "service/service_exports.h"

namespace laas::service {

using nlohmann::json;

void SharedState::set_role_provider(std::function<SmRole()> provider) {
  std::lock_guard<std::mutex> lock(st_.mu);
  st_.sm.role_provider = std::move(provider);
  st_.term.term_held = false;  // until the first routing run as master takes the state over
}

std::optional<std::string> SharedState::take_over_if_needed(const SmIdentity& self,
                                                            bool state_expected) {
  std::lock_guard<std::mutex> lock(st_.mu);
  if (!st_.sm.role_provider) return std::nullopt;  // one owner, no other SM: nothing to take over
  if (st_.config.state_dir_unknown)
    return "cannot take the tenant state over as master: " + st_.condition.blocked;
  // Whether another SM wrote state.json since: a stat on the worker, waited for at most
  // kIoDeadline; while the directory does not answer, the stamp the worker last saw (probes,
  // our own writes), so the run routes from memory without waiting.
  FileStamp seen = st_.term.polled->get();
  if (st_.term.term_held && st_.io->not_answering().empty() && st_.store.unavailable().empty())
    try {
      seen = st_.io->call(
          [store = st_.store, polled = st_.term.polled] {
            const FileStamp stamp = store.stamp();
            polled->set(stamp);
            return stamp;
          },
          kIoDeadline);
    } catch (const NotAnsweringError&) {
    }
  if (st_.term.term_held && seen == st_.term.state_stamp) return std::nullopt;
  const bool after_other = st_.term.term_held;  // held it, but another SM has written since
  const auto t0 = std::chrono::steady_clock::now();
  try {
    // On the worker, with copies; refused at once while the directory does not answer.
    struct Taken {
      PersistedState state;
      FileStamp written;
    };
    const bool held = st_.term.held_a_term;
    Taken taken = st_.io->call(
        [store = st_.store, polled = st_.term.polled, must_exist = st_.config.state_must_exist,
         expected = state_expected, held, master = self.text(), port = self.port_guid] {
          // Whether a missing state.json may be taken over as an empty state, decided by
          // StateStore::take_over under the directory lock. A missing file is an empty state
          // only on a fabric that never had tenants: once this SM held a term, or tenants were
          // routed from this directory, it is a lost file (an unmounted share, a slip of rm),
          // and taking it over would hand every tenant's hosts away.
          std::string refusal;
          if (must_exist)
            refusal = store.path() +
                      " does not exist and state_must_exist is set: is the shared state "
                      "directory mounted? (A new, empty share: `laasctl state init` once, on "
                      "one SM host.) No tenant is routed until the file is there";
          else if (expected || held)
            refusal = store.path() + " does not exist, but " +
                      (held ? std::string("this SM held the tenant state before")
                            : std::string("allocations.json records tenants routed from it")) +
                      ": the tenants last routed keep their routes until the file is restored";
          Taken t;
          t.state = store.take_over(master, port, &t.written, refusal);
          polled->set(t.written);
          return t;
        },
        kIoDeadline);
    st_.persisted = std::move(taken.state);
    st_.term.state_stamp = taken.written;
    st_.condition.unsaved.clear();  // what was recorded and not written is replaced by the file
  } catch (const std::exception& e) {
    // Unreadable, unwritable or not answering: route no tenant from it (never re-allocate);
    // try again at the next routing run, so a repaired file is taken over by itself.
    st_.term.term_held = false;
    if (st_.condition.blocked != e.what())
      st_.log(LogLevel::kError, std::string("laas: ") + e.what());
    st_.condition.blocked = e.what();
    return "cannot take the tenant state over as master: " + st_.condition.blocked;
  }
  st_.term.term_held = true;
  st_.term.held_a_term = true;
  st_.term.fenced.clear();
  st_.condition.blocked.clear();
  st_.condition.loaded = true;
  exports_.assign_missing_pkeys();
  st_.events.observe(st_.persisted);  // what another SM changed since this one last read it
  // The next on_topology maps every tenant read here onto the fabric (nothing re-computed).
  // Until then there is no placement to show: the view goes with the cluster and the ids
  // that refer into it (every reader tests `view` alone; status and the metrics may run
  // between this take-over and the routing run's on_topology, or for as long as later runs
  // fail closed before it).
  st_.routing.unplaced.clear();
  st_.cluster.reset();
  st_.ids.reset();
  st_.view.reset();
  st_.unaccepted.clear();
  st_.routing.topology_error =
      "this SM took the tenant state over; the next routing run maps the tenants onto the fabric";
  ++st_.term.takeovers;
  char line[512];
  std::snprintf(
      line, sizeof line,
      "laas: took over as master (term %llu): %zu tenant(s) from %s (generation %llu, "
      "read and fenced in %.1f ms)%s",
      static_cast<unsigned long long>(st_.persisted.term), st_.persisted.tenants.size(),
      st_.store.path().c_str(), static_cast<unsigned long long>(st_.persisted.generation),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
      after_other ? "; another SM had written the state since this one last did" : "");
  return std::string(line);
}

bool SharedState::reload() {
  if (st_.config.state_dir_unknown) return false;  // blocked since the start, never read
  struct Read {
    FileStamp stamp;
    bool changed = false;
    std::optional<PersistedState> state;
    std::string error;
  };
  Read read;
  try {
    read = st_.io->call(
        [store = st_.store, polled = st_.term.polled, known = st_.term.state_stamp] {
          Read r;
          r.stamp = store.stamp();
          polled->set(r.stamp);
          if (r.stamp == known) return r;
          r.changed = true;
          // Gone since it was read (an unmounted share shows an empty directory, an NFS
          // server that fails the stat): no state at all, never an empty one.
          if (!r.stamp.exists) {
            r.error = store.path() +
                      " does not exist any more or cannot be reached (is the shared state "
                      "directory mounted?): the tenants are kept as last read, and "
                      "partitions.conf as it is, until the file is back";
            return r;
          }
          try {
            r.state = store.load();
          } catch (const std::exception& e) {
            r.error = e.what();
          }
          return r;
        },
        kIoDeadline);
  } catch (const NotAnsweringError& e) {
    // What was read last stands; the reads say so (status), changes are refused anyway here.
    if (!st_.condition.hang_logged->exchange(true))
      st_.log(LogLevel::kError,
              std::string("laas: ") + e.what() + "; answering from the shared state as last read");
    return false;
  }
  if (!read.changed) return false;
  st_.term.state_stamp = read.stamp;
  if (!read.state) {
    if (st_.condition.blocked != read.error) st_.log(LogLevel::kError, "laas: " + read.error);
    st_.condition.blocked = read.error;
    return false;
  }
  st_.persisted = std::move(*read.state);
  st_.condition.unsaved.clear();      // the file is the truth
  st_.events.observe(st_.persisted);  // a standby serves the master's changes as events
  if (!st_.condition.blocked.empty())
    st_.log(LogLevel::kInfo, "laas: " + st_.store.path() + " is readable again");
  st_.condition.blocked.clear();
  // What this SM placed when it was master is stale now: the file is the truth.
  if (st_.term.term_held && st_.sm.role_provider)
    st_.term.fenced = "SM " + st_.persisted.master + " wrote " + st_.store.path() + " (term " +
                      std::to_string(st_.persisted.term) + ")";
  st_.term.term_held = false;
  st_.cluster.reset();
  st_.ids.reset();
  st_.view.reset();
  st_.routing.unplaced.clear();
  st_.routing.topology_error = "this SM is not the master; the master SM routes the tenants";
  return true;
}

// The master's file, from what the master recorded: the tenants it routes and every other
// member it names (service/partition_inputs.h).
std::string SharedState::partitions_text() const {
  return managed_partitions_text(recorded_partition_tenants(st_.persisted),
                                 recorded_members(st_.persisted), exports_.partition_options());
}

void SharedState::follow() {
  const SmRole sm = current_role(st_);
  std::lock_guard<std::mutex> lock(st_.mu);
  if (sm.may_change_tenants() && holds_term(st_)) return;  // the writer has nothing to follow
  const bool changed = reload();
  const auto& path = st_.config.exports.managed_partitions_file;
  if (path.empty() || !st_.condition.blocked.empty() ||
      (!changed && !exports_.last_written().empty()))
    return;
  // No state.json (read at start or since): nothing to follow. An SM started while the share
  // is unmounted keeps the partitions.conf it has, which may hold every tenant's P_Key.
  if (!st_.term.state_stamp.exists) {
    if (!st_.term.missing_logged)
      st_.log(LogLevel::kWarning, "laas: " + st_.store.path() + " does not exist: " + path +
                                      " is kept as it is until the master writes the state");
    st_.term.missing_logged = true;
    return;
  }
  st_.term.missing_logged = false;
  try {
    const std::string text = partitions_text();
    if (text == exports_.last_written()) return;
    exports_.write_managed_partitions(text);
    exports_.note_written(text);
    // No partitions hook: a standby's OpenSM programs no P_Key; it reads the file when it
    // becomes master, at the start of its first sweep, before the routing run.
    st_.log(LogLevel::kInfo, "laas: wrote " + path + " (" +
                                 std::to_string(st_.persisted.tenants.size()) +
                                 " tenant partitions) following the shared state, generation " +
                                 std::to_string(st_.persisted.generation));
  } catch (const std::exception& e) {
    st_.log(LogLevel::kError, "laas: " + path + " not updated from the shared state: " + e.what());
  } catch (...) {  // RequestError from an unreadable base file
    st_.log(LogLevel::kError,
            "laas: " + path + " not updated: the base partitions file is unreadable");
  }
}

}  // namespace laas::service
