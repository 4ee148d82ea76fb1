// What the cluster's monitoring sees of LaaS (service/service_metrics.cc): tenants, hosts and
// links by state, the capacity left, routing runs and changes, the last audit, in Prometheus
// text for `laasctl metrics` and node_exporter's textfile, with the link health LinkMonitor
// sums from the performance manager's port counters (service/port_counters.h).
//
// One of the types the tenant service is made of: it reads the service's shared state
// (service/service_state.h) under its one lock, counts hosts by state as HostManager does,
// links and switches as FabricDrains does and link errors as LinkMonitor does, and keeps its own
// counters; no part it asks asks it. Locking: every method is called with
// ServiceState::mu held unless it says "takes mu" (those lock it themselves).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "service/metrics.h"
#include "service/service_lifecycle.h"
#include "service/service_state.h"

namespace laas::service {

class FabricDrains;
class HostManager;
class LinkMonitor;

class ServiceMetrics {
 public:
  ServiceMetrics(ServiceState& st, const HostManager& hosts, const FabricDrains& drains,
                 const LinkMonitor& links)
      : st_(st), hosts_(hosts), drains_(drains), links_(links) {}

  std::string metrics_text() const;
  void write_metrics_file();  // logs (once per failure streak) when it cannot
  void note_change(const char* op, double seconds, bool ok);
  void record_routing(double seconds, long lft_blocks);  // takes mu
  void note_audit(int violations);                       // a live audit's finding

 private:
  int largest_tenant() const;  // cluster set
  void state_families(std::vector<MetricFamily>& f) const;
  void tenant_families(std::vector<MetricFamily>& f) const;
  void port_counter_families(std::vector<MetricFamily>& f) const;
  void fabric_families(std::vector<MetricFamily>& f) const;  // view and cluster set
  void link_families(std::vector<MetricFamily>& f) const;
  void activity_families(std::vector<MetricFamily>& f) const;

  ServiceState& st_;
  const HostManager& hosts_;
  const FabricDrains& drains_;
  const LinkMonitor& links_;
  // What only the metrics count (mu, as the state they describe).
  struct Counters {
    long routing_runs = 0, lft_blocks_sent = 0;
    std::map<std::string, long> changes;  // "add ok", "remove refused", ...
    Histogram routing_seconds{{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}};
    Histogram change_seconds{{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5}};
    int last_audit_violations = -1;  // -1: no audit run yet
  } counters_;
  // largest_tenant(), kept until the allocation changes (mu).
  mutable std::vector<long> largest_key_;  // what largest_ was computed for
  mutable int largest_ = 0;
  // The metrics file's last write failed (set on the worker: its own atomic).
  std::shared_ptr<std::atomic<bool>> file_failing_ = std::make_shared<std::atomic<bool>>();
};

}  // namespace laas::service
