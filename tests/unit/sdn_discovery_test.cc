// laas-sdn's fabric reader: libibnetdisc's records (built here by hand) into the same Fabric
// the ibnetdiscover reader gives for that fabric's ibnetdiscover output.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "sdn/discovery.h"
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

// The same fabric as libibnetdisc hands it over, in the order it met the nodes.
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
