// Host states, as a scheduler's node states: free, allocated, drained, draining, down,
// management and unaccepted (another port GUID than the tenant's in its slot); the socket's
// `host list/show/drain/resume/accept` (service/host_manager.cc).
//
// One of the types the tenant service is made of: it works on the service's shared state
// (service/service_state.h) under its one lock, commits its changes through the service's
// lifecycle (ChangeCommitter), reads whether a host's leaf is drained from the shared model
// (leaf_drain_of) and asks LinkMonitor what is faulty. Locking: every method is called with
// ServiceState::mu held unless it says "takes mu" (those lock it themselves; resume runs the
// administrator's check with mu released).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "service/caller.h"
#include "service/service_lifecycle.h"
#include "service/service_state.h"

namespace laas::service {

class LinkMonitor;

// An unaccepted host's `state` in host list and show still reads its name of the release before:
// the field holds one value, and the scripts of that release match it (docs/glossary.md, "Names
// kept for one release"). `--state` and the counts take both names.
inline constexpr const char* kUnacceptedStateJson = "quarantined";

class HostManager {
 public:
  HostManager(ServiceState& st, ChangeCommitter& lifecycle, const LinkMonitor& links)
      : st_(st), lifecycle_(lifecycle), links_(links) {}

  std::vector<topology::HostId> resolve_hosts(const nlohmann::json& names, const char* field) const;
  const PersistedDrain* drain_of(topology::HostId h) const;
  std::string host_label(topology::HostId h) const;
  std::vector<topology::HostId> drained_hosts() const;  // present in this fabric
  std::string drained_note() const;                     // "; N host(s) are drained: ..." or ""
  nlohmann::json host_states() const;                   // {state: count} over every host
  nlohmann::json host_json(topology::HostId h,
                           const std::map<allocator::TenantIndex, std::string>& tenants) const;
  nlohmann::json host_list(const nlohmann::json& params) const;               // takes mu
  nlohmann::json host_show(const nlohmann::json& params) const;               // takes mu
  nlohmann::json drain(const nlohmann::json& params, const Caller& caller);   // takes mu
  nlohmann::json resume(const nlohmann::json& params, const Caller& caller);  // takes mu
  // An unaccepted slot by model host (nullptr: none), and `host accept`, which records the
  // port GUID seen in tenants' slots as their host's.
  const UnacceptedHost* unaccepted_of(topology::HostId h) const;
  nlohmann::json accept(const nlohmann::json& params, const Caller& caller);  // takes mu

 private:
  void commit_drains(const std::vector<PersistedDrain>& saved, const char* done);
  std::vector<topology::HostId> hosts_to_change(const nlohmann::json& params, const Caller& caller,
                                                const char* verb) const;
  std::vector<topology::HostId> resolve_slots(const nlohmann::json& names) const;

  ServiceState& st_;
  ChangeCommitter& lifecycle_;
  const LinkMonitor& links_;
};

}  // namespace laas::service
