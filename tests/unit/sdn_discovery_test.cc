// laas-sdn's fabric reader: discovery's records (built here by hand, then by the walk by
// directed route over a simulated fabric) into the same Fabric the ibnetdiscover reader gives
// for that fabric's ibnetdiscover output.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "sdn/discovery.h"
#include "sdn/route_discover.h"
#include "topology/ibnetdiscover.h"

namespace {

using laas::sdn::DiscoveredNode;
using laas::sdn::Discovery;
using laas::sdn::NodeType;
using laas::topology::Fabric;

// A leaf (SW_L1_0, LID 2) under a spine (SW_L2_0, LID 1), a host on the leaf and a dual-port
// server cabled to both switches, as ibnetdiscover prints them.
const char* kText = R"(
switchguid=0x200000(200000)
Switch	4 "S-0000000000200000"		# "SW_L2_0" base port 0 lid 1 lmc 0
[1]	"S-0000000000200001"[1]		# "SW_L1_0" lid 2 4xSDR
[2]	"H-0000000000100010"[2](100012) 		# "gpu 1" lid 7 4xSDR

switchguid=0x200001(200001)
Switch	4 "S-0000000000200001"		# "SW_L1_0" base port 0 lid 2 lmc 0
[1]	"S-0000000000200000"[1]		# "SW_L2_0" lid 1 4xSDR
[2]	"H-0000000000100000"[1](100001) 		# "comp-1" lid 5 4xSDR
[3]	"H-0000000000100010"[1](100011) 		# "gpu 1" lid 6 4xSDR

caguid=0x100000
Ca	1 "H-0000000000100000"		# "comp-1"
[1](100001) 	"S-0000000000200001"[2]		# lid 5 lmc 0 "SW_L1_0" lid 2 4xSDR

caguid=0x100010
Ca	2 "H-0000000000100010"		# "gpu 1"
[1](100011) 	"S-0000000000200001"[3]		# lid 6 lmc 0 "SW_L1_0" lid 2 4xSDR
[2](100012) 	"S-0000000000200000"[2]		# lid 7 lmc 0 "SW_L2_0" lid 1 4xSDR
)";

// The same fabric as discovery hands it over, in the order it met the nodes.
Discovery records() {
  Discovery d;
  auto node = [&](NodeType type, laas::topology::Guid guid, const char* desc, int ports) {
    DiscoveredNode n;
    n.type = type;
    n.guid = guid;
    n.description = desc;
    n.num_ports = ports;
    d.nodes.push_back(n);
    return static_cast<int>(d.nodes.size()) - 1;
  };
  const int host = node(NodeType::kCa, 0x100000, "comp-1", 1);
  const int leaf = node(NodeType::kSwitch, 0x200001, "SW_L1_0", 4);
  const int spine = node(NodeType::kSwitch, 0x200000, "SW_L2_0", 4);
  const int gpu = node(NodeType::kCa, 0x100010, "gpu 1", 2);
  auto cable = [&](int a, int pa, laas::topology::Guid ga, laas::topology::Lid la, int b, int pb,
                   laas::topology::Guid gb, laas::topology::Lid lb) {
    d.nodes[a].ports.push_back({pa, ga, la, b, pb});
    d.nodes[b].ports.push_back({pb, gb, lb, a, pa});
  };
  d.nodes[leaf].ports.push_back({0, 0x200001, 2, -1, 0});
  d.nodes[spine].ports.push_back({0, 0x200000, 1, -1, 0});
  cable(host, 1, 0x100001, 5, leaf, 2, 0x200001, 0);
  cable(gpu, 1, 0x100011, 6, leaf, 3, 0x200001, 0);
  cable(gpu, 2, 0x100012, 7, spine, 2, 0x200000, 0);
  cable(leaf, 1, 0x200001, 0, spine, 1, 0x200000, 0);
  d.from_node = host;
  d.from_port = 1;
  return d;
}

// Everything the rest of the project reads of a node, keyed by GUID so node order is free.
using Port = std::tuple<int, laas::topology::Guid, int, int, laas::topology::Guid>;
std::map<laas::topology::Guid, std::string> canonical(const Fabric& f) {
  std::map<laas::topology::Guid, std::string> out;
  for (const auto& n : f.nodes) {
    std::ostringstream s;
    s << n.name << "|" << n.is_switch << "|" << std::hex << n.port_guid << "|" << n.ca_guid << "|"
      << std::dec << n.ports.size() << "|";
    for (std::size_t p = 0; p < n.ports.size(); ++p) {
      const auto& port = n.ports[p];
      s << "[" << p << " lid " << port.lid << " guid " << std::hex << port.guid << std::dec;
      if (port.peer_node >= 0)
        s << " to " << std::hex << f.nodes[port.peer_node].guid << std::dec << ":"
          << port.peer_port;
      s << "]";
    }
    out[n.guid] = s.str();
  }
  return out;
}

}  // namespace

TEST(SdnDiscovery, GivesTheFabricTheIbnetdiscoverReaderGives) {
  std::istringstream in(kText);
  const Fabric offline = laas::topology::read_ibnetdiscover(in, "t.out");
  const Fabric online = laas::sdn::to_fabric(records());
  EXPECT_EQ(canonical(online), canonical(offline));
  ASSERT_EQ(online.nodes.size(), 5u) << "the dual-port server is one node per cabled port";
  EXPECT_TRUE(online.nodes[0].is_switch);
  EXPECT_EQ(online.nodes[0].guid, 0x200000u) << "switches first, in GUID order";
  EXPECT_EQ(online.lid_of(0), 1);
  EXPECT_EQ(laas::sdn::local_port_guid(records()), 0x100001u);
}

TEST(SdnDiscovery, TheOrderDiscoveryMetNodesInDoesNotMatter) {
  Discovery d = records();
  const Fabric first = laas::sdn::to_fabric(d);
  std::reverse(d.nodes.begin(), d.nodes.end());
  const int n = static_cast<int>(d.nodes.size());
  for (auto& node : d.nodes)
    for (auto& p : node.ports)
      if (p.peer >= 0) p.peer = n - 1 - p.peer;
  const Fabric second = laas::sdn::to_fabric(d);
  ASSERT_EQ(first.nodes.size(), second.nodes.size());
  for (std::size_t i = 0; i < first.nodes.size(); ++i)
    EXPECT_EQ(first.nodes[i].guid, second.nodes[i].guid);
  EXPECT_EQ(canonical(first), canonical(second));
}

TEST(SdnDiscovery, ContradictoryRecordsAreRefusedNamingTheNode) {
  Discovery one_sided = records();
  one_sided.nodes[1].ports.back().peer_port = 2;  // the leaf's up-link names the GPU's cable
  try {
    laas::sdn::to_fabric(one_sided);
    FAIL() << "no error";
  } catch (const laas::sdn::DiscoveryError& e) {
    EXPECT_NE(std::string(e.what()).find("node 0x0000000000200001 port 1"), std::string::npos)
        << e.what();
  }
  Discovery beyond = records();
  beyond.nodes[0].ports[0].number = 2;  // comp-1 has one port
  EXPECT_THROW(laas::sdn::to_fabric(beyond), laas::sdn::DiscoveryError);
  Discovery no_ports = records();
  no_ports.nodes[0].num_ports = 0;
  EXPECT_THROW(laas::sdn::to_fabric(no_ports), laas::sdn::DiscoveryError);
}

TEST(SdnDiscovery, ANodeWithoutADescriptionIsNamedLikeIbnetdiscoverNamesIt) {
  Discovery d = records();
  d.nodes[1].description.clear();
  const Fabric f = laas::sdn::to_fabric(d);
  EXPECT_EQ(f.nodes[1].name, "S-0000000000200001");
}

namespace {

using laas::sdn::SmpNodeInfo;
using laas::sdn::SmpPortInfo;

// kText's fabric answering SMPs by directed route, as the switches and adapters would: a hop
// leaves by a port's cable, an adapter forwards nothing, a muted node answers nothing.
class FakeFabric : public laas::sdn::SmpSource {
 public:
  struct Node {
    NodeType type;
    laas::topology::Guid guid;
    std::string desc;
    int ports;
    std::map<int, laas::topology::Guid> port_guid;  // a switch: port 0's for all
    std::map<int, int> lid;
    std::map<int, std::pair<int, int>> cable;  // port -> (node, port)
  };
  FakeFabric() {
    nodes = {{NodeType::kCa, 0x100000, "comp-1", 1, {{1, 0x100001}}, {{1, 5}}, {}},
             {NodeType::kSwitch, 0x200001, "SW_L1_0", 4, {{0, 0x200001}}, {{0, 2}}, {}},
             {NodeType::kSwitch, 0x200000, "SW_L2_0", 4, {{0, 0x200000}}, {{0, 1}}, {}},
             {NodeType::kCa,
              0x100010,
              "gpu 1",
              2,
              {{1, 0x100011}, {2, 0x100012}},
              {{1, 6}, {2, 7}},
              {}}};
    link(0, 1, 1, 2);
    link(3, 1, 1, 3);
    link(3, 2, 2, 2);
    link(1, 1, 2, 1);
  }
  void link(int a, int pa, int b, int pb) {
    nodes[a].cable[pa] = {b, pb};
    nodes[b].cable[pb] = {a, pa};
  }
  SmpNodeInfo node_info(const std::string& path) override {
    const auto [n, entry] = walk(path);
    const Node& node = nodes[n];
    const auto guid =
        node.type == NodeType::kSwitch ? node.port_guid.at(0) : node.port_guid.at(entry);
    return {node.type, node.guid, guid, node.ports, entry};
  }
  std::string node_description(const std::string& path) override {
    return nodes[walk(path).first].desc;
  }
  SmpPortInfo port_info(const std::string& path, int port) override {
    const Node& node = nodes[walk(path).first];
    const int lid_port = node.type == NodeType::kSwitch ? 0 : port;
    return {static_cast<laas::topology::Lid>(node.lid.count(lid_port) ? node.lid.at(lid_port) : 0),
            port > 0 && node.cable.count(port) && !down.count({walk(path).first, port})};
  }

  std::vector<Node> nodes;
  int start = 0, start_port = 1;  // where the local port is (a switch: port 0)
  std::set<int> muted;
  std::set<std::pair<int, int>> down;  // (node, port) whose cable is pulled

 private:
  // The node at the end of `path` and the port the SMP entered it by.
  std::pair<int, int> walk(const std::string& path) {
    std::istringstream in(path);
    std::string hop;
    std::getline(in, hop, ',');
    int n = start, entry = nodes[start].type == NodeType::kSwitch ? 0 : start_port;
    bool first = true;
    while (std::getline(in, hop, ',')) {
      const int out = std::stoi(hop);
      if (!first && nodes[n].type != NodeType::kSwitch) throw std::runtime_error("CA forwards");
      if (!nodes[n].cable.count(out) || down.count({n, out})) throw std::runtime_error("no link");
      std::tie(n, entry) = nodes[n].cable.at(out);
      first = false;
    }
    if (muted.count(n)) throw std::runtime_error("muted");
    return {n, entry};
  }
};

}  // namespace

TEST(SdnRouteDiscovery, WalksToTheFabricTheIbnetdiscoverReaderGives) {
  std::istringstream in(kText);
  const Fabric offline = laas::topology::read_ibnetdiscover(in, "t.out");
  FakeFabric fake;
  int unanswered = -1;
  const Discovery d = laas::sdn::discover_by_route(fake, &unanswered);
  EXPECT_EQ(unanswered, 0);
  EXPECT_EQ(canonical(laas::sdn::to_fabric(d)), canonical(offline));
  EXPECT_EQ(laas::sdn::local_port_guid(d), 0x100001u);
  std::map<laas::topology::Guid, std::string> paths;
  for (const auto& n : d.nodes) paths[n.guid] = n.path;
  EXPECT_EQ(paths[0x200001], "0,1") << "the leaf, out of comp-1's port";
  EXPECT_EQ(paths[0x200000], "0,1,1") << "the spine, by the leaf's up-link";
  EXPECT_EQ(paths[0x100010], "0,1,3") << "the GPU server, first met from the leaf";
}

TEST(SdnRouteDiscovery, FromASwitchItsManagementPortIsTheLocalPort) {
  std::istringstream in(kText);
  const Fabric offline = laas::topology::read_ibnetdiscover(in, "t.out");
  FakeFabric fake;
  fake.start = 2;  // SW_L2_0, as the SM's attach node in the integration tests
  const Discovery d = laas::sdn::discover_by_route(fake);
  EXPECT_EQ(canonical(laas::sdn::to_fabric(d)), canonical(offline));
  EXPECT_EQ(laas::sdn::local_port_guid(d), 0x200000u);
  EXPECT_EQ(d.nodes[d.from_node].path, "0");
}

TEST(SdnRouteDiscovery, ACablePulledOrANodeSilentIsLeftOutAndCounted) {
  FakeFabric pulled;
  pulled.down = {{2, 2}, {3, 2}};  // the GPU server's second cable
  int unanswered = -1;
  auto f = laas::sdn::to_fabric(laas::sdn::discover_by_route(pulled, &unanswered));
  EXPECT_EQ(unanswered, 0) << "a port not LinkUp is not followed";
  EXPECT_EQ(f.nodes.size(), 4u) << "the GPU server with one cabled port is one node";

  FakeFabric silent;
  silent.muted = {3};
  silent.start = 2;
  f = laas::sdn::to_fabric(laas::sdn::discover_by_route(silent, &unanswered));
  EXPECT_EQ(unanswered, 2) << "the GPU server, tried from both its switches";
  EXPECT_EQ(f.nodes.size(), 3u);

  FakeFabric alone;
  alone.muted = {0};
  EXPECT_THROW(laas::sdn::discover_by_route(alone), std::runtime_error)
      << "the local node itself does not answer: nothing to discover from";
}
