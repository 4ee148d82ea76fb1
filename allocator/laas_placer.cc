#include <algorithm>
#include <unordered_set>

#include "allocator/management_way.h"
#include "allocator/placers.h"
#include "allocator/search.h"

namespace laas::allocator {
namespace {

using detail::has_at_least;

// Search nodes one bounded search may visit. `cut` records that a search stopped on the bound
// rather than on a proof that nothing fits.
struct Budget {
  long left;
  bool cut = false;
  bool spend(long n = 1) {
    if (left < n) {
      left = 0;
      cut = true;
      return false;
    }
    left -= n;
    return true;
  }
};

// The bounds themselves are LaasPlacer::Options (see placers.h for how they were chosen). Each
// node is a few bitset ANDs.

// One candidate for the FLAP search at the leaf step: a leaf with the up-link columns it could
// give, and whether it can hold the D part or the R part.
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
// has_r, one more unit whose free columns meet that common set in at least need_r. Units come
// best-fit first, so the first answer packs the tree. Exhaustive unless the budget runs out.
class Flap {
 public:
  Flap(const std::vector<Unit>& units, int q, int need_d, int need_r, bool has_r, Budget& budget)
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
    if (!budget_.spend()) return false;
    if (static_cast<int>(chosen_.size()) == q_) return find_r(common, out);
    const size_t still_needed = q_ - chosen_.size();
    for (size_t k = start; k + still_needed <= d_candidates_.size(); ++k) {
      const int u = d_candidates_[k];
      const SlotSet next = common & units_[u].columns;
      if (!has_at_least(next, need_d_)) continue;
      chosen_.push_back(u);
      if (recurse(k + 1, next, out)) return true;
      chosen_.pop_back();
      if (budget_.cut) return false;
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
        if (has_at_least(units_[i].columns & common, need_r_)) r_unit = static_cast<int>(i);
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
  Budget& budget_;
  std::vector<int> d_candidates_;
  std::vector<int> chosen_;
};

// The level-2 step: pods as units. Every level-2 switch position k that carries the tenant's
// flows is its own FBG_2 (its own 2-level tree with the top switches above it), so the pods'
// columns are matched per switch, independently: D pods share nd[k] free columns on switch k,
// the R pod nr[k] of those. `cols[u * nb + k]` is pod unit u's free columns on switch k.
struct PodUnit {
  int pod = 0;
  bool fits_d = false;
  bool fits_r = false;
  bool dirty = true;  // released into since the last proven failure (see LaasPlacer)
};

struct PodFlapResult {
  std::vector<int> d_units;
  int r_unit = -1;
  std::vector<SlotSet> common;  // per switch k, columns free on every D pod
};

class PodFlap {
 public:
  PodFlap(const std::vector<PodUnit>& units, const std::vector<SlotSet>& cols, int nb,
          const std::vector<int>& nd, const std::vector<int>& nr, int q, bool has_r,
          bool need_dirty, Budget& budget)
      : units_(units),
        cols_(cols),
        nb_(nb),
        nd_(nd),
        nr_(nr),
        q_(q),
        has_r_(has_r),
        need_dirty_(need_dirty),
        budget_(budget),
        stack_((q + 1) * nb) {
    for (size_t i = 0; i < units.size(); ++i)
      if (units[i].fits_d) d_candidates_.push_back(static_cast<int>(i));
  }

  bool run(PodFlapResult& out) {
    if (static_cast<int>(d_candidates_.size()) < q_) return false;
    if (has_r_ &&
        std::none_of(units_.begin(), units_.end(), [](const PodUnit& u) { return u.fits_r; }))
      return false;
    for (int k = 0; k < nb_; ++k) stack_[k].set();
    chosen_.clear();
    return recurse(0, false, out);
  }

 private:
  bool recurse(size_t start, bool dirty, PodFlapResult& out) {
    if (!budget_.spend()) return false;
    const int depth = static_cast<int>(chosen_.size());
    const SlotSet* cur = &stack_[depth * nb_];
    if (depth == q_) return find_r(cur, dirty, out);
    SlotSet* next = &stack_[(depth + 1) * nb_];
    const size_t still_needed = q_ - depth;
    for (size_t k = start; k + still_needed <= d_candidates_.size(); ++k) {
      const int u = d_candidates_[k];
      bool ok = true;
      for (int b = 0; b < nb_ && ok; ++b) {
        next[b] = cur[b] & cols_[u * nb_ + b];
        ok = has_at_least(next[b], nd_[b]);
      }
      if (!ok) continue;
      chosen_.push_back(u);
      if (recurse(k + 1, dirty || units_[u].dirty, out)) return true;
      chosen_.pop_back();
      if (budget_.cut) return false;
    }
    return false;
  }

  bool find_r(const SlotSet* common, bool dirty, PodFlapResult& out) {
    int r_unit = -1;
    if (has_r_) {
      for (size_t i = 0; i < units_.size() && r_unit < 0; ++i) {
        if (!units_[i].fits_r || (need_dirty_ && !dirty && !units_[i].dirty)) continue;
        if (std::find(chosen_.begin(), chosen_.end(), static_cast<int>(i)) != chosen_.end())
          continue;
        bool ok = true;
        for (int b = 0; b < nb_ && ok; ++b)
          ok = has_at_least(common[b] & cols_[i * nb_ + b], nr_[b]);
        if (ok) r_unit = static_cast<int>(i);
      }
      if (r_unit < 0) return false;
    } else if (need_dirty_ && !dirty) {
      return false;
    }
    out.d_units = chosen_;
    out.r_unit = r_unit;
    out.common.assign(common, common + nb_);
    return true;
  }

  const std::vector<PodUnit>& units_;
  const std::vector<SlotSet>& cols_;
  int nb_;
  const std::vector<int>& nd_;
  const std::vector<int>& nr_;
  int q_;
  bool has_r_, need_dirty_;
  Budget& budget_;
  std::vector<SlotSet> stack_;  // per depth, nb_ running intersections
  std::vector<int> d_candidates_;
  std::vector<int> chosen_;
};

// Per switch k: the R pod's columns (nr[k] of common & R's free) and the D pods' (nd[k],
// starting with the R pod's, so that every prefix the R pod uses is inside the D pods' set).
void choose_l2_columns(const PodFlapResult& found, const std::vector<SlotSet>& cols, int nb,
                       const std::vector<int>& nd, const std::vector<int>& nr,
                       std::vector<std::vector<int>>& d2, std::vector<std::vector<int>>& r2) {
  d2.assign(nb, {});
  r2.assign(nb, {});
  for (int k = 0; k < nb; ++k) {
    if (found.r_unit >= 0)
      r2[k] = detail::lowest_bits(found.common[k] & cols[found.r_unit * nb + k], nr[k]);
    d2[k] = r2[k];
    if (static_cast<int>(d2[k].size()) > nd[k]) d2[k].resize(nd[k]);
    for (int c : detail::lowest_bits(found.common[k], nd[k] + nr[k]))
      if (static_cast<int>(d2[k].size()) < nd[k] &&
          std::find(d2[k].begin(), d2[k].end(), c) == d2[k].end())
        d2[k].push_back(c);
  }
}

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
  // `dirty[pod]`: the pod saw a release since this size last failed; placements that touch no
  // dirty pod are known not to exist and are not searched.
  LaasSearch(const LinkState& state, int hosts, const std::vector<char>& dirty, Budget& budget,
             long pod_budget, bool shallow_pass, bool management_way)
      : state_(state),
        tree_(state.tree()),
        n_(hosts),
        m1_(tree_.hosts_per_leaf()),
        lpp_(tree_.leaves_per_pod()),
        npods_(tree_.num_pods()),
        spp2_(tree_.height() == 3 ? tree_.switches_per_pod(2) : 0),
        dirty_(dirty),
        all_dirty_(std::all_of(dirty.begin(), dirty.end(), [](char c) { return c != 0; })),
        budget_(budget),
        pod_budget_(pod_budget),
        shallow_pass_(shallow_pass),
        management_way_(management_way),
        leaf_order_(npods_) {
    pods_best_fit_.resize(npods_);
    for (int pod = 0; pod < npods_; ++pod) pods_best_fit_[pod] = pod;
    std::stable_sort(pods_best_fit_.begin(), pods_best_fit_.end(), [&](int a, int b) {
      return state_.free_hosts_in_pod(a) < state_.free_hosts_in_pod(b);
    });
  }

  std::optional<Placement> one_leaf() const {
    int best = -1;
    for (int pod = 0; pod < npods_; ++pod) {
      if (!dirty_[pod] || state_.free_hosts_in_pod(pod) < n_) continue;
      for (int leaf = pod * lpp_; leaf < (pod + 1) * lpp_; ++leaf) {
        const int free = state_.free_hosts_on_leaf(leaf);
        if (free >= n_ && (best < 0 || free < state_.free_hosts_on_leaf(best)) &&
            keeps_way(leaf, n_, 0))
          best = leaf;
      }
    }
    if (best < 0) return std::nullopt;
    Placement p;
    detail::add_hosts(tree_, best, detail::lowest_bits(state_.free_slots(best), n_), p);
    p.shape.leaves = {1, n_, 0};
    return p;
  }

  // N = Q*D + R inside one pod (the whole tree when it has two levels).
  std::optional<Placement> one_pod() {
    std::vector<Unit> units;
    for (int d : d_order(std::min(n_, m1_), tree_.slimming_divisor(1))) {
      const int q = n_ / d, r = n_ % d;
      if (q == 1 && r == 0) continue;  // a single leaf: one_leaf() already tried it
      if (q + (r > 0) > lpp_) continue;
      const int need_d = tree_.columns_needed(1, d);
      const int need_r = r > 0 ? tree_.columns_needed(1, r) : 0;
      for (int pod : pods_best_fit_) {
        if (!dirty_[pod] || state_.free_hosts_in_pod(pod) < n_) continue;
        // Necessary, in O(1): q leaves able to hold D, one more able to hold R.
        if (leaves_fitting(pod, d) < q || (r > 0 && leaves_fitting(pod, r) < q + 1)) continue;
        units.clear();
        for (int leaf : leaves_of(pod)) {
          const int free = state_.free_hosts_on_leaf(leaf);
          const int ncols = state_.free_column_count(1, leaf);
          units.push_back({leaf, state_.free_columns(1, leaf),
                           free >= d && ncols >= need_d && keeps_way(leaf, d, need_d),
                           r > 0 && free >= r && ncols >= need_r && keeps_way(leaf, r, need_r)});
        }
        FlapResult found;
        Budget flap_budget{pod_budget_};
        const bool ok = Flap(units, q, need_d, need_r, r > 0, flap_budget).run(found);
        pod_cut_ |= flap_budget.cut;
        if (!ok) continue;
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
  // takes whole (the last may hold fewer hosts), U = Q'*D' + R' leaves per pod, and on each
  // level-2 switch position its own column set, common to the D' pods (each FBG_2 is
  // independent; the paper's release used one set for all, refusing placements that exist).
  std::optional<Placement> across_pods() {
    if (spp2_ == 0 || npods_ < 2) return std::nullopt;
    const int p2 = tree_.p(2);
    const int u = (n_ + m1_ - 1) / m1_;
    std::vector<int> whole(npods_, 0);
    int total = 0;
    bool dirty_has_whole = false;
    for (int pod = 0; pod < npods_; ++pod) {
      if (state_.free_hosts_in_pod(pod) < m1_) continue;
      for (int leaf = pod * lpp_; leaf < (pod + 1) * lpp_; ++leaf)
        whole[pod] += state_.leaf_wholly_free(leaf);
      total += whole[pod];
      dirty_has_whole |= dirty_[pod] && whole[pod] > 0;
    }
    // Necessary: U whole leaves, one of them in a pod released into since the last failure.
    if (total < u || !dirty_has_whole) return std::nullopt;
    const int nb = spp2_;
    std::vector<PodUnit> units;
    std::vector<SlotSet> cols;
    for (int pod : pods_best_fit_) {
      if (whole[pod] == 0) continue;
      units.push_back({pod, false, false, dirty_[pod] != 0});
      for (int b = 0; b < nb; ++b)
        cols.push_back(state_.free_columns(2, tree_.level2_switch(pod, b)));
    }
    for (int d : d_order(std::min(u, lpp_), 1)) {
      const int q = u / d, r = u % d;
      if (q + (r > 0) > npods_) continue;
      if (q == 1 && r == 0) continue;  // one pod: one_pod() covers it
      // Each whole leaf sends p2 flows into every level-2 switch of its pod.
      const std::vector<int> nd(nb, tree_.columns_needed(2, d * p2));
      const std::vector<int> nr(nb, r > 0 ? tree_.columns_needed(2, r * p2) : 0);
      for (auto& unit : units) {
        const int w = whole[unit.pod];
        unit.fits_d = w >= d;
        unit.fits_r = r > 0 && w >= r;
      }
      PodFlapResult found;
      if (!PodFlap(units, cols, nb, nd, nr, q, r > 0, !all_dirty_, budget_).run(found)) {
        if (budget_.cut) return std::nullopt;
        continue;
      }
      std::vector<std::vector<int>> d2, r2;
      choose_l2_columns(found, cols, nb, nd, nr, d2, r2);
      Placement p;
      int hosts_left = n_;
      for (int k : found.d_units) take_pod(units[k].pod, d, d2, hosts_left, p);
      if (r > 0) take_pod(units[found.r_unit].pod, r, r2, hosts_left, p);
      // The last leaf, partly used, takes every up-link: its free hosts would have none.
      if (management_way_ && leaf_without_management_way(state_, p) >= 0) continue;
      p.shape.leaves = {n_ / m1_, m1_, n_ % m1_};
      p.shape.pods = {q, d, r};
      detail::finish(p);
      return p;
    }
    return std::nullopt;
  }

  // Beyond the paper's release: a tenant across pods on partly used leaves. All its leaves but
  // one hold D hosts on one common column set S (the remainder leaf a subset), D' leaves in
  // each of Q' pods and R' in one more, which also holds the remainder leaf. Every FBG_2 then
  // sees the same flows from the Q' pods and fewer from the last, so Theorems 1-2 hold there
  // with, on each level-2 switch position, the same columns in the Q' pods and a subset in the
  // last. Candidate sets S: the intersections of every combination of D' candidate leaves of
  // every pod (combinations giving an intersection a sibling already gave are skipped: their
  // continuations are a subset of the sibling's), each S tried once; exhaustive within the
  // budget, except that S is the lowest columns of the intersection.
  std::optional<Placement> across_pods_partial() {
    if (spp2_ == 0 || npods_ < 2) return std::nullopt;
    // Two passes over the same (D, D') order: first a shallow one (the first set S of each of
    // the kShallowSeeds most-used seed pods, as the paper's release tried), then the exhaustive
    // one with what is left of the bound. A single deep pass spent the whole bound on the
    // first D and never reached the smaller ones, refusing tenants the shallow pass places.
    for (int pass = shallow_pass_ ? 0 : 1; pass < 2; ++pass) {
      shallow_ = pass == 0;
      if (auto p = partial_pass()) return p;
      if (budget_.cut) return std::nullopt;
    }
    return std::nullopt;
  }

  std::optional<Placement> partial_pass() {
    for (int d : d_order(std::min(n_, m1_), tree_.slimming_divisor(1))) {
      const int t = n_ / d, r = n_ % d;
      if (t + (r > 0) < 2) continue;
      const int need1 = tree_.columns_needed(1, d);
      const int need1_r = r > 0 ? tree_.columns_needed(1, r) : 0;
      // Necessary, from the per-pod capacity counts: t candidate leaves, and a leaf able to
      // take part in a pod released into since the last failure.
      int total = 0;
      bool dirty_used = all_dirty_;
      for (int pod = 0; pod < npods_; ++pod) {
        total += leaves_fitting(pod, d);
        dirty_used |= dirty_[pod] && leaves_fitting(pod, r > 0 ? r : d) > 0;
      }
      if (total < t || !dirty_used) continue;
      candidates_.assign(npods_, {});
      for (int pod : pods_best_fit_) {
        if (leaves_fitting(pod, d) == 0) continue;
        for (int leaf : leaves_of(pod))
          if (state_.free_hosts_on_leaf(leaf) >= d && state_.free_column_count(1, leaf) >= need1 &&
              keeps_way(leaf, d, need1))
            candidates_[pod].push_back(leaf);
      }
      touch_.clear();
      if (!all_dirty_) {
        for (int pod = 0; pod < npods_; ++pod) {
          if (!dirty_[pod]) continue;
          for (int leaf = pod * lpp_; leaf < (pod + 1) * lpp_; ++leaf) {
            const int free = state_.free_hosts_on_leaf(leaf);
            if (free >= d)
              touch_.push_back({state_.free_columns(1, leaf), need1});
            else if (r > 0 && free >= r)
              touch_.push_back({state_.free_columns(1, leaf), need1_r});
          }
        }
      }
      for (int dp = std::min(t, lpp_); dp >= 1; --dp) {
        const int qp = t / dp, rp = t % dp;
        const int pods_needed = qp + ((rp > 0 || r > 0) ? 1 : 0);
        if (pods_needed < 2 || pods_needed > npods_) continue;
        int roomy = 0;  // necessary: Q' pods with D' candidate leaves each
        for (int pod = 0; pod < npods_; ++pod) roomy += leaves_fitting(pod, d) >= dp;
        if (roomy < qp) continue;
        tried_.clear();
        int seeds = 0;
        for (int seed : pods_best_fit_) {
          if (static_cast<int>(candidates_[seed].size()) < dp) continue;
          if (shallow_ && ++seeds > kShallowSeeds) break;
          sets_left_ = shallow_ ? 1 : -1;
          SlotSet all;
          all.set();
          if (auto p = seed_sets(seed, 0, dp, all, d, r, dp, qp, rp, need1)) return p;
          if (budget_.cut) return std::nullopt;
        }
      }
    }
    return std::nullopt;
  }

 private:
  // Whether taking `hosts` hosts and `columns` up-links of `leaf` keeps the management way
  // (management_way.h) -- or the rule is off.
  bool keeps_way(int leaf, int hosts, int columns) const {
    return !management_way_ || keeps_management_way(state_, leaf, hosts, columns);
  }

  // Leaves of `pod` that can hold `hosts` hosts with their up-links (kept by the state).
  int leaves_fitting(int pod, int hosts) const { return state_.leaves_with_capacity(pod, hosts); }

  // Leaves of a pod, most-used first; computed once per call.
  const std::vector<int>& leaves_of(int pod) {
    auto& order = leaf_order_[pod];
    if (order.empty()) order = detail::leaves_best_fit(state_, pod * lpp_, lpp_);
    return order;
  }

  // Depth-first over combinations of `left` more candidate leaves of `seed` from index
  // `start`; at each complete combination, S = the lowest need1 columns of the intersection.
  std::optional<Placement> seed_sets(int seed, size_t start, int left, const SlotSet& common, int d,
                                     int r, int dp, int qp, int rp, int need1) {
    if (sets_left_ == 0 || !budget_.spend()) return std::nullopt;
    if (left == 0) {
      const SlotSet sd = detail::lowest_set(common, need1);
      if (sets_left_ > 0) --sets_left_;
      if (!tried_.insert(sd).second) return std::nullopt;
      if (!budget_.spend(npods_ / 2 + 1) || !worth_trying(sd, d, r, dp, qp)) return std::nullopt;
      return partial_with_columns(d, r, dp, qp, rp, sd);
    }
    const auto& cand = candidates_[seed];
    const size_t mark = siblings_.size();
    for (size_t k = start; k + left <= cand.size(); ++k) {
      const SlotSet next = common & state_.free_columns(1, cand[k]);
      if (!has_at_least(next, need1) || !touches_dirty(next, need1)) continue;
      if (std::find(siblings_.begin() + mark, siblings_.end(), next) != siblings_.end()) continue;
      siblings_.push_back(next);
      auto p = seed_sets(seed, k + 1, left - 1, next, d, r, dp, qp, rp, need1);
      if (p || budget_.cut) {
        siblings_.resize(mark);
        return p;
      }
    }
    siblings_.resize(mark);
    return std::nullopt;
  }

  // Whether some leaf of a pod released into since the last failure could still take part
  // with a set S inside `common` (as a D leaf holding S, or as the remainder leaf).
  bool touches_dirty(const SlotSet& common, int need1) const {
    if (all_dirty_) return true;
    for (const auto& [cols, need] : touch_)
      if (has_at_least(common & cols, std::min(need, need1))) return true;
    return false;
  }

  // Necessary conditions on S, cheaper than building the level-2 step: a pod released into
  // since the last failure has a leaf that could take part; t leaves hold S; Q' pods hold D'.
  bool worth_trying(const SlotSet& sd, int d, int r, int dp, int qp) {
    const int need1_r = r > 0 ? tree_.columns_needed(1, r) : 0;
    if (!all_dirty_) {
      bool touched = false;
      for (int pod = 0; pod < npods_ && !touched; ++pod) {
        if (!dirty_[pod]) continue;
        for (int leaf = pod * lpp_; leaf < (pod + 1) * lpp_ && !touched; ++leaf) {
          const SlotSet& f = state_.free_columns(1, leaf);
          const int free = state_.free_hosts_on_leaf(leaf);
          touched = (free >= d && (f & sd) == sd) ||
                    (r > 0 && free >= r && has_at_least(f & sd, need1_r));
        }
      }
      if (!touched) return false;
    }
    int holders = 0, roomy = 0;
    const int t = n_ / d;
    for (int pod = 0; pod < npods_; ++pod) {
      int here = 0;
      for (int leaf : candidates_[pod]) here += (state_.free_columns(1, leaf) & sd) == sd;
      holders += here;
      roomy += here >= dp;
    }
    return holders >= t && roomy >= qp;
  }

  std::optional<Placement> partial_with_columns(int d, int r, int dp, int qp, int rp,
                                                const SlotSet& sd) {
    if (!budget_.spend(npods_)) return std::nullopt;
    const int p2 = tree_.p(2);
    const int need1_r = r > 0 ? tree_.columns_needed(1, r) : 0;
    const int t = n_ / d;
    // Flows per D leaf into each level-2 switch b: the columns of S that lead to b.
    std::vector<int> flow(spp2_, 0);
    for (size_t c = sd._Find_first(); c < sd.size(); c = sd._Find_next(c)) ++flow[c / p2];
    std::vector<int> bs;  // switch positions carrying flows
    for (int b = 0; b < spp2_; ++b)
      if (flow[b] > 0) bs.push_back(b);
    const int nb = static_cast<int>(bs.size());
    std::vector<int> nd(nb), nr(nb);
    for (int k = 0; k < nb; ++k) {
      nd[k] = tree_.columns_needed(2, dp * flow[bs[k]]);
      nr[k] =
          tree_.columns_needed(2, rp * flow[bs[k]] + (r > 0 ? std::min(flow[bs[k]], need1_r) : 0));
    }
    struct PodPick {
      std::vector<int> d_leaves;
      int r_leaf = -1;
    };
    std::vector<PodPick> picks(npods_);
    std::vector<PodUnit> units;
    std::vector<SlotSet> cols;
    int holders = 0;  // leaves that hold S, over all pods
    for (int pod : pods_best_fit_) {
      PodPick& pick = picks[pod];
      for (int leaf : candidates_[pod])
        if ((state_.free_columns(1, leaf) & sd) == sd) pick.d_leaves.push_back(leaf);
      const int have = static_cast<int>(pick.d_leaves.size());
      holders += have;
      const bool has_r = rp > 0 || r > 0;
      bool r_ok = has_r && have >= rp;
      if (r_ok && r > 0) {
        // The remainder leaf: most-used first, not one of the R' D leaves of this pod.
        const auto used_begin = pick.d_leaves.begin();
        const auto used_end = pick.d_leaves.begin() + std::min(rp, have);
        for (int leaf : leaves_of(pod)) {
          if (std::find(used_begin, used_end, leaf) != used_end) continue;
          if (state_.free_hosts_on_leaf(leaf) >= r &&
              has_at_least(state_.free_columns(1, leaf) & sd, need1_r) &&
              keeps_way(leaf, r, need1_r)) {
            pick.r_leaf = leaf;
            break;
          }
        }
        r_ok = pick.r_leaf >= 0;
      }
      const bool fits_d = have >= dp;
      if (!fits_d && !r_ok) continue;
      units.push_back({pod, fits_d, r_ok, dirty_[pod] != 0});
      for (int b : bs) cols.push_back(state_.free_columns(2, tree_.level2_switch(pod, b)));
    }
    if (holders < t) return std::nullopt;
    PodFlapResult found;
    if (!PodFlap(units, cols, nb, nd, nr, qp, rp > 0 || r > 0, !all_dirty_, budget_).run(found))
      return std::nullopt;
    std::vector<std::vector<int>> d2, r2;
    choose_l2_columns(found, cols, nb, nd, nr, d2, r2);
    Placement p;
    const std::vector<int> sd_cols = detail::lowest_bits(sd, static_cast<int>(sd.count()));
    // The remainder pod first: its flows per switch decide which FBG_2 the Q' pods need when
    // there is only one of them (an FBG_2 that no second pod reaches needs no level-2 links).
    std::vector<int> extra_flows(nb, 0);
    if (found.r_unit >= 0) {
      const int pod = units[found.r_unit].pod;
      for (int i = 0; i < rp; ++i) take_leaf(picks[pod].d_leaves[i], d, sd_cols, p);
      std::vector<int> r_flow(spp2_, 0);
      if (r > 0) {
        const int r_leaf = picks[pod].r_leaf;
        const auto r_cols = detail::lowest_bits(state_.free_columns(1, r_leaf) & sd, need1_r);
        take_leaf(r_leaf, r, r_cols, p);
        for (int c : r_cols) ++r_flow[c / p2];
      }
      for (int k = 0; k < nb; ++k) {
        extra_flows[k] = rp * flow[bs[k]] + r_flow[bs[k]];
        if (extra_flows[k] == 0) continue;
        const int sw = tree_.level2_switch(pod, bs[k]);
        for (int i = 0; i < tree_.columns_needed(2, extra_flows[k]); ++i)
          p.links.push_back(tree_.l2_link(sw, r2[k][i]));
      }
    }
    for (int u : found.d_units) {
      const int pod = units[u].pod;
      for (int i = 0; i < dp; ++i) take_leaf(picks[pod].d_leaves[i], d, sd_cols, p);
      for (int k = 0; k < nb; ++k) {
        if (qp == 1 && extra_flows[k] == 0) continue;
        const int sw = tree_.level2_switch(pod, bs[k]);
        for (int i = 0; i < nd[k]; ++i) p.links.push_back(tree_.l2_link(sw, d2[k][i]));
      }
    }
    p.shape.leaves = {t, d, r};
    p.shape.pods = {qp, dp, rp};
    detail::finish(p);
    return p;
  }

  void take_leaf(int leaf, int hosts, const std::vector<int>& cols, Placement& p) const {
    detail::add_hosts(tree_, leaf, detail::lowest_bits(state_.free_slots(leaf), hosts), p);
    for (int c : cols) p.links.push_back(tree_.l1_link(leaf, c));
  }

  void take_pod(int pod, int leaves, const std::vector<std::vector<int>>& l2_cols, int& hosts_left,
                Placement& p) const {
    int taken = 0;
    for (int i = 0; i < lpp_ && taken < leaves; ++i) {
      const int leaf = pod * lpp_ + i;
      if (!state_.leaf_wholly_free(leaf)) continue;
      const int hosts = std::min(hosts_left, m1_);
      for (int s = 0; s < hosts; ++s) p.hosts.push_back(tree_.host_at(leaf, s));
      hosts_left -= hosts;
      for (int c = 0; c < tree_.up_columns(1); ++c) p.links.push_back(tree_.l1_link(leaf, c));
      ++taken;
    }
    for (int b = 0; b < spp2_; ++b)
      for (int c : l2_cols[b]) p.links.push_back(tree_.l2_link(tree_.level2_switch(pod, b), c));
  }

  const LinkState& state_;
  const FatTree& tree_;
  const int n_, m1_, lpp_, npods_, spp2_;
  const std::vector<char>& dirty_;
  const bool all_dirty_;
  Budget& budget_;
  const long pod_budget_;
  const bool shallow_pass_;
  const bool management_way_;
  std::vector<int> pods_best_fit_;
  std::vector<std::vector<int>> leaf_order_;
  std::vector<std::vector<int>> candidates_;    // per pod, for the current D
  std::unordered_set<SlotSet> tried_;           // sets S tried for the current (D, D')
  std::vector<SlotSet> siblings_;               // per DFS level, the intersections already seen
  std::vector<std::pair<SlotSet, int>> touch_;  // dirty pods' leaves: free columns, need
  bool shallow_ = false;  // first pass: one set S per seed pod, kShallowSeeds seed pods
  int sets_left_ = -1;    // sets S still to try from this seed pod (-1: no limit)
  static constexpr int kShallowSeeds = 3;
  bool pod_cut_ = false;  // a within-pod FLAP hit its bound

 public:
  bool cut() const { return pod_cut_ || budget_.cut; }
};

}  // namespace

std::unique_ptr<Placer> LaasPlacer::for_candidates() const {
  Options quick = options_;
  quick.small_across_budget = quick.across_budget;
  quick.shallow_pass = false;
  return std::make_unique<LaasPlacer>(quick);
}

LaasPlacer::Memo* LaasPlacer::find_memo(std::uint64_t lineage, int hosts) const {
  for (Memo& m : memos_)
    if (m.lineage == lineage && m.hosts == hosts) return &m;
  return nullptr;
}

PlaceResult LaasPlacer::place(const LinkState& state, int hosts) const {
  if (hosts > state.free_hosts())
    return {std::nullopt, "only " + std::to_string(state.free_hosts()) + " hosts are free"};
  const FatTree& tree = state.tree();
  const std::string refused = "no placement of " + std::to_string(hosts) +
                              " hosts as Q*D+R leaves with dedicated links to common spines";
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<char> dirty(tree.num_pods(), 1);
  Memo* memo = options_.remember ? find_memo(state.lineage(), hosts) : nullptr;
  if (memo) {
    memo->last_use = ++uses_;
    bool any = false;
    for (int pod = 0; pod < tree.num_pods(); ++pod)
      any |= dirty[pod] = state.release_epoch(pod) != memo->epochs[pod];
    if (!any) return {std::nullopt, refused + " (nothing released since the last search)"};
  }
  const bool small = hosts <= options_.small_leaves * tree.hosts_per_leaf();
  Budget budget{small ? options_.small_across_budget : options_.across_budget};
  LaasSearch search(state, hosts, dirty, budget, options_.pod_budget, options_.shallow_pass,
                    options_.management_way);
  std::optional<Placement> found;
  if (options_.one_leaf && hosts <= tree.hosts_per_leaf()) found = search.one_leaf();
  if (!found && hosts <= tree.hosts_per_leaf() * tree.leaves_per_pod()) found = search.one_pod();
  // Partly used leaves across pods before wholly free ones: whole leaves (and the level-2
  // columns above them) stay for the tenants that can only be placed on them. Measured on the
  // issue-15 workloads: +0.5 to +2.5 points of FIFO utilization on every class but exp 8.
  if (!found) found = search.across_pods_partial();
  if (!found) found = search.across_pods();
  if (found) {
    if (memo) memo->lineage = 0;
    return {std::move(*found), ""};
  }
  // A refusal after a budget cut is remembered too (the next call of this size searches only
  // through pods released into since): unproven, so it is counted; without it every retry of
  // a blocked FIFO head would pay the whole bound again.
  const bool cut = search.cut();
  if (cut) ++budget_cuts_;
  if (options_.remember) {
    if (!memo) {
      memo = &*std::min_element(memos_.begin(), memos_.end(), [](const Memo& a, const Memo& b) {
        return a.last_use < b.last_use;
      });
      memo->lineage = state.lineage();
      memo->hosts = hosts;
      memo->last_use = ++uses_;
    }
    memo->epochs.resize(tree.num_pods());
    for (int pod = 0; pod < tree.num_pods(); ++pod) memo->epochs[pod] = state.release_epoch(pod);
  }
  return {std::nullopt, cut ? refused + " (search bound reached)" : refused};
}

}  // namespace laas::allocator
