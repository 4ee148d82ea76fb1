// TopologyView under faults: lookups for absent parts, the fingerprint, and the
// allocation map's marks for parts that are down.
#include "service/topology_view.h"

#include <gtest/gtest.h>

#include "laasctl/render.h"
#include "topology/recognize.h"

using namespace laas;
using topology::Fabric;
using topology::FatTree;

namespace {

void unplug(Fabric& f, int node, int port) {
  auto& p = f.nodes[node].ports[port];
  auto& q = f.nodes[p.peer_node].ports[p.peer_port];
  q = {};
  q.lid = 0;
  p.peer_node = -1;
  p.peer_port = 0;
}

struct Views {
  FatTree tree = FatTree::parse("pgft(2;8,4;1,4;1,2)");
  Fabric full;
  topology::Embedding model;
  topology::Layout layout;
  Views() {
    std::tie(full, model) = topology::build_model_fabric(tree);
    layout = topology::layout_of(tree, model, full);
  }
  service::TopologyView view_of(const Fabric& f) const {
    topology::RecognizeOptions o;
    o.layout = &layout;
    auto r = topology::recognize(f, o);
    EXPECT_TRUE(r.ok()) << r.error;
    return service::TopologyView(*r.tree, f, r.embedding, {}, layout);
  }
};

}  // namespace

TEST(TopologyViewFaults, EveryPartLostOrReturnedChangesTheFingerprint) {
  Views v;
  const auto whole = v.view_of(v.full);
  EXPECT_EQ(whole.down_hosts() + whole.down_links() + whole.down_switches(), 0);
  Fabric host = v.full, cable = v.full, sw = v.full;
  unplug(host, v.model.host_node[3], 1);
  unplug(cable, v.model.switch_node[0][1], 2);  // one of a parallel pair
  const int spine = v.model.switch_node[1][2];
  for (size_t p = 1; p < sw.nodes[spine].ports.size(); ++p)
    if (sw.nodes[spine].ports[p].peer_node >= 0) unplug(sw, spine, static_cast<int>(p));
  const auto h = v.view_of(host), c = v.view_of(cable), s = v.view_of(sw);
  EXPECT_NE(h.fingerprint(), whole.fingerprint());
  EXPECT_NE(c.fingerprint(), whole.fingerprint());
  EXPECT_NE(s.fingerprint(), whole.fingerprint());
  EXPECT_NE(h.fingerprint(), c.fingerprint());
  EXPECT_EQ(v.view_of(v.full).fingerprint(), whole.fingerprint());  // back: the same
  EXPECT_EQ(h.down_hosts(), 1);
  EXPECT_EQ(c.down_links(), 1);
  EXPECT_EQ(s.down_switches(), 1);
  EXPECT_EQ(s.down_links(), 8);

  // Absent parts are found by their physical identities and recorded names.
  EXPECT_FALSE(h.host_present(3));
  EXPECT_EQ(h.host_by_guid(v.full.nodes[v.model.host_node[3]].port_guid), 3);
  EXPECT_EQ(h.host_name(3), "comp-4");
  EXPECT_EQ(h.host_lid(3), 0);
  const auto slot = whole.slot_of_host(3);
  EXPECT_EQ(h.host_by_slot(slot.first, slot.second), 3);
  const auto leaf1 = v.full.nodes[v.model.switch_node[0][1]].guid;
  EXPECT_EQ(c.link_by_port(leaf1, 2), v.tree.l1_link(1, 1));
  EXPECT_FALSE(c.link_present(v.tree.l1_link(1, 1)));
  EXPECT_TRUE(c.link_present(v.tree.l1_link(1, 0)));
  EXPECT_FALSE(s.switch_present(2, 2));
  EXPECT_EQ(s.switch_node(2, 2).guid, v.full.nodes[spine].guid);
  EXPECT_EQ(s.switch_node(2, 2).name, "SW_L2_2");
  EXPECT_EQ(s.link_by_port(s.switch_node(1, 0).guid, 5), v.tree.l1_link(0, 4));
}

TEST(TopologyViewFaults, AllocationMapMarksPartsDown) {
  nlohmann::json j = {{"topology", "xgft(2;2,2;1,2)"},
                      {"hosts", 4},
                      {"free_hosts", 2},
                      {"l1_links", 4},
                      {"l1_allocated", 1},
                      {"l2_links", 0},
                      {"l2_allocated", 0},
                      {"leaves",
                       {{{"name", "L0"},
                         {"hosts", {"bank", nullptr}},
                         {"up_links", {"bank", nullptr}},
                         {"hosts_down", {0}},
                         {"up_links_down", nlohmann::json::array()}},
                        {{"name", "L1"},
                         {"hosts", {"bank", nullptr}},
                         {"up_links", {nullptr, nullptr}},
                         {"hosts_down", {false, false}},  // flags, as the service sends
                         {"up_links_down", {1}}}}},
                      {"level2", nlohmann::json::array()},
                      {"down", {"host comp-1 (held by bank)", "link L1 port 2 - S1 port 2"}}};
  const auto map = ctl::map_from_json(j);
  EXPECT_EQ(map.leaves[0].hosts[0], "@down:bank");
  EXPECT_EQ(map.leaves[1].up_links[1], "@down");
  const std::string text = ctl::render_allocation_map(map, false);
  EXPECT_NE(text.find("L0    X.     A."), std::string::npos) << text;
  EXPECT_NE(text.find("L1    A.     .X"), std::string::npos) << text;
  EXPECT_NE(text.find("host comp-1 (held by bank)"), std::string::npos) << text;
  EXPECT_NE(text.find("X = down or faulty"), std::string::npos) << text;
}

// A host's root sets its own node description: renamed after another host that is down, it
// must not be found by that name, nor lose its own recorded name.
TEST(TopologyViewNames, RequestsNameHostsByTheirRecordedNames) {
  Views v;
  Fabric f = v.full;
  const int absent = v.model.host_node[3], rogue = v.model.host_node[5];
  const std::string absent_name = f.nodes[absent].name, rogue_name = f.nodes[rogue].name;
  ASSERT_NE(absent_name, rogue_name);
  f.nodes[rogue].name = absent_name;
  unplug(f, absent, 1);
  const auto view = v.view_of(f);
  ASSERT_FALSE(view.host_present(3));
  EXPECT_EQ(view.host_by_name(absent_name), std::optional<topology::HostId>(3));
  EXPECT_EQ(view.host_by_name(rogue_name), std::optional<topology::HostId>(5));
  EXPECT_EQ(view.recorded_name(5), rogue_name);
  EXPECT_EQ(view.host_name(5), absent_name);  // what it says now, for display
  EXPECT_TRUE(service::shared_host_names(view).empty());
}
