#include <algorithm>
#include <atomic>
#include <bitset>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "routing/incremental.h"
#include "routing/routing.h"
#include "util/threads.h"

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
// Held by a tenant but retired by a repair: only management routes cross it.
constexpr int kIdle = -5;
constexpr int kOpenOr = -3;  // links nobody holds or held by Job::owner
constexpr int kNobody = -4;
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
    prepare();
    if (!req_.tenants_only) {
      route_switches();
      route_ordinary_hosts(every_leaf());
    }
    for (int t = 0; t < static_cast<int>(req_.tenants.size()); ++t) route_tenant(t, nullptr);
    flush_tenant_warnings();
  }

  // What run() derives before routing anything: enough to compare two requests (plan()).
  void prepare() {
    if (!req_.tenants_only) choose_management_links();
  }

  // run()'s tables and warnings from the tables of `before`'s request (already in the
  // output), recomputing only what plan.dirty_leaf and plan.switches name; tenants unchanged
  // since `before` (plan.same_as) keep the warnings they had then.
  void run_partial(const IncrementalPlan& plan,
                   const std::vector<std::vector<std::string>>& warnings_before) {
    std::vector<int> dirty, rest;
    const bool pods =
        std::find(plan.level2_pod.begin(), plan.level2_pod.end(), 1) != plan.level2_pod.end();
    for (int leaf = 0; leaf < t_.num_leaves(); ++leaf)
      if (plan.dirty_leaf[leaf])
        dirty.push_back(leaf);
      else if (pods)
        rest.push_back(leaf);
    clear_host_columns(dirty);
    if (pods) clear_host_columns(rest, &plan.level2_pod);
    reuse_switches_ = true;
    if (plan.switches) route_switches();
    route_ordinary_hosts(dirty);
    if (pods) route_ordinary_hosts(rest, &plan.level2_pod);
    for (int t = 0; t < static_cast<int>(req_.tenants.size()); ++t) {
      const int same = plan.same_as[t];
      route_tenant(t, same >= 0 ? &plan.dirty_leaf : nullptr, pods ? &plan.level2_pod : nullptr);
      if (same >= 0) tenant_warnings_[t] = warnings_before[same];
    }
    flush_tenant_warnings();
  }

  // Which destination leaves' columns (and whether the switches' columns) can differ between
  // `before`'s request and this one. Every column is computed from the request alone; a host's
  // column is written only by its leaf's ordinary jobs and its tenant's job for that leaf, so
  // a column whose inputs are the same as before is the same table entry for entry.
  IncrementalPlan plan(const Engine& before) const;

  std::vector<std::vector<std::string>> take_tenant_warnings() {
    return std::move(tenant_warnings_);
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
    int owner = kNobody;  // with cls == kOpenOr: whose links besides open ones
    // Source leaves: up-columns they may not use (the management up-links, or everything
    // else), and an owner whose links they use when nothing else leads to the destination.
    const std::vector<ColumnSet>* src_block = nullptr;  // [leaf]
    const std::vector<ColumnSet>* src_extra = nullptr;  // [leaf] fallback up-columns
    bool l2_fallback = false;  // level-2 switches with no way up use their main owner's links
    // Where this job finds no way (no allowed column at the destination or a source leaf),
    // keep the entry an earlier job wrote instead of writing kNoRoute.
    bool keep_on_miss = false;
    // [pod] write only the entries of these pods' switches (none of them the destination's
    // pod), and note no unreachable pair: an incremental run rewriting the entries a level-2
    // link changing hands can move (Engine::plan).
    const std::vector<char>* only_pods = nullptr;
  };

  bool allowed(int cls, LinkId l, int owner) const {
    if (faulty_[l]) return false;
    if (cls == kOpenOr) return owner_[l] == kFree || owner_[l] == owner;
    return cls == kManagement || owner_[l] == cls;
  }

  // Per class (and owner, for kOpenOr), the up-columns allowed() accepts at every leaf and
  // level-2 switch: route_leaf asks for the same few classes once per destination leaf, and
  // thousands of source switches each time.
  struct ClassMasks {
    std::vector<ColumnSet> leaf_up;  // [leaf]
    std::vector<ColumnSet> l2_up;    // [level-2 switch]
  };
  const ClassMasks& masks_for(int cls, int owner) {
    const auto key = std::make_pair(cls, cls == kOpenOr ? owner : kNobody);
    std::lock_guard<std::mutex> lock(masks_mu_);  // leaves are routed on several threads
    auto found = masks_.find(key);
    if (found != masks_.end()) return found->second;
    ClassMasks m;
    m.leaf_up.resize(t_.num_leaves());
    for (int leaf = 0; leaf < t_.num_leaves(); ++leaf)
      for (int c = 0; c < up1_; ++c)
        if (allowed(cls, t_.l1_link(leaf, c), owner)) m.leaf_up[leaf].set(c);
    if (h_ == 3) {
      m.l2_up.resize(t_.num_switches(2));
      for (int sw = 0; sw < t_.num_switches(2); ++sw)
        for (int c = 0; c < up2_; ++c)
          if (allowed(cls, t_.l2_link(sw, c), owner)) m.l2_up[sw].set(c);
    }
    return masks_.emplace(key, std::move(m)).first->second;
  }

  // The set bits of `set` below `limit`, ascending.
  static void to_list(const ColumnSet& set, int limit, std::vector<std::uint8_t>& out) {
    out.clear();
    for (int c = 0; c < limit; ++c)
      if (set.test(c)) out.push_back(static_cast<std::uint8_t>(c));
  }

  int pod_of_l2(int s) const { return s / l2_per_pod_; }

  // Outside tenants' own routes (free and management classes): among the usable columns
  // cols[0, n) (ascending, within base .. base + full - 1), key's column with every column
  // usable -- base + key mod full -- while it is usable, else cols[key mod n]. A tenant taking
  // or releasing columns then moves only the destinations routed over those columns, so a
  // tenant change rewrites few LFT blocks beyond its own. With every column usable
  // this is cols[key mod n], as for tenants, whose routes keep the paper's D-mod-K.
  // (`set` holds cols[0, n) and maybe other columns outside base .. base + full - 1.)
  static int stable_pick(const ColumnSet& set, const std::uint8_t* cols, int n, int key, int base,
                         int full) {
    const int preferred = base + key % full;
    if (set.test(preferred)) return preferred;
    return cols[key % n];
  }

  // route_leaf's working space, one per thread.
  struct LeafScratch {
    std::vector<std::uint8_t> cols_ld;
    std::vector<int> down_begin, down_end;
    std::vector<char> top_ok;
    std::vector<std::vector<std::uint8_t>> cols2, cand1, cand2;
    std::vector<ColumnSet> set2, top_cols, cand1_set, cand2_set, reach_pod;
    std::vector<char> l2_reaches;
  };

  // Writes only the entries of job.dests (hosts of leaf ld): leaves route in parallel.
  void route_leaf(int ld, const Job& job, LeafScratch& sc) {
    const ClassMasks& masks = masks_for(job.cls, job.owner);
    const int pd = t_.pod_of_leaf(ld);
    // Whether this job writes the entries of pod ps's switches (every pod's but with only_pods).
    const std::vector<char>* only = job.only_pods;
    auto writes_pod = [only](int ps) { return !only || (*only)[ps]; };
    // Allowed up-columns of the destination leaf, ascending; grouped by level-2 switch they are
    // contiguous (column c goes to switch c / p2).
    const ColumnSet& ld_set = masks.leaf_up[ld];
    to_list(ld_set, up1_, sc.cols_ld);
    const int n1 = static_cast<int>(sc.cols_ld.size());
    // down2: level-2 switch b of pod pd reaches ld downwards through sc.cols_ld[begin, end).
    sc.down_begin.assign(l2_per_pod_, 0);
    sc.down_end.assign(l2_per_pod_, 0);
    ColumnSet reach_same;  // up-columns of ld's pod whose level-2 switch reaches ld
    for (int i = 0; i < n1; ++i) {
      const int b = sc.cols_ld[i] / p2_;
      if (sc.down_end[b] == 0) sc.down_begin[b] = i;
      sc.down_end[b] = i + 1;
    }
    for (int c = 0; c < up1_; ++c)
      if (sc.down_end[c / p2_] != 0) reach_same.set(c);
    // Level 3: top switches that reach ld downwards, through which columns of (pd, b).
    if (h_ == 3) {
      sc.top_ok.assign(t_.num_switches(3), 0);
      sc.cols2.resize(l2_per_pod_);
      sc.set2.assign(l2_per_pod_, ColumnSet());
      sc.top_cols.assign(l2_per_pod_, ColumnSet());
      for (int b = 0; b < l2_per_pod_; ++b) {
        sc.cols2[b].clear();
        if (sc.down_end[b] == 0) continue;
        sc.set2[b] = masks.l2_up[t_.level2_switch(pd, b)];
        to_list(sc.set2[b], up2_, sc.cols2[b]);
        for (int c : sc.cols2[b]) sc.top_ok[b * w3_ + c / p3_] = 1;
      }
      for (int b = 0; b < l2_per_pod_; ++b)
        for (int c = 0; c < up2_; ++c)
          if (sc.top_ok[b * w3_ + c / p3_]) sc.top_cols[b].set(c);
      // Level-2 switches of other pods going up: allowed columns towards a top switch that
      // reaches ld, those ld's own level-2 switch holds if any.
      sc.cand2.resize(t_.num_switches(2));
      sc.cand2_set.resize(t_.num_switches(2));
      sc.l2_reaches.assign(t_.num_switches(2), 0);
      for (int s : *job.level2) {
        auto& cand = sc.cand2[s];
        cand.clear();
        if (pod_of_l2(s) == pd || !writes_pod(pod_of_l2(s))) continue;
        const int b = s % l2_per_pod_;
        if (sc.down_end[b] == 0) continue;
        ColumnSet usable = masks.l2_up[s] & sc.top_cols[b];
        // No open way up: the tenant holding most of this switch's up-links carries it
        // (its own traffic passes; the drop keeps everyone else's off its links).
        if (usable.none() && job.l2_fallback && l2_owner_[s] != kNobody) {
          for (int c = 0; c < up2_; ++c) {
            const LinkId l = t_.l2_link(s, c);
            if (!faulty_[l] && owner_[l] == l2_owner_[s]) usable.set(c);
          }
          usable &= sc.top_cols[b];
        }
        const ColumnSet exact = usable & sc.set2[b];
        sc.cand2_set[s] = exact.any() ? exact : usable;
        to_list(sc.cand2_set[s], up2_, cand);
        sc.l2_reaches[s] = !cand.empty();
      }
      // Per pod, the up-columns of its leaves whose level-2 switch goes on towards ld.
      sc.reach_pod.assign(t_.num_pods(), ColumnSet());
      for (int ps = 0; ps < t_.num_pods(); ++ps)
        for (int c = 0; c < up1_ && writes_pod(ps); ++c)
          if (sc.l2_reaches[t_.level2_switch(ps, c / p2_)]) sc.reach_pod[ps].set(c);
    }
    // Source leaves: allowed up-columns whose parent leads to ld, preferring the columns ld
    // itself holds (the "intersection" of the paper's spine sets).
    sc.cand1.resize(t_.num_leaves());
    sc.cand1_set.resize(t_.num_leaves());
    for (int ls : *job.leaves) {
      auto& cand = sc.cand1[ls];
      cand.clear();
      if (ls == ld) continue;
      const int ps = t_.pod_of_leaf(ls);
      if (!writes_pod(ps)) continue;
      const ColumnSet& reach = ps == pd ? reach_same : sc.reach_pod[ps];
      ColumnSet usable = masks.leaf_up[ls] & reach;
      if (job.src_block) usable &= ~(*job.src_block)[ls];
      if (usable.none() && job.src_extra && (*job.src_extra)[ls].any()) {
        for (int c = 0; c < up1_; ++c)
          if ((*job.src_extra)[ls].test(c) && !faulty_[t_.l1_link(ls, c)]) usable.set(c);
        usable &= reach;
      }
      const ColumnSet exact = usable & ld_set;
      sc.cand1_set[ls] = exact.any() ? exact : usable;
      to_list(sc.cand1_set[ls], up1_, cand);
    }

    // Writes go switch by switch (a row each), destinations inner: the hosts of one leaf are
    // neighbouring endpoints, so this stays within a cache line or two per switch.
    const int lip = t_.leaf_in_pod(ld);
    const bool stable = job.cls < 0;  // not a tenant's own routes
    const int nd = static_cast<int>(job.dests->size());
    const HostId* dests = job.dests->data();
    const int* keys = job.keys->data();
    const bool notes = job.cls >= 0 && !only;  // a restricted job's pairs were noted before
    if (!only) {
      std::uint8_t* row = out_.row(out_.switch_number(1, ld));
      for (int i = 0; i < nd; ++i)
        row[dests[i]] = static_cast<std::uint8_t>(down_port(1, t_.slot_of_host(dests[i]), 0));
    }
    if (n1 == 0) {  // nothing above ld can reach it; source leaves get no route
      if (job.keep_on_miss) return;
      for (int ls : *job.leaves)
        if (ls != ld && writes_pod(t_.pod_of_leaf(ls)))
          for (int i = 0; i < nd; ++i) {
            out_.row(out_.switch_number(1, ls))[dests[i]] = kNoRoute;
            if (notes) note_unreachable(job.cls, ls, dests[i]);
          }
      return;
    }
    // Level 2 of the destination pod: down to ld.
    for (int b = 0; b < l2_per_pod_ && writes_pod(pd); ++b) {
      if (sc.down_end[b] == 0) continue;
      std::uint8_t* row = out_.row(out_.switch_number(2, t_.level2_switch(pd, b)));
      const int len = sc.down_end[b] - sc.down_begin[b];
      for (int i = 0; i < nd; ++i) {
        const int k = keys[i];
        int c;
        if (stable) {
          c = stable_pick(ld_set, sc.cols_ld.data(), n1, k, 0, up1_);
          if (c / p2_ != b)
            c = stable_pick(ld_set, sc.cols_ld.data() + sc.down_begin[b], len, k, b * p2_, p2_);
        } else {
          c = sc.cols_ld[k % n1];
          if (c / p2_ != b) c = sc.cols_ld[sc.down_begin[b] + k % len];
        }
        row[dests[i]] = static_cast<std::uint8_t>(down_port(2, lip, c % p2_));
      }
    }
    if (h_ == 3) {
      // Top switches: down to the destination pod (none of only_pods' switches).
      for (int b = 0; b < l2_per_pod_ && !only; ++b) {
        const auto& cols = sc.cols2[b];
        if (cols.empty()) continue;
        const int n = static_cast<int>(cols.size());
        for (int x = 0; x < w3_; ++x) {
          const int top = b * w3_ + x;
          if (!sc.top_ok[top]) continue;
          int first = -1, len = 0;
          for (int j = 0; j < n; ++j)
            if (cols[j] / p3_ == x) {
              if (first < 0) first = j;
              ++len;
            }
          std::uint8_t* row = out_.row(out_.switch_number(3, top));
          for (int i = 0; i < nd; ++i) {
            const int k2 = keys[i] / (stable ? up1_ : n1);
            int c;
            if (stable) {
              c = stable_pick(sc.set2[b], cols.data(), n, k2, 0, up2_);
              if (c / p3_ != x)
                c = stable_pick(sc.set2[b], cols.data() + first, len, k2, x * p3_, p3_);
            } else {
              c = cols[k2 % n];
              if (c / p3_ != x) c = cols[first + k2 % len];
            }
            row[dests[i]] = static_cast<std::uint8_t>(down_port(3, pd, c % p3_));
          }
        }
      }
      // Level 2 of other pods: up.
      for (int s : *job.level2) {
        if (pod_of_l2(s) == pd || !writes_pod(pod_of_l2(s))) continue;
        const auto& cand = sc.cand2[s];
        if (cand.empty()) continue;
        const int n = static_cast<int>(cand.size());
        std::uint8_t* row = out_.row(out_.switch_number(2, s));
        for (int i = 0; i < nd; ++i) {
          const int k = keys[i];
          if (stable) {
            row[dests[i]] = static_cast<std::uint8_t>(
                stable_pick(sc.cand2_set[s], cand.data(), n, k / up1_, 0, up2_) + 1);
            continue;
          }
          const int key =
              job.pod_base ? relative(k, (*job.pod_base)[pod_of_l2(s)], job.n) / n1 : k / n1;
          row[dests[i]] = static_cast<std::uint8_t>(cand[key % n] + 1);
        }
      }
    }
    for (int ls : *job.leaves) {
      if (ls == ld || !writes_pod(t_.pod_of_leaf(ls))) continue;
      const auto& cand = sc.cand1[ls];
      std::uint8_t* row = out_.row(out_.switch_number(1, ls));
      const int n = static_cast<int>(cand.size());
      for (int i = 0; i < nd; ++i) {
        if (n == 0) {
          if (job.keep_on_miss) continue;
          row[dests[i]] = kNoRoute;
          if (notes) note_unreachable(job.cls, ls, dests[i]);
          continue;
        }
        const int k = keys[i];
        if (stable) {
          row[dests[i]] = static_cast<std::uint8_t>(
              stable_pick(sc.cand1_set[ls], cand.data(), n, k, 0, up1_) + 1);
          continue;
        }
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
      tenant_warnings_[tenant].push_back("tenant " + req_.tenants[tenant].key +
                                         ": no path on its own links from " +
                                         t_.switch_name(1, leaf) + " to " + t_.host_name(d));
  }

  // The tenant holding most of a switch's working up-links (the first such on a tie), kNobody
  // when no tenant holds one.
  int main_up_owner(int level, int sw) const {
    std::vector<int> held(req_.tenants.size(), 0);
    int best = kNobody;
    for (int c = 0; c < (level == 1 ? up1_ : up2_); ++c) {
      const LinkId l = level == 1 ? t_.l1_link(sw, c) : t_.l2_link(sw, c);
      if (faulty_[l] || owner_[l] < 0) continue;
      if (++held[owner_[l]] > (best == kNobody ? 0 : held[best])) best = owner_[l];
    }
    return best;
  }

  // Which open up-links of a management leaf carry management traffic to tenants (the
  // "management up-links", sl2vl.h rule 3): every other open up-link when the leaf also
  // holds hosts of other owners, so they keep open up-links of their own; all of them when
  // only management hosts sit there. Also each leaf's single owner (a tenant whose hosts are
  // the only non-management hosts there), whose links its management traffic may fall back on.
  void choose_management_links() {
    const int leaves = t_.num_leaves();
    mgmt_cols_.assign(leaves, ColumnSet());
    block_.assign(leaves, ColumnSet());
    not_mgmt_.assign(leaves, ColumnSet());
    beside_mgmt_.assign(leaves, ColumnSet());
    single_owner_.assign(leaves, kNobody);
    for (int leaf = 0; leaf < leaves; ++leaf) {
      bool others = false, mixed = false;
      int owner = kNobody;
      for (int slot = 0; slot < t_.hosts_per_leaf(); ++slot) {
        const int c = host_class_[t_.host_at(leaf, slot)];
        if (c == kManagement) continue;
        others = true;
        if (owner == kNobody) owner = c;
        if (owner != c) mixed = true;
      }
      if (!mixed && owner >= 0) single_owner_[leaf] = owner;
      if (mixed) {
        // A shared leaf: its management traffic may only fall back on one tenant's links
        // (the one holding most of them); the drop keeps everyone else off them, so they
        // reach off-leaf management only over open up-links (the audit says when none).
        single_owner_[leaf] = main_up_owner(1, leaf);
      }
      if (!mgmt_leaf_[leaf]) continue;
      int open = 0;
      for (int c = 0; c < up1_; ++c) {
        const LinkId l = t_.l1_link(leaf, c);
        if (faulty_[l] || owner_[l] != kFree) continue;
        if (!others || open % 2 == 0)
          mgmt_cols_[leaf].set(c);
        else
          not_mgmt_[leaf].set(c);
        ++open;
      }
      if (others) block_[leaf] = mgmt_cols_[leaf];
      for (int c = 0; c < up1_; ++c)
        if (!mgmt_cols_[leaf].test(c)) beside_mgmt_[leaf].set(c);
    }
    owner_cols_.assign(leaves, ColumnSet());
    for (int leaf = 0; leaf < leaves; ++leaf)
      for (int c = 0; c < up1_ && single_owner_[leaf] >= 0; ++c)
        if (owner_[t_.l1_link(leaf, c)] == single_owner_[leaf]) owner_cols_[leaf].set(c);
    l2_owner_.assign(t_.num_switches(2), kNobody);
    if (h_ == 3)
      for (int sw = 0; sw < t_.num_switches(2); ++sw) {
        l2_owner_[sw] = main_up_owner(2, sw);
      }
  }

  // Every non-leaf switch routes every host (first over any non-faulty link, as a fallback;
  // then as below). Management hosts are reached from every leaf over open links (a leaf's
  // single owner's links when no open one leads there), never over the management up-links
  // of a leaf that other owners share. Management leaves reach every other host over the
  // management up-links or the destination's owner's links, and switches above route them
  // over open links or the owner's: management traffic to a tenant enters the tenant's
  // links as late as the tables allow and only from where no other owner's packet can be.
  int thread_count(int work_items) const {
    return std::max(1, std::min(routing_threads(req_.threads), work_items));
  }

  // body(i, scratch) for i in [0, count), spread over threads. Bodies of different i must
  // write disjoint entries (route_leaf: its destinations' columns) and only read shared state.
  template <class Body>
  void for_each_leaf(int count, Body&& body) {
    std::atomic<int> next{0};
    auto worker = [&] {
      LeafScratch sc;
      for (int i; (i = next.fetch_add(1)) < count;) body(i, sc);
    };
    util::run_on_threads(thread_count(count), worker);
  }

  std::vector<int> every_leaf() const {
    std::vector<int> leaves(t_.num_leaves());
    for (int i = 0; i < t_.num_leaves(); ++i) leaves[i] = i;
    return leaves;
  }

  void flush_tenant_warnings() {
    for (auto& list : tenant_warnings_)
      for (auto& w : list) warnings_.push_back(w);
  }

  // Every switch's entries for the hosts of `leaves`, back to kNoRoute (as compute() starts):
  // the jobs leave some entries alone. With `pods`, only the entries of those pods' leaves
  // and level-2 switches.
  void clear_host_columns(const std::vector<int>& leaves, const std::vector<char>* pods = nullptr) {
    std::vector<HostId> hosts;
    for (int leaf : leaves)
      for (int slot = 0; slot < t_.hosts_per_leaf(); ++slot)
        hosts.push_back(t_.host_at(leaf, slot));
    for (int number = 0; number < out_.num_switches(); ++number) {
      if (pods) {
        const auto [level, index] = out_.switch_at(number);
        const int pod = level == 1 ? t_.pod_of_leaf(index) : level == 2 ? pod_of_l2(index) : -1;
        if (pod < 0 || !(*pods)[pod]) continue;
      }
      std::uint8_t* row = out_.row(number);
      for (HostId h : hosts) row[h] = kNoRoute;
    }
  }

  // The ordinary jobs of the destination leaves `targets` (all of them in a full run); with
  // `pods`, only their entries at those pods' switches (Job::only_pods).
  void route_ordinary_hosts(const std::vector<int>& targets,
                            const std::vector<char>* pods = nullptr) {
    std::vector<int> all_leaves(t_.num_leaves()), mgmt_leaves, no_leaves, l2(t_.num_switches(2));
    for (int i = 0; i < t_.num_leaves(); ++i) {
      all_leaves[i] = i;
      if (mgmt_leaf_[i]) mgmt_leaves.push_back(i);
    }
    for (int i = 0; i < t_.num_switches(2); ++i) l2[i] = i;
    // Each leaf's jobs in order (a later one overwrites some entries of an earlier one).
    for_each_leaf(static_cast<int>(targets.size()), [&](int target, LeafScratch& sc) {
      const int ld = targets[target];
      std::vector<HostId> dests, mdests;
      std::vector<int> keys, mkeys;
      for (int slot = 0; slot < t_.hosts_per_leaf(); ++slot) {
        const HostId h = t_.host_at(ld, slot);
        dests.push_back(h);
        keys.push_back(h);
        if (host_class_[h] == kManagement) {
          mdests.push_back(h);
          mkeys.push_back(h);
        }
      }
      // Every job of this destination leaf writes only the switches of `pods`, when given.
      auto route = [&](Job job) {
        job.only_pods = pods;
        route_leaf(ld, job, sc);
      };
      route(Job{kManagement, &dests, &keys, &no_leaves, &l2});
      if (!mdests.empty()) {
        Job job{kFree, &mdests, &mkeys, &all_leaves, &l2};
        job.src_block = &block_;
        job.src_extra = &owner_cols_;
        job.l2_fallback = true;
        route(job);
      }
      // Other hosts, by owner.
      std::vector<int> owners;
      for (HostId h : dests)
        if (host_class_[h] != kManagement &&
            std::find(owners.begin(), owners.end(), host_class_[h]) == owners.end())
          owners.push_back(host_class_[h]);
      for (int owner : owners) {
        std::vector<HostId> od;
        std::vector<int> ok;
        for (HostId h : dests)
          if (host_class_[h] == owner) {
            od.push_back(h);
            ok.push_back(h);
          }
        if (owner == kFree) {
          // Free hosts are quarantined: only management leaves route to them, over
          // their management up-links (sl2vl.h rule 3 keeps everyone else off those), then on
          // over any link; the job below moves them onto open links wherever those lead there.
          Job any{kManagement, &od, &ok, &mgmt_leaves, &l2};
          any.src_block = &beside_mgmt_;
          route(any);
        }
        Job job{kOpenOr, &od, &ok, &mgmt_leaves, &l2};
        job.owner = owner;
        job.src_block = &not_mgmt_;
        job.keep_on_miss = owner == kFree;
        route(job);
      }
    });
  }

  // A tenant's hosts over its own links, keyed by rank among its hosts; with `only`, just its
  // hosts on the leaves it marks (their keys are still ranks among all the tenant's hosts),
  // and with `pods` as well, its other hosts' entries at those pods' switches.
  void route_tenant(int ti, const std::vector<char>* only,
                    const std::vector<char>* pods = nullptr) {
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
    LeafScratch sc;  // (one thread: a tenant's unreachable pairs are noted as warnings)
    std::size_t i = 0;
    while (i < hosts.size()) {
      const int ld = t_.leaf_of_host(hosts[i]);
      dests.clear();
      keys.clear();
      for (; i < hosts.size() && t_.leaf_of_host(hosts[i]) == ld; ++i) {
        dests.push_back(hosts[i]);
        keys.push_back(static_cast<int>(i));
      }
      Job job{ti,      &dests,     &keys,     &leaves,
              &level2, &leaf_base, &pod_base, static_cast<int>(hosts.size())};
      if (only && !(*only)[ld]) {
        if (!pods) continue;
        job.only_pods = pods;
      }
      route_leaf(ld, job, sc);
    }
  }

  // ---- routing to switches ----------------------------------------------------------------
  // Minimum-hop over the open switch-to-switch links (management traffic only; like ftree,
  // switch-to-switch routes are not restricted to up*/down*), not over the management
  // up-links of a shared management leaf; switches the open links cannot reach fall back to
  // every non-faulty link.
  void route_switches() {
    const int n = out_.num_switches();
    // Adjacency in port order: (neighbour switch number, local port).
    std::vector<int> start(n + 1, 0);
    std::vector<std::pair<int, int>> arcs;
    std::vector<char> open;  // per arc: usable by everyone's management traffic
    // per arc: a tenant's link out of a non-leaf switch, usable as the last hop into the
    // destination switch (sl2vl.h: such a hop is an exemption; it can only end at a switch)
    std::vector<char> last;
    std::vector<char> blocked;  // per arc: a management up-link of a shared management leaf
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
          open.push_back(owner_[l] == kFree && !(level == 1 && block_[index].test(c)));
          last.push_back(level > 1 && owner_[l] >= 0);
          blocked.push_back(level == 1 && block_[index].test(c));
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
            open.push_back(owner_[l] == kFree);
            last.push_back(owner_[l] >= 0);
            blocked.push_back(0);
          }
      }
    }
    start[n] = static_cast<int>(arcs.size());
    // Three distances to each destination: over open links only (strict), over open links
    // and a tenant's link as the last hop (open), over every link (all). A switch uses the
    // first that reaches; one that only "all" reaches (a leaf whose up-links are all held)
    // prefers neighbours from which a strict, then an open path of the right length goes on.
    into_.assign(n, {});
    for (int u = 0; u < n; ++u)
      for (int a = start[u]; a < start[u + 1]; ++a) into_[arcs[a].first].push_back({u, a});
    // Whether some working link is not open to everyone: only then can a tenant change move
    // routes to switches (see `whole` below).
    const bool restricted = std::find(open.begin(), open.end(), 0) != open.end();
    enum Mode { kStrict, kOpen, kUnblocked, kAll };
    // One thread's distances, its BFS queue and the ports of a batch of destinations.
    struct Scratch {
      std::vector<int> strict, dist, dist_unblocked, dist_all, queue, whole;
      std::vector<std::uint8_t> ports;  // [destination in batch][switch]
    };
    auto bfs = [&](Scratch& sc, int dst, Mode mode, std::vector<int>& d) {
      std::fill(d.begin(), d.end(), -1);
      int head = 0, tail = 0;
      d[dst] = 0;
      sc.queue[tail++] = dst;
      while (head < tail) {
        const int v = sc.queue[head++];
        // Backwards: the switches u with a usable arc u -> v.
        for (const auto& [u, a] : into_[v]) {
          if (d[u] >= 0) continue;
          if (mode != kAll) {
            if (mode == kUnblocked ? blocked[a] != 0
                                   : !(open[a] != 0 || (mode == kOpen && v == dst && last[a])))
              continue;
          }
          d[u] = d[v] + 1;
          sc.queue[tail++] = u;
        }
      }
    };
    // The (dst mod count)-th of switch u's arcs that `ok` admits, or -1 when it admits none:
    // destinations spread over equal ways the same way in every run.
    auto spread_arc = [&](int u, int dst, auto&& ok) {
      int count = 0;
      for (int a = start[u]; a < start[u + 1]; ++a) count += ok(a);
      if (count == 0) return -1;
      int k = dst % count;
      for (int a = start[u]; a < start[u + 1]; ++a)
        if (ok(a) && k-- == 0) return a;
      return -1;
    };
    auto port_of = [&](int a) {
      return a < 0 ? kNoRoute : static_cast<std::uint8_t>(arcs[a].second);
    };
    // The port of switch u towards switch dst when open links reach dst from u, given the
    // distances to dst over open links (S) and over every working link (W): the route without
    // tenants while it is open, else the (dst mod count)-th open arc of a shortest way.
    auto strict_choice = [&](int u, int dst, auto&& S, auto&& W) {
      auto next = [&](int a) { return arcs[a].first; };
      auto ok = [&](int a) { return open[a] && S(next(a)) == S(u) - 1; };
      if (restricted && W(u) == S(u)) {
        const int without_tenants =
            spread_arc(u, dst, [&](int a) { return W(next(a)) == W(u) - 1; });
        if (without_tenants >= 0 && ok(without_tenants)) return port_of(without_tenants);
      }
      return port_of(spread_arc(u, dst, ok));
    };
    // The port of switch u towards switch dst when only open links and a tenant's link as
    // the last hop reach dst from u, given those distances (D).
    auto open_choice = [&](int u, int dst, auto&& D) {
      int arc = spread_arc(u, dst, [&](int a) { return open[a] && D(arcs[a].first) == D(u) - 1; });
      if (arc < 0)
        arc =
            spread_arc(u, dst, [&](int a) { return arcs[a].first == dst && last[a] && D(u) == 1; });
      return port_of(arc);
    };
    // The distances of a destination for the next run (255: unreached).
    auto remember = [&](int dst, const std::vector<int>& strict, const std::vector<int>& dist,
                        const std::vector<int>& whole) {
      const std::size_t row = std::size_t(dst) * n;
      bool far = false;
      auto keep = [&far](int d) {
        far |= d > 254;
        return d < 0 || d > 254 ? std::uint8_t(255) : static_cast<std::uint8_t>(d);
      };
      // Without restriction every working link is open: the distances over them are the
      // strict ones. Kept either way, so that the next run may reuse them whether or not
      // tenants hold links then (the first tenant on a fabric with none, the last one gone).
      for (int u = 0; u < n; ++u) {
        switch_memo_->strict[row + u] = keep(strict[u]);
        switch_memo_->dist[row + u] = keep(dist[u]);
        switch_memo_->whole[row + u] = keep(restricted ? whole[u] : strict[u]);
      }
      switch_memo_->reusable[dst] = !far;
    };
    // Ports of every switch towards switch dst (column[u]).
    auto route_to = [&](Scratch& sc, int dst, std::uint8_t* column) {
      auto &strict = sc.strict, &dist = sc.dist, &dist_unblocked = sc.dist_unblocked,
           &dist_all = sc.dist_all, &whole = sc.whole;
      // The wider searches only when a narrower one leaves some switch unreached.
      auto unreached = [&](const std::vector<int>& d) {
        return std::find(d.begin(), d.end(), -1) != d.end();
      };
      bfs(sc, dst, kStrict, strict);
      // Distances over every working link: the routes a fabric without tenants would take.
      // Where the open links are as short, keep that route while it is open, so that a tenant
      // taking or releasing links moves only the routes over them (few LFT blocks change).
      if (restricted) bfs(sc, dst, kAll, whole);
      if (unreached(strict)) {
        bfs(sc, dst, kOpen, dist);
      } else {
        dist = strict;
      }
      if (unreached(dist)) {
        bfs(sc, dst, kUnblocked, dist_unblocked);
        if (unreached(dist_unblocked))
          bfs(sc, dst, kAll, dist_all);
        else
          dist_all = dist_unblocked;
      } else {
        dist_unblocked = dist;
        dist_all = dist;
      }
      if (switch_memo_) remember(dst, strict, dist, whole);
      for (int u = 0; u < n; ++u) {
        std::uint8_t port = kNoRoute;
        if (u == dst) {
          column[u] = kSelf;
          continue;
        }
        // Candidate filters, best first; each keeps the path minimal for its distance.
        auto pick = [&](auto&& ok) {
          int count = 0;
          for (int a = start[u]; a < start[u + 1]; ++a) count += ok(a);
          if (count == 0) return false;
          int k = dst % count;
          for (int a = start[u]; a < start[u + 1]; ++a)
            if (ok(a) && k-- == 0) {
              port = static_cast<std::uint8_t>(arcs[a].second);
              return true;
            }
          return false;
        };
        auto next = [&](int a) { return arcs[a].first; };
        if (strict[u] > 0) {
          column[u] = strict_choice(
              u, dst, [&](int x) { return strict[x]; }, [&](int x) { return whole[x]; });
          continue;
        } else if (dist[u] > 0) {
          column[u] = open_choice(u, dst, [&](int x) { return dist[x]; });
          continue;
        } else if (dist_unblocked[u] > 0) {
          // Not over a management up-link, even when that is shorter: the drop would stop
          // everyone but the management hosts there.
          const int want = dist_unblocked[u] - 1;
          auto ok = [&](int a) { return !blocked[a] && dist_unblocked[next(a)] == want; };
          pick([&](int a) { return ok(a) && strict[next(a)] == want; }) ||
              pick([&](int a) { return ok(a) && dist[next(a)] == want; }) || pick(ok);
        } else if (dist_all[u] > 0) {
          const int want = dist_all[u] - 1;
          pick([&](int a) { return strict[next(a)] == want; }) ||
              pick([&](int a) { return dist[next(a)] == want; }) ||
              pick([&](int a) { return dist_all[next(a)] == want; });
        }
        column[u] = port;
      }
    };
    // Destinations in batches, each computed into a buffer and then written row by row (one
    // switch's entries for a batch are neighbours: a cache line, not one per destination).
    // Batches are independent: they run on several threads when the machine has them, each
    // writing its own destinations' entries, so the tables do not depend on the thread count.
    // An incremental run: the arcs whose openness changed since the run the memo holds (the
    // arcs themselves are the same: the faulty links are). Otherwise the memo is filled anew.
    const std::size_t cells = static_cast<std::size_t>(n) * n;
    const bool reuse = switch_memo_ && reuse_switches_ && switch_memo_->valid &&
                       switch_memo_->open.size() == open.size() &&
                       switch_memo_->strict.size() == cells && switch_memo_->whole.size() == cells;
    std::vector<int> changed, tail(arcs.size()), tails;
    for (int u = 0; u < n; ++u)
      for (int a = start[u]; a < start[u + 1]; ++a) tail[a] = u;
    if (reuse) {
      for (int a = 0; a < static_cast<int>(arcs.size()); ++a)
        if (open[a] != switch_memo_->open[a] || last[a] != switch_memo_->last[a]) {
          changed.push_back(a);
          tails.push_back(tail[a]);
        }
      std::sort(tails.begin(), tails.end());
      tails.erase(std::unique(tails.begin(), tails.end()), tails.end());
    } else if (switch_memo_) {
      switch_memo_->strict.assign(cells, 255);
      switch_memo_->dist.assign(cells, 255);
      switch_memo_->whole.assign(cells, 255);
      switch_memo_->reusable.assign(n, 0);
    }
    // Whether the breadth-first distances d (255: unreached) to dst over the arcs `usable`
    // marks stay what they were over those `was_usable` marked: no arc made usable is a
    // shortcut (the old distances remain a lower bound), and every switch that lost an arc of
    // a shortest way keeps another (each switch still has one: the old distances are reached).
    auto keeps = [&](const std::uint8_t* d, auto&& usable, auto&& was_usable) {
      for (int a : changed) {
        const bool now = usable(a), then = was_usable(a);
        if (now == then) continue;
        const int u = tail[a], v = arcs[a].first;
        if (now) {
          if (d[v] != 255 && (d[u] == 255 || d[u] > d[v] + 1)) return false;
        } else if (d[v] != 255 && d[u] == d[v] + 1) {
          bool other = false;
          for (int b = start[u]; b < start[u + 1] && !other; ++b)
            other = usable(b) && d[arcs[b].first] != 255 && d[arcs[b].first] + 1 == d[u];
          if (!other) return false;
        }
      }
      return true;
    };
    // Whether dst's distances over open links (and, where those leave a switch unreached, over
    // open links and a tenant's link as the last hop) are what the memo holds. The wider
    // searches read neither openness nor ownership. Then only the entries of the changed
    // arcs' tails can differ: a switch's entry reads its own arcs and the distances.
    auto keeps_distances = [&](int dst) {
      if (!switch_memo_->reusable[dst]) return false;
      const std::size_t row = std::size_t(dst) * n;
      const std::uint8_t* S = &switch_memo_->strict[row];
      const auto& was_open = switch_memo_->open;
      const auto& was_last = switch_memo_->last;
      if (!keeps(
              S, [&](int a) { return open[a] != 0; }, [&](int a) { return was_open[a] != 0; }))
        return false;
      if (std::find(S, S + n, 255) == S + n) return true;  // the wider searches were not made
      auto into_dst = [&](int a) { return arcs[a].first == dst; };
      return keeps(
          &switch_memo_->dist[row], [&](int a) { return open[a] || (into_dst(a) && last[a]); },
          [&](int a) { return was_open[a] || (into_dst(a) && was_last[a]); });
    };
    auto route_tails = [&](int dst) {
      const std::size_t row = std::size_t(dst) * n;
      const std::uint8_t* S = &switch_memo_->strict[row];
      const std::uint8_t* D = &switch_memo_->dist[row];
      const std::uint8_t* W = &switch_memo_->whole[row];
      auto s = [S](int x) { return S[x] == 255 ? -1 : int(S[x]); };
      auto d = [D](int x) { return D[x] == 255 ? -1 : int(D[x]); };
      auto w = [W](int x) { return W[x] == 255 ? -1 : int(W[x]); };
      for (int u : tails) {
        if (u == dst) continue;
        std::uint8_t& entry = out_.row(u)[out_.num_hosts() + dst];
        if (s(u) > 0)
          entry = strict_choice(u, dst, s, w);
        else if (d(u) > 0)
          entry = open_choice(u, dst, d);
        // else: the wider searches' choice, which reads no arc's openness: unchanged
      }
    };
    constexpr int kBatch = 64;
    const int batches = (n + kBatch - 1) / kBatch;
    std::atomic<int> next_batch{0}, recomputed{0};
    auto worker = [&] {
      Scratch sc;
      for (auto* v : {&sc.strict, &sc.dist, &sc.dist_unblocked, &sc.dist_all, &sc.queue, &sc.whole})
        v->assign(n, 0);
      sc.ports.assign(static_cast<std::size_t>(kBatch) * n, 0);
      char computed[kBatch];
      for (int b; (b = next_batch.fetch_add(1)) < batches;) {
        const int first = b * kBatch, count = std::min(kBatch, n - first);
        for (int j = 0; j < count; ++j) {
          computed[j] = !(reuse && keeps_distances(first + j));
          recomputed += computed[j];
          if (computed[j])
            route_to(sc, first + j, &sc.ports[std::size_t(j) * n]);
          else
            route_tails(first + j);
        }
        for (int u = 0; u < n; ++u) {
          std::uint8_t* row = out_.row(u) + out_.num_hosts() + first;
          for (int j = 0; j < count; ++j)
            if (computed[j]) row[j] = sc.ports[std::size_t(j) * n + u];
        }
      }
    };
    util::run_on_threads(thread_count(batches), worker);
    switches_recomputed_ = recomputed;
    if (switch_memo_) {
      switch_memo_->open = open;
      switch_memo_->last = last;
      switch_memo_->valid = true;
    }
  }

 public:
  // Where route_switches keeps its distances for the next run, and whether it may reuse them
  // (an incremental run; the memo is then the previous run's).
  SwitchRoutesMemo* switch_memo_ = nullptr;
  bool reuse_switches_ = false;
  int switches_recomputed_ = 0;  // destination switches whose routes were computed again

 private:
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
  // What each tenant's own routes warned (run() appends them in tenant order), kept apart so
  // that an incremental run can take an unchanged tenant's from the run before.
  std::vector<std::vector<std::string>> tenant_warnings_ =
      std::vector<std::vector<std::string>>(req_.tenants.size());
  std::vector<ColumnSet> mgmt_cols_, block_, not_mgmt_;  // [leaf]
  std::vector<ColumnSet> beside_mgmt_;  // [leaf] every up-column but the management up-links
  std::vector<int> single_owner_;       // [leaf]
  std::vector<int> l2_owner_;           // [level-2 switch]
  std::vector<ColumnSet> owner_cols_;   // [leaf] up-columns of single_owner_
  std::vector<std::vector<std::pair<int, int>>> into_;  // [switch] (from switch, arc)

  std::map<std::pair<int, int>, ClassMasks> masks_;  // (map: references stay valid)
  std::mutex masks_mu_;
};

template <class T>
std::vector<T> sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v;
}

bool same_placement(const allocator::Placement& a, const allocator::Placement& b) {
  return a.hosts == b.hosts && a.links == b.links && a.idle == b.idle;
}

IncrementalPlan Engine::plan(const Engine& before) const {
  IncrementalPlan p;
  auto full = [&p](const char* why) {
    p.full = true;
    p.why = why;
    return p;
  };
  // Inputs every column reads: any change there may move any route.
  if (req_.tenants_only || before.req_.tenants_only) return full("a tenants-only request");
  if (faulty_ != before.faulty_) return full("the faulty links changed");
  if (sorted(req_.management_hosts) != sorted(before.req_.management_hosts))
    return full("the management hosts changed");
  if (sorted(req_.management_switches) != sorted(before.req_.management_switches))
    return full("the management switches changed");
  // The management leaves' up-links are the sources of every ordinary job.
  if (block_ != before.block_ || not_mgmt_ != before.not_mgmt_ ||
      beside_mgmt_ != before.beside_mgmt_)
    return full("a management leaf's up-links changed");
  // Tenants are matched by name; their indices shift as others come and go.
  std::map<std::string, int> old_index, new_index;
  for (int i = 0; i < static_cast<int>(before.req_.tenants.size()); ++i)
    if (!old_index.emplace(before.req_.tenants[i].key, i).second)
      return full("two tenants of one name");
  for (int i = 0; i < static_cast<int>(req_.tenants.size()); ++i)
    if (!new_index.emplace(req_.tenants[i].key, i).second) return full("two tenants of one name");
  // Owners (of hosts and links) compared by tenant name, the other classes as they are.
  auto same_owner = [&](int now, int then) {
    if (now >= 0 && then >= 0) return req_.tenants[now].key == before.req_.tenants[then].key;
    return now == then;
  };
  p.dirty_leaf.assign(t_.num_leaves(), 0);
  p.level2_pod.assign(t_.num_pods(), 0);
  auto mark_hosts = [&](const allocator::Placement& placement) {
    for (HostId h : placement.hosts) p.dirty_leaf[t_.leaf_of_host(h)] = 1;
  };
  // A tenant added, removed or changed: its hosts' columns (its own routes to them).
  p.same_as.assign(req_.tenants.size(), -1);
  std::vector<char> kept(before.req_.tenants.size(), 0);
  for (int i = 0; i < static_cast<int>(req_.tenants.size()); ++i) {
    const auto found = old_index.find(req_.tenants[i].key);
    if (found != old_index.end() &&
        same_placement(req_.tenants[i].placement, before.req_.tenants[found->second].placement)) {
      p.same_as[i] = found->second;
      kept[found->second] = 1;
    } else {
      mark_hosts(req_.tenants[i].placement);
    }
  }
  for (int i = 0; i < static_cast<int>(before.req_.tenants.size()); ++i)
    if (!kept[i]) mark_hosts(before.req_.tenants[i].placement);
  // A host of another class: its leaf's ordinary jobs group the leaf's hosts by class.
  for (HostId h = 0; h < t_.num_hosts(); ++h)
    if (!same_owner(host_class_[h], before.host_class_[h])) p.dirty_leaf[t_.leaf_of_host(h)] = 1;
  // A link of another owner: the ordinary routes to the hosts of its leaf (the only leaf whose
  // columns read a non-management leaf's up-links), and the routes to switches when it
  // turned open or closed to management traffic.
  for (LinkId l = 0; l < t_.total_links(); ++l) {
    const int now = owner_[l], then = before.owner_[l];
    if (same_owner(now, then)) continue;
    if (t_.link_level(l) == 2) {
      // An up-link of level-2 switch s of pod q. route_leaf reads s's up-links (allowed()
      // masks, main owner) for the hosts of q (going down from the top switches: their
      // columns are computed again), and for the hosts of every other pod only in the
      // choices it writes at s itself and, through whether s still leads up towards the
      // destination, at the source leaves of q: those hosts' entries at q's leaves and
      // level-2 switches are computed again (level2_pod), nothing else of their columns.
      const int q = t_.pod_of_level2(t_.link_switch(l));
      p.level2_pod[q] = 1;
      for (int i = 0; i < t_.leaves_per_pod(); ++i) p.dirty_leaf[q * t_.leaves_per_pod() + i] = 1;
    } else if (mgmt_leaf_[t_.link_switch(l)]) {
      // Every ordinary job reads the management leaves' up-links: then every host's column
      // is computed again (the routes to switches may still be kept).
      std::fill(p.dirty_leaf.begin(), p.dirty_leaf.end(), 1);
    } else {
      p.dirty_leaf[t_.link_switch(l)] = 1;
    }
    if ((now == kFree) != (then == kFree) || (now >= 0) != (then >= 0)) p.switches = true;
  }
  // Management hosts are reached from every leaf, over whatever the leaves' owners leave
  // open: their columns read every leaf, so they are always computed again (they are few).
  for (HostId h : req_.management_hosts) p.dirty_leaf[t_.leaf_of_host(h)] = 1;
  p.full = false;
  return p;
}

}  // namespace

int routing_threads(int requested) {
  const int wanted =
      requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, std::min(wanted, kMaxThreads));
}

RoutingResult compute(const FatTree& tree, const RoutingRequest& request) {
  RoutingResult result;
  result.tables = ModelTables(tree);
  Engine engine(tree, request, result);
  engine.run();
  return result;
}

const RoutingResult& IncrementalRouting::compute(const FatTree& tree,
                                                 const RoutingRequest& request) {
  const bool had = valid_;
  valid_ = false;  // until this run succeeds: its tables are changed in place
  stats_ = IncrementalStats();
  stats_.of_leaves = tree.num_leaves();
  stats_.of_switches = tree.total_switches();
  result_.warnings.clear();
  IncrementalPlan plan;
  if (!had) {
    plan.why = "no previous run";
  } else if (spec_ != tree.spec().text()) {
    plan.why = "another tree";
  }
  std::unique_ptr<Engine> now;
  switch_memo_.valid = switch_memo_.valid && had;
  if (!plan.why.empty()) {
    now = std::make_unique<Engine>(tree, request, result_);
  } else {
    RoutingResult unused;
    Engine before(tree, request_, unused);
    before.prepare();
    now = std::make_unique<Engine>(tree, request, result_);
    now->prepare();
    plan = now->plan(before);
  }
  now->switch_memo_ = &switch_memo_;
  if (plan.full) {
    result_.tables = ModelTables(tree);
    now->run();
    stats_.leaves = tree.num_leaves();
    stats_.switches = true;
    stats_.switch_destinations = tree.total_switches();
  } else {
    now->run_partial(plan, tenant_warnings_);
    stats_.leaves = static_cast<int>(
        std::count(plan.dirty_leaf.begin(), plan.dirty_leaf.end(), static_cast<char>(1)));
    stats_.switches = plan.switches;
    stats_.switch_destinations = plan.switches ? now->switches_recomputed_ : 0;
    stats_.level2_pods = static_cast<int>(
        std::count(plan.level2_pod.begin(), plan.level2_pod.end(), static_cast<char>(1)));
    if (stats_.level2_pods > 0) stats_.pod_rows_leaves = stats_.of_leaves - stats_.leaves;
  }
  stats_.full = plan.full;
  stats_.why = plan.why;
  tenant_warnings_ = now->take_tenant_warnings();
  spec_ = tree.spec().text();
  request_ = request;
  valid_ = true;
  return result_;
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
