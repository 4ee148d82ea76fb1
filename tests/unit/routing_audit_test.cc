#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "placements.h"
#include "routing/audit.h"
#include "routing/ibroute.h"
#include "routing/routing.h"
#include "topology/layout.h"

namespace laas::routing {
namespace {

using test::placement;

using allocator::Placement;
using topology::FatTree;

// The paper's demo tree and tenants, routed onto a model-cabled fabric.
class AuditFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    std::tie(fabric, emb) = topology::build_model_fabric(tree);
    std::vector<HostId> a_hosts, b_hosts;
    for (HostId h = 0; h <= 9; ++h) a_hosts.push_back(h);
    for (HostId h = 10; h <= 19; ++h) b_hosts.push_back(h);
    tenants = {
        {"4", placement(tree, a_hosts, {{0, {0, 1, 2, 3}}, {1, {0, 1, 2, 3}}, {2, {0, 1}}})},
        {"1", placement(tree, b_hosts, {{2, {2, 3}}, {3, {0, 1, 2, 3}}, {4, {0, 1, 2, 3}}})}};
    route();
  }
  void route() { tables = to_lid_tables(fabric, emb, tree, compute(tree, tenants, {}, {}).tables); }
  AuditReport run() {
    AuditInput in;
    in.fabric = &fabric;
    in.embedding = &emb;
    in.tree = &tree;
    in.tables = &tables;
    for (const auto& t : tenants) in.tenants.push_back({t.key, t.placement});
    in.management_nodes.push_back(emb.switch_node[1][0]);  // SM on SW_L2_0
    in.layout = layout;
    in.server_map = server_map;
    return audit(in);
  }
  // LFT entry of switch (level, index) for a host or a switch endpoint.
  std::uint8_t& entry(int level, int index, HostId host) {
    return tables[emb.switch_node[level - 1][index]][fabric.lid_of(emb.host_node[host])];
  }
  std::uint8_t& switch_entry(int level, int index, int dst_level, int dst_index) {
    return tables[emb.switch_node[level - 1][index]]
                 [fabric.lid_of(emb.switch_node[dst_level - 1][dst_index])];
  }
  std::string dump(const AuditReport& r) { return to_json(r).dump(1); }

  FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  topology::Fabric fabric;
  topology::Embedding emb;
  std::vector<TenantRoutes> tenants;
  LidTables tables;
  const topology::Layout* layout = nullptr;       // the names servers are grouped by
  std::map<std::string, std::string> server_map;  // laas.yaml's `servers:`
};

TEST_F(AuditFixture, CleanTablesPass) {
  const AuditReport r = run();
  EXPECT_TRUE(r.ok()) << dump(r);
  EXPECT_EQ(r.violations(), 0);
  // Leaf 2 is shared: reported as needing partitions, not as a routing violation.
  EXPECT_GT(r.count(FindingKind::kSharedLeaf), 0);
  EXPECT_FALSE(is_violation(FindingKind::kSharedLeaf));
  const auto j = to_json(r);
  EXPECT_TRUE(j["ok"].get<bool>());
  EXPECT_EQ(j["balance"].size(), 2u);
  EXPECT_GT(j["traces"].get<long>(), 0);
}

// The ports of one server (the HCAs of "gpu1" on two leaves) in two tenants, or one
// in a tenant and one free.
TEST_F(AuditFixture, CatchesAServerSplit) {
  EXPECT_EQ(run().count(FindingKind::kServerSplit), 0);
  fabric.nodes[emb.host_node[0]].name = "gpu1 mlx5_0";   // tenant 4
  fabric.nodes[emb.host_node[10]].name = "gpu1 mlx5_1";  // tenant 1
  fabric.nodes[emb.host_node[5]].name = "gpu2 mlx5_0";   // tenant 4
  fabric.nodes[emb.host_node[30]].name = "gpu2 mlx5_1";  // free
  fabric.nodes[emb.host_node[6]].name = "gpu3 mlx5_0";   // tenant 4
  fabric.nodes[emb.host_node[7]].name = "gpu3 mlx5_1";   // tenant 4: whole
  const AuditReport r = run();
  EXPECT_EQ(r.count(FindingKind::kServerSplit), 2) << dump(r);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(dump(r).find("server gpu1 is split"), std::string::npos) << dump(r);
}

// The administrator's map groups ports whose one-word names say nothing (a host's root sets its
// description): the audit checks the servers the service placed, map included.
TEST_F(AuditFixture, ServerSplitHonoursTheAdministratorsServersMap) {
  fabric.nodes[emb.host_node[0]].name = "stor-a";   // tenant 4
  fabric.nodes[emb.host_node[30]].name = "stor-b";  // free
  EXPECT_EQ(run().count(FindingKind::kServerSplit), 0);
  server_map = {{"stor-a", "storage"}, {"stor-b", "storage"}};
  const AuditReport r = run();
  EXPECT_EQ(r.count(FindingKind::kServerSplit), 1) << dump(r);
  EXPECT_NE(dump(r).find("server storage is split"), std::string::npos) << dump(r);
}

// Servers are grouped by the names layout.json recorded, never by what a host's root wrote
// into its description since.
TEST_F(AuditFixture, ServerSplitGroupsByTheRecordedNames) {
  fabric.nodes[emb.host_node[0]].name = "gpu1 mlx5_0";   // tenant 4
  fabric.nodes[emb.host_node[10]].name = "gpu1 mlx5_1";  // tenant 1
  const topology::Layout recorded = topology::layout_of(tree, emb, fabric);
  fabric.nodes[emb.host_node[10]].name = "gpu9 mlx5_1";  // renamed by its root
  EXPECT_EQ(run().count(FindingKind::kServerSplit), 0);
  layout = &recorded;
  const AuditReport r = run();
  EXPECT_EQ(r.count(FindingKind::kServerSplit), 1) << dump(r);
  EXPECT_NE(dump(r).find("server gpu1 is split"), std::string::npos) << dump(r);
}

TEST_F(AuditFixture, CatchesTenantRouteLeavingItsLinks) {
  // Leaf 2 sends tenant "4"'s traffic to host 0 up column 2, which tenant "1" holds.
  entry(1, 2, 0) = static_cast<std::uint8_t>(tree.up_port(1, 2));
  const AuditReport r = run();
  EXPECT_GT(r.count(FindingKind::kTenantRouteEscapes), 0) << dump(r);
  EXPECT_FALSE(r.ok());
}

TEST_F(AuditFixture, CatchesIntraTenantUnreachable) {
  entry(1, 0, 4) = kNoRoute;
  const AuditReport r = run();
  EXPECT_GT(r.count(FindingKind::kIntraTenantUnreachable), 0) << dump(r);
  EXPECT_FALSE(r.ok());
}

TEST_F(AuditFixture, CatchesLoop) {
  entry(1, 0, 4) = static_cast<std::uint8_t>(tree.up_port(1, 0));
  entry(2, 0, 4) = static_cast<std::uint8_t>(tree.down_port(2, 0, 0));  // back to leaf 0
  const AuditReport r = run();
  EXPECT_GT(r.count(FindingKind::kLoop), 0) << dump(r);
  EXPECT_FALSE(r.ok());
}

TEST_F(AuditFixture, CatchesOverlongPath) {
  // leaf 0 -> spine 0 -> leaf 2 -> spine 1 -> leaf 1: every link is tenant "4"'s, but 5 hops.
  entry(1, 0, 4) = static_cast<std::uint8_t>(tree.up_port(1, 0));
  entry(2, 0, 4) = static_cast<std::uint8_t>(tree.down_port(2, 2, 0));
  entry(1, 2, 4) = static_cast<std::uint8_t>(tree.up_port(1, 1));
  const AuditReport r = run();
  EXPECT_GT(r.count(FindingKind::kOverlong), 0) << dump(r);
  EXPECT_EQ(r.count(FindingKind::kTenantRouteEscapes), 0);
  EXPECT_FALSE(r.ok());
}

TEST_F(AuditFixture, CatchesCrossTenantRoute) {
  // Leaf 3 holds only tenant "1": give it a route to tenant "4"'s host 0.
  entry(1, 3, 0) = static_cast<std::uint8_t>(tree.up_port(1, 0));
  const AuditReport r = run();
  EXPECT_GT(r.count(FindingKind::kCrossRoute), 0) << dump(r);
  EXPECT_FALSE(r.ok());
}

TEST_F(AuditFixture, CatchesManagementUnreachable) {
  switch_entry(1, 5, 2, 1) = kNoRoute;  // leaf 5 cannot reach SW_L2_1
  const AuditReport r = run();
  EXPECT_GT(r.count(FindingKind::kManagementUnreachable), 0) << dump(r);
  EXPECT_FALSE(r.ok());
}

TEST_F(AuditFixture, CatchesImbalance) {
  // Every flow from leaf 0 to leaf 1 on column 0: a shift by 4 puts 4 flows on one link.
  for (HostId d = 4; d <= 7; ++d) entry(1, 0, d) = static_cast<std::uint8_t>(tree.up_port(1, 0));
  const AuditReport r = run();
  EXPECT_GT(r.count(FindingKind::kBalanceWorseThanPrivate), 0) << dump(r);
  EXPECT_EQ(r.balance[0].tenant, "4");
  EXPECT_EQ(r.balance[0].worst, 4);
  EXPECT_EQ(r.balance[0].private_worst, 1);
  EXPECT_FALSE(r.ok());
}

TEST_F(AuditFixture, CatchesARouteToAFreeHost) {
  // Tenant "x" holds columns 0,1 of leaves 0,1; the other hosts there and their links are free.
  tenants = {{"x", placement(tree, {0, 1, 4, 5}, {{0, {0, 1}}, {1, {0, 1}}})}};
  route();
  EXPECT_TRUE(run().ok()) << dump(run());
  // Leaf 0 (x and free hosts 2, 3) given a route to free host 6 on leaf 1: free hosts are
  // quarantined, nobody on leaf 0 may reach it.
  entry(1, 0, 6) = static_cast<std::uint8_t>(tree.up_port(1, 2));
  const AuditReport r = run();
  EXPECT_GT(r.count(FindingKind::kCrossRoute), 0) << dump(r);
  EXPECT_FALSE(r.ok());
}

// ---- ibroute ----------------------------------------------------------------------------

// Tenant 4's slot of host 3 holds a newcomer (another port GUID). Routed like an
// absent host (no switch has an entry for its LID) the audit reports the slot only; a single
// switch routing the newcomer's LID is caught.
TEST_F(AuditFixture, CatchesARouteToAnUnacceptedHost) {
  const HostId q = 3;
  const topology::Lid lid = fabric.lid_of(emb.host_node[q]);
  const auto full = tables;
  tables =
      to_lid_tables(fabric, without_hosts(emb, {q}), tree, compute(tree, tenants, {}, {}).tables);
  AuditInput in;
  in.fabric = &fabric;
  in.embedding = &emb;
  in.tree = &tree;
  in.tables = &tables;
  for (const auto& t : tenants) in.tenants.push_back({t.key, t.placement});
  in.management_nodes.push_back(emb.switch_node[1][0]);
  in.unaccepted.push_back({q, lid, "4", "intruder", "slot SW_L1_0 port 4"});
  AuditReport r = audit(in);
  EXPECT_EQ(r.count(FindingKind::kUnacceptedHost), 1) << dump(r);
  EXPECT_EQ(r.count(FindingKind::kUnacceptedHostRouted), 0) << dump(r);
  EXPECT_EQ(r.violations(), 1) << dump(r);  // the slot itself, until accepted
  EXPECT_EQ(r.figures.at("quarantined_lid_entries_checked"), 12);  // 8 leaves + 4 spines
  EXPECT_TRUE(is_violation(FindingKind::kUnacceptedHost));
  // The tenant's other routes are those of the full tables (only the newcomer's LID differs).
  for (std::size_t n = 0; n < tables.size(); ++n)
    for (std::size_t l = 0; l < tables[n].size(); ++l)
      if (l != lid) {
        EXPECT_EQ(tables[n][l], full[n][l]) << "node " << n << " LID " << l;
      }
  // One spine routes the newcomer: caught, naming the switch.
  tables[emb.switch_node[1][2]][lid] = full[emb.switch_node[1][2]][lid];
  r = audit(in);
  ASSERT_EQ(r.count(FindingKind::kUnacceptedHostRouted), 1) << dump(r);
  bool named = false;
  for (const auto& f : r.findings)
    named = named || (f.kind == FindingKind::kUnacceptedHostRouted &&
                      f.source == fabric.nodes[emb.switch_node[1][2]].name);
  EXPECT_TRUE(named) << dump(r);
  EXPECT_EQ(to_json(r)["counts"]["quarantined-host-routed"], 1);
}

TEST(IbrouteReader, ParsesTheSample) {
  std::istringstream in(
      "Unicast lids [0x0-0x2c] of switch Lid 1 guid 0x0000000000200000 (SW_L2_0):\n"
      "  Lid  Out   Destination\n"
      "       Port     Info \n"
      "0x0001 000 : (Switch portguid 0x0000000000200000: 'SW_L2_0')\n"
      "0x0002 001 : (Channel Adapter portguid 0x0000000000100001: 'comp-1')\n"
      "2 valid lids dumped \n");
  const auto dumps = parse_ibroute(in, "sample");
  ASSERT_EQ(dumps.size(), 1u);
  EXPECT_EQ(dumps[0].guid, 0x200000u);
  EXPECT_EQ(dumps[0].lid, 1);
  EXPECT_EQ(dumps[0].name, "SW_L2_0");
  ASSERT_EQ(dumps[0].table.size(), 0x2du);
  EXPECT_EQ(dumps[0].table[1], 0);
  EXPECT_EQ(dumps[0].table[2], 1);
  EXPECT_EQ(dumps[0].table[3], kNoRoute);
}

// dump_fts (what dump_lfts.sh runs) addresses switches by directed route; from a real run on
// ibsim with OpenSM ftree.
TEST(IbrouteReader, ParsesDumpFtsBlocks) {
  std::istringstream in(
      "Unicast lids [0x0-0x2c] of switch DR path slid 0; dlid 0; 0,1,4 guid 0x0000000000200003 "
      "(SW_L2_3):\n"
      "  Lid  Out   Destination\n"
      "       Port     Info \n"
      "0x0002 001 : (Channel Adapter portguid 0x0000000000100001: 'comp-1')\n"
      "0x0006 000 : (Switch portguid 0x0000000000200003: 'SW_L2_3')\n"
      "0x002c 008 : (Channel Adapter portguid 0x000000000010003f: 'comp-32')\n"
      "3 valid lids dumped \n"
      "Unicast lids [0x0-0x2c] of switch DR path slid 0; dlid 0; 0,1,3 guid 0x0000000000200002 "
      "(SW_L2_2):\n"
      "0x0002 004 : (Channel Adapter portguid 0x0000000000100001: 'comp-1')\n"
      "1 valid lids dumped \n"
      "\n*** WARNING ***: this command has been replaced by dump_fts\n");
  const auto dumps = parse_ibroute(in, "dump_lfts");
  ASSERT_EQ(dumps.size(), 2u);
  EXPECT_EQ(dumps[0].guid, 0x200003u);
  EXPECT_EQ(dumps[0].lid, 0);
  EXPECT_EQ(dumps[0].name, "SW_L2_3");
  EXPECT_EQ(dumps[0].table[0x2c], 8);
  EXPECT_EQ(dumps[0].table[6], 0);
  EXPECT_EQ(dumps[1].guid, 0x200002u);
  EXPECT_EQ(dumps[1].table[2], 4);
}

TEST(IbrouteReader, ErrorsNameTheLine) {
  std::istringstream bad(
      "Unicast lids [0x0-0x3] of switch Lid 1 guid 0x0000000000200000 (SW_L2_0):\n"
      "0x0001 000 : (Switch portguid 0x0000000000200000: 'SW_L2_0')\n"
      "0x0002 0x1 : x\n");
  try {
    parse_ibroute(bad, "dump.txt");
    FAIL() << "no error";
  } catch (const DumpError& e) {
    EXPECT_NE(std::string(e.what()).find("dump.txt:3: bad port"), std::string::npos) << e.what();
  }
  std::istringstream orphan("0x0002 001 : x\n");
  EXPECT_THROW(parse_ibroute(orphan), DumpError);
  std::istringstream beyond(
      "Unicast lids [0x0-0x3] of switch Lid 1 guid 0x0000000000200000 (SW_L2_0):\n"
      "0x0009 001 : x\n");
  EXPECT_THROW(parse_ibroute(beyond), DumpError);
  std::istringstream junk("hello\n");
  EXPECT_THROW(parse_ibroute(junk), DumpError);
}

TEST(IbrouteReader, RoundTripsEveryTableOfAFabricAndAuditsIt) {
  const FatTree tree = FatTree::parse("xgft(3;4,4,4;1,4,4)");
  const auto [fabric, emb] = topology::build_model_fabric(tree);
  const LidTables tables = to_lid_tables(fabric, emb, tree, compute(tree, {}, {}, {}).tables);
  std::string text;
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n)
    if (fabric.nodes[n].is_switch) text += format_ibroute(fabric, static_cast<int>(n), tables[n]);
  text += "\n*** WARNING ***: this command has been replaced by dump_fts\n\n";
  std::istringstream in(text);
  const auto dumps = parse_ibroute(in, "dump_lfts");
  EXPECT_EQ(static_cast<int>(dumps.size()), tree.total_switches());
  const LidTables back = tables_by_node(fabric, dumps);
  EXPECT_EQ(back, tables);
  AuditInput ai;
  ai.fabric = &fabric;
  ai.embedding = &emb;
  ai.tree = &tree;
  ai.tables = &back;
  EXPECT_TRUE(audit(ai).ok());
  // A GUID the fabric does not know.
  auto wrong = dumps;
  wrong[0].guid = 0xdeadbeef;
  EXPECT_THROW(tables_by_node(fabric, wrong), DumpError);
}

}  // namespace
}  // namespace laas::routing
