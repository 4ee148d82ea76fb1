#include "routing/mft_dump.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>

#include "routing/dump_text.h"

namespace laas::routing {
using dump::parse_number;
using dump::starts_with;

std::vector<DumpedMft> parse_ibroute_mft(std::istream& in, const std::string& source) {
  std::vector<DumpedMft> out;
  dump::DumpLines lines(in, source);
  DumpedMft* cur = nullptr;
  std::vector<int> column_port;  // raw column -> port number, -1 elsewhere
  auto fail = [&](const std::string& why) { lines.fail(why); };
  while (lines.next()) {
    const std::string& raw = lines.raw();
    const std::string& line = lines.line();
    const int line_no = lines.number();
    if (starts_with(line, "Multicast mlids [")) {
      // Multicast mlids [0xc000-0xc3ff] of switch Lid 7 guid 0x0000000000200004 (SW_L1_0):
      DumpedMft t;
      t.line = line_no;
      const auto swpos = line.find(" of switch ");
      const auto guidpos = line.find(" guid ", swpos == std::string::npos ? 0 : swpos);
      if (swpos == std::string::npos || guidpos == std::string::npos)
        fail("not an ibroute -M header");
      dump::SwitchHeader header;
      if (const auto why = dump::parse_switch_header(line, swpos, &header); !why.empty()) fail(why);
      t.guid = header.guid;
      t.lid = header.lid;
      t.name = header.name;
      out.push_back(std::move(t));
      cur = &out.back();
      column_port.clear();
      continue;
    }
    if (line.empty() || line == "MLid" || starts_with(line, "***")) continue;
    if (starts_with(line, "Ports:")) {
      if (!cur) fail("a 'Ports:' line before any header");
      // Digits are the port numbers modulo 10, one per column, in order from 0.
      column_port.assign(raw.size() + 1, -1);
      int port = 0;
      for (std::size_t c = raw.find(':') + 1; c < raw.size(); ++c)
        if (std::isdigit(static_cast<unsigned char>(raw[c]))) {
          if (raw[c] - '0' != port % 10) fail("port columns out of order");
          column_port[c] = port++;
        }
      continue;
    }
    if (!line.empty() && std::all_of(line.begin(), line.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) || c == ' ';
        }))
      continue;  // the tens line above "Ports:"
    if (line.find("valid mlids dumped") != std::string::npos) {
      if (!cur) fail("a block end before any header");
      cur = nullptr;
      continue;
    }
    if (starts_with(line, "0x")) {
      if (!cur) fail("a table row before any 'Multicast mlids' header");
      if (column_port.empty()) fail("a table row before the 'Ports:' line");
      const auto first = raw.find("0x");
      std::size_t end = first;
      while (end < raw.size() && !std::isspace(static_cast<unsigned char>(raw[end]))) ++end;
      unsigned long long mlid = 0;
      if (!parse_number(raw.substr(first, end - first), 16, &mlid) || mlid < 0xC000 ||
          mlid > 0xFFFF)
        fail("bad MLID");
      auto& ports = cur->mft[static_cast<std::uint16_t>(mlid)];
      if (!ports.empty()) fail("MLID listed twice");
      for (std::size_t c = end; c < raw.size(); ++c) {
        if (raw[c] == ' ') continue;
        if (raw[c] != 'x' || c >= column_port.size() || column_port[c] < 0)
          fail("expected 'x' under a port column");
        ports.push_back(column_port[c]);
      }
      continue;
    }
    fail("unrecognised line");
  }
  return out;
}

Mfts mfts_by_node(const topology::Fabric& fabric, const std::vector<DumpedMft>& dumps) {
  Mfts out(fabric.nodes.size());
  dump::DumpedSwitches switches(fabric);
  for (const auto& d : dumps) out[switches.claim(d.guid, d.line, "multicast table")] = d.mft;
  return out;
}

std::string format_ibroute_mft(const topology::Fabric& fabric, int switch_node, const Mft& mft) {
  const auto& sw = fabric.nodes[switch_node];
  const int nports = static_cast<int>(sw.ports.size());
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "Multicast mlids [0xc000-0xc3ff] of switch Lid %u guid 0x%016" PRIx64 " (%s):\n",
                fabric.lid_of(switch_node), static_cast<std::uint64_t>(sw.guid), sw.name.c_str());
  out += buf;
  // Column of port p: 12 + 2p, as ibroute prints it.
  std::string tens(12 + 2 * nports, ' '), ports = "     Ports:";
  for (int p = 0; p < nports; ++p) {
    if (p % 10 == 0) tens[12 + 2 * p] = static_cast<char>('0' + (p / 10) % 10);
    ports += " " + std::to_string(p % 10);
  }
  if (nports > 10) out += tens + "\n";
  out += ports + " \n MLid\n";
  int valid = 0;
  for (const auto& [mlid, list] : mft) {
    if (list.empty()) continue;
    ++valid;
    std::string row(12 + 2 * nports, ' ');
    std::snprintf(buf, sizeof buf, "0x%04x", mlid);
    row.replace(0, 6, buf);
    for (int p : list)
      if (p >= 0 && p < nports) row[12 + 2 * p] = 'x';
    out += row + "\n";
  }
  out += std::to_string(valid) + " valid mlids dumped \n";
  return out;
}

}  // namespace laas::routing
