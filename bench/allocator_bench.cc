// Allocation and release latency at 90% host load on the paper's largest tree
// (xgft(3;18,18,36;1,18,18), 11,664 hosts). Reports per-call p50/p99/max as counters (in
// microseconds); nothing here passes or fails.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "allocator/cluster.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace laas::allocator;

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

void AllocateReleaseAt90(benchmark::State& bench, const char* algorithm, double mean_size) {
  const auto tree = laas::topology::FatTree::parse("xgft(3;18,18,36;1,18,18)");
  LinkState state(tree);
  auto placer = make_placer(algorithm);
  std::mt19937 rng(7);
  std::exponential_distribution<double> size(1.0 / mean_size);
  auto draw = [&] { return std::min(tree.num_hosts(), 1 + static_cast<int>(size(rng))); };
  std::vector<std::pair<int, Placement>> live;
  int next = 0;
  const int target = static_cast<int>(0.9 * tree.num_hosts());
  while (tree.num_hosts() - state.free_hosts() < target) {
    auto r =
        placer->place(state, std::min(draw(), target - (tree.num_hosts() - state.free_hosts())));
    if (!r.placement) break;
    state.assign(next, *r.placement);
    live.emplace_back(next++, std::move(*r.placement));
  }
  std::vector<double> add_us, release_us;
  int refused = 0;
  for (auto _ : bench) {
    // Release a random tenant, then place new ones until the load is back at 90%.
    const size_t k = rng() % live.size();
    auto t0 = Clock::now();
    state.release(live[k].first, live[k].second);
    release_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    live[k] = std::move(live.back());
    live.pop_back();
    while (tree.num_hosts() - state.free_hosts() < target) {
      const int n = draw();
      t0 = Clock::now();
      auto r = placer->place(state, n);
      add_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      if (!r.placement) {
        ++refused;
        break;
      }
      state.assign(next, *r.placement);
      live.emplace_back(next++, std::move(*r.placement));
    }
  }
  bench.counters["place_us_p50"] = percentile(add_us, 0.50);
  bench.counters["place_us_p99"] = percentile(add_us, 0.99);
  bench.counters["place_us_max"] = percentile(add_us, 1.0);
  bench.counters["release_us_p99"] = percentile(release_us, 0.99);
  bench.counters["place_calls"] = static_cast<double>(add_us.size());
  bench.counters["refused"] = refused;
  bench.counters["load"] =
      static_cast<double>(tree.num_hosts() - state.free_hosts()) / tree.num_hosts();
}

BENCHMARK_CAPTURE(AllocateReleaseAt90, laas_mean8, "laas", 8.0)->Iterations(20000);
BENCHMARK_CAPTURE(AllocateReleaseAt90, laas_mean64, "laas", 64.0)->Iterations(5000);
BENCHMARK_CAPTURE(AllocateReleaseAt90, laas_mean300, "laas", 300.0)->Iterations(2000);
BENCHMARK_CAPTURE(AllocateReleaseAt90, simple_mean8, "simple", 8.0)->Iterations(20000);
BENCHMARK_CAPTURE(AllocateReleaseAt90, unconstrained_mean8, "unconstrained", 8.0)
    ->Iterations(20000);

}  // namespace

BENCHMARK_MAIN();
