// What a routing run sent, kept for a start that must fail closed (core/last_tables.h is the
// file): kept only while this SM is master and holds the shared state's term, so a deposed
// master's write is fenced off, and given back only when no master held a newer term since
// it was written.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/adapter.h"
#include "core/config.h"
#include "core/last_tables.h"
#include "routing/saved_tables.h"
#include "routing/sl2vl.h"
#include "service/tenant_service.h"

namespace laas::core {

class SentTables {
 public:
  // `config` and `service` outlive this object (the Controller holds all three).
  SentTables(const Config& config, service::TenantService& service, service::Logger log);

  const std::string& path() const { return file_.path(); }
  // One run's tables (per fabric node, handed over), with whom each LID belonged to. Not with
  // an invalid laas.yaml (which rewrites nothing), nor unless this SM may (logged once).
  void keep(routing::LidOwners lids, std::vector<Guid> switch_guids,
            std::vector<std::vector<std::uint8_t>> tables,
            std::shared_ptr<const routing::Sl2VlTables> sl2vl);
  // The tables a start failing closed gave back, kept again under this SM's term.
  void keep_given_back(std::shared_ptr<const routing::SavedTables> given);
  // The tables kept (null, with `why`, when none can be read, or they were written in a term
  // older than the last master's).
  std::shared_ptr<const routing::SavedTables> load(std::string* why) const;
  // For a run failing closed before the SM sent anything since its start: `out` gets the
  // tables kept (read once per run) and a line saying so, or a warning. True when it has them.
  bool give_back(RouteOutcome& out) const;

 private:
  // Master holding the term (its `term`): tables.bin may be written; else logged once.
  bool may_keep(std::uint64_t* term);

  const Config& config_;
  service::TenantService& service_;
  service::Logger log_;
  LastTables file_;
  std::string not_kept_;  // why the last run's tables were not kept (logged once)
};

}  // namespace laas::core
