#include "service/topology_view.h"

#include <algorithm>
#include <sstream>

#include "service/state_store.h"

namespace laas::service {

TopologyView::TopologyView(topology::FatTree t, topology::Fabric f, topology::Embedding e,
                           std::vector<topology::HostId> management, topology::Layout known)
    : tree(std::move(t)),
      fabric(std::move(f)),
      embedding(std::move(e)),
      management_hosts(std::move(management)),
      known_(std::move(known)) {
  if (known_.spec != tree.spec().text()) known_ = {};
  // Stand-ins for absent switches: their recorded GUID and name.
  absent_switches_.resize(tree.height());
  for (int l = 1; l <= tree.height(); ++l)
    for (int i = 0; i < tree.num_switches(l); ++i) {
      topology::FabricNode n;
      n.is_switch = true;
      if (l - 1 < static_cast<int>(embedding.switch_guid.size()))
        n.guid = n.port_guid = embedding.switch_guid[l - 1].at(i);
      else if (embedding.switch_node[l - 1][i] >= 0)
        n.guid = n.port_guid = fabric.nodes[embedding.switch_node[l - 1][i]].guid;
      if (!known_.switches.empty()) n.name = known_.switches[l - 1][i].name;
      if (n.name.empty()) n.name = tree.switch_name(l, i);
      absent_switches_[l - 1].push_back(std::move(n));
    }
  std::ostringstream print;
  print << tree.spec().text() << " hosts";
  std::vector<topology::Guid> guids(tree.num_hosts());
  std::vector<bool> present(tree.num_hosts());
  for (topology::HostId h = 0; h < tree.num_hosts(); ++h) {
    const topology::Guid g = guids[h] = host_guid(h);
    present[h] = host_present(h);
    host_by_name_[recorded_name(h)] = h;
    host_by_slot_[slot_of_host(h)] = h;
    print << ' ' << std::hex << g << (host_present(h) ? "" : "-");
  }
  owners_ = routing::OwnerIndex(guids, present);
  print << " switches";
  for (int l = 1; l <= tree.height(); ++l)
    for (int i = 0; i < tree.num_switches(l); ++i)
      print << ' ' << std::hex << switch_node(l, i).guid << (switch_present(l, i) ? "" : "-");
  print << " links";
  for (topology::LinkId l = 0; l < tree.total_links(); ++l) {
    const auto lo = tree.link_lower(l);
    const auto guid = switch_node(lo.level, lo.index).guid;
    const int port = physical_port(lo.level, lo.index, lo.port);
    link_by_port_[{guid, port}] = l;
    print << ' ' << std::hex << guid << ':' << std::dec << port << (link_present(l) ? "" : "-");
  }
  fingerprint_ = print.str();
}

topology::Guid TopologyView::host_guid(topology::HostId host) const {
  const int node = embedding.host_node.at(host);
  if (node >= 0) return fabric.nodes[node].port_guid;
  return known_.hosts.empty() ? 0 : known_.hosts.at(host).port_guid;
}

std::string TopologyView::host_name(topology::HostId host) const {
  const int node = embedding.host_node.at(host);
  if (node >= 0) return fabric.nodes[node].name;
  if (!known_.hosts.empty() && !known_.hosts.at(host).name.empty()) return known_.hosts[host].name;
  return tree.host_name(host);
}

std::string TopologyView::recorded_name(topology::HostId host) const {
  const std::string name = topology::recorded_host_name(tree, embedding, fabric, &known_, host);
  return name.empty() ? host_name(host) : name;
}

topology::Lid TopologyView::host_lid(topology::HostId host) const {
  const int node = embedding.host_node.at(host);
  return node < 0 ? 0 : fabric.lid_of(node);
}

std::optional<topology::HostId> TopologyView::host_by_guid(topology::Guid port_guid) const {
  return owners_.host(port_guid);
}

std::optional<topology::HostId> TopologyView::host_by_name(const std::string& name) const {
  auto it = host_by_name_.find(name);
  if (it == host_by_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<topology::HostId> TopologyView::host_by_slot(topology::Guid leaf_guid,
                                                           int port) const {
  auto it = host_by_slot_.find({leaf_guid, port});
  if (it == host_by_slot_.end()) return std::nullopt;
  return it->second;
}

std::pair<topology::Guid, int> TopologyView::slot_of_host(topology::HostId host) const {
  const auto leaf = tree.host_peer(host);
  return {switch_node(1, leaf.index).guid, physical_port(1, leaf.index, leaf.port)};
}

const topology::FabricNode& TopologyView::switch_node(int level, int index) const {
  const int node = embedding.switch_node.at(level - 1).at(index);
  return node >= 0 ? fabric.nodes[node] : absent_switches_.at(level - 1).at(index);
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

bool TopologyView::link_present(topology::LinkId link) const {
  return !std::binary_search(embedding.missing_links.begin(), embedding.missing_links.end(), link);
}

// Host names (node descriptions) that several hosts share, with their GUIDs. A host's own
// root sets its node description, so a shared name cannot be trusted to mean one host.
std::map<std::string, std::vector<topology::Guid>> shared_host_names(const TopologyView& view) {
  std::map<std::string, std::vector<topology::Guid>> by_name;
  for (topology::HostId h = 0; h < view.tree.num_hosts(); ++h)
    if (const auto guid = view.host_guid(h)) by_name[view.recorded_name(h)].push_back(guid);
  for (auto it = by_name.begin(); it != by_name.end();)
    it = it->second.size() > 1 ? std::next(it) : by_name.erase(it);
  return by_name;
}

nlohmann::json outside_tree_json(const TopologyView& view) {
  const auto& emb = view.embedding;
  const auto& fabric = view.fabric;
  auto node_name = [&](int node) {
    return fabric.nodes[node].name.empty() ? guid_hex(fabric.nodes[node].guid)
                                           : fabric.nodes[node].name;
  };
  nlohmann::json attached = nlohmann::json::array();
  for (const auto& a : emb.attached) {
    const auto g = fabric.nodes[a.node].port_guid;
    const bool member =
        std::binary_search(view.outside_members.begin(), view.outside_members.end(), g);
    attached.push_back({{"name", node_name(a.node)},
                        {"guid", guid_hex(g)},
                        {"port", a.port},
                        {"switch", view.switch_node(a.level, a.index).name},
                        {"switch_port", a.switch_port},
                        {"level", a.level},
                        {"role", member ? "shared" : "unlisted"}});
  }
  nlohmann::json extra = nlohmann::json::array();
  for (const auto& c : emb.extra_cables)
    extra.push_back(node_name(c.node) + " port " + std::to_string(c.port) + " - " +
                    node_name(c.peer) + " port " + std::to_string(c.peer_port));
  return {{"attached_hosts", attached}, {"extra_cables", extra}};
}

}  // namespace laas::service
