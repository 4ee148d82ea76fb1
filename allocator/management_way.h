// A leaf's management way out: the placement rule that keeps every owner of a shared leaf able
// to reach the SM and the switches.
//
// A switch forwards one destination LID over one port. On a leaf whose up-links are all held,
// the routing sends each switch or SM LID over one owner's link, and the first-hop drop
// (routing/sl2vl.h) discards every other owner's packets there: their hosts lose the SA and some
// switches (docs/architecture.md, "First-hop drop"). An open (free) up-link carries every owner's
// management traffic, so the placers never leave a leaf shared by two or more owners -- tenants,
// and the free pool as one owner, as the first-hop drop counts them -- without a free working
// up-link. Management hosts (reserved) are not owners: their ports pass everywhere.
#pragma once

#include <string>

#include "allocator/link_state.h"

namespace laas::allocator {

// Stands for a tenant not placed yet (no tenant has this index).
constexpr TenantIndex kNewTenant = -1000;

// Whether `leaf` keeps its management way once tenant `taker` (kNewTenant: one being placed)
// takes `hosts` of its free hosts and `columns` of its free up-links: at most one owner left
// on it, or a free up-link left. 0 <= hosts <= free hosts of the leaf, 0 <= columns <= its free
// up-links.
bool keeps_management_way(const LinkState& state, int leaf, int hosts, int columns,
                          TenantIndex taker = kNewTenant);

// The first leaf (lowest index) that placement `p` would leave shared by two or more owners
// with no free working up-link, or -1. Only leaves whose hosts or up-links `p` takes are
// looked at: the others do not change.
int leaf_without_management_way(const LinkState& state, const Placement& p);

// Why a placement is refused for `leaf`, naming it as the administrator knows it.
std::string management_way_reason(const std::string& leaf_name);

}  // namespace laas::allocator
