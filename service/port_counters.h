// The performance manager's port counters (service/port_counters.cc): each reading is added to
// its switch port; a tenant's links and host ports sum to its link health; a link whose errors
// persist is isolated as a fault, which the allocator repairs tenants off and the routing
// avoids. With the fabric's own faults and the drained links, what the allocator sees as down.
//
// One of the types the tenant service is made of, below every other: it reads the shared model
// (service/service_state.h) under its one lock and records repairs made around an isolated link
// (PlacementRecorder); it asks no other part. Locking: every method is called with
// ServiceState::mu held unless it says "takes mu".
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "allocator/cluster.h"
#include "service/link_health.h"
#include "service/service_lifecycle.h"
#include "service/service_state.h"

namespace laas::service {

class LinkMonitor {
 public:
  LinkMonitor(ServiceState& st, PlacementRecorder& placements)
      : st_(st),
        placements_(placements),
        health_(st.config.link_error_threshold, st.config.link_error_clean_readings,
                st.config.link_error_consecutive_readings) {}

  // A reading of one switch port (differences since the last one). Takes mu; asks for a
  // routing run, with mu released, when a link is isolated or returns.
  void on_port_counters(topology::Guid switch_guid, int port, const PortCounters& delta);
  const std::map<PortKey, topology::LinkId>& port_links() const;  // either end of every link
  void forget_port_index() { ports_indexed_ = false; }            // a new view: re-indexed
  std::vector<topology::LinkId> isolated_links() const;
  allocator::Faults current_faults() const;  // the fabric's, the isolated and drained links
  nlohmann::json link_health_json(const allocator::Tenant& t) const;
  const LinkHealth& health() const { return health_; }

 private:
  ServiceState& st_;
  PlacementRecorder& placements_;
  LinkHealth health_;  // the readings summed per port (mu)
  // Built on first use after a new view (mu).
  mutable std::map<PortKey, topology::LinkId> port_link_;
  mutable bool ports_indexed_ = false;  // port_link_ is for view/ids
};

}  // namespace laas::service
