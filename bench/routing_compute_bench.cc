// routing::compute and to_lid_tables on the paper's largest 36-port tree and smaller ones.
// Figures only: nothing here passes or fails.
#include <benchmark/benchmark.h>

#include <string>
#include <utility>
#include <vector>

#include "allocator/cluster.h"
#include "allocator/placer.h"
#include "routing/incremental.h"
#include "routing/routing.h"
#include "topology/servers.h"

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

// A tenant change on a rail-optimized tree as scripts/bench-routing.sh makes it: `servers`
// servers (all their rails) added to a fabric holding `others` such tenants, then removed
// again; each iteration routes one change, in full or incrementally.
struct RailChange {
  FatTree tree;
  laas::routing::RoutingRequest without, with;
  RailChange(const std::string& spec, int rails, int servers, int others)
      : tree(FatTree::parse(spec)) {
    const auto ports = laas::topology::rail_servers(tree, rails);
    laas::allocator::Cluster cluster(tree,
                                     laas::allocator::make_server_placer("laas", ports.ports));
    cluster.set_leaf_rails(laas::topology::rail_of_leaf(tree, ports));
    for (int i = 0; i < others; ++i) cluster.add("other" + std::to_string(i), servers * rails);
    without.management_hosts = with.management_hosts = {tree.num_hosts() - 1};
    for (const auto& [name, t] : cluster.tenants()) without.tenants.push_back({name, t.placement});
    cluster.add("new", servers * rails);
    for (const auto& [name, t] : cluster.tenants()) with.tenants.push_back({name, t.placement});
  }
};

void BM_RailChange(benchmark::State& state, const std::string& spec, int servers,
                   bool incremental) {
  const RailChange c(spec, 8, servers, 4);
  laas::routing::IncrementalRouting incr;
  incr.compute(c.tree, c.without);
  bool add = true;
  for (auto _ : state) {
    const auto& req = add ? c.with : c.without;
    if (incremental) {
      benchmark::DoNotOptimize(incr.compute(c.tree, req).tables.row(0));
    } else {
      auto r = laas::routing::compute(c.tree, req);
      benchmark::DoNotOptimize(r.tables.row(0));
    }
    add = !add;
  }
  state.counters["leaves"] = incr.stats().leaves;
  state.counters["switches"] = incr.stats().switches;
  state.counters["switch_dests"] = incr.stats().switch_destinations;
  state.counters["full"] = incr.stats().full;
}

// Every rail tree routed both ways, so that each run gives the two figures side by side: a
// change of 8 servers (one pod's leaves, no level-2 link) and of 64 servers (several pods,
// taking level-2 links).
const bool kRailChangesRegistered = [] {
  const std::pair<const char*, const char*> trees[] = {
      {"rails8_2048", "xgft(3;16,16,64;1,16,16)"}, {"rails8_4096", "xgft(3;16,16,128;1,16,16)"}};
  for (const auto& [name, spec] : trees)
    for (const int servers : {8, 64})
      for (const bool incremental : {false, true})
        benchmark::RegisterBenchmark(
            (std::string("BM_RailChange/") + name + "_" + std::to_string(servers) + "servers" +
             (incremental ? "_incremental" : "_full"))
                .c_str(),
            BM_RailChange, std::string(spec), servers, incremental)
            ->Unit(benchmark::kMillisecond);
  return true;
}();

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
