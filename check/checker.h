// The independent invariant checker. It decides legality from the tree and the allocations
// alone and never calls allocator code, so that an allocator bug cannot hide itself.
#pragma once

#include <string>
#include <vector>

#include "topology/fat_tree.h"

namespace laas::check {

using topology::FatTree;
using topology::HostId;
using topology::LinkId;

// A repair as the allocation claims it: on each switch, retired[i] replaced by added[i].
struct RepairView {
  std::vector<LinkId> retired;
  std::vector<LinkId> added;
};

struct TenantView {
  std::string name;
  std::vector<HostId> hosts;
  std::vector<LinkId> links;   // the links its routes use: the LaaS conditions apply to these
  bool isolated = true;        // false: bare-metal tenant, only host exclusivity applies
  std::vector<LinkId> idle{};  // held but not routed over (retired by repairs): still exclusive
  std::vector<RepairView> repairs{};
  // [leaf] its rail, on a rail-optimized fabric (leaves serving rail r of a group of
  // multi-HCA servers); nullptr or one rail: the tree is one rail. Inside one pod, a tenant on
  // several rails is checked rail by rail (Theorem 1 with one remainder leaf per rail, Theorem 2
  // on each rail), its rails over the same columns so that every port reaches every other.
  const std::vector<int>* leaf_rail = nullptr;
};

struct Violation {
  std::string tenant;  // empty for fabric-wide violations
  std::string rule;    // short id, e.g. "theorem1", "link-shared", "faulty-link"
  std::string detail;
};

// Checks exclusivity of hosts and links (idle ones included), and for each isolated tenant the
// LaaS conditions: per-pod shape Q*D+R (Theorem 1), common column sets (Theorem 2, the R leaf's
// a subset, counts per the slimmed-tree rule), whole leaves and FBG_2 symmetry across pods; or
// else exclusive ownership of every sub-tree it spans (the Simple scheme).
// A faulty link a tenant holds is no violation (the tenant keeps what it holds, degraded); the
// fault rules are about repairs: "repair-mismatch" (a repair that does not replace a
// column by another on the same switches, or whose links the tenant does not hold as it says),
// "idle-mismatch" (held-but-unused links other than the retired ones) and "repair-stale" (a
// repair none of whose retired links is faulty any more: it should have been undone).
std::vector<Violation> check_all(const FatTree& tree, const std::vector<TenantView>& tenants,
                                 const std::vector<LinkId>& faulty_links);

// Who the allocation state says holds each host and link ("" nobody), to compare with the
// tenants' own lists: "reserved-released" (a tenant's host or link, down, faulty or idle ones
// included, that the state shows free or someone else's: it could be handed out again) and
// "state-phantom" (the state holds something for a tenant that the tenant does not list).
struct StateClaims {
  std::vector<std::string> host_owner;  // [HostId]
  std::vector<std::string> link_owner;  // [LinkId]
};
std::vector<Violation> check_claims(const FatTree& tree, const std::vector<TenantView>& tenants,
                                    const StateClaims& claims);

// What the allocation state claims to hold, to compare with the tenants' own lists.
struct Totals {
  int hosts = 0;
  int l1_links = 0;
  int l2_links = 0;
};
std::vector<Violation> check_totals(const FatTree& tree, const std::vector<TenantView>& tenants,
                                    const Totals& claimed);

// The LaaS conditions for one tenant taken alone (no exclusivity against others).
std::vector<Violation> check_tenant_shape(const FatTree& tree, const TenantView& tenant);

std::string to_string(const Violation& v);

}  // namespace laas::check
