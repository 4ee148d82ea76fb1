#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "allocator/cluster.h"
#include "placements.h"
#include "routing/audit.h"
#include "routing/routing.h"
#include "routing/sl2vl.h"

namespace laas::routing {
namespace {

using allocator::Placement;
using topology::FatTree;

// hosts [first, last] plus, per (leaf, columns), level-1 links; level-2 links given explicitly.
Placement make_placement(const FatTree& t, HostId first, HostId last, const test::Columns& l1,
                         const test::Columns& l2 = {}) {
  return test::placement(t, test::host_range(first, last), l1, l2);
}

// The paper's demo: tenant "4" = 2x4+2, tenant "1" = 1x2 + 2x4 sharing leaf 2.
struct ComputeDemo {
  FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  TenantRoutes a{"4",
                 make_placement(tree, 0, 9, {{0, {0, 1, 2, 3}}, {1, {0, 1, 2, 3}}, {2, {0, 1}}})};
  TenantRoutes b{"1",
                 make_placement(tree, 10, 19, {{2, {2, 3}}, {3, {0, 1, 2, 3}}, {4, {0, 1, 2, 3}}})};
};

struct Audited {
  topology::Fabric fabric;
  topology::Embedding embedding;
  LidTables tables;
  AuditReport report;
};

AuditInput input_for(const FatTree& tree, const Audited& a, const std::vector<TenantRoutes>& ts,
                     const std::vector<LinkId>& faulty = {}) {
  AuditInput in;
  in.fabric = &a.fabric;
  in.embedding = &a.embedding;
  in.tree = &tree;
  in.tables = &a.tables;
  for (const auto& t : ts) in.tenants.push_back({t.key, t.placement});
  in.faulty_links = faulty;
  // The SM runs on the first top-level switch, as in the integration tests.
  in.management_nodes.push_back(a.embedding.switch_node[tree.height() - 1][0]);
  return in;
}

Audited route_and_audit(const FatTree& tree, const std::vector<TenantRoutes>& tenants,
                        const std::vector<LinkId>& faulty = {}) {
  Audited a;
  std::tie(a.fabric, a.embedding) = topology::build_model_fabric(tree);
  const RoutingResult r = compute(tree, tenants, {}, faulty);
  a.tables = to_lid_tables(a.fabric, a.embedding, tree, r.tables);
  a.report = audit(input_for(tree, a, tenants, faulty));
  return a;
}

std::string dump(const AuditReport& r) { return to_json(r).dump(1); }

// The first-hop drop's SL2VL tables for what route_and_audit routed (the SM as in input_for).
Sl2VlPlan plan_for(const FatTree& tree, const Audited& a, const std::vector<TenantRoutes>& ts) {
  Sl2VlInput in;
  in.fabric = &a.fabric;
  in.embedding = &a.embedding;
  in.tree = &tree;
  in.tables = &a.tables;
  for (const auto& t : ts) in.tenants.push_back(t.placement);
  in.management_nodes = {a.embedding.switch_node[tree.height() - 1][0]};
  return plan_sl2vl(in);
}

TEST(RoutingCompute, DemoTenantsAreIsolatedAndBalanced) {
  ComputeDemo demo;
  const Audited a = route_and_audit(demo.tree, {demo.a, demo.b});
  const AuditReport& r = a.report;
  EXPECT_TRUE(r.ok()) << dump(r);
  EXPECT_EQ(r.count(FindingKind::kTenantRouteEscapes), 0);
  EXPECT_EQ(r.count(FindingKind::kIntraTenantUnreachable), 0);
  EXPECT_EQ(r.count(FindingKind::kCrossRoute), 0);
  // Leaf 2 holds hosts of both tenants: the audit says so instead of hiding it.
  EXPECT_GT(r.count(FindingKind::kSharedLeaf), 0);
  ASSERT_EQ(r.balance.size(), 2u);
  for (const auto& b : r.balance) {
    EXPECT_EQ(b.hosts, 10);
    EXPECT_EQ(b.shifts, 9);
    EXPECT_EQ(b.worst, b.private_worst) << b.tenant;
    EXPECT_GE(b.worst, 1);
  }
  EXPECT_GT(r.traces, 0);
}

TEST(RoutingCompute, IntraTenantRoutesUseOnlyTheTenantsLinksInModelSpace) {
  ComputeDemo demo;
  const RoutingResult r = compute(demo.tree, {demo.a, demo.b}, {}, {});
  const ModelTables& m = r.tables;
  const FatTree& t = demo.tree;
  for (const TenantRoutes* tenant : {&demo.a, &demo.b}) {
    const std::set<LinkId> links(tenant->placement.links.begin(), tenant->placement.links.end());
    for (HostId s : tenant->placement.hosts)
      for (HostId d : tenant->placement.hosts) {
        if (s == d) continue;
        int leaf = t.leaf_of_host(s);
        int port = m.port(1, leaf, d);
        ASSERT_NE(port, kNoRoute) << s << "->" << d;
        if (leaf == t.leaf_of_host(d)) {
          EXPECT_EQ(port, t.down_port(1, t.slot_of_host(d), 0));
          continue;
        }
        ASSERT_LE(port, t.up_columns(1));
        EXPECT_TRUE(links.count(t.l1_link(leaf, port - 1)))
            << tenant->key << " up " << s << "->" << d;
        const int spine = t.parent_of(1, leaf, port - 1).index;
        const int down = m.port(2, spine, d);
        const int ld = t.leaf_of_host(d);
        ASSERT_EQ(down, t.down_port(2, ld, 0));
        EXPECT_TRUE(links.count(t.l1_link(ld, spine))) << tenant->key << " down " << s << "->" << d;
      }
  }
}

TEST(RoutingCompute, FullShapeTenantIsCongestionFree) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  // 2 x 4 on leaves 5 and 6 with all four spines; 2 x 2 on leaves 0,1 with spines 1,3.
  TenantRoutes a{"a", make_placement(tree, 20, 27, {{5, {0, 1, 2, 3}}, {6, {0, 1, 2, 3}}})};
  TenantRoutes b{"b", make_placement(tree, 0, 1, {{0, {1, 3}}})};
  b.placement.hosts = {0, 1, 4, 5};
  b.placement.links.push_back(tree.l1_link(1, 1));
  b.placement.links.push_back(tree.l1_link(1, 3));
  std::sort(b.placement.links.begin(), b.placement.links.end());
  const Audited au = route_and_audit(tree, {a, b});
  EXPECT_TRUE(au.report.ok()) << dump(au.report);
  ASSERT_EQ(au.report.balance.size(), 2u);
  for (const auto& bal : au.report.balance) {
    EXPECT_EQ(bal.worst, 1) << bal.tenant;
    EXPECT_EQ(bal.private_worst, 1) << bal.tenant;
  }
}

// Entries for a tenant's destinations do not depend on other tenants.
TEST(RoutingCompute, NoChurnWhenOtherTenantsComeAndGo) {
  ComputeDemo demo;
  const ModelTables alone = compute(demo.tree, {demo.a}, {}, {}).tables;
  const ModelTables both = compute(demo.tree, {demo.a, demo.b}, {}, {}).tables;
  const ModelTables reordered = compute(demo.tree, {demo.b, demo.a}, {}, {}).tables;
  int compared = 0;
  for (int n = 0; n < alone.num_switches(); ++n)
    for (HostId d : demo.a.placement.hosts) {
      EXPECT_EQ(alone.row(n)[d], both.row(n)[d]) << "switch " << n << " dest " << d;
      EXPECT_EQ(alone.row(n)[d], reordered.row(n)[d]) << "switch " << n << " dest " << d;
      ++compared;
    }
  EXPECT_EQ(compared, 12 * 10);
  // Free hosts' routes do change (tenant b's links are no longer free), so the tables differ.
  EXPECT_FALSE(alone == both);
}

TEST(RoutingCompute, ThreeLevelMultiPodTenant) {
  const FatTree tree = FatTree::parse("xgft(3;4,4,4;1,4,4)");
  // Whole leaves 0,1 (pod 0), 4,5 (pod 1), 8 (pod 2): Q'=2 pods of D'=2 leaves + R'=1.
  std::vector<std::pair<int, std::vector<int>>> l1, l2;
  for (int leaf : {0, 1, 4, 5, 8}) l1.push_back({leaf, {0, 1, 2, 3}});
  for (int pod : {0, 1, 2})
    for (int b = 0; b < 4; ++b)
      l2.push_back(
          {tree.level2_switch(pod, b), pod == 2 ? std::vector<int>{0} : std::vector<int>{0, 1}});
  Placement big = make_placement(tree, 0, 7, l1, l2);
  for (HostId h = 16; h <= 23; ++h) big.hosts.push_back(h);
  for (HostId h = 32; h <= 35; ++h) big.hosts.push_back(h);
  // A 2-level tenant in pod 2 (leaves 9, 10: 2x3 on columns 1..3) and one inside leaf 11.
  Placement small = make_placement(tree, 36, 38, {{9, {1, 2, 3}}, {10, {1, 2, 3}}});
  for (HostId h = 40; h <= 42; ++h) small.hosts.push_back(h);
  Placement single = make_placement(tree, 44, 46, {});
  const std::vector<TenantRoutes> tenants = {{"big", big}, {"small", small}, {"single", single}};
  const Audited a = route_and_audit(tree, tenants);
  EXPECT_TRUE(a.report.ok()) << dump(a.report);
  ASSERT_EQ(a.report.balance.size(), 3u);
  for (const auto& b : a.report.balance) EXPECT_EQ(b.worst, b.private_worst) << b.tenant;
  // The R' pod makes the shape irregular: destination-based routing cannot always avoid one
  // shared link (documented figure; the same as the tenant routed alone).
  EXPECT_LE(a.report.balance[0].worst, 2) << "whole-leaf multi-pod tenant";
  EXPECT_EQ(a.report.balance[1].worst, 1);
  EXPECT_EQ(a.report.balance[2].worst, 1);
  // Inter-pod routes of "big" climb to level 3 on its own level-2 links.
  const ModelTables m = compute(tree, tenants, {}, {}).tables;
  const int up = m.port(2, tree.level2_switch(0, 0), 16);
  ASSERT_GE(up, 1);
  ASSERT_LE(up, 2);  // columns 0 or 1 only
  const int up_r = m.port(2, tree.level2_switch(2, 3), 0);
  EXPECT_EQ(up_r, 1);  // the R' pod holds column 0 only
}

TEST(RoutingCompute, ThreeLevelFullShapeTenantIsCongestionFree) {
  const FatTree tree = FatTree::parse("xgft(3;4,4,4;1,4,4)");
  // Whole leaves 4,5 (pod 1) and 12,13 (pod 3), level-2 columns 1 and 3 everywhere.
  std::vector<std::pair<int, std::vector<int>>> l1, l2;
  for (int leaf : {4, 5, 12, 13}) l1.push_back({leaf, {0, 1, 2, 3}});
  for (int pod : {1, 3})
    for (int b = 0; b < 4; ++b) l2.push_back({tree.level2_switch(pod, b), {1, 3}});
  Placement p = make_placement(tree, 16, 23, l1, l2);
  for (HostId h = 48; h <= 55; ++h) p.hosts.push_back(h);
  const Audited a = route_and_audit(tree, {{"t", p}});
  EXPECT_TRUE(a.report.ok()) << dump(a.report);
  ASSERT_EQ(a.report.balance.size(), 1u);
  EXPECT_EQ(a.report.balance[0].worst, 1);
  EXPECT_EQ(a.report.balance[0].private_worst, 1);
}

TEST(RoutingCompute, ParallelLinks) {
  const FatTree tree = FatTree::parse("pgft(2;8,4;1,4;1,2)");
  ASSERT_EQ(tree.up_columns(1), 8);
  TenantRoutes a{"a", make_placement(tree, 0, 3, {{0, {0, 1, 2, 3}}, {1, {0, 1, 2, 3}}})};
  a.placement.hosts = {0, 1, 2, 3, 8, 9, 10, 11};
  TenantRoutes b{"b",
                 make_placement(tree, 16, 21, {{2, {2, 3, 4, 5, 6, 7}}, {3, {2, 3, 4, 5, 6, 7}}})};
  for (HostId h = 24; h <= 29; ++h) b.placement.hosts.push_back(h);
  const Audited au = route_and_audit(tree, {a, b});
  EXPECT_TRUE(au.report.ok()) << dump(au.report);
  for (const auto& bal : au.report.balance) {
    EXPECT_EQ(bal.worst, 1) << bal.tenant;
    EXPECT_EQ(bal.private_worst, 1) << bal.tenant;
  }
}

TEST(RoutingCompute, FaultyLinksAreAvoided) {
  ComputeDemo demo;
  const FatTree& t = demo.tree;
  // A free link (leaf 6, column 2) and one tenant "4" holds (leaf 0, column 1).
  const std::vector<LinkId> faulty = {t.l1_link(6, 2), t.l1_link(0, 1)};
  const RoutingResult r = compute(t, {demo.a, demo.b}, {}, faulty);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("faulty"), std::string::npos);
  const ModelTables& m = r.tables;
  for (int e = 0; e < m.num_endpoints(); ++e) {
    EXPECT_NE(m.port(1, 6, e), t.up_port(1, 2)) << e;
    EXPECT_NE(m.port(1, 0, e), t.up_port(1, 1)) << e;
    EXPECT_NE(m.port(2, 2, e), t.down_port(2, 6, 0)) << e;
    EXPECT_NE(m.port(2, 1, e), t.down_port(2, 0, 0)) << e;
  }
  Audited a = route_and_audit(t, {demo.a, demo.b}, faulty);
  EXPECT_EQ(a.report.count(FindingKind::kIntraTenantUnreachable), 0) << dump(a.report);
  EXPECT_EQ(a.report.count(FindingKind::kTenantRouteEscapes), 0);
  EXPECT_TRUE(a.report.ok()) << dump(a.report);
}

// A tenant that lost its only link between two leaves is degraded, not violated: the audit
// notes the pairs (no path on its own links that are up). A pair its own links can still
// carry but the tables do not is a violation. Alike when the SL2VL tables are traced too.
TEST(RoutingCompute, DegradedTenantIsNotedButABrokenRouteIsStillCaught) {
  const FatTree t = FatTree::parse("xgft(2;4,8;1,4)");
  // hosts 0,1 on leaf 0 and 4,5 on leaf 1, over spine 2 only; hosts 8,9 / 12,13 over
  // spines 2 and 3 (spine 0 runs the SM: its own links stay up).
  TenantRoutes thin{"thin", make_placement(t, 0, 1, {{0, {2}}, {1, {2}}})};
  thin.placement.hosts = {0, 1, 4, 5};
  TenantRoutes wide{"wide", make_placement(t, 8, 9, {{2, {2, 3}}, {3, {2, 3}}})};
  wide.placement.hosts = {8, 9, 12, 13};
  const std::vector<LinkId> faulty = {t.l1_link(0, 2), t.l1_link(2, 2)};
  for (const bool with_sl2vl : {false, true}) {
    SCOPED_TRACE(with_sl2vl ? "LFT + SL2VL" : "LFT");
    Audited a = route_and_audit(t, {thin, wide}, faulty);
    const Sl2VlPlan plan = plan_for(t, a, {thin, wide});
    AuditInput in = input_for(t, a, {thin, wide}, faulty);
    if (with_sl2vl) in.sl2vl = &plan.tables;
    const AuditReport clean = audit(in);
    EXPECT_GT(clean.count(FindingKind::kDegradedUnreachable), 0) << dump(clean);
    EXPECT_EQ(clean.count(FindingKind::kIntraTenantUnreachable), 0) << dump(clean);
    EXPECT_TRUE(clean.ok()) << dump(clean);
    // wide still has spine 3 between leaves 2 and 3: drop leaf 2's route to host 12.
    const int leaf2 = a.embedding.switch_node[0][2];
    const auto lid = a.fabric.lid_of(a.embedding.host_node[12]);
    ASSERT_NE(a.tables[leaf2][lid], kNoRoute);
    a.tables[leaf2][lid] = kNoRoute;
    const AuditReport broken = audit(in);
    EXPECT_GT(broken.count(FindingKind::kIntraTenantUnreachable), 0) << dump(broken);
    EXPECT_FALSE(broken.ok());
  }
}

// The SM's spine loses its only cable to leaf 0: no up*/down* path is left, the audit notes
// it. A management route that a path still allows but the tables lack is a violation. Alike
// when the SL2VL tables are traced too.
TEST(RoutingCompute, ManagementCutByAFaultIsNotedButABrokenRouteIsCaught) {
  const FatTree t = FatTree::parse("xgft(2;4,8;1,4)");
  const LinkId cut = t.l1_link(0, 0);
  for (const bool with_sl2vl : {false, true}) {
    SCOPED_TRACE(with_sl2vl ? "LFT + SL2VL" : "LFT");
    Audited a = route_and_audit(t, {}, {cut});
    const auto lo = t.link_lower(cut);
    const int leaf0 = a.embedding.switch_node[0][0];
    auto& p = a.fabric.nodes[leaf0].ports[lo.port];
    a.fabric.nodes[p.peer_node].ports[p.peer_port].peer_node = -1;
    p.peer_node = -1;
    a.embedding.missing_links = {cut};
    const Sl2VlPlan plan = plan_for(t, a, {});
    AuditInput in = input_for(t, a, {}, {cut});
    if (with_sl2vl) in.sl2vl = &plan.tables;
    AuditReport r = audit(in);
    EXPECT_GT(r.count(FindingKind::kManagementPartitioned), 0) << dump(r);
    EXPECT_EQ(r.count(FindingKind::kManagementUnreachable), 0) << dump(r);
    EXPECT_TRUE(r.ok()) << dump(r);
    const int spine0 = a.embedding.switch_node[1][0];
    const auto lid = a.fabric.lid_of(a.embedding.host_node[t.host_at(1, 0)]);
    ASSERT_NE(a.tables[spine0][lid], kNoRoute);
    a.tables[spine0][lid] = kNoRoute;
    r = audit(in);
    EXPECT_GT(r.count(FindingKind::kManagementUnreachable), 0) << dump(r);
    EXPECT_FALSE(r.ok());
  }
}

TEST(RoutingCompute, RefusesInconsistentInput) {
  ComputeDemo demo;
  TenantRoutes overlap = demo.b;
  overlap.placement.hosts.push_back(9);  // held by "4"
  EXPECT_THROW(compute(demo.tree, {demo.a, overlap}, {}, {}), RoutingError);
  TenantRoutes link_twice = demo.b;
  link_twice.placement.links.push_back(demo.tree.l1_link(0, 0));
  EXPECT_THROW(compute(demo.tree, {demo.a, link_twice}, {}, {}), RoutingError);
  EXPECT_THROW(compute(demo.tree, {demo.a}, {3}, {}), RoutingError);  // management host in "4"
  EXPECT_THROW(compute(demo.tree, {demo.a}, {}, {999}), RoutingError);
}

TEST(RoutingCompute, ManagementAndGating) {
  ComputeDemo demo;
  const FatTree& t = demo.tree;
  const HostId mgmt = 31;  // last host of leaf 7
  const RoutingResult r = compute(t, {demo.a, demo.b}, {mgmt}, {});
  const ModelTables& m = r.tables;
  for (int leaf = 0; leaf < t.num_leaves(); ++leaf) {
    // Everyone reaches every switch and the management host.
    for (int level = 1; level <= 2; ++level)
      for (int i = 0; i < t.num_switches(level); ++i)
        EXPECT_NE(m.port(1, leaf, m.endpoint_of_switch(level, i)), kNoRoute);
    EXPECT_NE(m.port(1, leaf, mgmt), kNoRoute);
  }
  // Spines route to every host (SA replies from an SM on a spine).
  for (int s = 0; s < 4; ++s)
    for (HostId h = 0; h < t.num_hosts(); ++h) EXPECT_NE(m.port(2, s, h), kNoRoute);
  // Leaves gate: leaf 3 (tenant "1" only) has no entry for tenant "4"'s host 0 nor a free one.
  EXPECT_EQ(m.port(1, 3, 0), kNoRoute);
  EXPECT_EQ(m.port(1, 3, 24), kNoRoute);
  // Leaf 7 holds the management host: it reaches everyone.
  EXPECT_NE(m.port(1, 7, 0), kNoRoute);
  // The free pool is closed (free hosts on leaves 5..7): no leaf without management routes to
  // a free host elsewhere; the management leaf and the spines do.
  EXPECT_EQ(m.port(1, 5, 24), kNoRoute);
  EXPECT_NE(m.port(1, 7, 24), kNoRoute);
}

}  // namespace
}  // namespace laas::routing

namespace laas::routing {
namespace {

// Tenants placed by the real allocator, added and removed: always isolated, never churned.
TEST(RoutingWithAllocator, RandomTenantsStayIsolated) {
  for (const char* spec : {"xgft(2;4,8;1,4)", "xgft(3;4,4,4;1,4,4)", "pgft(2;8,4;1,4;1,2)"}) {
    const topology::FatTree tree = topology::FatTree::parse(spec);
    allocator::Cluster cluster(tree, allocator::make_placer("laas"));
    const int sizes[] = {3, 6, 2, 9, 5, 1, 12, 4};
    for (int i = 0; i < 8; ++i) cluster.add("t" + std::to_string(i), sizes[i]);
    cluster.remove("t1");
    std::vector<TenantRoutes> tenants;
    for (const auto& [name, t] : cluster.tenants()) tenants.push_back({name, t.placement});
    ASSERT_GE(tenants.size(), 3u) << spec;
    Audited a;
    std::tie(a.fabric, a.embedding) = topology::build_model_fabric(tree);
    const ModelTables all = compute(tree, tenants, {}, {}).tables;
    a.tables = to_lid_tables(a.fabric, a.embedding, tree, all);
    const AuditReport r = audit(input_for(tree, a, tenants));
    EXPECT_TRUE(r.ok()) << spec << "\n" << dump(r);
    for (const auto& b : r.balance) EXPECT_EQ(b.worst, b.private_worst) << spec << " " << b.tenant;
    // No churn: the first tenant's own routes (the entries its routing writes when it is
    // alone) are the same. Management routes towards it avoid the other tenants' links, so
    // they may differ elsewhere.
    RoutingRequest req;
    req.tenants = {tenants[0]};
    req.tenants_only = true;
    const ModelTables alone = compute(tree, req).tables;
    for (int n = 0; n < all.num_switches(); ++n)
      for (HostId d : tenants[0].placement.hosts)
        if (alone.row(n)[d] != kNoRoute) {
          ASSERT_EQ(all.row(n)[d], alone.row(n)[d]) << spec;
        }
  }
}

}  // namespace
}  // namespace laas::routing

// LMC 1: a host port's second LID takes its base LID's entry in every table; other
// entries stay as they are.
TEST(SpreadLmc, ExtraLidsFollowTheBaseLid) {
  laas::topology::Fabric f;
  laas::topology::FabricNode sw;
  sw.is_switch = true;
  sw.ports.resize(3);
  sw.ports[0].lid = 1;
  const int s = f.add_node(sw);
  for (int i = 0; i < 2; ++i) {
    laas::topology::FabricNode ca;
    ca.ports.resize(2);
    ca.ports[1].lid = static_cast<laas::topology::Lid>(4 + 2 * i);
    f.connect(f.add_node(ca), 1, s, 1 + i);
  }
  laas::routing::LidTables tables(f.nodes.size());
  tables[s] = {0xFF, 0, 0xFF, 0xFF, 1, 0xFF, 2};
  laas::routing::spread_lmc(f, 1, tables);
  EXPECT_EQ(tables[s], (laas::routing::LidTable{0xFF, 0, 0xFF, 0xFF, 1, 1, 2, 2}));
  laas::routing::LidTables same = tables;
  laas::routing::spread_lmc(f, 0, same);
  EXPECT_EQ(same, tables);
  EXPECT_TRUE(tables[1].empty());
}
