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

namespace {

// Where a level-2 up-link of the projection stands for the rails' real ones (see project()).
enum class Above { kClosed, kParallel, kParents };

// The servers' rail groups projected onto a tree of one rail: a projected leaf per group,
// a projected column where it is free on every rail. The placer runs on the projection
// (`shadow`); the placement found is mapped back to every rail.
class RailProjection {
 public:
  RailProjection(const LinkState& state, const std::vector<std::vector<HostId>>& servers, int rails)
      : tree_(state.tree()), state_(state), servers_(servers), rails_(rails) {}

  // Groups by their leaves; a leaf claimed by two groups (servers whose other rails differ)
  // would let both use its columns, so such groups stay out of the projection. False: none.
  bool find_groups();
  // The projected tree, or why there is none.
  std::string project();
  // The projection's free servers and columns: those free on every rail of their group.
  void open_shadow();
  const LinkState& shadow() const { return *shadow_; }
  // A tenant on one group still needs up-links: its ports on different rails meet only at the
  // spines. The best-fitting group with enough free columns first.
  std::optional<Placement> place_on_one_group(int count) const;
  Placement to_rails(const Placement& projected) const;

 private:
  std::vector<int> real_l2_columns(int c) const;

  const FatTree& tree_;
  const LinkState& state_;
  const std::vector<std::vector<HostId>>& servers_;
  const int rails_;
  std::map<std::vector<int>, RailGroup> by_leaves_;
  std::vector<RailGroup*> groups_;
  int width_ = 0;  // groups per pod in the projection
  Above above_ = Above::kClosed;
  std::optional<FatTree> projected_;
  std::optional<LinkState> shadow_;
  std::vector<int> server_at_;  // [projected host] server
};

bool RailProjection::find_groups() {
  std::map<int, int> claims;  // leaf -> groups using it
  for (int s = 0; s < static_cast<int>(servers_.size()); ++s) {
    const auto& ports = servers_[s];
    if (static_cast<int>(ports.size()) != rails_) continue;
    std::vector<std::pair<int, HostId>> by_leaf;
    for (HostId h : ports) by_leaf.push_back({tree_.leaf_of_host(h), h});
    std::sort(by_leaf.begin(), by_leaf.end());
    std::vector<int> leaves;
    for (const auto& [leaf, h] : by_leaf) leaves.push_back(leaf);
    if (std::adjacent_find(leaves.begin(), leaves.end()) != leaves.end()) continue;
    auto [it, fresh] = by_leaves_.try_emplace(leaves);
    if (fresh) {
      it->second.leaves = leaves;
      for (int leaf : leaves) ++claims[leaf];
    }
    it->second.servers.push_back({tree_.slot_of_host(by_leaf.front().second), s});
  }
  std::map<int, int> groups_in_pod;
  for (auto& [leaves, g] : by_leaves_) {
    bool usable = true;
    for (int leaf : leaves)
      usable =
          usable && claims[leaf] == 1 && tree_.pod_of_leaf(leaf) == tree_.pod_of_leaf(leaves[0]);
    if (!usable) continue;
    g.pod = tree_.pod_of_leaf(leaves[0]);
    g.projected_leaf = groups_in_pod[g.pod]++;
    groups_.push_back(&g);
  }
  for (const auto& [pod, n] : groups_in_pod) width_ = std::max(width_, n);
  return !groups_.empty();
}

// Above the pods a level-2 up-link carries every rail's flows: one projected level-2 column
// stands for `rails` real ones (the parallel links of one top switch, or one link to each of
// `rails` top switches), so that the counts of Theorems 1-2 on every FBG_2 scale with the
// rails. Where neither divides, tenants stay inside a pod.
std::string RailProjection::project() {
  topology::FatTreeSpec spec = tree_.spec();
  spec.levels[1].children = width_;
  if (tree_.height() == 3) {
    auto& top = spec.levels[2];
    if (top.parallel % rails_ == 0) {
      top.parallel /= rails_;
      above_ = Above::kParallel;
    } else if (top.parents % rails_ == 0) {
      top.parents /= rails_;
      above_ = Above::kParents;
    }
  }
  try {
    projected_.emplace(spec);
  } catch (const topology::SpecError& e) {
    return std::string("the rail projection is not a fat-tree: ") + e.what();
  }
  return "";
}

// The real level-2 columns behind projected column c.
std::vector<int> RailProjection::real_l2_columns(int c) const {
  std::vector<int> out;
  const int p3 = tree_.p(3);
  for (int i = 0; i < rails_; ++i) {
    if (above_ == Above::kParallel) {
      const int p = p3 / rails_;
      out.push_back((c / p) * p3 + (c % p) * rails_ + i);
    } else {
      out.push_back(((c / p3) * rails_ + i) * p3 + c % p3);
    }
  }
  return out;
}

// Everything starts unavailable; a server slot or column is opened only where it is free on
// every rail of its group.
void RailProjection::open_shadow() {
  const FatTree& projected = *projected_;
  LinkState& shadow = shadow_.emplace(projected);
  for (HostId h = 0; h < projected.num_hosts(); ++h) shadow.set_host_down(h, true);
  for (LinkId l = 0; l < projected.total_links(); ++l) shadow.set_faulty(l, true);
  if (above_ != Above::kClosed)
    for (int sw = 0; sw < tree_.num_switches(2); ++sw)
      for (int c = 0; c < projected.up_columns(2); ++c) {
        bool free = true;
        for (int real : real_l2_columns(c)) {
          const LinkId l = tree_.l2_link(sw, real);
          free = free && state_.link_owner(l) == kFree && !state_.link_faulty(l);
        }
        if (free) shadow.set_faulty(projected.l2_link(sw, c), false);
      }
  server_at_.assign(projected.num_hosts(), -1);
  for (RailGroup* g : groups_) {
    const int leaf = g->pod * width_ + g->projected_leaf;
    g->projected_leaf = leaf;
    for (const auto& [slot, s] : g->servers) {
      bool free = true;
      for (HostId h : servers_[s])
        free = free && state_.host_owner(h) == kFree && !state_.host_down(h);
      const HostId shadow_host = projected.host_at(leaf, slot);
      server_at_[shadow_host] = s;
      if (free) shadow.set_host_down(shadow_host, false);
    }
    for (int c = 0; c < tree_.up_columns(1); ++c) {
      bool free = true;
      for (int real : g->leaves) {
        const LinkId l = tree_.l1_link(real, c);
        free = free && state_.link_owner(l) == kFree && !state_.link_faulty(l);
      }
      if (free) shadow.set_faulty(projected.l1_link(leaf, c), false);
    }
  }
}

std::optional<Placement> RailProjection::place_on_one_group(int count) const {
  std::optional<Placement> one_group;
  if (count > tree_.hosts_per_leaf()) return one_group;
  const FatTree& projected = *projected_;
  const LinkState& shadow = *shadow_;
  const int columns = tree_.columns_needed(1, count);
  int best = -1;
  for (int leaf = 0; leaf < projected.num_leaves(); ++leaf) {
    const int free = shadow.free_hosts_on_leaf(leaf);
    if (free < count || shadow.free_column_count(1, leaf) < columns) continue;
    // Best fit on the group, then on its pod: between groups equally free, the one whose pod
    // is fuller, so that wholly free pods (and their level-2 columns) stay whole for tenants
    // that span pods.
    if (best < 0 || free < shadow.free_hosts_on_leaf(best) ||
        (free == shadow.free_hosts_on_leaf(best) &&
         shadow.free_hosts_in_pod(projected.pod_of_leaf(leaf)) <
             shadow.free_hosts_in_pod(projected.pod_of_leaf(best))))
      best = leaf;
  }
  if (best < 0) return one_group;
  one_group.emplace();
  const auto& slots = shadow.free_slots(best);
  for (int k = 0; k < tree_.hosts_per_leaf() && static_cast<int>(one_group->hosts.size()) < count;
       ++k)
    if (slots.test(k)) one_group->hosts.push_back(projected.host_at(best, k));
  const auto& cols = shadow.free_columns(1, best);
  for (int c = 0; c < tree_.up_columns(1) && static_cast<int>(one_group->links.size()) < columns;
       ++c)
    if (cols.test(c)) one_group->links.push_back(projected.l1_link(best, c));
  one_group->shape.leaves = {1, count, 0};
  return one_group;
}

// Every projected server is its ports on every rail, every projected column the rails' own.
Placement RailProjection::to_rails(const Placement& found) const {
  const FatTree& projected = *projected_;
  std::vector<const RailGroup*> group_at(projected.num_leaves(), nullptr);
  for (const RailGroup* g : groups_) group_at[g->projected_leaf] = g;
  Placement out;
  for (HostId h : found.hosts)
    for (HostId port : servers_[server_at_[h]]) out.hosts.push_back(port);
  for (LinkId l : found.links) {
    const int sw = projected.link_switch(l);
    const int column = projected.link_column(l);
    if (projected.link_level(l) == 2) {
      for (int real : real_l2_columns(column)) out.links.push_back(tree_.l2_link(sw, real));
      continue;
    }
    for (int real : group_at[sw]->leaves) out.links.push_back(tree_.l1_link(real, column));
  }
  std::sort(out.hosts.begin(), out.hosts.end());
  std::sort(out.links.begin(), out.links.end());
  out.shape = found.shape;
  out.shape.rails = rails_;
  return out;
}

}  // namespace

PlaceResult place_on_rail_projection(const LinkState& state,
                                     const std::vector<std::vector<HostId>>& servers, int count) {
  const int rails = rail_count(servers);
  if (rails < 2) return {std::nullopt, "no servers with several ports"};
  RailProjection projection(state, servers, rails);
  if (!projection.find_groups()) return {std::nullopt, "no rail groups"};
  if (std::string bad = projection.project(); !bad.empty()) return {std::nullopt, bad};
  projection.open_shadow();
  const LinkState& shadow = projection.shadow();
  if (shadow.free_hosts() < count)
    return {std::nullopt, "only " + std::to_string(shadow.free_hosts()) + " whole servers of " +
                              std::to_string(rails) + " rails are free in rail groups"};
  PlaceResult found{projection.place_on_one_group(count), ""};
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
  return {projection.to_rails(*found.placement), ""};
}

}  // namespace laas::allocator
