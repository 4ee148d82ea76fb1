// Small helpers shared by the placers: picking bits, ordering leaves best-fit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "allocator/link_state.h"

namespace laas::allocator::detail {

// Bits in `set`, inline: bitset::count() is a library call per word on CPUs built without
// popcnt (the default target), and the searches ask for counts constantly. The bitset is read
// as its words (it is trivially copyable; the order of words does not matter for a count).
inline int popcount(const SlotSet& set) {
  static_assert(sizeof(SlotSet) == 4 * sizeof(std::uint64_t), "SlotSet is 4 words");
  static_assert(std::is_trivially_copyable<SlotSet>::value, "SlotSet is plain words");
  std::uint64_t w[4];
  std::memcpy(w, &set, sizeof w);
  int n = 0;
  for (std::uint64_t x : w) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    n += static_cast<int>((x * 0x0101010101010101ULL) >> 56);
  }
  return n;
}

inline bool has_at_least(const SlotSet& set, int k) { return k <= 0 || popcount(set) >= k; }

// The `count` lowest set bits of `set`, preferring those also in `prefer`.
inline std::vector<int> lowest_bits(const SlotSet& set, int count, const SlotSet& prefer = {}) {
  std::vector<int> out;
  const SlotSet first = set & prefer;
  for (size_t i = first._Find_first(); i < set.size() && static_cast<int>(out.size()) < count;
       i = first._Find_next(i))
    out.push_back(static_cast<int>(i));
  const SlotSet rest = set & ~first;
  for (size_t i = rest._Find_first(); i < set.size() && static_cast<int>(out.size()) < count;
       i = rest._Find_next(i))
    out.push_back(static_cast<int>(i));
  std::sort(out.begin(), out.end());
  return out;
}

// The `count` lowest set bits of `set` as a set.
inline SlotSet lowest_set(const SlotSet& set, int count) {
  SlotSet out;
  for (size_t i = set._Find_first(); i < set.size() && count > 0; i = set._Find_next(i), --count)
    out.set(i);
  return out;
}

// Leaves [first, first + count) ordered most-used first (fewest free hosts), then by index:
// best-fit packing keeps empty leaves whole for later large tenants.
// A counting sort: free-host counts are small integers and this runs on every placement.
inline std::vector<int> leaves_best_fit(const LinkState& state, int first, int count) {
  const int m1 = state.tree().hosts_per_leaf();
  std::vector<int> starts(m1 + 2, 0);
  for (int i = 0; i < count; ++i) ++starts[state.free_hosts_on_leaf(first + i) + 1];
  for (int f = 1; f <= m1 + 1; ++f) starts[f] += starts[f - 1];
  std::vector<int> leaves(count);
  for (int i = 0; i < count; ++i) leaves[starts[state.free_hosts_on_leaf(first + i)]++] = first + i;
  return leaves;
}

inline void add_hosts(const FatTree& tree, int leaf, const std::vector<int>& slots, Placement& p) {
  for (int s : slots) p.hosts.push_back(tree.host_at(leaf, s));
}

inline void finish(Placement& p) {
  std::sort(p.hosts.begin(), p.hosts.end());
  std::sort(p.links.begin(), p.links.end());
}

// Chooses the D columns for the D units and the R unit's subset of them.
inline void choose_columns(const SlotSet& common, const SlotSet& r_free, int need_d, int need_r,
                           std::vector<int>& d_cols, std::vector<int>& r_cols) {
  r_cols = need_r > 0 ? lowest_bits(common & r_free, need_r) : std::vector<int>{};
  SlotSet prefer;
  for (int c : r_cols) prefer.set(c);
  d_cols = lowest_bits(common, need_d, prefer);
}

}  // namespace laas::allocator::detail
