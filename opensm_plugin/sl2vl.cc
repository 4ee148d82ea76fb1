#include "opensm_plugin/sl2vl.h"

#include <memory>
#include <utility>

namespace laas::plugin {

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

}  // namespace laas::plugin
