#include <algorithm>
#include <string>

#include "routing/routing.h"

namespace laas::routing {

topology::Embedding without_hosts(const topology::Embedding& embedding,
                                  const std::vector<HostId>& hosts) {
  topology::Embedding out = embedding;
  for (HostId h : hosts) {
    if (h < 0 || h >= static_cast<HostId>(out.host_node.size()) || out.host_node[h] < 0) continue;
    if (out.host_node[h] < static_cast<int>(out.node_model.size()))
      out.node_model[out.host_node[h]] = {-1, -1};
    out.host_node[h] = -1;
    if (h < static_cast<HostId>(out.host_port.size())) out.host_port[h] = 0;
    if (std::find(out.missing_hosts.begin(), out.missing_hosts.end(), h) == out.missing_hosts.end())
      out.missing_hosts.push_back(h);
  }
  std::sort(out.missing_hosts.begin(), out.missing_hosts.end());
  return out;
}

namespace {

// Whether the routes towards `via` (the LID of switch `at`) lead from switch `node` to `at`
// through switches above the leaves only.
bool reaches_without_leaf(const topology::Fabric& fabric, const topology::Embedding& embedding,
                          const LidTables& out, int node, int at, topology::Lid via) {
  for (int hop = 0; hop < 64; ++hop) {
    if (node == at) return true;
    if (node < 0 || (hop > 0 && embedding.node_model[node].first == 1)) return false;
    const LidTable& lft = out[node];
    if (lft.empty() || via >= lft.size() || lft[via] == kNoRoute || lft[via] == 0 ||
        lft[via] >= fabric.nodes[node].ports.size())
      return false;
    const int next = fabric.nodes[node].ports[lft[via]].peer_node;
    node = next >= 0 && fabric.nodes[next].is_switch ? next : -1;
  }
  return false;
}

// The LID of every endpoint (0: absent) and the largest LID the tables must hold.
std::vector<topology::Lid> endpoint_lids(const topology::Fabric& fabric,
                                         const topology::Embedding& embedding, const FatTree& tree,
                                         const ModelTables& tables, topology::Lid& max_lid) {
  std::vector<topology::Lid> lid(tables.num_endpoints(), 0);
  max_lid = 0;
  auto need = [&](int node, const std::string& what) {
    const topology::Lid l = fabric.lid_of(node);
    if (l == 0) throw RoutingError(what + " (" + fabric.nodes[node].name + ") has no LID");
    if (l > max_lid) max_lid = l;
    return l;
  };
  // Absent hosts and switches have no LID and no table: they are skipped, the
  // model's routes towards them are simply not installed.
  for (HostId h = 0; h < tree.num_hosts(); ++h)
    if (embedding.host_node[h] >= 0)
      lid[tables.endpoint_of_host(h)] = need(embedding.host_node[h], tree.host_name(h));
  for (int level = 1; level <= tree.height(); ++level) {
    if (static_cast<int>(embedding.switch_node[level - 1].size()) != tree.num_switches(level))
      throw RoutingError("the embedding has the wrong number of level-" + std::to_string(level) +
                         " switches");
    for (int i = 0; i < tree.num_switches(level); ++i)
      if (embedding.switch_node[level - 1][i] >= 0)
        lid[tables.endpoint_of_switch(level, i)] =
            need(embedding.switch_node[level - 1][i], tree.switch_name(level, i));
  }
  for (const auto& a : embedding.attached) {
    const topology::Lid l = fabric.lid_of(a.node);
    if (l > max_lid) max_lid = l;
  }
  return lid;
}

// Every present switch's model row, by LID and physical port.
void fill_switch_tables(const topology::Embedding& embedding, const FatTree& tree,
                        const ModelTables& tables, const std::vector<topology::Lid>& lid,
                        topology::Lid max_lid, LidTables& out) {
  const int endpoints = tables.num_endpoints();
  for (int level = 1; level <= tree.height(); ++level) {
    for (int i = 0; i < tree.num_switches(level); ++i) {
      const int node = embedding.switch_node[level - 1][i];
      if (node < 0) continue;
      const auto& ports = embedding.port_map.at(level - 1).at(i);
      LidTable& lft = out[node];
      lft.assign(static_cast<std::size_t>(max_lid) + 1, kNoRoute);
      const std::uint8_t* row = tables.row(tables.switch_number(level, i));
      for (int e = 0; e < endpoints; ++e) {
        const std::uint8_t p = row[e];
        if (p == kNoRoute || lid[e] == 0) continue;
        if (p >= ports.size() || ports[p] < 0 || ports[p] > 254)
          throw RoutingError(tree.switch_name(level, i) + ": model port " + std::to_string(p) +
                             " has no physical port");
        lft[lid[e]] = static_cast<std::uint8_t>(ports[p]);
      }
    }
  }
}

// A closed attached host (LID l on switch `at`, whose LID is `via`): only the management
// sources' way to `at` routes it.
void route_closed_attached(const topology::Fabric& fabric, const topology::Embedding& embedding,
                           const ClosedAttached& closed, int at, topology::Lid l, topology::Lid via,
                           LidTables& out) {
  for (int source : closed.management_sources) {
    int node = source;
    // A leaf with management on it: up the first management up-link (the way it sends a
    // free host) after which the switches' own routes lead to `at` without another leaf.
    if (node != at && embedding.node_model[node].first == 1) {
      const LidTable& lft = out[node];
      int chosen = -1;
      for (HostId h : closed.free_hosts) {
        const int hn = embedding.host_node[h];
        const topology::Lid hl = hn >= 0 ? fabric.lid_of(hn) : 0;
        if (hl == 0 || hl >= lft.size() || lft[hl] == kNoRoute || lft[hl] == 0) continue;
        const auto& port = fabric.nodes[node].ports.at(lft[hl]);
        if (port.peer_node < 0 || !fabric.nodes[port.peer_node].is_switch) continue;
        if (reaches_without_leaf(fabric, embedding, out, port.peer_node, at, via)) {
          chosen = lft[hl];
          break;
        }
      }
      if (chosen < 0) continue;
      out[node][l] = static_cast<std::uint8_t>(chosen);
      node = fabric.nodes[node].ports[chosen].peer_node;
    }
    if (!reaches_without_leaf(fabric, embedding, out, node, at, via)) continue;
    for (; node != at; node = fabric.nodes[node].ports[out[node][via]].peer_node)
      out[node][l] = out[node][via];
  }
}

}  // namespace

LidTables to_lid_tables(const topology::Fabric& fabric, const topology::Embedding& embedding,
                        const FatTree& tree, const ModelTables& tables,
                        const ClosedAttached& closed) {
  if (static_cast<int>(embedding.host_node.size()) != tree.num_hosts() ||
      static_cast<int>(embedding.switch_node.size()) != tree.height() ||
      tables.num_hosts() != tree.num_hosts())
    throw RoutingError("the embedding or the tables do not match the tree " + tree.spec().text());
  topology::Lid max_lid = 0;
  const auto lid = endpoint_lids(fabric, embedding, tree, tables, max_lid);
  LidTables out(fabric.nodes.size());
  fill_switch_tables(embedding, tree, tables, lid, max_lid, out);
  // An attached host takes the routes of its switch, which forwards it on its own port.
  for (const auto& a : embedding.attached) {
    const topology::Lid l = fabric.lid_of(a.node);
    const int at = embedding.switch_node.at(a.level - 1).at(a.index);
    if (l == 0 || at < 0) continue;  // no LID yet, or its switch is absent
    const topology::Lid via = lid[tables.endpoint_of_switch(a.level, a.index)];
    out[at][l] = static_cast<std::uint8_t>(a.switch_port);
    if (via == 0) continue;
    const bool is_closed =
        std::find(closed.nodes.begin(), closed.nodes.end(), a.node) != closed.nodes.end();
    if (is_closed) {
      route_closed_attached(fabric, embedding, closed, at, l, via, out);
      continue;
    }
    for (std::size_t node = 0; node < out.size(); ++node)
      if (!out[node].empty() && static_cast<int>(node) != at) out[node][l] = out[node][via];
  }
  return out;
}

void spread_lmc(const topology::Fabric& fabric, int lmc, LidTables& tables) {
  if (lmc <= 0) return;
  const int count = 1 << std::min(lmc, 7);
  for (const auto& node : fabric.nodes) {
    if (node.is_switch) continue;
    for (const auto& port : node.ports) {
      if (port.peer_node < 0 || port.lid == 0) continue;
      const std::size_t base = port.lid;
      for (auto& table : tables) {
        if (table.size() <= base) continue;
        if (table.size() < base + count) table.resize(base + count, kNoRoute);
        for (int k = 1; k < count; ++k) table[base + k] = table[base];
      }
    }
  }
}

}  // namespace laas::routing
