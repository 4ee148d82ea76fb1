#include "routing/ibroute.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <sstream>
#include <unordered_map>

namespace laas::routing {
namespace {

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Parses an unsigned number in base 16 ("0x..." required) or 10; false if not entirely one.
bool parse_number(const std::string& text, int base, unsigned long long* out) {
  if (text.empty()) return false;
  std::string digits = text;
  if (base == 16) {
    if (!starts_with(text, "0x") && !starts_with(text, "0X")) return false;
    digits = text.substr(2);
    if (digits.empty()) return false;
  }
  for (char c : digits)
    if (!(base == 16 ? std::isxdigit(static_cast<unsigned char>(c))
                     : std::isdigit(static_cast<unsigned char>(c))))
      return false;
  if (digits.size() > 16) return false;
  *out = std::stoull(digits, nullptr, base);
  return true;
}

}  // namespace

std::vector<DumpedTable> parse_ibroute(std::istream& in, const std::string& source) {
  std::vector<DumpedTable> out;
  std::string raw;
  int line_no = 0;
  DumpedTable* cur = nullptr;  // the block being read
  unsigned long long top = 0;
  auto fail = [&](const std::string& why) {
    throw DumpError(source + ":" + std::to_string(line_no) + ": " + why + ": '" + raw + "'");
  };
  while (std::getline(in, raw)) {
    ++line_no;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const std::string line = trim(raw);
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
      unsigned long long lid = 0, guid = 0;
      if (!parse_number(line.substr(dash + 1, close - dash - 1), 16, &top) || top > 0xFFFF)
        fail("bad LID range");
      const std::string addr = trim(line.substr(swpos + 11, guidpos - swpos - 11));
      if (starts_with(addr, "Lid ")) {
        if (!parse_number(trim(addr.substr(4)), 10, &lid) || lid > 0xFFFF) fail("bad switch LID");
      } else if (!starts_with(addr, "DR path")) {
        fail("neither 'Lid N' nor 'DR path' addresses the switch");
      }
      std::string rest = line.substr(guidpos + 6);
      const auto space = rest.find(' ');
      std::string guid_text = rest.substr(0, space);
      if (!guid_text.empty() && guid_text.back() == ':') guid_text.pop_back();
      if (!parse_number(guid_text, 16, &guid)) fail("bad switch GUID");
      if (space != std::string::npos) {
        const auto open = rest.find('(', space);
        const auto end = rest.rfind(')');
        if (open != std::string::npos && end != std::string::npos && end > open)
          t.name = rest.substr(open + 1, end - open - 1);
      }
      t.guid = guid;
      t.lid = static_cast<topology::Lid>(lid);
      t.table.assign(static_cast<std::size_t>(top) + 1, kNoRoute);
      out.push_back(std::move(t));
      cur = &out.back();
      continue;
    }
    if (line.empty() || starts_with(line, "***") || starts_with(line, "Lid ") ||
        starts_with(line, "Port "))
      continue;  // blank, dump_lfts.sh's warning, the two column-title lines
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
  std::unordered_map<topology::Guid, int> by_guid;
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    by_guid[fabric.nodes[n].guid] = static_cast<int>(n);
    by_guid[fabric.nodes[n].port_guid] = static_cast<int>(n);
  }
  LidTables out(fabric.nodes.size());
  std::vector<char> seen(fabric.nodes.size(), 0);
  for (const auto& d : dumps) {
    char guid[32];
    std::snprintf(guid, sizeof guid, "0x%016" PRIx64, static_cast<std::uint64_t>(d.guid));
    const std::string where = "table of line " + std::to_string(d.line) + " (guid " + guid + ")";
    auto it = by_guid.find(d.guid);
    if (it == by_guid.end()) throw DumpError(where + ": no such node in the fabric");
    const int node = it->second;
    if (!fabric.nodes[node].is_switch) throw DumpError(where + ": not a switch");
    if (seen[node]) throw DumpError(where + ": switch dumped twice");
    seen[node] = 1;
    out[node] = d.table;
  }
  return out;
}

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
                static_cast<std::uint64_t>(sw.guid), sw.name.c_str());
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
                    static_cast<std::uint64_t>(n.port_guid), n.name.c_str());
      info = buf;
    }
    std::snprintf(buf, sizeof buf, "0x%04zx %03u : %s\n", lid, table[lid], info.c_str());
    out += buf;
  }
  out += std::to_string(valid) + " valid lids dumped \n";
  return out;
}

}  // namespace laas::routing
