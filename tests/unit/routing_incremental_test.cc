// IncrementalRouting gives compute()'s result after every change: random sequences of tenants
// added and removed, links failing and coming back, management moving, on single-port 2- and
// 3-level trees and a rail-optimized one; after each step the incremental tables are compared
// with a full compute, switch by switch, and the warnings line by line.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "allocator/cluster.h"
#include "allocator/placer.h"
#include "routing/incremental.h"
#include "routing/routing.h"
#include "topology/servers.h"

namespace laas::routing {
namespace {

using topology::FatTree;

// The first switch (level, index) whose row differs, or "" when the tables are the same.
std::string first_difference(const ModelTables& want, const ModelTables& got) {
  if (want.num_switches() != got.num_switches() || want.num_endpoints() != got.num_endpoints())
    return "tables of another size";
  for (int number = 0; number < want.num_switches(); ++number) {
    const std::uint8_t* a = want.row(number);
    const std::uint8_t* b = got.row(number);
    for (int e = 0; e < want.num_endpoints(); ++e)
      if (a[e] != b[e]) {
        const auto [level, index] = want.switch_at(number);
        return "switch (" + std::to_string(level) + "," + std::to_string(index) + ") endpoint " +
               std::to_string(e) + ": full " + std::to_string(a[e]) + ", incremental " +
               std::to_string(b[e]);
      }
  }
  return "";
}

struct Scenario {
  const char* spec;
  int rails;  // 1: single-port hosts
  int max_hosts;
  // Tenants large enough to span pods: most changes take or release level-2 links, which
  // the incremental path recomputes at the changed pods' switches only for other hosts.
  bool spans_pods = false;
};

struct Counts {
  int steps = 0;
  int incremental = 0;  // steps the incremental path took
  int kept_switches = 0;
  int level2 = 0;  // incremental steps where level-2 links changed hands
};

// One random sequence on `s`; every step compared with a full compute.
Counts run_sequence(const Scenario& s, unsigned seed) {
  const FatTree tree = FatTree::parse(s.spec);
  std::unique_ptr<allocator::Placer> placer =
      s.rails > 1
          ? allocator::make_server_placer("laas", topology::rail_servers(tree, s.rails).ports)
          : allocator::make_placer("laas");
  allocator::Cluster cluster(tree, std::move(placer));
  if (s.rails > 1)
    cluster.set_leaf_rails(topology::rail_of_leaf(tree, topology::rail_servers(tree, s.rails)));
  std::mt19937 rng(seed);
  auto uniform = [&rng](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  std::vector<HostId> management = {tree.num_hosts() - 1};
  cluster.reserve(management);  // placements keep off management hosts
  std::vector<std::pair<int, int>> management_switches;
  std::vector<LinkId> faulty;
  IncrementalRouting incr;
  Counts counts;
  int next_name = 0;
  for (int step = 0; step < 40; ++step) {
    const int what = uniform(20);
    if (what < 9) {  // a tenant added (whole servers on a rail tree)
      // Spanning pods: at least a third of the largest, so that most adds cross pods.
      const int least = s.spans_pods ? s.max_hosts / 3 : 0;
      const int size = (1 + least + uniform(s.max_hosts - least)) * s.rails;
      cluster.add("t" + std::to_string(next_name++), size);
    } else if (what < 16) {  // a tenant removed
      if (!cluster.tenants().empty()) {
        auto it = cluster.tenants().begin();
        std::advance(it, uniform(static_cast<int>(cluster.tenants().size())));
        cluster.remove(it->first);
      }
    } else if (what < 17 + !s.spans_pods) {  // a link fails or comes back
      const LinkId l = uniform(tree.total_links());
      const auto found = std::find(faulty.begin(), faulty.end(), l);
      if (found == faulty.end()) {
        faulty.push_back(l);
        cluster.set_faulty(l, true);
      } else {
        faulty.erase(found);
        cluster.set_faulty(l, false);
      }
    } else if (what < 18) {  // a management host moves to a free host
      const HostId h = uniform(tree.num_hosts());
      if (cluster.reserve({h}).empty()) {  // not a tenant's
        if (management[0] != h) cluster.unreserve(management);
        management = {h};
      }
    } else {  // an SM on a leaf, or none
      management_switches.clear();
      if (uniform(2)) management_switches.push_back({1, uniform(tree.num_leaves())});
    }
    RoutingRequest req;
    for (const auto& [name, t] : cluster.tenants()) req.tenants.push_back({name, t.placement});
    req.management_hosts = management;
    req.management_switches = management_switches;
    req.faulty_links = faulty;
    const RoutingResult full = compute(tree, req);
    const RoutingResult& got = incr.compute(tree, req);
    ++counts.steps;
    counts.incremental += !incr.stats().full;
    counts.kept_switches += !incr.stats().switches;
    counts.level2 += !incr.stats().full && incr.stats().level2_pods > 0;
    const std::string diff = first_difference(full.tables, got.tables);
    EXPECT_EQ(diff, "") << s.spec << " seed " << seed << " step " << step << " ("
                        << (incr.stats().full ? "full: " + incr.stats().why : "incremental") << ", "
                        << incr.stats().leaves << " leaves)";
    EXPECT_EQ(full.warnings, got.warnings) << s.spec << " seed " << seed << " step " << step;
    if (!diff.empty()) break;
  }
  return counts;
}

const Scenario kScenarios[] = {
    {"xgft(2;4,8;1,4)", 1, 6},
    {"xgft(2;8,12;1,8)", 1, 20},
    {"xgft(3;4,4,4;1,4,4)", 1, 10},
    {"xgft(3;3,4,6;1,2,4)", 1, 8},
    {"xgft(3;4,8,4;1,8,4)", 8, 3},  // 8 rails: servers of 8 ports, one on each leaf of a pod
    // Tenants spanning pods (a pod holds 16 hosts, 12 hosts, 4 servers of 32).
    {"xgft(3;4,4,4;1,4,4)", 1, 24, true},
    {"xgft(3;3,4,6;1,2,4)", 1, 30, true},
    {"xgft(3;4,8,8;1,8,4)", 8, 10, true},
};

TEST(RoutingIncremental, SameTablesAsAFullComputeAfterEveryChange) {
  for (const auto& s : kScenarios) {
    Counts total;
    for (unsigned seed = 1; seed <= (s.spans_pods ? 12u : 6u); ++seed) {
      const Counts c = run_sequence(s, seed);
      total.steps += c.steps;
      total.incremental += c.incremental;
      total.kept_switches += c.kept_switches;
      total.level2 += c.level2;
    }
    // The incremental path must have been taken, or the comparison tested nothing.
    EXPECT_GT(total.incremental, total.steps / 4) << s.spec;
    if (s.spans_pods) {
      EXPECT_GT(total.level2, total.steps / 15) << s.spec;
    }
    const std::string name = std::string(s.spec) + (s.spans_pods ? " spanning pods" : "");
    RecordProperty(name + " incremental", total.incremental);
    RecordProperty(name + " level-2 changes", total.level2);
  }
}

// A failed run (bad input) leaves nothing half-changed behind: the next run is full and right.
TEST(RoutingIncremental, AfterAnErrorTheNextRunIsFull) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  IncrementalRouting incr;
  RoutingRequest req;
  req.tenants.push_back({"a", {}});
  req.tenants[0].placement.hosts = {0, 1};
  incr.compute(tree, req);
  RoutingRequest bad = req;
  bad.tenants.push_back({"b", {}});
  bad.tenants[1].placement.hosts = {1, 2};  // host 1 held twice
  EXPECT_THROW(incr.compute(tree, bad), RoutingError);
  req.tenants[0].placement.hosts = {0, 1, 5};
  const RoutingResult& got = incr.compute(tree, req);
  EXPECT_TRUE(incr.stats().full);
  EXPECT_EQ(first_difference(compute(tree, req).tables, got.tables), "");
}

// A tenant change touching one leaf recomputes a few leaves, not the tree.
TEST(RoutingIncremental, ASmallChangeRecomputesFewLeaves) {
  const FatTree tree = FatTree::parse("xgft(3;4,4,4;1,4,4)");
  IncrementalRouting incr;
  RoutingRequest req;
  req.management_hosts = {tree.num_hosts() - 1};
  incr.compute(tree, req);
  req.tenants.push_back({"a", {}});
  req.tenants[0].placement.hosts = {0, 1};  // one leaf, no links
  const RoutingResult& got = incr.compute(tree, req);
  EXPECT_FALSE(incr.stats().full) << incr.stats().why;
  EXPECT_FALSE(incr.stats().switches);
  EXPECT_EQ(incr.stats().leaves, 2);  // the tenant's leaf and the management host's
  EXPECT_EQ(first_difference(compute(tree, req).tables, got.tables), "");
}

// The first tenant holding links, on a fabric where no link was held: the routes to switches
// whose distances stay are not computed again (the memo of the run without tenant links holds
// the distances over every link too).
TEST(RoutingIncremental, TheFirstTenantWithLinksKeepsMostRoutesToSwitches) {
  const FatTree tree = FatTree::parse("xgft(3;4,4,4;1,4,4)");
  allocator::Cluster cluster(tree, allocator::make_placer("laas"));
  IncrementalRouting incr;
  RoutingRequest req;
  incr.compute(tree, req);
  // Two hosts on each of two leaves of one pod: two of each leaf's four up-links, so every
  // switch keeps an open way to every other.
  const std::vector<HostId> hosts = {tree.host_at(0, 0), tree.host_at(0, 1), tree.host_at(1, 0),
                                     tree.host_at(1, 1)};
  ASSERT_TRUE(cluster.add_on_hosts("a", hosts, false, nullptr).ok());
  req.tenants.push_back({"a", cluster.tenants().at("a").placement});
  ASSERT_FALSE(req.tenants[0].placement.links.empty());
  const RoutingResult& got = incr.compute(tree, req);
  EXPECT_FALSE(incr.stats().full) << incr.stats().why;
  EXPECT_LT(incr.stats().switch_destinations, incr.stats().of_switches);
  EXPECT_EQ(first_difference(compute(tree, req).tables, got.tables), "");
  // And back: the last tenant gone.
  cluster.remove("a");
  req.tenants.clear();
  const RoutingResult& back = incr.compute(tree, req);
  EXPECT_FALSE(incr.stats().full) << incr.stats().why;
  EXPECT_LT(incr.stats().switch_destinations, incr.stats().of_switches);
  EXPECT_EQ(first_difference(compute(tree, req).tables, back.tables), "");
}

}  // namespace
}  // namespace laas::routing
