// The tables this SM last sent, kept in the state directory (routing/saved_tables.h says why:
// after OpenSM starts, its record of what each switch holds is empty, so a first run that
// must fail closed has nothing else to keep). Written on the state directory's worker after
// every routing run whose tables changed -- the run hands its tables over, nothing is copied
// -- and read only when a run fails closed before OpenSM has sent anything since its start.
//
// Fenced like state.json: the engine hands tables over only while this SM is master and holds
// the shared state's term, and the worker publishes the file only while state.json names no
// newer term (checked under state.lock, the file staged beforehand so the lock is held for a
// rename), so a deposed master never replaces the new master's tables. A failed write is
// counted (laas_tables_file_write_failures_total, laasctl status) and removes the file it could
// not replace: an older file would give a start that fails closed tables the switches no
// longer hold. Mode 0640, like every file the plugin writes there.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "routing/saved_tables.h"
#include "routing/sl2vl.h"
#include "service/service_state.h"
#include "service/state_io.h"
#include "service/tenant_service.h"

namespace laas::core {

class LastTables {
 public:
  // `state_dir`: where state.json is (its term fences the write; its lock file is taken);
  // `health`: where failed writes are counted.
  LastTables(service::StateIo& io, std::string path, std::string state_dir, service::Logger log,
             std::shared_ptr<service::TablesFileHealth> health);

  const std::string& path() const { return path_; }
  // Queues the write of one run's tables (per fabric node; `switch_guids` 0 for nodes that are
  // not switches), with whom each LID belonged to, under `term` (the shared state's, held by
  // this SM). Skipped when they equal what the file already holds.
  void save(std::uint64_t term, routing::LidOwners lids, std::vector<topology::Guid> switch_guids,
            std::vector<std::vector<std::uint8_t>> tables,
            std::shared_ptr<const routing::Sl2VlTables> sl2vl);
  // Queues the write of the tables a start failing closed gave back (the file's, as far as they
  // fit the fabric now), under this SM's `term`: they are what this master sent, and a later
  // start must not refuse them as older than its term.
  void save_given_back(std::uint64_t term, std::shared_ptr<const routing::SavedTables> given);
  // The file as last written, read on the worker (at most the I/O deadline). Null, with `why`
  // set, when there is none, it cannot be read or decoded, or the directory does not answer.
  std::shared_ptr<const routing::SavedTables> load(std::string* why) const;

  struct Shared;  // what the queued writes share (last_tables.cc)

 private:
  // Where and how a queued write goes (copied into the job).
  struct Target {
    std::string path, dir;
    std::shared_ptr<Shared> shared;
    std::shared_ptr<service::TablesFileHealth> health;
    service::Logger log;
  };
  using Encoder = std::function<std::string(const routing::SavedStamp&)>;
  Target target() const { return {path_, state_dir_, shared_, health_, log_}; }
  static void write(const Target& t, std::uint64_t term, const Encoder& encode, bool skip_same);

  service::StateIo& io_;
  std::string path_;
  std::string state_dir_;
  service::Logger log_;
  std::shared_ptr<Shared> shared_;
  std::shared_ptr<service::TablesFileHealth> health_;
};

}  // namespace laas::core
