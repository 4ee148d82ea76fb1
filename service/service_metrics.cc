// The tenant service's metrics: what the cluster's monitoring should see of LaaS --
// tenants, hosts and links by state and owner, the capacity left, routing runs and tenant
// changes, faults and repairs, the last audit, take-overs -- in Prometheus text exposition
// (service/metrics.h), answered by `laasctl metrics` and kept in a node_exporter textfile.
#include "service/service_metrics.h"

#include <algorithm>
#include <set>

#include "allocator/placer.h"
#include "service/etcd_state.h"
#include "service/fabric_drains.h"
#include "service/host_manager.h"
#include "service/port_counters.h"
#include "service/switch_check.h"

namespace laas::service {

namespace {

MetricFamily gauge(const std::string& name, const std::string& help, double value) {
  return {name, help, "gauge", {{{}, value}}};
}

}  // namespace

void ServiceMetrics::record_routing(double seconds, long lft_blocks) {
  std::lock_guard<std::mutex> lock(st_.mu);
  ++counters_.routing_runs;
  counters_.lft_blocks_sent += lft_blocks;
  counters_.routing_seconds.observe(seconds);
}

void ServiceMetrics::note_audit(int violations) { counters_.last_audit_violations = violations; }

void ServiceMetrics::note_change(const char* op, double seconds, bool ok) {
  ++counters_.changes[std::string(op) + (ok ? " ok" : " refused")];
  counters_.change_seconds.observe(seconds);
}

// The largest tenant a request would be placed for now: a binary search over the placer
// (placements of Theorems 1-2 are nearly, not strictly, monotone in size: an estimate). It
// costs a dozen searches, so it is kept until the allocation changes, not redone at every
// routing run that changes nothing.
int ServiceMetrics::largest_tenant() const {
  const auto& state = st_.cluster->state();
  const std::vector<long> key = {static_cast<long>(st_.persisted.generation), state.free_hosts(),
                                 state.faulty_links(), state.down_hosts(),
                                 static_cast<long>(st_.cluster->tenants().size())};
  if (largest_key_ == key) return largest_;
  const bool by_server = st_.servers.multi_port();
  int lo = 0, hi = by_server ? st_.servers.count() : state.free_hosts();
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    bool fits;
    if (by_server) {
      fits = allocator::place_servers(state, st_.servers.ports, mid).placement.has_value();
    } else {
      allocator::Placement p;
      fits = st_.cluster->plan("zz-capacity-probe", mid, &p).ok();
    }
    (fits ? lo : hi) = fits ? mid : mid - 1;
  }
  largest_key_ = key;
  largest_ = lo;
  return lo;
}

// One section of the exposition a screen: each appends its families to `f`.
std::string ServiceMetrics::metrics_text() const {
  std::vector<MetricFamily> f;
  state_families(f);
  tenant_families(f);
  port_counter_families(f);
  if (st_.view && st_.cluster) fabric_families(f);
  activity_families(f);
  if (st_.hooks.adapter_metrics)
    for (auto& family : st_.hooks.adapter_metrics()) f.push_back(std::move(family));
  return exposition(f);
}

// The state and this SM's role in it: generation, term, fail-closed, the directory, laas.yaml.
void ServiceMetrics::state_families(std::vector<MetricFamily>& f) const {
  f.push_back(gauge("laas_state_generation",
                    "Generation of the tenant state (rises at every change)",
                    static_cast<double>(st_.persisted.generation)));
  f.push_back(gauge("laas_state_term",
                    "Term of the shared tenant state (rises at every SM take-over)",
                    static_cast<double>(st_.persisted.term)));
  f.push_back(gauge("laas_holds_state", "1 when this SM holds the tenant state (the master)",
                    st_.term.term_held ? 1 : 0));
  f.push_back(gauge("laas_fail_closed",
                    "1 while the fabric or the tenant state cannot be used and routing keeps the "
                    "last good tenant routes (see laasctl status for why)",
                    st_.routing.fail_closed.empty() ? 0 : 1));
  f.push_back(gauge("laas_state_dir_not_answering_seconds",
                    "Seconds the state directory has not answered (0: it answers); meanwhile "
                    "routing uses the last state it gave and changes are refused",
                    st_.io->not_answering_seconds()));
  f.push_back(gauge("laas_state_store_not_answering_seconds",
                    "Seconds etcd (state_store: etcd) has not answered with a quorum (0: it "
                    "answers, or the state is a directory); meanwhile routing uses the last "
                    "state it gave and changes are refused",
                    st_.store.etcd() ? st_.store.etcd()->unavailable_seconds() : 0.0));
  f.push_back(gauge("laas_state_blocked",
                    "1 while the tenant state cannot be read or taken over (laasctl status says "
                    "why): routing keeps the tenants last routed, a standby its partitions.conf",
                    st_.condition.blocked.empty() ? 0 : 1));
  f.push_back(gauge("laas_config_error",
                    "1 while laas.yaml is invalid: routing keeps the tenants last routed and "
                    "changes are refused (laasctl config check names the line)",
                    st_.config.config_error.empty() ? 0 : 1));
  f.push_back(gauge("laas_unaccepted_subnet_managers",
                    "Subnet managers on the fabric that laas.yaml does not list and nobody "
                    "accepted (laasctl sm list): not management, routed as their port was",
                    static_cast<double>(st_.sm.unaccepted_sms)));
  f.push_back(gauge("laas_master_trusted",
                    "1 while a trusted SM (this one, one laas.yaml lists or one accepted) is the "
                    "fabric's master, 0 while an SM nobody trusts is or none is known",
                    st_.sm.master_trusted ? 1 : 0));
  f.push_back(gauge("laas_weak_keys",
                    "1 while OpenSM runs with its default sm_key or sa_key, no m_key or a "
                    "protection level below 2: a tenant's root can undo its isolation",
                    st_.sm.weak_keys.empty() ? 0 : 1));
  f.push_back(gauge("laas_free_pool_open",
                    "1 while hosts without a tenant reach each other (free_pool: open)",
                    st_.config.free_pool_open ? 1 : 0));
  f.push_back({"laas_tables_file_write_failures_total",
               "Failed writes of tables.bin, the tables last sent that a start failing closed "
               "gives back (laasctl status says the last error)",
               "counter",
               {{{}, static_cast<double>(st_.tables_file->write_failures.load())}}});
  f.push_back({"laas_takeovers_total",
               "Times this SM took the tenant state over as master",
               "counter",
               {{{}, static_cast<double>(st_.term.takeovers)}}});
}

// Tenants by state, each one's hosts, links and health, and the repairs made.
void ServiceMetrics::tenant_families(std::vector<MetricFamily>& f) const {
  MetricFamily tenants{"laas_tenants", "Tenants by state", "gauge", {}};
  int routed = 0, degraded = 0, repairs = 0;
  MetricFamily tenant_hosts{"laas_tenant_hosts", "Host ports a tenant holds", "gauge", {}};
  MetricFamily tenant_links{
      "laas_tenant_links", "Dedicated links a tenant routes over", "gauge", {}};
  MetricFamily tenant_degraded{"laas_tenant_degraded",
                               "1 when a tenant runs on fewer links or hosts than it holds",
                               "gauge",
                               {}};
  if (st_.cluster)
    for (const auto& [name, t] : st_.cluster->tenants()) {
      const bool bad = st_.cluster->health(t).degraded();
      degraded += bad;
      routed += !bad;
      repairs += static_cast<int>(t.repairs.size());
      tenant_hosts.samples.push_back({{{"tenant", name}}, double(t.placement.hosts.size())});
      tenant_links.samples.push_back({{{"tenant", name}}, double(t.placement.links.size())});
      tenant_degraded.samples.push_back({{{"tenant", name}}, bad ? 1.0 : 0.0});
    }
  tenants.samples = {{{{"state", "routed"}}, double(routed)},
                     {{{"state", "degraded"}}, double(degraded)},
                     {{{"state", "not_placed"}}, double(st_.routing.unplaced.size())}};
  f.push_back(std::move(tenants));
  f.push_back(std::move(tenant_hosts));
  f.push_back(std::move(tenant_links));
  f.push_back(std::move(tenant_degraded));
  f.push_back(gauge("laas_repairs", "Columns replaced online around faulty links", repairs));
}

// Port counters of the performance manager, and the links isolated for their errors.
void ServiceMetrics::port_counter_families(std::vector<MetricFamily>& f) const {
  // Port counters of the performance manager (perfmgr TRUE), summed over a tenant's links and
  // host ports since this SM started.
  if (st_.cluster && st_.ids && !links_.health().totals().empty()) {
    MetricFamily errors{"laas_tenant_port_errors_total",
                        "Port errors (symbol, link recovery and downed, receive, integrity, "
                        "overrun) on a tenant's links and host ports",
                        "counter",
                        {}};
    MetricFamily discards{"laas_tenant_port_xmit_discards_total",
                          "Packets discarded on a tenant's links and host ports",
                          "counter",
                          {}};
    MetricFamily wait{"laas_tenant_port_xmit_wait_total",
                      "PortXmitWait ticks (congestion) on a tenant's links and host ports",
                      "counter",
                      {}};
    for (const auto& [name, t] : st_.cluster->tenants()) {
      const auto h = links_.link_health_json(t);
      errors.samples.push_back({{{"tenant", name}}, h["errors"].get<double>()});
      discards.samples.push_back({{{"tenant", name}}, h["xmit_discards"].get<double>()});
      wait.samples.push_back({{{"tenant", name}}, h["xmit_wait"].get<double>()});
    }
    f.push_back(std::move(errors));
    f.push_back(std::move(discards));
    f.push_back(std::move(wait));
    // Counters seen going back (reboots, clears): their readings counted no errors.
    f.push_back({"laas_port_counter_resets_total",
                 "Performance-manager readings of a port whose error counters had been reset",
                 "counter",
                 {{{}, static_cast<double>(links_.health().resets())}}});
  }
  f.push_back(gauge("laas_isolated_links",
                    "Links isolated as faults for their error counters (link_error_threshold)",
                    static_cast<double>(links_.isolated_links().size())));
}

// Hosts, links and switches by state, parts down, and the capacity left (view and cluster set).
void ServiceMetrics::fabric_families(std::vector<MetricFamily>& f) const {
  MetricFamily hosts{"laas_hosts",
                     "Host ports by state (quarantined: the old name of unaccepted, the same "
                     "ports, for one release)",
                     "gauge",
                     {}};
  const nlohmann::json counts = hosts_.host_states();
  for (auto it = counts.begin(); it != counts.end(); ++it)
    hosts.samples.push_back({{{"state", it.key()}}, it.value().get<double>()});
  f.push_back(std::move(hosts));
  link_families(f);
  const auto maintenance = drains_.maintenance_counts();
  MetricFamily switches{"laas_switches_drained",
                        "Switches drained for maintenance: drained (no tenant left on them) "
                        "or draining (a tenant still on them)",
                        "gauge",
                        {}};
  for (const char* s : {"drained", "draining"})
    switches.samples.push_back({{{"state", s}}, maintenance["switches"][s].get<double>()});
  f.push_back(std::move(switches));
  f.push_back({"laas_down",
               "Parts of the intended tree absent from the fabric now",
               "gauge",
               {{{{"part", "host"}}, double(st_.view->down_hosts())},
                {{{"part", "link"}}, double(st_.view->down_links())},
                {{{"part", "switch"}}, double(st_.view->down_switches())}}});
  const bool by_server = st_.servers.multi_port();
  const int lo = largest_tenant();
  f.push_back(gauge("laas_largest_tenant",
                    by_server ? "The largest tenant a request would be placed for now (servers)"
                              : "The largest tenant a request would be placed for now (hosts)",
                    lo));
}

// Switch-to-switch links by level and state.
void ServiceMetrics::link_families(std::vector<MetricFamily>& f) const {
  const auto& tree = st_.view->tree;
  const auto& state = st_.cluster->state();
  MetricFamily links{"laas_links", "Switch-to-switch links by level and state", "gauge", {}};
  // Drained by an administrator (maintenance): drained once no tenant routes over them,
  // draining while one still does.
  std::set<topology::LinkId> routed;
  for (const auto& [name, t] : st_.cluster->tenants())
    routed.insert(t.placement.links.begin(), t.placement.links.end());
  const auto drained_set = drained_links(st_);  // sorted; down ones too
  for (int level = 1; level < tree.height(); ++level) {
    double held = 0, free = 0, faulty = 0, uncabled = 0, drained = 0, draining = 0;
    const auto& by_design = st_.view->embedding.uncabled;
    for (int l = 0; l < tree.total_links(); ++l) {
      if (tree.link_level(l) != level) continue;
      if (std::binary_search(by_design.begin(), by_design.end(), l))
        ++uncabled;
      else if (std::binary_search(drained_set.begin(), drained_set.end(), l))
        ++(routed.count(l) ? draining : drained);
      else if (state.link_faulty(l))
        ++faulty;
      else if (state.link_owner(l) >= 0)
        ++held;
      else
        ++free;
    }
    const std::string lv = std::to_string(level);
    links.samples.push_back({{{"level", lv}, {"state", "allocated"}}, held});
    links.samples.push_back({{{"level", lv}, {"state", "free"}}, free});
    links.samples.push_back({{{"level", lv}, {"state", "faulty"}}, faulty});
    links.samples.push_back({{{"level", lv}, {"state", "uncabled"}}, uncabled});
    links.samples.push_back({{{"level", lv}, {"state", "drained"}}, drained});
    links.samples.push_back({{{"level", lv}, {"state", "draining"}}, draining});
  }
  f.push_back(std::move(links));
}

// Routing runs, tenant and host changes, and the last audit.
void ServiceMetrics::activity_families(std::vector<MetricFamily>& f) const {
  f.push_back({"laas_routing_runs_total",
               "Routing runs of the laas engine",
               "counter",
               {{{}, double(counters_.routing_runs)}}});
  f.push_back({"laas_lft_blocks_sent_total",
               "LFT blocks the routing runs left OpenSM to send to the switches",
               "counter",
               {{{}, double(counters_.lft_blocks_sent)}}});
  f.push_back(counters_.routing_seconds.family("laas_routing_duration_seconds",
                                               "Duration of a routing run of the laas engine"));
  MetricFamily changes{"laas_changes_total",
                       "Tenant and host changes requested, by operation and outcome",
                       "counter",
                       {}};
  for (const auto& [key, n] : counters_.changes) {
    const auto space = key.find(' ');
    changes.samples.push_back(
        {{{"op", key.substr(0, space)}, {"result", key.substr(space + 1)}}, double(n)});
  }
  f.push_back(std::move(changes));
  f.push_back(counters_.change_seconds.family("laas_change_duration_seconds",
                                              "Duration of a tenant or host change request"));
  if (st_.hooks.switch_check && st_.hooks.switch_check->enabled()) {
    const auto& check = *st_.hooks.switch_check;
    f.push_back(
        {"laas_switch_table_mismatches_total",
         "LFT blocks and port tables read back from the switches and hosts that differed from what "
         "this SM sent "
         "(each is sent again; laasctl audit names the switches)",
         "counter",
         {{{}, double(check.mismatches_total())}}});
    f.push_back({"laas_switch_check_reads_total",
                 "LFT blocks and port tables the switch check asked the switches and hosts for",
                 "counter",
                 {{{}, double(check.reads_total())}}});
    f.push_back({"laas_switch_check_unanswered_total",
                 "Switch check reads no switch answered in time (a wrong M_Key, a lost SMP)",
                 "counter",
                 {{{}, double(check.unanswered_total())}}});
    f.push_back({"laas_switch_check_passes_total",
                 "Full passes of the switch check over every switch's LFT and the port tables",
                 "counter",
                 {{{}, double(check.passes_total())}}});
  }
  if (counters_.last_audit_violations >= 0)
    f.push_back(gauge("laas_audit_violations",
                      "Violations found by the last audit of the live tables (laasctl audit)",
                      counters_.last_audit_violations));
}

void ServiceMetrics::write_metrics_file() {
  if (st_.config.metrics_file.empty()) return;
  // Queued on the state directory's worker (never waited for: every change and routing run
  // rewrites it, the latest text replacing one not written yet): renamed into place, not synced.
  auto failing = file_failing_;
  st_.io->post("metrics", [path = st_.config.metrics_file, text = metrics_text(), failing,
                           log = st_.log] {
    try {
      // Not kFileMode: node_exporter reads it as its own user, and it holds nothing the
      // status does not show to every member of the read group.
      replace_file(path, text, 0644);
      failing->store(false);
    } catch (const std::exception& e) {
      if (!failing->exchange(true))
        log(LogLevel::kWarning, std::string("laas: cannot write the metrics file: ") + e.what());
    }
  });
}

}  // namespace laas::service
