// Hand-made placements for the routing tests: hosts, and up-links given as (switch, columns).
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "allocator/cluster.h"
#include "topology/fat_tree.h"

namespace laas::test {

using Columns = std::vector<std::pair<int, std::vector<int>>>;  // (switch index, up-columns)

// The hosts given, the level-1 links of `l1` and the level-2 links of `l2`.
inline allocator::Placement placement(const topology::FatTree& t,
                                      std::vector<topology::HostId> hosts, const Columns& l1,
                                      const Columns& l2 = {}) {
  allocator::Placement p;
  p.hosts = std::move(hosts);
  for (const auto& [leaf, cols] : l1)
    for (int c : cols) p.links.push_back(t.l1_link(leaf, c));
  for (const auto& [sw, cols] : l2)
    for (int c : cols) p.links.push_back(t.l2_link(sw, c));
  std::sort(p.links.begin(), p.links.end());
  return p;
}

// Hosts first..last.
inline std::vector<topology::HostId> host_range(topology::HostId first, topology::HostId last) {
  std::vector<topology::HostId> v;
  for (topology::HostId h = first; h <= last; ++h) v.push_back(h);
  return v;
}

}  // namespace laas::test
