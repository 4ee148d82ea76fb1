#include "opensm_plugin/live_audit.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <thread>
#include <unordered_map>
#include <vector>

#include "opensm_plugin/fabric_snapshot.h"
#include "opensm_plugin/multicast.h"

namespace laas::plugin {
namespace {

using topology::Fabric;

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

}  // namespace

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

}  // namespace laas::plugin
