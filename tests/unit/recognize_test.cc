#include "topology/recognize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <sstream>

#include "topology/embedding.h"
#include "topology/ibnetdiscover.h"
#include "topology/netfile.h"

using namespace laas::topology;

namespace {

// Rebuilds `f` with nodes in a random order, every switch's ports permuted, names replaced by
// opaque ones (when `rename`) and GUIDs scrambled.
Fabric shuffle(const Fabric& f, std::mt19937& rng, bool rename) {
  const int n = static_cast<int>(f.nodes.size());
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int> new_index(n);
  for (int i = 0; i < n; ++i) new_index[order[i]] = i;
  std::vector<std::vector<int>> port_perm(n);  // old port -> new port
  for (int i = 0; i < n; ++i) {
    const int np = static_cast<int>(f.nodes[i].ports.size());
    port_perm[i].resize(np);
    std::iota(port_perm[i].begin(), port_perm[i].end(), 0);
    if (f.nodes[i].is_switch && np > 2)
      std::shuffle(port_perm[i].begin() + 1, port_perm[i].end(), rng);
  }
  Fabric out;
  for (int k = 0; k < n; ++k) {
    const auto& old = f.nodes[order[k]];
    FabricNode node;
    node.is_switch = old.is_switch;
    node.guid = old.guid * 7919 + 13;
    node.port_guid = old.port_guid * 7919 + 13;
    node.name = rename ? "node" + std::to_string(rng() % 100000) : old.name;
    node.ports.resize(old.ports.size());
    node.ports[0].lid = old.ports[0].lid;
    for (size_t p = 1; p < old.ports.size(); ++p)
      node.ports[port_perm[order[k]][p]].lid = old.ports[p].lid;
    out.add_node(std::move(node));
  }
  for (int i = 0; i < n; ++i)
    for (size_t p = 1; p < f.nodes[i].ports.size(); ++p) {
      const auto& port = f.nodes[i].ports[p];
      if (port.peer_node < 0) continue;
      out.connect(new_index[i], port_perm[i][p], new_index[port.peer_node],
                  port_perm[port.peer_node][port.peer_port]);
    }
  return out;
}

void disconnect(Fabric& f, int node, int port) {
  auto& p = f.nodes[node].ports[port];
  auto& q = f.nodes[p.peer_node].ports[p.peer_port];
  q.peer_node = -1;
  q.peer_port = 0;
  p.peer_node = -1;
  p.peer_port = 0;
}

class RecognizeSpecs : public ::testing::TestWithParam<const char*> {};

}  // namespace

TEST_P(RecognizeSpecs, ModelFabricIsIdentity) {
  const FatTree tree = FatTree::parse(GetParam());
  auto [fabric, emb] = build_model_fabric(tree);
  const Recognition r = recognize(fabric);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.tree->spec().text(), tree.spec().text());
  EXPECT_EQ(r.embedding.host_node, emb.host_node);
  EXPECT_EQ(r.embedding.switch_node, emb.switch_node);
  EXPECT_EQ(r.embedding.port_map, emb.port_map);
  EXPECT_TRUE(r.embedding.missing_links.empty());
}

TEST_P(RecognizeSpecs, ShuffledAndRenamed) {
  const FatTree tree = FatTree::parse(GetParam());
  auto [fabric, emb] = build_model_fabric(tree);
  std::mt19937 rng(42);
  for (int round = 0; round < 3; ++round) {
    const Fabric shuffled = shuffle(fabric, rng, /*rename=*/round > 0);
    const Recognition r = recognize(shuffled);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.tree->spec().text(), tree.spec().text());
    EXPECT_EQ(verify_embedding(*r.tree, r.embedding, shuffled), "");
    EXPECT_TRUE(r.embedding.missing_links.empty());
    // Deterministic: the same fabric gives the same embedding.
    const Recognition again = recognize(shuffled);
    EXPECT_EQ(again.embedding.host_node, r.embedding.host_node);
    EXPECT_EQ(again.embedding.port_map, r.embedding.port_map);
  }
}

TEST_P(RecognizeSpecs, RemovedCableIsAMissingLink) {
  const FatTree tree = FatTree::parse(GetParam());
  auto [fabric, emb] = build_model_fabric(tree);
  // Remove the last level-1 up-link and, on 3-level trees, a level-2 up-link too.
  std::vector<LinkId> removed{tree.num_links(1) - 1};
  if (tree.height() == 3) removed.push_back(tree.num_links(1) + 3);
  for (LinkId l : removed) {
    const PortRef lo = tree.link_lower(l);
    disconnect(fabric, emb.switch_node[lo.level - 1][lo.index], lo.port);
  }
  std::mt19937 rng(7);
  const Fabric shuffled = shuffle(fabric, rng, false);
  const Recognition r = recognize(shuffled);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.tree->spec().text(), tree.spec().text());
  EXPECT_EQ(r.embedding.missing_links.size(), removed.size());
  EXPECT_EQ(verify_embedding(*r.tree, r.embedding, shuffled), "");
  // Unshuffled, the ids are the model's.
  const Recognition plain = recognize(fabric);
  ASSERT_TRUE(plain.ok()) << plain.error;
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(plain.embedding.missing_links, removed);
}

INSTANTIATE_TEST_SUITE_P(Trees, RecognizeSpecs,
                         ::testing::Values("xgft(2;4,8;1,4)", "pgft(2;8,4;1,4;1,2)",
                                           "xgft(3;4,4,3;1,4,2)", "pgft(3;2,4,3;1,2,2;1,2,2)",
                                           "xgft(2;3,2;1,5)"));

TEST(Recognize, FindsTheSmPort) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = build_model_fabric(tree);
  Recognition r = recognize(fabric, fabric.nodes[emb.host_node[5]].port_guid);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.sm_host, 5);
  EXPECT_EQ(r.sm_node, emb.host_node[5]);
  const int spine = emb.switch_node[1][0];
  r = recognize(fabric, fabric.nodes[spine].port_guid);
  EXPECT_EQ(r.sm_node, spine);
  EXPECT_EQ(r.sm_host, -1);
}

TEST(Recognize, RejectsLeafToLeafCable) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = build_model_fabric(tree);
  // Swap a leaf's up-link for a cable to another leaf.
  disconnect(fabric, emb.switch_node[0][0], 1);
  disconnect(fabric, emb.switch_node[0][1], 1);
  fabric.connect(emb.switch_node[0][0], 1, emb.switch_node[0][1], 1);
  const Recognition r = recognize(fabric);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("both have hosts"), std::string::npos) << r.error;
}

TEST(Recognize, RejectsUnequalLeaves) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = build_model_fabric(tree);
  disconnect(fabric, emb.host_node[31], 1);
  const Recognition r = recognize(fabric);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("same number of hosts"), std::string::npos) << r.error;
}

TEST(Recognize, RejectsHostOnSpineAndExtraSwitch) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  {
    auto [fabric, emb] = build_model_fabric(tree);
    // A storage node on a spine: the spine becomes a "leaf" cabled to leaves.
    FabricNode ca;
    ca.guid = 0x999;
    ca.port_guid = 0x99a;
    ca.name = "storage";
    ca.ports.resize(2);
    const int id = fabric.add_node(ca);
    fabric.nodes[emb.switch_node[1][0]].ports.resize(10);
    fabric.connect(id, 1, emb.switch_node[1][0], 9);
    const Recognition r = recognize(fabric);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error.find("both have hosts"), std::string::npos) << r.error;
  }
  {
    auto [fabric, emb] = build_model_fabric(tree);
    // A switch hanging off a spine (a fourth level reached only through a spine).
    FabricNode sw;
    sw.is_switch = true;
    sw.guid = sw.port_guid = 0x777;
    sw.name = "stray";
    sw.ports.resize(3);
    const int id = fabric.add_node(sw);
    fabric.nodes[emb.switch_node[1][0]].ports.resize(10);
    fabric.connect(id, 1, emb.switch_node[1][0], 9);
    const Recognition r = recognize(fabric);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error.find("top switch"), std::string::npos) << r.error;
  }
}

TEST(Recognize, RejectsSpineCrossWiredAcrossPods) {
  const FatTree tree = FatTree::parse("xgft(3;4,4,3;1,4,2)");
  auto [fabric, emb] = build_model_fabric(tree);
  // Move a level-2 up-link of pod 0 switch b2=0 to a top switch of another plane.
  const LinkId l = tree.l2_link(0, 0);
  const PortRef lo = tree.link_lower(l);
  const int node = emb.switch_node[1][lo.index];
  disconnect(fabric, node, lo.port);
  const PortRef other = tree.link_upper(tree.l2_link(1, 0));  // plane b2 = 1
  const int top = emb.switch_node[2][other.index];
  auto& ports = fabric.nodes[top].ports;
  ports.resize(ports.size() + 1);
  fabric.connect(node, lo.port, top, static_cast<int>(ports.size()) - 1);
  const Recognition r = recognize(fabric);
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(r.error.empty());
}

TEST(Recognize, RejectsSingleSwitchAndIbsimExamples) {
  std::istringstream one(
      "Switch 8 \"s\"\n[1] \"a\"[1]\n[2] \"b\"[1]\n\nHca 1 \"a\"\n[1] \"s\"[1]\n\n"
      "Hca 1 \"b\"\n[1] \"s\"[2]\n");
  Recognition r = recognize(read_ibnetdiscover(one));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("single switch level"), std::string::npos) << r.error;
  // ibsim's net.2sw2path4hca: two switches with hosts, cabled to each other twice.
  std::istringstream two(
      "Switch 8 \"Switch1\"\n[1] \"Hca1\"[1]\n[2] \"Hca3\"[1]\n[3] \"Switch2\"[3]\n"
      "[5] \"Switch2\"[5]\n\nSwitch 8 \"Switch2\"\n[1] \"Hca2\"[1]\n[2] \"Hca4\"[1]\n"
      "[3] \"Switch1\"[3]\n[5] \"Switch1\"[5]\n\nHca 2 \"Hca1\"\n[1] \"Switch1\"[1]\n\n"
      "Hca 2 \"Hca2\"\n[1] \"Switch2\"[1]\n\nHca 2 \"Hca3\"\n[1] \"Switch1\"[2]\n\n"
      "Hca 2 \"Hca4\"\n[1] \"Switch2\"[2]\n");
  r = recognize(read_ibnetdiscover(two));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("both have hosts"), std::string::npos) << r.error;
}

TEST(Recognize, NetfileRoundTrip) {
  for (const char* spec : {"xgft(2;4,8;1,4)", "pgft(2;8,4;1,4;1,2)", "xgft(3;4,4,3;1,4,2)"}) {
    const FatTree tree = FatTree::parse(spec);
    std::stringstream net;
    write_netfile(tree, net);
    const Fabric f = read_ibnetdiscover(net, spec);
    const Recognition r = recognize(f);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.tree->spec().text(), tree.spec().text());
    for (HostId h = 0; h < tree.num_hosts(); ++h)
      EXPECT_EQ(f.nodes[r.embedding.host_node[h]].name, tree.host_name(h));
  }
}

TEST(NaturalLess, Numbers) {
  EXPECT_TRUE(natural_less("comp-2", "comp-10"));
  EXPECT_FALSE(natural_less("comp-10", "comp-2"));
  EXPECT_TRUE(natural_less("SW_L1_9", "SW_L1_10"));
  EXPECT_TRUE(natural_less("a", "b"));
  // Equal numerically: still a strict total order (by text).
  EXPECT_NE(natural_less("x1", "x01"), natural_less("x01", "x1"));
}
