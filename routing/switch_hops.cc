#include "routing/switch_hops.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace laas::routing {

SwitchGraph switch_graph(const topology::Fabric& fabric) {
  std::vector<int> number(fabric.nodes.size(), -1);
  int n = 0;
  for (std::size_t i = 0; i < fabric.nodes.size(); ++i)
    if (fabric.nodes[i].is_switch) number[i] = n++;
  SwitchGraph g;
  for (const auto& node : fabric.nodes) {
    if (!node.is_switch) continue;
    std::vector<int> peers(node.ports.size(), -1);
    for (std::size_t p = 1; p < node.ports.size(); ++p)
      if (node.ports[p].peer_node >= 0) peers[p] = number[node.ports[p].peer_node];
    g.peer.push_back(std::move(peers));
  }
  return g;
}

HopMatrix::HopMatrix(const SwitchGraph& graph)
    : n_(static_cast<int>(graph.peer.size())), peer_(graph.peer) {
  const auto n = static_cast<std::size_t>(n_);
  // The switches each switch learns from: distances are followed along a cable from the
  // switch that owns the port, so the search from a target walks the cables backwards.
  std::vector<std::vector<int>> learners(n);
  for (int s = 0; s < n_; ++s) {
    for (int r : peer_[s]) {
      if (r < -1 || r >= n_)
        throw std::invalid_argument("switch " + std::to_string(s) + ": peer " + std::to_string(r) +
                                    " out of range");
      if (r >= 0 && r != s) learners[r].push_back(s);
    }
  }
  for (auto& l : learners) {
    std::sort(l.begin(), l.end());
    l.erase(std::unique(l.begin(), l.end()), l.end());
  }
  dist_.assign(n * n, kNoPath);
  std::vector<int> queue(n);
  std::vector<std::uint8_t> d(n);
  for (int t = 0; t < n_; ++t) {
    std::fill(d.begin(), d.end(), kNoPath);
    d[t] = 0;
    std::size_t head = 0, tail = 0;
    queue[tail++] = t;
    while (head < tail) {
      const int u = queue[head++];
      // OpenSM stores hops in a byte and never records 255 (its "no path").
      if (d[u] + 1 >= kNoPath) continue;
      for (int s : learners[u]) {
        if (d[s] != kNoPath) continue;
        d[s] = static_cast<std::uint8_t>(d[u] + 1);
        queue[tail++] = s;
      }
    }
    std::copy(d.begin(), d.end(), dist_.begin() + static_cast<std::ptrdiff_t>(t * n));
  }
}

std::uint8_t HopMatrix::via(int from, int port, int to) const {
  if (port == 0) return least(from, to);
  const int r = peer_[from][port];
  if (r < 0 || r == from) return kNoPath;
  const std::uint8_t h = least(r, to);
  return h == kNoPath || h + 1 >= kNoPath ? kNoPath : static_cast<std::uint8_t>(h + 1);
}

void HopMatrix::fill_row(int from, int to, std::uint8_t* row) const {
  const auto& ports = peer_[from];
  const std::uint8_t* towards = dist_.data() + static_cast<std::size_t>(to) * n_;  // [r]
  row[0] = least(from, to);
  for (std::size_t p = 1; p < ports.size(); ++p) {
    const int r = ports[p];
    if (r < 0 || r == from) {
      row[p] = kNoPath;
      continue;
    }
    const std::uint8_t h = towards[r];
    row[p] = h == kNoPath || h + 1 >= kNoPath ? kNoPath : static_cast<std::uint8_t>(h + 1);
  }
}

}  // namespace laas::routing
