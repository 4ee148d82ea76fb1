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
  Lid lid = 0;  // a CA port's LID (switches carry theirs on port 0)
};

struct FabricNode {
  Guid guid = 0;       // node GUID
  Guid port_guid = 0;  // for a CA: the GUID of its cabled port; for a switch: port 0's
  std::string name;    // node description
  bool is_switch = false;
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

}  // namespace laas::topology
