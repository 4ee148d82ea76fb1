// laas-sdn's pass without OpenSM: recognize, place, compute, map onto the LIDs; and the check
// that the tables read back from the switches are the ones written.
#include <gtest/gtest.h>

#include <sstream>

#include "routing/audit.h"
#include "sdn/lfts_file.h"
#include "sdn/plan.h"
#include "sdn/readback.h"
#include "topology/embedding.h"

namespace {

using laas::sdn::make_plan;
using laas::sdn::PlanRequest;
using laas::topology::FatTree;

std::vector<laas::routing::DumpedTable> dumps(const std::string& text) {
  std::istringstream in(text);
  return laas::routing::parse_ibroute(in);
}

}  // namespace

TEST(SdnPlan, PlacesComputesAndTheTablesIsolateTheTenants) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  const auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  PlanRequest req;
  req.tenants = {{"a", 10}, {"b", 6}};
  req.sm_port_guid = fabric.nodes[emb.switch_node[1][0]].port_guid;  // on SW_L2_0
  const auto plan = make_plan(fabric, req);
  ASSERT_EQ(plan.allocations.tenants.size(), 2u);
  EXPECT_EQ(plan.allocations.tenants.at("a").hosts.size(), 10u);
  EXPECT_EQ(plan.allocations.topology, tree.spec().text());
  EXPECT_NE(plan.partitions.find("laas_a"), std::string::npos);
  EXPECT_NE(plan.partitions.find("laas_b"), std::string::npos);
  const auto input = laas::allocation::audit_input(plan.rec, fabric, plan.tables, plan.allocations);
  const auto report = laas::routing::audit(input);
  EXPECT_TRUE(report.ok());
}

TEST(SdnPlan, RefusesWhatCannotBePlaced) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  const auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  PlanRequest req;
  req.tenants = {{"big", 33}};
  EXPECT_THROW(make_plan(fabric, req), laas::sdn::PlanError);
  laas::topology::Fabric two;
  two.add_node({});
  EXPECT_THROW(make_plan(two, {}), laas::sdn::PlanError);
}

TEST(SdnReadback, SameTablesAreApplied) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  const auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  const auto plan = make_plan(fabric, PlanRequest{{{"a", 4}}, 0, "laas"});
  const auto text = laas::sdn::lfts_text(fabric, plan.tables);
  const auto r = laas::sdn::compare_readback(dumps(text), dumps(text));
  EXPECT_TRUE(r.applied());
  EXPECT_EQ(r.switches, 12);
  EXPECT_GT(r.entries, 12 * 40);
}

TEST(SdnReadback, ADifferentEntryOrAMissingSwitchIsNotApplied) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  const auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  const auto plan = make_plan(fabric, PlanRequest{{{"a", 4}}, 0, "laas"});
  const auto wrote = dumps(laas::sdn::lfts_text(fabric, plan.tables));
  auto read = wrote;
  std::size_t lid = 1;
  while (read[0].table[lid] == laas::routing::kNoRoute) ++lid;
  read[0].table[lid] = read[0].table[lid] == 1 ? 2 : 1;
  read[1].table.push_back(3);  // an entry past the file's last LID
  read.pop_back();
  const auto r = laas::sdn::compare_readback(wrote, read);
  EXPECT_FALSE(r.applied());
  EXPECT_EQ(r.differing, 2);
  EXPECT_EQ(r.missing_switches, 1);
  ASSERT_EQ(r.lines.size(), 3u);
  EXPECT_NE(r.lines[0].find("LID " + std::to_string(lid) + " written"), std::string::npos)
      << r.lines[0];
  EXPECT_NE(r.lines[2].find("not read back"), std::string::npos) << r.lines[2];
}
