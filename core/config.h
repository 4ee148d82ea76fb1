// laas.yaml: the plugin's own configuration (OpenSM passes its path as event_plugin_options).
// Every key is optional; the built-in defaults below apply to whatever is absent. A key that is
// present but wrong never means "use the default and go on": it is a problem, and the plugin
// then routes closed (the tenants last routed, nothing rewritten, changes refused) until the
// file is fixed -- a typo must not wipe every tenant's partition at the next restart.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "service/protocol.h"

namespace laas::core {

// laas.yaml's `api:` section: laas-api's settings (laas-api(8)); the plugin reads none of it.
// Its command-line options override each of these.
struct ApiConfig {
  std::string listen;     // ADDR:PORT
  std::string cert, key;  // the server's certificate chain and key (PEM)
  std::string client_ca;  // the CA clients' certificates must be signed by (PEM)
  std::vector<std::string> writers, readers;  // certificate CNs
  int threads = 0;                            // 0: laas-api's default
  int max_connections = 0;                    // 0: laas-api's default
};

// laas-sdn's fabric side (`sdn:` in laas.yaml): the files an OpenSM-family SM without the
// plugin reads (`routing_engine file` with `lfts_file`, `partition_config_file`) and how it is
// told to read them again. The plugin ignores the section.
struct SdnConfig {
  bool present = false;         // laas.yaml has an `sdn:` mapping
  std::string lfts_file;        // the SM's lfts_file (absolute; required by laas-sdn)
  std::string partitions_file;  // the SM's partition_config_file (absolute; required)
  // An argv run without a shell after a file changed: `kill -HUP PID`, `systemctl reload opensm`.
  std::vector<std::string> reload;
  int reload_timeout_s = 30;
  // Seconds between two discoveries of the fabric (0: only on `laasctl reroute` and changes).
  int discover_interval_s = 60;
  // Seconds to wait after a reload for the switches to hold the tables written (the read-back).
  int readback_timeout_s = 30;
  std::string ca;  // the local adapter to discover through ("": the first with an active port)
  int port = 0;    // its port (0: the first active)
  // infiniband-diags' ibnetdiscover, run for each discovery ("": found on PATH, else /usr/sbin).
  std::string ibnetdiscover;
  int discover_timeout_s = 60;  // how long it may take before it is killed and the run fails
};

struct Config {
  std::string socket = service::kDefaultSocketPath;  // control socket; empty: not served
  std::string socket_group = "laas";                 // its members may change tenants
  std::string socket_read_group = "laas-read";       // its members may only read
  std::string state_dir = "/var/lib/laas";           // tenants.yaml in, allocations.json out
  std::string placer = "laas";                       // laas | simple | unconstrained
  // Where the shared tenant state lives: "dir" (state.json in state_dir, the default) or
  // "etcd" (the keys under etcd.prefix of an etcd cluster, docs/ha.md: the state, the tenants
  // last routed, the layout, the tenants file's applied list); tables.bin and tenants.yaml
  // (an input, like laas.yaml) stay in state_dir either way.
  std::string state_store = "dir";
  struct Etcd {
    std::vector<std::string> endpoints;  // "host:port" or http(s)://host:port
    std::string prefix = "/laas/";
    std::string cacert, cert, key;  // TLS files (absolute paths; empty: none)
    int timeout_ms = 1500;          // every call to etcd, all members tried, within this
    // How long the master's leader key outlives its last keep-alive (service/etcd_state.h);
    // not given: 10, or two timeout_ms when that is longer.
    int lease_ttl_s = 10;
  } etcd;
  // The state directory is shared storage (NFS, DRBD: docs/ha.md): an SM becoming master
  // takes the state over only when state.json is there, since an unmounted share looks like
  // an empty directory and an empty state would route every tenant away.
  bool state_must_exist = false;
  // A command a drained host must pass before `laasctl host resume` returns it to the free pool
  // (`CMD -- PORT_GUID HOST_NAME`, exit 0 = pass; an absolute path only root may change,
  // service/resume_check.h); empty: none.
  std::string resume_check;
  int resume_check_timeout_s = 120;
  // Prometheus metrics for node_exporter's textfile collector, kept current; empty: none.
  std::string metrics_file;
  // With OpenSM's perfmgr: port errors in one reading that count against a link (0: never
  // isolate), the readings in a row over it that isolate the link as a fault (one reading
  // alone may be a glitch), and the clean readings after which it returns.
  std::uint64_t link_error_threshold = 0;
  int link_error_consecutive_readings = 2;
  int link_error_clean_readings = 3;
  // Port GUIDs of management hosts: never allocated, reachable from everyone.
  std::vector<std::uint64_t> management;
  // Port GUIDs (a switch's node GUID for an SM on a switch) of the subnet managers the
  // administrator runs. Only they, this OpenSM itself, and SMs accepted with `laasctl sm
  // accept` are management: any root can start an OpenSM on a port it holds.
  std::vector<std::uint64_t> subnet_managers;
  // Hosts without a tenant: "closed" (reached from management only, limited members of the
  // default partition) or "open" (they reach each other and everyone as before LaaS, full
  // members of the default partition) -- open is how LaaS is enabled on a running cluster
  // without cutting its jobs off, closed once tenants cover the running work.
  bool free_pool_open = false;
  // Port GUIDs of shared services (storage, gateways) every tenant must reach: the same rules as
  // management, on a leaf slot or cabled anywhere else on a tree switch.
  std::vector<std::uint64_t> shared_services;
  // What to do while tenants exist and the fabric cannot be recognized or the tenant state
  // cannot be read: false (the default) keeps every tenant's routes and nothing else changes
  // (fail closed); true lets OpenSM's next routing engine route the fabric (fail open).
  bool fail_open = false;
  // When set (e.g. "xgft(2;4,8;1,4)"), a fabric recognized as anything else is refused.
  std::string topology;
  // How often the plugin looks at tenants.yaml and asks OpenSM to re-route when it changed
  // (milliseconds; 0: only at heavy sweeps, e.g. after SIGHUP).
  int tenants_poll_ms = 1000;
  // Threads of a routing run (the tables and OpenSM's hop matrices; the result is the same for
  // any count). 0: one per core, at most routing::kMaxThreads; 1 keeps it on OpenSM's thread.
  int routing_threads = 0;
  // Seconds between the starts of two passes of the switch check: every LFT block of every
  // switch read back and compared with what this SM sent, a difference logged, counted and
  // sent again (service/switch_check.h). The reads of a pass are spread over 80% of it, at
  // most 2,000 a second. 0: no check.
  int switch_check_interval_s = 300;
  // Keep OpenSM's partition_config_file current with one partition per tenant (written
  // atomically, validated, re-read by OpenSM on the heavy sweep the plugin requests); a tenant
  // change succeeds only when the file was written. On by default: routing alone cannot
  // separate tenants that share a leaf. The administrator's own partitions (`partitions_base`,
  // or else whatever the file holds outside LaaS's markers) are kept verbatim.
  bool manage_partitions = true;
  std::string partitions_base;
  // Names for `laasctl export slurm|openstack`: fabric node description -> cluster name.
  // Server names: node description (or its first word) -> server.
  std::map<std::string, std::string> servers;
  std::map<std::string, std::string> slurm_node_names;
  std::map<std::string, std::string> openstack_hosts;
  std::map<std::string, std::string> openstack_projects;  // tenant -> project ID
  // No two owners share a leaf (allocator::whole_leaves): unset, the adapter decides (laas-sdn,
  // whose SM sets no SL2VL first-hop drop: true; the plugin: false).
  std::optional<bool> whole_leaves;
  SdnConfig sdn;
  // Filled by the plugin from OpenSM's options, not from laas.yaml.
  std::string managed_partitions_file;
  ApiConfig api;
  // What is wrong in the file ("PATH:LINE: key 'K': why"), empty when nothing is.
  std::vector<std::string> problems;
  // What is wrong in its `api:` section, apart: only laas-api reads it, so a mistake there must
  // not make the plugin route closed. `laasctl config check` reports both.
  std::vector<std::string> api_problems;
  // The file could not be read as a whole (unreadable, a YAML syntax error, empty or not a
  // mapping) or its state_dir is wrong: `state_dir` above is the built-in default, a guess.
  // Nothing is read from or written to it -- a file cut to zero by a full disk must not make
  // the plugin adopt whatever another directory holds.
  bool state_dir_unknown = false;

  std::string tenants_file() const { return state_dir + "/tenants.yaml"; }
  std::string allocations_file() const { return state_dir + "/allocations.json"; }
  // The tables this SM last sent (core/last_tables.h).
  std::string sent_tables_file() const { return state_dir + "/tables.bin"; }
};

// Reads `path`; an empty path gives the defaults. Every key is checked: the valid ones are
// applied, each wrong one is listed in `problems` (file, line, key, why) and keeps its default.
// A file that cannot be read as a whole, or holds no key at all (empty, only comments), is a
// problem too, with state_dir_unknown set.
Config check_config(const std::string& path);
// As check_config, but throws std::runtime_error with the problems when there are any.
Config load_config(const std::string& path);
// What laas-sdn cannot run without ("sdn.KEY: why"), empty when the section is complete.
std::vector<std::string> sdn_problems(const Config& c);

// The GUID grammar of util/guid.h; throws std::invalid_argument naming the text.
std::uint64_t parse_guid(const std::string& text);
std::string format_guid(std::uint64_t guid);  // 0x%016x

}  // namespace laas::core
