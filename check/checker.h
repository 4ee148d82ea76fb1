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

struct TenantView {
  std::string name;
  std::vector<HostId> hosts;
  std::vector<LinkId> links;
  bool isolated = true;  // false: bare-metal tenant, only host exclusivity applies
};

struct Violation {
  std::string tenant;  // empty for fabric-wide violations
  std::string rule;    // short id, e.g. "theorem1", "link-shared", "faulty-link"
  std::string detail;
};

// Checks exclusivity of hosts and links, no faulty link held, and for each isolated tenant the
// LaaS conditions: per-pod shape Q*D+R (Theorem 1), common column sets (Theorem 2, the R leaf's
// a subset, counts per the slimmed-tree rule), whole leaves and FBG_2 symmetry across pods; or
// else exclusive ownership of every sub-tree it spans (the Simple scheme).
std::vector<Violation> check_all(const FatTree& tree, const std::vector<TenantView>& tenants,
                                 const std::vector<LinkId>& faulty_links);

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
