#include "routing/route_input.h"

#include <algorithm>

namespace laas::routing::phases {

RouteInput::RouteInput(const FatTree& tree, const RoutingRequest& request,
                       std::vector<std::string>& warnings)
    : t(tree),
      req(request),
      h(tree.height()),
      up1(tree.up_columns(1)),
      up2(tree.up_columns(2)),
      p2(tree.p(2)),
      p3(h == 3 ? tree.p(3) : 1),
      w3(h == 3 ? tree.w(3) : 1),
      l2_per_pod(tree.switches_per_pod(2)) {
  for (int level = 0; level <= h; ++level) {
    up_cols[level] = level >= 1 ? tree.up_columns(level) : 0;
    par[level] = level >= 1 ? tree.p(level) : 1;
  }
  host_class.assign(t.num_hosts(), kFree);
  owner.assign(t.total_links(), kFree);
  faulty.assign(t.total_links(), 0);
  mgmt_leaf.assign(t.num_leaves(), 0);
  check_faulty_links();
  check_management();
  for (int ti = 0; ti < static_cast<int>(req.tenants.size()); ++ti) check_tenant(ti, warnings);
}

void RouteInput::check_faulty_links() {
  for (LinkId l : req.faulty_links) {
    if (l < 0 || l >= t.total_links())
      throw RoutingError("faulty link " + std::to_string(l) + " is not a link of " +
                         t.spec().text());
    faulty[l] = 1;
  }
}

void RouteInput::check_management() {
  for (HostId host : req.management_hosts) {
    if (host < 0 || host >= t.num_hosts())
      throw RoutingError("management host " + std::to_string(host) + " is not in the tree");
    host_class[host] = kManagement;
    mgmt_leaf[t.leaf_of_host(host)] = 1;
  }
  for (const auto& [level, index] : req.management_switches) {
    if (level < 1 || level > h || index < 0 || index >= t.num_switches(level))
      throw RoutingError("management switch (" + std::to_string(level) + "," +
                         std::to_string(index) + ") is not in the tree");
    if (level == 1) mgmt_leaf[index] = 1;
  }
}

void RouteInput::check_tenant(int ti, std::vector<std::string>& warnings) {
  const int hosts = t.num_hosts();
  const int links = t.total_links();
  const auto& tenant = req.tenants[ti];
  for (HostId host : tenant.placement.hosts) {
    if (host < 0 || host >= hosts)
      throw RoutingError("tenant " + tenant.key + ": host " + std::to_string(host) +
                         " is not in the tree");
    if (host_class[host] == kManagement)
      throw RoutingError("tenant " + tenant.key + ": host " + t.host_name(host) +
                         " is a management host");
    if (host_class[host] != kFree)
      throw RoutingError("tenant " + tenant.key + ": host " + t.host_name(host) +
                         " is also held by tenant " + req.tenants[host_class[host]].key);
    host_class[host] = ti;
  }
  int held_faulty = 0;
  for (LinkId l : tenant.placement.links) {
    if (l < 0 || l >= links)
      throw RoutingError("tenant " + tenant.key + ": link " + std::to_string(l) +
                         " is not in the tree");
    if (owner[l] != kFree)
      throw RoutingError("tenant " + tenant.key + ": link " + std::to_string(l) +
                         " is also held by tenant " +
                         (owner[l] >= 0 ? req.tenants[owner[l]].key : "(idle)"));
    owner[l] = ti;
    held_faulty += faulty[l];
  }
  for (LinkId l : tenant.placement.idle) {
    if (l < 0 || l >= links || owner[l] != kFree)
      throw RoutingError("tenant " + tenant.key + ": idle link " + std::to_string(l) +
                         " is outside the tree or held twice");
    owner[l] = kIdle;
  }
  if (held_faulty > 0)
    warnings.push_back("tenant " + tenant.key + " holds " + std::to_string(held_faulty) +
                       " faulty link(s); its routes avoid them");
}

int RouteInput::main_up_owner(int level, int sw) const {
  std::vector<int> held(req.tenants.size(), 0);
  int best = kNobody;
  for (int c = 0; c < (level == 1 ? up1 : up2); ++c) {
    const LinkId l = level == 1 ? t.l1_link(sw, c) : t.l2_link(sw, c);
    if (faulty[l] || owner[l] < 0) continue;
    if (++held[owner[l]] > (best == kNobody ? 0 : held[best])) best = owner[l];
  }
  return best;
}

int RouteInput::thread_count(int work_items) const {
  return std::max(1, std::min(routing_threads(req.threads), work_items));
}

namespace {

// One leaf's entries of `links`: its single owner, and (a management leaf) which of its open
// up-links carry management traffic.
void choose_for_leaf(const RouteInput& in, int leaf, ManagementLinks& m) {
  const FatTree& t = in.t;
  bool others = false, mixed = false;
  int owner = kNobody;
  for (int slot = 0; slot < t.hosts_per_leaf(); ++slot) {
    const int c = in.host_class[t.host_at(leaf, slot)];
    if (c == kManagement) continue;
    others = true;
    if (owner == kNobody) owner = c;
    if (owner != c) mixed = true;
  }
  if (!mixed && owner >= 0) m.single_owner[leaf] = owner;
  if (mixed) {
    // A shared leaf: its management traffic may only fall back on one tenant's links
    // (the one holding most of them); the drop keeps everyone else off them, so they
    // reach off-leaf management only over open up-links (the audit says when none).
    m.single_owner[leaf] = in.main_up_owner(1, leaf);
  }
  if (!in.mgmt_leaf[leaf]) return;
  int open = 0;
  for (int c = 0; c < in.up1; ++c) {
    const LinkId l = t.l1_link(leaf, c);
    if (in.faulty[l] || in.owner[l] != kFree) continue;
    if (!others || open % 2 == 0)
      m.mgmt_cols[leaf].set(c);
    else
      m.not_mgmt[leaf].set(c);
    ++open;
  }
  if (others) m.block[leaf] = m.mgmt_cols[leaf];
  for (int c = 0; c < in.up1; ++c)
    if (!m.mgmt_cols[leaf].test(c)) m.beside_mgmt[leaf].set(c);
}

}  // namespace

ManagementLinks choose_management_links(const RouteInput& in) {
  const FatTree& t = in.t;
  const int leaves = t.num_leaves();
  ManagementLinks m;
  m.mgmt_cols.assign(leaves, ColumnSet());
  m.block.assign(leaves, ColumnSet());
  m.not_mgmt.assign(leaves, ColumnSet());
  m.beside_mgmt.assign(leaves, ColumnSet());
  m.single_owner.assign(leaves, kNobody);
  for (int leaf = 0; leaf < leaves; ++leaf) choose_for_leaf(in, leaf, m);
  m.owner_cols.assign(leaves, ColumnSet());
  for (int leaf = 0; leaf < leaves; ++leaf)
    for (int c = 0; c < in.up1 && m.single_owner[leaf] >= 0; ++c)
      if (in.owner[t.l1_link(leaf, c)] == m.single_owner[leaf]) m.owner_cols[leaf].set(c);
  m.l2_owner.assign(t.num_switches(2), kNobody);
  if (in.h == 3)
    for (int sw = 0; sw < t.num_switches(2); ++sw) m.l2_owner[sw] = in.main_up_owner(2, sw);
  return m;
}

}  // namespace laas::routing::phases
