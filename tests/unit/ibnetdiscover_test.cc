#include "topology/ibnetdiscover.h"

#include <gtest/gtest.h>

#include <sstream>

using laas::topology::Fabric;
using laas::topology::ParseError;
using laas::topology::read_ibnetdiscover;

namespace {

// Trimmed real output of ibnetdiscover on an ibsim fabric.
const char* kDiscovered = R"(#
# Topology file: generated on Sun Nov 22 05:47:56 2026
#
# Initiated from node 0000000000200000 port 0000000000200000

vendid=0x0
devid=0x0
sysimgguid=0x20000b
switchguid=0x20000b(20000b)
Switch	8 "S-000000000020000b"		# "SW_L1_7" base port 0 lid 18 lmc 0
[1]	"S-0000000000200000"[8]		# "SW_L2_0" lid 1 4xSDR
[5]	"H-0000000000100038"[1](100039) 		# "comp-29" lid 41 4xSDR

vendid=0x0
devid=0x0
sysimgguid=0x200000
switchguid=0x200000(200000)
Switch	8 "S-0000000000200000"		# "SW_L2_0" base port 0 lid 1 lmc 0
[8]	"S-000000000020000b"[1]		# "SW_L1_7" lid 18 4xSDR

vendid=0x0
devid=0x0
sysimgguid=0x100038
caguid=0x100038
Ca	1 "H-0000000000100038"		# "comp-29"
[1](100039) 	"S-000000000020000b"[5]		# lid 41 lmc 0 "SW_L1_7" lid 18 4xSDR
)";

Fabric parse(const std::string& text) {
  std::istringstream in(text);
  return read_ibnetdiscover(in, "t.out");
}

std::string ibnet_error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(IbnetdiscoverReader, RealOutput) {
  const Fabric f = parse(kDiscovered);
  ASSERT_EQ(f.nodes.size(), 3u);
  const auto& leaf = f.nodes[0];
  EXPECT_TRUE(leaf.is_switch);
  EXPECT_EQ(leaf.name, "SW_L1_7");
  EXPECT_EQ(leaf.guid, 0x20000bu);
  EXPECT_EQ(leaf.port_guid, 0x20000bu);
  EXPECT_EQ(leaf.ports[0].lid, 18);
  EXPECT_EQ(f.lid_of(1), 1);
  const auto& ca = f.nodes[2];
  EXPECT_FALSE(ca.is_switch);
  EXPECT_EQ(ca.name, "comp-29");
  EXPECT_EQ(ca.guid, 0x100038u);
  EXPECT_EQ(ca.port_guid, 0x100039u);
  EXPECT_EQ(f.lid_of(2), 41);
  EXPECT_EQ(leaf.ports[5].peer_node, 2);
  EXPECT_EQ(leaf.ports[5].peer_port, 1);
  EXPECT_EQ(leaf.ports[1].peer_node, 1);
  EXPECT_EQ(f.nodes[1].ports[8].peer_node, 0);
}

TEST(IbnetdiscoverReader, IbsimNetFileWithOneSidedCables) {
  const Fabric f = parse("Switch 4 \"sw\"\n[1] \"h\"[1]\n\nHca 2 \"h\"\n");
  ASSERT_EQ(f.nodes.size(), 2u);
  EXPECT_EQ(f.nodes[1].ports[1].peer_node, 0);
  EXPECT_NE(f.nodes[1].port_guid, 0u);
  EXPECT_NE(f.nodes[0].guid, f.nodes[1].guid);
}

TEST(IbnetdiscoverReader, ErrorsNameTheLine) {
  EXPECT_NE(ibnet_error_of("Switch 4 \"sw\"\n[1] \"nobody\"[1]\n").find("t.out:2:"),
            std::string::npos);
  EXPECT_NE(ibnet_error_of("Switch 4 \"sw\"\n[9] \"h\"[1]\n").find("t.out:2: port 9"),
            std::string::npos);
  EXPECT_NE(ibnet_error_of("Switch 4 \"sw\"\n\nSwitch 4 \"sw\"\n").find("t.out:3:"),
            std::string::npos);
  EXPECT_NE(ibnet_error_of("hello world\n").find("t.out:1: unrecognized"), std::string::npos);
  EXPECT_NE(ibnet_error_of("[1] \"a\"[1]\n").find("t.out:1:"), std::string::npos);
  EXPECT_NE(ibnet_error_of("Switch 4 \"sw\n").find("unterminated"), std::string::npos);
  EXPECT_NE(ibnet_error_of("").find("no Switch"), std::string::npos);
  // Two sides disagree.
  EXPECT_NE(ibnet_error_of("Switch 4 \"a\"\n[1] \"b\"[1]\n\nSwitch 4 \"b\"\n[1] \"a\"[2]\n")
                .find("t.out:5:"),
            std::string::npos);
}
