#include "routing/host_routes.h"

#include <algorithm>
#include <atomic>

#include "util/threads.h"

namespace laas::routing::phases {

namespace {

// The set bits of `set` below `limit`, ascending.
void to_list(const ColumnSet& set, int limit, std::vector<std::uint8_t>& out) {
  out.clear();
  for (int c = 0; c < limit; ++c)
    if (set.test(c)) out.push_back(static_cast<std::uint8_t>(c));
}

// Outside tenants' own routes (free and management classes): among the usable columns
// cols[0, n) (ascending, within base .. base + full - 1), key's column with every column
// usable -- base + key mod full -- while it is usable, else cols[key mod n]. A tenant taking
// or releasing columns then moves only the destinations routed over those columns, so a
// tenant change rewrites few LFT blocks beyond its own. With every column usable
// this is cols[key mod n], as for tenants, whose routes keep the paper's D-mod-K.
// (`set` holds cols[0, n) and maybe other columns outside base .. base + full - 1.)
int stable_pick(const ColumnSet& set, const std::uint8_t* cols, int n, int key, int base,
                int full) {
  const int preferred = base + key % full;
  if (set.test(preferred)) return preferred;
  return cols[key % n];
}

int relative(int key, int base, int n) { return ((key - base) % n + n) % n; }

}  // namespace

HostRoutes::HostRoutes(const RouteInput& in, const ManagementLinks& mgmt, ModelTables& out)
    : in_(in),
      mgmt_(mgmt),
      t_(in.t),
      out_(out),
      h_(in.h),
      up1_(in.up1),
      up2_(in.up2),
      p2_(in.p2),
      p3_(in.p3),
      w3_(in.w3),
      l2_per_pod_(in.l2_per_pod),
      host_class_(in.host_class),
      owner_(in.owner),
      faulty_(in.faulty),
      all_leaves_(in.t.num_leaves()),
      all_level2_(in.t.num_switches(2)),
      unreachable_(in.req.tenants.size(), 0),
      tenant_warnings_(in.req.tenants.size()) {
  for (int i = 0; i < t_.num_leaves(); ++i) {
    all_leaves_[i] = i;
    if (in.mgmt_leaf[i]) mgmt_leaves_.push_back(i);
  }
  for (int i = 0; i < t_.num_switches(2); ++i) all_level2_[i] = i;
}

const HostRoutes::ClassMasks& HostRoutes::masks_for(int cls, int owner) {
  const auto key = std::make_pair(cls, cls == kOpenOr ? owner : kNobody);
  std::lock_guard<std::mutex> lock(masks_mu_);  // leaves are routed on several threads
  auto found = masks_.find(key);
  if (found != masks_.end()) return found->second;
  ClassMasks m;
  m.leaf_up.resize(t_.num_leaves());
  for (int leaf = 0; leaf < t_.num_leaves(); ++leaf)
    for (int c = 0; c < up1_; ++c)
      if (in_.allowed(cls, t_.l1_link(leaf, c), owner)) m.leaf_up[leaf].set(c);
  if (h_ == 3) {
    m.l2_up.resize(t_.num_switches(2));
    for (int sw = 0; sw < t_.num_switches(2); ++sw)
      for (int c = 0; c < up2_; ++c)
        if (in_.allowed(cls, t_.l2_link(sw, c), owner)) m.l2_up[sw].set(c);
  }
  return masks_.emplace(key, std::move(m)).first->second;
}

void HostRoutes::route_leaf(int ld, const Job& job, LeafScratch& sc) {
  const ClassMasks& masks = masks_for(job.cls, job.owner);
  Target d;
  d.ld = ld;
  d.pd = t_.pod_of_leaf(ld);
  d.lip = t_.leaf_in_pod(ld);
  d.ld_set = &masks.leaf_up[ld];
  d.stable = job.cls < 0;
  d.notes = job.cls >= 0 && !job.only_pods;  // a restricted job's pairs were noted before
  d.nd = static_cast<int>(job.dests->size());
  d.dests = job.dests->data();
  d.keys = job.keys->data();
  find_down_columns(d, sc);
  if (h_ == 3) find_level3_ways(job, masks, d, sc);
  find_source_columns(job, masks, d, sc);

  if (!job.only_pods) {
    std::uint8_t* row = out_.row(out_.switch_number(1, ld));
    for (int i = 0; i < d.nd; ++i)
      row[d.dests[i]] = static_cast<std::uint8_t>(in_.down_port(1, t_.slot_of_host(d.dests[i]), 0));
  }
  if (d.n1 == 0) {  // nothing above ld can reach it; source leaves get no route
    write_unreachable(job, d);
    return;
  }
  write_down_in_pod(job, d, sc);
  if (h_ == 3) {
    if (!job.only_pods) write_down_from_top(d, sc);
    write_up_from_level2(job, d, sc);
  }
  write_source_leaves(job, d, sc);
}

// Allowed up-columns of the destination leaf, ascending; grouped by level-2 switch they are
// contiguous (column c goes to switch c / p2). Level-2 switch b of ld's pod reaches ld
// downwards through sc.cols_ld[down_begin[b], down_end[b]).
void HostRoutes::find_down_columns(Target& d, LeafScratch& sc) const {
  to_list(*d.ld_set, up1_, sc.cols_ld);
  d.n1 = static_cast<int>(sc.cols_ld.size());
  sc.down_begin.assign(l2_per_pod_, 0);
  sc.down_end.assign(l2_per_pod_, 0);
  for (int i = 0; i < d.n1; ++i) {
    const int b = sc.cols_ld[i] / p2_;
    if (sc.down_end[b] == 0) sc.down_begin[b] = i;
    sc.down_end[b] = i + 1;
  }
  d.reach_same.reset();
  for (int c = 0; c < up1_; ++c)
    if (sc.down_end[c / p2_] != 0) d.reach_same.set(c);
}

// Level 3: top switches that reach ld downwards, through which columns of (pd, b); the
// level-2 switches of other pods going up towards them; per pod, the up-columns of its leaves
// whose level-2 switch goes on towards ld.
void HostRoutes::find_level3_ways(const Job& job, const ClassMasks& masks, const Target& d,
                                  LeafScratch& sc) const {
  const int pd = d.pd;
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
    if (in_.pod_of_l2(s) == pd || !job.writes_pod(in_.pod_of_l2(s))) continue;
    const int b = s % l2_per_pod_;
    if (sc.down_end[b] == 0) continue;
    ColumnSet usable = masks.l2_up[s] & sc.top_cols[b];
    // No open way up: the tenant holding most of this switch's up-links carries it
    // (its own traffic passes; the drop keeps everyone else's off its links).
    if (usable.none() && job.l2_fallback && mgmt_.l2_owner[s] != kNobody) {
      for (int c = 0; c < up2_; ++c) {
        const LinkId l = t_.l2_link(s, c);
        if (!faulty_[l] && owner_[l] == mgmt_.l2_owner[s]) usable.set(c);
      }
      usable &= sc.top_cols[b];
    }
    const ColumnSet exact = usable & sc.set2[b];
    sc.cand2_set[s] = exact.any() ? exact : usable;
    to_list(sc.cand2_set[s], up2_, cand);
    sc.l2_reaches[s] = !cand.empty();
  }
  sc.reach_pod.assign(t_.num_pods(), ColumnSet());
  for (int ps = 0; ps < t_.num_pods(); ++ps)
    for (int c = 0; c < up1_ && job.writes_pod(ps); ++c)
      if (sc.l2_reaches[t_.level2_switch(ps, c / p2_)]) sc.reach_pod[ps].set(c);
}

// Source leaves: allowed up-columns whose parent leads to ld, preferring the columns ld
// itself holds (the "intersection" of the paper's spine sets).
void HostRoutes::find_source_columns(const Job& job, const ClassMasks& masks, const Target& d,
                                     LeafScratch& sc) const {
  sc.cand1.resize(t_.num_leaves());
  sc.cand1_set.resize(t_.num_leaves());
  for (int ls : *job.leaves) {
    auto& cand = sc.cand1[ls];
    cand.clear();
    if (ls == d.ld) continue;
    const int ps = t_.pod_of_leaf(ls);
    if (!job.writes_pod(ps)) continue;
    const ColumnSet& reach = ps == d.pd ? d.reach_same : sc.reach_pod[ps];
    ColumnSet usable = masks.leaf_up[ls] & reach;
    if (job.src_block) usable &= ~(*job.src_block)[ls];
    if (usable.none() && job.src_extra && (*job.src_extra)[ls].any()) {
      for (int c = 0; c < up1_; ++c)
        if ((*job.src_extra)[ls].test(c) && !faulty_[t_.l1_link(ls, c)]) usable.set(c);
      usable &= reach;
    }
    const ColumnSet exact = usable & *d.ld_set;
    sc.cand1_set[ls] = exact.any() ? exact : usable;
    to_list(sc.cand1_set[ls], up1_, cand);
  }
}

void HostRoutes::write_unreachable(const Job& job, const Target& d) {
  if (job.keep_on_miss) return;
  for (int ls : *job.leaves)
    if (ls != d.ld && job.writes_pod(t_.pod_of_leaf(ls)))
      for (int i = 0; i < d.nd; ++i) {
        out_.row(out_.switch_number(1, ls))[d.dests[i]] = kNoRoute;
        if (d.notes) note_unreachable(job.cls, ls, d.dests[i]);
      }
}

// Level 2 of the destination pod: down to ld.
void HostRoutes::write_down_in_pod(const Job& job, const Target& d, const LeafScratch& sc) {
  const int n1 = d.n1;
  for (int b = 0; b < l2_per_pod_ && job.writes_pod(d.pd); ++b) {
    if (sc.down_end[b] == 0) continue;
    std::uint8_t* row = out_.row(out_.switch_number(2, t_.level2_switch(d.pd, b)));
    const int len = sc.down_end[b] - sc.down_begin[b];
    for (int i = 0; i < d.nd; ++i) {
      const int k = d.keys[i];
      int c;
      if (d.stable) {
        c = stable_pick(*d.ld_set, sc.cols_ld.data(), n1, k, 0, up1_);
        if (c / p2_ != b)
          c = stable_pick(*d.ld_set, sc.cols_ld.data() + sc.down_begin[b], len, k, b * p2_, p2_);
      } else {
        c = sc.cols_ld[k % n1];
        if (c / p2_ != b) c = sc.cols_ld[sc.down_begin[b] + k % len];
      }
      row[d.dests[i]] = static_cast<std::uint8_t>(in_.down_port(2, d.lip, c % p2_));
    }
  }
}

// Top switches: down to the destination pod (none of only_pods' switches).
void HostRoutes::write_down_from_top(const Target& d, const LeafScratch& sc) {
  for (int b = 0; b < l2_per_pod_; ++b) {
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
      for (int i = 0; i < d.nd; ++i) {
        const int k2 = d.keys[i] / (d.stable ? up1_ : d.n1);
        int c;
        if (d.stable) {
          c = stable_pick(sc.set2[b], cols.data(), n, k2, 0, up2_);
          if (c / p3_ != x) c = stable_pick(sc.set2[b], cols.data() + first, len, k2, x * p3_, p3_);
        } else {
          c = cols[k2 % n];
          if (c / p3_ != x) c = cols[first + k2 % len];
        }
        row[d.dests[i]] = static_cast<std::uint8_t>(in_.down_port(3, d.pd, c % p3_));
      }
    }
  }
}

// Level 2 of other pods: up.
void HostRoutes::write_up_from_level2(const Job& job, const Target& d, const LeafScratch& sc) {
  for (int s : *job.level2) {
    if (in_.pod_of_l2(s) == d.pd || !job.writes_pod(in_.pod_of_l2(s))) continue;
    const auto& cand = sc.cand2[s];
    if (cand.empty()) continue;
    const int n = static_cast<int>(cand.size());
    std::uint8_t* row = out_.row(out_.switch_number(2, s));
    for (int i = 0; i < d.nd; ++i) {
      const int k = d.keys[i];
      if (d.stable) {
        row[d.dests[i]] = static_cast<std::uint8_t>(
            stable_pick(sc.cand2_set[s], cand.data(), n, k / up1_, 0, up2_) + 1);
        continue;
      }
      const int key =
          job.pod_base ? relative(k, (*job.pod_base)[in_.pod_of_l2(s)], job.n) / d.n1 : k / d.n1;
      row[d.dests[i]] = static_cast<std::uint8_t>(cand[key % n] + 1);
    }
  }
}

void HostRoutes::write_source_leaves(const Job& job, const Target& d, const LeafScratch& sc) {
  for (int ls : *job.leaves) {
    if (ls == d.ld || !job.writes_pod(t_.pod_of_leaf(ls))) continue;
    const auto& cand = sc.cand1[ls];
    std::uint8_t* row = out_.row(out_.switch_number(1, ls));
    const int n = static_cast<int>(cand.size());
    for (int i = 0; i < d.nd; ++i) {
      if (n == 0) {
        if (job.keep_on_miss) continue;
        row[d.dests[i]] = kNoRoute;
        if (d.notes) note_unreachable(job.cls, ls, d.dests[i]);
        continue;
      }
      const int k = d.keys[i];
      if (d.stable) {
        row[d.dests[i]] = static_cast<std::uint8_t>(
            stable_pick(sc.cand1_set[ls], cand.data(), n, k, 0, up1_) + 1);
        continue;
      }
      const int key = job.leaf_base ? relative(k, (*job.leaf_base)[ls], job.n) : k;
      row[d.dests[i]] = static_cast<std::uint8_t>(cand[key % n] + 1);
    }
  }
}

void HostRoutes::note_unreachable(int tenant, int leaf, HostId d) {
  constexpr int kMaxPerTenant = 5;
  int& count = unreachable_[tenant];
  if (++count <= kMaxPerTenant)
    tenant_warnings_[tenant].push_back("tenant " + in_.req.tenants[tenant].key +
                                       ": no path on its own links from " +
                                       t_.switch_name(1, leaf) + " to " + t_.host_name(d));
}

template <class Body>
void HostRoutes::for_each_leaf(int count, Body&& body) {
  std::atomic<int> next{0};
  auto worker = [&] {
    LeafScratch sc;
    for (int i; (i = next.fetch_add(1)) < count;) body(i, sc);
  };
  util::run_on_threads(in_.thread_count(count), worker);
}

void HostRoutes::clear_host_columns(const std::vector<int>& leaves, const std::vector<char>* pods) {
  std::vector<HostId> hosts;
  for (int leaf : leaves)
    for (int slot = 0; slot < t_.hosts_per_leaf(); ++slot) hosts.push_back(t_.host_at(leaf, slot));
  for (int number = 0; number < out_.num_switches(); ++number) {
    if (pods) {
      const auto [level, index] = out_.switch_at(number);
      const int pod = level == 1 ? t_.pod_of_leaf(index) : level == 2 ? in_.pod_of_l2(index) : -1;
      if (pod < 0 || !(*pods)[pod]) continue;
    }
    std::uint8_t* row = out_.row(number);
    for (HostId host : hosts) row[host] = kNoRoute;
  }
}

// Every non-leaf switch routes every host (first over any non-faulty link, as a fallback;
// then as below). Management hosts are reached from every leaf over open links (a leaf's
// single owner's links when no open one leads there), never over the management up-links
// of a leaf that other owners share. Management leaves reach every other host over the
// management up-links or the destination's owner's links, and switches above route them
// over open links or the owner's: management traffic to a tenant enters the tenant's
// links as late as the tables allow and only from where no other owner's packet can be.
void HostRoutes::route_ordinary_hosts(const std::vector<int>& targets,
                                      const std::vector<char>* pods) {
  for_each_leaf(static_cast<int>(targets.size()),
                [&](int target, LeafScratch& sc) { route_leaf_jobs(targets[target], pods, sc); });
}

// One destination leaf's jobs in order (a later one overwrites some entries of an earlier
// one); every job writes only the switches of `pods`, when given.
void HostRoutes::route_leaf_jobs(int ld, const std::vector<char>* pods, LeafScratch& sc) {
  std::vector<HostId> dests, mdests;
  std::vector<int> keys, mkeys;
  for (int slot = 0; slot < t_.hosts_per_leaf(); ++slot) {
    const HostId host = t_.host_at(ld, slot);
    dests.push_back(host);
    keys.push_back(host);
    if (host_class_[host] == kManagement) {
      mdests.push_back(host);
      mkeys.push_back(host);
    }
  }
  auto route = [&](Job job) {
    job.only_pods = pods;
    route_leaf(ld, job, sc);
  };
  route(Job{kManagement, &dests, &keys, &no_leaves_, &all_level2_});
  if (!mdests.empty()) {
    Job job{kFree, &mdests, &mkeys, &all_leaves_, &all_level2_};
    job.src_block = &mgmt_.block;
    job.src_extra = &mgmt_.owner_cols;
    job.l2_fallback = true;
    route(job);
  }
  // Other hosts, by owner.
  std::vector<int> owners;
  for (HostId host : dests)
    if (host_class_[host] != kManagement &&
        std::find(owners.begin(), owners.end(), host_class_[host]) == owners.end())
      owners.push_back(host_class_[host]);
  for (int owner : owners) {
    std::vector<HostId> od;
    std::vector<int> ok;
    for (HostId host : dests)
      if (host_class_[host] == owner) {
        od.push_back(host);
        ok.push_back(host);
      }
    if (owner == kFree) {
      // The free pool is closed: only management leaves route to free hosts, over
      // their management up-links (sl2vl.h rule 3 keeps everyone else off those), then on
      // over any link; the job below moves them onto open links wherever those lead there.
      Job any{kManagement, &od, &ok, &mgmt_leaves_, &all_level2_};
      any.src_block = &mgmt_.beside_mgmt;
      route(any);
    }
    Job job{kOpenOr, &od, &ok, &mgmt_leaves_, &all_level2_};
    job.owner = owner;
    job.src_block = &mgmt_.not_mgmt;
    job.keep_on_miss = owner == kFree;
    route(job);
  }
}

void HostRoutes::route_tenant(int ti, const std::vector<char>* only,
                              const std::vector<char>* pods) {
  const auto& p = in_.req.tenants[ti].placement;
  std::vector<HostId> hosts = p.hosts;
  std::sort(hosts.begin(), hosts.end());
  std::vector<int> leaves, level2;
  std::vector<char> leaf_seen(t_.num_leaves(), 0), l2_seen(t_.num_switches(2), 0);
  for (HostId host : hosts) {
    const int leaf = t_.leaf_of_host(host);
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

}  // namespace laas::routing::phases
