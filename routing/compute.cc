#include <algorithm>
#include <bitset>
#include <string>
#include <vector>

#include "routing/routing.h"

namespace laas::routing {

ModelTables::ModelTables(const FatTree& tree) : hosts_(tree.num_hosts()) {
  for (int level = 1; level <= tree.height(); ++level) {
    level_offset_.push_back(switches_);
    switches_ += tree.num_switches(level);
  }
  data_.assign(static_cast<std::size_t>(switches_) * static_cast<std::size_t>(hosts_ + switches_),
               kNoRoute);
}

std::pair<int, int> ModelTables::switch_at(int number) const {
  int level = static_cast<int>(level_offset_.size());
  while (level > 1 && number < level_offset_[level - 1]) --level;
  return {level, number - level_offset_[level - 1]};
}

namespace {

constexpr int kFree = -1;
constexpr int kManagement = -2;
// Held by a tenant but retired by a repair (issue 10): only management routes cross it.
constexpr int kIdle = -3;
using ColumnSet = std::bitset<256>;

// Everything compute() derives from the request, plus reusable scratch buffers.
class Engine {
 public:
  Engine(const FatTree& tree, const RoutingRequest& request, RoutingResult& result)
      : t_(tree),
        req_(request),
        out_(result.tables),
        warnings_(result.warnings),
        h_(tree.height()),
        up1_(tree.up_columns(1)),
        up2_(tree.up_columns(2)),
        p2_(tree.p(2)),
        p3_(h_ == 3 ? tree.p(3) : 1),
        w3_(h_ == 3 ? tree.w(3) : 1),
        l2_per_pod_(tree.switches_per_pod(2)) {
    for (int level = 0; level <= h_; ++level) {
      up_cols_[level] = level >= 1 ? tree.up_columns(level) : 0;
      par_[level] = level >= 1 ? tree.p(level) : 1;
    }
    validate();
  }

  void run() {
    if (!req_.tenants_only) {
      route_switches();
      route_ordinary_hosts();
      route_free_hosts();
    }
    for (int t = 0; t < static_cast<int>(req_.tenants.size()); ++t) route_tenant(t);
  }

 private:
  // ---- input ------------------------------------------------------------------------------
  void validate() {
    const int hosts = t_.num_hosts();
    const int links = t_.total_links();
    host_class_.assign(hosts, kFree);
    owner_.assign(links, kFree);
    faulty_.assign(links, 0);
    mgmt_leaf_.assign(t_.num_leaves(), 0);
    for (LinkId l : req_.faulty_links) {
      if (l < 0 || l >= links)
        throw RoutingError("faulty link " + std::to_string(l) + " is not a link of " +
                           t_.spec().text());
      faulty_[l] = 1;
    }
    for (HostId h : req_.management_hosts) {
      if (h < 0 || h >= hosts)
        throw RoutingError("management host " + std::to_string(h) + " is not in the tree");
      host_class_[h] = kManagement;
      mgmt_leaf_[t_.leaf_of_host(h)] = 1;
    }
    for (const auto& [level, index] : req_.management_switches) {
      if (level < 1 || level > h_ || index < 0 || index >= t_.num_switches(level))
        throw RoutingError("management switch (" + std::to_string(level) + "," +
                           std::to_string(index) + ") is not in the tree");
      if (level == 1) mgmt_leaf_[index] = 1;
    }
    for (int ti = 0; ti < static_cast<int>(req_.tenants.size()); ++ti) {
      const auto& tenant = req_.tenants[ti];
      for (HostId h : tenant.placement.hosts) {
        if (h < 0 || h >= hosts)
          throw RoutingError("tenant " + tenant.key + ": host " + std::to_string(h) +
                             " is not in the tree");
        if (host_class_[h] == kManagement)
          throw RoutingError("tenant " + tenant.key + ": host " + t_.host_name(h) +
                             " is a management host");
        if (host_class_[h] != kFree)
          throw RoutingError("tenant " + tenant.key + ": host " + t_.host_name(h) +
                             " is also held by tenant " + req_.tenants[host_class_[h]].key);
        host_class_[h] = ti;
      }
      int held_faulty = 0;
      for (LinkId l : tenant.placement.links) {
        if (l < 0 || l >= links)
          throw RoutingError("tenant " + tenant.key + ": link " + std::to_string(l) +
                             " is not in the tree");
        if (owner_[l] != kFree)
          throw RoutingError("tenant " + tenant.key + ": link " + std::to_string(l) +
                             " is also held by tenant " +
                             (owner_[l] >= 0 ? req_.tenants[owner_[l]].key : "(idle)"));
        owner_[l] = ti;
        held_faulty += faulty_[l];
      }
      for (LinkId l : tenant.placement.idle) {
        if (l < 0 || l >= links || owner_[l] != kFree)
          throw RoutingError("tenant " + tenant.key + ": idle link " + std::to_string(l) +
                             " is outside the tree or held twice");
        owner_[l] = kIdle;
      }
      if (held_faulty > 0)
        warnings_.push_back("tenant " + tenant.key + " holds " + std::to_string(held_faulty) +
                            " faulty link(s); its routes avoid them");
    }
  }

  // ---- routing to hosts -------------------------------------------------------------------
  // Which hosts of one destination leaf to route, and how.
  struct Job {
    int cls;                           // tenant index, kFree, or kManagement for "any non-faulty"
    const std::vector<HostId>* dests;  // hosts on the destination leaf
    const std::vector<int>* keys;      // D-mod-K key of each destination
    const std::vector<int>* leaves;    // source leaves to write (gated); others are left alone
    const std::vector<int>* level2;    // level-2 switches that may carry the class (global index)
    // Tenants: keys are ranks 0..n-1 and each source leaf (pod) counts from the first rank it
    // holds, (key - base) mod n: shift permutations then leave every source on distinct
    // up-links, also when the shape has a smaller R leaf (plain key mod K collides there).
    const std::vector<int>* leaf_base = nullptr;  // [leaf]
    const std::vector<int>* pod_base = nullptr;   // [pod]
    int n = 0;
  };

  bool allowed(int cls, LinkId l) const {
    if (faulty_[l]) return false;
    return cls == kManagement || owner_[l] == cls;
  }

  int pod_of_l2(int s) const { return s / l2_per_pod_; }

  void route_leaf(int ld, const Job& job) {
    const int pd = t_.pod_of_leaf(ld);
    // Allowed up-columns of the destination leaf, ascending; grouped by level-2 switch they are
    // contiguous (column c goes to switch c / p2).
    cols_ld_.clear();
    ColumnSet ld_set;
    for (int c = 0; c < up1_; ++c)
      if (allowed(job.cls, t_.l1_link(ld, c))) {
        cols_ld_.push_back(static_cast<std::uint8_t>(c));
        ld_set.set(c);
      }
    const int n1 = static_cast<int>(cols_ld_.size());
    // down2: level-2 switch b of pod pd reaches ld downwards through cols_ld_[begin, end).
    down_begin_.assign(l2_per_pod_, 0);
    down_end_.assign(l2_per_pod_, 0);
    for (int i = 0; i < n1; ++i) {
      const int b = cols_ld_[i] / p2_;
      if (down_end_[b] == 0) down_begin_[b] = i;
      down_end_[b] = i + 1;
    }
    // Level 3: top switches that reach ld downwards, through which columns of (pd, b).
    if (h_ == 3) {
      top_ok_.assign(t_.num_switches(3), 0);
      cols2_.assign(l2_per_pod_, {});
      set2_.assign(l2_per_pod_, ColumnSet());
      for (int b = 0; b < l2_per_pod_; ++b) {
        if (down_end_[b] == 0) continue;
        const int s = t_.level2_switch(pd, b);
        for (int c = 0; c < up2_; ++c)
          if (allowed(job.cls, t_.l2_link(s, c))) {
            cols2_[b].push_back(static_cast<std::uint8_t>(c));
            set2_[b].set(c);
            top_ok_[b * w3_ + c / p3_] = 1;
          }
      }
      // Level-2 switches of other pods going up.
      cand2_.resize(t_.num_switches(2));
      for (int s : *job.level2) {
        auto& cand = cand2_[s];
        cand.clear();
        if (pod_of_l2(s) == pd) continue;
        const int b = s % l2_per_pod_;
        if (down_end_[b] == 0) continue;
        bool exact = false;
        for (int c = 0; c < up2_; ++c) {
          if (!allowed(job.cls, t_.l2_link(s, c)) || !top_ok_[b * w3_ + c / p3_]) continue;
          const bool e = set2_[b].test(c);
          if (e && !exact) {
            cand.clear();
            exact = true;
          }
          if (e || !exact) cand.push_back(static_cast<std::uint8_t>(c));
        }
      }
    }
    // Source leaves: allowed up-columns whose parent leads to ld, preferring the columns ld
    // itself holds (the "intersection" of the paper's spine sets).
    cand1_.resize(t_.num_leaves());
    for (int ls : *job.leaves) {
      auto& cand = cand1_[ls];
      cand.clear();
      if (ls == ld) continue;
      const int ps = t_.pod_of_leaf(ls);
      bool exact = false;
      for (int c = 0; c < up1_; ++c) {
        if (!allowed(job.cls, t_.l1_link(ls, c))) continue;
        const int b = c / p2_;
        const bool ok = ps == pd ? down_end_[b] != 0 : !cand2_[t_.level2_switch(ps, b)].empty();
        if (!ok) continue;
        const bool e = ld_set.test(c);
        if (e && !exact) {
          cand.clear();
          exact = true;
        }
        if (e || !exact) cand.push_back(static_cast<std::uint8_t>(c));
      }
    }

    // Writes go switch by switch (a row each), destinations inner: the hosts of one leaf are
    // neighbouring endpoints, so this stays within a cache line or two per switch.
    const int lip = t_.leaf_in_pod(ld);
    const int nd = static_cast<int>(job.dests->size());
    const HostId* dests = job.dests->data();
    const int* keys = job.keys->data();
    {
      std::uint8_t* row = out_.row(out_.switch_number(1, ld));
      for (int i = 0; i < nd; ++i)
        row[dests[i]] = static_cast<std::uint8_t>(down_port(1, t_.slot_of_host(dests[i]), 0));
    }
    if (n1 == 0) {  // nothing above ld can reach it; source leaves get no route
      for (int ls : *job.leaves)
        if (ls != ld)
          for (int i = 0; i < nd; ++i) {
            out_.row(out_.switch_number(1, ls))[dests[i]] = kNoRoute;
            if (job.cls >= 0) note_unreachable(job.cls, ls, dests[i]);
          }
      return;
    }
    // Level 2 of the destination pod: down to ld.
    for (int b = 0; b < l2_per_pod_; ++b) {
      if (down_end_[b] == 0) continue;
      std::uint8_t* row = out_.row(out_.switch_number(2, t_.level2_switch(pd, b)));
      const int len = down_end_[b] - down_begin_[b];
      for (int i = 0; i < nd; ++i) {
        const int k = keys[i];
        int c = cols_ld_[k % n1];
        if (c / p2_ != b) c = cols_ld_[down_begin_[b] + k % len];
        row[dests[i]] = static_cast<std::uint8_t>(down_port(2, lip, c % p2_));
      }
    }
    if (h_ == 3) {
      // Top switches: down to the destination pod.
      for (int b = 0; b < l2_per_pod_; ++b) {
        const auto& cols = cols2_[b];
        if (cols.empty()) continue;
        const int n = static_cast<int>(cols.size());
        for (int x = 0; x < w3_; ++x) {
          const int top = b * w3_ + x;
          if (!top_ok_[top]) continue;
          int first = -1, len = 0;
          for (int j = 0; j < n; ++j)
            if (cols[j] / p3_ == x) {
              if (first < 0) first = j;
              ++len;
            }
          std::uint8_t* row = out_.row(out_.switch_number(3, top));
          for (int i = 0; i < nd; ++i) {
            const int k2 = keys[i] / n1;
            int c = cols[k2 % n];
            if (c / p3_ != x) c = cols[first + k2 % len];
            row[dests[i]] = static_cast<std::uint8_t>(down_port(3, pd, c % p3_));
          }
        }
      }
      // Level 2 of other pods: up.
      for (int s : *job.level2) {
        if (pod_of_l2(s) == pd) continue;
        const auto& cand = cand2_[s];
        if (cand.empty()) continue;
        const int n = static_cast<int>(cand.size());
        std::uint8_t* row = out_.row(out_.switch_number(2, s));
        for (int i = 0; i < nd; ++i) {
          const int k = keys[i];
          const int key =
              job.pod_base ? relative(k, (*job.pod_base)[pod_of_l2(s)], job.n) / n1 : k / n1;
          row[dests[i]] = static_cast<std::uint8_t>(cand[key % n] + 1);
        }
      }
    }
    for (int ls : *job.leaves) {
      if (ls == ld) continue;
      const auto& cand = cand1_[ls];
      std::uint8_t* row = out_.row(out_.switch_number(1, ls));
      const int n = static_cast<int>(cand.size());
      for (int i = 0; i < nd; ++i) {
        if (n == 0) {
          row[dests[i]] = kNoRoute;
          if (job.cls >= 0) note_unreachable(job.cls, ls, dests[i]);
          continue;
        }
        const int k = keys[i];
        const int key = job.leaf_base ? relative(k, (*job.leaf_base)[ls], job.n) : k;
        row[dests[i]] = static_cast<std::uint8_t>(cand[key % n] + 1);
      }
    }
  }

  int down_port(int level, int child, int parallel) const {
    return up_cols_[level] + child * par_[level] + parallel + 1;
  }

  static int relative(int key, int base, int n) { return ((key - base) % n + n) % n; }

  void note_unreachable(int tenant, int leaf, HostId d) {
    constexpr int kMaxPerTenant = 5;
    int& count = unreachable_[tenant];
    if (++count <= kMaxPerTenant)
      warnings_.push_back("tenant " + req_.tenants[tenant].key +
                          ": no path on its own links from " + t_.switch_name(1, leaf) + " to " +
                          t_.host_name(d));
  }

  // Management and every non-leaf switch: all hosts over every non-faulty link. Leaves get
  // entries for management hosts (everyone) and, on management leaves, for every host.
  void route_ordinary_hosts() {
    std::vector<int> all_leaves(t_.num_leaves()), mgmt_leaves, l2(t_.num_switches(2));
    for (int i = 0; i < t_.num_leaves(); ++i) {
      all_leaves[i] = i;
      if (mgmt_leaf_[i]) mgmt_leaves.push_back(i);
    }
    for (int i = 0; i < t_.num_switches(2); ++i) l2[i] = i;
    std::vector<HostId> dests, mdests;
    std::vector<int> keys, mkeys;
    for (int ld = 0; ld < t_.num_leaves(); ++ld) {
      dests.clear();
      keys.clear();
      mdests.clear();
      mkeys.clear();
      for (int slot = 0; slot < t_.hosts_per_leaf(); ++slot) {
        const HostId h = t_.host_at(ld, slot);
        auto& d = host_class_[h] == kManagement ? mdests : dests;
        auto& k = host_class_[h] == kManagement ? mkeys : keys;
        d.push_back(h);
        k.push_back(h);
      }
      if (!dests.empty()) route_leaf(ld, {kManagement, &dests, &keys, &mgmt_leaves, &l2});
      if (!mdests.empty()) route_leaf(ld, {kManagement, &mdests, &mkeys, &all_leaves, &l2});
    }
  }

  // Free hosts reach free hosts over links nobody holds.
  void route_free_hosts() {
    std::vector<int> free_leaves, l2(t_.num_switches(2));
    for (int i = 0; i < t_.num_switches(2); ++i) l2[i] = i;
    std::vector<std::vector<HostId>> by_leaf(t_.num_leaves());
    for (HostId h = 0; h < t_.num_hosts(); ++h)
      if (host_class_[h] == kFree) by_leaf[t_.leaf_of_host(h)].push_back(h);
    for (int i = 0; i < t_.num_leaves(); ++i)
      if (!by_leaf[i].empty()) free_leaves.push_back(i);
    for (int ld : free_leaves)
      route_leaf(ld, {kFree, &by_leaf[ld], &by_leaf[ld], &free_leaves, &l2});
  }

  // A tenant's hosts over its own links, keyed by rank among its hosts.
  void route_tenant(int ti) {
    const auto& p = req_.tenants[ti].placement;
    std::vector<HostId> hosts = p.hosts;
    std::sort(hosts.begin(), hosts.end());
    std::vector<int> leaves, level2;
    std::vector<char> leaf_seen(t_.num_leaves(), 0), l2_seen(t_.num_switches(2), 0);
    for (HostId h : hosts) {
      const int leaf = t_.leaf_of_host(h);
      if (!leaf_seen[leaf]) leaves.push_back(leaf);
      leaf_seen[leaf] = 1;
    }
    for (LinkId l : p.links) {
      if (t_.link_level(l) != 1) continue;
      const int leaf = t_.link_switch(l);
      const int s = t_.level2_switch(t_.pod_of_leaf(leaf), t_.link_column(l) / p2_);
      if (!l2_seen[s]) level2.push_back(s);
      l2_seen[s] = 1;
    }
    std::vector<int> leaf_base(t_.num_leaves(), 0), pod_base(t_.num_pods(), -1);
    for (int r = static_cast<int>(hosts.size()) - 1; r >= 0; --r) {
      const int leaf = t_.leaf_of_host(hosts[r]);
      leaf_base[leaf] = r;
      pod_base[t_.pod_of_leaf(leaf)] = r;
    }
    std::vector<HostId> dests;
    std::vector<int> keys;
    std::size_t i = 0;
    while (i < hosts.size()) {
      const int ld = t_.leaf_of_host(hosts[i]);
      dests.clear();
      keys.clear();
      for (; i < hosts.size() && t_.leaf_of_host(hosts[i]) == ld; ++i) {
        dests.push_back(hosts[i]);
        keys.push_back(static_cast<int>(i));
      }
      route_leaf(ld, {ti, &dests, &keys, &leaves, &level2, &leaf_base, &pod_base,
                      static_cast<int>(hosts.size())});
    }
  }

  // ---- routing to switches ----------------------------------------------------------------
  // Minimum-hop over every non-faulty switch-to-switch link (management traffic only; like
  // ftree, switch-to-switch routes are not restricted to up*/down*).
  void route_switches() {
    const int n = out_.num_switches();
    // Adjacency in port order: (neighbour switch number, local port).
    std::vector<int> start(n + 1, 0);
    std::vector<std::pair<int, int>> arcs;
    for (int number = 0; number < n; ++number) {
      start[number] = static_cast<int>(arcs.size());
      const auto [level, index] = out_.switch_at(number);
      if (level < h_) {
        const int ups = t_.up_columns(level);
        for (int c = 0; c < ups; ++c) {
          const LinkId l = level == 1 ? t_.l1_link(index, c) : t_.l2_link(index, c);
          if (faulty_[l]) continue;
          const auto parent = t_.parent_of(level, index, c);
          arcs.push_back({out_.switch_number(parent.level, parent.index), t_.up_port(level, c)});
        }
      }
      if (level > 1) {
        // Down-links: the children's up-links pointing here.
        for (int child = 0; child < t_.m(level); ++child)
          for (int j = 0; j < t_.p(level); ++j) {
            int child_level = level - 1, child_index, column;
            if (level == 2) {
              const int pod = t_.pod_of_level2(index);
              child_index = pod * t_.leaves_per_pod() + child;
              column = (index % l2_per_pod_) * p2_ + j;
            } else {
              const int b2 = index / w3_;
              child_index = t_.level2_switch(child, b2);
              column = (index % w3_) * p3_ + j;
            }
            const LinkId l = child_level == 1 ? t_.l1_link(child_index, column)
                                              : t_.l2_link(child_index, column);
            if (faulty_[l]) continue;
            arcs.push_back(
                {out_.switch_number(child_level, child_index), t_.down_port(level, child, j)});
          }
      }
    }
    start[n] = static_cast<int>(arcs.size());
    std::vector<int> dist(n), queue(n);
    for (int dst = 0; dst < n; ++dst) {
      std::fill(dist.begin(), dist.end(), -1);
      int head = 0, tail = 0;
      dist[dst] = 0;
      queue[tail++] = dst;
      while (head < tail) {
        const int u = queue[head++];
        for (int a = start[u]; a < start[u + 1]; ++a) {
          const int v = arcs[a].first;
          if (dist[v] < 0) {
            dist[v] = dist[u] + 1;
            queue[tail++] = v;
          }
        }
      }
      const int e = out_.num_hosts() + dst;
      for (int u = 0; u < n; ++u) {
        std::uint8_t port = kNoRoute;
        if (u == dst) {
          port = kSelf;
        } else if (dist[u] > 0) {
          int count = 0;
          for (int a = start[u]; a < start[u + 1]; ++a) count += dist[arcs[a].first] == dist[u] - 1;
          int pick = dst % count;
          for (int a = start[u]; a < start[u + 1]; ++a)
            if (dist[arcs[a].first] == dist[u] - 1 && pick-- == 0) {
              port = static_cast<std::uint8_t>(arcs[a].second);
              break;
            }
        }
        out_.row(u)[e] = port;
      }
    }
  }

  const FatTree& t_;
  const RoutingRequest& req_;
  ModelTables& out_;
  std::vector<std::string>& warnings_;
  const int h_, up1_, up2_, p2_, p3_, w3_, l2_per_pod_;

  int up_cols_[4] = {0, 0, 0, 0};
  int par_[4] = {1, 1, 1, 1};
  std::vector<int> host_class_;
  std::vector<int> owner_;
  std::vector<char> faulty_;
  std::vector<char> mgmt_leaf_;
  std::vector<int> unreachable_ = std::vector<int>(req_.tenants.size(), 0);

  // scratch
  std::vector<std::uint8_t> cols_ld_;
  std::vector<int> down_begin_, down_end_;
  std::vector<char> top_ok_;
  std::vector<std::vector<std::uint8_t>> cols2_, cand1_, cand2_;
  std::vector<ColumnSet> set2_;
};

}  // namespace

RoutingResult compute(const FatTree& tree, const RoutingRequest& request) {
  RoutingResult result;
  result.tables = ModelTables(tree);
  Engine engine(tree, request, result);
  engine.run();
  return result;
}

RoutingResult compute(const FatTree& tree, const std::vector<TenantRoutes>& tenants,
                      const std::vector<HostId>& management_hosts,
                      const std::vector<LinkId>& faulty_links) {
  RoutingRequest request;
  request.tenants = tenants;
  request.management_hosts = management_hosts;
  request.faulty_links = faulty_links;
  return compute(tree, request);
}

}  // namespace laas::routing
