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

#include <atomic>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "service/link_health.h"
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
      : st_(st),
        placements_(placements),
        hosts_(hosts),
        drains_(drains),
        health_(st.config.link_error_threshold, st.config.link_error_clean_readings,
                st.config.link_error_consecutive_readings) {}

  std::string metrics_text() const;
  void write_metrics_file();  // logs (once per failure streak) when it cannot
  void note_change(const char* op, double seconds, bool ok);
  void record_routing(double seconds, long lft_blocks);  // takes mu
  void note_audit(int violations);                       // a live audit's finding
  // A reading of one switch port (differences since the last one). Takes mu; asks for a
  // routing run, with mu released, when a link is isolated or returns.
  void on_port_counters(topology::Guid switch_guid, int port, const PortCounters& delta);
  const std::map<PortKey, topology::LinkId>& port_links() const;  // either end of every link
  void forget_port_index() { index_.ports_indexed = false; }      // a new view: re-indexed
  const LinkHealth& link_health() const { return health_; }
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
  // What only the metrics count (mu, as the state they describe).
  struct Counters {
    long routing_runs = 0, lft_blocks_sent = 0;
    std::map<std::string, long> changes;  // "add ok", "remove refused", ...
    Histogram routing_seconds{{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}};
    Histogram change_seconds{{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5}};
    int last_audit_violations = -1;  // -1: no audit run yet
  } counters_;
  // The performance manager's readings summed per link (mu).
  LinkHealth health_;
  // Caches rebuilt on first use (mu): ports of every link, and the largest tenant that fits.
  struct Index {
    std::map<PortKey, topology::LinkId> port_link;  // see port_links()
    bool ports_indexed = false;                     // port_link is for view/ids
    std::vector<long> largest_key;                  // what largest was computed for
    int largest = 0;
  };
  mutable Index index_;
  // The metrics file's last write failed (set on the worker: its own atomic).
  std::shared_ptr<std::atomic<bool>> file_failing_ = std::make_shared<std::atomic<bool>>();
};

}  // namespace laas::service
