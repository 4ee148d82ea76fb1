#include "allocator/link_state.h"

#include <algorithm>
#include <cassert>
#include <map>

namespace laas::allocator {

std::string Shape::text() const {
  auto level = [](const ShapeLevel& s) {
    std::string t = std::to_string(s.q) + "x" + std::to_string(s.d);
    if (s.r > 0) t += "+" + std::to_string(s.r);
    return t;
  };
  if (rails > 1)
    return level(leaves) + " servers per leaf on each of " + std::to_string(rails) + " rails" +
           (pods.q ? ", across pods" : "");
  if (pods.q == 0) return level(leaves) + " hosts per leaf";
  return level(pods) + " whole leaves per pod, " + level(leaves) + " hosts per leaf";
}

Shape shape_of(const FatTree& tree, const std::vector<HostId>& hosts) {
  std::map<int, int> per_leaf, per_pod;
  for (HostId h : hosts) ++per_leaf[tree.leaf_of_host(h)];
  for (const auto& [leaf, n] : per_leaf) ++per_pod[tree.pod_of_leaf(leaf)];
  auto describe = [](const std::map<int, int>& counts) {
    ShapeLevel s;
    for (const auto& [unit, n] : counts) s.d = std::max(s.d, n);
    for (const auto& [unit, n] : counts) (n == s.d ? s.q : s.r) += n == s.d ? 1 : n;
    return s;
  };
  Shape shape;
  shape.leaves = describe(per_leaf);
  if (per_pod.size() > 1) shape.pods = describe(per_pod);
  return shape;
}

LinkState::LinkState(const FatTree& tree)
    : tree_(&tree),
      host_owner_(tree.num_hosts(), kFree),
      link_owner_(tree.total_links(), kFree),
      faulty_(tree.total_links(), false),
      down_(tree.num_hosts(), false),
      free_slots_(tree.num_leaves()),
      free_l1_(tree.num_leaves()),
      free_l2_(tree.height() == 3 ? tree.num_switches(2) : 0),
      free_on_leaf_(tree.num_leaves(), tree.hosts_per_leaf()),
      free_in_pod_(tree.num_pods(), tree.hosts_per_leaf() * tree.leaves_per_pod()),
      release_epoch_(tree.num_pods(), 0),
      free_l1_count_(tree.num_leaves(), tree.up_columns(1)),
      free_l2_count_(tree.height() == 3 ? tree.num_switches(2) : 0, tree.up_columns(2)),
      leaf_cap_(tree.num_leaves(), 0),
      cap_at_least_(static_cast<size_t>(tree.num_pods()) * (tree.hosts_per_leaf() + 1), 0),
      free_hosts_(tree.num_hosts()) {
  for (auto& s : free_slots_)
    for (int i = 0; i < tree.hosts_per_leaf(); ++i) s.set(i);
  for (auto& s : free_l1_)
    for (int c = 0; c < tree.up_columns(1); ++c) s.set(c);
  for (auto& s : free_l2_)
    for (int c = 0; c < tree.up_columns(2); ++c) s.set(c);
  for (int pod = 0; pod < tree.num_pods(); ++pod)
    cap_at_least_[pod * (tree.hosts_per_leaf() + 1)] = tree.leaves_per_pod();
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) refresh_capacity(leaf);
}

void LinkState::refresh_capacity(int leaf) {
  const int cap = std::min(free_on_leaf_[leaf], free_l1_count_[leaf] * tree_->slimming_divisor(1));
  int& old = leaf_cap_[leaf];
  if (cap == old) return;
  int* counts = &cap_at_least_[tree_->pod_of_leaf(leaf) * (tree_->hosts_per_leaf() + 1)];
  for (int h = old + 1; h <= cap; ++h) ++counts[h];  // grew: now counted for old+1..cap
  for (int h = cap + 1; h <= old; ++h) --counts[h];  // shrank
  old = cap;
}

bool LinkState::leaf_wholly_free(int leaf) const {
  return free_on_leaf_[leaf] == tree_->hosts_per_leaf() &&
         free_l1_count_[leaf] == tree_->up_columns(1);
}

bool LinkState::can_assign(const Placement& p, std::string* why) const {
  if (!can_hold(p, why)) return false;
  for (HostId h : p.hosts)
    if (down_[h]) {
      if (why) *why = tree_->host_name(h) + " is down";
      return false;
    }
  for (const auto* links : {&p.links, &p.idle})
    for (LinkId l : *links)
      if (faulty_[l]) {
        const auto lo = tree_->link_lower(l);
        if (why)
          *why = tree_->switch_name(lo.level, lo.index) + " port " + std::to_string(lo.port) +
                 " is faulty";
        return false;
      }
  return true;
}

bool LinkState::can_hold(const Placement& p, std::string* why) const {
  for (HostId h : p.hosts) {
    if (h < 0 || h >= tree_->num_hosts()) {
      if (why) *why = "host index " + std::to_string(h) + " is outside the tree";
      return false;
    }
    if (host_owner_[h] != kFree) {
      if (why) *why = tree_->host_name(h) + " is already allocated";
      return false;
    }
  }
  std::vector<char> seen(tree_->total_links(), 0);
  for (const auto* links : {&p.links, &p.idle})
    for (LinkId l : *links) {
      if (l < 0 || l >= tree_->total_links()) {
        if (why) *why = "link index " + std::to_string(l) + " is outside the tree";
        return false;
      }
      const auto lo = tree_->link_lower(l);
      const std::string where =
          tree_->switch_name(lo.level, lo.index) + " port " + std::to_string(lo.port);
      if (link_owner_[l] != kFree || seen[l]) {
        if (why) *why = where + " is already allocated";
        return false;
      }
      seen[l] = 1;
    }
  return true;
}

void LinkState::refresh_link(LinkId l) {
  const bool is_free = link_owner_[l] == kFree && !faulty_[l];
  const int sw = tree_->link_switch(l);
  const int col = tree_->link_column(l);
  auto& set = tree_->link_level(l) == 1 ? free_l1_[sw] : free_l2_[sw];
  auto& count = tree_->link_level(l) == 1 ? free_l1_count_[sw] : free_l2_count_[sw];
  const bool changed = set[col] != is_free;
  if (changed) count += is_free ? 1 : -1;
  set[col] = is_free;
  if (changed && tree_->link_level(l) == 1) refresh_capacity(sw);
}

void LinkState::refresh_host(HostId h) {
  const bool is_free = host_owner_[h] == kFree && !down_[h];
  const int leaf = tree_->leaf_of_host(h);
  const int slot = tree_->slot_of_host(h);
  if (free_slots_[leaf][slot] != is_free) {
    const int pod = tree_->pod_of_leaf(leaf);
    free_on_leaf_[leaf] += is_free ? 1 : -1;
    free_in_pod_[pod] += is_free ? 1 : -1;
    free_hosts_ += is_free ? 1 : -1;
    // A host back in the free pool may turn a remembered refusal into a placement.
    if (is_free) ++release_epoch_[pod];
    free_slots_[leaf][slot] = is_free;
    refresh_capacity(leaf);
  }
}

void LinkState::assign(TenantIndex tenant, const Placement& p) {
  assert(can_hold(p, nullptr));
  for (HostId h : p.hosts) {
    host_owner_[h] = tenant;
    refresh_host(h);
  }
  for (const auto* links : {&p.links, &p.idle})
    for (LinkId l : *links) {
      link_owner_[l] = tenant;
      ++allocated_links_[tree_->link_level(l) - 1];
      refresh_link(l);
    }
}

void LinkState::release(TenantIndex tenant, const Placement& p) {
  for (HostId h : p.hosts) {
    assert(host_owner_[h] == tenant);
    host_owner_[h] = kFree;
    refresh_host(h);
  }
  for (const auto* links : {&p.links, &p.idle})
    for (LinkId l : *links) {
      assert(link_owner_[l] == tenant);
      (void)tenant;
      link_owner_[l] = kFree;
      --allocated_links_[tree_->link_level(l) - 1];
      refresh_link(l);
      ++release_epoch_[pod_of_link(l)];
    }
}

int LinkState::pod_of_link(LinkId l) const {
  const int sw = tree_->link_switch(l);
  return tree_->link_level(l) == 1 ? tree_->pod_of_leaf(sw) : tree_->pod_of_level2(sw);
}

void LinkState::set_faulty(LinkId link, bool faulty) {
  if (faulty_[link] == faulty) return;
  faulty_[link] = faulty;
  faulty_count_ += faulty ? 1 : -1;
  refresh_link(link);
  if (!faulty) ++release_epoch_[pod_of_link(link)];
}

void LinkState::set_host_down(HostId host, bool down) {
  if (down_[host] == down) return;
  down_[host] = down;
  down_count_ += down ? 1 : -1;
  refresh_host(host);
}

}  // namespace laas::allocator
