#include "opensm_plugin/fabric_snapshot.h"

#include <cstring>
#include <unordered_map>
#include <utility>

namespace laas::plugin {

using topology::Fabric;
using topology::FabricNode;

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

}  // namespace laas::plugin
