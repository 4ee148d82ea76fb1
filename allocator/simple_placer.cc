#include "allocator/placers.h"
#include "allocator/search.h"

namespace laas::allocator {
namespace {

bool pod_wholly_free(const LinkState& state, int pod) {
  const FatTree& tree = state.tree();
  for (int i = 0; i < tree.leaves_per_pod(); ++i)
    if (!state.leaf_wholly_free(pod * tree.leaves_per_pod() + i)) return false;
  if (tree.height() == 3)
    for (int b = 0; b < tree.switches_per_pod(2); ++b)
      if (state.free_column_count(2, tree.level2_switch(pod, b)) != tree.up_columns(2))
        return false;
  return true;
}

// Takes whole leaves: every host (the size is rounded up, the rest is lost) and every up-link.
void take_leaves(const FatTree& tree, const std::vector<int>& leaves, Placement& p) {
  for (int leaf : leaves) {
    for (int s = 0; s < tree.hosts_per_leaf(); ++s) p.hosts.push_back(tree.host_at(leaf, s));
    for (int c = 0; c < tree.up_columns(1); ++c) p.links.push_back(tree.l1_link(leaf, c));
  }
}

}  // namespace

// The paper's Simple scheme rounds a tenant up to whole sub-trees once it is larger than a
// leaf (to whole leaves) or a pod (to whole pods), so no other tenant ever shares them.
PlaceResult SimplePlacer::place(const LinkState& state, int hosts) const {
  const FatTree& tree = state.tree();
  const int m1 = tree.hosts_per_leaf();
  const int pod_hosts = m1 * tree.leaves_per_pod();
  Placement p;
  if (hosts <= m1) {
    // Inside one leaf no link is involved: best fit, like bare metal.
    int best = -1;
    for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
      const int free = state.free_hosts_on_leaf(leaf);
      if (free >= hosts && (best < 0 || free < state.free_hosts_on_leaf(best))) best = leaf;
    }
    if (best < 0)
      return {std::nullopt, "no leaf switch has " + std::to_string(hosts) + " free hosts"};
    detail::add_hosts(tree, best, detail::lowest_bits(state.free_slots(best), hosts), p);
    p.shape.leaves = {1, hosts, 0};
    return {std::move(p), ""};
  }
  if (hosts <= pod_hosts) {
    const int need = (hosts + m1 - 1) / m1;
    for (int pod = 0; pod < tree.num_pods(); ++pod) {
      std::vector<int> leaves;
      for (int i = 0; i < tree.leaves_per_pod() && static_cast<int>(leaves.size()) < need; ++i) {
        const int leaf = pod * tree.leaves_per_pod() + i;
        if (state.leaf_wholly_free(leaf)) leaves.push_back(leaf);
      }
      if (static_cast<int>(leaves.size()) < need) continue;
      take_leaves(tree, leaves, p);
      p.shape.leaves = {need, m1, 0};
      detail::finish(p);
      return {std::move(p), ""};
    }
    return {std::nullopt, "no pod has " + std::to_string(need) + " empty leaf switches"};
  }
  const int need = (hosts + pod_hosts - 1) / pod_hosts;
  std::vector<int> pods;
  for (int pod = 0; pod < tree.num_pods() && static_cast<int>(pods.size()) < need; ++pod)
    if (pod_wholly_free(state, pod)) pods.push_back(pod);
  if (static_cast<int>(pods.size()) < need)
    return {std::nullopt, "fewer than " + std::to_string(need) + " empty pods are left"};
  for (int pod : pods) {
    std::vector<int> leaves;
    for (int i = 0; i < tree.leaves_per_pod(); ++i)
      leaves.push_back(pod * tree.leaves_per_pod() + i);
    take_leaves(tree, leaves, p);
    for (int b = 0; b < tree.switches_per_pod(2); ++b)
      for (int c = 0; c < tree.up_columns(2); ++c)
        p.links.push_back(tree.l2_link(tree.level2_switch(pod, b), c));
  }
  p.shape.leaves = {need * tree.leaves_per_pod(), m1, 0};
  p.shape.pods = {need, tree.leaves_per_pod(), 0};
  detail::finish(p);
  return {std::move(p), ""};
}

}  // namespace laas::allocator
