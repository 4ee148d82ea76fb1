// The tenant service's shared model: what the types that make it up (the lifecycle in
// TenantService, link monitor, host states, fabric drains, metrics, views, exports, SM trust and
// the shared state) all read, as OpenSM's managers share the subnet: one struct, one lock, and
// the reads of it they share. What only one type counts or remembers is that type's own.
//
// Locking: `mu` guards every field of ServiceState and of its groups except those set once
// before the service is used (config, log, store, the hooks, io) and those that say they have
// their own lock (events, the polled stamp, the hang flag, tables.bin's health, stopping): the
// state directory's worker never takes mu, which a request holds while it waits for the worker.
// The bookkeeping the types keep themselves (ServiceMetrics, ServiceExports, TenantService) is
// guarded by the same mu. A method documented "mu held" must be called with mu locked; "takes
// mu" locks it itself.
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
#include "service/etcd_state.h"
#include "service/events.h"
#include "service/host_identity.h"
#include "service/link_health.h"
#include "service/metrics.h"
#include "service/physical_ids.h"
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
  // `state_store: etcd`: the shared state in etcd (service/etcd_state.h), not state_dir.
  std::optional<EtcdSettings> etcd;
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
  // laas.yaml could not be read as a whole (or its state_dir is wrong): `state_dir` is only
  // the built-in default. Nothing is read from it or written to it; the state is blocked.
  bool state_dir_unknown = false;
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
  // No two owners share a leaf (allocator::whole_leaves): for an SM that sets no SL2VL
  // first-hop drop, where tenants on one leaf would be separated by P_Keys only.
  bool whole_leaves = false;
};

// A subnet manager OpenSM knows of (SMInfo), as the fabric names it.
struct SmSeen {
  topology::Guid guid = 0;
  std::string name;
  int lid = 0;
  SmState role = SmState::kUnknown;  // its SMInfo state as OpenSM last heard it
  int priority = -1;                 // its SMInfo priority (-1: not known)
};

enum class LogLevel { kInfo, kWarning, kError };
using Logger = std::function<void(LogLevel, const std::string&)>;

// tables.bin's writes (core/last_tables.cc, on the state directory's worker): the
// metrics and status count the failures, so a file that stopped following the switches is
// seen before a start has to use it.
struct TablesFileHealth {
  std::atomic<long> write_failures{0};
  mutable std::mutex mu;
  std::string last_error;  // empty: the last write succeeded (or none was tried)
};

class SwitchCheck;  // service/switch_check.h

// state.json's stamp as the state directory's worker last saw it, written by the worker (its
// own mutex: the worker never takes ServiceState::mu, which a request holds while it waits for
// the worker).
class PolledStamp {
 public:
  FileStamp get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stamp_;
  }
  void set(const FileStamp& stamp) {
    std::lock_guard<std::mutex> lock(mu_);
    stamp_ = stamp;
  }

 private:
  mutable std::mutex mu_;
  FileStamp stamp_;
};

// What the host process plugs in (TenantService's setters). Set once before the service is
// used, so read without mu; adapter_status and adapter_metrics are set under mu and called with
// it held: they must not call the service.
struct ServiceHooks {
  std::function<void()> reroute;  // ask the SM to recompute routes soon
  std::function<nlohmann::json()> audit;
  std::function<void()> partitions_hook;  // OpenSM re-reads partitions.conf
  // The adapter's own section of status ("adapter") and its metric families (laas-sdn: what
  // it wrote, reloaded and read back).
  std::function<nlohmann::json()> adapter_status;
  std::function<std::vector<MetricFamily>()> adapter_metrics;
  // The plugin's; null: none. Not const: audit --from-switches starts a pass.
  std::shared_ptr<SwitchCheck> switch_check;
};

// Whether the persisted state can be used and written (mu).
struct StateCondition {
  bool loaded = false;  // read once (at start or by a take-over)
  std::string blocked;  // corrupt or inconsistent state
  // Why persisted holds placements not written yet (empty: none): changed off the routing
  // thread (repairs around an isolated link), or the directory did not answer; written by the
  // next routing run.
  std::string unsaved;
  // A hang of the state directory was logged (one line per hang; the recovery hooks clear it).
  // Shared with the worker's hooks, so its own atomic, not mu.
  std::shared_ptr<std::atomic<bool>> hang_logged = std::make_shared<std::atomic<bool>>();
};

// What the routing runs found and how far they got (mu).
struct RoutingProgress {
  std::string topology_error = "no routing run has discovered the fabric yet";
  std::string fail_closed;                      // why routing keeps the last good tenants
  std::string tenants_file_note;                // why tenants.yaml was ignored (status)
  std::map<std::string, std::string> unplaced;  // persisted tenants not on this fabric, and why
  std::uint64_t routed_generation = 0;
  std::uint64_t failed_generation = 0;  // the last generation whose tables or P_Keys failed
  std::string apply_failure;            // and what failed
};

// The subnet managers as OpenSM shows them (service/sm_trust.cc, service/shared_state.cc; mu).
struct SmFacts {
  // The SM's role (SharedState::set_role_provider); called with no lock held.
  std::function<SmRole()> role_provider;
  topology::Guid self_sm_port = 0;  // this SM's port, as of the last routing run
  std::vector<SmSeen> seen_sms;     // the SMs OpenSM saw at the last routing run
  std::size_t unaccepted_sms = 0;   // of those, trusted by nobody
  // The master as OpenSM knows it (none: no master known) and whether it is trusted, as of the
  // plugin's last look (every second and at every SM state change, not only in routing runs:
  // OpenSM hands the fabric to an SM that outranks ours before it routes). Without an SM in
  // the process the service is its own master, trusted.
  std::optional<SmIdentity> fabric_master;
  bool master_trusted = true;
  // What OpenSM's keys leave open ("" when m_key, protection level 2, sm_key and sa_key are
  // set): said in status, every change's reply and the metrics. Set once at start.
  std::string weak_keys;
  // The switches drop packets between owners (OpenSM's qos TRUE): placements then keep the
  // management-way rule (allocator/management_way.h). Set by the SM at start and every run.
  bool first_hop_drop = false;
};

// The shared state's term as this service holds it (service/shared_state.cc; mu, except
// `polled`, which has its own mutex).
struct TermFacts {
  // Whether this service holds the shared state's current term: always without a provider;
  // with one, from take_over_if_needed until another SM's write (seen or fenced) shows
  // otherwise.
  bool term_held = true;
  bool held_a_term = false;     // this service took the shared state over once
  long takeovers = 0;           // times it did (the metrics)
  FileStamp state_stamp;        // state.json as this service last read or wrote it
  std::string fenced;           // why another SM holds the state now (empty: none took it from us)
  bool missing_logged = false;  // a standby said once that state.json does not exist
  // state.json's stamp as the worker last saw it (probe, load, save, take-over).
  std::shared_ptr<PolledStamp> polled = std::make_shared<PolledStamp>();
};

// The shared model of the tenant service: the fabric as last recognized, the tenants placed on
// it and as persisted, and how far the state and the routing got. The types the service is made
// of keep their own bookkeeping (ServiceMetrics its counters, ServiceExports the managed file,
// TenantService its warnings); what they all read is here, behind `mu`.
struct ServiceState {
  ServiceState(ServiceConfig config, Logger log);
  // Stops etcd's threads before anything they report to goes.
  ~ServiceState();
  ServiceState(const ServiceState&) = delete;
  ServiceState& operator=(const ServiceState&) = delete;

  // Set once before the service is used: read without mu.
  ServiceConfig config;
  Logger log;
  StateStore store;
  ServiceHooks hooks;
  // The change events (service/events.h): observed wherever `persisted` becomes a new state
  // (a change saved, the shared state re-read or taken over); its own lock.
  EventLog events;

  // Guards every field below except those that say otherwise.
  mutable std::mutex mu;
  std::shared_ptr<const TopologyView> view;
  std::unique_ptr<allocator::Cluster> cluster;
  std::unique_ptr<PhysicalIds> ids;        // on view
  topology::Servers servers;               // on view: host ports grouped by server
  std::vector<UnacceptedHost> unaccepted;  // on view
  PersistedState persisted;
  StateCondition condition;
  RoutingProgress routing;
  SmFacts sm;
  TermFacts term;
  // tables.bin's writes (its own mutex and atomic).
  std::shared_ptr<TablesFileHealth> tables_file = std::make_shared<TablesFileHealth>();
  CancelSignal stopping;  // set by interrupt_waits(): resume checks watch it (its own lock)
  // Last: destroyed first, while everything a queued operation's completion reports to lives.
  std::unique_ptr<StateIo> io;
};

// Why nothing is read from the state directory while config.state_dir_unknown is set.
std::string unknown_state_dir_text(const ServiceConfig& config);

// How long a caller waits for the state directory's worker (service/state_io.h) before it
// gives up; the routing run waits for nothing but a take-over, a request for its own change.
constexpr std::chrono::milliseconds kIoDeadline{2000};

// Reads of the state that the service's types share (service_state.cc). mu held unless said.
//
// Whether this service may write the shared state now: it is the only SM (no role provider), or
// it holds the state's current term (SharedState takes it over, a fenced write loses it).
bool holds_term(const ServiceState& st);
// The SM's role from the provider (SharedState::set_role_provider; without one, a master that
// owns its state directory). Takes mu to read the provider, calls it without.
SmRole current_role(const ServiceState& st);
// The role as status shows it: whether this SM holds the state, who took it over last, and the
// master as the plugin last looked.
nlohmann::json role_json(const ServiceState& st, const SmRole& sm);
// Refuses (RequestError, unavailable) while the state is blocked or no fat-tree is recognized.
void require_topology(const ServiceState& st);
// `hosts` with every other port of their servers (sorted, once each).
std::vector<topology::HostId> whole_servers(const ServiceState& st,
                                            const std::vector<topology::HostId>& hosts);
// A request's validated 'wait' and 'timeout_ms': how long to wait for routing, -1: not.
int wait_ms(const ServiceState& st, const nlohmann::json& params);
// The recorded tenant of that name (nullptr: none).
const PersistedTenant* persisted_tenant(const ServiceState& st, const std::string& name);
// Drains of links and switches as persisted records them, on the current view (FabricDrains
// makes and undoes them): read by hosts, faults, status and the metrics alike.
const PersistedFabricDrain* switch_drain_of(const ServiceState& st, int level, int index);
const PersistedFabricDrain* leaf_drain_of(const ServiceState& st, topology::HostId h);
// Every link drained, by its own record or with its switch; sorted.
std::vector<topology::LinkId> drained_links(const ServiceState& st);
// Whether link `l` has an end on switch (level, index).
bool link_touches(const topology::FatTree& tree, topology::LinkId l, int level, int index);
// read_text on the state directory's worker, waiting at most kIoDeadline (NotAnsweringError).
std::string read_text_io(const ServiceState& st, const std::string& path, bool* exists);

}  // namespace laas::service
