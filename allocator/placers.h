// The three placement algorithms (see placer.h for the interface).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "allocator/placer.h"

namespace laas::allocator {

// Bare-metal: any free hosts, most-used leaves first; no links.
class UnconstrainedPlacer : public Placer {
 public:
  std::string name() const override { return "unconstrained"; }
  bool isolates() const override { return false; }
  PlaceResult place(const LinkState& state, int hosts) const override;
};

// Whole empty sub-trees (paper 4.1/4.2): a tenant that fits a leaf goes to the best-fitting
// leaf; a larger one gets ceil(N/m1) empty leaves of one pod with all their hosts and up-links,
// or ceil(N/pod size) empty pods with every host and link inside and above them.
class SimplePlacer : public Placer {
 public:
  std::string name() const override { return "simple"; }
  bool isolates() const override { return true; }
  PlaceResult place(const LinkState& state, int hosts) const override;
};

// Paper Algorithms 1-2: N = Q*D + R hosts on leaves sharing D common up-link columns (Theorems
// 1-2), larger D first, most-used leaves and pods first; across pods, partly used leaves on a
// common column set first, then whole leaves arranged as Q'*D' + R' per pod, with independent
// level-2 column sets per level-2 switch position.
//
// Failures are remembered: a call refused without any budget cut proves that no placement of
// that size exists in the searched families; until a pod sees a release (LinkState's epochs),
// nothing inside it can have changed that, so the next call of the same size searches only
// inside, or through, the pods released since. Each size is remembered apart.
class LaasPlacer : public Placer {
 public:
  // Search bounds (nodes of the search; each a few bitset ANDs) and the memory of refusals. The
  // defaults are what every caller uses; other values serve tests and measurements. Chosen by
  // measurement on the issue-15 workloads (9 classes, 3 seeds, FIFO; bench/allocator_results.md):
  // 20,000 nodes instead of 500 cost 1.3-10 times the CPU for -0.2 to +0.2 point on the large
  // classes; for tenants of at most 4 leaves, 2,000 nodes lift exp 8 (+0.16 point, the only
  // class otherwise below the allocator before the search rework) and N(16) (+0.6) but cost exp 32
  // and U[4,36] 0.5 point (still 1-2 points above that allocator).
  struct Options {
    long across_budget = 500;         // the whole across-pods search of one call
    long small_across_budget = 2000;  // the same, for tenants of at most small_leaves leaves
    int small_leaves = 4;
    long pod_budget = 20000;   // one within-pod FLAP (never reached on the benchmarks)
    bool shallow_pass = true;  // across pods, a shallow pass before the exhaustive one
    // Never leave a leaf shared by two or more owners without a free up-link
    // (management_way.h): where the switches drop packets between owners (OpenSM's qos TRUE).
    // false: the paper's placements as they are.
    bool management_way = false;
    bool remember = true;  // remember refusals until a release (see above)
    // false: never a tenant on one leaf without up-links (the rail projection places those
    // itself, with the up-links its other rails need).
    bool one_leaf = true;
  };
  LaasPlacer() = default;
  explicit LaasPlacer(Options options) : options_(options) {}
  std::string name() const override { return "laas"; }
  bool isolates() const override { return true; }
  bool keeps_management_way() const override { return options_.management_way; }
  PlaceResult place(const LinkState& state, int hosts) const override;
  long budget_cuts() const override { return budget_cuts_; }
  // Backfill candidates: 500 nodes for every size and no shallow pass. Measured on the issue-15
  // workloads under backfill (seed 1): 2-3 times less CPU and equal or higher utilization
  // than with the queue head's search (bench/allocator_results.md).
  std::unique_ptr<Placer> for_candidates() const override;

 private:
  // One remembered refusal: of `hosts` on the state `lineage`, when its pods had `epochs`.
  struct Memo {
    std::uint64_t lineage = 0;  // 0: unused
    int hosts = 0;
    std::uint64_t last_use = 0;
    std::vector<std::uint64_t> epochs;
  };
  // Refusals of several sizes are remembered at once: a backfill pass asks for many sizes on
  // the live state, and its what-if copies (each a new lineage) would otherwise push the live
  // state's refusals out. The least recently used entry goes first.
  static constexpr int kMemoEntries = 64;
  Memo* find_memo(std::uint64_t lineage, int hosts) const;
  Options options_;
  mutable std::mutex mutex_;  // place() is const and may be called from several threads
  mutable std::vector<Memo> memos_ = std::vector<Memo>(kMemoEntries);
  mutable std::uint64_t uses_ = 0;
  mutable std::atomic<long> budget_cuts_{0};
};

}  // namespace laas::allocator
