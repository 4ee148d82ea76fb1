#include "topology/recognize.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <optional>
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

// Whether a cable joins (a, pa) and (b, pb).
bool cabled(const Fabric& f, int a, int pa, int b, int pb) {
  if (a < 0 || b < 0) return false;
  const auto& ports = f.nodes[a].ports;
  if (pa <= 0 || pa >= static_cast<int>(ports.size())) return false;
  return ports[pa].peer_node == b && ports[pa].peer_port == pb;
}

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
// hosts, the rest extra cables. A switch cabled to itself is refused: the error, else "".
std::string find_outside(const FatTree& tree, const Fabric& f, Embedding& emb,
                         bool set_aside_loops = false) {
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

class Recognizer {
 public:
  Recognizer(const Fabric& f, const FatTreeSpec* target)
      : f_(f), n_(static_cast<int>(f.nodes.size())), target_(target) {}

  Recognition run(Guid sm_port_guid);

 private:
  // Every step returns false after setting error_.
  bool classify();
  bool rank_levels();
  bool find_pods();
  bool order_level2_and_top();
  bool fit_target();
  void build_maps(const FatTree& tree, Embedding& emb);
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
      if (ports[p].peer_node == peer && !ignored_.count({node, p})) out.push_back(p);
    return out;
  }
  std::vector<int> switch_peers(int node) const {
    std::set<int> s;
    const auto& ports = f_.nodes[node].ports;
    for (int p = 1; p < static_cast<int>(ports.size()); ++p) {
      const int q = ports[p].peer_node;
      if (q >= 0 && f_.nodes[q].is_switch && !ignored_.count({node, p})) s.insert(q);
    }
    return {s.begin(), s.end()};
  }
  // A cable outside the tree: every step after ranking ignores it (find_outside lists it).
  void ignore_cables(int a, int b) {
    for (int p : ports_to(a, b)) {
      ignored_.insert({a, p});
      ignored_.insert({b, f_.nodes[a].ports[p].peer_port});
    }
  }
  int pod_of_node(int node) const {
    for (size_t k = 0; k < pod_l2_.size(); ++k)
      if (std::find(pod_l2_[k].begin(), pod_l2_[k].end(), node) != pod_l2_[k].end() ||
          std::find(pod_leaves_[k].begin(), pod_leaves_[k].end(), node) != pod_leaves_[k].end())
        return static_cast<int>(k);
    return -1;
  }

  const Fabric& f_;
  const int n_;
  const FatTreeSpec* target_;  // declared shape, or null for the largest consistent tree
  std::string error_;
  std::set<std::pair<int, int>> ignored_;   // (node, port) ends of cables outside the tree
  std::vector<int> level_;                  // per node: 0 CA or off-tree, 1.. switch level
  std::vector<std::vector<int>> by_level_;  // [level-1] -> nodes
  std::vector<std::vector<int>> hosts_of_;  // per node (leaves): CAs
  int height_ = 0;
  int m1_ = 0, m2_ = 0, w2_ = 0;
  // Pods: leaves and level-2 switches, ordered; -1 marks an absent switch.
  std::vector<std::vector<int>> pod_leaves_, pod_l2_;
  int p2_ = 1, p3_ = 1, w3_ = 1;
  std::vector<std::vector<int>> top_groups_;  // [b2] -> top switches ordered by b3 (-1 absent)
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
    if (!f_.nodes[peer].is_switch) continue;  // two adapters cabled together: outside the tree
    hosts_of_[peer].push_back(i);
  }
  // A storage or gateway host on a spine makes that spine carry hosts too. A leaf's switch
  // neighbours carry no hosts; a switch most of whose neighbours are switches with more hosts
  // than it has is above them: its hosts are attached to the tree, not slots of it.
  std::vector<int> demoted;
  for (int i = 0; i < n_; ++i) {
    if (!f_.nodes[i].is_switch || hosts_of_[i].empty()) continue;
    const auto peers = switch_peers(i);
    int above = 0;
    for (int q : peers)
      if (q != i && hosts_of_[q].size() > hosts_of_[i].size()) ++above;
    if (2 * above > static_cast<int>(peers.size())) demoted.push_back(i);
  }
  for (int i : demoted) hosts_of_[i].clear();
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
      if (t == i)
        return fail("a loop cable joins two ports of " + describe(f_, i) +
                    ": a switch cabled to itself is not routed (remove the cable)");
      const int d = level_[t] - level_[i];
      if (d == 1 || d == -1) continue;
      // Two leaves, or two switches of one level, cabled together (a miscabled port while a
      // leaf is installed): a cable outside the tree, never used by a route.
      ignore_cables(i, t);
    }
  }
  if (height_ < 2)
    return fail("the fabric has a single switch level; only 2- and 3-level fat-trees are routed");
  if (height_ > 3)
    return fail("the fabric has " + std::to_string(height_) +
                " switch levels counted from the hosts; only 2- and 3-level fat-trees are routed");
  // Host slots in physical port order: a host's identity is its (leaf, port).
  for (int s : by_level_[0])
    std::sort(hosts_of_[s].begin(), hosts_of_[s].end(),
              [&](int a, int b) { return ports_to(s, a).at(0) < ports_to(s, b).at(0); });
  // The largest consistent tree: as many host slots per leaf as the fullest leaf holds.
  m1_ = 0;
  for (int s : by_level_[0]) m1_ = std::max(m1_, static_cast<int>(hosts_of_[s].size()));
  return true;
}

bool Recognizer::find_pods() {
  // Connected components of the leaf / level-2 graph (a 2-level tree is one pod).
  std::vector<int> comp(n_, -1);
  std::vector<int> leaves = by_level_[0];
  sort_by_key(leaves);
  std::vector<int> lonely;  // leaves with no level-2 switch left (all up-links down)
  for (int start : leaves) {
    if (comp[start] >= 0) continue;
    std::vector<int> stack{start};
    comp[start] = static_cast<int>(pod_leaves_.size());
    std::vector<int> pl, p2;
    while (!stack.empty()) {
      const int x = stack.back();
      stack.pop_back();
      (level_[x] == 1 ? pl : p2).push_back(x);
      for (int t : switch_peers(x))
        if (level_[t] <= 2 && comp[t] < 0) {
          comp[t] = comp[start];
          stack.push_back(t);
        }
    }
    if (p2.empty()) {
      lonely.insert(lonely.end(), pl.begin(), pl.end());
      continue;
    }
    sort_by_key(pl);
    sort_by_key(p2);
    pod_leaves_.push_back(pl);
    pod_l2_.push_back(p2);
  }
  if (pod_leaves_.empty()) return fail("no leaf is cabled to a level-2 switch");
  // A level-3 switch cabled to two level-2 switches of one pod is a leaf whose hosts are all
  // down (a top switch reaches one level-2 switch per pod).
  if (height_ == 3) {
    std::vector<int> tops;
    for (int t : by_level_[2]) {
      std::map<int, int> per_pod;
      bool leaf = false;
      for (int s : switch_peers(t))
        for (size_t k = 0; k < pod_l2_.size(); ++k)
          if (std::find(pod_l2_[k].begin(), pod_l2_[k].end(), s) != pod_l2_[k].end() &&
              ++per_pod[static_cast<int>(k)] >= 2)
            leaf = true;
      if (!leaf) {
        tops.push_back(t);
        continue;
      }
      int pod = -1;
      for (const auto& [kk, c] : per_pod)
        if (c >= 2) pod = kk;
      if (per_pod.size() != 1)
        return fail(describe(f_, t) + " is cabled to two level-2 switches of one pod");
      level_[t] = 1;
      pod_leaves_[pod].push_back(t);
      sort_by_key(pod_leaves_[pod]);
    }
    by_level_[2] = tops;
    if (tops.empty()) {
      by_level_.pop_back();
      height_ = 2;
    }
  }
  if (height_ == 2 && pod_leaves_.size() != 1)
    return fail("the leaves form " + std::to_string(pod_leaves_.size()) +
                " separate groups under the level-2 switches");
  m2_ = 0;
  for (const auto& pl : pod_leaves_) m2_ = std::max(m2_, static_cast<int>(pl.size()));
  if (target_ && target_->levels.size() >= 2) m2_ = std::max(m2_, target_->levels[1].children);
  // Leaves without up-links join the pod with room for them (any pod in a 2-level tree).
  for (int s : lonely) {
    int best = -1;
    for (size_t k = 0; k < pod_leaves_.size(); ++k)
      if (static_cast<int>(pod_leaves_[k].size()) < m2_ &&
          (best < 0 || pod_leaves_[k].size() < pod_leaves_[best].size()))
        best = static_cast<int>(k);
    if (best < 0 && height_ == 2) {
      best = 0;
      ++m2_;
    }
    if (best < 0)
      return fail("leaf " + describe(f_, s) +
                  " has no up-link and no pod has room for it; declare the topology in laas.yaml");
    pod_leaves_[best].push_back(s);
  }
  for (auto& pl : pod_leaves_) {
    sort_by_key(pl);
    pl.resize(m2_, -1);  // absent leaves last
  }
  for (int s : by_level_[0])
    for (int t : switch_peers(s)) p2_ = std::max(p2_, static_cast<int>(ports_to(s, t).size()));
  w2_ = 0;
  for (const auto& p2 : pod_l2_) w2_ = std::max(w2_, static_cast<int>(p2.size()));
  return true;
}

bool Recognizer::order_level2_and_top() {
  if (height_ == 2) {
    if (target_ && target_->levels.size() == 2) w2_ = std::max(w2_, target_->levels[1].parents);
    pod_l2_[0].resize(w2_, -1);
    return true;
  }
  std::map<int, int> group;  // top switch -> plane b2
  std::map<int, int> b2_of;  // level-2 switch -> plane b2
  // Planes are numbered in the order the first pod that reaches them names them.
  int planes = 0;
  // Propagate: tops take the plane of a known level-2 neighbour, level-2 switches the plane
  // of a known top neighbour, until nothing changes; a fresh plane starts from the first
  // unplaced level-2 switch (absent parts may leave the planes disconnected).
  for (;;) {
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
    int seed = -1;
    for (const auto& pod : pod_l2_) {
      for (int s : pod) {
        if (b2_of.count(s)) continue;
        bool has_top = false;
        for (int t : switch_peers(s)) has_top = has_top || level_[t] == 3;
        if (has_top) {
          seed = s;
          break;
        }
      }
      if (seed >= 0) break;
    }
    if (seed < 0) break;
    b2_of[seed] = planes++;
  }
  for (int t : by_level_[2])
    if (!group.count(t)) return fail(describe(f_, t) + " cannot be placed in the tree");
  w2_ = std::max(w2_, planes);
  if (target_ && target_->levels.size() == 3) w2_ = std::max(w2_, target_->levels[1].parents);
  // Within each pod the level-2 switches take every plane at most once; one with no cable to a
  // top switch left takes the pod's free plane when exactly one is free.
  for (auto& pod : pod_l2_) {
    std::vector<int> ordered(w2_, -1);
    std::vector<int> unplaced;
    for (int s : pod) {
      auto it = b2_of.find(s);
      if (it == b2_of.end()) {
        unplaced.push_back(s);
        continue;
      }
      if (ordered[it->second] >= 0)
        return fail(describe(f_, s) + " and " + describe(f_, ordered[it->second]) +
                    " are in the same pod and cabled to the same top switches");
      ordered[it->second] = s;
    }
    const int free_planes = static_cast<int>(std::count(ordered.begin(), ordered.end(), -1));
    if (!unplaced.empty() && (unplaced.size() > 1 || free_planes != 1))
      return fail(describe(f_, unplaced[0]) + " has no cable to a top switch");
    for (int s : unplaced) *std::find(ordered.begin(), ordered.end(), -1) = s;
    pod = ordered;
  }
  top_groups_.assign(w2_, {});
  for (int t : by_level_[2]) top_groups_[group[t]].push_back(t);
  w3_ = 0;
  for (auto& g : top_groups_) {
    sort_by_key(g);
    w3_ = std::max(w3_, static_cast<int>(g.size()));
  }
  if (target_ && target_->levels.size() == 3) w3_ = std::max(w3_, target_->levels[2].parents);
  for (auto& g : top_groups_) g.resize(w3_, -1);  // absent top switches last
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

// A declared shape: what the cabling shows must fit in it; the rest is absent.
bool Recognizer::fit_target() {
  if (!target_) return true;
  const auto& t = target_->levels;
  if (static_cast<int>(t.size()) != height_)
    return fail("laas.yaml declares a " + std::to_string(t.size()) +
                "-level tree but the cabling has " + std::to_string(height_) + " switch levels");
  auto check = [&](const char* what, int seen, int declared) {
    if (seen > declared)
      return fail(std::string("the cabling has ") + std::to_string(seen) + " " + what +
                  " but laas.yaml declares " + target_->text() + " (" + std::to_string(declared) +
                  ")");
    return true;
  };
  if (!check("hosts on a leaf", m1_, t[0].children)) return false;
  if (!check("leaves in a pod", m2_, t[1].children)) return false;
  if (!check("level-2 switches per pod", w2_, t[1].parents)) return false;
  if (!check("parallel leaf up-links", p2_, t[1].parallel)) return false;
  if (height_ == 3) {
    if (!check("pods", static_cast<int>(pod_leaves_.size()), t[2].children)) return false;
    if (!check("top switches per plane", w3_, t[2].parents)) return false;
    if (!check("parallel level-2 up-links", p3_, t[2].parallel)) return false;
  }
  m1_ = t[0].children;
  p2_ = t[1].parallel;
  if (height_ == 3) {
    p3_ = t[2].parallel;
    pod_leaves_.resize(t[2].children, std::vector<int>(m2_, -1));
    pod_l2_.resize(t[2].children, std::vector<int>(w2_, -1));
  }
  return true;
}

// Physical ports: what the cables show, and for absent parts the port most switches of the
// same level use for that model port (so a host or cable that comes back lands in its slot).
void Recognizer::build_maps(const FatTree& tree, Embedding& emb) {
  const int h = tree.height();
  emb.switch_node.assign(h, {});
  emb.switch_guid.assign(h, {});
  emb.port_map.assign(h, {});
  emb.host_node.assign(tree.num_hosts(), -1);
  emb.host_port.assign(tree.num_hosts(), 0);
  emb.node_model.assign(n_, {-1, -1});
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
  for (int l = 1; l <= h; ++l)
    for (int i = 0; i < tree.num_switches(l); ++i) {
      const int node = emb.switch_node[l - 1][i];
      if (node >= 0) emb.node_model[node] = {l, i};
      emb.switch_guid[l - 1].push_back(node >= 0 ? f_.nodes[node].guid : 0);
      emb.port_map[l - 1].push_back(std::vector<int>(tree.num_ports(l) + 1, 0));
    }
  auto node_of = [&](const PortRef& r) { return emb.switch_node[r.level - 1][r.index]; };
  auto& pm = emb.port_map;
  // The model port -> physical port most rows of a level agree on (0: no opinion).
  auto templates = [&]() {
    std::vector<std::vector<int>> out(h);
    for (int l = 1; l <= h; ++l) {
      out[l - 1].assign(tree.num_ports(l) + 1, 0);
      for (int mp = 1; mp <= tree.num_ports(l); ++mp) {
        std::map<int, int> votes;
        for (const auto& row : pm[l - 1])
          if (row[mp] > 0) ++votes[row[mp]];
        int best = 0, count = 0;
        for (const auto& [phys, c] : votes)
          if (c > count) best = phys, count = c;
        out[l - 1][mp] = best;
      }
    }
    return out;
  };
  // Round 1: full leaves and complete parallel sets map one to one.
  std::vector<std::vector<int>> host_ports(tree.num_leaves());
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    const int s = emb.switch_node[0][leaf];
    if (s < 0) continue;
    for (int ca : hosts_of_[s]) host_ports[leaf].push_back(ports_to(s, ca).at(0));
    if (static_cast<int>(host_ports[leaf].size()) == tree.m(1))
      for (int slot = 0; slot < tree.m(1); ++slot)
        pm[0][leaf][tree.down_port(1, slot, 0)] = host_ports[leaf][slot];
  }
  // Parallel groups: (lower level, lower index, parent b) -> model columns b*p .. b*p+p-1.
  auto parallel_group = [&](int l, int i, int b, bool use_template,
                            const std::vector<std::vector<int>>* tmpl) {
    const int p = tree.p(l + 1);
    const PortRef first = tree.parent_of(l, i, b * p);
    const int lo = emb.switch_node[l - 1][i];
    const int up = node_of(first);
    if (lo < 0 || up < 0) return;
    const auto phys = ports_to(lo, up);
    if (phys.empty()) return;
    if (static_cast<int>(phys.size()) == p && !use_template) {
      for (int j = 0; j < p; ++j) {
        const PortRef u = tree.parent_of(l, i, b * p + j);
        pm[l - 1][i][tree.up_port(l, b * p + j)] = phys[j];
        pm[u.level - 1][u.index][u.port] = f_.nodes[lo].ports[phys[j]].peer_port;
      }
      return;
    }
    if (!use_template || static_cast<int>(phys.size()) >= p) return;
    // Fewer cables than parallel links: each present cable takes the model link whose usual
    // physical port it is, the others fill the remaining links in port order.
    std::vector<int> slot_of(phys.size(), -1);
    std::vector<bool> taken(p, false);
    for (size_t x = 0; x < phys.size(); ++x)
      for (int j = 0; j < p; ++j)
        if (!taken[j] && (*tmpl)[l - 1][tree.up_port(l, b * p + j)] == phys[x]) {
          slot_of[x] = j;
          taken[j] = true;
          break;
        }
    for (size_t x = 0; x < phys.size(); ++x)
      if (slot_of[x] < 0)
        for (int j = 0; j < p; ++j)
          if (!taken[j]) {
            slot_of[x] = j;
            taken[j] = true;
            break;
          }
    for (size_t x = 0; x < phys.size(); ++x) {
      const int j = slot_of[x];
      const PortRef u = tree.parent_of(l, i, b * p + j);
      pm[l - 1][i][tree.up_port(l, b * p + j)] = phys[x];
      pm[u.level - 1][u.index][u.port] = f_.nodes[lo].ports[phys[x]].peer_port;
    }
  };
  for (int l = 1; l < h; ++l)
    for (int i = 0; i < tree.num_switches(l); ++i)
      for (int b = 0; b < tree.w(l + 1); ++b) parallel_group(l, i, b, false, nullptr);
  // Round 2: partial leaves and parallel sets, guided by what the others agree on.
  auto tmpl = templates();
  for (int l = 1; l < h; ++l)
    for (int i = 0; i < tree.num_switches(l); ++i)
      for (int b = 0; b < tree.w(l + 1); ++b) parallel_group(l, i, b, true, &tmpl);
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    const int s = emb.switch_node[0][leaf];
    const auto& have = host_ports[leaf];
    if (s < 0 || static_cast<int>(have.size()) == tree.m(1)) continue;
    std::vector<int> usual;
    for (int slot = 0; slot < tree.m(1); ++slot)
      usual.push_back(tmpl[0][tree.down_port(1, slot, 0)]);
    const auto& own = f_.nodes[s].ports;
    const bool fits =
        std::all_of(
            have.begin(), have.end(),
            [&](int p) { return std::find(usual.begin(), usual.end(), p) != usual.end(); }) &&
        std::all_of(usual.begin(), usual.end(), [&](int p) {
          if (std::find(have.begin(), have.end(), p) != have.end()) return true;
          if (p <= 0 || std::find(pm[0][leaf].begin(), pm[0][leaf].end(), p) != pm[0][leaf].end())
            return false;
          return p >= static_cast<int>(own.size()) || own[p].peer_node < 0;
        });
    std::vector<int> slots;
    if (fits && std::find(usual.begin(), usual.end(), 0) == usual.end()) {
      slots = usual;
    } else {
      slots = have;
      const auto& ports = f_.nodes[s].ports;
      for (int p = 1; static_cast<int>(slots.size()) < tree.m(1) && p < 255; ++p) {
        if (std::find(slots.begin(), slots.end(), p) != slots.end()) continue;
        if (p < static_cast<int>(ports.size()) && ports[p].peer_node >= 0) continue;
        if (std::find(pm[0][leaf].begin(), pm[0][leaf].end(), p) != pm[0][leaf].end()) continue;
        slots.push_back(p);
      }
      std::sort(slots.begin(), slots.end());
    }
    for (int slot = 0; slot < tree.m(1); ++slot)
      pm[0][leaf][tree.down_port(1, slot, 0)] = slots[slot];
  }
  // Round 3: every port still unknown takes the level's usual port, or the lowest free one.
  tmpl = templates();
  for (int l = 1; l <= h; ++l)
    for (int i = 0; i < tree.num_switches(l); ++i) {
      auto& row = pm[l - 1][i];
      const int node = emb.switch_node[l - 1][i];
      auto usable = [&](int p) {
        if (p <= 0 || p > 254) return false;
        if (std::find(row.begin() + 1, row.end(), p) != row.end()) return false;
        if (node < 0) return true;
        const auto& ports = f_.nodes[node].ports;
        return p >= static_cast<int>(ports.size()) || ports[p].peer_node < 0;
      };
      for (int mp = 1; mp <= tree.num_ports(l); ++mp) {
        if (row[mp] > 0) continue;
        if (usable(tmpl[l - 1][mp])) {
          row[mp] = tmpl[l - 1][mp];
          continue;
        }
        if (usable(mp)) {
          row[mp] = mp;
          continue;
        }
        for (int p = 1; p <= 254; ++p)
          if (usable(p)) {
            row[mp] = p;
            break;
          }
      }
    }
  // Hosts present in their slots.
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    const int s = emb.switch_node[0][leaf];
    if (s < 0) continue;
    for (int slot = 0; slot < tree.m(1); ++slot) {
      const int phys = pm[0][leaf][tree.down_port(1, slot, 0)];
      const auto& ports = f_.nodes[s].ports;
      if (phys <= 0 || phys >= static_cast<int>(ports.size())) continue;
      const int ca = ports[phys].peer_node;
      if (ca < 0 || f_.nodes[ca].is_switch) continue;
      const HostId host = tree.host_at(leaf, slot);
      emb.host_node[host] = ca;
      emb.host_port[host] = ports[phys].peer_port;
      emb.node_model[ca] = {0, host};
    }
  }
}

Recognition Recognizer::run(Guid sm_port_guid) {
  Recognition r;
  if (!classify() || !rank_levels() || !find_pods() || !order_level2_and_top() || !fit_target()) {
    r.error = error_;
    return r;
  }
  FatTreeSpec spec;
  spec.levels.push_back({m1_, 1, 1});
  spec.levels.push_back({m2_, w2_, p2_});
  if (height_ == 3) spec.levels.push_back({static_cast<int>(pod_leaves_.size()), w3_, p3_});
  try {
    FatTree tree(spec);
    build_maps(tree, r.embedding);
    finish_absent(tree, f_, r.embedding);
    if (std::string loop = find_outside(tree, f_, r.embedding); !loop.empty()) {
      r.error = loop;
      return r;
    }
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
  find_sm(f_, sm_port_guid, r);
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

const char* source_name(TreeSource s) {
  switch (s) {
    case TreeSource::kLayout:
      return "layout";
    case TreeSource::kDeclared:
      return "declared";
    case TreeSource::kCabling:
      return "cabling";
    case TreeSource::kGrown:
      return "grown";
  }
  return "?";
}

Recognition recognize(const Fabric& fabric, Guid sm_port_guid) {
  RecognizeOptions options;
  options.sm_port_guid = sm_port_guid;
  return recognize(fabric, options);
}

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

// Staged build-out: `r` embeds the recorded layout; when extra cables join its
// switches to switches it does not know, the tree the cabling (or the declared spec) shows is
// adopted if it contains the recorded one. Replaces `r` and returns true then; otherwise adds
// why not to its source note.
bool grow(const Layout& recorded, const Fabric& fabric, const RecognizeOptions& options,
          const FatTreeSpec* declared, Recognition& r) {
  const auto& nm = r.embedding.node_model;
  std::set<int> outside;
  for (const auto& c : r.embedding.extra_cables) {
    const bool a = fabric.nodes[c.node].is_switch, b = fabric.nodes[c.peer].is_switch;
    if (a && b && nm[c.node].first >= 1 && nm[c.peer].first < 0) outside.insert(c.peer);
    if (a && b && nm[c.peer].first >= 1 && nm[c.node].first < 0) outside.insert(c.node);
  }
  if (outside.empty()) return false;
  const Recognition bigger = Recognizer(fabric, declared).run(options.sm_port_guid);
  std::string why;
  std::optional<Layout> grown = grow_layout(recorded, bigger, fabric, &why);
  Recognition g;
  if (grown) {
    try {
      why = embed_layout(*grown, fabric, &g);
    } catch (const SpecError& e) {
      why = e.what();
    }
    if (why.empty() && declared && grown->spec != declared->text())
      why = "it would be " + grown->spec + ", larger than laas.yaml's topology " + declared->text();
    int joined = 0;
    for (int n : outside) joined += why.empty() && g.embedding.node_model[n].first >= 1;
    if (why.empty() && joined == 0) why = "none of them joins the tree";
    if (!why.empty()) why = "the grown tree " + grown->spec + " does not fit: " + why;
  }
  if (!why.empty()) {
    r.source_note += "; " + std::to_string(outside.size()) +
                     " switch(es) cabled to the tree are not a growth of it: " + why;
    return false;
  }
  g.source = TreeSource::kGrown;
  g.growth = growth_summary(recorded, *grown);
  g.source_note = "intended tree " + g.tree->spec().text() + " grown from the recorded layout (" +
                  recorded.spec + ")";
  g.grown = std::move(grown);
  find_sm(fabric, options.sm_port_guid, g);
  r = std::move(g);
  return true;
}

}  // namespace

Recognition recognize(const Fabric& fabric, const RecognizeOptions& options) {
  std::string note;
  std::optional<FatTreeSpec> declared;
  if (!options.declared.empty()) {
    try {
      declared = parse_spec(options.declared);
    } catch (const SpecError& e) {
      Recognition r;
      r.error = "laas.yaml topology '" + options.declared + "' is not a spec: " + e.what();
      return r;
    }
  }
  if (options.layout) {
    if (declared && declared->text() != options.layout->spec) {
      note = "; the recorded layout (" + options.layout->spec + ") differs from laas.yaml's " +
             declared->text() + " and is not used";
    } else {
      Recognition r;
      std::string bad;
      try {
        bad = embed_layout(*options.layout, fabric, &r, options.set_aside_loops);
      } catch (const SpecError& e) {
        bad = std::string("its spec is invalid: ") + e.what();
      }
      if (bad.empty()) {
        r.source = TreeSource::kLayout;
        r.source_note = "intended tree " + r.tree->spec().text() + " from the recorded layout";
        find_sm(fabric, options.sm_port_guid, r);
        grow(*options.layout, fabric, options, declared ? &*declared : nullptr, r);
        return r;
      }
      note = "; the recorded layout (" + options.layout->spec + ") does not fit: " + bad;
      if (options.set_aside_loops) {
        r.error = "the recorded layout (" + options.layout->spec + ") does not fit: " + bad;
        return r;
      }
    }
  }
  Recognition r;
  if (declared) {
    r = Recognizer(fabric, &*declared).run(options.sm_port_guid);
    r.source = TreeSource::kDeclared;
    if (r.ok())
      r.source_note = "intended tree " + r.tree->spec().text() + " declared in laas.yaml";
    else
      r.error =
          "the cabling does not fit laas.yaml's topology " + declared->text() + ": " + r.error;
  } else {
    r = Recognizer(fabric, nullptr).run(options.sm_port_guid);
    r.source = TreeSource::kCabling;
    if (r.ok())
      r.source_note = "intended tree " + r.tree->spec().text() +
                      " read from the cabling (largest consistent tree)";
  }
  if (r.ok())
    r.source_note += note;
  else
    r.error += note;
  return r;
}

std::string verify_embedding(const FatTree& tree, const Embedding& emb, const Fabric& fabric) {
  const int n = static_cast<int>(fabric.nodes.size());
  auto cable = [&](int node, int port, int peer, int peer_port) {
    if (node < 0 || node >= n || peer < 0 || peer >= n) return false;
    return cabled(fabric, node, port, peer, peer_port);
  };
  auto where = [&](int l, int i, int p) {
    return (l == 0 ? tree.host_name(i) : tree.switch_name(l, i)) + " port " + std::to_string(p);
  };
  std::set<std::pair<int, int>> used;  // (node, physical port) ends accounted for
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
          return where(l, i, mp) + " has no physical port of its own";
      const bool missing = std::binary_search(emb.missing_switches.begin(),
                                              emb.missing_switches.end(), std::make_pair(l, i));
      if (missing != (emb.switch_node[l - 1][i] < 0))
        return tree.switch_name(l, i) + " is absent but not listed as missing (or the reverse)";
    }
  }
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
    if (!cable(sw, phys, emb.host_node[h], emb.host_port[h]))
      return "model host " + tree.host_name(h) + " is not cabled to " +
             where(1, leaf.index, leaf.port);
    used.insert({sw, phys});
    used.insert({emb.host_node[h], emb.host_port[h]});
  }
  std::set<LinkId> missing(emb.missing_links.begin(), emb.missing_links.end());
  for (LinkId link = 0; link < tree.total_links(); ++link) {
    const PortRef lo = tree.link_lower(link);
    const PortRef up = tree.link_upper(link);
    const int a = emb.switch_node[lo.level - 1][lo.index];
    const int b = emb.switch_node[up.level - 1][up.index];
    const int pa = emb.port_map[lo.level - 1][lo.index][lo.port];
    const int pb = emb.port_map[up.level - 1][up.index][up.port];
    const bool present = cable(a, pa, b, pb);
    if (missing.count(link)) {
      if (present)
        return "model link " + where(lo.level, lo.index, lo.port) + " is cabled but listed missing";
      continue;
    }
    if (!present)
      return "model link " + where(lo.level, lo.index, lo.port) + " - " +
             where(up.level, up.index, up.port) + " has no cable";
    used.insert({a, pa});
    used.insert({b, pb});
  }
  // Cables outside the tree must be listed as such (find_outside).
  for (const auto& a : emb.attached) {
    const int sw = a.level >= 1 && a.level <= tree.height() && a.index >= 0 &&
                           a.index < tree.num_switches(a.level)
                       ? emb.switch_node[a.level - 1][a.index]
                       : -1;
    if (!cable(a.node, a.port, sw, a.switch_port) || fabric.nodes[a.node].is_switch)
      return "an attached host is not cabled where the embedding says";
    used.insert({a.node, a.port});
    used.insert({sw, a.switch_port});
  }
  for (const auto& c : emb.extra_cables) {
    if (!cable(c.node, c.port, c.peer, c.peer_port))
      return "an extra cable is not cabled where the embedding says";
    used.insert({c.node, c.port});
    used.insert({c.peer, c.peer_port});
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
