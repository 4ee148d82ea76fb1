// The first-hop drop (routing/sl2vl.h) on the lab tree pgft(2;8,4;1,4;1,2) with a management
// host, tenants a (8), b (10) and c (5), b and c sharing a leaf, and free hosts: the plan, the
// audit over LFT + SL2VL, and the audit catching wrong tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "placements.h"
#include "routing/audit.h"
#include "routing/routing.h"
#include "routing/sl2vl.h"

namespace laas::routing {
namespace {

using test::host_range;
using test::placement;

using allocator::Placement;
using topology::FatTree;

class Sl2VlFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    std::tie(fabric, emb) = topology::build_model_fabric(tree);
    // pgft(2;8,4;1,4;1,2): 4 leaves of 8 hosts, 4 spines, 2 cables from each leaf to each
    // (up-column c goes to spine c / 2). Leaf 0: the management host (comp-1), three hosts of
    // b, four free. Leaf 1: four of a, four of b. Leaf 2: four of a, three of b, one of c.
    // Leaf 3: four of c, four free.
    std::vector<HostId> a = host_range(8, 11), a2 = host_range(16, 19);
    a.insert(a.end(), a2.begin(), a2.end());
    std::vector<HostId> b = host_range(1, 3), b2 = host_range(12, 15), b3 = host_range(20, 22);
    b.insert(b.end(), b2.begin(), b2.end());
    b.insert(b.end(), b3.begin(), b3.end());
    std::vector<HostId> c = host_range(23, 27);
    tenants = {{"a", placement(tree, a, {{1, {0, 2}}, {2, {0, 2}}})},
               {"b", placement(tree, b, {{0, {4}}, {1, {4, 6}}, {2, {4, 6}}})},
               {"c", placement(tree, c, {{2, {1}}, {3, {1, 3}}})}};
    route();
  }
  void route() {
    RoutingRequest req;
    req.tenants = tenants;
    req.management_hosts = {0};
    tables = to_lid_tables(fabric, emb, tree, compute(tree, req).tables);
    plan = plan_sl2vl(input());
  }
  Sl2VlInput input() const {
    Sl2VlInput in;
    in.fabric = &fabric;
    in.embedding = &emb;
    in.tree = &tree;
    in.tables = &tables;
    for (const auto& t : tenants) in.tenants.push_back(t.placement);
    in.management_hosts = {0};
    return in;
  }
  AuditReport run(const Sl2VlTables& sl2vl) {
    AuditInput in;
    in.fabric = &fabric;
    in.embedding = &emb;
    in.tree = &tree;
    in.tables = &tables;
    for (const auto& t : tenants) in.tenants.push_back({t.key, t.placement});
    in.management_hosts = {0};
    in.management_nodes = {emb.host_node[0]};
    in.sl2vl = &sl2vl;
    return audit(in);
  }
  int leaf(int i) const { return emb.switch_node[0][i]; }
  int host_port(HostId h) const {
    const auto ref = tree.host_peer(h);
    return emb.port_map[0][ref.index][ref.port];
  }
  int up_port(int leaf_index, int column) const {
    return emb.port_map[0][leaf_index][tree.up_port(1, column)];
  }
  std::string dump(const AuditReport& r) { return to_json(r).dump(1); }

  FatTree tree = FatTree::parse("pgft(2;8,4;1,4;1,2)");
  topology::Fabric fabric;
  topology::Embedding emb;
  std::vector<TenantRoutes> tenants;
  LidTables tables;
  Sl2VlPlan plan;
};

TEST_F(Sl2VlFixture, SharedLeafDropsOtherOwnersAtTheFirstHop) {
  const int l2 = leaf(2);
  // c's host on leaf 2 cannot enter b's up-links nor b's host ports; b can.
  EXPECT_EQ(plan.tables.mask(l2, host_port(23), up_port(2, 4)), kAllSls);
  EXPECT_EQ(plan.tables.mask(l2, host_port(23), host_port(20)), kAllSls);
  EXPECT_EQ(plan.tables.mask(l2, host_port(20), up_port(2, 4)), 0);
  EXPECT_EQ(plan.tables.mask(l2, host_port(20), host_port(21)), 0);
  // b's host cannot enter c's up-link nor a's; c's host reaches open links (management).
  EXPECT_EQ(plan.tables.mask(l2, host_port(20), up_port(2, 1)), kAllSls);
  EXPECT_EQ(plan.tables.mask(l2, host_port(20), up_port(2, 0)), kAllSls);
  EXPECT_EQ(plan.tables.mask(l2, host_port(23), up_port(2, 3)), 0);
  // Port 0 (management) passes everywhere.
  EXPECT_EQ(plan.tables.mask(l2, 0, up_port(2, 4)), 0);
  EXPECT_GT(plan.dropped_pairs, 0);
}

TEST_F(Sl2VlFixture, ManagementLeafKeepsItsManagementUplinksToItself) {
  // Leaf 0 holds the management host and b: management traffic to a and c leaves over
  // management up-links that b's hosts may not use.
  ASSERT_FALSE(plan.mgmt_links.empty());
  for (const auto& [node, port] : plan.mgmt_links) {
    EXPECT_EQ(node, leaf(0));
    EXPECT_EQ(plan.tables.mask(node, host_port(1), port), kAllSls);
    EXPECT_EQ(plan.tables.mask(node, host_port(0), port), 0);
  }
  // Every exemption enters a tenant's port from an open link.
  ASSERT_FALSE(plan.exemptions.empty());
  for (const auto& e : plan.exemptions) {
    EXPECT_EQ(plan.owners[e.node][e.in_port].cls, PortClass::kOpenLink);
    EXPECT_EQ(plan.owners[e.node][e.out_port].cls, PortClass::kTenant);
  }
}

TEST_F(Sl2VlFixture, AuditOverLftAndSl2VlIsClean) {
  const AuditReport r = run(plan.tables);
  EXPECT_TRUE(r.ok()) << dump(r);
  EXPECT_EQ(r.count(FindingKind::kCrossTenantSurvives), 0);
  EXPECT_EQ(r.count(FindingKind::kSharedCable), 0);
  EXPECT_EQ(r.figures.at("cables_with_two_owners"), 0);
  EXPECT_GT(r.figures.at("cross_tenant_pairs"), 0);
  EXPECT_EQ(r.figures.at("cross_tenant_dropped_at_first_switch"),
            r.figures.at("cross_tenant_pairs"));
  EXPECT_EQ(r.count(FindingKind::kExemption), static_cast<long>(plan.exemptions.size()));
  EXPECT_FALSE(r.exemptions.empty());
}

TEST_F(Sl2VlFixture, WithoutTheDropTheSharedLeafLeaks) {
  const AuditReport r = run(Sl2VlTables(fabric.nodes.size()));
  EXPECT_FALSE(r.ok());
  EXPECT_GT(r.count(FindingKind::kCrossTenantSurvives), 0) << dump(r);
}

TEST_F(Sl2VlFixture, AuditCatchesOneWrongPair) {
  Sl2VlTables wrong = plan.tables;
  // Let c's host on leaf 2 into b's up-links.
  wrong.set(leaf(2), host_port(23), up_port(2, 4), 0);
  wrong.set(leaf(2), host_port(23), up_port(2, 6), 0);
  const AuditReport r = run(wrong);
  EXPECT_FALSE(r.ok());
  EXPECT_GT(r.count(FindingKind::kSl2VlMismatch), 0) << dump(r);
  EXPECT_GT(r.count(FindingKind::kCrossTenantSurvives), 0) << dump(r);
}

// The free pool is closed. Leaf 3 holds c (24-27) and free hosts 28-31: c's
// hosts and the other free hosts are dropped at the free port; leaves without management have
// no route to a free host elsewhere; management reaches them all.
TEST_F(Sl2VlFixture, FreeHostsAreReachedFromManagementOnly) {
  const int l3 = leaf(3);
  EXPECT_EQ(plan.tables.mask(l3, host_port(24), host_port(28)), kAllSls);
  EXPECT_EQ(plan.tables.mask(l3, host_port(29), host_port(28)), kAllSls);
  EXPECT_EQ(plan.tables.mask(l3, 0, host_port(28)), 0);
  const topology::Lid free28 = fabric.lid_of(emb.host_node[28]);
  const topology::Lid free4 = fabric.lid_of(emb.host_node[4]);
  EXPECT_EQ(tables[leaf(2)][free28], kNoRoute);  // a, b and c only: no way to a free host
  EXPECT_EQ(tables[leaf(3)][free4], kNoRoute);   // c and free hosts: none either
  EXPECT_NE(tables[leaf(0)][free28], kNoRoute);  // the management host's leaf
  const AuditReport r = run(plan.tables);
  EXPECT_TRUE(r.ok()) << dump(r);
  EXPECT_EQ(r.count(FindingKind::kFreeHostReachable), 0);
}

TEST_F(Sl2VlFixture, AuditCatchesATenantReachingAFreeHost) {
  Sl2VlTables wrong = plan.tables;
  wrong.set(leaf(3), host_port(24), host_port(28), 0);
  const AuditReport r = run(wrong);
  EXPECT_FALSE(r.ok());
  EXPECT_GT(r.count(FindingKind::kFreeHostReachable), 0) << dump(r);
  EXPECT_GT(r.count(FindingKind::kSl2VlMismatch), 0) << dump(r);
}

TEST_F(Sl2VlFixture, AuditCatchesARouteToAFreeHostPastTheFirstSwitch) {
  // Leaf 2 (a, b, c) given a route to free host 28 over an open up-link: c's host 23 there
  // would reach it past its first switch.
  const topology::Lid free28 = fabric.lid_of(emb.host_node[28]);
  tables[leaf(2)][free28] = static_cast<std::uint8_t>(up_port(2, 3));
  const AuditReport r = run(plan_sl2vl(input()).tables);
  EXPECT_FALSE(r.ok());
  EXPECT_GT(r.count(FindingKind::kFreeHostReachable), 0) << dump(r);
}

TEST_F(Sl2VlFixture, AuditCatchesADropThatCutsATenant) {
  Sl2VlTables wrong = plan.tables;
  wrong.set(leaf(2), host_port(20), up_port(2, 4), kAllSls);
  wrong.set(leaf(2), host_port(20), up_port(2, 6), kAllSls);
  const AuditReport r = run(wrong);
  EXPECT_GT(r.count(FindingKind::kSl2VlMismatch), 0);
  EXPECT_GT(r.count(FindingKind::kIntraTenantUnreachable), 0) << dump(r);
}

TEST_F(Sl2VlFixture, AuditCatchesAnLftLeak) {
  // Leaf 2 sends b's host 12 out of c's up-link: b's own packets now enter c's link.
  tables[leaf(2)][fabric.lid_of(emb.host_node[12])] = static_cast<std::uint8_t>(up_port(2, 1));
  const AuditReport r = run(plan.tables);
  EXPECT_FALSE(r.ok());
  EXPECT_GT(
      r.count(FindingKind::kIntraTenantUnreachable) + r.count(FindingKind::kTenantRouteEscapes), 0)
      << dump(r);
}

TEST_F(Sl2VlFixture, AuditCatchesACableCarryingTwoOwners) {
  // a's host 8 (leaf 1) -> host 16 (leaf 2) rerouted over b's links through spine 2, with no
  // drop anywhere: the cables then carry a's and b's own traffic.
  const auto lid16 = fabric.lid_of(emb.host_node[16]);
  tables[leaf(1)][lid16] = static_cast<std::uint8_t>(up_port(1, 4));
  const int spine2 = emb.switch_node[1][2];
  tables[spine2][lid16] = static_cast<std::uint8_t>(emb.port_map[1][2][tree.down_port(2, 2, 0)]);
  Sl2VlTables none(fabric.nodes.size());
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n)
    if (fabric.nodes[n].is_switch)
      none.init_node(static_cast<int>(n), static_cast<int>(fabric.nodes[n].ports.size()));
  const AuditReport r = run(none);
  EXPECT_GT(r.count(FindingKind::kSharedCable), 0) << dump(r);
  EXPECT_GT(r.figures.at("cables_with_two_owners"), 0);
}

TEST_F(Sl2VlFixture, TenantAKeepsItsEntriesWhileOthersComeAndGo) {
  auto a_pairs = [&](const Sl2VlPlan& p) {
    std::vector<std::uint16_t> v;
    for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
      if (!p.tables.has(static_cast<int>(n))) continue;
      const int np = p.tables.ports[n];
      for (int i = 0; i < np; ++i)
        for (int o = 0; o < np; ++o) {
          const auto& oo = p.owners[n][o];
          const auto& oi = p.owners[n][i];
          (void)oi;
          if (oo.cls == PortClass::kTenant && oo.tenant == 0)
            v.push_back(p.tables.mask(static_cast<int>(n), i, o));
        }
    }
    return v;
  };
  const auto before = a_pairs(plan);
  const LidTables lft_before = tables;
  tenants.pop_back();  // c leaves
  route();
  EXPECT_EQ(a_pairs(plan), before);
  EXPECT_TRUE(run(plan.tables).ok());
  // a's entries at every switch for a's hosts are the same too.
  for (HostId h : tenants[0].placement.hosts)
    for (std::size_t sw = 0; sw < fabric.nodes.size(); ++sw) {
      if (!fabric.nodes[sw].is_switch) continue;
      const auto lid = fabric.lid_of(emb.host_node[h]);
      EXPECT_EQ(tables[sw][lid] == kNoRoute, lft_before[sw][lid] == kNoRoute);
    }
}

TEST_F(Sl2VlFixture, ParsesWhatItFormats) {
  std::string text;
  for (int o = 1; o < plan.tables.ports[leaf(2)]; ++o)
    text += format_sl2vl(fabric, leaf(2), o, plan.tables);
  std::istringstream in(text);
  const Sl2VlTables back = parse_sl2vl(in, fabric, "test");
  for (int i = 0; i < plan.tables.ports[leaf(2)]; ++i)
    for (int o = 1; o < plan.tables.ports[leaf(2)]; ++o)
      EXPECT_EQ(back.mask(leaf(2), i, o), plan.tables.mask(leaf(2), i, o));
}

TEST(Sl2VlParse, RejectsBadLines) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  const auto model = topology::build_model_fabric(tree);
  const auto& fabric = model.first;  // captured below: a structured binding cannot be
  const auto& emb = model.second;
  const int lid = fabric.lid_of(emb.switch_node[0][0]);
  auto parse = [&](const std::string& text) {
    std::istringstream in(text);
    return parse_sl2vl(in, fabric, "f");
  };
  const std::string head = "# SL2VL table: Lid " + std::to_string(lid) + "\n";
  const std::string row = "| 0| 1| 2| 3| 4| 5| 6| 7| 0| 1| 2| 3| 4| 5| 6|15|\n";
  EXPECT_EQ(parse(head + "ports: in  1, out  2: " + row).mask(emb.switch_node[0][0], 1, 2), 0x8000);
  EXPECT_THROW(parse("ports: in  1, out  2: " + row), Sl2VlDumpError);  // no header
  EXPECT_THROW(parse(head + "ports: in 99, out  2: " + row), Sl2VlDumpError);
  EXPECT_THROW(parse(head + "ports: in  1, out  2: | 0| 1|\n"), Sl2VlDumpError);
  EXPECT_THROW(parse("# SL2VL table: Lid 9999\n"), Sl2VlDumpError);
  EXPECT_THROW(parse(head + "garbage\n"), Sl2VlDumpError);
}

}  // namespace
}  // namespace laas::routing
