// Recognition from the cabling: the Recognizer's phases up to the shape (classify the nodes,
// rank the levels, find the pods, order the planes, fit a declared shape), and run().
#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "topology/recognizer.h"

namespace laas::topology::recognition {

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
  std::vector<int> lonely;  // leaves with no level-2 switch left (all up-links down)
  connect_pods(lonely);
  if (pod_leaves_.empty()) return fail("no leaf is cabled to a level-2 switch");
  if (height_ == 3 && !demote_leaves_at_top()) return false;
  if (height_ == 2 && pod_leaves_.size() != 1)
    return fail("the leaves form " + std::to_string(pod_leaves_.size()) +
                " separate groups under the level-2 switches");
  m2_ = 0;
  for (const auto& pl : pod_leaves_) m2_ = std::max(m2_, static_cast<int>(pl.size()));
  if (target_ && target_->levels.size() >= 2) m2_ = std::max(m2_, target_->levels[1].children);
  if (!place_lonely_leaves(lonely)) return false;
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

// Connected components of the leaf / level-2 graph (a 2-level tree is one pod); leaves with
// no level-2 switch go to `lonely`.
void Recognizer::connect_pods(std::vector<int>& lonely) {
  std::vector<int> comp(n_, -1);
  std::vector<int> leaves = by_level_[0];
  sort_by_key(leaves);
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
}

// A level-3 switch cabled to two level-2 switches of one pod is a leaf whose hosts are all
// down (a top switch reaches one level-2 switch per pod).
bool Recognizer::demote_leaves_at_top() {
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
  return true;
}

// Leaves without up-links join the pod with room for them (any pod in a 2-level tree).
bool Recognizer::place_lonely_leaves(const std::vector<int>& lonely) {
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
  int planes = 0;
  if (!assign_planes(group, b2_of, planes)) return false;
  for (int t : by_level_[2])
    if (!group.count(t)) return fail(describe(f_, t) + " cannot be placed in the tree");
  w2_ = std::max(w2_, planes);
  if (target_ && target_->levels.size() == 3) w2_ = std::max(w2_, target_->levels[1].parents);
  return order_pods_by_plane(b2_of) && group_tops(group);
}

// Planes are numbered in the order the first pod that reaches them names them.
// Propagate: tops take the plane of a known level-2 neighbour, level-2 switches the plane
// of a known top neighbour, until nothing changes; a fresh plane starts from the first
// unplaced level-2 switch (absent parts may leave the planes disconnected).
bool Recognizer::assign_planes(std::map<int, int>& group, std::map<int, int>& b2_of, int& planes) {
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
    if (seed < 0) return true;
    b2_of[seed] = planes++;
  }
}

// Within each pod the level-2 switches take every plane at most once; one with no cable to a
// top switch left takes the pod's free plane when exactly one is free.
bool Recognizer::order_pods_by_plane(const std::map<int, int>& b2_of) {
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
  return true;
}

// The top switches of each plane, in key order (absent ones last); every top switch must
// reach at most one level-2 switch per pod (checked through planes).
bool Recognizer::group_tops(std::map<int, int>& group) {
  top_groups_.assign(w2_, {});
  for (int t : by_level_[2]) top_groups_[group[t]].push_back(t);
  w3_ = 0;
  for (auto& g : top_groups_) {
    sort_by_key(g);
    w3_ = std::max(w3_, static_cast<int>(g.size()));
  }
  if (target_ && target_->levels.size() == 3) w3_ = std::max(w3_, target_->levels[2].parents);
  for (auto& g : top_groups_) g.resize(w3_, -1);  // absent top switches last
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

}  // namespace laas::topology::recognition
