#include "routing/audit.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_set>

#include "topology/servers.h"

namespace laas::routing {

const char* to_string(FindingKind kind) {
  switch (kind) {
    case FindingKind::kTenantRouteEscapes:
      return "tenant-route-escapes";
    case FindingKind::kFreeRouteOnTenantLink:
      return "free-route-on-tenant-link";
    case FindingKind::kIntraTenantUnreachable:
      return "intra-tenant-unreachable";
    case FindingKind::kLoop:
      return "loop";
    case FindingKind::kOverlong:
      return "overlong";
    case FindingKind::kCrossRoute:
      return "cross-route";
    case FindingKind::kSharedLeaf:
      return "shared-leaf-needs-partition";
    case FindingKind::kManagementUnreachable:
      return "management-unreachable";
    case FindingKind::kFreeUnreachable:
      return "free-unreachable";
    case FindingKind::kBalanceWorseThanPrivate:
      return "balance-worse-than-private";
    case FindingKind::kCrossTenantSurvives:
      return "cross-tenant-survives-first-switch";
    case FindingKind::kSharedCable:
      return "cable-carries-two-owners";
    case FindingKind::kSl2VlMismatch:
      return "sl2vl-mismatch";
    case FindingKind::kExemption:
      return "management-exemption";
    case FindingKind::kFreeHostReachable:
      return "free-host-reachable";
    case FindingKind::kDegradedUnreachable:
      return "degraded-unreachable";
    case FindingKind::kManagementPartitioned:
      return "management-partitioned";
    case FindingKind::kServerSplit:
      return "server-split";
    case FindingKind::kUnacceptedHost:
      return "unaccepted-host";
    case FindingKind::kQuarantinedHostRouted:
      return "quarantined-host-routed";
    case FindingKind::kAttachedUnreachable:
      return "attached-host-unreachable";
    case FindingKind::kAttachedCrossesTenant:
      return "attached-host-route-crosses-tenant";
    case FindingKind::kAttachedReplySharesLink:
      return "attached-host-reply-shares-link";
    case FindingKind::kUnlistedAttachedReachable:
      return "unlisted-attached-host-reachable";
  }
  return "unknown";
}

bool is_violation(FindingKind kind) {
  return kind != FindingKind::kSharedLeaf && kind != FindingKind::kFreeUnreachable &&
         kind != FindingKind::kExemption && kind != FindingKind::kDegradedUnreachable &&
         kind != FindingKind::kManagementPartitioned &&
         kind != FindingKind::kAttachedReplySharesLink;
}

long AuditReport::violations() const {
  long total = 0;
  for (const auto& [name, n] : counts) {
    bool violation = true;
    for (auto k : {FindingKind::kSharedLeaf, FindingKind::kFreeUnreachable, FindingKind::kExemption,
                   FindingKind::kDegradedUnreachable, FindingKind::kManagementPartitioned,
                   FindingKind::kAttachedReplySharesLink})
      if (name == to_string(k)) violation = false;
    if (violation) total += n;
  }
  return total;
}

long AuditReport::count(FindingKind kind) const {
  auto it = counts.find(to_string(kind));
  return it == counts.end() ? 0 : it->second;
}

namespace {

constexpr int kFreeClass = -1;
constexpr int kMgmtClass = -2;
constexpr int kMaxHops = 64;

enum class Outcome { kDelivered, kNoRoute, kDeadEnd, kLoop, kTooLong, kWrongNode };

const char* outcome_text(Outcome o) {
  switch (o) {
    case Outcome::kDelivered:
      return "delivered";
    case Outcome::kNoRoute:
      return "no route";
    case Outcome::kDeadEnd:
      return "uncabled port";
    case Outcome::kLoop:
      return "loop";
    case Outcome::kTooLong:
      return "too long";
    case Outcome::kWrongNode:
      return "delivered to the wrong node";
  }
  return "?";
}

struct Hop {
  int node;  // fabric switch node
  int port;  // physical out-port
};

class Auditor {
 public:
  Auditor(const AuditInput& in, const AuditOptions& opt, AuditReport& report)
      : in_(in),
        f_(*in.fabric),
        emb_(*in.embedding),
        t_(*in.tree),
        lft_(*in.tables),
        opt_(opt),
        rep_(report) {
    prepare();
  }

  void run() {
    check_quarantine();
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

 private:
  void prepare() {
    if (static_cast<int>(emb_.host_node.size()) != t_.num_hosts() ||
        static_cast<int>(emb_.switch_node.size()) != t_.height())
      throw std::invalid_argument("audit: the embedding does not match the tree");
    if (lft_.size() != f_.nodes.size())
      throw std::invalid_argument("audit: one table slot per fabric node is expected");
    // Physical (node, port) -> model link.
    port_link_.assign(f_.nodes.size(), {});
    for (std::size_t n = 0; n < f_.nodes.size(); ++n)
      port_link_[n].assign(f_.nodes[n].ports.size(), -1);
    for (LinkId l = 0; l < t_.total_links(); ++l) {
      for (const auto& ref : {t_.link_lower(l), t_.link_upper(l)}) {
        const int node = emb_.switch_node[ref.level - 1][ref.index];
        const int port = emb_.port_map[ref.level - 1][ref.index][ref.port];
        if (node >= 0 && port >= 0 && port < static_cast<int>(port_link_[node].size()))
          port_link_[node][port] = l;
      }
    }
    owner_.assign(t_.total_links(), kFreeClass);
    host_class_.assign(t_.num_hosts(), kFreeClass);
    for (int ti = 0; ti < static_cast<int>(in_.tenants.size()); ++ti) {
      for (LinkId l : in_.tenants[ti].placement.links)
        if (l >= 0 && l < t_.total_links()) owner_[l] = ti;
      for (HostId h : in_.tenants[ti].placement.hosts)
        if (h >= 0 && h < t_.num_hosts()) host_class_[h] = ti;
    }
    mgmt_leaf_.assign(t_.num_leaves(), 0);
    for (HostId h : in_.management_hosts) {
      host_class_.at(h) = kMgmtClass;
      mgmt_leaf_[t_.leaf_of_host(h)] = 1;
    }
    for (int node : in_.management_nodes) {
      const auto [level, index] = emb_.node_model.at(node);
      if (level == 0) {
        host_class_[index] = kMgmtClass;
        mgmt_leaf_[t_.leaf_of_host(index)] = 1;
      } else if (level == 1) {
        mgmt_leaf_[index] = 1;
      } else if (f_.nodes[node].is_switch) {
        mgmt_switches_.push_back(node);
      }
    }
    // Classes of hosts on each leaf. A host that is down keeps its class: the
    // leaf's routes are those of the intended tree and return unchanged with the host.
    leaf_classes_.assign(t_.num_leaves(), {});
    for (HostId h = 0; h < t_.num_hosts(); ++h) {
      auto& v = leaf_classes_[t_.leaf_of_host(h)];
      if (std::find(v.begin(), v.end(), host_class_[h]) == v.end()) v.push_back(host_class_[h]);
    }
    load_.assign(f_.nodes.size() * 256, 0);
  }

  std::string class_name(int cls) const {
    if (cls == kFreeClass) return "";
    if (cls == kMgmtClass) return "";
    return in_.tenants[cls].name;
  }

  void add(FindingKind kind, const std::string& tenant, const std::string& src,
           const std::string& dst, const std::string& detail) {
    long& n = rep_.counts[to_string(kind)];
    ++n;
    if (n <= opt_.max_findings_per_kind) rep_.findings.push_back({kind, tenant, src, dst, detail});
  }

  // Follows the tables from switch `node` towards `lid`, until `target` (a host: the last hop
  // leads to it; a switch: its entry is 0).
  Outcome trace(int node, topology::Lid lid, int target, std::vector<Hop>* hops) {
    ++rep_.traces;
    if (hops) hops->clear();
    int visited[kMaxHops];
    for (int n = 0; n < kMaxHops; ++n) {
      for (int i = 0; i < n; ++i)
        if (visited[i] == node) return Outcome::kLoop;
      visited[n] = node;
      const LidTable& table = lft_[node];
      if (lid >= table.size()) return Outcome::kNoRoute;
      const int port = table[lid];
      if (port == kNoRoute) return Outcome::kNoRoute;
      if (port == 0) return node == target ? Outcome::kDelivered : Outcome::kWrongNode;
      const auto& ports = f_.nodes[node].ports;
      if (port >= static_cast<int>(ports.size()) || ports[port].peer_node < 0)
        return Outcome::kDeadEnd;
      if (hops) hops->push_back({node, port});
      const int next = ports[port].peer_node;
      if (!f_.nodes[next].is_switch)
        return next == target ? Outcome::kDelivered : Outcome::kWrongNode;
      node = next;
    }
    return Outcome::kTooLong;
  }

  int minimal_hops(int src_leaf, int dst_leaf) const {
    if (src_leaf == dst_leaf) return 1;
    if (t_.pod_of_leaf(src_leaf) == t_.pod_of_leaf(dst_leaf)) return 3;
    return 5;
  }

  int leaf_node(int leaf) const { return emb_.switch_node[0][leaf]; }

  // Every quarantined slot is reported, and no switch may have an entry for the
  // newcomer's LID (OpenSM's "no route", 0xFF, everywhere).
  void check_quarantine() {
    long checked = 0;
    for (const auto& q : in_.quarantined) {
      add(FindingKind::kUnacceptedHost, q.tenant, q.name, "", q.detail);
      if (q.lid == 0) continue;
      for (std::size_t n = 0; n < f_.nodes.size(); ++n) {
        const auto& table = lft_[n];
        if (!f_.nodes[n].is_switch || table.empty()) continue;
        ++checked;
        if (q.lid < table.size() && table[q.lid] != kNoRoute)
          add(FindingKind::kQuarantinedHostRouted, q.tenant, f_.nodes[n].name, q.name,
              f_.nodes[n].name + " routes LID " + std::to_string(q.lid) + " (" + q.name +
                  ", quarantined) to port " + std::to_string(table[q.lid]));
      }
    }
    if (!in_.quarantined.empty()) {
      rep_.figures["quarantined_hosts"] = static_cast<long>(in_.quarantined.size());
      rep_.figures["quarantined_lid_entries_checked"] = checked;
    }
  }
  bool present(HostId h) const { return emb_.host_node[h] >= 0; }

  // Every server is wholly one tenant's or no tenant's, servers being what the service places
  // (the one grouping: recorded names, multi-port CAs, the administrator's map).
  void check_servers() {
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
        detail += (detail.empty() ? "" : ", ") +
                  (node >= 0 ? f_.nodes[node].name : t_.host_name(h)) + ": " +
                  (o >= 0 ? in_.tenants[o].name : std::string("no tenant"));
      }
      const int first = *std::max_element(owners.begin(), owners.end());
      add(FindingKind::kServerSplit, first >= 0 ? in_.tenants[first].name : "", servers.names[s],
          "", "server " + servers.names[s] + " is split: " + detail);
    }
  }

  void check_hosts() {
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
        // may not reach d -- for a free d every host but management (free hosts are
        // quarantined).
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

  bool has_class(int leaf, int cls) const {
    const auto& v = leaf_classes_[leaf];
    return std::find(v.begin(), v.end(), cls) != v.end();
  }

  int count_class_on_leaf(int leaf, int cls) const {
    int n = 0;
    for (int s = 0; s < t_.hosts_per_leaf(); ++s) n += host_class_[t_.host_at(leaf, s)] == cls;
    return n;
  }

  void check_links(int cls, const std::vector<Hop>& hops, const std::string& tenant,
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

  void check_management() {
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
  void check_attached() {
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
            add(o == Outcome::kLoop ? FindingKind::kLoop : FindingKind::kAttachedUnreachable,
                tenant, src, dst, outcome_text(o));
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
  void check_unlisted_attached(const topology::AttachedHost& a, int at, topology::Lid lid) {
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

  // ---- SL2VL ---------------------------------------------------------------------------
  Sl2VlInput sl2vl_input() const {
    Sl2VlInput si;
    si.fabric = &f_;
    si.embedding = &emb_;
    si.tree = &t_;
    si.tables = &lft_;
    for (const auto& t : in_.tenants) si.tenants.push_back(t.placement);
    si.management_hosts = in_.management_hosts;
    si.management_nodes = in_.management_nodes;
    for (const auto& q : in_.quarantined) si.quarantined_hosts.push_back(q.host);
    si.closed_attached = in_.closed_attached;
    return si;
  }

  std::string port_text(int node, int port) const {
    return f_.nodes[node].name + " port " + std::to_string(port);
  }

  // The tables read back against the plan computed from the same forwarding tables: VL15
  // exactly at the cross-owner pairs that are no management exemption (and at the management
  // up-links). Only cabled ports count: OpenSM leaves the tables of down ports alone.
  void check_sl2vl_plan() {
    plan_ = plan_sl2vl(sl2vl_input());
    owners_ = plan_.owners;
    const Sl2VlTables& got = *in_.sl2vl;
    long compared = 0, dropped = 0, cross = 0;
    for (std::size_t n = 0; n < f_.nodes.size(); ++n) {
      const int node = static_cast<int>(n);
      if (!plan_.tables.has(node)) continue;
      const auto& ports = f_.nodes[n].ports;
      const int np = plan_.tables.ports[node];
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
          const bool want = plan_.tables.mask(node, i, o) == kAllSls;
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
    for (const auto& e : plan_.exemptions) {
      const std::string line = "management exemption: " + f_.nodes[e.node].name + " in " +
                               std::to_string(e.in_port) + " (" + owner_text(e.node, e.in_port) +
                               ") -> out " + std::to_string(e.out_port) + " (" +
                               owner_text(e.node, e.out_port) + ")";
      rep_.exemptions.push_back(line);
      add(FindingKind::kExemption, class_name(e.tenant), f_.nodes[e.node].name, "", line);
    }
    for (const auto& [node, port] : plan_.mgmt_links)
      rep_.exemptions.push_back("management up-link (only management ports may use it): " +
                                port_text(node, port));
    rep_.figures["sl2vl_pairs_compared"] = compared;
    rep_.figures["sl2vl_pairs_dropped"] = dropped;
    rep_.figures["sl2vl_cross_owner_pairs"] = cross;
    rep_.figures["sl2vl_exemptions"] = static_cast<long>(plan_.exemptions.size());
    rep_.figures["sl2vl_management_uplinks"] = static_cast<long>(plan_.mgmt_links.size());
  }

  static std::string hex16(std::uint16_t m) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04x", m);
    return buf;
  }

  std::string owner_text(int node, int port) const {
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

  struct PairTrace {
    bool delivered = false;
    bool left_first_switch = false;  // forwarded by the first switch with some SL alive
    std::string where;               // where it stopped
  };

  // From switch `node`, entered through `in`, towards `target` (a host node, or a switch whose
  // entry is 0), keeping the SLs no hop maps to VL15. hops receives the links crossed.
  PairTrace trace_sl(int node, int in, topology::Lid lid, int target, std::vector<Hop>* hops) {
    ++rep_.traces;
    PairTrace r;
    if (hops) hops->clear();
    std::uint16_t alive = kAllSls;
    for (int n = 0; n < kMaxHops; ++n) {
      const LidTable& table = lft_[node];
      const int port = lid < table.size() ? table[lid] : kNoRoute;
      if (port == kNoRoute) {
        r.where = "no route at " + f_.nodes[node].name;
        return r;
      }
      if (port == 0) {
        r.delivered = node == target;
        r.where = f_.nodes[node].name;
        return r;
      }
      alive &= static_cast<std::uint16_t>(~in_.sl2vl->mask(node, in, port));
      if (alive == 0) {
        r.where = "dropped by SL2VL at " + f_.nodes[node].name + " in " + std::to_string(in) +
                  " out " + std::to_string(port);
        return r;
      }
      if (n == 0) r.left_first_switch = true;
      const auto& ports = f_.nodes[node].ports;
      if (port >= static_cast<int>(ports.size()) || ports[port].peer_node < 0) {
        r.where = "uncabled port at " + f_.nodes[node].name;
        return r;
      }
      if (hops) hops->push_back({node, port});
      const int next = ports[port].peer_node;
      if (!f_.nodes[next].is_switch) {
        r.delivered = next == target;
        r.where = f_.nodes[next].name;
        return r;
      }
      in = ports[port].peer_port;
      node = next;
    }
    r.where = "too long";
    return r;
  }

  // Every (source host, destination host) pair and every host to every switch, through the
  // LFTs and the SL2VL tables, from the host's own leaf port.
  void check_host_pairs() {
    std::vector<HostId> present;
    for (HostId h = 0; h < t_.num_hosts(); ++h)
      if (emb_.host_node[h] >= 0) present.push_back(h);
    std::vector<int> cable_owner(t_.total_links(), kNoOwner);
    std::vector<char> cable_bad(t_.total_links(), 0);
    long pairs = 0, cross = 0, cross_dropped_first = 0, intra = 0, mgmt = 0;
    long to_free = 0, to_free_dropped_first = 0;  // non-management hosts to free hosts
    std::vector<Hop> hops;
    std::vector<HostId> sources = present;
    const int cap = opt_.max_pair_sources;
    if (cap > 0 && static_cast<int>(present.size()) > cap) {
      sources.clear();
      for (int i = 0; i < cap; ++i)
        sources.push_back(present[static_cast<std::size_t>(i) * present.size() / cap]);
      rep_.figures["host_pair_sources_sampled"] = cap;
    }
    for (HostId s : sources) {
      const auto ref = t_.host_peer(s);
      const int leaf = emb_.switch_node[0][ref.index];
      if (leaf < 0) continue;
      const int in = emb_.port_map[0][ref.index][ref.port];
      const int x = host_class_[s];
      const std::string sname = f_.nodes[emb_.host_node[s]].name;
      for (HostId d : present) {
        if (d == s) continue;
        const int y = host_class_[d];
        const int dnode = emb_.host_node[d];
        const std::string dname = f_.nodes[dnode].name;
        ++pairs;
        const PairTrace r = trace_sl(leaf, in, f_.lid_of(dnode), dnode, &hops);
        if (x == kMgmtClass || y == kMgmtClass) {
          ++mgmt;
          if (!r.delivered)
            add(mgmt_unreached(leaf, leaf_node(t_.leaf_of_host(d))),
                class_name(x == kMgmtClass ? y : x), sname, dname, r.where);
          continue;
        }
        if (x == y && x != kFreeClass) {
          ++intra;
          if (!r.delivered) {
            // A degraded tenant's pair with no path on its own links that are up is dropped by
            // design (never routed over another owner's links): a note, as in the LFT walk.
            if (x >= 0 && !private_reaches(x, leaf, d))
              add(FindingKind::kDegradedUnreachable, class_name(x), sname, dname,
                  r.where + "; no path on the tenant's own links that are up");
            else
              add(x == kFreeClass ? FindingKind::kFreeUnreachable
                                  : FindingKind::kIntraTenantUnreachable,
                  class_name(x), sname, dname, r.where);
            continue;
          }
          for (const Hop& h : hops) {
            const int l = h.port < static_cast<int>(port_link_[h.node].size())
                              ? port_link_[h.node][h.port]
                              : -1;
            if (l < 0) continue;
            if (cable_owner[l] == kNoOwner) cable_owner[l] = x;
            if (cable_owner[l] != x && !cable_bad[l]) {
              cable_bad[l] = 1;
              add(FindingKind::kSharedCable, class_name(x), sname, dname,
                  "the cable at " + port_text(h.node, h.port) + " also carries " +
                      (cable_owner[l] == kFreeClass ? std::string("free hosts'")
                                                    : in_.tenants[cable_owner[l]].name + "'s") +
                      " own traffic");
            }
          }
          continue;
        }
        if (y >= 0) {
          ++cross;
          if (r.left_first_switch)
            add(FindingKind::kCrossTenantSurvives, class_name(y), sname, dname,
                (r.delivered ? "delivered"
                             : "passes " + f_.nodes[leaf].name + ", then " + r.where));
          else
            ++cross_dropped_first;
        } else {
          // A free host is quarantined: its port is reached from management only.
          ++to_free;
          if (!r.delivered && !r.left_first_switch)
            ++to_free_dropped_first;
          else
            add(FindingKind::kFreeHostReachable, class_name(x), sname, dname,
                r.delivered ? "delivered" : "passes " + f_.nodes[leaf].name + ", then " + r.where);
        }
      }
      // Every switch (management destinations).
      for (int level = 1; level <= t_.height(); ++level)
        for (int i = 0; i < t_.num_switches(level); ++i) {
          const int target = emb_.switch_node[level - 1][i];
          if (target < 0) continue;
          ++mgmt;
          const PairTrace r = trace_sl(leaf, in, f_.lid_of(target), target, nullptr);
          if (!r.delivered)
            add(mgmt_unreached(leaf, target), class_name(x), sname, f_.nodes[target].name, r.where);
        }
    }
    // The SM on a switch reaches every host from its port 0.
    for (int node : mgmt_switches_)
      for (HostId d : present) {
        const int dnode = emb_.host_node[d];
        ++mgmt;
        const PairTrace r = trace_sl(node, 0, f_.lid_of(dnode), dnode, nullptr);
        if (!r.delivered)
          add(mgmt_unreached(node, leaf_node(t_.leaf_of_host(d))), class_name(host_class_[d]),
              f_.nodes[node].name, f_.nodes[dnode].name, r.where);
      }
    long shared = 0;
    for (char b : cable_bad) shared += b;
    rep_.figures["host_pairs_traced"] = pairs;
    rep_.figures["cross_tenant_pairs"] = cross;
    rep_.figures["cross_tenant_dropped_at_first_switch"] = cross_dropped_first;
    rep_.figures["intra_tenant_pairs"] = intra;
    rep_.figures["pairs_to_free_hosts"] = to_free;
    rep_.figures["pairs_to_free_hosts_dropped_at_first_switch"] = to_free_dropped_first;
    rep_.figures["management_pairs"] = mgmt;
    rep_.figures["cables_with_two_owners"] = shared;
  }

  // Shifts to evaluate for n hosts: all of 1..n-1, or max_shifts evenly spaced ones.
  std::vector<int> shifts(int n, bool* sampled) const {
    std::vector<int> s;
    const int all = n - 1;
    *sampled = opt_.max_shifts > 0 && all > opt_.max_shifts;
    const int count = *sampled ? opt_.max_shifts : all;
    for (int i = 0; i < count; ++i)
      s.push_back(*sampled ? 1 + static_cast<int>(static_cast<long>(i) * all / count) : i + 1);
    return s;
  }

  void balance(int ti) {
    const auto& tenant = in_.tenants[ti];
    std::vector<HostId> hosts;
    for (HostId h : tenant.placement.hosts)
      if (h >= 0 && h < t_.num_hosts() && present(h)) hosts.push_back(h);
    std::sort(hosts.begin(), hosts.end());
    TenantBalance b;
    b.tenant = tenant.name;
    b.hosts = static_cast<int>(hosts.size());
    const int n = b.hosts;
    const auto list = shifts(n, &b.sampled);
    b.shifts = static_cast<int>(list.size());
    std::vector<Hop> hops;
    std::vector<int> touched;
    for (int s : list) {
      for (int i = 0; i < n; ++i) {
        const HostId src = hosts[i], dst = hosts[(i + s) % n];
        const int dnode = emb_.host_node[dst];
        if (trace(leaf_node(t_.leaf_of_host(src)), f_.lid_of(dnode), dnode, &hops) !=
            Outcome::kDelivered)
          continue;  // reported by check_hosts
        for (const Hop& h : hops) {
          int& l = load_[static_cast<std::size_t>(h.node) * 256 + h.port];
          if (l++ == 0) touched.push_back(h.node * 256 + h.port);
          b.worst = std::max(b.worst, l);
        }
      }
      for (int k : touched) load_[k] = 0;
      touched.clear();
    }
    if (opt_.compare_private) b.private_worst = private_balance(ti, hosts, list);
    if (b.private_worst >= 0 && b.worst > b.private_worst)
      add(FindingKind::kBalanceWorseThanPrivate, tenant.name, "", "",
          "worst " + std::to_string(b.worst) + " flows on a link, " +
              std::to_string(b.private_worst) + " when routed alone");
    rep_.balance.push_back(b);
  }

  // Switches reachable upwards from switch (level, index) over links that are up.
  std::set<std::pair<int, int>> upward(int level, int index) const {
    std::set<std::pair<int, int>> seen{{level, index}};
    std::vector<std::pair<int, int>> stack{{level, index}};
    while (!stack.empty()) {
      const auto [l, i] = stack.back();
      stack.pop_back();
      if (l >= t_.height()) continue;
      for (int c = 0; c < t_.up_columns(l); ++c) {
        const LinkId link = l == 1 ? t_.l1_link(i, c) : t_.l2_link(i, c);
        // Absent, or faulty as the input says (a link isolated for its errors).
        if (std::binary_search(emb_.missing_links.begin(), emb_.missing_links.end(), link) ||
            std::find(in_.faulty_links.begin(), in_.faulty_links.end(), link) !=
                in_.faulty_links.end())
          continue;
        const auto p = t_.parent_of(l, i, c);
        if (seen.insert({p.level, p.index}).second) stack.push_back({p.level, p.index});
      }
    }
    return seen;
  }

  // Whether the links that are up leave any up*/down* path between two switches of the tree
  // (a common ancestor): where none is left, a missing route is the fault's, not routing's.
  // A management pair the tables do not deliver: a violation where an up*/down* path exists
  // between the two switches, a note where faults left none (nothing could route it).
  FindingKind mgmt_unreached(int from_switch, int to_switch) const {
    return updown_path(from_switch, to_switch) ? FindingKind::kManagementUnreachable
                                               : FindingKind::kManagementPartitioned;
  }

  bool updown_path(int a, int b) const {
    if (a < 0 || b < 0) return false;
    const auto ma = emb_.node_model.at(a), mb = emb_.node_model.at(b);
    if (ma.first < 1 || mb.first < 1) return true;  // not a tree switch: no excuse
    const auto ua = upward(ma.first, ma.second), ub = upward(mb.first, mb.second);
    for (const auto& x : ua)
      if (ub.count(x)) return true;
    return false;
  }

  // The tenant routed alone on its own links that are up (cached per tenant).
  const ModelTables& private_tables(int ti) {
    auto it = private_.find(ti);
    if (it != private_.end()) return it->second;
    RoutingRequest req;
    req.tenants.push_back({in_.tenants[ti].name, in_.tenants[ti].placement});
    req.faulty_links = in_.faulty_links;
    req.faulty_links.insert(req.faulty_links.end(), emb_.missing_links.begin(),
                            emb_.missing_links.end());
    req.tenants_only = true;
    return private_.emplace(ti, compute(t_, req).tables).first->second;
  }

  // Whether the tenant's private routing delivers from leaf `src_leaf` to host `dst`.
  bool private_reaches(int ti, int src_leaf, HostId dst) {
    const ModelTables& mt = private_tables(ti);
    int level = 1, index = src_leaf;
    for (int hop = 0; hop < kMaxHops; ++hop) {
      const int port = mt.row(mt.switch_number(level, index))[mt.endpoint_of_host(dst)];
      if (port == kNoRoute || port == 0) return false;
      if (level == 1 && port > t_.up_columns(1))
        return t_.host_at(index, (port - t_.up_columns(1) - 1) / t_.p(1)) == dst;
      step(&level, &index, port);
    }
    return false;
  }

  // Moves (level, index) one hop along model port `port` of a switch: up to its parent or down
  // to the child switch (a level-1 down-port reaches a host: the caller's business).
  void step(int* level, int* index, int port) const {
    const int ups = t_.up_columns(*level);
    if (port <= ups) {
      const auto parent = t_.parent_of(*level, *index, port - 1);
      *level = parent.level;
      *index = parent.index;
      return;
    }
    const int child = (port - ups - 1) / t_.p(*level);
    if (*level == 2)
      *index = t_.pod_of_level2(*index) * t_.leaves_per_pod() + child;
    else
      *index = t_.level2_switch(child, *index / t_.w(3));
    --*level;
  }

  // The same shifts on model tables computed for this tenant alone.
  int private_balance(int ti, const std::vector<HostId>& hosts, const std::vector<int>& list) {
    RoutingRequest req;
    req.tenants.push_back({in_.tenants[ti].name, in_.tenants[ti].placement});
    req.faulty_links = in_.faulty_links;
    req.faulty_links.insert(req.faulty_links.end(), emb_.missing_links.begin(),
                            emb_.missing_links.end());
    req.tenants_only = true;
    const ModelTables mt = compute(t_, req).tables;
    std::vector<int> load(static_cast<std::size_t>(mt.num_switches()) * 256, 0), touched;
    int worst = 0;
    const int n = static_cast<int>(hosts.size());
    for (int s : list) {
      for (int i = 0; i < n; ++i) {
        const HostId dst = hosts[(i + s) % n];
        int level = 1, index = t_.leaf_of_host(hosts[i]);
        for (int hop = 0; hop < kMaxHops; ++hop) {
          const int number = mt.switch_number(level, index);
          const int port = mt.row(number)[mt.endpoint_of_host(dst)];
          if (port == kNoRoute || port == 0) break;
          int& l = load[static_cast<std::size_t>(number) * 256 + port];
          if (l++ == 0) touched.push_back(number * 256 + port);
          worst = std::max(worst, l);
          if (level == 1 && port > t_.up_columns(1)) break;  // delivered to a host
          step(&level, &index, port);
        }
      }
      for (int k : touched) load[k] = 0;
      touched.clear();
    }
    return worst;
  }

  const AuditInput& in_;
  const topology::Fabric& f_;
  const topology::Embedding& emb_;
  const FatTree& t_;
  const LidTables& lft_;
  const AuditOptions& opt_;
  AuditReport& rep_;
  std::vector<std::vector<int>> port_link_;
  std::vector<int> owner_, host_class_;
  std::vector<char> mgmt_leaf_;
  std::vector<int> mgmt_switches_;
  std::vector<std::vector<int>> leaf_classes_;
  std::vector<int> load_;
  static constexpr int kNoOwner = -100;
  Sl2VlPlan plan_;
  std::vector<std::vector<PortOwner>> owners_;
  std::map<int, ModelTables> private_;
};

}  // namespace

AuditReport audit(const AuditInput& input, const AuditOptions& options) {
  if (!input.fabric || !input.embedding || !input.tree || !input.tables)
    throw std::invalid_argument("audit: fabric, embedding, tree and tables are required");
  AuditReport report;
  // Quarantined slots are audited as absent hosts of their tenants.
  std::vector<HostId> hide;
  for (const auto& q : input.quarantined)
    if (q.host >= 0 && q.host < static_cast<HostId>(input.embedding->host_node.size()) &&
        input.embedding->host_node[q.host] >= 0)
      hide.push_back(q.host);
  if (hide.empty()) {
    Auditor(input, options, report).run();
    return report;
  }
  AuditInput hidden = input;
  hidden.owned_embedding =
      std::make_shared<const topology::Embedding>(without_hosts(*input.embedding, hide));
  hidden.embedding = hidden.owned_embedding.get();
  Auditor(hidden, options, report).run();
  return report;
}

nlohmann::json to_json(const AuditReport& report) {
  nlohmann::json j;
  j["ok"] = report.ok();
  j["violations"] = report.violations();
  j["traces"] = report.traces;
  j["counts"] = report.counts;
  auto& findings = j["findings"] = nlohmann::json::array();
  for (const auto& f : report.findings)
    findings.push_back({{"kind", to_string(f.kind)},
                        {"violation", is_violation(f.kind)},
                        {"tenant", f.tenant},
                        {"source", f.source},
                        {"destination", f.destination},
                        {"detail", f.detail}});
  if (!report.figures.empty()) j["figures"] = report.figures;
  if (!report.exemptions.empty()) j["exemptions"] = report.exemptions;
  auto& balance = j["balance"] = nlohmann::json::array();
  for (const auto& b : report.balance)
    balance.push_back({{"tenant", b.tenant},
                       {"hosts", b.hosts},
                       {"shifts", b.shifts},
                       {"sampled", b.sampled},
                       {"worst", b.worst},
                       {"private_worst", b.private_worst}});
  return j;
}

}  // namespace laas::routing
