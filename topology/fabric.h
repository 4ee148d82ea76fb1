// The fabric as discovered: a plain graph of nodes, ports and cables, with GUIDs, LIDs and names.
// It is what OpenSM's subnet (or an ibnetdiscover dump) is turned into at the edge, so that the
// rest of the project never sees OpenSM types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace laas::topology {

using Guid = std::uint64_t;
using Lid = std::uint16_t;

struct FabricPort {
  int peer_node = -1;  // index into Fabric::nodes, -1 when nothing is cabled
  int peer_port = 0;
  Lid lid = 0;    // a CA port's LID (switches carry theirs on port 0)
  Guid guid = 0;  // a CA port's GUID when the reader knows it (0: unknown)
};

// A CA node stands for one host port: a CA with several cabled ports (a dual-port HCA) is
// split into one node per cabled port by split_multiport_cas, each named like the CA (its
// server) and keyed by that port's GUID.
struct FabricNode {
  Guid guid = 0;       // node GUID (a port of a split multi-port CA: that port's GUID)
  Guid port_guid = 0;  // for a CA: the GUID of its cabled port; for a switch: port 0's
  std::string name;    // node description
  bool is_switch = false;
  Guid ca_guid = 0;  // a port of a split multi-port CA: that CA's node GUID (0: not split)
  std::vector<FabricPort> ports;  // index = port number; [0] is the switch management port
};

struct Fabric {
  std::vector<FabricNode> nodes;

  int add_node(FabricNode node) {
    nodes.push_back(std::move(node));
    return static_cast<int>(nodes.size()) - 1;
  }
  // Cables port a of node x to port b of node y (both directions).
  void connect(int x, int a, int y, int b) {
    auto grow = [](FabricNode& n, int port) {
      if (static_cast<int>(n.ports.size()) <= port) n.ports.resize(port + 1);
    };
    grow(nodes[x], a);
    grow(nodes[y], b);
    nodes[x].ports[a].peer_node = y;
    nodes[x].ports[a].peer_port = b;
    nodes[y].ports[b].peer_node = x;
    nodes[y].ports[b].peer_port = a;
  }
  // LID of a node's endpoint: a switch's port 0, a CA's first cabled port.
  Lid lid_of(int node) const {
    const auto& n = nodes[node];
    if (n.is_switch) return n.ports.empty() ? 0 : n.ports[0].lid;
    for (const auto& p : n.ports)
      if (p.peer_node >= 0) return p.lid;
    return 0;
  }
};

// Replaces every CA with several cabled ports by one node per cabled port (same name and
// port numbers, that port's GUID as node and port GUID, the other ports uncabled), so that the
// rest of the project sees one host per port: the ports of one server are grouped by name
// (topology/servers.h). CAs with one cabled port are left as they are. Returns how many CAs
// were split.
int split_multiport_cas(Fabric& fabric);

// Field for field: the same nodes in the same order, names, GUIDs, LIDs and cables.
bool operator==(const FabricPort& a, const FabricPort& b);
bool operator==(const FabricNode& a, const FabricNode& b);
bool operator==(const Fabric& a, const Fabric& b);
inline bool operator!=(const Fabric& a, const Fabric& b) { return !(a == b); }

}  // namespace laas::topology
