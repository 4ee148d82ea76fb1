// routing::compute and to_lid_tables on the paper's largest 36-port tree and smaller ones.
// Figures only: nothing here passes or fails.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "routing/routing.h"

namespace {

using laas::routing::TenantRoutes;
using laas::topology::FatTree;

// Tenants of whole pods' leaf halves: pod p, leaves [0, m2/2) with all their hosts and up-links,
// which is a legal LaaS placement (Q x D, common column sets) in every pod.
std::vector<TenantRoutes> half_pods(const FatTree& t) {
  std::vector<TenantRoutes> tenants;
  for (int pod = 0; pod < t.num_pods(); ++pod) {
    TenantRoutes tr;
    tr.key = "pod" + std::to_string(pod);
    for (int li = 0; li < t.leaves_per_pod() / 2; ++li) {
      const int leaf = pod * t.leaves_per_pod() + li;
      for (int s = 0; s < t.hosts_per_leaf(); ++s) tr.placement.hosts.push_back(t.host_at(leaf, s));
      for (int c = 0; c < t.up_columns(1); ++c) tr.placement.links.push_back(t.l1_link(leaf, c));
    }
    tenants.push_back(std::move(tr));
  }
  return tenants;
}

void BM_Compute(benchmark::State& state, const std::string& spec, bool with_tenants) {
  const FatTree tree = FatTree::parse(spec);
  const auto tenants = with_tenants ? half_pods(tree) : std::vector<TenantRoutes>{};
  for (auto _ : state) {
    auto r = laas::routing::compute(tree, tenants, {tree.num_hosts() - 1}, {});
    benchmark::DoNotOptimize(r.tables.row(0));
  }
  const double entries =
      static_cast<double>(tree.total_switches()) * (tree.num_hosts() + tree.total_switches());
  state.counters["entries"] = entries;
  state.counters["tenants"] = static_cast<double>(tenants.size());
}

void BM_ToLidTables(benchmark::State& state, const std::string& spec) {
  const FatTree tree = FatTree::parse(spec);
  const auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  const auto r = laas::routing::compute(tree, half_pods(tree), {tree.num_hosts() - 1}, {});
  for (auto _ : state) {
    auto lids = laas::routing::to_lid_tables(fabric, emb, tree, r.tables);
    benchmark::DoNotOptimize(lids.data());
  }
}

BENCHMARK_CAPTURE(BM_Compute, xgft2_18_36_empty, "xgft(2;18,36;1,18)", false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Compute, xgft3_18_18_36_empty, "xgft(3;18,18,36;1,18,18)", false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Compute, xgft3_18_18_36_tenants, "xgft(3;18,18,36;1,18,18)", true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ToLidTables, xgft3_18_18_36, "xgft(3;18,18,36;1,18,18)")
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
