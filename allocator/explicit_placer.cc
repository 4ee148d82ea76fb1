#include <map>

#include "allocator/placer.h"
#include "allocator/search.h"

namespace laas::allocator {
namespace {

// Splits units (leaves or pods) with their counts into the D units and the one R unit.
bool split_shape(const std::map<int, int>& counts, int& d, int& r_unit) {
  d = 0;
  r_unit = -1;
  for (const auto& [unit, n] : counts) d = std::max(d, n);
  for (const auto& [unit, n] : counts) {
    if (n == d) continue;
    if (r_unit >= 0) return false;
    r_unit = unit;
  }
  return true;
}

std::string count_list(const std::map<int, int>& counts) {
  std::string s;
  for (const auto& [unit, n] : counts) s += (s.empty() ? "" : ", ") + std::to_string(n);
  return s;
}

}  // namespace

PlaceResult place_on_hosts(const LinkState& state, std::vector<HostId> hosts) {
  const FatTree& tree = state.tree();
  std::sort(hosts.begin(), hosts.end());
  if (hosts.empty()) return {std::nullopt, "the host list is empty"};
  if (std::adjacent_find(hosts.begin(), hosts.end()) != hosts.end())
    return {std::nullopt, "the host list names a host twice"};
  std::map<int, int> per_leaf, leaves_per_pod;
  for (HostId h : hosts) {
    if (h < 0 || h >= tree.num_hosts()) return {std::nullopt, "a host is outside the tree"};
    if (state.host_owner(h) != kFree) return {std::nullopt, tree.host_name(h) + " is not free"};
    ++per_leaf[tree.leaf_of_host(h)];
  }
  for (const auto& [leaf, n] : per_leaf) ++leaves_per_pod[tree.pod_of_leaf(leaf)];
  Placement p;
  p.hosts = hosts;
  if (per_leaf.size() == 1) {
    p.shape.leaves = {1, static_cast<int>(hosts.size()), 0};
    return {std::move(p), ""};
  }
  if (leaves_per_pod.size() == 1) {
    int d, r_leaf;
    if (!split_shape(per_leaf, d, r_leaf))
      return {std::nullopt, "hosts per leaf are " + count_list(per_leaf) +
                                "; LaaS needs the same number on every leaf but one smaller "
                                "(Theorem 1)"};
    const int need_d = tree.columns_needed(1, d);
    SlotSet common;
    common.set();
    for (const auto& [leaf, n] : per_leaf)
      if (leaf != r_leaf) common &= state.free_columns(1, leaf);
    if (static_cast<int>(common.count()) < need_d)
      return {std::nullopt, "the leaves share only " + std::to_string(common.count()) +
                                " free up-link columns, " + std::to_string(need_d) +
                                " needed (Theorem 2)"};
    const int r = r_leaf >= 0 ? per_leaf.at(r_leaf) : 0;
    const int need_r = r > 0 ? tree.columns_needed(1, r) : 0;
    const SlotSet r_free = r_leaf >= 0 ? state.free_columns(1, r_leaf) : SlotSet{};
    if (r > 0 && static_cast<int>((r_free & common).count()) < need_r)
      return {std::nullopt, tree.switch_name(1, r_leaf) + " has too few free up-links to the " +
                                "spines the other leaves use (Theorem 2)"};
    std::vector<int> d_cols, r_cols;
    detail::choose_columns(common, r_free, need_d, need_r, d_cols, r_cols);
    for (const auto& [leaf, n] : per_leaf)
      for (int c : leaf == r_leaf ? r_cols : d_cols) p.links.push_back(tree.l1_link(leaf, c));
    p.shape.leaves = {static_cast<int>(per_leaf.size()) - (r_leaf >= 0), d, r};
    detail::finish(p);
    return {std::move(p), ""};
  }
  // Across pods: whole leaves (all up-links), Q'*D'+R' leaves per pod, common level-2 columns.
  for (const auto& [leaf, n] : per_leaf)
    if (state.free_column_count(1, leaf) != tree.up_columns(1))
      return {std::nullopt, "a tenant spanning pods takes whole leaves, but " +
                                tree.switch_name(1, leaf) + " has up-links in use or faulty"};
  int d, r_pod;
  if (!split_shape(leaves_per_pod, d, r_pod))
    return {std::nullopt, "leaves per pod are " + count_list(leaves_per_pod) +
                              "; LaaS needs the same number in every pod but one smaller"};
  std::map<int, SlotSet> pod_cols;
  for (const auto& [pod, n] : leaves_per_pod) {
    pod_cols[pod].set();
    for (int b = 0; b < tree.switches_per_pod(2); ++b)
      pod_cols[pod] &= state.free_columns(2, tree.level2_switch(pod, b));
  }
  SlotSet common;
  common.set();
  for (const auto& [pod, n] : leaves_per_pod)
    if (pod != r_pod) common &= pod_cols[pod];
  const int need_d = tree.columns_needed(2, d * tree.p(2));
  if (static_cast<int>(common.count()) < need_d)
    return {std::nullopt, "the pods share only " + std::to_string(common.count()) +
                              " free level-2 columns, " + std::to_string(need_d) + " needed"};
  const int r = r_pod >= 0 ? leaves_per_pod.at(r_pod) : 0;
  const int need_r = r > 0 ? tree.columns_needed(2, r * tree.p(2)) : 0;
  const SlotSet r_free = r_pod >= 0 ? pod_cols[r_pod] : SlotSet{};
  if (r > 0 && static_cast<int>((r_free & common).count()) < need_r)
    return {std::nullopt, "the remainder pod has too few free level-2 columns"};
  std::vector<int> d_cols, r_cols;
  detail::choose_columns(common, r_free, need_d, need_r, d_cols, r_cols);
  for (const auto& [leaf, n] : per_leaf)
    for (int c = 0; c < tree.up_columns(1); ++c) p.links.push_back(tree.l1_link(leaf, c));
  for (const auto& [pod, n] : leaves_per_pod)
    for (int b = 0; b < tree.switches_per_pod(2); ++b)
      for (int c : pod == r_pod ? r_cols : d_cols)
        p.links.push_back(tree.l2_link(tree.level2_switch(pod, b), c));
  const int m1 = tree.hosts_per_leaf();
  p.shape.leaves = {static_cast<int>(hosts.size()) / m1, m1, static_cast<int>(hosts.size()) % m1};
  p.shape.pods = {static_cast<int>(leaves_per_pod.size()) - (r_pod >= 0), d, r};
  detail::finish(p);
  return {std::move(p), ""};
}

}  // namespace laas::allocator
