#include "service/topology_view.h"

#include <sstream>

namespace laas::service {

TopologyView::TopologyView(topology::FatTree t, topology::Fabric f, topology::Embedding e,
                           std::vector<topology::HostId> management)
    : tree(std::move(t)),
      fabric(std::move(f)),
      embedding(std::move(e)),
      management_hosts(std::move(management)) {
  std::ostringstream print;
  print << tree.spec().text();
  for (topology::HostId h = 0; h < tree.num_hosts(); ++h) {
    host_by_guid_[host_guid(h)] = h;
    host_by_name_[host_name(h)] = h;
    print << ' ' << std::hex << host_guid(h);
  }
  for (topology::LinkId l = 0; l < tree.total_links(); ++l) {
    const auto lo = tree.link_lower(l);
    const auto guid = switch_node(lo.level, lo.index).guid;
    link_by_port_[{guid, physical_port(lo.level, lo.index, lo.port)}] = l;
    print << ' ' << std::hex << guid << ':' << std::dec << lo.port;
  }
  fingerprint_ = print.str();
}

topology::Guid TopologyView::host_guid(topology::HostId host) const {
  const int node = embedding.host_node.at(host);
  return node < 0 ? 0 : fabric.nodes[node].port_guid;
}

std::string TopologyView::host_name(topology::HostId host) const {
  const int node = embedding.host_node.at(host);
  return node < 0 ? tree.host_name(host) : fabric.nodes[node].name;
}

topology::Lid TopologyView::host_lid(topology::HostId host) const {
  const int node = embedding.host_node.at(host);
  return node < 0 ? 0 : fabric.lid_of(node);
}

std::optional<topology::HostId> TopologyView::host_by_guid(topology::Guid port_guid) const {
  auto it = host_by_guid_.find(port_guid);
  if (it == host_by_guid_.end()) return std::nullopt;
  return it->second;
}

std::optional<topology::HostId> TopologyView::host_by_name(const std::string& name) const {
  auto it = host_by_name_.find(name);
  if (it == host_by_name_.end()) return std::nullopt;
  return it->second;
}

const topology::FabricNode& TopologyView::switch_node(int level, int index) const {
  return fabric.nodes[embedding.switch_node.at(level - 1).at(index)];
}

int TopologyView::physical_port(int level, int index, int model_port) const {
  return embedding.port_map.at(level - 1).at(index).at(model_port);
}

std::optional<topology::LinkId> TopologyView::link_by_port(topology::Guid switch_guid,
                                                           int port) const {
  auto it = link_by_port_.find({switch_guid, port});
  if (it == link_by_port_.end()) return std::nullopt;
  return it->second;
}

}  // namespace laas::service
