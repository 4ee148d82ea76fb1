// The boundary between laas_core and a fabric side (an adapter). The core knows no subnet
// manager: an adapter -- the OpenSM plugin (opensm_plugin/), which routes inside OpenSM, or
// laas-sdn (sdn/), which discovers the fabric itself and hands tables to any OpenSM-family SM
// through its `file` routing engine -- gives it a FabricSnapshot at each routing run and gets a
// RouteOutcome back, and connects the AdapterHooks the tenant service calls between runs.
//
//   adapter -> core   FabricSnapshot: nodes, cabling, LIDs, port GUIDs, the SMs seen
//   core -> adapter   RouteOutcome: LFTs per switch, SL2VL drops; McastOutcome per group
//                     (Controller::multicast_tree); the partitions file, rewritten by the service,
//                     then AdapterHooks::partitions_changed
//   adapter -> core   Controller::on_routing_done once the tables (and P_Keys) are on the switches
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "routing/saved_tables.h"
#include "routing/sl2vl.h"
#include "service/metrics.h"
#include "service/sm_role.h"
#include "service/switch_check.h"
#include "topology/fabric.h"

namespace laas::core {

using topology::Guid;

// The fabric as the adapter sees it at the start of a routing run, copied (no pointer into the
// SM's own data survives the call).
struct FabricSnapshot {
  // Every node with its cabling; host ports and switch port 0 carry the LIDs the SM assigned
  // and their port GUIDs.
  topology::Fabric fabric;
  Guid sm_port_guid = 0;  // the port of the SM that routes (this one, for the plugin)
  // The port GUIDs of every SM the adapter knows of (the SMInfo table), this one's included:
  // once trusted they are management hosts, the same on every SM.
  std::vector<Guid> sm_ports;
  // The SM programs SL2VL tables (OpenSM with `qos TRUE`): the run plans the first-hop drop.
  // False leaves RouteOutcome::sl2vl empty (OpenSM's `file` engine sets no SL2VL).
  bool with_sl2vl = true;
  int lmc = 0;  // LIDs per port 2^lmc: every LID of a port is routed like its base LID
};

struct RouteOutcome {
  bool ok = false;
  std::string error;  // why the engine refuses to route (fabric not a fat-tree, bad state..)
  bool not_fat_tree = false;
  std::vector<std::vector<std::uint8_t>> tables;  // [fabric node] LID -> port (0xFF none)
  routing::Sl2VlTables sl2vl;  // [fabric node] (in, out) -> SLs sent to VL15 (the first-hop drop)
  std::vector<std::string> info;  // what happened, one log line each
  std::vector<std::string> warnings;
  // Tenants, management hosts or faulty links differ from the previous run: multicast trees
  // built before are stale (an SM's reroute-only sweep does not rebuild them by itself).
  bool multicast_changed = false;
  // This run took the shared tenant state over (the first run as master).
  bool took_over = false;
  // Non-empty: the fabric, the tenant state or laas.yaml could not be used, tenants exist, and
  // the run routes the tenants last routed or keeps what the switches hold: why.
  std::string fail_closed;
  // Failing closed with nothing computed: every switch keeps the forwarding tables and SL2VL
  // drops it holds (`tables` is empty; the adapter keeps its record of what each switch was
  // sent).
  bool keep_switch_tables = false;
  // With keep_switch_tables before the SM sent anything since its start (it knows nothing of
  // what the switches hold): the tables this SM last sent, from the state directory (null:
  // none could be read; such switches get nothing).
  std::shared_ptr<const routing::SavedTables> saved_tables;
  double ms_total = 0, ms_recognize = 0, ms_place = 0, ms_compute = 0, ms_tables = 0, ms_save = 0;
  // The fabric, layout, declared spec and SM port were the last run's: its recognition again.
  bool recognition_reused = false;
};

// What the tenant service asks of the fabric side between routing runs. Each may be left
// empty: the service then does without (no re-route asked, master of its own state directory,
// no live audit, no read-back).
struct AdapterHooks {
  // A routing run soon: the tenants changed outside a run (socket requests). Called from any
  // thread but the routing one.
  std::function<void()> reroute;
  // This SM's role: only the master changes tenants. Must not block on the SM's lock.
  std::function<service::SmRole()> role;
  // The managed partitions file was rewritten (a tenant's P_Key came or went): have the SM
  // apply it.
  std::function<void()> partitions_changed;
  // The tables the switches hold now, audited (Controller::audit): `laasctl audit`.
  std::function<nlohmann::json()> audit_live;
  // What reading the switches back found (service/switch_check.h): status and the metrics.
  std::shared_ptr<service::SwitchCheck>
      switch_check;  // not const: audit --from-switches asks for a pass
  // The adapter's own section of `laasctl status` ("adapter") and its metric families (laas-sdn:
  // its role, files, reloads and read-backs). Called with the service's lock held: they must
  // not call the service.
  std::function<nlohmann::json()> status;
  std::function<std::vector<service::MetricFamily>()> metrics;
};

}  // namespace laas::core
