#include "allocator/rail_projection.h"

#include <algorithm>
#include <map>

#include "allocator/placers.h"

namespace laas::allocator {
namespace {

// A group of rail leaves and the servers cabled to all of them.
struct RailGroup {
  std::vector<int> leaves;  // [rail] its leaf, ascending
  int pod = 0;
  int projected_leaf = -1;
  std::vector<std::pair<int, int>> servers;  // (slot on the rail-0 leaf, server)
};

}  // namespace

int rail_count(const std::vector<std::vector<HostId>>& servers) {
  std::map<int, int> by_ports;
  for (const auto& ports : servers)
    if (!ports.empty()) ++by_ports[static_cast<int>(ports.size())];
  int rails = 0, seen = 0;
  for (const auto& [ports, n] : by_ports)
    if (n >= seen) rails = ports, seen = n;
  return rails;
}

PlaceResult place_on_rail_projection(const LinkState& state,
                                     const std::vector<std::vector<HostId>>& servers, int count) {
  const FatTree& tree = state.tree();
  const int rails = rail_count(servers);
  if (rails < 2) return {std::nullopt, "no servers with several ports"};

  // Groups by their leaves; a leaf claimed by two groups (servers whose other rails differ)
  // would let both use its columns, so such groups stay out of the projection.
  std::map<std::vector<int>, RailGroup> by_leaves;
  std::map<int, int> claims;  // leaf -> groups using it
  for (int s = 0; s < static_cast<int>(servers.size()); ++s) {
    const auto& ports = servers[s];
    if (static_cast<int>(ports.size()) != rails) continue;
    std::vector<std::pair<int, HostId>> by_leaf;
    for (HostId h : ports) by_leaf.push_back({tree.leaf_of_host(h), h});
    std::sort(by_leaf.begin(), by_leaf.end());
    std::vector<int> leaves;
    for (const auto& [leaf, h] : by_leaf) leaves.push_back(leaf);
    if (std::adjacent_find(leaves.begin(), leaves.end()) != leaves.end()) continue;
    auto [it, fresh] = by_leaves.try_emplace(leaves);
    if (fresh) {
      it->second.leaves = leaves;
      for (int leaf : leaves) ++claims[leaf];
    }
    it->second.servers.push_back({tree.slot_of_host(by_leaf.front().second), s});
  }
  std::vector<RailGroup*> groups;
  std::map<int, int> groups_in_pod;
  for (auto& [leaves, g] : by_leaves) {
    bool usable = true;
    for (int leaf : leaves)
      usable = usable && claims[leaf] == 1 && tree.pod_of_leaf(leaf) == tree.pod_of_leaf(leaves[0]);
    if (!usable) continue;
    g.pod = tree.pod_of_leaf(leaves[0]);
    g.projected_leaf = groups_in_pod[g.pod]++;
    groups.push_back(&g);
  }
  int width = 0;  // groups per pod in the projection
  for (const auto& [pod, n] : groups_in_pod) width = std::max(width, n);
  if (groups.empty()) return {std::nullopt, "no rail groups"};

  topology::FatTreeSpec spec = tree.spec();
  spec.levels[1].children = width;
  // Above the pods a level-2 up-link carries every rail's flows: one projected level-2 column
  // stands for `rails` real ones (the parallel links of one top switch, or one link to each of
  // `rails` top switches), so that the counts of Theorems 1-2 on every FBG_2 scale with the
  // rails. Where neither divides, tenants stay inside a pod.
  enum class Above { kClosed, kParallel, kParents } above = Above::kClosed;
  if (tree.height() == 3) {
    auto& top = spec.levels[2];
    if (top.parallel % rails == 0) {
      top.parallel /= rails;
      above = Above::kParallel;
    } else if (top.parents % rails == 0) {
      top.parents /= rails;
      above = Above::kParents;
    }
  }
  // The real level-2 columns behind projected column c.
  auto real_l2_columns = [&](int c) {
    std::vector<int> out;
    const int p3 = tree.p(3);
    for (int i = 0; i < rails; ++i) {
      if (above == Above::kParallel) {
        const int p = p3 / rails;
        out.push_back((c / p) * p3 + (c % p) * rails + i);
      } else {
        out.push_back(((c / p3) * rails + i) * p3 + c % p3);
      }
    }
    return out;
  };
  std::optional<FatTree> projected;
  try {
    projected.emplace(spec);
  } catch (const topology::SpecError& e) {
    return {std::nullopt, std::string("the rail projection is not a fat-tree: ") + e.what()};
  }
  LinkState shadow(*projected);
  // Everything starts unavailable; a server slot or column is opened only where it is free on
  // every rail of its group.
  for (HostId h = 0; h < projected->num_hosts(); ++h) shadow.set_host_down(h, true);
  for (LinkId l = 0; l < projected->total_links(); ++l) shadow.set_faulty(l, true);
  if (above != Above::kClosed)
    for (int sw = 0; sw < tree.num_switches(2); ++sw)
      for (int c = 0; c < projected->up_columns(2); ++c) {
        bool free = true;
        for (int real : real_l2_columns(c)) {
          const LinkId l = tree.l2_link(sw, real);
          free = free && state.link_owner(l) == kFree && !state.link_faulty(l);
        }
        if (free) shadow.set_faulty(projected->l2_link(sw, c), false);
      }
  std::vector<int> server_at(projected->num_hosts(), -1);
  for (RailGroup* g : groups) {
    const int leaf = g->pod * width + g->projected_leaf;
    g->projected_leaf = leaf;
    for (const auto& [slot, s] : g->servers) {
      bool free = true;
      for (HostId h : servers[s])
        free = free && state.host_owner(h) == kFree && !state.host_down(h);
      const HostId shadow_host = projected->host_at(leaf, slot);
      server_at[shadow_host] = s;
      if (free) shadow.set_host_down(shadow_host, false);
    }
    for (int c = 0; c < tree.up_columns(1); ++c) {
      bool free = true;
      for (int real : g->leaves) {
        const LinkId l = tree.l1_link(real, c);
        free = free && state.link_owner(l) == kFree && !state.link_faulty(l);
      }
      if (free) shadow.set_faulty(projected->l1_link(leaf, c), false);
    }
  }
  if (shadow.free_hosts() < count)
    return {std::nullopt, "only " + std::to_string(shadow.free_hosts()) + " whole servers of " +
                              std::to_string(rails) + " rails are free in rail groups"};
  // A tenant on one group still needs up-links: its ports on different rails meet only at the
  // spines. The best-fitting group with enough free columns first.
  std::optional<Placement> one_group;
  if (count <= tree.hosts_per_leaf()) {
    const int columns = tree.columns_needed(1, count);
    int best = -1;
    for (int leaf = 0; leaf < projected->num_leaves(); ++leaf) {
      const int free = shadow.free_hosts_on_leaf(leaf);
      if (free < count || shadow.free_column_count(1, leaf) < columns) continue;
      // Best fit on the group, then on its pod: between groups equally free, the one whose pod
      // is fuller, so that wholly free pods (and their level-2 columns) stay whole for tenants
      // that span pods.
      if (best < 0 || free < shadow.free_hosts_on_leaf(best) ||
          (free == shadow.free_hosts_on_leaf(best) &&
           shadow.free_hosts_in_pod(projected->pod_of_leaf(leaf)) <
               shadow.free_hosts_in_pod(projected->pod_of_leaf(best))))
        best = leaf;
    }
    if (best >= 0) {
      one_group.emplace();
      const auto& slots = shadow.free_slots(best);
      for (int k = 0;
           k < tree.hosts_per_leaf() && static_cast<int>(one_group->hosts.size()) < count; ++k)
        if (slots.test(k)) one_group->hosts.push_back(projected->host_at(best, k));
      const auto& cols = shadow.free_columns(1, best);
      for (int c = 0; c < tree.up_columns(1) && static_cast<int>(one_group->links.size()) < columns;
           ++c)
        if (cols.test(c)) one_group->links.push_back(projected->l1_link(best, c));
      one_group->shape.leaves = {1, count, 0};
    }
  }
  PlaceResult found{one_group, ""};
  if (!found.placement) {
    LaasPlacer::Options options;
    options.remember = false;  // every projection is a new state
    options.one_leaf = false;
    found = LaasPlacer(options).place(shadow, count);
  }
  if (!found.placement) return {std::nullopt, "per rail: " + found.reason};
  if (found.placement->links.empty())
    return {std::nullopt, "per rail: no group has " + std::to_string(count) +
                              " free servers and the free up-links their rails need"};

  std::vector<const RailGroup*> group_at(projected->num_leaves(), nullptr);
  for (const RailGroup* g : groups) group_at[g->projected_leaf] = g;
  Placement out;
  for (HostId h : found.placement->hosts)
    for (HostId port : servers[server_at[h]]) out.hosts.push_back(port);
  for (LinkId l : found.placement->links) {
    const int sw = projected->link_switch(l);
    const int column = projected->link_column(l);
    if (projected->link_level(l) == 2) {
      for (int real : real_l2_columns(column)) out.links.push_back(tree.l2_link(sw, real));
      continue;
    }
    for (int real : group_at[sw]->leaves) out.links.push_back(tree.l1_link(real, column));
  }
  std::sort(out.hosts.begin(), out.hosts.end());
  std::sort(out.links.begin(), out.links.end());
  out.shape = found.placement->shape;
  out.shape.rails = rails;
  return {std::move(out), ""};
}

}  // namespace laas::allocator
