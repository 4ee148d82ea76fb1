#include "sdn/ibnd_discover.h"

#include <infiniband/ibnetdisc.h>

#include <memory>
#include <stdexcept>
#include <unordered_map>

namespace laas::sdn {

namespace {

struct FabricDeleter {
  void operator()(ibnd_fabric_t* f) const { ibnd_destroy_fabric(f); }
};

NodeType type_of(const ibnd_node_t* node) {
  switch (node->type) {
    case IB_NODE_SWITCH:
      return NodeType::kSwitch;
    case IB_NODE_ROUTER:
      return NodeType::kRouter;
    default:
      return NodeType::kCa;
  }
}

// The records of one node; cables point at nodes by their index in `index`.
DiscoveredNode record(const ibnd_node_t* node,
                      const std::unordered_map<const ibnd_node_t*, int>& index) {
  DiscoveredNode d;
  d.type = type_of(node);
  d.guid = node->guid;
  d.description = node->nodedesc;
  d.num_ports = node->numports;
  char path[512];
  ib_portid_t from = node->path_portid;
  if (drpath2str(&from.drpath, path, sizeof path)) d.path = path;
  if (!node->ports) return d;
  for (int i = 0; i <= node->numports; ++i) {
    const ibnd_port_t* p = node->ports[i];
    if (!p) continue;
    DiscoveredPort port;
    port.number = p->portnum;
    port.guid = p->guid;
    port.lid = p->base_lid;
    if (p->remoteport && p->remoteport->node) {
      const auto it = index.find(p->remoteport->node);
      if (it != index.end()) {
        port.peer = it->second;
        port.peer_port = p->remoteport->portnum;
      }
    }
    d.ports.push_back(port);
  }
  return d;
}

}  // namespace

Discovery discover_fabric(const DiscoverOptions& options) {
  ibnd_config_t config{};
  config.timeout_ms = options.timeout_ms;
  config.retries = options.retries;
  std::string ca = options.ca;
  std::unique_ptr<ibnd_fabric_t, FabricDeleter> fabric(
      ibnd_discover_fabric(ca.empty() ? nullptr : ca.data(), options.port, nullptr, &config));
  if (!fabric)
    throw std::runtime_error("cannot discover the fabric through " +
                             (ca.empty() ? std::string("the first local adapter") : ca) +
                             " (libibnetdisc: see its messages above)");
  std::unordered_map<const ibnd_node_t*, int> index;
  int count = 0;
  for (const ibnd_node_t* n = fabric->nodes; n; n = n->next) index[n] = count++;
  Discovery out;
  for (const ibnd_node_t* n = fabric->nodes; n; n = n->next) out.nodes.push_back(record(n, index));
  if (fabric->from_node) {
    const auto it = index.find(fabric->from_node);
    if (it != index.end()) out.from_node = it->second;
    out.from_port = fabric->from_portnum;
  }
  return out;
}

}  // namespace laas::sdn
