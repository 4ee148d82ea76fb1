// Recognition from the cabling, its last phase: which physical port each model port is.
#include <algorithm>
#include <map>

#include "topology/recognizer.h"

namespace laas::topology::recognition {

namespace {

// The model port -> physical port most rows of a level agree on (0: no opinion).
Recognizer::PortTemplates port_templates(const FatTree& tree, const Embedding& emb) {
  const int h = tree.height();
  const auto& pm = emb.port_map;
  Recognizer::PortTemplates out(h);
  for (int l = 1; l <= h; ++l) {
    out[l - 1].assign(tree.num_ports(l) + 1, 0);
    for (int mp = 1; mp <= tree.num_ports(l); ++mp) {
      std::map<int, int> votes;
      for (const auto& row : pm[l - 1])
        if (row[mp] > 0) ++votes[row[mp]];
      int best = 0, count = 0;
      for (const auto& [phys, c] : votes)
        if (c > count) best = phys, count = c;
      out[l - 1][mp] = best;
    }
  }
  return out;
}

}  // namespace

// Physical ports: what the cables show, and for absent parts the port most switches of the
// same level use for that model port (so a host or cable that comes back lands in its slot).
void Recognizer::build_maps(const FatTree& tree, Embedding& emb) {
  const int h = tree.height();
  place_switches(tree, emb);
  // Round 1: full leaves and complete parallel sets map one to one.
  std::vector<std::vector<int>> host_ports(tree.num_leaves());
  map_full_leaves(tree, emb, host_ports);
  for (int l = 1; l < h; ++l)
    for (int i = 0; i < tree.num_switches(l); ++i)
      for (int b = 0; b < tree.w(l + 1); ++b) map_parallel_group(tree, emb, l, i, b, nullptr);
  // Round 2: partial leaves and parallel sets, guided by what the others agree on.
  auto tmpl = port_templates(tree, emb);
  for (int l = 1; l < h; ++l)
    for (int i = 0; i < tree.num_switches(l); ++i)
      for (int b = 0; b < tree.w(l + 1); ++b) map_parallel_group(tree, emb, l, i, b, &tmpl);
  map_partial_leaves(tree, emb, host_ports, tmpl);
  // Round 3: every port still unknown takes the level's usual port, or the lowest free one.
  tmpl = port_templates(tree, emb);
  fill_unknown_ports(tree, emb, tmpl);
  place_hosts(tree, emb);
}

// Every model switch's node (pods and planes as the earlier phases ordered them), GUID and an
// empty port map row.
void Recognizer::place_switches(const FatTree& tree, Embedding& emb) const {
  const int h = tree.height();
  emb.switch_node.assign(h, {});
  emb.switch_guid.assign(h, {});
  emb.port_map.assign(h, {});
  emb.host_node.assign(tree.num_hosts(), -1);
  emb.host_port.assign(tree.num_hosts(), 0);
  emb.node_model.assign(n_, {-1, -1});
  const int pods = static_cast<int>(pod_leaves_.size());
  const int m2 = tree.leaves_per_pod();
  const int w2 = tree.switches_per_pod(2);
  emb.switch_node[0].assign(tree.num_leaves(), -1);
  emb.switch_node[1].assign(tree.num_switches(2), -1);
  for (int k = 0; k < pods; ++k) {
    for (int i = 0; i < m2; ++i) emb.switch_node[0][k * m2 + i] = pod_leaves_[k][i];
    for (int b = 0; b < w2; ++b) emb.switch_node[1][tree.level2_switch(k, b)] = pod_l2_[k][b];
  }
  if (h == 3) {
    emb.switch_node[2].assign(tree.num_switches(3), -1);
    for (int b = 0; b < w2; ++b)
      for (int c = 0; c < w3_; ++c) emb.switch_node[2][b * w3_ + c] = top_groups_[b][c];
  }
  for (int l = 1; l <= h; ++l)
    for (int i = 0; i < tree.num_switches(l); ++i) {
      const int node = emb.switch_node[l - 1][i];
      if (node >= 0) emb.node_model[node] = {l, i};
      emb.switch_guid[l - 1].push_back(node >= 0 ? f_.nodes[node].guid : 0);
      emb.port_map[l - 1].push_back(std::vector<int>(tree.num_ports(l) + 1, 0));
    }
}

// Each leaf's host ports (host_ports[leaf]); a leaf with all its hosts maps them in order.
void Recognizer::map_full_leaves(const FatTree& tree, Embedding& emb,
                                 std::vector<std::vector<int>>& host_ports) const {
  auto& pm = emb.port_map;
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    const int s = emb.switch_node[0][leaf];
    if (s < 0) continue;
    for (int ca : hosts_of_[s]) host_ports[leaf].push_back(ports_to(s, ca).at(0));
    if (static_cast<int>(host_ports[leaf].size()) == tree.m(1))
      for (int slot = 0; slot < tree.m(1); ++slot)
        pm[0][leaf][tree.down_port(1, slot, 0)] = host_ports[leaf][slot];
  }
}

// Parallel groups: (lower level, lower index, parent b) -> model columns b*p .. b*p+p-1.
// Without templates (round 1) only complete groups; with them (round 2) the partial ones.
void Recognizer::map_parallel_group(const FatTree& tree, Embedding& emb, int l, int i, int b,
                                    const PortTemplates* tmpl) const {
  auto& pm = emb.port_map;
  const bool use_template = tmpl != nullptr;
  const int p = tree.p(l + 1);
  const PortRef first = tree.parent_of(l, i, b * p);
  const int lo = emb.switch_node[l - 1][i];
  const int up = emb.switch_node[first.level - 1][first.index];
  if (lo < 0 || up < 0) return;
  const auto phys = ports_to(lo, up);
  if (phys.empty()) return;
  if (static_cast<int>(phys.size()) == p && !use_template) {
    for (int j = 0; j < p; ++j) {
      const PortRef u = tree.parent_of(l, i, b * p + j);
      pm[l - 1][i][tree.up_port(l, b * p + j)] = phys[j];
      pm[u.level - 1][u.index][u.port] = f_.nodes[lo].ports[phys[j]].peer_port;
    }
    return;
  }
  if (!use_template || static_cast<int>(phys.size()) >= p) return;
  // Fewer cables than parallel links: each present cable takes the model link whose usual
  // physical port it is, the others fill the remaining links in port order.
  std::vector<int> slot_of(phys.size(), -1);
  std::vector<bool> taken(p, false);
  for (size_t x = 0; x < phys.size(); ++x)
    for (int j = 0; j < p; ++j)
      if (!taken[j] && (*tmpl)[l - 1][tree.up_port(l, b * p + j)] == phys[x]) {
        slot_of[x] = j;
        taken[j] = true;
        break;
      }
  for (size_t x = 0; x < phys.size(); ++x)
    if (slot_of[x] < 0)
      for (int j = 0; j < p; ++j)
        if (!taken[j]) {
          slot_of[x] = j;
          taken[j] = true;
          break;
        }
  for (size_t x = 0; x < phys.size(); ++x) {
    const int j = slot_of[x];
    const PortRef u = tree.parent_of(l, i, b * p + j);
    pm[l - 1][i][tree.up_port(l, b * p + j)] = phys[x];
    pm[u.level - 1][u.index][u.port] = f_.nodes[lo].ports[phys[x]].peer_port;
  }
}

// A leaf with some hosts absent: the level's usual host ports when its own hosts sit on them
// and the others are free, else its hosts' ports and the lowest free ones, in port order.
void Recognizer::map_partial_leaves(const FatTree& tree, Embedding& emb,
                                    const std::vector<std::vector<int>>& host_ports,
                                    const PortTemplates& tmpl) const {
  auto& pm = emb.port_map;
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    const int s = emb.switch_node[0][leaf];
    const auto& have = host_ports[leaf];
    if (s < 0 || static_cast<int>(have.size()) == tree.m(1)) continue;
    std::vector<int> usual;
    for (int slot = 0; slot < tree.m(1); ++slot)
      usual.push_back(tmpl[0][tree.down_port(1, slot, 0)]);
    const auto& own = f_.nodes[s].ports;
    const bool fits =
        std::all_of(
            have.begin(), have.end(),
            [&](int p) { return std::find(usual.begin(), usual.end(), p) != usual.end(); }) &&
        std::all_of(usual.begin(), usual.end(), [&](int p) {
          if (std::find(have.begin(), have.end(), p) != have.end()) return true;
          if (p <= 0 || std::find(pm[0][leaf].begin(), pm[0][leaf].end(), p) != pm[0][leaf].end())
            return false;
          return p >= static_cast<int>(own.size()) || own[p].peer_node < 0;
        });
    std::vector<int> slots;
    if (fits && std::find(usual.begin(), usual.end(), 0) == usual.end()) {
      slots = usual;
    } else {
      slots = have;
      const auto& ports = f_.nodes[s].ports;
      for (int p = 1; static_cast<int>(slots.size()) < tree.m(1) && p < 255; ++p) {
        if (std::find(slots.begin(), slots.end(), p) != slots.end()) continue;
        if (p < static_cast<int>(ports.size()) && ports[p].peer_node >= 0) continue;
        if (std::find(pm[0][leaf].begin(), pm[0][leaf].end(), p) != pm[0][leaf].end()) continue;
        slots.push_back(p);
      }
      std::sort(slots.begin(), slots.end());
    }
    for (int slot = 0; slot < tree.m(1); ++slot)
      pm[0][leaf][tree.down_port(1, slot, 0)] = slots[slot];
  }
}

void Recognizer::fill_unknown_ports(const FatTree& tree, Embedding& emb,
                                    const PortTemplates& tmpl) const {
  auto& pm = emb.port_map;
  for (int l = 1; l <= tree.height(); ++l)
    for (int i = 0; i < tree.num_switches(l); ++i) {
      auto& row = pm[l - 1][i];
      const int node = emb.switch_node[l - 1][i];
      auto usable = [&](int p) {
        if (p <= 0 || p > 254) return false;
        if (std::find(row.begin() + 1, row.end(), p) != row.end()) return false;
        if (node < 0) return true;
        const auto& ports = f_.nodes[node].ports;
        return p >= static_cast<int>(ports.size()) || ports[p].peer_node < 0;
      };
      for (int mp = 1; mp <= tree.num_ports(l); ++mp) {
        if (row[mp] > 0) continue;
        if (usable(tmpl[l - 1][mp])) {
          row[mp] = tmpl[l - 1][mp];
          continue;
        }
        if (usable(mp)) {
          row[mp] = mp;
          continue;
        }
        for (int p = 1; p <= 254; ++p)
          if (usable(p)) {
            row[mp] = p;
            break;
          }
      }
    }
}

// Hosts present in their slots.
void Recognizer::place_hosts(const FatTree& tree, Embedding& emb) const {
  const auto& pm = emb.port_map;
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    const int s = emb.switch_node[0][leaf];
    if (s < 0) continue;
    for (int slot = 0; slot < tree.m(1); ++slot) {
      const int phys = pm[0][leaf][tree.down_port(1, slot, 0)];
      const auto& ports = f_.nodes[s].ports;
      if (phys <= 0 || phys >= static_cast<int>(ports.size())) continue;
      const int ca = ports[phys].peer_node;
      if (ca < 0 || f_.nodes[ca].is_switch) continue;
      const HostId host = tree.host_at(leaf, slot);
      emb.host_node[host] = ca;
      emb.host_port[host] = ports[phys].peer_port;
      emb.node_model[ca] = {0, host};
    }
  }
}

}  // namespace laas::topology::recognition
