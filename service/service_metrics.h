// What the cluster's monitoring sees of LaaS (service/service_metrics.cc): tenants, hosts and
// links by state, the capacity left, routing runs and changes, the last audit, in Prometheus
// text for `laasctl metrics` and node_exporter's textfile; and the performance manager's port
// counters (service/port_counters.cc), summed into each tenant's link health, that isolate a
// link whose errors persist.
//
// One of the types the tenant service is made of: it works on the service's shared state
// (service/service_state.h) under its one lock, counts hosts by state as HostManager does and
// links and switches as FabricDrains does, and records repairs made around an isolated link
// (PlacementRecorder). Locking: every method is called with
// ServiceState::mu held unless it says "takes mu" (those lock it themselves).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "service/metrics.h"
#include "service/service_lifecycle.h"
#include "service/service_state.h"

namespace laas::service {

class FabricDrains;
class HostManager;

class ServiceMetrics {
 public:
  ServiceMetrics(ServiceState& st, PlacementRecorder& placements, const HostManager& hosts,
                 const FabricDrains& drains)
      : st_(st), placements_(placements), hosts_(hosts), drains_(drains) {}

  std::string metrics_text() const;
  void write_metrics_file();  // logs (once per failure streak) when it cannot
  void note_change(const char* op, double seconds, bool ok);
  void record_routing(double seconds, long lft_blocks);  // takes mu
  // A reading of one switch port (differences since the last one). Takes mu; asks for a
  // routing run, with mu released, when a link is isolated or returns.
  void on_port_counters(topology::Guid switch_guid, int port, const PortCounters& delta);
  const std::map<PortKey, topology::LinkId>& port_links() const;  // either end of every link
  std::vector<topology::LinkId> isolated_links() const;
  allocator::Faults current_faults() const;  // the fabric's and the isolated links
  nlohmann::json link_health_json(const allocator::Tenant& t) const;

 private:
  int largest_tenant() const;  // cluster set
  void state_families(std::vector<MetricFamily>& f) const;
  void tenant_families(std::vector<MetricFamily>& f) const;
  void port_counter_families(std::vector<MetricFamily>& f) const;
  void fabric_families(std::vector<MetricFamily>& f) const;  // view and cluster set
  void link_families(std::vector<MetricFamily>& f) const;
  void activity_families(std::vector<MetricFamily>& f) const;

  ServiceState& st_;
  PlacementRecorder& placements_;
  const HostManager& hosts_;
  const FabricDrains& drains_;
};

}  // namespace laas::service
