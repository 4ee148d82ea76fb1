// Small helpers shared by the placers: picking bits, ordering leaves best-fit.
#pragma once

#include <algorithm>
#include <vector>

#include "allocator/link_state.h"

namespace laas::allocator::detail {

// The `count` lowest set bits of `set`, preferring those also in `prefer`.
inline std::vector<int> lowest_bits(const SlotSet& set, int count, const SlotSet& prefer = {}) {
  std::vector<int> out;
  const SlotSet first = set & prefer;
  for (size_t i = 0; i < set.size() && static_cast<int>(out.size()) < count; ++i)
    if (first[i]) out.push_back(static_cast<int>(i));
  for (size_t i = 0; i < set.size() && static_cast<int>(out.size()) < count; ++i)
    if (set[i] && !first[i]) out.push_back(static_cast<int>(i));
  std::sort(out.begin(), out.end());
  return out;
}

// Leaves [first, first + count) ordered most-used first (fewest free hosts), then by index:
// best-fit packing keeps empty leaves whole for later large tenants.
inline std::vector<int> leaves_best_fit(const LinkState& state, int first, int count) {
  std::vector<int> leaves(count);
  for (int i = 0; i < count; ++i) leaves[i] = first + i;
  std::stable_sort(leaves.begin(), leaves.end(), [&](int a, int b) {
    return state.free_hosts_on_leaf(a) < state.free_hosts_on_leaf(b);
  });
  return leaves;
}

inline void add_hosts(const FatTree& tree, int leaf, const std::vector<int>& slots, Placement& p) {
  for (int s : slots) p.hosts.push_back(tree.host_at(leaf, s));
}

inline void finish(Placement& p) {
  std::sort(p.hosts.begin(), p.hosts.end());
  std::sort(p.links.begin(), p.links.end());
}

}  // namespace laas::allocator::detail
