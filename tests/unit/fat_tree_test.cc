#include "topology/fat_tree.h"

#include <gtest/gtest.h>

#include <sstream>

#include "topology/embedding.h"
#include "topology/netfile.h"

using laas::topology::FatTree;
using laas::topology::SpecError;

TEST(FatTree, PaperDemoTree) {
  auto t = FatTree::parse("xgft(2;4,8;1,4)");
  EXPECT_EQ(t.num_hosts(), 32);
  EXPECT_EQ(t.num_leaves(), 8);
  EXPECT_EQ(t.num_switches(2), 4);
  EXPECT_EQ(t.up_columns(1), 4);
  EXPECT_EQ(t.num_pods(), 1);
  EXPECT_EQ(t.total_links(), 32);
  // Leaf 3 (SW_L1_3): up-ports 1-4, down-ports 5-8, host comp-13 on port 5.
  EXPECT_EQ(t.host_peer(12).index, 3);
  EXPECT_EQ(t.host_peer(12).port, 5);
  auto up = t.link_upper(t.l1_link(3, 2));
  EXPECT_EQ(up.level, 2);
  EXPECT_EQ(up.index, 2);
  EXPECT_EQ(up.port, 4);  // spine down-port of leaf 3
}

TEST(FatTree, LargestThreeLevel) {
  auto t = FatTree::parse("xgft(3;18,18,36;1,18,18)");
  EXPECT_EQ(t.num_hosts(), 11664);
  EXPECT_EQ(t.num_switches(1), 648);
  EXPECT_EQ(t.num_switches(2), 648);
  EXPECT_EQ(t.num_switches(3), 324);
  EXPECT_EQ(t.num_ports(1), 36);
  EXPECT_EQ(t.num_ports(2), 36);
  EXPECT_EQ(t.num_ports(3), 36);
  EXPECT_EQ(t.num_pods(), 36);
  EXPECT_EQ(t.total_links(), 648 * 18 * 2);
  // Level-2 switch (pod 5, b2 = 7) column 3 goes to top switch 7*18+3 on down-port pod+1.
  auto up = t.link_upper(t.l2_link(t.level2_switch(5, 7), 3));
  EXPECT_EQ(up.level, 3);
  EXPECT_EQ(up.index, 7 * 18 + 3);
  EXPECT_EQ(up.port, 6);
}

TEST(FatTree, ParallelLinksAndSlimming) {
  auto lab = FatTree::parse("pgft(2;8,4;1,4;1,2)");  // the paper's 32-node lab tree
  EXPECT_EQ(lab.num_hosts(), 32);
  EXPECT_EQ(lab.up_columns(1), 8);
  EXPECT_EQ(lab.slimming_divisor(1), 1);
  auto up = lab.link_upper(lab.l1_link(1, 3));  // column 3 -> spine 1, parallel link 1
  EXPECT_EQ(up.index, 1);
  EXPECT_EQ(up.port, 1 * 2 + 1 + 1);
  auto slim = FatTree::parse("xgft(2;8,8;1,4)");
  EXPECT_DOUBLE_EQ(slim.oversubscription(1), 2.0);
  EXPECT_EQ(slim.columns_needed(1, 5), 3);
  EXPECT_EQ(slim.columns_needed(1, 8), 4);
  auto odd = FatTree::parse("xgft(2;6,8;1,4)");  // O = 1.5 rounds up to 2
  EXPECT_EQ(odd.slimming_divisor(1), 2);
}

TEST(FatTree, SpecTextRoundTrips) {
  EXPECT_EQ(FatTree::parse(" XGFT( 3 ; 18,18,36 ; 1,18,18 ) ").spec().text(),
            "xgft(3;18,18,36;1,18,18)");
  EXPECT_EQ(FatTree::parse("pgft(2;8,4;1,4;1,2)").spec().text(), "pgft(2;8,4;1,4;1,2)");
}

static std::string spec_error(const std::string& text) {
  try {
    FatTree::parse(text);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(FatTree, BadSpecsNameTheField) {
  EXPECT_NE(spec_error("fgft(2;4,8;1,4)").find("kind"), std::string::npos);
  EXPECT_NE(spec_error("xgft(4;2,2,2,2;1,2,2,2)").find("height"), std::string::npos);
  EXPECT_NE(spec_error("xgft(2;4;1,4)").find("m (children"), std::string::npos);
  EXPECT_NE(spec_error("xgft(2;4,8;1,x)").find("w2"), std::string::npos);
  EXPECT_NE(spec_error("xgft(2;4,0;1,4)").find("m2"), std::string::npos);
  EXPECT_NE(spec_error("xgft(2;4,8;2,4)").find("w1"), std::string::npos);
  EXPECT_NE(spec_error("xgft(2;4,8;1,4").find("expected"), std::string::npos);
  EXPECT_NE(spec_error("pgft(2;4,8;1,4)").find("fields"), std::string::npos);
  EXPECT_NE(spec_error("xgft(2;200,8;1,100)").find("ports"), std::string::npos);
  EXPECT_NE(spec_error("xgft(3;100,100,100;1,1,1)").find("LID"), std::string::npos);
}

TEST(NetFile, DemoTreeIsCabledBothWays) {
  auto t = FatTree::parse("xgft(2;4,8;1,4)");
  std::ostringstream out;
  laas::topology::write_netfile(t, out);
  const std::string s = out.str();
  EXPECT_NE(s.find("Switch\t8 \"SW_L1_3\"\n[1]\t\"SW_L2_0\"[4]\n"), std::string::npos);
  EXPECT_NE(s.find("Switch\t8 \"SW_L2_0\"\n[1]\t\"SW_L1_0\"[1]\n"), std::string::npos);
  EXPECT_NE(s.find("Hca\t1 \"comp-13\"\n[1]\t\"SW_L1_3\"[5]\n"), std::string::npos);
  // The first record is a top switch: ibsim takes the file's first port as the SM port.
  EXPECT_EQ(s.find("Switch"), s.find("Switch\t8 \"SW_L2_0\""));
}

TEST(ModelFabric, EmbedsTheTreeOneToOne) {
  auto t = FatTree::parse("pgft(2;8,4;1,4;1,2)");
  auto [fabric, emb] = laas::topology::build_model_fabric(t);
  EXPECT_EQ(static_cast<int>(fabric.nodes.size()), t.num_hosts() + t.total_switches());
  const auto& leaf1 = fabric.nodes[emb.switch_node[0][1]];
  EXPECT_EQ(leaf1.name, "SW_L1_1");
  // Leaf 1, column 3 = spine 1, parallel link 1, which is the spine's down-port 1*2+1+1.
  const auto& cable = leaf1.ports[4];
  EXPECT_EQ(fabric.nodes[cable.peer_node].name, "SW_L2_1");
  EXPECT_EQ(cable.peer_port, 4);
  const auto& host = fabric.nodes[emb.host_node[9]];
  EXPECT_EQ(host.name, "comp-10");
  EXPECT_EQ(fabric.nodes[host.ports[1].peer_node].name, "SW_L1_1");
  EXPECT_NE(fabric.lid_of(emb.host_node[9]), 0);
  EXPECT_EQ(emb.node_model[emb.host_node[9]], std::make_pair(0, 9));
}
