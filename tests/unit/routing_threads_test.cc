// routing::compute spreads destination leaves and switch batches over threads; each writes its
// own destinations' entries, so the tables must not depend on the thread count -- with
// tenants, management hosts, a management leaf and faulty links, where every class of route
// is written.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "allocator/cluster.h"
#include "routing/routing.h"

namespace laas::routing {
namespace {

using topology::FatTree;

// The first switch and endpoint where two tables differ, or "" when identical.
std::string first_table_difference(const ModelTables& a, const ModelTables& b) {
  for (int sw = 0; sw < a.num_switches(); ++sw)
    for (int e = 0; e < a.num_endpoints(); ++e)
      if (a.row(sw)[e] != b.row(sw)[e])
        return "switch " + std::to_string(sw) + " endpoint " + std::to_string(e) + ": " +
               std::to_string(a.row(sw)[e]) + " vs " + std::to_string(b.row(sw)[e]);
  return "";
}

RoutingRequest request_with_everything(const FatTree& tree) {
  allocator::Cluster cluster(tree, allocator::make_placer("laas"));
  const int sizes[] = {5, 12, 3, 9};
  for (int i = 0; i < 4; ++i) cluster.add("t" + std::to_string(i), sizes[i]);
  RoutingRequest req;
  std::vector<char> used(tree.num_hosts(), 0);
  for (const auto& [name, t] : cluster.tenants()) {
    req.tenants.push_back({name, t.placement});
    for (HostId h : t.placement.hosts) used[h] = 1;
  }
  for (HostId h = tree.num_hosts() - 1; h >= 0 && req.management_hosts.size() < 2; --h)
    if (!used[h]) req.management_hosts.push_back(h);
  req.management_switches = {{1, 0}};
  req.faulty_links = {0, tree.total_links() - 1};
  return req;
}

TEST(RoutingThreads, TablesDoNotDependOnTheThreadCount) {
  for (const char* spec : {"xgft(3;4,4,4;1,4,4)", "pgft(2;8,4;1,4;1,2)", "xgft(3;3,4,6;1,2,4)"}) {
    const FatTree tree = FatTree::parse(spec);
    RoutingRequest req = request_with_everything(tree);
    ASSERT_GE(req.tenants.size(), 2u) << spec;
    req.threads = 1;
    const RoutingResult one = compute(tree, req);
    for (int threads : {2, 3, kMaxThreads}) {
      req.threads = threads;
      const RoutingResult many = compute(tree, req);
      EXPECT_EQ(first_table_difference(one.tables, many.tables), "")
          << spec << ", " << threads << " threads";
      EXPECT_EQ(one.warnings, many.warnings) << spec << ", " << threads << " threads";
    }
  }
}

// The comparison sees one entry changed.
TEST(RoutingThreads, ComparisonCatchesOneEntry) {
  const FatTree tree = FatTree::parse("xgft(3;4,4,4;1,4,4)");
  const RoutingResult a = compute(tree, request_with_everything(tree));
  RoutingResult b = a;
  const int e = b.tables.endpoint_of_host(3);
  b.tables.set_port(2, 1, e, static_cast<std::uint8_t>(b.tables.port(2, 1, e) + 1));
  EXPECT_NE(first_table_difference(a.tables, b.tables), "");
}

}  // namespace
}  // namespace laas::routing
