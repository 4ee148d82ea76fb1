// Placing a tree on the fabric (a recorded layout's, or the one the cabling shows), listing
// what is absent and what lies outside the tree, and checking the placement.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "topology/recognizer.h"

namespace laas::topology {
namespace recognition {

std::string describe(const Fabric& f, int node) {
  const auto& n = f.nodes[node];
  char guid[32];
  std::snprintf(guid, sizeof guid, "0x%016llx", static_cast<unsigned long long>(n.guid));
  std::string s = n.is_switch ? "switch " : "CA ";
  if (!n.name.empty()) s += "'" + n.name + "' ";
  return s + "(" + guid + ")";
}

// Whether a cable joins (a, pa) and (b, pb).
bool cabled(const Fabric& f, int a, int pa, int b, int pb) {
  if (a < 0 || b < 0) return false;
  const auto& ports = f.nodes[a].ports;
  if (pa <= 0 || pa >= static_cast<int>(ports.size())) return false;
  return ports[pa].peer_node == b && ports[pa].peer_port == pb;
}

namespace {

// Leaf up-link columns that no present leaf of a pod has cabled, where at least two leaves
// and the parent are present: the cabling's design, not a fault (Embedding::uncabled).
void find_uncabled(const FatTree& tree, Embedding& emb) {
  emb.uncabled.clear();
  const std::set<LinkId> missing(emb.missing_links.begin(), emb.missing_links.end());
  const int cols = tree.up_columns(1);
  for (int pod = 0; pod < tree.num_pods(); ++pod)
    for (int c = 0; c < cols; ++c) {
      std::vector<LinkId> links;
      int present = 0;
      bool any_cabled = false;
      for (int i = 0; i < tree.m(2) && !any_cabled; ++i) {
        const int leaf = pod * tree.m(2) + i;
        const LinkId l = tree.l1_link(leaf, c);
        const PortRef up = tree.link_upper(l);
        if (emb.switch_node[0][leaf] < 0 || emb.switch_node[1][up.index] < 0) continue;
        ++present;
        if (missing.count(l))
          links.push_back(l);
        else
          any_cabled = true;
      }
      if (!any_cabled && present >= 2)
        emb.uncabled.insert(emb.uncabled.end(), links.begin(), links.end());
    }
  std::sort(emb.uncabled.begin(), emb.uncabled.end());
}

// The (node, port) ends the embedding's hosts and present links use.
std::set<std::pair<int, int>> tree_ends(const FatTree& tree, const Embedding& emb) {
  std::set<std::pair<int, int>> used;
  for (HostId h = 0; h < tree.num_hosts(); ++h) {
    if (emb.host_node[h] < 0) continue;
    const PortRef leaf = tree.host_peer(h);
    used.insert({emb.switch_node[0][leaf.index], emb.port_map[0][leaf.index][leaf.port]});
    used.insert({emb.host_node[h], emb.host_port[h]});
  }
  std::set<LinkId> missing(emb.missing_links.begin(), emb.missing_links.end());
  for (LinkId link = 0; link < tree.total_links(); ++link) {
    if (missing.count(link)) continue;
    for (const PortRef& r : {tree.link_lower(link), tree.link_upper(link)})
      used.insert(
          {emb.switch_node[r.level - 1][r.index], emb.port_map[r.level - 1][r.index][r.port]});
  }
  return used;
}

// Lists the cables the tree does not use: adapters on tree switches are attached

}  // namespace

// The absent parts of an embedding whose switch_node, port_map and present hosts are set:
// a switch without a single cable is absent too (OpenSM may still list it for a sweep), a
// link is missing unless its cable joins the two mapped ports, a host unless it is mapped.
void finish_absent(const FatTree& tree, const Fabric& f, Embedding& emb) {
  emb.missing_links.clear();
  emb.missing_hosts.clear();
  emb.missing_switches.clear();
  for (int l = 1; l <= tree.height(); ++l)
    for (int i = 0; i < tree.num_switches(l); ++i) {
      int& node = emb.switch_node[l - 1][i];
      if (node >= 0) {
        bool any = false;
        for (size_t p = 1; p < f.nodes[node].ports.size(); ++p)
          any = any || f.nodes[node].ports[p].peer_node >= 0;
        if (!any) {
          emb.node_model[node] = {-1, -1};
          node = -1;
        }
      }
      if (node < 0) emb.missing_switches.push_back({l, i});
    }
  for (HostId h = 0; h < tree.num_hosts(); ++h) {
    const int leaf = emb.switch_node[0][tree.leaf_of_host(h)];
    if (leaf < 0 && emb.host_node[h] >= 0) {
      emb.node_model[emb.host_node[h]] = {-1, -1};
      emb.host_node[h] = -1;
    }
    if (emb.host_node[h] < 0) {
      emb.host_port[h] = 0;
      emb.missing_hosts.push_back(h);
    }
  }
  for (LinkId link = 0; link < tree.total_links(); ++link) {
    const PortRef lo = tree.link_lower(link);
    const PortRef up = tree.link_upper(link);
    const int a = emb.switch_node[lo.level - 1][lo.index];
    const int b = emb.switch_node[up.level - 1][up.index];
    if (!cabled(f, a, emb.port_map[lo.level - 1][lo.index][lo.port], b,
                emb.port_map[up.level - 1][up.index][up.port]))
      emb.missing_links.push_back(link);
  }
  find_uncabled(tree, emb);
}
// hosts, the rest extra cables. A switch cabled to itself is refused: the error, else "".
std::string find_outside(const FatTree& tree, const Fabric& f, Embedding& emb,
                         bool set_aside_loops) {
  emb.attached.clear();
  emb.extra_cables.clear();
  const auto used = tree_ends(tree, emb);
  for (int i = 0; i < static_cast<int>(f.nodes.size()); ++i) {
    const auto& ports = f.nodes[i].ports;
    for (int p = 1; p < static_cast<int>(ports.size()); ++p) {
      const int q = ports[p].peer_node;
      const int qp = ports[p].peer_port;
      if (q < 0 || used.count({i, p})) continue;
      if (q == i) {
        if (p < qp && set_aside_loops) emb.extra_cables.push_back({i, p, q, qp});
        if (p < qp && !set_aside_loops)
          return "a loop cable joins ports " + std::to_string(p) + " and " + std::to_string(qp) +
                 " of " + describe(f, i) + ": a switch cabled to itself is not routed";
        continue;
      }
      const bool ca_here = !f.nodes[i].is_switch;
      const int sw = ca_here ? q : i;
      const int ca = ca_here ? i : q;
      const auto [level, index] = emb.node_model[sw];
      if (f.nodes[sw].is_switch && !f.nodes[ca].is_switch && level >= 1 &&
          emb.node_model[ca].first < 0) {
        if (ca_here) emb.attached.push_back({ca, p, level, index, qp});
        continue;
      }
      if (i < q) emb.extra_cables.push_back({i, p, q, qp});
    }
  }
  return "";
}

void find_sm(const Fabric& f, Guid sm_port_guid, Recognition& r) {
  if (sm_port_guid == 0) return;
  for (int i = 0; i < static_cast<int>(f.nodes.size()); ++i)
    if (f.nodes[i].port_guid == sm_port_guid) {
      r.sm_node = i;
      if (r.embedding.node_model[i].first == 0) r.sm_host = r.embedding.node_model[i].second;
      break;
    }
}

}  // namespace recognition

using recognition::cabled;
using recognition::find_outside;
using recognition::finish_absent;

std::string embed_layout(const Layout& layout, const Fabric& fabric, Recognition* out,
                         bool set_aside_loops) {
  Recognition& r = *out;
  r = Recognition{};
  FatTree tree = FatTree::parse(layout.spec);
  const int h = tree.height();
  if (static_cast<int>(layout.switches.size()) != h) return "the layout does not match its spec";
  std::map<Guid, int> by_guid;
  for (int i = 0; i < static_cast<int>(fabric.nodes.size()); ++i)
    if (fabric.nodes[i].is_switch) by_guid[fabric.nodes[i].guid] = i;
  Embedding& emb = r.embedding;
  emb.switch_node.assign(h, {});
  emb.switch_guid.assign(h, {});
  emb.port_map.assign(h, {});
  emb.node_model.assign(fabric.nodes.size(), {-1, -1});
  emb.host_node.assign(tree.num_hosts(), -1);
  emb.host_port.assign(tree.num_hosts(), 0);
  for (int l = 1; l <= h; ++l) {
    if (static_cast<int>(layout.switches[l - 1].size()) != tree.num_switches(l))
      return "the layout does not match its spec";
    for (int i = 0; i < tree.num_switches(l); ++i) {
      const auto& s = layout.switches[l - 1][i];
      if (static_cast<int>(s.ports.size()) != tree.num_ports(l) + 1)
        return "the layout does not match its spec";
      auto it = s.guid ? by_guid.find(s.guid) : by_guid.end();
      const int node = it == by_guid.end() ? -1 : it->second;
      emb.switch_node[l - 1].push_back(node);
      emb.switch_guid[l - 1].push_back(s.guid);
      emb.port_map[l - 1].push_back(s.ports);
      if (node >= 0) emb.node_model[node] = {l, i};
    }
  }
  for (HostId host = 0; host < tree.num_hosts(); ++host) {
    const PortRef leaf = tree.host_peer(host);
    const int s = emb.switch_node[0][leaf.index];
    if (s < 0) continue;
    const int phys = emb.port_map[0][leaf.index][leaf.port];
    const auto& ports = fabric.nodes[s].ports;
    if (phys <= 0 || phys >= static_cast<int>(ports.size())) continue;
    const int ca = ports[phys].peer_node;
    if (ca < 0 || fabric.nodes[ca].is_switch) continue;
    emb.host_node[host] = ca;
    emb.host_port[host] = ports[phys].peer_port;
    emb.node_model[ca] = {0, host};
  }
  finish_absent(tree, fabric, emb);
  if (std::string loop = find_outside(tree, fabric, emb, set_aside_loops); !loop.empty())
    return loop;
  const std::string bad = verify_embedding(tree, emb, fabric);
  if (!bad.empty()) return bad;
  r.tree.emplace(std::move(tree));
  return "";
}

namespace {

using Ends = std::set<std::pair<int, int>>;  // (node, physical port) ends accounted for

// Whether a cable joins (node, port) and (peer, peer_port), all of them in the fabric.
bool cable(const Fabric& fabric, int node, int port, int peer, int peer_port) {
  const int n = static_cast<int>(fabric.nodes.size());
  if (node < 0 || node >= n || peer < 0 || peer >= n) return false;
  return cabled(fabric, node, port, peer, peer_port);
}

std::string where(const FatTree& tree, int l, int i, int p) {
  return (l == 0 ? tree.host_name(i) : tree.switch_name(l, i)) + " port " + std::to_string(p);
}

// The embedding's sizes are the tree's, every model port has a physical port of its own, and
// the absent switches are those listed.
std::string check_shape(const FatTree& tree, const Embedding& emb) {
  if (static_cast<int>(emb.host_node.size()) != tree.num_hosts() ||
      static_cast<int>(emb.host_port.size()) != tree.num_hosts())
    return "the embedding has the wrong number of hosts";
  if (static_cast<int>(emb.switch_node.size()) != tree.height() ||
      static_cast<int>(emb.port_map.size()) != tree.height())
    return "the embedding has the wrong number of levels";
  for (int l = 1; l <= tree.height(); ++l) {
    if (static_cast<int>(emb.switch_node[l - 1].size()) != tree.num_switches(l) ||
        static_cast<int>(emb.port_map[l - 1].size()) != tree.num_switches(l))
      return "the embedding has the wrong number of level-" + std::to_string(l) + " switches";
    for (int i = 0; i < tree.num_switches(l); ++i) {
      const auto& row = emb.port_map[l - 1][i];
      if (static_cast<int>(row.size()) != tree.num_ports(l) + 1)
        return tree.switch_name(l, i) + " has the wrong number of model ports";
      std::set<int> seen;
      for (int mp = 1; mp <= tree.num_ports(l); ++mp)
        if (row[mp] <= 0 || !seen.insert(row[mp]).second)
          return where(tree, l, i, mp) + " has no physical port of its own";
      const bool missing = std::binary_search(emb.missing_switches.begin(),
                                              emb.missing_switches.end(), std::make_pair(l, i));
      if (missing != (emb.switch_node[l - 1][i] < 0))
        return tree.switch_name(l, i) + " is absent but not listed as missing (or the reverse)";
    }
  }
  return "";
}

std::string check_hosts(const FatTree& tree, const Embedding& emb, const Fabric& fabric,
                        Ends& used) {
  for (HostId h = 0; h < tree.num_hosts(); ++h) {
    const bool missing = std::binary_search(emb.missing_hosts.begin(), emb.missing_hosts.end(), h);
    if (emb.host_node[h] < 0) {
      if (!missing) return "model host " + tree.host_name(h) + " is absent but not listed";
      continue;
    }
    if (missing) return "model host " + tree.host_name(h) + " is present but listed as missing";
    const PortRef leaf = tree.host_peer(h);
    const int sw = emb.switch_node[0][leaf.index];
    const int phys = emb.port_map[0][leaf.index][leaf.port];
    if (!cable(fabric, sw, phys, emb.host_node[h], emb.host_port[h]))
      return "model host " + tree.host_name(h) + " is not cabled to " +
             where(tree, 1, leaf.index, leaf.port);
    used.insert({sw, phys});
    used.insert({emb.host_node[h], emb.host_port[h]});
  }
  return "";
}

std::string check_links(const FatTree& tree, const Embedding& emb, const Fabric& fabric,
                        Ends& used) {
  std::set<LinkId> missing(emb.missing_links.begin(), emb.missing_links.end());
  for (LinkId link = 0; link < tree.total_links(); ++link) {
    const PortRef lo = tree.link_lower(link);
    const PortRef up = tree.link_upper(link);
    const int a = emb.switch_node[lo.level - 1][lo.index];
    const int b = emb.switch_node[up.level - 1][up.index];
    const int pa = emb.port_map[lo.level - 1][lo.index][lo.port];
    const int pb = emb.port_map[up.level - 1][up.index][up.port];
    const bool present = cable(fabric, a, pa, b, pb);
    if (missing.count(link)) {
      if (present)
        return "model link " + where(tree, lo.level, lo.index, lo.port) +
               " is cabled but listed missing";
      continue;
    }
    if (!present)
      return "model link " + where(tree, lo.level, lo.index, lo.port) + " - " +
             where(tree, up.level, up.index, up.port) + " has no cable";
    used.insert({a, pa});
    used.insert({b, pb});
  }
  return "";
}

// Cables outside the tree must be listed as such (find_outside).
std::string check_outside(const FatTree& tree, const Embedding& emb, const Fabric& fabric,
                          Ends& used) {
  for (const auto& a : emb.attached) {
    const int sw = a.level >= 1 && a.level <= tree.height() && a.index >= 0 &&
                           a.index < tree.num_switches(a.level)
                       ? emb.switch_node[a.level - 1][a.index]
                       : -1;
    if (!cable(fabric, a.node, a.port, sw, a.switch_port) || fabric.nodes[a.node].is_switch)
      return "an attached host is not cabled where the embedding says";
    used.insert({a.node, a.port});
    used.insert({sw, a.switch_port});
  }
  for (const auto& c : emb.extra_cables) {
    if (!cable(fabric, c.node, c.port, c.peer, c.peer_port))
      return "an extra cable is not cabled where the embedding says";
    used.insert({c.node, c.port});
    used.insert({c.peer, c.peer_port});
  }
  return "";
}

// The first cable of the fabric none of the checks above accounted for.
std::string find_unused_cable(const Fabric& fabric, const Ends& used) {
  const int n = static_cast<int>(fabric.nodes.size());
  for (int i = 0; i < n; ++i) {
    const auto& ports = fabric.nodes[i].ports;
    for (int p = 1; p < static_cast<int>(ports.size()); ++p) {
      if (ports[p].peer_node < 0 || used.count({i, p})) continue;
      const int q = ports[p].peer_node;
      std::string who = fabric.nodes[i].name.empty() ? "node " + std::to_string(i)
                                                     : "'" + fabric.nodes[i].name + "'";
      std::string peer = fabric.nodes[q].name.empty() ? "node " + std::to_string(q)
                                                      : "'" + fabric.nodes[q].name + "'";
      return "the cable " + who + " port " + std::to_string(p) + " - " + peer + " port " +
             std::to_string(ports[p].peer_port) + " is not part of the tree";
    }
  }
  return "";
}

}  // namespace

std::string verify_embedding(const FatTree& tree, const Embedding& emb, const Fabric& fabric) {
  Ends used;
  std::string bad = check_shape(tree, emb);
  if (bad.empty()) bad = check_hosts(tree, emb, fabric, used);
  if (bad.empty()) bad = check_links(tree, emb, fabric, used);
  if (bad.empty()) bad = check_outside(tree, emb, fabric, used);
  if (bad.empty()) bad = find_unused_cable(fabric, used);
  return bad;
}

}  // namespace laas::topology
