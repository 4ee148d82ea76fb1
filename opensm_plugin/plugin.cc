// libosmlaas.so: the OpenSM 3.3.23 glue. OpenSM dlopens it for `event_plugin_name osmlaas`;
// create() reads laas.yaml (path in event_plugin_options) and registers the external routing
// engine "laas" (`routing_engine laas,ftree`). Routing callbacks run in OpenSM's sweeper
// thread with osm->lock held exclusively: they never take it, and they keep no OpenSM pointer
// past the callback. Everything but the subnet <-> Fabric / LFT conversion lives in
// core::Controller.
// clang-format off
#include <opensm/osm_config.h>  // must come first: it fixes the layout of osm_opensm_t
#include <complib/cl_passivelock.h>
#define delete delete_cb
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_log.h>
#include <opensm/osm_mcast_tbl.h>
#include <opensm/osm_mcm_port.h>
#include <opensm/osm_multicast.h>
#include <opensm/osm_node.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_port.h>
#include <opensm/osm_subnet.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_version.h>
#undef delete
// clang-format on

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "core/controller.h"
#include "opensm_plugin/lft_check.h"
#include "opensm_plugin/subnet_managers.h"
#include "routing/routing.h"
#include "routing/switch_hops.h"
#include "service/socket_server.h"
#include "topology/fabric.h"
#include "util/threads.h"

namespace {

using laas::core::Config;
using laas::core::Controller;
using laas::topology::Fabric;
using laas::topology::FabricNode;

struct Plugin {
  osm_opensm_t* osm = nullptr;
  std::unique_ptr<Controller> engine;
  std::unique_ptr<laas::plugin::SubnetManagers> sms;
  // Set when a routing run took the tenant state over (failover, handover, first start): the
  // start of that run, and when this SM was last seen out of the master's role, for the log
  // line that says how long the fabric went without tenant tables (sweeper thread only).
  bool took_over_pending = false;
  bool lmc_logged = false;
  std::chrono::steady_clock::time_point took_over_run_start{}, took_over_last_standby{};
  std::unique_ptr<laas::service::SocketServer> socket;
  std::thread watcher;
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  // The first-hop drop of the last successful routing run, for update_sl2vl (which OpenSM
  // calls from the same sweeper thread, after the forwarding tables: no lock needed).
  std::shared_ptr<const laas::routing::Sl2VlTables> sl2vl;  // null: none yet
  std::unordered_map<uint64_t, int> node_of_guid;           // switch node GUID -> row of sl2vl
  // The switch graph of the last build_lid_matrices and its distances (sweeper thread only).
  laas::routing::SwitchGraph hop_graph;
  std::unique_ptr<laas::routing::HopMatrix> hop_matrix;
  // OpenSM's partition manager (see apply_partitions), null when a partitions change takes a
  // heavy sweep; and whether partitions.conf changed since it last ran.
  int (*pkey_mgr)(osm_opensm_t*) = nullptr;
  std::atomic<bool> partitions_pending{false};
  // The switch check (opensm_plugin/lft_check.h): LFT blocks read back and repaired.
  std::unique_ptr<laas::plugin::LftCheck> lft_check;
};

void log_line(osm_opensm_t* osm, osm_log_level_t level, const std::string& msg) {
  if (!osm_log_is_active(&osm->log, level)) return;
  const bool prefixed = msg.rfind("laas: ", 0) == 0;
  osm_log(&osm->log, level, "%s%s\n", prefixed ? "" : "laas: ", msg.c_str());
}

// Every barrier LaaS sets -- forwarding tables, SL2VL drops, P_Key tables -- is a switch or
// port attribute a tenant's root can rewrite with its own SMPs unless the ports are protected
// by an M_Key (protection level 2: reads of it are hidden too, with a lease so a dead SM's key
// expires) and other SMs are kept out by an SM_Key. Said at every routing run, like qos.
void check_keys(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  const auto& opt = osm->subn.opt;
  std::string missing;
  if (opt.m_key == 0)
    missing += "no m_key (a tenant's root can rewrite any switch's tables)";
  else if (opt.m_key_protect_bits < 2)
    missing += "m_key_protection_level " + std::to_string(opt.m_key_protect_bits) +
               " (below 2 a tenant's root can read the M_Key and use it)";
  if (opt.m_key && opt.m_key_lease_period == 0)
    missing += std::string(missing.empty() ? "" : "; ") +
               "m_key_lease_period 0 (a key set by a dead SM never expires)";
  if (opt.sm_key == 0 || cl_ntoh64(opt.sm_key) == 1)
    missing += std::string(missing.empty() ? "" : "; ") + "sm_key " +
               (opt.sm_key == 0 ? "0" : "1, OpenSM's default,") +
               " (any SM can join the fabric's SM negotiation and win it by priority)";
  if (cl_ntoh64(opt.sa_key) == 1)
    missing += std::string(missing.empty() ? "" : "; ") +
               "sa_key 1, OpenSM's default (an SA query with that key is trusted and is "
               "answered every port's M_Key)";
  plugin->engine->service().set_weak_keys(missing);
  if (missing.empty()) return;
  log_line(osm, OSM_LOG_ERROR,
           "WARNING: OpenSM runs with " + missing +
               ": tenants with root can undo their isolation. Set m_key, "
               "m_key_protection_level 2, m_key_lease_period and sm_key in opensm.conf "
               "(see opensm.conf.snippet and docs/security.md in the laas documentation).");
}

// Without `qos TRUE` OpenSM never calls update_sl2vl: no switch drops anything, and tenants
// that share a leaf are separated by partition keys only. Say so at every routing run.
void check_qos(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  check_keys(plugin);
  plugin->engine->service().set_first_hop_drop(osm->subn.opt.qos);
  if (osm->subn.opt.qos) return;
  osm_log(&osm->log, OSM_LOG_ERROR,
          "laas: WARNING: 'qos' is FALSE in OpenSM's options: SL2VL tables are not programmed, "
          "so the switches do NOT drop packets between tenants that share a leaf. Set 'qos TRUE' "
          "in opensm.conf (see opensm.conf.snippet in the laas documentation).\n");
}

laas::service::Logger logger_for(osm_opensm_t* osm) {
  return [osm](laas::service::LogLevel level, const std::string& msg) {
    log_line(osm, level == laas::service::LogLevel::kInfo ? OSM_LOG_INFO : OSM_LOG_ERROR, msg);
  };
}

// Asks OpenSM for a re-route soon (from any thread but the sweeper's).
void request_reroute(osm_opensm_t* osm) {
  osm->subn.force_reroute = TRUE;
  osm_sm_sweep(&osm->sm);
}

// The subnet as a plain Fabric. Called with osm->lock held; `switches` receives, per fabric
// node, the osm_switch_t to fill (valid only until the callback returns).
Fabric snapshot(osm_opensm_t* osm, std::vector<osm_switch_t*>* switches) {
  Fabric fabric;
  std::unordered_map<const osm_node_t*, int> index;
  cl_qmap_t* tbl = &osm->subn.node_guid_tbl;
  for (cl_map_item_t* it = cl_qmap_head(tbl); it != cl_qmap_end(tbl); it = cl_qmap_next(it)) {
    auto* node = reinterpret_cast<osm_node_t*>(it);
    FabricNode n;
    n.guid = cl_ntoh64(osm_node_get_node_guid(node));
    n.is_switch = osm_node_get_type(node) == IB_NODE_TYPE_SWITCH;
    if (node->print_desc && *node->print_desc) {
      n.name = node->print_desc;
    } else {
      const auto* d = reinterpret_cast<const char*>(node->node_desc.description);
      n.name.assign(d, strnlen(d, IB_NODE_DESCRIPTION_SIZE));
    }
    const uint32_t nports = osm_node_get_num_physp(node);
    n.ports.resize(nports);
    if (n.is_switch) {
      n.port_guid = n.guid;
      n.ports[0].lid = cl_ntoh16(osm_node_get_base_lid(node, 0));
    }
    index[node] = fabric.add_node(std::move(n));
    switches->push_back(node->sw);
  }
  for (cl_map_item_t* it = cl_qmap_head(tbl); it != cl_qmap_end(tbl); it = cl_qmap_next(it)) {
    auto* node = reinterpret_cast<osm_node_t*>(it);
    const int i = index[node];
    auto& n = fabric.nodes[i];
    for (uint32_t p = 1; p < n.ports.size(); ++p) {
      osm_physp_t* physp = osm_node_get_physp_ptr(node, p);
      if (!physp || !osm_physp_is_valid(physp)) continue;
      if (!n.is_switch) {
        n.ports[p].lid = cl_ntoh16(osm_physp_get_base_lid(physp));
        n.ports[p].guid = cl_ntoh64(osm_physp_get_port_guid(physp));
      }
      osm_physp_t* remote = osm_physp_get_remote(physp);
      if (!remote) continue;
      auto peer = index.find(osm_physp_get_node_ptr(remote));
      if (peer == index.end()) continue;
      if (!n.is_switch && n.port_guid == 0) n.port_guid = cl_ntoh64(osm_physp_get_port_guid(physp));
      const int rp = osm_physp_get_port_num(remote);
      if (static_cast<int>(fabric.nodes[peer->second].ports.size()) <= rp) continue;
      fabric.connect(i, static_cast<int>(p), peer->second, rp);
    }
  }
  // A dual-port HCA is two host ports of one server (topology/servers.h).
  if (laas::topology::split_multiport_cas(fabric) > 0) switches->resize(fabric.nodes.size());
  return fabric;
}

// Member port GUIDs of a multicast group (every MGID sharing the MLID), sorted, once each.
std::vector<laas::topology::Guid> members_of(const osm_mgrp_box_t* mbox) {
  std::vector<laas::topology::Guid> out;
  const cl_qlist_t* groups = &mbox->mgrp_list;
  for (const cl_list_item_t* li = cl_qlist_head(groups); li != cl_qlist_end(groups);
       li = cl_qlist_next(li)) {
    const auto* mgrp = reinterpret_cast<const osm_mgrp_t*>(reinterpret_cast<const char*>(li) -
                                                           offsetof(osm_mgrp_t, list_item));
    const cl_qmap_t* ports = &mgrp->mcm_port_tbl;
    for (const cl_map_item_t* mi = cl_qmap_head(ports); mi != cl_qmap_end(ports);
         mi = cl_qmap_next(mi)) {
      const auto* mcm = reinterpret_cast<const osm_mcm_port_t*>(mi);  // map_item comes first
      if (mcm->port) out.push_back(cl_ntoh64(mcm->port->guid));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The multicast tables OpenSM holds for the switches (sw->mcast_tbl) and every group's members.
// Called with osm->lock held.
void read_mfts(osm_opensm_t* osm, const std::vector<osm_switch_t*>& switches,
               laas::routing::Mfts* mfts,
               std::map<std::uint16_t, std::vector<laas::topology::Guid>>* members) {
  mfts->assign(switches.size(), {});
  for (size_t i = 0; i < switches.size(); ++i) {
    osm_switch_t* sw = switches[i];
    if (!sw) continue;
    const osm_mcast_tbl_t* tbl = &sw->mcast_tbl;
    if (!tbl->p_mask_tbl) continue;
    for (unsigned mlid = IB_LID_MCAST_START_HO; mlid <= tbl->max_mlid_ho; ++mlid)
      for (unsigned port = 0; port < tbl->num_ports; ++port)
        if (osm_mcast_tbl_is_port(tbl, static_cast<uint16_t>(mlid), static_cast<uint8_t>(port)))
          (*mfts)[i][static_cast<std::uint16_t>(mlid)].push_back(static_cast<int>(port));
  }
  const unsigned top = osm->subn.max_mcast_lid_ho - IB_LID_MCAST_START_HO;
  for (unsigned i = 0; i <= top; ++i)
    if (const auto* mbox = static_cast<const osm_mgrp_box_t*>(osm->subn.mboxes[i]))
      (*members)[static_cast<std::uint16_t>(i + IB_LID_MCAST_START_HO)] = members_of(mbox);
}

// OpenSM's copies of the tables fill in as the switches answer its Sets (its QoS manager
// zeroes an SL2VL copy before sending it): an audit right after a tenant change would see half
// of them and report drops that are not missing. Waits, 10 s at most, until no sweep is under
// way and OpenSM has no SMP outstanding.
void wait_for_quiet_fabric(Plugin* plugin) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto busy = [plugin] {
    return plugin->osm->stats.qp0_mads_outstanding > 0 ||
           (plugin->lft_check &&
            plugin->lft_check->sweep_under_way(std::chrono::steady_clock::now()));
  };
  while (busy() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// The tables the switches hold now (sw->lft), for the live audit. Takes the lock: never call
// it from the sweeper thread.
nlohmann::json audit_live(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  wait_for_quiet_fabric(plugin);
  std::vector<osm_switch_t*> switches;
  std::vector<std::vector<std::uint8_t>> tables;
  Fabric fabric;
  uint64_t sm_guid = 0;
  cl_plock_acquire(&osm->lock);
  fabric = snapshot(osm, &switches);
  tables.resize(switches.size());
  size_t width = 1;
  for (size_t i = 0; i < switches.size(); ++i) {
    const osm_switch_t* sw = switches[i];
    if (!sw || !sw->lft) continue;
    const size_t n = std::min<size_t>(sw->lft_size, static_cast<size_t>(sw->max_lid_ho) + 1);
    tables[i].assign(sw->lft, sw->lft + n);
    width = std::max(width, n);
  }
  // SL2VL as the switches answered OpenSM's Set (OpenSM keeps the response per port).
  const bool qos = osm->subn.opt.qos;
  laas::routing::Sl2VlTables sl2vl(fabric.nodes.size());
  cl_qmap_t* tbl = &osm->subn.node_guid_tbl;
  std::unordered_map<uint64_t, int> node_of_guid;
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    if (fabric.nodes[i].is_switch) node_of_guid[fabric.nodes[i].guid] = static_cast<int>(i);
  for (cl_map_item_t* it = cl_qmap_head(tbl); qos && it != cl_qmap_end(tbl);
       it = cl_qmap_next(it)) {
    auto* node = reinterpret_cast<osm_node_t*>(it);
    if (osm_node_get_type(node) != IB_NODE_TYPE_SWITCH) continue;
    auto found = node_of_guid.find(cl_ntoh64(osm_node_get_node_guid(node)));
    if (found == node_of_guid.end()) continue;
    const int n = static_cast<int>(osm_node_get_num_physp(node));
    sl2vl.init_node(found->second, n);
    for (int out = 1; out < n; ++out) {
      osm_physp_t* p = osm_node_get_physp_ptr(node, out);
      if (!p || !osm_physp_is_valid(p)) continue;
      for (int in = 0; in < n; ++in) {
        const ib_slvl_table_t* t = osm_physp_get_slvl_tbl(p, static_cast<uint8_t>(in));
        uint16_t mask = 0;
        for (uint8_t sl = 0; sl < 16; ++sl)
          if (ib_slvl_table_get(t, sl) == laas::routing::kDropVl) mask |= 1u << sl;
        sl2vl.set(found->second, in, out, mask);
      }
    }
  }
  sm_guid = cl_ntoh64(osm->subn.sm_port_guid);
  laas::routing::Mfts mfts;
  std::map<std::uint16_t, std::vector<laas::topology::Guid>> members;
  read_mfts(osm, switches, &mfts, &members);
  cl_plock_release(&osm->lock);
  for (const auto& node : fabric.nodes)
    for (const auto& p : node.ports) width = std::max<size_t>(width, p.lid + 1u);
  for (size_t i = 0; i < tables.size(); ++i)
    if (fabric.nodes[i].is_switch) tables[i].resize(width, 0xFF);
  auto report =
      plugin->engine->audit(fabric, tables, sm_guid, qos ? &sl2vl : nullptr, &mfts, &members);
  // What the switch check read back: per switch, the blocks that differed from what this SM
  // sent (OpenSM's copy above holds what the switches answered until they are sent again).
  if (plugin->lft_check && plugin->lft_check->bookkeeping()->enabled())
    report["switch_check"] =
        plugin->lft_check->bookkeeping()->report(laas::service::SwitchCheck::Clock::now());
  return report;
}

// OpenSM's min-hop matrices (sw->hops), which only its dumps (opensm-lid-matrix.dump,
// opensm.fdbs) and the fallback engines' min-hop rules read with `laas`: our multicast trees
// come from mcast_build_stree and the SA's path records walk the LFTs. OpenSM's own pass
// (osm_ucast_mgr_build_lid_matrices) relaxes neighbours round after round, seconds on big
// trees; the same values are breadth-first distances (routing/switch_hops.h), so fill them
// here. Returns 1 (OpenSM's pass) where that pass would weigh hops differently -- a hop
// weights file, an unhealthy or half-known switch link -- or when LAAS_OPENSM_HOPS is set
// (to compare both in tests).
int fill_lid_matrices(Plugin* plugin);

int build_lid_matrices(void* context) {
  auto* plugin = static_cast<Plugin*>(context);
  // The first callback of every unicast routing pass (whichever engine then routes): reads
  // of the switch check sent before it are not compared.
  if (plugin->lft_check) plugin->lft_check->routing_started();
  try {
    return fill_lid_matrices(plugin);
  } catch (const std::exception& e) {
    log_line(plugin->osm, OSM_LOG_ERROR, std::string("hop matrices left to OpenSM: ") + e.what());
  } catch (...) {
    log_line(plugin->osm, OSM_LOG_ERROR, "hop matrices left to OpenSM: an unknown exception");
  }
  return 1;
}

// The switches OpenSM knows, numbered, and the cabling between them; empty `why_not` when
// one distance per switch pair can stand for OpenSM's.
struct SwitchCabling {
  std::vector<osm_switch_t*> switches;
  laas::routing::SwitchGraph graph;
  std::string why_not;
};

SwitchCabling read_switch_cabling(osm_opensm_t* osm) {
  SwitchCabling c;
  std::unordered_map<const osm_switch_t*, int> number;
  cl_qmap_t* tbl = &osm->subn.sw_guid_tbl;
  for (cl_map_item_t* it = cl_qmap_head(tbl); it != cl_qmap_end(tbl); it = cl_qmap_next(it)) {
    auto* sw = reinterpret_cast<osm_switch_t*>(it);
    number[sw] = static_cast<int>(c.switches.size());
    c.switches.push_back(sw);
  }
  c.graph.peer.resize(c.switches.size());
  for (size_t i = 0; i < c.switches.size(); ++i) {
    osm_node_t* node = c.switches[i]->p_node;
    auto& peers = c.graph.peer[i];
    peers.assign(c.switches[i]->num_ports, -1);
    for (uint8_t p = 1; p < c.switches[i]->num_ports; ++p) {
      osm_physp_t* physp = osm_node_get_physp_ptr(node, p);
      if (!physp || !physp->p_remote_physp) continue;
      const osm_switch_t* remote = physp->p_remote_physp->p_node->sw;
      if (!remote) continue;
      auto found = number.find(remote);
      if (found == number.end()) {
        c.why_not = "a switch cabled to an unknown switch";
        return c;
      }
      // OpenSM learns distances only over valid, healthy links, but counts 1 hop to any
      // cabled neighbour: our single distance per switch pair cannot say both.
      if (!osm_physp_is_valid(physp) || !osm_link_is_healthy(physp)) {
        c.why_not = "a switch link is not healthy";
        return c;
      }
      peers[p] = found->second;
    }
  }
  return c;
}

// Writes every switch's hop rows from `hops`. Each switch's rows are its own
// (osm_switch_set_hops touches only that switch): the switches are filled on several threads
// while OpenSM's sweeper waits here. Returns the rows written, or -1 when a row could not be
// allocated.
long fill_hop_rows(const std::vector<osm_switch_t*>& sws, const laas::routing::HopMatrix& hops,
                   int threads_asked, unsigned* threads_used) {
  std::vector<uint16_t> lid(sws.size());
  for (size_t i = 0; i < sws.size(); ++i)
    lid[i] = cl_ntoh16(osm_node_get_base_lid(sws[i]->p_node, 0));
  std::atomic<long> rows{0};
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto fill = [&] {
    long mine = 0;
    for (size_t s; (s = next.fetch_add(1)) < sws.size() && !failed;) {
      osm_switch_t* sw = sws[s];
      for (size_t t = 0; t < sws.size(); ++t) {
        const uint16_t l = lid[t];
        const uint8_t least = hops.least(static_cast<int>(s), static_cast<int>(t));
        if (!l || l > sw->max_lid_ho || least == laas::routing::kNoPath) continue;
        // osm_switch_set_hops allocates the LID's row the way OpenSM frees it.
        if (!sw->hops[l] && osm_switch_set_hops(sw, l, 0, least) != 0) {
          failed = true;
          break;
        }
        hops.fill_row(static_cast<int>(s), static_cast<int>(t), sw->hops[l]);
        ++mine;
      }
    }
    rows += mine;
  };
  *threads_used = static_cast<unsigned>(
      laas::util::run_on_threads(laas::routing::routing_threads(threads_asked), fill));
  return failed ? -1 : rows.load();
}

int fill_lid_matrices(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  const char* opensm_hops = std::getenv("LAAS_OPENSM_HOPS");
  if (opensm_hops && *opensm_hops && std::strcmp(opensm_hops, "0") != 0) return 1;
  const auto own = [osm](const std::string& why) {
    log_line(osm, OSM_LOG_INFO, "hop matrices left to OpenSM: " + why);
    return 1;
  };
  if (osm->subn.opt.hop_weights_file && *osm->subn.opt.hop_weights_file)
    return own("hop_weights_file is set");
  const auto t0 = std::chrono::steady_clock::now();
  SwitchCabling cabling = read_switch_cabling(osm);
  if (!cabling.why_not.empty()) return own(cabling.why_not);
  const auto t_graph = std::chrono::steady_clock::now();
  // A tenant change leaves the cabling as it was: the distances of the last run still hold.
  if (!plugin->hop_matrix || cabling.graph.peer != plugin->hop_graph.peer) {
    plugin->hop_matrix = std::make_unique<laas::routing::HopMatrix>(cabling.graph);
    plugin->hop_graph = std::move(cabling.graph);
  }
  const auto t_bfs = std::chrono::steady_clock::now();
  unsigned threads = 0;
  const long rows = fill_hop_rows(cabling.switches, *plugin->hop_matrix,
                                  plugin->engine->config().routing_threads, &threads);
  if (rows < 0) {
    log_line(osm, OSM_LOG_ERROR, "cannot allocate hop matrices; OpenSM builds them");
    return 1;
  }
  using ms = std::chrono::duration<double, std::milli>;
  char line[200];
  std::snprintf(line, sizeof line,
                "hop matrices filled in %.1f ms (graph %.1f, distances %.1f, fill %.1f): %zu "
                "switches, %ld rows, %u thread(s)",
                ms(std::chrono::steady_clock::now() - t0).count(), ms(t_graph - t0).count(),
                ms(t_bfs - t_graph).count(), ms(std::chrono::steady_clock::now() - t_bfs).count(),
                cabling.switches.size(), rows, threads);
  log_line(osm, OSM_LOG_INFO, line);
  return 0;
}

// Whether OpenSM has a record of what the switch holds: it starts with every entry unset.
bool holds_routes(const osm_switch_t* sw) {
  const size_t n = std::min<size_t>(sw->lft_size, static_cast<size_t>(sw->max_lid_ho) + 1);
  for (size_t lid = 1; lid < n; ++lid)
    if (sw->lft[lid] != OSM_NO_PATH) return true;
  return false;
}

// The SL2VL drops `saved` records, for update_sl2vl: only while this run knows none (a start
// failing closed before any good run).
void restore_sl2vl(Plugin* plugin, const std::vector<osm_switch_t*>& switches,
                   const laas::routing::SavedTables& saved) {
  if (plugin->sl2vl) return;
  auto sl2vl = std::make_shared<laas::routing::Sl2VlTables>(switches.size());
  plugin->node_of_guid.clear();
  for (size_t i = 0; i < switches.size(); ++i) {
    if (!switches[i]) continue;
    const uint64_t guid = cl_ntoh64(osm_node_get_node_guid(switches[i]->p_node));
    auto it = saved.switches.find(guid);
    if (it == saved.switches.end() || it->second.ports == 0) continue;
    sl2vl->init_node(static_cast<int>(i), it->second.ports);
    sl2vl->drops[i] = it->second.drops;
    plugin->node_of_guid[guid] = static_cast<int>(i);
  }
  plugin->sl2vl = std::move(sl2vl);
}

// Whom every LID belongs to in the fabric OpenSM sees now: the port GUID and, for a host
// port, the switch port it is cabled to. Read with the tables a run sends (kept with them in
// tables.bin) and again at a start that gives those tables back.
laas::routing::LidOwners lid_owners(osm_opensm_t* osm) {
  laas::routing::LidOwners owners;
  cl_qmap_t* tbl = &osm->subn.port_guid_tbl;
  for (cl_map_item_t* it = cl_qmap_head(tbl); it != cl_qmap_end(tbl); it = cl_qmap_next(it)) {
    auto* port = reinterpret_cast<osm_port_t*>(it);
    uint16_t min_lid = 0, max_lid = 0;
    osm_port_get_lid_range_ho(port, &min_lid, &max_lid);
    if (min_lid == 0) continue;
    laas::routing::LidOwner owner;
    owner.port = cl_ntoh64(osm_port_get_guid(port));
    if (port->p_node && osm_node_get_type(port->p_node) != IB_NODE_TYPE_SWITCH && port->p_physp)
      if (osm_physp_t* remote = osm_physp_get_remote(port->p_physp)) {
        owner.switch_guid = cl_ntoh64(osm_node_get_node_guid(osm_physp_get_node_ptr(remote)));
        owner.switch_port = osm_physp_get_port_num(remote);
      }
    for (unsigned lid = min_lid; lid <= max_lid && lid <= IB_LID_UCAST_END_HO; ++lid)
      owners[static_cast<laas::topology::Lid>(lid)] = owner;
  }
  return owners;
}

// Failing closed with nothing computed: every switch keeps what it holds. OpenSM cleared
// new_lft before calling the engine; sw->lft is its record of what each switch was sent. A
// switch it has sent nothing since its start gets the table `saved` records for it (what this
// SM last sent it) where each LID still belongs to the port, at the place, it belonged to then
// (routing::restorable: a moved host gets no other port's routes), or nothing when there is
// none.
struct Kept {
  size_t held = 0, restored = 0, unknown = 0, repaired = 0;
  laas::routing::RestoreReport report;
};
Kept keep_switch_tables(Plugin* plugin, const std::vector<osm_switch_t*>& switches,
                        const laas::routing::SavedTables* saved) {
  Kept kept;
  std::shared_ptr<const laas::routing::SavedTables> fitted;
  if (saved) {
    fitted = std::make_shared<const laas::routing::SavedTables>(
        laas::routing::restorable(*saved, lid_owners(plugin->osm), &kept.report));
    saved = fitted.get();
  }
  for (osm_switch_t* sw : switches) {
    if (!sw || !sw->new_lft || !sw->lft) continue;
    if (holds_routes(sw)) {
      std::memcpy(sw->new_lft, sw->lft, sw->lft_size);
      // OpenSM's copy holds what the switch check read back: blocks it found rewritten get
      // what this SM sent instead.
      if (plugin->lft_check) kept.repaired += plugin->lft_check->restore_found(sw);
      ++kept.held;
      continue;
    }
    const laas::routing::SwitchTables* sent = nullptr;
    if (saved) {
      auto it = saved->switches.find(cl_ntoh64(osm_node_get_node_guid(sw->p_node)));
      if (it != saved->switches.end()) sent = &it->second;
    }
    if (!sent) {
      ++kept.unknown;
      continue;
    }
    const auto& lft = sent->lft;
    std::memset(sw->new_lft, OSM_NO_PATH, sw->lft_size);
    std::memcpy(sw->new_lft, lft.data(), std::min<size_t>(lft.size(), sw->lft_size));
    ++kept.restored;
  }
  if (saved) restore_sl2vl(plugin, switches, *saved);
  // What this start sent, under its own term: a second start failing closed takes it.
  if (kept.restored > 0) plugin->engine->keep_given_back_tables(std::move(fitted));
  return kept;
}

std::string kept_line(const Kept& kept) {
  std::string line = std::to_string(kept.held) + " switch(es) keep the forwarding tables they hold";
  if (kept.restored > 0)
    line += "; " + std::to_string(kept.restored) +
            " get the tables this SM last sent them (OpenSM has sent nothing since its start)";
  const auto& r = kept.report;
  if (kept.restored > 0 && !r.moved.empty()) {
    std::string lids;
    for (size_t i = 0; i < r.moved.size() && i < 8; ++i)
      lids += (i ? "," : "") + std::to_string(r.moved[i]);
    if (r.moved.size() > 8) lids += ",...";
    line += "; " + std::to_string(r.moved.size()) + " LID(s) (" + lids +
            ") belong to another port or place than when those were sent: their " +
            std::to_string(r.entries_dropped) + " entries are left unreachable" +
            (r.ports_cut ? ", and " + std::to_string(r.ports_cut) +
                               " switch port(s) where another host is cabled drop every SL"
                         : std::string());
  }
  if (kept.unknown > 0)
    line += "; " + std::to_string(kept.unknown) + " with no table known are left without routes";
  if (kept.repaired > 0)
    line += "; " + std::to_string(kept.repaired) +
            " LFT block(s) the switch check found rewritten get what this SM sent";
  return line;
}

int route_fabric(Plugin* plugin);

// OpenSM's sweeper calls this with its lock held: nothing may escape into OpenSM's C code,
// and nothing may hand a fabric with tenants to the next engine by accident.
int build_fwd_tables(void* context) {
  auto* plugin = static_cast<Plugin*>(context);
  if (plugin->lft_check) plugin->lft_check->routing_started();
  try {
    return route_fabric(plugin);
  } catch (const std::exception& e) {
    log_line(plugin->osm, OSM_LOG_ERROR,
             std::string("failing closed: routing failed in the plugin: ") + e.what() +
                 "; every switch keeps the tables it holds");
  } catch (...) {
    log_line(plugin->osm, OSM_LOG_ERROR,
             "failing closed: routing failed in the plugin; every switch keeps the tables it "
             "holds");
  }
  try {
    std::vector<osm_switch_t*> switches;
    cl_qmap_t* tbl = &plugin->osm->subn.sw_guid_tbl;
    for (cl_map_item_t* it = cl_qmap_head(tbl); it != cl_qmap_end(tbl); it = cl_qmap_next(it))
      switches.push_back(reinterpret_cast<osm_switch_t*>(it));
    std::string why;
    std::shared_ptr<const laas::routing::SavedTables> saved;
    for (osm_switch_t* sw : switches)
      if (sw && sw->lft && !holds_routes(sw)) {
        saved = plugin->engine->sent_tables(&why);
        break;
      }
    if (!saved && !why.empty())
      log_line(plugin->osm, OSM_LOG_ERROR,
               "OpenSM has sent no table since its start and the tables last sent cannot be "
               "read (" +
                   why + ")");
    log_line(plugin->osm, OSM_LOG_ERROR,
             kept_line(keep_switch_tables(plugin, switches, saved.get())));
    plugin->engine->service().set_fail_closed("routing failed in the plugin (see OpenSM's log)");
  } catch (...) {
  }
  return 0;
}

// LMC > 0: each port's extra LIDs take its base LID's route (one path per destination keeps
// tenants apart); said once, not refused.
void note_lmc(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  if (osm->subn.opt.lmc > 0 && !plugin->lmc_logged) {
    log_line(osm, OSM_LOG_INFO,
             "LMC " + std::to_string(osm->subn.opt.lmc) +
                 ": every LID of a port is routed like its base LID (tenant isolation routes "
                 "one path per destination)");
    plugin->lmc_logged = true;
  }
}

// The run's own lines; false when it refuses to route (OpenSM falls back to the next engine).
bool log_outcome(osm_opensm_t* osm, const laas::core::RouteOutcome& outcome) {
  for (const auto& line : outcome.info) log_line(osm, OSM_LOG_INFO, line);
  for (const auto& line : outcome.warnings) log_line(osm, OSM_LOG_ERROR, line);
  if (!outcome.fail_closed.empty())
    log_line(osm, OSM_LOG_ERROR, "failing closed: " + outcome.fail_closed);
  if (outcome.ok) return true;
  const auto fallback = "; falling back to the next routing engine";
  if (outcome.not_fat_tree)
    log_line(osm, OSM_LOG_INFO, "fabric is not a fat-tree: " + outcome.error + fallback);
  else
    log_line(osm, OSM_LOG_ERROR, outcome.error + fallback);
  return false;
}

// A reroute-only sweep leaves multicast alone: ask for every group to be rebuilt under the new
// tenants (the sweeper does it once this sweep is over; a heavy sweep does it anyway).
void rebuild_multicast(osm_opensm_t* osm) {
  size_t groups = 0;
  const unsigned top = osm->subn.max_mcast_lid_ho - IB_LID_MCAST_START_HO;
  for (unsigned i = 0; i <= top; ++i)
    if (osm->subn.mboxes[i]) {
      osm_sm_reroute_mlid(&osm->sm, cl_hton16(static_cast<uint16_t>(i + IB_LID_MCAST_START_HO)));
      ++groups;
    }
  if (groups > 0)
    log_line(osm, OSM_LOG_INFO,
             "tenants changed: rebuilding " + std::to_string(groups) + " multicast group(s)");
}

// The computed tables into OpenSM's new_lft; returns the switches filled.
size_t fill_new_lfts(const std::vector<osm_switch_t*>& switches,
                     const std::vector<std::vector<std::uint8_t>>& tables) {
  size_t filled = 0;
  for (size_t i = 0; i < switches.size() && i < tables.size(); ++i) {
    osm_switch_t* sw = switches[i];
    const auto& table = tables[i];
    if (!sw || table.empty()) continue;
    const size_t top = std::min<size_t>(sw->max_lid_ho, table.size() - 1);
    for (size_t lid = 1; lid <= top && lid < sw->lft_size; ++lid) sw->new_lft[lid] = table[lid];
    ++filled;
  }
  return filled;
}

// What OpenSM will send (set_lft_block): every block of a switch that needs an update, else the
// blocks that differ from what the switch holds. A tenant change should send few.
struct BlocksToSend {
  size_t blocks = 0, switches = 0;
};
BlocksToSend blocks_to_send(osm_opensm_t* osm, const std::vector<osm_switch_t*>& switches) {
  BlocksToSend out;
  for (osm_switch_t* sw : switches) {
    if (!sw || !sw->new_lft || !sw->lft) continue;
    const size_t n =
        std::min<size_t>(sw->max_lid_ho / IB_SMP_DATA_SIZE + 1, sw->lft_size / IB_SMP_DATA_SIZE);
    const bool all = sw->need_update || osm->subn.need_update;
    size_t here = 0;
    for (size_t b = 0; b < n; ++b)
      if (all || std::memcmp(sw->new_lft + b * IB_SMP_DATA_SIZE, sw->lft + b * IB_SMP_DATA_SIZE,
                             IB_SMP_DATA_SIZE) != 0)
        ++here;
    out.blocks += here;
    out.switches += here > 0;
  }
  return out;
}

// The tables go to the state directory's worker (handed over, not copied): a later start that
// must fail closed gives them back to the switches.
void hand_over_sent_tables(Plugin* plugin, const Fabric& fabric,
                           std::vector<std::vector<std::uint8_t>> tables) {
  std::vector<laas::topology::Guid> switch_guids(fabric.nodes.size(), 0);
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    if (fabric.nodes[i].is_switch) switch_guids[i] = fabric.nodes[i].guid;
  plugin->engine->keep_sent_tables(lid_owners(plugin->osm), std::move(switch_guids),
                                   std::move(tables), plugin->sl2vl);
}

int route_fabric(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  note_lmc(plugin);
  using ms = std::chrono::duration<double, std::milli>;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<osm_switch_t*> switches;
  laas::core::FabricSnapshot snap;
  snap.fabric = snapshot(osm, &switches);
  const Fabric& fabric = snap.fabric;
  plugin->sms->refresh_locked(/*routing=*/true);
  snap.sm_port_guid = cl_ntoh64(osm->subn.sm_port_guid);
  snap.sm_ports = plugin->sms->ports();
  snap.with_sl2vl = osm->subn.opt.qos;
  snap.lmc = osm->subn.opt.lmc;
  const double ms_snapshot = ms(std::chrono::steady_clock::now() - t0).count();
  auto outcome = plugin->engine->route(snap);
  if (outcome.took_over) {
    plugin->took_over_pending = true;
    plugin->took_over_run_start = t0;
    plugin->took_over_last_standby = plugin->sms->last_not_master();
  }
  const auto t_fill = std::chrono::steady_clock::now();
  if (!log_outcome(osm, outcome)) return -1;
  if (outcome.keep_switch_tables) {
    // The SL2VL drops of the last good run stay too (plugin->sl2vl is left as it was).
    log_line(osm, OSM_LOG_ERROR,
             kept_line(keep_switch_tables(plugin, switches, outcome.saved_tables.get())));
    return 0;
  }
  if (outcome.multicast_changed) rebuild_multicast(osm);
  check_qos(plugin);
  plugin->sl2vl = std::make_shared<const laas::routing::Sl2VlTables>(std::move(outcome.sl2vl));
  plugin->node_of_guid.clear();
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    if (fabric.nodes[i].is_switch) plugin->node_of_guid[fabric.nodes[i].guid] = static_cast<int>(i);
  const size_t filled = fill_new_lfts(switches, outcome.tables);
  if (plugin->lft_check) plugin->lft_check->tables_computed();
  const auto sent = blocks_to_send(osm, switches);
  const auto t_end = std::chrono::steady_clock::now();
  char timing[400];
  std::snprintf(timing, sizeof timing,
                "routing done in %.1f ms (snapshot %.1f, recognize %.1f, place %.1f, compute %.1f, "
                "tables %.1f, save %.1f, fill %.1f) on %zu switches; %zu LFT blocks to send to %zu "
                "switches",
                ms(t_end - t0).count(), ms_snapshot, outcome.ms_recognize, outcome.ms_place,
                outcome.ms_compute, outcome.ms_tables, outcome.ms_save, ms(t_end - t_fill).count(),
                filled, sent.blocks, sent.switches);
  log_line(osm, OSM_LOG_INFO, timing);
  plugin->engine->record_routing_run(ms(t_end - t0).count() / 1000.0,
                                     static_cast<long>(sent.blocks));
  hand_over_sent_tables(plugin, fabric, std::move(outcome.tables));
  return 0;
}

// OpenSM calls this for every multicast group it (re)builds -- on joins, leaves and sweeps --
// with osm->lock held, after clearing the group's MLID on every switch: set the MLID's ports
// in each switch's mcast_tbl; OpenSM then sends the changed MFT blocks. A group whose members
// are one tenant's hosts stays on that tenant's links (routing/multicast.h).
ib_api_status_t build_stree(Plugin* plugin, osm_mgrp_box_t* mbox);

ib_api_status_t mcast_build_stree(void* context, osm_mgrp_box_t* mbox) {
  auto* plugin = static_cast<Plugin*>(context);
  try {
    return build_stree(plugin, mbox);
  } catch (const std::exception& e) {
    log_line(plugin->osm, OSM_LOG_ERROR,
             std::string("multicast group not built: ") + e.what() + "; it gets no tree");
  } catch (...) {
    log_line(plugin->osm, OSM_LOG_ERROR, "multicast group not built; it gets no tree");
  }
  return IB_ERROR;
}

ib_api_status_t build_stree(Plugin* plugin, osm_mgrp_box_t* mbox) {
  osm_opensm_t* osm = plugin->osm;
  const auto members = members_of(mbox);
  const auto out = plugin->engine->multicast_tree(members, mbox->mlid);
  char head[64];
  std::snprintf(head, sizeof head, "multicast MLID 0x%04X: ", mbox->mlid);
  for (const auto& w : out.warnings) log_line(osm, OSM_LOG_ERROR, head + w);
  if (!out.ok) {
    log_line(osm, OSM_LOG_ERROR, head + out.error + "; the group gets no tree");
    return IB_ERROR;
  }
  size_t switches = 0;
  for (const auto& [guid, ports] : out.rows) {
    osm_switch_t* sw = osm_get_switch_by_guid(&osm->subn, cl_hton64(guid));
    if (!sw) continue;   // gone since the last routing run: the next sweep re-routes
    for (int p : ports)  // a port beyond the switch would write past its mask table
      if (p >= 0 && p < sw->num_ports)
        osm_mcast_tbl_set(&sw->mcast_tbl, mbox->mlid, static_cast<uint8_t>(p));
    ++switches;
  }
  log_line(osm, OSM_LOG_INFO,
           head + std::to_string(members.size()) + " member(s), " +
               (members.size() < 2 ? "no tree needed" : out.group) + ", " +
               std::to_string(switches) + " switch(es)");
  return IB_SUCCESS;
}

// OpenSM's QoS manager (qos TRUE) asks for every switch output port and input port; CA ports
// come as (0, 0) and keep OpenSM's table. A dropped pair gets VL15 for every SL.
void update_sl2vl(void* context, osm_physp_t* port, uint8_t in_port, uint8_t out_port,
                  ib_slvl_table_t* table) {
  auto* plugin = static_cast<Plugin*>(context);
  osm_node_t* node = osm_physp_get_node_ptr(port);
  if (!node || osm_node_get_type(node) != IB_NODE_TYPE_SWITCH) return;
  auto it = plugin->node_of_guid.find(cl_ntoh64(osm_node_get_node_guid(node)));
  if (!plugin->sl2vl || it == plugin->node_of_guid.end() ||
      static_cast<size_t>(it->second) >= plugin->sl2vl->drops.size())
    return;
  if (plugin->sl2vl->mask(it->second, in_port, out_port) != laas::routing::kAllSls) return;
  for (uint8_t sl = 0; sl < 16; ++sl) ib_slvl_table_set(table, sl, laas::routing::kDropVl);
}

void destroy_engine(void* /*context*/) {}

int setup_engine(osm_routing_engine_t* engine, osm_opensm_t* /*osm*/) {
  engine->build_lid_matrices = build_lid_matrices;
  engine->ucast_build_fwd_tables = build_fwd_tables;
  engine->mcast_build_stree = mcast_build_stree;
  engine->update_sl2vl = update_sl2vl;
  engine->destroy = destroy_engine;
  return 0;
}

// Every tick: refreshes what this SM knows of the subnet managers, probes the state directory,
// and, while it is not the master, follows the shared tenant state (managed partitions.conf). With
// tenants_poll_ms > 0 it also watches tenants.yaml and asks OpenSM for a re-route when it changed.
void watch(Plugin* plugin) {
  const int poll = plugin->engine->config().tenants_poll_ms;
  const int period = poll > 0 ? std::min(poll, 1000) : 1000;
  std::unique_lock<std::mutex> lock(plugin->mu);
  while (!plugin->stopping) {
    plugin->cv.wait_for(lock, std::chrono::milliseconds(period));
    if (plugin->stopping) break;
    lock.unlock();
    plugin->sms->note_state();
    plugin->sms->refresh();
    // Who is master, checked at every look: OpenSM hands the fabric to an SM that outranks
    // ours in its election before any routing run could notice.
    plugin->engine->service().note_fabric_sms(plugin->sms->role(), plugin->sms->seen());
    // A look at state.json on the state directory's worker: another SM's write is seen by the
    // next routing run, and a directory that stopped answering is noticed (status, metrics,
    // changes refused) even when nothing else touches it.
    plugin->engine->service().probe_state_dir();
    plugin->engine->service().follow_shared_state();
    lock.lock();
    if (plugin->stopping) break;
    if (poll > 0 && plugin->engine->claim_tenants_change()) {
      log_line(plugin->osm, OSM_LOG_INFO, "tenants file changed; requesting a re-route");
      request_reroute(plugin->osm);
    }
  }
}

void* start(osm_opensm_t* osm);

// OpenSM's loader: nothing may escape into its C code (a thread that cannot be created, an
// allocation that fails). Without the plugin OpenSM routes with its next engine: said loudly.
void* create(osm_opensm_t* osm) {
  try {
    return start(osm);
  } catch (const std::exception& e) {
    log_line(osm, OSM_LOG_ERROR, std::string("cannot start: ") + e.what());
  } catch (...) {
    log_line(osm, OSM_LOG_ERROR, "cannot start: an unknown exception");
  }
  return nullptr;
}

// laas.yaml as event_plugin_options names it, checked, each problem logged. A wrong value
// never means defaults: the engine registers anyway and routes closed (the tenants last
// routed, partitions.conf and the state left alone, changes refused).
Config read_config(osm_opensm_t* osm) {
  const char* options = osm->subn.opt.event_plugin_options;
  const std::string path = options ? options : "";
  Config config = laas::core::check_config(path);
  if (path.empty())
    log_line(osm, OSM_LOG_INFO, "no event_plugin_options: using built-in defaults");
  else if (config.problems.empty())
    log_line(osm, OSM_LOG_INFO, "configuration read from " + path);
  for (const auto& problem : config.problems)
    log_line(osm, OSM_LOG_ERROR,
             "laas.yaml is invalid: " + problem +
                 (config.state_dir_unknown
                      ? "; routing closed (nothing read, nothing rewritten, changes refused) "
                      : "; routing closed (tenants last routed, nothing rewritten, changes "
                        "refused) ") +
                 "until it is fixed and OpenSM restarted");
  if (config.state_dir_unknown)
    log_line(osm, OSM_LOG_ERROR,
             "state directory not known (laas.yaml cannot be read as a whole, or its state_dir "
             "is wrong): nothing is read from " +
                 config.state_dir +
                 "; every host is routed as a free host (reaching management only) until it is "
                 "fixed and OpenSM restarted");
  else
    log_line(osm, OSM_LOG_INFO,
             "state directory " + config.state_dir + ", placer " + config.placer);
  if (config.manage_partitions) {
    const char* file = osm->subn.opt.partition_config_file;
    config.managed_partitions_file = file ? file : "";
    if (config.managed_partitions_file.empty()) {
      log_line(osm, OSM_LOG_ERROR, "manage_partitions: OpenSM has no partition_config_file");
      config.manage_partitions = false;
    } else {
      log_line(osm, OSM_LOG_INFO, "managing partitions in " + config.managed_partitions_file);
    }
  }
  return config;
}

// What the tenant service asks of OpenSM: a re-route, the SM's role (only the master changes
// tenants; every SM reads them from the shared state), a live audit, and the application of a
// changed partitions.conf -- after the re-route's tables (apply_partitions), or read by OpenSM
// at the start of a heavy sweep (LAAS_PARTITIONS_HEAVY_SWEEP=1, or an OpenSM without the
// partition manager's symbol).
void connect_service(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  plugin->sms = std::make_unique<laas::plugin::SubnetManagers>(osm);
  const char* heavy = std::getenv("LAAS_PARTITIONS_HEAVY_SWEEP");
  if (!(heavy && *heavy && std::strcmp(heavy, "0") != 0))
    plugin->pkey_mgr =
        reinterpret_cast<int (*)(osm_opensm_t*)>(dlsym(RTLD_DEFAULT, "osm_pkey_mgr_process"));
  plugin->lft_check = std::make_unique<laas::plugin::LftCheck>(
      osm, plugin->engine->config().switch_check_interval_s,
      [osm](bool error, const std::string& line) {
        log_line(osm, error ? OSM_LOG_ERROR : OSM_LOG_INFO, line);
      },
      [osm](bool heavy) {
        if (!heavy) return request_reroute(osm);
        osm->subn.force_heavy_sweep = TRUE;
        osm_sm_sweep(&osm->sm);
      },
      [plugin](std::uint64_t guid, int in, int out) {  // OpenSM's lock held
        auto it = plugin->node_of_guid.find(guid);
        return plugin->sl2vl && it != plugin->node_of_guid.end() &&
               static_cast<size_t>(it->second) < plugin->sl2vl->drops.size() &&
               plugin->sl2vl->mask(it->second, in, out) == laas::routing::kAllSls;
      });
  laas::core::AdapterHooks hooks;
  hooks.reroute = [osm] { request_reroute(osm); };
  hooks.role = [plugin] { return plugin->sms->role(); };
  hooks.partitions_changed = [plugin] {
    osm_opensm_t* o = plugin->osm;
    if (plugin->pkey_mgr) {
      plugin->partitions_pending = true;
      request_reroute(o);
      return;
    }
    o->subn.force_heavy_sweep = TRUE;
    osm_sm_sweep(&o->sm);
  };
  hooks.audit_live = [plugin] { return audit_live(plugin); };
  hooks.switch_check = plugin->lft_check->bookkeeping();
  plugin->engine->connect(std::move(hooks));
}

// The control socket; without it OpenSM and the routing go on (tenants.yaml still works).
void start_socket(Plugin* plugin, const Config& config) {
  if (config.socket.empty()) return;
  laas::service::SocketConfig sc;
  sc.path = config.socket;
  sc.group = config.socket_group;
  sc.read_group = config.socket_read_group;
  plugin->socket = std::make_unique<laas::service::SocketServer>(sc, plugin->engine->service(),
                                                                 logger_for(plugin->osm));
  try {
    plugin->socket->start();
  } catch (const std::exception& e) {
    log_line(plugin->osm, OSM_LOG_ERROR,
             std::string(e.what()) + "; continuing without the control socket");
    plugin->socket.reset();
  }
}

void start_watcher(Plugin* plugin) {
  try {
    plugin->watcher = std::thread(watch, plugin);
  } catch (const std::system_error& e) {
    log_line(plugin->osm, OSM_LOG_ERROR,
             std::string("cannot start the watcher thread: ") + e.what() +
                 "; continuing without it (tenants.yaml is read at routing runs only, and a "
                 "standby SM does not follow the shared state until it is master)");
  }
}

void start_switch_check(Plugin* plugin) {
  const int interval = plugin->engine->config().switch_check_interval_s;
  try {
    plugin->lft_check->start();
    if (interval <= 0)
      log_line(plugin->osm, OSM_LOG_INFO,
               "switch check off (switch_check_interval 0): tables rewritten behind OpenSM's "
               "back are found only by laasctl audit --from-switches");
    else
      log_line(plugin->osm, OSM_LOG_INFO,
               "switch check: every LFT block and port table read back every " +
                   std::to_string(interval) + " s");
  } catch (const std::system_error& e) {
    log_line(plugin->osm, OSM_LOG_ERROR,
             std::string("cannot start the switch check's thread: ") + e.what() +
                 "; LFTs rewritten behind OpenSM's back are not found");
  }
}

void* start(osm_opensm_t* osm) {
  auto plugin = std::make_unique<Plugin>();
  plugin->osm = osm;
  const Config config = read_config(osm);
  try {
    plugin->engine = std::make_unique<Controller>(config, logger_for(osm));
  } catch (const std::exception& e) {
    // Only the state directory itself can make this fail (the configuration was checked).
    log_line(osm, OSM_LOG_ERROR, std::string("cannot start: ") + e.what());
    return nullptr;
  }
  if (!plugin->engine->state_error().empty())
    log_line(osm, OSM_LOG_ERROR,
             "tenant state unusable: " + plugin->engine->state_error() +
                 "; tenants will not be routed until it is repaired or removed");
  connect_service(plugin.get());
  external_routing_engine_module_t module = {"laas", setup_engine, plugin.get()};
  if (osm_register_external_routing_engine(osm, &module, plugin.get()) != CL_SUCCESS) {
    log_line(osm, OSM_LOG_ERROR, "cannot register the routing engine 'laas'");
    return nullptr;
  }
  log_line(osm, OSM_LOG_INFO, "routing engine 'laas' registered");
  check_qos(plugin.get());
  start_socket(plugin.get(), config);
  // The engine is registered with OpenSM by now: whatever fails here, the plugin must live.
  start_watcher(plugin.get());
  start_switch_check(plugin.get());
  return plugin.release();
}

void remove_plugin(void* data) {
  auto* plugin = static_cast<Plugin*>(data);
  if (!plugin) return;
  {
    std::lock_guard<std::mutex> lock(plugin->mu);
    plugin->stopping = true;
  }
  plugin->cv.notify_all();
  if (plugin->watcher.joinable()) plugin->watcher.join();
  if (plugin->lft_check) plugin->lft_check->stop();
  if (plugin->socket) plugin->socket->stop();
  delete plugin;
}

// OpenSM marks a switch it discovers for a full update (need_update 2): every LFT block is
// sent, whatever the switch holds. It lowers the mark only in a later heavy sweep, so until
// then each re-route (a tenant change without a partitions change) re-sends every block of
// every switch -- 337,000 blocks at 11,664 hosts. At SUBNET UP without errors, OpenSM has
// written every block of such a switch and holds what it wrote (a block whose Set failed is
// zeroed in its copy and differs next time), so only changed blocks need sending from then on.
// Called from the sweeper thread, outside OpenSM's lock.
void settle_new_switches(osm_opensm_t* osm) {
  size_t settled = 0;
  cl_plock_excl_acquire(&osm->lock);
  // (The unicast cache reads the mark as "no cached table": leave it alone there.)
  if (!osm->subn.subnet_initialization_error && !osm->subn.opt.use_ucast_cache) {
    cl_qmap_t* tbl = &osm->subn.sw_guid_tbl;
    for (cl_map_item_t* it = cl_qmap_head(tbl); it != cl_qmap_end(tbl); it = cl_qmap_next(it)) {
      auto* sw = reinterpret_cast<osm_switch_t*>(it);
      if (sw->need_update == 2 && sw->lft && sw->new_lft) {
        sw->need_update = 0;
        ++settled;
      }
    }
  }
  cl_plock_release(&osm->lock);
  if (settled > 0)
    log_line(osm, OSM_LOG_INFO,
             std::to_string(settled) +
                 " switch(es) fully programmed: later re-routes send only changed LFT blocks");
}

// partitions.conf changed (a tenant change): OpenSM 3.3.23 reads it only in a heavy sweep,
// which rediscovers the whole fabric first -- most of a tenant change's time. Its partition
// manager (osm_pkey_mgr_process, exported by opensm but in no installed header: looked up at
// start) re-reads the file and sets every port's P_Key table by itself, taking OpenSM's lock,
// so the plugin runs it once the re-route's tables are on the switches and waits for the
// switches' and hosts' answers, as OpenSM's sweep does, before the change is reported routed.
// Called from the sweeper thread (UCAST_ROUTING_DONE), outside OpenSM's lock.
// Returns what failed ("" when the P_Key tables were set and answered in time).
std::string apply_partitions(Plugin* plugin) {
  osm_opensm_t* osm = plugin->osm;
  const auto t0 = std::chrono::steady_clock::now();
  if (plugin->pkey_mgr(osm) != 0) {
    log_line(osm, OSM_LOG_ERROR, "partitions.conf not applied; asking for a heavy sweep");
    osm->subn.force_heavy_sweep = TRUE;
    osm_sm_sweep(&osm->sm);
    return "OpenSM's partition manager could not apply partitions.conf to the P_Key tables";
  }
  const auto deadline = t0 + std::chrono::seconds(30);
  while (osm->stats.qp0_mads_outstanding > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  char line[160];
  std::snprintf(
      line, sizeof line,
      "partitions.conf applied to the P_Key tables in %.1f ms (no heavy sweep)%s",
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
      osm->stats.qp0_mads_outstanding > 0 ? "; some answers still outstanding after 30 s" : "");
  log_line(osm, OSM_LOG_INFO, line);
  return osm->stats.qp0_mads_outstanding > 0
             ? "the P_Key tables' answers were still outstanding after 30 s"
             : "";
}

// The tables of the run that took the tenant state over are in the switches: say how long
// this SM took from the start of that run, and from when it was last seen standby (the
// master's death is noticed polling_retry_number x sminfo_polling_timeout after it happened).
// Until then the switches kept the old master's tables, tenants' isolation included; the gap
// is time without a subnet manager, not time without isolation, when the tables are identical.
void report_failover(Plugin* plugin) {
  using ms = std::chrono::duration<double, std::milli>;
  const auto now = std::chrono::steady_clock::now();
  const auto standby = plugin->took_over_last_standby;
  const auto tenants = plugin->engine->service().tenant_names().size();
  char line[400];
  if (standby.time_since_epoch().count() == 0) {
    std::snprintf(line, sizeof line,
                  "started as master: tables with %zu tenant(s) applied %.0f ms after this SM "
                  "began routing (it was never seen standby)",
                  tenants, ms(now - plugin->took_over_run_start).count());
  } else {
    std::snprintf(line, sizeof line,
                  "failover: tables with %zu tenant(s) applied %.0f ms after this SM began "
                  "routing as master, %.0f ms after it was last seen standby; a standby declares "
                  "its master dead %d-%d ms after the master's last answer",
                  tenants, ms(now - plugin->took_over_run_start).count(), ms(now - standby).count(),
                  plugin->sms->detection_ms(1), plugin->sms->detection_ms(2));
  }
  log_line(plugin->osm, OSM_LOG_INFO, line);
}

// OpenSM reports UCAST_ROUTING_DONE once the new tables have reached the switches: the line
// tests and operators wait for before reading tables back.
void handle_event(Plugin* plugin, osm_epi_event_id_t event, void* event_data);

void report(void* data, osm_epi_event_id_t event, void* event_data) {
  auto* plugin = static_cast<Plugin*>(data);
  try {
    handle_event(plugin, event, event_data);
  } catch (const std::exception& e) {
    log_line(plugin->osm, OSM_LOG_ERROR, std::string("event not handled: ") + e.what());
  } catch (...) {
    log_line(plugin->osm, OSM_LOG_ERROR, "event not handled: an unknown exception");
  }
}

void handle_event(Plugin* plugin, osm_epi_event_id_t event, void* event_data) {
  if (event == OSM_EVENT_ID_UCAST_ROUTING_DONE) {
    std::string failure;
    if (plugin->pkey_mgr && plugin->partitions_pending.exchange(false))
      failure = apply_partitions(plugin);
    if (plugin->osm->subn.subnet_initialization_error)
      failure += std::string(failure.empty() ? "" : "; ") +
                 "OpenSM saw errors while programming the switches (see its log)";
    plugin->engine->on_routing_done(failure);
    if (plugin->lft_check) plugin->lft_check->sweep_done();
    log_line(plugin->osm, OSM_LOG_INFO, "forwarding tables applied to the switches");
    if (plugin->took_over_pending) {
      plugin->took_over_pending = false;
      report_failover(plugin);
    }
  } else if (event == OSM_EVENT_ID_STATE_CHANGE || event == OSM_EVENT_ID_HEAVY_SWEEP_DONE) {
    if (event == OSM_EVENT_ID_HEAVY_SWEEP_DONE && plugin->lft_check)
      plugin->lft_check->sweep_done();
    // This SM's role may have changed (standby, discovering) or a sweep found another SM:
    // the watcher looks now rather than at its next tick.
    plugin->cv.notify_all();
  } else if (event == OSM_EVENT_ID_HEAVY_SWEEP_START && plugin->lft_check) {
    plugin->lft_check->sweep_started();
  } else if (event == OSM_EVENT_ID_LFT_CHANGE && event_data && plugin->lft_check) {
    // OpenSM's LFT receiver stored a block a switch answered (a Get of the switch check, or a
    // Set's answer, which the check ignores), its lock held: compare, never take it here.
    const auto* lft = static_cast<const osm_epi_lft_change_event_t*>(event_data);
    if (lft->flags & LFT_CHANGED_BLOCK) plugin->lft_check->on_block(lft->p_sw, lft->block_num);
  } else if (event == OSM_EVENT_ID_SUBNET_UP) {
    plugin->cv.notify_all();  // master now, or still: the watcher looks at once
    log_line(plugin->osm, OSM_LOG_INFO, "subnet up");
    if (plugin->lft_check) plugin->lft_check->sweep_done();
    settle_new_switches(plugin->osm);
  } else if (event == OSM_EVENT_ID_PORT_ERRORS && event_data) {
    // The performance manager's reading of one port (perfmgr TRUE), differences since the
    // last one, GUID in host order: the health of the tenants' links.
    const auto* pe = static_cast<const osm_epi_pe_event_t*>(event_data);
    laas::service::PortCounters d;
    d.symbol_errors = pe->symbol_err_cnt;
    d.link_error_recovery = pe->link_err_recover;
    d.link_downed = pe->link_downed;
    d.rcv_errors = pe->rcv_err;
    d.rcv_remote_physical_errors = pe->rcv_rem_phys_err;
    d.local_link_integrity_errors = pe->link_integrity;
    d.excessive_buffer_overruns = pe->buffer_overrun;
    d.xmit_discards = pe->xmit_discards;
    d.xmit_wait = pe->xmit_wait;
    plugin->engine->service().on_port_counters(pe->port_id.node_guid, pe->port_id.port_num, d);
  }
}

}  // namespace

extern "C" {
#if OSM_EVENT_PLUGIN_INTERFACE_VER != 2
#error OpenSM plugin interface version mismatch
#endif
__attribute__((visibility("default")))
osm_event_plugin_t osm_event_plugin = {OSM_VERSION, create, remove_plugin, report};
}
