// Who holds every host and every up-link of a fat-tree: free, a tenant, or (links) faulty.
//
// Per-switch bitsets of free host slots and free up-link columns make the placement search a
// matter of bitwise ANDs; std::bitset<256> covers every InfiniBand radix (ports are 8-bit).
#pragma once

#include <atomic>
#include <bitset>
#include <cstdint>
#include <string>
#include <vector>

#include "topology/fat_tree.h"

namespace laas::allocator {

using topology::FatTree;
using topology::HostId;
using topology::LinkId;

using TenantIndex = int;  // dense index chosen by the caller (Cluster, simulator)
constexpr TenantIndex kFree = -1;
constexpr TenantIndex kReserved = -2;  // management hosts: never allocated
using SlotSet = std::bitset<256>;      // host slots of a leaf, or up-link columns of a switch

// Q switches holding D each, plus optionally one holding R < D (the paper's N = Q*D + R).
struct ShapeLevel {
  int q = 0;
  int d = 0;
  int r = 0;
};

// leaves: hosts per leaf. pods: leaves per pod, set (q > 0) only for tenants spanning pods,
// which the approximated 3-level scheme places as whole leaves.
struct Shape {
  ShapeLevel leaves;
  ShapeLevel pods;
  // > 1: a rail-optimized placement, `leaves` counted on each of `rails` rails.
  int rails = 0;
  std::string text() const;  // e.g. "2x4+2" or "pods 3x2+1 of whole leaves"
};

struct Placement {
  std::vector<HostId> hosts;  // sorted
  std::vector<LinkId> links;  // sorted; level-1 up-links first; the links its routes use
  Shape shape;
  // Links the tenant holds but does not route over: columns a repair retired. They
  // stay reserved (never handed to anyone else) so that undoing the repair always works.
  std::vector<LinkId> idle{};  // sorted
};

// The shape a set of hosts forms (for placements restored from saved state). Not a check: the
// counts are described as Q*D+R even when they do not fit that form.
Shape shape_of(const FatTree& tree, const std::vector<HostId>& hosts);

// An id that no other LinkState object, and no copy, ever shares: a placer may remember what it
// proved about one object (see LinkState::release_epoch) without mistaking a copy for it.
class StateLineage {
 public:
  StateLineage() : id_(next()) {}
  StateLineage(const StateLineage&) : id_(next()) {}
  StateLineage& operator=(const StateLineage&) {
    id_ = next();
    return *this;
  }
  std::uint64_t id() const { return id_; }

 private:
  static std::uint64_t next() {
    static std::atomic<std::uint64_t> counter{1};
    return counter++;
  }
  std::uint64_t id_;
};

class LinkState {
 public:
  explicit LinkState(const FatTree& tree);

  const FatTree& tree() const { return *tree_; }

  TenantIndex host_owner(HostId host) const { return host_owner_[host]; }
  TenantIndex link_owner(LinkId link) const { return link_owner_[link]; }
  bool link_faulty(LinkId link) const { return faulty_[link]; }
  bool host_down(HostId host) const { return down_[host]; }

  int free_hosts() const { return free_hosts_; }
  // Counts are cached: bitset::count() is a library call on CPUs built without popcnt, and the
  // search asks for them constantly.
  int free_hosts_on_leaf(int leaf) const { return free_on_leaf_[leaf]; }
  int free_hosts_in_pod(int pod) const { return free_in_pod_[pod]; }
  // Bumped whenever something in the pod becomes free (a release, a link repaired): a search
  // that failed stays failed, for placements inside that pod, while the epoch is unchanged.
  // Together with lineage(): a copy gets a new lineage, so epochs are never compared across
  // objects.
  std::uint64_t release_epoch(int pod) const { return release_epoch_[pod]; }
  std::uint64_t lineage() const { return lineage_.id(); }
  int free_column_count(int level, int sw) const {
    return level == 1 ? free_l1_count_[sw] : free_l2_count_[sw];
  }
  // Leaves of `pod` able to hold `hosts` hosts with their own up-links: at least that many
  // free hosts and enough free columns (hosts <= columns * slimming divisor). Kept up to date
  // on every change, so the placer's necessary conditions cost one lookup. 0 <= hosts.
  int leaves_with_capacity(int pod, int hosts) const {
    const int stride = tree_->hosts_per_leaf() + 1;
    return hosts >= stride ? 0 : cap_at_least_[pod * stride + hosts];
  }
  const SlotSet& free_slots(int leaf) const { return free_slots_[leaf]; }
  // Free (neither allocated nor faulty) up-link columns of a leaf (level 1) or level-2 switch.
  const SlotSet& free_columns(int level, int sw) const {
    return level == 1 ? free_l1_[sw] : free_l2_[sw];
  }
  // A leaf whose hosts and up-links are all free: what the 3-level scheme hands out whole.
  bool leaf_wholly_free(int leaf) const;
  int allocated_links(int level) const { return allocated_links_[level - 1]; }
  int faulty_links() const { return faulty_count_; }
  int down_hosts() const { return down_count_; }

  // Whether every host and link of `p` (idle links included) is free, no host down and no link
  // faulty; `why` names the first that is not.
  bool can_assign(const Placement& p, std::string* why) const;
  // Whether every host and link of `p` is unheld (down hosts and faulty links allowed): what
  // restoring a saved tenant on a fabric with faults needs.
  bool can_hold(const Placement& p, std::string* why) const;
  // Preconditions: can_hold(p). Marks p's hosts, links and idle links as held by `tenant`.
  void assign(TenantIndex tenant, const Placement& p);
  // Returns p's hosts and links to the pool; exact inverse of assign. A down host or faulty
  // link goes back unheld but stays out of every placement until it returns.
  void release(TenantIndex tenant, const Placement& p);

  // A faulty link is excluded from every future placement. A link a tenant holds stays with it
  // (the tenant is never changed silently); it is reported and excluded once released.
  void set_faulty(LinkId link, bool faulty);
  // A down host (absent from the fabric) is likewise never placed; a tenant keeps its own.
  void set_host_down(HostId host, bool down);

 private:
  void refresh_link(LinkId link);
  void refresh_host(HostId host);
  void refresh_capacity(int leaf);
  int pod_of_link(LinkId link) const;

  const FatTree* tree_;
  std::vector<TenantIndex> host_owner_;
  std::vector<TenantIndex> link_owner_;
  std::vector<bool> faulty_;
  std::vector<bool> down_;
  std::vector<SlotSet> free_slots_;
  std::vector<SlotSet> free_l1_;
  std::vector<SlotSet> free_l2_;
  std::vector<int> free_on_leaf_;
  std::vector<int> free_in_pod_;
  std::vector<std::uint64_t> release_epoch_;
  StateLineage lineage_;
  std::vector<int> free_l1_count_;
  std::vector<int> free_l2_count_;
  std::vector<int> leaf_cap_;      // per leaf, min(free hosts, free columns * divisor)
  std::vector<int> cap_at_least_;  // per pod and h = 0..m1, leaves with leaf_cap_ >= h
  int free_hosts_ = 0;
  int allocated_links_[2] = {0, 0};
  int faulty_count_ = 0;
  int down_count_ = 0;
};

}  // namespace laas::allocator
