#include "topology/netfile.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace laas::topology {
namespace {

struct Cable {
  int port;
  std::string peer;
  int peer_port;
};

}  // namespace

void write_netfile(const FatTree& tree, std::ostream& out, const NetfileOptions& options) {
  const int rails = std::max(1, options.rails);
  // Leaves are numbered pod by pod (m(2) to a pod): a group's rails must share its pod.
  if (rails > 1 && (tree.height() < 2 || tree.m(2) % rails != 0))
    throw SpecError("the leaves of a pod cannot be split into " + std::to_string(rails) +
                    " rails: a pod (or a 2-level tree) needs a multiple of " +
                    std::to_string(rails) + " leaves");
  // Host h: server and rail (its port number on a multi-port HCA is rail + 1).
  auto server_of = [&](HostId h) {
    const int leaf = tree.leaf_of_host(h), slot = h % tree.hosts_per_leaf();
    return (leaf / rails) * tree.hosts_per_leaf() + slot;
  };
  auto rail_of = [&](HostId h) { return tree.leaf_of_host(h) % rails; };
  auto node_id = [&](HostId h) {
    if (rails == 1) return tree.host_name(h);
    const std::string server = "srv" + std::to_string(server_of(h));
    return options.multi_port ? server : server + " mlx5_" + std::to_string(rail_of(h));
  };
  auto host_port = [&](HostId h) { return options.multi_port ? rail_of(h) + 1 : 1; };
  // Collect every switch's cables, keyed by (level, index), then print in port order.
  std::map<std::pair<int, int>, std::vector<Cable>> cables;
  auto name_of = [&](const PortRef& r) {
    return r.level == 0 ? node_id(r.index) : tree.switch_name(r.level, r.index);
  };
  for (HostId h = 0; h < tree.num_hosts(); ++h) {
    const PortRef leaf = tree.host_peer(h);
    cables[{1, leaf.index}].push_back({leaf.port, node_id(h), host_port(h)});
  }
  for (LinkId l = 0; l < tree.total_links(); ++l) {
    const PortRef lo = tree.link_lower(l);
    const PortRef up = tree.link_upper(l);
    cables[{lo.level, lo.index}].push_back({lo.port, name_of(up), up.port});
    cables[{up.level, up.index}].push_back({up.port, name_of(lo), lo.port});
  }
  out << "# " << tree.spec().text() << ": " << tree.num_hosts() << " hosts, "
      << tree.total_switches() << " switches (written by laas-topogen)\n\n";
  for (int level = tree.height(); level >= 1; --level) {
    for (int index = 0; index < tree.num_switches(level); ++index) {
      auto& list = cables[{level, index}];
      std::sort(list.begin(), list.end(),
                [](const Cable& a, const Cable& b) { return a.port < b.port; });
      out << "Switch\t" << tree.num_ports(level) << " \"" << tree.switch_name(level, index)
          << "\"\n";
      for (const auto& c : list)
        out << "[" << c.port << "]\t\"" << c.peer << "\"[" << c.peer_port << "]\n";
      out << "\n";
    }
  }
  if (!options.multi_port || rails == 1) {
    for (HostId h = 0; h < tree.num_hosts(); ++h) {
      const PortRef leaf = tree.host_peer(h);
      out << "Hca\t1 \"" << node_id(h) << "\"\n"
          << "[1]\t\"" << tree.switch_name(1, leaf.index) << "\"[" << leaf.port << "]\n\n";
    }
    return;
  }
  // One HCA per server, one port per rail.
  std::map<int, std::vector<HostId>> ports;
  for (HostId h = 0; h < tree.num_hosts(); ++h) ports[server_of(h)].push_back(h);
  for (const auto& [server, hosts] : ports) {
    out << "Hca\t" << rails << " \"" << node_id(hosts.front()) << "\"\n";
    for (HostId h : hosts) {
      const PortRef leaf = tree.host_peer(h);
      out << "[" << host_port(h) << "]\t\"" << tree.switch_name(1, leaf.index) << "\"[" << leaf.port
          << "]\n";
    }
    out << "\n";
  }
}

}  // namespace laas::topology
