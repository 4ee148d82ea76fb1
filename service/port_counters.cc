// The tenant service and the performance manager's port counters: each reading is added
// to its switch port; a tenant's links and host ports sum to its link health (tenant show, the
// metrics); a link whose errors reach `link_error_threshold` in
// `link_error_consecutive_readings` readings in a row is isolated as a fault -- its tenant is
// repaired onto a free column as for a cable down, routes avoid it -- until it stays
// clean for `link_error_clean_readings` readings. A counter reset counts no errors
// (service/link_health.h).
#include "service/port_counters.h"

#include <algorithm>

namespace laas::service {

using nlohmann::json;

// Built on first use after a new view, not at every routing run: only perfmgr readings and
// isolated links need it.
const std::map<PortKey, topology::LinkId>& LinkMonitor::port_links() const {
  if (ports_indexed_) return port_link_;
  port_link_.clear();
  if (!st_.view || !st_.ids) return port_link_;
  for (topology::LinkId l = 0; l < st_.view->tree.total_links(); ++l) {
    const auto lower = st_.ids->link(l);
    port_link_[{lower.switch_guid, lower.port}] = l;
    const auto [upper, port] = st_.ids->link_upper(l);
    port_link_[{st_.ids->switch_guid(upper.first, upper.second), port}] = l;
  }
  ports_indexed_ = true;
  return port_link_;
}

std::vector<topology::LinkId> LinkMonitor::isolated_links() const {
  std::vector<topology::LinkId> out;
  const auto ports = health_.isolated_ports();
  if (ports.empty()) return out;
  const auto& links = port_links();
  for (const auto& port : ports)
    if (auto it = links.find(port); it != links.end()) out.push_back(it->second);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

allocator::Faults LinkMonitor::current_faults() const {
  const auto& emb = st_.view->embedding;
  allocator::Faults faults{emb.missing_links, emb.missing_hosts, emb.missing_switches};
  for (auto l : isolated_links()) faults.links.push_back(l);
  for (const auto& q : st_.unaccepted) faults.hosts.push_back(q.host);
  faults.drained = drained_links(st_);  // maintenance (fabric_drains.cc)
  return faults;
}

// Called on perfmgr's thread, possibly for every port of the fabric at each sweep: nothing here
// waits for the disk. Repairs around a link isolated or returned are recorded in memory and
// written by the routing run the isolation asks for (on_topology).
void LinkMonitor::on_port_counters(topology::Guid switch_guid, int port,
                                   const PortCounters& delta) {
  {
    std::lock_guard<std::mutex> lock(st_.mu);
    const PortKey key{switch_guid, port};
    const auto reading = health_.add(key, delta);
    if (!st_.view || !st_.cluster || (!reading.changed && !reading.reset)) return;
    const auto& links = port_links();
    const auto link = links.find(key);
    const std::string where = link != links.end()
                                  ? "link " + st_.ids->link_name(link->second)
                                  : "port " + guid_hex(switch_guid) + "/" + std::to_string(port);
    // Whoever may clear the counters may do it at every sweep: the 1st, 2nd, 4th, 8th... reset
    // of a port is logged, the metrics count them all.
    if (const auto n = health_.resets(key); reading.reset && (n & (n - 1)) == 0)
      st_.log(LogLevel::kInfo, "laas: the error counters of " + where +
                                   " went back (reset by a reboot or a counter clear): they count "
                                   "no errors in this reading (" +
                                   std::to_string(n) + " such reading(s) of this port)");
    if (!reading.changed) return;
    if (health_.isolated(key))
      st_.log(LogLevel::kWarning,
              "laas: fault: " + where + " had " + std::to_string(reading.errors) +
                  " errors in each of " + std::to_string(health_.consecutive()) +
                  " performance-manager reading(s) in a row (threshold " +
                  std::to_string(health_.threshold()) + "): isolated as a fault");
    else
      st_.log(LogLevel::kInfo, "laas: fault cleared: " + where + " clean for " +
                                   std::to_string(st_.config.link_error_clean_readings) +
                                   " readings: back in service");
    if (link == links.end()) return;  // a host's port: nothing to route around
    st_.cluster->set_faults(current_faults());
    const auto lines = st_.cluster->reconcile();
    for (const auto& line : lines) st_.log(LogLevel::kInfo, "laas: " + line);
    if (!lines.empty()) {
      placements_.record_placed();
      st_.condition.unsaved = "the repairs around an isolated link";
    }
  }
  if (st_.hooks.reroute) st_.hooks.reroute();
}

json LinkMonitor::link_health_json(const allocator::Tenant& t) const {
  std::vector<PortKey> ports;
  auto link_ports = [&](topology::LinkId l) {
    const auto lower = st_.ids->link(l);
    ports.push_back({lower.switch_guid, lower.port});
    const auto [upper, port] = st_.ids->link_upper(l);
    ports.push_back({st_.ids->switch_guid(upper.first, upper.second), port});
  };
  for (auto l : t.placement.links) link_ports(l);
  for (auto l : t.placement.idle) link_ports(l);
  for (auto h : t.placement.hosts) {
    const auto id = st_.ids->host(h);
    ports.push_back({id.leaf_guid, id.port});
  }
  PortCounters sum;
  std::uint64_t resets = 0;
  json bad = json::array();
  for (const auto& key : ports) {
    const auto it = health_.totals().find(key);
    const bool isolated = health_.isolated(key);
    if (it == health_.totals().end() && !isolated) continue;
    const PortCounters c = it == health_.totals().end() ? PortCounters{} : it->second;
    sum.add(c);
    resets = saturating_add(resets, health_.resets(key));
    if (c.errors() == 0 && c.xmit_discards == 0 && !isolated) continue;
    const auto link = port_links().find(key);
    bad.push_back({{"port", link != port_links().end()
                                ? st_.ids->link_name(link->second)
                                : guid_hex(key.first) + "/" + std::to_string(key.second)},
                   {"errors", c.errors()},
                   {"symbol_errors", c.symbol_errors},
                   {"link_downed", c.link_downed},
                   {"rcv_errors", c.rcv_errors},
                   {"xmit_discards", c.xmit_discards},
                   {"xmit_wait", c.xmit_wait},
                   {"isolated", isolated}});
  }
  return {{"errors", sum.errors()},         {"symbol_errors", sum.symbol_errors},
          {"link_downed", sum.link_downed}, {"xmit_discards", sum.xmit_discards},
          {"xmit_wait", sum.xmit_wait},     {"counter_resets", resets},
          {"ports_with_errors", bad}};
}

}  // namespace laas::service
