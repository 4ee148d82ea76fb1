// The audit's checks with the SL2VL tables read back: the tables against the first-hop drop
// plan, and every (source host, destination) pair traced through LFTs and SL2VL tables.
#include <cstdio>

#include "routing/audit_checks.h"

namespace laas::routing::auditing {

namespace {

std::string hex16(std::uint16_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", m);
  return buf;
}

}  // namespace

// ---- SL2VL ---------------------------------------------------------------------------
Sl2VlInput AuditChecks::sl2vl_input() const {
  Sl2VlInput si;
  si.fabric = &f_;
  si.embedding = &emb_;
  si.tree = &t_;
  si.tables = &lft_;
  for (const auto& t : in_.tenants) si.tenants.push_back(t.placement);
  si.management_hosts = in_.management_hosts;
  si.management_nodes = in_.management_nodes;
  for (const auto& q : in_.unaccepted) si.unaccepted_hosts.push_back(q.host);
  si.closed_attached = in_.closed_attached;
  return si;
}

std::string AuditChecks::port_text(int node, int port) const {
  return f_.nodes[node].name + " port " + std::to_string(port);
}

// The tables read back against the plan computed from the same forwarding tables: VL15
// exactly at the cross-owner pairs that are no management exemption (and at the management
// up-links). Only cabled ports count: OpenSM leaves the tables of down ports alone.
void AuditChecks::check_sl2vl_plan() {
  const Sl2VlPlan plan = plan_sl2vl(sl2vl_input());
  owners_ = plan.owners;
  const Sl2VlTables& got = *in_.sl2vl;
  long compared = 0, dropped = 0, cross = 0;
  for (std::size_t n = 0; n < f_.nodes.size(); ++n) {
    const int node = static_cast<int>(n);
    if (!plan.tables.has(node)) continue;
    const auto& ports = f_.nodes[n].ports;
    const int np = plan.tables.ports[node];
    if (!got.has(node)) {
      add(FindingKind::kSl2VlMismatch, "", f_.nodes[n].name, "",
          "no SL2VL table was read from this switch");
      continue;
    }
    for (int o = 1; o < np; ++o) {
      if (ports[o].peer_node < 0) continue;
      for (int i = 0; i < np; ++i) {
        if (i > 0 && ports[i].peer_node < 0) continue;
        ++compared;
        const bool want = plan.tables.mask(node, i, o) == kAllSls;
        const std::uint16_t m = got.mask(node, i, o);
        const bool is = m == kAllSls;
        dropped += is;
        const auto& oi = owners_[n][i];
        const auto& oo = owners_[n][o];
        if (oo.cls == PortClass::kTenant && oi.cls != PortClass::kManagement &&
            !(oi.cls == PortClass::kTenant && oi.tenant == oo.tenant))
          ++cross;
        if (want != is || (m != 0 && m != kAllSls))
          add(FindingKind::kSl2VlMismatch,
              oo.cls == PortClass::kTenant ? class_name(oo.tenant) : "", f_.nodes[n].name, "",
              "in " + std::to_string(i) + " out " + std::to_string(o) + ": " +
                  (want ? "expected every SL on VL15" : "expected no SL on VL15") +
                  ", read back mask 0x" + hex16(m));
      }
    }
  }
  for (const auto& e : plan.exemptions) {
    const std::string line = "management exemption: " + f_.nodes[e.node].name + " in " +
                             std::to_string(e.in_port) + " (" + owner_text(e.node, e.in_port) +
                             ") -> out " + std::to_string(e.out_port) + " (" +
                             owner_text(e.node, e.out_port) + ")";
    rep_.exemptions.push_back(line);
    add(FindingKind::kExemption, class_name(e.tenant), f_.nodes[e.node].name, "", line);
  }
  for (const auto& [node, port] : plan.mgmt_links)
    rep_.exemptions.push_back("management up-link (only management ports may use it): " +
                              port_text(node, port));
  rep_.figures["sl2vl_pairs_compared"] = compared;
  rep_.figures["sl2vl_pairs_dropped"] = dropped;
  rep_.figures["sl2vl_cross_owner_pairs"] = cross;
  rep_.figures["sl2vl_exemptions"] = static_cast<long>(plan.exemptions.size());
  rep_.figures["sl2vl_management_uplinks"] = static_cast<long>(plan.mgmt_links.size());
}

std::string AuditChecks::owner_text(int node, int port) const {
  if (port >= static_cast<int>(owners_[node].size())) return "?";
  const auto& o = owners_[node][port];
  switch (o.cls) {
    case PortClass::kManagement:
      return "management";
    case PortClass::kFreeHost:
      return "free host";
    case PortClass::kOpenLink:
      return "open link";
    case PortClass::kTenant:
      return "tenant " + in_.tenants[o.tenant].name;
    case PortClass::kNone:
      break;
  }
  return "outside the tree";
}

// Every (source host, destination host) pair and every host to every switch, through the
// LFTs and the SL2VL tables, from the host's own leaf port.
void AuditChecks::check_host_pairs() {
  std::vector<HostId> present;
  for (HostId h = 0; h < t_.num_hosts(); ++h)
    if (emb_.host_node[h] >= 0) present.push_back(h);
  PairCounts c;
  c.cable_owner.assign(t_.total_links(), kNoOwner);
  c.cable_bad.assign(t_.total_links(), 0);
  std::vector<HostId> sources = present;
  const int cap = opt_.max_pair_sources;
  if (cap > 0 && static_cast<int>(present.size()) > cap) {
    sources.clear();
    for (int i = 0; i < cap; ++i)
      sources.push_back(present[static_cast<std::size_t>(i) * present.size() / cap]);
    rep_.figures["host_pair_sources_sampled"] = cap;
  }
  for (HostId s : sources) check_pairs_from(s, present, c);
  // The SM on a switch reaches every host from its port 0.
  for (int node : mgmt_switches_)
    for (HostId d : present) {
      const int dnode = emb_.host_node[d];
      ++c.mgmt;
      const PairTrace r = trace_sl(node, 0, f_.lid_of(dnode), dnode, nullptr);
      if (!r.delivered)
        add(mgmt_unreached(node, leaf_node(t_.leaf_of_host(d))), class_name(host_class_[d]),
            f_.nodes[node].name, f_.nodes[dnode].name, r.where);
    }
  long shared = 0;
  for (char b : c.cable_bad) shared += b;
  rep_.figures["host_pairs_traced"] = c.pairs;
  rep_.figures["cross_tenant_pairs"] = c.cross;
  rep_.figures["cross_tenant_dropped_at_first_switch"] = c.cross_dropped_first;
  rep_.figures["intra_tenant_pairs"] = c.intra;
  rep_.figures["pairs_to_free_hosts"] = c.to_free;
  rep_.figures["pairs_to_free_hosts_dropped_at_first_switch"] = c.to_free_dropped_first;
  rep_.figures["management_pairs"] = c.mgmt;
  rep_.figures["cables_with_two_owners"] = shared;
}

// Host s to every present host, then to every switch (management destinations).
void AuditChecks::check_pairs_from(HostId s, const std::vector<HostId>& present, PairCounts& c) {
  const auto ref = t_.host_peer(s);
  const int leaf = emb_.switch_node[0][ref.index];
  if (leaf < 0) return;
  const int in = emb_.port_map[0][ref.index][ref.port];
  const int x = host_class_[s];
  const std::string sname = f_.nodes[emb_.host_node[s]].name;
  for (HostId d : present)
    if (d != s) check_pair(leaf, in, x, sname, d, c);
  for (int level = 1; level <= t_.height(); ++level)
    for (int i = 0; i < t_.num_switches(level); ++i) {
      const int target = emb_.switch_node[level - 1][i];
      if (target < 0) continue;
      ++c.mgmt;
      const PairTrace r = trace_sl(leaf, in, f_.lid_of(target), target, nullptr);
      if (!r.delivered)
        add(mgmt_unreached(leaf, target), class_name(x), sname, f_.nodes[target].name, r.where);
    }
}

// One pair, from a host of class x entering `leaf` through port `in`, to host d.
void AuditChecks::check_pair(int leaf, int in, int x, const std::string& sname, HostId d,
                             PairCounts& c) {
  const int y = host_class_[d];
  const int dnode = emb_.host_node[d];
  const std::string dname = f_.nodes[dnode].name;
  ++c.pairs;
  const PairTrace r = trace_sl(leaf, in, f_.lid_of(dnode), dnode, &c.hops);
  if (x == kMgmtClass || y == kMgmtClass) {
    ++c.mgmt;
    if (!r.delivered)
      add(mgmt_unreached(leaf, leaf_node(t_.leaf_of_host(d))), class_name(x == kMgmtClass ? y : x),
          sname, dname, r.where);
    return;
  }
  if (x == y && x != kFreeClass) {
    ++c.intra;
    if (!r.delivered) {
      // A degraded tenant's pair with no path on its own links that are up is dropped by
      // design (never routed over another owner's links): a note, as in the LFT walk.
      if (x >= 0 && !private_reaches(x, leaf, d))
        add(FindingKind::kDegradedUnreachable, class_name(x), sname, dname,
            r.where + "; no path on the tenant's own links that are up");
      else
        add(x == kFreeClass ? FindingKind::kFreeUnreachable : FindingKind::kIntraTenantUnreachable,
            class_name(x), sname, dname, r.where);
      return;
    }
    note_shared_cables(x, sname, dname, c);
    return;
  }
  if (y >= 0) {
    ++c.cross;
    if (r.left_first_switch)
      add(FindingKind::kCrossTenantSurvives, class_name(y), sname, dname,
          (r.delivered ? "delivered" : "passes " + f_.nodes[leaf].name + ", then " + r.where));
    else
      ++c.cross_dropped_first;
  } else {
    // The free pool is closed: a free host's port is reached from management only.
    ++c.to_free;
    if (!r.delivered && !r.left_first_switch)
      ++c.to_free_dropped_first;
    else
      add(FindingKind::kFreeHostReachable, class_name(x), sname, dname,
          r.delivered ? "delivered" : "passes " + f_.nodes[leaf].name + ", then " + r.where);
  }
}

// The cables an intra-tenant pair of owner x crossed (c.hops): a cable carrying the own
// traffic of two owners is reported once.
void AuditChecks::note_shared_cables(int x, const std::string& sname, const std::string& dname,
                                     PairCounts& c) {
  for (const Hop& h : c.hops) {
    const int l =
        h.port < static_cast<int>(port_link_[h.node].size()) ? port_link_[h.node][h.port] : -1;
    if (l < 0) continue;
    if (c.cable_owner[l] == kNoOwner) c.cable_owner[l] = x;
    if (c.cable_owner[l] != x && !c.cable_bad[l]) {
      c.cable_bad[l] = 1;
      add(FindingKind::kSharedCable, class_name(x), sname, dname,
          "the cable at " + port_text(h.node, h.port) + " also carries " +
              (c.cable_owner[l] == kFreeClass ? std::string("free hosts'")
                                              : in_.tenants[c.cable_owner[l]].name + "'s") +
              " own traffic");
    }
  }
}

}  // namespace laas::routing::auditing
