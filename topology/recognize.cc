#include "topology/recognize.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <set>

namespace laas::topology {
namespace {

std::string describe(const Fabric& f, int node) {
  const auto& n = f.nodes[node];
  char guid[32];
  std::snprintf(guid, sizeof guid, "0x%016llx", static_cast<unsigned long long>(n.guid));
  std::string s = n.is_switch ? "switch " : "CA ";
  if (!n.name.empty()) s += "'" + n.name + "' ";
  return s + "(" + guid + ")";
}

class Recognizer {
 public:
  explicit Recognizer(const Fabric& f) : f_(f), n_(static_cast<int>(f.nodes.size())) {}

  Recognition run(Guid sm_port_guid);

 private:
  // Every step returns false after setting error_.
  bool classify();
  bool rank_levels();
  bool find_pods();
  bool order_level2_and_top();
  bool build_maps(const FatTree& tree, Embedding& emb);
  bool fail(std::string why) {
    error_ = std::move(why);
    return false;
  }
  bool key_less(int a, int b) const {
    const auto& x = f_.nodes[a];
    const auto& y = f_.nodes[b];
    if (x.name != y.name) return natural_less(x.name, y.name);
    return x.guid < y.guid;
  }
  void sort_by_key(std::vector<int>& v) const {
    std::sort(v.begin(), v.end(), [this](int a, int b) { return key_less(a, b); });
  }
  // Physical ports of `node` cabled to `peer`, ascending.
  std::vector<int> ports_to(int node, int peer) const {
    std::vector<int> out;
    const auto& ports = f_.nodes[node].ports;
    for (int p = 1; p < static_cast<int>(ports.size()); ++p)
      if (ports[p].peer_node == peer) out.push_back(p);
    return out;
  }
  std::vector<int> switch_peers(int node) const {
    std::set<int> s;
    const auto& ports = f_.nodes[node].ports;
    for (int p = 1; p < static_cast<int>(ports.size()); ++p) {
      const int q = ports[p].peer_node;
      if (q >= 0 && f_.nodes[q].is_switch) s.insert(q);
    }
    return {s.begin(), s.end()};
  }

  const Fabric& f_;
  const int n_;
  std::string error_;
  std::vector<int> level_;                  // per node: 0 CA or off-tree, 1.. switch level
  std::vector<std::vector<int>> by_level_;  // [level-1] -> nodes
  std::vector<std::vector<int>> hosts_of_;  // per node (leaves): CAs, ordered
  int height_ = 0;
  int m1_ = 0;
  // Pods: leaves and level-2 switches, ordered.
  std::vector<std::vector<int>> pod_leaves_, pod_l2_;
  int p2_ = 1, p3_ = 1, w3_ = 1;
  std::vector<std::vector<int>> top_groups_;  // [b2] -> top switches ordered by b3
};

bool Recognizer::classify() {
  level_.assign(n_, 0);
  hosts_of_.assign(n_, {});
  for (int i = 0; i < n_; ++i) {
    const auto& node = f_.nodes[i];
    if (node.is_switch) continue;
    int cabled = 0, peer = -1;
    for (int p = 1; p < static_cast<int>(node.ports.size()); ++p)
      if (node.ports[p].peer_node >= 0) {
        ++cabled;
        peer = node.ports[p].peer_node;
      }
    if (cabled == 0) continue;  // not attached: not part of the fabric
    if (cabled > 1)
      return fail(describe(f_, i) + " has " + std::to_string(cabled) +
                  " cabled ports; hosts with several fabric ports are not supported");
    if (!f_.nodes[peer].is_switch)
      return fail(describe(f_, i) + " is cabled directly to " + describe(f_, peer));
    hosts_of_[peer].push_back(i);
  }
  return true;
}

bool Recognizer::rank_levels() {
  std::vector<int> frontier;
  for (int i = 0; i < n_; ++i)
    if (f_.nodes[i].is_switch && !hosts_of_[i].empty()) {
      level_[i] = 1;
      frontier.push_back(i);
    }
  if (frontier.empty()) return fail("no switch has a host cabled to it");
  for (int l = 1; !frontier.empty(); ++l) {
    by_level_.push_back(frontier);
    std::vector<int> next;
    for (int s : frontier)
      for (int t : switch_peers(s))
        if (level_[t] == 0) {
          level_[t] = l + 1;
          next.push_back(t);
        }
    frontier = std::move(next);
  }
  height_ = static_cast<int>(by_level_.size());
  for (int i = 0; i < n_; ++i) {
    if (!f_.nodes[i].is_switch) continue;
    const auto peers = switch_peers(i);
    if (level_[i] == 0) {
      if (!peers.empty())
        return fail(describe(f_, i) + " is not connected to any switch that leads to a host");
      continue;  // an uncabled switch is not part of the fabric
    }
    for (int t : peers) {
      const int d = level_[t] - level_[i];
      if (d == 1 || d == -1) continue;
      if (level_[i] == 1 && level_[t] == 1)
        return fail(describe(f_, i) + " and " + describe(f_, t) +
                    " both have hosts and are cabled to each other");
      return fail(describe(f_, i) + " (level " + std::to_string(level_[i]) + ") is cabled to " +
                  describe(f_, t) + " (level " + std::to_string(level_[t]) +
                  "): a fat-tree only cables adjacent levels");
    }
  }
  if (height_ < 2)
    return fail("the fabric has a single switch level; only 2- and 3-level fat-trees are routed");
  if (height_ > 3)
    return fail("the fabric has " + std::to_string(height_) +
                " switch levels counted from the hosts; only 2- and 3-level fat-trees are routed");
  // Hosts per leaf.
  for (int s : by_level_[0]) sort_by_key(hosts_of_[s]);
  std::vector<int> leaves = by_level_[0];
  sort_by_key(leaves);
  m1_ = static_cast<int>(hosts_of_[leaves[0]].size());
  for (int s : leaves)
    if (static_cast<int>(hosts_of_[s].size()) != m1_)
      return fail("leaf " + describe(f_, leaves[0]) + " has " + std::to_string(m1_) +
                  " hosts but leaf " + describe(f_, s) + " has " +
                  std::to_string(hosts_of_[s].size()) +
                  "; every leaf must hold the same number of hosts");
  return true;
}

bool Recognizer::find_pods() {
  // Connected components of the leaf / level-2 graph (a 2-level tree is one pod).
  std::vector<int> comp(n_, -1);
  int pods = 0;
  std::vector<int> leaves = by_level_[0];
  sort_by_key(leaves);
  for (int start : leaves) {
    if (comp[start] >= 0) continue;
    std::vector<int> stack{start};
    comp[start] = pods;
    std::vector<int> pl, p2;
    while (!stack.empty()) {
      const int x = stack.back();
      stack.pop_back();
      (level_[x] == 1 ? pl : p2).push_back(x);
      for (int t : switch_peers(x))
        if (level_[t] <= 2 && comp[t] < 0) {
          comp[t] = pods;
          stack.push_back(t);
        }
    }
    sort_by_key(pl);
    sort_by_key(p2);
    pod_leaves_.push_back(pl);
    pod_l2_.push_back(p2);
    ++pods;
  }
  if (height_ == 2 && pods != 1)
    return fail("the leaves form " + std::to_string(pods) +
                " separate groups under the level-2 switches");
  for (int k = 0; k < pods; ++k) {
    if (pod_leaves_[k].size() != pod_leaves_[0].size() || pod_l2_[k].size() != pod_l2_[0].size())
      return fail("pod of " + describe(f_, pod_leaves_[0][0]) + " has " +
                  std::to_string(pod_leaves_[0].size()) + " leaves and " +
                  std::to_string(pod_l2_[0].size()) + " level-2 switches, pod of " +
                  describe(f_, pod_leaves_[k][0]) + " has " +
                  std::to_string(pod_leaves_[k].size()) + " and " +
                  std::to_string(pod_l2_[k].size()));
    if (pod_l2_[k].empty())
      return fail("leaf " + describe(f_, pod_leaves_[k][0]) + " has no level-2 switch");
  }
  for (int s : by_level_[0])
    for (int t : switch_peers(s)) p2_ = std::max(p2_, static_cast<int>(ports_to(s, t).size()));
  return true;
}

bool Recognizer::order_level2_and_top() {
  if (height_ == 2) return true;
  const int w2 = static_cast<int>(pod_l2_[0].size());
  std::map<int, int> group;  // top switch -> b2
  std::map<int, int> b2_of;  // level-2 switch -> b2
  for (int b = 0; b < w2; ++b) b2_of[pod_l2_[0][b]] = b;
  // Propagate: tops take the group of a known level-2 neighbour, level-2 switches the group
  // of a known top neighbour, until nothing changes (absent cables may need several rounds).
  for (bool changed = true; changed;) {
    changed = false;
    for (int t : by_level_[2]) {
      for (int s : switch_peers(t)) {
        auto it = b2_of.find(s);
        if (it == b2_of.end()) continue;
        auto g = group.find(t);
        if (g == group.end()) {
          group[t] = it->second;
          changed = true;
        } else if (g->second != it->second) {
          return fail(describe(f_, t) + " is cabled to level-2 switches of different planes (" +
                      describe(f_, s) + " is not in the plane of its other children)");
        }
      }
    }
    for (const auto& pod : pod_l2_)
      for (int s : pod) {
        if (b2_of.count(s)) continue;
        for (int t : switch_peers(s)) {
          auto g = group.find(t);
          if (g == group.end()) continue;
          b2_of[s] = g->second;
          changed = true;
          break;
        }
      }
  }
  for (int t : by_level_[2])
    if (!group.count(t)) return fail(describe(f_, t) + " cannot be placed in the tree");
  // Within each pod the level-2 switches must take every plane exactly once.
  for (auto& pod : pod_l2_) {
    std::vector<int> ordered(w2, -1);
    for (int s : pod) {
      auto it = b2_of.find(s);
      if (it == b2_of.end()) return fail(describe(f_, s) + " has no cable to a top switch");
      if (ordered[it->second] >= 0)
        return fail(describe(f_, s) + " and " + describe(f_, ordered[it->second]) +
                    " are in the same pod and cabled to the same top switches");
      ordered[it->second] = s;
    }
    pod = ordered;
  }
  top_groups_.assign(w2, {});
  for (int t : by_level_[2]) top_groups_[group[t]].push_back(t);
  w3_ = static_cast<int>(top_groups_[0].size());
  for (auto& g : top_groups_) {
    if (static_cast<int>(g.size()) != w3_)
      return fail("top switches are not spread evenly over the level-2 switches of a pod (" +
                  std::to_string(w3_) + " vs " + std::to_string(g.size()) + ")");
    sort_by_key(g);
  }
  // Every top switch must reach at most one level-2 switch per pod (checked through planes).
  for (int t : by_level_[2]) {
    std::set<int> pods_seen;
    for (int s : switch_peers(t)) {
      p3_ = std::max(p3_, static_cast<int>(ports_to(s, t).size()));
      for (size_t k = 0; k < pod_l2_.size(); ++k)
        if (std::find(pod_l2_[k].begin(), pod_l2_[k].end(), s) != pod_l2_[k].end())
          if (!pods_seen.insert(static_cast<int>(k)).second)
            return fail(describe(f_, t) + " is cabled to two level-2 switches of one pod");
    }
  }
  return true;
}

bool Recognizer::build_maps(const FatTree& tree, Embedding& emb) {
  const int h = tree.height();
  emb.switch_node.assign(h, {});
  emb.port_map.assign(h, {});
  emb.host_node.assign(tree.num_hosts(), -1);
  emb.host_port.assign(tree.num_hosts(), 0);
  emb.node_model.assign(n_, {-1, -1});
  // Switch placement.
  const int pods = static_cast<int>(pod_leaves_.size());
  const int m2 = tree.leaves_per_pod();
  const int w2 = tree.switches_per_pod(2);
  emb.switch_node[0].assign(tree.num_leaves(), -1);
  emb.switch_node[1].assign(tree.num_switches(2), -1);
  for (int k = 0; k < pods; ++k) {
    for (int i = 0; i < m2; ++i) emb.switch_node[0][k * m2 + i] = pod_leaves_[k][i];
    for (int b = 0; b < w2; ++b) emb.switch_node[1][tree.level2_switch(k, b)] = pod_l2_[k][b];
  }
  if (h == 3) {
    emb.switch_node[2].assign(tree.num_switches(3), -1);
    for (int b = 0; b < w2; ++b)
      for (int c = 0; c < w3_; ++c) emb.switch_node[2][b * w3_ + c] = top_groups_[b][c];
  }
  for (int l = 1; l <= h; ++l) {
    for (int i = 0; i < tree.num_switches(l); ++i) {
      emb.node_model[emb.switch_node[l - 1][i]] = {l, i};
      emb.port_map[l - 1].push_back(std::vector<int>(tree.num_ports(l) + 1, 0));
    }
  }
  // Hosts.
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    const int s = emb.switch_node[0][leaf];
    for (int slot = 0; slot < tree.m(1); ++slot) {
      const int ca = hosts_of_[s][slot];
      const HostId host = tree.host_at(leaf, slot);
      emb.host_node[host] = ca;
      emb.node_model[ca] = {0, host};
      const auto leaf_ports = ports_to(s, ca);
      const int phys = leaf_ports.at(0);
      emb.host_port[host] = f_.nodes[s].ports[phys].peer_port;
      emb.port_map[0][leaf][tree.down_port(1, slot, 0)] = phys;
    }
  }
  // Up-links: the lower switch's parallel cables to a parent, in port order, are the model's
  // parallel links 0..; the parent's down-port for each is the far end of the same cable.
  for (LinkId link = 0; link < tree.total_links(); ++link) {
    const PortRef lo = tree.link_lower(link);
    const PortRef up = tree.link_upper(link);
    const int lo_node = emb.switch_node[lo.level - 1][lo.index];
    const int up_node = emb.switch_node[up.level - 1][up.index];
    const int j = tree.link_column(link) % tree.p(lo.level + 1);
    const auto phys = ports_to(lo_node, up_node);
    if (j < static_cast<int>(phys.size())) {
      emb.port_map[lo.level - 1][lo.index][lo.port] = phys[j];
      emb.port_map[up.level - 1][up.index][up.port] = f_.nodes[lo_node].ports[phys[j]].peer_port;
    } else {
      emb.missing_links.push_back(link);
    }
  }
  return true;
}

Recognition Recognizer::run(Guid sm_port_guid) {
  Recognition r;
  if (!classify() || !rank_levels() || !find_pods() || !order_level2_and_top()) {
    r.error = error_;
    return r;
  }
  FatTreeSpec spec;
  spec.levels.push_back({m1_, 1, 1});
  spec.levels.push_back(
      {static_cast<int>(pod_leaves_[0].size()), static_cast<int>(pod_l2_[0].size()), p2_});
  if (height_ == 3) spec.levels.push_back({static_cast<int>(pod_leaves_.size()), w3_, p3_});
  try {
    FatTree tree(spec);
    if (tree.num_switches(2) != static_cast<int>(by_level_[1].size()) ||
        (height_ == 3 && tree.num_switches(3) != static_cast<int>(by_level_[2].size()))) {
      r.error = "switch counts do not match " + spec.text();
      return r;
    }
    build_maps(tree, r.embedding);
    const std::string bad = verify_embedding(tree, r.embedding, f_);
    if (!bad.empty()) {
      r.error = "the fabric looks like " + spec.text() + " but " + bad;
      return r;
    }
    r.tree.emplace(std::move(tree));
  } catch (const SpecError& e) {
    r.error = "the fabric's shape " + spec.text() + " is not a supported fat-tree: " + e.what();
    return r;
  }
  if (sm_port_guid != 0) {
    for (int i = 0; i < n_; ++i)
      if (f_.nodes[i].port_guid == sm_port_guid) {
        r.sm_node = i;
        if (r.embedding.node_model[i].first == 0) r.sm_host = r.embedding.node_model[i].second;
        break;
      }
  }
  return r;
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i]));
    const bool db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      // Compare numerically without overflow: strip leading zeros, then length, then digits.
      size_t is = i, js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      const int c = a.compare(is, ie - is, b, js, je - js);
      if (c != 0) return c < 0;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;
}

Recognition recognize(const Fabric& fabric, Guid sm_port_guid) {
  return Recognizer(fabric).run(sm_port_guid);
}

std::string verify_embedding(const FatTree& tree, const Embedding& emb, const Fabric& fabric) {
  const int n = static_cast<int>(fabric.nodes.size());
  auto cable = [&](int node, int port, int peer, int peer_port) {
    if (node < 0 || node >= n || peer < 0 || peer >= n) return false;
    const auto& ports = fabric.nodes[node].ports;
    if (port <= 0 || port >= static_cast<int>(ports.size())) return false;
    return ports[port].peer_node == peer && ports[port].peer_port == peer_port;
  };
  auto where = [&](int l, int i, int p) {
    return (l == 0 ? tree.host_name(i) : tree.switch_name(l, i)) + " port " + std::to_string(p);
  };
  std::set<std::pair<int, int>> used;  // (node, physical port) ends accounted for
  if (static_cast<int>(emb.host_node.size()) != tree.num_hosts())
    return "the embedding has the wrong number of hosts";
  for (HostId h = 0; h < tree.num_hosts(); ++h) {
    const PortRef leaf = tree.host_peer(h);
    const int sw = emb.switch_node[0][leaf.index];
    const int phys = emb.port_map[0][leaf.index][leaf.port];
    if (!cable(sw, phys, emb.host_node[h], emb.host_port[h]))
      return "model host " + tree.host_name(h) + " is not cabled to " +
             where(1, leaf.index, leaf.port);
    used.insert({sw, phys});
    used.insert({emb.host_node[h], emb.host_port[h]});
  }
  std::set<LinkId> missing(emb.missing_links.begin(), emb.missing_links.end());
  for (LinkId link = 0; link < tree.total_links(); ++link) {
    if (missing.count(link)) continue;
    const PortRef lo = tree.link_lower(link);
    const PortRef up = tree.link_upper(link);
    const int a = emb.switch_node[lo.level - 1][lo.index];
    const int b = emb.switch_node[up.level - 1][up.index];
    const int pa = emb.port_map[lo.level - 1][lo.index][lo.port];
    const int pb = emb.port_map[up.level - 1][up.index][up.port];
    if (!cable(a, pa, b, pb))
      return "model link " + where(lo.level, lo.index, lo.port) + " - " +
             where(up.level, up.index, up.port) + " has no cable";
    used.insert({a, pa});
    used.insert({b, pb});
  }
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

}  // namespace laas::topology
