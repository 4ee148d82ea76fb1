// A tenant change rewrites few forwarding entries beyond the tenant's own. Outside
// tenants' own routes, a route that is still the one of a fabric without tenants (the whole
// path) stays while every link of its path stays open: a tenant added moves only those routes
// whose path it takes (and detours, which follow what is open).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "allocator/cluster.h"
#include "routing/routing.h"
#include "topology/embedding.h"

namespace laas::routing {
namespace {

using topology::FatTree;

struct Fixture {
  FatTree tree;
  topology::Fabric fabric;
  topology::Embedding emb;
  std::map<std::pair<int, int>, LinkId> link_at;  // (fabric node, port) -> link, both ends
  explicit Fixture(const std::string& spec) : tree(FatTree::parse(spec)) {
    std::tie(fabric, emb) = topology::build_model_fabric(tree);
    for (LinkId l = 0; l < tree.total_links(); ++l)
      for (const auto& end : {tree.link_lower(l), tree.link_upper(l)})
        link_at[{emb.switch_node[end.level - 1][end.index], end.port}] = l;
  }
  std::vector<TenantRoutes> tenants(const allocator::Cluster& c) const {
    std::vector<TenantRoutes> out;
    for (const auto& [name, t] : c.tenants()) out.push_back({name, t.placement});
    return out;
  }
  // The links the route from switch (level, index) to endpoint e crosses in `tables`.
  std::vector<LinkId> path(const ModelTables& tables, int level, int index, int e) const {
    std::vector<LinkId> links;
    int node = emb.switch_node[level - 1][index];
    for (int hops = 0; hops < 8; ++hops) {
      const auto [l, i] = emb.node_model[node];
      if (l < 1) break;
      const std::uint8_t port = tables.port(l, i, e);
      if (port == kNoRoute || port == kSelf) break;
      auto it = link_at.find({node, port});
      if (it == link_at.end()) break;  // down to a host
      links.push_back(it->second);
      node = fabric.nodes[node].ports[port].peer_node;
    }
    return links;
  }
};

struct Moves {
  int moved = 0;
  int checked = 0;                       // moved routes that were the tenant-free route all the way
  std::vector<std::string> unexplained;  // moved although its path stayed open
};

Moves check_moves(const Fixture& f, const ModelTables& base, const ModelTables& before,
                  const ModelTables& after, const std::set<LinkId>& held_after,
                  const std::set<HostId>& held_hosts) {
  Moves m;
  for (int number = 0; number < after.num_switches(); ++number) {
    const auto [level, index] = after.switch_at(number);
    if (level < 2) continue;  // leaves gate by owner: their entries move by design
    for (int e = 0; e < after.num_endpoints(); ++e) {
      if (e < after.num_hosts() && held_hosts.count(e)) continue;  // a tenant's destination
      const auto old = before.port(level, index, e);
      if (after.port(level, index, e) == old) continue;
      ++m.moved;
      // Only a route that is still the tenant-free one all the way (not a detour that
      // happens to start the same way) must stay while its path is open.
      const auto path = f.path(before, level, index, e);
      if (path != f.path(base, level, index, e)) continue;
      ++m.checked;
      bool taken = false;
      for (LinkId l : path) taken = taken || held_after.count(l) > 0;
      if (!taken)
        m.unexplained.push_back(f.tree.switch_name(level, index) + " to endpoint " +
                                std::to_string(e) + ": port " + std::to_string(old) + " -> " +
                                std::to_string(after.port(level, index, e)));
    }
  }
  return m;
}

TEST(RoutingStability, ATenantMovesOnlyRoutesOverItsLinks) {
  for (const char* spec : {"xgft(3;4,4,4;1,4,4)", "xgft(2;4,8;1,4)", "xgft(3;3,4,6;1,2,4)"}) {
    const Fixture f(spec);
    allocator::Cluster cluster(f.tree, allocator::make_placer("laas"));
    const ModelTables base = compute(f.tree, {}, {}, {}).tables;
    ModelTables before = base;
    int checked = 0;
    const int sizes[] = {5, 12, 3, 20, 7};
    for (int i = 0; i < 5; ++i) {
      if (!cluster.add("t" + std::to_string(i), sizes[i]).ok()) continue;
      std::set<LinkId> held;
      std::set<HostId> hosts;
      for (const auto& [name, t] : cluster.tenants()) {
        held.insert(t.placement.links.begin(), t.placement.links.end());
        hosts.insert(t.placement.hosts.begin(), t.placement.hosts.end());
      }
      const ModelTables after = compute(f.tree, f.tenants(cluster), {}, {}).tables;
      const Moves m = check_moves(f, base, before, after, held, hosts);
      checked += m.checked;
      EXPECT_TRUE(m.unexplained.empty())
          << spec << " adding t" << i << ": " << m.unexplained.size()
          << " route(s) moved though their paths stayed open, e.g. " << m.unexplained[0];
      before = after;
    }
    EXPECT_GT(checked, 0) << spec << ": no tenant-free route moved, nothing was checked";
  }
}

// The check itself catches a route moved for no reason.
TEST(RoutingStability, CheckCatchesAGratuitousMove) {
  const Fixture f("xgft(3;4,4,4;1,4,4)");
  const ModelTables base = compute(f.tree, {}, {}, {}).tables;
  ModelTables after = base;
  const int e = after.endpoint_of_host(5);
  const auto port = after.port(3, 0, e);
  after.set_port(3, 0, e, static_cast<std::uint8_t>(port == 1 ? 2 : 1));
  const Moves m = check_moves(f, base, base, after, {}, {});
  EXPECT_EQ(m.moved, 1);
  EXPECT_EQ(m.unexplained.size(), 1u);
}

}  // namespace
}  // namespace laas::routing
