#include "allocator/management_way.h"

#include <algorithm>
#include <map>
#include <vector>

namespace laas::allocator {
namespace {

void add_owner(std::vector<TenantIndex>& owners, TenantIndex o) {
  if (std::find(owners.begin(), owners.end(), o) == owners.end()) owners.push_back(o);
}

}  // namespace

bool keeps_management_way(const LinkState& state, int leaf, int hosts, int columns,
                          TenantIndex taker) {
  // The common case costs one lookup: a free up-link stays, whoever shares the leaf.
  if (state.free_column_count(1, leaf) - columns >= 1) return true;
  const FatTree& t = state.tree();
  std::vector<TenantIndex> owners;
  if (hosts > 0 || columns > 0) add_owner(owners, taker);
  int free_left = -hosts;  // free hosts (down ones too: they come back) the tenant leaves
  for (int slot = 0; slot < t.hosts_per_leaf(); ++slot) {
    const TenantIndex o = state.host_owner(t.host_at(leaf, slot));
    if (o == kFree)
      ++free_left;
    else if (o >= 0)
      add_owner(owners, o);
  }
  if (free_left > 0) add_owner(owners, kFree);
  // A tenant holding up-links here is an owner of the way out even without hosts here.
  for (int c = 0; c < t.up_columns(1); ++c) {
    const TenantIndex o = state.link_owner(t.l1_link(leaf, c));
    if (o >= 0) add_owner(owners, o);
  }
  return owners.size() <= 1;
}

int leaf_without_management_way(const LinkState& state, const Placement& p) {
  const FatTree& t = state.tree();
  std::map<int, std::pair<int, int>> taken;  // leaf -> (hosts, free up-links) p takes there
  for (HostId h : p.hosts) ++taken[t.leaf_of_host(h)].first;
  for (const auto* links : {&p.links, &p.idle})
    for (LinkId l : *links) {
      if (t.link_level(l) != 1) continue;
      const int leaf = t.link_switch(l);
      auto& entry = taken[leaf];
      if (state.free_columns(1, leaf).test(t.link_column(l))) ++entry.second;
    }
  for (const auto& [leaf, n] : taken)
    if (!keeps_management_way(state, leaf, n.first, n.second)) return leaf;
  return -1;
}

std::string management_way_reason(const std::string& leaf_name) {
  return "leaf " + leaf_name +
         " would be shared by two or more owners with no free up-link, so some of their hosts "
         "could not reach the SM and the switches (their management traffic would leave over "
         "another owner's link, where the first-hop drop discards it)";
}

}  // namespace laas::allocator
