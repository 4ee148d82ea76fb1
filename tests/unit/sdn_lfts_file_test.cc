// laas-sdn's lfts_file: the tables in the format OpenSM's file routing engine reads, parsed
// back by the project's own dump reader, and the engine's grammar (osm_ucast_file.c) checked
// line by line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "routing/ibroute.h"
#include "sdn/lfts_file.h"
#include "temp_files.h"
#include "topology/embedding.h"

namespace {

using laas::routing::LidTables;
using laas::topology::FatTree;

struct Computed {
  laas::topology::Fabric fabric;
  LidTables tables;
};

Computed demo_tables() {
  const FatTree tree = FatTree::parse("xgft(2;4,8;1,4)");
  auto [fabric, emb] = laas::topology::build_model_fabric(tree);
  laas::allocator::Placement a;
  a.hosts = {0, 1, 2, 3, 4};
  a.links = {0, 1, 4, 5};
  const auto result = laas::routing::compute(tree, {{"a", a}}, {tree.num_hosts() - 1}, {});
  return {fabric, laas::routing::to_lid_tables(fabric, emb, tree, result.tables)};
}

// What osm_ucast_file.c accepts, line by line: a header has " guid 0x<hex>" followed by
// white space; an entry is "0x<hex>" then white space, a decimal port then white space, and
// its " portguid 0x<hex>" (when present) ends in ':' or white space. Returns the entries seen.
int engine_entries(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int entries = 0;
  bool in_switch = false;
  while (std::getline(in, line)) {
    line += '\n';  // fgets keeps it, and the engine needs white space after the port
    std::size_t p = line.find_first_not_of(" \t");
    if (p == std::string::npos || line[p] == '#') continue;
    if (line.compare(p, 12, "Unicast lids") == 0) {
      const auto g = line.find(" guid 0x");
      EXPECT_NE(g, std::string::npos) << line;
      char* end = nullptr;
      std::strtoull(line.c_str() + g + 8, &end, 16);
      EXPECT_TRUE(end != line.c_str() + g + 8 && std::isspace(static_cast<unsigned char>(*end)))
          << line;
      in_switch = true;
    } else if (in_switch && line.compare(p, 2, "0x") == 0) {
      char* end = nullptr;
      const char* lid = line.c_str() + p + 2;
      std::strtoul(lid, &end, 16);
      EXPECT_TRUE(end != lid && std::isspace(static_cast<unsigned char>(*end))) << line;
      const char* port = end;
      while (std::isspace(static_cast<unsigned char>(*port))) ++port;
      std::strtoul(port, &end, 10);
      EXPECT_TRUE(end != port && std::isspace(static_cast<unsigned char>(*end))) << line;
      if (const char* pg = std::strstr(end, " portguid 0x")) {
        std::strtoull(pg + 12, &end, 16);
        EXPECT_TRUE(*end == ':' || std::isspace(static_cast<unsigned char>(*end))) << line;
      }
      ++entries;
    }
  }
  return entries;
}

int routed(const LidTables& tables) {
  int n = 0;
  for (const auto& t : tables)
    for (std::size_t lid = 1; lid < t.size(); ++lid) n += t[lid] != laas::routing::kNoRoute;
  return n;
}

}  // namespace

TEST(SdnLftsFile, ParsesBackToTheTablesWithTheProjectsDumpReader) {
  const auto c = demo_tables();
  const std::string text = laas::sdn::lfts_text(c.fabric, c.tables);
  std::istringstream in(text);
  const auto dumps = laas::routing::parse_ibroute(in, "lfts_file");
  EXPECT_EQ(dumps.size(), 12u);  // 8 leaves, 4 spines
  LidTables back = laas::routing::tables_by_node(c.fabric, dumps);
  EXPECT_EQ(back, c.tables);
}

TEST(SdnLftsFile, EveryEntryIsALineTheFileEngineReads) {
  const auto c = demo_tables();
  const std::string text = laas::sdn::lfts_text(c.fabric, c.tables);
  EXPECT_EQ(text.rfind("# ", 0), 0u) << "a comment names the writer";
  EXPECT_EQ(engine_entries(text), routed(c.tables));
  EXPECT_GT(routed(c.tables), 100);
  // Destinations carry their port GUID: the engine follows a port to the LID it has now.
  EXPECT_NE(text.find("(Channel Adapter portguid 0x"), std::string::npos);
}

TEST(SdnLftsFile, ANodeDescriptionCannotAddALine) {
  auto c = demo_tables();
  // A host names itself: a newline and a table entry of its own choosing.
  for (auto& n : c.fabric.nodes)
    if (!n.is_switch) {
      n.name = "evil\n0x0001 008 : x\nUnicast lids [0x0-0x1] of switch Lid 1 guid 0x1 (y):";
      break;
    }
  const std::string text = laas::sdn::lfts_text(c.fabric, c.tables);
  EXPECT_EQ(engine_entries(text), routed(c.tables));
  std::istringstream in(text);
  EXPECT_EQ(laas::routing::tables_by_node(c.fabric, laas::routing::parse_ibroute(in)), c.tables);
}

TEST(SdnLftsFile, RefusesAPortTheSwitchLacks) {
  auto c = demo_tables();
  int sw = -1;
  for (std::size_t n = 0; n < c.fabric.nodes.size() && sw < 0; ++n)
    if (c.fabric.nodes[n].is_switch) sw = static_cast<int>(n);
  ASSERT_GE(sw, 0);
  c.tables[sw][3] = static_cast<std::uint8_t>(c.fabric.nodes[sw].ports.size());
  try {
    laas::sdn::lfts_text(c.fabric, c.tables);
    FAIL() << "no error";
  } catch (const laas::sdn::LftsError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(c.fabric.nodes[sw].name), std::string::npos) << what;
    EXPECT_NE(what.find("LID 3"), std::string::npos) << what;
  }
  // A table on a host, or tables of another fabric.
  auto d = demo_tables();
  for (std::size_t n = 0; n < d.fabric.nodes.size(); ++n)
    if (!d.fabric.nodes[n].is_switch) {
      d.tables[n] = {0xFF, 1};
      break;
    }
  EXPECT_THROW(laas::sdn::lfts_text(d.fabric, d.tables), laas::sdn::LftsError);
  d.tables.pop_back();
  EXPECT_THROW(laas::sdn::lfts_text(d.fabric, d.tables), laas::sdn::LftsError);
}

TEST(SdnLftsFile, WritesAtomicallyAndRefusesBadTablesWithoutTouchingTheFile) {
  laas::test::TempDir dir("laas-sdn-lfts");
  const std::string path = dir.path + "/opensm-lfts.laas";
  auto c = demo_tables();
  laas::sdn::write_lfts_file(path, c.fabric, c.tables);
  const std::string good = laas::test::slurp(path);
  EXPECT_EQ(good, laas::sdn::lfts_text(c.fabric, c.tables));
  int sw = 0;
  while (!c.fabric.nodes[sw].is_switch) ++sw;
  c.tables[sw][2] = 250;
  EXPECT_THROW(laas::sdn::write_lfts_file(path, c.fabric, c.tables), laas::sdn::LftsError);
  EXPECT_EQ(laas::test::slurp(path), good);
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) files += !e.is_directory();
  EXPECT_EQ(files, 1) << "no temporary file left behind";
}

TEST(SdnLftsFile, TheSameTablesGiveTheSameFileWhateverTheNodeOrder) {
  const auto c = demo_tables();
  // The fabric read in another order (as an ibnetdiscover file lists it): reversed.
  auto fabric = c.fabric;
  auto tables = c.tables;
  const int n = static_cast<int>(fabric.nodes.size());
  auto moved = [n](int node) { return node < 0 ? node : n - 1 - node; };
  std::reverse(fabric.nodes.begin(), fabric.nodes.end());
  std::reverse(tables.begin(), tables.end());
  for (auto& node : fabric.nodes)
    for (auto& port : node.ports) port.peer_node = moved(port.peer_node);
  ASSERT_NE(fabric.nodes[0].guid, c.fabric.nodes[0].guid);
  EXPECT_EQ(laas::sdn::lfts_text(fabric, tables), laas::sdn::lfts_text(c.fabric, c.tables));
}
