// plan_incremental: which columns of the tables an incremental run computes again (incremental.h
// says why each input determines the columns it does).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "routing/table_computation.h"

namespace laas::routing::phases {

namespace {

template <class T>
std::vector<T> sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v;
}

bool same_placement(const allocator::Placement& a, const allocator::Placement& b) {
  return a.hosts == b.hosts && a.links == b.links && a.idle == b.idle;
}

// Why every column is computed again (inputs every column reads: any change there may move
// any route), or nullptr.
const char* full_reason(const RouteInput& now, const ManagementLinks& now_mgmt,
                        const RouteInput& before, const ManagementLinks& before_mgmt) {
  if (now.req.tenants_only || before.req.tenants_only) return "a tenants-only request";
  if (now.faulty != before.faulty) return "the faulty links changed";
  if (sorted(now.req.management_hosts) != sorted(before.req.management_hosts))
    return "the management hosts changed";
  if (sorted(now.req.management_switches) != sorted(before.req.management_switches))
    return "the management switches changed";
  // The management leaves' up-links are the sources of every ordinary job.
  if (now_mgmt.block != before_mgmt.block || now_mgmt.not_mgmt != before_mgmt.not_mgmt ||
      now_mgmt.beside_mgmt != before_mgmt.beside_mgmt)
    return "a management leaf's up-links changed";
  // Tenants are matched by name; their indices shift as others come and go.
  for (const RouteInput* in : {&before, &now}) {
    std::map<std::string, int> index;
    for (int i = 0; i < static_cast<int>(in->req.tenants.size()); ++i)
      if (!index.emplace(in->req.tenants[i].key, i).second) return "two tenants of one name";
  }
  return nullptr;
}

// A tenant added, removed or changed: its hosts' columns (its own routes to them). The others
// are matched with their index in `before` (p.same_as).
void mark_tenants(const RouteInput& now, const RouteInput& before, IncrementalPlan& p) {
  const FatTree& t = now.t;
  std::map<std::string, int> old_index;
  for (int i = 0; i < static_cast<int>(before.req.tenants.size()); ++i)
    old_index.emplace(before.req.tenants[i].key, i);
  auto mark_hosts = [&](const allocator::Placement& placement) {
    for (HostId h : placement.hosts) p.dirty_leaf[t.leaf_of_host(h)] = 1;
  };
  p.same_as.assign(now.req.tenants.size(), -1);
  std::vector<char> kept(before.req.tenants.size(), 0);
  for (int i = 0; i < static_cast<int>(now.req.tenants.size()); ++i) {
    const auto found = old_index.find(now.req.tenants[i].key);
    if (found != old_index.end() &&
        same_placement(now.req.tenants[i].placement, before.req.tenants[found->second].placement)) {
      p.same_as[i] = found->second;
      kept[found->second] = 1;
    } else {
      mark_hosts(now.req.tenants[i].placement);
    }
  }
  for (int i = 0; i < static_cast<int>(before.req.tenants.size()); ++i)
    if (!kept[i]) mark_hosts(before.req.tenants[i].placement);
}

// Owners (of hosts and links) compared by tenant name, the other classes as they are.
bool same_owner(const RouteInput& now, const RouteInput& before, int owner_now, int owner_then) {
  if (owner_now >= 0 && owner_then >= 0)
    return now.req.tenants[owner_now].key == before.req.tenants[owner_then].key;
  return owner_now == owner_then;
}

// A link of another owner: the ordinary routes to the hosts of its leaf (the only leaf whose
// columns read a non-management leaf's up-links), and the routes to switches when it
// turned open or closed to management traffic.
void mark_links(const RouteInput& now, const RouteInput& before, IncrementalPlan& p) {
  const FatTree& t = now.t;
  for (LinkId l = 0; l < t.total_links(); ++l) {
    const int owner_now = now.owner[l], then = before.owner[l];
    if (same_owner(now, before, owner_now, then)) continue;
    if (t.link_level(l) == 2) {
      // An up-link of level-2 switch s of pod q. route_leaf reads s's up-links (allowed()
      // masks, main owner) for the hosts of q (going down from the top switches: their
      // columns are computed again), and for the hosts of every other pod only in the
      // choices it writes at s itself and, through whether s still leads up towards the
      // destination, at the source leaves of q: those hosts' entries at q's leaves and
      // level-2 switches are computed again (level2_pod), nothing else of their columns.
      const int q = t.pod_of_level2(t.link_switch(l));
      p.level2_pod[q] = 1;
      for (int i = 0; i < t.leaves_per_pod(); ++i) p.dirty_leaf[q * t.leaves_per_pod() + i] = 1;
    } else if (now.mgmt_leaf[t.link_switch(l)]) {
      // Every ordinary job reads the management leaves' up-links: then every host's column
      // is computed again (the routes to switches may still be kept).
      std::fill(p.dirty_leaf.begin(), p.dirty_leaf.end(), 1);
    } else {
      p.dirty_leaf[t.link_switch(l)] = 1;
    }
    if ((owner_now == kFree) != (then == kFree) || (owner_now >= 0) != (then >= 0))
      p.switches = true;
  }
}

}  // namespace

IncrementalPlan plan_incremental(const RouteInput& now, const ManagementLinks& now_mgmt,
                                 const RouteInput& before, const ManagementLinks& before_mgmt) {
  IncrementalPlan p;
  if (const char* why = full_reason(now, now_mgmt, before, before_mgmt)) {
    p.full = true;
    p.why = why;
    return p;
  }
  const FatTree& t = now.t;
  p.dirty_leaf.assign(t.num_leaves(), 0);
  p.level2_pod.assign(t.num_pods(), 0);
  mark_tenants(now, before, p);
  // A host of another class: its leaf's ordinary jobs group the leaf's hosts by class.
  for (HostId h = 0; h < t.num_hosts(); ++h)
    if (!same_owner(now, before, now.host_class[h], before.host_class[h]))
      p.dirty_leaf[t.leaf_of_host(h)] = 1;
  mark_links(now, before, p);
  // Management hosts are reached from every leaf, over whatever the leaves' owners leave
  // open: their columns read every leaf, so they are always computed again (they are few).
  for (HostId h : now.req.management_hosts) p.dirty_leaf[t.leaf_of_host(h)] = 1;
  p.full = false;
  return p;
}

}  // namespace laas::routing::phases
