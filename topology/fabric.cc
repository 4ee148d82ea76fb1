#include "topology/fabric.h"

namespace laas::topology {

int split_multiport_cas(Fabric& fabric) {
  int split = 0;
  const int count = static_cast<int>(fabric.nodes.size());
  for (int n = 0; n < count; ++n) {
    if (fabric.nodes[n].is_switch) continue;
    std::vector<int> cabled;
    for (int p = 1; p < static_cast<int>(fabric.nodes[n].ports.size()); ++p)
      if (fabric.nodes[n].ports[p].peer_node >= 0) cabled.push_back(p);
    if (cabled.size() < 2) continue;
    ++split;
    const FabricNode whole = fabric.nodes[n];
    auto port_guid = [&](int p) {
      // A net file gives none (a live fabric always does): one made of the node GUID and the
      // port number, clear of the readers' own numbering of nodes.
      return whole.ports[p].guid ? whole.ports[p].guid : whole.guid + (static_cast<Guid>(p) << 32);
    };
    for (size_t i = 0; i < cabled.size(); ++i) {
      const int p = cabled[i];
      FabricNode part;
      part.name = whole.name;
      part.guid = part.port_guid = port_guid(p);
      part.ca_guid = whole.guid;
      part.ports.resize(whole.ports.size());
      part.ports[p].lid = whole.ports[p].lid;
      part.ports[p].guid = part.port_guid;
      // The first port keeps the CA's slot in the node list; the others are appended.
      const int at = i == 0 ? n : static_cast<int>(fabric.nodes.size());
      if (i == 0)
        fabric.nodes[n] = std::move(part);
      else
        fabric.nodes.push_back(std::move(part));
      fabric.connect(at, p, whole.ports[p].peer_node, whole.ports[p].peer_port);
    }
  }
  return split;
}

bool operator==(const FabricPort& a, const FabricPort& b) {
  return a.peer_node == b.peer_node && a.peer_port == b.peer_port && a.lid == b.lid &&
         a.guid == b.guid;
}

bool operator==(const FabricNode& a, const FabricNode& b) {
  return a.guid == b.guid && a.port_guid == b.port_guid && a.is_switch == b.is_switch &&
         a.ca_guid == b.ca_guid && a.name == b.name && a.ports == b.ports;
}

bool operator==(const Fabric& a, const Fabric& b) { return a.nodes == b.nodes; }

}  // namespace laas::topology
