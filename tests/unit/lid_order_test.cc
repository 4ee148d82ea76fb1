#include "topology/lid_order.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "topology/embedding.h"
#include "topology/fat_tree.h"
#include "topology/recognize.h"

using namespace laas::topology;

namespace {

struct Demo {
  FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  Fabric fabric;
  Embedding emb;
  Demo() {
    auto built = build_model_fabric(tree);
    fabric = std::move(built.first);
    emb = std::move(built.second);
    // Every node its own port GUID, as a live fabric has.
    for (size_t i = 0; i < fabric.nodes.size(); ++i) fabric.nodes[i].port_guid = 0x1000 + i;
  }
};

}  // namespace

TEST(LidOrder, HostsLeafByLeafThenSwitchesEveryPortOnce) {
  Demo d;
  const auto lids = leaf_ordered_lids(d.fabric, d.tree, d.emb, 0);
  ASSERT_EQ(lids.size(), d.fabric.nodes.size());
  // Host h gets LID h + 1: the 4 hosts of a leaf are 4 consecutive LIDs.
  for (HostId h = 0; h < d.tree.num_hosts(); ++h) {
    EXPECT_EQ(lids[h].port_guid, d.fabric.nodes[d.emb.host_node[h]].port_guid);
    EXPECT_EQ(lids[h].base, h + 1);
    EXPECT_EQ(lids[h].last, h + 1);
  }
  std::set<Guid> guids;
  std::set<Lid> used;
  for (const auto& a : lids) {
    EXPECT_TRUE(guids.insert(a.port_guid).second);
    EXPECT_TRUE(used.insert(a.base).second);
  }
  EXPECT_EQ(lids[d.tree.num_hosts()].port_guid, d.fabric.nodes[d.emb.switch_node[0][0]].port_guid);
  EXPECT_EQ(format_guid2lid({{0x1000, 1, 1}, {0x2c9000000abcdef, 0x40, 0x43}}),
            "0x0000000000001000 0x0001 0x0001\n\n0x02c9000000abcdef 0x0040 0x0043\n\n");
}

TEST(LidOrder, RecognizedFabricGivesTheSameOrderAsTheModel) {
  Demo d;
  const Recognition rec = recognize(d.fabric);
  ASSERT_TRUE(rec.ok()) << rec.error;
  const auto lids = leaf_ordered_lids(d.fabric, *rec.tree, rec.embedding, 0);
  // The hosts of one leaf: consecutive LIDs, all cabled to that leaf.
  for (int leaf = 0; leaf < d.tree.num_switches(1); ++leaf) {
    std::set<int> leaves;
    for (int k = 0; k < d.tree.hosts_per_leaf(); ++k) {
      const Guid g = lids[leaf * d.tree.hosts_per_leaf() + k].port_guid;
      for (const auto& n : d.fabric.nodes)
        if (n.port_guid == g)
          for (const auto& p : n.ports)
            if (p.peer_node >= 0) leaves.insert(p.peer_node);
    }
    EXPECT_EQ(leaves.size(), 1u) << "leaf " << leaf;
  }
}

TEST(LidOrder, LmcAlignsAndRefusals) {
  Demo d;
  const auto lids = leaf_ordered_lids(d.fabric, d.tree, d.emb, 2);
  for (size_t i = 0; i < lids.size(); ++i) {
    EXPECT_EQ(lids[i].base % 4, 0);
    EXPECT_EQ(lids[i].last, lids[i].base + 3);
  }
  EXPECT_THROW(leaf_ordered_lids(d.fabric, d.tree, d.emb, 8), std::invalid_argument);
  Demo no_guid;
  no_guid.fabric.nodes[3].port_guid = 0;
  EXPECT_THROW(leaf_ordered_lids(no_guid.fabric, no_guid.tree, no_guid.emb, 0),
               std::invalid_argument);
  Demo twice;
  twice.fabric.nodes[3].port_guid = twice.fabric.nodes[4].port_guid;
  EXPECT_THROW(leaf_ordered_lids(twice.fabric, twice.tree, twice.emb, 0), std::invalid_argument);
  // More ports than unicast LIDs: 4,096 hosts and their switches at 16 LIDs a port.
  const FatTree big = FatTree::parse("xgft(3;16,16,16;1,16,16)");
  auto [fabric, emb] = build_model_fabric(big);
  for (size_t i = 0; i < fabric.nodes.size(); ++i) fabric.nodes[i].port_guid = 0x1000 + i;
  EXPECT_NO_THROW(leaf_ordered_lids(fabric, big, emb, 0));
  EXPECT_THROW(leaf_ordered_lids(fabric, big, emb, 4), std::invalid_argument);
}
