// The tables this SM last sent, kept in the state directory (routing/saved_tables.h says why:
// after OpenSM starts, its record of what each switch holds is empty, so a first run that
// must fail closed has nothing else to keep). Written on the state directory's worker after
// every routing run whose tables changed -- the run hands its tables over, nothing is copied
// -- and read only when a run fails closed before OpenSM has sent anything since its start.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "routing/saved_tables.h"
#include "routing/sl2vl.h"
#include "service/state_io.h"
#include "service/tenant_service.h"

namespace laas::plugin {

class LastTables {
 public:
  LastTables(service::StateIo& io, std::string path, service::Logger log);

  const std::string& path() const { return path_; }
  // Queues the write of one run's tables (per fabric node; `switch_guids` 0 for nodes that are
  // not switches). Skipped when they equal what the file already holds.
  void save(std::vector<topology::Guid> switch_guids, std::vector<std::vector<std::uint8_t>> tables,
            std::shared_ptr<const routing::Sl2VlTables> sl2vl);
  // The file as last written, read on the worker (at most the I/O deadline). Null, with `why`
  // set, when there is none, it cannot be read or decoded, or the directory does not answer.
  std::shared_ptr<const routing::SavedTables> load(std::string* why) const;

  struct Shared;  // what the queued writes share (last_tables.cc)

 private:
  service::StateIo& io_;
  std::string path_;
  service::Logger log_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace laas::plugin
