#include "topology/embedding.h"

namespace laas::topology {

std::pair<Fabric, Embedding> build_model_fabric(const FatTree& tree) {
  Fabric fabric;
  Embedding emb;
  Lid next_lid = 1;
  // Switch GUIDs 0x20..., host GUIDs 0x10...: the scheme ibsim uses, so dumps look familiar.
  emb.switch_node.resize(tree.height());
  emb.port_map.resize(tree.height());
  emb.switch_guid.resize(tree.height());
  for (int level = 1; level <= tree.height(); ++level) {
    for (int index = 0; index < tree.num_switches(level); ++index) {
      FabricNode node;
      node.is_switch = true;
      node.guid = 0x200000 + static_cast<Guid>(fabric.nodes.size());
      node.port_guid = node.guid;
      emb.switch_guid[level - 1].push_back(node.guid);
      node.name = tree.switch_name(level, index);
      node.ports.resize(tree.num_ports(level) + 1);
      node.ports[0].lid = next_lid++;
      emb.switch_node[level - 1].push_back(fabric.add_node(std::move(node)));
      std::vector<int> ports(tree.num_ports(level) + 1);
      for (int p = 0; p <= tree.num_ports(level); ++p) ports[p] = p;
      emb.port_map[level - 1].push_back(std::move(ports));
    }
  }
  for (HostId h = 0; h < tree.num_hosts(); ++h) {
    FabricNode node;
    node.guid = 0x100000 + static_cast<Guid>(h) * 2;
    node.port_guid = node.guid + 1;
    node.name = tree.host_name(h);
    node.ports.resize(2);
    node.ports[1].lid = next_lid++;
    const int id = fabric.add_node(std::move(node));
    emb.host_node.push_back(id);
    emb.host_port.push_back(1);
    const PortRef leaf = tree.host_peer(h);
    fabric.connect(id, 1, emb.switch_node[0][leaf.index], leaf.port);
  }
  for (LinkId l = 0; l < tree.total_links(); ++l) {
    const PortRef lo = tree.link_lower(l);
    const PortRef up = tree.link_upper(l);
    fabric.connect(emb.switch_node[lo.level - 1][lo.index], lo.port,
                   emb.switch_node[up.level - 1][up.index], up.port);
  }
  emb.node_model.assign(fabric.nodes.size(), {-1, -1});
  for (HostId h = 0; h < tree.num_hosts(); ++h) emb.node_model[emb.host_node[h]] = {0, h};
  for (int level = 1; level <= tree.height(); ++level)
    for (int i = 0; i < tree.num_switches(level); ++i)
      emb.node_model[emb.switch_node[level - 1][i]] = {level, i};
  return {std::move(fabric), std::move(emb)};
}

}  // namespace laas::topology
