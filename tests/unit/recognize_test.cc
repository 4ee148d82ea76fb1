#include "topology/recognize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <numeric>
#include <random>
#include <sstream>

#include "topology/embedding.h"
#include "topology/ibnetdiscover.h"
#include "topology/layout.h"
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

void disconnect_port(Fabric& f, int node, int port) {
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
    disconnect_port(fabric, emb.switch_node[lo.level - 1][lo.index], lo.port);
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

TEST(Recognize, LeafToLeafCableIsOutsideTheTree) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = build_model_fabric(tree);
  // Swap a leaf's up-link for a cable to another leaf (a miscabled port).
  disconnect_port(fabric, emb.switch_node[0][0], 1);
  disconnect_port(fabric, emb.switch_node[0][1], 1);
  fabric.connect(emb.switch_node[0][0], 1, emb.switch_node[0][1], 1);
  const Recognition r = recognize(fabric);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.tree->spec().text(), tree.spec().text());
  ASSERT_EQ(r.embedding.extra_cables.size(), 1u);
  EXPECT_EQ(r.embedding.missing_links.size(), 2u);
  EXPECT_TRUE(r.embedding.attached.empty());
  EXPECT_EQ(verify_embedding(*r.tree, r.embedding, fabric), "");
  // The self-check catches an extra cable that is not listed.
  Embedding unlisted = r.embedding;
  unlisted.extra_cables.clear();
  EXPECT_NE(verify_embedding(*r.tree, unlisted, fabric).find("not part of the tree"),
            std::string::npos);
}

TEST(Recognize, LoopCableIsRefused) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = build_model_fabric(tree);
  const Layout layout = layout_of(tree, emb, fabric);
  const int leaf = emb.switch_node[0][2];
  const int spare = static_cast<int>(fabric.nodes[leaf].ports.size());
  fabric.nodes[leaf].ports.resize(spare + 2);
  fabric.connect(leaf, spare, leaf, spare + 1);
  Recognition r = recognize(fabric);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("loop cable"), std::string::npos) << r.error;
  RecognizeOptions o;
  o.layout = &layout;
  r = recognize(fabric, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("loop cable"), std::string::npos) << r.error;
}

TEST(Recognize, MissingHostIsAbsentNotARefusal) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = build_model_fabric(tree);
  disconnect_port(fabric, emb.host_node[31], 1);
  const Recognition r = recognize(fabric);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.tree->spec().text(), tree.spec().text());
  EXPECT_EQ(r.embedding.missing_hosts, std::vector<HostId>{31});
  EXPECT_EQ(r.embedding.host_node[31], -1);
  EXPECT_EQ(r.embedding.port_map, emb.port_map);  // the empty slot keeps its port
  EXPECT_TRUE(r.embedding.missing_links.empty());
}

TEST(Recognize, HostOnSpineIsAttachedAndExtraSwitchRefused) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  for (bool recorded : {false, true}) {
    auto [fabric, emb] = build_model_fabric(tree);
    const Layout layout = layout_of(tree, emb, fabric);
    // A storage node on a spine: attached to the tree, not a leaf slot.
    FabricNode ca;
    ca.guid = 0x999;
    ca.port_guid = 0x99a;
    ca.name = "storage";
    ca.ports.resize(2);
    const int id = fabric.add_node(ca);
    fabric.nodes[emb.switch_node[1][0]].ports.resize(10);
    fabric.connect(id, 1, emb.switch_node[1][0], 9);
    RecognizeOptions o;
    if (recorded) o.layout = &layout;
    const Recognition r = recognize(fabric, o);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.tree->spec().text(), tree.spec().text());
    EXPECT_EQ(r.source, recorded ? TreeSource::kLayout : TreeSource::kCabling);
    ASSERT_EQ(r.embedding.attached.size(), 1u);
    const AttachedHost& a = r.embedding.attached[0];
    EXPECT_EQ(a.node, id);
    EXPECT_EQ(a.level, 2);
    EXPECT_EQ(a.index, 0);
    EXPECT_EQ(a.switch_port, 9);
    EXPECT_TRUE(r.embedding.missing_hosts.empty());
    EXPECT_EQ(r.embedding.host_node, emb.host_node);
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
  disconnect_port(fabric, node, lo.port);
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
  EXPECT_NE(r.error.find("single switch level"), std::string::npos) << r.error;
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

namespace {

// Every cable of one switch removed (the switch is down: OpenSM may still list it).
void unplug_switch(Fabric& f, int node) {
  for (size_t p = 1; p < f.nodes[node].ports.size(); ++p)
    if (f.nodes[node].ports[p].peer_node >= 0) disconnect_port(f, node, static_cast<int>(p));
}

struct Fault {
  std::string what;
  std::vector<HostId> hosts;                  // expected missing hosts
  std::vector<LinkId> links;                  // expected missing links
  std::vector<std::pair<int, int>> switches;  // expected missing switches
  bool fresh_same_spec = true;                // the cabling alone still shows the tree
};

// Applies one fault class to a model fabric; returns what recognition must report.
Fault apply(const std::string& kind, const FatTree& tree, const Embedding& emb, Fabric& f) {
  Fault out{kind, {}, {}, {}, true};
  if (kind == "host") {
    disconnect_port(f, emb.host_node[5], emb.host_port[5]);
    out.hosts = {5};
  } else if (kind == "leaf-uplinks") {
    // Leaf 1 loses every up-link: it and its hosts stay in the tree, its links are down.
    for (int c = 0; c < tree.up_columns(1); ++c) {
      disconnect_port(f, emb.switch_node[0][1], emb.port_map[0][1][tree.up_port(1, c)]);
      out.links.push_back(tree.l1_link(1, c));
    }
  } else if (kind == "level2") {
    const int sw = tree.num_switches(2) - 1;
    unplug_switch(f, emb.switch_node[1][sw]);
    out.switches = {{2, sw}};
    for (LinkId l = 0; l < tree.total_links(); ++l) {
      const auto lo = tree.link_lower(l), up = tree.link_upper(l);
      if ((lo.level == 2 && lo.index == sw) || (up.level == 2 && up.index == sw))
        out.links.push_back(l);
    }
    // Without a record, a 2-level tree with a spine gone is a smaller tree.
    out.fresh_same_spec = tree.height() == 3;
  } else if (kind == "top") {
    const int sw = 0;
    unplug_switch(f, emb.switch_node[2][sw]);
    out.switches = {{3, sw}};
    for (LinkId l = 0; l < tree.total_links(); ++l) {
      const auto up = tree.link_upper(l);
      if (up.level == 3 && up.index == sw) out.links.push_back(l);
    }
  } else if (kind == "parallel") {
    // The first of a parallel pair; the second must keep its identity.
    disconnect_port(f, emb.switch_node[0][2], emb.port_map[0][2][tree.up_port(1, 0)]);
    out.links = {tree.l1_link(2, 0)};
  }
  std::sort(out.links.begin(), out.links.end());
  return out;
}

void expect_same_embedding(const Embedding& a, const Embedding& b) {
  EXPECT_EQ(a.host_node, b.host_node);
  EXPECT_EQ(a.host_port, b.host_port);
  EXPECT_EQ(a.switch_node, b.switch_node);
  EXPECT_EQ(a.switch_guid, b.switch_guid);
  EXPECT_EQ(a.port_map, b.port_map);
  EXPECT_EQ(a.missing_links, b.missing_links);
  EXPECT_EQ(a.missing_hosts, b.missing_hosts);
  EXPECT_EQ(a.missing_switches, b.missing_switches);
}

}  // namespace

class RecognizeFaults : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(RecognizeFaults, IntendedTreeKeptAndReturnsIdentical) {
  const auto [spec, kind] = GetParam();
  const FatTree tree = FatTree::parse(spec);
  if (std::string(kind) == "top" && tree.height() == 2) GTEST_SKIP();
  if (std::string(kind) == "parallel" && tree.p(2) < 2) GTEST_SKIP();
  auto [full, model] = build_model_fabric(tree);
  std::mt19937 rng(11);
  // Physical numbering and names that tell nothing: the record must carry the identities.
  full = shuffle(full, rng, /*rename=*/false);
  const Recognition first = recognize(full);
  ASSERT_TRUE(first.ok()) << first.error;
  const Layout layout = parse_layout(layout_to_json(layout_of(*first.tree, first.embedding, full)));
  Fabric broken = full;
  Embedding placed = first.embedding;
  const Fault fault = apply(kind, tree, placed, broken);

  RecognizeOptions with_layout;
  with_layout.layout = &layout;
  const Recognition r = recognize(broken, with_layout);
  ASSERT_TRUE(r.ok()) << fault.what << ": " << r.error;
  EXPECT_EQ(r.source, TreeSource::kLayout);
  EXPECT_EQ(r.tree->spec().text(), tree.spec().text());
  EXPECT_EQ(r.embedding.missing_hosts, fault.hosts);
  EXPECT_EQ(r.embedding.missing_links, fault.links);
  EXPECT_EQ(r.embedding.missing_switches, fault.switches);
  // Nothing renamed: every present part keeps its model id and port.
  EXPECT_EQ(r.embedding.port_map, first.embedding.port_map);
  EXPECT_EQ(r.embedding.switch_guid, first.embedding.switch_guid);
  for (HostId h = 0; h < tree.num_hosts(); ++h)
    if (r.embedding.host_node[h] >= 0) {
      EXPECT_EQ(r.embedding.host_node[h], first.embedding.host_node[h]);
    }
  EXPECT_EQ(verify_embedding(*r.tree, r.embedding, broken), "");

  // Without the record, the cabling alone: the same tree (or a smaller consistent one).
  const Recognition fresh = recognize(broken);
  ASSERT_TRUE(fresh.ok()) << fault.what << ": " << fresh.error;
  if (fault.fresh_same_spec) {
    EXPECT_EQ(fresh.tree->spec().text(), tree.spec().text()) << fault.what;
    EXPECT_EQ(fresh.embedding.missing_hosts.size(), fault.hosts.size());
    EXPECT_EQ(fresh.embedding.missing_links.size(), fault.links.size());
    EXPECT_EQ(fresh.embedding.missing_switches.size(), fault.switches.size());
    // Present cables keep their ports (absent ones are guessed: the fabric is shuffled, so
    // no port is usual); on the unshuffled model fabric every port is the model's.
    // (Which of a parallel pair survived cannot be told from a shuffled fabric without a
    // record either: that is what the record is for; the plain fabric below shows it.)
    if (fault.switches.empty() && std::string(kind) != "parallel")
      for (LinkId l = 0; l < tree.total_links(); ++l) {
        if (std::binary_search(fault.links.begin(), fault.links.end(), l)) continue;
        const auto lo = tree.link_lower(l);
        EXPECT_EQ(fresh.embedding.port_map[lo.level - 1][lo.index][lo.port],
                  first.embedding.port_map[lo.level - 1][lo.index][lo.port]);
      }
    Fabric plain = std::get<0>(build_model_fabric(tree));
    apply(kind, tree, model, plain);
    const Recognition p = recognize(plain);
    ASSERT_TRUE(p.ok()) << p.error;
    if (fault.switches.empty()) {
      EXPECT_EQ(p.embedding.port_map, model.port_map) << fault.what;
    }
  }
  // Declared in laas.yaml: the full tree with the same absent parts.
  RecognizeOptions declared;
  declared.declared = spec;
  const Recognition d = recognize(broken, declared);
  ASSERT_TRUE(d.ok()) << d.error;
  EXPECT_EQ(d.source, TreeSource::kDeclared);
  EXPECT_EQ(d.tree->spec().text(), tree.spec().text());
  EXPECT_EQ(d.embedding.missing_switches.size(), fault.switches.size());
  EXPECT_EQ(d.embedding.missing_links.size(), fault.links.size());

  // The part comes back: the embedding is the original one, bit for bit.
  const Recognition back = recognize(full, with_layout);
  ASSERT_TRUE(back.ok()) << back.error;
  expect_same_embedding(back.embedding, first.embedding);
}

INSTANTIATE_TEST_SUITE_P(
    Trees, RecognizeFaults,
    ::testing::Combine(::testing::Values("xgft(2;4,8;1,4)", "pgft(2;8,4;1,4;1,2)",
                                         "xgft(3;4,4,3;1,4,2)", "pgft(3;2,4,3;1,2,2;1,2,2)"),
                       ::testing::Values("host", "leaf-uplinks", "level2", "top", "parallel")),
    [](const auto& info) {
      std::string name = std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

TEST(Recognize, ParallelPairKeepsIdentityWithoutARecord) {
  const FatTree tree = FatTree::parse("pgft(2;8,4;1,4;1,2)");
  auto [fabric, emb] = build_model_fabric(tree);
  // Leaf 3's first cable to spine 0 goes; the second (physical port 2) stays link column 1.
  disconnect_port(fabric, emb.switch_node[0][3], tree.up_port(1, 0));
  const Recognition r = recognize(fabric);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.embedding.missing_links, std::vector<LinkId>{tree.l1_link(3, 0)});
  EXPECT_EQ(r.embedding.port_map, emb.port_map);
}

TEST(Recognize, ExtraCableKeepsTheRecordedTree) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = build_model_fabric(tree);
  const Layout layout = layout_of(tree, emb, fabric);
  // A second cable between a leaf and a spine on spare ports, and an SM host's second port on
  // a spare leaf port: both outside the recorded tree, neither a reason to refuse it.
  const int leaf = emb.switch_node[0][0], spine = emb.switch_node[1][1];
  const int lp = static_cast<int>(fabric.nodes[leaf].ports.size());
  const int sp = static_cast<int>(fabric.nodes[spine].ports.size());
  fabric.nodes[leaf].ports.resize(lp + 2);
  fabric.nodes[spine].ports.resize(sp + 1);
  fabric.connect(leaf, lp, spine, sp);
  FabricNode second;
  second.guid = second.port_guid = 0x5e55;
  second.name = fabric.nodes[emb.host_node[0]].name;
  second.ports.resize(3);
  const int id = fabric.add_node(second);
  fabric.connect(id, 2, leaf, lp + 1);
  RecognizeOptions o;
  o.layout = &layout;
  const Recognition r = recognize(fabric, o);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.source, TreeSource::kLayout);
  EXPECT_EQ(r.embedding.port_map, emb.port_map);
  ASSERT_EQ(r.embedding.extra_cables.size(), 1u);
  ASSERT_EQ(r.embedding.attached.size(), 1u);
  EXPECT_EQ(r.embedding.attached[0].level, 1);
  EXPECT_EQ(r.embedding.attached[0].switch_port, lp + 1);
  EXPECT_TRUE(r.embedding.missing_links.empty());
}

TEST(Recognize, DeclaredSpecMustFitTheCabling) {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = build_model_fabric(tree);
  RecognizeOptions o;
  o.declared = "xgft(2;2,8;1,4)";
  Recognition r = recognize(fabric, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("4 hosts on a leaf"), std::string::npos) << r.error;
  o.declared = "xgft(2;4,8";
  r = recognize(fabric, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("not a spec"), std::string::npos) << r.error;
  // Larger than what is cabled: the rest is absent.
  o.declared = "xgft(2;4,8;1,5)";
  r = recognize(fabric, o);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.embedding.missing_switches, (std::vector<std::pair<int, int>>{{2, 4}}));
  EXPECT_EQ(r.embedding.missing_links.size(), 8u);
}

TEST(Recognize, LeafWithAllHostsDownStaysALeaf) {
  for (const char* spec : {"xgft(2;4,8;1,4)", "xgft(3;4,4,3;1,4,2)"}) {
    const FatTree tree = FatTree::parse(spec);
    auto [fabric, emb] = build_model_fabric(tree);
    for (int s = 0; s < tree.m(1); ++s)
      disconnect_port(fabric, emb.host_node[tree.host_at(1, s)], 1);
    const Recognition r = recognize(fabric);
    ASSERT_TRUE(r.ok()) << spec << ": " << r.error;
    EXPECT_EQ(r.tree->spec().text(), tree.spec().text());
    EXPECT_EQ(r.embedding.missing_hosts.size(), static_cast<size_t>(tree.m(1)));
    EXPECT_TRUE(r.embedding.missing_links.empty());
  }
}

TEST(Layout, RoundTripAndClearErrors) {
  const FatTree tree = FatTree::parse("pgft(3;2,4,3;1,2,2;1,2,2)");
  auto [fabric, emb] = build_model_fabric(tree);
  const Layout l = layout_of(tree, emb, fabric);
  const Layout back = parse_layout(layout_to_json(l));
  EXPECT_TRUE(same_wiring(l, back));
  EXPECT_EQ(back.hosts[3].port_guid, fabric.nodes[emb.host_node[3]].port_guid);
  EXPECT_EQ(back.hosts[3].name, "comp-4");
  auto error_of = [](const std::string& text) {
    try {
      parse_layout(text);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of("{").find("not JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"version":1,"topology":"xgft(2;4"})").find("'topology'"),
            std::string::npos);
  EXPECT_NE(error_of(R"j({"version":1,"topology":"xgft(2;4,8;1,4)","switches":[]})j")
                .find("is not listed"),
            std::string::npos);
  std::string text = layout_to_json(l);
  text.replace(text.find("\"guid\": \"0x"), 9, "\"guid\": \"zz");
  EXPECT_NE(error_of(text).find("not a GUID"), std::string::npos) << error_of(text);
}

TEST(NaturalLess, Numbers) {
  EXPECT_TRUE(natural_less("comp-2", "comp-10"));
  EXPECT_FALSE(natural_less("comp-10", "comp-2"));
  EXPECT_TRUE(natural_less("SW_L1_9", "SW_L1_10"));
  EXPECT_TRUE(natural_less("a", "b"));
  // Equal numerically: still a strict total order (by text).
  EXPECT_NE(natural_less("x1", "x01"), natural_less("x01", "x1"));
}

// Staged build-out: switches cabled to the recorded tree grow it; recorded switches
// keep their model indices and ports, new ones come after (named to sort first, they would
// come first in a fresh recognition).
namespace {

struct Grown {
  Fabric full, before;
  Embedding model;
};

// The model fabric of `spec` with the given switches (level, index) renamed to sort first and
// unplugged in `before`.
Grown grown_fabric(const char* spec, const std::vector<std::pair<int, int>>& added) {
  const FatTree tree = FatTree::parse(spec);
  auto [full, model] = build_model_fabric(tree);
  Grown g{full, full, model};
  for (const auto& [l, i] : added) {
    const int node = model.switch_node[l - 1][i];
    g.full.nodes[node].name = "A-new-" + std::to_string(l) + "-" + std::to_string(i);
    g.before.nodes[node].name = g.full.nodes[node].name;
    unplug_switch(g.before, node);
  }
  return g;
}

}  // namespace

TEST(RecognizeGrowth, APodAddedToAThreeLevelTreeKeepsEveryModelId) {
  const Grown g = grown_fabric("xgft(3;2,2,3;1,2,2)", {{1, 4}, {1, 5}, {2, 4}, {2, 5}});
  const Recognition first = recognize(g.before);
  ASSERT_TRUE(first.ok()) << first.error;
  ASSERT_EQ(first.tree->spec().text(), "xgft(3;2,2,2;1,2,2)");
  const Layout layout = layout_of(*first.tree, first.embedding, g.before);
  RecognizeOptions o;
  o.layout = &layout;
  const Recognition r = recognize(g.full, o);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.source, TreeSource::kGrown) << r.source_note;
  EXPECT_EQ(r.tree->spec().text(), "xgft(3;2,2,3;1,2,2)");
  EXPECT_EQ(r.growth,
            "grew the intended tree from xgft(3;2,2,2;1,2,2) to xgft(3;2,2,3;1,2,2): +2 leaves, "
            "+1 pod, +2 level-2 switches");
  ASSERT_TRUE(r.grown.has_value());
  // The model's own numbering, although the new switches' names sort first.
  EXPECT_EQ(r.embedding.switch_node, g.model.switch_node);
  EXPECT_EQ(r.embedding.port_map, g.model.port_map);
  for (int l = 1; l <= 3; ++l)
    for (int i = 0; i < first.tree->num_switches(l); ++i) {
      EXPECT_EQ(r.embedding.switch_guid[l - 1][i], first.embedding.switch_guid[l - 1][i]);
      // Top switches gain a down-port for the new pod, after the recorded ones.
      const auto& was = first.embedding.port_map[l - 1][i];
      const auto& now = r.embedding.port_map[l - 1][i];
      ASSERT_GE(now.size(), was.size());
      EXPECT_TRUE(std::equal(was.begin(), was.end(), now.begin())) << l << " " << i;
    }
  for (HostId h = 0; h < first.tree->num_hosts(); ++h)
    EXPECT_EQ(r.embedding.host_node[h], first.embedding.host_node[h]);
  EXPECT_TRUE(r.embedding.extra_cables.empty());
  EXPECT_EQ(verify_embedding(*r.tree, r.embedding, g.full), "");
  // Recorded, the grown layout is the tree from then on.
  const Layout next = layout_of(*r.tree, r.embedding, g.full, &*r.grown);
  o.layout = &next;
  const Recognition again = recognize(g.full, o);
  EXPECT_EQ(again.source, TreeSource::kLayout);
  expect_same_embedding(again.embedding, r.embedding);
}

TEST(RecognizeGrowth, DeclaredFullSizeFillsAbsentParts) {
  const Grown g = grown_fabric("xgft(2;4,5;1,5)", {{1, 4}, {2, 4}});
  RecognizeOptions o;
  o.declared = "xgft(2;4,5;1,5)";
  const Recognition first = recognize(g.before, o);
  ASSERT_TRUE(first.ok()) << first.error;
  EXPECT_EQ(first.embedding.missing_switches.size(), 2u);
  const Layout layout = layout_of(*first.tree, first.embedding, g.before);
  o.layout = &layout;
  const Recognition r = recognize(g.full, o);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.source, TreeSource::kGrown) << r.source_note;
  EXPECT_EQ(r.growth,
            "filled absent parts of the intended tree xgft(2;4,5;1,5): +1 leaf, +1 spine");
  EXPECT_TRUE(r.embedding.missing_switches.empty());
  EXPECT_TRUE(r.embedding.missing_links.empty());
  EXPECT_EQ(r.embedding.switch_node, g.model.switch_node);
  // A growth beyond the declared size is not adopted.
  const Grown more = grown_fabric("xgft(2;4,6;1,6)", {{1, 5}, {2, 5}});
  RecognizeOptions d;
  d.declared = "xgft(2;4,5;1,5)";
  Fabric five = more.full;
  unplug_switch(five, more.model.switch_node[1][5]);
  unplug_switch(five, more.model.switch_node[0][5]);
  const Recognition small = recognize(five, d);
  ASSERT_TRUE(small.ok()) << small.error;
  const Layout recorded = layout_of(*small.tree, small.embedding, five);
  d.layout = &recorded;
  const Recognition big = recognize(more.full, d);
  EXPECT_NE(big.source, TreeSource::kGrown);
}

TEST(RecognizeGrowth, ARecablingIsNotAGrowth) {
  Grown g = grown_fabric("xgft(3;2,2,3;1,2,2)", {{1, 4}, {1, 5}, {2, 4}, {2, 5}});
  const Recognition first = recognize(g.before);
  ASSERT_TRUE(first.ok()) << first.error;
  const Layout layout = layout_of(*first.tree, first.embedding, g.before);
  // The new pod comes with recorded leaf 0 moved into it (its up-links swapped with new leaf 4).
  Fabric& f = g.full;
  const int a = g.model.switch_node[0][0], b = g.model.switch_node[0][4];
  for (int p = 1; p <= 2; ++p) {
    const auto pa = f.nodes[a].ports[p], pb = f.nodes[b].ports[p];
    disconnect_port(f, a, p);
    disconnect_port(f, b, p);
    f.connect(a, p, pb.peer_node, pb.peer_port);
    f.connect(b, p, pa.peer_node, pa.peer_port);
  }
  RecognizeOptions o;
  o.layout = &layout;
  const Recognition r = recognize(f, o);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.source, TreeSource::kLayout);
  EXPECT_EQ(r.tree->spec().text(), "xgft(3;2,2,2;1,2,2)");
  EXPECT_NE(r.source_note.find("not a growth"), std::string::npos) << r.source_note;
}

// 6 up-links over 4 spines (two spines with one cable from every leaf instead of
// two): those columns are uncabled by design, not down; a cable missing on one leaf only is.
TEST(Recognize, UnevenUplinksAreUncabledNotDown) {
  const FatTree tree = FatTree::parse("pgft(2;8,4;1,4;1,2)");
  auto [fabric, emb] = build_model_fabric(tree);
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf)
    for (int c : {1, 3})
      disconnect_port(fabric, emb.switch_node[0][leaf], emb.port_map[0][leaf][tree.up_port(1, c)]);
  Recognition r = recognize(fabric);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.tree->spec().text(), tree.spec().text());
  EXPECT_EQ(r.embedding.missing_links.size(), 8u);
  EXPECT_EQ(r.embedding.uncabled, r.embedding.missing_links);
  // One more cable gone on leaf 0 only: a fault, not the design.
  disconnect_port(fabric, emb.switch_node[0][0], emb.port_map[0][0][tree.up_port(1, 4)]);
  r = recognize(fabric);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.embedding.missing_links.size(), 9u);
  EXPECT_EQ(r.embedding.uncabled.size(), 8u);
  EXPECT_FALSE(std::binary_search(r.embedding.uncabled.begin(), r.embedding.uncabled.end(),
                                  tree.l1_link(0, 4)));
  // A column cabled on one leaf is not uncabled by design anywhere.
  auto [full, femb] = build_model_fabric(tree);
  for (int leaf = 1; leaf < tree.num_leaves(); ++leaf)
    disconnect_port(full, femb.switch_node[0][leaf], femb.port_map[0][leaf][tree.up_port(1, 1)]);
  r = recognize(full);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.embedding.missing_links.size(), 3u);
  EXPECT_TRUE(r.embedding.uncabled.empty());
}
