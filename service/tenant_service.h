// The tenant lifecycle behind the control socket: requests in, durable state, routing snapshots
// out. It knows nothing of sockets or OpenSM: the plugin feeds it the recognized topology at each
// routing run and tells it when tables were uploaded; the socket server feeds it requests.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "allocator/cluster.h"
#include "export/records.h"
#include "service/caller.h"
#include "service/fabric_drains.h"
#include "service/host_identity.h"
#include "service/host_manager.h"
#include "service/link_health.h"
#include "service/metrics.h"
#include "service/physical_ids.h"
#include "service/port_counters.h"
#include "service/protocol.h"
#include "service/resume_check.h"
#include "service/run_limit.h"
#include "service/service_exports.h"
#include "service/service_lifecycle.h"
#include "service/service_metrics.h"
#include "service/service_state.h"
#include "service/shared_state.h"
#include "service/sm_role.h"
#include "service/sm_trust.h"
#include "service/state_io.h"
#include "service/state_store.h"
#include "service/topology_view.h"
#include "service/views.h"
#include "topology/servers.h"

namespace laas::service {

// What a change asked in code rather than over the socket came to.
struct ChangeResult {
  bool ok = false;
  std::string code;     // service/protocol.h's error code when refused
  std::string message;  // why, when refused
};

// What one routing run works from. `blocked` non-empty: do not route tenants (say why).
struct RoutingSnapshot {
  std::shared_ptr<const TopologyView> topology;
  std::vector<std::pair<std::string, allocator::Placement>> tenants;
  std::uint64_t generation = 0;
  std::string blocked;
  std::string config_error;  // laas.yaml is invalid: route the tenants last routed, closed
  std::vector<topology::LinkId> isolated_links;  // over the error threshold: route around them
  // Tenants' slots holding another port GUID than recorded: held by their tenant
  // (in its placement), but routed like absent hosts -- no switch has an entry for them.
  std::vector<UnacceptedHost> unaccepted;
};

class TenantService final : private ChangeCommitter,
                            private PlacementRecorder,
                            private ClusterRebuilder {
 public:
  TenantService(ServiceConfig config, Logger log);

  // Hooks the host process provides. reroute: ask the SM to recompute routes soon.
  // audit/exporter: produce a report / a file body from the live fabric (may be empty).
  void set_reroute_hook(std::function<void()> hook);
  void set_audit_hook(std::function<nlohmann::json()> hook);
  // The adapter's section of status ("adapter") and its metric families; each called with the
  // service's lock held, so neither may call back into the service. Either may be empty.
  void set_adapter_report(std::function<nlohmann::json()> status,
                          std::function<std::vector<MetricFamily>()> metrics);
  // Called after the managed partitions.conf changed: OpenSM re-reads it on a heavy sweep.
  void set_partitions_hook(std::function<void()> hook);
  // The switch check's findings (service/switch_check.h), for status and the metrics.
  void set_switch_check(std::shared_ptr<SwitchCheck> check);

  // The SM's role (service/shared_state.cc). Without a provider the service is a
  // master that owns its state directory (tests, offline tools). With one, it changes tenants
  // only while the provider says MASTER and it holds the current term of the shared state
  // (take_over_if_needed); otherwise it answers reads from the shared state and refuses
  // changes, naming the master. The provider is called with no lock held by the service and
  // must not block on the SM's lock (it is called from the sweeper thread too).
  void set_role_provider(std::function<SmRole()> provider);
  SmRole role() const;
  // Routing side, at the start of every routing run: when this service never took the shared
  // state over, or another SM wrote it since, take it over (a new term; every tenant re-read,
  // placements read, never re-computed). Returns the line to log when it took over.
  // `state_expected`: tenants were routed from this state directory (allocations.json says
  // so), so a missing state.json is a lost file, not an empty state.
  std::optional<std::string> take_over_if_needed(const SmIdentity& self,
                                                 bool state_expected = false);
  // Not the master: re-reads the shared state when another SM changed it and keeps the
  // managed partitions.conf following it, so that OpenSM's first sweep as master (which reads
  // partitions.conf before routing) already holds every tenant's P_Key. Called periodically.
  void follow_shared_state();
  // Port GUIDs of the trusted SMs (service/sm_trust.cc): this one, laas.yaml's
  // subnet_managers, and those state.json records (accepted, or that took the state over).
  // Management on every SM, so nothing moves at failover.
  std::vector<topology::Guid> sm_ports() const;
  // Routing side: the SMs OpenSM sees now (SMInfo) and this one's port; returns those nobody
  // trusts (the caller names them in its log at every run). Nothing is persisted.
  std::vector<SmSeen> note_subnet_managers(topology::Guid self, std::vector<SmSeen> seen);
  // Who is master and every SM OpenSM knows, at every look of the plugin's (service/sm_trust.h).
  void note_fabric_sms(const SmRole& role, std::vector<SmSeen> seen);
  // What OpenSM's keys leave open ("" when all are set): status, replies, metrics.
  void set_weak_keys(const std::string& what);
  // Whether the SM programs the first-hop drop (OpenSM's qos TRUE): from then on placements
  // never leave a leaf shared by two or more owners without a free up-link, whose owners'
  // management traffic the drop would otherwise cut (allocator/management_way.h).
  void set_first_hop_drop(bool on);

  // Routing side (the SM's sweeper thread).
  void on_topology(std::shared_ptr<const TopologyView> view);
  void on_topology_error(const std::string& reason);
  // Why routing fails closed, empty when it does not: shown by status, the metrics
  // and the audit. Set by the routing engine at every run.
  void set_fail_closed(const std::string& reason);
  std::string fail_closed() const;
  // Why tenants.yaml was last ignored (missing, unreadable, cut off) and the tenants it listed
  // kept; empty once it is read. Shown by status as "tenants_file".
  void set_tenants_file_note(const std::string& note);
  // While the state is blocked the routing run finds the unaccepted slots of the tenants last
  // routed (the service cannot, without state.json): shown by status and the metrics as its own.
  // Ignored when the state is readable.
  void set_unaccepted_while_blocked(std::vector<UnacceptedHost> unaccepted);
  RoutingSnapshot snapshot() const;
  // The tables of `generation` reached the switches; `failure` non-empty: they or the P_Keys
  // did not (what failed), and requests waiting for that generation are told so.
  void on_routing_done(std::uint64_t generation, const std::string& failure = "");
  // A routing run's duration and the LFT blocks it left to send (for the metrics).
  void record_routing(double seconds, long lft_blocks);
  // A reading of OpenSM's performance manager for one switch port (differences since the
  // last one; service/port_counters.cc).
  void on_port_counters(topology::Guid switch_guid, int port, const PortCounters& delta);

  // Request side: one NDJSON request object in, one response object out. Never throws.
  nlohmann::json handle(const nlohmann::json& request, const Caller& caller);
  // The same changes asked in code (the tenants file): checked, permitted, saved and counted
  // exactly as `tenant add` and `tenant remove` over the socket, without waiting for routing.
  // `servers`: how many whole servers (one host each where servers have one port); `host_list`
  // non-empty: exactly those hosts (names or GUIDs).
  ChangeResult add_tenant(const std::string& name, int servers,
                          const std::vector<std::string>& host_list, const Caller& caller);
  ChangeResult remove_tenant(const std::string& name, const Caller& caller);

  // Every SM seen at the last routing run and every trusted one, with its state (this, listed,
  // accepted, unaccepted): `laasctl sm list`, and the audit's finding.
  nlohmann::json sm_list() const;

  // The state directory's worker (service/state_io.h): every access to the directory runs there,
  // so a directory that stops answering never stops the caller for longer than a deadline.
  StateIo& io() const { return *st_.io; }
  // Where the shared state lives (the state directory or etcd): the routing side reads and
  // writes the state's other parts through it (StateStore::read_parts, write_part), on io().
  const StateStore& store() const { return st_.store; }
  // The shared state's term as this service knows it, and whether it holds it (tables.bin is
  // written under it and checked against it: core/last_tables.h).
  std::uint64_t state_term(bool* held) const;
  std::shared_ptr<TablesFileHealth> tables_file_health() const { return st_.tables_file; }
  // Asks the worker to look at state.json (cheap, queued once): how the routing side learns
  // that another SM wrote it, and how a hung directory is noticed with no request under way.
  void probe_state_dir();
  // state.json's stamp as the worker last saw it (probe, load, save, take-over).
  FileStamp polled_stamp() const;

  // For tests and tools: the placed tenants as seen now.
  std::vector<std::string> tenant_names() const;
  // The tenant state exists but cannot be used (corrupt, inconsistent): tenants may exist.
  bool state_blocked() const;

  // Shutting down: requests waiting for a routing run return now (routed: false), and later
  // ones do not wait; a resume check running is killed (its hosts stay drained), and none
  // starts any more.
  void interrupt_waits();

 private:
  // The socket's methods (service/methods.cc), one row each: the handler; `writes`: a change
  // (master only, refused while routing fails closed or the state directory hangs, counted in
  // the metrics; a dry run is none); what an SM that is not the master does with it.
  enum class OnStandby { kRefuse, kSharedState, kAnswer };
  struct Method {
    const char* name;
    nlohmann::json (*handler)(TenantService&, const nlohmann::json& params, const Caller&);
    bool writes;
    OnStandby standby;
  };
  static const std::vector<Method>& methods();
  nlohmann::json reroute_now(const Caller& caller);
  nlohmann::json dispatch(const std::string& name, const nlohmann::json& params,
                          const Caller& caller);
  nlohmann::json answer(const Method& m, bool change, const nlohmann::json& params,
                        const Caller& caller);
  nlohmann::json run_audit(const nlohmann::json& params,
                           const Caller& caller);              // takes mu after the hook
  nlohmann::json read_back_now(const nlohmann::json& params);  // without mu
  void refuse_changes_while_closed() const;                    // throws RequestError; takes mu
  // Subnet managers: service/sm_trust.h.
  // Rewrites every placed tenant's record from the cluster (repairs, GUIDs seen) and saves.
  // PlacementRecorder (service/service_lifecycle.h).
  void save_placed(const std::string& why) override;
  void record_placed() override;  // the same, in memory only
  // ClusterRebuilder (service/service_lifecycle.h).
  void reserve_management_uplinks() override;
  nlohmann::json add(const nlohmann::json& params, const Caller& caller);
  // `tenant add` in steps: the request checked, a plan (by a host list or a count), committed.
  struct AddRequest;
  struct AddPlan {
    allocator::Outcome outcome;
    allocator::Placement placement;
    int hosts = 0;  // host ports for the Cluster (servers' every port on multi-port servers)
  };
  AddRequest parse_add(const nlohmann::json& params) const;
  AddPlan plan_on_host_list(const AddRequest& r);  // mu held
  AddPlan plan_by_count(const AddRequest& r);      // mu held
  nlohmann::json commit_add(std::unique_lock<std::mutex>& lock, const AddRequest& r,
                            const AddPlan& plan, const Caller& caller);  // mu held (lock)
  nlohmann::json remove(const nlohmann::json& params, const Caller& caller);
  nlohmann::json wait_routed(std::uint64_t generation, int timeout_ms);
  nlohmann::json change_warnings() const;  // takes mu
  // ChangeCommitter (service/service_lifecycle.h), for the types below and the lifecycle.
  nlohmann::json finish_change(std::unique_lock<std::mutex>& lock, bool partitions_changed,
                               const std::string& not_durable, const std::string& done,
                               nlohmann::json result, int wait, bool reroute = true) override;
  bool commit(std::string* not_durable) override;
  // ClusterRebuilder (service/service_lifecycle.h), with reserve_management_uplinks.
  void rebuild_cluster() override;
  // rebuild_cluster's steps (mu held).
  void log_fabric_faults();
  void find_unaccepted_slots();
  void restore_tenants();
  void save_as_found();
  void log_placed();
  // Servers (service/servers.cc).
  void group_servers();  // mu held; servers_ from view_
  // Host states: service/host_manager.h.
  // Maintenance of links and switches: service/fabric_drains.h. Read views: service/views.h.
  // Metrics and port counters: service/service_metrics.h. The managed partitions.conf and
  // the export formats: service/service_exports.h.
  PersistedTenant persist(const allocator::Tenant& t) const;
  void save_or_throw();
  void store_save();  // store_.save(persisted_), remembering the stamp of what it wrote
  // Changes are refused while the state directory does not answer (RequestError).
  void refuse_changes_while_not_answering() const;
  // The shared state and the SM's role: service/shared_state.h.

  ServiceState st_;
  // The lifecycle's own bookkeeping (mu): faults as last logged, to log one line per change.
  struct Warnings {
    allocator::Faults last_faults;
    std::vector<topology::LinkId> last_uncabled;  // up-links uncabled by design, as last logged
    std::set<std::string> warned_mgmt_leaves;     // management leaves without a free up-link
    std::string last_faults_spec;                 // the tree last_faults were logged on
  } warnings_;
  std::condition_variable routed_cv_;  // with mu: a routing run is done, or waits interrupted
  bool interrupted_ = false;           // mu: shutting down, nothing waits for routing any more
  // Live audits (each takes OpenSM's lock for its snapshot, then seconds of CPU): one per uid,
  // two in all; more are refused busy. Its own lock.
  RunLimit audits_{2, 1};
  // The types the service is made of, each given the state and exactly the other types and
  // lifecycle interfaces (service/service_lifecycle.h) it calls; a reference to one declared
  // later is only kept, never used, before the service is constructed.
  LinkMonitor links_{st_, *this};
  HostManager hosts_{st_, *this, links_};
  FabricDrains drains_{st_, *this, *this, *this, hosts_, links_};
  ServiceMetrics metrics_{st_, hosts_, drains_, links_};
  ServiceViews views_{st_, hosts_, drains_, links_};
  ServiceExports exports_{st_, *this, views_};
  SmTrust sm_trust_{st_, *this, metrics_};
  SharedState shared_{st_, exports_};
};

}  // namespace laas::service
