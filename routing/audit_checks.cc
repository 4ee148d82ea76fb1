// The audit's checks of routes to and from hosts and switches, through the LID tables:
// unaccepted slots, servers, every host from every leaf, management, attached hosts.
#include "routing/audit_checks.h"

#include <algorithm>
#include <set>

#include "topology/servers.h"

namespace laas::routing::auditing {

AuditChecks::AuditChecks(const AuditModel& model, const AuditOptions& opt, AuditReport& report)
    : m_(model),
      in_(model.in),
      f_(model.f),
      emb_(model.emb),
      t_(model.t),
      lft_(model.lft),
      opt_(opt),
      rep_(report),
      port_link_(model.port_link),
      owner_(model.owner),
      host_class_(model.host_class),
      mgmt_leaf_(model.mgmt_leaf),
      mgmt_switches_(model.mgmt_switches),
      leaf_classes_(model.leaf_classes),
      findings_(opt, report),
      tracer_(model, report),
      paths_(model),
      private_(model),
      load_(model.f.nodes.size() * 256, 0) {}

void AuditChecks::run() {
  check_unaccepted();
  check_servers();
  check_hosts();
  check_management();
  check_attached();
  if (in_.sl2vl) {
    check_sl2vl_plan();
    check_host_pairs();
  }
  for (int ti = 0; ti < static_cast<int>(in_.tenants.size()); ++ti) balance(ti);
}

// Every unaccepted slot is reported, and no switch may have an entry for the
// newcomer's LID (OpenSM's "no route", 0xFF, everywhere).
void AuditChecks::check_unaccepted() {
  long checked = 0;
  for (const auto& q : in_.unaccepted) {
    add(FindingKind::kUnacceptedHost, q.tenant, q.name, "", q.detail);
    if (q.lid == 0) continue;
    for (std::size_t n = 0; n < f_.nodes.size(); ++n) {
      const auto& table = lft_[n];
      if (!f_.nodes[n].is_switch || table.empty()) continue;
      ++checked;
      if (q.lid < table.size() && table[q.lid] != kNoRoute)
        add(FindingKind::kUnacceptedHostRouted, q.tenant, f_.nodes[n].name, q.name,
            f_.nodes[n].name + " routes LID " + std::to_string(q.lid) + " (" + q.name +
                ", unaccepted) to port " + std::to_string(table[q.lid]));
    }
  }
  if (!in_.unaccepted.empty()) {
    const long hosts = static_cast<long>(in_.unaccepted.size());
    rep_.figures["unaccepted_hosts"] = hosts;
    rep_.figures["unaccepted_lid_entries_checked"] = checked;
    // The names of the release before, for the readers that still parse them.
    rep_.figures["quarantined_hosts"] = hosts;
    rep_.figures["quarantined_lid_entries_checked"] = checked;
  }
}

// Every server is wholly one tenant's or no tenant's, servers being what the service places
// (the one grouping: recorded names, multi-port CAs, the administrator's map).
void AuditChecks::check_servers() {
  const auto servers = topology::group_servers(t_, emb_, f_, in_.layout, in_.server_map);
  for (int s = 0; s < servers.count(); ++s) {
    const auto& ports = servers.ports[s];
    auto tenant_of = [&](HostId h) { return host_class_[h] >= 0 ? host_class_[h] : -1; };
    std::set<int> owners;
    for (HostId h : ports) owners.insert(tenant_of(h));
    if (owners.size() < 2) continue;
    std::string detail;
    for (HostId h : ports) {
      const int o = tenant_of(h);
      const int node = emb_.host_node[h];
      detail += (detail.empty() ? "" : ", ") + (node >= 0 ? f_.nodes[node].name : t_.host_name(h)) +
                ": " + (o >= 0 ? in_.tenants[o].name : std::string("no tenant"));
    }
    const int first = *std::max_element(owners.begin(), owners.end());
    add(FindingKind::kServerSplit, first >= 0 ? in_.tenants[first].name : "", servers.names[s], "",
        "server " + servers.names[s] + " is split: " + detail);
  }
}

void AuditChecks::check_hosts() {
  std::vector<Hop> hops;
  for (HostId d = 0; d < t_.num_hosts(); ++d) {
    if (!present(d)) continue;
    const int cls = host_class_[d];
    const int dnode = emb_.host_node[d];
    const topology::Lid lid = f_.lid_of(dnode);
    const int ld = t_.leaf_of_host(d);
    const std::string dname = f_.nodes[dnode].name;
    const std::string tenant = class_name(cls);
    for (int leaf = 0; leaf < t_.num_leaves(); ++leaf) {
      // intra: hosts of d's own tenant other than d; allowed: anyone who may reach d (intra,
      // management hosts or an SM on this leaf, anyone if d is management); other: hosts that
      // may not reach d -- for a free d every host but management (the free pool is
      // closed).
      bool intra = false, other = false, any = false;
      for (int c : leaf_classes_[leaf]) {
        any = true;
        if (c == kMgmtClass || cls == kMgmtClass) continue;
        if (c == cls && cls != kFreeClass)
          intra = intra || leaf != ld || count_class_on_leaf(leaf, cls) > 1;
        else
          other = true;
      }
      const bool mgmt = mgmt_leaf_[leaf] != 0 || (cls == kMgmtClass && any);
      if (!intra && !mgmt && !other) continue;
      const int node = leaf_node(leaf);
      if (node < 0) continue;
      const std::string sname = f_.nodes[node].name;
      const Outcome o = trace(node, lid, dnode, &hops);
      if (o == Outcome::kLoop || o == Outcome::kDeadEnd || o == Outcome::kTooLong) {
        add(FindingKind::kLoop, tenant, sname, dname, outcome_text(o));
        continue;
      }
      if (o == Outcome::kDelivered) {
        if (static_cast<int>(hops.size()) > minimal_hops(leaf, ld))
          add(FindingKind::kOverlong, tenant, sname, dname,
              std::to_string(hops.size()) + " hops, minimal " +
                  std::to_string(minimal_hops(leaf, ld)));
        if (intra) check_links(cls, hops, tenant, sname, dname);
        if (other && !in_.sl2vl) {  // with SL2VL, check_host_pairs() decides
          if (intra || mgmt || leaf == ld)
            add(FindingKind::kSharedLeaf, tenant, sname, dname,
                "hosts that may not reach " + dname + " share " + sname +
                    " with hosts that may; only partition keys separate them");
          else
            add(FindingKind::kCrossRoute, tenant, sname, dname,
                "no host on " + sname + " may reach " + dname + " but the route exists");
        }
        continue;
      }
      if (intra && cls >= 0 && !private_reaches(cls, leaf, d))
        add(FindingKind::kDegradedUnreachable, tenant, sname, dname,
            std::string(outcome_text(o)) + "; no path on the tenant's own links that are up");
      else if (intra)
        add(cls == kFreeClass ? FindingKind::kFreeUnreachable
                              : FindingKind::kIntraTenantUnreachable,
            tenant, sname, dname, outcome_text(o));
      else if (mgmt)
        add(mgmt_unreached(node, leaf_node(ld)), tenant, sname, dname, outcome_text(o));
    }
  }
}

void AuditChecks::check_links(int cls, const std::vector<Hop>& hops, const std::string& tenant,
                              const std::string& src, const std::string& dst) {
  for (const Hop& h : hops) {
    const int l =
        h.port < static_cast<int>(port_link_[h.node].size()) ? port_link_[h.node][h.port] : -1;
    if (l < 0) continue;  // the last hop to the host
    if (owner_[l] == cls) continue;
    const std::string where = f_.nodes[h.node].name + " port " + std::to_string(h.port);
    if (cls >= 0)
      add(FindingKind::kTenantRouteEscapes, tenant, src, dst,
          "uses " + where +
              (owner_[l] == kFreeClass ? " (a free link)"
                                       : " (held by " + in_.tenants[owner_[l]].name + ")"));
    else
      add(FindingKind::kFreeRouteOnTenantLink, in_.tenants[owner_[l]].name, src, dst,
          "a free-host route uses " + where);
    return;
  }
}

void AuditChecks::check_management() {
  // Every host's leaf reaches every switch; management switches reach every host and switch.
  std::vector<int> leaves_with_hosts;
  for (int leaf = 0; leaf < t_.num_leaves(); ++leaf)
    if (!leaf_classes_[leaf].empty() && leaf_node(leaf) >= 0) leaves_with_hosts.push_back(leaf);
  for (int level = 1; level <= t_.height(); ++level)
    for (int i = 0; i < t_.num_switches(level); ++i) {
      const int target = emb_.switch_node[level - 1][i];
      if (target < 0) continue;  // an absent switch
      const topology::Lid lid = f_.lid_of(target);
      auto check = [&](int node) {
        const Outcome o = trace(node, lid, target, nullptr);
        if (o != Outcome::kDelivered)
          add(o == Outcome::kLoop ? FindingKind::kLoop : mgmt_unreached(node, target), "",
              f_.nodes[node].name, f_.nodes[target].name, outcome_text(o));
      };
      for (int leaf : leaves_with_hosts) check(leaf_node(leaf));
      for (int node : mgmt_switches_) check(node);
    }
  for (int node : mgmt_switches_)
    for (HostId d = 0; d < t_.num_hosts(); ++d) {
      const int dnode = emb_.host_node[d];
      if (dnode < 0) continue;
      const Outcome o = trace(node, f_.lid_of(dnode), dnode, nullptr);
      if (o != Outcome::kDelivered)
        add(o == Outcome::kLoop ? FindingKind::kLoop
                                : mgmt_unreached(node, leaf_node(t_.leaf_of_host(d))),
            "", f_.nodes[node].name, f_.nodes[dnode].name, outcome_text(o));
    }
}

// Hosts attached outside the slots (storage on a spine, an SM host's second cable) serve
// everyone: every tenant and management host reaches them and is reached by them, and the
// traffic of a tenant's host uses its own links or links no tenant holds, never another's.
void AuditChecks::check_attached() {
  long pairs = 0, delivered = 0;
  for (const auto& a : emb_.attached) {
    const int at = emb_.switch_node[a.level - 1][a.index];
    const topology::Lid lid = f_.lid_of(a.node);
    if (at < 0 || lid == 0) continue;
    if (std::find(in_.closed_attached.begin(), in_.closed_attached.end(), a.node) !=
        in_.closed_attached.end()) {
      check_unlisted_attached(a, at, lid);
      continue;
    }
    const std::string name = f_.nodes[a.node].name;
    std::vector<Hop> hops;
    auto crossed = [&](int cls) -> std::string {
      for (const auto& hop : hops) {
        const LinkId l = port_link_[hop.node][hop.port];
        if (l >= 0 && owner_[l] >= 0 && owner_[l] != cls) return in_.tenants[owner_[l]].name;
      }
      return "";
    };
    for (HostId h = 0; h < t_.num_hosts(); ++h) {
      const int cls = host_class_[h];
      const int hnode = emb_.host_node[h];
      if (cls == kFreeClass || hnode < 0) continue;
      const std::string tenant = class_name(cls);
      for (bool towards : {true, false}) {
        ++pairs;
        const Outcome o = towards ? trace(leaf_node(t_.leaf_of_host(h)), lid, a.node, &hops)
                                  : trace(at, f_.lid_of(hnode), hnode, &hops);
        const std::string src = towards ? f_.nodes[hnode].name : name;
        const std::string dst = towards ? name : f_.nodes[hnode].name;
        if (o != Outcome::kDelivered) {
          add(o == Outcome::kLoop ? FindingKind::kLoop : FindingKind::kAttachedUnreachable, tenant,
              src, dst, outcome_text(o));
          continue;
        }
        ++delivered;
        if (cls < 0) continue;  // management crosses tenants' links (control traffic)
        const std::string other = crossed(cls);
        if (other.empty()) continue;
        // Down from the host's own switch there is one way to each leaf; anything else is a
        // route that could have avoided the other tenant's link.
        const LinkId first = hops.empty() ? -1 : port_link_[hops[0].node][hops[0].port];
        const bool forced = !towards && a.level == t_.height() && t_.p(a.level) == 1 &&
                            first >= 0 && owner_[first] >= 0 && owner_[first] != cls;
        add(forced ? FindingKind::kAttachedReplySharesLink : FindingKind::kAttachedCrossesTenant,
            tenant, src, dst,
            "over a link tenant " + other + " holds" +
                (forced ? " (the only way down from " + f_.nodes[at].name + ")" : ""));
      }
    }
  }
  rep_.figures["attached_hosts"] = static_cast<long>(emb_.attached.size());
  rep_.figures["attached_pairs"] = pairs;
  rep_.figures["attached_pairs_delivered"] = delivered;
}

// An attached host nobody listed is a free host: every management host reaches it; no other
// host does (its packet dies at its own first switch, for want of a route or by the first-hop
// drop); with SL2VL tables, its own packets towards any host but management die at its switch.
void AuditChecks::check_unlisted_attached(const topology::AttachedHost& a, int at,
                                          topology::Lid lid) {
  const std::string name = f_.nodes[a.node].name;
  long pairs = 0, refused = 0;
  for (HostId h = 0; h < t_.num_hosts(); ++h) {
    const int cls = host_class_[h];
    const int hnode = emb_.host_node[h];
    if (hnode < 0) continue;
    const int leaf = leaf_node(t_.leaf_of_host(h));
    const auto ref = t_.host_peer(h);
    const int in_port = emb_.port_map[0][ref.index][ref.port];
    const std::string hname = f_.nodes[hnode].name;
    if (cls == kMgmtClass) {
      const bool ok = in_.sl2vl ? trace_sl(leaf, in_port, lid, a.node, nullptr).delivered
                                : trace(leaf, lid, a.node, nullptr) == Outcome::kDelivered;
      if (!ok) add(FindingKind::kAttachedUnreachable, "", hname, name, "management host");
      continue;
    }
    ++pairs;
    bool stopped_first;
    std::string where;
    if (in_.sl2vl) {
      const PairTrace r = trace_sl(leaf, in_port, lid, a.node, nullptr);
      stopped_first = !r.delivered && !r.left_first_switch;
      where = r.delivered ? "delivered" : "passes " + f_.nodes[leaf].name + ", then " + r.where;
    } else {
      const LidTable& table = lft_[leaf];
      stopped_first = lid >= table.size() || table[lid] == kNoRoute;
      where = "routed by " + f_.nodes[leaf].name;
    }
    if (stopped_first)
      ++refused;
    else if (!in_.sl2vl && leaf == at)  // without the first-hop drop: P_Keys only
      add(FindingKind::kSharedLeaf, class_name(cls), hname, name,
          "cabled to the same switch; without SL2VL (qos) only partition keys separate them");
    else
      add(FindingKind::kUnlistedAttachedReachable, class_name(cls), hname, name, where);
    if (!in_.sl2vl) continue;
    ++pairs;
    const PairTrace back = trace_sl(at, a.switch_port, f_.lid_of(hnode), hnode, nullptr);
    if (!back.delivered && !back.left_first_switch)
      ++refused;
    else
      add(FindingKind::kUnlistedAttachedReachable, class_name(cls), name, hname,
          back.delivered ? "delivered" : "passes " + f_.nodes[at].name + ", then " + back.where);
  }
  rep_.figures["unlisted_attached_hosts"] += 1;
  rep_.figures["unlisted_attached_pairs"] += pairs;
  rep_.figures["unlisted_attached_pairs_refused"] += refused;
}

}  // namespace laas::routing::auditing
