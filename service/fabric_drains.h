// Maintenance of links and switches: drained and resumed as hosts are, kept in state.json,
// treated by the allocator as faults (tenants are repaired off them) and routed around once no
// tenant routes over them; the socket's `link list/drain/resume` and `switch list/drain/resume`
// (service/fabric_drains.cc).
//
// One of the types the tenant service is made of: it works on the service's shared state
// (service/service_state.h) under its one lock, commits its changes through the service's
// lifecycle (ChangeCommitter; PlacementRecorder and ClusterRebuilder for the repairs), and asks
// HostManager about hosts and LinkMonitor about faults and isolated links. Locking: every method
// is called with ServiceState::mu held unless it says "takes mu" (those lock it themselves).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "service/caller.h"
#include "service/service_lifecycle.h"
#include "service/service_state.h"

namespace laas::service {

class HostManager;
class LinkMonitor;

class FabricDrains {
 public:
  FabricDrains(ServiceState& st, ChangeCommitter& lifecycle, PlacementRecorder& placements,
               ClusterRebuilder& rebuilder, const HostManager& hosts, const LinkMonitor& links)
      : st_(st),
        lifecycle_(lifecycle),
        placements_(placements),
        rebuilder_(rebuilder),
        hosts_(hosts),
        links_(links) {}

  // Drained links no tenant routes over: the routing avoids them like isolated links.
  std::vector<topology::LinkId> out_of_service_links() const;
  const PersistedFabricDrain* link_drain_of(topology::LinkId l) const;  // its own or its switch's
  // {"switch": {name, guid, port}, "peer": {...}}: a link by its two physical ends.
  nlohmann::json link_ends_json(topology::LinkId l) const;
  nlohmann::json maintenance_counts() const;  // status: links and switches drained, draining
  nlohmann::json link_list(const nlohmann::json& params) const;    // takes mu
  nlohmann::json switch_list(const nlohmann::json& params) const;  // takes mu
  nlohmann::json fabric_drain(const nlohmann::json& params, const Caller& caller, bool link,
                              bool drain);  // takes mu

 private:
  topology::LinkId resolve_link(const std::string& text) const;
  std::pair<int, int> resolve_switch(const std::string& text) const;
  // `routed`: every link a tenant routes over, with the tenant.
  using RoutedLinks = std::map<topology::LinkId, std::string>;
  std::string link_state(topology::LinkId l, const RoutedLinks& routed) const;
  std::string switch_state(int level, int index, const RoutedLinks& routed) const;
  nlohmann::json link_json(topology::LinkId l, const RoutedLinks& routed) const;
  nlohmann::json switch_json(int level, int index, const RoutedLinks& routed) const;
  // After a change of the drains: faults, hosts kept out of placements, repairs made or undone,
  // recorded in persisted (not saved).
  void apply_fabric_drains();

  ServiceState& st_;
  ChangeCommitter& lifecycle_;
  PlacementRecorder& placements_;
  ClusterRebuilder& rebuilder_;
  const HostManager& hosts_;
  const LinkMonitor& links_;
};

}  // namespace laas::service
