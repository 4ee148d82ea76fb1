// laas-sim speed: a 10,000-tenant FIFO run on the 11,664-host tree of the paper (its Python
// simulator took 14 s). A figure, not a pass/fail test. Counters: utilization and the placer's
// per-call latency percentiles in microseconds.
#include <benchmark/benchmark.h>

#include "allocator/placer.h"
#include "sim/generator.h"
#include "sim/simulator.h"

namespace {

void run(benchmark::State& state, const std::string& algorithm, const std::string& policy) {
  const auto tree = laas::topology::FatTree::parse("xgft(3;18,18,36;1,18,18)");
  laas::sim::GenSpec g;
  g.size.kind = laas::sim::SizeKind::kExponentialRelease;
  g.size.mean = 8;
  g.size.max_size = tree.num_hosts();
  g.tenants = 10000;
  g.seed = 1;
  const auto work = laas::sim::generate(g);
  auto placer = laas::allocator::make_placer(algorithm);
  laas::sim::SimOptions o;
  o.policy = policy;
  o.keep_timeline = false;
  laas::sim::SimResult r;
  for (auto _ : state) {
    r = laas::sim::simulate(tree, *placer, work, o);
    benchmark::DoNotOptimize(r.placed);
  }
  state.counters["host_util_pct"] = r.window.hosts * 100;
  state.counters["alloc_us_p50"] = r.search_us.p50;
  state.counters["alloc_us_p99"] = r.search_us.p99;
  state.counters["alloc_us_max"] = r.search_us.max;
  state.counters["alloc_cpu_us_p50"] = r.search_cpu_us.p50;
  state.counters["alloc_cpu_us_p99"] = r.search_cpu_us.p99;
  state.counters["alloc_cpu_us_max"] = r.search_cpu_us.max;
  state.counters["placer_calls"] = static_cast<double>(r.search_us.count);
}

}  // namespace

BENCHMARK_CAPTURE(run, laas_fifo, std::string("laas"), std::string("fifo"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(run, simple_fifo, std::string("simple"), std::string("fifo"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(run, unconstrained_fifo, std::string("unconstrained"), std::string("fifo"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(run, laas_backfill, std::string("laas"), std::string("backfill"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

BENCHMARK_MAIN();
