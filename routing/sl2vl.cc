#include "routing/sl2vl.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "util/text.h"

namespace laas::routing {

std::vector<std::vector<PortOwner>> port_owners(const Sl2VlInput& in) {
  if (!in.fabric || !in.embedding || !in.tree)
    throw std::invalid_argument("sl2vl: fabric, embedding and tree are required");
  const auto& f = *in.fabric;
  const auto& emb = *in.embedding;
  const auto& t = *in.tree;
  if (static_cast<int>(emb.switch_node.size()) != t.height() ||
      static_cast<int>(emb.host_node.size()) != t.num_hosts())
    throw std::invalid_argument("sl2vl: the embedding does not match the tree");
  std::vector<std::vector<PortOwner>> owners(f.nodes.size());
  for (int level = 1; level <= t.height(); ++level)
    for (int i = 0; i < t.num_switches(level); ++i) {
      const int node = emb.switch_node[level - 1][i];
      if (node < 0) continue;
      owners[node].assign(f.nodes[node].ports.size(), PortOwner{});
      owners[node][0] = {PortClass::kManagement, -1};
    }
  std::vector<int> link_owner(t.total_links(), -1);
  std::vector<int> host_owner(t.num_hosts(), -1);  // tenant, -1 free, -2 management
  for (int ti = 0; ti < static_cast<int>(in.tenants.size()); ++ti) {
    for (LinkId l : in.tenants[ti].links)
      if (l >= 0 && l < t.total_links()) link_owner[l] = ti;
    for (HostId h : in.tenants[ti].hosts)
      if (h >= 0 && h < t.num_hosts()) host_owner[h] = ti;
  }
  for (HostId h : in.unaccepted_hosts)
    if (h >= 0 && h < t.num_hosts()) host_owner[h] = -1;
  for (HostId h : in.management_hosts)
    if (h >= 0 && h < t.num_hosts()) host_owner[h] = -2;
  for (int node : in.management_nodes) {
    if (node < 0 || node >= static_cast<int>(emb.node_model.size())) continue;
    const auto [level, index] = emb.node_model[node];
    if (level == 0) host_owner[index] = -2;
  }
  auto set = [&](const topology::PortRef& ref, PortOwner o) {
    const int node = emb.switch_node[ref.level - 1][ref.index];
    if (node < 0) return;
    const int port = emb.port_map[ref.level - 1][ref.index][ref.port];
    if (port <= 0 || port >= static_cast<int>(owners[node].size())) return;
    owners[node][port] = o;
  };
  for (LinkId l = 0; l < t.total_links(); ++l) {
    const PortOwner o = link_owner[l] >= 0 ? PortOwner{PortClass::kTenant, link_owner[l]}
                                           : PortOwner{PortClass::kOpenLink, -1};
    set(t.link_lower(l), o);
    set(t.link_upper(l), o);
  }
  for (HostId h = 0; h < t.num_hosts(); ++h) {
    const int c = host_owner[h];
    const PortOwner o = c >= 0    ? PortOwner{PortClass::kTenant, c, true}
                        : c == -1 ? PortOwner{PortClass::kFreeHost, -1, true}
                                  : PortOwner{PortClass::kManagement, -1, true};
    set(t.host_peer(h), o);
  }
  for (const auto& a : emb.attached) {
    if (std::find(in.closed_attached.begin(), in.closed_attached.end(), a.node) ==
        in.closed_attached.end())
      continue;
    const int node = emb.switch_node[a.level - 1][a.index];
    if (node >= 0 && a.switch_port > 0 && a.switch_port < static_cast<int>(owners[node].size()))
      owners[node][a.switch_port] = PortOwner{PortClass::kFreeHost, -1, true};
  }
  return owners;
}

namespace {

// The base rule: may traffic entering through `in` leave through `out`?
bool crosses(const PortOwner& in, const PortOwner& out) {
  if (in.cls == PortClass::kManagement) return false;
  if (out.cls == PortClass::kFreeHost) return in.host;
  if (out.cls != PortClass::kTenant) return false;
  return !(in.cls == PortClass::kTenant && in.tenant == out.tenant);
}

// Follows the forwarding tables from `node` (entered through port `in`; 0 or -1 for traffic
// that starts inside the switch) towards `lid`, calling visit(node, in, out, hop) at every
// switch the packet leaves, until it reaches a host or `stop_at` (a switch node; -1: none), or
// meets a missing entry or a dead port.
template <class Visit>
void walk_route(const LidTables& lft, const topology::Fabric& f, int node, int in,
                topology::Lid lid, int stop_at, Visit visit) {
  for (int hop = 0; hop < 64 && node != stop_at; ++hop) {
    const auto& table = lft[node];
    if (lid >= table.size()) return;
    const int out = table[lid];
    if (out == kNoRoute || out == 0) return;
    const auto& ports = f.nodes[node].ports;
    if (out >= static_cast<int>(ports.size()) || ports[out].peer_node < 0) return;
    visit(node, in, out, hop);
    const int next = ports[out].peer_node;
    if (!f.nodes[next].is_switch) return;
    in = ports[out].peer_port;
    node = next;
  }
}

using Owners = std::vector<std::vector<PortOwner>>;

// The (node, in, out) pairs management traffic needs passed, and the management up-links.
struct Exemptions {
  std::set<std::tuple<int, int, int>> pairs;
  std::map<std::tuple<int, int, int>, int> tenant;  // [pair] whose port it leaves through
  std::set<std::pair<int, int>> mgmt_links;
};

// Management sources: (switch node, input port).
std::vector<std::pair<int, int>> management_sources(const Sl2VlInput& in) {
  const auto& emb = *in.embedding;
  const auto& t = *in.tree;
  std::vector<std::pair<int, int>> sources;
  auto add_host_source = [&](HostId h) {
    const auto ref = t.host_peer(h);
    const int node = emb.switch_node[0][ref.index];
    if (node < 0) return;
    sources.push_back({node, emb.port_map[0][ref.index][ref.port]});
  };
  for (HostId h : in.management_hosts)
    if (h >= 0 && h < t.num_hosts()) add_host_source(h);
  for (int node : in.management_nodes) {
    if (node < 0 || node >= static_cast<int>(emb.node_model.size())) continue;
    const auto [level, index] = emb.node_model[node];
    if (level == 0)
      add_host_source(index);
    else if (level > 0)
      sources.push_back({node, 0});
  }
  std::sort(sources.begin(), sources.end());
  sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
  return sources;
}

// Management traffic to tenants' and to free hosts: free hosts are reached from management
// only, so a management leaf's up-links towards them are management up-links too (rule 3).
void exempt_host_routes(const Sl2VlInput& in, const Owners& owners,
                        const std::vector<std::pair<int, int>>& sources, Exemptions& ex) {
  const auto& f = *in.fabric;
  const auto& emb = *in.embedding;
  const auto& t = *in.tree;
  std::vector<HostId> destinations;
  for (const auto& placement : in.tenants)
    destinations.insert(destinations.end(), placement.hosts.begin(), placement.hosts.end());
  for (HostId h = 0; h < t.num_hosts(); ++h) {
    const auto ref = t.host_peer(h);
    const int node = emb.switch_node[0][ref.index];
    if (node < 0) continue;
    const int port = emb.port_map[0][ref.index][ref.port];
    if (port > 0 && port < static_cast<int>(owners[node].size()) &&
        owners[node][port].cls == PortClass::kFreeHost)
      destinations.push_back(h);
  }
  std::vector<topology::Lid> destination_lids;
  for (HostId d : destinations)
    if (d >= 0 && d < t.num_hosts() && emb.host_node[d] >= 0)
      destination_lids.push_back(f.lid_of(emb.host_node[d]));
  for (int node : in.closed_attached) destination_lids.push_back(f.lid_of(node));
  for (const topology::Lid lid : destination_lids) {
    if (lid == 0) continue;
    for (const auto& [start, start_in] : sources)
      walk_route(*in.tables, f, start, start_in, lid, -1, [&](int node, int inp, int out, int hop) {
        if (owners[node].empty() || out >= static_cast<int>(owners[node].size()) ||
            inp >= static_cast<int>(owners[node].size()))
          return;
        if (crosses(owners[node][inp], owners[node][out])) {
          ex.pairs.insert({node, inp, out});
          ex.tenant[{node, inp, out}] = owners[node][out].tenant;
        }
        const int level = emb.node_model[node].first;
        if (hop == 0 && level == 1 && owners[node][out].cls == PortClass::kOpenLink)
          ex.mgmt_links.insert({node, out});
      });
  }
}

// Management traffic to switches: where it leaves a switch-to-switch link for a tenant's
// link (the last hop into a switch whose cables are all held), the pair passes too. Traced from
// every leaf (no exemption at the first hop: host ports never get one) and management source.
void exempt_switch_routes(const Sl2VlInput& in, const Owners& owners,
                          const std::vector<std::pair<int, int>>& sources, Exemptions& ex) {
  const auto& f = *in.fabric;
  const auto& emb = *in.embedding;
  const auto& t = *in.tree;
  std::vector<std::pair<int, int>> switch_sources = sources;
  for (int leaf = 0; leaf < t.num_leaves(); ++leaf)
    if (emb.switch_node[0][leaf] >= 0) switch_sources.push_back({emb.switch_node[0][leaf], -1});
  for (int level = 1; level <= t.height(); ++level)
    for (int i = 0; i < t.num_switches(level); ++i) {
      const int target = emb.switch_node[level - 1][i];
      if (target < 0) continue;
      const topology::Lid lid = f.lid_of(target);
      for (const auto& [start, start_in] : switch_sources)
        walk_route(
            *in.tables, f, start, start_in, lid, target, [&](int node, int inp, int out, int) {
              const auto& own = owners[node];
              const auto& ports = f.nodes[node].ports;
              // Any switch-to-switch input: a tenant's links never carry another
              // tenant's host destinations, so the pair only lets management and
              // switch-addressed packets in.
              const bool link_in = inp > 0 && inp < static_cast<int>(ports.size()) &&
                                   ports[inp].peer_node >= 0 &&
                                   f.nodes[ports[inp].peer_node].is_switch;
              if (link_in && out < static_cast<int>(own.size()) &&
                  inp < static_cast<int>(own.size()) &&
                  (own[inp].cls == PortClass::kOpenLink || own[inp].cls == PortClass::kTenant) &&
                  crosses(own[inp], own[out])) {
                ex.pairs.insert({node, inp, out});
                ex.tenant[{node, inp, out}] = own[out].tenant;
              }
            });
    }
}

// VL15 at every crossing pair that is no exemption, at the management up-links for everyone
// but management, and (rule 4) from an unlisted attached host's port to all but management.
void fill_drops(const Sl2VlInput& in, const Exemptions& ex, Sl2VlPlan& plan) {
  const auto& f = *in.fabric;
  const auto& emb = *in.embedding;
  const auto& owners = plan.owners;
  plan.tables = Sl2VlTables(f.nodes.size());
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    const auto& own = owners[n];
    if (own.empty()) continue;
    const int node = static_cast<int>(n);
    const int np = static_cast<int>(own.size());
    plan.tables.init_node(node, np);
    for (int i = 0; i < np; ++i)
      for (int o = 0; o < np; ++o)
        if (crosses(own[i], own[o]) && !ex.pairs.count({node, i, o}))
          plan.tables.set(node, i, o, kAllSls);
  }
  for (const auto& [node, out] : ex.mgmt_links) {
    const auto& own = owners[node];
    for (int i = 0; i < static_cast<int>(own.size()); ++i)
      if (own[i].cls != PortClass::kManagement) plan.tables.set(node, i, out, kAllSls);
  }
  for (const auto& a : emb.attached) {  // rule 4
    const int node = emb.switch_node[a.level - 1][a.index];
    if (node < 0 || !plan.tables.has(node) ||
        std::find(in.closed_attached.begin(), in.closed_attached.end(), a.node) ==
            in.closed_attached.end())
      continue;
    const auto& own = owners[node];
    for (int o = 0; o < static_cast<int>(own.size()); ++o)
      if (o != a.switch_port && !(own[o].cls == PortClass::kManagement && own[o].host))
        plan.tables.set(node, a.switch_port, o, kAllSls);
  }
}

}  // namespace

Sl2VlPlan plan_sl2vl(const Sl2VlInput& in) {
  if (!in.tables) throw std::invalid_argument("sl2vl: forwarding tables are required");
  const auto& f = *in.fabric;
  const auto& lft = *in.tables;
  if (lft.size() != f.nodes.size())
    throw std::invalid_argument("sl2vl: one table slot per fabric node is expected");
  Sl2VlPlan plan;
  plan.owners = port_owners(in);
  const auto sources = management_sources(in);
  Exemptions ex;
  exempt_host_routes(in, plan.owners, sources, ex);
  exempt_switch_routes(in, plan.owners, sources, ex);
  fill_drops(in, ex, plan);
  for (const auto& [key, tenant] : ex.tenant)
    plan.exemptions.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), tenant});
  plan.mgmt_links.assign(ex.mgmt_links.begin(), ex.mgmt_links.end());
  for (const auto& row : plan.tables.drops)
    for (auto m : row) plan.dropped_pairs += m == kAllSls;
  return plan;
}

namespace {

using util::trim;

}  // namespace

Sl2VlTables parse_sl2vl(std::istream& in, const topology::Fabric& fabric,
                        const std::string& source) {
  std::map<int, int> node_by_lid;
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n)
    if (fabric.nodes[n].is_switch) node_by_lid[fabric.lid_of(static_cast<int>(n))] = n;
  Sl2VlTables tables(fabric.nodes.size());
  std::string raw;
  int line_no = 0, node = -1;
  auto fail = [&](const std::string& why) {
    throw Sl2VlDumpError(source + ":" + std::to_string(line_no) + ": " + why + ": " + raw);
  };
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string line = trim(raw);
    if (line.empty() || line.rfind("ibwarn:", 0) == 0) continue;
    if (line.rfind("# SL2VL table:", 0) == 0) {
      const auto pos = line.find("Lid");
      if (pos == std::string::npos) fail("no LID in the header");
      int lid = 0;
      try {
        lid = std::stoi(line.substr(pos + 3));
      } catch (const std::exception&) {
        fail("bad LID in the header");
      }
      auto it = node_by_lid.find(lid);
      if (it == node_by_lid.end()) fail("LID " + std::to_string(lid) + " is not a switch");
      node = it->second;
      if (!tables.has(node))
        tables.init_node(node, static_cast<int>(fabric.nodes[node].ports.size()));
      continue;
    }
    if (line.rfind("#", 0) == 0) continue;  // the "SL: | 0| 1|..." column header
    if (line.rfind("ports:", 0) != 0) fail("not an SL2VL line");
    if (node < 0) fail("entry before any '# SL2VL table' header");
    int inp = -1, out = -1;
    if (std::sscanf(line.c_str(), "ports: in %d, out %d:", &inp, &out) != 2)
      fail("expected 'ports: in I, out O:'");
    if (inp < 0 || out < 0 || inp >= tables.ports[node] || out >= tables.ports[node])
      fail("port out of range");
    const auto bar = line.find('|');
    if (bar == std::string::npos) fail("no SL columns");
    std::istringstream cols(line.substr(bar));
    std::uint16_t mask = 0;
    int sl = 0;
    std::string cell;
    while (std::getline(cols, cell, '|')) {
      cell = trim(cell);
      if (cell.empty()) continue;
      int vl = -1;
      try {
        vl = std::stoi(cell);
      } catch (const std::exception&) {
        fail("bad VL '" + cell + "'");
      }
      if (vl < 0 || vl > 15 || sl >= 16) fail("bad VL or too many SLs");
      if (vl == kDropVl) mask |= static_cast<std::uint16_t>(1u << sl);
      ++sl;
    }
    if (sl != 16) fail("expected 16 SL columns");
    tables.set(node, inp, out, mask);
  }
  return tables;
}

std::string format_sl2vl(const topology::Fabric& fabric, int node, int out_port,
                         const Sl2VlTables& tables) {
  std::ostringstream o;
  o << "# SL2VL table: Lid " << fabric.lid_of(node) << "\n";
  o << "#                 SL: |";
  for (int s = 0; s < 16; ++s) o << (s < 10 ? " " : "") << s << "|";
  o << "\n";
  char buf[64];
  for (int i = 0; i < tables.ports[node]; ++i) {
    std::snprintf(buf, sizeof buf, "ports: in %2d, out %2d: |", i, out_port);
    o << buf;
    const std::uint16_t m = tables.mask(node, i, out_port);
    for (int s = 0; s < 16; ++s) {
      const int vl = (m >> s) & 1 ? 15 : s % 8;
      o << (vl < 10 ? " " : "") << vl << "|";
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace laas::routing
