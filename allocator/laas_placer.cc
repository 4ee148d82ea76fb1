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
  Flap(const std::vector<Unit>& units, int q, int need_d, int need_r, bool has_r)
      : units_(units), q_(q), need_d_(need_d), need_r_(need_r), has_r_(has_r) {
    for (size_t i = 0; i < units.size(); ++i)
      if (units[i].fits_d) d_candidates_.push_back(static_cast<int>(i));
  }

  bool run(FlapResult& out) {
    if (static_cast<int>(d_candidates_.size()) < q_) return false;
    SlotSet all;
    all.set();
    chosen_.clear();
    return recurse(0, all, out);
  }

 private:
  bool recurse(size_t start, const SlotSet& common, FlapResult& out) {
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

// Chooses the D columns for the D units and the R unit's subset of them.
void choose_columns(const SlotSet& common, const SlotSet& r_free, int need_d, int need_r,
                    std::vector<int>& d_cols, std::vector<int>& r_cols) {
  r_cols = need_r > 0 ? detail::lowest_bits(common & r_free, need_r) : std::vector<int>{};
  SlotSet prefer;
  for (int c : r_cols) prefer.set(c);
  d_cols = detail::lowest_bits(common, need_d, prefer);
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
          const int ncols = static_cast<int>(cols.count());
          units.push_back(
              {leaf, cols, free >= d && ncols >= need_d, r > 0 && free >= r && ncols >= need_r});
        }
        FlapResult found;
        if (!Flap(units, q, need_d, need_r, r > 0).run(found)) continue;
        std::vector<int> d_cols, r_cols;
        const SlotSet r_free = r > 0 ? units[found.r_unit].columns : SlotSet{};
        choose_columns(found.common, r_free, need_d, need_r, d_cols, r_cols);
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
      choose_columns(found.common, r_free, need_d, need_r, d_cols, r_cols);
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

 private:
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
  return {std::nullopt, "no placement of " + std::to_string(hosts) +
                            " hosts as Q*D+R leaves with dedicated links to common spines"};
}

}  // namespace laas::allocator
