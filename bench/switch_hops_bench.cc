// HopMatrix (routing/switch_hops.h) on the paper's largest tree: the distances, and filling one
// row per (switch, switch LID) as the plugin fills OpenSM's matrices. Figures only.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "routing/switch_hops.h"
#include "topology/embedding.h"
#include "topology/fat_tree.h"

namespace {

using laas::routing::HopMatrix;
using laas::routing::SwitchGraph;

SwitchGraph graph_of(const std::string& spec) {
  const auto [fabric, emb] =
      laas::topology::build_model_fabric(laas::topology::FatTree::parse(spec));
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

const char* kSpecs[] = {"xgft(3;12,12,12;1,12,12)", "xgft(3;18,18,36;1,18,18)"};

void BM_Distances(benchmark::State& state) {
  const SwitchGraph g = graph_of(kSpecs[state.range(0)]);
  for (auto _ : state) benchmark::DoNotOptimize(HopMatrix(g).size());
  state.SetLabel(std::to_string(g.peer.size()) + " switches");
}
BENCHMARK(BM_Distances)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Rows allocated once (OpenSM keeps them across sweeps), filled every time.
void BM_Fill(benchmark::State& state) {
  const SwitchGraph g = graph_of(kSpecs[state.range(0)]);
  const HopMatrix m(g);
  const int n = m.size();
  std::vector<std::vector<std::uint8_t*>> rows(n, std::vector<std::uint8_t*>(n));
  for (int s = 0; s < n; ++s)
    for (int t = 0; t < n; ++t)
      rows[s][t] = static_cast<std::uint8_t*>(std::malloc(g.peer[s].size()));
  for (auto _ : state)
    for (int s = 0; s < n; ++s)
      for (int t = 0; t < n; ++t) m.fill_row(s, t, rows[s][t]);
  for (auto& r : rows)
    for (auto* p : r) std::free(p);
  state.SetLabel(std::to_string(n) + " switches");
}
BENCHMARK(BM_Fill)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
