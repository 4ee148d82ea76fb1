#include "routing/multicast.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <set>
#include <tuple>

namespace laas::routing {
namespace {

constexpr int kFree = -1;
constexpr int kManagement = -2;
constexpr long long kInf = std::numeric_limits<long long>::max() / 4;
// A shared group prefers links nobody holds; a member tenant's link costs as much as this many
// free hops, so it is used only where no free path exists.
constexpr long long kTenantLinkCost = 1000;
// Root candidates evaluated before the others (see below).
constexpr std::size_t kRootSample = 16;

struct Arc {
  int to;       // switch number
  LinkId link;  // the cable
  int port;     // model port on this side
};

// The switches of the tree as one graph: switch number = level offset + index.
class Graph {
 public:
  explicit Graph(const FatTree& t) {
    for (int level = 1; level <= t.height(); ++level) {
      offset_.push_back(n_);
      n_ += t.num_switches(level);
    }
    arcs_.resize(n_);
    for (LinkId l = 0; l < t.total_links(); ++l) {
      const auto lo = t.link_lower(l);
      const auto up = t.link_upper(l);
      const int a = number(lo.level, lo.index), b = number(up.level, up.index);
      arcs_[a].push_back({b, l, lo.port});
      arcs_[b].push_back({a, l, up.port});
    }
  }
  int size() const { return n_; }
  int number(int level, int index) const { return offset_[level - 1] + index; }
  std::pair<int, int> at(int number) const {
    int level = static_cast<int>(offset_.size());
    while (level > 1 && number < offset_[level - 1]) --level;
    return {level, number - offset_[level - 1]};
  }
  const std::vector<Arc>& arcs(int number) const { return arcs_[number]; }

 private:
  int n_ = 0;
  std::vector<int> offset_;
  std::vector<std::vector<Arc>> arcs_;
};

struct Paths {
  std::vector<long long> dist;
  std::vector<int> parent_arc_from;  // switch the best path comes from (-1: a source)
  std::vector<LinkId> parent_link;
};

// Dijkstra from `sources` over the links `cost` allows (cost < 0: forbidden). Arcs are
// explored in port order and ties keep the first path found, so the result is deterministic.
Paths shortest(const Graph& g, const std::vector<int>& sources,
               const std::function<long long(LinkId)>& cost) {
  Paths p;
  p.dist.assign(g.size(), kInf);
  p.parent_arc_from.assign(g.size(), -1);
  p.parent_link.assign(g.size(), -1);
  using Item = std::pair<long long, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> q;
  for (int s : sources) {
    p.dist[s] = 0;
    q.push({0, s});
  }
  while (!q.empty()) {
    const auto [d, u] = q.top();
    q.pop();
    if (d != p.dist[u]) continue;
    for (const Arc& a : g.arcs(u)) {
      const long long c = cost(a.link);
      if (c < 0) continue;
      if (d + c < p.dist[a.to]) {
        p.dist[a.to] = d + c;
        p.parent_arc_from[a.to] = u;
        p.parent_link[a.to] = a.link;
        q.push({p.dist[a.to], a.to});
      }
    }
  }
  return p;
}

// One group's tree, in steps: the policy indexed, the members classified, the targets and
// link costs, the root, the tree joined from it, the ports written.
class TreeBuilder {
 public:
  TreeBuilder(const FatTree& t, const McastPolicy& policy, const McastGroup& group)
      : t_(t), policy_(policy), group_(group) {}

  McastTree build() {
    index_policy();
    classify_members();
    if (members_.size() + member_switches_.size() < 2) return out_;  // as OpenSM: nothing to do
    const Graph g(t_);
    choose_targets(g);
    Paths best;
    const int root = choose_root(g, lowest_root_level(g), best);
    if (root < 0) return out_;
    join(g, root, best);
    write_ports(g);
    return out_;
  }

 private:
  void index_policy() {
    const int hosts = t_.num_hosts();
    const int links = t_.total_links();
    host_class_.assign(hosts, kFree);
    owner_.assign(links, kFree);
    faulty_.assign(links, 0);
    for (LinkId l : policy_.faulty_links) {
      if (l < 0 || l >= links)
        throw RoutingError("faulty link " + std::to_string(l) + " not in tree");
      faulty_[l] = 1;
    }
    for (HostId h : policy_.management_hosts) {
      if (h < 0 || h >= hosts)
        throw RoutingError("management host " + std::to_string(h) + " is not in the tree");
      host_class_[h] = kManagement;
    }
    for (int ti = 0; ti < static_cast<int>(policy_.tenants.size()); ++ti) {
      const auto& tenant = policy_.tenants[ti];
      for (HostId h : tenant.placement.hosts) {
        if (h < 0 || h >= hosts || host_class_[h] != kFree)
          throw RoutingError("tenant " + tenant.key + ": host " + std::to_string(h) +
                             " is out of range or held twice");
        host_class_[h] = ti;
      }
      for (LinkId l : tenant.placement.links) {
        if (l < 0 || l >= links || owner_[l] != kFree)
          throw RoutingError("tenant " + tenant.key + ": link " + std::to_string(l) +
                             " is out of range or held twice");
        owner_[l] = ti;
      }
    }
  }

  // Classify the group by its member hosts.
  void classify_members() {
    bool free_member = false;
    for (HostId h : group_.hosts) {
      if (h < 0 || h >= t_.num_hosts())
        throw RoutingError("member host " + std::to_string(h) + " not in tree");
      members_.push_back(h);
      if (host_class_[h] >= 0) member_tenants_.insert(host_class_[h]);
      if (host_class_[h] == kFree) free_member = true;
    }
    std::sort(members_.begin(), members_.end());
    members_.erase(std::unique(members_.begin(), members_.end()), members_.end());
    member_switches_ = group_.switches;
    std::sort(member_switches_.begin(), member_switches_.end());
    member_switches_.erase(std::unique(member_switches_.begin(), member_switches_.end()),
                           member_switches_.end());
    for (const auto& [level, index] : member_switches_)
      if (level < 1 || level > t_.height() || index < 0 || index >= t_.num_switches(level))
        throw RoutingError("member switch is not in the tree");
    if (member_tenants_.size() == 1 && !free_member) {
      out_.cls = McastClass::kTenant;
      out_.tenant = *member_tenants_.begin();
    }
  }

  // Targets: the switch each member hangs off. Core targets are joined first (phase 1); for a
  // tenant group the management members are attached afterwards (phase 2).
  void choose_targets(const Graph& g) {
    for (HostId h : members_) {
      const int sw = g.number(1, t_.leaf_of_host(h));
      host_target_.push_back({h, sw});
      const bool is_core = out_.cls == McastClass::kShared || host_class_[h] == out_.tenant;
      (is_core ? core_ : extra_).push_back(sw);
    }
    for (const auto& [level, index] : member_switches_)
      (out_.cls == McastClass::kShared ? core_ : extra_).push_back(g.number(level, index));
    auto dedup = [](std::vector<int>& v) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    };
    dedup(core_);
    dedup(extra_);
    if (out_.cls == McastClass::kTenant) {
      const int ti = out_.tenant;
      core_cost_ = [this, ti](LinkId l) -> long long {
        return !faulty_[l] && owner_[l] == ti ? 1 : -1;
      };
      extra_cost_ = [this, ti](LinkId l) -> long long {
        return !faulty_[l] && (owner_[l] == ti || owner_[l] == kFree) ? 1 : -1;
      };
    } else {
      core_cost_ = [this](LinkId l) -> long long {
        if (faulty_[l]) return -1;
        if (owner_[l] == kFree) return 1;
        return member_tenants_.count(owner_[l]) ? kTenantLinkCost : -1;
      };
    }
  }

  // Root: the lowest level that spans the core targets (one pod: level 2 of that pod), then
  // higher levels while some target stays unreached.
  int lowest_root_level(const Graph& g) const {
    int root_level = 1;
    std::set<int> pods;
    for (int sw : core_) {
      const auto [level, index] = g.at(sw);
      root_level = std::max(root_level, level);
      if (level == 1)
        pods.insert(t_.pod_of_leaf(index));
      else if (level == 2)
        pods.insert(t_.pod_of_level2(index));
      else
        pods.insert(-1);
    }
    if (core_.size() > 1) root_level = std::max(root_level, pods.size() > 1 ? 3 : 2);
    return std::min(root_level, t_.height());
  }

  struct Score {
    long long unreached, max, total;
    bool operator<(const Score& o) const {
      return std::tie(unreached, max, total) < std::tie(o.unreached, o.max, o.total);
    }
  };

  // The root (-1: none) and its paths to the core targets (`best`).
  int choose_root(const Graph& g, int root_level, Paths& best) const {
    for (int level = root_level; level <= t_.height(); ++level) {
      Score best_score{kInf, kInf, kInf};
      std::vector<std::pair<int, Paths>> ties;
      evaluate_level(g, level, best_score, ties);
      if (ties.empty()) continue;
      if (best_score.unreached > 0 && level < t_.height() && core_.size() > 1) continue;
      auto& pick = ties[group_.seed % ties.size()];
      best = std::move(pick.second);
      return pick.first;
    }
    return -1;
  }

  // The roots of one level that reach the most core targets, then the nearest (ties).
  void evaluate_level(const Graph& g, int level, Score& best_score,
                      std::vector<std::pair<int, Paths>>& ties) const {
    std::vector<int> candidates;
    if (core_.size() == 1) {
      candidates = core_;
    } else {
      for (int i = 0; i < t_.num_switches(level); ++i) {
        const int c = g.number(level, i);
        const auto& arcs = g.arcs(c);
        if (std::any_of(arcs.begin(), arcs.end(),
                        [&](const Arc& a) { return core_cost_(a.link) >= 0; }))
          candidates.push_back(c);
      }
    }
    auto evaluate = [&](int c) {
      Paths p = shortest(g, {c}, core_cost_);
      Score s{0, 0, 0};
      for (int target : core_) {
        if (p.dist[target] >= kInf) {
          ++s.unreached;
        } else {
          s.max = std::max(s.max, p.dist[target]);
          s.total += p.dist[target];
        }
      }
      if (s < best_score) {
        best_score = s;
        ties.clear();
      }
      if (!(best_score < s)) ties.push_back({c, std::move(p)});
    };
    // Roots of one level are nearly alike in a fat-tree: a sample spread by the seed keeps a
    // broadcast group of a large tree cheap to rebuild on every join; the rest are tried only
    // when no sampled root reaches every member.
    const std::size_t n = candidates.size();
    const std::size_t sample = std::min<std::size_t>(n, kRootSample);
    std::vector<char> tried(n, 0);
    for (std::size_t i = 0; i < sample; ++i) {
      const std::size_t k = (group_.seed + i * n / sample) % n;
      tried[k] = 1;
      evaluate(candidates[k]);
    }
    if (best_score.unreached > 0)
      for (std::size_t k = 0; k < n; ++k)
        if (!tried[k]) evaluate(candidates[k]);
  }

  // The core targets over the root's paths, then the extra ones from the tree so far.
  void join(const Graph& g, int root, const Paths& best) {
    in_tree_.assign(g.size(), 0);
    reached_.assign(g.size(), 0);
    in_tree_[root] = 1;
    for (int target : core_)
      if (best.dist[target] < kInf) {
        add_path(best, target);
        reached_[target] = 1;
      }
    if (extra_.empty()) return;
    std::vector<int> sources;
    for (int v = 0; v < g.size(); ++v)
      if (in_tree_[v]) sources.push_back(v);
    const Paths p = shortest(g, sources, extra_cost_);
    for (int target : extra_)
      if (p.dist[target] < kInf) {
        add_path(p, target);
        reached_[target] = 1;
      }
  }

  void add_path(const Paths& p, int target) {
    for (int v = target; !in_tree_[v] && p.parent_arc_from[v] >= 0; v = p.parent_arc_from[v]) {
      in_tree_[v] = 1;
      tree_links_.insert(p.parent_link[v]);
    }
    in_tree_[target] = 1;
  }

  void write_ports(const Graph& g) {
    auto add_port = [&](int sw, int port) {
      auto& v = out_.ports[g.at(sw)];
      if (std::find(v.begin(), v.end(), port) == v.end()) v.push_back(port);
    };
    for (LinkId l : tree_links_) {
      const auto lo = t_.link_lower(l);
      const auto up = t_.link_upper(l);
      add_port(g.number(lo.level, lo.index), lo.port);
      add_port(g.number(up.level, up.index), up.port);
      out_.links.push_back(l);
      if (owner_[l] != kFree && !(out_.cls == McastClass::kTenant && owner_[l] == out_.tenant))
        out_.exempt_links.push_back(l);
    }
    for (const auto& [h, sw] : host_target_) {
      if (!reached_[sw]) {
        out_.unreached.push_back(h);
        out_.warnings.push_back("multicast group " + std::to_string(group_.seed) + ": member " +
                                t_.host_name(h) +
                                " cannot be joined over the links its policy allows");
        continue;
      }
      add_port(sw, t_.host_peer(h).port);
    }
    for (const auto& [level, index] : member_switches_) {
      const int sw = g.number(level, index);
      if (reached_[sw])
        add_port(sw, 0);
      else
        out_.warnings.push_back("multicast group " + std::to_string(group_.seed) +
                                ": member switch " + t_.switch_name(level, index) +
                                " cannot be joined");
    }
    for (auto& [sw, ports] : out_.ports) std::sort(ports.begin(), ports.end());
  }

  const FatTree& t_;
  const McastPolicy& policy_;
  const McastGroup& group_;
  std::vector<int> host_class_, owner_;
  std::vector<char> faulty_;
  std::set<int> member_tenants_;
  std::vector<HostId> members_;
  std::vector<std::pair<int, int>> member_switches_;
  std::vector<int> core_, extra_;
  std::vector<std::pair<HostId, int>> host_target_;  // (host, switch number)
  std::function<long long(LinkId)> core_cost_, extra_cost_;
  std::vector<char> in_tree_, reached_;
  std::set<LinkId> tree_links_;
  McastTree out_;
};

}  // namespace

std::string to_string(McastClass cls) { return cls == McastClass::kTenant ? "tenant" : "shared"; }

McastTree build_multicast_tree(const FatTree& t, const McastPolicy& policy,
                               const McastGroup& group) {
  return TreeBuilder(t, policy, group).build();
}

std::vector<std::pair<int, std::vector<int>>> physical_ports(const topology::Embedding& emb,
                                                             const McastTree& tree) {
  std::vector<std::pair<int, std::vector<int>>> out;
  for (const auto& [sw, ports] : tree.ports) {
    const auto [level, index] = sw;
    const int node = emb.switch_node.at(level - 1).at(index);
    if (node < 0) continue;
    const auto& map = emb.port_map.at(level - 1).at(index);
    std::vector<int> phys;
    for (int p : ports) phys.push_back(p == 0 ? 0 : map.at(p));
    std::sort(phys.begin(), phys.end());
    out.push_back({node, std::move(phys)});
  }
  return out;
}

}  // namespace laas::routing
