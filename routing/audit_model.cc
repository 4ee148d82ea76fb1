// The audit's model: the fabric, the tree's embedding and the tables as the checks see them
// (every host's class, every link's owner, which physical port is which model link).
#include "routing/audit_model.h"

#include <algorithm>
#include <stdexcept>

namespace laas::routing::auditing {

AuditModel::AuditModel(const AuditInput& input)
    : in(input), f(*input.fabric), emb(*input.embedding), t(*input.tree), lft(*input.tables) {
  if (static_cast<int>(emb.host_node.size()) != t.num_hosts() ||
      static_cast<int>(emb.switch_node.size()) != t.height())
    throw std::invalid_argument("audit: the embedding does not match the tree");
  if (lft.size() != f.nodes.size())
    throw std::invalid_argument("audit: one table slot per fabric node is expected");
  // Physical (node, port) -> model link.
  port_link.assign(f.nodes.size(), {});
  for (std::size_t n = 0; n < f.nodes.size(); ++n) port_link[n].assign(f.nodes[n].ports.size(), -1);
  for (LinkId l = 0; l < t.total_links(); ++l) {
    for (const auto& ref : {t.link_lower(l), t.link_upper(l)}) {
      const int node = emb.switch_node[ref.level - 1][ref.index];
      const int port = emb.port_map[ref.level - 1][ref.index][ref.port];
      if (node >= 0 && port >= 0 && port < static_cast<int>(port_link[node].size()))
        port_link[node][port] = l;
    }
  }
  owner.assign(t.total_links(), kFreeClass);
  host_class.assign(t.num_hosts(), kFreeClass);
  for (int ti = 0; ti < static_cast<int>(in.tenants.size()); ++ti) {
    for (LinkId l : in.tenants[ti].placement.links)
      if (l >= 0 && l < t.total_links()) owner[l] = ti;
    for (HostId h : in.tenants[ti].placement.hosts)
      if (h >= 0 && h < t.num_hosts()) host_class[h] = ti;
  }
  mgmt_leaf.assign(t.num_leaves(), 0);
  for (HostId h : in.management_hosts) {
    host_class.at(h) = kMgmtClass;
    mgmt_leaf[t.leaf_of_host(h)] = 1;
  }
  for (int node : in.management_nodes) {
    const auto [level, index] = emb.node_model.at(node);
    if (level == 0) {
      host_class[index] = kMgmtClass;
      mgmt_leaf[t.leaf_of_host(index)] = 1;
    } else if (level == 1) {
      mgmt_leaf[index] = 1;
    } else if (f.nodes[node].is_switch) {
      mgmt_switches.push_back(node);
    }
  }
  // Classes of hosts on each leaf. A host that is down keeps its class: the
  // leaf's routes are those of the intended tree and return unchanged with the host.
  leaf_classes.assign(t.num_leaves(), {});
  for (HostId h = 0; h < t.num_hosts(); ++h) {
    auto& v = leaf_classes[t.leaf_of_host(h)];
    if (std::find(v.begin(), v.end(), host_class[h]) == v.end()) v.push_back(host_class[h]);
  }
}

std::string AuditModel::class_name(int cls) const {
  if (cls == kFreeClass) return "";
  if (cls == kMgmtClass) return "";
  return in.tenants[cls].name;
}

int AuditModel::minimal_hops(int src_leaf, int dst_leaf) const {
  if (src_leaf == dst_leaf) return 1;
  if (t.pod_of_leaf(src_leaf) == t.pod_of_leaf(dst_leaf)) return 3;
  return 5;
}

int AuditModel::count_class_on_leaf(int leaf, int cls) const {
  int n = 0;
  for (int s = 0; s < t.hosts_per_leaf(); ++s) n += host_class[t.host_at(leaf, s)] == cls;
  return n;
}

}  // namespace laas::routing::auditing
