#include "tools/lft_dump.h"

#include <algorithm>
#include <map>
#include <regex>
#include <stdexcept>

namespace laas::tools {

std::vector<std::vector<std::uint8_t>> read_lft_dump(std::istream& in,
                                                     const topology::Fabric& fabric,
                                                     const std::string& source) {
  std::map<topology::Guid, int> by_guid;
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    if (fabric.nodes[i].is_switch) by_guid[fabric.nodes[i].guid] = static_cast<int>(i);
  std::vector<std::vector<std::uint8_t>> tables(fabric.nodes.size());
  static const std::regex header(R"(^Unicast lids \[.*\] of switch .*guid (0x[0-9a-fA-F]+))");
  static const std::regex entry(R"(^(0x[0-9a-fA-F]+)\s+(\d+)\s*:)");
  std::string line;
  int line_no = 0;
  int current = -1;
  int blocks = 0;
  auto fail = [&](const std::string& why) {
    throw std::runtime_error(source + ":" + std::to_string(line_no) + ": " + why);
  };
  while (std::getline(in, line)) {
    ++line_no;
    std::smatch m;
    if (std::regex_search(line, m, header)) {
      const auto guid = std::stoull(m[1].str(), nullptr, 16);
      auto it = by_guid.find(guid);
      if (it == by_guid.end()) fail("switch " + m[1].str() + " is not in the fabric");
      current = it->second;
      tables[current].clear();
      ++blocks;
      continue;
    }
    if (std::regex_search(line, m, entry)) {
      if (current < 0) fail("table entry before any switch header");
      const unsigned long lid = std::stoul(m[1].str(), nullptr, 16);
      const unsigned long port = std::stoul(m[2].str());
      if (lid == 0 || lid > 0xBFFF) fail("LID " + m[1].str() + " is not a unicast LID");
      if (port > 255) fail("port " + m[2].str() + " is out of range");
      auto& t = tables[current];
      if (t.size() <= lid) t.resize(lid + 1, 0xFF);
      t[lid] = static_cast<std::uint8_t>(port);
    }
  }
  if (blocks == 0) {
    line_no = 0;
    fail("no 'Unicast lids ... of switch' block found");
  }
  size_t width = 0;
  for (const auto& t : tables) width = std::max(width, t.size());
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    for (const auto& p : fabric.nodes[i].ports) width = std::max<size_t>(width, p.lid + 1u);
  for (size_t i = 0; i < tables.size(); ++i)
    if (fabric.nodes[i].is_switch) tables[i].resize(width, 0xFF);
  return tables;
}

}  // namespace laas::tools
