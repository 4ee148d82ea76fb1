// The audit's traversers: walks through the LID tables (and SL2VL tables) of the fabric, and
// through model tables of a tenant routed alone; up*/down* reachability over the links up.
#include "routing/audit_trace.h"

#include <algorithm>

namespace laas::routing::auditing {

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

// Follows the tables from switch `node` towards `lid`, until `target` (a host: the last hop
// leads to it; a switch: its entry is 0).
Outcome Tracer::trace(int node, topology::Lid lid, int target, std::vector<Hop>* hops) {
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

// From switch `node`, entered through `in`, towards `target` (a host node, or a switch whose
// entry is 0), keeping the SLs no hop maps to VL15. hops receives the links crossed.
PairTrace Tracer::trace_sl(int node, int in, topology::Lid lid, int target,
                           std::vector<Hop>* hops) {
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

// Switches reachable upwards from switch (level, index) over links that are up.
std::set<std::pair<int, int>> UpDownPaths::upward(int level, int index) const {
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
FindingKind UpDownPaths::mgmt_unreached(int from_switch, int to_switch) const {
  return updown_path(from_switch, to_switch) ? FindingKind::kManagementUnreachable
                                             : FindingKind::kManagementPartitioned;
}

bool UpDownPaths::updown_path(int a, int b) const {
  if (a < 0 || b < 0) return false;
  const auto ma = emb_.node_model.at(a), mb = emb_.node_model.at(b);
  if (ma.first < 1 || mb.first < 1) return true;  // not a tree switch: no excuse
  const auto ua = upward(ma.first, ma.second), ub = upward(mb.first, mb.second);
  for (const auto& x : ua)
    if (ub.count(x)) return true;
  return false;
}

// The tenant alone, on its own links that are up.
RoutingRequest PrivateRoutes::alone(int ti) const {
  RoutingRequest req;
  req.tenants.push_back({in_.tenants[ti].name, in_.tenants[ti].placement});
  req.faulty_links = in_.faulty_links;
  req.faulty_links.insert(req.faulty_links.end(), emb_.missing_links.begin(),
                          emb_.missing_links.end());
  req.tenants_only = true;
  return req;
}

// The tenant routed alone (cached per tenant).
const ModelTables& PrivateRoutes::private_tables(int ti) {
  auto it = private_.find(ti);
  if (it != private_.end()) return it->second;
  return private_.emplace(ti, compute(t_, alone(ti)).tables).first->second;
}

// Whether the tenant's private routing delivers from leaf `src_leaf` to host `dst`.
bool PrivateRoutes::private_reaches(int ti, int src_leaf, HostId dst) {
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
void PrivateRoutes::step(int* level, int* index, int port) const {
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
int PrivateRoutes::private_balance(int ti, const std::vector<HostId>& hosts,
                                   const std::vector<int>& list) {
  const ModelTables mt = compute(t_, alone(ti)).tables;
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

}  // namespace laas::routing::auditing
