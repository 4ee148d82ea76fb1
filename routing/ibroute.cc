#include "routing/ibroute.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <sstream>

#include "routing/dump_text.h"

namespace laas::routing {
using dump::parse_number;
using dump::starts_with;

std::vector<DumpedTable> parse_ibroute(std::istream& in, const std::string& source) {
  std::vector<DumpedTable> out;
  dump::DumpLines lines(in, source);
  DumpedTable* cur = nullptr;  // the block being read
  unsigned long long top = 0;
  auto fail = [&](const std::string& why) { lines.fail(why); };
  while (lines.next()) {
    const std::string& line = lines.line();
    const int line_no = lines.number();
    if (starts_with(line, "Unicast lids [")) {
      // Unicast lids [0x0-0x2c] of switch Lid 1 guid 0x0000000000200000 (SW_L2_0):
      // dump_fts addresses switches by directed route instead of LID:
      // Unicast lids [0x0-0x2c] of switch DR path slid 0; dlid 0; 0,1,4 guid 0x... (SW_L2_3):
      DumpedTable t;
      t.line = line_no;
      const auto close = line.find(']');
      const auto dash = line.find('-');
      const auto swpos = line.find(" of switch ");
      const auto guidpos = line.find(" guid ", swpos == std::string::npos ? 0 : swpos);
      if (close == std::string::npos || dash == std::string::npos || dash > close ||
          swpos == std::string::npos || guidpos == std::string::npos)
        fail("not an ibroute header");
      if (!parse_number(line.substr(dash + 1, close - dash - 1), 16, &top) || top > 0xFFFF)
        fail("bad LID range");
      dump::SwitchHeader header;
      if (const auto why = dump::parse_switch_header(line, swpos, &header); !why.empty()) fail(why);
      t.guid = header.guid;
      t.lid = header.lid;
      t.name = header.name;
      t.table.assign(static_cast<std::size_t>(top) + 1, kNoRoute);
      out.push_back(std::move(t));
      cur = &out.back();
      continue;
    }
    if (line.empty() || starts_with(line, "***") || starts_with(line, "Lid ") ||
        starts_with(line, "Port ") || starts_with(line, "#"))
      continue;  // blank, dump_lfts.sh's warning, the two column-title lines, a comment (the
                 // lfts_file OpenSM's file engine reads may have them, sdn/lfts_file.h)
    if (starts_with(line, "Multicast mlids")) fail("multicast tables are not supported");
    if (starts_with(line, "0x")) {
      if (!cur) fail("a table entry before any 'Unicast lids' header");
      // 0x0002 001 : (Channel Adapter portguid 0x0000000000100001: 'comp-1')
      std::istringstream fields(line);
      std::string lid_text, port_text;
      fields >> lid_text >> port_text;
      unsigned long long lid = 0, port = 0;
      if (!parse_number(lid_text, 16, &lid)) fail("bad LID");
      if (!parse_number(port_text, 10, &port) || port > 255) fail("bad port");
      if (lid >= cur->table.size()) fail("LID beyond the header's range");
      cur->table[lid] = static_cast<std::uint8_t>(port);
      continue;
    }
    // "44 valid lids dumped" closes a block.
    if (line.find("valid lids dumped") != std::string::npos) {
      if (!cur) fail("a block end before any header");
      cur = nullptr;
      continue;
    }
    fail("unrecognised line");
  }
  return out;
}

LidTables tables_by_node(const topology::Fabric& fabric, const std::vector<DumpedTable>& dumps) {
  LidTables out(fabric.nodes.size());
  dump::DumpedSwitches switches(fabric);
  for (const auto& d : dumps) out[switches.claim(d.guid, d.line, "table")] = d.table;
  return out;
}

namespace {

// A node description as one line: hosts set their own, and a newline in one would start a line
// of its own in the dump -- a table entry, when OpenSM's file engine reads the dump as its
// lfts_file (sdn/lfts_file.h).
std::string one_line(std::string name) {
  for (char& c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return name;
}

}  // namespace

std::string format_ibroute(const topology::Fabric& fabric, int switch_node, const LidTable& table) {
  const auto& sw = fabric.nodes[switch_node];
  // Names of the LIDs' owners.
  std::map<int, int> lid_owner;
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    const topology::Lid l = fabric.lid_of(static_cast<int>(n));
    if (l != 0) lid_owner[l] = static_cast<int>(n);
  }
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "Unicast lids [0x0-0x%zx] of switch Lid %u guid 0x%016" PRIx64 " (%s):\n",
                table.empty() ? 0 : table.size() - 1, fabric.lid_of(switch_node),
                static_cast<std::uint64_t>(sw.guid), one_line(sw.name).c_str());
  out += buf;
  out += "  Lid  Out   Destination\n       Port     Info \n";
  int valid = 0;
  for (std::size_t lid = 0; lid < table.size(); ++lid) {
    if (table[lid] == kNoRoute) continue;
    ++valid;
    std::string info;
    auto it = lid_owner.find(static_cast<int>(lid));
    if (it != lid_owner.end()) {
      const auto& n = fabric.nodes[it->second];
      std::snprintf(buf, sizeof buf, "(%s portguid 0x%016" PRIx64 ": '%s')",
                    n.is_switch ? "Switch" : "Channel Adapter",
                    static_cast<std::uint64_t>(n.port_guid), one_line(n.name).c_str());
      info = buf;
    }
    std::snprintf(buf, sizeof buf, "0x%04zx %03u : %s\n", lid, table[lid], info.c_str());
    out += buf;
  }
  out += std::to_string(valid) + " valid lids dumped \n";
  return out;
}

}  // namespace laas::routing
