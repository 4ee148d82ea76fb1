#include "allocator/placers.h"
#include "allocator/search.h"

namespace laas::allocator {

PlaceResult UnconstrainedPlacer::place(const LinkState& state, int hosts) const {
  if (hosts > state.free_hosts())
    return {std::nullopt, "only " + std::to_string(state.free_hosts()) + " hosts are free"};
  const FatTree& tree = state.tree();
  Placement p;
  int left = hosts;
  for (int leaf : detail::leaves_best_fit(state, 0, tree.num_leaves())) {
    const int take = std::min(left, state.free_hosts_on_leaf(leaf));
    if (take == 0) continue;
    detail::add_hosts(tree, leaf, detail::lowest_bits(state.free_slots(leaf), take), p);
    left -= take;
    if (left == 0) break;
  }
  p.shape.leaves = {0, 0, 0};
  detail::finish(p);
  return {std::move(p), ""};
}

}  // namespace laas::allocator
