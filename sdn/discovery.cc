#include "sdn/discovery.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <numeric>

namespace laas::sdn {

namespace {

std::string where(const DiscoveredNode& node, int port) {
  char text[64];
  std::snprintf(text, sizeof text, "node 0x%016" PRIx64 " port %d",
                static_cast<std::uint64_t>(node.guid), port);
  return text;
}

std::string default_name(const DiscoveredNode& node) {
  char text[40];
  std::snprintf(text, sizeof text, "%c-%016" PRIx64, node.type == NodeType::kSwitch ? 'S' : 'H',
                static_cast<std::uint64_t>(node.guid));
  return text;
}

// The node's own fields and ports, cables left for later.
topology::FabricNode convert_node(const DiscoveredNode& d) {
  if (d.num_ports < 1 || d.num_ports > 254)
    throw DiscoveryError(where(d, 0) + ": port count " + std::to_string(d.num_ports) +
                         " is invalid");
  topology::FabricNode n;
  n.guid = d.guid;
  n.is_switch = d.type == NodeType::kSwitch;
  n.name = d.description.empty() ? default_name(d) : d.description;
  n.ports.resize(static_cast<std::size_t>(d.num_ports) + 1);
  for (const auto& p : d.ports) {
    if (p.number < 0 || p.number > d.num_ports || (p.number == 0 && !n.is_switch))
      throw DiscoveryError(where(d, p.number) + ": no such port");
    if (n.is_switch) {
      if (p.number == 0) {
        n.ports[0].lid = p.lid;
        n.port_guid = p.guid;
      }
      continue;
    }
    n.ports[p.number].lid = p.lid;
    n.ports[p.number].guid = p.guid;
  }
  if (n.is_switch && n.port_guid == 0) n.port_guid = n.guid;
  return n;
}

const DiscoveredPort* find_port(const DiscoveredNode& node, int number) {
  for (const auto& p : node.ports)
    if (p.number == number) return &p;
  return nullptr;
}

}  // namespace

topology::Fabric to_fabric(const Discovery& discovery) {
  const auto& nodes = discovery.nodes;
  std::vector<int> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const bool sa = nodes[a].type == NodeType::kSwitch, sb = nodes[b].type == NodeType::kSwitch;
    return sa != sb ? sa : nodes[a].guid < nodes[b].guid;
  });
  std::vector<int> index(nodes.size());
  topology::Fabric fabric;
  for (int i : order) index[i] = fabric.add_node(convert_node(nodes[i]));
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& p : nodes[i].ports) {
      if (p.peer < 0) continue;
      if (p.peer >= static_cast<int>(nodes.size()))
        throw DiscoveryError(where(nodes[i], p.number) + ": cabled to an unknown node");
      const DiscoveredPort* back = find_port(nodes[p.peer], p.peer_port);
      if (p.peer_port < 1 || !back || back->peer != static_cast<int>(i) ||
          back->peer_port != p.number)
        throw DiscoveryError(where(nodes[i], p.number) + ": its peer " +
                             where(nodes[p.peer], p.peer_port) + " does not name it back");
      fabric.connect(index[i], p.number, index[p.peer], p.peer_port);
    }
  }
  // A CA is known by its first cabled port's GUID, as read_ibnetdiscover keys it.
  for (auto& n : fabric.nodes) {
    if (n.is_switch) continue;
    for (const auto& p : n.ports)
      if (p.peer_node >= 0) {
        n.port_guid = p.guid;
        break;
      }
  }
  topology::split_multiport_cas(fabric);
  return fabric;
}

topology::Guid local_port_guid(const Discovery& discovery) {
  if (discovery.from_node < 0 || discovery.from_node >= static_cast<int>(discovery.nodes.size()))
    return 0;
  const auto* p = find_port(discovery.nodes[discovery.from_node], discovery.from_port);
  return p ? p->guid : 0;
}

}  // namespace laas::sdn
