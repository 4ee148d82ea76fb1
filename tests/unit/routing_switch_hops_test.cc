// HopMatrix (routing/switch_hops.h) against OpenSM's own way of building its min-hop matrices,
// redone here by brute force: every switch learns its cabled neighbours' least hop counts,
// round after round, until nothing changes. Model trees, with cables and switches removed.
#include <gtest/gtest.h>

#include <random>
#include <utility>
#include <vector>

#include "routing/switch_hops.h"
#include "topology/embedding.h"
#include "topology/fat_tree.h"

namespace laas::routing {
namespace {

using topology::Fabric;
using topology::FatTree;

// [switch][target][port], as OpenSM's iterative pass leaves it.
using Brute = std::vector<std::vector<std::vector<int>>>;
Brute relax(const SwitchGraph& g) {
  const int n = static_cast<int>(g.peer.size());
  Brute h(n);
  for (int s = 0; s < n; ++s) h[s].assign(n, std::vector<int>(g.peer[s].size(), kNoPath));
  auto set = [&](int s, int t, int p, int v) {
    h[s][t][p] = v;
    if (h[s][t][0] > v) h[s][t][0] = v;
  };
  for (int s = 0; s < n; ++s) {
    set(s, s, 0, 0);
    for (std::size_t p = 1; p < g.peer[s].size(); ++p) {
      const int r = g.peer[s][p];
      if (r >= 0 && r != s) set(s, r, static_cast<int>(p), 1);
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (int s = 0; s < n; ++s)
      for (std::size_t p = 1; p < g.peer[s].size(); ++p) {
        const int r = g.peer[s][p];
        if (r < 0 || r == s) continue;
        for (int t = 0; t < n; ++t) {
          const int least = h[r][t][0];
          if (least == kNoPath) continue;
          if (least + 1 < h[s][t][p]) {
            set(s, t, static_cast<int>(p), least + 1);
            changed = true;
          }
        }
      }
  }
  return h;
}

void expect_same(const SwitchGraph& g, const std::string& what) {
  const HopMatrix m(g);
  const Brute b = relax(g);
  ASSERT_EQ(m.size(), static_cast<int>(g.peer.size()));
  int diffs = 0;
  std::vector<std::uint8_t> row;
  for (int s = 0; s < m.size(); ++s)
    for (int t = 0; t < m.size(); ++t) {
      row.assign(g.peer[s].size(), 0);
      m.fill_row(s, t, row.data());
      for (std::size_t p = 0; p < row.size(); ++p) {
        const int want = b[s][t][p];
        if (row[p] != want || m.via(s, static_cast<int>(p), t) != want) {
          if (++diffs <= 5)
            ADD_FAILURE() << what << ": switch " << s << " target " << t << " port " << p
                          << ": fill_row " << int(row[p]) << ", via "
                          << int(m.via(s, static_cast<int>(p), t)) << ", OpenSM's pass " << want;
        }
      }
      EXPECT_EQ(m.least(s, t), b[s][t][0]);
    }
  EXPECT_EQ(diffs, 0) << what;
}

// Removes the cable at (node, port) from both ends.
void cut(Fabric& f, int node, int port) {
  auto& a = f.nodes[node].ports[port];
  if (a.peer_node < 0) return;
  f.nodes[a.peer_node].ports[a.peer_port].peer_node = -1;
  a.peer_node = -1;
}

TEST(SwitchHops, SmallTreeByHand) {
  // xgft(2;2,2;1,2): leaves L0, L1 (ports 1-2 hosts, 3-4 up), spines S0, S1 (ports 1-2 down).
  const FatTree tree = FatTree::parse("xgft(2;2,2;1,2)");
  const auto [fabric, emb] = topology::build_model_fabric(tree);
  const SwitchGraph g = switch_graph(fabric);
  const HopMatrix m(g);
  ASSERT_EQ(m.size(), 4);
  int leaf0 = -1, leaf1 = -1, spine0 = -1;
  {
    int n = 0;
    for (std::size_t i = 0; i < fabric.nodes.size(); ++i) {
      if (!fabric.nodes[i].is_switch) continue;
      if (static_cast<int>(i) == emb.switch_node[0][0]) leaf0 = n;
      if (static_cast<int>(i) == emb.switch_node[0][1]) leaf1 = n;
      if (static_cast<int>(i) == emb.switch_node[1][0]) spine0 = n;
      ++n;
    }
  }
  EXPECT_EQ(m.least(leaf0, leaf0), 0);
  EXPECT_EQ(m.least(leaf0, leaf1), 2);
  EXPECT_EQ(m.least(leaf0, spine0), 1);
  for (std::size_t p = 1; p < g.peer[leaf0].size(); ++p) {
    const int r = g.peer[leaf0][p];
    if (r < 0) {
      EXPECT_EQ(m.via(leaf0, static_cast<int>(p), leaf1), kNoPath) << "host port " << p;
      continue;
    }
    EXPECT_EQ(m.via(leaf0, static_cast<int>(p), leaf1), 2);
    EXPECT_EQ(m.via(leaf0, static_cast<int>(p), leaf0), 2);  // up and back
    EXPECT_EQ(m.via(leaf0, static_cast<int>(p), spine0), r == spine0 ? 1 : 3);
  }
}

TEST(SwitchHops, ModelTreesMatchOpenSMsPass) {
  for (const char* spec :
       {"pgft(2;8,4;1,4;1,2)", "xgft(3;2,3,2;1,2,3)", "pgft(3;2,4,3;1,2,2;1,2,2)"}) {
    const auto [fabric, emb] = topology::build_model_fabric(FatTree::parse(spec));
    expect_same(switch_graph(fabric), spec);
  }
}

TEST(SwitchHops, FaultsMatchOpenSMsPass) {
  std::mt19937 rng(14);
  for (const char* spec :
       {"pgft(2;8,4;1,4;1,2)", "xgft(3;2,3,2;1,2,3)", "pgft(3;2,4,3;1,2,2;1,2,2)"}) {
    for (int round = 0; round < 6; ++round) {
      auto [fabric, emb] = topology::build_model_fabric(FatTree::parse(spec));
      std::vector<std::pair<int, int>> cables;
      for (std::size_t i = 0; i < fabric.nodes.size(); ++i)
        for (std::size_t p = 1; p < fabric.nodes[i].ports.size(); ++p) {
          const auto& port = fabric.nodes[i].ports[p];
          if (port.peer_node > static_cast<int>(i)) cables.emplace_back(static_cast<int>(i), p);
        }
      std::shuffle(cables.begin(), cables.end(), rng);
      // A few cables (hosts' too), up to a third of them: detours, then cut-off parts.
      const std::size_t cuts = 1 + rng() % (cables.size() / 3);
      for (std::size_t c = 0; c < cuts; ++c) cut(fabric, cables[c].first, cables[c].second);
      if (round % 2 == 1) {  // and a whole spine switch gone dark
        const int top = static_cast<int>(emb.switch_node.size()) - 1;
        const int node = emb.switch_node[top][rng() % emb.switch_node[top].size()];
        for (std::size_t p = 1; p < fabric.nodes[node].ports.size(); ++p)
          cut(fabric, node, static_cast<int>(p));
      }
      expect_same(switch_graph(fabric), std::string(spec) + " round " + std::to_string(round));
    }
  }
}

TEST(SwitchHops, LoopBackCableAndBadPeer) {
  SwitchGraph g;
  g.peer = {{-1, 0, 1, 1}, {-1, 0, 0, -1}};  // switch 0's port 1 is cabled to itself
  expect_same(g, "loop-back");
  const HopMatrix m(g);
  EXPECT_EQ(m.via(0, 1, 1), kNoPath);
  EXPECT_EQ(m.via(0, 2, 1), 1);
  g.peer[1][3] = 7;
  EXPECT_THROW(HopMatrix{g}, std::invalid_argument);
}

}  // namespace
}  // namespace laas::routing
