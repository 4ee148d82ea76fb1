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
  return laas::routing::switch_graph(
      laas::topology::build_model_fabric(laas::topology::FatTree::parse(spec)).first);
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
