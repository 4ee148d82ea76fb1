#include "topology/servers.h"

#include <algorithm>

namespace laas::topology {

bool Servers::multi_port() const {
  return std::any_of(ports.begin(), ports.end(), [](const auto& p) { return p.size() > 1; });
}

int Servers::find(const std::string& name) const {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end() || std::find(it + 1, names.end(), name) != names.end()) return -1;
  return static_cast<int>(it - names.begin());
}

std::string server_name(const std::string& node_description,
                        const std::map<std::string, std::string>& admin_map) {
  if (auto it = admin_map.find(node_description); it != admin_map.end()) return it->second;
  const auto begin = node_description.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const auto end = node_description.find_first_of(" \t", begin);
  std::string word = node_description.substr(begin, end == std::string::npos ? end : end - begin);
  if (auto it = admin_map.find(word); it != admin_map.end()) return it->second;
  return word;
}

Servers group_servers(const FatTree& tree, const std::vector<std::string>& host_names,
                      const std::vector<Guid>& host_cas,
                      const std::map<std::string, std::string>& admin_map) {
  Servers s;
  s.server_of.assign(tree.num_hosts(), -1);
  s.adapter_of = host_cas;
  s.adapter_of.resize(tree.num_hosts(), 0);
  std::map<std::pair<std::string, Guid>, int> index;  // (name, what tells it apart) -> server
  for (HostId h = 0; h < tree.num_hosts(); ++h) {
    const std::string description = h < static_cast<HostId>(host_names.size()) ? host_names[h] : "";
    std::string name = server_name(description, admin_map);
    const Guid ca = h < static_cast<HostId>(host_cas.size()) ? host_cas[h] : 0;
    // One word, no map entry, not a port of a multi-port CA: a host of its own (its name may
    // be shared by other hosts, which says nothing about them being one machine).
    const bool by_name =
        admin_map.count(description) || admin_map.count(name) ||
        description.find_first_of(" \t", description.find_first_not_of(" \t")) != std::string::npos;
    if (name.empty()) name = tree.host_name(h);
    const Guid apart = by_name ? 0 : ca ? ca : ~static_cast<Guid>(h);
    auto [it, fresh] = index.emplace(std::make_pair(name, apart), s.count());
    if (fresh) {
      s.names.push_back(name);
      s.ports.emplace_back();
    }
    s.server_of[h] = it->second;
    s.ports[it->second].push_back(h);
  }
  return s;
}

Servers group_servers(const FatTree& tree, const Embedding& emb, const Fabric& fabric,
                      const Layout* recorded, const std::map<std::string, std::string>& admin_map) {
  std::vector<std::string> names(tree.num_hosts());
  std::vector<Guid> cas(tree.num_hosts(), 0);
  for (HostId h = 0; h < tree.num_hosts(); ++h) {
    names[h] = recorded_host_name(tree, emb, fabric, recorded, h);
    if (const int node = emb.host_node[h]; node >= 0) cas[h] = fabric.nodes[node].ca_guid;
  }
  return group_servers(tree, names, cas, admin_map);
}

std::vector<std::pair<int, int>> leaf_rails(const FatTree& tree, const Servers& servers) {
  std::map<std::vector<int>, std::pair<int, int>> groups;  // server set -> (group, leaves so far)
  std::vector<std::pair<int, int>> out(tree.num_leaves());
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    std::vector<int> members;
    for (int slot = 0; slot < tree.hosts_per_leaf(); ++slot)
      members.push_back(servers.server_of[tree.host_at(leaf, slot)]);
    std::sort(members.begin(), members.end());
    auto [it, fresh] = groups.emplace(members, std::make_pair(static_cast<int>(groups.size()), 0));
    out[leaf] = {it->second.first, it->second.second++};
  }
  return out;
}

std::vector<int> rail_of_leaf(const FatTree& tree, const Servers& servers) {
  if (!servers.multi_port()) return {};
  std::vector<int> rail(tree.num_leaves(), 0);
  for (const auto& ports : servers.ports) {
    std::vector<int> leaves;
    for (HostId h : ports) leaves.push_back(tree.leaf_of_host(h));
    std::sort(leaves.begin(), leaves.end());
    leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
    if (leaves.size() < 2) continue;
    for (size_t i = 0; i < leaves.size(); ++i) rail[leaves[i]] = static_cast<int>(i);
  }
  return rail;
}

Servers rail_servers(const FatTree& tree, int rails) {
  if (rails < 1 || (rails > 1 && (tree.height() < 2 || tree.m(2) % rails != 0)))
    throw SpecError("the leaves of a pod cannot be split into " + std::to_string(rails) +
                    " rails: a pod (or a 2-level tree) needs a multiple of " +
                    std::to_string(rails) + " leaves");
  Servers s;
  s.server_of.assign(tree.num_hosts(), -1);
  const int per_leaf = tree.hosts_per_leaf();
  for (HostId h = 0; h < tree.num_hosts(); ++h) {
    const int server = (tree.leaf_of_host(h) / rails) * per_leaf + h % per_leaf;
    if (server >= s.count()) {
      s.names.resize(server + 1);
      s.ports.resize(server + 1);
    }
    s.names[server] = "srv" + std::to_string(server);
    s.server_of[h] = server;
    s.ports[server].push_back(h);
  }
  return s;
}

}  // namespace laas::topology
