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
#include "service/host_identity.h"
#include "service/link_health.h"
#include "service/metrics.h"
#include "service/physical_ids.h"
#include "service/protocol.h"
#include "service/resume_check.h"
#include "service/run_limit.h"
#include "service/sm_role.h"
#include "service/state_io.h"
#include "service/state_store.h"
#include "service/topology_view.h"
#include "topology/servers.h"

namespace laas::service {

struct ExportConfig {
  // partitions: the administrator's own partitions.conf, kept verbatim ahead of the tenants'.
  std::string partitions_base_file;
  // When set, the service keeps this partitions.conf (OpenSM's partition_config_file) current
  // after every change, validated and written atomically, and asks for a heavy sweep.
  std::string managed_partitions_file;
  std::map<std::string, std::string> slurm_node_names;    // fabric name -> Slurm node
  std::map<std::string, std::string> openstack_hosts;     // fabric name -> compute host
  std::map<std::string, std::string> openstack_projects;  // tenant -> project ID
};

struct ServiceConfig {
  std::string state_dir = "/var/lib/laas";
  std::string algorithm = "laas";
  // Taking the state over as master needs an existing state.json (shared storage: an
  // unmounted share must not pass for an empty state).
  bool state_must_exist = false;
  // Server names: node description or its first word -> server; unlisted ports
  // belong to the server named by their description's first word.
  std::map<std::string, std::string> servers;
  // Port GUIDs of the administrator's subnet managers (laas.yaml subnet_managers).
  std::vector<topology::Guid> subnet_managers;
  // Hosts without a tenant reach each other and everyone (adoption on a running cluster).
  bool free_pool_open = false;
  // laas.yaml could not be read as written: nothing is changed or rewritten, routing keeps
  // the tenants last routed, and every change is refused with this.
  std::string config_error;
  int default_wait_ms = 30000;
  ExportConfig exports;
  // A command an administrator requires a drained host to pass before it returns to the free
  // pool: run as `resume_check -- PORT_GUID HOST_NAME`, exit 0 = pass, hardened as
  // service/resume_check.h says. Empty: none.
  std::string resume_check;
  int resume_check_timeout_ms = 120000;
  // Prometheus textfile: kept current after every routing run and change, for
  // node_exporter's textfile collector. Empty: only `laasctl metrics`.
  std::string metrics_file;
  // Port errors (OpenSM's perfmgr) in one reading that count against a link; 0: never
  // isolate. A link over it for link_error_consecutive_readings readings in a row is isolated
  // as a fault.
  std::uint64_t link_error_threshold = 0;
  int link_error_consecutive_readings = 2;
  int link_error_clean_readings = 3;  // clean readings after which it returns
};

// A subnet manager OpenSM knows of (SMInfo), as the fabric names it.
struct SmSeen {
  topology::Guid guid = 0;
  std::string name;
  int lid = 0;
};

struct Caller {
  long uid = -1;
  bool may_write = false;  // change tenants and hosts (root, the socket group)
  bool may_read = true;    // false: in neither socket group, every request is refused
  // A routing run changing tenants (the tenants file): that run routes its own changes, so
  // none asks for another run, and none waits for one.
  bool routes_itself = false;
};

// What a change asked in code rather than over the socket came to.
struct ChangeResult {
  bool ok = false;
  std::string code;     // service/protocol.h's error code when refused
  std::string message;  // why, when refused
};

enum class LogLevel { kInfo, kWarning, kError };
using Logger = std::function<void(LogLevel, const std::string&)>;

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
  std::vector<QuarantinedHost> quarantined;
};

class TenantService {
 public:
  TenantService(ServiceConfig config, Logger log);

  // Hooks the host process provides. reroute: ask the SM to recompute routes soon.
  // audit/exporter: produce a report / a file body from the live fabric (may be empty).
  void set_reroute_hook(std::function<void()> hook);
  void set_audit_hook(std::function<nlohmann::json()> hook);
  void set_export_hook(std::function<nlohmann::json(const nlohmann::json& params)> hook);
  // Called after the managed partitions.conf changed: OpenSM re-reads it on a heavy sweep.
  void set_partitions_hook(std::function<void()> hook);

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

  // Routing side (the SM's sweeper thread).
  void on_topology(std::shared_ptr<const TopologyView> view);
  void on_topology_error(const std::string& reason);
  // Why routing fails closed, empty when it does not: shown by status, the metrics
  // and the audit. Set by the routing engine at every run.
  void set_fail_closed(const std::string& reason);
  std::string fail_closed() const;
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
  // `hosts`: how many ports; `host_list` non-empty: exactly those hosts (names or GUIDs).
  ChangeResult add_tenant(const std::string& name, int hosts,
                          const std::vector<std::string>& host_list, const Caller& caller);
  ChangeResult remove_tenant(const std::string& name, const Caller& caller);

  // Every SM seen at the last routing run and every trusted one, with its state (this, listed,
  // accepted, unaccepted): `laasctl sm list`, and the audit's finding.
  nlohmann::json sm_list() const;

  // The state directory's worker (service/state_io.h): every access to the directory runs there,
  // so a directory that stops answering never stops the caller for longer than a deadline.
  StateIo& io() const { return *io_; }
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
  nlohmann::json dispatch(const std::string& name, const nlohmann::json& params,
                          const Caller& caller);
  nlohmann::json answer(const Method& m, bool change, const nlohmann::json& params,
                        const Caller& caller);
  nlohmann::json tenant_list() const;                             // takes mu_
  nlohmann::json tenant_get(const nlohmann::json& params) const;  // takes mu_
  nlohmann::json run_audit(const Caller& caller);                 // takes mu_ after the hook
  nlohmann::json status() const;
  void refuse_changes_while_closed() const;  // throws RequestError; takes mu_
  // Subnet managers (service/sm_trust.cc). mu_ held where said.
  std::vector<topology::Guid> trusted_sm_ports() const;  // mu_ held
  std::string sm_state(topology::Guid guid) const;       // mu_ held: this|listed|accepted|...
  nlohmann::json sm_change(const nlohmann::json& params, const Caller& caller, bool accept);
  nlohmann::json topology_info(const nlohmann::json& params) const;
  nlohmann::json down_parts() const;                             // mu_ held; parts down now
  nlohmann::json tenant_json(const allocator::Tenant& t) const;  // a routed tenant
  // One tenant list and one tenant show for every state and every SM (service/views.cc).
  static nlohmann::json tenant_line(const std::string& name, std::uint16_t pkey, int requested,
                                    std::size_t hosts, std::size_t links, const std::string& shape,
                                    const std::string& state, const std::string& reason);
  static nlohmann::json tenant_line(const PersistedTenant& t, const std::string& state,
                                    const std::string& reason);
  static nlohmann::json recorded_tenant_json(const PersistedTenant& t, const std::string& state,
                                             const std::string& reason);
  std::string unrouted() const;  // mu_ held
  // "routed" or "degraded", and why (down hosts, faulty links, lost pairs, repairs).
  nlohmann::json health_json(const allocator::Tenant& t) const;
  std::string health_text(const allocator::Tenant& t) const;
  const PersistedTenant* persisted(const std::string& name) const;
  // Rewrites every placed tenant's record from the cluster (repairs, GUIDs seen) and saves.
  void save_placed(const std::string& why);
  void record_placed();  // the same, in memory only
  void reserve_management_uplinks();
  nlohmann::json add(const nlohmann::json& params, const Caller& caller);
  nlohmann::json remove(const nlohmann::json& params, const Caller& caller);
  nlohmann::json wait_routed(std::uint64_t generation, int timeout_ms);
  nlohmann::json finish_change(std::unique_lock<std::mutex>& lock, bool partitions_changed,
                               const std::string& not_durable, const std::string& done,
                               nlohmann::json result, int wait, bool reroute = true);
  int wait_ms(const nlohmann::json& params) const;  // validated 'wait' and 'timeout_ms'
  nlohmann::json export_files(const nlohmann::json& params) const;
  std::string partitions_text() const;
  struct PartitionsBase {
    std::optional<std::string> text;
    std::string name = "partitions.conf";
  };
  PartitionsBase partitions_base() const;
  bool commit(std::string* not_durable);
  bool refresh_managed_partitions();  // true when the file changed
  // Replaces the managed partitions.conf with `text`, after keeping the administrator's own
  // file once as <file>.pre-laas (exports.cc). Throws std::runtime_error, the file untouched.
  void write_managed_partitions(const std::string& text);
  void assign_missing_pkeys();
  void require_topology() const;
  void rebuild_cluster();
  // Servers (service/servers.cc).
  void group_servers();  // mu_ held; servers_ from view_
  // Host states (service/host_states.cc). mu_ held unless said otherwise.
  std::vector<topology::HostId> resolve_hosts(const nlohmann::json& names, const char* field) const;
  const PersistedDrain* drain_of(topology::HostId h) const;
  std::string host_label(topology::HostId h) const;
  std::vector<topology::HostId> drained_hosts() const;  // present in this fabric
  std::string drained_note() const;                     // "; N host(s) are drained: ..." or ""
  nlohmann::json host_states() const;                   // {state: count} over every host
  nlohmann::json host_json(topology::HostId h,
                           const std::map<allocator::TenantIndex, std::string>& tenants) const;
  nlohmann::json host_list(const nlohmann::json& params) const;              // takes mu_
  nlohmann::json host_show(const nlohmann::json& params) const;              // takes mu_
  nlohmann::json drain(const nlohmann::json& params, const Caller& caller);  // takes mu_
  void commit_drains(const std::vector<PersistedDrain>& saved, const char* done);
  std::vector<topology::HostId> hosts_to_change(const nlohmann::json& params, const Caller& caller,
                                                const char* verb) const;
  nlohmann::json resume(const nlohmann::json& params, const Caller& caller);  // takes mu_
  // a quarantined slot by model host (nullptr: none), and
  // `host accept`, which records the port GUID seen in tenants' slots as their host's.
  const QuarantinedHost* quarantine_of(topology::HostId h) const;
  std::vector<topology::HostId> resolve_slots(const nlohmann::json& names) const;
  nlohmann::json accept(const nlohmann::json& params, const Caller& caller);  // takes mu_
  // Maintenance of links and switches (service/fabric_drains.cc): drained like hosts, kept in
  // state.json, treated by the allocator as faults (tenants are repaired off them), routed
  // around once no tenant routes over them. mu_ held unless said otherwise.
  std::vector<topology::LinkId> drained_links() const;  // by record or with their switch
  // Drained links no tenant routes over: the routing avoids them like isolated links.
  std::vector<topology::LinkId> out_of_service_links() const;
  const PersistedFabricDrain* switch_drain_of(int level, int index) const;
  const PersistedFabricDrain* link_drain_of(topology::LinkId l) const;  // its own or its switch's
  const PersistedFabricDrain* leaf_drain_of(topology::HostId h) const;  // the host's leaf drained
  topology::LinkId resolve_link(const std::string& text) const;
  std::pair<int, int> resolve_switch(const std::string& text) const;
  // `routed`: every link a tenant routes over, with the tenant.
  using RoutedLinks = std::map<topology::LinkId, std::string>;
  std::string link_state(topology::LinkId l, const RoutedLinks& routed) const;
  std::string switch_state(int level, int index, const RoutedLinks& routed) const;
  nlohmann::json link_json(topology::LinkId l, const RoutedLinks& routed) const;
  // {"switch": {name, guid, port}, "peer": {...}}: a link by its two physical ends.
  nlohmann::json link_ends_json(topology::LinkId l) const;
  nlohmann::json switch_json(int level, int index, const RoutedLinks& routed) const;
  nlohmann::json maintenance_counts() const;  // status: links and switches drained, draining
  nlohmann::json link_list(const nlohmann::json& params) const;    // takes mu_
  nlohmann::json switch_list(const nlohmann::json& params) const;  // takes mu_
  nlohmann::json fabric_drain(const nlohmann::json& params, const Caller& caller, bool link,
                              bool drain);  // takes mu_
  // After a change of the drains: faults, hosts kept out of placements, repairs made or undone,
  // recorded in persisted_ (not saved).
  void apply_fabric_drains();
  // Port counters (service/port_counters.cc). mu_ held.
  const std::map<PortKey, topology::LinkId>& port_links() const;  // either end of every link
  std::vector<topology::LinkId> isolated_links() const;
  allocator::Faults current_faults() const;  // the fabric's and the isolated links
  nlohmann::json link_health_json(const allocator::Tenant& t) const;
  // Metrics (service/service_metrics.cc).
  std::string metrics_text() const;  // mu_ held
  int largest_tenant() const;        // mu_ held; cluster_ set
  void write_metrics_file();         // mu_ held; logs (once per failure streak) when it cannot
  void note_change(const char* op, double seconds, bool ok);  // mu_ held
  std::vector<topology::HostId> whole_servers(const std::vector<topology::HostId>& hosts) const;
  nlohmann::json servers_json(const allocator::Tenant& t) const;
  // For the schedulers' exports (Slurm, OpenStack): one host a server, named by the server.
  void one_host_per_server(std::vector<exports::TenantRecord>& records) const;
  // For Slurm's topology.conf: each server under one leaf (its first port's, rail 0 on a
  // rail-optimized tree), as Slurm expects one leaf a node; leaves left empty are dropped.
  void one_leaf_per_server(exports::TreeRecord& tree) const;
  PersistedTenant persist(const allocator::Tenant& t) const;
  void save_or_throw();
  void store_save();  // store_.save(persisted_), remembering the stamp of what it wrote
  // read_text on the worker, waiting at most kIoDeadline (NotAnsweringError).
  std::string read_text_io(const std::string& path, bool* exists) const;
  // Changes are refused while the state directory does not answer (RequestError).
  void refuse_changes_while_not_answering() const;
  // Shared state (service/shared_state.cc): whether this service may write it now, and the
  // answers of an SM that is not the master.
  bool holds_term() const;  // mu_ held
  nlohmann::json answer_from_shared_state(const std::string& asked, const nlohmann::json& params,
                                          const SmRole& role);
  bool reload_shared_state();                          // mu_ held; true when another SM changed it
  std::string shared_partitions_text() const;          // mu_ held; from persisted_ (no topology)
  nlohmann::json role_json(const SmRole& role) const;  // mu_ held

  ServiceConfig config_;
  Logger log_;
  StateStore store_;
  std::function<void()> reroute_;
  std::function<nlohmann::json()> audit_;
  // Live audits (each takes OpenSM's lock for its snapshot, then seconds of CPU): one per uid,
  // two in all; more are refused busy.
  RunLimit audits_{2, 1};
  std::function<nlohmann::json(const nlohmann::json&)> export_;
  std::function<void()> partitions_hook_;
  std::string last_partitions_;

  mutable std::mutex mu_;
  std::condition_variable routed_cv_;
  std::shared_ptr<const TopologyView> view_;
  std::string topology_error_ = "no routing run has discovered the fabric yet";
  std::unique_ptr<allocator::Cluster> cluster_;
  std::unique_ptr<PhysicalIds> ids_;             // on view_
  topology::Servers servers_;                    // on view_: host ports grouped by server
  allocator::Faults last_faults_;                // as last logged, to log one line per change
  std::vector<topology::LinkId> last_uncabled_;  // up-links uncabled by design, as last logged
  std::set<std::string> warned_mgmt_leaves_;     // management leaves without a free up-link
  std::string last_faults_spec_;
  PersistedState persisted_;
  std::string blocked_;                          // corrupt or inconsistent state
  std::string fail_closed_;                      // why routing keeps the last good tenants
  std::map<std::string, std::string> unplaced_;  // persisted tenants not on this fabric, and why
  std::vector<QuarantinedHost> quarantine_;      // on view_
  std::uint64_t routed_generation_ = 0;
  std::uint64_t failed_generation_ = 0;  // the last generation whose tables or P_Keys failed
  std::string apply_failure_;            // and what failed
  // Counters for the metrics (mu_).
  long routing_runs_ = 0, lft_blocks_sent_ = 0, takeovers_ = 0;
  std::map<std::string, long> changes_;  // "add ok", "remove refused", ...
  Histogram routing_seconds_{{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}};
  Histogram change_seconds_{{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5}};
  int last_audit_violations_ = -1;  // -1: no audit run yet
  LinkHealth health_;
  mutable std::map<PortKey, topology::LinkId> port_link_;  // see port_links()
  mutable bool ports_indexed_ = false;                     // port_link_ is for view_/ids_
  mutable std::vector<long> largest_key_;                  // what largest_ was computed for
  mutable int largest_ = 0;
  std::shared_ptr<std::atomic<bool>> metrics_file_failing_ = std::make_shared<std::atomic<bool>>();
  bool loaded_ = false;
  bool interrupted_ = false;
  CancelSignal stopping_;  // set by interrupt_waits(): resume checks watch it
  std::function<SmRole()> role_provider_;
  // Whether this service holds the shared state's current term: always without a provider;
  // with one, from take_over_if_needed until another SM's write (seen or fenced) shows
  // otherwise.
  bool term_held_ = true;
  FileStamp state_stamp_;  // state.json as this service last read or wrote it
  std::string fenced_;     // why another SM holds the state now (empty: none took it from us)
  bool sm_ports_dirty_ = false;
  bool held_a_term_ = false;         // this service took the shared state over once
  topology::Guid self_sm_port_ = 0;  // this SM's port, as of the last routing run
  std::vector<SmSeen> seen_sms_;     // the SMs OpenSM saw at the last routing run
  std::size_t unaccepted_sms_ = 0;   // of those, trusted by nobody
  // Why persisted_ holds placements not written yet (empty: none): changed off the routing
  // thread (repairs around an isolated link), or the directory did not answer; written by the
  // next routing run.
  std::string unsaved_;
  bool partitions_unsynced_ = false;  // partitions.conf could not be written: next run retries
  // A hang was logged (one line per hang; the recovery hook clears it).
  std::shared_ptr<std::atomic<bool>> hang_logged_ = std::make_shared<std::atomic<bool>>();
  // state.json's stamp as the worker last saw it, written by the worker (its own mutex: the
  // worker never takes mu_, which a request holds while it waits for the worker).
  struct Polled {
    std::mutex mu;
    FileStamp stamp;
  };
  std::shared_ptr<Polled> polled_ = std::make_shared<Polled>();
  // Last: destroyed first, while everything a queued operation's completion reports to lives.
  std::unique_ptr<StateIo> io_;
};

// How long a caller waits for the state directory's worker (service/state_io.h) before it
// gives up; the routing run waits for nothing but a take-over, a request for its own change.
constexpr std::chrono::milliseconds kIoDeadline{2000};

}  // namespace laas::service
