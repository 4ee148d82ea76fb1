// Rail-optimized trees: every server of a group has one port on each of the group's R
// rail leaves, and a tenant's ports on each rail must form a placement of Theorems 1-2. The
// rails of a group are identical as far as a tenant is concerned -- the same servers, the same
// columns to the same spines -- so the search runs once, on the projection of the tree onto
// rail 0: one leaf per group, one host per server slot, a column free only where it is free on
// every rail of the group. The projection's placement, copied to every rail, is a placement of
// Theorems 1-2 on each rail (one remainder leaf per rail) over the same spines, so every port
// reaches every other over the tenant's links.
//
// Across pods, a level-2 up-link carries every rail's flows at once: one projected level-2
// column stands for one real column per rail, so Theorems 1-2 on every FBG_2 hold for the
// real counts (rails times the projection's). Groups that span pods are left out.
#pragma once

#include <optional>
#include <vector>

#include "allocator/placer.h"

namespace laas::allocator {

// The rail count of a set of servers: the port count most of them have (ties: the larger). A
// tenant counted in servers gets servers of this count only; others (single-port storage or
// management hosts on rail leaves) are placed only when named.
int rail_count(const std::vector<std::vector<HostId>>& servers);

// `count` whole servers of `servers` placed on the rail projection, or nullopt with `reason`.
// Servers whose port count differs from the rail count (single-port management or storage servers
// on rail leaves), or whose groups disagree about a leaf, are not placed by it.
PlaceResult place_on_rail_projection(const LinkState& state,
                                     const std::vector<std::vector<HostId>>& servers, int count);

}  // namespace laas::allocator
