#include <algorithm>

#include "allocator/placers.h"
#include "allocator/search.h"

namespace laas::allocator {
namespace {

// One candidate for the FLAP search: a leaf (2-level step) or a pod (3-level step), with the
// up-link columns it could give, and whether it can hold the D part or the R part.
struct Unit {
  int id = 0;
  SlotSet columns;
  bool fits_d = false;
  bool fits_r = false;
};

struct FlapResult {
  std::vector<int> d_units;  // indices into the unit list
  int r_unit = -1;
  SlotSet common;  // columns free on every D unit
};

// Paper Algorithm 1 (FLAP): find q units that share at least need_d free columns and, if
// need_r > 0, one more unit whose free columns meet that common set in at least need_r. Units
// come best-fit first, so the first answer packs the tree.
class Flap {
 public:
  // `budget` bounds the search nodes visited (0: exhaustive, as in the paper).
  Flap(const std::vector<Unit>& units, int q, int need_d, int need_r, bool has_r, long budget = 0)
      : units_(units), q_(q), need_d_(need_d), need_r_(need_r), has_r_(has_r), budget_(budget) {
    for (size_t i = 0; i < units.size(); ++i)
      if (units[i].fits_d) d_candidates_.push_back(static_cast<int>(i));
  }

  bool run(FlapResult& out) {
    if (static_cast<int>(d_candidates_.size()) < q_) return false;
    // Without any possible R unit every combination of D units would be tried in vain.
    if (has_r_ &&
        std::none_of(units_.begin(), units_.end(), [](const Unit& u) { return u.fits_r; }))
      return false;
    SlotSet all;
    all.set();
    chosen_.clear();
    return recurse(0, all, out);
  }

 private:
  bool recurse(size_t start, const SlotSet& common, FlapResult& out) {
    if (budget_ > 0 && --budget_ == 0) return false;
    if (static_cast<int>(chosen_.size()) == q_) return find_r(common, out);
    const size_t still_needed = q_ - chosen_.size();
    for (size_t k = start; k + still_needed <= d_candidates_.size(); ++k) {
      const int u = d_candidates_[k];
      const SlotSet next = common & units_[u].columns;
      if (static_cast<int>(next.count()) < need_d_) continue;
      chosen_.push_back(u);
      if (recurse(k + 1, next, out)) return true;
      chosen_.pop_back();
    }
    return false;
  }

  bool find_r(const SlotSet& common, FlapResult& out) {
    int r_unit = -1;
    if (has_r_) {
      for (size_t i = 0; i < units_.size() && r_unit < 0; ++i) {
        if (!units_[i].fits_r) continue;
        if (std::find(chosen_.begin(), chosen_.end(), static_cast<int>(i)) != chosen_.end())
          continue;
        if (static_cast<int>((units_[i].columns & common).count()) >= need_r_)
          r_unit = static_cast<int>(i);
      }
      if (r_unit < 0) return false;
    }
    out.d_units = chosen_;
    out.r_unit = r_unit;
    out.common = common;
    return true;
  }

  const std::vector<Unit>& units_;
  int q_, need_d_, need_r_;
  bool has_r_;
  long budget_;
  std::vector<int> d_candidates_;
  std::vector<int> chosen_;
};

// Divisors D from `max_d` down to 1; on a slimmed level, multiples of the slimming divisor
// first (they waste no up-link capacity).
std::vector<int> d_order(int max_d, int divisor) {
  std::vector<int> order;
  for (int d = max_d; d >= 1; --d)
    if (d % divisor == 0) order.push_back(d);
  for (int d = max_d; d >= 1; --d)
    if (d % divisor != 0) order.push_back(d);
  return order;
}

class LaasSearch {
 public:
  LaasSearch(const LinkState& state, int hosts) : state_(state), tree_(state.tree()), n_(hosts) {}

  std::optional<Placement> one_leaf() const {
    int best = -1;
    for (int leaf = 0; leaf < tree_.num_leaves(); ++leaf) {
      const int free = state_.free_hosts_on_leaf(leaf);
      if (free >= n_ && (best < 0 || free < state_.free_hosts_on_leaf(best))) best = leaf;
    }
    if (best < 0) return std::nullopt;
    Placement p;
    detail::add_hosts(tree_, best, detail::lowest_bits(state_.free_slots(best), n_), p);
    p.shape.leaves = {1, n_, 0};
    return p;
  }

  // N = Q*D + R inside one pod (the whole tree when it has two levels).
  std::optional<Placement> one_pod() const {
    const int m1 = tree_.hosts_per_leaf();
    for (int d : d_order(std::min(n_, m1), tree_.slimming_divisor(1))) {
      const int q = n_ / d, r = n_ % d;
      if (q == 1 && r == 0) continue;  // a single leaf: one_leaf() already tried it
      if (q + (r > 0) > tree_.leaves_per_pod()) continue;
      const int need_d = tree_.columns_needed(1, d);
      const int need_r = r > 0 ? tree_.columns_needed(1, r) : 0;
      for (int pod : pods_best_fit()) {
        if (pod_free_hosts(pod) < n_) continue;
        std::vector<Unit> units;
        for (int leaf : detail::leaves_best_fit(state_, pod * tree_.leaves_per_pod(),
                                                tree_.leaves_per_pod())) {
          const int free = state_.free_hosts_on_leaf(leaf);
          const auto& cols = state_.free_columns(1, leaf);
          const int ncols = state_.free_column_count(1, leaf);
          units.push_back(
              {leaf, cols, free >= d && ncols >= need_d, r > 0 && free >= r && ncols >= need_r});
        }
        FlapResult found;
        if (!Flap(units, q, need_d, need_r, r > 0).run(found)) continue;
        std::vector<int> d_cols, r_cols;
        const SlotSet r_free = r > 0 ? units[found.r_unit].columns : SlotSet{};
        detail::choose_columns(found.common, r_free, need_d, need_r, d_cols, r_cols);
        Placement p;
        for (int u : found.d_units) take_leaf(units[u].id, d, d_cols, p);
        if (r > 0) take_leaf(units[found.r_unit].id, r, r_cols, p);
        p.shape.leaves = {q, d, r};
        detail::finish(p);
        return p;
      }
    }
    return std::nullopt;
  }

  // The approximated 3-level scheme: U = ceil(N/m1) leaves whose hosts and up-links the tenant
  // takes whole (the last may hold fewer hosts), U = Q'*D' + R' leaves per pod, and the same
  // level-2 column set on every level-2 switch of those pods (all FBG_2 identical).
  std::optional<Placement> across_pods() const {
    if (tree_.height() < 3) return std::nullopt;
    const int m1 = tree_.hosts_per_leaf();
    const int p2 = tree_.p(2);
    const int u = (n_ + m1 - 1) / m1;
    std::vector<int> pods = pods_best_fit();
    std::vector<int> whole(tree_.num_pods(), 0);
    std::vector<SlotSet> l2_common(tree_.num_pods());
    for (int pod = 0; pod < tree_.num_pods(); ++pod) {
      for (int i = 0; i < tree_.leaves_per_pod(); ++i)
        whole[pod] += state_.leaf_wholly_free(pod * tree_.leaves_per_pod() + i);
      l2_common[pod].set();
      for (int b = 0; b < tree_.switches_per_pod(2); ++b)
        l2_common[pod] &= state_.free_columns(2, tree_.level2_switch(pod, b));
    }
    // Each whole leaf sends p2 flows into every level-2 switch of its pod.
    for (int d : d_order(std::min(u, tree_.leaves_per_pod()), 1)) {
      const int q = u / d, r = u % d;
      if (q + (r > 0) > tree_.num_pods()) continue;
      if (q == 1 && r == 0) continue;  // one pod: one_pod() covers it
      const int need_d = tree_.columns_needed(2, d * p2);
      const int need_r = r > 0 ? tree_.columns_needed(2, r * p2) : 0;
      std::vector<Unit> units;
      for (int pod : pods) {
        const int ncols = static_cast<int>(l2_common[pod].count());
        units.push_back({pod, l2_common[pod], whole[pod] >= d && ncols >= need_d,
                         r > 0 && whole[pod] >= r && ncols >= need_r});
      }
      FlapResult found;
      if (!Flap(units, q, need_d, need_r, r > 0).run(found)) continue;
      std::vector<int> d_cols, r_cols;
      const SlotSet r_free = r > 0 ? units[found.r_unit].columns : SlotSet{};
      detail::choose_columns(found.common, r_free, need_d, need_r, d_cols, r_cols);
      Placement p;
      int hosts_left = n_;
      for (int k : found.d_units) take_pod(units[k].id, d, d_cols, hosts_left, p);
      if (r > 0) take_pod(units[found.r_unit].id, r, r_cols, hosts_left, p);
      p.shape.leaves = {n_ / m1, m1, n_ % m1};
      p.shape.pods = {q, d, r};
      detail::finish(p);
      return p;
    }
    return std::nullopt;
  }

  // Beyond the paper's release: a tenant across pods on partly used leaves. All its leaves but
  // one hold D hosts on one common column set S^D (the remainder leaf a subset), D' leaves in
  // each of Q' pods and R' in one more, which also holds the remainder leaf. Every FBG_2 then
  // sees the same flows from the Q' pods and fewer from the last, so Theorems 1-2 hold there
  // with the same level-2 columns in the Q' pods and a subset in the last.
  std::optional<Placement> across_pods_partial() const {
    if (tree_.height() < 3) return std::nullopt;
    const int m1 = tree_.hosts_per_leaf();
    const std::vector<int> pod_order = pods_best_fit();
    for (int d : d_order(std::min(n_, m1), tree_.slimming_divisor(1))) {
      const int t = n_ / d, r = n_ % d;
      const int need1 = tree_.columns_needed(1, d);
      std::vector<std::vector<int>> candidates(tree_.num_pods());
      int total = 0;
      for (int pod : pod_order)
        for (int leaf :
             detail::leaves_best_fit(state_, pod * tree_.leaves_per_pod(), tree_.leaves_per_pod()))
          if (state_.free_hosts_on_leaf(leaf) >= d && state_.free_column_count(1, leaf) >= need1) {
            candidates[pod].push_back(leaf);
            ++total;
          }
      if (total < t) continue;
      for (int dp = std::min(t, tree_.leaves_per_pod()); dp >= 1; --dp) {
        const int qp = t / dp, rp = t % dp;
        const int pods_needed = qp + ((rp > 0 || r > 0) ? 1 : 0);
        if (pods_needed < 2 || pods_needed > tree_.num_pods()) continue;
        // Necessary: Q' pods with D' candidate leaves each.
        int roomy = 0;
        for (const auto& c : candidates) roomy += static_cast<int>(c.size()) >= dp;
        if (roomy < qp) continue;
        int seeds = 0;
        for (int seed : pod_order) {
          if (static_cast<int>(candidates[seed].size()) < dp) continue;
          if (++seeds > kPartialSeeds) break;
          std::vector<Unit> units;
          for (int leaf : candidates[seed])
            units.push_back({leaf, state_.free_columns(1, leaf), true, false});
          FlapResult in_seed;
          if (!Flap(units, dp, need1, 0, false, kPartialBudget).run(in_seed)) continue;
          SlotSet sd;
          for (int c : detail::lowest_bits(in_seed.common, need1)) sd.set(c);
          if (auto p = partial_with_columns(d, r, dp, qp, rp, sd, candidates, pod_order)) return p;
        }
      }
    }
    return std::nullopt;
  }

 private:
  // The partial-leaf search is a heuristic beyond the paper; these bound its cost on requests
  // that end up refused: seed pods tried per (D, D'), and search nodes per FLAP.
  static constexpr int kPartialSeeds = 3;
  static constexpr long kPartialBudget = 500;

  std::optional<Placement> partial_with_columns(int d, int r, int dp, int qp, int rp,
                                                const SlotSet& sd,
                                                const std::vector<std::vector<int>>& candidates,
                                                const std::vector<int>& pod_order) const {
    const int p2 = tree_.p(2);
    const int need1_r = r > 0 ? tree_.columns_needed(1, r) : 0;
    // Flows per D leaf into each level-2 switch b: the columns of S^D that lead to b.
    std::vector<int> flow(tree_.switches_per_pod(2), 0);
    for (size_t c = 0; c < sd.size(); ++c)
      if (sd[c]) ++flow[c / p2];
    const int fmax = *std::max_element(flow.begin(), flow.end());
    const int need_d2 = tree_.columns_needed(2, dp * fmax);
    const int need_r2 = tree_.columns_needed(2, rp * fmax + (r > 0 ? std::min(fmax, need1_r) : 0));
    struct PodPick {
      std::vector<int> d_leaves;
      int r_leaf = -1;
    };
    std::vector<PodPick> picks(tree_.num_pods());
    std::vector<Unit> units;
    for (int pod : pod_order) {
      PodPick& pick = picks[pod];
      for (int leaf : candidates[pod])
        if ((state_.free_columns(1, leaf) & sd) == sd) pick.d_leaves.push_back(leaf);
      SlotSet l2;
      l2.set();
      for (int b = 0; b < tree_.switches_per_pod(2); ++b)
        if (flow[b] > 0) l2 &= state_.free_columns(2, tree_.level2_switch(pod, b));
      const int n2 = static_cast<int>(l2.count());
      const int have = static_cast<int>(pick.d_leaves.size());
      bool r_ok = have >= rp && n2 >= need_r2;
      if (r_ok && r > 0) {
        // The remainder leaf: most-used first, not one of the R' D leaves of this pod.
        const auto used_begin = pick.d_leaves.begin();
        const auto used_end = pick.d_leaves.begin() + std::min(rp, have);
        for (int leaf : detail::leaves_best_fit(state_, pod * tree_.leaves_per_pod(),
                                                tree_.leaves_per_pod())) {
          if (std::find(used_begin, used_end, leaf) != used_end) continue;
          if (state_.free_hosts_on_leaf(leaf) >= r &&
              static_cast<int>((state_.free_columns(1, leaf) & sd).count()) >= need1_r) {
            pick.r_leaf = leaf;
            break;
          }
        }
        r_ok = pick.r_leaf >= 0;
      }
      units.push_back({pod, l2, have >= dp && n2 >= need_d2, (rp > 0 || r > 0) && r_ok});
    }
    FlapResult found;
    if (!Flap(units, qp, need_d2, need_r2, rp > 0 || r > 0, kPartialBudget).run(found))
      return std::nullopt;
    // Level-2 columns: the remainder pod's first, so that every prefix used on a switch of the
    // remainder pod is a subset of the same switch's columns in the other pods.
    const SlotSet r_free = found.r_unit >= 0 ? units[found.r_unit].columns : SlotSet{};
    std::vector<int> r2 = detail::lowest_bits(found.common & r_free, need_r2);
    std::vector<int> d2 = r2;
    for (int c : detail::lowest_bits(found.common, need_d2 + need_r2))
      if (static_cast<int>(d2.size()) < need_d2 && std::find(r2.begin(), r2.end(), c) == r2.end())
        d2.push_back(c);
    Placement p;
    std::vector<int> sd_cols = detail::lowest_bits(sd, static_cast<int>(sd.count()));
    // The remainder pod first: its flows per switch decide which FBG_2 the Q' pods need when
    // there is only one of them (an FBG_2 that no second pod reaches needs no level-2 links).
    std::vector<int> extra_flows(tree_.switches_per_pod(2), 0);
    if (found.r_unit >= 0) {
      const int pod = units[found.r_unit].id;
      for (int i = 0; i < rp; ++i) take_leaf(picks[pod].d_leaves[i], d, sd_cols, p);
      int r_leaf = -1;
      if (r > 0) {
        r_leaf = picks[pod].r_leaf;
        const auto r_cols = detail::lowest_bits(state_.free_columns(1, r_leaf) & sd, need1_r);
        take_leaf(r_leaf, r, r_cols, p);
        for (int c : r_cols) ++extra_flows[c / p2];
      }
      for (int b = 0; b < tree_.switches_per_pod(2); ++b) {
        extra_flows[b] += rp * flow[b];
        if (extra_flows[b] == 0) continue;
        for (int i = 0; i < tree_.columns_needed(2, extra_flows[b]); ++i)
          p.links.push_back(tree_.l2_link(tree_.level2_switch(pod, b), r2[i]));
      }
    }
    for (int u : found.d_units) {
      const int pod = units[u].id;
      for (int i = 0; i < dp; ++i) take_leaf(picks[pod].d_leaves[i], d, sd_cols, p);
      for (int b = 0; b < tree_.switches_per_pod(2); ++b) {
        if (flow[b] == 0 || (qp == 1 && extra_flows[b] == 0)) continue;
        for (int i = 0; i < tree_.columns_needed(2, dp * flow[b]); ++i)
          p.links.push_back(tree_.l2_link(tree_.level2_switch(pod, b), d2[i]));
      }
    }
    p.shape.leaves = {t_of(d), d, r};
    p.shape.pods = {qp, dp, rp};
    detail::finish(p);
    return p;
  }

  int t_of(int d) const { return n_ / d; }

  int pod_free_hosts(int pod) const {
    int free = 0;
    for (int i = 0; i < tree_.leaves_per_pod(); ++i)
      free += state_.free_hosts_on_leaf(pod * tree_.leaves_per_pod() + i);
    return free;
  }

  std::vector<int> pods_best_fit() const {
    std::vector<int> pods(tree_.num_pods()), free(tree_.num_pods());
    for (int pod = 0; pod < tree_.num_pods(); ++pod) {
      pods[pod] = pod;
      free[pod] = pod_free_hosts(pod);
    }
    std::stable_sort(pods.begin(), pods.end(), [&](int a, int b) { return free[a] < free[b]; });
    return pods;
  }

  void take_leaf(int leaf, int hosts, const std::vector<int>& cols, Placement& p) const {
    detail::add_hosts(tree_, leaf, detail::lowest_bits(state_.free_slots(leaf), hosts), p);
    for (int c : cols) p.links.push_back(tree_.l1_link(leaf, c));
  }

  void take_pod(int pod, int leaves, const std::vector<int>& l2_cols, int& hosts_left,
                Placement& p) const {
    int taken = 0;
    for (int i = 0; i < tree_.leaves_per_pod() && taken < leaves; ++i) {
      const int leaf = pod * tree_.leaves_per_pod() + i;
      if (!state_.leaf_wholly_free(leaf)) continue;
      const int hosts = std::min(hosts_left, tree_.hosts_per_leaf());
      for (int s = 0; s < hosts; ++s) p.hosts.push_back(tree_.host_at(leaf, s));
      hosts_left -= hosts;
      for (int c = 0; c < tree_.up_columns(1); ++c) p.links.push_back(tree_.l1_link(leaf, c));
      ++taken;
    }
    for (int b = 0; b < tree_.switches_per_pod(2); ++b)
      for (int c : l2_cols) p.links.push_back(tree_.l2_link(tree_.level2_switch(pod, b), c));
  }

  const LinkState& state_;
  const FatTree& tree_;
  const int n_;
};

}  // namespace

PlaceResult LaasPlacer::place(const LinkState& state, int hosts) const {
  if (hosts > state.free_hosts())
    return {std::nullopt, "only " + std::to_string(state.free_hosts()) + " hosts are free"};
  LaasSearch search(state, hosts);
  const FatTree& tree = state.tree();
  if (hosts <= tree.hosts_per_leaf())
    if (auto p = search.one_leaf()) return {std::move(*p), ""};
  if (hosts <= tree.hosts_per_leaf() * tree.leaves_per_pod())
    if (auto p = search.one_pod()) return {std::move(*p), ""};
  if (auto p = search.across_pods()) return {std::move(*p), ""};
  if (auto p = search.across_pods_partial()) return {std::move(*p), ""};
  return {std::nullopt, "no placement of " + std::to_string(hosts) +
                            " hosts as Q*D+R leaves with dedicated links to common spines"};
}

}  // namespace laas::allocator
