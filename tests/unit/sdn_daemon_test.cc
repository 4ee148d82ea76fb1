// laas-sdn's pure parts: the read-back by LFT block, the switches a run changed, and what
// status and the metrics say (its role, whole_leaves, whether the SM applied the tables).
#include <gtest/gtest.h>

#include "sdn/readback.h"
#include "sdn/report.h"

using namespace laas;
using routing::LidTable;

TEST(SdnReadback, ComparesBlocksOfSixtyFourLids) {
  LidTable wrote(130, 0xFF);  // blocks 0, 1, 2
  wrote[1] = 1;
  wrote[70] = 2;
  LidTable same = wrote;
  sdn::BlockCheck ok;
  sdn::compare_blocks("sw", wrote, same, ok);
  EXPECT_TRUE(ok.applied());
  EXPECT_EQ(ok.blocks, 3);
  EXPECT_EQ(ok.blocks_differing, 0);
  // A read-back cut short is unrouted past its end; an entry changed in block 1 only.
  LidTable read(65, 0xFF);
  read[1] = 1;
  sdn::BlockCheck bad;
  sdn::compare_blocks("sw", wrote, read, bad);
  EXPECT_FALSE(bad.applied());
  EXPECT_EQ(bad.switches, 1);
  EXPECT_EQ(bad.switches_differing, 1);
  EXPECT_EQ(bad.blocks_differing, 1);
  ASSERT_EQ(bad.lines.size(), 1u);
  EXPECT_EQ(bad.lines[0], "sw: block 1, LID 70 written 2, read back 255");
}

TEST(SdnReadback, ChangedSwitchesByGuid) {
  topology::Fabric f;
  f.nodes.resize(3);
  f.nodes[0].is_switch = f.nodes[1].is_switch = true;
  f.nodes[0].guid = 0x10;
  f.nodes[1].guid = 0x20;
  f.nodes[2].guid = 0x30;  // a host: no table
  routing::LidTables now = {LidTable{0, 1, 2}, LidTable{0, 2, 1}, {}};
  EXPECT_EQ(sdn::changed_switches(f, now, {}), (std::vector<int>{0, 1}));
  std::map<topology::Guid, LidTable> before = {{0x10, {0, 1, 2}}, {0x20, {0, 1, 2}}};
  EXPECT_EQ(sdn::changed_switches(f, now, before), (std::vector<int>{1}));
}

TEST(SdnReport, SaysRoleWholeLeavesAndApplied) {
  core::Config c;
  c.sdn.lfts_file = "/l";
  c.sdn.reload = {"kill", "-HUP", "1"};
  sdn::SdnReport r;
  auto j = sdn::report_json(c, r);
  EXPECT_NE(j["role"].get<std::string>().find("master of its own state directory"),
            std::string::npos);
  EXPECT_EQ(j["whole_leaves"], true);  // unset: laas-sdn's default
  EXPECT_EQ(j["sl2vl_first_hop_drop"], false);
  EXPECT_FALSE(j.contains("warning"));
  EXPECT_FALSE(j.contains("readback"));
  EXPECT_TRUE(sdn::shared_leaf_warning(c).empty());
  c.whole_leaves = false;
  j = sdn::report_json(c, r);
  EXPECT_NE(j["warning"].get<std::string>().find("separated by P_Keys only"), std::string::npos);
  sdn::BlockCheck check;
  sdn::compare_blocks("sw", LidTable(64, 1), LidTable(64, 2), check);
  r.readback = check;
  j = sdn::report_json(c, r);
  EXPECT_EQ(j["readback"]["applied"], false);
  EXPECT_EQ(j["readback"]["blocks_differing"], 1);
  bool applied_metric = false;
  for (const auto& f : sdn::report_metrics(c, r))
    if (f.name == "laas_sdn_tables_applied") {
      applied_metric = true;
      EXPECT_EQ(f.samples.at(0).value, 0);
    }
  EXPECT_TRUE(applied_metric);
}
