// laas-audit --owners, --sl2vl-of and --paths: what the tables read back say, instead of the
// audit's verdict.
#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <tuple>

#include "tools/audit_cli.h"

namespace laas::tools {

namespace {

// Who owns each switch port, as the SL2VL plan sees the fabric.
struct Owners {
  routing::Sl2VlInput si;
  std::vector<std::string> names;  // [tenant]
  std::vector<std::vector<routing::PortOwner>> own;

  explicit Owners(const AuditInputs& in) {
    si.fabric = &in.fabric;
    si.embedding = in.input.embedding;  // without unaccepted slots
    si.tree = &*in.rec.tree;
    si.tables = &in.tables;
    for (const auto& q : in.input.unaccepted) si.unaccepted_hosts.push_back(q.host);
    for (const auto& t : in.input.tenants) {
      si.tenants.push_back(t.placement);
      names.push_back(t.name);
    }
    si.management_hosts = in.input.management_hosts;
    si.management_nodes = in.input.management_nodes;
    si.closed_attached = in.input.closed_attached;
    own = routing::port_owners(si);
  }

  std::string text(const routing::PortOwner& o) const {
    switch (o.cls) {
      case routing::PortClass::kTenant:
        return names[o.tenant];
      case routing::PortClass::kManagement:
        return "management";
      case routing::PortClass::kFreeHost:
        return "free";
      case routing::PortClass::kOpenLink:
        return "open";
      case routing::PortClass::kNone:
        break;
    }
    return "none";
  }
};

}  // namespace

int print_owners(const AuditInputs& in) {
  const Owners owners(in);
  const auto& tree = *in.rec.tree;
  const auto& emb = in.rec.embedding;
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    const int node = emb.switch_node[0][leaf];
    if (node < 0) continue;
    std::cout << in.fabric.nodes[node].name << ":";
    for (int slot = 0; slot < tree.hosts_per_leaf(); ++slot) {
      const auto h = tree.host_at(leaf, slot);
      const int hn = emb.host_node[h];
      if (hn < 0) continue;
      const auto ref = tree.host_peer(h);
      const int port = emb.port_map[0][leaf][ref.port];
      std::cout << " " << in.fabric.nodes[hn].name << "=" << owners.text(owners.own[node][port]);
    }
    std::cout << "\n";
  }
  return 0;
}

int print_sl2vl_of(const AuditOptions& o, const AuditInputs& in) {
  const Owners owners(in);
  const auto& own = owners.own;
  if (o.sl2vl_path.empty()) throw BadInput("--sl2vl-of needs --sl2vl");
  auto it = std::find(owners.names.begin(), owners.names.end(), o.sl2vl_of);
  if (it == owners.names.end()) throw BadInput("no tenant " + o.sl2vl_of + " in " + o.alloc_path);
  const int ti = static_cast<int>(it - owners.names.begin());
  std::set<std::tuple<int, int, int>> exemptions;
  for (const auto& e : routing::plan_sl2vl(owners.si).exemptions)
    exemptions.insert({e.node, e.in_port, e.out_port});
  for (std::size_t n = 0; n < in.fabric.nodes.size(); ++n) {
    const int node = static_cast<int>(n);
    if (own[n].empty() || !in.sl2vl.has(node)) continue;
    const auto& ports = in.fabric.nodes[n].ports;
    const int np = static_cast<int>(own[n].size());
    for (int i = 0; i < np; ++i)
      for (int out = 1; out < np; ++out) {
        if (ports[out].peer_node < 0 || (i > 0 && ports[i].peer_node < 0)) continue;
        // The pairs that decide who may enter the tenant's ports.
        if (!(own[n][out].cls == routing::PortClass::kTenant && own[n][out].tenant == ti)) continue;
        const auto m = in.sl2vl.mask(node, i, out);
        const bool exempt = exemptions.count({node, i, out}) > 0;
        std::cout << in.fabric.nodes[n].name << " in " << i << " (" << owners.text(own[n][i])
                  << ") out " << out << " (" << owners.text(own[n][out]) << "): "
                  << (m == routing::kAllSls ? "drop"
                      : m != 0              ? "partial"
                      : exempt              ? "exempt"
                                            : "pass")
                  << "\n";
      }
  }
  return 0;
}

// Follows the tables hop by hop from each host of the tenant to each other one.
int print_paths(const AuditOptions& o, const AuditInputs& in) {
  auto it = in.alloc.tenants.find(o.paths_of);
  if (it == in.alloc.tenants.end())
    throw BadInput("no tenant " + o.paths_of + " in " + o.alloc_path);
  const auto& fabric = in.fabric;
  const auto& t = it->second;
  std::map<topology::Guid, int> node_of;
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    if (!fabric.nodes[i].is_switch) node_of[fabric.nodes[i].port_guid] = static_cast<int>(i);
  // Hosts that are down (not in the fabric read back) have no path to print.
  for (const auto& src : t.hosts)
    for (const auto& dst : t.hosts) {
      if (src.guid == dst.guid || !node_of.count(src.guid) || !node_of.count(dst.guid)) continue;
      const int s = node_of.at(src.guid);
      const int d = node_of.at(dst.guid);
      const int dlid = fabric.lid_of(d);
      std::cout << src.name << " -> " << dst.name << ":";
      int node = -1;
      for (const auto& p : fabric.nodes[s].ports)
        if (p.peer_node >= 0) node = p.peer_node;
      for (int hop = 0; hop < 16 && node >= 0 && node != d; ++hop) {
        const auto& table = in.tables[node];
        const int port = dlid < static_cast<int>(table.size()) ? table[dlid] : 0xFF;
        std::cout << " " << fabric.nodes[node].name << ":" << port;
        if (port == 0 || port == 0xFF || port >= static_cast<int>(fabric.nodes[node].ports.size()))
          break;
        node = fabric.nodes[node].ports[port].peer_node;
      }
      std::cout << (node == d ? "" : " UNREACHABLE") << "\n";
    }
  return 0;
}

}  // namespace laas::tools
